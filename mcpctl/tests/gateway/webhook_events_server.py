"""An MCP server built on the Python SDK (`mcp`) with PyPI's `mcp-webhook-events`, which
delivers events by webhook only; scripts/webhook-events-server.sh installs both (pinned)
in target/webhook-events/venv. Run over stdio by `mcpctl serve` in
mcpctl/tests/serve_events.rs:

    python webhook_events_server.py STORE

One event type, `ticket.updated` (arguments: an optional `ticket_id` to filter on).
Tools: `publish` (publishes one event and delivers what is due at once, answering the
package's delivery counts), `last_delivery` (the last event delivery POSTed: URL,
headers and body, for the test to replay and forge) and `stale_copy` (that delivery under
a new id, signed with the subscription's secret, with a timestamp ten minutes old).

Two settings loopback needs: the package POSTs only to https URLs of public addresses
unless its `SafeHttp(allow_insecure_for_tests=True)` is given (then `http://127.0.0.1`
is allowed), and it announces the capability as `capabilities.events`, where the
extension's clients (mcp-client) read `capabilities.extensions["io.modelcontextprotocol/events"]`:
a middleware here announces both.
"""

import sqlite3
import sys
from datetime import datetime, timedelta, timezone

from mcp.server import MCPServer
from mcp_webhook_events import EventDefinition, McpEvents, SafeHttp
from standardwebhooks.webhooks import Webhook

EXTENSION = "io.modelcontextprotocol/events"


class RecordingHttp(SafeHttp):
    """The package's HTTP client, loopback allowed, remembering what it POSTed."""

    def __init__(self):
        super().__init__(allow_insecure_for_tests=True)
        self.sent = []

    def post(self, url, body, headers):
        self.sent.append({"url": url, "body": body.decode(), "headers": dict(headers)})
        return super().post(url, body, headers)


class AdvertiseExtension:
    """Adds the extension under `capabilities.extensions` too."""

    async def __call__(self, ctx, call_next):
        result = await call_next(ctx)
        if ctx.method in ("server/discover", "initialize") and isinstance(result, dict):
            caps = result.setdefault("capabilities", {})
            caps.setdefault("extensions", {})[EXTENSION] = {}
        return result


mcp = MCPServer("webhook-events")
http = RecordingHttp()
events = McpEvents(
    mcp,
    store=sys.argv[1],
    http=http,
    definitions=[
        EventDefinition(
            name="ticket.updated",
            description="A support ticket was updated.",
            input_schema={
                "type": "object",
                "properties": {"ticket_id": {"type": "string"}},
                "additionalProperties": False,
            },
            payload_schema={
                "type": "object",
                "properties": {
                    "ticket_id": {"type": "string"},
                    "summary": {"type": "string"},
                },
                "required": ["ticket_id", "summary"],
                "additionalProperties": False,
            },
        )
    ],
)
events.install()
low = getattr(mcp, "_lowlevel_server", None) or getattr(mcp, "_mcp_server", mcp)
low.middleware.append(AdvertiseExtension())


@mcp.tool()
def publish(summary: str, ticket_id: str = "T-1") -> dict:
    """Publishes one `ticket.updated` event and delivers what is due."""
    queued = events.publish("ticket.updated", {"ticket_id": ticket_id, "summary": summary})
    return {"queued": queued, **events.deliver_pending()}


@mcp.tool()
def last_delivery() -> dict:
    """The last event delivery POSTed (not a callback verification)."""
    for sent in reversed(http.sent):
        if not sent["headers"]["webhook-id"].startswith("msg_verification_"):
            return sent
    return {}


@mcp.tool()
def stale_copy() -> dict:
    """The last delivery under a new id, signed ten minutes ago with the right secret."""
    last = last_delivery()
    with sqlite3.connect(sys.argv[1]) as db:
        (secret,) = db.execute(
            "SELECT secret FROM subscriptions WHERE id=?",
            (last["headers"]["X-MCP-Subscription-Id"],),
        ).fetchone()
    then = datetime.now(timezone.utc) - timedelta(minutes=10)
    headers = dict(last["headers"])
    headers["webhook-id"] = "evt_stale"
    headers["webhook-timestamp"] = str(int(then.timestamp()))
    headers["webhook-signature"] = Webhook(secret).sign("evt_stale", then, last["body"])
    return {**last, "headers": headers}


if __name__ == "__main__":
    mcp.run()
