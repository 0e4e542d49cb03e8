//! An agent as a web service: the AI SDK's UI message stream at `POST /api/chat`, which `useChat`
//! front ends read, and a chat page at `/`.
//!
//! `cargo run -p examples --example web` serves on `http://127.0.0.1:3000` (`--port 0` picks a
//! free port) and prints the URL. Offline by default: a small stand-in model answers weather
//! questions with the weather tool and asks before deleting notes (the page shows Approve /
//! Deny); with a provider in the environment (see `providers::from_env`) a real model answers.

use std::process::ExitCode;
use std::sync::Arc;

use agent_web::ChatServer;
use examples::assistant::served_assistant;

#[tokio::main]
async fn main() -> ExitCode {
    let (agent, listener) = match served_assistant("web", 3000).await {
        Ok(served) => served,
        Err(code) => return code,
    };
    match listener.local_addr() {
        Ok(address) => println!("chat on http://{address}/ (Ctrl-C stops)"),
        Err(error) => eprintln!("warning: {error}"),
    }
    match ChatServer::new(Arc::new(agent)).serve(listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use examples::assistant::{StandIn, assistant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// Posts `body` to `/api/chat` over a raw loopback connection; returns the whole response.
    async fn post(address: std::net::SocketAddr, body: &str) -> String {
        let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
        let request = format!(
            "POST /api/chat HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        socket.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        socket.read_to_end(&mut response).await.unwrap();
        String::from_utf8_lossy(&response).into_owned()
    }

    #[tokio::test]
    async fn it_answers_a_weather_question_as_a_ui_message_stream() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(ChatServer::new(Arc::new(assistant(StandIn))).serve(listener));
        let body = r#"{"id":"c1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Weather in Beijing?"}]}]}"#;
        let response = post(address, body).await;
        assert!(response.starts_with("HTTP/1.1 200"), "{response}");
        assert!(response.contains("x-vercel-ai-ui-message-stream: v1"));
        assert!(
            response.contains(r#""toolName":"get_weather""#),
            "{response}"
        );
        assert!(response.contains("Done. The tool said:"), "{response}");
        assert!(response.contains("data: [DONE]"));
    }
}
