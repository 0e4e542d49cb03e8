//! Agents that call agents: an agent as a tool (typed both ways, its transcript kept, its answer
//! read, its failure an error result, its usage by agent path), a child's events in its caller's
//! stream, and a child's call that waits for a person pausing the whole tree. One budget for a
//! tree is in `sub_agents_budget.rs`.

use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{
    Agent, AgentPath, AssistantMessage, ModelError, NotRun, RunEvent, StopReason, Texts, ToolCall,
    Usage, tool,
};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tests::results_in;
use tests::tree::{calling, lookup, path, research, said};

#[tokio::test]
async fn the_caller_reads_the_childs_answer_and_keeps_its_transcript() {
    let child_model = ScriptedModel::new([
        calling(
            [ToolCall::new("c1", "lookup", r#"{"word":"wren"}"#)],
            Usage::new(40, 6),
        ),
        said("A wren is a small bird.", Usage::new(60, 8)),
    ]);
    let researcher = agent_core::agent!(child_model.clone(), lookup)
        .named("researcher")
        .system("You research words.");
    let parent_model = ScriptedModel::new([
        calling([research("p1", "What is a wren?")], Usage::new(10, 2)),
        said("It is a small bird.", Usage::new(20, 3)),
    ]);
    let triage = Agent::new(parent_model.clone())
        .named("triage")
        .try_tool(researcher.as_tool("research", "Research a word."))
        .unwrap();

    let out = triage.run("Wren?").await.unwrap();

    assert_eq!(out.text, "It is a small bird.");
    assert_eq!(out.agent, path("triage"));
    // The calling model read the answer alone, not the child's transcript.
    let second = &parent_model.requests()[1].messages;
    assert_eq!(second.len(), 4);
    assert_eq!(second[3].content(), "A wren is a small bird.");
    // The child was asked the question alone, under its own system prompt.
    let asked = &child_model.requests()[0].messages;
    assert_eq!(asked[0].content(), "You research words.");
    assert_eq!(asked[1].content(), "What is a wren?");
    assert_eq!(asked.len(), 2);
    // Its run is kept whole in the caller's output.
    assert_eq!(out.children.len(), 1);
    let child = &out.children[0];
    assert_eq!(child.path, path("triage/researcher"));
    assert_eq!(child.call_id, "p1");
    let run = child.outcome.as_ref().unwrap();
    assert_eq!(run.agent, path("triage/researcher"));
    assert_eq!(run.messages.len(), 5);
    assert_eq!(run.messages[3].content(), "wren: a small bird");
    // Usage by agent, each model call once; the tree's total.
    let by_agent = out.usage_by_agent();
    assert_eq!(by_agent[&path("triage")].total(), Usage::new(30, 5));
    assert_eq!(
        by_agent[&path("triage/researcher")].total(),
        Usage::new(100, 14)
    );
    assert_eq!(out.usage, Usage::new(30, 5));
    assert_eq!(out.tree_usage(), Usage::new(130, 19));
}

/// A question about a city.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CityQuestion {
    /// The city
    city: String,
    /// What to find out
    topic: String,
}

/// What the researcher found.
#[derive(Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
struct Finding {
    summary: String,
    confidence: f32,
}

#[tokio::test]
async fn a_typed_child_shows_its_schemas_both_ways_and_answers_in_json() {
    // The child answers through the typed run's final-answer tool.
    let child_model = ScriptedModel::new([AssistantMessage::tool_calls([ToolCall::new(
        "f1",
        "final_result",
        r#"{"summary":"Mild winters.","confidence":0.75}"#,
    )])]);
    let tool = Agent::new(child_model.clone())
        .as_tool("research_city", "Research a city.")
        .input::<CityQuestion>()
        .output::<Finding>();
    let parameters = &tool.definition().parameters;
    assert_eq!(parameters["properties"]["city"]["description"], "The city");
    assert_eq!(parameters["required"], serde_json::json!(["city", "topic"]));
    let output_schema = tool.definition().output_schema.clone().unwrap();
    assert_eq!(output_schema["properties"]["confidence"]["type"], "number");

    let parent_model = ScriptedModel::new([
        calling(
            [
                ToolCall::new(
                    "bad",
                    "research_city",
                    r#"{"city":"Oslo","topc":"climate"}"#,
                ),
                ToolCall::new(
                    "good",
                    "research_city",
                    r#"{"city":"Oslo","topic":"climate"}"#,
                ),
            ],
            Usage::default(),
        ),
        said("Oslo has mild winters.", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone()).try_tool(tool).unwrap();
    let out = parent.run("Oslo's climate?").await.unwrap();

    let results = results_in(&out.messages);
    // Arguments that do not fit the input's schema never start the child.
    assert!(results[0].is_error);
    assert!(
        results[0].content.contains("topc"),
        "{}",
        results[0].content
    );
    assert!(
        results[0].content.contains("topic"),
        "{}",
        results[0].content
    );
    assert_eq!(child_model.requests().len(), 1);
    // The child was asked with the arguments as JSON, and its value came back as JSON.
    let asked = &child_model.requests()[0].messages[1];
    assert_eq!(asked.content(), r#"{"city":"Oslo","topic":"climate"}"#);
    let finding: Finding = serde_json::from_str(&results[1].content).unwrap();
    assert_eq!(
        finding,
        Finding {
            summary: "Mild winters.".into(),
            confidence: 0.75
        }
    );
    assert_eq!(out.children.len(), 1);
    assert_eq!(out.children[0].call_id, "good");
    assert_eq!(out.children[0].path, path("agent/research_city"));
}

#[tokio::test]
async fn a_child_that_fails_is_an_error_result_and_its_run_is_kept() {
    let child_model = ScriptedModel::from_steps([ScriptStep::error(|| ModelError::Server {
        status: 500,
        message: "down".into(),
    })]);
    let child = Agent::new(child_model);
    let parent_model = ScriptedModel::new([
        calling([research("p1", "anything")], Usage::default()),
        said("The researcher is down.", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone())
        .try_tool(child.as_tool("research", "Research."))
        .unwrap();

    let out = parent.run("Anything?").await.unwrap();

    assert_eq!(out.text, "The researcher is down.");
    let result = &results_in(&out.messages)[0];
    assert!(result.is_error);
    assert!(result.content.contains("down"), "{}", result.content);
    let failure = out.children[0].outcome.as_ref().unwrap_err();
    assert!(failure.error.contains("down"), "{}", failure.error);
    assert_eq!(failure.messages.len(), 2);
}

#[tokio::test]
async fn a_streamed_caller_streams_its_childrens_events_tagged_with_their_paths() {
    let grandchild =
        Agent::new(ScriptedModel::new([AssistantMessage::text("deep fact")])).named("archivist");
    let child = Agent::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("g1", "archive", r#"{"input":"look deep"}"#)]),
        AssistantMessage::text("found: deep fact"),
    ]))
    .named("researcher")
    .try_tool(grandchild.as_tool("archive", "Search the archive."))
    .unwrap();
    let parent = Agent::new(ScriptedModel::new([
        AssistantMessage::tool_calls([research("p1", "dig")]),
        AssistantMessage::text("It is a deep fact."),
    ]))
    .named("triage")
    .try_tool(child.as_tool("research", "Research."))
    .unwrap();

    let events: Vec<RunEvent> = parent.run("Dig").stream().collect().await;

    // The events in order, each written as its agent and what happened.
    let written: Vec<String> = events.iter().map(describe).collect();
    let at = |line: &str| {
        written
            .iter()
            .position(|written| written == line)
            .unwrap_or_else(|| panic!("no {line:?} in {written:#?}"))
    };
    let asked = at("triage: call research");
    let child_started = at("triage/researcher: step 1");
    let grandchild_answer = at("triage/researcher/archivist: text deep fact");
    let child_read = at("triage/researcher: result deep fact");
    let child_answer = at("triage/researcher: text found: deep fact");
    let answered = at("triage: result found: deep fact");
    assert!(asked < child_started);
    assert!(child_started < grandchild_answer);
    assert!(grandchild_answer < child_read);
    assert!(child_read < child_answer);
    assert!(child_answer < answered);
    // Never a child's end, never a wrapper in a wrapper.
    assert!(events.iter().all(|event| match event {
        RunEvent::SubAgent { event, .. } =>
            !matches!(**event, RunEvent::Finished(_) | RunEvent::SubAgent { .. }),
        _ => true,
    }));
    let RunEvent::Finished(Ok(out)) = events.last().unwrap() else {
        panic!("the run ends last");
    };
    assert_eq!(out.text, "It is a deep fact.");
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(child.children[0].path, path("triage/researcher/archivist"));
}

/// An event as `agent: what`.
fn describe(event: &RunEvent) -> String {
    let (agent, event) = match event {
        RunEvent::SubAgent {
            path,
            call_id,
            event,
        } => {
            assert_eq!(call_id, "p1", "every event under the top run's call");
            (path.to_string(), &**event)
        }
        event => ("triage".to_owned(), event),
    };
    let what = match event {
        RunEvent::StepStarted { step } => format!("step {step}"),
        RunEvent::TextDelta(text) => format!("text {text}"),
        RunEvent::ToolCallRequested(call) => format!("call {}", call.name),
        RunEvent::ToolResult(result) => format!("result {}", result.content),
        RunEvent::StepFinished { step, .. } => format!("step {step} done"),
        RunEvent::Finished(_) => "end".to_owned(),
        _ => "other".to_owned(),
    };
    format!("{agent}: {what}")
}

/// Refunds an order.
#[tool(requires_approval)]
fn refund(order: String) -> String {
    format!("refunded {order}")
}

/// A billing agent whose refunds wait for a person, as a tool of a triage agent that also asks
/// a second, quick agent at once.
fn billing_tree(billing_model: &ScriptedModel, triage_model: &ScriptedModel) -> Agent {
    let billing = agent_core::agent!(billing_model.clone(), refund)
        .named("billing")
        .defer_approvals();
    let quick = Agent::new(ScriptedModel::new([AssistantMessage::text(
        "order 7 is paid",
    )]))
    .named("ledger");
    Agent::new(triage_model.clone())
        .named("triage")
        .try_tool(billing.as_tool("billing", "Handle billing."))
        .unwrap()
        .try_tool(quick.as_tool("ledger", "Look at the ledger."))
        .unwrap()
}

#[tokio::test]
async fn a_childs_call_waiting_for_approval_pauses_the_tree_and_goes_on_when_approved() {
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("Order 7 is refunded."),
    ]);
    let triage_model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("t1", "billing", r#"{"input":"refund order 7"}"#),
            ToolCall::new("t2", "ledger", r#"{"input":"is order 7 paid?"}"#),
        ]),
        AssistantMessage::text("Your refund is done."),
    ]);
    let triage = billing_tree(&billing_model, &triage_model);

    let paused_out = triage.run("Refund order 7").await.unwrap();

    assert_eq!(paused_out.stop_reason, StopReason::Paused);
    let paused = paused_out.paused.clone().unwrap();
    // The child's waiting call is the tree's, as a top-level one would be.
    let pending: Vec<&str> = paused
        .pending()
        .iter()
        .map(|p| p.call.id.as_str())
        .collect();
    assert_eq!(pending, ["b1"]);
    assert_eq!(paused.pending()[0].call.name, "refund");
    assert_eq!(paused.waiting_in("b1"), Some(&path("triage/billing")));
    // The quick child finished: its result waits with the paused run, not to be run again.
    assert_eq!(paused.finished()[0].content, "order 7 is paid");
    // Saved and loaded, as a session or another process would.
    let paused = agent_core::PausedRun::from_json(&paused.to_json()).unwrap();

    let out = triage
        .resume(paused, [("b1", agent_core::Decision::Approve)])
        .await
        .unwrap();

    assert_eq!(out.text, "Your refund is done.");
    let results = results_in(&out.messages);
    assert_eq!(results[0].content, "Order 7 is refunded.");
    assert_eq!(results[1].content, "order 7 is paid");
    // The billing child went on from its pause: it asked its model twice in all, and ran the
    // refund once.
    assert_eq!(billing_model.requests().len(), 2);
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(out.children[0].path, path("triage/billing"));
    assert_eq!(results_in(&child.messages)[0].content, "refunded 7");
    assert_eq!(triage_model.requests().len(), 2);
}

/// Tells what the run's end shows of the runs its calls started.
struct EndWatch(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl agent_core::Hooks for EndWatch {
    fn on_run_end(
        &self,
        _context: &(),
        outcome: Result<&agent_core::RunOutput, &agent_core::RunError>,
    ) {
        if let Ok(output) = outcome {
            let mut seen = self.0.lock().unwrap();
            seen.extend(output.children.iter().map(|child| child.path.to_string()));
        }
    }
}

/// The hooks told of a run's end see the runs its calls started, as its caller does.
#[tokio::test]
async fn the_hooks_told_of_a_runs_end_see_its_children() {
    let child = Agent::new(ScriptedModel::new([said(
        "A small bird.",
        Usage::new(5, 2),
    )]))
    .named("researcher");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let parent = Agent::new(ScriptedModel::new([
        calling([research("p1", "What is a wren?")], Usage::new(10, 2)),
        said("A bird.", Usage::new(20, 3)),
    ]))
    .named("desk")
    .hook(EndWatch(seen.clone()))
    .try_tool(child.as_tool("research", "Research a word."))
    .unwrap();
    let out = parent.run("Wren?").await.unwrap();
    assert_eq!(out.children.len(), 1);
    assert_eq!(*seen.lock().unwrap(), ["desk/researcher"]);
}

/// A child without an approver of its own decides as its caller does: under a caller that defers
/// approvals, its call that needs one waits for a person and pauses the tree (as its guards are
/// its caller's), rather than being refused for want of an approver; approved, it runs.
#[tokio::test]
async fn a_child_without_an_approver_defers_as_its_caller_does() {
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("Order 7 is refunded."),
    ]);
    let triage_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "t1",
            "billing",
            r#"{"input":"refund order 7"}"#,
        )]),
        AssistantMessage::text("Your refund is done."),
    ]);
    let billing = agent_core::agent!(billing_model.clone(), refund).named("billing");
    let triage = Agent::new(triage_model)
        .named("triage")
        .defer_approvals()
        .try_tool(billing.as_tool("billing", "Handle billing."))
        .unwrap();
    let paused = triage.run("Refund order 7").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::Paused);
    let paused = paused.paused.unwrap();
    assert_eq!(paused.waiting_in("b1"), Some(&path("triage/billing")));
    let out = (triage.resume(paused, [("b1", agent_core::Decision::Approve)]))
        .await
        .unwrap();
    assert_eq!(out.text, "Your refund is done.");
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(results_in(&child.messages)[0].content, "refunded 7");

    // Without a caller that defers, the child has no one to ask: the call is not run.
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("I could not refund it."),
    ]);
    let billing = agent_core::agent!(billing_model, refund).named("billing");
    let triage = Agent::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("t1", "billing", r#"{"input":"refund 7"}"#)]),
        AssistantMessage::text("It could not be done."),
    ]))
    .named("triage")
    .try_tool(billing.as_tool("billing", "Handle billing."))
    .unwrap();
    let out = triage.run("Refund order 7").await.unwrap();
    let child = out.children[0].outcome.as_ref().unwrap();
    let refused = &results_in(&child.messages)[0].content;
    let no_approver = agent_core::English.not_run(&NotRun::NoApprover);
    assert!(refused.contains(&no_approver), "{refused}");
}

/// A child that finished before its tree paused is kept by the paused run: the run that goes on
/// counts its usage under its path, as the budget's ledger does, and keeps it among its children.
#[tokio::test]
async fn a_child_that_finished_before_a_pause_counts_in_the_usage_after_it() {
    let used = Usage::new(900, 100);
    let billing_model = ScriptedModel::new([
        calling([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)], used),
        said("Order 7 is refunded.", used),
    ]);
    let triage_model = ScriptedModel::new([
        calling(
            [
                ToolCall::new("t1", "billing", r#"{"input":"refund order 7"}"#),
                ToolCall::new("t2", "ledger", r#"{"input":"is order 7 paid?"}"#),
            ],
            used,
        ),
        said("Your refund is done.", used),
    ]);
    let billing = agent_core::agent!(billing_model, refund)
        .named("billing")
        .defer_approvals();
    let ledger = Agent::new(ScriptedModel::new([said("order 7 is paid", used)])).named("ledger");
    let budget = agent_core::Budget::new();
    let triage = Agent::new(triage_model)
        .named("triage")
        .try_tool(billing.as_tool("billing", "Handle billing."))
        .unwrap()
        .try_tool(ledger.as_tool("ledger", "Look at the ledger."))
        .unwrap();

    let paused = (triage.run("Refund order 7").budget(budget.clone()).await)
        .unwrap()
        .paused
        .unwrap();
    let paused = agent_core::PausedRun::from_json(&paused.to_json()).unwrap();
    let out = (triage.resume(paused, [("b1", agent_core::Decision::Approve)]))
        .budget(budget.clone())
        .await
        .unwrap();

    // Five model calls of 1,000 tokens: two of triage, two of billing, one of the ledger.
    let by_agent = out.usage_by_agent();
    assert_eq!(by_agent[&path("triage")].total(), used + used);
    assert_eq!(by_agent[&path("triage/billing")].total(), used + used);
    assert_eq!(by_agent[&path("triage/ledger")].total(), used);
    assert_eq!(out.tree_usage().total_tokens(), 5_000);
    assert_eq!(budget.spent().usage, out.tree_usage(), "the ledger agrees");
    let children: Vec<&AgentPath> = out.children.iter().map(|child| &child.path).collect();
    assert_eq!(children, [&path("triage/billing"), &path("triage/ledger")]);
}

#[tokio::test]
async fn a_denied_call_in_a_child_is_told_to_the_child_and_the_tree_goes_on() {
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("The refund was not approved."),
    ]);
    let triage_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "t1",
            "billing",
            r#"{"input":"refund order 7"}"#,
        )]),
        AssistantMessage::text("No refund."),
    ]);
    let triage = billing_tree(&billing_model, &triage_model);
    let paused = triage.run("Refund").await.unwrap().paused.unwrap();

    let out = triage
        .resume(paused, [("b1", agent_core::Decision::deny("too late"))])
        .await
        .unwrap();

    assert_eq!(out.text, "No refund.");
    let child = out.children[0].outcome.as_ref().unwrap();
    let told = &results_in(&child.messages)[0];
    assert!(told.is_error);
    assert!(told.content.contains("too late"), "{}", told.content);
    // A decision for a call that does not wait is refused before anything runs, naming the
    // child's call that does.
    billing_model.push(AssistantMessage::tool_calls([ToolCall::new(
        "b1",
        "refund",
        r#"{"order":"7"}"#,
    )]));
    triage_model.push(AssistantMessage::tool_calls([ToolCall::new(
        "t1",
        "billing",
        r#"{"input":"refund order 7"}"#,
    )]));
    let paused = triage.run("Refund").await.unwrap().paused.unwrap();
    let refused = triage
        .resume(paused, [("t1", agent_core::Decision::Approve)])
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("b1"), "{refused}");
}

#[tokio::test]
async fn under_a_caller_that_cannot_pause_a_childs_waiting_call_is_not_run() {
    #[derive(Debug, Deserialize, JsonSchema)]
    struct Done {
        done: bool,
    }
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("I could not refund it."),
    ]);
    let triage_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "t1",
            "billing",
            r#"{"input":"refund order 7"}"#,
        )]),
        AssistantMessage::tool_calls([ToolCall::new("f", "final_result", r#"{"done":false}"#)]),
    ]);
    let triage = billing_tree(&billing_model, &triage_model);

    let out = triage.run("Refund").output::<Done>().await.unwrap();

    assert!(!out.value.done);
    let child = out.run.children[0].outcome.as_ref().unwrap();
    let told = &results_in(&child.messages)[0];
    let cannot_wait = agent_core::English.not_run(&NotRun::CannotWait);
    assert!(told.content.contains(&cannot_wait), "{}", told.content);
}
