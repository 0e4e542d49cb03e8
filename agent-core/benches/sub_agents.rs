//! What calling an agent as a tool costs beyond running the same child directly: a parent whose
//! model calls the child once and then answers, the child (three model calls, two tool calls)
//! run by `Agent::as_tool` (`child_as_tool`: its place in the tree, its output kept in the
//! parent's, its events and budget tied to the parent's) or by a plain closure tool that runs it
//! and returns its text (`child_in_a_tool_fn`, the floor). Every future completes without waiting.
//!
//! `cargo bench -p agent-core --bench sub_agents`.

// Only the weather tool and its model of the shared bench items are used here.
#[allow(dead_code)]
mod common;

use std::future::IntoFuture;
use std::sync::Arc;
use std::time::Duration;

use agent_core::{
    Agent, AgentInput, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Model, ModelError,
    RunOutput, ToolCall, ToolError, agent, tool_fn,
};
use common::{TurnsModel, get_weather};
use divan::Bencher;
use futures_util::FutureExt;

fn main() {
    divan::main();
}

/// The parent's model: it calls `research` once, then answers.
struct Parent;

impl Model for Parent {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = match request.messages.len() {
            2 => AssistantMessage::tool_calls([ToolCall::new(
                "call",
                "research",
                r#"{"input":"Umbrella in Beijing?"}"#,
            )]),
            _ => AssistantMessage::text("Take an umbrella."),
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(reply))))
    }
}

/// The child: two weather calls, then its answer.
fn child() -> Agent {
    let model = TurnsModel {
        turns: 3,
        latency: Duration::ZERO,
    };
    agent!(model, get_weather).named("research")
}

fn run(parent: &Agent) -> RunOutput {
    let output = (parent.run("Umbrella?").into_future())
        .now_or_never()
        .expect("ready")
        .expect("runs");
    debug_assert_eq!(output.messages[3].content(), "Take an umbrella.");
    output
}

/// The floor: the child run by a plain closure tool, its text returned.
#[divan::bench]
fn child_in_a_tool_fn(bencher: Bencher) {
    let child = Arc::new(child());
    let research = tool_fn("research", "Research.", move |args: AgentInput| {
        let child = Arc::clone(&child);
        async move {
            let output = child.run(args.input).await;
            output
                .map(|output| output.text)
                .map_err(|error| ToolError::failed(error.to_string()))
        }
    });
    let parent = Agent::new(Parent).try_tool(research).expect("one tool");
    bencher.bench_local(|| run(&parent));
}

/// The child as the parent's tool.
#[divan::bench]
fn child_as_tool(bencher: Bencher) {
    let research = child().as_tool("research", "Research.");
    let parent = Agent::new(Parent).try_tool(research).expect("one tool");
    let output = run(&parent);
    assert_eq!(output.children.len(), 1);
    bencher.bench_local(|| run(&parent));
}
