//! Requests on one chat at once, against the web endpoint over loopback, on a store whose holds
//! take a while to get (a lock in a database across a network, a pool's connection): each request
//! is planned and run under one hold of the chat, so no other request's run gets in between, and
//! the chat is kept as question, answer, question, answer.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::session::{
    Append, Conversation, ConversationHold, Listed, MemorySessions, SessionError, SessionStore,
};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, BoxFuture};
use agent_web::ChatServer;
use serde_json::json;
use tests::chat::{answer_id, line, post, user};
use tests::serve_chat;

/// Conversations in memory, whose holds are asked for after a delay each: the first hold asked
/// for waits the first of `delays` before it queues for the conversation, the second the second,
/// and so on; holds past the list, none.
struct SlowHold {
    inner: MemorySessions,
    delays: Mutex<VecDeque<Duration>>,
}

impl SessionStore for SlowHold {
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold> {
        let delay = self.delays.lock().unwrap().pop_front().unwrap_or_default();
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            self.inner.hold(id).await
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>> {
        self.inner.load(id)
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        self.inner.append(id, expected_len, added)
    }

    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        self.inner.truncate(id, expected_len, keep)
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>> {
        self.inner.list(prefix)
    }

    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        self.inner.set_title(id, title)
    }
}

/// Each kept message as `role: text`.
fn lines(conversation: &Conversation) -> Vec<String> {
    conversation.messages.iter().map(line).collect()
}

/// A regenerate of the last answer, and a new message sent while the regenerate is under way: the
/// new message is answered after the regenerated answer, never beside it. Each request holds the
/// chat once, from its plan to its run's end; were the plan and the run two holds, the fourth
/// hold (the regenerate's run, here slow to get) would let the new message in between.
#[tokio::test]
async fn a_regenerate_and_a_new_message_at_once_are_answered_in_turn() {
    let slow = Duration::from_millis(400);
    let store = Arc::new(SlowHold {
        inner: MemorySessions::new(),
        delays: Mutex::new(VecDeque::from([Duration::ZERO; 3])),
    });
    store.delays.lock().unwrap().push_back(slow);
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::text("Hi!"),
        AssistantMessage::text("Fine."),
    ]);
    let agent: Agent = Agent::new(model.clone());
    let base = serve_chat(ChatServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let hi = user("u1", "Hi");
    let (status, stream) = post(&base, &json!({ "id": "c", "messages": [hi] })).await;
    assert_eq!(status, 200, "{stream}");
    let first = answer_id(&stream);

    let again = json!({ "id": "c", "trigger": "regenerate-message", "messages": [hi] });
    let parts = [json!({ "type": "text", "text": "Hello!" })];
    let answer = json!({ "id": first, "role": "assistant", "parts": parts });
    let next = json!({ "id": "c", "messages": [hi, answer, user("u2", "How are you?")] });
    let regenerate = tokio::spawn({
        let base = base.clone();
        async move { post(&base, &again).await }
    });
    // The new message comes while the regenerate is under way.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (status, stream) = post(&base, &next).await;
    assert_eq!(status, 200, "{stream}");
    let (status, stream) = regenerate.await.unwrap();
    assert_eq!(status, 200, "{stream}");

    let kept = lines(&store.load("c").await.unwrap());
    assert_eq!(
        kept,
        [
            "system",
            "user: Hi",
            "assistant: Hi!",
            "user: How are you?",
            "assistant: Fine."
        ]
    );
}
