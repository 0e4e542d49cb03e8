#!/usr/bin/env node
// The web endpoint test's client: the AI SDK's own `DefaultChatTransport` (what `useChat` uses)
// sends a chat request to our endpoint over loopback and parses the UI message stream with the
// package's parser and chunk schema; `readUIMessageStream` rebuilds the assistant message from it
// (going on with the last message when that is the assistant's, as `useChat` does).
//
// stdin:  {"api": "http://127.0.0.1:PORT/api/chat", "chatId": "...", "messages": [UIMessage...]}
// stdout: {"chunks": [UIMessageChunk...], "message": UIMessage}; exit 0.
// On any failure (a chunk the schema refuses, an HTTP error): message on stderr, exit 1.

import { DefaultChatTransport, readUIMessageStream } from "ai";

async function main() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  const { api, chatId, messages } = JSON.parse(text);
  const transport = new DefaultChatTransport({ api });
  const stream = await transport.sendMessages({
    chatId,
    messages,
    trigger: "submit-message",
    messageId: undefined,
    abortSignal: undefined,
  });
  const chunks = [];
  const recorded = stream.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        chunks.push(chunk);
        controller.enqueue(chunk);
      },
    }),
  );
  // As `useChat` does: a stream that follows an assistant message (the answer to an approval)
  // goes on with that message.
  const last = messages[messages.length - 1];
  let message = last?.role === "assistant" ? structuredClone(last) : undefined;
  for await (const snapshot of readUIMessageStream({
    message,
    stream: recorded,
    onError: (error) => {
      throw error;
    },
  })) {
    message = snapshot;
  }
  process.stdout.write(JSON.stringify({ chunks, message }) + "\n", () => process.exit(0));
}

main().catch((error) => {
  console.error(`chat_client.mjs: ${error?.stack ?? error}`);
  process.exit(1);
});
