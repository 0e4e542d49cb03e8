//! How a chat is titled, against the web endpoint over loopback with a scripted model: by the
//! server's own function of the first exchange, or by a model asked for a title once the answer
//! has gone out (its failure leaves the question's first words). A server that does not identify
//! callers lists nothing, but still titles what it keeps.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{Agent, AssistantMessage, ModelError};
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::{post, user};

/// Serves an agent that answers "Rain." with `title` applied to the server, keeping chats in the
/// store it returns; asks "oslo?" in chat `c`.
async fn asked_once(title: impl FnOnce(ChatServer) -> ChatServer) -> (String, Arc<MemorySessions>) {
    let agent: Agent = Agent::new(ScriptedModel::new([AssistantMessage::text("Rain.")]));
    let store = Arc::new(MemorySessions::new());
    let server = title(ChatServer::new(Arc::new(agent)).sessions(store.clone()));
    let base = tests::serve_chat(server).await;
    let (status, body) = post(
        &base,
        &json!({ "id": "c", "messages": [user("m1", "oslo?")] }),
    )
    .await;
    assert_eq!(status, 200, "{body}");
    (base, store)
}

/// The title kept for the only chat of `store`, once it has one (a model's comes after the
/// stream ends), or `None` after a second.
async fn kept_title(store: &MemorySessions) -> Option<String> {
    let started = Instant::now();
    loop {
        let title = store.list("").await.unwrap()[0].title.clone();
        if title.is_some() || started.elapsed() > Duration::from_secs(1) {
            return title;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_server_that_does_not_identify_callers_lists_nothing_and_titles_its_own_way() {
    let (base, store) = asked_once(|server| {
        server.title(|question, run| {
            Some(format!("{} ({} step)", question.to_uppercase(), run.steps))
        })
    })
    .await;
    let listed = reqwest::get(format!("{base}/api/chats")).await.unwrap();
    assert_eq!(listed.status().as_u16(), 200);
    assert_eq!(listed.json::<Value>().await.unwrap(), json!([]));
    // The server's function titled it before the stream ended.
    let kept = store.list("").await.unwrap();
    assert_eq!(kept[0].title.as_deref(), Some("OSLO? (1 step)"));
}

#[tokio::test]
async fn a_model_titles_a_chat_from_its_first_exchange() {
    let titler = Arc::new(ScriptedModel::new([AssistantMessage::text(
        "\"Oslo rain.\"",
    )]));
    let model = Arc::clone(&titler);
    let (_, store) = asked_once(|server| server.title_by_model(model)).await;
    assert_eq!(kept_title(&store).await.as_deref(), Some("Oslo rain"));
    // It was shown the exchange, and offered no tools.
    let asked = titler.requests();
    assert_eq!(asked.len(), 1);
    let prompt = asked[0].messages[0].content();
    assert!(
        prompt.contains("oslo?") && prompt.contains("Rain."),
        "{prompt}"
    );
    assert!(asked[0].tools.is_empty());
}

#[tokio::test]
async fn a_model_that_cannot_title_a_chat_leaves_the_questions_first_words() {
    let titler = ScriptedModel::from_steps([ScriptStep::error(|| ModelError::Transport {
        message: "connection refused".into(),
    })]);
    let (_, store) = asked_once(|server| server.title_by_model(titler)).await;
    assert_eq!(kept_title(&store).await.as_deref(), Some("oslo?"));
}
