"""A gateway test client for `mcpctl serve --tool-exposure search` with tools pinned by
`always_load` / `always_load_tools`, on the Python `mcp` SDK.

    python py_search_always_client.py stdio COMMAND ARGS_JSON PLAN_JSON
    python py_search_always_client.py http URL TOKEN PLAN_JSON

PLAN_JSON is `{"pinned": [names], "good": query, "weak": query}`. Before any search, the
client lists the tools until every `pinned` name is listed (each `tools/list_changed`
from the gateway, as a server becomes ready, makes it list again; after 20 s it keeps
what it saw), then calls each listed pinned tool directly by its listed name with
`{"text": "pinned <name>"}`, then calls `search_tools` with the `good` query and with the
`weak` one, and prints one JSON object with what it saw: the first listing in the
gateway's order (and how many listings it took), each call's result, each search's
structured answer.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def list_until(session, changed, pinned):
    """The tool names listed once every pinned name is (or once 20 s have passed), and
    how many listings that took."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 20
    listings = 0
    while True:
        # Cleared before listing: a change announced after this listing is not missed.
        changed.clear()
        names = [t.name for t in (await session.list_tools()).tools]
        listings += 1
        left = deadline - loop.time()
        if all(p in names for p in pinned) or left <= 0:
            return names, listings
        try:
            await asyncio.wait_for(changed.wait(), left)
        except asyncio.TimeoutError:
            pass


async def session_run(read, write, plan):
    changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    async with ClientSession(read, write, message_handler=on_message) as session:
        await session.initialize()
        before, listings = await list_until(session, changed, plan["pinned"])
        called = {}
        for name in plan["pinned"]:
            if name in before:
                called[name] = dump(
                    await session.call_tool(name, {"text": f"pinned {name}"})
                )
        searches = {}
        for query in (plan["good"], plan["weak"]):
            result = await session.call_tool("search_tools", {"query": query})
            searches[query] = {
                "isError": bool(result.is_error),
                "structuredContent": result.structured_content,
            }
        return {
            "tools_before": before,
            "listings": listings,
            "called": called,
            "searches": searches,
        }


async def main():
    mode, target, extra, plan = sys.argv[1:5]
    plan = json.loads(plan)
    if mode == "stdio":
        params = StdioServerParameters(
            command=target, args=json.loads(extra), env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            out = await session_run(read, write, plan)
    else:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {extra}"})
        async with client:
            async with streamable_http_client(target, http_client=client) as streams:
                out = await session_run(streams[0], streams[1], plan)
    print(json.dumps(out))


asyncio.run(main())
