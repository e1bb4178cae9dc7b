"""A gateway test client that signs in to a `upstream_identity = "caller"` server through a
URL elicitation: the Python `mcp` SDK (installed by scripts/gateway-clients.sh).

    python py_consent_client.py ERA URL TOKEN MODE

ERA is `2025` (a `ClientSession`: `initialize`, an HTTP session) or `2026` (a `Client`
under `mode="auto"`, whose questions come back as `input_required` rounds). MODE is
`follow` (an `elicitation_callback`: it opens the URL it is sent to as a browser would,
following redirects with a cookie jar, then accepts), `accept` (a callback that accepts
without opening anything: a user who never signs in), `decline` (a callback that declines
without opening anything) or `none` (no callback: the SDK declares no elicitation
capability).

Calls `mcp__tickets__echo` once and prints one JSON object: the call's result or its
error (code, message, the URLs of `UrlElicitationRequiredError`), the URL elicitations it
was sent, the pages it opened, and (2025) the `notifications/elicitation/complete` ids
it got.
"""

import asyncio
import http.cookiejar
import json
import sys
import urllib.request

import mcp_types as types
from mcp import Client, ClientSession, MCPError, UrlElicitationRequiredError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


def browse(url):
    """Opens `url` as a browser would: follows redirects, keeps cookies, no proxy; the
    last page's status and text."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(
        urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(jar)
    )
    with opener.open(url, timeout=30) as response:
        return response.status, response.read().decode()


class Seen:
    def __init__(self, mode):
        self.mode = mode
        self.elicitations = []
        self.pages = []
        self.completed = []
        self.complete = asyncio.Event()

    async def elicit(self, context, params):
        self.elicitations.append(
            {
                "mode": getattr(params, "mode", None),
                "url": getattr(params, "url", None),
                "message": params.message,
                "elicitation_id": getattr(params, "elicitation_id", None),
            }
        )
        if self.mode == "decline":
            return types.ElicitResult(action="decline")
        if self.mode == "accept":
            return types.ElicitResult(action="accept")
        status, body = await asyncio.to_thread(browse, params.url)
        self.pages.append({"status": status, "body": body})
        return types.ElicitResult(action="accept")

    async def on_message(self, message):
        if isinstance(message, types.ElicitCompleteNotification):
            self.completed.append(message.params.elicitation_id)
            self.complete.set()


async def call(call_tool):
    try:
        result = await call_tool("mcp__tickets__echo", {"text": "hi"})
        return {"result": dump(result)}
    except MCPError as e:
        error = {"code": e.code, "message": e.message}
        if e.code == types.URL_ELICITATION_REQUIRED:
            required = UrlElicitationRequiredError.from_error(e.error)
            error["urls"] = [el.url for el in required.elicitations]
        return {"error": error}


async def main():
    era, url, token, mode = sys.argv[1:5]
    seen = Seen(mode)
    elicit = None if mode == "none" else seen.elicit
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        if era == "2025":
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(
                    streams[0],
                    streams[1],
                    elicitation_callback=elicit,
                    message_handler=seen.on_message,
                ) as session:
                    await session.initialize()
                    out = await call(session.call_tool)
                    if seen.elicitations and not out.get("result", {"isError": True}).get("isError"):
                        # The notification travels on the session's own stream: bounded.
                        try:
                            await asyncio.wait_for(seen.complete.wait(), timeout=10)
                        except asyncio.TimeoutError:
                            pass
        else:
            server = streamable_http_client(url, http_client=http)
            async with Client(server, mode="auto", elicitation_callback=elicit) as client:
                out = await call(client.call_tool)
                out["protocol_version"] = client.protocol_version
    out["elicitations"] = seen.elicitations
    out["pages"] = seen.pages
    out["completed"] = seen.completed
    print(json.dumps(out))


asyncio.run(main())
