//! Gemini `generateContent`: <https://ai.google.dev/api/generate-content> and
//! <https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes>.

use std::time::Duration;

use super::*;

fn finish_reason(reply: &ChatResponse) -> &'static str {
    match reply.finish_reason {
        Some(FinishReason::Length) => "MAX_TOKENS",
        _ => "STOP",
    }
}

fn usage(reply: &ChatResponse) -> Value {
    json!({
        "promptTokenCount": reply.usage.input_tokens,
        "candidatesTokenCount": reply.usage.output_tokens,
        "totalTokenCount": reply.usage.total_tokens(),
    })
}

fn call_part(call: &ToolCall) -> Value {
    json!({"functionCall": {"id": call.id, "name": call.name, "args": arguments(call)}})
}

fn chunk(parts: Vec<Value>, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
    if let Some(finish) = finish {
        candidate["finishReason"] = finish.into();
    }
    let mut chunk = json!({
        "candidates": [candidate],
        "modelVersion": "gemini-2.5-flash",
        "responseId": "conformance",
    });
    if let Some(usage) = usage {
        chunk["usageMetadata"] = usage;
    }
    chunk
}

/// The body of a plain reply that is `reply`.
pub fn reply(reply: &ChatResponse) -> Value {
    let mut parts = Vec::new();
    if !reply.message.content.is_empty() {
        parts.push(json!({"text": reply.message.content}));
    }
    parts.extend(reply.message.tool_calls.iter().map(call_part));
    chunk(parts, Some(finish_reason(reply)), Some(usage(reply)))
}

/// The event stream of a reply that ends as `reply`.
pub fn stream(reply: &ChatResponse) -> String {
    // Text piece by piece; calls whole, in one chunk; the finish reason and the usage with the
    // last chunk.
    let mut chunks: Vec<Vec<Value>> = pieces(&reply.message.content, 9)
        .into_iter()
        .map(|piece| vec![json!({"text": piece})])
        .collect();
    if !reply.message.tool_calls.is_empty() || chunks.is_empty() {
        chunks.push(reply.message.tool_calls.iter().map(call_part).collect());
    }
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(index, parts)| {
            let chunk = if index == last {
                chunk(parts, Some(finish_reason(reply)), Some(usage(reply)))
            } else {
                chunk(parts, None, None)
            };
            format!("data: {chunk}\r\n\r\n")
        })
        .collect()
}

/// A stream that breaks as `kind` says, with `message`.
pub fn broken_stream(kind: ErrorKind, message: &str) -> String {
    let start: String = pieces("It is raining in", 9)
        .into_iter()
        .map(|piece| {
            format!(
                "data: {}\r\n\r\n",
                chunk(vec![json!({"text": piece})], None, None)
            )
        })
        .collect();
    match kind {
        ErrorKind::StreamCutOff => start,
        ErrorKind::StreamErrorEvent => {
            start
                + &format!(
                    "data: {}\r\n\r\n",
                    json!({"error": {"code": 500, "message": message, "status": "INTERNAL"}})
                )
        }
        ErrorKind::StreamOverloaded => {
            start
                + &format!(
                    "data: {}\r\n\r\n",
                    json!({"error": {"code": 503, "message": message, "status": "UNAVAILABLE"}})
                )
        }
        _ => start + "data: {\"candidates\": [{\"content\": \r\n\r\n",
    }
}

/// The HTTP status and error body of a failure of `kind`, with `message`.
pub fn error(kind: ErrorKind, message: &str, retry_after: Option<Duration>) -> (u16, Value) {
    let (status, name) = match kind {
        ErrorKind::Authentication => (403, "PERMISSION_DENIED"),
        ErrorKind::RateLimited | ErrorKind::QuotaExhausted => (429, "RESOURCE_EXHAUSTED"),
        ErrorKind::InvalidRequest | ErrorKind::ContextOverflow => (400, "INVALID_ARGUMENT"),
        ErrorKind::Overloaded => (503, "UNAVAILABLE"),
        _ => (500, "INTERNAL"),
    };
    let mut error = json!({"error": {"code": status, "message": message, "status": name}});
    if let Some(after) = retry_after {
        // A per-minute quota: a rate limit, to wait out.
        error["error"]["details"] = json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
                "quotaValue": "10",
            }]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": format!("{}s", after.as_secs())},
        ]);
    }
    if kind == ErrorKind::QuotaExhausted {
        // A daily quota: used up until tomorrow, whatever the RetryInfo says.
        error["error"]["details"] = json!([
            {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                "quotaDimensions": {"location": "global", "model": "gemini-2.5-flash"},
                "quotaValue": "250",
            }]},
            {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "21s"},
        ]);
    }
    (status, error)
}
