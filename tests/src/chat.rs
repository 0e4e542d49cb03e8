//! The web endpoint as clients see it: a user's message in the AI SDK's shape, a POST of a chat
//! body, the answer id a stream starts with, and UI messages and stored messages read as lines.

use std::time::{Duration, Instant};

use agent_core::session::SessionStore;
use agent_core::{Message, ToolResultMessage};
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

/// Posts `body` to the chat endpoint of the server at `base`, reads the stream until it holds
/// `until` (a call under way, say), and hangs up; the response's headers.
pub async fn post_and_hang_up(base: &str, body: &Value, until: &str) -> reqwest::header::HeaderMap {
    let mut reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(body)
        .send()
        .await
        .unwrap();
    let mut seen = String::new();
    while !seen.contains(until) {
        let piece = reply.chunk().await.unwrap().expect("more of the stream");
        seen.push_str(&String::from_utf8_lossy(&piece));
    }
    reply.headers().clone()
}

/// Rejoins the answer under way in chat `chat` at `base` (`GET /api/chat/{chat}/stream`, what the
/// AI SDK's `resume` asks) and reads it to its end; asserts it is a UI message stream read whole:
/// from its `start` chunk, through a call's input, to `answer` and `[DONE]`. The stream.
pub async fn rejoined_whole(base: &str, chat: &str, answer: &str) -> String {
    let rejoined = reqwest::get(format!("{base}/api/chat/{chat}/stream"))
        .await
        .unwrap();
    assert_eq!(rejoined.status().as_u16(), 200);
    assert_eq!(rejoined.headers()["x-vercel-ai-ui-message-stream"], "v1");
    let stream = rejoined.text().await.unwrap();
    let start = stream
        .find(r#""type":"start""#)
        .expect("from the first chunk");
    let call = stream.find("tool-input-available").unwrap();
    let answered = stream.find(answer).unwrap();
    assert!(start < call && call < answered, "{stream}");
    assert!(stream.trim_end().ends_with("data: [DONE]"), "{stream}");
    stream
}

/// Asks the server at `base` to stop the answer under way in chat `chat` (`DELETE
/// /api/chat/{chat}/stream`); the status.
pub async fn stop(base: &str, chat: &str) -> u16 {
    let stopped = reqwest::Client::new()
        .delete(format!("{base}/api/chat/{chat}/stream"))
        .send()
        .await
        .unwrap();
    stopped.status().as_u16()
}

/// The result that closes the conversation `chat` kept in `store`, once its last message is one:
/// what a stopped run answers its call with. Fails when none is there within `within`.
pub async fn last_result(
    store: &dyn SessionStore,
    chat: &str,
    within: Duration,
) -> ToolResultMessage {
    let started = Instant::now();
    loop {
        let kept = store.load(chat).await.unwrap().messages;
        if let Some(Message::Tool(result)) = kept.last() {
            return result.clone();
        }
        assert!(started.elapsed() < within, "{kept:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
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

/// A chat's UI messages as lines: the role, then each part (a text, a call's tool and state, a
/// file's type); step starts and reasoning left out.
pub fn lines(messages: &Value) -> Vec<String> {
    messages
        .as_array()
        .unwrap()
        .iter()
        .map(|message| {
            let parts: Vec<String> = message["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|part| {
                    let kind = part["type"].as_str().unwrap();
                    match kind {
                        "text" => Some(part["text"].as_str().unwrap().to_owned()),
                        "file" => Some(format!("file {}", part["mediaType"].as_str().unwrap())),
                        _ if kind.starts_with("tool-") => {
                            Some(format!("{kind} {}", part["state"].as_str().unwrap()))
                        }
                        _ => None,
                    }
                })
                .collect();
            format!(
                "{}: {}",
                message["role"].as_str().unwrap(),
                parts.join(" | ")
            )
        })
        .collect()
}

/// The first part of type `kind` in a UI message.
pub fn part<'m>(message: &'m Value, kind: &str) -> &'m Value {
    let parts = message["parts"].as_array().unwrap();
    parts
        .iter()
        .find(|part| part["type"] == kind)
        .unwrap_or_else(|| panic!("no `{kind}` part in {parts:?}"))
}

/// A stored message as one line: `system`, `user: {text}`, `assistant: {text}` (or `assistant:
/// calls {tool}` for a reply that calls tools), `tool: {result}`.
pub fn line(message: &Message) -> String {
    match message {
        Message::System { .. } => "system".to_owned(),
        Message::User { content, .. } => format!("user: {content}"),
        Message::Assistant(reply) if reply.tool_calls.is_empty() => {
            format!("assistant: {}", reply.content)
        }
        Message::Assistant(reply) => format!("assistant: calls {}", reply.tool_calls[0].name),
        Message::Tool(result) => format!("tool: {}", result.content),
        other => format!("{other:?}"),
    }
}
