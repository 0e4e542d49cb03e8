//! Conversations that outlive a run and its process, in memory and in SQLite: runs on one
//! conversation see each other's messages; a paused run is kept and resumed after a restart; 50
//! concurrent runs over 5 conversations lose and interleave nothing; stale appends from another
//! process are refused; the schema is versioned; a writer killed with SIGKILL mid-append leaves the
//! database whole.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{MemorySessions, SessionError, SessionStore};
use agent_core::{
    Agent, BoxFuture, ChatRequest, ChatResponse, Decision, Message, Model, ModelError, RunError,
};
use agent_sql::SqliteSessions;
use tests::child::{ChildTest, block_on};
use tests::session_contract::{
    self as contract, agent, assert_valid, fifty_runs_over_five_conversations, note,
    two_runs_see_each_other, wipe,
};

/// A fresh database file under the target directory.
fn database(name: &str) -> PathBuf {
    tests::session_contract::fresh_database(env!("CARGO_TARGET_TMPDIR"), "sessions", name)
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
    assert_eq!(reopened.schema_version().unwrap(), 5);
}

#[tokio::test]
async fn summaries_and_usage_are_kept_with_the_conversation() {
    let memory = MemorySessions::new();
    contract::summaries_and_usage_are_kept(&memory, &memory).await;
    let path = database("summaries");
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    contract::summaries_and_usage_are_kept(&one, &two).await;
}

#[tokio::test]
async fn child_runs_are_kept_with_the_conversation() {
    let memory = MemorySessions::new();
    contract::child_runs_are_kept(&memory, &memory).await;
    let path = database("children");
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    contract::child_runs_are_kept(&one, &two).await;
}

#[tokio::test]
async fn conversations_are_listed_newest_first_with_their_titles() {
    contract::conversations_are_listed_newest_first_with_their_titles(&MemorySessions::new()).await;
    let path = database("listed");
    let store = SqliteSessions::open(&path).unwrap();
    contract::conversations_are_listed_newest_first_with_their_titles(&store).await;
}

/// A database written by the first schema (conversations and messages, no titles) opens at the
/// current one with its conversations whole, listed, and able to take a title.
#[tokio::test]
async fn a_first_schema_database_is_brought_up_to_date() {
    let path = database("first-schema");
    {
        let connection = rusqlite::Connection::open(&path).unwrap();
        connection
            .execute_batch(
                "CREATE TABLE conversations (id TEXT PRIMARY KEY NOT NULL, paused TEXT) WITHOUT ROWID;
                 CREATE TABLE messages (
                     conversation TEXT NOT NULL REFERENCES conversations(id),
                     position INTEGER NOT NULL,
                     body TEXT NOT NULL,
                     PRIMARY KEY (conversation, position)
                 ) WITHOUT ROWID;
                 INSERT INTO conversations (id, paused) VALUES ('old', NULL);
                 INSERT INTO messages VALUES ('old', 0, '{\"role\":\"user\",\"content\":\"hi\"}');
                 PRAGMA user_version = 1;",
            )
            .unwrap();
    }
    let store = SqliteSessions::open(&path).unwrap();
    assert_eq!(store.schema_version().unwrap(), 5);
    assert_eq!(store.load("old").await.unwrap().messages.len(), 1);
    store.set_title("old", Some("Greeting")).await.unwrap();
    let listed = store.list("").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].title.as_deref(), Some("Greeting"));
}

#[tokio::test]
async fn a_paused_run_is_kept_and_resumed_after_a_restart() {
    let path = database("paused");
    let first = SqliteSessions::open(&path).unwrap();
    // A new process: a fresh store on the file (each run makes a fresh agent).
    let second = SqliteSessions::open(&path).unwrap();
    contract::a_paused_run_is_kept(&first, &second).await;
    let memory = MemorySessions::new();
    contract::a_paused_run_is_kept(&memory, &memory).await;
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
    contract::an_append_from_a_stale_load_is_refused(&one, &two).await;
    let memory = MemorySessions::new();
    contract::an_append_from_a_stale_load_is_refused(&memory, &memory).await;
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let path = database("newer");
    {
        let connection = SqliteSessions::open(&path).unwrap();
        assert_eq!(connection.schema_version().unwrap(), 5);
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

/// Run by the crash test in a child process (ignored otherwise): appends batches of large
/// messages to the database in `SESSIONS_CRASH_DB` forever, printing a line after each.
#[test]
#[ignore = "a child process of `a_writer_killed_mid_append_leaves_the_database_whole`"]
fn crash_test_writer() {
    let Ok(path) = std::env::var("SESSIONS_CRASH_DB") else {
        return;
    };
    block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        contract::append_batches_until_killed(&store).await;
    });
}

#[test]
fn a_writer_killed_mid_append_leaves_the_database_whole() {
    let path = database("crash");
    let mut writer = ChildTest::start("crash_test_writer", "SESSIONS_CRASH_DB", &path);
    // Let it write a few rounds, then kill it at some point within a later one.
    let rounds = writer.read_until(|line| line.starts_with("appended"), 3);
    assert_eq!(rounds, 3, "the writer stopped early");
    std::thread::sleep(Duration::from_millis(7));
    assert!(writer.is_running(), "the writer is still writing");
    // No rollback by the writer itself.
    writer.kill();

    block_on(async {
        let store = SqliteSessions::open(&path).unwrap();
        contract::only_whole_batches_survive(&store).await;
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
        .resume_session([(id.clone(), Decision::Approve)])
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
        .resume_session([(id, Decision::Approve)])
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
        contract::a_run_refused_before_the_model_leaves_the_conversation(&*store).await;
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
        contract::a_conversation_is_cut_back_whole(&*store).await;
    }
    let path = database("cut-two");
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    contract::a_cut_refuses_a_stale_append(&one, &two).await;
}

/// A store keeps the messages it loaded and reads only those appended since: what another
/// process appends is read, and a conversation another process cut back and wrote again is read
/// whole again, never the messages it kept from before the cut. Its own cuts cut what it keeps.
#[tokio::test]
async fn a_store_that_kept_a_conversation_loaded_reads_what_another_wrote() {
    use agent_core::session::Append;
    let path = database("kept_loaded");
    let (one, two) = (
        SqliteSessions::open(&path).unwrap(),
        SqliteSessions::open(&path).unwrap(),
    );
    let said = |text: &str| [Message::user(text)];
    one.append("mei", 0, Append::messages(&said("a")))
        .await
        .unwrap();
    assert_eq!(one.load("mei").await.unwrap().messages, said("a"));
    // Appended by the other: read.
    two.append("mei", 1, Append::messages(&said("b")))
        .await
        .unwrap();
    let loaded = one.load("mei").await.unwrap().messages;
    assert_eq!(loaded, [said("a"), said("b")].concat());
    // Cut back and written again by the other, to the same length: read whole again.
    two.truncate("mei", 2, 0).await.unwrap();
    two.append("mei", 0, Append::messages(&[said("c"), said("d")].concat()))
        .await
        .unwrap();
    let loaded = one.load("mei").await.unwrap().messages;
    assert_eq!(loaded, [said("c"), said("d")].concat());
    // Its own cut, then an append: what it keeps follows.
    one.truncate("mei", 2, 1).await.unwrap();
    one.append("mei", 1, Append::messages(&said("e")))
        .await
        .unwrap();
    let loaded = one.load("mei").await.unwrap().messages;
    assert_eq!(loaded, [said("c"), said("e")].concat());
    assert_eq!(two.load("mei").await.unwrap().messages, loaded);
}
