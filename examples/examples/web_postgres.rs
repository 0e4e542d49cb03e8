//! The web chat with its conversations in PostgreSQL, for people signed in by a proxy in front
//! of it: several instances on one database (behind a load balancer) serve the same chats, each
//! person's chats their own.
//!
//! ```text
//! DATABASE_URL=postgres://agent@db.internal/chats cargo run -p examples --example web_postgres -- --port 3000
//! ```
//!
//! The store makes its tables on first connect. Requests must carry the `x-forwarded-user`
//! header (the sign-in proxy sets it; without it, `401`): chat `c1` of `alice` is kept as
//! `alice/c1` (see `examples::signed_in`). Two instances on one database, each on a port of its
//! own, serve the same chats: a message sent to either goes on from the other's answers, and
//! runs on one chat wait for each other across both (an advisory lock). To try it without a
//! proxy, send the header yourself:
//!
//! ```text
//! curl -N localhost:3000/api/chat -H 'x-forwarded-user: alice' -H 'content-type: application/json' \
//!   -d '{"id":"c1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Weather in Paris?"}]}]}'
//! ```
//!
//! Offline by default (the stand-in model of the `web` example); with a provider in the
//! environment (see `providers::from_env`) a real model answers.

use std::process::ExitCode;
use std::sync::Arc;

use agent_core::session::PostgresSessions;
use agent_core::web::ChatServer;
use examples::assistant::served_assistant;
use examples::signed_in::signed_in;

#[tokio::main]
async fn main() -> ExitCode {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!(
            "set DATABASE_URL to a PostgreSQL database (postgres://user:password@host/dbname)"
        );
        return ExitCode::from(2);
    };
    let (agent, listener) = match served_assistant("web_postgres", 3000).await {
        Ok(served) => served,
        Err(code) => return code,
    };
    let store = match PostgresSessions::connect(&url).await {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    match listener.local_addr() {
        Ok(address) => println!("chat on http://{address}/ (Ctrl-C stops)"),
        Err(error) => eprintln!("warning: {error}"),
    }
    let app = signed_in(
        ChatServer::new(Arc::new(agent))
            .sessions(Arc::new(store))
            .router(),
    );
    match axum::serve(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_core::session::{MemorySessions, SessionStore};
    use examples::assistant::{StandIn, assistant};
    use examples::signed_in::{USER_HEADER, chat_of};

    use super::*;

    /// Serves the signed-in chat on `store` on a loopback port: its `/api/chat` URL.
    async fn serve(store: Arc<dyn SessionStore>) -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = signed_in(
            ChatServer::new(Arc::new(assistant(StandIn)))
                .sessions(store)
                .router(),
        );
        tokio::spawn(async move { axum::serve(listener, app).await });
        format!("http://{address}/api/chat")
    }

    fn ask(chat: &str, text: &str) -> serde_json::Value {
        serde_json::json!({
            "id": chat,
            "messages": [{ "id": "m1", "role": "user", "parts": [{ "type": "text", "text": text }] }],
        })
    }

    #[tokio::test]
    async fn a_request_without_the_sign_in_header_is_refused() {
        let api = serve(Arc::new(MemorySessions::new())).await;
        let reply = reqwest::Client::new()
            .post(&api)
            .json(&ask("c1", "Weather in Paris?"))
            .send()
            .await
            .unwrap();
        assert_eq!(reply.status().as_u16(), 401);
        let page = reqwest::get(api.replace("/api/chat", "/")).await.unwrap();
        assert_eq!(page.status().as_u16(), 401);
    }

    #[tokio::test]
    async fn each_person_has_chats_of_their_own() {
        let store = Arc::new(MemorySessions::new());
        let api = serve(store.clone()).await;
        for (user, text) in [("alice", "Weather in Paris?"), ("bob", "Weather in Oslo?")] {
            let reply = reqwest::Client::new()
                .post(&api)
                .header(USER_HEADER, user)
                .json(&ask("c1", text))
                .send()
                .await
                .unwrap();
            assert_eq!(reply.status().as_u16(), 200);
            assert!(reply.text().await.unwrap().contains("[DONE]"));
        }
        let alice = store.load(&chat_of("alice", "c1")).await.unwrap().messages;
        let bob = store.load(&chat_of("bob", "c1")).await.unwrap().messages;
        assert!(
            alice
                .iter()
                .any(|message| message.content() == "Weather in Paris?")
        );
        assert!(
            !alice
                .iter()
                .any(|message| message.content() == "Weather in Oslo?")
        );
        assert!(
            bob.iter()
                .any(|message| message.content() == "Weather in Oslo?")
        );
        assert!(store.load("c1").await.unwrap().messages.is_empty());
    }
}
