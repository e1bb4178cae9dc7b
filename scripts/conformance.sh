#!/usr/bin/env bash
# Runs every client scenario of the official MCP conformance suite against
# mcp-conformance-client, one at a time, and exits non-zero if any fails.
#
#   scripts/conformance.sh [SCENARIO...]     (default: all client scenarios)
#
# Installs pinned versions of the suite and a Node 22 binary (npm package `node`) under
# target/conformance/ (no global installs). The suite's mock servers are kept on loopback by
# a preload that binds every listen() to 127.0.0.1.
set -euo pipefail

SUITE_VERSION="0.1.16"
NODE_VERSION="22.23.3"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$ROOT/target/conformance"
NODE="$CACHE/node_modules/node/bin/node"
SUITE="$CACHE/node_modules/@modelcontextprotocol/conformance/dist/index.js"
PRELOAD="$CACHE/loopback-only.cjs"
RESULTS="$CACHE/results"

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

if [ "$#" -gt 0 ]; then
  scenarios=("$@")
else
  mapfile -t scenarios < <(NODE_OPTIONS="--require $PRELOAD" "$NODE" "$SUITE" list --client \
    | sed -n 's/^  - \([^ ]*\).*/\1/p')
fi
[ "${#scenarios[@]}" -gt 0 ] || { echo "no scenarios found" >&2; exit 2; }

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
passed=0
failed=0
failed_names=()
for scenario in "${scenarios[@]}"; do
  log="$RESULTS/${scenario//\//_}.log"
  start=$(date +%s)
  if NODE_OPTIONS="--require $PRELOAD" RUST_LOG="${RUST_LOG:-info}" \
      "$NODE" "$SUITE" client --command "$CLIENT" --scenario "$scenario" >"$log" 2>&1; then
    passed=$((passed + 1))
    printf 'PASS %-50s %3ss\n' "$scenario" "$(($(date +%s) - start))"
  else
    failed=$((failed + 1))
    failed_names+=("$scenario")
    printf 'FAIL %-50s %3ss  (log: %s)\n' "$scenario" "$(($(date +%s) - start))" "$log"
  fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
