//! What storing a turn costs as a conversation grows: appending one turn (a question and its
//! answer) to an SQLite session at turn 1 and at turn 300, each append then cut back so every
//! iteration appends at the same length. Appends do not rewrite the conversation, so the two
//! should cost about the same (the budget: turn 300 at most 1.5x turn 1).
//!
//! `cargo bench -p tests --bench session_turns`

use agent_core::Message;
use agent_core::session::{Append, SessionStore};
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
