//! The `web_postgres` example's pieces on a real PostgreSQL server (started by the test, see
//! `tests::postgres`): two instances, each its own store on one database, behind the sign-in
//! header; a person's chat goes on from one instance to the other, and another person's chat of
//! the same id is apart.

use std::sync::Arc;

use agent_core::Message;
use agent_core::session::SessionStore;
use agent_sql::PostgresSessions;
use agent_web::ChatServer;
use examples::assistant::{StandIn, assistant};
use examples::signed_in::{USER_HEADER, User, signed_in};
use tests::peers::Test;
use tests::postgres::{POSTGRES, shared};

/// An instance: the signed-in chat on its own store on database `url`; its `/api/chat` URL.
async fn instance(url: &str) -> String {
    let store = PostgresSessions::connect(url).await.unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let app = ChatServer::new(Arc::new(assistant::<User>(StandIn)))
        .sessions(Arc::new(store))
        .identify(signed_in)
        .router();
    tokio::spawn(async move { agent_web::serve_router(listener, app).await });
    format!("http://{address}/api/chat")
}

/// Posts `text` to chat `chat` as `user`: the stream, whole.
async fn ask(api: &str, user: &str, chat: &str, id: &str, text: &str) -> String {
    let body = serde_json::json!({
        "id": chat,
        "messages": [{ "id": id, "role": "user", "parts": [{ "type": "text", "text": text }] }],
    });
    let reply = reqwest::Client::new()
        .post(api)
        .header(USER_HEADER, user)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status().as_u16(), 200);
    reply.text().await.unwrap()
}

/// The key a server that identifies its callers keeps `user`'s chat `chat` under (its owner and
/// the chat id, joined by U+001F, as `ChatServer::identify` says).
fn kept_as(user: &str, chat: &str) -> String {
    format!("{user}\u{1f}{chat}")
}

fn asked(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::User { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

async fn two_instances_on_one_database_serve_each_persons_chats() {
    let url = shared().fresh_database("web_postgres").await;
    let one = instance(&url).await;
    let two = instance(&url).await;
    let questions = ["Weather in Paris?", "Weather in Oslo?", "Weather in Rome?"];
    for (turn, question) in questions.iter().enumerate() {
        let api = if turn % 2 == 0 { &one } else { &two };
        let stream = ask(api, "alice", "c1", &format!("m{turn}"), question).await;
        assert!(stream.contains("[DONE]"), "{stream}");
    }
    let stream = ask(&two, "bob", "c1", "m0", "Weather in Lima?").await;
    assert!(stream.contains("[DONE]"), "{stream}");

    let store = PostgresSessions::connect(&url).await.unwrap();
    let alice = store.load(&kept_as("alice", "c1")).await.unwrap().messages;
    assert_eq!(asked(&alice), questions);
    let bob = store.load(&kept_as("bob", "c1")).await.unwrap().messages;
    assert_eq!(asked(&bob), ["Weather in Lima?"]);
    assert_eq!(
        store.ids().await.unwrap(),
        [kept_as("alice", "c1"), kept_as("bob", "c1")]
    );
}

fn main() -> std::process::ExitCode {
    let code = tests::peers::main([Test::tokio(
        "two_instances_on_one_database_serve_each_persons_chats",
        two_instances_on_one_database_serve_each_persons_chats,
    )
    .needs(&POSTGRES)]);
    tests::postgres::stop_shared();
    code
}
