"""The gateway events test's client: the Python `mcp` SDK's `Client` (pinned, installed by
scripts/webhook-events-server.sh) polling `mcpctl serve --http` for the events of an
upstream server that delivers them only by webhook (mcpctl/tests/serve_events.rs).

    python py_events_client.py URL TOKEN start
    python py_events_client.py URL TOKEN poll NAME CURSOR

`start`: lists the event types (`events/list`), polls the one listed from now, has the server publish two events (the tool `mcp__tickets__publish`), polls from the
first cursor until both came (bounded), polls once more from the cursor after them, and
asks the server for its last delivery (`mcp__tickets__last_delivery`) and a copy of it
signed ten minutes ago (`mcp__tickets__stale_copy`). `poll`: one poll
of the event type NAME from CURSOR. Prints one JSON object.
"""

import asyncio
import json
import sys
from typing import Any

import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from pydantic import ConfigDict, TypeAdapter

ANSWER = TypeAdapter(dict[str, Any])


class AnyParams(types.RequestParams):
    model_config = ConfigDict(extra="allow")


class EventsRequest(types.Request[AnyParams, str]):
    pass


async def request(client, method, **params):
    return await client.session.send_request(
        EventsRequest(method=method, params=AnyParams(**params)), ANSWER
    )


async def poll(client, name, cursor):
    return await request(client, "events/poll", name=name, arguments={}, cursor=cursor)


def text_of(result):
    if result.is_error:
        raise RuntimeError(f"the tool failed: {result.content}")
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def start(client):
    listed = await request(client, "events/list")
    name = listed["events"][0]["name"]
    first = await poll(client, name, None)
    published = []
    for summary in ["first", "second"]:
        result = await client.call_tool("mcp__tickets__publish", {"summary": summary})
        published.append(text_of(result))
    events, cursor = [], first["cursor"]
    for _ in range(100):
        batch = await poll(client, name, cursor)
        events.extend(batch["events"])
        cursor = batch["cursor"]
        if len(events) >= 2:
            break
        await asyncio.sleep(0.05)
    again = await poll(client, name, cursor)
    last = text_of(await client.call_tool("mcp__tickets__last_delivery", {}))
    stale = text_of(await client.call_tool("mcp__tickets__stale_copy", {}))
    return {
        "listed": listed["events"],
        "first": first,
        "published": published,
        "events": events,
        "cursor": cursor,
        "again": again,
        "last_delivery": last,
        "stale_copy": stale,
    }


async def main():
    url, token, what = sys.argv[1:4]
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        async with Client(streamable_http_client(url, http_client=http), mode="auto") as client:
            if what == "start":
                out = await start(client)
            else:
                out = await poll(client, sys.argv[4], sys.argv[5])
    print(json.dumps(out))


asyncio.run(main())
