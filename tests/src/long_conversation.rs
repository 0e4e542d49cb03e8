//! A long conversation against a model with a small context window, shared by the context-policy
//! tests and the session stores' (SQLite in `context_policy.rs`, PostgreSQL in
//! `sessions_postgres.rs`): the model refuses a request over its window as a provider does, and
//! each turn is a note, then an answer.

use agent_core::session::SessionStore;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message, Model, ModelError,
    RunError, ToolCall, tool,
};

/// The context window of [`SmallContext`], in its tokens (characters / 4).
pub const CONTEXT: usize = 2_000;

/// A model with a small context window: a request longer than it is refused as providers refuse
/// one (a 400 the adapters read as `ContextOverflow`), before the scripted model answers; each
/// answer says how many tokens it counted.
pub struct SmallContext(pub ScriptedModel);

/// The characters of a request's messages, as the test models count them.
pub fn characters(request: &ChatRequest<'_>) -> usize {
    request
        .messages
        .iter()
        .map(|message| match message {
            Message::Assistant(reply) => {
                reply.content.len()
                    + reply
                        .tool_calls
                        .iter()
                        .map(|call| call.name.len() + call.arguments.len())
                        .sum::<usize>()
            }
            other => other.content().len(),
        })
        .sum()
}

/// The tokens of a request as [`SmallContext`] counts them.
pub fn counted(request: &ChatRequest<'_>) -> usize {
    characters(request) / 4
}

/// A refusal of a request of `tokens` tokens, as an adapter reads a vendor's.
pub fn too_long(tokens: usize) -> ModelError {
    ModelError::ContextOverflow {
        status: 400,
        message: format!("{tokens} tokens is more than the context window of {CONTEXT}"),
    }
}

impl Model for SmallContext {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let tokens = counted(&request);
        if tokens > CONTEXT {
            return Box::pin(std::future::ready(Err(too_long(tokens))));
        }
        Box::pin(async move {
            let mut reply = self.0.chat(request).await?;
            reply.usage.input_tokens = tokens as u64;
            Ok(reply)
        })
    }
}

/// Writes a note down.
#[tool]
pub fn note(
    /// What to note.
    text: String,
) -> String {
    format!("noted: {text}, along with the date, the time and who asked, for the record")
}

/// Wipes a disk (a person approves it first).
#[tool(requires_approval)]
pub fn wipe(
    /// The disk.
    disk: String,
) -> String {
    format!("wiped {disk}")
}

/// A model for `turns` turns: each a note, then an answer.
pub fn model(turns: usize) -> SmallContext {
    let mut replies = Vec::new();
    for turn in 0..turns {
        replies.push(AssistantMessage::tool_calls([ToolCall::new(
            format!("call-{turn}"),
            "note",
            format!(r#"{{"text":"turn {turn} of a long support conversation"}}"#),
        )]));
        replies.push(AssistantMessage::text(format!(
            "Turn {turn}: noted, and here is a reply long enough to fill the window over time."
        )));
    }
    SmallContext(ScriptedModel::new(replies))
}

/// The question of turn `turn`.
pub fn question(turn: usize) -> String {
    format!("Question {turn}: could you note this down for me, please, and confirm it?")
}

/// Runs `turns` turns of one conversation in `store`, each a run of `agent`.
pub async fn converse(
    agent: &Agent,
    store: &dyn SessionStore,
    turns: usize,
) -> Result<(), (usize, RunError)> {
    for turn in 0..turns {
        let output = agent.run(question(turn)).session(store, "support").await;
        let output = output.map_err(|error| (turn, error))?;
        assert!(
            output.text.starts_with(&format!("Turn {turn}:")),
            "{}",
            output.text
        );
    }
    Ok(())
}

/// Three hundred turns of one conversation in `store`, each request kept within the window by a
/// token window: no request is refused, and the store keeps every message.
pub async fn three_hundred_turns_in_a_token_window(store: &dyn SessionStore) {
    let agent = Agent::new(model(300))
        .try_tool(note {})
        .unwrap()
        .context_policy(agent_core::context::TokenWindow::new(
            CONTEXT as u64 * 8 / 10,
        ));
    converse(&agent, store, 300).await.unwrap();
    let stored = store.load("support").await.unwrap();
    // The system prompt, then per turn: the question, the call, its result, the answer.
    assert_eq!(stored.messages.len(), 1 + 300 * 4);
    assert_eq!(stored.messages[1], Message::user(question(0)));
}
