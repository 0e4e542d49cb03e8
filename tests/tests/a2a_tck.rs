//! The A2A endpoint (`agent_a2a::A2aServer`) against the A2A technology compatibility kit: every
//! MUST test of the 1.0 suite on the JSON-RPC transport (`tests::a2a::run_tck`).
//!
//! The kit tells the agent under test what to do by the prefix of each message's id
//! (`tck-complete-task`, `tck-input-required`, `tck-artifact-file`, ...). The agent under test
//! here is an agent (an `AgentHandler`, a scripted model that reads the scenario from the message
//! and a tool that needs approval), behind a `TaskHandler` of the test's own that makes the
//! artifacts and the message-only answer the kit asks for itself: every task, stream, history,
//! cancel, subscription and error is the server's.

use std::sync::Arc;

use agent_a2a::{
    A2aServer, AgentCard, AgentHandler, Artifact, Capabilities, Message, MessagePart, RpcError,
    Skill, TaskHandler, Work,
};
use agent_core::session::MemorySessions;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message as CoreMessage, Model,
    ModelError, ToolCall,
};
use agent_web::CallGrants;
use tests::a2a::{A2A_TCK, run_tck};
use tests::peers::Test;

/// Deletes the scratch folder.
#[agent_core::tool(requires_approval)]
fn clean_scratch() -> String {
    "cleaned".to_owned()
}

/// A model that plays the kit's scenarios: the user's message starts with its id (see
/// [`Scenarios`]); a conversation whose last message is a call's result is answered.
struct ScenarioModel;

impl Model for ScenarioModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = match request.messages.last() {
            Some(CoreMessage::Tool(_)) => AssistantMessage::text("Hello from TCK"),
            Some(CoreMessage::User { content, .. }) => {
                let said = |prefix: &str| content.starts_with(prefix);
                if said("tck-input-required") {
                    AssistantMessage::tool_calls([ToolCall::new(
                        format!("call_{}", agent_core::RunId::new()),
                        "clean_scratch",
                        "{}",
                    )])
                } else if said("tck-complete-task") {
                    AssistantMessage::text("Hello from TCK")
                } else if said("tck-stream-001") {
                    AssistantMessage::text("Stream hello from TCK")
                } else if said("tck-stream-003") {
                    AssistantMessage::text("Stream task lifecycle")
                } else if said("tck-stream-ordering-001") {
                    AssistantMessage::text("Ordered output")
                } else if said("tck-stream-002") {
                    AssistantMessage::text("")
                } else {
                    let text = content.split_once('\n').map_or("", |(_, text)| text);
                    AssistantMessage::text(format!("echo: {text}"))
                }
            }
            _ => AssistantMessage::text("Hello from TCK"),
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(reply))))
    }
}

/// The agent under test: the kit's artifact and message scenarios made here, the rest the
/// agent's, its message's id put before its text for the model to read.
struct Scenarios {
    agent: AgentHandler<()>,
}

impl TaskHandler<()> for Scenarios {
    fn handle<'a>(&'a self, mut work: Work<'a, ()>) -> BoxFuture<'a, Result<(), RpcError>> {
        let id = work.message.message_id.clone();
        let updates = work.updates.clone();
        let made = |parts: Vec<MessagePart>| {
            updates.working();
            updates.artifact(Artifact::new(parts), false, true);
            updates.completed(None);
        };
        if id.starts_with("tck-message-response") {
            updates.reply(Message::agent(vec![MessagePart::text(
                "Direct message response",
            )]));
        } else if id.starts_with("tck-artifact-text") {
            made(vec![MessagePart::text("Generated text content")]);
        } else if id.starts_with("tck-artifact-file-url") {
            let url = "https://example.com/output.txt";
            made(vec![
                MessagePart::url(url, "text/plain").named("output.txt"),
            ]);
        } else if id.starts_with("tck-artifact-file") {
            made(vec![
                MessagePart::raw("dGNr", "text/plain").named("output.txt"),
            ]);
        } else if id.starts_with("tck-artifact-data") {
            let data = serde_json::json!({"key": "value", "count": 42});
            made(vec![MessagePart::data(data)]);
        } else {
            let text = format!("{id}\n{}", work.message.text());
            work.message.parts = vec![MessagePart::text(text)];
            return self.agent.handle(work);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn cancelled<'a>(&'a self, conversation: &'a str, task_id: &'a str) -> BoxFuture<'a, ()> {
        self.agent.cancelled(conversation, task_id)
    }
}

/// The kit's card for the agent under test (the server fills in where it is reached).
fn card() -> AgentCard {
    AgentCard {
        name: "TCK agent".into(),
        description: "The agent under test of the A2A TCK: an agent-core agent.".into(),
        supported_interfaces: Vec::new(),
        version: "1.0.0".into(),
        capabilities: Capabilities {
            streaming: true,
            push_notifications: false,
        },
        security_schemes: Default::default(),
        security_requirements: Vec::new(),
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![Skill {
            id: "scenarios".into(),
            name: "TCK scenarios".into(),
            description: "Answers each scenario of the kit.".into(),
            tags: vec!["tck".into()],
            examples: Vec::new(),
        }],
    }
}

/// Every MUST test of the kit passes.
async fn the_tck_must_tests_pass() {
    let agent: Agent = Agent::new(ScenarioModel)
        .try_tool(clean_scratch {})
        .unwrap()
        .defer_approvals();
    let agent = AgentHandler::new(
        Arc::new(agent),
        Arc::new(MemorySessions::new()),
        CallGrants::drawn(),
    );
    let server = A2aServer::with_handler(Scenarios { agent }, card());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    let run = run_tck(&url).await;
    eprintln!(
        "the A2A TCK: {} passed, {} skipped",
        run.passed, run.skipped
    );
    assert!(run.success && run.failed == 0, "{}", run.output);
    assert!(run.passed >= 81, "{} passed:\n{}", run.passed, run.output);
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio("the_tck_must_tests_pass", the_tck_must_tests_pass).needs(&A2A_TCK),
    ])
}
