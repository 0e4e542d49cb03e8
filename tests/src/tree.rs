//! Fixtures for the tests of agents that call agents: a model that takes a moment before each
//! reply, replies that say or call, the call of a `research` agent tool, and small tools.

use std::time::Duration;

use agent_core::testing::ScriptedModel;
use agent_core::{
    AgentPath, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Model, ModelError, ToolCall,
    Usage, tool,
};

/// A model that takes a moment before each reply, as a real one does: runs started together
/// then all ask before any is answered.
#[derive(Clone)]
pub struct Slow(pub ScriptedModel);

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

/// The agent path `text` names.
pub fn path(text: &str) -> AgentPath {
    text.parse().unwrap()
}

/// A reply that says `text`, using `usage`.
pub fn said(text: &str, usage: Usage) -> ChatResponse {
    ChatResponse::new(AssistantMessage::text(text)).with_usage(usage)
}

/// A reply that makes `calls`, using `usage`.
pub fn calling(calls: impl IntoIterator<Item = ToolCall>, usage: Usage) -> ChatResponse {
    ChatResponse::new(AssistantMessage::tool_calls(calls)).with_usage(usage)
}

/// A call `id` of the `research` agent tool, asking `question`.
pub fn research(id: &str, question: &str) -> ToolCall {
    let arguments = serde_json::json!({ "input": question }).to_string();
    ToolCall::new(id, "research", arguments)
}

/// Looks a word up.
#[tool]
pub fn lookup(word: String) -> String {
    format!("{word}: a small bird")
}

/// Waits until the run is cut off.
#[tool]
pub async fn wait_forever() -> String {
    std::future::pending::<()>().await;
    unreachable!()
}
