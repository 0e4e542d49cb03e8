//! Guards on durable runs on a real Restate server (the binary of the pinned npm package
//! `@restatedev/restate-server`, installed by `npm ci --ignore-scripts --prefix tests/restate`):
//! a judge's verdict is journaled, so a run replayed after a crash gets it back and never asks
//! the judge again, whether it let the run go on or tripped it.
//!
//! As `durable_restate`, the test binary plays three parts: the tests; the service process (this
//! same binary started again with `GUARDS_SERVICE_PORT` set), which the tests kill with SIGKILL
//! and start again; and two models, loopback OpenAI-compatible servers that count the calls they
//! get: the agent's and its judge's. restate-server looks up api.github.com at every start, so
//! everything runs in a private network namespace with nothing but loopback (`unshare -n`, as
//! root). Without the binary or a namespace the tests are reported ignored; in CI they fail.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use agent_core::guard::{At, Judge};
use agent_core::providers::OpenAi;
use agent_core::{Agent, Hooks, Message, OutputMode, RunError, RunOutput, agent, tool};
use agent_restate::DurableAgent;
use agent_restate::restate_sdk::prelude::Endpoint;
use serde_json::json;
use tests::durable_service::{
    ServiceProcess, add_one, answer_reply, counter, counters_folder, quick_retries, serve_on,
    stop_here_if_told, tool_call_reply,
};
use tests::http::{received, request_bodies, serve_in_order};
use tests::peers::Test;
use tests::restate::{IN_NAMESPACE, RESTATE, Restate, free_port};
use wiremock::MockServer;

/// Set in the service process: the loopback port its endpoint listens on.
const SERVICE_PORT: &str = "GUARDS_SERVICE_PORT";
/// The service's model server, its judge's, and the folder of its tools' counters.
const MODEL_URL: &str = "GUARDS_MODEL_URL";
const JUDGE_URL: &str = "GUARDS_JUDGE_URL";
const COUNTERS: &str = "GUARDS_COUNTERS";
/// Set in a service process that is to stop at this point ("before model call 2", "at the run's
/// end") and wait there to be killed.
const STOP_AT: &str = "GUARDS_STOP_AT";

/// The workflow whose agent's input and tool results a judge checks.
const JUDGED: &str = "Judged";
/// The judge's name: what a trip says stopped the run.
const JUDGE: &str = "leak check";

// ---------------------------------------------------------------------------------------------
// The service process.

/// Adds one to the counter `name` (a file), as a side effect that must not happen twice.
#[tool]
fn bump(name: String) -> String {
    let value = add_one(COUNTERS, &format!("bump-{name}"));
    format!("{name} is now {value}")
}

/// Stops the process before each model call it is told to stop at, or when the run has ended
/// (its verdicts journaled, its invocation not yet over): the tests' deterministic triggers.
struct StopPoints;

impl Hooks for StopPoints {
    fn on_model_request(&self, _context: &(), step: usize, _messages: &[Message]) {
        stop_here_if_told(STOP_AT, &format!("before model call {step}"));
    }

    fn on_run_end(&self, _context: &(), _outcome: Result<&RunOutput, &RunError>) {
        stop_here_if_told(STOP_AT, "at the run's end");
    }
}

/// An OpenAI-compatible model at the URL in the environment variable `url`.
fn openai(url: &str) -> OpenAi {
    OpenAi::new("gpt-test")
        .base_url(&std::env::var(url).expect("the model's URL"))
        .api_key("test-key")
}

/// The service process: the judged durable agent on a Restate endpoint.
fn service_main(port: u16) -> ExitCode {
    let judge = Judge::new(
        JUDGE,
        Agent::new(openai(JUDGE_URL))
            .system("Say whether the text leaks a secret.")
            .output_mode(OutputMode::Prompted),
    );
    let agent = agent!(openai(MODEL_URL), bump)
        .guard(At::INPUT | At::RESULTS, judge)
        .hook(StopPoints);
    let endpoint = Endpoint::builder()
        .bind(DurableAgent::new(JUDGED, Arc::new(agent)).options(quick_retries()))
        .build();
    serve_on(port, endpoint)
}

// ---------------------------------------------------------------------------------------------
// The test side: a Restate server, the service process, the models.

/// Starts the service for `models`, keeping its counters in `counters`, told to stop at
/// `stop_at` if given.
async fn start_service(models: &Models, counters: &Path, stop_at: Option<&str>) -> ServiceProcess {
    let port = models.port.to_string();
    let (model, judge) = (models.agent.uri(), models.judge.uri());
    let counters = counters.to_string_lossy();
    let mut env = vec![
        (SERVICE_PORT, port.as_str()),
        (MODEL_URL, model.as_str()),
        (JUDGE_URL, judge.as_str()),
        (COUNTERS, &*counters),
    ];
    env.extend(stop_at.map(|point| (STOP_AT, point)));
    ServiceProcess::start(&env, &[STOP_AT]).await
}

/// The agent's model and its judge's, and the port of the service that calls them.
struct Models {
    agent: MockServer,
    judge: MockServer,
    port: u16,
}

/// An OpenAI Chat Completions reply calling `bump` for `name`.
fn bump_reply(index: usize, name: &str) -> wiremock::ResponseTemplate {
    tool_call_reply(index, "bump", &json!({ "name": name }))
}

/// The judge's answer: `allow`, for `reason`.
fn verdict_reply(allow: bool, reason: &str) -> wiremock::ResponseTemplate {
    answer_reply(&json!({ "allow": allow, "reason": reason }).to_string())
}

async fn calls(server: &MockServer) -> usize {
    received(server).await.len()
}

/// What the judge was shown, in order: the last message of each of its requests.
async fn judged(judge: &MockServer) -> Vec<String> {
    request_bodies(judge)
        .await
        .iter()
        .map(|body| {
            let messages = body["messages"].as_array().expect("the messages");
            let last = messages.last().expect("one");
            last["content"].as_str().unwrap_or_default().to_owned()
        })
        .collect()
}

/// A run whose judge allowed its input and its first tool result, its service killed before
/// model call 2: replayed, the run finishes, and the judge was asked once for each check (the
/// replay got both verdicts back from the journal), as the model was for each step.
async fn a_replay_gets_the_judges_verdicts_back_without_asking_again() {
    let restate = Restate::start().await;
    let models = Models {
        agent: serve_in_order(vec![bump_reply(1, "a"), answer_reply("Bumped a.")]).await,
        // A third question would get no answer, and a judge that cannot answer trips the run.
        judge: serve_in_order(vec![
            verdict_reply(true, "a plain request"),
            verdict_reply(true, "a counter's value is no secret"),
        ])
        .await,
        port: free_port(),
    };
    let folder = counters_folder("guards-allow");
    let counters = folder.path();
    let mut service = start_service(&models, counters, Some("before model call 2")).await;
    restate.register(models.port).await;

    let (status, started) = restate
        .post(
            &format!("{JUDGED}/allow-1/run/send"),
            json!({ "input": "Bump a." }),
        )
        .await;
    assert_eq!(status, 202, "{started}");
    service.expect_line("before model call 2").await;
    assert_eq!(calls(&models.judge).await, 2, "the input, then the result");
    assert_eq!(calls(&models.agent).await, 1);
    service.kill().await;

    let _service = start_service(&models, counters, None).await;
    let output = restate.attach(JUDGED, "allow-1").await;
    assert_eq!(output["text"], "Bumped a.", "{output}");
    assert_eq!(output["stop_reason"], json!({ "stop": "finished" }));
    // Every model call counted once, the judge's two with them: those made before the crash
    // too, whose tokens come back from the journal with their verdicts.
    assert_eq!(output["usage"]["input_tokens"], 40, "{output}");
    assert_eq!(output["usage"]["output_tokens"], 20, "{output}");
    let shown = judged(&models.judge).await;
    assert_eq!(shown.len(), 2, "each check asked once: {shown:?}");
    assert!(shown[0].contains("Bump a."), "{shown:?}");
    assert!(shown[1].contains("a is now 1"), "{shown:?}");
    assert_eq!(calls(&models.agent).await, 2, "every model call made once");
    assert_eq!(counter(counters, "bump-a").as_deref(), Some("1"));
}

/// A run whose judge trips it at a tool result, its service killed when the run has ended but
/// before its invocation did: replayed, the run ends with the recorded trip, which reaches the
/// caller as the workflow's error naming the judge, and the judge was asked once for each check.
async fn a_replayed_trip_ends_the_run_with_the_judges_words() {
    let restate = Restate::start().await;
    let models = Models {
        agent: serve_in_order(vec![bump_reply(1, "a"), answer_reply("never asked")]).await,
        judge: serve_in_order(vec![
            verdict_reply(true, "a plain request"),
            verdict_reply(false, "the result gives away a counter"),
            verdict_reply(true, "asked again"),
        ])
        .await,
        port: free_port(),
    };
    let folder = counters_folder("guards-trip");
    let counters = folder.path();
    let mut service = start_service(&models, counters, Some("at the run's end")).await;
    restate.register(models.port).await;

    let (status, started) = restate
        .post(
            &format!("{JUDGED}/trip-1/run/send"),
            json!({ "input": "Bump a." }),
        )
        .await;
    assert_eq!(status, 202, "{started}");
    service.expect_line("at the run's end").await;
    assert_eq!(calls(&models.judge).await, 2, "the input, then the result");
    service.kill().await;

    let _service = start_service(&models, counters, None).await;
    let (status, failed) = restate
        .call(
            reqwest::Method::GET,
            &format!("restate/workflow/{JUDGED}/trip-1/attach"),
            None,
        )
        .await;
    assert_eq!(status, 500, "{failed}; restate's log: {}", restate.log());
    let message = failed["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        format!(
            "the guard `{JUDGE}` stopped the run at the result: the result gives away a counter"
        ),
        "{failed}"
    );
    let (status, again) = restate
        .call(
            reqwest::Method::POST,
            &format!("{JUDGED}/trip-1/output"),
            None,
        )
        .await;
    assert_eq!((status, &again["message"]), (500, &failed["message"]));
    assert_eq!(calls(&models.judge).await, 2, "each check asked once");
    assert_eq!(
        calls(&models.agent).await,
        1,
        "no model call after the trip"
    );
    assert_eq!(counter(counters, "bump-a").as_deref(), Some("1"));
}

fn main() -> ExitCode {
    if let Some(port) = std::env::var(SERVICE_PORT)
        .ok()
        .and_then(|port| port.parse().ok())
    {
        return service_main(port);
    }
    if let Some(code) = tests::netns::rerun_inside(IN_NAMESPACE) {
        return code;
    }
    tests::peers::main([
        Test::tokio(
            "a_replay_gets_the_judges_verdicts_back_without_asking_again",
            a_replay_gets_the_judges_verdicts_back_without_asking_again,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_replayed_trip_ends_the_run_with_the_judges_words",
            a_replayed_trip_ends_the_run_with_the_judges_words,
        )
        .needs(&RESTATE),
    ])
}
