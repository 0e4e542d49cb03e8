//! The OpenAI Responses API's wire format, as the tests of its adapter serve it: response
//! objects and their output items (<https://platform.openai.com/docs/api-reference/responses>),
//! and the server-sent events a streamed response is made of.

use agent_core::providers::OpenAiResponses;
use serde_json::{Value, json};

use crate::canonical::sse;
use crate::http::quick_retries;

/// The adapter for `gpt-5` against the loopback server at `base`, with quick retries.
pub fn responses_at(base: &str) -> OpenAiResponses {
    OpenAiResponses::new("gpt-5")
        .api_key("test-key-123")
        .base_url(&format!("{base}/v1"))
        .http_config(quick_retries())
}

/// A response object with these output items, as the API returns it and `response.completed`
/// carries it.
pub fn response(output: Vec<Value>, input_tokens: u64, output_tokens: u64) -> Value {
    json!({
        "id": "resp_test",
        "object": "response",
        "created_at": 1_760_000_000,
        "status": "completed",
        "error": null,
        "incomplete_details": null,
        "model": "gpt-5-2025-08-07",
        "output": output,
        "parallel_tool_calls": true,
        "store": false,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
    })
}

/// An assistant message item with `text`.
pub fn message_item(id: &str, text: &str) -> Value {
    json!({
        "type": "message", "id": id, "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    })
}

/// A function call item.
pub fn call_item(id: &str, call_id: &str, name: &str, arguments: &str) -> Value {
    json!({"type": "function_call", "id": id, "status": "completed", "call_id": call_id, "name": name, "arguments": arguments})
}

/// A reasoning item as a stateless request gets it back: its summary and its encrypted form.
pub fn reasoning_item(id: &str, summary: &[&str], encrypted: &str) -> Value {
    let summary: Vec<Value> = summary
        .iter()
        .map(|text| json!({"type": "summary_text", "text": text}))
        .collect();
    json!({"type": "reasoning", "id": id, "summary": summary, "encrypted_content": encrypted})
}

/// Two calls in one reply: the weather and the time in Beijing.
pub fn two_calls() -> Value {
    response(
        vec![
            call_item(
                "fc_w",
                "call_w1",
                "get_weather",
                r#"{"city":"北京","unit":null}"#,
            ),
            call_item("fc_t", "call_t1", "get_time", r#"{"city":"Beijing"}"#),
        ],
        120,
        30,
    )
}

/// The text of [`answer`].
pub const ANSWER: &str = "北京今天有小雨，18°C，记得带伞。现在是 08:30。";

/// A response whose one item is a message with [`ANSWER`].
pub fn answer() -> Value {
    response(vec![message_item("msg_a", ANSWER)], 170, 21)
}

/// `text` in pieces of `size` characters (so multi-byte characters stay whole).
pub fn pieces(text: &str, size: usize) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// The event stream that ends with `response`: each output item added, its text, summary or
/// arguments in deltas, then `response.completed` carrying the whole response.
pub fn stream_of(response: &Value) -> String {
    let mut body = String::new();
    let mut sequence = 0;
    let mut push = |data: Value| {
        let mut data = data;
        data["sequence_number"] = sequence.into();
        sequence += 1;
        body += &event(&data);
    };
    let started =
        json!({"id": "resp_test", "object": "response", "status": "in_progress", "output": []});
    push(json!({"type": "response.created", "response": started}));
    push(json!({"type": "response.in_progress", "response": started}));
    let output = response["output"].as_array().expect("output items");
    for (index, item) in output.iter().enumerate() {
        let id = item["id"].clone();
        let mut added = item.clone();
        match item["type"].as_str() {
            Some("reasoning") => {
                added["summary"] = json!([]);
                push(
                    json!({"type": "response.output_item.added", "output_index": index, "item": added}),
                );
                for (part, summary) in item["summary"].as_array().into_iter().flatten().enumerate()
                {
                    let text = summary["text"].as_str().expect("a summary text");
                    for piece in pieces(text, 4) {
                        push(
                            json!({"type": "response.reasoning_summary_text.delta", "item_id": id, "output_index": index, "summary_index": part, "delta": piece}),
                        );
                    }
                    push(
                        json!({"type": "response.reasoning_summary_text.done", "item_id": id, "output_index": index, "summary_index": part, "text": text}),
                    );
                }
            }
            Some("message") => {
                added["content"] = json!([]);
                push(
                    json!({"type": "response.output_item.added", "output_index": index, "item": added}),
                );
                let text = item["content"][0]["text"].as_str().expect("a text");
                for piece in pieces(text, 5) {
                    push(
                        json!({"type": "response.output_text.delta", "item_id": id, "output_index": index, "content_index": 0, "delta": piece, "logprobs": []}),
                    );
                }
            }
            Some("function_call") => {
                added["arguments"] = json!("");
                push(
                    json!({"type": "response.output_item.added", "output_index": index, "item": added}),
                );
                let arguments = item["arguments"].as_str().expect("arguments");
                for piece in pieces(arguments, 6) {
                    push(
                        json!({"type": "response.function_call_arguments.delta", "item_id": id, "output_index": index, "delta": piece}),
                    );
                }
            }
            _ => {}
        }
        push(json!({"type": "response.output_item.done", "output_index": index, "item": item}));
    }
    push(json!({"type": "response.completed", "response": response}));
    body
}

/// The start of a stream: created, and a text delta.
pub fn stream_start() -> String {
    let whole = stream_of(&answer());
    let first_delta = whole.find("event: response.output_text.delta").unwrap();
    let end = first_delta + whole[first_delta..].find("\n\n").unwrap() + 2;
    whole[..end].to_owned()
}

/// One server-sent event carrying `data`, named by its type.
pub fn event(data: &Value) -> String {
    sse(Some(data["type"].as_str().expect("a type")), data)
}
