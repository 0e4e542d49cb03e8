//! Agents that work together: a triage agent asks a research agent (an agent called as a tool,
//! its answer read, its run kept) and hands the customer to a billing agent (a hand-off with a
//! summary, the conversation going on with billing), all under one budget; it prints the answer,
//! who gave it, and the usage per agent path.
//!
//! `cargo run -p examples --example triage` runs offline: scripted models play the three agents.
//! With a provider in the environment (`OPENAI_API_KEY=...`, `AGENT_MODEL=ollama:qwen2.5`, see
//! `providers::from_env`) all three are the real model.

use std::sync::Arc;

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Budget, ChatResponse, Handoff, HandoffHistory, Model, RunOutput,
    ToolCall, Usage, agent, tool,
};

/// Search the carrier's service notices (storms, strikes, closed depots) for a place or topic.
#[tool(read_only)]
fn search_notices(
    /// What to look for, e.g. "Rotterdam storm"
    query: String,
) -> String {
    let _ = query;
    "Notice 2026-12-08: storm warning for the port of Rotterdam, Tuesday and Wednesday; \
     deliveries there may be a day late."
        .to_owned()
}

/// Look up what a customer was charged for an order.
#[tool(read_only)]
fn lookup_charges(
    /// The order number, e.g. "88213"
    order: String,
) -> String {
    format!(
        "Order {order}: charged EUR 412.00 on 2026-12-01 and again EUR 412.00 on 2026-12-02 \
         (duplicate, refund issued 2026-12-05, 3-5 working days)."
    )
}

/// What the customer asks.
const QUESTION: &str = "Is there a storm warning for Rotterdam this week? And why was I charged \
                        twice for order 88213?";

/// The three agents on one model each: the research agent a tool of triage, billing a hand-off.
fn agents(
    triage: impl Model + 'static,
    research: impl Model + 'static,
    billing: impl Model + 'static,
) -> Agent {
    let research = agent!(research, search_notices)
        .named("research")
        .system("You look things up in the carrier's service notices and report what you find in two sentences.");
    let billing = agent!(billing, lookup_charges)
        .named("billing")
        .system("You are the carrier's billing desk. Look up charges before you answer; be brief.");
    Agent::new(triage)
        .named("triage")
        .system(
            "You are the carrier's front desk. Ask the research agent about service notices; \
             hand billing questions to billing with a summary of what the customer needs.",
        )
        .try_tool(research.as_tool(
            "research",
            "Research the carrier's service notices: storms, strikes, depots.",
        ))
        .and_then(|agent| {
            agent.try_handoff(
                Handoff::to(billing, "Charges, invoices and refunds.")
                    .history(HandoffHistory::Summary),
            )
        })
        .expect("distinct tool names")
}

fn said(message: AssistantMessage, input: u64, output: u64) -> ChatResponse {
    ChatResponse::new(message).with_usage(Usage::new(input, output))
}

/// The offline models: what each agent says, in turn.
fn scripted() -> (ScriptedModel, ScriptedModel, ScriptedModel) {
    let triage = ScriptedModel::new([
        said(
            AssistantMessage::tool_calls([ToolCall::new(
                "t1",
                "research",
                r#"{"input":"Storm warnings for Rotterdam this week"}"#,
            )]),
            310,
            24,
        ),
        said(
            AssistantMessage::tool_calls([ToolCall::new(
                "t2",
                "transfer_to_billing",
                r#"{"summary":"The customer asks why order 88213 was charged twice. A storm may delay Rotterdam deliveries Tuesday and Wednesday; tell them that too."}"#,
            )]),
            402,
            41,
        ),
    ]);
    let research = ScriptedModel::new([
        said(
            AssistantMessage::tool_calls([ToolCall::new(
                "r1",
                "search_notices",
                r#"{"query":"Rotterdam storm"}"#,
            )]),
            180,
            12,
        ),
        said(
            AssistantMessage::text(
                "There is a storm warning for the port of Rotterdam on Tuesday and Wednesday. \
                 Deliveries there may be a day late.",
            ),
            240,
            30,
        ),
    ]);
    let billing = ScriptedModel::new([
        said(
            AssistantMessage::tool_calls([ToolCall::new(
                "b1",
                "lookup_charges",
                r#"{"order":"88213"}"#,
            )]),
            260,
            10,
        ),
        said(
            AssistantMessage::text(
                "Order 88213 was charged twice by mistake; the second EUR 412.00 was refunded on \
                 5 December and shows in 3-5 working days. Also note: a storm may delay Rotterdam \
                 deliveries on Tuesday and Wednesday.",
            ),
            330,
            48,
        ),
    ]);
    (triage, research, billing)
}

/// The answer, who gave it, and the usage per agent path.
fn report(output: &RunOutput, budget: &Budget) -> Vec<String> {
    let mut lines = vec![
        format!("{}: {}", output.agent, output.text),
        String::new(),
        "usage per agent:".to_owned(),
    ];
    for (agent, usage) in output.usage_by_agent() {
        let usage = usage.total();
        lines.push(format!(
            "  {agent:<16} {:>6} in {:>5} out",
            usage.input_tokens, usage.output_tokens
        ));
    }
    let spent = budget.spent();
    lines.push(format!(
        "the budget: {} model requests, {} tool calls, {} tokens",
        spent.requests,
        spent.tool_calls,
        spent.usage.total_tokens()
    ));
    lines
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let agent = match from_env() {
        Ok(Some(model)) => {
            println!("(model: {model})");
            let model: Arc<dyn Model> = Arc::new(model);
            agents(model.clone(), model.clone(), model)
        }
        Ok(None) => {
            println!("(offline: no AGENT_MODEL or API key set, so scripted models play the LLM)");
            let (triage, research, billing) = scripted();
            agents(triage, research, billing)
        }
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    // One budget for the three: the run stops before a 21st model request.
    let budget = Budget::new().max_requests(20);
    match agent.run(QUESTION).budget(budget.clone()).await {
        Ok(output) => {
            for line in report(&output, &budget) {
                println!("{line}");
            }
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn billing_answers_and_each_agent_is_counted_once() {
        let (triage, research, billing) = scripted();
        let agent = agents(triage, research, billing);
        let budget = Budget::new().max_requests(20);
        let output = agent.run(QUESTION).budget(budget.clone()).await.unwrap();
        let lines = report(&output, &budget);
        assert!(
            lines[0].starts_with("billing: Order 88213 was charged twice"),
            "{lines:#?}"
        );
        assert_eq!(
            lines[3].split_whitespace().collect::<Vec<_>>(),
            ["billing", "590", "in", "58", "out"]
        );
        assert_eq!(
            lines[4].split_whitespace().collect::<Vec<_>>(),
            ["triage", "712", "in", "65", "out"]
        );
        assert_eq!(
            lines[5].split_whitespace().collect::<Vec<_>>(),
            ["triage/research", "420", "in", "42", "out"]
        );
        assert_eq!(
            lines[6],
            "the budget: 6 model requests, 3 tool calls, 1887 tokens"
        );
        // The research agent's run is kept whole in the output.
        let research = output.children[0].outcome.as_ref().unwrap();
        assert_eq!(research.messages.len(), 5);
    }
}
