#!/usr/bin/env node
// The AG-UI endpoint tests' client: one `HttpAgent` of the official AG-UI client
// (`@ag-ui/client`, protocol 1.0) driven against our endpoint the way an application drives it:
// a user message added and `runAgent` called, the run's interrupts answered with `resume` on the
// next `runAgent`, a run stopped with `abortRun`. `runAgent` checks the stream itself (the
// client's `enforceEvents` validates every event against the protocol's schemas, `verifyEvents`
// the order: RUN_STARTED first, starts before contents and ends, nothing after RUN_FINISHED...)
// and rebuilds the conversation from it; whatever it throws is a step's "error".
//
// stdin: {
//   "url": "http://127.0.0.1:PORT/agui", "threadId": "...",
//   "headers": {"authorization": "..."},        // optional, sent on every request
//   "suppressTransformationWarnings": false,     // optional: let the client warn (into each
//                                                //   step's "warnings") about material it
//                                                //   strips or translates; default true
//   "stepTimeoutMs": 30000,                      // optional: a run still going after this
//                                                //   long is aborted and its step's "error"
//                                                //   says so (a response never ended, say)
//   "steps": [
//     {"send": "text"},                      // agent.addMessage({id, role: "user", content})
//                                            //   then agent.runAgent({runId})
//     {"resume": [{"toolCallId": "...", "status": "resolved" | "cancelled", "payload": any}]},
//                                            // runAgent({runId, resume}): each entry answers
//                                            //   the pending interrupt (agent.pendingInterrupts)
//                                            //   about that tool call, by its id
//     {"resumeRaw": [{"interruptId": "...", "status": "...", "payload": any}], "force": true},
//                                            // runAgent({runId, resume: exactly these}); the
//                                            //   client refuses to start a run that leaves a
//                                            //   pending interrupt unanswered, "force" empties
//                                            //   agent.pendingInterrupts first so the request
//                                            //   goes out anyway (forged or stale ids)
//     {"abortAfterEvent": "EVENT_TYPE", "send": "text"}
//                                            // as "send", with agent.abortRun() as soon as the
//                                            //   subscriber sees an event of that type
//   ]
// }
// stdout, one line: {
//   "steps": [{
//     "events": [BaseEvent...],       // every event the subscriber's onEvent saw, in order
//     "result": any | null,           // runAgent's result (RUN_FINISHED's `result`)
//     "newMessages": [Message...],    // runAgent's newMessages ([] when it threw)
//     "error": "..." | null,          // what runAgent threw (HTTP status, verifyEvents...)
//     "pendingInterrupts": [Interrupt...],  // agent.pendingInterrupts after the step
//     "input": RunAgentInput | null,  // what the client sent (onRunInitialized's input)
//     "aborted": true | false,        // whether abortRun was called
//     "warnings": ["..."]             // what the client printed with console.warn / .error
//   }],
//   "messages": [Message...],         // agent.messages at the end
//   "state": any                      // agent.state at the end
// }; exit 0. On a failure of the script itself (bad input): message on stderr, exit 1.

import { randomUUID } from "node:crypto";
import { format } from "node:util";

// Nothing but the report goes to stdout: the client's own logging goes to stderr, and what it
// warns or reports as an error is kept for the step under way.
let warnings = null;
const toStderr =
  (keep) =>
  (...args) => {
    process.stderr.write(`${format(...args)}\n`);
    // An error's message without its stack trace.
    const brief = args.map((arg) => (arg instanceof Error ? String(arg) : arg));
    if (keep && warnings !== null) warnings.push(format(...brief));
  };
console.log = toStderr(false);
console.info = toStderr(false);
console.debug = toStderr(false);
console.warn = toStderr(true);
console.error = toStderr(true);

const request = JSON.parse(await readStdin());
if (request.suppressTransformationWarnings !== false) {
  process.env.SUPPRESS_TRANSFORMATION_WARNINGS = "true";
}
// Imported after the environment is set, in case the client reads it when it loads.
const { HttpAgent } = await import("@ag-ui/client");

const stepTimeoutMs = request.stepTimeoutMs ?? 30000;
const agent = new HttpAgent({
  url: request.url,
  threadId: request.threadId,
  headers: request.headers ?? {},
});

let record = null;
let abortAfter = null;
agent.subscribe({
  onRunInitialized: ({ input }) => {
    if (record) record.input = jsonClone(input);
  },
  onEvent: ({ event }) => {
    if (!record) return;
    record.events.push(jsonClone(event));
    if (abortAfter !== null && event.type === abortAfter && !record.aborted) {
      record.aborted = true;
      agent.abortRun();
    }
  },
});

const steps = [];
for (const step of request.steps ?? []) {
  if (typeof step.send === "string") {
    agent.addMessage({ id: randomUUID(), role: "user", content: step.send });
    steps.push(await run({ runId: randomUUID() }, step.abortAfterEvent ?? null));
  } else if (Array.isArray(step.resume)) {
    const resume = [];
    let missing = null;
    for (const answer of step.resume) {
      const interrupt = agent.pendingInterrupts.find(
        (pending) => pending.toolCallId === answer.toolCallId,
      );
      if (!interrupt) {
        missing = `no pending interrupt for tool call '${answer.toolCallId}'`;
        break;
      }
      resume.push(resumeEntry(interrupt.id, answer));
    }
    steps.push(missing ? notRun(missing) : await run({ runId: randomUUID(), resume }, null));
  } else if (Array.isArray(step.resumeRaw)) {
    if (step.force) agent.pendingInterrupts = [];
    const resume = step.resumeRaw.map((entry) => resumeEntry(entry.interruptId, entry));
    steps.push(await run({ runId: randomUUID(), resume }, null));
  } else {
    fail(`unknown step: ${JSON.stringify(step)}`);
  }
}

const report = { steps, messages: agent.messages, state: agent.state ?? null };
// Exit once the report is written: an aborted run may leave a socket open for a while.
process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));

/// One `runAgent` call, recorded; `abortAfterEvent` set for its duration.
async function run(parameters, abortAfterEvent) {
  record = {
    events: [],
    result: null,
    newMessages: [],
    error: null,
    pendingInterrupts: [],
    input: null,
    aborted: false,
    warnings: [],
  };
  warnings = record.warnings;
  abortAfter = abortAfterEvent;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    agent.abortRun();
  }, stepTimeoutMs);
  try {
    const { result, newMessages } = await agent.runAgent(parameters);
    record.result = result === undefined ? null : jsonClone(result);
    record.newMessages = jsonClone(newMessages);
  } catch (error) {
    record.error = error instanceof Error ? error.message : String(error);
  }
  clearTimeout(timer);
  if (timedOut) {
    record.error ??= `the run was still going after ${stepTimeoutMs} ms and was aborted`;
  }
  record.pendingInterrupts = jsonClone(agent.pendingInterrupts);
  const done = record;
  record = null;
  warnings = null;
  abortAfter = null;
  return done;
}

/// A step that never reached `runAgent`.
function notRun(error) {
  return {
    events: [],
    result: null,
    newMessages: [],
    error,
    pendingInterrupts: jsonClone(agent.pendingInterrupts),
    input: null,
    aborted: false,
    warnings: [],
  };
}

function resumeEntry(interruptId, { status, payload }) {
  return { interruptId, status, ...(payload !== undefined && { payload }) };
}

/// A JSON copy: what the report will hold anyway, taken now, before the client changes it.
function jsonClone(value) {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

function fail(message) {
  process.stderr.write(`agui_session.mjs: ${message}\n`);
  process.exit(1);
}
