//! OpenAI Chat Completions (`POST {base}/chat/completions`), and every service that speaks it:
//! OpenAI, Azure OpenAI, DeepSeek, Qwen (DashScope), Groq, OpenRouter, Ollama, vLLM, llama.cpp,
//! LM Studio.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/chat/create>.

use std::fmt;

use reqwest::header::HeaderName;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{
    Common, KeyHeader, arguments_text, common_builder_methods, encode, made_up_call_id,
};
use super::dialect;
use super::http::{join_url, parse_reply, unexpected_reply};
use crate::message::{AssistantMessage, Message, ToolCall, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
use crate::settings::{ResponseFormat, ToolChoice};
use crate::tool::{BoxFuture, ToolDef};

/// OpenAI's own endpoint.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A model behind the OpenAI Chat Completions API.
///
/// ```
/// use agent_core::providers::OpenAi;
///
/// let openai = OpenAi::new("gpt-4o-mini").api_key("sk-...");
/// let local = OpenAi::new("qwen2.5").base_url("http://127.0.0.1:11434/v1");
/// ```
pub struct OpenAi {
    common: Common,
    url: String,
    /// `Authorization: Bearer` for OpenAI and most others; `api-key` for Azure.
    azure: bool,
    strict_tools: bool,
}

impl OpenAi {
    /// A model on OpenAI's endpoint; give it a key with [`api_key`](Self::api_key).
    pub fn new(model: impl Into<String>) -> Self {
        OpenAi {
            common: Common::new(model),
            url: join_url(OPENAI_BASE_URL, "chat/completions"),
            azure: false,
            strict_tools: false,
        }
    }

    /// An Azure OpenAI deployment: `{endpoint}/openai/deployments/{deployment}/chat/completions`,
    /// with the key in the `api-key` header.
    pub fn azure(endpoint: &str, deployment: &str, api_version: &str) -> Self {
        let mut openai = OpenAi::new(deployment);
        let path = format!("openai/deployments/{deployment}/chat/completions");
        openai.url = format!("{}?api-version={api_version}", join_url(endpoint, &path));
        openai.azure = true;
        openai
    }

    common_builder_methods!();

    /// Sends requests to another OpenAI-compatible service: `base` is the part before
    /// `/chat/completions`, e.g. `http://127.0.0.1:11434/v1` for Ollama.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = join_url(base, "chat/completions");
        self
    }

    /// Sends tools in strict mode (Structured Outputs), so the model's arguments always fit the
    /// schema. A tool whose schema strict mode cannot express (a map) is sent without it.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply with usage in its last chunk.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> WireRequest<'a> {
        WireRequest {
            model: &self.common.model,
            messages: request.messages.iter().map(wire_message).collect(),
            tools: request
                .tools
                .iter()
                .map(|tool| self.wire_tool(tool))
                .collect(),
            tool_choice: request.tool_choice().map(wire_tool_choice),
            response_format: request.response_format.map(wire_response_format),
            max_completion_tokens: self.common.max_tokens(&request),
            temperature: self.common.temperature(&request),
            stream,
            stream_options: stream.then_some(WireStreamOptions {
                include_usage: true,
            }),
        }
    }

    fn wire_tool<'a>(&self, tool: &'a ToolDef) -> WireTool<'a> {
        let strict = if self.strict_tools {
            dialect::openai_strict(&tool.parameters)
        } else {
            None
        };
        WireTool {
            kind: "function",
            function: WireFunction {
                name: &tool.name,
                description: &tool.description,
                strict: strict.is_some().then_some(true),
                parameters: strict.unwrap_or_else(|| dialect::openai(&tool.parameters)),
            },
        }
    }
}

impl Model for OpenAi {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = encode(&self.request_body(request, false));
        Box::pin(
            self.common
                .send(&self.url, self.key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = encode(&self.request_body(request, true));
        let request = self
            .common
            .stream_request(self.url.clone(), self.key_header(), body);
        super::sse::stream_reply::<super::openai_stream::OpenAiReassembler>(request)
    }
}

impl OpenAi {
    fn key_header(&self) -> KeyHeader {
        if self.azure {
            KeyHeader {
                name: HeaderName::from_static("api-key"),
                prefix: "",
            }
        } else {
            KeyHeader {
                name: reqwest::header::AUTHORIZATION,
                prefix: "Bearer ",
            }
        }
    }
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("url", &self.url)
            .field("common", &self.common)
            .field("strict_tools", &self.strict_tools)
            .finish()
    }
}

/// Parses a Chat Completions reply body. A call without an id gets one made up, arguments sent as
/// a JSON object are taken as their text. Never panics, whatever the body (a fuzz target holds it
/// to that).
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let Some(choice) = reply.choices.into_iter().next() else {
        return Err(unexpected_reply("the reply has no choices", body));
    };
    let mut finish_reason = choice.finish_reason.as_deref().map(finish_reason);
    let content = match (choice.message.content, choice.message.refusal) {
        (Some(content), _) => content,
        (None, Some(refusal)) => {
            finish_reason = Some(FinishReason::ContentFilter);
            refusal
        }
        (None, None) => String::new(),
    };
    let tool_calls = choice
        .message
        .tool_calls
        .into_iter()
        .map(|call| {
            let id = call
                .id
                .filter(|id| !id.is_empty())
                .unwrap_or_else(made_up_call_id);
            ToolCall::new(id, call.function.name, call.function.arguments)
        })
        .collect();
    let usage = reply
        .usage
        .map(|usage| Usage {
            input_tokens: usage.prompt_tokens,
            output_tokens: usage.completion_tokens,
        })
        .unwrap_or_default();
    let mut response = ChatResponse::new(AssistantMessage {
        content,
        tool_calls,
    })
    .with_usage(usage);
    response.finish_reason = finish_reason;
    Ok(response)
}

pub(super) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

fn wire_message(message: &Message) -> WireMessage<'_> {
    match message {
        Message::System { content } => WireMessage::System { content },
        Message::User { content } => WireMessage::User { content },
        Message::Assistant(reply) => WireMessage::Assistant {
            // An assistant turn that only calls tools has `content: null`.
            content: (!reply.content.is_empty() || reply.tool_calls.is_empty())
                .then_some(reply.content.as_str()),
            tool_calls: reply
                .tool_calls
                .iter()
                .map(|call| WireToolCall {
                    id: &call.id,
                    kind: "function",
                    function: WireCalledFunction {
                        name: &call.name,
                        arguments: &call.arguments,
                    },
                })
                .collect(),
        },
        // The wire format has no error flag: the text says it (the dispatcher's error texts do).
        Message::Tool(result) => WireMessage::Tool {
            tool_call_id: &result.tool_call_id,
            content: &result.content,
        },
    }
}

/// `tool_choice`: a word, or the function that must be called.
fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    match choice {
        ToolChoice::Auto => WireToolChoice::Mode("auto"),
        ToolChoice::Required => WireToolChoice::Mode("required"),
        ToolChoice::None => WireToolChoice::Mode("none"),
        ToolChoice::Tool(name) => WireToolChoice::Function {
            kind: "function",
            function: WireFunctionName { name },
        },
    }
}

/// `response_format` of type `json_schema`: strict (Structured Outputs) when the schema can be
/// said in the strict dialect, as tools are.
fn wire_response_format(format: &ResponseFormat) -> WireResponseFormat<'_> {
    let strict = dialect::openai_strict(&format.schema);
    WireResponseFormat {
        kind: "json_schema",
        json_schema: WireJsonSchema {
            name: &format.name,
            description: format.description.as_deref(),
            strict: strict.is_some().then_some(true),
            schema: strict.unwrap_or_else(|| dialect::openai(&format.schema)),
        },
    }
}

/// A Chat Completions request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<WireResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<WireStreamOptions>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: WireFunctionName<'a>,
    },
}

#[derive(Serialize)]
struct WireFunctionName<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct WireResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: WireJsonSchema<'a>,
}

#[derive(Serialize)]
struct WireJsonSchema<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Serialize)]
struct WireStreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: &'a str,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireCalledFunction<'a>,
}

#[derive(Serialize)]
struct WireCalledFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireReply,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireReply {
    content: Option<String>,
    refusal: Option<String>,
    #[serde(default, deserialize_with = "null_as_empty")]
    tool_calls: Vec<WireReplyCall>,
}

#[derive(Deserialize)]
struct WireReplyCall {
    /// Some compatible servers send none: one is made up.
    id: Option<String>,
    function: WireReplyFunction,
}

#[derive(Deserialize)]
struct WireReplyFunction {
    name: String,
    /// A JSON text the model wrote; it may not be valid JSON, and the tool runner says so. Some
    /// compatible servers send the object itself.
    #[serde(default, deserialize_with = "arguments_text")]
    arguments: String,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Some compatible servers send `"tool_calls": null`.
fn null_as_empty<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}
