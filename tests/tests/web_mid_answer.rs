//! A chat caught in the middle of an answer, over loopback, with its chats in memory and in
//! PostgreSQL (a real server started by the test, see `tests::postgres`): the model writes half of
//! a reply and waits there until the test lets it go on.
//!
//! A reload then (`GET /api/chat/{id}`) reads back every message the chat keeps and the question
//! being answered, and the rejoined stream (`GET /api/chat/{id}/stream`) the answer so far; on a
//! chat's first turn, the question alone. A stop then, or a client gone for the rejoin window,
//! keeps the half written in the chat, as the stream showed it.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, BoxStream, ChatRequest, ChatResponse, Message, Model,
    ModelError, StreamEvent,
};
use agent_sql::PostgresSessions;
use agent_web::ChatServer;
use serde_json::{Value, json};
use tests::chat::{lines, post, post_and_hang_up, stop, user};
use tests::peers::Test;
use tests::postgres::POSTGRES;
use tokio::sync::Semaphore;

/// A model that streams each scripted reply's text in two halves and waits between them until the
/// test lets a reply go on ([`HalfWay::go_on`]): an answer caught in the middle of a reply.
#[derive(Clone)]
struct HalfWay {
    script: ScriptedModel,
    /// A permit for each reply that may be written whole.
    gate: Arc<Semaphore>,
}

/// Where a [`HalfWay`] reply's stream is.
enum Writing {
    Asked,
    Half(ChatResponse, String),
    Whole(ChatResponse),
    Done,
}

impl HalfWay {
    fn new(replies: impl IntoIterator<Item = AssistantMessage>) -> Self {
        HalfWay {
            script: ScriptedModel::new(replies),
            gate: Arc::new(Semaphore::new(0)),
        }
    }

    /// Lets `replies` more replies be written whole.
    fn go_on(&self, replies: usize) {
        self.gate.add_permits(replies);
    }
}

/// The first half of `text` (by characters), and the rest.
fn halves(text: &str) -> (String, String) {
    let at = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(at, _)| at);
    (text[..at].to_owned(), text[at..].to_owned())
}

impl Model for HalfWay {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.script.chat(request)
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        Box::pin(futures_util::stream::unfold(
            Writing::Asked,
            move |writing| async move {
                match writing {
                    Writing::Asked => match self.script.chat(request).await {
                        Ok(reply) => {
                            let (first, rest) = halves(&reply.message.content);
                            let next = Writing::Half(reply, rest);
                            Some((Ok(StreamEvent::TextDelta(first)), next))
                        }
                        Err(error) => Some((Err(error), Writing::Done)),
                    },
                    Writing::Half(reply, rest) => {
                        self.gate.acquire().await.unwrap().forget();
                        Some((Ok(StreamEvent::TextDelta(rest)), Writing::Whole(reply)))
                    }
                    Writing::Whole(reply) => {
                        Some((Ok(StreamEvent::Finished(reply)), Writing::Done))
                    }
                    Writing::Done => None,
                }
            },
        ))
    }
}

/// Where the chats are kept.
#[derive(Clone, Copy)]
enum Kept {
    Memory,
    Postgres,
}

/// A store of that kind, empty (a database of its own, named after `name`).
async fn store(kept: Kept, name: &str) -> Arc<dyn SessionStore> {
    match kept {
        Kept::Memory => Arc::new(MemorySessions::new()),
        Kept::Postgres => {
            let url = tests::postgres::shared().fresh_database(name).await;
            Arc::new(PostgresSessions::connect(&url).await.unwrap())
        }
    }
}

/// Serves `model` on `store`, answers abandoned after `window` unread; the base URL.
async fn serve(model: &HalfWay, store: &Arc<dyn SessionStore>, window: Duration) -> String {
    let agent: Agent = Agent::new(model.clone());
    let server = ChatServer::new(Arc::new(agent))
        .sessions(Arc::clone(store))
        .rejoin_within(window);
    tests::serve_chat(server).await
}

/// Chat `chat` read back, as lines.
async fn read_back(base: &str, chat: &str) -> (u16, Vec<String>) {
    let reply = reqwest::get(format!("{base}/api/chat/{chat}"))
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let body: Value = reply.json().await.unwrap();
    let shown = if status == 200 {
        lines(&body)
    } else {
        Vec::new()
    };
    (status, shown)
}

/// The messages chat `chat` keeps, as lines (`user: ...`, `assistant: ...`).
async fn kept(store: &dyn SessionStore, chat: &str) -> Vec<String> {
    let conversation = store.load(chat).await.unwrap();
    (conversation.messages.iter())
        .filter(|message| !matches!(message, Message::System { .. }))
        .map(tests::chat::line)
        .collect()
}

/// Waits until chat `chat` keeps `lines`, or fails after 5 s.
async fn kept_within(store: &dyn SessionStore, chat: &str, lines: &[&str]) {
    let started = Instant::now();
    loop {
        let now = kept(store, chat).await;
        if now == lines {
            return;
        }
        assert!(started.elapsed() < Duration::from_secs(5), "{now:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A reload while the second answer is half written reads back the first exchange and the second
/// question, and the rejoined stream gives the half; on a first turn, the question alone. Once the
/// answers end, the chat reads back whole.
async fn a_reload_mid_answer_shows_every_stored_message_and_the_question(kept: Kept, name: &str) {
    let model = HalfWay::new([
        AssistantMessage::text("Hello there!"),
        AssistantMessage::text("Light rain in Oslo today."),
        AssistantMessage::text("Nice to meet you."),
    ]);
    let store = store(kept, name).await;
    let base = serve(&model, &store, Duration::from_secs(10)).await;
    model.go_on(1);
    let first = json!({ "id": "c", "messages": [user("u1", "Hi")] });
    let (status, stream) = post(&base, &first).await;
    assert_eq!(status, 200, "{stream}");

    let second = json!({ "id": "c", "messages": [user("u2", "Weather in Oslo?")] });
    post_and_hang_up(&base, &second, "Light rain").await;
    let (status, shown) = read_back(&base, "c").await;
    assert_eq!(status, 200);
    assert_eq!(
        shown,
        [
            "user: Hi",
            "assistant: Hello there!",
            "user: Weather in Oslo?"
        ]
    );
    let rejoined = reqwest::get(format!("{base}/api/chat/c/stream"))
        .await
        .unwrap();
    assert_eq!(rejoined.status().as_u16(), 200);

    // A first turn half written: its question.
    let opening = json!({ "id": "d", "messages": [user("u1", "Hello, I am Ann")] });
    post_and_hang_up(&base, &opening, "Nice to").await;
    let (status, shown) = read_back(&base, "d").await;
    assert_eq!(
        (status, shown),
        (200, vec!["user: Hello, I am Ann".to_owned()])
    );

    // Both go on and end: the chats read back whole, as they are kept.
    model.go_on(2);
    let stream = rejoined.text().await.unwrap();
    // From its first chunk: both halves.
    assert!(
        stream.contains(r#""delta":"Light rain i""#)
            && stream.contains(r#""delta":"n Oslo today.""#),
        "{stream}"
    );
    kept_within(
        &*store,
        "d",
        &["user: Hello, I am Ann", "assistant: Nice to meet you."],
    )
    .await;
    let whole = [
        "user: Hi",
        "assistant: Hello there!",
        "user: Weather in Oslo?",
        "assistant: Light rain in Oslo today.",
    ];
    kept_within(&*store, "c", &whole).await;
    assert_eq!(read_back(&base, "c").await.1, whole);
}

/// A stop while the reply is half written keeps the half in the chat; so does a client that goes
/// away and does not come back within the rejoin window.
async fn a_reply_stopped_halfway_keeps_what_it_wrote(kept: Kept, name: &str) {
    let model = HalfWay::new([
        AssistantMessage::text("Here is a long story about rain."),
        AssistantMessage::text("Another long story, about snow."),
    ]);
    let store = store(kept, name).await;
    let base = serve(&model, &store, Duration::from_millis(300)).await;
    let asked = json!({ "id": "c", "messages": [user("u1", "Tell me a story")] });
    post_and_hang_up(&base, &asked, "Here is a long").await;
    assert_eq!(stop(&base, "c").await, 204);
    kept_within(
        &*store,
        "c",
        &["user: Tell me a story", "assistant: Here is a long s"],
    )
    .await;
    // Read back as the stream had shown it.
    assert_eq!(
        read_back(&base, "c").await.1,
        ["user: Tell me a story", "assistant: Here is a long s"]
    );

    // Gone, never back: abandoned after the window, the half kept.
    let left = json!({ "id": "e", "messages": [user("u1", "Another one")] });
    post_and_hang_up(&base, &left, "Another long").await;
    kept_within(
        &*store,
        "e",
        &["user: Another one", "assistant: Another long st"],
    )
    .await;
}

fn main() -> ExitCode {
    let tests = vec![
        Test::tokio(
            "memory_a_reload_mid_answer_shows_every_stored_message",
            || a_reload_mid_answer_shows_every_stored_message_and_the_question(Kept::Memory, ""),
        ),
        Test::tokio(
            "postgres_a_reload_mid_answer_shows_every_stored_message",
            || {
                a_reload_mid_answer_shows_every_stored_message_and_the_question(
                    Kept::Postgres,
                    "mid_answer",
                )
            },
        )
        .needs(&POSTGRES),
        Test::tokio("memory_a_reply_stopped_halfway_keeps_what_it_wrote", || {
            a_reply_stopped_halfway_keeps_what_it_wrote(Kept::Memory, "")
        }),
        Test::tokio(
            "postgres_a_reply_stopped_halfway_keeps_what_it_wrote",
            || a_reply_stopped_halfway_keeps_what_it_wrote(Kept::Postgres, "stopped_halfway"),
        )
        .needs(&POSTGRES),
    ];
    let code = tests::peers::main(tests);
    tests::postgres::stop_shared();
    code
}
