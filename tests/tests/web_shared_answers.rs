//! Answers in progress shared between two instances of a chat server, as two processes behind a
//! load balancer would run (each with its own store handles on one database): a client that
//! reloads onto the other instance rejoins the answer there and reads it whole, the run never
//! cancelled as unread while it does; a stop sent to the other instance stops the run where it
//! runs, what it did kept; with no answer under way, the other instance says `204` and `404`.
//! Each case on an SQLite file (`SqliteAnswers`) and on PostgreSQL (`PostgresAnswers`, a real
//! server started by the test, see `tests::postgres`).

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::session::SessionStore;
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, State, ToolCall, tool};
use agent_sql::{PostgresSessions, SqliteSessions};
use agent_web::{AnswerLog, ChatServer, PostgresAnswers, SqliteAnswers};
use serde_json::json;
use tests::chat::{last_result, post_and_hang_up, rejoined_whole, stop, user};
use tests::peers::Test;
use tests::postgres::{POSTGRES, shared};

/// Calls of the slow tool that finished.
type Finished = Arc<AtomicUsize>;

/// How long the slow tool works: several rejoin windows.
const WORK: Duration = Duration::from_millis(2500);

/// The rejoin window of both instances.
const WINDOW: Duration = Duration::from_millis(800);

/// Looks something up, slowly.
#[tool]
async fn slow_lookup(State(finished): State<Finished>) -> String {
    tokio::time::sleep(WORK).await;
    finished.fetch_add(1, Ordering::SeqCst);
    "found it".to_owned()
}

/// Where the two instances keep their chats and answers.
#[derive(Clone, Copy)]
enum Database {
    Sqlite,
    Postgres,
}

/// One instance's stores on the database at `place`, opened anew (as another process would).
async fn stores(database: Database, place: &str) -> (Arc<dyn SessionStore>, Box<dyn AnyLog>) {
    match database {
        Database::Sqlite => (
            Arc::new(SqliteSessions::open(place).unwrap()),
            Box::new(SqliteAnswers::open(place).unwrap()),
        ),
        Database::Postgres => {
            let sessions = PostgresSessions::connect(place).await.unwrap();
            let answers = PostgresAnswers::new(sessions.pool().clone()).await.unwrap();
            (Arc::new(sessions), Box::new(answers))
        }
    }
}

/// An answer log of either kind, handed to the server by value.
trait AnyLog {
    fn serve_with(self: Box<Self>, server: ChatServer) -> ChatServer;
}

impl<L: AnswerLog> AnyLog for L {
    fn serve_with(self: Box<Self>, server: ChatServer) -> ChatServer {
        server.answers_shared_in(*self)
    }
}

/// Two instances of a chat server on one database.
struct Instances {
    /// Their URLs.
    bases: [String; 2],
    /// The first one's store.
    store: Arc<dyn SessionStore>,
    /// The slow tool's count of finished calls (both instances' tools count there).
    finished: Finished,
    /// The SQLite file's folder, removed when the test ends.
    _folder: Option<tempfile::TempDir>,
}

/// Two instances on one database, a fresh one (named after `case` on PostgreSQL).
async fn two_instances(database: Database, case: &str) -> Instances {
    let (place, folder) = match database {
        Database::Sqlite => {
            let folder = tempfile::tempdir().unwrap();
            let file = folder.path().join("chats.sqlite");
            (file.display().to_string(), Some(folder))
        }
        Database::Postgres => (shared().fresh_database(case).await, None),
    };
    let finished = Finished::default();
    let mut bases = Vec::new();
    let mut first_store = None;
    for _ in 0..2 {
        let model = ScriptedModel::new([
            AssistantMessage::tool_calls([ToolCall::new("call_s", "slow_lookup", "{}")]),
            AssistantMessage::text("Here is what I found."),
        ]);
        let agent = Agent::new(model)
            .try_tool(slow_lookup {})
            .unwrap()
            .bind_context(Arc::clone(&finished));
        let (store, log) = stores(database, &place).await;
        first_store.get_or_insert_with(|| Arc::clone(&store));
        let server = ChatServer::new(Arc::new(agent))
            .sessions(store)
            .rejoin_within(WINDOW);
        bases.push(tests::serve_chat(log.serve_with(server)).await);
    }
    Instances {
        bases: bases.try_into().unwrap(),
        store: first_store.unwrap(),
        finished,
        _folder: folder,
    }
}

/// Starts an answer in chat `c` at `base` and hangs up once its call is under way.
async fn start_and_hang_up(base: &str) {
    let body = json!({ "id": "c", "messages": [user("m1", "Look it up")] });
    post_and_hang_up(base, &body, "tool-input-available").await;
}

async fn the_other_instance_rejoins_the_answer_and_reads_it_whole(database: Database, case: &str) {
    let instances = two_instances(database, case).await;
    let ([a, b], store, finished) = (&instances.bases, &instances.store, &instances.finished);
    start_and_hang_up(a).await;
    // The page reloads onto the other instance, after the first had time to share the answer.
    tokio::time::sleep(Duration::from_millis(400)).await;
    rejoined_whole(b, "c", "Here is what I found.").await;
    // Read on the other instance all along, the run was not cancelled as unread, though its
    // tool worked for several of the first instance's rejoin windows with no client there.
    assert_eq!(finished.load(Ordering::SeqCst), 1);
    let kept = store.load("c").await.unwrap().messages;
    assert_eq!(kept.last().unwrap().content(), "Here is what I found.");
    // Over: nothing to rejoin on either.
    for base in [a, b] {
        let after = reqwest::get(format!("{base}/api/chat/c/stream"))
            .await
            .unwrap();
        assert_eq!(after.status().as_u16(), 204);
    }
}

async fn a_stop_sent_to_the_other_instance_stops_the_answer(database: Database, case: &str) {
    let instances = two_instances(database, case).await;
    let ([a, b], store, finished) = (&instances.bases, &instances.store, &instances.finished);
    start_and_hang_up(a).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let stopped = Instant::now();
    assert_eq!(stop(b, "c").await, 204);
    // The first instance stops the run at its next write, long before the tool would end and
    // before its own rejoin window would have.
    let result = last_result(&**store, "c", Duration::from_secs(3)).await;
    assert!(stopped.elapsed() < WINDOW, "{:?}", stopped.elapsed());
    assert!(result.is_error, "answered as interrupted: {result:?}");
    assert_eq!(finished.load(Ordering::SeqCst), 0);
}

async fn with_no_answer_under_way_the_other_instance_says_so(database: Database, case: &str) {
    let instances = two_instances(database, case).await;
    let b = &instances.bases[1];
    let rejoin = reqwest::get(format!("{b}/api/chat/none/stream"))
        .await
        .unwrap();
    assert_eq!(rejoin.status().as_u16(), 204);
    assert_eq!(stop(b, "none").await, 404);
}

fn main() -> ExitCode {
    let tests = [
        Test::tokio("sqlite_the_other_instance_rejoins_the_answer", || {
            the_other_instance_rejoins_the_answer_and_reads_it_whole(Database::Sqlite, "rejoin")
        }),
        Test::tokio(
            "sqlite_a_stop_sent_to_the_other_instance_stops_the_answer",
            || a_stop_sent_to_the_other_instance_stops_the_answer(Database::Sqlite, "stop"),
        ),
        Test::tokio(
            "sqlite_with_no_answer_under_way_the_other_instance_says_so",
            || with_no_answer_under_way_the_other_instance_says_so(Database::Sqlite, "none"),
        ),
        Test::tokio("postgres_the_other_instance_rejoins_the_answer", || {
            the_other_instance_rejoins_the_answer_and_reads_it_whole(
                Database::Postgres,
                "answers_rejoin",
            )
        })
        .needs(&POSTGRES),
        Test::tokio(
            "postgres_a_stop_sent_to_the_other_instance_stops_the_answer",
            || {
                a_stop_sent_to_the_other_instance_stops_the_answer(
                    Database::Postgres,
                    "answers_stop",
                )
            },
        )
        .needs(&POSTGRES),
        Test::tokio(
            "postgres_with_no_answer_under_way_the_other_instance_says_so",
            || {
                with_no_answer_under_way_the_other_instance_says_so(
                    Database::Postgres,
                    "answers_none",
                )
            },
        )
        .needs(&POSTGRES),
    ];
    let code = tests::peers::main(tests);
    tests::postgres::stop_shared();
    code
}
