//! The A2A endpoint with the official Python SDK (`a2a-sdk`) on the other side: its client reads
//! our card and sends, streams, reads and cancels tasks of a real agent, approves a call with the
//! grant the server issued (and is refused with one it did not); and a remote agent on the SDK's
//! server is a tool of ours through `A2aClient`. Callers kept apart by `identify` are checked with
//! our own client.

use std::sync::Arc;

use agent_a2a::{A2aClient, A2aServer, Message, MessagePart, SendResult, TaskState};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Message as CoreMessage, ToolCall};
use agent_web::ChatOwner;
use serde_json::{Value, json};
use tests::a2a::{A2A_SDK, sdk_client, sdk_server};
use tests::peers::Test;
use tests::{get_weather, wipe};

/// Serves `server` on a loopback port; its base URL.
async fn serve<S: Send + Sync + 'static, I: agent_web::Identity<S>>(
    server: A2aServer<S, I>,
) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// Runs the SDK's client through `steps` against `url`.
async fn client(url: &str, steps: Value) -> Value {
    sdk_client(&json!({ "url": url, "steps": steps })).await
}

/// The text parts of a message, joined.
fn text(message: &Value) -> String {
    (message["parts"].as_array().into_iter().flatten())
        .filter_map(|part| part["text"].as_str())
        .collect()
}

/// The SDK reads our card, sends a message (the task completes with the answer as its status
/// message and as an artifact), streams another in the same context (the task, working, the
/// answer's pieces, completed), reads the first task back, and cannot cancel an ended one.
async fn the_sdk_client_sends_streams_and_reads_tasks() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#)]),
        AssistantMessage::text("Light rain: take an umbrella."),
        AssistantMessage::text("Sunny tomorrow."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .named("weather")
        .try_tool(get_weather {})
        .unwrap();
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let first = client(&url, json!([{"send": "Umbrella in Paris?"}])).await;
    assert_eq!(first["card"]["name"], "weather");
    assert_eq!(first["card"]["skills"][0]["id"], "get_weather");
    assert_eq!(first["card"]["capabilities"]["streaming"], true);
    let step = &first["steps"][0];
    assert_eq!(step["error"], Value::Null, "{step:#}");
    let task = &step["result"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task:#}");
    assert_eq!(
        text(&task["status"]["message"]),
        "Light rain: take an umbrella."
    );
    let said: Vec<String> = (task["artifacts"].as_array().unwrap().iter())
        .map(text)
        .collect();
    assert!(
        said.contains(&"Light rain: take an umbrella.".to_owned()),
        "{said:?}"
    );
    let (task_id, context_id) = (
        task["id"].as_str().unwrap(),
        task["contextId"].as_str().unwrap(),
    );

    let later = client(
        &url,
        json!([
            {"stream": "And tomorrow?", "contextId": context_id},
            {"get": task_id},
            {"cancel": task_id}
        ]),
    )
    .await;
    let stream = &later["steps"][0];
    assert_eq!(stream["error"], Value::Null, "{stream:#}");
    let kinds: Vec<&str> = (stream["events"].as_array().unwrap().iter())
        .map(|event| event["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"task"));
    assert!(kinds.contains(&"artifactUpdate"), "{kinds:?}");
    let last = stream["events"].as_array().unwrap().last().unwrap();
    assert_eq!(last["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(last["contextId"], context_id);
    // The second message was asked in the first's conversation.
    assert_eq!(model.requests()[2].messages.len(), 6);
    let read = &later["steps"][1];
    assert_eq!(read["result"]["id"], task_id);
    assert_eq!(read["result"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert!(
        later["steps"][2]["error"].is_string(),
        "an ended task is not cancelled"
    );
}

/// A call that needs approval leaves the task input-required, its status message listing the
/// call with its grant; the SDK's answer in the same task approves it and the task completes. An
/// answer with a grant the server did not issue is refused and changes nothing.
async fn approvals_travel_as_input_required_with_grants() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_w", "wipe", r#"{"folder":"/tmp"}"#)]),
        AssistantMessage::text("Wiped /tmp."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let asked = client(&url, json!([{"send": "Wipe /tmp"}])).await;
    let task = &asked["steps"][0]["result"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task:#}"
    );
    let parts = task["status"]["message"]["parts"].as_array().unwrap();
    let waiting = &parts.iter().find_map(|part| part.get("data")).unwrap()["waiting"][0];
    assert_eq!(waiting["toolCallId"], "call_w");
    assert_eq!(waiting["tool"], "wipe");
    assert_eq!(waiting["waitsFor"], "approval");
    let grant = waiting["grant"].as_str().unwrap();
    let task_id = task["id"].as_str().unwrap();

    let refused = client(
        &url,
        json!([
            {"send": "yes", "taskId": task_id,
             "data": {"decisions": [{"grant": format!("{grant}x"), "approved": true}]}},
            {"get": task_id}
        ]),
    )
    .await;
    let forged = &refused["steps"][0];
    assert!(
        forged["error"].as_str().unwrap().contains("grant"),
        "{forged:#}"
    );
    let unchanged = &refused["steps"][1]["result"];
    assert_eq!(unchanged["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
    assert_eq!(
        unchanged["history"].as_array().unwrap().len(),
        2,
        "the refused answer is not kept"
    );
    assert_eq!(model.requests().len(), 1, "nothing ran");
    let answered = client(
        &url,
        json!([{"send": "yes", "taskId": task_id,
                "data": {"decisions": [{"grant": grant, "approved": true}]}}]),
    )
    .await;
    let approved = &answered["steps"][0];
    assert_eq!(approved["error"], Value::Null, "{approved:#}");
    assert_eq!(
        approved["result"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let shown = &model.requests()[1].messages;
    assert!(
        matches!(shown.last(), Some(CoreMessage::Tool(result)) if result.content == "wiped /tmp")
    );
}

/// A signed-in user.
#[derive(Clone)]
struct User(String);

impl ChatOwner for User {
    fn owner(&self) -> &str {
        &self.0
    }
}

/// Callers signed in with a bearer token (declared on the card) see their own tasks only.
async fn tasks_are_kept_per_caller() {
    let model = ScriptedModel::new([AssistantMessage::text("Hello, Ann.")]);
    let agent: Agent<User> = Agent::new(model);
    let server = A2aServer::new(Arc::new(agent))
        .security_scheme(
            "bearer",
            json!({"httpAuthSecurityScheme": {"scheme": "Bearer"}}),
        )
        .identify(|parts| async move {
            let token = (parts.headers.get("authorization"))
                .and_then(|value| value.to_str().ok())
                .and_then(|value| value.strip_prefix("Bearer "));
            match token {
                Some(user @ ("ann" | "bo")) => Ok(User(user.to_owned())),
                _ => Err((axum::http::StatusCode::UNAUTHORIZED, "sign in first")),
            }
        });
    let url = serve(server).await;
    let signed_in = |user: &str| {
        let mut headers = reqwest::header::HeaderMap::new();
        let value = format!("Bearer {user}").parse().unwrap();
        headers.insert(reqwest::header::AUTHORIZATION, value);
        headers
    };
    let ann = A2aClient::connect_with(&url, signed_in("ann"))
        .await
        .unwrap();
    assert!(ann.card().security_schemes.contains_key("bearer"));
    let SendResult::Task(task) = ann
        .send(Message::user(vec![MessagePart::text("Hi")]))
        .await
        .unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(task.status.state, TaskState::Completed);
    assert_eq!(ann.task(&task.id).await.unwrap().id, task.id);
    let bo = A2aClient::connect_with(&url, signed_in("bo"))
        .await
        .unwrap();
    let refused = bo.task(&task.id).await.unwrap_err();
    assert!(
        matches!(
            refused,
            agent_a2a::A2aClientError::Refused { code: -32001, .. }
        ),
        "{refused}"
    );
    let anonymous = reqwest::Client::new()
        .post(&url)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": task.id}}))
        .send()
        .await
        .unwrap();
    assert_eq!(anonymous.status(), 401);
}

/// A remote agent on the official SDK's server is a tool of ours: the model asks it in words and
/// reads its answer; a task of its that waits for input is an error the model reads.
async fn a_remote_a2a_agent_is_a_tool() {
    let (_server, url) = sdk_server().await;
    let remote = A2aClient::connect(&url).await.unwrap();
    assert_eq!(remote.card().skills[0].id, "weather");
    let tool = remote.into_tool("ask_weather_agent", "Ask the weather agent.");
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("c1", "ask_weather_agent", r#"{"input":"Paris"}"#),
            ToolCall::new("c2", "ask_weather_agent", r#"{"input":"needs input"}"#),
        ]),
        AssistantMessage::text("Sunny in Paris."),
    ]);
    let agent: Agent = Agent::new(model.clone()).try_tool(tool).unwrap();
    let output = agent.run("Weather in Paris?").await.unwrap();
    assert_eq!(output.text, "Sunny in Paris.");
    let results: Vec<&str> = tests::result_texts(&output.messages);
    assert_eq!(results[0], "sunny in Paris");
    assert!(results[1].contains("waits for input"), "{}", results[1]);
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "the_sdk_client_sends_streams_and_reads_tasks",
            the_sdk_client_sends_streams_and_reads_tasks,
        )
        .needs(&A2A_SDK),
        Test::tokio(
            "approvals_travel_as_input_required_with_grants",
            approvals_travel_as_input_required_with_grants,
        )
        .needs(&A2A_SDK),
        Test::tokio("tasks_are_kept_per_caller", tasks_are_kept_per_caller),
        Test::tokio("a_remote_a2a_agent_is_a_tool", a_remote_a2a_agent_is_a_tool).needs(&A2A_SDK),
    ])
}
