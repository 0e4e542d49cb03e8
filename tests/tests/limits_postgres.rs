//! Limits per user kept in PostgreSQL (`PostgresLimits`), against a real server started by the
//! test (see `tests::postgres`): two chat servers on one database, each with its own pools as two
//! instances behind a load balancer would have, share every user's budgets; a user's runs under way
//! are counted across them, and a run whose instance died stops counting after its lease.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, ChatResponse, Usage};
use agent_sql::PostgresSessions;
use agent_sql::deadpool_postgres::tokio_postgres::NoTls;
use agent_sql::deadpool_postgres::{Manager, Pool};
use agent_web::{ChatServer, LimitStore, PostgresLimits, Refused, UserLimits};
use serde_json::json;
use tests::peers::Test;
use tests::postgres::{POSTGRES, shared};

/// A pool of its own on the database at `url`, as another process would have.
fn pool(url: &str) -> Pool {
    let config: agent_sql::deadpool_postgres::tokio_postgres::Config = url.parse().unwrap();
    Pool::builder(Manager::new(config, NoTls))
        .max_size(4)
        .build()
        .unwrap()
}

/// A chat server on the database at `url` whose model answers `replies`, counting `limits` there;
/// its base URL.
async fn instance(url: &str, replies: Vec<ChatResponse>, limits: UserLimits) -> String {
    let store = PostgresSessions::connect(url).await.unwrap();
    let counted = PostgresLimits::new(pool(url)).await.unwrap();
    let agent: Agent = Agent::new(ScriptedModel::new(replies));
    let server = ChatServer::new(Arc::new(agent))
        .sessions(Arc::new(store))
        .limits(limits.kept_in(counted));
    tests::serve_chat(server).await
}

/// Posts a message to chat `chat` at `base`; the status and the `retry-after` header, if any.
async fn ask(base: &str, chat: &str, text: &str) -> (u16, Option<u64>) {
    let body = json!({
        "id": chat,
        "messages": [{ "id": text, "role": "user", "parts": [{ "type": "text", "text": text }] }]
    });
    let reply = reqwest::Client::new()
        .post(format!("{base}/api/chat"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let wait = reply
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().parse().unwrap());
    reply.text().await.unwrap();
    (status, wait)
}

fn answer(text: &str, tokens: u64) -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(text))
        .with_usage(Usage::new(tokens / 2, tokens - tokens / 2))
}

/// Two requests a minute: the third is refused whichever instance it reaches.
async fn two_instances_share_a_request_budget() {
    let url = shared().fresh_database("limits_requests").await;
    let limits = UserLimits::new().requests(2, Duration::from_secs(60));
    let replies = || vec![answer("One.", 1), answer("Two.", 1), answer("Three.", 1)];
    let one = instance(&url, replies(), limits.clone()).await;
    let two = instance(&url, replies(), limits).await;
    assert_eq!(ask(&one, "a", "1").await.0, 200);
    assert_eq!(ask(&two, "b", "2").await.0, 200);
    let (status, wait) = ask(&one, "c", "3").await;
    assert_eq!(status, 429);
    assert!((1..=60).contains(&wait.unwrap()), "{wait:?}");
    assert_eq!(ask(&two, "c", "3").await.0, 429);
}

/// A token budget crossed through one instance closes the other to new runs.
async fn two_instances_share_a_token_budget() {
    let url = shared().fresh_database("limits_tokens").await;
    let limits = UserLimits::new().tokens(100, Duration::from_secs(60));
    let one = instance(&url, vec![answer("Long.", 150)], limits.clone()).await;
    let two = instance(&url, vec![answer("Never.", 1)], limits).await;
    assert_eq!(ask(&one, "a", "Tell me everything").await.0, 200);
    let (status, wait) = ask(&two, "b", "And more").await;
    assert_eq!(status, 429);
    assert!(wait.is_some());
}

/// Runs under way, counted in the database: a second run of the user waits for the first, on
/// either store; a run let go of frees its place; one never let go of (its instance died) stops
/// counting after the lease.
async fn runs_under_way_are_counted_across_instances_and_leased() {
    let url = shared().fresh_database("limits_runs").await;
    let one = PostgresLimits::new(pool(&url)).await.unwrap();
    let two = PostgresLimits::new(pool(&url)).await.unwrap();
    let limits = UserLimits::new().concurrent_runs(1);
    let first = one.admit("ann", &limits).await.unwrap();
    assert!(matches!(
        two.admit("ann", &limits).await,
        Err(Refused::Wait(_))
    ));
    // Another user has places of their own.
    two.admit("bob", &limits).await.unwrap();
    one.release("ann", first);
    // The release is written by a task of its own: wait for it.
    let mut admitted = None;
    for _ in 0..50 {
        if let Ok(run) = two.admit("ann", &limits).await {
            admitted = Some(run);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(admitted.is_some(), "ann's first run was never let go of");
    // Bob's instance died with his run under way (it is never let go of): past the lease it no
    // longer counts.
    let leased = UserLimits::new()
        .concurrent_runs(1)
        .run_lease(Duration::from_millis(200));
    assert!(one.admit("bob", &leased).await.is_err());
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(one.admit("bob", &leased).await.is_ok());
}

fn main() -> ExitCode {
    let tests = [
        Test::tokio(
            "two_instances_share_a_request_budget",
            two_instances_share_a_request_budget,
        ),
        Test::tokio(
            "two_instances_share_a_token_budget",
            two_instances_share_a_token_budget,
        ),
        Test::tokio(
            "runs_under_way_are_counted_across_instances_and_leased",
            runs_under_way_are_counted_across_instances_and_leased,
        ),
    ];
    let code = tests::peers::main(tests.map(|test| test.needs(&POSTGRES)));
    tests::postgres::stop_shared();
    code
}
