//! The AI SDK's UI message stream, chunk by chunk: what `useChat` reads. A run's events become
//! chunks as they happen (`start`, `start-step`, `text-start` / `text-delta` / `text-end`,
//! `reasoning-*`, `tool-input-*`, `tool-output-*`, `tool-approval-request`, `finish-step`,
//! `finish`, `error`), with the field names the `ai` package's chunk schema has.

use serde::Serialize;
use serde_json::Value;

use crate::errors::run_failed;
use agent_core::context::Summary;
use agent_core::{Message, PausedRun, RunError, RunEvent, RunOutput, StopReason, Waiting};
use agent_core::{Part, Source};
use agent_core::{ToolCall, ToolResultMessage};

/// One chunk of the stream.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub(crate) enum Chunk {
    Start {
        #[serde(rename = "messageId")]
        message_id: String,
    },
    StartStep,
    TextStart {
        id: String,
    },
    TextDelta {
        id: String,
        delta: String,
    },
    TextEnd {
        id: String,
    },
    ReasoningStart {
        id: String,
    },
    ReasoningDelta {
        id: String,
        delta: String,
    },
    ReasoningEnd {
        id: String,
    },
    ToolInputStart {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
    },
    ToolInputAvailable {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "toolName")]
        tool_name: String,
        input: Value,
    },
    ToolApprovalRequest {
        #[serde(rename = "approvalId")]
        approval_id: String,
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
    },
    ToolOutputAvailable {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        output: Value,
    },
    ToolOutputError {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
        #[serde(rename = "errorText")]
        error_text: String,
    },
    ToolOutputDenied {
        #[serde(rename = "toolCallId")]
        tool_call_id: String,
    },
    /// The grant of a call the run waits on (see `grants`): a data part the client keeps in the
    /// message, by the call's id, and sends back with its answer.
    #[serde(rename = "data-call-grant")]
    CallGrant {
        id: String,
        data: Value,
    },
    /// A summary the run's context policy made of the conversation before this turn: a data part
    /// the page shows as a note above the question (see `read_back`).
    #[serde(rename = "data-summary")]
    Summary {
        id: String,
        data: Value,
    },
    /// What the agents a call started (agents called as tools) did under it so far: their calls,
    /// each in the state it is in, upserted as they go (see `activity_chunk`).
    #[serde(rename = "data-agent-activity")]
    AgentActivity {
        id: String,
        data: Value,
    },
    /// An image, document or audio a tool returned, for the client to show.
    File {
        url: String,
        #[serde(rename = "mediaType")]
        media_type: String,
    },
    FinishStep,
    Finish {
        #[serde(rename = "finishReason")]
        finish_reason: &'static str,
        #[serde(rename = "messageMetadata", skip_serializing_if = "Option::is_none")]
        message_metadata: Option<Value>,
    },
    Error {
        #[serde(rename = "errorText")]
        error_text: String,
    },
}

/// A summary as the chat's data part: its text, under an id of where it starts being sent.
pub(crate) fn summary_chunk(summary: &Summary) -> Chunk {
    Chunk::Summary {
        id: format!("summary-{}", summary.covers.end),
        data: serde_json::json!({ "text": summary.text }),
    }
}

/// The part that shows, under the call `call_id` of the answer, the calls the agents it started
/// made: each `{agent, toolCallId, toolName, input, state, output | errorText}`, in order.
pub(crate) fn activity_chunk(call_id: &str, calls: &[Value]) -> Chunk {
    Chunk::AgentActivity {
        id: format!("agent-activity-{call_id}"),
        data: serde_json::json!({ "toolCallId": call_id, "calls": calls }),
    }
}

/// A child agent's call as an entry of its activity, in the state it is in: waiting for its
/// result, or with it.
pub(crate) fn activity_entry(
    agent: &str,
    call: &ToolCall,
    result: Option<&ToolResultMessage>,
) -> Value {
    let mut entry = serde_json::json!({
        "agent": agent,
        "toolCallId": call.id,
        "toolName": call.name,
        "input": input_of(call),
        "state": "input-available",
    });
    if let Some(result) = result {
        set_result(&mut entry, result);
    }
    entry
}

/// What the paused children of `paused` did before they paused, by the answer's call each runs
/// under: their calls (with the results they had), and those of the runs they started.
pub(crate) fn paused_activity(paused: &PausedRun) -> Vec<(String, Vec<Value>)> {
    (paused.children())
        .map(|(call, path, run)| {
            let mut calls = Vec::new();
            paused_calls(path.as_str(), run, &mut calls);
            (call.id.clone(), calls)
        })
        .collect()
}

/// The calls of the paused run `run` of the agent at `agent`, as activity entries, each followed
/// by those of the paused run it started.
fn paused_calls(agent: &str, run: &PausedRun, calls: &mut Vec<Value>) {
    let (messages, finished) = (run.messages(), run.finished());
    activity_of(agent, messages, finished, calls, |call, calls| {
        for (started_by, path, child) in run.children() {
            if started_by.id == call.id {
                paused_calls(path.as_str(), child, calls);
            }
        }
    });
}

/// The calls the agent at `agent` made in `messages`, as activity entries, each with its result
/// (in `messages`, or among `finished`), each followed by what `then` adds for it (the calls of
/// the runs it started).
pub(crate) fn activity_of(
    agent: &str,
    messages: &[Message],
    finished: &[ToolResultMessage],
    calls: &mut Vec<Value>,
    mut then: impl FnMut(&ToolCall, &mut Vec<Value>),
) {
    let results: Vec<&ToolResultMessage> = (messages.iter())
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .chain(finished)
        .collect();
    for message in messages {
        let Message::Assistant(reply) = message else {
            continue;
        };
        for call in &reply.tool_calls {
            let result = results.iter().find(|result| result.tool_call_id == call.id);
            calls.push(activity_entry(agent, call, result.copied()));
            then(call, calls);
        }
    }
}

/// Puts `result` into an activity entry.
fn set_result(entry: &mut Value, result: &ToolResultMessage) {
    if result.is_error {
        entry["state"] = "output-error".into();
        entry["errorText"] = result.content.clone().into();
    } else {
        entry["state"] = "output-available".into();
        entry["output"] =
            serde_json::from_str(&result.content).unwrap_or(Value::String(result.content.clone()));
    }
}

/// The kinds of block a text streams in.
#[derive(Clone, Copy)]
enum Block {
    Text,
    Reasoning,
}

/// Turns a run's events into chunks, keeping which text or reasoning block is open.
#[derive(Debug, Default)]
pub(crate) struct Encoder {
    open_text: Option<String>,
    open_reasoning: Option<String>,
    blocks: usize,
    /// The calls the person denied in this request: they end as `output-denied`, not as errors.
    denied: Vec<String>,
    /// Every call the person decided in this request: one an agent called as a tool waited on
    /// is one of the answer's tool parts, and ends as one.
    decided: Vec<String>,
    /// By the answer's call they run under, the calls of the agents it started, so far.
    activity: Vec<(String, Vec<Value>)>,
    /// The chat's id as the client knows it, for the words of a failure.
    chat_id: String,
}

impl Encoder {
    /// An encoder for an answer in which the person decided the calls `decided` (by id), and
    /// denied those of them in `denied`; `shown`: what the agents its calls started had done
    /// before they paused (the answer goes on in the message that showed it).
    pub(crate) fn answering(
        chat_id: &str,
        decided: Vec<String>,
        denied: Vec<String>,
        shown: Vec<(String, Vec<Value>)>,
    ) -> Self {
        Encoder {
            decided,
            denied,
            activity: shown,
            chat_id: chat_id.to_owned(),
            ..Encoder::default()
        }
    }

    /// The first chunk of an answer.
    pub(crate) fn start(message_id: &str) -> Chunk {
        Chunk::Start {
            message_id: message_id.to_owned(),
        }
    }

    /// The chunks one event becomes.
    pub(crate) fn encode(&mut self, event: RunEvent) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        match event {
            RunEvent::StepStarted { .. } => chunks.push(Chunk::StartStep),
            RunEvent::ReasoningDelta(delta) => {
                self.close_text(&mut chunks);
                let id = self.open(Block::Reasoning, &mut chunks);
                chunks.push(Chunk::ReasoningDelta { id, delta });
            }
            RunEvent::TextDelta(delta) => {
                self.close_reasoning(&mut chunks);
                let id = self.open(Block::Text, &mut chunks);
                chunks.push(Chunk::TextDelta { id, delta });
            }
            RunEvent::ToolCallRequested(call) => {
                self.close_blocks(&mut chunks);
                chunks.extend(tool_input(&call));
            }
            RunEvent::ToolResult(result) => {
                self.close_blocks(&mut chunks);
                self.result(result, &mut chunks);
            }
            RunEvent::StepFinished { .. } => {
                self.close_blocks(&mut chunks);
                chunks.push(Chunk::FinishStep);
            }
            RunEvent::Summarized(summary) => chunks.push(summary_chunk(&summary)),
            RunEvent::SubAgent {
                path,
                call_id,
                event,
            } => self.child_event(path.as_str(), &call_id, *event, &mut chunks),
            RunEvent::Finished(outcome) => return self.finish(&outcome, None, Vec::new()),
            // An event of a later agent-core the stream has no chunk for: the client needs none.
            _ => {}
        }
        chunks
    }

    /// The chunks that end an answer: open blocks closed, the `grants` of the calls the run waits
    /// on (call id, grant), then how it ended (with the answer's `metadata`, if any).
    pub(crate) fn finish(
        &mut self,
        outcome: &Result<RunOutput, RunError>,
        metadata: Option<Value>,
        grants: Vec<(String, String)>,
    ) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        self.close_blocks(&mut chunks);
        chunks.extend(
            grants
                .into_iter()
                .map(|(call_id, grant)| grant_chunk(call_id, grant)),
        );
        chunks.extend(finish(outcome, metadata, &self.chat_id));
        chunks
    }

    /// A call's result: denied by the person, or its output (then the files it returned).
    fn result(&self, result: ToolResultMessage, chunks: &mut Vec<Chunk>) {
        if self.denied.contains(&result.tool_call_id) {
            chunks.push(Chunk::ToolOutputDenied {
                tool_call_id: result.tool_call_id,
            });
        } else {
            // The tool's images and documents follow its output, as files the client shows (the
            // output itself carries only the text).
            let files: Vec<Chunk> = result.parts.iter().filter_map(file).collect();
            chunks.push(tool_output(result));
            chunks.extend(files);
        }
    }

    /// What an event of a child agent (at `agent`, under the answer's call `call_id`) changes
    /// in that call's activity part: a call made or answered; nothing else shows. A result of a
    /// call the person decided in this request (one the child waited on) also ends that call's
    /// tool part.
    fn child_event(
        &mut self,
        agent: &str,
        call_id: &str,
        event: RunEvent,
        chunks: &mut Vec<Chunk>,
    ) {
        let index = match self.activity.iter().position(|(id, _)| id == call_id) {
            Some(index) => index,
            None => {
                self.activity.push((call_id.to_owned(), Vec::new()));
                self.activity.len() - 1
            }
        };
        let calls = &mut self.activity[index].1;
        match event {
            RunEvent::ToolCallRequested(call) => calls.push(activity_entry(agent, &call, None)),
            RunEvent::ToolResult(result) => {
                let id = result.tool_call_id.as_str();
                let entry = (calls.iter_mut())
                    .rev()
                    .find(|entry| entry["toolCallId"] == id && entry["agent"] == agent);
                match entry {
                    Some(entry) => set_result(entry, &result),
                    // The call a resumed child waited on, made before this request.
                    None => calls.push(activity_entry(agent, &waited(&result), Some(&result))),
                }
                let chunk = activity_chunk(call_id, calls);
                if self.decided.contains(&result.tool_call_id) {
                    self.result(result, chunks);
                }
                chunks.push(chunk);
                return;
            }
            _ => return,
        }
        chunks.push(activity_chunk(call_id, calls));
    }

    /// The id of the open block of `kind`: the one open, or a new one, its start chunk pushed.
    fn open(&mut self, kind: Block, chunks: &mut Vec<Chunk>) -> String {
        let open = match kind {
            Block::Text => &mut self.open_text,
            Block::Reasoning => &mut self.open_reasoning,
        };
        if let Some(id) = open {
            return id.clone();
        }
        self.blocks += 1;
        let id = match kind {
            Block::Text => format!("text-{}", self.blocks),
            Block::Reasoning => format!("reasoning-{}", self.blocks),
        };
        chunks.push(match kind {
            Block::Text => Chunk::TextStart { id: id.clone() },
            Block::Reasoning => Chunk::ReasoningStart { id: id.clone() },
        });
        *open = Some(id.clone());
        id
    }

    fn close_text(&mut self, chunks: &mut Vec<Chunk>) {
        if let Some(id) = self.open_text.take() {
            chunks.push(Chunk::TextEnd { id });
        }
    }

    fn close_reasoning(&mut self, chunks: &mut Vec<Chunk>) {
        if let Some(id) = self.open_reasoning.take() {
            chunks.push(Chunk::ReasoningEnd { id });
        }
    }

    fn close_blocks(&mut self, chunks: &mut Vec<Chunk>) {
        self.close_reasoning(chunks);
        self.close_text(chunks);
    }
}

/// The grant of call `call_id` as a data chunk (the part the client keeps, upserted by its id).
pub(super) fn grant_chunk(call_id: String, grant: String) -> Chunk {
    let data = serde_json::json!({ "toolCallId": call_id, "grant": grant });
    Chunk::CallGrant {
        id: format!("grant-{call_id}"),
        data,
    }
}

/// A call's arguments as JSON when they are JSON, else as the text.
pub(super) fn input_of(call: &ToolCall) -> Value {
    if call.arguments.trim().is_empty() {
        return Value::Object(Default::default());
    }
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

/// A call as the model made it.
fn tool_input(call: &ToolCall) -> [Chunk; 2] {
    let input = input_of(call);
    [
        Chunk::ToolInputStart {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
        },
        Chunk::ToolInputAvailable {
            tool_call_id: call.id.clone(),
            tool_name: call.name.clone(),
            input,
        },
    ]
}

/// A part's file as the client takes it: its URL (the bytes as a `data:` URL) and its media type;
/// `None` for text.
pub(super) fn file_of(part: &Part) -> Option<(String, String)> {
    let media = part.media()?;
    let url = match &media.source {
        Source::Base64(data) => format!("data:{};base64,{data}", media.media_type),
        Source::Url(url) => url.clone(),
        // A source of a later agent-core the client could not load.
        _ => return None,
    };
    Some((url, media.media_type.clone()))
}

/// A part as a file chunk; `None` for text.
fn file(part: &Part) -> Option<Chunk> {
    let (url, media_type) = file_of(part)?;
    Some(Chunk::File { url, media_type })
}

/// A call known by its result alone (its id; its name and arguments are in an earlier answer).
fn waited(result: &ToolResultMessage) -> ToolCall {
    ToolCall::new(result.tool_call_id.clone(), "", "{}")
}

/// A call's result: its JSON when it is JSON, else its text; an error result as the error.
fn tool_output(result: ToolResultMessage) -> Chunk {
    if result.is_error {
        return Chunk::ToolOutputError {
            tool_call_id: result.tool_call_id,
            error_text: result.content,
        };
    }
    let output = serde_json::from_str(&result.content).unwrap_or(Value::String(result.content));
    Chunk::ToolOutputAvailable {
        tool_call_id: result.tool_call_id,
        output,
    }
}

/// How the answer ends: approval requests for the calls a paused run waits on, then `finish`;
/// or the error (a failure of the store worded without its key, see `errors.rs`).
fn finish(
    outcome: &Result<RunOutput, RunError>,
    message_metadata: Option<Value>,
    chat_id: &str,
) -> Vec<Chunk> {
    match outcome {
        Ok(output) => {
            let mut chunks = Vec::new();
            if let Some(paused) = &output.paused {
                let waiting = (paused.pending().iter())
                    .filter(|pending| pending.waits_for == Waiting::Approval);
                let (theirs, own): (Vec<_>, Vec<_>) =
                    waiting.partition(|pending| paused.waiting_in(&pending.call.id).is_some());
                let ask = |pending: &agent_core::PendingCall| Chunk::ToolApprovalRequest {
                    approval_id: pending.call.id.clone(),
                    tool_call_id: pending.call.id.clone(),
                };
                chunks.extend(own.into_iter().map(ask));
                // A call an agent called as a tool waits on is not among the answer's: it
                // becomes one of its tool parts, in a step of its own (the call that started
                // the agent, still running, is in the step before), to be approved as any other.
                if !theirs.is_empty() {
                    chunks.extend([Chunk::FinishStep, Chunk::StartStep]);
                }
                for pending in theirs {
                    chunks.extend(tool_input(&pending.call));
                    chunks.push(ask(pending));
                }
            }
            let finish_reason = match output.stop_reason {
                StopReason::Finished | StopReason::StepLimitAnswered { .. } => "stop",
                StopReason::Paused => "tool-calls",
                StopReason::TokenLimit { .. } => "length",
                _ => "other",
            };
            chunks.push(Chunk::Finish {
                finish_reason,
                message_metadata,
            });
            chunks
        }
        Err(error) => vec![Chunk::Error {
            error_text: run_failed(error, chat_id),
        }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::ToolResultMessage;

    #[test]
    fn blocks_open_and_close_around_calls() {
        let mut encoder = Encoder::default();
        let mut chunks = Vec::new();
        for event in [
            RunEvent::StepStarted { step: 1 },
            RunEvent::ReasoningDelta("Think".into()),
            RunEvent::TextDelta("Let me ".into()),
            RunEvent::TextDelta("check.".into()),
            RunEvent::ToolCallRequested(ToolCall::new("c1", "get_weather", r#"{"city":"Oslo"}"#)),
            RunEvent::ToolResult(ToolResultMessage::new("c1", r#"{"temp":4}"#)),
            RunEvent::StepFinished {
                step: 1,
                usage: Default::default(),
                model: None,
            },
        ] {
            chunks.extend(encoder.encode(event));
        }
        let json = serde_json::to_value(&chunks).unwrap();
        assert_eq!(
            json,
            serde_json::json!([
                {"type": "start-step"},
                {"type": "reasoning-start", "id": "reasoning-1"},
                {"type": "reasoning-delta", "id": "reasoning-1", "delta": "Think"},
                {"type": "reasoning-end", "id": "reasoning-1"},
                {"type": "text-start", "id": "text-2"},
                {"type": "text-delta", "id": "text-2", "delta": "Let me "},
                {"type": "text-delta", "id": "text-2", "delta": "check."},
                {"type": "text-end", "id": "text-2"},
                {"type": "tool-input-start", "toolCallId": "c1", "toolName": "get_weather"},
                {"type": "tool-input-available", "toolCallId": "c1", "toolName": "get_weather",
                 "input": {"city": "Oslo"}},
                {"type": "tool-output-available", "toolCallId": "c1", "output": {"temp": 4}},
                {"type": "finish-step"}
            ])
        );
    }
}
