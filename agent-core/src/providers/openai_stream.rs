//! OpenAI Chat Completions streaming (`"stream": true`): server-sent events of
//! `chat.completion.chunk` objects, ended by `data: [DONE]`. Tool-call fragments are assembled by
//! index into whole calls, exactly as the non-streaming reply would have them.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/chat-streaming>.

use std::collections::BTreeMap;

use eventsource_stream::Event;
use serde::Deserialize;

use super::sse::{Out, Reassembler, bad_event, cut_off};
use crate::message::{AssistantMessage, ToolCall, Usage};
use crate::model::StreamEvent;
use crate::model::{ChatResponse, ModelError};

/// The reply so far.
#[derive(Default)]
pub(crate) struct OpenAiReassembler {
    content: String,
    calls: BTreeMap<usize, ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
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
            let message = error
                .get("message")
                .and_then(|message| message.as_str())
                .map_or_else(|| error.to_string(), str::to_owned);
            out.push_back(Err(ModelError::Stream { message }));
            return true;
        }
        if let Some(usage) = chunk.usage {
            self.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.content.push_str(&text);
                out.push_back(Ok(StreamEvent::TextDelta(text)));
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let call = self
                    .calls
                    .entry(fragment.index)
                    .or_insert_with(|| ToolCall::new("", "", ""));
                let function = fragment.function.unwrap_or_default();
                let is_new = call.id.is_empty() && call.name.is_empty();
                if let Some(id) = fragment.id {
                    call.id.push_str(&id);
                }
                if let Some(name) = function.name {
                    call.name.push_str(&name);
                }
                if is_new && !(call.id.is_empty() && call.name.is_empty()) {
                    out.push_back(Ok(StreamEvent::ToolCallStart {
                        index: fragment.index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                    }));
                }
                if let Some(arguments) =
                    function.arguments.filter(|arguments| !arguments.is_empty())
                {
                    call.arguments.push_str(&arguments);
                    out.push_back(Ok(StreamEvent::ToolCallArguments {
                        index: fragment.index,
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

impl OpenAiReassembler {
    fn finish(&mut self) -> StreamEvent {
        let message = AssistantMessage {
            content: std::mem::take(&mut self.content),
            tool_calls: std::mem::take(&mut self.calls).into_values().collect(),
        };
        let mut response = ChatResponse::new(message).with_usage(self.usage);
        response.finish_reason = self
            .finish_reason
            .as_deref()
            .map(super::openai::finish_reason);
        StreamEvent::Finished(response)
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<ChunkUsage>,
    error: Option<serde_json::Value>,
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
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    #[serde(default)]
    index: usize,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize, Default)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}
