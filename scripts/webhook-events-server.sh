#!/usr/bin/env bash
# Installs PyPI's `mcp-webhook-events` (webhook delivery of MCP events for servers built on
# the Python `mcp` SDK), pinned, with the `mcp` it runs on, in a virtual environment of its
# own: target/webhook-events/venv. The gateway's events test (mcpctl/tests/serve_events.rs)
# runs mcpctl/tests/gateway/webhook_events_server.py with it. No global installs. Prints
# the folder on stdout.
#
#   scripts/webhook-events-server.sh
set -euo pipefail

WEBHOOK_EVENTS_VERSION="0.2.0"
PY_MCP_VERSION="2.3.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/target/webhook-events"

mkdir -p "$DIR"
if ! "$DIR/venv/bin/python" -c "import mcp_webhook_events, importlib.metadata as m; assert m.version('mcp-webhook-events') == '$WEBHOOK_EVENTS_VERSION' and m.version('mcp') == '$PY_MCP_VERSION'" 2>/dev/null; then
  echo "installing mcp-webhook-events==$WEBHOOK_EVENTS_VERSION and mcp==$PY_MCP_VERSION (PyPI) into $DIR/venv" >&2
  python3 -m venv "$DIR/venv" >&2
  "$DIR/venv/bin/pip" install --quiet --disable-pip-version-check \
    "mcp-webhook-events==$WEBHOOK_EVENTS_VERSION" "mcp==$PY_MCP_VERSION" >&2
fi
echo "$DIR"
