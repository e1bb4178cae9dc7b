"""A gateway test client for `mcpctl serve --tool-exposure search`, on the Python `mcp` SDK.

    python py_search_client.py stdio COMMAND ARGS_JSON

Lists tools (the two of search mode), searches for a tool that echoes text, calls the
first result through `call_tool`, then calls `mcp__notes__guarded` (approval mode
`prompt`) through `call_tool` while declining the approval question, searches for `guarded`, lists the tools again
(both searches' results are now listed too, the second announced by `tools/list_changed`), calls the
first result directly by its qualified name, and prints one JSON object with what it got,
including the byte size of the first tools/list result.
"""

import asyncio
import json
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main(command, args):
    questions = []

    async def elicit(context, params):
        questions.append(params.message)
        return types.ElicitResult(action="decline")

    changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=elicit, message_handler=on_message
        ) as session:
            await session.initialize()
            tools = await session.list_tools()
            found = await session.call_tool("search_tools", {"query": "echo the text back", "limit": 1})
            first = found.structured_content["tools"][0]["name"]
            called = await session.call_tool("call_tool", {"name": first, "arguments": {"text": "hi"}})
            guarded = await session.call_tool(
                "call_tool", {"name": "mcp__notes__guarded", "arguments": {"text": "x"}}
            )
            empty = await session.call_tool("search_tools", {"query": "   "})
            # The servers have long been ready (their readiness announced): a search that
            # finds a tool not listed yet announces the change itself.
            changed.clear()
            await session.call_tool("search_tools", {"query": "guarded", "limit": 1})
            await asyncio.wait_for(changed.wait(), 20)
            after = await session.list_tools()
            direct = await session.call_tool(first, {"text": "direct"})
            print(json.dumps({
                "tools": sorted(t.name for t in tools.tools),
                "list_bytes": len(json.dumps(dump(tools))),
                "found": found.structured_content,
                "called": dump(called),
                "guarded": dump(guarded),
                "questions": questions,
                "empty": dump(empty),
                "tools_after": sorted(t.name for t in after.tools),
                "direct": dump(direct),
            }))


asyncio.run(main(sys.argv[2], json.loads(sys.argv[3])))
