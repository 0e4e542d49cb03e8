//! Building a request body from a long conversation, per adapter, next to its floor: serializing
//! the adapter's own wire struct, built once, with `serde_json::to_vec`. The difference is what the
//! adapter adds: mapping the history onto its wire types and the tools through its dialect.
//!
//! The conversation: a system prompt and 200 messages (questions, replies with tool calls, tool
//! results, three with an image of 24 KiB), and 10 tools with nested parameters.
//!
//! `cargo bench -p agent-core --bench request_build --features bench-internals`

use agent_core::providers::__bench;
use agent_core::{
    AssistantMessage, ChatRequest, Message, Part, ToolCall, ToolDef, ToolResultMessage,
};
use divan::{Bencher, black_box};
use serde_json::json;

fn main() {
    divan::main();
}

/// The history: a system prompt, then 50 rounds of question, call, result, answer.
fn conversation() -> Vec<Message> {
    let image: Vec<u8> = (0..24 * 1024).map(|byte| (byte * 31 % 251) as u8).collect();
    let mut messages = vec![Message::system(
        "You are a travel assistant. Answer briefly; use the tools for facts.",
    )];
    for round in 0..50 {
        let mut question = Message::user(format!(
            "Round {round}: what is the weather in 北京 and should I take an umbrella to the \
             meeting at the old town hall this afternoon?"
        ));
        if round % 17 == 0 {
            question = question.with_part(Part::image("image/png", &image));
        }
        messages.push(question);
        messages.push(Message::Assistant(
            AssistantMessage::tool_calls([ToolCall::new(
                format!("call_{round}"),
                "get_weather",
                r#"{"city":"北京","unit":"celsius","days":1}"#,
            )])
            .with_text("Let me check."),
        ));
        messages.push(Message::Tool(ToolResultMessage::new(
            format!("call_{round}"),
            r#"{"city":"北京","weather":"小雨","temp":18,"wind":"NE 3","humidity":0.82}"#,
        )));
        messages.push(Message::Assistant(AssistantMessage::text(
            "Light rain and 18°C: yes, take an umbrella, and leave ten minutes early.",
        )));
    }
    messages
}

/// Ten tools with nested, described parameters.
fn tools() -> Vec<ToolDef> {
    (0..10)
        .map(|index| {
            ToolDef::new(
                format!("tool_{index}"),
                "Looks something up for the traveller; returns JSON.",
                json!({
                    "type": "object",
                    "properties": {
                        "city": {"type": "string", "description": "City name, e.g. \"Beijing\""},
                        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                        "days": {"type": "integer", "minimum": 1, "maximum": 14},
                        "stops": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "properties": {
                                    "name": {"type": "string"},
                                    "minutes": {"type": ["integer", "null"], "default": null}
                                },
                                "required": ["name"]
                            }
                        }
                    },
                    "required": ["city"]
                }),
            )
        })
        .collect()
}

#[divan::bench]
fn openai_build(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::OpenAi::new("gpt-4o-mini");
    bencher.bench_local(|| {
        __bench::openai_request(&model, ChatRequest::new(black_box(&messages), &tools))
            .expect("a body")
    });
}

#[divan::bench]
fn openai_floor(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::OpenAi::new("gpt-4o-mini");
    let serialize =
        __bench::openai_floor(&model, ChatRequest::new(&messages, &tools)).expect("a body");
    bencher.bench_local(|| black_box(serialize()));
}

#[divan::bench]
fn anthropic_build(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::Anthropic::new("claude-sonnet-4-5");
    bencher.bench_local(|| {
        __bench::anthropic_request(&model, ChatRequest::new(black_box(&messages), &tools))
            .expect("a body")
    });
}

#[divan::bench]
fn anthropic_floor(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::Anthropic::new("claude-sonnet-4-5");
    let serialize =
        __bench::anthropic_floor(&model, ChatRequest::new(&messages, &tools)).expect("a body");
    bencher.bench_local(|| black_box(serialize()));
}

#[divan::bench]
fn gemini_build(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::Gemini::new("gemini-2.5-flash");
    bencher.bench_local(|| {
        __bench::gemini_request(&model, ChatRequest::new(black_box(&messages), &tools))
            .expect("a body")
    });
}

#[divan::bench]
fn gemini_floor(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::Gemini::new("gemini-2.5-flash");
    let serialize =
        __bench::gemini_floor(&model, ChatRequest::new(&messages, &tools)).expect("a body");
    bencher.bench_local(|| black_box(serialize()));
}

#[divan::bench]
fn openai_responses_build(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::OpenAiResponses::new("gpt-5");
    bencher.bench_local(|| {
        __bench::openai_responses_request(&model, ChatRequest::new(black_box(&messages), &tools))
            .expect("a body")
    });
}

#[divan::bench]
fn openai_responses_floor(bencher: Bencher) {
    let (messages, tools) = (conversation(), tools());
    let model = agent_core::providers::OpenAiResponses::new("gpt-5");
    let serialize = __bench::openai_responses_floor(&model, ChatRequest::new(&messages, &tools))
        .expect("a body");
    bencher.bench_local(|| black_box(serialize()));
}
