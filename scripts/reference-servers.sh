#!/usr/bin/env bash
# Installs pinned reference MCP servers (npm) under target/reference-servers/ for the tests
# that run against them (mcp-connections/tests/reference_server.rs) and for the bench rows
# that compare against them (mcp-bench: server-everything over HTTP, and npm mcp-proxy in
# front of a stdio server beside `mcpctl serve --http`). No global installs.
# A loopback preload (loopback-only.cjs) keeps every server they start on 127.0.0.1.
#
#   scripts/reference-servers.sh        prints the folder on stdout
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
MCP_PROXY_VERSION="6.7.19"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/target/reference-servers"
PKG="$DIR/node_modules/@modelcontextprotocol/server-everything/package.json"

mkdir -p "$DIR"
PROXY_PKG="$DIR/node_modules/mcp-proxy/package.json"
# One install of both: with --no-save, npm removes what a later install does not name.
if ! grep -q "\"version\": \"$EVERYTHING_VERSION\"" "$PKG" 2>/dev/null ||
  ! grep -q "\"version\": \"$MCP_PROXY_VERSION\"" "$PROXY_PKG" 2>/dev/null; then
  echo "installing @modelcontextprotocol/server-everything@$EVERYTHING_VERSION and mcp-proxy@$MCP_PROXY_VERSION into $DIR" >&2
  npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
    "@modelcontextprotocol/server-everything@$EVERYTHING_VERSION" "mcp-proxy@$MCP_PROXY_VERSION" >&2
fi

cat >"$DIR/loopback-only.cjs" <<'JS'
// Binds every listen() without an address (or on all interfaces) to 127.0.0.1, so the
// reference servers started by the tests are reachable from loopback only.
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
echo "$DIR"
