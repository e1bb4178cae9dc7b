#!/usr/bin/env bash
# Checks that every library crate can be taken alone:
#   1. `cargo publish --dry-run` for each one (README and CHANGELOG included), in dependency
#      order;
#   2. the feature matrix: each one checked with no default features and with all features.
#
#   scripts/package-check.sh
#
# Packaging needs the crates.io index: it resolves each package's dependencies as a
# registry user would, our own crates coming from a local overlay of the packages made in
# the same run (which is why they are packaged together, and why they cannot be
# `publish = false`). It runs with --no-verify, which skips building each .crate in
# isolation under target/package: that build rebuilds every crate's dependency tree
# again (minutes), and the sources are already built by clippy and the tests. Without
# --no-verify the same command works (the overlay serves the unpublished dependencies);
# set PACKAGE_VERIFY=1 to run it that way.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Dependency order (mcp-key first, mcp-search on it only, mcp-registry on mcp-catalog); mcp-testkit depends on none of the others.
CRATES=(mcp-key mcp-search mcp-catalog mcp-registry mcp-auth mcp-pool mcp-client mcp-connections mcp-testkit)

packages=()
for crate in "${CRATES[@]}"; do
  packages+=(-p "$crate")
done

echo "== cargo publish --dry-run (${CRATES[*]})"
# As crates.io would see them: packaged in dependency order (path dependencies carry their
# versions), the publish metadata checked, everything but the upload. --allow-dirty: this
# is a check, not a release; it must work on a working tree too. The workspace's
# `repository` stays a placeholder until the project has a public home.
verify=(--no-verify)
if [[ "${PACKAGE_VERIFY:-0}" == 1 ]]; then
  verify=()
fi
cargo publish --dry-run --locked "${verify[@]}" --allow-dirty "${packages[@]}"

for crate in "${CRATES[@]}"; do
  files=$(cargo package --locked --allow-dirty --list -p "$crate")
  for wanted in Cargo.toml README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE src/lib.rs; do
    if ! grep -qx "$wanted" <<<"$files"; then
      echo "$crate: the package lacks $wanted" >&2
      exit 1
    fi
  done
done

echo "== feature matrix"
for crate in "${CRATES[@]}"; do
  echo "-- $crate --no-default-features"
  cargo check --locked --quiet -p "$crate" --no-default-features
  echo "-- $crate --all-features"
  cargo check --locked --quiet -p "$crate" --all-features
done
# A stdio-only host must not compile an HTTP client, a TLS stack or the OAuth client.
echo "-- mcp-connections --no-default-features compiles no HTTP or OAuth client"
heavy=$(cargo tree --locked -p mcp-connections --no-default-features -e normal --prefix none \
  | grep -E '^(reqwest|hyper|rustls|oauth2|axum) ' || true)
if [[ -n "$heavy" ]]; then
  echo "mcp-connections without default features still depends on:" >&2
  echo "$heavy" >&2
  exit 1
fi
echo "-- mcp-client --no-default-features compiles no HTTP client"
heavy=$(cargo tree --locked -p mcp-client --no-default-features -e normal --prefix none \
  | grep -E '^(reqwest|hyper|rustls|oauth2|axum) ' || true)
if [[ -n "$heavy" ]]; then
  echo "mcp-client without default features still depends on:" >&2
  echo "$heavy" >&2
  exit 1
fi
# ... and an HTTP server in its catalog fails alone, naming the feature.
echo "-- mcp-connections --no-default-features: unit tests"
cargo test --locked --quiet -p mcp-connections --no-default-features --lib
echo "package check passed"
# A stdio-only user of the testkit must not compile axum, the JWT stack or clap.
echo "-- mcp-testkit --no-default-features compiles no HTTP server, JWT or CLI crates"
heavy=$(cargo tree --locked -p mcp-testkit --no-default-features -e normal --prefix none \
  | grep -E '^(axum|hyper|jsonwebtoken|clap) ' || true)
if [[ -n "$heavy" ]]; then
  echo "mcp-testkit without default features still depends on:" >&2
  echo "$heavy" >&2
  exit 1
fi
