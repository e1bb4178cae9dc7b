"""A gateway test client speaking MCP 2026-07-28: the Python `mcp` SDK's `Client` under
`mode="auto"` (it probes `server/discover`), installed by scripts/gateway-clients.sh.

    python py_modern_client.py stdio COMMAND ARGS_JSON WHO
    python py_modern_client.py http URL TOKEN WHO

Lists tools, calls `mcp__notes__echo`, reads `file:///readme`, listens for its updates
while `mcp__notes__touch` updates it, calls `mcp__notes__ask` (the upstream server's
elicitation reaches this client as an `input_required` round: it answers WHO), calls
`mcp__notes__guarded` (the gateway's approval question, answered without `approve`), lists
prompts and gets `mcp__notes__greet`, and prints one JSON object with what it got and the
protocol version it negotiated.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.subscriptions import ResourceUpdated


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def run(server, who):
    questions = []

    async def elicit(context, params):
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"who": who})

    async with Client(server, mode="auto", elicitation_callback=elicit) as client:
        tools = await client.list_tools()
        echo = await client.call_tool("mcp__notes__echo", {"text": "hi"})
        read_result = await client.read_resource("file:///readme")
        updates = []
        async with client.listen(resource_subscriptions=["file:///readme"]) as sub:
            await client.call_tool("mcp__notes__touch", {})
            async def first_update():
                async for event in sub:
                    if isinstance(event, ResourceUpdated):
                        return event.uri
            updates.append(await asyncio.wait_for(first_update(), timeout=20))
        ask = await client.call_tool("mcp__notes__ask", {})
        guarded = await client.call_tool("mcp__notes__guarded", {"text": "x"})
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("mcp__notes__greet", {"who": "gateway"})
        return {
            "protocol_version": client.protocol_version,
            "questions": questions,
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
        out = await run(params, who)
    else:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {extra}"})
        async with http:
            out = await run(streamable_http_client(target, http_client=http), who)
    print(json.dumps(out))


asyncio.run(main())
