//! What a turn costs as a conversation grows, in an SQLite session, at turn 1 and at turn 300
//! (the budget: turn 300 at most 1.5x turn 1):
//!
//! - `turn_*`: storing a turn (a question and its answer) alone, each append then cut back so
//!   every iteration appends at the same length;
//! - `run_turn_*`: a whole turn, end to end: a run in the session (loading the conversation,
//!   the context policy's cut, a model that answers at once, the append), cut back after each
//!   (outside the time).
//!
//! `cargo bench -p tests --bench session_turns`

use agent_core::context::KeepLastTurns;
use agent_core::session::{Append, SessionStore};
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message, Model, ModelError,
};
use agent_sql::SqliteSessions;
use divan::Bencher;

fn main() {
    divan::main();
}

/// A turn of the conversation: the question and the answer.
fn turn(index: usize) -> [Message; 2] {
    [
        Message::user(format!(
            "Question {index}: where is order 88213, and when will it come?"
        )),
        Message::Assistant(agent_core::AssistantMessage::text(format!(
            "Answer {index}: it left the Hamburg depot this morning and arrives on Friday."
        ))),
    ]
}

/// Appends one turn to a conversation of `turns` turns and cuts it back, once per iteration.
fn append_at(bencher: Bencher, turns: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteSessions::open(directory.path().join("turns.db")).unwrap();
    let mut length = 0;
    runtime.block_on(async {
        for index in 0..turns {
            store
                .append("mei", length, Append::messages(&turn(index)))
                .await
                .unwrap();
            length += 2;
        }
    });
    let next = turn(turns);
    bencher.bench_local(|| {
        runtime.block_on(async {
            store
                .append("mei", length, Append::messages(&next))
                .await
                .unwrap();
            store.truncate("mei", length + 2, length).await.unwrap();
        })
    });
}

#[divan::bench]
fn turn_1(bencher: Bencher) {
    append_at(bencher, 1);
}

#[divan::bench]
fn turn_300(bencher: Bencher) {
    append_at(bencher, 300);
}

/// A model that answers every request at once with the same text.
struct Answers;

impl Model for Answers {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let answer = "It left the Hamburg depot this morning and arrives on Friday.";
        let reply = ChatResponse::new(AssistantMessage::text(answer));
        Box::pin(std::future::ready(Ok(reply)))
    }
}

/// Runs one turn of a conversation of `turns` turns, end to end, and cuts it back (untimed).
fn run_at(bencher: Bencher, turns: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteSessions::open(directory.path().join("turns.db")).unwrap();
    let agent = Agent::new(Answers).context_policy(KeepLastTurns(20));
    let question = "Where is order 88213, and when will it come?";
    runtime.block_on(async {
        for _ in 0..turns {
            let _ = agent.run(question).session(&store, "mei").await.unwrap();
        }
    });
    // The system prompt, then a question and an answer a turn.
    let length = 1 + 2 * turns;
    bencher
        .with_inputs(|| {
            runtime
                .block_on(store.truncate("mei", length + 2, length))
                .ok();
        })
        .bench_local_values(|()| {
            runtime.block_on(async {
                let _ = agent.run(question).session(&store, "mei").await.unwrap();
            })
        });
}

#[divan::bench(sample_size = 1, sample_count = 400)]
fn run_turn_1(bencher: Bencher) {
    run_at(bencher, 1);
}

#[divan::bench(sample_size = 1, sample_count = 400)]
fn run_turn_300(bencher: Bencher) {
    run_at(bencher, 300);
}
