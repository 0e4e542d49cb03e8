//! OpenAI Chat Completions streaming (`"stream": true`): server-sent events of
//! `chat.completion.chunk` objects, ended by `data: [DONE]`. Tool-call fragments are assembled by
//! index into whole calls, exactly as the non-streaming reply would have them, and OpenRouter's
//! `reasoning_details` pieces into whole entries. An error chunk (`{"error": {...}}`) is the typed
//! error the HTTP status of its `code` or `type` would be.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/chat-streaming>.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::reasoning::{OPENAI_SERVICE, WireDetail, join_detail, lenient_details, reasoning_of};
use super::response::{WireUsage, finish_reason, status_of, typed_error};
use crate::message::{AssistantMessage, ToolCall};
use crate::model::StreamEvent;
use crate::model::{ChatResponse, ModelError};
use crate::providers::common::{arguments_text, made_up_call_id};
use crate::providers::sse::{Out, Reassembler, bad_event, cut_off};
use crate::providers::sse_decode::Event;
use crate::reasoning::Reasoning;
use crate::usage::Usage;

/// The reply so far.
pub(crate) struct OpenAiReassembler {
    /// The service that answers, as its reasoning is tagged.
    service: Arc<str>,
    content: String,
    /// The plain-text reasoning.
    reasoning: String,
    /// The `reasoning_details` entries, joined from their pieces.
    details: Vec<Reasoning>,
    calls: BTreeMap<usize, Call>,
    finish_reason: Option<String>,
    usage: Usage,
    /// The model that answered, as the first chunk naming it says.
    model: Option<String>,
}

impl OpenAiReassembler {
    /// A reply from `service`.
    pub(crate) fn new(service: Arc<str>) -> Self {
        OpenAiReassembler {
            service,
            content: String::new(),
            reasoning: String::new(),
            details: Vec::new(),
            calls: BTreeMap::new(),
            finish_reason: None,
            usage: Usage::default(),
            model: None,
        }
    }
}

/// A reply from OpenAI itself.
impl Default for OpenAiReassembler {
    fn default() -> Self {
        OpenAiReassembler::new(Arc::from(OPENAI_SERVICE))
    }
}

impl Reassembler for OpenAiReassembler {
    fn take(&mut self, event: &Event, out: &mut Out) -> bool {
        let data = event.data.as_str();
        if data.trim() == "[DONE]" {
            out.push_back(Ok(StreamEvent::Usage(self.usage)));
            out.push_back(Ok(self.finish()));
            return true;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(error) => {
                out.push_back(Err(bad_event(error, data)));
                return true;
            }
        };
        if let Some(error) = chunk.error {
            out.push_back(Err(chunk_error(&error, data)));
            return true;
        }
        if self.model.is_none() {
            self.model = chunk.model.filter(|model| !model.is_empty());
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage.usage();
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            let reasoning = choice
                .delta
                .reasoning_content
                .filter(|text| !text.is_empty());
            let plain = reasoning
                .or(choice.delta.reasoning)
                .filter(|t| !t.is_empty());
            for detail in choice.delta.reasoning_details {
                // OpenRouter sends the readable thinking twice, as `reasoning` and in the
                // details: it streams once.
                if plain.is_none()
                    && let Some(text) = detail.readable()
                {
                    out.push_back(Ok(StreamEvent::ReasoningDelta(text.to_owned())));
                }
                join_detail(&mut self.details, detail, &self.service);
            }
            if let Some(text) = plain {
                self.reasoning.push_str(&text);
                out.push_back(Ok(StreamEvent::ReasoningDelta(text)));
            }
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.content.push_str(&text);
                out.push_back(Ok(StreamEvent::TextDelta(text)));
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let index = self.index_of(&fragment);
                let entry = self.calls.entry(index).or_insert_with(|| Call {
                    call: ToolCall::new("", "", ""),
                    started: false,
                });
                let function = fragment.function.unwrap_or_default();
                // The first id is the call's: OpenAI sends it once, some compatible servers with
                // every fragment.
                if let Some(id) = fragment.id.filter(|id| !id.is_empty())
                    && entry.call.id.is_empty()
                {
                    entry.call.id = id;
                }
                if let Some(name) = function.name {
                    entry.call.name.push_str(&name);
                }
                let arguments = function.arguments.filter(|arguments| !arguments.is_empty());
                // A call starts with its name (or, from a server that sends none first, with its
                // arguments); without an id by then, it gets one made up.
                if !entry.started && (!entry.call.name.is_empty() || arguments.is_some()) {
                    entry.started = true;
                    if entry.call.id.is_empty() {
                        entry.call.id = made_up_call_id();
                    }
                    out.push_back(Ok(StreamEvent::ToolCallStart {
                        index,
                        id: entry.call.id.clone(),
                        name: entry.call.name.clone(),
                    }));
                }
                if let Some(arguments) = arguments {
                    entry.call.arguments.push_str(&arguments);
                    out.push_back(Ok(StreamEvent::ToolCallArguments {
                        index,
                        fragment: arguments,
                    }));
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish_reason = Some(reason);
            }
        }
        false
    }

    fn at_end(&mut self) -> Result<StreamEvent, ModelError> {
        // Some compatible servers end without `[DONE]` once the reply has finished.
        if self.finish_reason.is_some() {
            Ok(self.finish())
        } else {
            Err(cut_off())
        }
    }
}

/// A call being assembled, and whether its `ToolCallStart` has gone out.
struct Call {
    call: ToolCall,
    started: bool,
}

/// An error chunk's typed error, sorted as the HTTP status it stands for would be: a
/// compatible server's numeric `code` (vLLM, OpenRouter), else its `code` or `type` word.
fn chunk_error(error: &Value, data: &str) -> ModelError {
    typed_error(error, status_of, data.as_bytes())
}

impl OpenAiReassembler {
    /// The place of the call a fragment belongs to: its `index`, or, from a server that sends
    /// none, the last call's, unless the fragment brings a new id (a new call).
    fn index_of(&self, fragment: &CallFragment) -> usize {
        if let Some(index) = fragment.index {
            return index;
        }
        let last = self.calls.last_key_value();
        match (last, fragment.id.as_deref().filter(|id| !id.is_empty())) {
            (None, _) => 0,
            (Some((&index, entry)), Some(id))
                if !entry.call.id.is_empty() && entry.call.id != id =>
            {
                index + 1
            }
            (Some((&index, _)), _) => index,
        }
    }

    fn finish(&mut self) -> StreamEvent {
        let reasoning = match std::mem::take(&mut self.details) {
            details if details.is_empty() => reasoning_of(
                Some(std::mem::take(&mut self.reasoning)),
                Vec::new(),
                &self.service,
            ),
            // The details are the reasoning; the plain text was the same thinking again.
            details => details,
        };
        let message = AssistantMessage {
            content: std::mem::take(&mut self.content),
            tool_calls: std::mem::take(&mut self.calls)
                .into_values()
                .map(|entry| entry.call)
                .collect(),
            reasoning,
        };
        let mut response = ChatResponse::new(message).with_usage(self.usage);
        response.finish_reason = self.finish_reason.as_deref().map(finish_reason);
        response.model = self.model.take();
        StreamEvent::Finished(response)
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    reasoning_content: Option<String>,
    reasoning: Option<String>,
    /// OpenRouter's pieces of its reasoning entries.
    #[serde(default, deserialize_with = "lenient_details")]
    reasoning_details: Vec<WireDetail>,
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    /// Some compatible servers send none: see [`OpenAiReassembler::index_of`].
    index: Option<usize>,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize, Default)]
struct FunctionFragment {
    name: Option<String>,
    /// A piece of the JSON text; from some compatible servers, the whole object at once.
    #[serde(default, deserialize_with = "some_arguments_text")]
    arguments: Option<String>,
}

fn some_arguments_text<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    arguments_text(deserializer).map(Some)
}
