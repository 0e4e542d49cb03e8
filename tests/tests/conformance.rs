//! Every model this crate ships runs the model conformance suite (`agent_core::testing::conformance`):
//! each HTTP adapter over real HTTP against a loopback server that turns the suite's canonical
//! replies and failures into its vendor's documented JSON bodies, error bodies and server-sent
//! events; the model `providers::from_variables` builds for each vendor; the `Box`, `Arc` and `&`
//! wrappers; and the scripted model. Then the suite is shown to fail models that break the contract.

use std::sync::Arc;

use agent_core::providers::{Anthropic, EnvModel, Gemini, OpenAi, OpenAiResponses, from_variables};
use agent_core::testing::ScriptedModel;
use agent_core::testing::conformance::{
    self, Call, Capabilities, ErrorKind, Exchange, Failure, Harness, Report,
};
use agent_core::{
    BoxFuture, ChatRequest, ChatResponse, Fallback, FinishReason, Message, Model, ModelError,
    ToolCall,
};
use futures_util::FutureExt;
use serde_json::{Value, json};
use tests::http::{PrimedServer, event_stream_reply, json_reply, no_retries};
use wiremock::ResponseTemplate;

/// The wire formats.
#[derive(Clone, Copy, Debug)]
enum Vendor {
    OpenAi,
    Anthropic,
    Gemini,
    OpenAiResponses,
}

/// A harness that speaks one vendor's wire format on a loopback server.
struct VendorHarness {
    vendor: Vendor,
    server: PrimedServer,
}

impl VendorHarness {
    async fn start(vendor: Vendor) -> Self {
        VendorHarness {
            vendor,
            server: PrimedServer::start().await,
        }
    }

    /// The adapter for this vendor, pointed at the loopback server, without retries.
    fn adapter(&self) -> Box<dyn Model> {
        match self.vendor {
            Vendor::OpenAi => Box::new(self.openai()),
            Vendor::Anthropic => Box::new(self.anthropic()),
            Vendor::Gemini => Box::new(self.gemini()),
            Vendor::OpenAiResponses => Box::new(self.openai_responses()),
        }
    }

    fn openai_responses(&self) -> OpenAiResponses {
        OpenAiResponses::new("gpt-5")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1", self.server.uri()))
            .http_config(no_retries())
    }

    fn anthropic(&self) -> Anthropic {
        Anthropic::new("claude-sonnet-4-5")
            .api_key("conformance-key")
            .base_url(&self.server.uri())
            .http_config(no_retries())
    }

    fn openai(&self) -> OpenAi {
        OpenAi::new("gpt-4o-mini")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1", self.server.uri()))
            .http_config(no_retries())
    }

    fn gemini(&self) -> Gemini {
        Gemini::new("gemini-2.5-flash")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1beta", self.server.uri()))
            .http_config(no_retries())
    }

    /// The model `from_variables` makes for this vendor, its base URL variable pointing here.
    fn env_model(&self) -> EnvModel {
        let base = self.server.uri();
        let variables: Vec<(&str, String)> = match self.vendor {
            Vendor::OpenAi => vec![
                ("AGENT_MODEL", "openai:gpt-4o-mini".into()),
                ("OPENAI_API_KEY", "conformance-key".into()),
                ("OPENAI_BASE_URL", format!("{base}/v1")),
            ],
            Vendor::Anthropic => vec![
                ("AGENT_MODEL", "anthropic:claude-sonnet-4-5".into()),
                ("ANTHROPIC_API_KEY", "conformance-key".into()),
                ("ANTHROPIC_BASE_URL", base),
            ],
            Vendor::Gemini => vec![
                ("AGENT_MODEL", "gemini:gemini-2.5-flash".into()),
                ("GEMINI_API_KEY", "conformance-key".into()),
                ("GEMINI_BASE_URL", format!("{base}/v1beta")),
            ],
            Vendor::OpenAiResponses => vec![
                ("AGENT_MODEL", "openai-responses:gpt-5".into()),
                ("OPENAI_API_KEY", "conformance-key".into()),
                ("OPENAI_BASE_URL", format!("{base}/v1")),
            ],
        };
        from_variables(|name| {
            variables
                .iter()
                .find(|(variable, _)| *variable == name)
                .map(|(_, value)| value.clone())
        })
        .expect("a valid choice")
        .expect("a model")
        .http_config(no_retries())
    }

    fn reply(&self, exchange: &Exchange, call: Call) -> ResponseTemplate {
        match (exchange, call) {
            (Exchange::Reply(reply), Call::Chat) => {
                let body = match self.vendor {
                    Vendor::OpenAi => openai::reply(reply),
                    Vendor::Anthropic => anthropic::reply(reply),
                    Vendor::Gemini => gemini::reply(reply),
                    Vendor::OpenAiResponses => responses::reply(reply),
                };
                json_reply(200, &body.to_string())
            }
            (Exchange::Reply(reply), Call::Stream) => event_stream_reply(match self.vendor {
                Vendor::OpenAi => openai::stream(reply),
                Vendor::Anthropic => anthropic::stream(reply),
                Vendor::Gemini => gemini::stream(reply),
                Vendor::OpenAiResponses => responses::stream(reply),
            }),
            (Exchange::Fail(failure), call) => self.failure(failure, call),
            (other, _) => panic!("an exchange this harness does not know: {other:?}"),
        }
    }

    fn failure(&self, failure: &Failure, call: Call) -> ResponseTemplate {
        let message = failure.message.as_str();
        match failure.kind {
            ErrorKind::Undecodable if call == Call::Chat => ResponseTemplate::new(200)
                .set_body_raw(
                    "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
                    "text/html",
                ),
            ErrorKind::Undecodable
            | ErrorKind::StreamCutOff
            | ErrorKind::StreamErrorEvent
            | ErrorKind::StreamOverloaded => event_stream_reply(match self.vendor {
                Vendor::OpenAi => openai::broken_stream(failure.kind, message),
                Vendor::Anthropic => anthropic::broken_stream(failure.kind, message),
                Vendor::Gemini => gemini::broken_stream(failure.kind, message),
                Vendor::OpenAiResponses => responses::broken_stream(failure.kind, message),
            }),
            kind => {
                let (status, body) = match self.vendor {
                    // The same errors, whichever of OpenAI's APIs.
                    Vendor::OpenAi | Vendor::OpenAiResponses => openai::error(kind, message),
                    Vendor::Anthropic => anthropic::error(kind, message),
                    Vendor::Gemini => gemini::error(kind, message, failure.retry_after),
                };
                let reply = json_reply(status, &body.to_string());
                match (self.vendor, failure.retry_after) {
                    // Gemini says it in the body; the others in the header.
                    (Vendor::Gemini, _) | (_, None) => reply,
                    (_, Some(after)) => {
                        reply.insert_header("retry-after", after.as_secs().to_string().as_str())
                    }
                }
            }
        }
    }
}

impl Harness for VendorHarness {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new().streaming().failing_with(ErrorKind::ALL)
    }

    async fn prime(&self, exchange: &Exchange, call: Call) {
        self.server.prime(self.reply(exchange, call));
    }

    async fn last_request(&self) -> Option<Value> {
        self.server.last_body().await
    }
}

/// `text` in pieces of `size` characters (so multi-byte characters stay whole).
fn pieces(text: &str, size: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// A call's arguments as a JSON object.
fn arguments(call: &ToolCall) -> Value {
    serde_json::from_str(&call.arguments).expect("the suite's arguments are JSON")
}

fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// OpenAI Chat Completions: <https://platform.openai.com/docs/api-reference/chat/object> and
/// <https://platform.openai.com/docs/api-reference/chat-streaming>.
mod openai {
    use super::*;

    fn finish_reason(reply: &ChatResponse) -> &'static str {
        match reply.finish_reason {
            Some(FinishReason::ToolCalls) => "tool_calls",
            Some(FinishReason::Length) => "length",
            _ => "stop",
        }
    }

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
}

/// OpenAI Responses: <https://platform.openai.com/docs/api-reference/responses/object> and
/// <https://platform.openai.com/docs/api-reference/responses-streaming>. Errors are OpenAI's.
mod responses {
    use super::*;

    /// The response object a reply is: what the plain call returns and `response.completed`
    /// carries.
    fn response(reply: &ChatResponse) -> Value {
        let mut output = Vec::new();
        if !reply.message.content.is_empty() {
            output.push(json!({
                "type": "message", "id": "msg_conformance", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": reply.message.content, "annotations": []}],
            }));
        }
        for (index, call) in reply.message.tool_calls.iter().enumerate() {
            output.push(json!({
                "type": "function_call", "id": format!("fc_conformance_{index}"), "status": "completed",
                "call_id": call.id, "name": call.name, "arguments": call.arguments,
            }));
        }
        let cut = reply.finish_reason == Some(FinishReason::Length);
        json!({
            "id": "resp_conformance",
            "object": "response",
            "created_at": 1_760_000_000,
            "status": if cut { "incomplete" } else { "completed" },
            "error": null,
            "incomplete_details": if cut { json!({"reason": "max_output_tokens"}) } else { Value::Null },
            "model": "gpt-5-2025-08-07",
            "output": output,
            "parallel_tool_calls": true,
            "store": false,
            "usage": {
                "input_tokens": reply.usage.input_tokens,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": reply.usage.output_tokens,
                "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": reply.usage.total_tokens(),
            },
        })
    }

    pub fn reply(reply: &ChatResponse) -> Value {
        response(reply)
    }

    /// Server-sent events, each named by its type and numbered as OpenAI numbers them.
    #[derive(Default)]
    struct Events {
        body: String,
        next: u64,
    }

    impl Events {
        fn push(&mut self, mut data: Value) -> &mut Self {
            data["sequence_number"] = self.next.into();
            self.next += 1;
            let kind = data["type"].as_str().expect("a type").to_owned();
            self.body += &sse(Some(&kind), &data);
            self
        }

        fn start(&mut self) -> &mut Self {
            let started = json!({"id": "resp_conformance", "object": "response", "status": "in_progress", "output": [], "usage": null});
            self.push(json!({"type": "response.created", "response": started}))
                .push(json!({"type": "response.in_progress", "response": started}))
        }

        fn text(&mut self, output_index: usize, text: &str) -> &mut Self {
            self.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": {
                "type": "message", "id": "msg_conformance", "status": "in_progress", "role": "assistant", "content": [],
            }}));
            self.push(json!({"type": "response.content_part.added", "item_id": "msg_conformance", "output_index": output_index, "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}}));
            for piece in pieces(text, 9) {
                self.push(json!({"type": "response.output_text.delta", "item_id": "msg_conformance", "output_index": output_index, "content_index": 0, "delta": piece, "logprobs": []}));
            }
            self.push(json!({"type": "response.output_text.done", "item_id": "msg_conformance", "output_index": output_index, "content_index": 0, "text": text, "logprobs": []}))
        }
    }

    pub fn stream(reply: &ChatResponse) -> String {
        let mut events = Events::default();
        events.start();
        let mut output_index = 0;
        if !reply.message.content.is_empty() {
            events.text(output_index, &reply.message.content);
            output_index += 1;
        }
        for (index, call) in reply.message.tool_calls.iter().enumerate() {
            let item_id = format!("fc_conformance_{index}");
            events.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": {
                "type": "function_call", "id": item_id, "status": "in_progress", "call_id": call.id, "name": call.name, "arguments": "",
            }}));
            for piece in pieces(&call.arguments, 6) {
                events.push(json!({"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": output_index, "delta": piece}));
            }
            events.push(json!({"type": "response.function_call_arguments.done", "item_id": item_id, "output_index": output_index, "arguments": call.arguments}));
            output_index += 1;
        }
        let kind = if reply.finish_reason == Some(FinishReason::Length) {
            "response.incomplete"
        } else {
            "response.completed"
        };
        events.push(json!({"type": kind, "response": response(reply)}));
        events.body
    }

    pub fn broken_stream(kind: ErrorKind, message: &str) -> String {
        let mut events = Events::default();
        events.start().text(0, "It is raining in");
        match kind {
            ErrorKind::StreamCutOff => {}
            ErrorKind::StreamErrorEvent => {
                events.push(json!({"type": "response.failed", "response": {
                    "id": "resp_conformance", "object": "response", "status": "failed", "output": [],
                    "error": {"code": "server_error", "message": message},
                }}));
            }
            ErrorKind::StreamOverloaded => {
                events.push(json!({"type": "error", "code": "server_is_overloaded", "message": message, "param": null}));
            }
            _ => {
                events.body += "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\n\n";
            }
        }
        events.body
    }
}

/// Anthropic Messages: <https://docs.anthropic.com/en/api/messages>,
/// <https://docs.anthropic.com/en/docs/build-with-claude/streaming> and
/// <https://docs.anthropic.com/en/api/errors>.
mod anthropic {
    use super::*;

    fn stop_reason(reply: &ChatResponse) -> &'static str {
        match reply.finish_reason {
            Some(FinishReason::ToolCalls) => "tool_use",
            Some(FinishReason::Length) => "max_tokens",
            _ => "end_turn",
        }
    }

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

    pub fn error(kind: ErrorKind, message: &str) -> (u16, Value) {
        let (status, kind) = match kind {
            ErrorKind::Authentication => (401, "authentication_error"),
            ErrorKind::RateLimited => (429, "rate_limit_error"),
            ErrorKind::QuotaExhausted => (402, "billing_error"),
            ErrorKind::InvalidRequest | ErrorKind::ContextOverflow => {
                (400, "invalid_request_error")
            }
            ErrorKind::Overloaded => (529, "overloaded_error"),
            _ => (500, "api_error"),
        };
        (
            status,
            json!({"type": "error", "error": {"type": kind, "message": message}}),
        )
    }
}

/// Gemini `generateContent`: <https://ai.google.dev/api/generate-content> and
/// <https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes>.
mod gemini {
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

    pub fn reply(reply: &ChatResponse) -> Value {
        let mut parts = Vec::new();
        if !reply.message.content.is_empty() {
            parts.push(json!({"text": reply.message.content}));
        }
        parts.extend(reply.message.tool_calls.iter().map(call_part));
        chunk(parts, Some(finish_reason(reply)), Some(usage(reply)))
    }

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
}

#[tokio::test]
async fn the_openai_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::OpenAi).await;
    let report = conformance::assert_conforms(&harness.openai(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_anthropic_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::Anthropic).await;
    let report = conformance::assert_conforms(&harness.anthropic(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_gemini_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::Gemini).await;
    let report = conformance::assert_conforms(&harness.gemini(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_openai_responses_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::OpenAiResponses).await;
    let report = conformance::assert_conforms(&harness.openai_responses(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_model_from_the_environment_conforms_for_every_vendor() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let model = harness.env_model();
        let report = conformance::run(&model, &harness).await;
        assert!(report.is_ok(), "{vendor:?} via from_variables: {report}");
    }
}

#[tokio::test]
async fn box_arc_and_reference_wrappers_conform() {
    let openai = VendorHarness::start(Vendor::OpenAi).await;
    let boxed: Box<dyn Model> = Box::new(openai.openai());
    conformance::assert_conforms(&boxed, &openai).await;

    let anthropic = VendorHarness::start(Vendor::Anthropic).await;
    let shared: Arc<dyn Model> = Arc::from(anthropic.adapter());
    conformance::assert_conforms(&shared, &anthropic).await;

    let gemini = VendorHarness::start(Vendor::Gemini).await;
    let adapter = gemini.gemini();
    let borrowed: &Gemini = &adapter;
    conformance::assert_conforms(&borrowed, &gemini).await;
}

#[tokio::test]
async fn a_fallback_chain_of_one_model_is_that_model_for_every_vendor() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let chain = Fallback::new(harness.adapter());
        let report = conformance::run(&chain, &harness).await;
        assert!(report.is_ok(), "{vendor:?} alone in a chain: {report}");
        assert!(report.skipped.is_empty(), "{report:?}");
    }
}

/// A model that cannot take any request.
struct CannotTakeIt;

impl Model for CannotTakeIt {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async {
            Err(ModelError::Unsupported {
                message: "nothing, ever".into(),
            })
        })
    }
}

#[tokio::test]
async fn a_fallback_chain_answers_exactly_as_the_model_that_answered() {
    // The first model fails every call; the suite sees the second one's replies, streams and
    // errors unchanged (only an `Unsupported` error falls back here, which the harness never
    // makes).
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let chain = Fallback::new(CannotTakeIt)
            .then(harness.adapter())
            .fall_back_when(|error| matches!(error, ModelError::Unsupported { .. }));
        let report = conformance::run(&chain, &harness).await;
        assert!(report.is_ok(), "{vendor:?} second in a chain: {report}");
    }
}

#[tokio::test]
async fn the_scripted_model_conforms_and_so_do_its_wrappers() {
    let model = ScriptedModel::new(Vec::<ChatResponse>::new());
    let report = conformance::assert_conforms(&model, &model).await;
    assert!(report.skipped.is_empty(), "{report:?}");
    // Clones share the script, so one can be the harness while the other sits in a wrapper.
    let boxed: Box<dyn Model> = Box::new(model.clone());
    conformance::assert_conforms(&boxed, &model).await;
}

/// A wrapper that forwards `chat` but forgets `chat_stream`: it falls back to the default, which
/// makes a plain call and streams the whole reply at once.
struct ForgetsToStream<M>(M);

impl<M: Model> Model for ForgetsToStream<M> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.0.chat(request)
    }
}

#[tokio::test]
async fn a_wrapper_that_does_not_forward_streaming_fails_the_suite() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let broken = ForgetsToStream(harness.adapter());
        let report = conformance::run(&broken, &harness).await;
        for case in ["stream_text", "stream_tool_calls"] {
            assert!(report.failure(case).is_some(), "{vendor:?}: {report}");
        }
        // What it does forward still passes.
        for case in ["text", "parallel_calls", "tool_result_sent_back"] {
            assert!(report.passed.contains(&case), "{vendor:?}: {report}");
        }

        // `assert_conforms` panics, naming the case.
        let panic = std::panic::AssertUnwindSafe(conformance::assert_conforms(&broken, &harness))
            .catch_unwind()
            .await
            .expect_err("the suite must fail");
        let message = panic.downcast_ref::<String>().expect("a formatted message");
        assert!(message.contains("- stream_text: "), "{message}");
    }
}

/// A wrapper that fails the contract in other ways, one at a time.
#[derive(Clone, Copy, Debug)]
enum Sabotage {
    /// Drops tool results from the history.
    DropsToolResults,
    /// Reports no usage.
    LosesUsage,
    /// Turns every error into `ModelError::Other`.
    UntypesErrors,
    /// Reports overload and server failures as `ModelError::Stream`, as the adapters once did with
    /// those that came inside a stream: they would not be retried.
    StreamsProviderErrors,
}

struct Sabotaged(ScriptedModel, Sabotage);

impl Model for Sabotaged {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let sabotage = self.1;
        Box::pin(async move {
            let kept: Vec<Message> = request
                .messages
                .iter()
                .filter(|message| {
                    !matches!(
                        (sabotage, message),
                        (Sabotage::DropsToolResults, Message::Tool(_))
                    )
                })
                .cloned()
                .collect();
            let reply = self.0.chat(ChatRequest::new(&kept, request.tools)).await;
            match (sabotage, reply) {
                (Sabotage::LosesUsage, Ok(reply)) => Ok(reply.with_usage(Default::default())),
                (Sabotage::UntypesErrors, Err(error)) => Err(ModelError::other(error.to_string())),
                (
                    Sabotage::StreamsProviderErrors,
                    Err(
                        ModelError::Overloaded { message, .. } | ModelError::Server { message, .. },
                    ),
                ) => Err(ModelError::Stream { message }),
                (_, reply) => reply,
            }
        })
    }
}

#[tokio::test]
async fn the_suite_catches_lost_tool_results_usage_and_error_types() {
    let expectations: [(Sabotage, &[&str]); 4] = [
        (
            Sabotage::StreamsProviderErrors,
            &[
                "error_overloaded",
                "error_server",
                "error_stream_event",
                "error_stream_overloaded",
            ],
        ),
        (Sabotage::DropsToolResults, &["tool_result_sent_back"]),
        (Sabotage::LosesUsage, &["text", "usage", "stream_text"]),
        (
            Sabotage::UntypesErrors,
            &[
                "error_authentication",
                "error_rate_limited",
                "error_quota_exhausted",
                "error_stream_cut_off",
                "error_stream_overloaded",
            ],
        ),
    ];
    for (sabotage, failing) in expectations {
        let script = ScriptedModel::new(Vec::<ChatResponse>::new());
        let report: Report = conformance::run(&Sabotaged(script.clone(), sabotage), &script).await;
        for case in failing {
            assert!(report.failure(case).is_some(), "{sabotage:?}: {report}");
        }
        assert!(!report.is_ok());
    }
}
