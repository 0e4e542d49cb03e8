//! The web chat with its conversations in PostgreSQL, for people signed in by a proxy in front
//! of it: several instances on one database (behind a load balancer) serve the same chats, each
//! person's chats their own.
//!
//! ```text
//! DATABASE_URL=postgres://agent@db.internal/chats cargo run -p examples --example web_postgres -- --port 3000
//! ```
//!
//! The store makes its tables on first connect. Requests must carry the `x-forwarded-user`
//! header (the sign-in proxy sets it; without it, `401`): `ChatServer::identify` turns it into
//! the run's user (see `examples::signed_in`), whose chats are their own. Two instances on one
//! database, each on a port of its
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

use agent_sql::PostgresSessions;
use agent_web::ChatServer;
use examples::assistant::served_assistant;
use examples::signed_in::{User, signed_in};

#[tokio::main]
async fn main() -> ExitCode {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!(
            "set DATABASE_URL to a PostgreSQL database (postgres://user:password@host/dbname)"
        );
        return ExitCode::from(2);
    };
    let (agent, listener) = match served_assistant::<User>("web_postgres", 3000).await {
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
    let app = ChatServer::new(Arc::new(agent))
        .sessions(Arc::new(store))
        .identify(signed_in)
        .router();
    match agent_web::serve_router(listener, app).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_core::session::MemorySessions;
    use examples::assistant::{StandIn, assistant};
    use examples::signed_in::USER_HEADER;

    use super::*;

    /// Serves the signed-in chat on a loopback port: its `/api/chat` URL.
    async fn serve() -> String {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let app = ChatServer::new(Arc::new(assistant::<User>(StandIn)))
            .sessions(Arc::new(MemorySessions::new()))
            .identify(signed_in)
            .router();
        tokio::spawn(async move { agent_web::serve_router(listener, app).await });
        format!("http://{address}/api/chat")
    }

    /// A request for chat `chat`: `text` after `answers` earlier messages of it.
    fn ask(chat: &str, text: &str, earlier: &[serde_json::Value]) -> serde_json::Value {
        let mut messages = earlier.to_vec();
        messages.push(serde_json::json!({
            "id": format!("m{}", messages.len() + 1),
            "role": "user",
            "parts": [{ "type": "text", "text": text }],
        }));
        serde_json::json!({ "id": chat, "messages": messages })
    }

    async fn post(api: &str, user: Option<&str>, body: &serde_json::Value) -> (u16, String) {
        let mut request = reqwest::Client::new().post(api).json(body);
        if let Some(user) = user {
            request = request.header(USER_HEADER, user);
        }
        let reply = request.send().await.unwrap();
        (reply.status().as_u16(), reply.text().await.unwrap())
    }

    #[tokio::test]
    async fn a_request_without_the_sign_in_header_is_refused() {
        let api = serve().await;
        let (status, body) = post(&api, None, &ask("c1", "Weather in Paris?", &[])).await;
        assert_eq!(status, 401);
        assert_eq!(body, "sign in first");
    }

    #[tokio::test]
    async fn each_person_has_chats_of_their_own() {
        let api = serve().await;
        let (status, body) = post(&api, Some("alice"), &ask("c1", "Weather in Paris?", &[])).await;
        assert_eq!(status, 200);
        assert!(body.contains("[DONE]"));
        // Bob going on with alice's chat `c1` (after an answer of it) finds no such chat.
        let answer = serde_json::json!({
            "id": "a1", "role": "assistant", "parts": [{ "type": "text", "text": "Sunny." }],
        });
        let user_message = serde_json::json!({
            "id": "m1", "role": "user", "parts": [{ "type": "text", "text": "Weather in Paris?" }],
        });
        let earlier = [user_message, answer];
        let (status, _) = post(&api, Some("bob"), &ask("c1", "And in Oslo?", &earlier)).await;
        assert_eq!(status, 404);
        // Alice goes on with it.
        let (status, body) = post(&api, Some("alice"), &ask("c1", "And in Oslo?", &earlier)).await;
        assert_eq!(status, 200);
        assert!(body.contains("[DONE]"));
    }
}
