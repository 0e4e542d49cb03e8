//! The agent under test of the [A2A TCK](https://github.com/a2aproject/a2a-tck), the protocol's
//! compatibility kit, so that anyone can check a server of this crate against it: in their own
//! deployment (behind their proxy, at their [`public_url`](crate::A2aServer::public_url)), or
//! their own agent's handler wrapped in [`Scenarios`].
//!
//! The kit says what it wants by the prefix of each message's id (its scenarios,
//! `scenarios/*.feature` in the kit): `tck-complete-task` completes the task with
//! `Hello from TCK`, `tck-input-required` waits for the client, `tck-artifact-text` (`-file`,
//! `-file-url`, `-data`) completes with an artifact of that kind, `tck-message-response` answers
//! with a message and no task, and so on. [`server`] is a whole agent under test: an agent whose
//! model plays each scenario ([`ScenarioModel`]), with a tool that needs approval for the
//! scenario that waits, behind [`Scenarios`], which makes the artifacts and the message-only
//! answer itself. Every task, stream, history, cancel, subscription and error is the server's.
//!
//! ```no_run
//! # async fn serve() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:9999").await?;
//! agent_a2a::tck::server().serve(listener).await
//! # }
//! ```
//!
//! and then, from the kit's folder:
//! `./run_tck.py --sut-host http://127.0.0.1:9999 --transport jsonrpc --level must`.

use std::sync::Arc;

use agent_core::session::MemorySessions;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message as CoreMessage, Model,
    ModelError, RunId, ToolCall,
};
use agent_web::CallGrants;

use crate::handler::{TaskHandler, Work};
use crate::jsonrpc::RpcError;
use crate::wire::{AgentCard, Artifact, Capabilities, Message, MessagePart, Skill};
use crate::{A2aServer, AgentHandler};

/// The agent under test of the kit on a server with the defaults of [`A2aServer`]: an agent on
/// [`ScenarioModel`] with the tool `clean_scratch`, which needs approval (the agent defers
/// approvals to the client, so `tck-input-required` waits), behind [`Scenarios`], described by
/// [`card`].
pub fn server() -> A2aServer {
    let agent: Agent = Agent::new(ScenarioModel).defer_approvals();
    // The agent has no other tool and the name is valid: adding it does not fail, and if it did
    // the agent would go on without it.
    let agent = (agent.try_tool(clean_scratch {})).unwrap_or_else(|refused| refused.into_agent());
    let handler: AgentHandler<()> = AgentHandler::new(
        Arc::new(agent),
        Arc::new(MemorySessions::new()),
        CallGrants::drawn(),
    );
    A2aServer::with_handler(Scenarios::new(handler), card())
}

/// Deletes the scratch folder: the call `tck-input-required` waits on.
#[agent_core::tool(requires_approval)]
fn clean_scratch() -> String {
    "cleaned".to_owned()
}

/// The card of the agent under test (the server fills in where it is reached).
pub fn card() -> AgentCard {
    AgentCard {
        name: "TCK agent".into(),
        description: "The agent under test of the A2A TCK: an agent-core agent.".into(),
        supported_interfaces: Vec::new(),
        version: "1.0.0".into(),
        capabilities: Capabilities {
            streaming: true,
            push_notifications: false,
        },
        security_schemes: serde_json::Map::new(),
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

/// A handler that answers the kit's scenarios that need no agent (`tck-message-response`, and
/// the artifacts of `tck-artifact-text`, `-file`, `-file-url`, `-data`) and hands every other
/// message to `H`, its id put on a line before its text (`tck-complete-task-1\nHello`), where a
/// model such as [`ScenarioModel`] reads the scenario.
pub struct Scenarios<H> {
    inner: H,
}

impl<H> Scenarios<H> {
    /// The kit's scenarios answered here, the rest by `inner`.
    pub fn new(inner: H) -> Self {
        Scenarios { inner }
    }
}

impl<S, H: TaskHandler<S>> TaskHandler<S> for Scenarios<H> {
    fn handle<'a>(&'a self, mut work: Work<'a, S>) -> BoxFuture<'a, Result<(), RpcError>> {
        let id = work.message.message_id.clone();
        let updates = work.updates.clone();
        let made = |parts: Vec<MessagePart>| {
            updates.working();
            updates.artifact(Artifact::new(parts), false, true);
            updates.completed(None);
        };
        let scenario = |prefix: &str| id.starts_with(prefix);
        if scenario("tck-message-response") {
            let text = MessagePart::text("Direct message response");
            updates.reply(Message::agent(vec![text]));
        } else if scenario("tck-artifact-text") {
            made(vec![MessagePart::text("Generated text content")]);
        } else if scenario("tck-artifact-file-url") {
            let url = "https://example.com/output.txt";
            made(vec![
                MessagePart::url(url, "text/plain").named("output.txt"),
            ]);
        } else if scenario("tck-artifact-file") {
            made(vec![
                MessagePart::raw("dGNr", "text/plain").named("output.txt"),
            ]);
        } else if scenario("tck-artifact-data") {
            let data = serde_json::json!({"key": "value", "count": 42});
            made(vec![MessagePart::data(data)]);
        } else {
            let text = format!("{id}\n{}", work.message.text());
            work.message.parts = vec![MessagePart::text(text)];
            return self.inner.handle(work);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn cancelled<'a>(&'a self, conversation: &'a str, task_id: &'a str) -> BoxFuture<'a, ()> {
        self.inner.cancelled(conversation, task_id)
    }
}

/// A model that plays the kit's scenarios: the user's message starts with its id (as
/// [`Scenarios`] hands it on), and each scenario gets the reply the kit expects
/// (`tck-input-required` a call to `clean_scratch`); a conversation whose last message is a
/// call's result is answered `Hello from TCK`; any other message is echoed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScenarioModel;

impl Model for ScenarioModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = match request.messages.last() {
            Some(CoreMessage::User { content, .. }) => scenario_reply(content),
            _ => AssistantMessage::text("Hello from TCK"),
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(reply))))
    }
}

/// The reply to the user's `content`, by the scenario its first line names.
fn scenario_reply(content: &str) -> AssistantMessage {
    let said = |prefix: &str| content.starts_with(prefix);
    if said("tck-input-required") {
        let id = format!("call_{}", RunId::new());
        return AssistantMessage::tool_calls([ToolCall::new(id, "clean_scratch", "{}")]);
    }
    let text = if said("tck-complete-task") {
        "Hello from TCK"
    } else if said("tck-stream-001") {
        "Stream hello from TCK"
    } else if said("tck-stream-003") {
        "Stream task lifecycle"
    } else if said("tck-stream-ordering-001") {
        "Ordered output"
    } else if said("tck-stream-002") {
        // A message-only stream: no artifact, the task completes.
        ""
    } else {
        let text = content.split_once('\n').map_or("", |(_, text)| text);
        return AssistantMessage::text(format!("echo: {text}"));
    };
    AssistantMessage::text(text)
}
