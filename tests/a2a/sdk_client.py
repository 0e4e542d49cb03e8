#!/usr/bin/env python3
"""A2A interop test client built on the official Python SDK (`a2a-sdk` on PyPI): it reads the
agent card with the SDK's resolver and talks JSON-RPC through the client the SDK's factory makes
from that card, so a server that strays from the spec fails inside the SDK.

    python sdk_client.py

stdin:  JSON object {"url": base URL, "steps": [step, ...]}, each step one of
          {"send": text, "messageId"?, "taskId"?, "contextId"?, "data"?}   SendMessage
          {"stream": text, same optional fields}                           SendStreamingMessage
          {"get": task id}                                                 GetTask
          {"cancel": task id}                                              CancelTask
        (`data`: any JSON, sent as a data part after the text part; `messageId` defaults to a
        fresh one; `taskId`/`contextId` go on the message when given.)
stdout: one JSON object {"card", "steps"}; exit 0. "card" is the agent card as the SDK read it,
        each step is {"result", "events", "error"}: "result" the task or message (the reply of a
        send, the task of a get or cancel; null for a stream), "events" every event of a stream,
        each with "kind" (task | message | statusUpdate | artifactUpdate) beside its own fields,
        and "error" what the SDK raised for that step, or null. All in ProtoJSON (camelCase).
On any failure outside a step (the card, the client): message on stderr, exit 1.
"""

import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import json_format
from google.protobuf.struct_pb2 import Value

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
)
from a2a.utils.constants import TransportProtocol

TIMEOUT_SECONDS = 60


def dump(message):
    return json_format.MessageToDict(message)


def event(response):
    """A StreamResponse as {"kind", ...the fields of its task, message or update}."""
    kind = response.WhichOneof("payload")
    camel = {"status_update": "statusUpdate", "artifact_update": "artifactUpdate"}
    return {"kind": camel.get(kind, kind), **dump(getattr(response, kind))}


def user_message(step, text):
    parts = [Part(text=text)]
    if "data" in step:
        parts.append(Part(data=json_format.ParseDict(step["data"], Value())))
    message = Message(
        role=Role.ROLE_USER,
        message_id=step.get("messageId") or f"sdk-client-{uuid.uuid4()}",
        parts=parts,
    )
    if step.get("taskId"):
        message.task_id = step["taskId"]
    if step.get("contextId"):
        message.context_id = step["contextId"]
    return SendMessageRequest(message=message)


async def run(client, streaming_client, step, events):
    """The result of `step`; a stream's events go to `events` as they come."""
    if "send" in step:
        replies = [reply async for reply in client.send_message(user_message(step, step["send"]))]
        kind = replies[-1].WhichOneof("payload")
        return dump(getattr(replies[-1], kind))
    if "stream" in step:
        async for reply in streaming_client.send_message(user_message(step, step["stream"])):
            events.append(event(reply))
        return None
    if "get" in step:
        return dump(await client.get_task(GetTaskRequest(id=step["get"])))
    if "cancel" in step:
        return dump(await client.cancel_task(CancelTaskRequest(id=step["cancel"])))
    raise ValueError(f"unknown step {json.dumps(step)}")


async def main(script):
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, script["url"]).get_agent_card()

        def client(streaming):
            config = ClientConfig(
                streaming=streaming,
                httpx_client=http,
                supported_protocol_bindings=[TransportProtocol.JSONRPC],
            )
            return ClientFactory(config).create(card)

        plain, streaming = client(False), client(True)
        steps = []
        for step in script.get("steps", []):
            events = []
            try:
                result = await run(plain, streaming, step, events)
                steps.append({"result": result, "events": events, "error": None})
            except Exception as error:  # noqa: BLE001 - reported with the step
                failure = f"{type(error).__name__}: {error}"
                steps.append({"result": None, "events": events, "error": failure})
        return {"card": dump(card), "steps": steps}


if __name__ == "__main__":
    text = sys.stdin.read()
    script = json.loads(text)
    try:
        report = asyncio.run(asyncio.wait_for(main(script), TIMEOUT_SECONDS))
    except Exception as error:  # noqa: BLE001 - any failure fails the test, with its reason
        sys.exit(f"sdk_client.py: {type(error).__name__}: {error}")
    print(json.dumps(report))
