//! Streaming: a model's reply as it arrives, and a live view of a run that ends with exactly what
//! `run` returns.

use agent_core::testing::ScriptedModel;
use agent_core::{
    AssistantMessage, BoxFuture, BoxStream, ChatRequest, ChatResponse, Model, ModelError, RunError,
    RunEvent, StreamEvent, Usage, agent,
};
use futures_util::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tests::{call, get_weather, model_calling};

/// Renders events compactly so a whole stream can be compared at once.
fn describe(event: &RunEvent) -> String {
    match event {
        RunEvent::StepStarted { step } => format!("step {step}"),
        RunEvent::TextDelta(text) => format!("text {text:?}"),
        RunEvent::ToolCallRequested(call) => format!("call {} {}", call.id, call.name),
        RunEvent::ToolResult(result) => {
            format!("result {} error={}", result.tool_call_id, result.is_error)
        }
        RunEvent::StepFinished { step, usage, .. } => {
            format!("end {step} ({} in)", usage.input_tokens)
        }
        RunEvent::Finished(Ok(output)) => format!("finished {:?}", output.text),
        RunEvent::Finished(Err(error)) => format!("failed {error}"),
        _ => "other".to_owned(),
    }
}

#[tokio::test]
async fn a_streamed_run_shows_each_step_and_ends_with_what_run_returns() {
    let script = || {
        model_calling(
            [call(0, "get_weather", r#"{"city":"北京"}"#)],
            "Take an umbrella.",
        )
    };
    let expected = agent!(script(), get_weather)
        .run("Umbrella?")
        .await
        .unwrap();

    let agent = agent!(script(), get_weather);
    let events: Vec<RunEvent> = agent.run("Umbrella?").stream().collect().await;
    let described: Vec<String> = events.iter().map(describe).collect();
    assert_eq!(
        described,
        [
            "step 1",
            "call call_0 get_weather",
            "result call_0 error=false",
            "end 1 (0 in)",
            "step 2",
            "text \"Take an umbrella.\"",
            "end 2 (0 in)",
            "finished \"Take an umbrella.\"",
        ]
    );
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!()
    };
    assert_eq!(*output, expected);
}

/// A model with native streaming: its text comes in pieces, and it can be told to break off.
struct Typist {
    pieces: Vec<&'static str>,
    break_off: bool,
}

impl Model for Typist {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let text: String = self.pieces.concat();
        Box::pin(async move { Ok(ChatResponse::new(AssistantMessage::text(text))) })
    }

    fn chat_stream<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let mut events: Vec<Result<StreamEvent, ModelError>> = self
            .pieces
            .iter()
            .map(|piece| Ok(StreamEvent::TextDelta((*piece).to_owned())))
            .collect();
        if !self.break_off {
            events.push(Ok(StreamEvent::Usage(Usage::new(7, 3))));
            let reply = ChatResponse::new(AssistantMessage::text(self.pieces.concat()))
                .with_usage(Usage::new(7, 3));
            events.push(Ok(StreamEvent::Finished(reply)));
        }
        Box::pin(futures_util::stream::iter(events))
    }
}

#[tokio::test]
async fn text_arrives_in_pieces_from_a_natively_streaming_model() {
    let agent = agent!(
        Typist {
            pieces: vec!["北", "京今天", "有雨。"],
            break_off: false
        },
        get_weather
    );
    let events: Vec<String> = agent
        .run("天气？")
        .stream()
        .map(|event| describe(&event))
        .collect()
        .await;
    assert_eq!(
        events,
        [
            "step 1",
            "text \"北\"",
            "text \"京今天\"",
            "text \"有雨。\"",
            "end 1 (7 in)",
            "finished \"北京今天有雨。\""
        ]
    );
}

#[tokio::test]
async fn a_stream_that_breaks_off_is_a_typed_error_not_a_half_built_reply() {
    let agent = agent!(
        Typist {
            pieces: vec!["Light ", "ra"],
            break_off: true
        },
        get_weather
    );
    let events: Vec<RunEvent> = agent.run("weather?").stream().collect().await;
    let Some(RunEvent::Finished(Err(RunError::Model { source, step, .. }))) = events.last() else {
        panic!("{:?}", events.iter().map(describe).collect::<Vec<_>>())
    };
    assert_eq!(*step, 1);
    assert!(
        matches!(source, ModelError::Stream { message } if message.contains("ended before the reply was finished"))
    );
}

#[tokio::test]
async fn a_conversation_streams_across_turns() {
    let model = ScriptedModel::new([
        AssistantMessage::text("Hello!"),
        AssistantMessage::text("Still here."),
    ]);
    let agent = agent!(model.clone(), get_weather);
    let mut first = None;
    let mut stream = agent.run("hi").stream();
    while let Some(event) = stream.next().await {
        if let RunEvent::Finished(outcome) = event {
            first = Some(outcome.unwrap());
        }
    }
    let history = first.unwrap().messages;
    let events: Vec<String> = agent
        .run("you there?")
        .history(history)
        .stream()
        .map(|event| describe(&event))
        .collect()
        .await;
    assert_eq!(events.last().unwrap(), "finished \"Still here.\"");
    assert_eq!(model.requests()[1].messages.len(), 4);
}

/// A model without native streaming: one reply with text and a call, told by the default
/// `chat_stream`. Counts its calls, so a test can see when each step ran.
struct Plain {
    reply: ChatResponse,
    calls: Arc<AtomicUsize>,
}

impl Plain {
    fn new(reply: AssistantMessage) -> Self {
        let usage = Usage::new(5, 2);
        Plain {
            reply: ChatResponse::new(reply).with_usage(usage),
            calls: Default::default(),
        }
    }
}

impl Model for Plain {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(std::future::ready(Ok(self.reply.clone())))
    }
}

/// Describes a model's stream event compactly.
fn describe_model_event(event: &Result<StreamEvent, ModelError>) -> String {
    match event {
        Ok(StreamEvent::TextDelta(text)) => format!("text {text:?}"),
        Ok(StreamEvent::ToolCallStart { index, id, name }) => format!("start {index} {id} {name}"),
        Ok(StreamEvent::ToolCallArguments { index, fragment }) => {
            format!("args {index} {fragment}")
        }
        Ok(StreamEvent::Usage(usage)) => format!("usage {}", usage.input_tokens),
        Ok(StreamEvent::Finished(response)) => format!("finished {:?}", response.message.content),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn the_default_stream_tells_the_deltas_then_the_reply_that_holds_the_calls() {
    let reply = AssistantMessage::text("Checking.").with_tool_call(call(0, "get_weather", "{}"));
    let model = Plain::new(reply.clone());
    let messages = [agent_core::Message::user("Umbrella?")];
    let events: Vec<_> = model
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    let described: Vec<String> = events.iter().map(describe_model_event).collect();
    assert_eq!(described, ["text \"Checking.\"", "finished \"Checking.\""]);
    let Some(Ok(StreamEvent::Finished(response))) = events.last() else {
        panic!("{described:?}")
    };
    assert_eq!(response.message, reply);
    assert_eq!(response.usage.input_tokens, 5);
}

#[tokio::test]
async fn a_streamed_run_hands_out_each_step_before_the_next_begins() {
    // The model and the tool never wait, so nothing but the run itself can let the events out
    // between steps.
    let model = Plain::new(AssistantMessage::tool_calls([call(
        0,
        "get_weather",
        r#"{"city":"Paris"}"#,
    )]));
    let calls = Arc::clone(&model.calls);
    let agent = agent!(model, get_weather).max_steps(3);
    let mut stream = agent.run("Umbrella?").stream();
    let mut seen = Vec::new();
    while let Some(event) = stream.next().await {
        if let RunEvent::StepFinished { step, .. } = event {
            seen.push((step, calls.load(Ordering::SeqCst)));
        }
    }
    assert_eq!(seen, [(1, 1), (2, 2), (3, 3)]);
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Question {
    /// What to ask
    question: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_streams_a_run_of_its_own_keeps_each_runs_events_apart() {
    // The expert's run is streamed inside the outer run's tool call, in the same poll: its
    // events must reach its own stream, and none of them the outer one.
    let expert = Arc::new(agent_core::Agent::new(ScriptedModel::new([
        AssistantMessage::text("Ask the "),
    ])));
    let ask_expert = agent_core::tool_fn(
        "ask_expert",
        "Ask the expert.",
        move |Question { question }: Question| {
            let expert = Arc::clone(&expert);
            async move {
                let mut seen = Vec::new();
                let mut stream = expert.run(question).stream();
                while let Some(event) = stream.next().await {
                    seen.push(describe(&event));
                }
                seen.join(", ")
            }
        },
    );
    let agent = agent_core::Agent::new(model_calling(
        [call(0, "ask_expert", r#"{"question":"Which way?"}"#)],
        "The expert says: ask the locals.",
    ))
    .try_tool(ask_expert)
    .unwrap();
    // Consumed on another task, which may be polled on either worker thread.
    let events: Vec<RunEvent> = tokio::spawn(async move {
        agent
            .run("Which way to the station?")
            .stream()
            .collect()
            .await
    })
    .await
    .unwrap();
    let expert_saw = events.iter().find_map(|event| match event {
        RunEvent::ToolResult(result) => Some(result.content.as_str()),
        _ => None,
    });
    assert_eq!(
        expert_saw,
        Some(r#"step 1, text "Ask the ", end 1 (0 in), finished "Ask the ""#)
    );
    assert_eq!(
        events.iter().map(describe).collect::<Vec<_>>(),
        [
            "step 1",
            "call call_0 ask_expert",
            "result call_0 error=false",
            "end 1 (0 in)",
            "step 2",
            "text \"The expert says: ask the locals.\"",
            "end 2 (0 in)",
            "finished \"The expert says: ask the locals.\"",
        ]
    );
}
