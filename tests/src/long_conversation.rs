//! A long conversation against a model with a small context window, shared by the context-policy
//! tests and the session stores' (SQLite in `context_policy.rs`, PostgreSQL in
//! `sessions_postgres.rs`): the model refuses a request over its window as a provider does, and
//! each turn is a note, then an answer.

use std::ops::Range;
use std::sync::Arc;

use agent_core::context::Summarize;
use agent_core::session::{Conversation, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, English, Message, Model,
    ModelError, RunError, Texts, ToolCall, Usage, tool,
};

/// The context window of [`SmallContext`], in its tokens (characters / 4).
pub const CONTEXT: usize = 2_000;

/// A model with a small context window: a request longer than it is refused as providers refuse
/// one (a 400 the adapters read as `ContextOverflow`), before the scripted model answers; each
/// answer says how many tokens it counted.
pub struct SmallContext(pub ScriptedModel);

/// The characters of a request's messages, as the test models count them.
pub fn characters(request: &ChatRequest<'_>) -> usize {
    message_characters(request.messages)
}

/// The characters of `messages`, as the test models count them.
pub fn message_characters(messages: &[Message]) -> usize {
    messages
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

/// A refusal of a request of `tokens` tokens, as an adapter reads a vendor's (whose message
/// says both counts).
pub fn too_long(tokens: usize) -> ModelError {
    ModelError::ContextOverflow {
        status: 400,
        message: format!("{tokens} tokens is more than the context window of {CONTEXT}"),
        tokens: Some(tokens as u64),
        limit: Some(CONTEXT as u64),
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
    converse_turns(agent, store, 0..turns).await
}

/// Runs the turns `turns` of one conversation in `store`, each a run of `agent`.
pub async fn converse_turns(
    agent: &Agent,
    store: &dyn SessionStore,
    turns: Range<usize>,
) -> Result<(), (usize, RunError)> {
    for turn in turns {
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

/// A summarizer whose summaries are numbered, each reply saying what it used.
fn summarizer() -> Arc<ScriptedModel> {
    let summaries = (0..300).map(|index| {
        ChatResponse::new(AssistantMessage::text(format!("summary {index}")))
            .with_usage(Usage::new(400, 60))
    });
    Arc::new(ScriptedModel::new(summaries))
}

/// Three hundred turns of one conversation kept within the window by summaries: the first 150 in
/// `store`, the rest in `reopened` (the same database opened again, as by another process) by an
/// agent made anew. No request is refused; each summary is stored with the messages it stands for
/// (up to where a turn starts), the originals whole beside it; the conversation's usage is every
/// request's and every summary's; and after the reload the stored summary is sent again or taken
/// in by the next one: nothing is summarized from the start again.
pub async fn three_hundred_turns_summarized(store: &dyn SessionStore, reopened: &dyn SessionStore) {
    let window = CONTEXT as u64 * 8 / 10;
    let small = Arc::new(model(300));
    let summaries = summarizer();
    let agent = |summarizer: &Arc<ScriptedModel>| {
        Agent::new(Arc::clone(&small))
            .try_tool(note {})
            .unwrap()
            .context_policy(Summarize::new(Arc::clone(summarizer), window))
    };
    converse_turns(&agent(&summaries), store, 0..150)
        .await
        .unwrap();
    let stored = store.load("support").await.unwrap();
    assert_eq!(stored.messages.len(), 1 + 150 * 4);
    let made = summaries.requests().len();
    assert!(made > 1, "{made} summaries over 150 turns");
    assert_summaries_stand_for_turns(&stored, made);
    // Every request's usage and every summary's, summed in the store.
    let requests = small.0.requests();
    let counted: u64 = (requests.iter())
        .map(|request| message_characters(&request.messages) as u64 / 4)
        .sum();
    let total = stored.usage.total();
    assert_eq!(total.input_tokens, counted + 400 * made as u64);
    assert_eq!(total.output_tokens, 60 * made as u64);

    // Another process: the store opened again, the agent made anew.
    let latest = stored.summaries.last().unwrap().text.clone();
    let later = summarizer();
    converse_turns(&agent(&later), reopened, 150..300)
        .await
        .unwrap();
    let first_after = &small.0.requests()[requests.len()];
    let sent_again = first_after.messages[1] == Message::user(English.context_summary(&latest));
    let taken_in = (later.requests().first())
        .is_some_and(|request| request.messages[0].content().contains(&latest));
    assert!(
        sent_again || taken_in,
        "after the reload, the stored summary was neither sent nor taken in"
    );
    assert!(
        (later.requests().iter())
            .all(|request| !request.messages[0].content().contains(&question(0))),
        "a summary was made from the start again"
    );
    let stored = reopened.load("support").await.unwrap();
    assert_eq!(stored.messages.len(), 1 + 300 * 4);
    assert_eq!(stored.messages[1], Message::user(question(0)));
    assert_summaries_stand_for_turns(&stored, made + later.requests().len());
}

/// `stored` has the summaries `requests` summarizer requests made (a summary made in several
/// requests when the turns it stands for do not fit in one), each standing for the conversation
/// from its start to where a turn starts, each further than the last, its usage that of its
/// requests.
fn assert_summaries_stand_for_turns(stored: &Conversation, requests: usize) {
    let count = stored.summaries.len();
    assert!(
        count >= 1 && count <= requests,
        "{count} summaries of {requests} requests"
    );
    let used = (stored.summaries.iter()).fold(Usage::default(), |sum, summary| sum + summary.usage);
    let each = Usage::new(400, 60);
    assert_eq!(used.input_tokens, each.input_tokens * requests as u64);
    assert_eq!(used.output_tokens, each.output_tokens * requests as u64);
    let mut end = 0;
    for summary in &stored.summaries {
        assert_eq!(summary.covers.start, 0);
        assert!(summary.covers.end > end, "{:?}", stored.summaries);
        end = summary.covers.end;
        assert!(
            matches!(stored.messages[end], Message::User { .. }),
            "summary {:?} ends inside a turn",
            summary.covers
        );
        assert!(summary.text.starts_with("summary "), "{}", summary.text);
        let requests = summary.usage.input_tokens / each.input_tokens;
        assert!(requests >= 1, "{:?}", summary.usage);
        assert_eq!(summary.usage.output_tokens, each.output_tokens * requests);
    }
}
