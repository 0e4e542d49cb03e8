//! A long conversation in a session against a model with a small context window, which refuses a
//! request over it as a provider does (`tests::long_conversation`): with a token window no request
//! is refused and the session keeps every message; with summaries the summary stands in for the
//! turns left out; without a policy, the run fails with the provider's refusal; a request refused
//! as too long is cut tighter and sent once more. And a call that waits for approval inside a
//! conversation cut to its last turn: the run pauses, resumes, and every request it sends is one a
//! provider accepts.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_core::context::{
    ContextPolicy, KeepLastTurns, RECALL_TOOL, Shape, Summarize, TokenCounter, TokenWindow, Turns,
    UnitKind,
};
use agent_core::session::{Append, MemorySessions, SessionStore};
use agent_core::testing::{RecordedRequest, ScriptedModel};
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Decision, English, Message,
    Model, ModelError, RunError, RunEvent, Texts, ToolCall, ToolDef, Usage,
};
use agent_sql::SqliteSessions;
use tests::long_conversation::{
    CONTEXT, characters, converse, message_characters, model, note, question,
    three_hundred_turns_in_a_token_window, three_hundred_turns_summarized, too_long, wipe,
};

#[tokio::test]
async fn three_hundred_turns_stay_in_a_token_window_and_the_session_keeps_them_all() {
    let directory = tempfile::tempdir().unwrap();
    let store = SqliteSessions::open(directory.path().join("support.db")).unwrap();
    three_hundred_turns_in_a_token_window(&store).await;
}

#[tokio::test]
async fn three_hundred_turns_are_summarized_the_summaries_stored_and_the_conversation_reloads() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("support.db");
    let store = SqliteSessions::open(&path).unwrap();
    let reopened = SqliteSessions::open(&path).unwrap();
    three_hundred_turns_summarized(&store, &reopened).await;
}

#[tokio::test]
async fn older_turns_are_summarized_once_per_cut_and_the_summary_stands_in_their_place() {
    let store = MemorySessions::new();
    let summarizer = Arc::new(ScriptedModel::new(
        (0..100).map(|index| AssistantMessage::text(format!("summary {index}"))),
    ));
    let small = Arc::new(model(120));
    let agent = Agent::new(Arc::clone(&small))
        .try_tool(note {})
        .unwrap()
        .context_policy(Summarize::new(
            Arc::clone(&summarizer),
            CONTEXT as u64 * 8 / 10,
        ));
    converse(&agent, &store, 120).await.unwrap();
    let summaries = summarizer.requests();
    // Each cut keeps half the window, so a summary serves many requests.
    let requests = small.0.requests();
    assert_eq!(requests.len(), 240);
    assert!(
        !summaries.is_empty() && summaries.len() * 10 < requests.len(),
        "{} summaries for {} requests",
        summaries.len(),
        requests.len()
    );
    // The summarizer reads the turns left out, and from the second summary on, the last one.
    let first = summaries[0].messages[0].content();
    assert!(first.contains(&question(0)), "{first}");
    let second = summaries[1].messages[0].content();
    assert!(second.contains("summary 0"), "{second}");
    assert!(!second.contains(&question(0)), "{second}");
    // The last request: the system prompt, then the latest summary in the run's words, then the
    // turns kept, the last one whole.
    let last = &requests.last().unwrap().messages;
    let latest = format!("summary {}", summaries.len() - 1);
    assert_eq!(last[1], Message::user(English.context_summary(&latest)));
    assert_eq!(last[last.len() - 3], Message::user(question(119)));
    // The conversation is stored whole.
    let stored = store.load("support").await.unwrap();
    assert_eq!(stored.messages.len(), 1 + 120 * 4);
}

#[tokio::test]
async fn without_a_policy_the_providers_refusal_ends_the_run() {
    let store = MemorySessions::new();
    let agent = Agent::new(model(300)).try_tool(note {}).unwrap();
    let (turn, error) = converse(&agent, &store, 300).await.unwrap_err();
    assert!(turn > 5 && turn < 300, "refused at turn {turn}");
    assert!(
        matches!(
            &error,
            RunError::Model { source: ModelError::ContextOverflow { message, .. }, .. }
                if message.contains("context window")
        ),
        "{error:?}"
    );
}

/// A model that counts a token for every two characters, more than the estimate does, and says
/// no count back: the window's estimate falls short until a refusal teaches it.
struct DenseTokens {
    model: ScriptedModel,
    refusals: AtomicUsize,
}

impl Model for DenseTokens {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let tokens = characters(&request) / 2;
        if tokens > CONTEXT {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            return Box::pin(std::future::ready(Err(too_long(tokens))));
        }
        self.model.chat(request)
    }
}

/// A conversation of 100 turns against [`DenseTokens`] in a token window, its tokens counted by
/// `counter` when given: how many requests the model refused, and the last request it answered.
async fn dense_conversation(counter: Option<TwoCharacters>) -> (usize, RecordedRequest) {
    let store = MemorySessions::new();
    let dense = Arc::new(DenseTokens {
        model: model(100).0,
        refusals: AtomicUsize::new(0),
    });
    let mut agent = Agent::new(Arc::clone(&dense))
        .try_tool(note {})
        .unwrap()
        .context_policy(TokenWindow::new(CONTEXT as u64 * 8 / 10));
    if let Some(counter) = counter {
        agent = agent.count_tokens_with(counter);
    }
    converse(&agent, &store, 100).await.unwrap();
    let mut requests = dense.model.requests();
    assert_eq!(requests.len(), 200);
    (
        dense.refusals.load(Ordering::Relaxed),
        requests.pop().unwrap(),
    )
}

#[tokio::test]
async fn a_request_refused_as_too_long_is_cut_tighter_and_sent_once_more() {
    // Refused once, when the history first outgrew the window; from then on estimated higher.
    let (refusals, _) = dense_conversation(None).await;
    assert_eq!(refusals, 1);
}

#[tokio::test]
async fn a_call_waiting_for_approval_survives_a_cut_and_resumes() {
    let store = MemorySessions::new();
    let mut replies = Vec::new();
    for turn in 0..3 {
        replies.push(AssistantMessage::text(format!("answer {turn}")));
    }
    replies.push(AssistantMessage::tool_calls([
        ToolCall::new("w", "wipe", r#"{"disk":"d1"}"#),
        ToolCall::new("n", "note", r#"{"text":"wiping d1"}"#),
    ]));
    replies.push(AssistantMessage::text("d1 is wiped."));
    let scripted = Arc::new(ScriptedModel::new(replies));
    let agent = Agent::new(Arc::clone(&scripted))
        .try_tool(note {})
        .unwrap()
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals()
        .context_policy(KeepLastTurns(1));
    for turn in 0..3 {
        let output = agent.run(question(turn)).session(&store, "ops").await;
        assert_eq!(output.unwrap().text, format!("answer {turn}"));
    }
    let paused = agent
        .run("Wipe d1, and note it.")
        .session(&store, "ops")
        .await
        .unwrap();
    assert!(paused.paused.is_some());
    let resumed = agent
        .resume_session([("w", Decision::Approve)])
        .session(&store, "ops")
        .await
        .unwrap();
    assert_eq!(resumed.text, "d1 is wiped.");
    let requests = scripted.requests();
    let last = &requests.last().unwrap().messages;
    // The last turn only: the system prompt, the question, the reply with its two calls and both
    // results (the approved one and the one that ran before the pause).
    assert_eq!(last.len(), 5, "{last:#?}");
    assert_eq!(last[1], Message::user("Wipe d1, and note it."));
    let results: Vec<&str> = last[3..]
        .iter()
        .map(|message| match message {
            Message::Tool(result) => result.tool_call_id.as_str(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results.contains(&"w") && results.contains(&"n"));
    // The session keeps every turn.
    let stored = store.load("ops").await.unwrap();
    assert_eq!(stored.messages[1], Message::user(question(0)));
}

/// Counts tokens as [`DenseTokens`] does: a token for every two characters.
struct TwoCharacters;

impl TokenCounter for TwoCharacters {
    fn message(&self, message: &Message) -> u64 {
        message_characters(std::slice::from_ref(message)).div_ceil(2) as u64
    }

    fn tools(&self, _tools: &[ToolDef]) -> u64 {
        0
    }
}

#[tokio::test]
async fn a_token_counter_that_counts_as_the_provider_does_is_never_refused() {
    // Counted as the model counts, the window holds from the first request on: no refusal (the
    // estimate from characters is refused once before it learns, above).
    let (refusals, last) = dense_conversation(Some(TwoCharacters)).await;
    assert_eq!(refusals, 0);
    let tokens = message_characters(&last.messages) / 2;
    assert!(tokens > CONTEXT / 2 && tokens <= CONTEXT, "{tokens}");
}

/// Sends every result of a finished step as a note.
struct NotesOnly;

impl ContextPolicy for NotesOnly {
    fn shape<'a>(&'a self, turns: &'a Turns<'a>) -> BoxFuture<'a, Result<Shape, ModelError>> {
        let steps = (turns.units().iter().enumerate())
            .filter(|(_, unit)| unit.kind == UnitKind::Step)
            .map(|(index, _)| index);
        Box::pin(std::future::ready(
            Ok(Shape::everything().shortening(steps)),
        ))
    }
}

#[tokio::test]
async fn a_result_sent_as_a_note_is_read_back_when_the_model_asks() {
    let recall = |id: &str, call: &str| {
        AssistantMessage::tool_calls([ToolCall::new(
            call,
            RECALL_TOOL,
            format!(r#"{{"call_id":"{id}"}}"#),
        )])
    };
    let scripted = Arc::new(ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "n1",
            "note",
            r#"{"text":"the gate code is 4711"}"#,
        )]),
        AssistantMessage::text("Noted."),
        recall("n1", "r1"),
        recall("nope", "r2"),
        AssistantMessage::text("The gate code is 4711."),
    ]));
    let agent = Agent::new(Arc::clone(&scripted))
        .try_tool(note {})
        .unwrap()
        .context_policy(NotesOnly);
    let store = MemorySessions::new();
    let first = agent
        .run("Note the gate code: 4711.")
        .session(&store, "gate")
        .await
        .unwrap();
    assert_eq!(first.text, "Noted.");
    let out = agent
        .run("What was the gate code?")
        .session(&store, "gate")
        .await
        .unwrap();
    assert_eq!(out.text, "The gate code is 4711.");
    let requests = scripted.requests();
    // The second turn's first request: the result as a note that says how to read it, and the
    // tool to read it with offered beside the agent's.
    let asked = &requests[2];
    let note_text = English.result_left_out(
        note("the gate code is 4711".into()).chars().count(),
        "n1",
        RECALL_TOOL,
    );
    assert!(
        asked
            .messages
            .iter()
            .any(|message| message.content() == note_text),
        "{:#?}",
        asked.messages
    );
    let offered: Vec<&str> = asked.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(offered, ["note", RECALL_TOOL]);
    // The model asked: the result, whole, from the transcript; a call id with no result is told
    // which ids have one.
    let read = |id: &str| {
        out.messages
            .iter()
            .find_map(|message| match message {
                Message::Tool(result) if result.tool_call_id == id => Some(result.clone()),
                _ => None,
            })
            .unwrap()
    };
    assert_eq!(read("r1").content, note("the gate code is 4711".into()));
    assert!(!read("r1").is_error);
    let unknown = read("r2");
    assert!(
        unknown.is_error && unknown.content.contains(r#""n1""#),
        "{}",
        unknown.content
    );
    // Nothing ran: the note tool ran once, in the first turn.
    let stored = store.load("gate").await.unwrap();
    assert_eq!(stored.messages, out.messages);
}

#[tokio::test]
async fn a_streamed_run_tells_of_the_summary_it_makes_before_the_request_that_sends_it() {
    use futures_util::StreamExt;

    // Twenty earlier turns, past a window of 300 tokens.
    let mut history = vec![Message::system("Be brief.")];
    for turn in 0..20 {
        history.push(Message::user(question(turn)));
        history.push(Message::Assistant(AssistantMessage::text(format!(
            "Turn {turn}: noted, and here is a reply long enough to fill the window over time."
        ))));
    }
    let summarizer = ScriptedModel::new([AssistantMessage::text("They asked twenty questions.")]);
    // The summarizer's own window takes the twenty turns in one request.
    let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("Done.")]))
        .context_policy(Summarize::new(summarizer, 300).summarizer_window(10_000));
    let events: Vec<RunEvent> = agent
        .run(question(20))
        .history(history)
        .stream()
        .collect()
        .await;
    let summarized = events
        .iter()
        .position(|event| matches!(event, RunEvent::Summarized(_)));
    let text = events
        .iter()
        .position(|event| matches!(event, RunEvent::TextDelta(_)));
    assert!(summarized.is_some() && summarized < text, "{events:#?}");
    let Some(RunEvent::Summarized(summary)) = summarized.map(|at| &events[at]) else {
        unreachable!()
    };
    assert_eq!(summary.text, "They asked twenty questions.");
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{events:#?}");
    };
    assert_eq!(output.summaries, std::slice::from_ref(summary));
    assert!(matches!(
        output.messages[summary.covers.end],
        Message::User { .. }
    ));
}

#[tokio::test]
async fn a_summary_made_before_a_pause_is_counted_once_in_the_run_and_its_session() {
    let store = MemorySessions::new();
    // Twenty earlier turns, past a window of 300 tokens, in the session.
    let mut history = vec![Message::system("Be brief.")];
    for turn in 0..20 {
        history.push(Message::user(question(turn)));
        history.push(Message::Assistant(AssistantMessage::text(format!(
            "Turn {turn}: noted, and here is a reply long enough to fill the window over time."
        ))));
    }
    store
        .append("ops", 0, Append::messages(&history))
        .await
        .unwrap();
    let summary = ChatResponse::new(AssistantMessage::text("Twenty questions, noted."))
        .with_usage(Usage::new(400, 60));
    let replies = [
        ChatResponse::new(AssistantMessage::tool_calls([ToolCall::new(
            "w",
            "wipe",
            r#"{"disk":"d1"}"#,
        )]))
        .with_usage(Usage::new(100, 10)),
        ChatResponse::new(AssistantMessage::text("d1 is wiped.")).with_usage(Usage::new(100, 10)),
    ];
    let agent = Agent::new(ScriptedModel::new(replies))
        .try_tool(wipe {})
        .unwrap()
        .defer_approvals()
        .context_policy(
            // The summarizer's own window takes the twenty turns in one request.
            Summarize::new(ScriptedModel::new([summary]), 300).summarizer_window(10_000),
        );
    let paused = agent.run("Wipe d1.").session(&store, "ops").await.unwrap();
    assert!(paused.paused.is_some());
    assert_eq!(paused.summaries.len(), 1);
    assert_eq!(paused.usage, Usage::new(500, 70));
    let done = agent
        .resume_session([("w", Decision::Approve)])
        .session(&store, "ops")
        .await
        .unwrap();
    assert_eq!(done.text, "d1 is wiped.");
    // The summary made before the pause is sent again after it, not made again. It was counted
    // in the part of the run that made it (the run goes on from the pause's model calls), and
    // once in the session, with every model call.
    assert!(done.summaries.is_empty());
    assert_eq!(done.usage, Usage::new(200, 20));
    let stored = store.load("ops").await.unwrap();
    assert_eq!(stored.usage.total(), Usage::new(600, 80));
    assert_eq!(stored.summaries.len(), 1);
}
