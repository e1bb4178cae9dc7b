"""A gateway test client speaking MCP 2026-07-28 (the Python `mcp` SDK's `Client` under
`mode="auto"`) that answers sampling.

    python py_modern_host_client.py stdio COMMAND ARGS_JSON WHO

Calls `mcp__asker__sample`: the upstream server's sampling request reaches this client as
an `input_required` round, answered as model WHO; completes the `name` argument of
`mcp__asker__greet`; listens for prompt list changes while `mcp__asker__new_prompt` adds a
prompt; prints one JSON object with what it got.
"""

import asyncio
import json
import os
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.subscriptions import PromptsListChanged


async def run(server, who):
    sampled = []

    async def sample(context, params):
        sampled.append(params.max_tokens)
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"sampled by {who}"),
            model=f"model-{who}",
            stop_reason="endTurn",
        )

    async with Client(server, mode="auto", sampling_callback=sample) as client:
        result = await client.call_tool("mcp__asker__sample", {})
        completion = await client.complete(
            types.PromptReference(type="ref/prompt", name="mcp__asker__greet"),
            {"name": "name", "value": "A"},
        )
        # A listen for prompt list changes sees the one `mcp__asker__new_prompt` makes.
        async with client.listen(prompts_list_changed=True) as sub:
            await client.call_tool("mcp__asker__new_prompt", {})

            async def first_change():
                async for event in sub:
                    if isinstance(event, PromptsListChanged):
                        return True

            changed = await asyncio.wait_for(first_change(), timeout=20)
        prompts = await client.list_prompts()
        return {
            "protocol_version": client.protocol_version,
            "prompts_changed": changed,
            "prompts": sorted(p.name for p in prompts.prompts),
            "sample": result.structured_content,
            "sampled": sampled,
            "completion": completion.completion.model_dump(by_alias=True, exclude_none=True),
        }


async def main():
    _mode, target, extra, who = sys.argv[1:5]
    params = StdioServerParameters(command=target, args=json.loads(extra), env=dict(os.environ))
    out = await run(params, who)
    print(json.dumps(out))


asyncio.run(main())
