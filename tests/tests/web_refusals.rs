//! What the web endpoint refuses, and in what words, over loopback with a scripted model and a
//! signed-in user: an answer to a call that does not wait (replayed after its call was answered,
//! or naming a call the run never asked about) is a `403` before any stream starts, a new question
//! while calls wait is a `409`, and no answer a client reads (a refusal's body, a stream's error)
//! holds the store's key (the owner and the chat id joined) or another pause's calls.

use std::sync::Arc;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ToolCall};
use agent_web::{ChatOwner, ChatServer};
use axum::http::StatusCode;
use serde_json::{Value, json};
use tests::chat::{answer_id, user};
use tests::wipe;

/// The signed-in user.
#[derive(Clone)]
struct UserId(String);

impl ChatOwner for UserId {
    fn owner(&self) -> &str {
        &self.0
    }
}

/// The owner every request here signs in as: a name the store's keys start with.
const OWNER: &str = "owner-ann";

/// An endpoint whose model asks to wipe a folder (an approval), says it did, then asks again; its
/// URL and store. Every request is [`OWNER`]'s.
async fn serve() -> (String, Arc<MemorySessions>) {
    let wiping =
        || AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/a"}"#)]);
    let model = ScriptedModel::new([
        wiping(),
        AssistantMessage::text("Wiped."),
        wiping(),
        AssistantMessage::text("Wiped again."),
    ]);
    let agent: Agent<UserId> = Agent::new(model)
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let store = Arc::new(MemorySessions::new());
    let server = ChatServer::new(Arc::new(agent))
        .identify(|_| async { Ok::<_, StatusCode>(UserId(OWNER.to_owned())) })
        .sessions(store.clone());
    (tests::serve_chat(server).await, store)
}

/// A reply read whole: its status, content type and body.
struct Reply {
    status: u16,
    content_type: String,
    body: String,
}

async fn post(base: &str, body: &Value) -> Reply {
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(body)
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let content_type = reply.headers()["content-type"].to_str().unwrap().to_owned();
    Reply {
        status,
        content_type,
        body: reply.text().await.unwrap(),
    }
}

/// The `data-call-grant` part a stream gave.
fn grant_of(stream: &str) -> Value {
    let grant = stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str::<Value>(data).ok())
        .find(|chunk| chunk["type"] == "data-call-grant");
    grant.unwrap_or_else(|| panic!("no grant in {stream}"))
}

/// The message answering call `call_id` in the answer `asked` began: approved, with `grant`.
fn approving(asked: &str, call_id: &str, grant: &Value) -> Value {
    let parts = [
        json!({
            "type": "tool-wipe", "toolCallId": call_id, "state": "approval-responded",
            "input": { "folder": "/a" }, "approval": { "id": call_id, "approved": true }
        }),
        grant.clone(),
    ];
    let answer = json!({ "id": answer_id(asked), "role": "assistant", "parts": parts });
    json!({ "id": "c", "messages": [answer] })
}

/// Whether `text` holds a store key of the owner's: the owner, or the separator the key joins
/// with (raw, or as JSON writes it).
fn holds_a_store_key(text: &str) -> bool {
    text.contains(OWNER) || text.contains('\u{1f}') || text.to_lowercase().contains("\\u001f")
}

#[tokio::test]
async fn answers_to_calls_that_do_not_wait_are_a_403_before_any_stream() {
    let (base, store) = serve().await;
    let asked = post(
        &base,
        &json!({ "id": "c", "messages": [user("u1", "Clean up")] }),
    )
    .await;
    assert_eq!(asked.status, 200, "{}", asked.body);
    let grant = grant_of(&asked.body);
    let approval = approving(&asked.body, "call_w", &grant);
    let approved = post(&base, &approval).await;
    assert!(approved.body.contains("Wiped."), "{}", approved.body);
    let mut refusals = Vec::new();

    // The same approval again: its call was answered, no run waits.
    let before = store.load(&format!("{OWNER}\u{1f}c")).await.unwrap();
    let replayed = post(&base, &approval).await;
    assert_eq!(replayed.status, 403, "{}", replayed.body);
    assert_eq!(replayed.content_type, "application/json");
    assert_eq!(
        store.load(&format!("{OWNER}\u{1f}c")).await.unwrap(),
        before
    );
    refusals.push(replayed);

    // The chat asks again; an answer to a call it never asked about, holding the waiting call's
    // grant, is refused too.
    let again = post(
        &base,
        &json!({ "id": "c", "messages": [user("u2", "Again")] }),
    )
    .await;
    assert_eq!(again.status, 200, "{}", again.body);
    let mut grant = grant_of(&again.body);
    grant["data"]["toolCallId"] = json!("call_other");
    let stranger = post(&base, &approving(&again.body, "call_other", &grant)).await;
    assert_eq!(stranger.status, 403, "{}", stranger.body);
    assert_eq!(stranger.content_type, "application/json");
    refusals.push(stranger);

    // A new question while the call waits: a `409`, nothing asked of the model.
    let question = post(
        &base,
        &json!({ "id": "c", "messages": [user("u3", "Hello?")] }),
    )
    .await;
    assert_eq!(question.status, 409, "{}", question.body);
    assert_eq!(question.content_type, "application/json");
    refusals.push(question);

    for refusal in &refusals {
        let error: Value = serde_json::from_str(&refusal.body).unwrap();
        let words = error["error"].as_str().unwrap();
        assert!(words.contains("chat `c`"), "{words}");
        assert!(!holds_a_store_key(&refusal.body), "{}", refusal.body);
    }
    // The waiting call is still answerable with its own grant.
    let waiting = grant_of(&again.body);
    let approved = post(&base, &approving(&again.body, "call_w", &waiting)).await;
    assert_eq!(approved.status, 200, "{}", approved.body);
}
