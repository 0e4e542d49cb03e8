//! What a context policy does at the edges of its window, against models that refuse a request
//! over their own window as providers do: a tool result larger than the window is sent as a note
//! and read back a page at a time, never over the window; a request that cannot fit at all fails
//! before anything is sent; a provider that counts fewer tokens in its replies than it refuses at,
//! and a window set larger than the model's, are each refused once and then learned; a summary of
//! turns that hold a result larger than the window is made in requests that fit.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::context::{RECALL_TOOL, Summarize, TokenWindow};
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, English, Message, Model,
    ModelError, RunError, Texts, ToolCall, tool,
};
use tests::long_conversation::{
    CONTEXT, characters, converse, counted, model, note, question, too_long,
};

/// The size of [`dump`]'s result, in characters: about six times [`CONTEXT`] in tokens.
const DUMP: usize = 48_000;

/// Dumps a log far larger than any window.
#[tool]
fn dump() -> String {
    (0..DUMP / 8).map(|line| format!("{line:07}\n")).collect()
}

/// A model whose window is `window` tokens (four characters each): a longer request is refused,
/// and counted.
struct Refusing {
    model: ScriptedModel,
    window: usize,
    refusals: AtomicUsize,
}

impl Refusing {
    /// A model with a window of [`CONTEXT`] tokens.
    fn new(replies: impl IntoIterator<Item = AssistantMessage>) -> Self {
        Refusing::with_window(CONTEXT, replies)
    }

    fn with_window(window: usize, replies: impl IntoIterator<Item = AssistantMessage>) -> Self {
        Refusing {
            model: ScriptedModel::new(replies),
            window,
            refusals: AtomicUsize::new(0),
        }
    }
}

impl Model for Refusing {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let tokens = counted(&request);
        if tokens > self.window {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            return Box::pin(std::future::ready(Err(too_long(tokens))));
        }
        self.model.chat(request)
    }
}

fn recall(call: &str, from: Option<usize>) -> AssistantMessage {
    let arguments = match from {
        Some(from) => format!(r#"{{"call_id":"d1","from":{from}}}"#),
        None => r#"{"call_id":"d1"}"#.to_owned(),
    };
    AssistantMessage::tool_calls([ToolCall::new(call, RECALL_TOOL, arguments)])
}

/// A result six times the window, with results not shortened by choice: it is sent as a note all
/// the same (sent whole, the request would be refused), and read back a page at a time, each page
/// fitting with room to spare and saying where the next starts.
#[tokio::test]
async fn a_result_larger_than_the_window_is_a_note_read_back_in_pages() {
    let window = CONTEXT as u64 * 8 / 10;
    let page = window as usize;
    let model = Arc::new(Refusing::new([
        AssistantMessage::tool_calls([ToolCall::new("d1", "dump", "{}")]),
        recall("r1", None),
        recall("r2", Some(page)),
        AssistantMessage::text("The log ends at line 0005999."),
    ]));
    let agent = Agent::new(Arc::clone(&model))
        .result_limit(DUMP)
        .try_tool(dump {})
        .unwrap()
        .context_policy(TokenWindow::new(window));
    let out = agent
        .run("What is the last line of the log?")
        .await
        .unwrap();
    assert_eq!(out.text, "The log ends at line 0005999.");
    assert_eq!(model.refusals.load(Ordering::Relaxed), 0);
    let requests = model.model.requests();
    assert_eq!(requests.len(), 4);
    // The result goes as a note, and the tool to read it is offered.
    let note = English.result_left_out(DUMP, "d1", RECALL_TOOL);
    assert!(
        requests[1].messages.iter().any(|m| m.content() == note),
        "{:#?}",
        requests[1].messages
    );
    assert!(
        requests[1]
            .tools
            .iter()
            .any(|tool| tool.name == RECALL_TOOL)
    );
    // Each page is read whole by the request after it, and says how to read on.
    let page_of = |id: &str| {
        (out.messages.iter())
            .find_map(|message| match message {
                Message::Tool(result) if result.tool_call_id == id => Some(&result.content),
                _ => None,
            })
            .unwrap()
    };
    let first = page_of("r1");
    let next = English.result_page(0, page, DUMP, "d1", RECALL_TOOL);
    assert!(
        first.starts_with("0000000\n") && first.ends_with(&next),
        "{first}"
    );
    assert_eq!(first.chars().count(), page + 2 + next.chars().count());
    assert!(requests[2].messages.iter().any(|m| m.content() == first));
    let second = page_of("r2");
    assert!(
        second.starts_with(&dump_text()[page..page + 16]),
        "{second}"
    );
    assert!(requests[3].messages.iter().any(|m| m.content() == second));
}

fn dump_text() -> String {
    (0..DUMP / 8).map(|line| format!("{line:07}\n")).collect()
}

/// A system prompt larger than the window leaves nothing to cut: the run fails with what does
/// not fit, and the model is never asked.
#[tokio::test]
async fn a_request_that_cannot_fit_fails_before_it_is_sent() {
    let model = Arc::new(Refusing::new([AssistantMessage::text("never")]));
    let agent = Agent::new(Arc::clone(&model))
        .system("Follow the handbook. ".repeat(2_000))
        .context_policy(TokenWindow::new(1_000));
    let error = agent.run("Hello").await.unwrap_err();
    let RunError::Model {
        source: ModelError::DoesNotFit { needed, window },
        ..
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(*window, 1_000);
    assert!(*needed > 10_000, "{needed}");
    assert!(
        error.to_string().contains("context window is 1000"),
        "{error}"
    );
    assert!(model.model.requests().is_empty());
}

/// A provider that counts a token for every two characters when it refuses, and reports a
/// quarter of that in its replies' usage (as some under-report): its refusal says both counts.
struct UnderReporting {
    model: ScriptedModel,
    refusals: AtomicUsize,
}

impl Model for UnderReporting {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let tokens = characters(&request) / 2;
        if tokens > CONTEXT {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            return Box::pin(std::future::ready(Err(too_long(tokens))));
        }
        Box::pin(async move {
            let mut reply = self.model.chat(request).await?;
            reply.usage.input_tokens = (tokens / 4) as u64;
            Ok(reply)
        })
    }
}

/// The replies' usage would set the estimate too low again after every refusal; the refusal's own
/// count holds it up, and the model's window, larger in the agent's setting, is learned from it:
/// a hundred turns, one refusal.
#[tokio::test]
async fn a_provider_that_under_reports_and_a_window_set_too_large_are_refused_once() {
    let model = Arc::new(UnderReporting {
        model: model(100).0,
        refusals: AtomicUsize::new(0),
    });
    let agent = Agent::new(Arc::clone(&model))
        .try_tool(note {})
        .unwrap()
        .context_policy(TokenWindow::new(CONTEXT as u64 * 4));
    let store = MemorySessions::new();
    converse(&agent, &store, 100).await.unwrap();
    assert_eq!(model.refusals.load(Ordering::Relaxed), 1);
    let stored = store.load("support").await.unwrap();
    assert_eq!(stored.messages.len(), 1 + 100 * 4);
    // The last request fills the model's window, not the setting's.
    let requests = model.model.requests();
    let last = characters(&ChatRequest::new(&requests[199].messages, &[])) / 2;
    assert!(last > CONTEXT / 2 && last <= CONTEXT, "{last}");
}

/// A summarizer with the same window, which refuses what is longer.
fn summarizer() -> Arc<Refusing> {
    Arc::new(Refusing::new(
        (0..100).map(|index| AssistantMessage::text(format!("summary {index}"))),
    ))
}

/// Dumps two logs in the second turn, then notes and answers: a conversation whose old turns hold
/// two results of 48,000 characters, with a model whose window takes that turn (a window twenty
/// times the summarizer's).
fn dumping_model(turns: usize) -> Refusing {
    let mut replies = Vec::new();
    for turn in 0..turns {
        let calls = match turn {
            1 => vec![
                ToolCall::new("dump-a", "dump", "{}"),
                ToolCall::new("dump-b", "dump", "{}"),
            ],
            _ => vec![ToolCall::new(
                format!("call-{turn}"),
                "note",
                r#"{"text":"a note"}"#,
            )],
        };
        replies.push(AssistantMessage::tool_calls(calls));
        replies.push(AssistantMessage::text(format!("Turn {turn}: done.")));
    }
    Refusing::with_window(CONTEXT * 20, replies)
}

/// The old turns hold a result far larger than the summarizer's window: it is summarized in
/// requests that fit (the result cut, with the marker), and every later turn goes on (sent whole,
/// the summary's request was refused and so was every turn after it).
#[tokio::test]
async fn a_summary_of_turns_with_a_result_larger_than_the_window_is_made_in_requests_that_fit() {
    let window = CONTEXT as u64 * 8 / 10;
    let summaries = summarizer();
    let model = Arc::new(dumping_model(12));
    let agent = Agent::new(Arc::clone(&model))
        .result_limit(DUMP)
        .try_tool(note {})
        .unwrap()
        .try_tool(dump {})
        .unwrap()
        .context_policy(
            // A summarizer with a window of a quarter of the agent's: the turn with the dumps
            // does not fit in one of its requests even once they are cut.
            Summarize::new(Arc::clone(&summaries), window)
                .keeping(window / 4)
                .summarizer_window(window / 4),
        );
    let store = MemorySessions::new();
    for turn in 0..12 {
        let out = agent.run(question(turn)).session(&store, "logs").await;
        assert_eq!(
            out.unwrap().text,
            format!("Turn {turn}: done."),
            "turn {turn}"
        );
    }
    assert_eq!(summaries.refusals.load(Ordering::Relaxed), 0);
    assert_eq!(model.refusals.load(Ordering::Relaxed), 0);
    let asked = summaries.model.requests();
    assert!(!asked.is_empty());
    let cut =
        (asked.iter()).any(|request| request.messages[0].content().contains("result truncated"));
    assert!(cut, "the dumps were sent to the summarizer whole");
    let stored = store.load("logs").await.unwrap();
    // Some summary was made in more than one request.
    assert!(asked.len() > stored.summaries.len(), "{asked:#?}");
    // Each summary takes in the one before: a summary made in several requests, and the next cut.
    for (index, request) in asked.iter().enumerate().skip(1) {
        let previous = format!(":\nsummary {}\n", index - 1);
        assert!(request.messages[0].content().contains(&previous), "{index}");
    }
    // The system prompt, four messages a turn, and the second dump's result.
    assert_eq!(stored.messages.len(), 1 + 12 * 4 + 1);
}
