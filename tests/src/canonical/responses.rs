//! OpenAI Responses: <https://platform.openai.com/docs/api-reference/responses/object> and
//! <https://platform.openai.com/docs/api-reference/responses-streaming>. Errors are OpenAI's.

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

/// The body of a plain reply that is `reply`.
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

/// The event stream of a reply that ends as `reply`.
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

/// A stream that breaks as `kind` says, with `message`.
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
