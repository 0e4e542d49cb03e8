//! A run's events as AG-UI events: the run opened and closed, each step, the model's text and
//! reasoning as messages streamed in pieces, each tool call with its arguments and its result, and
//! how the run ended (its answer, the interrupts it waits on, or its error).
//!
//! One step's text and calls are one assistant message (the calls name it as their parent), as
//! they are one message of the conversation the server keeps. An agent called as a tool streams in
//! a lane of its own: `SUBAGENT_STARTED` when its first event comes, its steps, messages and calls
//! attributed to it (`subagentRunId`), `SUBAGENT_FINISHED` before the result of the call that
//! started it.

use agent_core::{
    Part, RunError, RunEvent, RunOutput, Source, StopReason, ToolCall, ToolResultMessage, Usage,
};
use serde::Serialize;
use serde_json::Value;

/// One AG-UI event (protocol 1.0), as sent: `{"type": "TEXT_MESSAGE_CONTENT", ...}`.
#[derive(Debug, Serialize)]
#[serde(
    tag = "type",
    rename_all = "SCREAMING_SNAKE_CASE",
    rename_all_fields = "camelCase"
)]
pub(crate) enum Event {
    RunStarted {
        thread_id: String,
        run_id: String,
    },
    RunFinished {
        thread_id: String,
        run_id: String,
        outcome: Outcome,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        usage: Vec<TokenUsage>,
    },
    RunError {
        message: String,
        code: &'static str,
    },
    StepStarted {
        step_name: String,
    },
    StepFinished {
        step_name: String,
    },
    TextMessageStart {
        message_id: String,
        role: &'static str,
    },
    TextMessageContent {
        message_id: String,
        delta: String,
    },
    TextMessageEnd {
        message_id: String,
    },
    ReasoningStart {
        message_id: String,
    },
    ReasoningMessageStart {
        message_id: String,
        role: &'static str,
    },
    ReasoningMessageContent {
        message_id: String,
        delta: String,
    },
    ReasoningMessageEnd {
        message_id: String,
    },
    ReasoningEnd {
        message_id: String,
    },
    ToolCallStart {
        tool_call_id: String,
        tool_call_name: String,
        parent_message_id: String,
    },
    ToolCallArgs {
        tool_call_id: String,
        delta: String,
    },
    ToolCallEnd {
        tool_call_id: String,
    },
    ToolCallResult {
        message_id: String,
        tool_call_id: String,
        content: Value,
        role: &'static str,
    },
    SubagentStarted {
        subagent_run_id: String,
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        parent_subagent_run_id: Option<String>,
        parent_tool_call_id: String,
    },
    SubagentFinished {
        subagent_run_id: String,
        outcome: SubagentOutcome,
    },
}

/// An event as sent: attributed to the agent whose lane it is in, when not the run's own.
#[derive(Debug, Serialize)]
pub(crate) struct Sent {
    #[serde(flatten)]
    pub(crate) event: Event,
    #[serde(rename = "subagentRunId", skip_serializing_if = "Option::is_none")]
    pub(crate) subagent_run_id: Option<String>,
}

/// How a sub-agent's part of the run ended.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum SubagentOutcome {
    /// It answered its call.
    Success,
    /// It waits, with the run, on an interrupt.
    Suspended,
}

/// How a run that did not fail ended.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub(crate) enum Outcome {
    /// It answered.
    Success,
    /// It waits on these.
    Interrupt { interrupts: Vec<Interrupt> },
    /// It was stopped before it answered.
    Cancelled,
}

/// Something a paused run waits for: a person's approval of a call, or the result of a call the
/// client runs. Its `id` is the grant the answer must carry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Interrupt {
    pub(crate) id: String,
    pub(crate) reason: &'static str,
    pub(crate) message: String,
    pub(crate) tool_call_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) response_schema: Option<Value>,
    pub(crate) metadata: Value,
}

/// Tokens one model used, in the protocol's accounting.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TokenUsage {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    total_tokens: u64,
    cached_input_tokens: u64,
}

/// Turns a run's events into AG-UI events: the run's own lane, and a lane for each agent it
/// called that is at work.
pub(crate) struct Encoder {
    thread_id: String,
    ids: Ids,
    main: Lane,
    /// The lanes of the agents called, in the order they started.
    lanes: Vec<Lane>,
}

/// Fresh message ids: the run's id (the client's, fresh for each run) and a count.
struct Ids {
    run_id: String,
    named: usize,
}

impl Ids {
    fn fresh(&mut self) -> String {
        self.named += 1;
        format!("{}-{}", self.run_id, self.named)
    }
}

/// What is open in one agent's part of the run: the step, the step's assistant message, a text or
/// reasoning message being streamed.
#[derive(Default)]
struct Lane {
    /// The lane's `subagentRunId` (`None`: the run's own).
    id: Option<String>,
    /// The path of the agent whose lane it is, and the run's call it works under.
    path: String,
    call_id: String,
    step: Option<usize>,
    /// The id of the step's assistant message, once it has text or a call.
    message: Option<String>,
    /// Whether that message's text is being streamed.
    text_open: bool,
    /// The reasoning message being streamed.
    reasoning: Option<String>,
}

impl Encoder {
    pub(crate) fn new(thread_id: String, run_id: String) -> Self {
        Encoder {
            thread_id,
            ids: Ids { run_id, named: 0 },
            main: Lane::default(),
            lanes: Vec::new(),
        }
    }

    /// What opens the run.
    pub(crate) fn start(&self) -> Sent {
        own(Event::RunStarted {
            thread_id: self.thread_id.clone(),
            run_id: self.ids.run_id.clone(),
        })
    }

    /// The events of one run event (none for what the protocol has no event for: a summary).
    pub(crate) fn encode(&mut self, event: RunEvent) -> Vec<Sent> {
        let mut sent = Vec::new();
        match event {
            RunEvent::SubAgent {
                path,
                call_id,
                event,
            } => {
                let at = self.lane(path.as_str(), call_id, &mut sent);
                let lane = &mut self.lanes[at];
                let mut events = Vec::new();
                lane.encode(*event, &mut self.ids, &mut events);
                sent.extend(events.into_iter().map(|event| Sent {
                    event,
                    subagent_run_id: lane.id.clone(),
                }));
            }
            RunEvent::ToolResult(result) => {
                // The agents the call started are done: their lanes close before its result.
                let call_id = Some(result.tool_call_id.as_str());
                self.finish_lanes(call_id, SubagentOutcome::Success, &mut sent);
                let mut events = Vec::new();
                self.main
                    .encode(RunEvent::ToolResult(result), &mut self.ids, &mut events);
                sent.extend(events.into_iter().map(own));
            }
            RunEvent::Finished(outcome) => sent.extend(self.finish(&outcome, Vec::new())),
            event => {
                let mut events = Vec::new();
                self.main.encode(event, &mut self.ids, &mut events);
                sent.extend(events.into_iter().map(own));
            }
        }
        sent
    }

    /// The events that end the run: what is open closed, then how it ended (`interrupts`: what a
    /// paused run waits on).
    pub(crate) fn finish(
        &mut self,
        outcome: &Result<RunOutput, RunError>,
        interrupts: Vec<Interrupt>,
    ) -> Vec<Sent> {
        let mut sent = Vec::new();
        // Agents still at work when the run ends wait with it (or stop with it).
        let paused = matches!(outcome, Ok(output) if output.paused.is_some());
        let lanes = if paused {
            SubagentOutcome::Suspended
        } else {
            SubagentOutcome::Success
        };
        self.finish_lanes(None, lanes, &mut sent);
        let mut events = Vec::new();
        self.main.close_step(&mut events);
        sent.extend(events.into_iter().map(own));
        let output = match outcome {
            Ok(output) => output,
            Err(error) => {
                sent.push(own(Event::RunError {
                    message: error.to_string(),
                    code: error_code(error),
                }));
                return sent;
            }
        };
        let outcome = if output.paused.is_some() && !interrupts.is_empty() {
            Outcome::Interrupt { interrupts }
        } else if matches!(output.stop_reason, StopReason::Cancelled) {
            Outcome::Cancelled
        } else {
            Outcome::Success
        };
        sent.push(own(Event::RunFinished {
            thread_id: self.thread_id.clone(),
            run_id: self.ids.run_id.clone(),
            outcome,
            usage: usage(output),
        }));
        sent
    }

    /// The lane of the agent at `path` working under the run's call `call_id`, started now if
    /// this is its first event (under the lane of the agent that called it, if that one has one).
    fn lane(&mut self, path: &str, call_id: String, sent: &mut Vec<Sent>) -> usize {
        let found =
            (self.lanes.iter()).position(|lane| lane.path == path && lane.call_id == call_id);
        if let Some(at) = found {
            return at;
        }
        let id = format!("{call_id}:{path}");
        let caller = path.rsplit_once('/').map(|(caller, _)| caller);
        let parent = (self.lanes.iter())
            .find(|lane| Some(lane.path.as_str()) == caller && lane.call_id == call_id)
            .and_then(|lane| lane.id.clone());
        sent.push(own(Event::SubagentStarted {
            subagent_run_id: id.clone(),
            name: path.to_owned(),
            parent_subagent_run_id: parent,
            parent_tool_call_id: call_id.clone(),
        }));
        self.lanes.push(Lane {
            id: Some(id),
            path: path.to_owned(),
            call_id,
            ..Lane::default()
        });
        self.lanes.len() - 1
    }

    /// Closes the lanes under the run's call `call_id` (all of them: `None`), the agents they
    /// called first, as `outcome` says they ended.
    fn finish_lanes(
        &mut self,
        call_id: Option<&str>,
        outcome: SubagentOutcome,
        sent: &mut Vec<Sent>,
    ) {
        let mut at = self.lanes.len();
        while at > 0 {
            at -= 1;
            if call_id.is_some_and(|call_id| self.lanes[at].call_id != call_id) {
                continue;
            }
            let mut lane = self.lanes.remove(at);
            let mut events = Vec::new();
            lane.close_step(&mut events);
            let id = lane.id.take().unwrap_or_default();
            sent.extend(events.into_iter().map(|event| Sent {
                event,
                subagent_run_id: Some(id.clone()),
            }));
            sent.push(own(Event::SubagentFinished {
                subagent_run_id: id,
                outcome,
            }));
        }
    }
}

/// An event of the run's own.
fn own(event: Event) -> Sent {
    Sent {
        event,
        subagent_run_id: None,
    }
}

impl Lane {
    /// The events of one of this lane's agent's run events.
    fn encode(&mut self, event: RunEvent, ids: &mut Ids, events: &mut Vec<Event>) {
        match event {
            RunEvent::StepStarted { step } => {
                self.close_step(events);
                self.step = Some(step);
                events.push(Event::StepStarted {
                    step_name: step_name(step),
                });
            }
            RunEvent::TextDelta(delta) => {
                self.close_reasoning(events);
                let message_id = self.message_id(ids);
                if !self.text_open {
                    self.text_open = true;
                    events.push(Event::TextMessageStart {
                        message_id: message_id.clone(),
                        role: "assistant",
                    });
                }
                events.push(Event::TextMessageContent { message_id, delta });
            }
            RunEvent::ReasoningDelta(delta) => {
                self.close_text(events);
                let message_id = match &self.reasoning {
                    Some(id) => id.clone(),
                    None => {
                        let id = ids.fresh();
                        events.push(Event::ReasoningStart {
                            message_id: id.clone(),
                        });
                        events.push(Event::ReasoningMessageStart {
                            message_id: id.clone(),
                            role: "reasoning",
                        });
                        self.reasoning = Some(id.clone());
                        id
                    }
                };
                events.push(Event::ReasoningMessageContent { message_id, delta });
            }
            RunEvent::ToolCallRequested(call) => {
                self.close_text(events);
                self.close_reasoning(events);
                let parent = self.message_id(ids);
                events.extend(tool_call(call, parent));
            }
            RunEvent::ToolResult(result) => {
                self.close_text(events);
                self.close_reasoning(events);
                events.push(tool_result(result, ids.fresh()));
            }
            RunEvent::StepFinished { .. } => self.close_step(events),
            // A summary changes what the model is sent, not the thread; the run's end is the
            // encoder's; a sub-agent's events come to the encoder, not to a lane.
            _ => {}
        }
    }

    /// The id of the step's assistant message, named the first time it is needed.
    fn message_id(&mut self, ids: &mut Ids) -> String {
        self.message.get_or_insert_with(|| ids.fresh()).clone()
    }

    fn close_text(&mut self, events: &mut Vec<Event>) {
        if std::mem::take(&mut self.text_open)
            && let Some(message_id) = self.message.clone()
        {
            events.push(Event::TextMessageEnd { message_id });
        }
    }

    fn close_reasoning(&mut self, events: &mut Vec<Event>) {
        if let Some(message_id) = self.reasoning.take() {
            events.push(Event::ReasoningMessageEnd {
                message_id: message_id.clone(),
            });
            events.push(Event::ReasoningEnd { message_id });
        }
    }

    /// Closes the step under way, with its messages; the next step's text is a new message.
    fn close_step(&mut self, events: &mut Vec<Event>) {
        self.close_text(events);
        self.close_reasoning(events);
        self.message = None;
        if let Some(step) = self.step.take() {
            events.push(Event::StepFinished {
                step_name: step_name(step),
            });
        }
    }
}

fn step_name(step: usize) -> String {
    format!("step {step}")
}

/// A call as AG-UI streams one: opened under its message, its arguments whole, closed.
fn tool_call(call: ToolCall, parent_message_id: String) -> [Event; 3] {
    [
        Event::ToolCallStart {
            tool_call_id: call.id.clone(),
            tool_call_name: call.name,
            parent_message_id,
        },
        Event::ToolCallArgs {
            tool_call_id: call.id.clone(),
            delta: call.arguments,
        },
        Event::ToolCallEnd {
            tool_call_id: call.id,
        },
    ]
}

/// A call's result: its text, or its text and parts (images, documents) as content parts.
fn tool_result(result: ToolResultMessage, message_id: String) -> Event {
    let content = if result.parts.is_empty() {
        Value::String(result.content)
    } else {
        let text = (!result.content.is_empty())
            .then(|| serde_json::json!({"type": "text", "text": result.content}));
        Value::Array(
            text.into_iter()
                .chain(result.parts.iter().map(content_part))
                .collect(),
        )
    };
    Event::ToolCallResult {
        message_id,
        tool_call_id: result.tool_call_id,
        content,
        role: "tool",
    }
}

/// A part of a result as an AG-UI content part.
fn content_part(part: &Part) -> Value {
    let Some(media) = part.media() else {
        let text = match part {
            Part::Text { text } => text.as_str(),
            _ => "",
        };
        return serde_json::json!({"type": "text", "text": text});
    };
    let kind = match part {
        Part::Image(_) => "image",
        Part::Audio(_) => "audio",
        _ => "document",
    };
    let (source, value) = match &media.source {
        Source::Base64(data) => ("data", data.clone()),
        Source::Url(url) => ("url", url.clone()),
        // A source of a later agent-core: as the URL a browser reads it from.
        _ => ("url", media.to_url()),
    };
    let source = serde_json::json!({"type": source, "value": value, "mimeType": media.media_type});
    serde_json::json!({"type": kind, "source": source})
}

/// The tokens of each model the run used.
fn usage(output: &RunOutput) -> Vec<TokenUsage> {
    let total = output.usage;
    if total == Usage::default() {
        return Vec::new();
    }
    let model = output.step_models.iter().rev().flatten().next().cloned();
    vec![TokenUsage {
        model,
        input_tokens: total.input_tokens,
        output_tokens: total.output_tokens,
        total_tokens: total.total_tokens(),
        cached_input_tokens: total.cache_read_tokens,
    }]
}

/// A code a client can tell failures apart by.
fn error_code(error: &RunError) -> &'static str {
    match error {
        RunError::Model { .. } => "model_error",
        RunError::Output { .. } | RunError::NoOutput { .. } => "no_output",
        RunError::Session { .. } => "session_error",
        RunError::Resume { .. } => "resume_error",
        RunError::Dropped { .. } => "dropped",
        RunError::Tripped { .. } => "guard_tripped",
        RunError::LethalMix { .. } => "lethal_mix",
        _ => "run_error",
    }
}
