//! An answer in progress outlives its connection for a while, against the web endpoint over
//! loopback: a client that reloads rejoins it (`GET /api/chat/{id}/stream`, what the AI SDK's
//! `resume` asks) and reads it whole from its first chunk, the run never interrupted; a client's
//! stop (`DELETE /api/chat/{id}/stream`) cancels it at once, what it did kept; with no answer in
//! progress, a rejoin is a `204` and a stop a `404`.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, ToolCall, tool};
use agent_web::ChatServer;
use serde_json::json;
use tests::chat::{last_result, post_and_hang_up, rejoined_whole, stop, user};
use tests::serve_chat;

/// Calls of the slow tool that finished.
type Finished = Arc<AtomicUsize>;

/// Looks something up, slowly.
#[tool]
async fn slow_lookup(State(finished): State<Finished>) -> String {
    tokio::time::sleep(Duration::from_millis(600)).await;
    finished.fetch_add(1, Ordering::SeqCst);
    "found it".to_owned()
}

/// An endpoint whose model calls the slow tool, then answers; its URL, store and tool count.
async fn serve() -> (String, Arc<MemorySessions>, Finished) {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_s", "slow_lookup", "{}")]),
        AssistantMessage::text("Here is what I found."),
    ]);
    let finished = Finished::default();
    let agent = Agent::new(model)
        .try_tool(slow_lookup {})
        .unwrap()
        .bind_context(Arc::clone(&finished));
    let store = Arc::new(MemorySessions::new());
    let server = ChatServer::new(Arc::new(agent))
        .sessions(store.clone())
        .rejoin_within(Duration::from_secs(3));
    (serve_chat(server).await, store, finished)
}

/// Starts an answer in chat `chat` and hangs up once its call is under way.
async fn start_and_hang_up(base: &str, chat: &str) {
    let body = json!({ "id": chat, "messages": [user("m1", "Look it up")] });
    post_and_hang_up(base, &body, "tool-input-available").await;
}

#[tokio::test]
async fn a_reload_rejoins_the_answer_in_progress_and_reads_it_whole() {
    let (base, store, finished) = serve().await;
    start_and_hang_up(&base, "c").await;
    // The page reloads and rejoins.
    rejoined_whole(&base, "c", "Here is what I found.").await;
    // The run was never interrupted: the call finished once, and the answer is kept.
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    let kept = store.load("c").await.unwrap().messages;
    assert_eq!(kept.last().unwrap().content(), "Here is what I found.");
    // Over: nothing to rejoin.
    let after = reqwest::get(format!("{base}/api/chat/c/stream"))
        .await
        .unwrap();
    assert_eq!(after.status().as_u16(), 204);
}

#[tokio::test]
async fn a_stop_cancels_the_answer_at_once_and_keeps_what_it_did() {
    let (base, store, finished) = serve().await;
    start_and_hang_up(&base, "c").await;
    let stopped = Instant::now();
    assert_eq!(stop(&base, "c").await, 204);
    // The run ends long before the tool would have, its call answered as interrupted.
    let result = last_result(&*store, "c", Duration::from_secs(2)).await;
    assert!(stopped.elapsed() < Duration::from_millis(550));
    assert!(result.is_error, "{result:?}");
    assert_eq!(finished.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn with_no_answer_in_progress_a_rejoin_is_a_204_and_a_stop_a_404() {
    let (base, _, _) = serve().await;
    let rejoin = reqwest::get(format!("{base}/api/chat/none/stream"))
        .await
        .unwrap();
    assert_eq!(rejoin.status().as_u16(), 204);
    assert_eq!(stop(&base, "none").await, 404);
}
