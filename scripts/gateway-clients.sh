#!/usr/bin/env bash
# Installs pinned MCP clients nobody here wrote, for the gateway tests
# (mcpctl/tests/gateway.rs): the TypeScript SDK (npm) and the Python `mcp` package (PyPI,
# in a virtual environment), and FastMCP (PyPI) for the skills tests against a third-party
# server (mcp-client/tests/fastmcp_skills.rs), in a virtual environment of its own
# (fastmcp-venv) so that the `mcp` it pulls in cannot displace the pinned one.
# Everything goes under target/gateway-clients/; no global installs. Prints the folder on
# stdout.
#
#   scripts/gateway-clients.sh
set -euo pipefail

TS_SDK_VERSION="1.32.2"
PY_MCP_VERSION="2.3.0"
FASTMCP_VERSION="4.1.6"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/target/gateway-clients"
PKG="$DIR/node_modules/@modelcontextprotocol/sdk/package.json"

mkdir -p "$DIR"
if ! grep -q "\"version\": \"$TS_SDK_VERSION\"" "$PKG" 2>/dev/null; then
  echo "installing @modelcontextprotocol/sdk@$TS_SDK_VERSION into $DIR" >&2
  npm install --prefix "$DIR" --no-audit --no-fund --no-save --loglevel=error \
    "@modelcontextprotocol/sdk@$TS_SDK_VERSION" >&2
fi
if ! "$DIR/venv/bin/python" -c "import mcp, importlib.metadata as m; assert m.version('mcp') == '$PY_MCP_VERSION'" 2>/dev/null; then
  echo "installing mcp==$PY_MCP_VERSION (PyPI) into $DIR/venv" >&2
  python3 -m venv "$DIR/venv" >&2
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check "mcp==$PY_MCP_VERSION" >&2
fi
if ! "$DIR/fastmcp-venv/bin/python" -c "import fastmcp, importlib.metadata as m; assert m.version('fastmcp') == '$FASTMCP_VERSION'" 2>/dev/null; then
  echo "installing fastmcp==$FASTMCP_VERSION (PyPI) into $DIR/fastmcp-venv" >&2
  python3 -m venv "$DIR/fastmcp-venv" >&2
  "$DIR/fastmcp-venv/bin/pip" install --quiet --disable-pip-version-check "fastmcp==$FASTMCP_VERSION" >&2
fi
echo "$DIR"
