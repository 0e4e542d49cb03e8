//! Anthropic Messages (`POST {base}/v1/messages`).
//!
//! Wire format: <https://docs.anthropic.com/en/api/messages> and the tool-use guide
//! <https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use>.

use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{Common, KeyHeader, common_builder_methods, encode, system_text};
use super::dialect;
use super::http::{join_url, parse_reply};
use crate::message::{AssistantMessage, Message, ToolCall, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
use crate::settings::ToolChoice;
use crate::tool::BoxFuture;

/// Anthropic's own endpoint.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";

/// The API version this adapter speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A Claude model behind the Anthropic Messages API.
///
/// ```
/// use agent_core::providers::Anthropic;
///
/// let claude = Anthropic::new("claude-sonnet-4-5").api_key("sk-ant-...").max_tokens(2048);
/// ```
pub struct Anthropic {
    common: Common,
    url: String,
}

/// The reply cap when none is set: the Messages API requires one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

impl Anthropic {
    /// A model on Anthropic's endpoint, replies capped at 4096 tokens unless
    /// [`max_tokens`](Self::max_tokens) says otherwise (the API requires a cap).
    pub fn new(model: impl Into<String>) -> Self {
        let mut common = Common::new(model);
        common.headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        Anthropic {
            common,
            url: join_url(ANTHROPIC_BASE_URL, "v1/messages"),
        }
    }

    common_builder_methods!();

    /// Sends requests elsewhere: `base` is the part before `/v1/messages`.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = join_url(base, "v1/messages");
        self
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> Result<WireRequest<'a>, ModelError> {
        let output_config = match request.response_format {
            Some(format) => Some(WireOutputConfig {
                format: WireOutputFormat {
                    kind: "json_schema",
                    schema: dialect::anthropic_output(&format.schema).ok_or_else(|| {
                        ModelError::Unsupported {
                            message: "Anthropic's structured outputs cannot express this output \
                                      type's schema (it holds a map or a free-form object); ask \
                                      for it with OutputMode::Tool instead"
                                .to_owned(),
                        }
                    })?,
                },
            }),
            None => None,
        };
        Ok(WireRequest {
            model: &self.common.model,
            max_tokens: self
                .common
                .max_tokens(&request)
                .unwrap_or(DEFAULT_MAX_TOKENS),
            system: system_text(request.messages),
            messages: wire_messages(request.messages),
            tools: request
                .tools
                .iter()
                .map(|tool| WireTool {
                    name: &tool.name,
                    description: &tool.description,
                    input_schema: dialect::anthropic(&tool.parameters),
                })
                .collect(),
            tool_choice: request.tool_choice().map(wire_tool_choice),
            output_config,
            temperature: self.common.temperature(&request),
            stream,
        })
    }
}

/// `tool_choice`: `auto`, `any` (some tool), `none`, or the tool that must be called.
fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    let (kind, name) = match choice {
        ToolChoice::Auto => ("auto", None),
        ToolChoice::Required => ("any", None),
        ToolChoice::None => ("none", None),
        ToolChoice::Tool(name) => ("tool", Some(name.as_str())),
    };
    WireToolChoice { kind, name }
}

impl Model for Anthropic {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self
            .request_body(request, false)
            .and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.url, key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self
            .request_body(request, true)
            .and_then(|body| encode(&body));
        let request = self
            .common
            .stream_request(self.url.clone(), key_header(), body);
        super::sse::stream_reply::<super::anthropic_stream::AnthropicReassembler>(request)
    }
}

fn key_header() -> KeyHeader {
    KeyHeader {
        name: HeaderName::from_static("x-api-key"),
        prefix: "",
    }
}

impl fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Anthropic")
            .field("url", &self.url)
            .field("common", &self.common)
            .finish()
    }
}

/// Parses a Messages reply body. Never panics, whatever the body (a fuzz target holds it to that).
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in reply.content {
        match block {
            WireReplyBlock::Text { text } => content.push_str(&text),
            WireReplyBlock::ToolUse { id, name, input } => {
                tool_calls.push(ToolCall::new(id, name, input.to_string()));
            }
            // Thinking and server-side blocks are not part of the conversation the core keeps.
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
        reasoning: Vec::new(),
    })
    .with_usage(Usage {
        input_tokens: reply.usage.input_tokens,
        output_tokens: reply.usage.output_tokens,
    });
    response.finish_reason = finish_reason;
    Ok(response)
}

/// The history as Anthropic wants it: system messages go to their own field, and consecutive
/// messages of one role are merged, so every tool result of a turn lands in one user message (tool
/// results first, as the API requires).
fn wire_messages(messages: &[Message]) -> Vec<WireMessage<'_>> {
    let mut wire: Vec<WireMessage<'_>> = Vec::new();
    for message in messages {
        let (role, blocks): (&str, Vec<WireBlock<'_>>) = match message {
            Message::System { .. } => continue,
            Message::User { content, .. } => ("user", vec![WireBlock::Text { text: content }]),
            Message::Assistant(reply) => {
                let mut blocks = Vec::with_capacity(1 + reply.tool_calls.len());
                // The API refuses empty text blocks.
                if !reply.content.is_empty() {
                    blocks.push(WireBlock::Text {
                        text: &reply.content,
                    });
                }
                for call in &reply.tool_calls {
                    blocks.push(WireBlock::ToolUse {
                        id: &call.id,
                        name: &call.name,
                        input: tool_input(&call.arguments),
                    });
                }
                ("assistant", blocks)
            }
            Message::Tool(result) => (
                "user",
                vec![WireBlock::ToolResult {
                    tool_use_id: &result.tool_call_id,
                    content: &result.content,
                    is_error: result.is_error,
                }],
            ),
        };
        if blocks.is_empty() {
            continue;
        }
        match wire.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => wire.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    wire
}

/// Anthropic takes a tool's input as a JSON object: the call's arguments, as the model wrote them.
fn tool_input(arguments: &str) -> &RawValue {
    super::common::object_or_empty(arguments)
}

/// A Messages request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<WireOutputConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

#[derive(Serialize)]
struct WireToolChoice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

#[derive(Serialize)]
struct WireOutputConfig {
    format: WireOutputFormat,
}

#[derive(Serialize)]
struct WireOutputFormat {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: Value,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a RawValue,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: &'a str,
        is_error: bool,
    },
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Value,
}

#[derive(Deserialize)]
struct WireResponse {
    content: Vec<WireReplyBlock>,
    stop_reason: Option<String>,
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
    #[serde(other)]
    Other,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}
