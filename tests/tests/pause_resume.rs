//! Runs that wait for a person or for the caller: a deferred approval or an external tool ends the
//! run paused once the reply's other calls have run; the saved state goes to a file, and a fresh
//! agent resumes it with a decision per waiting call, under the limits already used. Decisions
//! that do not fit are refused before anything runs.

use std::sync::{Arc, Mutex};

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Decision, ExternalTool, Message, PausedRun, ResumeError, RunError,
    RunEvent, StopReason, ToolCall, Usage, Waiting, tool,
};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;

/// The paths `delete_file` deleted, over all the tests of this file (they run at once).
static DELETED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn deleted(path: &str) -> bool {
    DELETED
        .lock()
        .unwrap()
        .iter()
        .any(|deleted| deleted == path)
}

/// Deletes a file.
#[tool(requires_approval, destructive)]
fn delete_file(
    /// The file's path.
    path: String,
) -> String {
    DELETED.lock().unwrap().push(path.clone());
    format!("deleted {path}")
}

/// Says how big a file is.
#[tool(read_only)]
fn file_size(
    /// The file's path.
    path: String,
) -> String {
    format!("{path}: 12 MB")
}

/// The model: asks for a size and a deletion in one reply, then answers.
fn cleanup_model() -> Arc<ScriptedModel> {
    cleanup_model_for("old.log")
}

/// [`cleanup_model`] for the file `path`.
fn cleanup_model_for(path: &str) -> Arc<ScriptedModel> {
    let arguments = serde_json::json!({ "path": path }).to_string();
    let first = AssistantMessage::tool_calls([
        ToolCall::new("c_size", "file_size", arguments.clone()),
        ToolCall::new("c_delete", "delete_file", arguments),
    ]);
    Arc::new(ScriptedModel::from_steps([
        agent_core::testing::ScriptStep::reply(
            agent_core::ChatResponse::new(first).with_usage(Usage::new(100, 20)),
        ),
        agent_core::testing::ScriptStep::reply(
            agent_core::ChatResponse::new(AssistantMessage::text("Cleaned up."))
                .with_usage(Usage::new(150, 5)),
        ),
    ]))
}

fn agent(model: Arc<ScriptedModel>) -> Agent {
    Agent::new(model)
        .try_tools([delete_file {}])
        .unwrap()
        .try_tool(file_size {})
        .unwrap()
        .defer_approvals()
}

fn results_of(messages: &[Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some((
                result.tool_call_id.clone(),
                result.content.clone(),
                result.is_error,
            )),
            _ => None,
        })
        .collect()
}

/// A file under the target directory for this test's saved state.
fn state_file(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("paused_runs");
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{name}-{}.json", std::process::id()))
}

async fn paused_run(model: Arc<ScriptedModel>, name: &str) -> std::path::PathBuf {
    paused_run_on(model, name, "old.log").await
}

/// [`paused_run`] of a model asking about `file`.
async fn paused_run_on(model: Arc<ScriptedModel>, name: &str, file: &str) -> std::path::PathBuf {
    let first = agent(model)
        .run("Delete old.log if it is big")
        .await
        .unwrap();
    assert_eq!(first.stop_reason, StopReason::Paused);
    assert_eq!(first.text, "Waiting for a decision before going on.");
    let paused = first.paused.expect("a paused run");
    // The other call of the reply ran; the deletion waits. The transcript ends at the reply.
    assert_eq!(paused.messages(), &first.messages[..]);
    assert!(matches!(first.messages.last(), Some(Message::Assistant(_))));
    let finished: Vec<_> = paused
        .finished()
        .iter()
        .map(|result| (result.tool_call_id.as_str(), result.content.as_str()))
        .collect();
    assert_eq!(finished, [("c_size", format!("{file}: 12 MB").as_str())]);
    assert_eq!(paused.pending().len(), 1);
    assert_eq!(paused.pending()[0].call.id, "c_delete");
    assert_eq!(paused.pending()[0].waits_for, Waiting::Approval);
    let path = state_file(name);
    std::fs::write(&path, paused.to_json()).unwrap();
    path
}

#[tokio::test]
async fn an_approved_call_runs_after_a_restart_and_the_run_goes_on() {
    let model = cleanup_model();
    let path = paused_run(Arc::clone(&model), "approved").await;

    // A fresh agent, as after a restart, from the file.
    let paused = PausedRun::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let done = agent(Arc::clone(&model))
        .resume(paused, [("c_delete", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.text, "Cleaned up.");
    assert_eq!(done.stop_reason, StopReason::Finished);
    assert!(deleted("old.log"));
    // Steps and tokens of both halves count.
    assert_eq!(done.steps, 2);
    assert_eq!(done.usage.input_tokens, 250);
    assert_eq!(
        results_of(&done.messages),
        [
            ("c_size".into(), "old.log: 12 MB".into(), false),
            ("c_delete".into(), "deleted old.log".into(), false),
        ]
    );
    // The model's second request has both results, in call order, after its reply.
    let second = &model.requests()[1].messages;
    assert!(matches!(&second[2], Message::Assistant(reply) if reply.tool_calls.len() == 2));
    assert_eq!(results_of(&second[3..]).len(), 2);
}

#[tokio::test]
async fn edited_arguments_run_and_a_denial_reaches_the_model() {
    let model = cleanup_model();
    let path = paused_run(Arc::clone(&model), "edited").await;
    let saved = std::fs::read_to_string(&path).unwrap();
    let edited = agent(cleanup_model())
        .resume(
            PausedRun::from_json(&saved).unwrap(),
            [(
                "c_delete",
                Decision::ApproveWith {
                    arguments: r#"{"path":"old.log.1"}"#.into(),
                },
            )],
        )
        .await
        .unwrap();
    assert_eq!(results_of(&edited.messages)[1].1, "deleted old.log.1");

    let denied = agent(cleanup_model())
        .resume(
            PausedRun::from_json(&saved).unwrap(),
            [("c_delete", Decision::deny("keep it until Friday"))],
        )
        .await
        .unwrap();
    assert_eq!(
        results_of(&denied.messages)[1],
        (
            "c_delete".into(),
            "Error: the call was not run: the user did not approve this call: keep it until Friday"
                .into(),
            true
        )
    );
}

/// Where the user is. Only its schema is used: the caller parses the arguments.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code)]
struct Locate {
    /// "city" or "street"
    precision: String,
}

#[tokio::test]
async fn an_external_tool_waits_for_the_callers_result() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c_loc", "locate", r#"{"precision":"city"}"#)]),
        AssistantMessage::text("You are in Berlin."),
    ]));
    let agent = Agent::new(Arc::clone(&model))
        .try_tool(ExternalTool::new::<Locate>(
            "locate",
            "Asks the browser where the user is.",
        ))
        .unwrap();
    let first = agent.run("Where am I?").await.unwrap();
    assert_eq!(first.stop_reason, StopReason::Paused);
    let paused = first.paused.unwrap();
    assert_eq!(paused.pending()[0].waits_for, Waiting::Result);
    assert_eq!(
        paused.pending()[0].call.arguments,
        r#"{"precision":"city"}"#
    );

    // An approval does not answer a call that waits for a result.
    let wrong = agent
        .resume(paused.clone(), [("c_loc", Decision::Approve)])
        .await
        .unwrap_err();
    assert!(matches!(
        wrong,
        RunError::Resume {
            source: ResumeError::WrongDecision { .. },
            ..
        }
    ));
    let done = agent
        .resume(paused, [("c_loc", Decision::result("Berlin, Germany"))])
        .await
        .unwrap();
    assert_eq!(done.text, "You are in Berlin.");
    assert_eq!(
        results_of(&done.messages),
        [("c_loc".into(), "Berlin, Germany".into(), false)]
    );
}

#[tokio::test]
async fn bad_decisions_and_bad_states_are_refused_before_anything_runs() {
    let model = cleanup_model_for("refused.log");
    let path = paused_run_on(Arc::clone(&model), "refused", "refused.log").await;
    let saved = std::fs::read_to_string(&path).unwrap();
    let load = || PausedRun::from_json(&saved).unwrap();
    let requests = model.requests().len();

    let refusal = |result: Result<agent_core::RunOutput, RunError>| match result {
        Err(RunError::Resume {
            source, messages, ..
        }) => {
            assert!(!messages.is_empty());
            source
        }
        other => panic!("expected a refusal, got {other:?}"),
    };
    let agent = agent(Arc::clone(&model));
    assert!(matches!(
        refusal(agent.resume(load(), [("c_other", Decision::Approve)]).await),
        ResumeError::UnknownCall { id, waiting } if id == "c_other" && waiting == ["c_delete"]
    ));
    assert!(matches!(
        refusal(agent.resume(load(), Vec::<(String, Decision)>::new()).await),
        ResumeError::MissingDecision { id, tool } if id == "c_delete" && tool == "delete_file"
    ));
    assert!(matches!(
        refusal(
            agent
                .resume(
                    load(),
                    [
                        ("c_delete", Decision::Approve),
                        ("c_delete", Decision::deny("no"))
                    ]
                )
                .await
        ),
        ResumeError::TwoDecisions { .. }
    ));
    assert!(matches!(
        refusal(
            agent
                .resume(load(), [("c_delete", Decision::result("x"))])
                .await
        ),
        ResumeError::WrongDecision {
            waits_for: Waiting::Approval,
            ..
        }
    ));
    // A fresh agent that no longer has the tool.
    let without = Agent::new(Arc::clone(&model))
        .try_tool(file_size {})
        .unwrap();
    assert!(matches!(
        refusal(without.resume(load(), [("c_delete", Decision::Approve)]).await),
        ResumeError::UnknownTool { tool, .. } if tool == "delete_file"
    ));
    // Nothing ran and the model was not asked again.
    assert!(!deleted("refused.log"));
    assert_eq!(model.requests().len(), requests);

    // A state of another version, and one edited until it no longer parses.
    let other_version = saved.replacen("\"version\":1", "\"version\":7", 1);
    assert_eq!(
        PausedRun::from_json(&other_version).unwrap_err(),
        ResumeError::Version {
            found: 7,
            supported: 1
        }
    );
    let broken = saved.replacen("\"tool_calls\":", "\"tool_calls\":7,\"x\":", 1);
    let ResumeError::Malformed { message } = PausedRun::from_json(&broken).unwrap_err() else {
        panic!("expected a malformed state");
    };
    assert!(
        message.starts_with("messages[2]: invalid type"),
        "{message}"
    );
    assert!(matches!(
        PausedRun::from_json("{\"version\":1,").unwrap_err(),
        ResumeError::Malformed { .. }
    ));
    // An edit that loses a call: it would stay unanswered.
    let lost = saved.replacen("\"finished\":[{", "\"finished\":[],\"x\":[{", 1);
    let ResumeError::Malformed { message } = PausedRun::from_json(&lost).unwrap_err() else {
        panic!("expected a refused state");
    };
    assert!(
        message.contains("are not the waiting and finished ones"),
        "{message}"
    );
}

#[tokio::test]
async fn the_limits_already_used_still_count() {
    let model = cleanup_model();
    // One step allowed: the run paused in it, so the resumed run is at its limit.
    let agent = agent(Arc::clone(&model)).max_steps(1);
    let first = agent.run("Delete old.log").await.unwrap();
    let done = agent
        .resume(first.paused.unwrap(), [("c_delete", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.stop_reason, StopReason::StepLimit { limit: 1 });
    assert_eq!(done.steps, 1);
    assert_eq!(model.requests().len(), 1, "no model call past the limit");
    assert_eq!(results_of(&done.messages).len(), 2, "every call answered");
}

#[tokio::test]
async fn a_streamed_run_pauses_and_a_typed_run_cannot_wait() {
    let streamed = agent(cleanup_model());
    let events: Vec<RunEvent> = streamed.run("Delete old.log").stream().collect().await;
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{events:?}");
    };
    assert_eq!(output.stop_reason, StopReason::Paused);
    let results: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolResult(result) => Some(result.tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["c_size"]);

    #[derive(Deserialize, JsonSchema)]
    struct Answer {
        done: bool,
    }
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c_delete", "delete_file", r#"{"path":"a"}"#)]),
        AssistantMessage::tool_calls([ToolCall::new(
            "c_answer",
            "final_result",
            r#"{"done":false}"#,
        )]),
    ]));
    let typed = agent(Arc::clone(&model))
        .run("Delete a")
        .output::<Answer>()
        .await
        .unwrap();
    assert!(!typed.value.done);
    assert_eq!(
        results_of(&typed.run.messages)[0].1,
        "Error: the call was not run: this call must wait for a person or for the caller, and \
         this run cannot wait"
    );
}

#[tokio::test]
async fn a_reply_over_the_tool_call_limit_still_ends_the_run_once_resumed() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("c_delete", "delete_file", r#"{"path":"limit.log"}"#),
            ToolCall::new("c_size", "file_size", r#"{"path":"limit.log"}"#),
        ]),
        AssistantMessage::text("never asked for"),
    ]));
    let agent = agent(Arc::clone(&model)).max_tool_calls(1);
    let first = agent.run("Delete limit.log").await.unwrap();
    let paused = first.paused.unwrap();
    // The call past the limit was answered as refused; the one within it waits.
    assert!(
        paused.finished()[0]
            .content
            .contains("limit of 1 tool calls")
    );
    let done = agent
        .resume(paused, [("c_delete", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(done.stop_reason, StopReason::ToolCallLimit { limit: 1 });
    assert_eq!(model.requests().len(), 1, "no model call after the limit");
    assert_eq!(
        results_of(&done.messages)
            .iter()
            .map(|(id, _, _)| id.as_str())
            .collect::<Vec<_>>(),
        ["c_delete", "c_size"]
    );
}

#[tokio::test]
async fn a_resumed_run_streams_and_decisions_come_as_json() {
    let model = cleanup_model_for("stream.log");
    let agent = agent(Arc::clone(&model));
    let first = agent.run("Delete stream.log").await.unwrap();
    // A decision as a web page would send it.
    let decision: Decision = serde_json::from_str(r#"{"decision":"approve"}"#).unwrap();
    assert_eq!(decision, Decision::Approve);
    assert_eq!(
        serde_json::to_value(Decision::deny("no")).unwrap(),
        serde_json::json!({"decision": "deny", "reason": "no"})
    );
    let events: Vec<RunEvent> = agent
        .resume(first.paused.unwrap(), [("c_delete", decision)])
        .stream()
        .collect()
        .await;
    let results: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolResult(result) => Some(result.content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(results, ["deleted stream.log"]);
    assert!(matches!(
        events.last(),
        Some(RunEvent::Finished(Ok(output))) if output.text == "Cleaned up."
    ));
}

#[tokio::test]
async fn an_external_result_can_carry_a_screenshot() {
    let model = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("c_shot", "screenshot", "{}")]),
        AssistantMessage::text("I see the page."),
    ]));
    let agent = Agent::new(Arc::clone(&model))
        .try_tool(ExternalTool::with_parameters(
            "screenshot",
            "Takes a screenshot in the user's browser.",
            serde_json::json!({"type": "object", "properties": {}}),
        ))
        .unwrap();
    let first = agent.run("What is on my screen?").await.unwrap();
    let shot = agent_core::Part::image("image/png", [0x89, b'P', b'N', b'G']);
    let decision = Decision::Result {
        content: "The screenshot:".into(),
        parts: vec![shot.clone()],
        is_error: false,
    };
    let done = agent
        .resume(first.paused.unwrap(), [("c_shot", decision)])
        .await
        .unwrap();
    assert_eq!(done.text, "I see the page.");
    let sent = &model.requests()[1].messages;
    assert!(sent.iter().any(|message| matches!(
        message,
        Message::Tool(result) if result.parts == [shot.clone()]
    )));
}

/// Says how big a file is, after a while.
#[tool(read_only)]
async fn slow_file_size(
    /// The file's path.
    path: String,
) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(40)).await;
    format!("{path}: 12 MB")
}

#[tokio::test]
async fn a_paused_run_keeps_how_long_it_ran() {
    let arguments = r#"{"path":"old.log"}"#;
    let model = Arc::new(ScriptedModel::new([AssistantMessage::tool_calls([
        ToolCall::new("c_size", "slow_file_size", arguments),
        ToolCall::new("c_delete", "delete_file", arguments),
    ])]));
    let output = Agent::new(model)
        .try_tools([delete_file {}])
        .unwrap()
        .try_tool(slow_file_size {})
        .unwrap()
        .defer_approvals()
        .run("Delete old.log if it is big")
        .await
        .unwrap();
    let paused = output.paused.expect("a paused run");
    // The time it ran is kept for the time limit of its resumption: at least the slow call's.
    assert!(
        paused.elapsed() >= std::time::Duration::from_millis(40),
        "{:?}",
        paused.elapsed()
    );
    assert!(paused.elapsed() < std::time::Duration::from_secs(30));
}
