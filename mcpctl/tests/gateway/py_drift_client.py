"""A gateway test client on the Python `mcp` SDK for tools that change behind the user.

    python py_drift_client.py stdio COMMAND ARGS_JSON

Calls `mcp__files__echo` once (after which the upstream server rewrites the tool by
itself and tells the gateway), lists the tools again (on each `tools/list_changed`, for
at most 20 s) until the gateway no longer lists it, then calls it twice more: it answers the first re-approval question with no and the second with yes.
Prints one JSON object with the three results, the questions and the tool lists.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main(command, args):
    questions = []
    changed = asyncio.Event()

    async def elicit(context, params):
        questions.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": len(questions) > 1})

    async def on_message(message):
        if isinstance(message, types.ToolListChangedNotification):
            changed.set()

    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, elicitation_callback=elicit, message_handler=on_message
        ) as session:
            await session.initialize()
            before = await session.list_tools()
            first = await session.call_tool("mcp__files__echo", {"text": "one"})
            # The gateway follows the server's list_changed, then tells this client (as it
            # also does when a server becomes ready): list again until the tool is gone.
            loop = asyncio.get_running_loop()
            give_up = loop.time() + 20
            while True:
                changed.clear()
                during = await session.list_tools()
                if "mcp__files__echo" not in [t.name for t in during.tools]:
                    break
                if loop.time() > give_up:
                    break
                try:
                    await asyncio.wait_for(changed.wait(), timeout=0.5)
                except asyncio.TimeoutError:
                    pass
            second = await session.call_tool("mcp__files__echo", {"text": "two"})
            third = await session.call_tool("mcp__files__echo", {"text": "three"})
            after = await session.list_tools()
            print(json.dumps({
                "before": sorted(t.name for t in before.tools),
                "during": sorted(t.name for t in during.tools),
                "after": sorted(t.name for t in after.tools),
                "first": dump(first),
                "second": dump(second),
                "third": dump(third),
                "questions": questions,
            }))


asyncio.run(main(sys.argv[2], json.loads(sys.argv[3])))
