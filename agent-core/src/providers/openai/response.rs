//! A Chat Completions reply read into a [`ChatResponse`]: the reply's wire types, its message and
//! calls, its finish reason and usage; and the OpenAI-style error object inside a reply, sorted as
//! the HTTP status it stands for (the stream's error chunks and the Responses API's errors too).

use serde::Deserialize;
use serde_json::Value;

use super::reasoning::{WireDetail, lenient_details, reasoning_of};
use crate::message::{AssistantMessage, ToolCall};
use crate::model::{ChatResponse, FinishReason, ModelError};
use crate::providers::common::{arguments_text, made_up_call_id};
use crate::providers::http::{parse_reply, stream_error, unexpected_reply};
use crate::usage::Usage;

/// Parses a Chat Completions reply body from `service` (its reasoning is tagged with it). A call
/// without an id gets one made up, arguments sent as a JSON object are taken as their text. Never
/// panics, whatever the body (a fuzz target holds it to that).
pub(crate) fn parse_response(body: &[u8], service: &str) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let Some(choice) = reply.choices.into_iter().next() else {
        return Err(unexpected_reply("the reply has no choices", body));
    };
    let mut finish_reason = choice.finish_reason.as_deref().map(finish_reason);
    let plain = choice
        .message
        .reasoning_content
        .filter(|text| !text.is_empty())
        .or(choice.message.reasoning);
    let reasoning = reasoning_of(plain, choice.message.reasoning_details, service);
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
    let usage = reply.usage.map(|usage| usage.usage()).unwrap_or_default();
    let mut response = ChatResponse::new(AssistantMessage {
        content,
        tool_calls,
        reasoning,
    })
    .with_usage(usage);
    response.finish_reason = finish_reason;
    response.model = reply.model.filter(|model| !model.is_empty());
    Ok(response)
}

pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "stop" => FinishReason::Stop,
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// An OpenAI-style error object (`{"message", "code", "type"}`, or a bare string) as the typed
/// error of the HTTP status it stands for: a numeric `code`, else the status `status_of` gives its
/// `code` or `type` word; `body` is what the error keeps as the reply.
pub(crate) fn typed_error(
    error: &Value,
    status_of: fn(&str) -> Option<u16>,
    body: &[u8],
) -> ModelError {
    let message = match error {
        Value::String(message) => message.clone(),
        _ => error
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| error.to_string(), str::to_owned),
    };
    let numeric = error
        .get("code")
        .and_then(|code| code.as_u64().or_else(|| code.as_str()?.parse().ok()))
        .and_then(|code| u16::try_from(code).ok())
        .filter(|code| (400..=599).contains(code));
    let status = numeric.or_else(|| {
        ["code", "type"]
            .iter()
            .filter_map(|field| error.get(field)?.as_str())
            .find_map(status_of)
    });
    stream_error(status, message, body)
}

/// The HTTP status an OpenAI error `code` or `type` comes with
/// (<https://platform.openai.com/docs/guides/error-codes>), and the words compatible servers use.
pub(crate) fn status_of(kind: &str) -> Option<u16> {
    Some(match kind {
        "invalid_request_error" | "context_length_exceeded" | "invalid_value" => 400,
        "invalid_api_key" | "authentication_error" => 401,
        "permission_error" | "permission_denied" => 403,
        "model_not_found" | "not_found_error" => 404,
        "insufficient_quota"
        | "rate_limit_exceeded"
        | "rate_limit_error"
        | "requests"
        | "tokens" => 429,
        "server_error" | "api_error" | "internal_error" | "internal_server_error" => 500,
        "overloaded" | "overloaded_error" | "service_unavailable" => 503,
        "timeout" | "timeout_error" => 504,
        _ => return None,
    })
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
    /// The model that answered (OpenAI's dated name; the model a router chose).
    #[serde(default)]
    model: Option<String>,
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
    /// DeepSeek, Qwen, vLLM and others.
    #[serde(default)]
    reasoning_content: Option<String>,
    /// OpenRouter's name for it (some servers send both).
    #[serde(default)]
    reasoning: Option<String>,
    /// OpenRouter's pieces of it, signed, summarized or encrypted.
    #[serde(default, deserialize_with = "lenient_details")]
    reasoning_details: Vec<WireDetail>,
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

/// A reply's usage (the last chunk's, in a stream): the prompt includes its cached tokens, the
/// completion its reasoning.
#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default, deserialize_with = "null_as_default")]
    prompt_tokens_details: PromptDetails,
    #[serde(default, deserialize_with = "null_as_default")]
    completion_tokens_details: CompletionDetails,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize, Default)]
struct CompletionDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

impl WireUsage {
    /// As [`Usage`] means it.
    pub(super) fn usage(&self) -> Usage {
        Usage::new(self.prompt_tokens, self.completion_tokens)
            .with_cache(self.prompt_tokens_details.cached_tokens, 0)
            .with_reasoning(self.completion_tokens_details.reasoning_tokens)
    }
}

/// Some compatible servers send a detail object as `null`.
fn null_as_default<'de, D: serde::Deserializer<'de>, T: Deserialize<'de> + Default>(
    deserializer: D,
) -> Result<T, D::Error> {
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Some compatible servers send `"tool_calls": null`.
fn null_as_empty<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}
