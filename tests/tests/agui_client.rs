//! The AG-UI endpoint as the official client meets it: `@ag-ui/client`'s `HttpAgent`
//! (`agui/agui_session.mjs`) runs against a real `AguiServer` over loopback, and its own checks
//! (`verifyEvents`, the protocol's schemas, with the client's warnings about anything it strips)
//! pass on every stream. Each test checks the messages the client rebuilt from the events, what
//! the scripted model was shown, and what the server's thread keeps.

use std::sync::Arc;
use std::time::Duration;

use agent_agui::AguiServer;
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{Agent, AssistantMessage, Message, ModelError, ToolCall};
use serde_json::{Value, json};
use tests::node::{AG_UI, agui_session};
use tests::peers::Test;
use tests::{get_weather, wipe};

/// Waits long enough to be stopped while it works.
#[agent_core::tool]
async fn slow_report(
    /// What to report on.
    topic: String,
) -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    format!("a report on {topic}")
}

/// Where the person is: the client knows.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Nothing {}

/// Serves `agent` with `store`; the endpoint's URL.
async fn serve(agent: Agent, store: Arc<MemorySessions>) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    tokio::spawn(
        AguiServer::new(Arc::new(agent))
            .sessions(store)
            .serve(listener),
    );
    url
}

/// Drives the client through `steps` on thread `thread`, with its warnings on; checks each step
/// passed the client's own checks and warned of nothing it had to strip.
async fn session(url: &str, thread: &str, steps: Value) -> Value {
    let script = json!({
        "threadId": thread,
        "suppressTransformationWarnings": false,
        "steps": steps
    });
    let session = agui_session(url, &script).await;
    for step in session["steps"].as_array().unwrap() {
        assert_eq!(step["error"], Value::Null, "{step:#}");
        assert_eq!(step["warnings"], json!([]), "{step:#}");
    }
    session
}

/// The type of the last event of step `index`.
fn ended_with(session: &Value, index: usize) -> &Value {
    let events = session["steps"][index]["events"].as_array().unwrap();
    events.last().unwrap()
}

/// The client's messages, one line each: the role, then the text, calls and results.
fn lines(messages: &Value) -> Vec<String> {
    let line = |message: &Value| {
        let role = message["role"].as_str().unwrap();
        let mut pieces: Vec<String> = Vec::new();
        if let Some(text) = message["content"].as_str().filter(|text| !text.is_empty()) {
            pieces.push(text.to_owned());
        }
        for call in message["toolCalls"].as_array().into_iter().flatten() {
            pieces.push(format!(
                "calls {}",
                call["function"]["name"].as_str().unwrap()
            ));
        }
        format!("{role}: {}", pieces.join(" | "))
    };
    messages.as_array().unwrap().iter().map(line).collect()
}

/// The kept thread's messages, one line each, as [`lines`] draws the client's.
async fn kept(store: &MemorySessions, thread: &str) -> Vec<String> {
    let conversation = store.load(thread).await.unwrap();
    assert!(conversation.paused.is_none(), "{:?}", conversation.paused);
    (conversation.messages.iter())
        .filter_map(|message| match message {
            Message::System { .. } => None,
            Message::User { content, .. } => Some(format!("user: {content}")),
            Message::Assistant(reply) => {
                let mut pieces: Vec<String> = Vec::new();
                if !reply.content.is_empty() {
                    pieces.push(reply.content.clone());
                }
                pieces.extend(
                    reply
                        .tool_calls
                        .iter()
                        .map(|call| format!("calls {}", call.name)),
                );
                Some(format!("assistant: {}", pieces.join(" | ")))
            }
            Message::Tool(result) => Some(format!("tool: {}", result.content)),
            other => Some(format!("{other:?}")),
        })
        .collect()
}

/// A plain answer, then a tool call and its answer: the client's messages are the thread's.
async fn answers_and_tool_calls_rebuild_the_thread_in_the_client() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Paris"}"#,
        )])
        .with_text("Let me look."),
        AssistantMessage::text("Take an umbrella."),
    ]);
    let store = Arc::new(MemorySessions::new());
    let agent = Agent::new(model.clone()).try_tool(get_weather {}).unwrap();
    let url = serve(agent, store.clone()).await;
    let session = session(
        &url,
        "t",
        json!([{"send": "Hi"}, {"send": "Umbrella in Paris?"}]),
    )
    .await;
    assert_eq!(ended_with(&session, 0)["type"], "RUN_FINISHED");
    assert_eq!(ended_with(&session, 1)["outcome"]["type"], "success");
    let expected = [
        "user: Hi",
        "assistant: Hello!",
        "user: Umbrella in Paris?",
        "assistant: Let me look. | calls get_weather",
        "tool: ",
        "assistant: Take an umbrella.",
    ];
    let client = lines(&session["messages"]);
    assert_eq!(client.len(), expected.len(), "{client:#?}");
    for (line, expected) in client.iter().zip(expected) {
        assert!(line.starts_with(expected), "{line} / {expected}");
    }
    let tool = &session["messages"][4];
    assert_eq!(tool["toolCallId"], "call_1");
    assert!(tool["content"].as_str().unwrap().contains("Paris"));
    // The thread keeps the same conversation, and the model saw the first turn in the second.
    assert_eq!(kept(&store, "t").await.len(), 6);
    assert_eq!(model.requests()[1].messages.len(), 4);
}

/// An approval approved, then one denied: each run ends with its interrupt, which the client
/// keeps as pending; the next run answers it with `resume`, and the call runs (or is told denied)
/// in the message that asked.
async fn approvals_are_interrupts_answered_with_resume() {
    let wipe_call = |id: &str| {
        AssistantMessage::tool_calls([ToolCall::new(id, "wipe", r#"{"folder":"/tmp"}"#)])
    };
    let model = ScriptedModel::new([
        wipe_call("call_a"),
        AssistantMessage::text("Wiped."),
        wipe_call("call_b"),
        AssistantMessage::text("Left alone."),
    ]);
    let store = Arc::new(MemorySessions::new());
    let agent = Agent::new(model.clone())
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals();
    let url = serve(agent, store.clone()).await;
    let session = session(
        &url,
        "t",
        json!([
            {"send": "Wipe /tmp"},
            {"resume": [{"toolCallId": "call_a", "status": "resolved", "payload": {"approved": true}}]},
            {"send": "Again"},
            {"resume": [{"toolCallId": "call_b", "status": "resolved",
                         "payload": {"approved": false, "reason": "keep it"}}]}
        ]),
    )
    .await;
    let pending = &session["steps"][0]["pendingInterrupts"];
    assert_eq!(pending.as_array().unwrap().len(), 1);
    assert_eq!(pending[0]["toolCallId"], "call_a");
    assert_eq!(pending[0]["reason"], "tool_approval");
    assert_eq!(session["steps"][1]["pendingInterrupts"], json!([]));
    assert_eq!(ended_with(&session, 1)["outcome"]["type"], "success");
    let messages = &session["messages"];
    assert_eq!(
        lines(messages),
        [
            "user: Wipe /tmp",
            "assistant: calls wipe",
            "tool: wiped /tmp",
            "assistant: Wiped.",
            "user: Again",
            "assistant: calls wipe",
            lines(messages)[6].as_str(),
            "assistant: Left alone.",
        ]
    );
    let denied = messages[6]["content"].as_str().unwrap();
    assert!(
        denied.contains("keep it") && !denied.contains("wiped"),
        "{denied}"
    );
    assert_eq!(lines(messages)[1..], kept(&store, "t").await[1..]);
}

/// A tool the client runs: the run ends with its interrupt, and the result comes back as the
/// payload of the answer.
async fn a_client_side_tool_is_answered_through_resume() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_l", "where_am_i", "{}")]),
        AssistantMessage::text("You are in Oslo."),
    ]);
    let store = Arc::new(MemorySessions::new());
    let agent = Agent::new(model.clone())
        .try_tool(agent_core::ExternalTool::new::<Nothing>(
            "where_am_i",
            "Where the user is.",
        ))
        .unwrap();
    let url = serve(agent, store.clone()).await;
    let session = session(
        &url,
        "t",
        json!([
            {"send": "Where am I?"},
            {"resume": [{"toolCallId": "call_l", "status": "resolved", "payload": {"city": "Oslo"}}]}
        ]),
    )
    .await;
    assert_eq!(
        session["steps"][0]["pendingInterrupts"][0]["reason"],
        "tool_result"
    );
    assert_eq!(
        lines(&session["messages"]),
        [
            "user: Where am I?",
            "assistant: calls where_am_i",
            r#"tool: {"city":"Oslo"}"#,
            "assistant: You are in Oslo."
        ]
    );
    let shown = &model.requests()[1].messages;
    assert!(
        matches!(shown.last(), Some(Message::Tool(result)) if result.content == r#"{"city":"Oslo"}"#)
    );
}

/// A model that fails: the run ends with `RUN_ERROR`, and the thread goes on after it.
async fn a_failed_run_is_a_run_error_the_client_reads() {
    let model = ScriptedModel::from_steps([
        ScriptStep::error(|| ModelError::Authentication {
            status: 401,
            message: "bad key".into(),
        }),
        ScriptStep::reply(AssistantMessage::text("Back again.")),
    ]);
    let store = Arc::new(MemorySessions::new());
    let url = serve(Agent::new(model), store).await;
    let session = session(&url, "t", json!([{"send": "Hi"}, {"send": "Hi?"}])).await;
    let error = ended_with(&session, 0);
    assert_eq!(error["type"], "RUN_ERROR");
    assert_eq!(error["code"], "model_error");
    assert!(error["message"].as_str().unwrap().contains("bad key"));
    assert_eq!(ended_with(&session, 1)["outcome"]["type"], "success");
    assert_eq!(
        lines(&session["messages"]).last().unwrap(),
        "assistant: Back again."
    );
}

/// The client stops a run while a tool works (`abortRun`): the server cancels it, the thread
/// keeps the call answered as interrupted, and the next message is answered.
async fn a_run_the_client_stops_is_cancelled_and_kept() {
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_s",
            "slow_report",
            r#"{"topic":"rain"}"#,
        )]),
        AssistantMessage::text("Stopped, as you asked."),
    ]);
    let store = Arc::new(MemorySessions::new());
    let agent = Agent::new(model.clone()).try_tool(slow_report {}).unwrap();
    let url = serve(agent, store.clone()).await;
    let started = std::time::Instant::now();
    let session = session(
        &url,
        "t",
        json!([{"abortAfterEvent": "TOOL_CALL_END", "send": "Report on rain"}, {"send": "Well?"}]),
    )
    .await;
    assert_eq!(session["steps"][0]["aborted"], true);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the tool was not waited for"
    );
    assert_eq!(ended_with(&session, 1)["outcome"]["type"], "success");
    let thread = kept(&store, "t").await;
    assert_eq!(thread.len(), 5, "{thread:#?}");
    assert_eq!(thread[1], "assistant: calls slow_report");
    assert!(thread[2].contains("interrupted"), "{}", thread[2]);
    assert_eq!(thread[4], "assistant: Stopped, as you asked.");
    // The model read the call answered before the next question.
    let shown = &model.requests()[1].messages;
    assert!(
        matches!(&shown[shown.len() - 2], Message::Tool(result) if result.content.contains("interrupted"))
    );
}

/// The model's reasoning streams as reasoning messages, and an agent called as a tool streams in
/// a lane of its own (`SUBAGENT_STARTED`, its steps, calls and answer attributed to it,
/// `SUBAGENT_FINISHED` before the call's result); the client's checks pass and it keeps the
/// child's messages apart from the run's.
async fn reasoning_and_a_sub_agents_work_stream_in_lanes() {
    let child_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c1", "get_weather", r#"{"city":"Paris"}"#)]),
        AssistantMessage::text("Light rain in Paris."),
    ]);
    let research = Agent::new(child_model)
        .named("research")
        .try_tool(get_weather {})
        .unwrap();
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_r",
            "research",
            r#"{"input":"Rain in Paris?"}"#,
        )])
        .with_reasoning(agent_core::Reasoning::new(
            "scripted",
            "The research agent knows.",
        )),
        AssistantMessage::text("Take an umbrella."),
    ]);
    let agent = Agent::new(model)
        .named("triage")
        .try_tool(research.as_tool("research", "Research a question."))
        .unwrap();
    let store = Arc::new(MemorySessions::new());
    let url = serve(agent, store).await;
    let session = session(&url, "t", json!([{"send": "Umbrella in Paris?"}])).await;
    let events = session["steps"][0]["events"].as_array().unwrap();
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    let at = |kind: &str| kinds.iter().position(|seen| *seen == kind).unwrap();
    assert!(at("REASONING_MESSAGE_CONTENT") < at("TOOL_CALL_START"));
    let started = &events[at("SUBAGENT_STARTED")];
    assert_eq!(started["name"], "triage/research");
    assert_eq!(started["parentToolCallId"], "call_r");
    let lane = started["subagentRunId"].clone();
    let in_lane: Vec<&str> = (events.iter())
        .filter(|event| event["subagentRunId"] == lane && event["type"] != "SUBAGENT_STARTED")
        .map(|event| event["type"].as_str().unwrap())
        .collect();
    assert!(
        in_lane.contains(&"TOOL_CALL_RESULT") && in_lane.contains(&"TEXT_MESSAGE_CONTENT"),
        "{in_lane:?}"
    );
    let result = (events.iter())
        .position(|event| event["type"] == "TOOL_CALL_RESULT" && event["toolCallId"] == "call_r")
        .unwrap();
    assert!(at("SUBAGENT_FINISHED") < result);
    assert_eq!(events[result]["content"], "Light rain in Paris.");
    let messages = session["messages"].as_array().unwrap();
    let reasoning = messages
        .iter()
        .find(|message| message["role"] == "reasoning");
    assert_eq!(reasoning.unwrap()["content"], "The research agent knows.");
    let own: Vec<&Value> = (messages.iter())
        .filter(|message| message.get("subagentRunId").is_none() && message["role"] != "reasoning")
        .collect();
    assert_eq!(
        lines(&Value::Array(own.into_iter().cloned().collect())),
        [
            "user: Umbrella in Paris?",
            "assistant: calls research",
            "tool: Light rain in Paris.",
            "assistant: Take an umbrella."
        ]
    );
    assert!(
        messages
            .iter()
            .any(|message| message["subagentRunId"] == lane
                && message["content"] == "Light rain in Paris."),
        "{messages:#?}"
    );
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "answers_and_tool_calls_rebuild_the_thread_in_the_client",
            answers_and_tool_calls_rebuild_the_thread_in_the_client,
        )
        .needs(&AG_UI),
        Test::tokio(
            "approvals_are_interrupts_answered_with_resume",
            approvals_are_interrupts_answered_with_resume,
        )
        .needs(&AG_UI),
        Test::tokio(
            "a_client_side_tool_is_answered_through_resume",
            a_client_side_tool_is_answered_through_resume,
        )
        .needs(&AG_UI),
        Test::tokio(
            "a_failed_run_is_a_run_error_the_client_reads",
            a_failed_run_is_a_run_error_the_client_reads,
        )
        .needs(&AG_UI),
        Test::tokio(
            "reasoning_and_a_sub_agents_work_stream_in_lanes",
            reasoning_and_a_sub_agents_work_stream_in_lanes,
        )
        .needs(&AG_UI),
        Test::tokio(
            "a_run_the_client_stops_is_cancelled_and_kept",
            a_run_the_client_stops_is_cancelled_and_kept,
        )
        .needs(&AG_UI),
    ])
}
