//! The AG-UI endpoint (`agent_agui::AguiServer`) over loopback HTTP: the events of a run read as
//! they are sent, interrupts answered only under the ids the server issued, threads kept per
//! caller, limits, and the requests refused before a stream starts. The official client's view of
//! the same runs is in `agui_client.rs`.

use std::sync::Arc;
use std::time::Duration;

use agent_agui::AguiServer;
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{Agent, AssistantMessage, Message, ModelError, ToolCall};
use agent_web::{ChatOwner, UserLimits};
use serde_json::{Value, json};
use tests::peers::Test;
use tests::{get_weather, wipe};

/// Serves `server` on a loopback port; its endpoint's URL.
async fn serve<S: Send + Sync + 'static, I: agent_web::Identity<S>>(
    server: AguiServer<S, I>,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// A `RunAgentInput` for thread `thread` whose last message is the user's `text`.
fn ask(thread: &str, text: &str) -> Value {
    json!({
        "threadId": thread, "runId": format!("run-{}", fastrand_id()), "state": {}, "tools": [],
        "context": [], "forwardedProps": {},
        "messages": [{"id": "m1", "role": "user", "content": text}]
    })
}

/// A `RunAgentInput` answering interrupts of thread `thread`.
fn resume(thread: &str, entries: Value) -> Value {
    json!({"threadId": thread, "runId": format!("run-{}", fastrand_id()), "messages": [], "resume": entries})
}

fn fastrand_id() -> String {
    agent_core::RunId::new().to_string()
}

/// What a POST got: its status, and its events (or its JSON error).
struct Reply {
    status: u16,
    events: Vec<Value>,
    error: Value,
    retry_after: Option<String>,
}

async fn post(url: &str, body: &Value, user: Option<&str>) -> Reply {
    let mut request = reqwest::Client::new().post(url).json(body);
    if let Some(user) = user {
        request = request.header("x-user", user);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let retry_after =
        (response.headers().get("retry-after")).map(|value| value.to_str().unwrap().to_owned());
    let text = response.text().await.unwrap();
    if status != 200 {
        return Reply {
            status,
            events: Vec::new(),
            // The server's own refusals are JSON; an identity's may be plain text.
            error: serde_json::from_str(&text).unwrap_or(Value::String(text)),
            retry_after,
        };
    }
    let events = text
        .split("\n\n")
        .filter(|frame| !frame.is_empty())
        .map(|frame| serde_json::from_str(frame.strip_prefix("data: ").unwrap()).unwrap())
        .collect();
    Reply {
        status,
        events,
        error: Value::Null,
        retry_after,
    }
}

/// The events' types, in order.
fn types(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect()
}

/// The last event, which ends the run.
fn last(events: &[Value]) -> &Value {
    events.last().expect("events")
}

/// A run that calls a tool, then answers: each step's events, the call under the step's message,
/// its result, the answer streamed as a message of its own step, the tokens at the end.
async fn a_run_streams_its_steps_calls_results_and_answer() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Paris"}"#,
        )]),
        AssistantMessage::text("Take an umbrella."),
    ]);
    let agent: Agent = Agent::new(model).try_tool(get_weather {}).unwrap();
    let url = serve(AguiServer::new(Arc::new(agent))).await;
    let body = ask("t1", "Umbrella in Paris?");
    let run_id = body["runId"].as_str().unwrap().to_owned();
    let reply = post(&url, &body, None).await;
    assert_eq!(reply.status, 200);
    let events = &reply.events;
    assert_eq!(
        types(events),
        [
            "RUN_STARTED",
            "STEP_STARTED",
            "TOOL_CALL_START",
            "TOOL_CALL_ARGS",
            "TOOL_CALL_END",
            "TOOL_CALL_RESULT",
            "STEP_FINISHED",
            "STEP_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "STEP_FINISHED",
            "RUN_FINISHED"
        ]
    );
    assert_eq!(
        events[0],
        json!({"type": "RUN_STARTED", "threadId": "t1", "runId": run_id})
    );
    assert_eq!(events[2]["toolCallName"], "get_weather");
    assert_eq!(events[3]["delta"], r#"{"city":"Paris"}"#);
    assert_eq!(events[5]["toolCallId"], "call_1");
    assert!(events[5]["content"].as_str().unwrap().contains("Paris"));
    // The call's message and the answer's are two (two steps, two assistant messages).
    assert_ne!(events[2]["parentMessageId"], events[8]["messageId"]);
    assert_eq!(events[9]["delta"], "Take an umbrella.");
    assert_eq!(last(events)["outcome"], json!({"type": "success"}));
}

/// A run that stops for an approval ends with an interrupt naming the call; the answer is taken
/// only under the id issued for that call of that thread's pause: a made-up id, or one issued
/// for another thread, is a `403` with nothing run; then the right one runs the call.
async fn interrupts_are_answered_only_under_the_ids_the_server_issued() {
    let wipe_tmp =
        || AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp"}"#)]);
    // Thread `a` asks, then thread `b`; then `a` answers.
    let model = ScriptedModel::new([wipe_tmp(), wipe_tmp(), AssistantMessage::text("Wiped.")]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let store = Arc::new(MemorySessions::new());
    let url = serve(AguiServer::new(Arc::new(agent)).sessions(store.clone())).await;

    let first = post(&url, &ask("a", "Wipe /tmp"), None).await;
    let end = last(&first.events);
    assert_eq!(end["type"], "RUN_FINISHED");
    assert_eq!(end["outcome"]["type"], "interrupt");
    let interrupt = &end["outcome"]["interrupts"][0];
    assert_eq!(interrupt["toolCallId"], "call_w");
    assert_eq!(interrupt["reason"], "tool_approval");
    assert_eq!(
        interrupt["metadata"],
        json!({"toolName": "wipe", "arguments": {"folder": "/tmp"}})
    );
    let granted = interrupt["id"].as_str().unwrap().to_owned();
    // Another thread paused on the same call: its id is not this thread's.
    let other = post(&url, &ask("b", "Wipe /tmp"), None).await;
    let other_id = last(&other.events)["outcome"]["interrupts"][0]["id"].clone();
    assert_ne!(other_id.as_str().unwrap(), granted);

    let asked = model.requests().len();
    for forged in [json!("made-up"), other_id, json!(format!("{granted}x"))] {
        let entry = json!([{"interruptId": forged, "status": "resolved"}]);
        let refused = post(&url, &resume("a", entry), None).await;
        assert_eq!(refused.status, 403, "{}", refused.error);
        assert!(
            refused.error["error"]
                .as_str()
                .unwrap()
                .contains("not issued")
        );
    }
    assert_eq!(model.requests().len(), asked, "nothing ran");
    assert!(store.load("a").await.unwrap().paused.is_some());

    let entry =
        json!([{"interruptId": granted, "status": "resolved", "payload": {"approved": true}}]);
    let approved = post(&url, &resume("a", entry.clone()), None).await;
    assert_eq!(approved.status, 200);
    let result = approved
        .events
        .iter()
        .find(|event| event["type"] == "TOOL_CALL_RESULT");
    assert_eq!(result.unwrap()["content"], "wiped /tmp");
    assert_eq!(last(&approved.events)["outcome"]["type"], "success");
    // The same answer again: the pause it was issued for is over.
    let replayed = post(&url, &resume("a", entry), None).await;
    assert_eq!(replayed.status, 409, "{}", replayed.error);
}

/// A denial (`approved: false`, or a cancelled interrupt) tells the model, with the reason, and
/// the call does not run.
async fn a_denied_call_is_not_run_and_the_model_reads_why() {
    for (status, payload) in [
        (
            "resolved",
            json!({"approved": false, "reason": "not today"}),
        ),
        ("cancelled", json!({"reason": "not today"})),
    ] {
        let model = ScriptedModel::new([
            AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/"}"#)]),
            AssistantMessage::text("I left it alone."),
        ]);
        let agent: Agent = Agent::new(model.clone())
            .try_tool(wipe {})
            .unwrap()
            .defer_approvals();
        let url = serve(AguiServer::new(Arc::new(agent))).await;
        let first = post(&url, &ask("t", "Wipe /"), None).await;
        let id = last(&first.events)["outcome"]["interrupts"][0]["id"].clone();
        let entry = json!([{"interruptId": id, "status": status, "payload": payload}]);
        let denied = post(&url, &resume("t", entry), None).await;
        let result = denied
            .events
            .iter()
            .find(|event| event["type"] == "TOOL_CALL_RESULT");
        let content = result.unwrap()["content"].as_str().unwrap().to_owned();
        assert!(!content.contains("wiped"), "{content}");
        assert!(content.contains("not today"), "{content}");
        let shown = &model.requests()[1].messages;
        assert!(matches!(shown.last(), Some(Message::Tool(result)) if result.content == content));
    }
}

/// Where the person is: the client knows.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A tool the client runs is an interrupt too; its result comes back as the payload.
async fn a_client_side_tool_is_answered_with_its_result() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_l", "where_am_i", "{}")]),
        AssistantMessage::text("You are in Oslo."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap();
    let url = serve(AguiServer::new(Arc::new(agent))).await;
    let first = post(&url, &ask("t", "Where am I?"), None).await;
    let interrupt = &last(&first.events)["outcome"]["interrupts"][0];
    assert_eq!(interrupt["reason"], "tool_result");
    // A result is needed: none is a `400`.
    let entry = json!([{"interruptId": interrupt["id"], "status": "resolved"}]);
    assert_eq!(post(&url, &resume("t", entry), None).await.status, 400);
    let entry = json!([{"interruptId": interrupt["id"], "status": "resolved", "payload": {"city": "Oslo"}}]);
    let answered = post(&url, &resume("t", entry), None).await;
    assert_eq!(last(&answered.events)["outcome"]["type"], "success");
    let shown = &model.requests()[1].messages;
    assert!(
        matches!(shown.last(), Some(Message::Tool(result)) if result.content == r#"{"city":"Oslo"}"#),
        "{shown:?}"
    );
}

/// A model that fails ends the run with `RUN_ERROR` and its code; the thread goes on after it.
async fn a_failed_run_ends_with_run_error() {
    let model = ScriptedModel::from_steps([
        ScriptStep::error(|| ModelError::Authentication {
            status: 401,
            message: "bad key".into(),
        }),
        ScriptStep::reply(AssistantMessage::text("Hello again.")),
    ]);
    let url = serve(AguiServer::new(Arc::new(Agent::new(model)))).await;
    let failed = post(&url, &ask("t", "Hi"), None).await;
    assert_eq!(
        types(&failed.events),
        ["RUN_STARTED", "STEP_STARTED", "STEP_FINISHED", "RUN_ERROR"]
    );
    assert_eq!(last(&failed.events)["code"], "model_error");
    assert!(
        last(&failed.events)["message"]
            .as_str()
            .unwrap()
            .contains("bad key")
    );
    let again = post(&url, &ask("t", "Hi?"), None).await;
    assert_eq!(last(&again.events)["outcome"]["type"], "success");
}

/// What does not fit is refused before the stream, with a JSON error, and nothing runs.
async fn requests_that_do_not_fit_are_refused_before_the_stream() {
    let model = ScriptedModel::new([AssistantMessage::tool_calls([ToolCall::new(
        "call_w",
        "wipe",
        r#"{"folder":"/"}"#,
    )])]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let url = serve(AguiServer::new(Arc::new(agent))).await;
    let not_input = post(&url, &json!({"hello": "there"}), None).await;
    assert_eq!(not_input.status, 400);
    assert!(
        not_input.error["error"]
            .as_str()
            .unwrap()
            .contains("RunAgentInput")
    );
    let assistant_last = json!({"threadId": "t", "runId": "r", "messages": [
        {"id": "1", "role": "assistant", "content": "I said so."}]});
    assert_eq!(post(&url, &assistant_last, None).await.status, 400);
    let nothing_waits = resume("none", json!([{"interruptId": "x", "status": "resolved"}]));
    assert_eq!(post(&url, &nothing_waits, None).await.status, 404);
    assert_eq!(model.requests().len(), 0);
    // The thread waits on an approval: a new message is a conflict until it is answered.
    post(&url, &ask("t", "Wipe /"), None).await;
    let meanwhile = post(&url, &ask("t", "And now?"), None).await;
    assert_eq!(meanwhile.status, 409);
    assert!(
        meanwhile.error["error"]
            .as_str()
            .unwrap()
            .contains("resume")
    );
    assert_eq!(model.requests().len(), 1);
}

/// A signed-in user.
#[derive(Clone)]
struct User(String);

impl ChatOwner for User {
    fn owner(&self) -> &str {
        &self.0
    }
}

/// Threads are the caller's own: two users' threads of one id are two threads, a user cannot
/// answer another's interrupts, and a request without a sign-in is refused.
async fn threads_are_kept_per_caller() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/"}"#)]),
        AssistantMessage::text("Hello, Bo."),
    ]);
    let agent: Agent<User> = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let server = AguiServer::new(Arc::new(agent)).identify(|parts| async move {
        let user = parts
            .headers
            .get("x-user")
            .and_then(|value| value.to_str().ok());
        user.map(|user| User(user.to_owned()))
            .ok_or((axum::http::StatusCode::UNAUTHORIZED, "sign in first"))
    });
    let url = serve(server).await;
    assert_eq!(post(&url, &ask("t", "Hi"), None).await.status, 401);
    let ann = post(&url, &ask("t", "Wipe /"), Some("ann")).await;
    let id = last(&ann.events)["outcome"]["interrupts"][0]["id"].clone();
    // Bo's thread `t` is his own: Ann's pause is not in it.
    let bo = post(&url, &ask("t", "Hi"), Some("bo")).await;
    assert_eq!(last(&bo.events)["outcome"]["type"], "success");
    assert_eq!(
        model.requests()[1].messages.len(),
        2,
        "Bo's model call sees Bo's thread only"
    );
    let entry = json!([{"interruptId": id, "status": "resolved"}]);
    let bo_answers = post(&url, &resume("t", entry), Some("bo")).await;
    assert_eq!(bo_answers.status, 409, "Bo's thread has nothing waiting");
    assert_eq!(model.requests().len(), 2);
}

/// A user over their limits gets `429` with `retry-after`, and the thread is left as it was.
async fn a_user_over_their_limits_waits() {
    let model = ScriptedModel::new([
        AssistantMessage::text("One."),
        AssistantMessage::text("Two."),
    ]);
    let limits = UserLimits::new().requests(1, Duration::from_secs(60));
    let url = serve(AguiServer::new(Arc::new(Agent::new(model.clone()))).limits(limits)).await;
    assert_eq!(post(&url, &ask("t", "One?"), None).await.status, 200);
    let refused = post(&url, &ask("t", "Two?"), None).await;
    assert_eq!(refused.status, 429);
    let wait: u64 = refused.retry_after.unwrap().parse().unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(model.requests().len(), 1);
}

/// A request whose head is over what a connection holds is refused (`431`), and the next one on
/// a new connection is answered.
async fn a_request_head_over_the_limit_is_refused() {
    let model = ScriptedModel::new([AssistantMessage::text("Hi.")]);
    let url = serve(AguiServer::new(Arc::new(Agent::new(model)))).await;
    let big = "x".repeat(agent_web::MAX_REQUEST_HEAD);
    let refused = reqwest::Client::new()
        .post(&url)
        .header("x-padding", big)
        .json(&ask("t", "Hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 431);
    assert_eq!(post(&url, &ask("t", "Hi"), None).await.status, 200);
}

/// A resume that answers only some of the interrupts is a `400` before the stream, as the guide
/// says: nothing runs, the thread still waits, and answering them all goes on.
async fn a_resume_that_answers_some_interrupts_is_refused() {
    let wipe_call =
        |id: &str, folder: &str| ToolCall::new(id, "wipe", json!({ "folder": folder }).to_string());
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([wipe_call("c1", "/a"), wipe_call("c2", "/b")]),
        AssistantMessage::text("Both wiped."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let store = Arc::new(MemorySessions::new());
    let url = serve(AguiServer::new(Arc::new(agent)).sessions(store.clone())).await;
    let first = post(&url, &ask("t", "Wipe both"), None).await;
    let interrupts = last(&first.events)["outcome"]["interrupts"].clone();
    assert_eq!(interrupts.as_array().unwrap().len(), 2, "{interrupts}");
    let answer = |interrupt: &Value| json!({"interruptId": interrupt["id"], "status": "resolved", "payload": {"approved": true}});

    let some = post(&url, &resume("t", json!([answer(&interrupts[0])])), None).await;
    assert_eq!(some.status, 400, "{:?}", some.events);
    let why = some.error["error"].as_str().unwrap();
    assert!(
        why.contains("`c2`") && why.contains("not answered"),
        "{why}"
    );
    assert_eq!(model.requests().len(), 1, "nothing ran");
    assert!(store.load("t").await.unwrap().paused.is_some());

    let all = json!([answer(&interrupts[1]), answer(&interrupts[0])]);
    let done = post(&url, &resume("t", all), None).await;
    assert_eq!(done.status, 200, "{}", done.error);
    assert_eq!(last(&done.events)["outcome"]["type"], "success");
    let results = types(&done.events)
        .iter()
        .filter(|kind| **kind == "TOOL_CALL_RESULT")
        .count();
    assert_eq!(results, 2);
}

/// A body that is not `application/json` (a form, plain text that holds JSON) is refused with
/// `415` before it is read, and nothing runs.
async fn a_body_that_is_not_json_is_refused() {
    let model = ScriptedModel::new([AssistantMessage::text("Hi.")]);
    let url = serve(AguiServer::new(Arc::new(Agent::new(model.clone())))).await;
    let body = ask("t", "Hi").to_string();
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut request = reqwest::Client::new().post(&url).body(body.clone());
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let refused = request.send().await.unwrap();
        assert_eq!(refused.status(), 415, "{content_type:?}");
        let error: Value = refused.json().await.unwrap();
        assert!(
            error["error"]
                .as_str()
                .unwrap()
                .contains("application/json"),
            "{error}"
        );
    }
    assert_eq!(model.requests().len(), 0, "nothing ran");
    let typed = reqwest::Client::new().post(&url).body(body);
    let answered = typed.header("content-type", "application/json; charset=utf-8");
    assert_eq!(answered.send().await.unwrap().status(), 200);
}

/// Pages of an origin allowed call the endpoint from the browser: their preflight is answered
/// (`204`, the methods and headers they may send) and the run's response is marked for them.
/// Another origin's preflight gets no CORS header, so the browser keeps its page out.
async fn pages_of_an_origin_allowed_call_it_from_the_browser() {
    let model = ScriptedModel::new([AssistantMessage::text("Hi.")]);
    let server = AguiServer::new(Arc::new(Agent::new(model)))
        .allow_origin("https://app.example.com")
        .allow_header(axum::http::HeaderName::from_static("x-api-key"));
    let url = serve(server).await;
    let preflight = |origin: &'static str| {
        reqwest::Client::new()
            .request(reqwest::Method::OPTIONS, &url)
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type, x-api-key")
            .send()
    };
    let allowed = preflight("https://app.example.com").await.unwrap();
    assert_eq!(allowed.status(), 204);
    let header = |name: &str| allowed.headers()[name].to_str().unwrap().to_owned();
    assert_eq!(
        header("access-control-allow-origin"),
        "https://app.example.com"
    );
    assert!(header("access-control-allow-methods").contains("POST"));
    assert!(header("access-control-allow-headers").contains("x-api-key"));
    let other = preflight("https://evil.example").await.unwrap();
    assert!(other.headers().get("access-control-allow-origin").is_none());

    let run = reqwest::Client::new()
        .post(&url)
        .header("origin", "https://app.example.com")
        .json(&ask("t", "Hi"))
        .send()
        .await
        .unwrap();
    assert_eq!(run.status(), 200);
    assert_eq!(
        run.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert!(run.text().await.unwrap().contains("RUN_FINISHED"));
}

/// Takes a while to look something up.
#[agent_core::tool]
async fn slow_lookup() -> String {
    tokio::time::sleep(Duration::from_millis(450)).await;
    "found".to_owned()
}

/// While a run waits (a slow tool), its stream sends the comment `: keep-alive` every so often,
/// between the run's events, which are sent whole as before.
async fn a_run_that_waits_sends_keep_alives() {
    assert_eq!(agent_agui::DEFAULT_KEEP_ALIVE, Duration::from_secs(15));
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "slow_lookup", "{}")]),
        AssistantMessage::text("Found it."),
    ]);
    let agent: Agent = Agent::new(model).try_tool(slow_lookup {}).unwrap();
    let server = AguiServer::new(Arc::new(agent)).keep_alive(Duration::from_millis(100));
    let url = serve(server).await;
    let response = reqwest::Client::new()
        .post(&url)
        .json(&ask("t", "Look it up"))
        .send();
    let text = response.await.unwrap().text().await.unwrap();
    let frames: Vec<&str> = text
        .split("\n\n")
        .filter(|frame| !frame.is_empty())
        .collect();
    let kept_alive = frames
        .iter()
        .filter(|frame| **frame == ": keep-alive")
        .count();
    assert!(kept_alive >= 2, "{text}");
    let events: Vec<Value> = (frames.iter())
        .filter_map(|frame| frame.strip_prefix("data: "))
        .map(|json| serde_json::from_str(json).unwrap())
        .collect();
    assert_eq!(events.len() + kept_alive, frames.len(), "{text}");
    assert_eq!(last(&events)["outcome"]["type"], "success");
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "a_run_streams_its_steps_calls_results_and_answer",
            a_run_streams_its_steps_calls_results_and_answer,
        ),
        Test::tokio(
            "interrupts_are_answered_only_under_the_ids_the_server_issued",
            interrupts_are_answered_only_under_the_ids_the_server_issued,
        ),
        Test::tokio(
            "a_denied_call_is_not_run_and_the_model_reads_why",
            a_denied_call_is_not_run_and_the_model_reads_why,
        ),
        Test::tokio(
            "a_client_side_tool_is_answered_with_its_result",
            a_client_side_tool_is_answered_with_its_result,
        ),
        Test::tokio(
            "a_failed_run_ends_with_run_error",
            a_failed_run_ends_with_run_error,
        ),
        Test::tokio(
            "requests_that_do_not_fit_are_refused_before_the_stream",
            requests_that_do_not_fit_are_refused_before_the_stream,
        ),
        Test::tokio("threads_are_kept_per_caller", threads_are_kept_per_caller),
        Test::tokio(
            "a_user_over_their_limits_waits",
            a_user_over_their_limits_waits,
        ),
        Test::tokio(
            "a_request_head_over_the_limit_is_refused",
            a_request_head_over_the_limit_is_refused,
        ),
        Test::tokio(
            "a_resume_that_answers_some_interrupts_is_refused",
            a_resume_that_answers_some_interrupts_is_refused,
        ),
        Test::tokio(
            "a_body_that_is_not_json_is_refused",
            a_body_that_is_not_json_is_refused,
        ),
        Test::tokio(
            "pages_of_an_origin_allowed_call_it_from_the_browser",
            pages_of_an_origin_allowed_call_it_from_the_browser,
        ),
        Test::tokio(
            "a_run_that_waits_sends_keep_alives",
            a_run_that_waits_sends_keep_alives,
        ),
    ])
}
