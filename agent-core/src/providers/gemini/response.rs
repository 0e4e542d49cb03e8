//! A Gemini reply read into a [`ChatResponse`]: the reply's wire types, its parts, reasoning and
//! usage, its errors; and one chunk of a streamed reply.

use serde::Deserialize;
use serde_json::Value;

use crate::message::{AssistantMessage, ToolCall};
use crate::model::{ChatResponse, FinishReason, ModelError};
use crate::providers::http::{parse_reply, stream_error, unexpected_reply};
use crate::reasoning::Reasoning;
use crate::usage::Usage;

/// What this adapter's [`Reasoning`] says wrote it.
pub(crate) const PROVIDER: &str = "gemini";

/// The [`Reasoning::id`] of a piece that is no thought but the `thoughtSignature` Gemini put on
/// the reply's text: it goes back on the text part.
pub(crate) const TEXT_SIGNATURE: &str = "text";

/// Ids this adapter makes up for calls Gemini gave none start with this; they are not sent back.
/// The rest is fresh (32 hexadecimal digits), never made again in this process or another.
pub(super) const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// Parses one chunk of a streamed reply: a reply in the same shape, where a chunk with only usage
/// (no candidates) is fine.
pub(crate) fn parse_chunk(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    if let Some(error) = reply.error {
        // An error in the middle of the stream comes as an event carrying the usual error object:
        // sorted as its HTTP status would be (a `RESOURCE_EXHAUSTED` with its `RetryInfo` too).
        let status = error
            .code
            .as_ref()
            .and_then(Value::as_u64)
            .and_then(|code| u16::try_from(code).ok())
            .filter(|code| (400..=599).contains(code))
            .or_else(|| error.status.as_deref().and_then(status_of));
        let message = error
            .message
            .unwrap_or_else(|| "the stream carried an error without a message".to_owned());
        return Err(stream_error(status, message, body));
    }
    if reply.candidates.is_empty() && reply.prompt_feedback.is_none() {
        let usage = reply.usage_metadata.map(usage_of).unwrap_or_default();
        let mut response = ChatResponse::new(AssistantMessage::default()).with_usage(usage);
        response.model = reply.model_version.filter(|model| !model.is_empty());
        return Ok(response);
    }
    parse_response(body)
}

/// The HTTP status of a `google.rpc.Code` name, as Google APIs map them
/// (<https://cloud.google.com/apis/design/errors#handling_errors>): for an error whose `code` is
/// missing.
fn status_of(name: &str) -> Option<u16> {
    Some(match name {
        "INVALID_ARGUMENT" | "FAILED_PRECONDITION" | "OUT_OF_RANGE" => 400,
        "UNAUTHENTICATED" => 401,
        "PERMISSION_DENIED" => 403,
        "NOT_FOUND" => 404,
        "ABORTED" | "ALREADY_EXISTS" => 409,
        "RESOURCE_EXHAUSTED" => 429,
        "CANCELLED" => 499,
        "INTERNAL" | "UNKNOWN" | "DATA_LOSS" => 500,
        "UNIMPLEMENTED" => 501,
        "UNAVAILABLE" => 503,
        "DEADLINE_EXCEEDED" => 504,
        _ => return None,
    })
}

/// Usage as [`Usage`] means it: the prompt includes its cached tokens; the output is the answer
/// and the thinking, which Gemini counts apart.
fn usage_of(usage: WireUsage) -> Usage {
    let output = usage.candidates_token_count + usage.thoughts_token_count;
    Usage::new(usage.prompt_token_count, output)
        .with_cache(usage.cached_content_token_count, 0)
        .with_reasoning(usage.thoughts_token_count)
}

/// Parses a `generateContent` reply body. Calls without an id get one made up, so their results
/// still pair with them. Never panics, whatever the body (a fuzz target holds it to that).
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    let usage = reply.usage_metadata.map(usage_of).unwrap_or_default();
    let model = reply.model_version.filter(|model| !model.is_empty());
    let Some(candidate) = reply.candidates.into_iter().next() else {
        if reply
            .prompt_feedback
            .is_some_and(|feedback| feedback.block_reason.is_some())
        {
            // The prompt itself was blocked: an empty answer, and the reason says why.
            let mut response = ChatResponse::new(AssistantMessage::default()).with_usage(usage);
            response.finish_reason = Some(FinishReason::ContentFilter);
            response.model = model;
            return Ok(response);
        }
        return Err(unexpected_reply("the reply has no candidates", body));
    };
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    let mut reasoning = Vec::new();
    for part in candidate
        .content
        .map(|content| content.parts)
        .unwrap_or_default()
    {
        if part.thought {
            push_reasoning(
                &mut reasoning,
                Reasoning {
                    signature: part.thought_signature,
                    ..Reasoning::new(PROVIDER, part.text.unwrap_or_default())
                },
            );
            continue;
        }
        if let Some(text) = part.text {
            content.push_str(&text);
        }
        match part.function_call {
            Some(call) => {
                let id = call
                    .id
                    .unwrap_or_else(|| crate::fresh::fresh_id(SYNTHETIC_ID_PREFIX));
                let arguments = if call.args.is_null() {
                    "{}".to_owned()
                } else {
                    call.args.to_string()
                };
                let mut tool_call = ToolCall::new(id, call.name, arguments);
                tool_call.signature = part.thought_signature;
                tool_calls.push(tool_call);
            }
            // A signature on text, or on a part with nothing else: it goes back on the text.
            None => {
                if let Some(signature) = part.thought_signature {
                    push_reasoning(
                        &mut reasoning,
                        Reasoning::new(PROVIDER, "")
                            .with_signature(signature)
                            .with_id(TEXT_SIGNATURE),
                    );
                }
            }
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
        reasoning,
    })
    .with_usage(usage);
    response.finish_reason = finish_reason;
    response.model = model;
    Ok(response)
}

/// Whether a piece of Gemini reasoning holds the signature of the reply's text, not a thought.
pub(super) fn is_text_signature(piece: &Reasoning) -> bool {
    piece.id.as_deref() == Some(TEXT_SIGNATURE)
}

/// Adds a piece of reasoning after `pieces`: a thought joins the thought before it while that one
/// has no signature (a signature closes a thought), so a thought split over stream chunks is the
/// same as the thought whole. A thought with neither text nor signature is nothing.
pub(crate) fn push_reasoning(pieces: &mut Vec<Reasoning>, piece: Reasoning) {
    if is_text_signature(&piece) {
        pieces.push(piece);
        return;
    }
    match pieces.last_mut() {
        Some(last) if !is_text_signature(last) && last.signature.is_none() => {
            last.text.push_str(&piece.text);
            last.signature = piece.signature;
        }
        _ if piece.text.is_empty() && piece.signature.is_none() => {}
        _ => pieces.push(piece),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    #[serde(default)]
    candidates: Vec<WireCandidate>,
    prompt_feedback: Option<WirePromptFeedback>,
    usage_metadata: Option<WireUsage>,
    /// Only in a stream's error event.
    error: Option<WireError>,
    /// The model that answered.
    model_version: Option<String>,
}

#[derive(Deserialize)]
struct WireError {
    /// The HTTP status the error stands for (read leniently: the error is what matters).
    code: Option<Value>,
    message: Option<String>,
    /// The `google.rpc.Code` name (`UNAVAILABLE`, `RESOURCE_EXHAUSTED`).
    status: Option<String>,
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
    #[serde(default)]
    cached_content_token_count: u64,
}
