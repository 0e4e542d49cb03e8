//! One budget for a tree of agents that call agents: reservations that runs at once cannot
//! overshoot, slices, tool calls and tokens, cancellation, a budget that pauses for a person to
//! raise it, and its time limit; usage by agent path.

use std::time::Duration;

use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, Budget, BudgetItem, BudgetLimits, Decision, NotRun, StopReason, Texts, ToolCall, Usage,
};
use tests::results_in;
use tests::tree::{Slow, calling, lookup, path, research, said, wait_forever};

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
    let results = results_in(&out.messages);
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

/// Ten children started at once against a token budget that fits three: each child's request
/// reserves what it is expected to use (its input and its longest reply) before it is sent, so
/// no more are sent than fit; the rest stop before asking, as for requests.
#[tokio::test]
async fn ten_children_started_at_once_against_tokens_for_three_send_three() {
    let child_model = ScriptedModel::new(
        (0..10).map(|index| said(&format!("answer {index}"), Usage::new(50, 1_000))),
    );
    let child = Agent::new(Slow(child_model.clone()))
        .named("researcher")
        .max_tokens(1_000);
    let calls = (0..10).map(|index| research(&format!("r{index}"), &format!("question {index}")));
    let parent_model = ScriptedModel::new([
        calling(calls, Usage::new(10, 2)),
        said("Three of ten answered.", Usage::new(100, 10)),
    ]);
    let parent = Agent::new(parent_model.clone())
        .named("triage")
        .try_tool(child.as_tool("research", "Research a question."))
        .unwrap();
    let out = parent
        .run("Ten questions")
        .budget(Budget::new().max_tokens(3_500))
        .await
        .unwrap();

    assert_eq!(child_model.requests().len(), 3);
    // The caller's first request and three children's: within the budget.
    assert_eq!(out.tree_usage().total_tokens() - 110, 12 + 3 * 1_050);
    let stopped = (out.children.iter())
        .filter(|child| {
            child.outcome.as_ref().unwrap().stop_reason
                == StopReason::BudgetSpent {
                    item: BudgetItem::Tokens,
                }
        })
        .count();
    assert_eq!(stopped, 7);
    // The caller, alone in flight again, is not refused for its expectation: it answers.
    assert_eq!(out.text, "Three of ten answered.");
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
    let result = &results_in(&out.messages)[0];
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

    let results = results_in(&out.messages);
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
    let result = &results_in(&out.messages)[0];
    assert!(result.is_error);
    assert_eq!(parent_model.requests().len(), 1);
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
        results_in(&out.messages)[0].content,
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
