//! A session run keeps its transcript step by step: a run killed (SIGKILL) while a tool works,
//! after two finished steps, or whose future is dropped, has its finished steps in the store and
//! the reply of the step in flight; the next run answers that reply's call as interrupted (it may
//! have had its effect), in the conversation's language, before anything is sent, so a provider
//! accepts the request, and the conversation goes on. A dropped run still tells its hooks.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Chinese, Hooks, Message, RunError, RunOutput, ToolCall, agent, tool,
};
use agent_sql::SqliteSessions;
use tests::child::{ChildTest, block_on};
use tests::session_contract::assert_valid;

/// The database the child run writes to.
const DATABASE: &str = "CHECKPOINT_DB";

/// Writes a note down; one that begins with "slowly" takes two minutes, and says when it starts.
#[tool]
async fn note(text: String) -> String {
    if text.starts_with("slowly") {
        println!("the slow note began");
        std::io::stdout().flush().unwrap();
        tokio::time::sleep(Duration::from_secs(120)).await;
    }
    format!("noted: {text}")
}

/// Two quick notes, a slow one, then an answer.
fn three_notes() -> ScriptedModel {
    let step = |id: &str, text: &str| {
        let arguments = serde_json::json!({ "text": text }).to_string();
        AssistantMessage::tool_calls([ToolCall::new(id, "note", arguments)])
    };
    ScriptedModel::new([
        step("n1", "milk"),
        step("n2", "eggs"),
        step("n3", "slowly the cat"),
        AssistantMessage::text("Three notes."),
    ])
}

/// A fresh database file under the target directory.
fn database(name: &str) -> PathBuf {
    tests::session_contract::fresh_database(env!("CARGO_TARGET_TMPDIR"), "checkpoints", name)
}

/// The store after the run was cut while its third note was at work: the question, two whole
/// steps, and the third step's reply.
fn assert_kept_up_to_the_slow_call(messages: &[Message]) {
    let shapes: Vec<&str> = messages
        .iter()
        .map(|message| match message {
            Message::System { .. } => "system",
            Message::User { .. } => "user",
            Message::Assistant(_) => "reply",
            Message::Tool(_) => "result",
            _ => "other",
        })
        .collect();
    assert_eq!(
        shapes,
        [
            "system", "user", "reply", "result", "reply", "result", "reply"
        ]
    );
    assert_eq!(messages[3].content(), "noted: milk");
    assert_eq!(messages[5].content(), "noted: eggs");
}

/// The next run on the conversation: what it sent the model is valid (every call answered, the
/// cut one answered in `words` as one whose result was never recorded), and what it stored goes
/// on from the kept steps.
async fn the_conversation_goes_on(
    store: &dyn SessionStore,
    agent: Agent,
    model: &ScriptedModel,
    words: &str,
) {
    let out = agent
        .run("Where are we?")
        .session(store, "notes")
        .await
        .unwrap();
    assert_eq!(out.text, "Two notes are down.");
    let sent = &model.requests()[0].messages;
    assert_valid(sent);
    let Message::Tool(cut) = &sent[7] else {
        panic!("the cut call's answer: {:?}", sent[7]);
    };
    assert_eq!(cut.tool_call_id, "n3");
    assert!(cut.is_error);
    assert!(cut.content.contains(words), "{}", cut.content);
    let stored = store.load("notes").await.unwrap().messages;
    assert_eq!(&stored[..], &out.messages[..]);
    assert_eq!(stored.len(), 10);
    assert_valid(&stored);
}

/// Run by the kill test in a child process (ignored otherwise): the three-note run on the
/// SQLite database in `CHECKPOINT_DB`.
#[test]
#[ignore = "a child process of `a_run_killed_while_a_tool_works_keeps_its_finished_steps`"]
fn checkpoint_writer() {
    let Ok(path) = std::env::var(DATABASE) else {
        return;
    };
    block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        let agent: Agent = agent!(three_notes(), note);
        let _ = agent
            .run("Take three notes.")
            .session(&store, "notes")
            .await;
    });
}

#[test]
fn a_run_killed_while_a_tool_works_keeps_its_finished_steps() {
    let path = database("killed");
    let mut run = ChildTest::start("checkpoint_writer", DATABASE, &path);
    let began = run.read_until(|line| line.contains("the slow note began"), 1);
    assert_eq!(began, 1, "the run reached its slow note");
    assert!(run.is_running(), "the run is at work");
    // No destructor, no last write.
    run.kill();

    block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        let kept = store.load("notes").await.unwrap();
        assert_kept_up_to_the_slow_call(&kept.messages);
        assert!(kept.paused.is_none());
        let model = ScriptedModel::new([AssistantMessage::text("Two notes are down.")]);
        let agent: Agent = agent!(model.clone(), note);
        the_conversation_goes_on(&store, agent, &model, "may have started").await;
    });
}

/// How a run ended: its messages, or its error's words and messages.
type End = Result<usize, (String, usize)>;

/// Keeps how each run ended.
#[derive(Clone, Default)]
struct Ends(Arc<Mutex<Vec<End>>>);

impl Hooks for Ends {
    fn on_run_end(&self, _context: &(), outcome: Result<&RunOutput, &RunError>) {
        let kept = match outcome {
            Ok(output) => Ok(output.messages.len()),
            Err(error) => Err((format!("{error}"), error.messages().len())),
        };
        self.0.lock().unwrap().push(kept);
    }
}

#[tokio::test]
async fn a_dropped_run_keeps_its_finished_steps_and_tells_its_hooks() {
    let store = MemorySessions::new();
    let ends = Ends::default();
    let agent: Agent = agent!(three_notes(), note).hook(ends.clone());
    let run = agent.run("Take three notes.").session(&store, "notes");
    let dropped = tokio::time::timeout(Duration::from_millis(300), run).await;
    assert!(dropped.is_err(), "the slow note outlasts the timeout");
    assert_kept_up_to_the_slow_call(&store.load("notes").await.unwrap().messages);
    assert_eq!(
        *ends.0.lock().unwrap(),
        [Err(("the run was dropped before it ended".to_owned(), 7))]
    );

    // In Chinese, the cut call is answered in Chinese.
    let model = ScriptedModel::new([AssistantMessage::text("Two notes are down.")]);
    let agent: Agent = agent!(model.clone(), note).texts(Chinese);
    the_conversation_goes_on(&store, agent, &model, "可能已开始执行").await;
}
