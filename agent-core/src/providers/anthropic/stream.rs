//! Anthropic Messages streaming (`"stream": true`): named server-sent events (`message_start`,
//! `content_block_start`, `content_block_delta`, `content_block_stop`, `message_delta`,
//! `message_stop`, `ping`, `error`). Text, `thinking_delta`, `signature_delta` and
//! `input_json_delta` fragments are assembled per block into the same reply the non-streaming call
//! gives; thinking streams as [`StreamEvent::ReasoningDelta`], and a `redacted_thinking` block comes
//! whole in its `content_block_start`. An `error` event is the typed error its type's
//! HTTP status would be (`overloaded_error` is [`ModelError::Overloaded`], retryable).
//!
//! Wire format: <https://docs.anthropic.com/en/docs/build-with-claude/streaming>.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::response::{OutputDetails, WireUsage, redacted_of, thinking_of};
use crate::message::{AssistantMessage, ToolCall};
use crate::model::StreamEvent;
use crate::model::{ChatResponse, FinishReason, ModelError};
use crate::providers::http::stream_error;
use crate::providers::sse::{Out, Reassembler, bad_event, cut_off};
use crate::providers::sse_decode::Event;
use crate::usage::Usage;

#[derive(Default)]
pub(crate) struct AnthropicReassembler {
    blocks: BTreeMap<usize, Block>,
    /// How many tool calls have started: a call's index in the reply.
    calls: usize,
    stop_reason: Option<String>,
    usage: Usage,
    /// The model that answered, as `message_start` names it.
    model: Option<String>,
}

enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        call: usize,
        id: String,
        name: String,
        json: String,
    },
    Other,
}

impl Reassembler for AnthropicReassembler {
    fn take(&mut self, event: &Event, out: &mut Out) -> bool {
        let data = event.data.as_str();
        let message: Wire = match serde_json::from_str(data) {
            Ok(message) => message,
            Err(error) => {
                out.push_back(Err(bad_event(error, data)));
                return true;
            }
        };
        match message {
            Wire::MessageStart { message } => {
                self.usage = message.usage.usage();
                self.model = message.model.filter(|model| !model.is_empty());
            }
            Wire::ContentBlockStart {
                index,
                content_block,
            } => {
                let block = match content_block {
                    StartBlock::Text { text } => {
                        if !text.is_empty() {
                            out.push_back(Ok(StreamEvent::TextDelta(text.clone())));
                        }
                        Block::Text(text)
                    }
                    StartBlock::Thinking {
                        thinking,
                        signature,
                    } => {
                        if !thinking.is_empty() {
                            out.push_back(Ok(StreamEvent::ReasoningDelta(thinking.clone())));
                        }
                        Block::Thinking {
                            text: thinking,
                            signature,
                        }
                    }
                    StartBlock::RedactedThinking { data } => Block::Redacted(data),
                    StartBlock::ToolUse { id, name } => {
                        let call = self.calls;
                        self.calls += 1;
                        out.push_back(Ok(StreamEvent::ToolCallStart {
                            index: call,
                            id: id.clone(),
                            name: name.clone(),
                        }));
                        Block::Tool {
                            call,
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    StartBlock::Other => Block::Other,
                };
                self.blocks.insert(index, block);
            }
            Wire::ContentBlockDelta { index, delta } => {
                match (self.blocks.get_mut(&index), delta) {
                    (Some(Block::Text(text)), BlockDelta::TextDelta { text: more }) => {
                        text.push_str(&more);
                        out.push_back(Ok(StreamEvent::TextDelta(more)));
                    }
                    (
                        Some(Block::Thinking { text, .. }),
                        BlockDelta::ThinkingDelta { thinking },
                    ) if !thinking.is_empty() => {
                        text.push_str(&thinking);
                        out.push_back(Ok(StreamEvent::ReasoningDelta(thinking)));
                    }
                    (
                        Some(Block::Thinking { signature, .. }),
                        BlockDelta::SignatureDelta { signature: more },
                    ) => signature.push_str(&more),
                    (
                        Some(Block::Tool { call, json, .. }),
                        BlockDelta::InputJsonDelta { partial_json },
                    ) => {
                        json.push_str(&partial_json);
                        if !partial_json.is_empty() {
                            out.push_back(Ok(StreamEvent::ToolCallArguments {
                                index: *call,
                                fragment: partial_json,
                            }));
                        }
                    }
                    _ => {}
                }
            }
            Wire::ContentBlockStop { index } => {
                // A call without input streams no fragment, yet finishes with `{}`: say so, so the
                // fragments always add up to the finished arguments.
                if let Some(Block::Tool { call, json, .. }) = self.blocks.get_mut(&index)
                    && json.trim().is_empty()
                {
                    "{}".clone_into(json);
                    out.push_back(Ok(StreamEvent::ToolCallArguments {
                        index: *call,
                        fragment: "{}".to_owned(),
                    }));
                }
            }
            Wire::MessageDelta { delta, usage } => {
                if let Some(reason) = delta.stop_reason {
                    self.stop_reason = Some(reason);
                }
                if let Some(usage) = usage {
                    self.usage.output_tokens = usage.output_tokens;
                    if let Some(details) = usage.output_tokens_details {
                        self.usage.reasoning_tokens = details.thinking_tokens;
                    }
                }
            }
            Wire::MessageStop => {
                out.push_back(Ok(StreamEvent::Usage(self.usage)));
                out.push_back(Ok(self.finish()));
                return true;
            }
            Wire::Error { error } => {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map_or_else(|| error.to_string(), str::to_owned);
                let status = error
                    .get("type")
                    .and_then(Value::as_str)
                    .and_then(status_of);
                out.push_back(Err(stream_error(status, message, data.as_bytes())));
                return true;
            }
            Wire::Other => {}
        }
        false
    }

    fn at_end(&mut self) -> Result<StreamEvent, ModelError> {
        // A `message_delta` with the stop reason comes after every block is done: a stream that
        // closes after it (its `message_stop` lost, or left without the blank line that ends it)
        // has the whole reply.
        if self.stop_reason.is_some() {
            Ok(self.finish())
        } else {
            Err(cut_off())
        }
    }
}

/// The HTTP status Anthropic documents for each error type
/// (<https://docs.anthropic.com/en/api/errors>), so an error event in a stream is sorted as that
/// status would be: `overloaded_error` is overloaded (529) and retried, `api_error` a server error.
fn status_of(kind: &str) -> Option<u16> {
    Some(match kind {
        "invalid_request_error" => 400,
        "authentication_error" => 401,
        "billing_error" => 402,
        "permission_error" => 403,
        "not_found_error" => 404,
        "request_too_large" => 413,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "overloaded_error" => 529,
        _ => return None,
    })
}

impl AnthropicReassembler {
    fn finish(&mut self) -> StreamEvent {
        let mut content = String::new();
        let mut tool_calls = Vec::new();
        let mut reasoning = Vec::new();
        for block in std::mem::take(&mut self.blocks).into_values() {
            match block {
                Block::Text(text) => content.push_str(&text),
                Block::Thinking { text, signature } => reasoning.push(thinking_of(text, signature)),
                Block::Redacted(data) => reasoning.push(redacted_of(data)),
                Block::Tool { id, name, json, .. } => {
                    // The non-streaming reply carries the input as an object; write it the same way.
                    let arguments = if json.trim().is_empty() {
                        "{}".to_owned()
                    } else {
                        serde_json::from_str::<Value>(&json).map_or(json, |input| input.to_string())
                    };
                    tool_calls.push(ToolCall::new(id, name, arguments));
                }
                Block::Other => {}
            }
        }
        let mut response = ChatResponse::new(AssistantMessage {
            content,
            tool_calls,
            reasoning,
        })
        .with_usage(self.usage);
        response.finish_reason = self.stop_reason.as_deref().map(|reason| match reason {
            "end_turn" | "stop_sequence" => FinishReason::Stop,
            "tool_use" => FinishReason::ToolCalls,
            "max_tokens" => FinishReason::Length,
            "refusal" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        });
        response.model = self.model.take();
        StreamEvent::Finished(response)
    }
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Wire {
    MessageStart {
        message: StartMessage,
    },
    ContentBlockStart {
        index: usize,
        content_block: StartBlock,
    },
    ContentBlockDelta {
        index: usize,
        delta: BlockDelta,
    },
    ContentBlockStop {
        index: usize,
    },
    MessageDelta {
        delta: MessageDeltaBody,
        usage: Option<DeltaUsage>,
    },
    MessageStop,
    Error {
        error: Value,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct StartMessage {
    #[serde(default)]
    usage: WireUsage,
    #[serde(default)]
    model: Option<String>,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum StartBlock {
    Text {
        #[serde(default)]
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
    },
    Thinking {
        #[serde(default)]
        thinking: String,
        #[serde(default)]
        signature: String,
    },
    RedactedThinking {
        #[serde(default)]
        data: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockDelta {
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        #[serde(default)]
        thinking: String,
    },
    SignatureDelta {
        #[serde(default)]
        signature: String,
    },
    InputJsonDelta {
        #[serde(default)]
        partial_json: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
struct MessageDeltaBody {
    stop_reason: Option<String>,
}

#[derive(Deserialize)]
struct DeltaUsage {
    #[serde(default)]
    output_tokens: u64,
    output_tokens_details: Option<OutputDetails>,
}
