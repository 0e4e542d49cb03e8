//! A Responses reply read into a [`ChatResponse`]: the response object's wire types, its
//! output items (messages, calls, reasoning), its usage and its errors, shared with the stream.

use serde::Deserialize;
use serde_json::Value;

use crate::message::{AssistantMessage, ToolCall};
use crate::model::{ChatResponse, FinishReason, ModelError};
use crate::providers::common::{arguments_text, made_up_call_id};
use crate::providers::http::{parse_reply, unexpected_reply};
use crate::providers::openai::response::{status_of as openai_status_of, typed_error};
use crate::reasoning::Reasoning;
use crate::usage::Usage;

/// What this adapter's [`Reasoning`] says wrote it.
pub(crate) const PROVIDER: &str = "openai_responses";

/// Parses a Responses reply body. A call without a `call_id` gets one made up; arguments sent as
/// a JSON object are taken as their text; a 200 whose response says it failed is that failure's
/// typed error. Never panics, whatever the body.
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    if reply.status.as_deref() == Some("failed") {
        return Err(failed(reply.error.as_ref()));
    }
    let Some(output) = reply.output else {
        return Err(unexpected_reply("the reply has no output", body));
    };
    let (message, refused) = message_of(output, &mut |_, _| made_up_call_id());
    let mut response = response_of(
        message,
        refused,
        reply.status.as_deref(),
        reply.incomplete_details.as_ref(),
        reply.usage.as_ref(),
    );
    response.model = reply.model.filter(|model| !model.is_empty());
    Ok(response)
}

/// The reply an `output` array holds, and whether the model refused. `call_id` gives the id of a
/// call the server sent without one, from its place among the calls and its item id.
pub(crate) fn message_of(
    output: Vec<WireOutput>,
    call_id: &mut dyn FnMut(usize, Option<&str>) -> String,
) -> (AssistantMessage, bool) {
    let mut message = AssistantMessage::default();
    let mut refused = false;
    for item in output {
        match item {
            WireOutput::Message { content } => {
                for part in content {
                    match part {
                        WireOutputContent::OutputText { text } => message.content.push_str(&text),
                        WireOutputContent::Refusal { refusal } => {
                            refused = true;
                            message.content.push_str(&refusal);
                        }
                        WireOutputContent::Other => {}
                    }
                }
            }
            WireOutput::FunctionCall {
                id,
                call_id: sent,
                name,
                arguments,
            } => {
                let id = match sent.filter(|sent| !sent.is_empty()) {
                    Some(sent) => sent,
                    None => call_id(message.tool_calls.len(), id.as_deref()),
                };
                message.tool_calls.push(ToolCall::new(id, name, arguments));
            }
            WireOutput::Reasoning {
                id,
                summary,
                encrypted_content,
            } => message
                .reasoning
                .extend(reasoning_of(id, summary, encrypted_content)),
            WireOutput::Other => {}
        }
    }
    (message, refused)
}

/// A reasoning item's pieces: one per summary part, the encrypted form on the first; one piece
/// without text when there is no summary.
fn reasoning_of(
    id: Option<String>,
    summary: Vec<WireSummaryPart>,
    encrypted: Option<String>,
) -> Vec<Reasoning> {
    let mut texts: Vec<String> = summary.into_iter().map(|part| part.text).collect();
    if texts.is_empty() {
        texts.push(String::new());
    }
    let mut encrypted = encrypted;
    texts
        .into_iter()
        .map(|text| {
            let mut piece = Reasoning::new(PROVIDER, text);
            piece.id.clone_from(&id);
            piece.encrypted = encrypted.take();
            piece
        })
        .collect()
}

/// The whole reply: the message, why it stopped, and the tokens it took.
pub(crate) fn response_of(
    message: AssistantMessage,
    refused: bool,
    status: Option<&str>,
    incomplete: Option<&WireIncomplete>,
    usage: Option<&WireUsage>,
) -> ChatResponse {
    let finish_reason = match status {
        Some("incomplete") => match incomplete.and_then(|details| details.reason.as_deref()) {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
            None => FinishReason::Other("incomplete".to_owned()),
        },
        None | Some("completed") if refused => FinishReason::ContentFilter,
        None | Some("completed") if !message.tool_calls.is_empty() => FinishReason::ToolCalls,
        None | Some("completed") => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    let usage = usage
        .map(|usage| {
            Usage::new(usage.input_tokens, usage.output_tokens)
                .with_cache(usage.input_tokens_details.cached_tokens, 0)
                .with_reasoning(usage.output_tokens_details.reasoning_tokens)
        })
        .unwrap_or_default();
    ChatResponse::new(message)
        .with_usage(usage)
        .with_finish_reason(finish_reason)
}

/// The error of a response that failed, from its `error` object.
pub(crate) fn failed(error: Option<&Value>) -> ModelError {
    match error.filter(|error| !error.is_null()) {
        Some(error) => response_error(error),
        None => ModelError::Stream {
            message: "the response failed, and did not say why".to_owned(),
        },
    }
}

/// A Responses error object (`{"code", "message"}`, a `type` beside them in some) as its typed
/// error, sorted as the HTTP status its code stands for would be, so a rate limit or an overload
/// reported inside a reply is retried exactly as the status is. A code this adapter does not know
/// leaves it a [`ModelError::Stream`].
pub(crate) fn response_error(error: &Value) -> ModelError {
    // Shaped as an HTTP error body, so an exhausted quota is told from a rate limit as it is there.
    let body = serde_json::json!({ "error": error }).to_string();
    typed_error(error, status_of, body.as_bytes())
}

/// The HTTP status an error code stands for: OpenAI's general codes, then the Responses API's own
/// (`server_is_overloaded` and `slow_down` are its overload; `invalid_prompt` and the image
/// codes its refusals of the input).
fn status_of(code: &str) -> Option<u16> {
    openai_status_of(code).or(match code {
        "server_is_overloaded" | "slow_down" | "service_unavailable_error" => Some(503),
        "vector_store_timeout" => Some(504),
        "invalid_prompt" => Some(400),
        _ if code.starts_with("invalid_") || code.contains("image") => Some(400),
        _ => None,
    })
}

/// A response object: the reply body, and what `response.completed` and its kin carry.
#[derive(Deserialize)]
pub(crate) struct WireResponse {
    #[serde(default)]
    pub(crate) status: Option<String>,
    /// `None` when the body has none (or `null`): a plain reply then is not the documented shape.
    #[serde(default)]
    pub(crate) output: Option<Vec<WireOutput>>,
    #[serde(default)]
    pub(crate) usage: Option<WireUsage>,
    #[serde(default)]
    pub(crate) incomplete_details: Option<WireIncomplete>,
    #[serde(default)]
    pub(crate) error: Option<Value>,
    /// The model that answered.
    #[serde(default)]
    pub(crate) model: Option<String>,
}

/// One output item; the kinds this adapter does not use (built-in tools' calls) are skipped.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WireOutput {
    Message {
        #[serde(default, deserialize_with = "null_as_empty")]
        content: Vec<WireOutputContent>,
    },
    FunctionCall {
        /// The item's id (`fc_...`), not the call's.
        #[serde(default)]
        id: Option<String>,
        /// The call's id, which its result carries back; some compatible servers send none.
        #[serde(default)]
        call_id: Option<String>,
        #[serde(default)]
        name: String,
        /// A JSON text the model wrote; it may not be valid JSON, and the tool runner says so.
        #[serde(default, deserialize_with = "arguments_text")]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        id: Option<String>,
        #[serde(default, deserialize_with = "null_as_empty")]
        summary: Vec<WireSummaryPart>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WireOutputContent {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
pub(crate) struct WireSummaryPart {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
pub(crate) struct WireIncomplete {
    #[serde(default)]
    reason: Option<String>,
}

/// A response's usage: the input includes its cached tokens, the output its reasoning.
#[derive(Deserialize)]
pub(crate) struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
    #[serde(default)]
    input_tokens_details: InputDetails,
    #[serde(default)]
    output_tokens_details: OutputDetails,
}

#[derive(Deserialize, Default)]
pub(crate) struct InputDetails {
    #[serde(default)]
    cached_tokens: u64,
}

#[derive(Deserialize, Default)]
pub(crate) struct OutputDetails {
    #[serde(default)]
    reasoning_tokens: u64,
}

/// Some compatible servers send `null` for an empty list.
fn null_as_empty<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = r#"{"id":"resp_1","object":"response","status":"completed","output":[
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Rain?"},{"type":"summary_text","text":"Check."}],"encrypted_content":"gAAA"},
        {"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},
        {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"北京\"}"},
        {"type":"function_call","id":"fc_2","name":"now","arguments":{}},
        {"type":"web_search_call","id":"ws_1","status":"completed"}],
        "usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}"#;

    #[test]
    fn a_reply_reads_into_text_calls_reasoning_and_usage() {
        let reply = parse_response(REPLY.as_bytes()).unwrap();
        assert_eq!(reply.message.content, "Let me check.");
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(reply.usage.total_tokens(), 46);
        let calls = &reply.message.tool_calls;
        assert_eq!(
            calls[0],
            ToolCall::new("call_1", "get_weather", r#"{"city":"北京"}"#)
        );
        assert!(calls[1].id.starts_with("call_agent_"), "{:?}", calls[1]);
        assert_eq!(calls[1].arguments, "{}");
        assert_eq!(
            reply.message.reasoning,
            [
                Reasoning::new(PROVIDER, "Rain?")
                    .with_id("rs_1")
                    .with_encrypted("gAAA"),
                Reasoning::new(PROVIDER, "Check.").with_id("rs_1"),
            ]
        );
    }

    #[test]
    fn why_a_reply_stopped() {
        let finish = |body: &str| parse_response(body.as_bytes()).map(|reply| reply.finish_reason);
        assert_eq!(
            finish(r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#).unwrap(),
            Some(FinishReason::Length)
        );
        assert_eq!(
            finish(r#"{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}"#).unwrap(),
            Some(FinishReason::ContentFilter)
        );
        assert_eq!(
            finish(r#"{"output":[{"type":"message","content":null}]}"#).unwrap(),
            Some(FinishReason::Stop)
        );
        assert!(matches!(
            finish(r#"{"status":"failed","error":{"code":"server_error","message":"Boom"},"output":[]}"#),
            Err(ModelError::Server { status: 500, message }) if message == "Boom"
        ));
        assert!(matches!(
            finish(r#"{"status":"failed","error":{"code":"insufficient_quota","message":"Pay"}}"#),
            Err(ModelError::QuotaExhausted { .. })
        ));
        assert!(matches!(
            finish(r#"{"id":"resp_1"}"#),
            Err(ModelError::Decode { message, .. }) if message == "the reply has no output"
        ));
    }

    #[test]
    fn error_codes_sort_like_their_statuses() {
        let sorted =
            |code: &str| response_error(&serde_json::json!({"code": code, "message": "m"}));
        assert!(matches!(
            sorted("rate_limit_exceeded"),
            ModelError::RateLimited { .. }
        ));
        assert!(matches!(
            sorted("server_is_overloaded"),
            ModelError::Overloaded { status: 503, .. }
        ));
        assert!(matches!(
            sorted("invalid_api_key"),
            ModelError::Authentication { status: 401, .. }
        ));
        assert!(matches!(
            sorted("invalid_image_url"),
            ModelError::InvalidRequest { status: 400, .. }
        ));
        assert!(matches!(sorted("brand_new"), ModelError::Stream { message } if message == "m"));
    }

    /// A small deterministic generator, so the test needs no dependency and fails the same way.
    fn noise(seed: &mut u64) -> u8 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) as u8
    }

    #[test]
    fn the_parser_never_panics() {
        let body = REPLY.as_bytes();
        for end in 0..=body.len() {
            let _ = parse_response(&body[..end]);
        }
        let mut seed = 7;
        for _ in 0..2_000 {
            let mut bytes = body.to_vec();
            for _ in 0..4 {
                let at = usize::from(noise(&mut seed)) * bytes.len() / 256;
                bytes[at] = noise(&mut seed);
            }
            let _ = parse_response(&bytes);
        }
    }
}
