//! The A2A endpoint with our own client (`A2aClient`) and raw JSON-RPC: a typed agent's value as
//! a data artifact, the parts a tool returns as an artifact, a tool the client runs answered
//! through `input-required`, a task cancelled while it works, a subscriber that reads a task to
//! its end. The official clients' view is in `a2a_sdk.rs` and `a2a_tck.rs`.

use std::sync::Arc;
use std::time::Duration;

use agent_a2a::{A2aClient, A2aServer, Message, MessagePart, SendResult, Task, TaskState};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Message as CoreMessage, ToolCall};
use serde_json::{Value, json};
use tests::peers::Test;
use tests::screenshot;

/// Serves `server` on a loopback port; its base URL.
async fn serve(server: A2aServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    url
}

/// Sends `text` (with `data`, if any, as a data part) in task `task_id`, if given; the task.
async fn send(client: &A2aClient, text: &str, task_id: Option<&str>, data: Option<Value>) -> Task {
    let mut parts = vec![MessagePart::text(text)];
    parts.extend(data.map(MessagePart::data));
    let mut message = Message::user(parts);
    message.task_id = task_id.map(str::to_owned);
    match client.send(message).await.unwrap() {
        SendResult::Task(task) => task,
        SendResult::Message(message) => panic!("a task, not {message:?}"),
    }
}

/// A forecast.
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Forecast {
    city: String,
    rain: bool,
}

/// An agent served for a typed answer completes each task with the value as a data artifact.
async fn a_typed_agents_value_is_a_data_artifact() {
    // The scripted model has no native structured output: the answer is the `final_result` tool's.
    let model = ScriptedModel::new([AssistantMessage::tool_calls([ToolCall::new(
        "out",
        "final_result",
        r#"{"city":"Paris","rain":true}"#,
    )])]);
    let agent: Agent = Agent::new(model);
    let url = serve(A2aServer::typed::<Forecast>(Arc::new(agent))).await;
    let client = A2aClient::connect(&url).await.unwrap();
    assert_eq!(client.card().default_output_modes, ["application/json"]);
    let task = send(&client, "Rain in Paris?", None, None).await;
    assert_eq!(task.status.state, TaskState::Completed);
    let output = task
        .artifacts
        .iter()
        .find(|artifact| artifact.name.as_deref() == Some("output"));
    assert_eq!(
        output.unwrap().parts[0].data,
        Some(json!({"city": "Paris", "rain": true}))
    );
}

/// The parts a tool returns (a screenshot) are an artifact of the task: its bytes and media type.
async fn a_tools_parts_are_an_artifact() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "c1",
            "screenshot",
            r#"{"url":"https://a.example"}"#,
        )]),
        AssistantMessage::text("Here it is."),
    ]);
    let agent: Agent = Agent::new(model).try_tool(screenshot {}).unwrap();
    let client = A2aClient::connect(&serve(A2aServer::new(Arc::new(agent))).await)
        .await
        .unwrap();
    let task = send(&client, "Show me a.example", None, None).await;
    let parts: Vec<&MessagePart> = task
        .artifacts
        .iter()
        .flat_map(|artifact| &artifact.parts)
        .collect();
    let image = parts
        .iter()
        .find(|part| part.raw.is_some())
        .expect("the image");
    assert_eq!(image.media_type.as_deref(), Some("image/png"));
    assert!(
        parts
            .iter()
            .any(|part| part.text.as_deref() == Some("Here it is."))
    );
}

/// Where the person is: the client knows.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// A tool the client runs leaves the task waiting for its result, which comes back with the
/// call's grant; without a decision, the client's words deny the call and the model reads them.
async fn a_client_side_tool_is_answered_in_its_task() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "where_am_i", "{}")]),
        AssistantMessage::text("You are in Oslo."),
        AssistantMessage::tool_calls([ToolCall::new("c2", "where_am_i", "{}")]),
        AssistantMessage::text("Fine, I will not look."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap();
    let client = A2aClient::connect(&serve(A2aServer::new(Arc::new(agent))).await)
        .await
        .unwrap();
    let waiting = send(&client, "Where am I?", None, None).await;
    assert_eq!(waiting.status.state, TaskState::InputRequired);
    let said = waiting.status.message.as_ref().unwrap();
    let waits = said
        .parts
        .iter()
        .find_map(|part| part.data.as_ref())
        .unwrap();
    assert_eq!(waits["waiting"][0]["waitsFor"], "result");
    let grant = waits["waiting"][0]["grant"].clone();
    let decisions = json!({"decisions": [{"grant": grant, "result": {"city": "Oslo"}}]});
    let done = send(&client, "here", Some(&waiting.id), Some(decisions)).await;
    assert_eq!(done.status.state, TaskState::Completed);
    assert!(matches!(&model.requests()[1].messages.last(),
        Some(CoreMessage::Tool(result)) if result.content == r#"{"city":"Oslo"}"#));

    let again = send(&client, "And now?", None, None).await;
    let denied = send(&client, "Do not look me up.", Some(&again.id), None).await;
    assert_eq!(denied.status.state, TaskState::Completed);
    let shown = &model.requests()[3].messages;
    assert!(matches!(shown.last(),
        Some(CoreMessage::Tool(result)) if result.content.contains("Do not look me up.")));
}

/// Waits until cancelled.
#[agent_core::tool]
async fn long_report() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done".to_owned()
}

/// A JSON-RPC call to `url`: its whole reply.
async fn rpc(url: &str, method: &str, params: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}))
        .send()
        .await
        .unwrap()
}

/// A streamed task whose tool works is cancelled by `CancelTask`: a subscriber and the stream
/// read it to its end, `canceled`, and the tool's call is answered as interrupted.
async fn a_task_at_work_is_cancelled_and_its_readers_see_it_end() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "long_report", "{}")]),
        AssistantMessage::text("Stopped."),
    ]);
    let agent: Agent = Agent::new(model).try_tool(long_report {}).unwrap();
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let message =
        json!({"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "Report"}]}});
    let mut stream = rpc(&url, "SendStreamingMessage", message).await;
    assert_eq!(stream.headers()["content-type"], "text/event-stream");
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let task: Value = serde_json::from_str(first.trim().strip_prefix("data: ").unwrap()).unwrap();
    let task_id = task["result"]["task"]["id"].as_str().unwrap().to_owned();
    let subscriber = tokio::spawn({
        let url = url.clone();
        let task_id = task_id.clone();
        async move {
            rpc(&url, "SubscribeToTask", json!({"id": task_id}))
                .await
                .text()
                .await
                .unwrap()
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let cancelled: Value = rpc(&url, "CancelTask", json!({"id": task_id}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        cancelled["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{cancelled}"
    );
    let mut rest = String::new();
    while let Some(chunk) = tokio::time::timeout(Duration::from_secs(10), stream.chunk())
        .await
        .unwrap()
        .unwrap()
    {
        rest.push_str(&String::from_utf8_lossy(&chunk));
    }
    let ended = rest
        .trim_end()
        .lines()
        .last()
        .unwrap_or_default()
        .to_owned();
    assert!(ended.contains("TASK_STATE_CANCELED"), "{rest}");
    let read = tokio::time::timeout(Duration::from_secs(10), subscriber)
        .await
        .unwrap()
        .unwrap();
    let last = read.trim_end().lines().last().unwrap().to_owned();
    assert!(last.contains("TASK_STATE_CANCELED"), "{read}");
    // Cancelled again: it has ended.
    let again: Value = rpc(&url, "CancelTask", json!({"id": task_id}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(again["error"]["code"], -32002);
}

/// A user over their limits is refused (`429`, `retry-after`) and nothing runs.
async fn a_user_over_their_limits_waits() {
    let model = ScriptedModel::new([AssistantMessage::text("One.")]);
    let limits = agent_web::UserLimits::new().requests(1, Duration::from_secs(60));
    let url = serve(A2aServer::new(Arc::new(Agent::new(model.clone()))).limits(limits)).await;
    let message = |id: &str| json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": "Hi"}]}});
    let first: Value = rpc(&url, "SendMessage", message("m1"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        first["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    let refused = rpc(&url, "SendMessage", message("m2")).await;
    assert_eq!(refused.status(), 429);
    let wait: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=60).contains(&wait), "{wait}");
    assert_eq!(model.requests().len(), 1);
}

/// The tokens a task's run uses count against its caller's budget: the message that crosses it
/// is answered, the next is refused.
async fn the_tokens_a_task_uses_count_against_its_caller() {
    let reply = |text: &str, tokens: u64| {
        agent_core::ChatResponse::new(AssistantMessage::text(text))
            .with_usage(agent_core::Usage::new(tokens / 2, tokens - tokens / 2))
    };
    let model = ScriptedModel::new([reply("Long.", 150), reply("Short.", 10)]);
    let limits = agent_web::UserLimits::new().tokens(100, Duration::from_secs(60));
    let url = serve(A2aServer::new(Arc::new(Agent::new(model.clone()))).limits(limits)).await;
    let message = |id: &str| json!({"message": {"messageId": id, "role": "ROLE_USER", "parts": [{"text": "Tell me"}]}});
    let crossed: Value = rpc(&url, "SendMessage", message("m1"))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        crossed["result"]["task"]["status"]["state"],
        "TASK_STATE_COMPLETED"
    );
    assert_eq!(rpc(&url, "SendMessage", message("m2")).await.status(), 429);
    assert_eq!(model.requests().len(), 1);
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "a_typed_agents_value_is_a_data_artifact",
            a_typed_agents_value_is_a_data_artifact,
        ),
        Test::tokio(
            "a_tools_parts_are_an_artifact",
            a_tools_parts_are_an_artifact,
        ),
        Test::tokio(
            "a_client_side_tool_is_answered_in_its_task",
            a_client_side_tool_is_answered_in_its_task,
        ),
        Test::tokio(
            "a_task_at_work_is_cancelled_and_its_readers_see_it_end",
            a_task_at_work_is_cancelled_and_its_readers_see_it_end,
        ),
        Test::tokio(
            "a_user_over_their_limits_waits",
            a_user_over_their_limits_waits,
        ),
        Test::tokio(
            "the_tokens_a_task_uses_count_against_its_caller",
            the_tokens_a_task_uses_count_against_its_caller,
        ),
    ])
}
