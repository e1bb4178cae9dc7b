"""A gateway test client on the Python `mcp` SDK for what upstream servers ask of a host.

    python py_host_client.py stdio COMMAND ARGS_JSON WHO

Announces sampling (with a callback answering as model WHO), sets the log level to
`warning` and collects log messages, calls `mcp__asker__sample`, `mcp__asker__log`
(warning) and `mcp__asker__debug_log` (debug: below the level), completes the `name`
argument of `mcp__asker__greet`, calls `mcp__asker__new_prompt` and waits for the prompt
list change, and prints one JSON object with what it got.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def session_run(read, write, who):
    sampled = []

    async def sample(context, params):
        sampled.append(params.max_tokens)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled by {who}"),
            model=f"model-{who}",
            stop_reason="endTurn",
        )

    logs = []
    logged = asyncio.Event()

    async def on_log(params):
        logs.append({"level": params.level, "logger": params.logger, "data": params.data})
        logged.set()

    prompts_changed = asyncio.Event()

    async def on_message(message):
        if isinstance(message, types.PromptListChangedNotification):
            prompts_changed.set()

    async with ClientSession(
        read,
        write,
        sampling_callback=sample,
        logging_callback=on_log,
        message_handler=on_message,
    ) as session:
        await session.initialize()
        await session.set_logging_level("warning")
        result = await session.call_tool("mcp__asker__sample", {})
        await session.call_tool("mcp__asker__debug_log", {})
        await session.call_tool("mcp__asker__log", {})
        await asyncio.wait_for(logged.wait(), timeout=20)
        completion = await session.complete(
            types.PromptReference(type="ref/prompt", name="mcp__asker__greet"),
            {"name": "name", "value": "A"},
        )
        await session.call_tool("mcp__asker__new_prompt", {})
        await asyncio.wait_for(prompts_changed.wait(), timeout=20)
        prompts = await session.list_prompts()
        return {
            "sample": result.structured_content,
            "sampled": sampled,
            "logs": logs,
            "completion": completion.completion.model_dump(by_alias=True, exclude_none=True),
            "prompts": sorted(p.name for p in prompts.prompts),
        }


async def main():
    _mode, target, extra, who = sys.argv[1:5]
    params = StdioServerParameters(command=target, args=json.loads(extra), env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        out = await session_run(read, write, who)
    print(json.dumps(out))


asyncio.run(main())
