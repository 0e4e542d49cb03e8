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
use tests::{screenshot, wipe};

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

/// A JSON-RPC call to `url` in A2A 1.0: its whole reply.
async fn rpc(url: &str, method: &str, params: Value) -> reqwest::Response {
    rpc_as(url, Some("1.0"), method, params).await
}

/// A JSON-RPC call to `url` with the header `A2A-Version: version` (none with `None`).
async fn rpc_as(
    url: &str,
    version: Option<&str>,
    method: &str,
    params: Value,
) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .json(&json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}));
    if let Some(version) = version {
        request = request.header("a2a-version", version);
    }
    request.send().await.unwrap()
}

/// A JSON-RPC call's reply, read as JSON.
async fn call(url: &str, method: &str, params: Value) -> Value {
    rpc(url, method, params).await.json().await.unwrap()
}

/// The params of `SendMessage` for the user's `text` in context `context_id`, or in task
/// `task_id` with `data` (decisions, say) as a data part.
fn message(
    text: &str,
    context_id: Option<&str>,
    task_id: Option<&str>,
    data: Option<Value>,
) -> Value {
    let mut parts = vec![json!({"text": text})];
    parts.extend(data.map(|data| json!({"data": data})));
    let mut message = json!({"messageId": agent_core::RunId::new().to_string(),
        "role": "ROLE_USER", "parts": parts});
    if let Some(context_id) = context_id {
        message["contextId"] = json!(context_id);
    }
    if let Some(task_id) = task_id {
        message["taskId"] = json!(task_id);
    }
    json!({ "message": message })
}

/// The grants of the calls a task's status message says it waits on, in order.
fn grants(task: &Value) -> Vec<Value> {
    let parts = task["status"]["message"]["parts"].as_array().unwrap();
    let waiting = parts
        .iter()
        .find_map(|part| part["data"]["waiting"].as_array());
    waiting
        .unwrap()
        .iter()
        .map(|call| call["grant"].clone())
        .collect()
}

/// A call to `wipe` the folder `folder`.
fn wipe_call(id: &str, folder: &str) -> ToolCall {
    ToolCall::new(id, "wipe", json!({ "folder": folder }).to_string())
}

/// Two tasks of one context each own their pause. A new task lets the one that waited go: its
/// calls are answered as interrupted and it ends `canceled`, saying why. The stale task's answer
/// then reaches nobody's run, and its cancel leaves the other task waiting, still answerable.
async fn each_task_owns_its_pause() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([wipe_call("c1", "/a")]),
        AssistantMessage::tool_calls([wipe_call("c2", "/b")]),
        AssistantMessage::text("Wiped /b."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let first = call(
        &url,
        "SendMessage",
        message("Wipe /a", Some("ctx"), None, None),
    )
    .await;
    let first = &first["result"]["task"];
    assert_eq!(
        first["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{first}"
    );
    let second = call(
        &url,
        "SendMessage",
        message("Wipe /b", Some("ctx"), None, None),
    )
    .await;
    let second = &second["result"]["task"];
    assert_eq!(
        second["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{second}"
    );
    let (first_id, second_id) = (
        first["id"].as_str().unwrap(),
        second["id"].as_str().unwrap(),
    );

    // The first task is over: a plain answer to it runs nothing.
    let stale = call(
        &url,
        "SendMessage",
        message("No.", None, Some(first_id), None),
    )
    .await;
    assert!(stale["error"]["message"].as_str().is_some(), "{stale}");
    assert_eq!(model.requests().len(), 2, "nothing ran");
    let ended = call(&url, "GetTask", json!({"id": first_id})).await;
    assert_eq!(
        ended["result"]["status"]["state"], "TASK_STATE_CANCELED",
        "{ended}"
    );
    let why = ended["result"]["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert!(why.contains(second_id), "{why}");
    // Its cancel does not reach the second task's pause.
    let cancel = call(&url, "CancelTask", json!({"id": first_id})).await;
    assert_eq!(cancel["error"]["code"], -32002, "{cancel}");
    let waiting = call(&url, "GetTask", json!({"id": second_id})).await;
    assert_eq!(
        waiting["result"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );

    let decisions = json!({"decisions": [{"grant": grants(second)[0], "approved": true}]});
    let done = call(
        &url,
        "SendMessage",
        message("Yes.", None, Some(second_id), Some(decisions)),
    )
    .await;
    let done = &done["result"]["task"];
    assert_eq!(done["status"]["state"], "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(done["status"]["message"]["parts"][0]["text"], "Wiped /b.");
    assert!(matches!(model.requests()[2].messages.last(),
        Some(CoreMessage::Tool(result)) if result.content == "wiped /b"));
}

/// An answer to only some of the calls a task waits on is refused with a JSON-RPC error, as a
/// forged grant is: nothing runs, the task stays as it was (waiting, its history without the
/// refused message), and the full answer afterwards is taken.
async fn a_partial_answer_is_refused_and_the_task_still_waits() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([wipe_call("c1", "/a"), wipe_call("c2", "/b")]),
        AssistantMessage::text("Both wiped."),
    ]);
    let agent: Agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let waiting = call(&url, "SendMessage", message("Wipe both", None, None, None)).await;
    let waiting = &waiting["result"]["task"];
    assert_eq!(
        waiting["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{waiting}"
    );
    let id = waiting["id"].as_str().unwrap();
    let granted = grants(waiting);
    assert_eq!(granted.len(), 2);

    let some = json!({"decisions": [{"grant": granted[0], "approved": true}]});
    let refused = call(
        &url,
        "SendMessage",
        message("Only /a", None, Some(id), Some(some)),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let why = refused["error"]["message"].as_str().unwrap();
    assert!(why.contains("`c2`"), "{why}");
    assert_eq!(model.requests().len(), 1, "nothing ran");
    let kept = call(&url, "GetTask", json!({"id": id})).await;
    assert_eq!(
        kept["result"]["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{kept}"
    );
    assert_eq!(kept["result"]["history"], waiting["history"]);

    let all = json!({"decisions": [
        {"grant": granted[1], "approved": false, "reason": "keep /b"},
        {"grant": granted[0], "approved": true},
    ]});
    let done = call(
        &url,
        "SendMessage",
        message("Both", None, Some(id), Some(all)),
    )
    .await;
    assert_eq!(
        done["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    let results: Vec<String> = (model.requests()[1].messages.iter())
        .filter_map(|message| match message {
            CoreMessage::Tool(result) => Some(result.content.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert_eq!(results[0], "wiped /a");
    assert!(results[1].contains("keep /b"), "{results:?}");
}

/// A request without `A2A-Version`, or with an empty one, asks for A2A 0.3 (the spec's default):
/// this 1.0 server refuses it, and any version but 1.0, with VersionNotSupported (`-32009`),
/// saying which header to send. 1.0 is served, with or without a patch number.
async fn a_request_in_another_version_is_refused() {
    let model = ScriptedModel::new([
        AssistantMessage::text("One."),
        AssistantMessage::text("Two."),
    ]);
    let url = serve(A2aServer::new(Arc::new(Agent::new(model.clone())))).await;
    for version in [None, Some(""), Some(" "), Some("0.3"), Some("2.0")] {
        let params = message("Hi", None, None, None);
        let reply: Value = rpc_as(&url, version, "SendMessage", params)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(reply["error"]["code"], -32009, "{version:?}: {reply}");
        assert_eq!(reply["error"]["data"][0]["reason"], "VERSION_NOT_SUPPORTED");
        let said = reply["error"]["message"].as_str().unwrap();
        assert!(said.contains("`A2A-Version: 1.0`"), "{said}");
    }
    assert_eq!(model.requests().len(), 0, "nothing ran");
    for version in ["1.0", "1.0.3"] {
        let params = message("Hi", None, None, None);
        let reply: Value = rpc_as(&url, Some(version), "SendMessage", params)
            .await
            .json()
            .await
            .unwrap();
        assert_eq!(
            reply["result"]["task"]["status"]["state"], "TASK_STATE_COMPLETED",
            "{reply}"
        );
    }
}

/// The card may be cached: `Cache-Control` with a `max-age`, an `ETag` that a revalidation
/// (`If-None-Match`) is answered `304` by, and `Last-Modified`.
async fn the_card_can_be_cached() {
    let agent: Agent = Agent::new(ScriptedModel::new(Vec::<AssistantMessage>::new()));
    let url = serve(A2aServer::new(Arc::new(agent))).await;
    let card_url = format!("{url}/.well-known/agent-card.json");
    let http = reqwest::Client::new();
    let card = http.get(&card_url).send().await.unwrap();
    assert_eq!(card.status(), 200);
    let header = |name: &str| {
        card.headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let cache_control = header("cache-control").expect("cache-control");
    assert!(cache_control.contains("max-age="), "{cache_control}");
    let etag = header("etag").expect("an etag");
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let modified = header("last-modified").expect("last-modified");
    assert!(
        modified.ends_with(" GMT") && modified.len() == 29,
        "{modified}"
    );
    let body = card.text().await.unwrap();
    assert!(body.contains("supportedInterfaces"));

    for asked in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".into(),
    ] {
        let again = http
            .get(&card_url)
            .header("if-none-match", &asked)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), 304, "{asked}");
        assert_eq!(again.headers()["etag"], etag.as_str());
        assert!(again.text().await.unwrap().is_empty());
    }
    let changed = http
        .get(&card_url)
        .header("if-none-match", "\"other\"")
        .send()
        .await
        .unwrap();
    assert_eq!(changed.status(), 200);
    assert_eq!(changed.text().await.unwrap(), body);
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

/// Takes a while to look something up.
#[agent_core::tool]
async fn slow_lookup() -> String {
    tokio::time::sleep(Duration::from_millis(450)).await;
    "found".to_owned()
}

/// While a task works a long while (a slow tool), its stream sends the comment `: keep-alive`
/// every so often, between its events, which are sent whole as before; a subscriber's stream too.
async fn a_stream_that_waits_sends_keep_alives() {
    assert_eq!(agent_a2a::DEFAULT_KEEP_ALIVE, Duration::from_secs(15));
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "slow_lookup", "{}")]),
        AssistantMessage::text("Found it."),
    ]);
    let agent: Agent = Agent::new(model).try_tool(slow_lookup {}).unwrap();
    let server = A2aServer::new(Arc::new(agent)).keep_alive(Duration::from_millis(100));
    let url = serve(server).await;
    let mut stream = rpc(
        &url,
        "SendStreamingMessage",
        message("Look it up", None, None, None),
    )
    .await;
    let first = String::from_utf8(stream.chunk().await.unwrap().unwrap().to_vec()).unwrap();
    let first = first
        .lines()
        .next()
        .unwrap()
        .strip_prefix("data: ")
        .unwrap();
    let task: Value = serde_json::from_str(first).unwrap();
    let task_id = task["result"]["task"]["id"].as_str().unwrap().to_owned();
    let subscribed = rpc(&url, "SubscribeToTask", json!({"id": task_id}));
    let (rest, subscribed) = tokio::join!(stream.text(), subscribed);
    for text in [rest.unwrap(), subscribed.text().await.unwrap()] {
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
        let state = &events.last().unwrap()["result"]["statusUpdate"]["status"]["state"];
        assert_eq!(state, "TASK_STATE_COMPLETED", "{text}");
    }
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
        Test::tokio("each_task_owns_its_pause", each_task_owns_its_pause),
        Test::tokio(
            "a_partial_answer_is_refused_and_the_task_still_waits",
            a_partial_answer_is_refused_and_the_task_still_waits,
        ),
        Test::tokio(
            "a_request_in_another_version_is_refused",
            a_request_in_another_version_is_refused,
        ),
        Test::tokio("the_card_can_be_cached", the_card_can_be_cached),
        Test::tokio(
            "a_stream_that_waits_sends_keep_alives",
            a_stream_that_waits_sends_keep_alives,
        ),
    ])
}
