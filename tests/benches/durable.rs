//! The cost of journaling: a 10-step run (nine tool calls, one at a time, then the answer; a
//! model that answers at once) served as a `DurableAgent` on a real Restate server on loopback,
//! next to the same run in-process. Each durable run is one request through Restate's ingress;
//! each of its steps is journaled (the model call, and the tool call: one entry when the tool is
//! marked `idempotent`, two when it runs at most once).
//!
//! ```text
//! npm ci --ignore-scripts --prefix tests/restate
//! cargo bench -p tests --bench durable
//! ```
//!
//! Needs the restate-server binary and root (for the private network namespace it runs in);
//! without them it says so and measures nothing.

use std::future::IntoFuture;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message, Model, ModelError,
    ToolCall, tool,
};
use agent_restate::{DurableAgent, serve};
use divan::Bencher;
use restate_sdk::prelude::{Endpoint, HttpServer};
use serde_json::json;
use tests::restate::{IN_NAMESPACE, Restate, restate_binary};

/// Tool calls per run: with the answer, ten model calls.
const TOOL_CALLS: usize = 9;
/// The workflow served by `agent_restate::serve`, and the same served by restate-sdk's own
/// `HttpServer` (Nagle's algorithm left on).
const SERVICE: &str = "Bench";
const SERVICE_ON_SDK_SERVER: &str = "BenchSdkServer";

/// Does nothing; safe to repeat.
#[tool(idempotent)]
fn step_idempotent() -> &'static str {
    "ok"
}

/// Does nothing, at most once.
#[tool]
fn step_once() -> &'static str {
    "ok"
}

/// Calls the tool the input names until it has nine results, then answers: no I/O, no waiting.
struct NineCalls;

impl Model for NineCalls {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let results = request
            .messages
            .iter()
            .filter(|message| matches!(message, Message::Tool(_)))
            .count();
        let tool = match request.messages.get(1) {
            Some(Message::User { content, .. }) => content.as_str(),
            _ => "step_idempotent",
        };
        let reply = if results < TOOL_CALLS {
            let id = format!("call_{results}");
            AssistantMessage::tool_calls([ToolCall::new(id, tool, "{}")])
        } else {
            AssistantMessage::text("done")
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(reply))))
    }
}

fn agent() -> Agent {
    Agent::new(NineCalls)
        .try_tool(step_idempotent {})
        .and_then(|agent| agent.try_tool(step_once {}))
        .expect("valid tools")
        .max_steps(TOOL_CALLS + 1)
}

/// The Restate server, the service on it, and the runtime both run on.
struct Setup {
    runtime: tokio::runtime::Runtime,
    restate: Restate,
    plain: Agent,
    runs: AtomicUsize,
}

static SETUP: Mutex<Option<Arc<Setup>>> = Mutex::new(None);

fn setup() -> Arc<Setup> {
    let mut setup = SETUP.lock().expect("the setup");
    if let Some(setup) = &*setup {
        return Arc::clone(setup);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let restate = runtime.block_on(async {
        let restate = Restate::start().await;
        for name in [SERVICE, SERVICE_ON_SDK_SERVER] {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("a port");
            let port = listener.local_addr().expect("its address").port();
            let endpoint = Endpoint::builder()
                .bind(DurableAgent::new(name, Arc::new(agent())))
                .build();
            if name == SERVICE {
                tokio::spawn(serve(endpoint, listener));
            } else {
                tokio::spawn(HttpServer::new(endpoint).serve(listener));
            }
            restate.register(port).await;
        }
        restate
    });
    let made = Arc::new(Setup {
        runtime,
        restate,
        plain: agent(),
        runs: AtomicUsize::new(0),
    });
    *setup = Some(Arc::clone(&made));
    made
}

/// The floor: the same 10-step run, in-process.
#[divan::bench(sample_count = 30, sample_size = 10)]
fn plain_10_steps(bencher: Bencher) {
    let setup = setup();
    bencher.bench_local(|| {
        let output = setup
            .runtime
            .block_on(setup.plain.run("step_idempotent").into_future())
            .expect("the run finishes");
        assert_eq!(output.steps, TOOL_CALLS + 1);
    });
}

/// One durable run of `service` through the ingress, calling `tool`.
fn durable_run(setup: &Setup, service: &str, tool: &str) {
    let run = setup.runs.fetch_add(1, Ordering::Relaxed);
    let path = format!("{service}/run-{run}/run");
    let (status, output) = setup
        .runtime
        .block_on(setup.restate.post(&path, json!({ "input": tool })));
    assert_eq!(status, 200, "{output}");
    assert_eq!(output["steps"], TOOL_CALLS + 1, "{output}");
}

/// Ten journaled model calls and nine journaled tool calls (one entry each).
#[divan::bench(sample_count = 30, sample_size = 1)]
fn durable_10_steps_idempotent_tool(bencher: Bencher) {
    let setup = setup();
    bencher.bench_local(|| durable_run(&setup, SERVICE, "step_idempotent"));
}

/// The same with a tool that runs at most once (two entries per call).
#[divan::bench(sample_count = 30, sample_size = 1)]
fn durable_10_steps_at_most_once_tool(bencher: Bencher) {
    let setup = setup();
    bencher.bench_local(|| durable_run(&setup, SERVICE, "step_once"));
}

/// The idempotent case on restate-sdk's `HttpServer`, which leaves Nagle's algorithm on.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn durable_10_steps_idempotent_tool_on_sdk_http_server(bencher: Bencher) {
    let setup = setup();
    bencher.bench_local(|| durable_run(&setup, SERVICE_ON_SDK_SERVER, "step_idempotent"));
}

fn main() -> ExitCode {
    if restate_binary().is_none() {
        eprintln!(
            "skipped: restate-server is not installed (npm ci --ignore-scripts --prefix tests/restate)"
        );
        return ExitCode::SUCCESS;
    }
    if let Some(code) = tests::netns::rerun_inside(IN_NAMESPACE) {
        return code;
    }
    if !tests::netns::inside(IN_NAMESPACE) {
        eprintln!(
            "skipped: no private network namespace for restate-server (`unshare -n` needs root)"
        );
        return ExitCode::SUCCESS;
    }
    divan::main();
    // The server is a child process: stop it before leaving.
    drop(SETUP.lock().expect("the setup").take());
    ExitCode::SUCCESS
}
