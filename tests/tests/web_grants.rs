//! Approvals and client-side results that cannot be forged, against the web endpoint over
//! loopback: each call a paused run waits on goes out with a grant (a `data-call-grant` part), and
//! an answer is taken only with the grant the server gave for that chat, that pause and that call.
//! A missing, altered, replayed or another chat's grant is a `403` with nothing run or stored;
//! grants hold across instances that share the keys, and across a rotation of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ExternalTool, State, ToolCall, tool};
use agent_web::ChatServer;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tests::chat::{answer_id, post, user};
use tests::serve_chat;

/// Folders wiped so far.
type Wiped = Arc<AtomicUsize>;

/// Deletes every file in a folder.
#[tool(requires_approval, destructive)]
fn wipe(
    State(wiped): State<Wiped>,
    /// The folder.
    folder: String,
) -> String {
    wiped.fetch_add(1, Ordering::SeqCst);
    format!("wiped {folder}")
}

/// The client-side tool's arguments: none.
#[derive(Deserialize, JsonSchema)]
struct Nothing {}

fn wiping() -> AssistantMessage {
    AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp/old"}"#)])
}

/// An endpoint on `store` whose model answers `replies`, signing grants with `keys`; its URL and
/// the count of wipes.
async fn serve(
    store: &Arc<MemorySessions>,
    replies: Vec<AssistantMessage>,
    keys: &[&str],
) -> (String, Wiped) {
    let wiped = Wiped::default();
    let agent = Agent::new(ScriptedModel::new(replies))
        .try_tool(wipe {})
        .unwrap()
        .try_tool(ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap()
        .defer_approvals()
        .bind_context(Arc::clone(&wiped));
    let server = ChatServer::new(Arc::new(agent))
        .sessions(store.clone())
        .grant_keys(keys.iter().copied());
    (serve_chat(server).await, wiped)
}

/// The stream's chunks.
fn chunks(stream: &str) -> Vec<Value> {
    stream
        .lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter_map(|data| serde_json::from_str(data).ok())
        .collect()
}

/// The grant part a stream gave call `call_id`.
fn grant_of(stream: &str, call_id: &str) -> Value {
    chunks(stream)
        .into_iter()
        .find(|chunk| chunk["type"] == "data-call-grant" && chunk["data"]["toolCallId"] == call_id)
        .unwrap_or_else(|| panic!("no grant for {call_id} in {stream}"))
}

/// Asks chat `chat` to clean up, at `base`: the stream, which asks for the wipe's approval.
async fn ask(base: &str, chat: &str) -> String {
    let (status, stream) = post(
        base,
        &json!({ "id": chat, "messages": [user("u1", "Clean up")] }),
    )
    .await;
    assert_eq!(status, 200, "{stream}");
    assert!(stream.contains("tool-approval-request"), "{stream}");
    stream
}

/// The message approving the wipe in the answer `asked` began, holding `grant` (if any).
fn approving(chat: &str, asked: &str, grant: Option<Value>) -> Value {
    let mut parts = vec![json!({
        "type": "tool-wipe", "toolCallId": "call_w", "state": "approval-responded",
        "input": { "folder": "/tmp/old" }, "approval": { "id": "call_w", "approved": true }
    })];
    parts.extend(grant);
    let answer = json!({ "id": answer_id(asked), "role": "assistant", "parts": parts });
    json!({ "id": chat, "messages": [answer] })
}

#[tokio::test]
async fn an_approval_without_its_grant_or_with_an_altered_one_is_refused() {
    let store = Arc::new(MemorySessions::new());
    let (base, wiped) = serve(
        &store,
        vec![wiping(), AssistantMessage::text("Done.")],
        &["k1"],
    )
    .await;
    let asked = ask(&base, "c").await;
    let before = store.load("c").await.unwrap();
    let grant = grant_of(&asked, "call_w");
    let mut altered = grant.clone();
    let text = altered["data"]["grant"].as_str().unwrap().to_owned();
    let flipped = if text.starts_with('A') { "B" } else { "A" };
    altered["data"]["grant"] = json!(format!("{flipped}{}", &text[1..]));
    for (what, body) in [
        ("no grant", approving("c", &asked, None)),
        ("an altered grant", approving("c", &asked, Some(altered))),
    ] {
        let (status, refused) = post(&base, &body).await;
        assert_eq!(status, 403, "{what}: {refused}");
        assert!(refused.contains("call_w"), "{refused}");
        assert_eq!(store.load("c").await.unwrap(), before, "{what}");
    }
    assert_eq!(wiped.load(Ordering::SeqCst), 0);

    let (status, stream) = post(&base, &approving("c", &asked, Some(grant))).await;
    assert_eq!(status, 200, "{stream}");
    assert!(stream.contains("wiped /tmp/old"), "{stream}");
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_grant_from_another_chat_or_an_earlier_pause_is_refused() {
    let store = Arc::new(MemorySessions::new());
    let replies = vec![
        wiping(),
        wiping(),
        AssistantMessage::text("Done."),
        wiping(),
    ];
    let (base, wiped) = serve(&store, replies, &["k1"]).await;
    let asked_a = ask(&base, "a").await;
    let asked_b = ask(&base, "b").await;
    // Chat b's call has the same id and arguments: chat a's grant is still not its.
    let (status, refused) = post(
        &base,
        &approving("b", &asked_b, Some(grant_of(&asked_a, "call_w"))),
    )
    .await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(wiped.load(Ordering::SeqCst), 0);

    // Chat a is approved with its own grant; it asks the same again later, and the old grant,
    // replayed, does not answer the new pause.
    let first_grant = grant_of(&asked_a, "call_w");
    let (status, stream) = post(&base, &approving("a", &asked_a, Some(first_grant.clone()))).await;
    assert_eq!(status, 200, "{stream}");
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
    let next = json!({ "id": "a", "messages": [user("u2", "Again")] });
    let (status, asked_again) = post(&base, &next).await;
    assert_eq!(status, 200, "{asked_again}");
    assert!(
        asked_again.contains("tool-approval-request"),
        "{asked_again}"
    );
    let (status, refused) = post(&base, &approving("a", &asked_again, Some(first_grant))).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn grants_hold_across_instances_that_share_a_key_and_its_rotation() {
    let store = Arc::new(MemorySessions::new());
    let (asking, _) = serve(&store, vec![wiping()], &["old-key"]).await;
    let asked = ask(&asking, "c").await;
    let approval = approving("c", &asked, Some(grant_of(&asked, "call_w")));
    // An instance that never had the key refuses it.
    let (stranger, stranger_wiped) = serve(&store, Vec::new(), &["new-key"]).await;
    let (status, refused) = post(&stranger, &approval).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(stranger_wiped.load(Ordering::SeqCst), 0);
    // One rotated to a new key, keeping the old one to verify, takes it.
    let replies = vec![AssistantMessage::text("Done.")];
    let (rotated, wiped) = serve(&store, replies, &["new-key", "old-key"]).await;
    let (status, stream) = post(&rotated, &approval).await;
    assert_eq!(status, 200, "{stream}");
    assert_eq!(wiped.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_client_side_tools_result_needs_its_grant() {
    let store = Arc::new(MemorySessions::new());
    let replies = vec![
        AssistantMessage::tool_calls([ToolCall::new("call_c", "where_am_i", "{}")]),
        AssistantMessage::text("You are in Oslo."),
    ];
    let (base, _) = serve(&store, replies, &["k1"]).await;
    let (status, asked) = post(
        &base,
        &json!({ "id": "c", "messages": [user("u1", "Where am I?")] }),
    )
    .await;
    assert_eq!(status, 200, "{asked}");
    let result = |grant: Option<Value>| {
        let mut parts = vec![json!({
            "type": "tool-where_am_i", "toolCallId": "call_c", "state": "output-available",
            "input": {}, "output": { "city": "Oslo" }
        })];
        parts.extend(grant);
        let answer = json!({ "id": answer_id(&asked), "role": "assistant", "parts": parts });
        json!({ "id": "c", "messages": [answer] })
    };
    let before = store.load("c").await.unwrap();
    let (status, refused) = post(&base, &result(None)).await;
    assert_eq!(status, 403, "{refused}");
    assert_eq!(store.load("c").await.unwrap(), before);
    let (status, stream) = post(&base, &result(Some(grant_of(&asked, "call_c")))).await;
    assert_eq!(status, 200, "{stream}");
    assert!(stream.contains("You are in Oslo."), "{stream}");
}
