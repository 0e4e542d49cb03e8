//! Requests to the web endpoint as a plain HTTP client makes them: a user's message in the AI
//! SDK's shape, a POST of a chat body, and the answer id a stream starts with.

use serde_json::{Value, json};

/// A user's message with the text `text`, the client's id `id`.
pub fn user(id: &str, text: &str) -> Value {
    json!({ "id": id, "role": "user", "parts": [{ "type": "text", "text": text }] })
}

/// Posts `body` to the chat endpoint of the server at `base`; the status and the response's text
/// (the stream, or the JSON error).
pub async fn post(base: &str, body: &Value) -> (u16, String) {
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.text().await.unwrap())
}

/// The answer id in a UI message stream: its `start` chunk's `messageId`.
pub fn answer_id(stream: &str) -> String {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk["type"] == "start")
        .unwrap_or_else(|| panic!("no start chunk in {stream}"))["messageId"]
        .as_str()
        .unwrap()
        .to_owned()
}
