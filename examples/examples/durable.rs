//! An agent whose runs survive crashes: served as a Restate workflow, each model call and tool
//! call is a journaled step, and approvals wait on durable promises, not on a process.
//!
//! ```text
//! # 1. A Restate server (one binary; `npx @restatedev/restate-server` fetches it)
//! npx @restatedev/restate-server
//! # 2. This service, on 127.0.0.1:9080 (`--port` picks another)
//! cargo run -p examples --example durable
//! # 3. Tell Restate where the service is
//! curl localhost:9070/deployments -H 'content-type: application/json' \
//!      -d '{"uri": "http://127.0.0.1:9080"}'
//! # 4. A run, keyed by an id of your choosing (the same id again is refused with 409: read
//! #    the output from `/Assistant/run-1/output` instead)
//! curl localhost:8080/Assistant/run-1/run -H 'content-type: application/json' \
//!      -d '{"input": "What is the weather in Beijing?"}'
//! # A run that needs an approval: start it, see what waits, decide
//! curl localhost:8080/Assistant/run-2/run/send -H 'content-type: application/json' \
//!      -d '{"input": "Delete my notes"}'
//! curl -X POST localhost:8080/Assistant/run-2/pending
//! curl localhost:8080/Assistant/run-2/decide -H 'content-type: application/json' \
//!      -d '{"call_id": "call_2", "decision": "approve"}'
//! curl -X POST localhost:8080/Assistant/run-2/output   # the output, as often as asked
//! ```
//!
//! Kill the service (Ctrl-C, or `kill -9`) while a run waits or works and start it again: the run
//! goes on where it was. Offline by default (a stand-in model); with a provider in the environment
//! (see `providers::from_env`) a real model answers.

use std::process::ExitCode;
use std::sync::Arc;

use agent_restate::restate_sdk::prelude::Endpoint;
use agent_restate::{DurableAgent, serve};
use examples::assistant::served_assistant;

/// The workflow's name: the first segment of its ingress URLs.
const SERVICE: &str = "Assistant";

/// The Restate endpoint serving the durable assistant.
fn endpoint(agent: agent_core::Agent) -> Endpoint {
    Endpoint::builder()
        .bind(DurableAgent::new(SERVICE, Arc::new(agent)))
        .build()
}

#[tokio::main]
async fn main() -> ExitCode {
    let (agent, listener) = match served_assistant("durable", 9080).await {
        Ok(served) => served,
        Err(code) => return code,
    };
    match listener.local_addr() {
        Ok(address) => println!(
            "the `{SERVICE}` workflow is served on http://{address}; register it with Restate: \
             curl localhost:9070/deployments -H 'content-type: application/json' \
             -d '{{\"uri\": \"http://{address}\"}}'"
        ),
        Err(error) => eprintln!("warning: {error}"),
    }
    serve(endpoint(agent), listener).await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use examples::assistant::{StandIn, assistant};
    use serde_json::Value;

    use super::*;

    /// What Restate's discovery request finds: the workflow and its four handlers.
    #[tokio::test]
    async fn restate_discovers_the_workflow_and_its_handlers() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(serve(endpoint(assistant(StandIn)), listener));
        let response = reqwest::Client::builder()
            .http2_prior_knowledge()
            .build()
            .unwrap()
            .get(format!("http://{address}/discover"))
            .header("accept", "application/vnd.restate.endpointmanifest.v4+json")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
        let manifest: Value = response.json().await.unwrap();
        let service = &manifest["services"][0];
        assert_eq!(service["name"], SERVICE, "{manifest}");
        assert_eq!(service["ty"], "WORKFLOW", "{manifest}");
        let handlers: Vec<(&str, &str)> = service["handlers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|handler| {
                let name = handler["name"].as_str().unwrap();
                (name, handler["ty"].as_str().unwrap())
            })
            .collect();
        assert_eq!(
            handlers,
            [
                ("run", "WORKFLOW"),
                ("output", "SHARED"),
                ("decide", "SHARED"),
                ("pending", "SHARED")
            ]
        );
    }
}
