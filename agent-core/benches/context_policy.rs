//! What a context policy costs a request, next to building that request: on a history of 1,000
//! messages, `TokenWindow` reading it as turns and finding that it fits; reading it, cutting it to
//! half and building the history it keeps from nothing; and the same in a run, where the request
//! before (one turn shorter) was cut too, as a run's context layer does it (the messages still
//! kept are moved from the history it sent last, not copied again); beside them, building the
//! OpenAI request body for the whole history. The budget: a policy costs a run's request at most
//! 0.2x building it.
//!
//! `cargo bench -p agent-core --bench context_policy --features bench-internals`

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

use agent_core::context::{self, ContextPolicy, Shape, TokenWindow, Turns};
use agent_core::providers::__bench;
use agent_core::{
    AssistantMessage, ChatRequest, English, Message, ToolCall, ToolDef, ToolResultMessage,
};
use divan::{Bencher, black_box};
use serde_json::json;

fn main() {
    divan::main();
}

/// A system prompt, then 250 rounds of question, call, result, answer (1,001 messages).
fn conversation() -> Vec<Message> {
    let mut messages = vec![Message::system(
        "You are a travel assistant. Answer briefly; use the tools for facts.",
    )];
    for round in 0..250 {
        messages.push(Message::user(format!(
            "Round {round}: what is the weather in 北京 and should I take an umbrella?"
        )));
        messages.push(Message::Assistant(AssistantMessage::tool_calls([
            ToolCall::new(
                format!("call_{round}"),
                "get_weather",
                r#"{"city":"北京","unit":"celsius"}"#,
            ),
        ])));
        messages.push(Message::Tool(ToolResultMessage::new(
            format!("call_{round}"),
            r#"{"city":"北京","weather":"小雨","temp":18,"wind":"NE 3"}"#,
        )));
        messages.push(Message::Assistant(AssistantMessage::text(
            "Light rain and 18°C: yes, take an umbrella.",
        )));
    }
    messages
}

fn tools() -> Vec<ToolDef> {
    vec![ToolDef::new(
        "get_weather",
        "Today's weather for a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )]
}

/// The shape `policy` gives, its future polled once (the crate's policies answer at once).
fn shape(policy: &dyn ContextPolicy, turns: &Turns<'_>) -> Shape {
    let mut future = pin!(policy.shape(turns));
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(shape) => shape.expect("a shape"),
        Poll::Pending => panic!("the policy waited"),
    }
}

#[divan::bench]
fn openai_request(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::OpenAi::new("gpt-4o-mini");
    bencher.bench_local(|| {
        __bench::openai_request(&model, ChatRequest::new(black_box(&messages), &tools))
            .expect("a body")
    });
}

#[divan::bench]
fn token_window_fits(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let request = ChatRequest::new(&messages, &tools);
    let policy = TokenWindow::new(Turns::new(&request).tokens());
    bencher.bench_local(|| {
        let turns = Turns::new(black_box(&request));
        let shape = shape(&policy, &turns);
        assert!(shape.keeps_everything());
    });
}

#[divan::bench]
fn token_window_cuts(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let request = ChatRequest::new(&messages, &tools);
    let policy = TokenWindow::new(Turns::new(&request).tokens() / 2);
    bencher.bench_local(|| {
        let turns = Turns::new(black_box(&request));
        let shape = shape(&policy, &turns);
        turns.apply(&shape, &English)
    });
}

/// The turns a run's requests grow by in `token_window_in_a_run`.
const RUN_REQUESTS: usize = 50;

#[divan::bench(counter = divan::counter::ItemsCount::new(RUN_REQUESTS))]
fn token_window_in_a_run(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let window = Turns::new(&ChatRequest::new(&messages, &tools)).tokens() / 2;
    // The run's requests: each one turn (4 messages) longer, the last the whole history.
    let lengths: Vec<usize> = (0..RUN_REQUESTS)
        .map(|request| messages.len() - 4 * (RUN_REQUESTS - 1 - request))
        .collect();
    bencher.bench_local(|| {
        let mut run = context::__bench::Run::new(TokenWindow::new(window));
        for &length in &lengths {
            run.request(&ChatRequest::new(black_box(&messages[..length]), &tools));
        }
        run
    });
}
