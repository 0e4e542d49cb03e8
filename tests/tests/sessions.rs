//! Conversations that outlive a run and its process, in memory and in SQLite: runs on one
//! conversation see each other's messages; a paused run is kept and resumed after a restart; 50
//! concurrent runs over 5 conversations lose and interleave nothing; stale appends from another
//! process are refused; the schema is versioned; a writer killed with SIGKILL mid-append leaves the
//! database whole.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::session::{MemorySessions, SessionError, SessionStore, SqliteSessions};
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Decision, Message, Model,
    ModelError, RunError, StopReason, ToolCall, tool,
};

/// A fresh database file under the target directory.
fn database(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sessions");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{name}-{}.db", std::process::id()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
    path
}

/// Writes a note down.
#[tool]
async fn note(
    /// What to note.
    text: String,
) -> String {
    format!("noted: {text}")
}

/// Deletes everything.
#[tool(requires_approval)]
fn wipe() -> String {
    "wiped".to_owned()
}

/// A model for any number of runs at once: to a user message it answers with a call to `note`
/// (or `wipe`, when asked to wipe), to a tool result with text. It pauses a moment first, so
/// concurrent runs interleave.
#[derive(Default)]
struct NoteTaker {
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
            Ok(ChatResponse::new(reply))
        })
    }
}

fn agent() -> Agent {
    Agent::new(NoteTaker::default())
        .try_tool(note {})
        .unwrap()
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals()
}

/// Every tool call is answered by the results right after its reply, in call order; every
/// result answers a call; the system prompt comes first.
fn assert_valid(messages: &[Message]) {
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

async fn two_runs_see_each_other(store: &dyn SessionStore) {
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

#[tokio::test]
async fn runs_in_a_conversation_go_on_from_each_other() {
    two_runs_see_each_other(&MemorySessions::new()).await;
    let path = database("go_on");
    two_runs_see_each_other(&SqliteSessions::open(&path).unwrap()).await;
    // Reopened, as by another process: the same conversation.
    let reopened = SqliteSessions::open(&path).unwrap();
    assert_eq!(reopened.ids().unwrap(), ["alice"]);
    assert_eq!(reopened.load("alice").await.unwrap().messages.len(), 9);
    assert_eq!(reopened.schema_version().unwrap(), 1);
}

#[tokio::test]
async fn a_paused_run_is_kept_and_resumed_after_a_restart() {
    let path = database("paused");
    {
        let store = SqliteSessions::open(&path).unwrap();
        let paused = agent()
            .run("wipe the disk")
            .session(&store, "ops")
            .await
            .unwrap();
        assert_eq!(paused.stop_reason, StopReason::Paused);
        // Another run cannot start while one waits.
        let error = agent()
            .run("anything else")
            .session(&store, "ops")
            .await
            .unwrap_err();
        assert!(matches!(
            error,
            RunError::Session { source: SessionError::Paused { ref waiting, .. }, .. }
                if waiting.len() == 1
        ));
    }
    // A new process: a fresh store on the file and a fresh agent.
    let store = SqliteSessions::open(&path).unwrap();
    let stored = store.load("ops").await.unwrap();
    let paused = stored.paused.as_ref().expect("the paused run is kept");
    let id = paused.pending()[0].call.id.clone();
    let done = agent()
        .resume(
            agent_core::ResumeFrom::Session,
            [(id, Decision::deny("not today"))],
        )
        .session(&store, "ops")
        .await
        .unwrap();
    assert_eq!(done.stop_reason, StopReason::Finished);
    let stored = store.load("ops").await.unwrap();
    assert!(stored.paused.is_none());
    assert_eq!(stored.messages, done.messages);
    assert_valid(&stored.messages);
    let error = agent()
        .resume(
            agent_core::ResumeFrom::Session,
            Vec::<(String, Decision)>::new(),
        )
        .session(&store, "ops")
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

/// Fifty runs at once over five conversations, each run on one of `stores` in turn (stores of one
/// database): none lost, none refused.
async fn fifty_runs_over_five_conversations(stores: &[Arc<dyn SessionStore>]) {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_runs_on_a_conversation_are_serialized() {
    fifty_runs_over_five_conversations(&[Arc::new(MemorySessions::new())]).await;
    let path = database("concurrent");
    fifty_runs_over_five_conversations(&[Arc::new(SqliteSessions::open(&path).unwrap())]).await;
}

/// Two stores opened on one file in one process serialize their runs as one store does (each
/// store once had its own locks: the second run on a conversation was refused as a conflict).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_stores_on_one_file_serialize_runs_together() {
    let path = database("two-stores");
    let first = SqliteSessions::open(&path).unwrap();
    // The same file by another spelling of its path.
    let again = path
        .parent()
        .unwrap()
        .join(".")
        .join(path.file_name().unwrap());
    let second = SqliteSessions::open(&again).unwrap();
    fifty_runs_over_five_conversations(&[Arc::new(first), Arc::new(second)]).await;
}

#[tokio::test]
async fn an_append_from_a_stale_load_is_refused() {
    let path = database("stale");
    // Two stores on one file: two processes, whose holds do not see each other.
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    let message = [Message::user("hello")];
    one.append("c", 0, &message, None).await.unwrap();
    let error = two.append("c", 0, &message, None).await.unwrap_err();
    assert_eq!(
        error,
        SessionError::Conflict {
            id: "c".into(),
            expected: 0,
            found: 1
        }
    );
    assert_eq!(two.load("c").await.unwrap().messages.len(), 1);

    let memory = MemorySessions::new();
    memory.append("c", 0, &message, None).await.unwrap();
    assert!(matches!(
        memory.append("c", 0, &message, None).await,
        Err(SessionError::Conflict { found: 1, .. })
    ));
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let path = database("newer");
    {
        let connection = SqliteSessions::open(&path).unwrap();
        assert_eq!(connection.schema_version().unwrap(), 1);
    }
    // Bump the version as a newer build would, through SQLite itself.
    set_user_version(&path, 99);
    let error = SqliteSessions::open(&path).unwrap_err();
    assert!(
        matches!(&error, SessionError::Store { message } if message.contains("schema version 99")),
        "{error}"
    );
}

fn set_user_version(path: &std::path::Path, version: u32) {
    let connection = rusqlite::Connection::open(path).unwrap();
    connection
        .pragma_update(None, "user_version", version)
        .unwrap();
}

/// Messages each append of the crash test writes: a big batch, so a kill lands inside one.
const BATCH: usize = 40;

/// Run by the crash test in a child process (ignored otherwise): appends batches of large
/// messages to the database in `SESSIONS_CRASH_DB` forever, printing a line after each.
#[test]
#[ignore = "a child process of `a_writer_killed_mid_append_leaves_the_database_whole`"]
fn crash_test_writer() {
    let Ok(path) = std::env::var("SESSIONS_CRASH_DB") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        let text = "x".repeat(16 * 1024);
        let batch: Vec<Message> = (0..BATCH).map(|_| Message::user(text.clone())).collect();
        for round in 0.. {
            for conversation in ["a", "b"] {
                let len = store.load(conversation).await.unwrap().messages.len();
                store.append(conversation, len, &batch, None).await.unwrap();
            }
            println!("appended {round}");
        }
    });
}

#[test]
fn a_writer_killed_mid_append_leaves_the_database_whole() {
    use std::io::BufRead;

    let path = database("crash");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_test_writer", "--ignored", "--nocapture"])
        .env("SESSIONS_CRASH_DB", &path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Let it write a few rounds, then kill it at some point within a later one.
    // Kept open until the kill, so the writer never fails on a closed pipe.
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    // The test harness prints its own lines first.
    let rounds = lines
        .by_ref()
        .map_while(Result::ok)
        .filter(|line| line.starts_with("appended"))
        .take(3)
        .count();
    assert_eq!(rounds, 3, "the writer stopped early");
    std::thread::sleep(Duration::from_millis(7));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the writer is still writing"
    );
    // `kill` on Unix is SIGKILL: no destructor, no rollback by the writer itself.
    child.kill().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9),
        "killed by SIGKILL"
    );
    drop(lines);

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        for conversation in ["a", "b"] {
            let messages = store.load(conversation).await.unwrap().messages;
            // Whole batches only, each message whole.
            assert!(messages.len() >= 3 * BATCH, "{}", messages.len());
            assert_eq!(messages.len() % BATCH, 0, "a partial append survived");
            assert!(
                messages
                    .iter()
                    .all(|message| message.content().len() == 16 * 1024)
            );
        }
        // And it takes appends again.
        let len = store.load("a").await.unwrap().messages.len();
        store
            .append("a", len, &[Message::user("after")], None)
            .await
            .unwrap();
    });
}

/// A model that fails every request: a provider outage.
struct Down;

impl Model for Down {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async {
            Err(ModelError::Overloaded {
                status: 503,
                message: "down".into(),
            })
        })
    }
}

#[tokio::test]
async fn an_approved_call_is_not_run_twice_when_the_model_fails_after_it() {
    let store = MemorySessions::new();
    let paused = agent()
        .run("wipe the disk")
        .session(&store, "ops")
        .await
        .unwrap();
    let id = paused.paused.unwrap().pending()[0].call.id.clone();
    // The decision is carried out, then the model is down.
    let down = Agent::new(Down)
        .try_tool(note {})
        .unwrap()
        .try_tool(wipe {})
        .unwrap();
    let error = down
        .resume(
            agent_core::ResumeFrom::Session,
            [(id.clone(), Decision::Approve)],
        )
        .session(&store, "ops")
        .await
        .unwrap_err();
    assert!(matches!(error, RunError::Model { .. }), "{error:?}");
    // The wipe is on record and nothing waits: a retry cannot wipe again.
    let stored = store.load("ops").await.unwrap();
    assert!(stored.paused.is_none());
    assert!(stored.messages.iter().any(|message| matches!(
        message,
        Message::Tool(result) if result.tool_call_id == id && result.content == "wiped"
    )));
    assert_valid(&stored.messages);
    let again = agent()
        .resume(agent_core::ResumeFrom::Session, [(id, Decision::Approve)])
        .session(&store, "ops")
        .await
        .unwrap_err();
    assert!(matches!(
        again,
        RunError::Session {
            source: SessionError::NotPaused { .. },
            ..
        }
    ));
}

/// A run refused before the model answered (here a part the provider cannot take) leaves the
/// conversation as it was: the next message is not refused again for the one before it.
#[tokio::test]
async fn a_run_refused_before_the_model_leaves_the_conversation_as_it_was() {
    for store in [
        Arc::new(MemorySessions::new()) as Arc<dyn SessionStore>,
        Arc::new(SqliteSessions::open(database("refused")).unwrap()),
    ] {
        let model = agent_core::testing::ScriptedModel::from_steps([
            agent_core::testing::ScriptStep::error(|| ModelError::Unsupported {
                message: "this service cannot take a PDF by URL".to_owned(),
            }),
            AssistantMessage::text("Hello again.").into(),
        ]);
        let agent = Agent::new(model.clone());
        let refused = agent.run("read this PDF").session(&*store, "chat").await;
        assert!(
            matches!(refused, Err(RunError::Model { .. })),
            "{refused:?}"
        );
        assert!(store.load("chat").await.unwrap().messages.is_empty());
        let output = agent.run("hello").session(&*store, "chat").await.unwrap();
        assert_eq!(output.text, "Hello again.");
        // The model saw the new message alone, and the conversation holds only it and its answer.
        let seen = &model.requests()[1].messages;
        assert!(!seen.iter().any(
            |message| matches!(message, Message::User { content, .. } if content == "read this PDF")
        ));
        let kept = store.load("chat").await.unwrap().messages;
        assert_eq!(kept.len(), 3, "{kept:?}");
    }
}

/// A conversation cut back (an answer taken back): the messages after the cut are gone, a paused
/// run waiting in them with them, and runs go on from the cut. On both stores, and across two
/// stores on one file.
#[tokio::test]
async fn a_conversation_is_cut_back_whole_and_a_paused_run_with_it() {
    let path = database("cut");
    let stores = [
        Arc::new(MemorySessions::new()) as Arc<dyn SessionStore>,
        Arc::new(SqliteSessions::open(&path).unwrap()),
    ];
    for store in stores {
        let agent = agent();
        let first = agent.run("buy milk").session(&*store, "c").await.unwrap();
        assert_eq!(first.messages.len(), 5);
        let paused = agent.run("wipe it").session(&*store, "c").await.unwrap();
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
        let next = agent.run("call mum").session(&*store, "c").await.unwrap();
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

    // Two processes on one file: one cuts, the other's append from before the cut is refused.
    let path = database("cut-two");
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    let messages = [Message::user("a"), Message::user("b"), Message::user("c")];
    one.append("d", 0, &messages, None).await.unwrap();
    assert_eq!(two.load("d").await.unwrap().messages.len(), 3);
    one.truncate("d", 3, 1).await.unwrap();
    assert!(matches!(
        two.append("d", 3, &messages, None).await,
        Err(SessionError::Conflict {
            expected: 3,
            found: 1,
            ..
        })
    ));
    assert_eq!(two.load("d").await.unwrap().messages, messages[..1]);
}
