#!/usr/bin/env bash
# Runs every client scenario of the official MCP conformance suite against
# mcp-conformance-client, one scenario and spec version at a time, and exits non-zero on any
# unexpected result.
#
#   scripts/conformance.sh                      every scenario, for every spec version it lists
#   scripts/conformance.sh SCENARIO[@VERSION]…  only these (VERSION: 2025-11-25, 2026-07-28, …)
#
# Each scenario runs for each spec version it is tagged with (`[extension]` scenarios run once,
# without a version). Known failures are listed, with the reason, in
# scripts/conformance-expected-failures.txt ("VERSION SCENARIO  # why"); the list is strict:
# a listed pair that now passes fails the run too (remove it from the list), so the list can
# only shrink honestly. The table at the end has every pair and its result.
#
# Installs pinned versions of the suite and a Node 22 binary (npm package `node`) under
# target/conformance/ (no global installs). The suite's mock servers are kept on loopback by
# a preload that binds every listen() to 127.0.0.1.
set -euo pipefail

SUITE_VERSION="0.2.0-alpha.12"
NODE_VERSION="22.23.3"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/target/conformance"
NODE="$CACHE/node_modules/node/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
PRELOAD="$CACHE/loopback-only.cjs"
RESULTS="$CACHE/results"
EXPECTED="$ROOT/scripts/conformance-expected-failures.txt"

mkdir -p "$CACHE"
if ! "$NODE" --version >/dev/null 2>&1 || ! grep -q "\"version\": \"$SUITE_VERSION\"" \
    "$CACHE/node_modules/@modelcontextprotocol/conformance/package.json" 2>/dev/null; then
  echo "installing @modelcontextprotocol/conformance@$SUITE_VERSION and node@$NODE_VERSION into $CACHE" >&2
  npm install --prefix "$CACHE" --no-audit --no-fund --no-save --loglevel=error \
    "@modelcontextprotocol/conformance@$SUITE_VERSION" "node@$NODE_VERSION" >&2
fi
"$NODE" --version >/dev/null

cat >"$PRELOAD" <<'JS'
// Forces every server the conformance suite starts onto 127.0.0.1. It patches the step
// after address resolution (`_listen2`, Node's alias of setupListenHandle) so listen()
// stays synchronous and `server.address()` works right after it, as the suite expects.
const net = require('net');
const setup = net.Server.prototype._listen2;
net.Server.prototype._listen2 = function (address, port, addressType, ...rest) {
  if (!address || address === '::' || address === '0.0.0.0') {
    address = '127.0.0.1';
    addressType = 4;
  }
  return setup.call(this, address, port, addressType, ...rest);
};
JS

echo "building mcp-conformance-client" >&2
(cd "$ROOT" && cargo build --quiet -p mcp-conformance --bin mcp-conformance-client)
CLIENT="$ROOT/target/debug/mcp-conformance-client"
case "$CLIENT" in *" "*) echo "the client path must not contain spaces: $CLIENT" >&2; exit 2 ;; esac

# Every (scenario, version) pair: "NAME@VERSION", or "NAME@extension".
if [ "$#" -gt 0 ]; then
  pairs=("$@")
else
  mapfile -t pairs < <(NODE_OPTIONS="--require $PRELOAD" "$NODE" "$SUITE" list --client \
    | sed -n 's/^  - \([^ ]*\) \[\(.*\)\]$/\1 \2/p' \
    | while read -r name versions; do
        for v in ${versions//,/ }; do echo "$name@$v"; done
      done)
fi
[ "${#pairs[@]}" -gt 0 ] || { echo "no scenarios found" >&2; exit 2; }

# "VERSION SCENARIO" lines of the expected failures (comments and blank lines dropped).
expected_failures=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$EXPECTED" | awk 'NF == 2 {print $1 " " $2}')
is_expected_failure() { grep -qxF "$2 $1" <<<"$expected_failures"; }

# Scenarios that pass vacuously when the client skips what they test: the skills
# scenarios report their one check SKIPPED (or none) when the client never lists skills.
# A run of one of these passes only if at least one of its checks succeeded.
must_check() { case "$1" in sep-2640-client-*) return 0 ;; *) return 1 ;; esac; }
# How many checks a scenario's log says passed ("Passed: N/M"), 0 when it says nothing.
checks_passed() { sed 's/\x1b\[[0-9;]*m//g' "$1" | sed -n 's/^Passed: \([0-9][0-9]*\)\/.*/\1/p' | tail -n 1 | grep . || echo 0; }

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
passed=0; xfailed=0; bad=0
bad_names=()
for pair in "${pairs[@]}"; do
  scenario="${pair%@*}"
  version="${pair##*@}"
  [ "$pair" = "$scenario" ] && version="extension"
  args=(client --command "$CLIENT" --scenario "$scenario")
  [ "$version" != "extension" ] && args+=(--spec-version "$version")
  log="$RESULTS/${scenario//\//_}@$version.log"
  start=$(date +%s)
  if NODE_OPTIONS="--require $PRELOAD" RUST_LOG="${RUST_LOG:-info}" \
      "$NODE" "$SUITE" "${args[@]}" >"$log" 2>&1; then
    outcome=pass
  else
    outcome=fail
  fi
  took=$(($(date +%s) - start))
  if [ "$outcome" = pass ] && must_check "$scenario" && [ "$(checks_passed "$log")" -lt 1 ]; then
    echo "conformance.sh: $scenario passed no check (the client skipped what it tests)" >>"$log"
    outcome=fail
  fi
  if is_expected_failure "$scenario" "$version"; then
    if [ "$outcome" = fail ]; then
      xfailed=$((xfailed + 1)); status="XFAIL"
    else
      bad=$((bad + 1)); bad_names+=("$scenario@$version (passes now: remove it from $EXPECTED)"); status="XPASS"
    fi
  elif [ "$outcome" = pass ]; then
    passed=$((passed + 1)); status="PASS"
  else
    bad=$((bad + 1)); bad_names+=("$scenario@$version (log: $log)"); status="FAIL"
  fi
  printf '%-5s %-10s %-48s %3ss\n' "$status" "$version" "$scenario" "$took"
done
echo "$passed passed, $xfailed expected failures (listed in scripts/conformance-expected-failures.txt), $bad unexpected"
if [ "$bad" -gt 0 ]; then
  printf '  %s\n' "${bad_names[@]}" >&2
  exit 1
fi
