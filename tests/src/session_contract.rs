//! The session store contract, for any store: the memory and SQLite stores' tests
//! (`tests/sessions.rs`) and the PostgreSQL store's (`tests/sessions_postgres.rs`) run the same
//! checks. Each takes the stores to check; two stores given are as two processes on one database.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::session::{Append, SessionError, SessionStore, Summary};
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Decision, Message, Model,
    ModelError, Price, PriceTable, RunError, StopReason, ToolCall, Usage, UsageByModel, tool,
};

/// What a note begins with to make `note` a slow tool: it takes [`SLOW_NOTE`] (for the tests
/// that kill a server while a tool runs).
pub const SLOWLY: &str = "slowly";

/// How long a note beginning with [`SLOWLY`] takes.
pub const SLOW_NOTE: Duration = Duration::from_secs(120);

/// Writes a note down (slowly when it begins with [`SLOWLY`]).
#[tool]
pub async fn note(
    /// What to note.
    text: String,
) -> String {
    if text.starts_with(SLOWLY) {
        tokio::time::sleep(SLOW_NOTE).await;
    }
    format!("noted: {text}")
}

/// Deletes everything.
#[tool(requires_approval)]
pub fn wipe() -> String {
    "wiped".to_owned()
}

/// A model for any number of runs at once: to a user message it answers with a call to `note`
/// (or `wipe`, when asked to wipe), to a tool result with text. It pauses a moment first, so
/// concurrent runs interleave.
#[derive(Default)]
pub struct NoteTaker {
    calls: AtomicUsize,
}

impl Model for NoteTaker {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let number = self.calls.fetch_add(1, Ordering::SeqCst);
            let reply = match request.messages.last() {
                Some(Message::User { content, .. }) if content.contains("wipe") => {
                    AssistantMessage::tool_calls([ToolCall::new(
                        format!("call_{number}"),
                        "wipe",
                        "{}",
                    )])
                }
                Some(Message::User { content, .. }) => {
                    AssistantMessage::tool_calls([ToolCall::new(
                        format!("call_{number}"),
                        "note",
                        serde_json::json!({ "text": content }).to_string(),
                    )])
                }
                _ => AssistantMessage::text(format!("done {number}")),
            };
            Ok(ChatResponse::new(reply).with_usage(Usage::new(100, 10)))
        })
    }
}

pub fn agent() -> Agent {
    Agent::new(NoteTaker::default())
        .try_tool(note {})
        .unwrap()
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals()
}

/// A fresh SQLite file `{name}-{pid}.db` in `folder` under `target_tmp` (a test's
/// `CARGO_TARGET_TMPDIR`), with no file of an earlier run left beside it.
pub fn fresh_database(target_tmp: &str, folder: &str, name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(target_tmp).join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// Every tool call is answered by the results right after its reply, in call order; every
/// result answers a call; the system prompt comes first.
pub fn assert_valid(messages: &[Message]) {
    assert!(matches!(messages.first(), Some(Message::System { .. })));
    let mut at = 0;
    while at < messages.len() {
        match &messages[at] {
            Message::Assistant(reply) => {
                for (offset, call) in reply.tool_calls.iter().enumerate() {
                    match messages.get(at + 1 + offset) {
                        Some(Message::Tool(result)) if result.tool_call_id == call.id => {}
                        other => panic!("call {} unanswered at {at}: {other:?}", call.id),
                    }
                }
                at += 1 + reply.tool_calls.len();
            }
            Message::Tool(result) => panic!("a result answering nothing: {result:?}"),
            _ => at += 1,
        }
    }
}

/// Two runs on one conversation: the second goes on from the first.
pub async fn two_runs_see_each_other(store: &dyn SessionStore) {
    let agent = agent();
    let first = agent.run("buy milk").session(store, "alice").await.unwrap();
    assert_eq!(first.messages.len(), 5);
    let second = agent.run("call mum").session(store, "alice").await.unwrap();
    // The second run went on from the first's messages.
    assert_eq!(second.messages[..5], first.messages[..]);
    assert_eq!(second.messages.len(), 9);
    let stored = store.load("alice").await.unwrap();
    assert_eq!(stored.messages, second.messages);
    assert_valid(&stored.messages);
    assert!(store.load("bob").await.unwrap().messages.is_empty());
}

/// Fifty runs at once over five conversations, each run on one of `stores` in turn (stores of one
/// database): none lost, none refused.
pub async fn fifty_runs_over_five_conversations(stores: &[Arc<dyn SessionStore>]) {
    let agent = Arc::new(agent());
    let mut runs = Vec::new();
    for run in 0..50 {
        let store = Arc::clone(&stores[run % stores.len()]);
        let agent = Arc::clone(&agent);
        runs.push(tokio::spawn(async move {
            let conversation = format!("c{}", run % 5);
            agent
                .run(format!("note {run}"))
                .session(&*store, &conversation)
                .await
                .map(|output| output.text)
        }));
    }
    for run in runs {
        run.await.unwrap().unwrap();
    }
    for conversation in 0..5 {
        let messages = stores[0]
            .load(&format!("c{conversation}"))
            .await
            .unwrap()
            .messages;
        // The system prompt, then four messages per run, none lost.
        assert_eq!(messages.len(), 1 + 10 * 4, "conversation c{conversation}");
        assert_valid(&messages);
        let mut notes: Vec<usize> = messages
            .iter()
            .filter_map(|message| match message {
                Message::User { content, .. } => content.strip_prefix("note ")?.parse().ok(),
                _ => None,
            })
            .collect();
        notes.sort_unstable();
        let expected: Vec<usize> = (0..50).filter(|run| run % 5 == conversation).collect();
        assert_eq!(notes, expected);
    }
}

/// A paused run is kept: another run is refused while it waits, and `second` (a fresh store on
/// the same database: a restart) resumes it.
pub async fn a_paused_run_is_kept(first: &dyn SessionStore, second: &dyn SessionStore) {
    let paused = agent()
        .run("wipe the disk")
        .session(first, "ops")
        .await
        .unwrap();
    assert_eq!(paused.stop_reason, StopReason::Paused);
    // Another run cannot start while one waits.
    let error = agent()
        .run("anything else")
        .session(first, "ops")
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        RunError::Session { source: SessionError::Paused { ref waiting, .. }, .. }
            if waiting.len() == 1
    ));
    let stored = second.load("ops").await.unwrap();
    let paused = stored.paused.as_ref().expect("the paused run is kept");
    let id = paused.pending()[0].call.id.clone();
    let done = agent()
        .resume_session([(id, Decision::deny("not today"))])
        .session(second, "ops")
        .await
        .unwrap();
    assert_eq!(done.stop_reason, StopReason::Finished);
    let stored = second.load("ops").await.unwrap();
    assert!(stored.paused.is_none());
    assert_eq!(stored.messages, done.messages);
    // Both parts' model calls, each counted once: the resumed run's usage goes on from the pause.
    assert_eq!(stored.usage.total(), done.usage);
    assert_eq!(done.usage, Usage::new(100, 10) + Usage::new(100, 10));
    assert_valid(&stored.messages);
    let error = agent()
        .resume_session(Vec::<(String, Decision)>::new())
        .session(second, "ops")
        .await
        .unwrap_err();
    assert!(matches!(
        error,
        RunError::Session {
            source: SessionError::NotPaused { .. },
            ..
        }
    ));
}

/// An append from a stale load is refused, and writes nothing: `one` and `two` on one database.
pub async fn an_append_from_a_stale_load_is_refused(
    one: &dyn SessionStore,
    two: &dyn SessionStore,
) {
    let message = [Message::user("hello")];
    one.append("c", 0, Append::messages(&message))
        .await
        .unwrap();
    let error = two
        .append("c", 0, Append::messages(&message))
        .await
        .unwrap_err();
    assert_eq!(
        error,
        SessionError::Conflict {
            id: "c".into(),
            expected: 0,
            found: 1
        }
    );
    assert_eq!(two.load("c").await.unwrap().messages.len(), 1);
}

/// A run refused before the model answered (here a part the provider cannot take) leaves the
/// conversation as it was: the next message is not refused again for the one before it.
pub async fn a_run_refused_before_the_model_leaves_the_conversation(store: &dyn SessionStore) {
    let model = agent_core::testing::ScriptedModel::from_steps([
        agent_core::testing::ScriptStep::error(|| ModelError::Unsupported {
            message: "this service cannot take a PDF by URL".to_owned(),
        }),
        AssistantMessage::text("Hello again.").into(),
    ]);
    let agent = Agent::new(model.clone());
    let refused = agent.run("read this PDF").session(store, "chat").await;
    assert!(
        matches!(refused, Err(RunError::Model { .. })),
        "{refused:?}"
    );
    assert!(store.load("chat").await.unwrap().messages.is_empty());
    let output = agent.run("hello").session(store, "chat").await.unwrap();
    assert_eq!(output.text, "Hello again.");
    // The model saw the new message alone, and the conversation holds only it and its answer.
    let seen = &model.requests()[1].messages;
    assert!(!seen.iter().any(
        |message| matches!(message, Message::User { content, .. } if content == "read this PDF")
    ));
    let kept = store.load("chat").await.unwrap().messages;
    assert_eq!(kept.len(), 3, "{kept:?}");
}

/// A conversation cut back (an answer taken back): the messages after the cut are gone, a paused
/// run waiting in them with them, and runs go on from the cut; a cut from a stale load is refused.
pub async fn a_conversation_is_cut_back_whole(store: &dyn SessionStore) {
    let agent = agent();
    let first = agent.run("buy milk").session(store, "c").await.unwrap();
    assert_eq!(first.messages.len(), 5);
    let paused = agent.run("wipe it").session(store, "c").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::Paused);
    let stored = store.load("c").await.unwrap();
    assert_eq!(stored.messages.len(), 7);
    assert!(stored.paused.is_some());

    // A cut that keeps everything changes nothing: the paused run still waits.
    store.truncate("c", 7, 7).await.unwrap();
    store.truncate("c", 7, 9).await.unwrap();
    assert_eq!(store.load("c").await.unwrap(), stored);

    // Back to the second question: its answer, waiting for approval, is gone, and the paused
    // run with it.
    store.truncate("c", 7, 6).await.unwrap();
    let cut = store.load("c").await.unwrap();
    assert_eq!(cut.messages[..], stored.messages[..6]);
    assert!(cut.paused.is_none());
    assert!(matches!(&cut.messages[5], Message::User { content, .. } if content == "wipe it"));

    // A run goes on from the cut (a new question is no longer refused as paused), and
    // appends after it.
    let next = agent.run("call mum").session(store, "c").await.unwrap();
    assert_eq!(next.stop_reason, StopReason::Finished);
    let after = store.load("c").await.unwrap().messages;
    assert_eq!(after[..6], stored.messages[..6]);
    assert_eq!(after.len(), 6 + 4, "{after:?}");

    // A cut from a stale load is refused and cuts nothing.
    let error = store.truncate("c", 6, 1).await.unwrap_err();
    assert_eq!(
        error,
        SessionError::Conflict {
            id: "c".into(),
            expected: 6,
            found: 10
        }
    );
    assert_eq!(store.load("c").await.unwrap().messages, after);
    // To nothing, and a conversation never written: no messages either way.
    store.truncate("c", 10, 0).await.unwrap();
    assert!(store.load("c").await.unwrap().messages.is_empty());
    store.truncate("never", 0, 0).await.unwrap();
    assert!(matches!(
        store.truncate("never", 2, 0).await,
        Err(SessionError::Conflict { found: 0, .. })
    ));
}

/// Two processes on one database: one cuts, the other's append from before the cut is refused.
pub async fn a_cut_refuses_a_stale_append(one: &dyn SessionStore, two: &dyn SessionStore) {
    let messages = [Message::user("a"), Message::user("b"), Message::user("c")];
    one.append("d", 0, Append::messages(&messages))
        .await
        .unwrap();
    assert_eq!(two.load("d").await.unwrap().messages.len(), 3);
    one.truncate("d", 3, 1).await.unwrap();
    assert!(matches!(
        two.append("d", 3, Append::messages(&messages)).await,
        Err(SessionError::Conflict {
            expected: 3,
            found: 1,
            ..
        })
    ));
    assert_eq!(two.load("d").await.unwrap().messages, messages[..1]);
}

/// Messages each append of a crash test's writer makes: a big batch, so a kill lands inside one.
const CRASH_BATCH: usize = 40;

/// A crash test's writer (run in a child process that the test kills): appends batches of large
/// messages to conversations `a` and `b` of `store` without end, printing `appended N` after each
/// round.
pub async fn append_batches_until_killed(store: &dyn SessionStore) {
    let text = "x".repeat(16 * 1024);
    let batch: Vec<Message> = (0..CRASH_BATCH)
        .map(|_| Message::user(text.clone()))
        .collect();
    for round in 0.. {
        for conversation in ["a", "b"] {
            let len = store.load(conversation).await.unwrap().messages.len();
            store
                .append(conversation, len, Append::messages(&batch))
                .await
                .unwrap();
        }
        println!("appended {round}");
    }
}

/// After the writer of [`append_batches_until_killed`] was killed (past its third round): whole
/// batches only, each message whole, and the store takes appends again.
pub async fn only_whole_batches_survive(store: &dyn SessionStore) {
    for conversation in ["a", "b"] {
        let messages = store.load(conversation).await.unwrap().messages;
        assert!(messages.len() >= 3 * CRASH_BATCH, "{}", messages.len());
        assert_eq!(messages.len() % CRASH_BATCH, 0, "a partial append survived");
        assert!(
            messages
                .iter()
                .all(|message| message.content().len() == 16 * 1024)
        );
    }
    let len = store.load("a").await.unwrap().messages.len();
    store
        .append("a", len, Append::messages(&[Message::user("after")]))
        .await
        .unwrap();
}

/// The ids and titles `store.list(prefix)` gives, in its order.
async fn listed(store: &dyn SessionStore, prefix: &str) -> Vec<(String, Option<String>)> {
    let listed = store.list(prefix).await.unwrap();
    // Newest first.
    assert!(
        listed
            .windows(2)
            .all(|pair| pair[0].updated >= pair[1].updated),
        "{listed:?}"
    );
    listed
        .into_iter()
        .map(|chat| (chat.id, chat.title))
        .collect()
}

/// A user's conversations listed, newest first, under their prefix only; a title set and kept;
/// a conversation cut back to nothing gone from the list with its title.
pub async fn conversations_are_listed_newest_first_with_their_titles(store: &dyn SessionStore) {
    let agent = agent();
    let pause = || tokio::time::sleep(Duration::from_millis(20));
    let _ = agent.run("buy milk").session(store, "ann/a").await.unwrap();
    pause().await;
    let _ = agent.run("call mum").session(store, "ann/b").await.unwrap();
    pause().await;
    let _ = agent
        .run("feed the cat")
        .session(store, "bob/a")
        .await
        .unwrap();
    let id = |id: &str| (id.to_owned(), None);
    assert_eq!(listed(store, "ann/").await, [id("ann/b"), id("ann/a")]);
    assert_eq!(listed(store, "bob/").await, [id("bob/a")]);
    assert!(listed(store, "carol/").await.is_empty());

    // A title, kept as the conversation goes on (which brings it to the top).
    store.set_title("ann/a", Some("Groceries")).await.unwrap();
    pause().await;
    let _ = agent.run("and eggs").session(store, "ann/a").await.unwrap();
    let titled = ("ann/a".to_owned(), Some("Groceries".to_owned()));
    assert_eq!(listed(store, "ann/").await, [titled.clone(), id("ann/b")]);
    store.set_title("ann/a", None).await.unwrap();
    assert_eq!(listed(store, "ann/").await, [id("ann/a"), id("ann/b")]);
    store.set_title("ann/a", Some("Groceries")).await.unwrap();

    // Cut back to nothing (forgotten): gone from the list, and its title with it.
    let length = store.load("ann/a").await.unwrap().messages.len();
    store.truncate("ann/a", length, 0).await.unwrap();
    assert_eq!(listed(store, "ann/").await, [id("ann/b")]);
    // A conversation with no messages takes no title.
    store.set_title("ann/none", Some("Nothing")).await.unwrap();
    let _ = agent.run("again").session(store, "ann/a").await.unwrap();
    assert_eq!(listed(store, "ann/").await, [id("ann/a"), id("ann/b")]);
}

/// Summaries and usage are kept with a conversation: each append's summaries after the last
/// ones, in order, read back as written (a second store on the same database, `two`, sees them);
/// each append's usage added to the conversation's, model by model, and priced by model; a cut
/// takes away the summaries of the messages it removes, and keeps the usage (it was used).
pub async fn summaries_and_usage_are_kept(one: &dyn SessionStore, two: &dyn SessionStore) {
    let turn = |index: usize| {
        [
            Message::user(format!("question {index}")),
            Message::Assistant(AssistantMessage::text(format!("answer {index}"))),
        ]
    };
    let used = |model: &str, usage: Usage| {
        let mut used = UsageByModel::new();
        used.add(Some(model), usage);
        used
    };
    let summarized = Usage::new(120, 30).with_cache(100, 0);
    let first = Summary::new(0..2, "they asked one question")
        .made_by(Some("small-model".into()), summarized);
    let second = Summary::new(0..4, "they asked two questions");
    let first_turn = turn(0);
    let added = Append::messages(&first_turn).usage(used("big-model", Usage::new(50, 10)));
    one.append("s", 0, added).await.unwrap();
    let (summaries, second_turn) = ([first.clone()], turn(1));
    let mut usage = used("big-model", Usage::new(70, 20).with_reasoning(5));
    usage.add(Some("small-model"), summarized);
    let added = Append::messages(&second_turn)
        .summaries(&summaries)
        .usage(usage);
    one.append("s", 2, added).await.unwrap();
    let summaries = [second.clone()];
    one.append("s", 4, Append::messages(&turn(2)).summaries(&summaries))
        .await
        .unwrap();
    let stored = two.load("s").await.unwrap();
    assert_eq!(stored.messages.len(), 6);
    assert_eq!(stored.summaries, [first.clone(), second]);
    let mut expected = used("big-model", Usage::new(120, 30).with_reasoning(5));
    expected.add(Some("small-model"), summarized);
    assert_eq!(
        stored.usage, expected,
        "the appends' usage, summed by model"
    );
    let prices = PriceTable::new()
        .with("big-model", Price::per_million(10.0, 40.0))
        .with(
            "small-model",
            Price::per_million(1.0, 4.0).with_cache(0.1, 1.0),
        );
    let cost = stored.cost(&prices).unwrap();
    let big = (120.0 * 10.0 + 30.0 * 40.0) / 1e6;
    let small = (20.0 * 1.0 + 100.0 * 0.1 + 30.0 * 4.0) / 1e6;
    assert!((cost - (big + small)).abs() < 1e-12, "{cost}");
    assert_eq!(stored.cost(&PriceTable::new()), None, "unpriced models");
    // A cut inside what the second summary stands for takes it away, not the first.
    two.truncate("s", 6, 3).await.unwrap();
    let cut = one.load("s").await.unwrap();
    assert_eq!(cut.summaries, [first]);
    assert_eq!(cut.usage, stored.usage);
    // A conversation never written has none.
    let never = one.load("never written").await.unwrap();
    assert!(never.summaries.is_empty());
    assert!(never.usage.is_empty());
}

/// The runs a session run's calls start (an agent called as a tool) are kept with the
/// conversation, each whole, with the position of the reply that started it (a second store on
/// the same database, `two`, sees them); a cut before that reply takes it away.
pub async fn child_runs_are_kept(one: &dyn SessionStore, two: &dyn SessionStore) {
    let researcher = Agent::new(agent_core::testing::ScriptedModel::new([
        AssistantMessage::text("first finding"),
        AssistantMessage::text("second finding"),
    ]))
    .named("researcher");
    let ask = |id: &str| ToolCall::new(id, "research", r#"{"input":"what?"}"#);
    let model = agent_core::testing::ScriptedModel::new([
        AssistantMessage::tool_calls([ask("c1")]),
        AssistantMessage::text("one"),
        AssistantMessage::tool_calls([ask("c2")]),
        AssistantMessage::text("two"),
    ]);
    let agent = Agent::new(model)
        .named("desk")
        .try_tool(researcher.as_tool("research", "Research."))
        .unwrap();
    let first = agent.run("first").session(one, "kids").await.unwrap();
    assert_eq!(first.children.len(), 1);
    let second = agent.run("second").session(one, "kids").await.unwrap();
    assert_eq!(second.children.len(), 1);

    let stored = two.load("kids").await.unwrap();
    assert_eq!(stored.messages.len(), 9);
    assert_eq!(stored.children.len(), 2);
    let (first_child, second_child) = (&stored.children[0], &stored.children[1]);
    // Each at its reply: system prompt, question, the reply that called.
    assert_eq!(first_child.at, 2);
    assert_eq!(second_child.at, 6);
    assert_eq!(first_child.run.call_id, "c1");
    assert_eq!(first_child.run.path.as_str(), "desk/researcher");
    let run = first_child.run.outcome.as_ref().unwrap();
    assert_eq!(run.text, "first finding");
    assert_eq!(run.messages.len(), 3);
    assert_eq!(second_child.run, second.children[0]);
    // A cut at the second call's reply takes its child away, not the first.
    one.truncate("kids", 9, 6).await.unwrap();
    let cut = two.load("kids").await.unwrap();
    assert_eq!(cut.children.len(), 1);
    assert_eq!(cut.children[0].run.call_id, "c1");
}
