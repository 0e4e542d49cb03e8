//! The PostgreSQL session store against a real server (started by the test, see
//! `tests::postgres`): the contract the memory and SQLite stores pass (runs go on from each other,
//! a paused run is kept, stale appends and cuts are refused, cuts are whole), with two stores on
//! one database standing for two processes; runs on a conversation serialized across stores by the
//! advisory lock; the schema versioned; a writer killed with SIGKILL mid-append leaves nothing
//! half-written; no password in errors or `Debug` output; two `ChatServer` processes on one
//! database serving one chat in turn, an approval asked by one answered through the other; one of
//! them killed while a slow tool runs, the chat going on through the other as it was before the
//! killed turn. And 300 turns kept within a small model's window by a context policy.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_core::Message;
use agent_core::session::{SessionError, SessionStore};
use agent_sql::PostgresSessions;
use agent_sql::deadpool_postgres::tokio_postgres::{self, NoTls};
use agent_sql::deadpool_postgres::{Manager, Pool};
use tests::peers::Test;
use tests::postgres::{POSTGRES, shared};
use tests::session_contract as contract;

/// A store on a fresh database, and the database's URL.
async fn fresh(name: &str) -> (PostgresSessions, String) {
    let url = shared().fresh_database(name).await;
    let store = PostgresSessions::connect(&url).await.unwrap();
    (store, url)
}

async fn runs_in_a_conversation_go_on_from_each_other() {
    let (store, url) = fresh("go_on").await;
    contract::two_runs_see_each_other(&store).await;
    // Another process on the database: the same conversation.
    let again = PostgresSessions::connect(&url).await.unwrap();
    assert_eq!(again.ids().await.unwrap(), ["alice"]);
    assert_eq!(again.load("alice").await.unwrap().messages.len(), 9);
    assert_eq!(again.schema_version().await.unwrap(), 5);
}

async fn conversations_are_listed_newest_first_with_their_titles() {
    let (store, _) = fresh("listed").await;
    contract::conversations_are_listed_newest_first_with_their_titles(&store).await;
}

/// Three hundred turns kept within a small model's window by a token window; the store keeps
/// every message (the same run as `context_policy.rs` on SQLite).
async fn three_hundred_turns_stay_in_a_token_window() {
    let (store, _) = fresh("long").await;
    tests::long_conversation::three_hundred_turns_in_a_token_window(&store).await;
}

/// Three hundred turns kept within the window by summaries, stored with what they stand for; the
/// second half by another process (the same run as `context_policy.rs` on SQLite).
async fn three_hundred_turns_are_summarized_and_the_conversation_reloads() {
    let (store, url) = fresh("summarized").await;
    let reopened = PostgresSessions::connect(&url).await.unwrap();
    tests::long_conversation::three_hundred_turns_summarized(&store, &reopened).await;
}

/// Summaries and usage kept with a conversation, seen by another process.
async fn summaries_and_usage_are_kept_with_the_conversation() {
    let (one, url) = fresh("summaries").await;
    let two = PostgresSessions::connect(&url).await.unwrap();
    contract::summaries_and_usage_are_kept(&one, &two).await;
}

/// Child runs kept with a conversation, seen by another process.
async fn child_runs_are_kept_with_the_conversation() {
    let (one, url) = fresh("children").await;
    let two = PostgresSessions::connect(&url).await.unwrap();
    contract::child_runs_are_kept(&one, &two).await;
}

async fn a_paused_run_is_kept_and_resumed_by_another_process() {
    let (first, url) = fresh("paused").await;
    let second = PostgresSessions::connect(&url).await.unwrap();
    contract::a_paused_run_is_kept(&first, &second).await;
}

/// Fifty runs over five conversations, alternately on two stores (each its own pool and in-memory
/// locks, as two processes): the advisory lock serializes them, so none is refused as a conflict.
async fn runs_on_two_stores_on_one_database_are_serialized() {
    let (first, url) = fresh("concurrent").await;
    let second = PostgresSessions::connect(&url).await.unwrap();
    contract::fifty_runs_over_five_conversations(&[Arc::new(first), Arc::new(second)]).await;
}

/// A hold on one store keeps another store's hold on the same conversation waiting (and not one
/// on another conversation); a wait given up does not leave the conversation locked.
async fn a_hold_waits_for_another_stores_hold() {
    let (first, url) = fresh("holds").await;
    let second = PostgresSessions::connect(&url).await.unwrap();
    let held = first.hold("c").await;
    let other = tokio::time::timeout(Duration::from_secs(5), second.hold("other")).await;
    assert!(other.is_ok(), "another conversation does not wait");
    drop(other);
    let waiting = tokio::time::timeout(Duration::from_millis(300), second.hold("c")).await;
    assert!(
        waiting.is_err(),
        "the second store's hold waits for the first's"
    );
    // The given-up wait's connection was closed: once the first hold drops, a hold goes through.
    drop(held);
    let after = tokio::time::timeout(Duration::from_secs(10), second.hold("c")).await;
    assert!(after.is_ok(), "the conversation is free again");
    drop(after);
    let again = tokio::time::timeout(Duration::from_secs(10), first.hold("c")).await;
    assert!(
        again.is_ok(),
        "and free again after the second store's hold"
    );
}

async fn an_append_from_a_stale_load_is_refused() {
    let (one, url) = fresh("stale").await;
    let two = PostgresSessions::connect(&url).await.unwrap();
    contract::an_append_from_a_stale_load_is_refused(&one, &two).await;
}

async fn a_conversation_is_cut_back_whole_and_a_paused_run_with_it() {
    let (one, url) = fresh("cut").await;
    contract::a_conversation_is_cut_back_whole(&one).await;
    let two = PostgresSessions::connect(&url).await.unwrap();
    contract::a_cut_refuses_a_stale_append(&one, &two).await;
}

async fn a_run_refused_before_the_model_leaves_the_conversation_as_it_was() {
    let (store, _) = fresh("refused").await;
    contract::a_run_refused_before_the_model_leaves_the_conversation(&store).await;
}

async fn a_database_from_a_newer_build_is_refused() {
    let (store, url) = fresh("newer").await;
    assert_eq!(store.schema_version().await.unwrap(), 5);
    let client = store.pool().get().await.unwrap();
    client
        .batch_execute("UPDATE agent_core_schema SET version = 99")
        .await
        .unwrap();
    drop(client);
    let error = PostgresSessions::connect(&url).await.unwrap_err();
    assert!(
        matches!(&error, SessionError::Store { message } if message.contains("schema version 99")),
        "{error}"
    );
}

async fn a_pool_of_one_connection_is_refused() {
    let url = shared().fresh_database("tiny").await;
    let manager = Manager::new(url.parse::<tokio_postgres::Config>().unwrap(), NoTls);
    let pool = Pool::builder(manager).max_size(1).build().unwrap();
    let error = PostgresSessions::from_pool(pool).await.unwrap_err();
    assert!(
        matches!(&error, SessionError::Store { message } if message.contains("two at least")),
        "{error}"
    );
}

/// The password is in no error and no `Debug` output (trust auth takes any password, so the store
/// connects with it; a database that is not there makes the error).
async fn no_password_in_errors_or_debug() {
    const SECRET: &str = "s3cret-pass";
    let server = shared();
    let url = server.fresh_database("password").await;
    let with_password = url.replace("postgres@", &format!("postgres:{SECRET}@"));
    let store = PostgresSessions::connect(&with_password).await.unwrap();
    let debug = format!("{store:?} {:?}", store.pool());
    assert!(!debug.contains(SECRET), "{debug}");
    let missing = format!(
        "postgres://postgres:{SECRET}@127.0.0.1:{}/nowhere",
        server.port
    );
    let error = PostgresSessions::connect(&missing).await.unwrap_err();
    assert!(!format!("{error} {error:?}").contains(SECRET), "{error:?}");
    assert!(error.to_string().contains("nowhere"), "{error}");
    let unparsed = format!("postgres://postgres:{SECRET}@127.0.0.1:notaport/x");
    let error = PostgresSessions::connect(&unparsed).await.unwrap_err();
    assert!(!format!("{error} {error:?}").contains(SECRET), "{error:?}");
}

/// Set in the crash test's child process: the URL it appends to.
const CRASH_WRITER: &str = "SESSIONS_POSTGRES_CRASH_URL";

/// The crash test's child: appends batches of large messages forever, printing a line after each.
fn crash_test_writer(url: &str) -> ! {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = PostgresSessions::connect(url).await.unwrap();
        contract::append_batches_until_killed(&store).await;
    });
    std::process::exit(0)
}

async fn a_writer_killed_mid_append_leaves_nothing_half_written() {
    use tokio::io::AsyncBufReadExt;

    let (store, url) = fresh("crash").await;
    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(CRASH_WRITER, &url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut rounds = 0;
    while rounds < 3 {
        match lines.next_line().await.unwrap() {
            Some(line) if line.starts_with("appended") => rounds += 1,
            Some(_) => {}
            None => panic!("the writer stopped early"),
        }
    }
    tokio::time::sleep(Duration::from_millis(7)).await;
    assert!(
        child.try_wait().unwrap().is_none(),
        "the writer is still writing"
    );
    // SIGKILL: no destructor, no rollback by the writer itself; the server rolls back.
    child.start_kill().unwrap();
    let status = child.wait().await.unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    drop(lines);
    contract::only_whole_batches_survive(&store).await;
}

/// Set in the two-servers test's children: the URL their store connects to.
const CHAT_SERVER: &str = "SESSIONS_POSTGRES_SERVE_URL";

/// The two-servers test's child: a `ChatServer` with the PostgreSQL store and the note-taking
/// model on a loopback port, which it prints.
fn chat_server(url: &str) -> ! {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = PostgresSessions::connect(url).await.unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("listening {}", listener.local_addr().unwrap().port());
        // Both servers sign grants with the same key, as instances given it from a secret store.
        // Chats under their ids: the client keeps no cookies, and the test reads them by id.
        agent_web::ChatServer::new(Arc::new(contract::agent()))
            .sessions(Arc::new(store))
            .grant_keys(["the-instances-shared-grant-key"])
            .shared_chats()
            .serve(listener)
            .await
            .unwrap();
    });
    std::process::exit(0)
}

/// A chat server in a process of its own on database `url`: the process, and its base URL.
async fn spawn_chat_server(url: &str) -> (tokio::process::Child, String) {
    use tokio::io::AsyncBufReadExt;

    let mut child = tokio::process::Command::new(std::env::current_exe().unwrap())
        .env(CHAT_SERVER, url)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    loop {
        let line = lines.next_line().await.unwrap().expect("the server's port");
        if let Some(port) = line.strip_prefix("listening ") {
            return (child, format!("http://127.0.0.1:{port}/api/chat"));
        }
    }
}

/// Posts one UI message of chat `chat` (the server keeps the rest); the stream's chunks.
async fn post(api: &str, chat: &str, message: serde_json::Value) -> Vec<serde_json::Value> {
    let reply = reqwest::Client::new()
        .post(api)
        .json(&serde_json::json!({ "id": chat, "messages": [message] }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    let text = reply.text().await.unwrap();
    text.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .filter(|data| *data != "[DONE]")
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn user(id: &str, text: &str) -> serde_json::Value {
    serde_json::json!({ "id": id, "role": "user", "parts": [{ "type": "text", "text": text }] })
}

/// Two chat servers, two processes, on one database: one chat continued on each in turn, each
/// going on from the other's answers; an approval asked by one and answered through the other.
async fn two_chat_servers_on_one_database_share_a_chat() {
    let url = shared().fresh_database("two_servers").await;
    let (_one, api_one) = spawn_chat_server(&url).await;
    let (_two, api_two) = spawn_chat_server(&url).await;
    let questions = ["buy milk", "call mum", "feed the cat", "water the plants"];
    for (turn, question) in questions.iter().enumerate() {
        let api = if turn % 2 == 0 { &api_one } else { &api_two };
        let chunks = post(api, "shared", user(&format!("u{turn}"), question)).await;
        assert!(
            chunks.iter().any(|chunk| chunk["type"] == "finish"),
            "{chunks:?}"
        );
    }
    let store = PostgresSessions::connect(&url).await.unwrap();
    let messages = store.load("shared").await.unwrap().messages;
    // The system prompt, then four messages per turn, in the order asked.
    assert_eq!(messages.len(), 1 + 4 * questions.len(), "{messages:?}");
    contract::assert_valid(&messages);
    let asked: Vec<&str> = messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, questions);

    // Asked on the first server, answered through the second.
    let chunks = post(&api_one, "shared", user("u9", "wipe it all")).await;
    let request = chunks
        .iter()
        .find(|chunk| chunk["type"] == "tool-approval-request")
        .unwrap_or_else(|| panic!("no approval asked: {chunks:?}"));
    let call = request["toolCallId"].as_str().unwrap().to_owned();
    let approval = request["approvalId"].as_str().unwrap().to_owned();
    let message_id = chunks[0]["messageId"].as_str().unwrap().to_owned();
    // The grant the first server gave the call, which the client keeps in the message.
    let grant = chunks
        .iter()
        .find(|chunk| chunk["type"] == "data-call-grant")
        .unwrap_or_else(|| panic!("no grant given: {chunks:?}"))
        .clone();
    assert!(store.load("shared").await.unwrap().paused.is_some());
    let answer = serde_json::json!({
        "id": message_id,
        "role": "assistant",
        "parts": [{
            "type": "tool-wipe",
            "toolCallId": call,
            "state": "approval-responded",
            "input": {},
            "approval": { "id": approval, "approved": true },
        }, grant],
    });
    let chunks = post(&api_two, "shared", answer).await;
    assert!(
        chunks
            .iter()
            .any(|chunk| chunk["type"] == "tool-output-available"
                && chunk["toolCallId"] == call.as_str()
                && chunk["output"] == "wiped"),
        "{chunks:?}"
    );
    let stored = store.load("shared").await.unwrap();
    assert!(stored.paused.is_none());
    contract::assert_valid(&stored.messages);
    let wiped = stored
        .messages
        .iter()
        .filter(|message| matches!(message, Message::Tool(result) if result.content == "wiped"))
        .count();
    assert_eq!(wiped, 1, "the approved call ran once");
}

/// A chat server killed (SIGKILL) while its run's slow tool works, the chat then going on through
/// another server on the same database. What the design guarantees: a run keeps its transcript
/// step by step, each part in one transaction (a reply before its calls run, the step's results
/// when they are in), so a process killed while a tool works has kept the turn up to that call's
/// reply, whole; the next run answers the call as interrupted (it may have had its effect) before
/// anything is sent; the killed process's connections close with it, PostgreSQL lets go of their
/// advisory locks, and the other server takes the conversation at once (not after a timeout).
async fn a_chat_server_killed_while_a_slow_tool_runs_keeps_the_turn_up_to_its_call() {
    let url = shared().fresh_database("killed").await;
    let (mut one, api_one) = spawn_chat_server(&url).await;
    let (_two, api_two) = spawn_chat_server(&url).await;
    let chunks = post(&api_one, "killed", user("u0", "buy milk")).await;
    assert!(chunks.iter().any(|chunk| chunk["type"] == "finish"));
    let store = PostgresSessions::connect(&url).await.unwrap();
    let before = store.load("killed").await.unwrap();
    assert_eq!(before.messages.len(), 5, "{:?}", before.messages);

    // The slow turn on the first server: read its stream until the tool's call is out (the tool
    // runs from then on, for two minutes), then kill the server.
    let slow = format!("{} feed the cat", contract::SLOWLY);
    let mut reply = reqwest::Client::new()
        .post(&api_one)
        .json(&serde_json::json!({ "id": "killed", "messages": [user("u1", &slow)] }))
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    let mut streamed = String::new();
    while !streamed.contains("tool-input-available") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), reply.chunk())
            .await
            .expect("the call streams")
            .unwrap()
            .expect("the stream goes on while the tool runs");
        streamed.push_str(&String::from_utf8_lossy(&chunk));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(one.try_wait().unwrap().is_none(), "the first server runs");
    assert!(
        !streamed.contains("tool-output"),
        "the tool is still at work"
    );
    one.start_kill().unwrap();
    let status = one.wait().await.unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(9)
    );
    // The client sees its stream cut short, not finished.
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = reply.chunk().await {
            streamed.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    assert!(rest.is_ok(), "the stream ends with the server");
    assert!(!streamed.contains("[DONE]"), "{streamed}");

    // The killed turn was kept up to the reply whose call was at work: the question and the
    // reply, whole, and nothing after.
    let after_kill = store.load("killed").await.unwrap();
    assert_eq!(after_kill.messages.len(), 7, "{:?}", after_kill.messages);
    assert_eq!(after_kill.messages[..5], before.messages[..]);
    assert_eq!(after_kill.messages[5].content(), slow);
    let Message::Assistant(cut) = &after_kill.messages[6] else {
        panic!("the reply of the killed step: {:?}", after_kill.messages[6]);
    };
    assert_eq!(cut.tool_calls[0].name, "note");
    assert!(after_kill.paused.is_none());

    // The second server takes the chat at once: no advisory lock left behind.
    let started = std::time::Instant::now();
    let chunks = tokio::time::timeout(
        Duration::from_secs(20),
        post(&api_two, "killed", user("u2", "call mum")),
    )
    .await
    .expect("the second server answers, no lock left waiting");
    let took = started.elapsed();
    assert!(took < Duration::from_secs(5), "served after {took:?}");
    assert!(
        chunks.iter().any(|chunk| chunk["type"] == "finish"),
        "{chunks:?}"
    );
    // The cut call answered as interrupted, then the new turn: every call answered.
    let stored = store.load("killed").await.unwrap();
    assert_eq!(stored.messages.len(), 12, "{:?}", stored.messages);
    assert_eq!(stored.messages[..7], after_kill.messages[..]);
    contract::assert_valid(&stored.messages);
    let Message::Tool(repaired) = &stored.messages[7] else {
        panic!("the cut call's answer: {:?}", stored.messages[7]);
    };
    assert_eq!(repaired.tool_call_id, cut.tool_calls[0].id);
    assert!(repaired.is_error);
    assert!(
        repaired.content.contains("may have started"),
        "{}",
        repaired.content
    );
    let asked: Vec<&str> = stored
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["buy milk", slow.as_str(), "call mum"]);
    // And the next one, on the second server again, goes on from it.
    let chunks = post(&api_two, "killed", user("u3", "water the plants")).await;
    assert!(chunks.iter().any(|chunk| chunk["type"] == "finish"));
    assert_eq!(store.load("killed").await.unwrap().messages.len(), 16);
}

fn main() -> ExitCode {
    if let Ok(url) = std::env::var(CRASH_WRITER) {
        crash_test_writer(&url);
    }
    if let Ok(url) = std::env::var(CHAT_SERVER) {
        chat_server(&url);
    }
    let tests = [
        Test::tokio(
            "runs_in_a_conversation_go_on_from_each_other",
            runs_in_a_conversation_go_on_from_each_other,
        ),
        Test::tokio(
            "conversations_are_listed_newest_first_with_their_titles",
            conversations_are_listed_newest_first_with_their_titles,
        ),
        Test::tokio(
            "three_hundred_turns_stay_in_a_token_window",
            three_hundred_turns_stay_in_a_token_window,
        ),
        Test::tokio(
            "three_hundred_turns_are_summarized_and_the_conversation_reloads",
            three_hundred_turns_are_summarized_and_the_conversation_reloads,
        ),
        Test::tokio(
            "summaries_and_usage_are_kept_with_the_conversation",
            summaries_and_usage_are_kept_with_the_conversation,
        ),
        Test::tokio(
            "child_runs_are_kept_with_the_conversation",
            child_runs_are_kept_with_the_conversation,
        ),
        Test::tokio(
            "a_paused_run_is_kept_and_resumed_by_another_process",
            a_paused_run_is_kept_and_resumed_by_another_process,
        ),
        Test::tokio(
            "runs_on_two_stores_on_one_database_are_serialized",
            runs_on_two_stores_on_one_database_are_serialized,
        ),
        Test::tokio(
            "a_hold_waits_for_another_stores_hold",
            a_hold_waits_for_another_stores_hold,
        ),
        Test::tokio(
            "an_append_from_a_stale_load_is_refused",
            an_append_from_a_stale_load_is_refused,
        ),
        Test::tokio(
            "a_conversation_is_cut_back_whole_and_a_paused_run_with_it",
            a_conversation_is_cut_back_whole_and_a_paused_run_with_it,
        ),
        Test::tokio(
            "a_run_refused_before_the_model_leaves_the_conversation_as_it_was",
            a_run_refused_before_the_model_leaves_the_conversation_as_it_was,
        ),
        Test::tokio(
            "a_database_from_a_newer_build_is_refused",
            a_database_from_a_newer_build_is_refused,
        ),
        Test::tokio(
            "a_pool_of_one_connection_is_refused",
            a_pool_of_one_connection_is_refused,
        ),
        Test::tokio(
            "no_password_in_errors_or_debug",
            no_password_in_errors_or_debug,
        ),
        Test::tokio(
            "a_writer_killed_mid_append_leaves_nothing_half_written",
            a_writer_killed_mid_append_leaves_nothing_half_written,
        ),
        Test::tokio(
            "two_chat_servers_on_one_database_share_a_chat",
            two_chat_servers_on_one_database_share_a_chat,
        ),
        Test::tokio(
            "a_chat_server_killed_while_a_slow_tool_runs_keeps_the_turn_up_to_its_call",
            a_chat_server_killed_while_a_slow_tool_runs_keeps_the_turn_up_to_its_call,
        ),
    ];
    let code = tests::peers::main(tests.map(|test| test.needs(&POSTGRES)));
    tests::postgres::stop_shared();
    code
}
