"""A gateway test client that logs in by itself: the Python `mcp` SDK's own OAuth client
(`OAuthClientProvider`), installed by scripts/gateway-clients.sh.

    python py_oauth_client.py ERA URL

No token is given: the SDK's OAuth client reads the gateway's 401, its protected resource
metadata and the authorization server's metadata, registers a client, and runs the
authorization-code flow with PKCE and the `resource` parameter. The only part played here
is the browser's: the redirect handler requests the authorization URL (the test's
authorization server approves at once) and keeps the redirect's query, which the callback
handler hands back. Tokens live in memory.

ERA is `2025` (a `ClientSession`: `initialize`, an HTTP session) or `2026` (a `Client`
under `mode="auto"`). Lists tools, calls `mcp__notes__echo`, tries
`mcp__files__delete_file`, and prints one JSON object with what it got.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp import Client, ClientSession
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientMetadata

REDIRECT = "http://127.0.0.1:9/callback"


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


class Memory:
    """Token storage in memory (the SDK's `TokenStorage` protocol)."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


def provider(url):
    redirected = {}

    async def redirect_handler(authorization_url):
        # What a browser does: the authorization server answers with a redirect.
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(authorization_url)
        location = response.headers["location"]
        query = parse_qs(urlparse(location).query)
        redirected.clear()
        redirected.update({key: values[0] for key, values in query.items()})

    async def callback_handler():
        return AuthorizationCodeResult(
            code=redirected["code"],
            state=redirected.get("state"),
            iss=redirected.get("iss"),
        )

    metadata = OAuthClientMetadata(
        client_name="py-oauth-client",
        redirect_uris=[REDIRECT],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        server_url=url,
        client_metadata=metadata,
        storage=Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


async def calls(list_tools, call_tool):
    tools = await list_tools()
    echo = await call_tool("mcp__notes__echo", {"text": "logged in"})
    try:
        denied = await call_tool("mcp__files__delete_file", {"path": "/"})
        denied = json.dumps(dump(denied))
    except Exception as e:  # the gateway answers with a JSON-RPC error
        denied = str(e)
    return {
        "tools": sorted(t.name for t in tools.tools),
        "echo": dump(echo),
        "denied": denied,
    }


async def main():
    era, url = sys.argv[1:3]
    http = create_mcp_http_client(auth=provider(url))
    async with http:
        if era == "2025":
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    init = await session.initialize()
                    out = await calls(session.list_tools, session.call_tool)
                    out["protocol_version"] = init.protocol_version
        else:
            server = streamable_http_client(url, http_client=http)
            async with Client(server, mode="auto") as client:
                out = await calls(client.list_tools, client.call_tool)
                out["protocol_version"] = client.protocol_version
    print(json.dumps(out))


asyncio.run(main())
