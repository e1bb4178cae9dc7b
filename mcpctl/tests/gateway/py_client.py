"""A gateway test client on the Python `mcp` SDK (installed by scripts/gateway-clients.sh).

    python py_client.py stdio COMMAND ARGS_JSON WHO
    python py_client.py http URL TOKEN WHO

Lists tools, calls `mcp__notes__echo`, reads `file:///readme`, subscribes to it and waits
for the update that `mcp__notes__touch` makes, calls `mcp__notes__ask`
(which makes the upstream server ask this client, through the gateway, who it is: it
answers WHO), lists prompts and gets `mcp__notes__greet`, and prints one JSON object with what it got.
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


async def session_run(read, write, who):
    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={"who": who})

    updated = asyncio.Event()
    updates = []

    async def on_message(message):
        if isinstance(message, types.ResourceUpdatedNotification):
            updates.append(message.params.uri)
            updated.set()

    async with ClientSession(
        read, write, elicitation_callback=elicit, message_handler=on_message
    ) as session:
        await session.initialize()
        tools = await session.list_tools()
        echo = await session.call_tool("mcp__notes__echo", {"text": "hi"})
        read_result = await session.read_resource("file:///readme")
        # Subscribed through the gateway: the upstream server's update reaches us.
        await session.subscribe_resource("file:///readme")
        await session.call_tool("mcp__notes__touch", {})
        await asyncio.wait_for(updated.wait(), timeout=20)
        await session.unsubscribe_resource("file:///readme")
        ask = await session.call_tool("mcp__notes__ask", {})
        guarded = await session.call_tool("mcp__notes__guarded", {"text": "x"})
        prompts = await session.list_prompts()
        prompt = await session.get_prompt("mcp__notes__greet", {"who": "gateway"})
        return {
            "prompts": sorted(p.name for p in prompts.prompts),
            "prompt": dump(prompt),
            "guarded": dump(guarded),
            "tools": sorted(t.name for t in tools.tools),
            "echo": dump(echo),
            "read": dump(read_result),
            "ask": dump(ask),
            "updated": updates,
        }


async def main():
    mode, target, extra, who = sys.argv[1:5]
    if mode == "stdio":
        params = StdioServerParameters(
            command=target, args=json.loads(extra), env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            out = await session_run(read, write, who)
    else:
        client = create_mcp_http_client(headers={"Authorization": f"Bearer {extra}"})
        async with client:
            async with streamable_http_client(target, http_client=client) as streams:
                out = await session_run(streams[0], streams[1], who)
    print(json.dumps(out))


asyncio.run(main())
