//! A tool learns which call it is (`CallInfo`): the run's id and the model's call id, the same
//! through a pause and its resume, a session's paused run, and a run given its own id.

use std::sync::{Arc, Mutex};

use agent_core::session::MemorySessions;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, CallInfo, Decision, PausedRun, RunId, State, Tool, ToolBox, ToolCall,
    ToolSet, agent, tool, tool_fn, tools,
};
use schemars::JsonSchema;
use serde::Deserialize;

/// What the tools saw, in the order they were called.
type Seen = Arc<Mutex<Vec<CallInfo>>>;

/// Notes down which call this is.
#[tool]
async fn note(call: CallInfo, State(seen): State<Seen>, text: String) -> String {
    let key = call.idempotency_key();
    seen.lock().unwrap().push(call);
    format!("{text}: {key}")
}

/// Notes down which call this is, on a blocking thread.
#[tool]
fn note_sync(State(seen): State<Seen>, call: agent_core::CallInfo) -> String {
    let key = call.idempotency_key();
    seen.lock().unwrap().push(call);
    key
}

/// Sends money: approved first.
#[tool(requires_approval)]
fn pay(State(seen): State<Seen>, call: CallInfo, cents: u32) -> String {
    let key = call.idempotency_key();
    seen.lock().unwrap().push(call);
    format!("paid {cents}: {key}")
}

fn calls(calls: &[(&str, &str, &str)]) -> AssistantMessage {
    AssistantMessage::tool_calls(
        calls
            .iter()
            .map(|(id, name, arguments)| ToolCall::new(*id, *name, *arguments)),
    )
}

#[tokio::test]
async fn a_tool_learns_the_run_id_it_was_given_and_its_call_id() {
    let model = ScriptedModel::new([
        calls(&[("c1", "note", r#"{"text":"a"}"#), ("c2", "note_sync", "{}")]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = agent!(model, note, note_sync).bind_context(Arc::clone(&seen));
    let out = agent.run("go").run_id("order-7").await.unwrap();
    assert_eq!(
        tests::result_texts(&out.messages),
        ["a: order-7/c1", "order-7/c2"]
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].run_id, RunId::from("order-7"));
    assert_eq!(seen[0].call_id, "c1");
    assert_eq!(seen[0].tool, "note");
    assert_eq!(seen[1].tool, "note_sync");
    // Not in the schema: the model never sees it.
    let definition = note {}.definition().parameters.to_string();
    assert!(!definition.contains("call"), "{definition}");
}

#[tokio::test]
async fn each_run_gets_a_fresh_id_the_same_for_all_its_calls() {
    let model = ScriptedModel::new([
        calls(&[("c1", "note", r#"{"text":"a"}"#)]),
        calls(&[("c2", "note", r#"{"text":"b"}"#)]),
        AssistantMessage::text("done"),
        calls(&[("c1", "note", r#"{"text":"a"}"#)]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = agent!(model, note).bind_context(Arc::clone(&seen));
    let _ = agent.run("first").await.unwrap();
    let _ = agent.run("second").await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].run_id, seen[1].run_id);
    assert_ne!(seen[0].run_id, seen[2].run_id);
    assert_eq!(seen[0].run_id.to_string().len(), 32);
}

#[tokio::test]
async fn a_paused_run_and_its_resume_share_one_id_even_when_saved_and_loaded() {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "note", r#"{"text":"before"}"#),
            ("c2", "pay", r#"{"cents":5}"#),
        ]),
        calls(&[("c3", "note", r#"{"text":"after"}"#)]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = agent!(model, note, pay)
        .defer_approvals()
        .bind_context(Arc::clone(&seen));
    let out = agent.run("pay").await.unwrap();
    let paused = out.paused.unwrap();
    let id = paused.run_id().cloned().unwrap();
    // Saved and loaded, as a server that waits for a person would.
    let saved = serde_json::to_string(&paused).unwrap();
    let loaded: PausedRun = serde_json::from_str(&saved).unwrap();
    assert_eq!(loaded.run_id(), Some(&id));
    let out = agent
        .resume(loaded, [("c2", Decision::Approve)])
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    let seen = seen.lock().unwrap();
    let ids: Vec<&RunId> = seen.iter().map(|call| &call.run_id).collect();
    assert_eq!(ids, [&id, &id, &id]);
    assert_eq!(
        tests::result_texts(&out.messages),
        [
            format!("before: {id}/c1"),
            format!("paid 5: {id}/c2"),
            format!("after: {id}/c3")
        ]
    );
}

#[tokio::test]
async fn a_session_run_keeps_its_id_through_the_pause_kept_in_the_session() {
    let model = ScriptedModel::new([
        calls(&[("c1", "pay", r#"{"cents":9}"#)]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = agent!(model, pay)
        .defer_approvals()
        .bind_context(Arc::clone(&seen));
    let store = MemorySessions::new();
    let out = agent
        .run("pay")
        .session(&store, "chat")
        .run_id("chat-turn-1")
        .await
        .unwrap();
    assert!(out.paused.is_some());
    let _ = agent
        .resume_session([("c1", Decision::Approve)])
        .session(&store, "chat")
        .await
        .unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].idempotency_key(), "chat-turn-1/c1");
}

#[tokio::test]
async fn a_call_outside_a_run_is_a_run_of_its_own() {
    let seen = Seen::default();
    let tools: ToolSet = tools!(note).bind_context(Arc::clone(&seen));
    let call = ToolCall::new("x", "note", r#"{"text":"t"}"#);
    tools.dispatch(&(), &call).await;
    tools.dispatch(&(), &call).await;
    let by_run = tools
        .outcome(
            &(),
            &call,
            agent_core::CallDecision::Run,
            &agent_core::RunScope::new(RunId::from("r")),
        )
        .await;
    let by_run = tools.result_message(&call, by_run);
    assert_eq!(by_run.content, "t: r/x");
    let seen = seen.lock().unwrap();
    assert_ne!(seen[0].run_id, seen[1].run_id);
}

/// Tools of a toolbox ask for their call the same way.
struct Ledger;

#[tool]
impl Ledger {
    /// Writes an entry.
    #[tool]
    async fn write(&self, call: CallInfo, amount: i64) -> String {
        format!("{amount} under {}", call.idempotency_key())
    }
}

#[tokio::test]
async fn a_method_tool_learns_its_call_too() {
    let model = ScriptedModel::new([
        calls(&[("c1", "write", r#"{"amount":3}"#)]),
        AssistantMessage::text("done"),
    ]);
    let agent: Agent = Agent::new(model).try_tools(Ledger.into_tools()).unwrap();
    let out = agent.run("go").run_id("ledger-1").await.unwrap();
    assert_eq!(tests::result_texts(&out.messages), ["3 under ledger-1/c1"]);
}

/// A closure tool's arguments.
#[derive(Deserialize, JsonSchema)]
struct Text {
    text: String,
}

/// Closure tools that note down which call this is, taking it with and without a part of the
/// context.
fn closure_tools(seen: &Seen) -> Vec<Arc<dyn Tool<Seen>>> {
    let seen_here = Arc::clone(seen);
    let note_fn = tool_fn(
        "note_fn",
        "Notes down which call this is.",
        move |call: CallInfo, args: Text| {
            let seen = Arc::clone(&seen_here);
            async move {
                let key = call.idempotency_key();
                seen.lock().unwrap().push(call);
                format!("{}: {key}", args.text)
            }
        },
    );
    let note_state_fn = tool_fn(
        "note_state_fn",
        "Notes down which call this is, in the context's list.",
        |State(seen): State<Seen>, call: CallInfo, args: Text| async move {
            let key = call.idempotency_key();
            seen.lock().unwrap().push(call);
            format!("{}: {key}", args.text)
        },
    );
    vec![Arc::new(note_fn), Arc::new(note_state_fn)]
}

#[tokio::test]
async fn a_closure_tool_learns_the_run_id_it_was_given_and_its_call_id() {
    let model = ScriptedModel::new([
        calls(&[
            ("c1", "note_fn", r#"{"text":"a"}"#),
            ("c2", "note_state_fn", r#"{"text":"b"}"#),
        ]),
        calls(&[("c3", "note_fn", r#"{"text":"c"}"#)]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = Agent::new(model)
        .try_tools(closure_tools(&seen))
        .unwrap()
        .bind_context(Arc::clone(&seen));
    let out = agent.run("go").run_id("order-8").await.unwrap();
    assert_eq!(
        tests::result_texts(&out.messages),
        ["a: order-8/c1", "b: order-8/c2", "c: order-8/c3"]
    );
    let seen = seen.lock().unwrap();
    let ids: Vec<&str> = seen.iter().map(|call| call.call_id.as_str()).collect();
    assert_eq!(ids, ["c1", "c2", "c3"]);
    let names: Vec<&str> = seen.iter().map(|call| call.tool.as_str()).collect();
    assert_eq!(names, ["note_fn", "note_state_fn", "note_fn"]);
    assert!(
        seen.iter()
            .all(|call| call.run_id == RunId::from("order-8"))
    );
}

#[tokio::test]
async fn a_closure_tool_sees_one_fresh_id_for_all_the_calls_of_a_run() {
    let model = ScriptedModel::new([
        calls(&[("c1", "note_fn", r#"{"text":"a"}"#)]),
        calls(&[("c2", "note_state_fn", r#"{"text":"b"}"#)]),
        AssistantMessage::text("done"),
        calls(&[("c1", "note_fn", r#"{"text":"a"}"#)]),
        AssistantMessage::text("done"),
    ]);
    let seen = Seen::default();
    let agent = Agent::new(model)
        .try_tools(closure_tools(&seen))
        .unwrap()
        .bind_context(Arc::clone(&seen));
    let _ = agent.run("first").await.unwrap();
    let _ = agent.run("second").await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen[0].run_id, seen[1].run_id);
    assert_ne!(seen[0].run_id, seen[2].run_id);
    assert_eq!(seen[0].run_id.to_string().len(), 32);
}

#[tokio::test]
async fn a_closure_tool_called_outside_a_run_is_a_run_of_its_own() {
    let seen = Seen::default();
    let mut tools = ToolSet::<Seen>::new();
    tools.add_all(closure_tools(&seen)).unwrap();
    let tools = tools.bind_context(Arc::clone(&seen));
    for name in ["note_fn", "note_state_fn"] {
        let call = ToolCall::new("x", name, r#"{"text":"t"}"#);
        tools.dispatch(&(), &call).await;
        tools.dispatch(&(), &call).await;
        let by_run = tools
            .outcome(
                &(),
                &call,
                agent_core::CallDecision::Run,
                &agent_core::RunScope::new(RunId::from("r")),
            )
            .await;
        let by_run = tools.result_message(&call, by_run);
        assert_eq!(by_run.content, "t: r/x");
    }
    let seen = seen.lock().unwrap();
    assert_ne!(seen[0].run_id, seen[1].run_id);
    assert_ne!(seen[3].run_id, seen[4].run_id);
    assert_eq!(seen[3].tool, "note_state_fn");
    // Not in the schema: the model never sees it.
    for definition in tools.definitions() {
        let properties = definition.parameters["properties"].as_object().unwrap();
        assert_eq!(properties.keys().collect::<Vec<_>>(), ["text"]);
    }
}
