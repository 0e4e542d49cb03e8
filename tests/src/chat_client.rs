//! The web endpoint as the AI SDK's `Chat` drives it (`tests/tests/web_chat_client*.rs`): an
//! endpoint served on loopback, messages as lines, what the model was shown and what a chat's
//! session keeps, and the agents the tests chat with.

use agent_core::session::SessionStore;
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Message, Part, ToolCall};
use agent_web::ChatServer;
use serde_json::Value;

use crate::wipe;

/// Look up today's weather for a city: a lookup that changes nothing, so an answer that called it
/// may be taken back whole (a regenerate or an edit keeps the steps of tools with effects).
#[agent_core::tool(read_only, name = "get_weather")]
pub fn weather_lookup(
    /// The city.
    city: String,
) -> String {
    format!("light rain in {city}")
}

/// Serves `server` on a loopback port; returns its chat endpoint's URL.
pub async fn serve(server: ChatServer) -> String {
    format!("{}/api/chat", crate::serve_chat(server).await)
}

/// A message as one line: its role, then its text, calls, results and files.
pub fn line(message: &Message) -> String {
    match message {
        Message::System { .. } => "system".to_owned(),
        Message::User { content, parts } => {
            let mut pieces: Vec<String> = Vec::new();
            if !content.is_empty() {
                pieces.push(content.clone());
            }
            for part in parts {
                match part {
                    Part::Text { text } => pieces.push(text.clone()),
                    media => pieces.push(media.media().unwrap().media_type.clone()),
                }
            }
            format!("user: {}", pieces.join(" | "))
        }
        Message::Assistant(reply) => {
            let mut pieces: Vec<String> = Vec::new();
            if !reply.content.is_empty() {
                pieces.push(reply.content.clone());
            }
            for call in &reply.tool_calls {
                pieces.push(format!("calls {}", call.name));
            }
            format!("assistant: {}", pieces.join(" | "))
        }
        Message::Tool(result) => format!("tool {}: {}", result.tool_call_id, result.content),
        other => format!("{other:?}"),
    }
}

/// Each request the model received, as the lines of the messages it was shown.
pub fn shown(model: &ScriptedModel) -> Vec<Vec<String>> {
    model
        .requests()
        .iter()
        .map(|request| request.messages.iter().map(line).collect())
        .collect()
}

/// The lines of the conversation `chat` keeps, after checking no run waits in it.
pub async fn kept(store: &dyn SessionStore, chat: &str) -> Vec<String> {
    let conversation = store.load(chat).await.unwrap();
    assert!(conversation.paused.is_none(), "{:?}", conversation.paused);
    conversation.messages.iter().map(line).collect()
}

/// What each request of a session posted: its trigger.
pub fn triggers(session: &Value) -> Vec<&str> {
    session["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|request| request["trigger"].as_str().unwrap())
        .collect()
}

/// A model that asks to wipe `/tmp/old`, then says each of `then`, and its agent, which leaves
/// the approval to the person.
pub fn wiping(then: &[&str]) -> (ScriptedModel, Agent) {
    let mut script = vec![AssistantMessage::tool_calls([ToolCall::new(
        "call_w",
        "wipe",
        r#"{"folder":"/tmp/old"}"#,
    )])];
    script.extend(then.iter().map(|text| AssistantMessage::text(*text)));
    let model = ScriptedModel::new(script);
    let agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    (model, agent)
}

/// Posts `body` to `api`; the status and the JSON error, or the stream's text.
pub async fn post(api: &str, body: &Value) -> (u16, String) {
    let reply = reqwest::Client::new()
        .post(api)
        .json(body)
        .send()
        .await
        .unwrap();
    (reply.status().as_u16(), reply.text().await.unwrap())
}
