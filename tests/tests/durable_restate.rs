//! Durable runs on a real Restate server (the binary of the pinned npm package
//! `@restatedev/restate-server`, installed by `npm ci --ignore-scripts --prefix tests/restate`).
//!
//! The test binary plays three parts: the tests; the Restate server's peer, the service process
//! (this same binary started again with `DURABLE_SERVICE_PORT` set), which the tests kill with
//! SIGKILL and start again; and the model, a loopback OpenAI-compatible server that counts the
//! calls it gets. restate-server looks up api.github.com at every start, so everything runs in a
//! private network namespace with nothing but loopback (`unshare -n`, as root). Without the binary
//! or a namespace the tests are reported ignored; in CI they fail.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::context::Summarize;
use agent_core::providers::{Anthropic, HttpConfig, OpenAi};
use agent_core::{CallInfo, Fallback, Hooks, Message, Model, State, agent, tool};
use agent_restate::restate_sdk::prelude::Endpoint;
use agent_restate::{DurableAgent, DurableOutput, Rejection};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tests::durable_service::{
    ServiceProcess, add_one, answer_reply, counter, counters_folder, quick_retries, serve_on,
    stop_here_if_told, tool_call_reply,
};
use tests::http::{json_reply, received, request_bodies, serve_in_order};
use tests::peers::Test;
use tests::restate::{IN_NAMESPACE, RESTATE, Restate, free_port};
use wiremock::MockServer;

/// Set in the service process: the loopback port its endpoint listens on.
const SERVICE_PORT: &str = "DURABLE_SERVICE_PORT";
/// The service's model server and the folder of its tools' counters.
const MODEL_URL: &str = "DURABLE_MODEL_URL";
/// Set in a service whose model is a fallback chain: the base URL of its second model (Anthropic's
/// wire format), which answers when the first one (at `MODEL_URL`) fails.
const BACKUP_URL: &str = "DURABLE_BACKUP_URL";
const COUNTERS: &str = "DURABLE_COUNTERS";
/// Set in a service process that is to stop at this point ("before model call 3", "in charge 500")
/// and wait there to be killed.
const STOP_AT: &str = "DURABLE_STOP_AT";

/// The workflow's name: the first segment of its ingress URLs.
const SERVICE: &str = "Assistant";
/// The typed workflow: its runs answer with a [`Ticket`].
const TRIAGE: &str = "Triage";
/// The workflows whose runs' context is a [`User`]: from the `x-user` header, or from the run
/// request's `context`.
const BY_HEADER: &str = "ByHeader";
const BY_BODY: &str = "ByBody";
/// The workflow whose agent summarizes older turns (with the same model) past a small window.
const SUMMARIZED: &str = "Summarized";
/// The service of an agent that calls another as a tool.
const TREE: &str = "Tree";
/// The service whose runs have a budget of three model requests.
const BUDGETED: &str = "Budgeted";

/// What the typed workflow's runs answer with.
#[derive(Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
struct Ticket {
    /// One line saying what is wrong.
    title: String,
    /// How many counters were bumped.
    bumps: u32,
    /// Labels for the ticket.
    tags: Vec<String>,
}

/// The user a run is for: its context, made from the invocation.
#[derive(Debug, Clone, Deserialize)]
struct User {
    name: String,
}

/// Who is asking.
#[tool]
fn whoami(State(user): State<User>) -> String {
    add_one(COUNTERS, &format!("whoami-{}", user.name));
    format!("you are {}", user.name)
}

// ---------------------------------------------------------------------------------------------
// The service process.

/// Adds one to the counter `name` (a file), as a side effect that must not happen twice.
#[tool]
fn bump(name: String) -> String {
    let value = add_one(COUNTERS, &format!("bump-{name}"));
    format!("{name} is now {value}")
}

/// Charges `cents` to the card on file: done, then (in a service told to) stopped mid-call, before
/// it could return.
#[tool]
fn charge(cents: u32) -> String {
    add_one(COUNTERS, &format!("charge-{cents}"));
    stop_here_if_told(STOP_AT, &format!("in charge {cents}"));
    format!("charged {cents} cents")
}

/// Looks up the balance: read-only, so safe to run again.
#[tool(read_only)]
fn balance() -> String {
    add_one(COUNTERS, "balance");
    stop_here_if_told(STOP_AT, "in balance");
    "the balance is 1200 cents".to_owned()
}

/// Pays `cents` through the payment system, which does a payment once per idempotency key: the
/// documented exactly-once recipe (a key from the run id and the call id, the tool `idempotent`).
/// In a service told to, it stops after the payment, before it could return.
#[tool(idempotent)]
fn pay(call: CallInfo, cents: u32) -> String {
    let key = call.idempotency_key();
    // The payment system: a payment under a key it has seen is not made again.
    let seen = format!("payment-{}", key.replace('/', "_"));
    if counter_value(&seen).is_none() {
        add_one(COUNTERS, &seen);
        add_one(COUNTERS, &format!("paid-{cents}"));
    }
    stop_here_if_told(STOP_AT, &format!("in pay {cents}"));
    format!("paid {cents} cents under {key}")
}

/// The counter `name`, if it was ever counted.
fn counter_value(name: &str) -> Option<u32> {
    let path = Path::new(&std::env::var(COUNTERS).expect("the counters folder")).join(name);
    std::fs::read_to_string(path)
        .ok()
        .map(|text| text.trim().parse().expect("a counter"))
}

/// Sends an email to `to`.
#[tool(requires_approval)]
fn send_email(to: String) -> String {
    add_one(COUNTERS, &format!("email-{to}"));
    format!("sent to {to}")
}

/// Stops the process before each model call it is told to stop at. The test's deterministic
/// trigger: the step before is over and journaled.
struct StopBeforeModelCalls;

impl Hooks for StopBeforeModelCalls {
    fn on_model_request(&self, _context: &(), step: usize, _messages: &[Message]) {
        stop_here_if_told(STOP_AT, &format!("before model call {step}"));
    }
}

/// Stops the process before each model call of a child agent it is told to stop at.
struct StopBeforeChildModelCalls;

impl Hooks for StopBeforeChildModelCalls {
    fn on_model_request(&self, _context: &(), step: usize, _messages: &[Message]) {
        stop_here_if_told(STOP_AT, &format!("before child model call {step}"));
    }
}

/// The model of the service's agents: OpenAI's wire format at `MODEL_URL`, or a fallback chain
/// to Anthropic's at `BACKUP_URL` when that is set.
fn model() -> Box<dyn Model> {
    let openai = OpenAi::new("gpt-test")
        .base_url(&std::env::var(MODEL_URL).expect("the model's URL"))
        .api_key("test-key");
    match std::env::var(BACKUP_URL) {
        Ok(backup) => Box::new(
            Fallback::new(openai.http_config(HttpConfig::default().max_retries(0))).then(
                Anthropic::new("claude-test")
                    .base_url(&backup)
                    .api_key("test-key"),
            ),
        ),
        Err(_) => Box::new(openai),
    }
}

/// The service process: the durable agents on a Restate endpoint.
fn service_main(port: u16) -> ExitCode {
    let agent = agent!(model(), bump, charge, balance, send_email, pay)
        .defer_approvals()
        .hook(StopBeforeModelCalls);
    let triage = agent!(model(), bump, send_email)
        .defer_approvals()
        .hook(StopBeforeModelCalls);
    let personal = Arc::new(agent!(model(), whoami, send_email).defer_approvals());
    let summarized = agent!(model(), bump)
        .hook(StopBeforeModelCalls)
        // The summarizer's own window takes the ten turns in one request.
        .context_policy(Summarize::new(model(), 300).summarizer_window(10_000));
    let researcher = agent!(model(), bump)
        .named("research")
        .hook(StopBeforeChildModelCalls);
    let desk = agent_core::Agent::new(model())
        .named("desk")
        .try_tool(researcher.as_tool("research", "Research and bump."))
        .expect("one tool");
    // Quick retries: a killed service is back within a second.
    let endpoint = Endpoint::builder()
        .bind(
            DurableAgent::new(SERVICE, Arc::new(agent))
                .options(quick_retries())
                .output_waits_for_start(Duration::from_secs(2)),
        )
        .bind(
            DurableAgent::new(TRIAGE, Arc::new(triage))
                .output::<Ticket>()
                .validate(|_, ticket: &Ticket| {
                    if ticket.title.is_empty() {
                        Err("the title is empty: say what is wrong")
                    } else {
                        Ok(())
                    }
                })
                .options(quick_retries()),
        )
        .bind(
            DurableAgent::new(BY_HEADER, Arc::clone(&personal))
                .context(|invocation| {
                    let name = invocation
                        .header("x-user")
                        .ok_or_else(|| Rejection::unauthorized("who is asking? send x-user"))?;
                    Ok(User {
                        name: name.to_owned(),
                    })
                })
                .options(quick_retries()),
        )
        .bind(DurableAgent::new(SUMMARIZED, Arc::new(summarized)).options(quick_retries()))
        .bind(DurableAgent::new(TREE, Arc::new(desk)).options(quick_retries()))
        .bind(
            DurableAgent::new(
                BUDGETED,
                Arc::new(agent!(model(), bump).hook(StopBeforeModelCalls)),
            )
            .budget(agent_core::BudgetLimits::new().max_requests(3))
            .options(quick_retries()),
        )
        .bind(
            DurableAgent::new(BY_BODY, personal)
                .context(|invocation| invocation.context::<User>())
                .options(quick_retries()),
        )
        .build();
    serve_on(port, endpoint)
}

// ---------------------------------------------------------------------------------------------
// The test side: a Restate server, the service process, the model.

/// Starts the service on `port` with `model` (and a fallback chain to `backup`, if given),
/// keeping its counters in `counters`, told to stop at `stop_at` if given.
async fn start_service(
    port: u16,
    model: &str,
    backup: Option<&str>,
    counters: &Path,
    stop_at: Option<&str>,
) -> ServiceProcess {
    let port = port.to_string();
    let counters = counters.to_string_lossy();
    let mut env = vec![
        (SERVICE_PORT, port.as_str()),
        (MODEL_URL, model),
        (COUNTERS, &*counters),
    ];
    env.extend(backup.map(|backup| (BACKUP_URL, backup)));
    env.extend(stop_at.map(|point| (STOP_AT, point)));
    ServiceProcess::start(&env, &[STOP_AT, BACKUP_URL]).await
}

/// An Anthropic Messages reply of the model `model` calling `bump` for `name`, or answering when
/// `name` is `None`.
fn claude_reply(model: &str, name: Option<&str>) -> wiremock::ResponseTemplate {
    let (content, stop_reason) = match name {
        Some(name) => (
            json!([{ "type": "tool_use", "id": format!("toolu_{name}"), "name": "bump", "input": { "name": name } }]),
            "tool_use",
        ),
        None => (
            json!([{ "type": "text", "text": "Bumped a, b and c." }]),
            "end_turn",
        ),
    };
    json_reply(
        200,
        &json!({
            "id": format!("msg_{model}"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "usage": { "input_tokens": 10, "output_tokens": 5 }
        })
        .to_string(),
    )
}

async fn model_calls(model: &MockServer) -> usize {
    received(model).await.len()
}

/// A 5-step run whose service is killed right after step 2's tool call: restarted, it finishes,
/// and no model call or tool call was made twice. A client that sends the same run again gets the
/// same run.
async fn a_killed_run_goes_on_without_repeating_a_step() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "bump", &json!({ "name": "a" })),
        tool_call_reply(2, "bump", &json!({ "name": "b" })),
        tool_call_reply(3, "bump", &json!({ "name": "c" })),
        tool_call_reply(4, "bump", &json!({ "name": "d" })),
        answer_reply("Bumped a, b, c and d."),
    ])
    .await;
    let folder = counters_folder("crash");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(
        port,
        &model.uri(),
        None,
        counters,
        Some("before model call 3"),
    )
    .await;
    restate.register(port).await;

    let start = json!({ "input": "Bump a, b, c and d, one at a time." });
    let (status, started) = restate
        .post(&format!("{SERVICE}/run-1/run/send"), start.clone())
        .await;
    assert_eq!(
        (status, &started["status"]),
        (202, &json!("Accepted")),
        "{started}"
    );

    // Step 2's tool call is journaled and the service is about to make model call 3: kill it.
    service.expect_line("before model call 3").await;
    assert_eq!(model_calls(&model).await, 2);
    assert_eq!(counter(counters, "bump-b").as_deref(), Some("1"));
    assert_eq!(counter(counters, "bump-c"), None);
    service.kill().await;

    // The client retries its request: the same run, not a second one.
    let (status, again) = restate
        .post(&format!("{SERVICE}/run-1/run/send"), start)
        .await;
    assert_eq!(
        (status, &again["status"]),
        (202, &json!("PreviouslyAccepted")),
        "{again}"
    );
    assert_eq!(again["invocationId"], started["invocationId"], "{again}");

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(SERVICE, "run-1").await;
    assert_eq!(output["text"], "Bumped a, b, c and d.", "{output}");
    assert_eq!(output["stop_reason"], json!({ "stop": "finished" }));
    assert_eq!(output["steps"], 5);
    let results: Vec<&str> = output["messages"]
        .as_array()
        .expect("the messages")
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str())
        .collect();
    assert_eq!(
        results,
        ["a is now 1", "b is now 1", "c is now 1", "d is now 1"]
    );

    assert_eq!(model_calls(&model).await, 5, "every model call made once");
    for name in ["a", "b", "c", "d"] {
        assert_eq!(
            counter(counters, &format!("bump-{name}")).as_deref(),
            Some("1"),
            "the side effect of bump({name}) happened once"
        );
    }
}

/// An agent that calls another as a tool, its service killed inside the child (after the child's
/// first tool call, before its second model call): restarted, the run finishes, and no model
/// call of either agent and no side effect of the child's tools happened twice: the child's calls
/// are journaled one by one in the run's invocation, not its whole run as one call.
async fn a_crash_inside_a_child_agent_repeats_none_of_its_steps() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "research", &json!({ "input": "bump x, then y" })),
        tool_call_reply(2, "bump", &json!({ "name": "x" })),
        tool_call_reply(3, "bump", &json!({ "name": "y" })),
        answer_reply("x and y are bumped."),
        answer_reply("Done: x and y."),
    ])
    .await;
    let folder = counters_folder("tree");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(
        port,
        &model.uri(),
        None,
        counters,
        Some("before child model call 2"),
    )
    .await;
    restate.register(port).await;

    let start = json!({ "input": "Have research bump x and y." });
    let (status, started) = restate
        .post(&format!("{TREE}/tree-1/run/send"), start)
        .await;
    assert_eq!(status, 202, "{started}");

    service.expect_line("before child model call 2").await;
    assert_eq!(model_calls(&model).await, 2);
    assert_eq!(counter(counters, "bump-x").as_deref(), Some("1"));
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(TREE, "tree-1").await;
    assert_eq!(output["text"], "Done: x and y.", "{output}");
    assert_eq!(tool_results(&output), ["x and y are bumped."]);
    assert_eq!(model_calls(&model).await, 5, "every model call made once");
    assert_eq!(counter(counters, "bump-x").as_deref(), Some("1"));
    assert_eq!(counter(counters, "bump-y").as_deref(), Some("1"));
    // The output keeps the child's run, and so its usage (it carried the top agent's alone).
    let child = &output["children"][0];
    assert_eq!(child["path"], "desk/research", "{output}");
    assert_eq!(child["outcome"]["Ok"]["steps"], 3, "{output}");
}

/// A run with a budget of three model requests, its service killed before model call 3 (its
/// request taken): the replay counts the two replayed requests again, so the run stops with the
/// budget spent after exactly three model calls, neither one sooner nor later.
async fn a_budget_is_exact_across_a_crash() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "bump", &json!({ "name": "a" })),
        tool_call_reply(2, "bump", &json!({ "name": "b" })),
        tool_call_reply(3, "bump", &json!({ "name": "c" })),
        tool_call_reply(4, "bump", &json!({ "name": "d" })),
        answer_reply("never asked"),
    ])
    .await;
    let folder = counters_folder("budgeted");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(
        port,
        &model.uri(),
        None,
        counters,
        Some("before model call 3"),
    )
    .await;
    restate.register(port).await;
    let start = json!({ "input": "Bump a, b, c and d, one at a time." });
    let (status, started) = restate
        .post(&format!("{BUDGETED}/budget-1/run/send"), start)
        .await;
    assert_eq!(status, 202, "{started}");
    service.expect_line("before model call 3").await;
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(BUDGETED, "budget-1").await;
    assert_eq!(
        output["stop_reason"],
        json!({ "stop": "budget_spent", "item": "requests" }),
        "{output}"
    );
    assert_eq!(model_calls(&model).await, 3);
    assert_eq!(
        tool_results(&output),
        ["a is now 1", "b is now 1", "c is now 1"]
    );
    assert_eq!(counter(counters, "bump-d"), None);
}

/// A run on a long conversation whose agent summarizes older turns, its service killed before model
/// call 2: the summary was asked for once, before model call 1, and journaled, so the replay gets
/// it back; the run's output keeps the conversation whole and the summary with the messages it
/// stands for.
async fn a_summary_is_journaled_and_never_asked_twice() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        answer_reply("They asked about counters a to j; each was bumped."),
        tool_call_reply(1, "bump", &json!({ "name": "k" })),
        answer_reply("Bumped k."),
    ])
    .await;
    let folder = counters_folder("summary");
    let counters = folder.path();
    let port = free_port();
    let service = start_service(
        port,
        &model.uri(),
        None,
        counters,
        Some("before model call 2"),
    )
    .await;
    restate.register(port).await;

    // Ten earlier turns, long enough to pass the window, then the question to answer.
    let mut messages = vec![json!({ "role": "system", "content": "You bump counters." })];
    for name in "abcdefghij".chars() {
        let question = format!(
            "Please bump the counter called {name}; {}",
            "and say so. ".repeat(12)
        );
        messages.push(json!({ "role": "user", "content": question }));
        messages.push(json!({ "role": "assistant", "content": format!("Bumped {name}. {}", "Done as asked. ".repeat(12)) }));
    }
    messages.push(json!({ "role": "user", "content": "Now bump k." }));
    let history = messages.len();
    let start = json!({ "messages": messages });
    let (status, started) = restate
        .post(&format!("{SUMMARIZED}/run-s/run/send"), start)
        .await;
    assert_eq!(status, 202, "{started}");
    let mut service = service;
    service.expect_line("before model call 2").await;
    assert_eq!(
        model_calls(&model).await,
        2,
        "the summary, then model call 1"
    );
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(SUMMARIZED, "run-s").await;
    assert_eq!(output["text"], "Bumped k.", "{output}");
    assert_eq!(model_calls(&model).await, 3, "every model call made once");
    assert_eq!(counter(counters, "bump-k").as_deref(), Some("1"));

    // The summarizer read the turns left out; model call 1 was sent the summary in their place.
    let bodies = request_bodies(&model).await;
    assert!(
        bodies[0].to_string().contains("counter called a"),
        "{}",
        bodies[0]
    );
    let sent = bodies[1]["messages"].to_string();
    assert!(sent.contains("counters a to j"), "{sent}");
    assert!(!sent.contains("counter called a"), "{sent}");
    // The output keeps every message, and the summary with the messages it stands for.
    let output: DurableOutput = serde_json::from_value(output).unwrap();
    assert_eq!(output.messages.len(), history + 3);
    let [summary] = &output.summaries[..] else {
        panic!("one summary: {:?}", output.summaries);
    };
    assert_eq!(
        summary.text,
        "They asked about counters a to j; each was bumped."
    );
    assert_eq!(summary.covers.start, 0);
    assert!(matches!(
        output.messages[summary.covers.end],
        Message::User { .. }
    ));
}

/// A run whose first model is down falls back to its second at every step; its service is killed
/// before model call 3 and started again. The steps journaled before the crash are replayed, not
/// asked again of either model, and still name the model that answered them then.
async fn a_replayed_run_names_the_models_that_answered_before_the_crash() {
    let restate = Restate::start().await;
    let down = MockServer::start().await;
    wiremock::Mock::given(wiremock::matchers::method("POST"))
        .respond_with(json_reply(
            503,
            r#"{"error":{"message":"Service Unavailable"}}"#,
        ))
        .mount(&down)
        .await;
    // Each reply names a model of its own, so a name can only come from the reply of its step.
    let backup = serve_in_order(vec![
        claude_reply("claude-step-1", Some("a")),
        claude_reply("claude-step-2", Some("b")),
        claude_reply("claude-step-3", Some("c")),
        claude_reply("claude-step-4", None),
    ])
    .await;
    let folder = counters_folder("fallback");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(
        port,
        &down.uri(),
        Some(&backup.uri()),
        counters,
        Some("before model call 3"),
    )
    .await;
    restate.register(port).await;
    let (status, started) = restate
        .post(
            &format!("{SERVICE}/run-5/run/send"),
            json!({ "input": "Bump a, b and c, one at a time." }),
        )
        .await;
    assert_eq!(status, 202, "{started}");

    service.expect_line("before model call 3").await;
    assert_eq!(model_calls(&backup).await, 2);
    service.kill().await;

    let _service = start_service(port, &down.uri(), Some(&backup.uri()), counters, None).await;
    let output = restate.attach(SERVICE, "run-5").await;
    assert_eq!(output["text"], "Bumped a, b and c.", "{output}");
    assert_eq!(output["steps"], 4);
    assert_eq!(
        output["step_models"],
        json!([
            "claude-step-1",
            "claude-step-2",
            "claude-step-3",
            "claude-step-4"
        ]),
        "{output}"
    );
    assert_eq!(model_calls(&backup).await, 4, "every answer asked for once");
    // The first model was asked once per step that was not replayed (no retries of its own).
    assert_eq!(model_calls(&down).await, 4);
    for name in ["a", "b", "c"] {
        assert_eq!(
            counter(counters, &format!("bump-{name}")).as_deref(),
            Some("1")
        );
    }
}

/// A run waits on an approval; its service is restarted meanwhile; the approval sent through the
/// ingress resumes it on the new process, which runs the approved call once and finishes.
async fn an_approval_resumes_a_run_after_a_restart() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "send_email", &json!({ "to": "ada" })),
        answer_reply("The email to Ada is sent."),
    ])
    .await;
    let folder = counters_folder("approval");
    let counters = folder.path();
    let port = free_port();
    let service = start_service(port, &model.uri(), None, counters, None).await;
    restate.register(port).await;

    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-2/run/send"),
            json!({ "input": "Email Ada." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");

    // Wait until the run waits on the approval.
    let pending = wait_for_pending(&restate, SERVICE, "run-2").await;
    assert_eq!(pending["calls"][0]["call"]["id"], "call_1", "{pending}");
    assert_eq!(pending["calls"][0]["waits_for"], "approval", "{pending}");
    assert_eq!(
        counter(counters, "email-ada"),
        None,
        "nothing sent before approval"
    );

    service.kill().await;
    let _service = start_service(port, &model.uri(), None, counters, None).await;

    // A decision on a call that does not wait is refused; then the approval.
    let (status, refused) = restate
        .post(
            &format!("{SERVICE}/run-2/decide"),
            json!({ "call_id": "call_9", "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-2/decide"),
            json!({ "call_id": "call_1", "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");

    let output = restate.attach(SERVICE, "run-2").await;
    assert_eq!(output["text"], "The email to Ada is sent.", "{output}");
    let messages = output["messages"].as_array().expect("the messages");
    let result = messages
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("the call's result");
    assert_eq!(result["content"], "sent to ada");
    assert_eq!(counter(counters, "email-ada").as_deref(), Some("1"));
    assert_eq!(model_calls(&model).await, 2);
}

/// The service dies in the middle of two tool calls, each after its side effect: the one marked
/// read-only runs again on replay; the other does not, and the model is told its outcome is
/// unknown. Neither side effect that must not repeat happens twice.
async fn a_call_cut_off_by_a_crash_runs_again_only_when_safe_to_repeat() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "balance", &json!({})),
        tool_call_reply(2, "charge", &json!({ "cents": 500 })),
        answer_reply("I could not confirm the charge."),
    ])
    .await;
    let folder = counters_folder("mid-call");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(port, &model.uri(), None, counters, Some("in balance")).await;
    restate.register(port).await;
    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-3/run/send"),
            json!({ "input": "Charge me 5 dollars." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    service.expect_line("in balance").await;
    service.kill().await;

    // Replayed: the read-only call runs again and finishes; the charge is cut off in turn.
    let mut service =
        start_service(port, &model.uri(), None, counters, Some("in charge 500")).await;
    service.expect_line("in charge 500").await;
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(SERVICE, "run-3").await;
    assert_eq!(
        output["text"], "I could not confirm the charge.",
        "{output}"
    );
    let results: Vec<&Value> = output["messages"]
        .as_array()
        .expect("the messages")
        .iter()
        .filter(|message| message["role"] == "tool")
        .collect();
    assert_eq!(results[0]["content"], "the balance is 1200 cents");
    assert_eq!(results[0]["is_error"], false);
    let unknown = results[1]["content"].as_str().expect("a text");
    assert!(
        unknown.contains("outcome of this call of `charge` is unknown"),
        "{unknown}"
    );
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(
        counter(counters, "balance").as_deref(),
        Some("2"),
        "read-only: run again"
    );
    assert_eq!(
        counter(counters, "charge-500").as_deref(),
        Some("1"),
        "charged once"
    );
    assert_eq!(model_calls(&model).await, 3);
}

/// The calls the run `run_id` of the workflow `service` waits on, once it waits on some.
async fn wait_for_pending(restate: &Restate, service: &str, run_id: &str) -> Value {
    let started = Instant::now();
    loop {
        let path = format!("{service}/{run_id}/pending");
        let (status, pending) = restate.call(reqwest::Method::POST, &path, None).await;
        assert_eq!(status, 200, "{pending}");
        if pending["calls"]
            .as_array()
            .is_some_and(|calls| !calls.is_empty())
        {
            return pending;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "never waited: {pending}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A model that names two calls of one run alike (some servers number calls per reply): the
/// approval of the first does not answer the second, which waits for its own.
async fn an_approval_never_answers_a_later_call_with_the_same_id() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "send_email", &json!({ "to": "ada" })),
        tool_call_reply(1, "send_email", &json!({ "to": "bob" })),
        answer_reply("Both emails are sent."),
    ])
    .await;
    let folder = counters_folder("same-id");
    let counters = folder.path();
    let port = free_port();
    let _service = start_service(port, &model.uri(), None, counters, None).await;
    restate.register(port).await;
    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-4/run/send"),
            json!({ "input": "Email Ada, then Bob." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");

    let first = wait_for_pending(&restate, SERVICE, "run-4").await;
    assert_eq!(first["calls"][0]["call"]["arguments"], r#"{"to":"ada"}"#);
    let decide = json!({ "call_id": "call_1", "decision": "approve" });
    let (status, body) = restate
        .post(&format!("{SERVICE}/run-4/decide"), decide.clone())
        .await;
    assert_eq!(status, 200, "{body}");

    // The second call, with the same id, waits: nothing is sent to Bob before it is approved.
    let started = Instant::now();
    let second = loop {
        let pending = wait_for_pending(&restate, SERVICE, "run-4").await;
        if pending["calls"][0]["call"]["arguments"] == r#"{"to":"bob"}"# {
            break pending;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "{pending}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(second["calls"][0]["call"]["id"], "call_1");
    assert_eq!(counter(counters, "email-ada").as_deref(), Some("1"));
    assert_eq!(
        counter(counters, "email-bob"),
        None,
        "not sent before approval"
    );
    let (status, body) = restate
        .post(&format!("{SERVICE}/run-4/decide"), decide)
        .await;
    assert_eq!(status, 200, "{body}");

    let output = restate.attach(SERVICE, "run-4").await;
    assert_eq!(output["text"], "Both emails are sent.", "{output}");
    assert_eq!(counter(counters, "email-bob").as_deref(), Some("1"));
    assert_eq!(model_calls(&model).await, 3);
}

/// A client drives a run as clients do: a body of the wrong shape is told what is expected; the
/// `idempotency-key` header, which Restate refuses on a workflow's `run`, is not needed (the run id
/// is the workflow key); a retried blocking `run` is refused (409) and the output comes from
/// `output` (or `attach`), as the docs say; a decision repeated after the pause ended is told the
/// call is already decided (409). The tool that pays does so once, under the key the recipe makes.
async fn a_client_drives_a_run_as_the_docs_say() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "send_email", &json!({ "to": "ada" })),
        tool_call_reply(2, "pay", &json!({ "cents": 700 })),
        answer_reply("Sent and paid."),
    ])
    .await;
    let folder = counters_folder("client");
    let counters = folder.path();
    let port = free_port();
    let _service = start_service(port, &model.uri(), None, counters, None).await;
    restate.register(port).await;

    // A body of the wrong shape.
    let (status, refused) = restate
        .post(&format!("{SERVICE}/bad-1/run"), json!({ "text": "hi" }))
        .await;
    assert_eq!(status, 400, "{refused}");
    let refused = refused.to_string();
    assert!(
        refused.contains(r#"a run request is {\"input\": \"...\"}"#) && refused.contains("neither"),
        "{refused}"
    );
    assert!(!refused.contains("untagged"), "{refused}");

    // The output of a run never started: a 404 once the wait for its start is over, not a call
    // left waiting in Restate.
    let asked = std::time::Instant::now();
    let (status, refused) = restate
        .call(
            reqwest::Method::POST,
            &format!("{SERVICE}/never-started/output"),
            None,
        )
        .await;
    assert_eq!(status, 404, "{refused}");
    assert!(
        refused.to_string().contains("no run `never-started`"),
        "{refused}"
    );
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "{:?}",
        asked.elapsed()
    );

    // Restate refuses `idempotency-key` on a workflow's handler: the docs no longer offer it.
    let (status, refused) = restate
        .call_with(
            reqwest::Method::POST,
            &format!("{SERVICE}/run-6/run"),
            &[("idempotency-key", "k1")],
            Some(json!({ "input": "Email Ada, then pay." })),
        )
        .await;
    assert_eq!(status, 400, "{refused}");

    // Started; it waits on the approval.
    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-6/run/send"),
            json!({ "input": "Email Ada, then pay." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    // Asked for at once, the output is waited for: the run has started (or is about to).
    let early = tokio::spawn(
        reqwest::Client::new()
            .post(format!("{}/{SERVICE}/run-6/output", restate.ingress))
            .send(),
    );
    wait_for_pending(&restate, SERVICE, "run-6").await;
    let decide = json!({ "call_id": "call_1", "decision": "approve" });
    let (status, body) = restate
        .post(&format!("{SERVICE}/run-6/decide"), decide.clone())
        .await;
    assert_eq!(status, 200, "{body}");

    // The output, from `output`, as often as it is asked.
    let (status, output) = restate
        .call(
            reqwest::Method::POST,
            &format!("{SERVICE}/run-6/output"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{output}");
    assert_eq!(output["text"], "Sent and paid.", "{output}");
    let paid = output["messages"]
        .as_array()
        .expect("the messages")
        .iter()
        .find(|message| message["tool_call_id"] == "call_2")
        .expect("the payment's result");
    assert_eq!(paid["content"], "paid 700 cents under run-6/call_2");

    // A retried `run` is refused; the documented ways to its output answer.
    let (status, refused) = restate
        .post(
            &format!("{SERVICE}/run-6/run"),
            json!({ "input": "Email Ada, then pay." }),
        )
        .await;
    assert_eq!(status, 409, "{refused}");
    let (status, again) = restate
        .call(
            reqwest::Method::POST,
            &format!("{SERVICE}/run-6/output"),
            None,
        )
        .await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again, output);
    let early = early.await.unwrap().unwrap();
    assert_eq!(early.status(), 200);
    assert_eq!(early.json::<Value>().await.unwrap(), output);
    assert_eq!(restate.attach(SERVICE, "run-6").await, output);

    // A decision repeated once the pause is over.
    let (status, refused) = restate
        .post(&format!("{SERVICE}/run-6/decide"), decide)
        .await;
    assert_eq!(status, 409, "{refused}");
    assert!(refused.to_string().contains("already decided"), "{refused}");

    assert_eq!(counter(counters, "email-ada").as_deref(), Some("1"));
    assert_eq!(counter(counters, "paid-700").as_deref(), Some("1"));
    assert_eq!(model_calls(&model).await, 3);
}

/// The exactly-once recipe through a crash: the payment is made, then the service dies before
/// the call returns; the replay runs the idempotent tool again, under the same key (the workflow
/// key and the recorded call id), and the payment system does not pay twice.
async fn a_payment_keyed_by_run_and_call_happens_once_through_a_crash() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "pay", &json!({ "cents": 900 })),
        answer_reply("Paid."),
    ])
    .await;
    let folder = counters_folder("recipe");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(port, &model.uri(), None, counters, Some("in pay 900")).await;
    restate.register(port).await;
    let (status, body) = restate
        .post(
            &format!("{SERVICE}/run-7/run/send"),
            json!({ "input": "Pay 9 dollars." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    service.expect_line("in pay 900").await;
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(SERVICE, "run-7").await;
    assert_eq!(output["text"], "Paid.", "{output}");
    let result = output["messages"]
        .as_array()
        .expect("the messages")
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("the payment's result");
    assert_eq!(result["content"], "paid 900 cents under run-7/call_1");
    assert_eq!(
        counter(counters, "paid-900").as_deref(),
        Some("1"),
        "paid once"
    );
}

/// Where `value` does not fit `schema`: its types, required properties and items, as far as a
/// schemars schema without references states them (`Ticket`'s).
fn misfits(value: &Value, schema: &Value, at: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(kind) = schema.get("type") {
        let kinds: Vec<&str> = match kind {
            Value::Array(kinds) => kinds.iter().filter_map(Value::as_str).collect(),
            kind => kind.as_str().into_iter().collect(),
        };
        let fits = kinds.iter().any(|kind| match *kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        });
        if !fits {
            problems.push(format!("{at}: {value} is not {kinds:?}"));
        }
    }
    let fields = value.as_object();
    for required in schema["required"].as_array().into_iter().flatten() {
        let name = required.as_str().unwrap_or_default();
        if !fields.is_some_and(|fields| fields.contains_key(name)) {
            problems.push(format!("{at}: `{name}` is missing"));
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if let Some(field) = fields.and_then(|fields| fields.get(name)) {
            problems.extend(misfits(field, property, &format!("{at}.{name}")));
        }
    }
    for (index, item) in value.as_array().into_iter().flatten().enumerate() {
        problems.extend(misfits(item, &schema["items"], &format!("{at}[{index}]")));
    }
    problems
}

/// A typed run (the model calls `bump`, then `send_email`, then gives its answer through the
/// final-answer tool) whose service is killed before its last model call: replayed, it answers
/// with the value as JSON, of the type's schema (which Restate learned from the service), and no
/// model call or tool call was made twice. The email, which needs an approval, is not sent: a
/// typed run does not pause, and the model is told the call was not run.
async fn a_typed_run_answers_with_its_value_through_a_crash() {
    let restate = Restate::start().await;
    let ticket = json!({ "title": "Counter a bumped", "bumps": 1, "tags": ["counters"] });
    let model = serve_in_order(vec![
        tool_call_reply(1, "bump", &json!({ "name": "a" })),
        tool_call_reply(2, "send_email", &json!({ "to": "ada" })),
        tool_call_reply(3, "final_result", &ticket),
    ])
    .await;
    let folder = counters_folder("typed");
    let counters = folder.path();
    let port = free_port();
    let mut service = start_service(
        port,
        &model.uri(),
        None,
        counters,
        Some("before model call 3"),
    )
    .await;
    restate.register(port).await;

    // Restate knows what the run answers: an object whose `value` is a `Ticket`.
    let schema = serde_json::to_value(schemars::schema_for!(Ticket)).expect("a schema");
    let triage = restate.service(TRIAGE).await;
    let run = triage["handlers"]
        .as_array()
        .expect("the handlers")
        .iter()
        .find(|handler| handler["name"] == "run")
        .expect("the run handler");
    let declared = &run["output_json_schema"];
    assert_eq!(
        declared["properties"]["value"]["properties"], schema["properties"],
        "{run}"
    );
    assert_eq!(declared["required"][0], "value", "{run}");

    let (status, body) = restate
        .post(
            &format!("{TRIAGE}/typed-1/run/send"),
            json!({ "input": "Bump a, email Ada, then file a ticket." }),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    service.expect_line("before model call 3").await;
    assert_eq!(model_calls(&model).await, 2);
    service.kill().await;

    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let output = restate.attach(TRIAGE, "typed-1").await;
    assert_eq!(output["value"], ticket, "{output}");
    assert_eq!(
        misfits(&output["value"], &schema, "value"),
        Vec::<String>::new()
    );
    let durable: DurableOutput = serde_json::from_value(output.clone()).expect("a DurableOutput");
    assert_eq!(
        durable.value_as::<Ticket>().expect("a Ticket"),
        Ticket {
            title: "Counter a bumped".to_owned(),
            bumps: 1,
            tags: vec!["counters".to_owned()],
        }
    );
    assert_eq!(output["stop_reason"], json!({ "stop": "finished" }));
    assert_eq!(output["steps"], 3);
    let results = tool_results(&output);
    assert_eq!(results[0], "a is now 1", "{output}");
    assert!(
        results[1].contains("must wait for a person or for the caller"),
        "{output}"
    );
    let (status, again) = restate
        .call(
            reqwest::Method::POST,
            &format!("{TRIAGE}/typed-1/output"),
            None,
        )
        .await;
    assert_eq!((status, &again), (200, &output));

    assert_eq!(model_calls(&model).await, 3, "every model call made once");
    assert_eq!(
        counter(counters, "bump-a").as_deref(),
        Some("1"),
        "the side effect of bump(a) happened once"
    );
    assert_eq!(
        counter(counters, "email-ada"),
        None,
        "no email without approval"
    );
}

/// A typed run whose every answer is refused (by the validator, then by the type twice) ends its
/// workflow with a terminal error that says why: what `run`, `output` and `attach` answer.
async fn a_typed_run_whose_answers_never_fit_ends_with_the_problem() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(
            1,
            "final_result",
            &json!({ "title": "", "bumps": 0, "tags": [] }),
        ),
        tool_call_reply(
            2,
            "final_result",
            &json!({ "title": "Printer", "tags": [] }),
        ),
        tool_call_reply(
            3,
            "final_result",
            &json!({ "title": "Printer", "bumps": "two", "tags": [] }),
        ),
    ])
    .await;
    let folder = counters_folder("never-fits");
    let port = free_port();
    let _service = start_service(port, &model.uri(), None, folder.path(), None).await;
    restate.register(port).await;

    let (status, failed) = restate
        .post(
            &format!("{TRIAGE}/typed-2/run"),
            json!({ "input": "File a ticket." }),
        )
        .await;
    assert_eq!(status, 500, "{failed}");
    let message = failed["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the model gave no acceptable output in 3 tries; the last one:")
            && message.contains("bumps"),
        "{failed}"
    );
    let (status, again) = restate
        .call(
            reqwest::Method::POST,
            &format!("{TRIAGE}/typed-2/output"),
            None,
        )
        .await;
    assert_eq!((status, &again["message"]), (500, &failed["message"]));
    let (status, attached) = restate
        .call(
            reqwest::Method::GET,
            &format!("restate/workflow/{TRIAGE}/typed-2/attach"),
            None,
        )
        .await;
    assert_eq!((status, &attached["message"]), (500, &failed["message"]));

    // Each answer was sent back once: the validator's word, then the type's.
    let bodies = request_bodies(&model).await;
    assert_eq!(bodies.len(), 3);
    let corrections: Vec<String> = bodies[1..]
        .iter()
        .map(|body| {
            body["messages"]
                .as_array()
                .expect("the messages")
                .last()
                .expect("one")["content"]
                .to_string()
        })
        .collect();
    assert!(
        corrections[0].contains("the title is empty"),
        "{corrections:?}"
    );
    assert!(corrections[1].contains("bumps"), "{corrections:?}");
}

/// The tool results of a durable run's output, in order.
fn tool_results(output: &Value) -> Vec<&str> {
    output["messages"]
        .as_array()
        .expect("the messages")
        .iter()
        .filter(|message| message["role"] == "tool")
        .filter_map(|message| message["content"].as_str())
        .collect()
}

/// A run's context comes from its invocation: from the `x-user` header, the same after a pause
/// and a restart (the run is replayed from its journaled headers); or from the run request's
/// `context`. Either way it reaches the tool that asks for it.
async fn a_runs_context_comes_from_its_header_or_its_body() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![
        tool_call_reply(1, "send_email", &json!({ "to": "ada" })),
        tool_call_reply(2, "whoami", &json!({})),
        answer_reply("Sent, Ada."),
        tool_call_reply(3, "whoami", &json!({})),
        answer_reply("You are Bob."),
    ])
    .await;
    let folder = counters_folder("context");
    let counters = folder.path();
    let port = free_port();
    let service = start_service(port, &model.uri(), None, counters, None).await;
    restate.register(port).await;

    let (status, body) = restate
        .call_with(
            reqwest::Method::POST,
            &format!("{BY_HEADER}/ctx-1/run/send"),
            &[("x-user", "ada")],
            Some(json!({ "input": "Email me, then tell me who I am." })),
        )
        .await;
    assert_eq!(status, 202, "{body}");
    wait_for_pending(&restate, BY_HEADER, "ctx-1").await;
    service.kill().await;
    let _service = start_service(port, &model.uri(), None, counters, None).await;
    let (status, body) = restate
        .post(
            &format!("{BY_HEADER}/ctx-1/decide"),
            json!({ "call_id": "call_1", "decision": "approve" }),
        )
        .await;
    assert_eq!(status, 200, "{body}");
    let output = restate.attach(BY_HEADER, "ctx-1").await;
    assert_eq!(output["text"], "Sent, Ada.", "{output}");
    assert_eq!(tool_results(&output), ["sent to ada", "you are ada"]);

    let (status, output) = restate
        .post(
            &format!("{BY_BODY}/ctx-2/run"),
            json!({ "input": "Who am I?", "context": { "name": "bob" } }),
        )
        .await;
    assert_eq!(status, 200, "{output}");
    assert_eq!(tool_results(&output), ["you are bob"]);

    assert_eq!(counter(counters, "whoami-ada").as_deref(), Some("1"));
    assert_eq!(counter(counters, "whoami-bob").as_deref(), Some("1"));
    assert_eq!(model_calls(&model).await, 5);
}

/// A run whose invocation makes no context is refused with the status the context function
/// chose (a missing header: 401; a missing or malformed `context`: 400), as `run` and `output`
/// answer, and never calls the model.
async fn a_run_refused_by_its_context_function_never_calls_the_model() {
    let restate = Restate::start().await;
    let model = serve_in_order(vec![answer_reply("Never asked.")]).await;
    let folder = counters_folder("refused");
    let port = free_port();
    let _service = start_service(port, &model.uri(), None, folder.path(), None).await;
    restate.register(port).await;

    let (status, refused) = restate
        .post(
            &format!("{BY_HEADER}/ctx-3/run"),
            json!({ "input": "Who am I?" }),
        )
        .await;
    assert_eq!(status, 401, "{refused}");
    assert_eq!(
        refused["message"], "who is asking? send x-user",
        "{refused}"
    );
    let (status, again) = restate
        .call(
            reqwest::Method::POST,
            &format!("{BY_HEADER}/ctx-3/output"),
            None,
        )
        .await;
    assert_eq!((status, &again["message"]), (401, &refused["message"]));

    let (status, refused) = restate
        .post(
            &format!("{BY_BODY}/ctx-4/run"),
            json!({ "input": "Who am I?" }),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|message| message.contains(r#"has no "context""#)),
        "{refused}"
    );
    let (status, refused) = restate
        .post(
            &format!("{BY_BODY}/ctx-5/run"),
            json!({ "input": "Who am I?", "context": { "name": 7 } }),
        )
        .await;
    assert_eq!(status, 400, "{refused}");
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|message| message.contains("does not fit at `name`")),
        "{refused}"
    );

    assert_eq!(model_calls(&model).await, 0, "the model was never called");
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
            "a_budget_is_exact_across_a_crash",
            a_budget_is_exact_across_a_crash,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_crash_inside_a_child_agent_repeats_none_of_its_steps",
            a_crash_inside_a_child_agent_repeats_none_of_its_steps,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_typed_run_answers_with_its_value_through_a_crash",
            a_typed_run_answers_with_its_value_through_a_crash,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_typed_run_whose_answers_never_fit_ends_with_the_problem",
            a_typed_run_whose_answers_never_fit_ends_with_the_problem,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_runs_context_comes_from_its_header_or_its_body",
            a_runs_context_comes_from_its_header_or_its_body,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_run_refused_by_its_context_function_never_calls_the_model",
            a_run_refused_by_its_context_function_never_calls_the_model,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_client_drives_a_run_as_the_docs_say",
            a_client_drives_a_run_as_the_docs_say,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_payment_keyed_by_run_and_call_happens_once_through_a_crash",
            a_payment_keyed_by_run_and_call_happens_once_through_a_crash,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_killed_run_goes_on_without_repeating_a_step",
            a_killed_run_goes_on_without_repeating_a_step,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_call_cut_off_by_a_crash_runs_again_only_when_safe_to_repeat",
            a_call_cut_off_by_a_crash_runs_again_only_when_safe_to_repeat,
        )
        .needs(&RESTATE),
        Test::tokio(
            "an_approval_never_answers_a_later_call_with_the_same_id",
            an_approval_never_answers_a_later_call_with_the_same_id,
        )
        .needs(&RESTATE),
        Test::tokio(
            "an_approval_resumes_a_run_after_a_restart",
            an_approval_resumes_a_run_after_a_restart,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_summary_is_journaled_and_never_asked_twice",
            a_summary_is_journaled_and_never_asked_twice,
        )
        .needs(&RESTATE),
        Test::tokio(
            "a_replayed_run_names_the_models_that_answered_before_the_crash",
            a_replayed_run_names_the_models_that_answered_before_the_crash,
        )
        .needs(&RESTATE),
    ])
}
