#!/usr/bin/env python3
"""MCP interop test client built on the official Python SDK (`mcp` on PyPI), the third peer beside
the TypeScript client and server: our Rust server checked against a stricter reading of the spec.

    python client.py stdio <command> [args...]
    python client.py http <url>

stdin:  JSON array of calls, e.g. [{"name": "echo", "arguments": {"message": "hi"}}]
stdout: one JSON object {"serverInfo", "tools", "calls", "warnings"}; exit 0.
"warnings" holds what the SDK logged at WARNING or above (a failed session termination, say).
On any failure other than a per-call protocol error: message on stderr, exit 1.
"""

import asyncio
import json
import logging
import sys

from mcp import ClientSession, McpError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

TIMEOUT_SECONDS = 20


class Collect(logging.Handler):
    """Keeps what the SDK logs at WARNING or above, for the report."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def use(session, calls):
    initialized = await session.initialize()
    tools = (await session.list_tools()).tools
    results = []
    for call in calls:
        try:
            result = await session.call_tool(call["name"], call.get("arguments") or {})
            results.append({"name": call["name"], "result": dump(result)})
        except McpError as error:
            entry = {"code": error.error.code, "message": error.error.message}
            if error.error.data is not None:
                entry["data"] = error.error.data
            results.append({"name": call["name"], "error": entry})
    return {
        "serverInfo": dump(initialized.serverInfo),
        "tools": [dump(tool) for tool in tools],
        "calls": results,
    }


async def main(argv, calls):
    mode, rest = (argv[0], argv[1:]) if argv else (None, [])
    if mode == "stdio" and rest:
        params = StdioServerParameters(command=rest[0], args=rest[1:])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await use(session, calls)
    if mode == "http" and len(rest) == 1:
        async with streamablehttp_client(rest[0]) as (read, write, _session_id):
            async with ClientSession(read, write) as session:
                return await use(session, calls)
    sys.exit("usage: client.py stdio <command> [args...] | client.py http <url>")


if __name__ == "__main__":
    collect = Collect()
    logging.getLogger().addHandler(collect)
    text = sys.stdin.read()
    calls = json.loads(text) if text.strip() else []
    try:
        report = asyncio.run(asyncio.wait_for(main(sys.argv[1:], calls), TIMEOUT_SECONDS))
    except Exception as error:  # noqa: BLE001 - any failure fails the test, with its reason
        sys.exit(f"client.py: {type(error).__name__}: {error}")
    report["warnings"] = collect.messages
    print(json.dumps(report))
