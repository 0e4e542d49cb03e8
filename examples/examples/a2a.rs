//! An agent served over A2A, the Agent2Agent protocol: its card at
//! `/.well-known/agent-card.json`, JSON-RPC at `/`, for other agents and any A2A client.
//!
//! `cargo run -p examples --example a2a` serves on `http://127.0.0.1:4000` (`--port 0` picks a
//! free port) and prints the URL. Offline by default: a small stand-in model answers weather
//! questions with the weather tool and asks before deleting notes (the task waits,
//! `input-required`, for the client's decision); with a provider in the environment (see
//! `providers::from_env`) a real model answers. Approvals reach the client because the
//! assistant defers them (`Agent::defer_approvals`).
//!
//! `cargo run -p examples --example a2a -- --tck [--port PORT]` serves the agent under test of
//! the A2A compatibility kit instead (`agent_a2a::tck`): run the kit's `run_tck.py --sut-host
//! http://127.0.0.1:4000 --transport jsonrpc` against it.

use std::process::ExitCode;
use std::sync::Arc;

use agent_a2a::A2aServer;
use examples::assistant::{port_argument, served_assistant};

#[tokio::main]
async fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let (server, listener) = if arguments.first().is_some_and(|first| first == "--tck") {
        let port = match port_argument(&arguments[1..], 4000) {
            Ok(port) => port,
            Err(message) => {
                eprintln!("{message}\nusage: a2a --tck [--port PORT]");
                return ExitCode::from(2);
            }
        };
        match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
            Ok(listener) => (agent_a2a::tck::server(), listener),
            Err(error) => {
                eprintln!("error: cannot listen on 127.0.0.1:{port}: {error}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        match served_assistant("a2a", 4000).await {
            Ok((agent, listener)) => (A2aServer::new(Arc::new(agent)), listener),
            Err(code) => return code,
        }
    };
    match listener.local_addr() {
        Ok(address) => println!("A2A agent on http://{address}/ (Ctrl-C stops)"),
        Err(error) => eprintln!("warning: {error}"),
    }
    match server.serve(listener).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_a2a::{A2aClient, Message, MessagePart, SendResult, Task, TaskState};
    use examples::assistant::{StandIn, assistant};
    use serde_json::{Value, json};

    use super::*;

    /// Serves `server` on a loopback port; a client of it.
    async fn client_of(server: A2aServer) -> A2aClient {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(server.serve(listener));
        A2aClient::connect(&url).await.unwrap()
    }

    /// Sends `message`; the task it made or answered.
    async fn task(client: &A2aClient, message: Message) -> Task {
        match client.send(message).await.unwrap() {
            SendResult::Task(task) => task,
            SendResult::Message(message) => panic!("a task, not {message:?}"),
        }
    }

    #[tokio::test]
    async fn it_answers_and_asks_before_deleting() {
        let client = client_of(A2aServer::new(Arc::new(assistant(StandIn)))).await;
        let asked = Message::user(vec![MessagePart::text("Weather in Beijing?")]);
        let answered = task(&client, asked).await;
        assert_eq!(answered.status.state, TaskState::Completed);
        let said = answered.status.message.unwrap().text();
        assert!(said.contains("Done. The tool said:"), "{said}");

        let delete = Message::user(vec![MessagePart::text("Delete my notes")]);
        let waiting = task(&client, delete).await;
        assert_eq!(waiting.status.state, TaskState::InputRequired);
        let parts = &waiting.status.message.as_ref().unwrap().parts;
        let listed: &Value = parts.iter().find_map(|part| part.data.as_ref()).unwrap();
        let call = &listed["waiting"][0];
        assert_eq!(call["tool"], "delete_notes");
        let decisions = json!({"decisions": [{"grant": call["grant"], "approved": true}]});
        let mut approve = Message::user(vec![MessagePart::data(decisions)]);
        approve.task_id = Some(waiting.id.clone());
        let done = task(&client, approve).await;
        assert_eq!(done.status.state, TaskState::Completed);
        assert!(
            done.status
                .message
                .unwrap()
                .text()
                .contains("deleted 12 notes")
        );
    }

    #[tokio::test]
    async fn with_tck_it_plays_the_kits_scenarios() {
        let client = client_of(agent_a2a::tck::server()).await;
        let scenario = |id: &str| {
            let mut message = Message::user(vec![MessagePart::text("Hi")]);
            message.message_id = format!("{id}-{}", agent_core::RunId::new());
            message
        };
        let completed = task(&client, scenario("tck-complete-task")).await;
        assert_eq!(completed.status.state, TaskState::Completed);
        assert_eq!(completed.status.message.unwrap().text(), "Hello from TCK");
        let data = task(&client, scenario("tck-artifact-data")).await;
        assert_eq!(
            data.artifacts[0].parts[0].data,
            Some(json!({"key": "value", "count": 42}))
        );
        let waits = task(&client, scenario("tck-input-required")).await;
        assert_eq!(waits.status.state, TaskState::InputRequired);
    }
}
