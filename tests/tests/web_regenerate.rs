//! A regenerate or an edit never makes a tool's effect happen again unknowingly, against the web
//! endpoint over loopback: a regenerate keeps the steps whose calls had effects (the model answers
//! again after them, shown what ran), and a request that would take such steps back (an edit, a
//! regenerate of an earlier answer) is refused with a `409` naming the tools, the chat unchanged.
//! Calls of tools marked read-only or idempotent are taken back like text.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, ToolCall, tool};
use agent_web::ChatServer;
use serde_json::json;
use tests::chat::{answer_id, line, post, user};
use tests::serve_chat;

/// Emails sent so far.
type Outbox = Arc<AtomicUsize>;

/// Send an email.
#[tool]
fn send_email(
    State(outbox): State<Outbox>,
    /// Who to.
    to: String,
) -> String {
    outbox.fetch_add(1, Ordering::SeqCst);
    format!("sent to {to}")
}

/// A chat endpoint whose model answers `replies` in turn, with `send_email`; its URL, the store,
/// the outbox and the model.
async fn serve(
    replies: Vec<AssistantMessage>,
) -> (String, Arc<MemorySessions>, Outbox, ScriptedModel) {
    let model = ScriptedModel::new(replies);
    let outbox = Outbox::default();
    let agent = Agent::new(model.clone())
        .try_tool(send_email {})
        .unwrap()
        .bind_context(Arc::clone(&outbox));
    let store = Arc::new(MemorySessions::new());
    let server = ChatServer::new(Arc::new(agent)).sessions(store.clone());
    (serve_chat(server).await, store, outbox, model)
}

fn emailing(to: &str) -> AssistantMessage {
    AssistantMessage::tool_calls([ToolCall::new(
        "call_1",
        "send_email",
        json!({ "to": to }).to_string(),
    )])
}

/// Each kept message as one line.
async fn kept(store: &MemorySessions, chat: &str) -> Vec<String> {
    let conversation = store.load(chat).await.unwrap();
    conversation.messages.iter().map(line).collect()
}

#[tokio::test]
async fn a_regenerate_keeps_what_the_answers_tools_did() {
    let (base, store, outbox, model) = serve(vec![
        emailing("ada"),
        AssistantMessage::text("Sent."),
        AssistantMessage::text("Your email to Ada went out."),
    ])
    .await;
    let ask = user("u1", "Email Ada");
    let (status, stream) = post(&base, &json!({ "id": "c", "messages": [ask] })).await;
    assert_eq!(status, 200, "{stream}");
    assert_eq!(outbox.load(Ordering::SeqCst), 1);

    let again = json!({ "id": "c", "trigger": "regenerate-message", "messages": [ask] });
    let (status, stream) = post(&base, &again).await;
    assert_eq!(status, 200, "{stream}");
    assert!(stream.contains("Your email to Ada went out."), "{stream}");
    // The email went out once; the model answered again shown that it had.
    assert_eq!(outbox.load(Ordering::SeqCst), 1);
    let shown: Vec<String> = model.requests()[2].messages.iter().map(line).collect();
    assert_eq!(
        shown,
        [
            "system",
            "user: Email Ada",
            "assistant: calls send_email",
            "tool: sent to ada"
        ]
    );
    assert_eq!(
        kept(&store, "c").await,
        [
            "system",
            "user: Email Ada",
            "assistant: calls send_email",
            "tool: sent to ada",
            "assistant: Your email to Ada went out."
        ]
    );
}

#[tokio::test]
async fn an_edit_that_would_take_back_an_email_is_refused() {
    let (base, store, outbox, model) = serve(vec![
        emailing("ada"),
        AssistantMessage::text("Sent."),
        AssistantMessage::text("Hello."),
    ])
    .await;
    let ask = json!({ "id": "c", "messages": [user("u1", "Email Ada")] });
    let (status, stream) = post(&base, &ask).await;
    assert_eq!(status, 200, "{stream}");
    let before = kept(&store, "c").await;

    let edit = json!({
        "id": "c",
        "trigger": "submit-message",
        "messageId": "u1",
        "messages": [user("u1", "Email Bob")]
    });
    let (status, refused) = post(&base, &edit).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused.contains("send_email"), "{refused}");
    assert_eq!(kept(&store, "c").await, before);
    assert_eq!(outbox.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 2);

    // The chat goes on with a new message.
    let answer = json!({ "id": answer_id(&stream), "role": "assistant", "parts": [] });
    let next =
        json!({ "id": "c", "messages": [user("u1", "Email Ada"), answer, user("u2", "Hi")] });
    let (status, stream) = post(&base, &next).await;
    assert_eq!(status, 200, "{stream}");
    assert!(stream.contains("Hello."), "{stream}");
}

#[tokio::test]
async fn regenerating_an_earlier_answer_after_an_email_is_refused() {
    let (base, store, outbox, model) = serve(vec![
        AssistantMessage::text("Hi!"),
        emailing("ada"),
        AssistantMessage::text("Sent."),
    ])
    .await;
    let (status, first) = post(&base, &json!({ "id": "c", "messages": [user("u1", "Hi")] })).await;
    assert_eq!(status, 200, "{first}");
    let hi = json!({ "id": answer_id(&first), "role": "assistant", "parts": [{ "type": "text", "text": "Hi!" }] });
    let body = json!({ "id": "c", "messages": [user("u1", "Hi"), hi, user("u2", "Email Ada")] });
    let (status, stream) = post(&base, &body).await;
    assert_eq!(status, 200, "{stream}");
    let before = kept(&store, "c").await;

    let again = json!({
        "id": "c",
        "trigger": "regenerate-message",
        "messageId": answer_id(&first),
        "messages": [user("u1", "Hi")]
    });
    let (status, refused) = post(&base, &again).await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused.contains("send_email"), "{refused}");
    assert_eq!(kept(&store, "c").await, before);
    assert_eq!(outbox.load(Ordering::SeqCst), 1);
    assert_eq!(model.requests().len(), 3);
}
