#!/usr/bin/env node
// The web endpoint tests' chat: the AI SDK's own `Chat` (its `AbstractChat`, which `useChat`
// wraps in React) with `DefaultChatTransport`, driven against our endpoint the way an app drives
// it: `sendMessage` (a new message, or an earlier one edited), `regenerate`,
// `addToolApprovalResponse` (the person's Approve / Deny) and `addToolOutput` from `onToolCall`
// (a client-side tool), with `sendAutomaticallyWhen` sending an answered approval or tool call
// back on its own, as the AI SDK's docs set it up. In Node the `Chat` class needs somewhere to
// keep its messages: `MemoryState` below keeps them in plain arrays, copying each message it is
// handed, as React's state does.
//
// stdin: {
//   "api": "http://127.0.0.1:PORT/api/chat", "chatId": "...",
//   "clientTools": {"toolName": output, ...},   // answered by onToolCall with addToolOutput
//   "newestOnly": true,   // the transport sends the newest message only, the whole chat for an
//                         // edit: the guide's `prepareSendMessagesRequest` (docs/src/web.md)
//   "steps": [
//     {"send": "text", "files": [FileUIPart...]},  // chat.sendMessage({text, files})
//     {"edit": "text", "at": 0},                    // chat.sendMessage({text, messageId:
//                                                   //   chat.messages[0].id}): that message
//                                                   //   replaced, the ones after it dropped
//     {"approve": true | false, "reason": "..."},    // every approval asked in the last message
//     {"regenerate": {}},                           // chat.regenerate()
//     {"regenerate": {"at": 1}},                    // ... {messageId: chat.messages[1].id}
//     {"regenerate": {"messageId": "..."}},         // ... {messageId} as given
//     {"reload": true},                             // the page reloaded: a new `Chat` whose
//                                                   //   messages are `GET {api}/{chatId}`'s
//     {"reload": true, "resume": true},             // ... and `chat.resumeStream()`, as
//                                                   //   `useChat({ resume: true })` does
//     {"leave": "text"}                             // chat.sendMessage({text}), the page gone
//                                                   //   (`chat.stop()`) once a call is under way
//   ]
// }
// stdout: {
//   "steps": [{"status", "error", "messages"}],  // the chat after each step, once it settled
//   "requests": [{"trigger", "messageId", "messages"}],  // what the transport posted: the body's
//                                                        // trigger, messageId, and message ids
//   "messages": [UIMessage...]                  // chat.messages at the end
// }; exit 0. On a failure of the script itself: message on stderr, exit 1 (an error the chat
// reports, such as an error chunk or a refused request, is a step's "error", not a failure).

import {
  AbstractChat,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from "ai";

/// Where a `Chat` keeps its state outside React: arrays replaced, never changed in place, and a
/// copy of each message handed in (the stream goes on changing the one it has).
class MemoryState {
  constructor(messages = []) {
    this.status = "ready";
    this.error = undefined;
    this.messages = structuredClone(messages);
  }

  pushMessage = (message) => {
    this.messages = [...this.messages, structuredClone(message)];
  };

  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };

  replaceMessage = (index, message) => {
    const messages = [...this.messages];
    messages[index] = structuredClone(message);
    this.messages = messages;
  };

  snapshot = (thing) => structuredClone(thing);
}

class Chat extends AbstractChat {
  constructor(init) {
    super({ ...init, state: new MemoryState(init.messages) });
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function main() {
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  const { api, chatId, clientTools = {}, newestOnly = false, steps } = JSON.parse(text);

  const requests = [];
  let started = 0;
  let finished = 0;
  // The transport's fetch, recording what each request asked for.
  const recording = async (url, init) => {
    started += 1;
    if (started > 50) throw new Error("more than 50 requests: the chat is looping");
    if (init.method === "GET") {
      // `resumeStream`: the chat's answer in progress, rejoined.
      requests.push({ trigger: "resume-stream", messageId: null, messages: [] });
      return fetch(url, init);
    }
    const body = JSON.parse(init.body);
    requests.push({
      trigger: body.trigger,
      messageId: body.messageId ?? null,
      messages: body.messages.map((message) => message.id),
    });
    return fetch(url, init);
  };

  let chat;
  const makeChat = (messages) => new Chat({
    id: chatId,
    messages,
    transport: new DefaultChatTransport({
      api,
      fetch: recording,
      // As the guide (docs/src/web.md) has it for a server that keeps the chat.
      prepareSendMessagesRequest: newestOnly
        ? ({ id, messages, trigger, messageId }) => {
            const last = messages.at(-1);
            const edit =
              trigger === "submit-message" && last?.role === "user" && messageId === last.id;
            const sent = edit ? messages : messages.slice(-1);
            return { body: { id, messages: sent, trigger, messageId } };
          }
        : undefined,
    }),
    // As an app with approvals and client-side tools sets it: an answered approval, or every
    // client-side call answered, goes back to the server without the person sending anything.
    sendAutomaticallyWhen: ({ messages }) =>
      lastAssistantMessageIsCompleteWithApprovalResponses({ messages }) ||
      lastAssistantMessageIsCompleteWithToolCalls({ messages }),
    onToolCall: ({ toolCall }) => {
      if (toolCall.toolName in clientTools) {
        // Not awaited, as the AI SDK's docs say: the chat is still busy with the stream.
        void chat.addToolOutput({
          tool: toolCall.toolName,
          toolCallId: toolCall.toolCallId,
          output: clientTools[toolCall.toolName],
        });
      }
    },
    onFinish: () => {
      finished += 1;
    },
  });
  chat = makeChat([]);

  // Until no request is in flight and none is about to be sent (an automatic send is scheduled
  // after the call that answered the last approval returns).
  const settled = async () => {
    const deadline = Date.now() + 20_000;
    for (let quiet = 0; quiet < 3; ) {
      if (Date.now() > deadline) throw new Error(`the chat did not settle (${chat.status})`);
      await sleep(10);
      const busy = chat.status === "submitted" || chat.status === "streaming" || started > finished;
      quiet = busy ? 0 : quiet + 1;
    }
  };

  const report = [];
  for (const step of steps) {
    if ("send" in step) {
      await chat.sendMessage({ text: step.send, files: step.files });
    } else if ("edit" in step) {
      const edited = chat.messages[step.at];
      if (edited?.role !== "user") throw new Error(`message ${step.at} is not the user's`);
      await chat.sendMessage({ text: step.edit, messageId: edited.id });
    } else if ("approve" in step) {
      const last = chat.messages[chat.messages.length - 1];
      const asked = last.parts.filter((part) => part.state === "approval-requested");
      if (asked.length === 0) throw new Error("nothing asks for approval");
      for (const part of asked) {
        await chat.addToolApprovalResponse({
          id: part.approval.id,
          approved: step.approve,
          reason: step.reason,
        });
      }
    } else if ("reload" in step) {
      // What a page does on load: its chat's messages from the server, into a new `Chat`.
      const response = await fetch(`${api}/${encodeURIComponent(chatId)}`);
      if (!response.ok) throw new Error(`reading the chat back: ${response.status} ${await response.text()}`);
      chat = makeChat(await response.json());
      if (step.resume) await chat.resumeStream();
    } else if ("leave" in step) {
      const sending = chat.sendMessage({ text: step.leave });
      const deadline = Date.now() + 20_000;
      const underway = () =>
        (chat.messages.at(-1)?.parts ?? []).some(
          (part) => part.type?.startsWith("tool-") && part.state === "input-available",
        );
      while (!underway()) {
        if (Date.now() > deadline) throw new Error("no call got under way");
        await sleep(10);
      }
      // The page goes away: its connection drops mid-answer.
      await chat.stop();
      await sending.catch(() => {});
      finished = started;
    } else if ("regenerate" in step) {
      const { at, messageId } = step.regenerate;
      const id =
        at === undefined ? messageId : chat.messages[at < 0 ? chat.messages.length + at : at].id;
      await chat.regenerate(id === undefined ? {} : { messageId: id });
    } else {
      throw new Error(`unknown step ${JSON.stringify(step)}`);
    }
    await settled();
    report.push({
      status: chat.status,
      error: chat.error?.message ?? null,
      messages: structuredClone(chat.messages),
    });
  }
  const out = { steps: report, requests, messages: chat.messages };
  process.stdout.write(JSON.stringify(out) + "\n", () => process.exit(0));
}

main().catch((error) => {
  console.error(`chat_session.mjs: ${error?.stack ?? error}`);
  process.exit(1);
});
