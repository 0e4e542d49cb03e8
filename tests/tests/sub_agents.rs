//! Agents that call agents: an agent as a tool (typed both ways, its transcript kept, its answer
//! read), one budget for the whole tree (reservations that runs at once cannot overshoot, slices,
//! cancellation), usage by agent path, and a child's events in its caller's stream.

use std::time::Duration;

use agent_core::testing::{ScriptStep, ScriptedModel};
use agent_core::{
    Agent, AgentPath, AssistantMessage, BoxFuture, Budget, BudgetItem, BudgetLimits, ChatRequest,
    ChatResponse, Decision, Message, Model, ModelError, NotRun, RunEvent, StopReason, Texts,
    ToolCall, Usage, tool,
};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A model that takes a moment before each reply, as a real one does: runs started together
/// then all ask before any is answered.
#[derive(Clone)]
struct Slow(ScriptedModel);

impl Model for Slow {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            self.0.chat(request).await
        })
    }
}

fn path(text: &str) -> AgentPath {
    text.parse().unwrap()
}

fn said(text: &str, usage: Usage) -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(text)).with_usage(usage)
}

fn calling(calls: impl IntoIterator<Item = ToolCall>, usage: Usage) -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls(calls)).with_usage(usage)
}

fn research(id: &str, question: &str) -> ToolCall {
    let arguments = serde_json::json!({ "input": question }).to_string();
    ToolCall::new(id, "research", arguments)
}

/// Looks a word up.
#[tool]
fn lookup(word: String) -> String {
    format!("{word}: a small bird")
}

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

    let results = agent_core_results(&out.messages);
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

fn agent_core_results(messages: &[Message]) -> Vec<&agent_core::ToolResultMessage> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn ten_children_started_at_once_against_three_requests_make_exactly_three() {
    let child_model =
        ScriptedModel::new((0..10).map(|index| said(&format!("answer {index}"), Usage::new(5, 1))));
    let child = Agent::new(Slow(child_model.clone())).named("researcher");
    let calls = (0..10).map(|index| research(&format!("r{index}"), &format!("question {index}")));
    let parent_model = ScriptedModel::new([
        calling(calls, Usage::new(10, 2)),
        said("never asked", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone())
        .named("triage")
        .try_tool(child.as_tool("research", "Research a question."))
        .unwrap();
    let budget = Budget::new().max_requests(3);

    let out = parent
        .run("Ten questions")
        .budget(budget.clone())
        .await
        .unwrap();

    // The parent's first request and two children's: three in all, none more.
    let made = parent_model.requests().len() + child_model.requests().len();
    assert_eq!(made, 3);
    assert_eq!(budget.spent().requests, 3);
    assert_eq!(child_model.requests().len(), 2);
    assert_eq!(
        out.stop_reason,
        StopReason::BudgetSpent {
            item: BudgetItem::Requests
        }
    );
    // Two children answered; eight stopped before asking, and the model was told so as errors.
    let results = agent_core_results(&out.messages);
    assert_eq!(results.len(), 10);
    assert_eq!(results.iter().filter(|result| !result.is_error).count(), 2);
    let stopped = (out.children.iter())
        .filter(|child| {
            child.outcome.as_ref().unwrap().stop_reason
                == StopReason::BudgetSpent {
                    item: BudgetItem::Requests,
                }
        })
        .count();
    assert_eq!(stopped, 8);
    // The ledger's usage by agent agrees with the output's.
    let ledger = budget.by_agent();
    assert_eq!(ledger["triage"].total(), Usage::new(10, 2));
    assert_eq!(ledger["triage/researcher"].total(), Usage::new(10, 2));
    assert_eq!(
        out.usage_by_agent()[&path("triage/researcher")].total(),
        Usage::new(10, 2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn runs_on_other_threads_sharing_a_budget_cannot_overshoot_it() {
    let model = ScriptedModel::new((0..10).map(|_| said("done", Usage::new(1, 1))));
    let agent = std::sync::Arc::new(Agent::new(Slow(model.clone())));
    let budget = Budget::new().max_requests(3);
    let runs: Vec<_> = (0..10)
        .map(|_| {
            let (agent, budget) = (agent.clone(), budget.clone());
            tokio::spawn(async move { agent.run("Go").budget(budget).await.unwrap() })
        })
        .collect();
    let mut finished = 0;
    for run in runs {
        finished += usize::from(run.await.unwrap().is_finished());
    }
    assert_eq!(finished, 3);
    assert_eq!(model.requests().len(), 3);
}

#[tokio::test]
async fn a_childs_slice_stops_the_child_and_the_caller_goes_on() {
    let child_model = ScriptedModel::new([
        calling(
            [ToolCall::new("c1", "lookup", r#"{"word":"owl"}"#)],
            Usage::new(3, 1),
        ),
        said("never asked", Usage::default()),
    ]);
    let child = agent_core::agent!(child_model.clone(), lookup);
    let tool = child
        .as_tool("research", "Research a word.")
        .budget(BudgetLimits::new().max_requests(1));
    let parent_model = ScriptedModel::new([
        calling([research("p1", "owl?")], Usage::new(1, 1)),
        said("I could not find out.", Usage::new(1, 1)),
    ]);
    let parent = Agent::new(parent_model.clone()).try_tool(tool).unwrap();
    let budget = Budget::new().max_requests(10);

    let out = parent.run("Owl?").budget(budget.clone()).await.unwrap();

    assert_eq!(out.text, "I could not find out.");
    assert_eq!(child_model.requests().len(), 1);
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(
        child.stop_reason,
        StopReason::BudgetSpent {
            item: BudgetItem::Requests
        }
    );
    let result = &agent_core_results(&out.messages)[0];
    assert!(result.is_error);
    // The slice's spending is the tree's too.
    assert_eq!(budget.spent().requests, 3);
}

#[tokio::test]
async fn calls_past_the_budgets_tool_calls_are_not_run_and_the_run_stops() {
    let model = ScriptedModel::new([
        calling(
            [
                ToolCall::new("1", "lookup", r#"{"word":"a"}"#),
                ToolCall::new("2", "lookup", r#"{"word":"b"}"#),
            ],
            Usage::default(),
        ),
        said("never asked", Usage::default()),
    ]);
    let agent = agent_core::agent!(model.clone(), lookup);
    let budget = Budget::new().max_tool_calls(1);

    let out = agent.run("Two words").budget(budget.clone()).await.unwrap();

    let results = agent_core_results(&out.messages);
    assert_eq!(results[0].content, "a: a small bird");
    assert!(results[1].is_error);
    let expected = agent_core::English.not_run(&NotRun::BudgetSpent);
    assert!(
        results[1].content.contains(&expected),
        "{}",
        results[1].content
    );
    assert_eq!(
        out.stop_reason,
        StopReason::BudgetSpent {
            item: BudgetItem::ToolCalls
        }
    );
    assert_eq!(budget.spent().tool_calls, 1);
    assert_eq!(model.requests().len(), 1);
}

#[tokio::test]
async fn tokens_spent_by_a_child_stop_the_caller_before_its_next_request() {
    let child_model = ScriptedModel::new([said("long answer", Usage::new(900, 200))]);
    let child = Agent::new(child_model);
    let parent_model = ScriptedModel::new([
        calling([research("p1", "tell me everything")], Usage::new(10, 10)),
        said("never asked", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone())
        .try_tool(child.as_tool("research", "Research."))
        .unwrap();

    let out = parent
        .run("Everything")
        .budget(Budget::new().max_tokens(1000))
        .await
        .unwrap();

    assert_eq!(parent_model.requests().len(), 1);
    assert_eq!(
        out.stop_reason,
        StopReason::BudgetSpent {
            item: BudgetItem::Tokens
        }
    );
    assert_eq!(out.tree_usage().total_tokens(), 1120);
}

/// Waits until the run is cut off.
#[tool]
async fn wait_forever() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}

#[tokio::test]
async fn cancelling_the_budget_stops_the_caller_and_the_child_it_waits_for() {
    let child_model = ScriptedModel::new([
        calling(
            [ToolCall::new("c1", "wait_forever", "{}")],
            Usage::default(),
        ),
        said("never asked", Usage::default()),
    ]);
    let child = agent_core::agent!(child_model, wait_forever);
    let parent_model = ScriptedModel::new([
        calling([research("p1", "wait")], Usage::default()),
        said("never asked", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone())
        .try_tool(child.as_tool("research", "Research."))
        .unwrap();
    let budget = Budget::new();
    let canceller = budget.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        canceller.cancel();
    });

    let out = tokio::time::timeout(
        Duration::from_secs(5),
        parent.run("Wait").budget(budget.clone()),
    )
    .await
    .expect("the cancel reached the run")
    .unwrap();

    assert_eq!(out.stop_reason, StopReason::Cancelled);
    assert!(budget.is_cancelled());
    let result = &agent_core_results(&out.messages)[0];
    assert!(result.is_error);
    assert_eq!(parent_model.requests().len(), 1);
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
    let result = &agent_core_results(&out.messages)[0];
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
    let results = agent_core_results(&out.messages);
    assert_eq!(results[0].content, "Order 7 is refunded.");
    assert_eq!(results[1].content, "order 7 is paid");
    // The billing child went on from its pause: it asked its model twice in all, and ran the
    // refund once.
    assert_eq!(billing_model.requests().len(), 2);
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(out.children[0].path, path("triage/billing"));
    assert_eq!(agent_core_results(&child.messages)[0].content, "refunded 7");
    assert_eq!(triage_model.requests().len(), 2);
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
    let told = &agent_core_results(&child.messages)[0];
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
    let told = &agent_core_results(&child.messages)[0];
    let cannot_wait = agent_core::English.not_run(&NotRun::CannotWait);
    assert!(told.content.contains(&cannot_wait), "{}", told.content);
}

#[tokio::test]
async fn a_budget_that_pauses_waits_for_a_person_to_raise_it_and_goes_on_exactly() {
    let model = ScriptedModel::new([
        calling(
            [ToolCall::new("1", "lookup", r#"{"word":"a"}"#)],
            Usage::new(10, 1),
        ),
        calling(
            [ToolCall::new("2", "lookup", r#"{"word":"b"}"#)],
            Usage::new(20, 2),
        ),
        said("Both are small birds.", Usage::new(30, 3)),
    ]);
    let agent = agent_core::agent!(model.clone(), lookup).named("desk");
    let budget = Budget::new().max_requests(2).pause_when_spent();

    let out = agent.run("Two words").budget(budget.clone()).await.unwrap();

    assert_eq!(out.stop_reason, StopReason::Paused);
    assert_eq!(model.requests().len(), 2);
    let paused = out.paused.unwrap();
    assert!(paused.pending().is_empty(), "nothing but the budget waits");
    // Kept elsewhere, as a service that waits for a person would: the paused run and the budget.
    let (saved, kept) = (
        paused.to_json(),
        serde_json::to_string(&budget.state()).unwrap(),
    );
    let paused = agent_core::PausedRun::from_json(&saved).unwrap();
    let budget = Budget::from_state(serde_json::from_str(&kept).unwrap());
    assert_eq!(budget.spent().requests, 2);
    // A decision for a call that does not wait is refused; none goes on, once raised.
    let refused = agent
        .resume(paused.clone(), [("1", Decision::Approve)])
        .await;
    assert!(refused.is_err());
    budget.set_limits(BudgetLimits::new().max_requests(3));

    let out = agent
        .resume(paused, std::iter::empty::<(String, Decision)>())
        .budget(budget.clone())
        .await
        .unwrap();

    assert_eq!(out.text, "Both are small birds.");
    assert_eq!(model.requests().len(), 3);
    assert_eq!(out.steps, 3);
    // The ledger is exact across the pause: three requests, two calls, every token once.
    let spent = budget.spent();
    assert_eq!(spent.requests, 3);
    assert_eq!(spent.tool_calls, 2);
    assert_eq!(spent.usage, Usage::new(60, 6));
    assert_eq!(budget.by_agent()["desk"].total(), Usage::new(60, 6));
    assert_eq!(out.usage, Usage::new(60, 6));
}

#[tokio::test]
async fn a_child_that_finds_a_pausing_budget_spent_pauses_the_tree() {
    let child_model = ScriptedModel::new([
        calling(
            [ToolCall::new("c1", "lookup", r#"{"word":"owl"}"#)],
            Usage::new(5, 1),
        ),
        said("An owl hunts at night.", Usage::new(5, 1)),
    ]);
    let child = agent_core::agent!(child_model.clone(), lookup).named("research");
    let parent_model = ScriptedModel::new([
        calling([research("p1", "owl?")], Usage::new(1, 1)),
        said("Owls hunt at night.", Usage::new(1, 1)),
    ]);
    let parent = Agent::new(parent_model.clone())
        .named("desk")
        .try_tool(child.as_tool("research", "Research."))
        .unwrap();
    let budget = Budget::new().max_requests(2).pause_when_spent();

    let out = parent.run("Owls?").budget(budget.clone()).await.unwrap();

    // The parent's request and the child's first: the child waits before its second.
    assert_eq!(out.stop_reason, StopReason::Paused);
    assert_eq!(child_model.requests().len(), 1);
    budget.set_limits(BudgetLimits::new().max_requests(4));
    let out = parent
        .resume(
            out.paused.unwrap(),
            std::iter::empty::<(String, Decision)>(),
        )
        .budget(budget.clone())
        .await
        .unwrap();

    assert_eq!(out.text, "Owls hunt at night.");
    assert_eq!(
        agent_core_results(&out.messages)[0].content,
        "An owl hunts at night."
    );
    assert_eq!(budget.spent().requests, 4);
    assert_eq!(child_model.requests().len(), 2);
    assert_eq!(parent_model.requests().len(), 2);
}

#[tokio::test]
async fn a_budgets_time_limit_ends_the_caller_and_the_child_it_waits_for() {
    let child_model = ScriptedModel::new([
        calling(
            [ToolCall::new("c1", "wait_forever", "{}")],
            Usage::default(),
        ),
        said("never asked", Usage::default()),
    ]);
    let child = agent_core::agent!(child_model, wait_forever).named("slow");
    let parent_model = ScriptedModel::new([
        calling([research("p1", "wait")], Usage::default()),
        said("never asked", Usage::default()),
    ]);
    let parent = Agent::new(parent_model.clone())
        .try_tool(child.as_tool("research", "Research."))
        .unwrap();
    let limit = Duration::from_millis(100);
    let budget = Budget::new().time_limit(limit);
    let started = std::time::Instant::now();

    let out = parent.run("Wait").budget(budget).await.unwrap();

    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out.stop_reason, StopReason::TimeLimit { limit });
    // The child ended at the same deadline: its own run says so.
    let child = out.children[0].outcome.as_ref().unwrap();
    assert_eq!(child.stop_reason, StopReason::TimeLimit { limit });
    assert_eq!(parent_model.requests().len(), 1);
}
