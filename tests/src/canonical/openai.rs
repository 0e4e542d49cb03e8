//! OpenAI Chat Completions: <https://platform.openai.com/docs/api-reference/chat/object> and
//! <https://platform.openai.com/docs/api-reference/chat-streaming>.

use super::*;

fn finish_reason(reply: &ChatResponse) -> &'static str {
    match reply.finish_reason {
        Some(FinishReason::ToolCalls) => "tool_calls",
        Some(FinishReason::Length) => "length",
        _ => "stop",
    }
}

/// The body of a plain reply that is `reply`.
pub fn reply(reply: &ChatResponse) -> Value {
    let mut message = json!({
        "role": "assistant",
        "content": if reply.message.content.is_empty() { Value::Null } else { reply.message.content.clone().into() },
        "refusal": null,
    });
    if !reply.message.tool_calls.is_empty() {
        message["tool_calls"] = reply
            .message
            .tool_calls
            .iter()
            .map(|call| {
                json!({
                    "id": call.id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments},
                })
            })
            .collect();
    }
    json!({
        "id": "chatcmpl-conformance",
        "object": "chat.completion",
        "created": 1_760_000_000,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason(reply)}],
        "usage": {
            "prompt_tokens": reply.usage.input_tokens,
            "completion_tokens": reply.usage.output_tokens,
            "total_tokens": reply.usage.total_tokens(),
        },
        "system_fingerprint": "fp_conformance",
    })
}

fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    sse(
        None,
        &json!({
            "id": "chatcmpl-conformance",
            "object": "chat.completion.chunk",
            "created": 1_760_000_000,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        }),
    )
}

fn text_chunks(text: &str) -> String {
    let mut body = chunk(json!({"role": "assistant", "content": ""}), None);
    for piece in pieces(text, 9) {
        body += &chunk(json!({"content": piece}), None);
    }
    body
}

/// The event stream of a reply that ends as `reply`.
pub fn stream(reply: &ChatResponse) -> String {
    let mut body = text_chunks(&reply.message.content);
    for (index, call) in reply.message.tool_calls.iter().enumerate() {
        body += &chunk(
            json!({"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}]}),
            None,
        );
        for piece in pieces(&call.arguments, 6) {
            body += &chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
            );
        }
    }
    body += &chunk(json!({}), Some(finish_reason(reply)));
    body += &sse(
        None,
        &json!({
            "id": "chatcmpl-conformance",
            "object": "chat.completion.chunk",
            "created": 1_760_000_000,
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [],
            "usage": {
                "prompt_tokens": reply.usage.input_tokens,
                "completion_tokens": reply.usage.output_tokens,
                "total_tokens": reply.usage.total_tokens(),
            },
        }),
    );
    body + "data: [DONE]\n\n"
}

/// A stream that breaks as `kind` says, with `message`.
pub fn broken_stream(kind: ErrorKind, message: &str) -> String {
    let start = text_chunks("It is raining in");
    match kind {
        ErrorKind::StreamCutOff => start,
        ErrorKind::StreamErrorEvent => {
            start
                + &sse(
                    None,
                    &json!({"error": {"message": message, "type": "server_error", "param": null, "code": null}}),
                )
        }
        ErrorKind::StreamOverloaded => {
            start
                + &sse(
                    None,
                    &json!({"error": {"message": message, "type": "server_error", "param": null, "code": "overloaded"}}),
                )
        }
        _ => start + "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}\n\n",
    }
}

/// The HTTP status and error body of a failure of `kind`, with `message`.
pub fn error(kind: ErrorKind, message: &str) -> (u16, Value) {
    let (status, kind, code) = match kind {
        ErrorKind::Authentication => (401, "invalid_request_error", "invalid_api_key"),
        ErrorKind::RateLimited => (429, "requests", "rate_limit_exceeded"),
        ErrorKind::QuotaExhausted => (429, "insufficient_quota", "insufficient_quota"),
        ErrorKind::InvalidRequest => (400, "invalid_request_error", "invalid_value"),
        ErrorKind::ContextOverflow => (400, "invalid_request_error", "context_length_exceeded"),
        ErrorKind::Overloaded => (503, "server_error", "overloaded"),
        _ => (500, "server_error", "server_error"),
    };
    (
        status,
        json!({"error": {"message": message, "type": kind, "param": null, "code": code}}),
    )
}
