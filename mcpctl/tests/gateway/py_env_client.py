"""A gateway test client on the Python `mcp` SDK for one server in two environments.

    python py_env_client.py stdio COMMAND ARGS_JSON

The gateway serves `github` installed in `local` and in `devbox` (over ssh). This client
lists the tools and resources, calls `whereami` in each environment, calls `guarded` in
devbox twice and then in local once, and reads the resource each environment lists. It
answers the approval questions in order: yes, yes, no. Prints one JSON object with the
results, the questions asked and the listings.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ANSWERS = [True, True, False]


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def main(command, args):
    questions = []

    async def elicit(context, params):
        questions.append(params.message)
        approve = ANSWERS[len(questions) - 1] if len(questions) <= len(ANSWERS) else False
        return types.ElicitResult(action="accept", content={"approve": approve})

    params = StdioServerParameters(command=command, args=args, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            tools = await session.list_tools()
            report = {"tools": sorted(t.name for t in tools.tools)}
            report["local_whereami"] = dump(await session.call_tool("mcp__github__local__whereami", {}))
            report["questions_after_local"] = len(questions)
            report["devbox_whereami"] = dump(await session.call_tool("mcp__github__devbox__whereami", {}))
            report["devbox_guarded"] = dump(await session.call_tool("mcp__github__devbox__guarded", {"text": "one"}))
            report["devbox_guarded_again"] = dump(await session.call_tool("mcp__github__devbox__guarded", {"text": "two"}))
            report["local_guarded"] = dump(await session.call_tool("mcp__github__local__guarded", {"text": "three"}))
            resources = await session.list_resources()
            report["resources"] = sorted(str(r.uri) for r in resources.resources)
            report["reads"] = {}
            for uri in report["resources"]:
                result = await session.read_resource(uri)
                report["reads"][uri] = [dump(c) for c in result.contents]
            try:
                await session.read_resource("file:///marker")
                report["bare_read"] = "read"
            except Exception as e:  # the gateway refuses: two servers list that URI
                report["bare_read"] = str(e)
            report["questions"] = questions
            print(json.dumps(report))


asyncio.run(main(sys.argv[2], json.loads(sys.argv[3])))
