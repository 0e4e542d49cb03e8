//! Hand-offs: an agent gives the conversation to another, which goes on with the same transcript
//! (nothing copied), seeing of what came before what the hand-off says; the output and a
//! session say which agent answered, and a later turn goes to the agent that holds it.

use std::sync::Arc;

use agent_core::session::MemorySessions;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AgentPath, AssistantMessage, ChatResponse, Decision, Handoff, HandoffHistory, Message,
    StopReason, ToolCall, Usage, tool,
};

fn path(text: &str) -> AgentPath {
    text.parse().unwrap()
}

fn hand_to_billing(id: &str) -> AssistantMessage {
    AssistantMessage::tool_calls([ToolCall::new(id, "transfer_to_billing", "{}")])
}

/// A triage agent that has talked with the user once, then hands off to billing.
fn triage(
    triage_model: &ScriptedModel,
    billing_model: &ScriptedModel,
    history: HandoffHistory,
) -> Agent {
    let billing = Agent::new(billing_model.clone())
        .named("billing")
        .system("You handle billing.");
    Agent::new(triage_model.clone())
        .named("triage")
        .system("You sort requests.")
        .try_handoff(Handoff::to(billing, "Refunds and invoices.").history(history))
        .unwrap()
}

fn contents(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(|message| message.content().to_owned())
        .collect()
}

#[tokio::test]
async fn the_agent_handed_to_answers_seeing_what_the_hand_off_says() {
    let triage_model =
        ScriptedModel::new(
            [ChatResponse::new(hand_to_billing("h1")).with_usage(Usage::new(10, 1))],
        );
    let billing_model = ScriptedModel::new([ChatResponse::new(AssistantMessage::text(
        "Your refund left on Monday.",
    ))
    .with_usage(Usage::new(20, 5))]);
    let agent = triage(
        &triage_model,
        &billing_model,
        HandoffHistory::LastUserMessage,
    );
    let history = vec![
        Message::system("You sort requests."),
        Message::user("Hi, I am Mei."),
        Message::Assistant(AssistantMessage::text("Hello Mei.")),
    ];

    let out = agent
        .run("Where is my refund?")
        .history(history)
        .await
        .unwrap();

    assert_eq!(out.text, "Your refund left on Monday.");
    assert_eq!(out.agent, path("billing"));
    assert_eq!(out.stop_reason, StopReason::Finished);
    // One transcript, each message once: the hand-off and its result among them.
    assert_eq!(
        contents(&out.messages),
        [
            "You sort requests.",
            "Hi, I am Mei.",
            "Hello Mei.",
            "Where is my refund?",
            "",
            "The conversation is now with billing.",
            "Your refund left on Monday.",
        ]
    );
    // Billing saw its own system prompt and the last question alone.
    let seen = &billing_model.requests()[0].messages;
    assert_eq!(
        contents(seen),
        ["You handle billing.", "Where is my refund?"]
    );
    // Each model call under the agent that made it.
    assert_eq!(out.step_agents, [path("triage"), path("billing")]);
    let by_agent = out.usage_by_agent();
    assert_eq!(by_agent[&path("triage")].total(), Usage::new(10, 1));
    assert_eq!(by_agent[&path("billing")].total(), Usage::new(20, 5));
    assert_eq!(out.usage, Usage::new(30, 6));
    assert_eq!(out.steps, 2);
}

#[tokio::test]
async fn all_of_the_history_or_a_function_of_it() {
    let triage_model = ScriptedModel::new([hand_to_billing("h1"), hand_to_billing("h2")]);
    let billing_model = ScriptedModel::new([
        AssistantMessage::text("All seen."),
        AssistantMessage::text("Only the greeting."),
    ]);
    let all = triage(&triage_model, &billing_model, HandoffHistory::All);
    let out = all.run("Refund?").await.unwrap();
    assert_eq!(out.text, "All seen.");
    let seen = contents(&billing_model.requests()[0].messages);
    assert_eq!(
        seen,
        [
            "You handle billing.",
            "Refund?",
            "",
            "The conversation is now with billing."
        ]
    );

    let first_user_only = HandoffHistory::With(Arc::new(|before: &[Message]| {
        before
            .iter()
            .filter(|message| matches!(message, Message::User { .. }))
            .take(1)
            .cloned()
            .collect()
    }));
    let custom = triage(&triage_model, &billing_model, first_user_only);
    let history = vec![Message::user("Hello."), Message::user("Refund?")];
    let out = custom.run("And now?").history(history).await.unwrap();
    assert_eq!(out.text, "Only the greeting.");
    let seen = contents(&billing_model.requests()[1].messages);
    assert_eq!(seen, ["You handle billing.", "Hello."]);
}

#[tokio::test]
async fn a_summary_is_written_by_the_handing_model_and_passed_on() {
    let triage_model = ScriptedModel::new([
        // No summary: the tool's schema asks for one, and the model is told what to fix.
        hand_to_billing("h1"),
        AssistantMessage::tool_calls([ToolCall::new(
            "h2",
            "transfer_to_billing",
            r#"{"summary":"Mei, order 7, wants her refund."}"#,
        )]),
    ]);
    let billing_model = ScriptedModel::new([AssistantMessage::text("Refund sent, Mei.")]);
    let agent = triage(&triage_model, &billing_model, HandoffHistory::Summary);
    let out = agent.run("My refund, please.").await.unwrap();

    assert_eq!(out.text, "Refund sent, Mei.");
    let offered = &triage_model.requests()[0].tools[0];
    assert_eq!(
        offered.parameters["required"],
        serde_json::json!(["summary"])
    );
    let first = agent_results(&out.messages)[0].clone();
    assert!(first.is_error, "{first:?}");
    assert!(first.content.contains("summary"), "{}", first.content);
    let seen = contents(&billing_model.requests()[0].messages);
    assert_eq!(seen[0], "You handle billing.");
    assert!(
        seen[1].contains("Mei, order 7, wants her refund."),
        "{seen:?}"
    );
    assert_eq!(seen[2], "My refund, please.");
    assert_eq!(seen.len(), 3);
}

fn agent_results(messages: &[Message]) -> Vec<agent_core::ToolResultMessage> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool(result) => Some(result.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_later_turn_of_a_session_goes_to_the_agent_that_holds_it() {
    let triage_model = ScriptedModel::new([hand_to_billing("h1")]);
    let billing_model = ScriptedModel::new([
        AssistantMessage::text("Refund sent."),
        AssistantMessage::text("It takes three days."),
    ]);
    let agent = triage(
        &triage_model,
        &billing_model,
        HandoffHistory::LastUserMessage,
    );
    let store = MemorySessions::new();

    let first = agent
        .run("Refund, please.")
        .session(&store, "mei")
        .await
        .unwrap();
    assert_eq!(first.agent, path("billing"));
    let second = agent.run("How long?").session(&store, "mei").await.unwrap();

    assert_eq!(second.text, "It takes three days.");
    assert_eq!(second.agent, path("billing"));
    assert_eq!(
        triage_model.requests().len(),
        1,
        "triage is not asked again"
    );
    // Billing sees the question it was handed and everything since, under its own prompt.
    let seen = contents(&billing_model.requests()[1].messages);
    assert_eq!(
        seen,
        [
            "You handle billing.",
            "Refund, please.",
            "Refund sent.",
            "How long?"
        ]
    );
    let stored = agent_core::session::SessionStore::load(&store, "mei")
        .await
        .unwrap();
    assert_eq!(stored.messages.len(), 7);
    // The session says which agent holds the conversation.
    assert_eq!(agent.holding(&stored.messages), &path("billing"));
    assert_eq!(agent.holding(&stored.messages[..2]), &path("triage"));
}

/// Refunds an order.
#[tool(requires_approval)]
fn refund(order: String) -> String {
    format!("refunded {order}")
}

#[tokio::test]
async fn a_call_waiting_after_a_hand_off_resumes_with_the_agent_that_holds_it() {
    let billing_model = ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("b1", "refund", r#"{"order":"7"}"#)]),
        AssistantMessage::text("Refunded."),
    ]);
    let billing = agent_core::agent!(billing_model.clone(), refund)
        .named("billing")
        .defer_approvals();
    let triage_model = ScriptedModel::new([hand_to_billing("h1")]);
    let agent = Agent::new(triage_model.clone())
        .named("triage")
        .try_handoff(Handoff::to(billing, "Refunds."))
        .unwrap();

    let paused = agent.run("Refund order 7").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::Paused);
    assert_eq!(paused.agent, path("billing"));
    let waiting = paused.paused.unwrap();
    assert_eq!(waiting.pending()[0].call.name, "refund");

    let out = agent
        .resume(waiting, [("b1", Decision::Approve)])
        .await
        .unwrap();

    assert_eq!(out.text, "Refunded.");
    assert_eq!(out.agent, path("billing"));
    assert_eq!(agent_results(&out.messages)[1].content, "refunded 7");
    assert_eq!(triage_model.requests().len(), 1);
}

#[tokio::test]
async fn a_streamed_hand_off_streams_both_agents_and_ends_once() {
    use futures_util::StreamExt;
    let triage_model = ScriptedModel::new([hand_to_billing("h1")]);
    let billing_model = ScriptedModel::new([AssistantMessage::text("Done.")]);
    let agent = triage(&triage_model, &billing_model, HandoffHistory::All);

    let events: Vec<agent_core::RunEvent> = agent.run("Refund").stream().collect().await;

    let finished = events
        .iter()
        .filter(|event| matches!(event, agent_core::RunEvent::Finished(_)))
        .count();
    assert_eq!(finished, 1);
    let text: String = events
        .iter()
        .filter_map(|event| match event {
            agent_core::RunEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Done.");
    let Some(agent_core::RunEvent::Finished(Ok(out))) = events.last() else {
        panic!("the run ends last");
    };
    assert_eq!(out.agent, path("billing"));
}
