"""A gateway test client on the Python `mcp` SDK that calls from inside a trace of its own.

    python py_trace_client.py ERA URL TOKEN TRACE_ID SPAN_ID

ERA is `2025` (a `ClientSession`: `initialize`, an HTTP session) or `2026` (a `Client`
under `mode="auto"`: stateless MCP 2026-07-28 requests). The script makes the span
TRACE_ID/SPAN_ID (hex), with the baggage `tenant=blue`, the current OpenTelemetry context,
as an application that is itself traced would, and calls `mcp__notes__echo` and
`mcp__notes__fail` through the gateway. It never writes `_meta` itself: the SDK injects
the current context into each request's `_meta` (SEP-414) with nothing but
`opentelemetry-api`, a dependency of `mcp` (the API's no-op tracer hands the current span
on, so the `traceparent` it sends names SPAN_ID). Prints one JSON object with the results
and the protocol version it spoke.
"""

import asyncio
import json
import sys

from mcp import ClientSession, Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from opentelemetry import baggage, context, trace
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags


def dump(value):
    return value.model_dump(by_alias=True, mode="json", exclude_none=True)


async def calls(call_tool):
    echo = await call_tool("mcp__notes__echo", {"text": "traced"})
    fail = await call_tool("mcp__notes__fail", {})
    return {"echo": dump(echo), "fail": dump(fail)}


async def main():
    era, url, token, trace_id, span_id = sys.argv[1:6]
    parent = SpanContext(
        trace_id=int(trace_id, 16),
        span_id=int(span_id, 16),
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),
    )
    traced = trace.set_span_in_context(NonRecordingSpan(parent))
    context.attach(baggage.set_baggage("tenant", "blue", traced))
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        if era == "2025":
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    init = await session.initialize()
                    out = await calls(session.call_tool)
                    out["protocol_version"] = init.protocol_version
        else:
            server = streamable_http_client(url, http_client=http)
            async with Client(server, mode="auto") as client:
                out = await calls(client.call_tool)
                out["protocol_version"] = client.protocol_version
    print(json.dumps(out))


asyncio.run(main())
