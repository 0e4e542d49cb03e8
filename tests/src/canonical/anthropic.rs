//! Anthropic Messages: <https://docs.anthropic.com/en/api/messages>,
//! <https://docs.anthropic.com/en/docs/build-with-claude/streaming> and
//! <https://docs.anthropic.com/en/api/errors>.

use super::*;

fn stop_reason(reply: &ChatResponse) -> &'static str {
    match reply.finish_reason {
        Some(FinishReason::ToolCalls) => "tool_use",
        Some(FinishReason::Length) => "max_tokens",
        _ => "end_turn",
    }
}

/// The body of a plain reply that is `reply`.
pub fn reply(reply: &ChatResponse) -> Value {
    let mut content = Vec::new();
    if !reply.message.content.is_empty() {
        content.push(json!({"type": "text", "text": reply.message.content}));
    }
    for call in &reply.message.tool_calls {
        content.push(
            json!({"type": "tool_use", "id": call.id, "name": call.name, "input": arguments(call)}),
        );
    }
    json!({
        "id": "msg_conformance",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason(reply),
        "stop_sequence": null,
        "usage": {"input_tokens": reply.usage.input_tokens, "output_tokens": reply.usage.output_tokens},
    })
}

fn message_start(input_tokens: u64) -> String {
    sse(
        Some("message_start"),
        &json!({"type": "message_start", "message": {
            "id": "msg_conformance", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5-20250929", "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }}),
    )
}

fn text_block(index: usize, text: &str) -> String {
    let mut body = sse(
        Some("content_block_start"),
        &json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
    );
    body += &sse(Some("ping"), &json!({"type": "ping"}));
    for piece in pieces(text, 9) {
        body += &sse(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
        );
    }
    body
}

fn block_stop(index: usize) -> String {
    sse(
        Some("content_block_stop"),
        &json!({"type": "content_block_stop", "index": index}),
    )
}

/// The event stream of a reply that ends as `reply`.
pub fn stream(reply: &ChatResponse) -> String {
    let mut body = message_start(reply.usage.input_tokens);
    let mut index = 0;
    if !reply.message.content.is_empty() {
        body += &text_block(index, &reply.message.content);
        body += &block_stop(index);
        index += 1;
    }
    for call in &reply.message.tool_calls {
        body += &sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}}),
        );
        let input = arguments(call);
        // As the API does: an empty first fragment, then the input with its whitespace; a tool
        // without input gets no more fragments at all.
        let mut fragments = vec![String::new()];
        if input.as_object().is_some_and(|fields| !fields.is_empty()) {
            let written = serde_json::to_string_pretty(&input).expect("JSON");
            fragments.extend(pieces(&written, 5));
        }
        for fragment in fragments {
            body += &sse(
                Some("content_block_delta"),
                &json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": fragment}}),
            );
        }
        body += &block_stop(index);
        index += 1;
    }
    body += &sse(
        Some("message_delta"),
        &json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(reply), "stop_sequence": null}, "usage": {"output_tokens": reply.usage.output_tokens}}),
    );
    body + &sse(Some("message_stop"), &json!({"type": "message_stop"}))
}

/// A stream that breaks as `kind` says, with `message`.
pub fn broken_stream(kind: ErrorKind, message: &str) -> String {
    let start = message_start(10) + &text_block(0, "It is raining in");
    match kind {
        ErrorKind::StreamCutOff => start,
        ErrorKind::StreamErrorEvent => {
            start
                + &sse(
                    Some("error"),
                    &json!({"type": "error", "error": {"type": "api_error", "message": message}}),
                )
        }
        ErrorKind::StreamOverloaded => {
            start
                + &sse(
                    Some("error"),
                    &json!({"type": "error", "error": {"type": "overloaded_error", "message": message}}),
                )
        }
        _ => start + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n",
    }
}

/// The HTTP status and error body of a failure of `kind`, with `message`.
pub fn error(kind: ErrorKind, message: &str) -> (u16, Value) {
    let (status, kind) = match kind {
        ErrorKind::Authentication => (401, "authentication_error"),
        ErrorKind::RateLimited => (429, "rate_limit_error"),
        ErrorKind::QuotaExhausted => (402, "billing_error"),
        ErrorKind::InvalidRequest | ErrorKind::ContextOverflow => (400, "invalid_request_error"),
        ErrorKind::Overloaded => (529, "overloaded_error"),
        _ => (500, "api_error"),
    };
    (
        status,
        json!({"type": "error", "error": {"type": kind, "message": message}}),
    )
}
