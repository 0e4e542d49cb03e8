//! An agent served over AG-UI, the event protocol agent front ends speak (CopilotKit, and any
//! client on `@ag-ui/client`): `POST /` takes a `RunAgentInput` and streams the run's events.
//!
//! `cargo run -p examples --example agui` serves on `http://127.0.0.1:5000` (`--port 0` picks a
//! free port) and prints the URL; pages served from `http://localhost:3000` (a front end's dev
//! server) may call it from the browser. Offline by default: a small stand-in model answers
//! weather questions with the weather tool and asks before deleting notes (the run ends with an
//! interrupt, answered with `resume`); with a provider in the environment (see
//! `providers::from_env`) a real model answers.

use std::process::ExitCode;
use std::sync::Arc;

use agent_agui::AguiServer;
use examples::assistant::served_assistant;

/// Where the front end's pages come from in development.
const FRONT_END: &str = "http://localhost:3000";

#[tokio::main]
async fn main() -> ExitCode {
    let (agent, listener) = match served_assistant("agui", 5000).await {
        Ok(served) => served,
        Err(code) => return code,
    };
    match listener.local_addr() {
        Ok(address) => println!("AG-UI agent on http://{address}/ (Ctrl-C stops)"),
        Err(error) => eprintln!("warning: {error}"),
    }
    let server = AguiServer::new(Arc::new(agent)).allow_origin(FRONT_END);
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
    use examples::assistant::{StandIn, assistant};
    use serde_json::{Value, json};

    use super::*;

    /// Posts `body` to `url`; the events of the stream it answers with.
    async fn events(url: &str, body: Value) -> Vec<Value> {
        let response = reqwest::Client::new().post(url).json(&body).send().await;
        let text = response.unwrap().text().await.unwrap();
        (text.split("\n\n"))
            .filter_map(|frame| frame.strip_prefix("data: "))
            .map(|json| serde_json::from_str(json).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn it_answers_and_asks_before_deleting() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let server = AguiServer::new(Arc::new(assistant(StandIn))).allow_origin(FRONT_END);
        tokio::spawn(server.serve(listener));
        let ask = |text: &str| {
            json!({"threadId": "t1", "runId": agent_core::RunId::new().to_string(),
                "messages": [{"id": "m1", "role": "user", "content": text}]})
        };
        let weather = events(&url, ask("Weather in Beijing?")).await;
        assert!(
            weather
                .iter()
                .any(|event| event["type"] == "TOOL_CALL_RESULT")
        );
        assert_eq!(weather.last().unwrap()["outcome"]["type"], "success");

        let delete = events(&url, ask("Delete my notes")).await;
        let interrupt = &delete.last().unwrap()["outcome"]["interrupts"][0];
        assert_eq!(interrupt["metadata"]["toolName"], "delete_notes");
        let resume = json!({"threadId": "t1", "runId": "r3", "messages": [], "resume": [
            {"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}}]});
        let approved = events(&url, resume).await;
        let result = approved
            .iter()
            .find(|event| event["type"] == "TOOL_CALL_RESULT");
        assert_eq!(result.unwrap()["content"], "deleted 12 notes");

        // The front end's pages may call it from the browser: their preflight is answered.
        let preflight = reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", FRONT_END)
            .header("access-control-request-method", "POST")
            .send()
            .await
            .unwrap();
        assert_eq!(preflight.status(), 204);
        assert_eq!(
            preflight.headers()["access-control-allow-origin"],
            FRONT_END
        );
    }
}
