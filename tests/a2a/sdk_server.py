#!/usr/bin/env python3
"""A2A interop test server built on the official Python SDK (`a2a-sdk` on PyPI), for our A2A
client to talk to: a weather agent over JSON-RPC, streaming declared and supported.

    python sdk_server.py PORT

Listens on 127.0.0.1 only; PORT 0 picks a free port. Once serving it prints
`listening on http://127.0.0.1:PORT` on stderr. The agent card is at
/.well-known/agent-card.json, JSON-RPC at / (the card's one interface), one skill "weather".

Behaviour, per message (a new task, or a follow-up naming its task):
- text containing "input": the task ends input-required, with an agent message asking for a city;
- any other text: the task works, gets an artifact "sunny in <text>", and completes with an agent
  message of the same text (streamed: task, working, artifact, completed).
CancelTask cancels a task that has not ended.
"""

import asyncio
import socket
import sys

import uvicorn
from starlette.applications import Starlette

from a2a.helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Part

HOST = "127.0.0.1"


class WeatherExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.message is None or context.task_id is None or context.context_id is None:
            return
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        # The SDK wants the task itself before any update of it.
        if context.current_task is None:
            task = new_task_from_user_message(context.message)
            task.id = context.task_id
            task.context_id = context.context_id
            await event_queue.enqueue_event(task)
        text = context.get_user_input()
        if "input" in text:
            ask = updater.new_agent_message([Part(text="Which city?")])
            await updater.requires_input(ask)
            return
        answer = f"sunny in {text}"
        await updater.start_work()
        await updater.add_artifact(parts=[Part(text=answer)], name="weather")
        await updater.complete(updater.new_agent_message([Part(text=answer)]))

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.task_id is None or context.context_id is None:
            return
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


def app(url: str) -> Starlette:
    card = AgentCard(
        name="SDK weather agent",
        description="Tells the weather in a city; asks for the city when the text says input.",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=url, protocol_binding="JSONRPC", protocol_version="1.0"),
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text"],
        default_output_modes=["text"],
        skills=[
            AgentSkill(
                id="weather",
                name="Weather",
                description="Tells today's weather in a city",
                tags=["weather"],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=WeatherExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    return Starlette(routes=create_agent_card_routes(card) + create_jsonrpc_routes(handler, rpc_url="/"))


async def serve(port: int) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((HOST, port))
    url = f"http://{HOST}:{listener.getsockname()[1]}"
    server = uvicorn.Server(uvicorn.Config(app(url), log_level="warning"))
    serving = asyncio.create_task(server.serve(sockets=[listener]))
    while not server.started and not serving.done():
        await asyncio.sleep(0.05)
    if server.started:
        print(f"listening on {url}", file=sys.stderr, flush=True)
    await serving


if __name__ == "__main__":
    if len(sys.argv) != 2 or not sys.argv[1].isdigit():
        sys.exit("usage: sdk_server.py PORT")
    asyncio.run(serve(int(sys.argv[1])))
