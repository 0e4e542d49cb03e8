//! Google Gemini `generateContent` (`POST {base}/models/{model}:generateContent`).
//!
//! Wire format: <https://ai.google.dev/api/generate-content> and the function-calling guide
//! <https://ai.google.dev/gemini-api/docs/function-calling>.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use reqwest::header::HeaderName;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::common::{Common, KeyHeader, common_builder_methods, system_text};
use super::dialect;
use super::http::{join_url, parse_reply, unexpected_reply};
use crate::message::{AssistantMessage, Message, ToolCall, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
use crate::tool::BoxFuture;

/// Gemini's own endpoint.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// Ids this adapter makes up for calls Gemini gave none start with this; they are not sent back.
const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// Makes call ids unique within the process, so results pair with calls even across turns.
static NEXT_CALL_ID: AtomicU64 = AtomicU64::new(1);

/// A Gemini model behind the `generateContent` API.
///
/// ```
/// use agent_core::providers::Gemini;
///
/// let gemini = Gemini::new("gemini-2.5-flash").api_key("...");
/// ```
pub struct Gemini {
    common: Common,
    base_url: String,
}

impl Gemini {
    /// A model on Google's endpoint.
    pub fn new(model: impl Into<String>) -> Self {
        Gemini {
            common: Common::new(model),
            base_url: GEMINI_BASE_URL.to_owned(),
        }
    }

    common_builder_methods!();

    /// Sends requests elsewhere: `base` is the part before `/models/{model}:generateContent`.
    pub fn base_url(mut self, base: &str) -> Self {
        self.base_url = base.to_owned();
        self
    }

    /// Parses a generateContent reply body into the core's reply, as `chat` does. Never panics, whatever
    /// the body.
    pub fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
        parse_response(body)
    }

    /// The request body for this conversation, as it goes on the wire.
    pub fn request_body(&self, request: ChatRequest<'_>) -> Value {
        let system = system_text(request.messages);
        let declarations: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                let mut declaration = json!({"name": tool.name, "description": tool.description});
                // A function without parameters leaves `parameters` out: Gemini refuses an object
                // schema with no properties.
                let has_parameters = tool
                    .parameters
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|properties| !properties.is_empty());
                if has_parameters {
                    declaration["parameters"] = dialect::gemini(&tool.parameters);
                }
                declaration
            })
            .collect();
        let mut generation = Map::new();
        if let Some(tokens) = self.common.max_tokens {
            generation.insert("maxOutputTokens".into(), tokens.into());
        }
        if let Some(temperature) = self.common.temperature {
            generation.insert("temperature".into(), temperature.into());
        }
        let body = WireRequest {
            system_instruction: system.map(|text| json!({"parts": [{"text": text}]})),
            contents: wire_contents(request.messages),
            tools: (!declarations.is_empty())
                .then(|| json!([{"functionDeclarations": declarations}])),
            generation_config: (!generation.is_empty()).then_some(Value::Object(generation)),
        };
        serde_json::to_value(body).unwrap_or(Value::Null)
    }

    /// The URL of one of the model's methods (`generateContent`, `streamGenerateContent`).
    fn url(&self, method: &str) -> String {
        join_url(
            &self.base_url,
            &format!("models/{}:{method}", self.common.model),
        )
    }
}

impl Model for Gemini {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = serde_json::to_vec(&self.request_body(request));
        Box::pin(async move {
            let url = self.url("generateContent");
            self.common
                .send(&url, key_header(), body, parse_response)
                .await
        })
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = serde_json::to_vec(&self.request_body(request));
        let opened = async move {
            let url = format!("{}?alt=sse", self.url("streamGenerateContent"));
            self.common.open_stream(&url, key_header(), body).await
        };
        let timeout = self.common.http.config().request_timeout_value();
        super::sse::stream_reply::<super::gemini_stream::GeminiReassembler>(opened, timeout)
    }
}

fn key_header() -> KeyHeader {
    KeyHeader {
        name: HeaderName::from_static("x-goog-api-key"),
        prefix: "",
    }
}

impl fmt::Debug for Gemini {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gemini")
            .field("base_url", &self.base_url)
            .field("common", &self.common)
            .finish()
    }
}

/// Parses one chunk of a streamed reply: a reply in the same shape, where a chunk with only usage
/// (no candidates) is fine.
pub(super) fn parse_chunk(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    if reply.candidates.is_empty() && reply.prompt_feedback.is_none() {
        let usage = reply.usage_metadata.map(usage_of).unwrap_or_default();
        return Ok(ChatResponse::new(AssistantMessage::default()).with_usage(usage));
    }
    parse_response(body)
}

fn usage_of(usage: WireUsage) -> Usage {
    Usage {
        input_tokens: usage.prompt_token_count,
        output_tokens: usage.candidates_token_count + usage.thoughts_token_count,
    }
}

/// Parses a `generateContent` reply body. Calls without an id get one made up, so their results
/// still pair with them.
fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let usage = reply.usage_metadata.map(usage_of).unwrap_or_default();
    let Some(candidate) = reply.candidates.into_iter().next() else {
        if reply
            .prompt_feedback
            .is_some_and(|feedback| feedback.block_reason.is_some())
        {
            // The prompt itself was blocked: an empty answer, and the reason says why.
            let mut response = ChatResponse::new(AssistantMessage::default()).with_usage(usage);
            response.finish_reason = Some(FinishReason::ContentFilter);
            return Ok(response);
        }
        return Err(unexpected_reply("the reply has no candidates", body));
    };
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for part in candidate
        .content
        .map(|content| content.parts)
        .unwrap_or_default()
    {
        if part.thought {
            continue;
        }
        if let Some(text) = part.text {
            content.push_str(&text);
        }
        if let Some(call) = part.function_call {
            let id = call.id.unwrap_or_else(|| {
                format!(
                    "{SYNTHETIC_ID_PREFIX}{}",
                    NEXT_CALL_ID.fetch_add(1, Ordering::Relaxed)
                )
            });
            let arguments = if call.args.is_null() {
                "{}".to_owned()
            } else {
                call.args.to_string()
            };
            let mut tool_call = ToolCall::new(id, call.name, arguments);
            tool_call.signature = part.thought_signature;
            tool_calls.push(tool_call);
        }
    }
    let finish_reason = candidate
        .finish_reason
        .as_deref()
        .map(|reason| match reason {
            "STOP" if !tool_calls.is_empty() => FinishReason::ToolCalls,
            "STOP" => FinishReason::Stop,
            "MAX_TOKENS" => FinishReason::Length,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" | "SPII"
            | "IMAGE_SAFETY" => FinishReason::ContentFilter,
            other => FinishReason::Other(other.to_owned()),
        });
    let mut response = ChatResponse::new(AssistantMessage {
        content,
        tool_calls,
    })
    .with_usage(usage);
    response.finish_reason = finish_reason;
    Ok(response)
}

/// The history as Gemini wants it: `user` and `model` turns of parts; tool results become
/// `functionResponse` parts named after the call they answer, grouped into one `user` turn.
fn wire_contents(messages: &[Message]) -> Vec<Value> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut contents: Vec<(&str, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, parts) = match message {
            Message::System { .. } => continue,
            Message::User { content } => ("user", vec![json!({"text": content})]),
            Message::Assistant(reply) => {
                let mut parts = Vec::with_capacity(1 + reply.tool_calls.len());
                if !reply.content.is_empty() {
                    parts.push(json!({"text": reply.content}));
                }
                for call in &reply.tool_calls {
                    names.insert(&call.id, &call.name);
                    let args = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(object @ Value::Object(_)) => object,
                        _ => Value::Object(Map::new()),
                    };
                    let mut function_call = json!({"name": call.name, "args": args});
                    if !call.id.starts_with(SYNTHETIC_ID_PREFIX) {
                        function_call["id"] = Value::from(call.id.as_str());
                    }
                    let mut part = json!({"functionCall": function_call});
                    if let Some(signature) = &call.signature {
                        part["thoughtSignature"] = Value::from(signature.as_str());
                    }
                    parts.push(part);
                }
                ("model", parts)
            }
            Message::Tool(result) => {
                let name = names
                    .get(result.tool_call_id.as_str())
                    .copied()
                    .unwrap_or("unknown_tool");
                let key = if result.is_error { "error" } else { "result" };
                let mut function_response =
                    json!({"name": name, "response": {key: result.content}});
                if !result.tool_call_id.starts_with(SYNTHETIC_ID_PREFIX) {
                    function_response["id"] = Value::from(result.tool_call_id.as_str());
                }
                ("user", vec![json!({"functionResponse": function_response})])
            }
        };
        if parts.is_empty() {
            continue;
        }
        match contents.last_mut() {
            Some((last_role, last_parts)) if *last_role == role => last_parts.extend(parts),
            _ => contents.push((role, parts)),
        }
    }
    contents
        .into_iter()
        .map(|(role, parts)| json!({"role": role, "parts": parts}))
        .collect()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireRequest {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<Value>,
    contents: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    candidates: Vec<WireCandidate>,
    prompt_feedback: Option<WirePromptFeedback>,
    usage_metadata: Option<WireUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCandidate {
    content: Option<WireContent>,
    finish_reason: Option<String>,
}

#[derive(Deserialize)]
struct WireContent {
    #[serde(default)]
    parts: Vec<WirePart>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePart {
    text: Option<String>,
    #[serde(default)]
    thought: bool,
    thought_signature: Option<String>,
    function_call: Option<WireFunctionCall>,
}

#[derive(Deserialize)]
struct WireFunctionCall {
    id: Option<String>,
    name: String,
    #[serde(default)]
    args: Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePromptFeedback {
    block_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireUsage {
    #[serde(default)]
    prompt_token_count: u64,
    #[serde(default)]
    candidates_token_count: u64,
    #[serde(default)]
    thoughts_token_count: u64,
}
