//! An Anthropic Messages reply read into a [`ChatResponse`]: the reply's wire types, its content
//! blocks (text, tool use, thinking), its stop reason and usage.

use serde::Deserialize;
use serde_json::Value;

use crate::message::{AssistantMessage, ToolCall};
use crate::model::{ChatResponse, FinishReason, ModelError};
use crate::providers::http::parse_reply;
use crate::reasoning::Reasoning;
use crate::usage::Usage;

/// What this adapter's [`Reasoning`] says wrote it.
pub(crate) const PROVIDER: &str = "anthropic";

/// Parses a Messages reply body. Never panics, whatever the body (a fuzz target holds it to that).
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for block in reply.content {
        match block {
            WireReplyBlock::Text { text } => content.push_str(&text),
            WireReplyBlock::ToolUse { id, name, input } => {
                tool_calls.push(ToolCall::new(id, name, input.to_string()));
            }
            WireReplyBlock::Thinking {
                thinking,
                signature,
            } => reasoning.push(thinking_of(thinking, signature)),
            WireReplyBlock::RedactedThinking { data } => reasoning.push(redacted_of(data)),
            // Server-side blocks are not part of the conversation the core keeps.
            WireReplyBlock::Other => {}
        }
    }
    let finish_reason = reply.stop_reason.as_deref().map(|reason| match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "refusal" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    });
    let mut response = ChatResponse::new(AssistantMessage {
        content,
        tool_calls,
        reasoning,
    })
    .with_usage(reply.usage.usage());
    response.finish_reason = finish_reason;
    response.model = reply.model.filter(|model| !model.is_empty());
    Ok(response)
}

/// A `thinking` block as reasoning (an empty signature is none: one that never came).
pub(crate) fn thinking_of(text: String, signature: String) -> Reasoning {
    let reasoning = Reasoning::new(PROVIDER, text);
    if signature.is_empty() {
        reasoning
    } else {
        reasoning.with_signature(signature)
    }
}

/// A `redacted_thinking` block as reasoning: no readable text, the data kept to go back.
pub(crate) fn redacted_of(data: String) -> Reasoning {
    Reasoning::new(PROVIDER, "").with_encrypted(data)
}

#[derive(Deserialize)]
struct WireResponse {
    content: Vec<WireReplyBlock>,
    stop_reason: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    usage: WireUsage,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireReplyBlock {
    Text {
        text: String,
    },
    ToolUse {
        id: String,
        name: String,
        #[serde(default)]
        input: Value,
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

/// A reply's usage: `input_tokens` leaves out what was read from or written to the cache;
/// `output_tokens` counts the thinking in it, which `output_tokens_details` tells apart.
#[derive(Deserialize, Default)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    cache_creation_input_tokens: u64,
    #[serde(default)]
    cache_read_input_tokens: u64,
    #[serde(default)]
    pub(super) output_tokens_details: OutputDetails,
}

/// What of a reply's output was thinking.
#[derive(Deserialize, Default, Clone, Copy)]
pub(super) struct OutputDetails {
    #[serde(default)]
    pub(super) thinking_tokens: u64,
}

impl WireUsage {
    /// As [`Usage`] means it: the input with the cached tokens in it, the thinking as reasoning.
    pub(super) fn usage(&self) -> Usage {
        let cached = self.cache_read_input_tokens + self.cache_creation_input_tokens;
        Usage::new(self.input_tokens + cached, self.output_tokens)
            .with_cache(
                self.cache_read_input_tokens,
                self.cache_creation_input_tokens,
            )
            .with_reasoning(self.output_tokens_details.thinking_tokens)
    }
}
