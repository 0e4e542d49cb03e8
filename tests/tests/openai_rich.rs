//! Rich conversations over the OpenAI Chat Completions adapter, against a loopback server that
//! speaks the documented wire format: image, document and audio parts; a tool's image, which Chat
//! Completions tool messages cannot hold, sent in a user message after the tool messages;
//! DeepSeek's `reasoning_content`, kept and sent back in later requests; thinking settings;
//! reasoning deltas in streams cut at every byte.

use agent_core::providers::OpenAi;
use agent_core::{
    ChatRequest, Effort, Message, Model, ModelError, ModelSettings, Part, RunEvent, StreamEvent,
    Thinking, ToolOutput, agent, tool_fn,
};
use futures_util::StreamExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tests::get_weather;
use tests::http::{json_reply, quick_retries, request_bodies, serve_event_streams, serve_in_order};

/// DeepSeek's reasoner, reached at `base` (a loopback server standing in for DeepSeek).
fn openai_at(base: &str) -> OpenAi {
    OpenAi::new("deepseek-reasoner")
        .api_key("test-key-123")
        .base_url(&format!("{base}/v1"))
        .service("deepseek")
        .http_config(quick_retries())
}

fn reply(message: Value, finish_reason: &str) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5}
    })
    .to_string()
}

fn answer(text: &str) -> String {
    reply(json!({"role": "assistant", "content": text}), "stop")
}

/// A one-pixel PNG's first bytes: enough to see base64 on the wire.
const PNG: &[u8] = &[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

#[tokio::test]
async fn user_parts_go_as_content_arrays() {
    let server = serve_in_order(vec![json_reply(200, &answer("A receipt for 12 EUR."))]).await;
    let model = openai_at(&server.uri());
    let question = Message::user("What do these show?")
        .with_part(Part::image("image/png", PNG))
        .with_part(Part::image_url("https://example.com/receipt.jpg"))
        .with_part(Part::text("And this file:"))
        .with_part(Part::Document(
            agent_core::Media::bytes("application/pdf", b"%PDF-1.7").with_name("receipt.pdf"),
        ))
        .with_part(Part::audio("audio/wav", b"RIFF"));
    let reply = model
        .chat(ChatRequest::new(&[question], &[]))
        .await
        .unwrap();
    assert_eq!(reply.message.content, "A receipt for 12 EUR.");
    let bodies = request_bodies(&server).await;
    insta::assert_json_snapshot!("openai_user_parts", bodies[0]["messages"]);
}

#[tokio::test]
async fn a_part_the_api_cannot_take_fails_before_any_request() {
    let server = serve_in_order(vec![json_reply(200, &answer("unused"))]).await;
    let model = openai_at(&server.uri());
    for part in [
        Part::document_url("https://example.com/contract.pdf"),
        Part::audio("audio/flac", b"fLaC"),
        Part::document("text/csv", b"city,rain\nOslo,yes"),
    ] {
        let question = Message::user("Read this.").with_part(part.clone());
        let error = model
            .chat(ChatRequest::new(&[question], &[]))
            .await
            .unwrap_err();
        assert!(
            matches!(&error, ModelError::Unsupported { message }
                if message.starts_with("OpenAI Chat Completions cannot take")),
            "{part:?}: {error:?}"
        );
        let stream_error = model
            .chat_stream(ChatRequest::new(
                &[Message::user("Read this.").with_part(part)],
                &[],
            ))
            .next()
            .await
            .unwrap()
            .unwrap_err();
        assert!(matches!(stream_error, ModelError::Unsupported { .. }));
    }
    assert!(request_bodies(&server).await.is_empty());
}

#[derive(Deserialize, JsonSchema)]
struct Chart {
    /// The city.
    city: String,
}

#[tokio::test]
async fn a_tools_image_follows_the_tool_messages_in_a_user_message() {
    let two_calls = reply(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "call_chart", "type": "function",
                 "function": {"name": "draw_chart", "arguments": "{\"city\":\"Oslo\"}"}},
                {"id": "call_weather", "type": "function",
                 "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}
            ]
        }),
        "tool_calls",
    );
    let server = serve_in_order(vec![
        json_reply(200, &two_calls),
        json_reply(200, &answer("Rain is coming.")),
    ])
    .await;
    let draw_chart = tool_fn(
        "draw_chart",
        "Draws the week's temperatures.",
        |chart: Chart| async move {
            vec![
                Part::text(format!("Temperatures in {}:", chart.city)),
                Part::image("image/png", PNG),
            ]
        },
    );
    let agent = agent!(openai_at(&server.uri()), get_weather)
        .try_tool(draw_chart)
        .unwrap();
    let output = agent.run("Show me Oslo's week.").await.unwrap();
    assert_eq!(output.text, "Rain is coming.");

    let result = tests::tool_results(&output)[0].clone();
    assert_eq!(result.content, "Temperatures in Oslo:");
    assert_eq!(result.parts, vec![Part::image("image/png", PNG)]);

    let second = &request_bodies(&server).await[1]["messages"];
    // Both tool messages answer their calls first; the image comes after them, named by call.
    assert_eq!(second[0]["role"], "system");
    assert_eq!(second[3]["role"], "tool");
    assert_eq!(second[3]["content"], "Temperatures in Oslo:");
    assert_eq!(second[4]["role"], "tool");
    assert_eq!(second[4]["tool_call_id"], "call_weather");
    insta::assert_json_snapshot!("openai_tool_image_after_results", second[5]);
    assert_eq!(second.as_array().unwrap().len(), 6);
}

#[tokio::test]
async fn reasoning_content_of_tool_calls_comes_back_in_every_later_request() {
    let thinking_call = reply(
        json!({
            "role": "assistant",
            "content": "",
            "reasoning_content": "The user wants Beijing's weather; call the tool.",
            "tool_calls": [{"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{\"city\":\"Beijing\"}"}}]
        }),
        "tool_calls",
    );
    let final_answer = reply(
        json!({
            "role": "assistant",
            "content": "Light rain.",
            "reasoning_content": "The tool says rain."
        }),
        "stop",
    );
    let server = serve_in_order(vec![
        json_reply(200, &thinking_call),
        json_reply(200, &final_answer),
        json_reply(200, &answer("Still rain.")),
    ])
    .await;
    let agent = agent!(openai_at(&server.uri()), get_weather);
    let first = agent
        .run("Weather in Beijing?")
        .thinking(Thinking::Effort(Effort::High))
        .await
        .unwrap();
    let Message::Assistant(reply) = &first.messages[2] else {
        panic!("{:?}", first.messages[2]);
    };
    assert_eq!(reply.reasoning.len(), 1);
    assert_eq!(
        reply.reasoning[0].text,
        "The user wants Beijing's weather; call the tool."
    );
    assert_eq!(reply.reasoning[0].provider, "deepseek");

    // A later turn: the tool-call turn's reasoning is sent again (DeepSeek answers 400 without
    // it), the earlier answer's is not.
    let later = agent
        .run("And tomorrow?")
        .history(first.messages.clone())
        .await
        .unwrap();
    assert_eq!(later.text, "Still rain.");

    let bodies = request_bodies(&server).await;
    assert_eq!(bodies[0]["reasoning_effort"], "high");
    let within = &bodies[1]["messages"][2];
    assert_eq!(
        within["reasoning_content"],
        "The user wants Beijing's weather; call the tool."
    );
    let later = bodies[2]["messages"].as_array().unwrap();
    assert_eq!(
        later[2]["reasoning_content"], "The user wants Beijing's weather; call the tool.",
        "{later:?}"
    );
    let sent: Vec<&Value> = later
        .iter()
        .filter_map(|message| message.get("reasoning_content"))
        .collect();
    assert_eq!(sent.len(), 1, "{later:?}");
}

#[tokio::test]
async fn thinking_off_is_the_least_effort_each_model_family_takes() {
    for (model, least) in [
        ("gpt-5.1", "none"),
        ("gpt-5-mini", "minimal"),
        ("o4-mini", "low"),
        ("deepseek-reasoner", "low"),
    ] {
        let server = serve_in_order(vec![json_reply(200, &answer("ok"))]).await;
        let openai = OpenAi::new(model)
            .api_key("test-key-123")
            .base_url(&format!("{}/v1", server.uri()))
            .http_config(quick_retries());
        let settings = ModelSettings::new().thinking(Thinking::Off);
        let messages = [Message::user("hi")];
        openai
            .chat(ChatRequest::new(&messages, &[]).with_settings(&settings))
            .await
            .unwrap();
        assert_eq!(
            request_bodies(&server).await[0]["reasoning_effort"],
            least,
            "{model}"
        );
    }
}

/// A DeepSeek-style stream: reasoning deltas, then a call, each call without an `index` (as some
/// compatible servers send them), then text in the next reply.
fn reasoning_stream() -> String {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"role": "assistant", "reasoning_content": "Two cities: "}}]}),
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "call twice, 北京 first."}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "call_a", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
            "function": {"arguments": "\"北京\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"id": "call_b", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]}}]}),
        json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
               "usage": {"prompt_tokens": 20, "completion_tokens": 9}}),
    ];
    let mut body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    body
}

fn answer_stream() -> String {
    let chunks = [
        json!({"choices": [{"index": 0, "delta": {"reasoning_content": "Both rainy."}}]}),
        json!({"choices": [{"index": 0, "delta": {"content": "Rain in both."}, "finish_reason": "stop"}]}),
    ];
    let mut body: String = chunks
        .iter()
        .map(|chunk| format!("data: {chunk}\n\n"))
        .collect();
    body.push_str("data: [DONE]\n\n");
    body
}

#[tokio::test]
async fn reasoning_deltas_stream_at_every_split() {
    let whole = reasoning_stream();
    for piece in 1..=whole.len().min(64) {
        let (base, _) = serve_event_streams(vec![whole.clone()], piece).await;
        let model = openai_at(&base);
        let messages = [Message::user("Weather in 北京 and Oslo?")];
        let events: Vec<StreamEvent> = model
            .chat_stream(ChatRequest::new(&messages, &[]))
            .map(|event| event.unwrap())
            .collect()
            .await;
        let reasoning: String = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::ReasoningDelta(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            reasoning, "Two cities: call twice, 北京 first.",
            "piece {piece}"
        );
        let Some(StreamEvent::Finished(reply)) = events.last() else {
            panic!("piece {piece}: {events:?}");
        };
        assert_eq!(reply.message.reasoning[0].text, reasoning);
        let calls: Vec<(&str, &str)> = reply
            .message
            .tool_calls
            .iter()
            .map(|call| (call.id.as_str(), call.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [
                ("call_a", r#"{"city":"北京"}"#),
                ("call_b", r#"{"city":"Oslo"}"#)
            ],
            "piece {piece}"
        );
    }
}

#[tokio::test]
async fn a_streamed_run_passes_reasoning_on_and_sends_it_back() {
    let (base, received) = serve_event_streams(vec![reasoning_stream(), answer_stream()], 7).await;
    let agent = agent!(openai_at(&base), get_weather);
    let events: Vec<RunEvent> = agent
        .run("Weather in 北京 and Oslo?")
        .stream()
        .collect()
        .await;
    let reasoning: Vec<&str> = events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ReasoningDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        reasoning,
        ["Two cities: ", "call twice, 北京 first.", "Both rainy."]
    );
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{:?}", events.last());
    };
    assert_eq!(output.text, "Rain in both.");
    let second: Value = serde_json::from_str(&received.lock().unwrap()[1]).unwrap();
    assert_eq!(
        second["messages"][2]["reasoning_content"],
        "Two cities: call twice, 北京 first."
    );
}

#[test]
fn tool_outputs_of_parts_keep_leading_text_as_the_result_text() {
    // The same split the agent loop makes, seen through a ToolSet.
    let mut tools = agent_core::ToolSet::new();
    tools
        .add(tool_fn("shot", "A screenshot.", |_: Chart| async {
            ToolOutput::image("image/png", PNG)
        }))
        .unwrap();
    let call = agent_core::ToolCall::new("c1", "shot", r#"{"city":"x"}"#);
    let result = futures_executor_block_on(tools.dispatch(&(), &call));
    assert_eq!(result.content, "");
    assert_eq!(result.parts, vec![Part::image("image/png", PNG)]);
}

fn futures_executor_block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

#[tokio::test]
async fn a_plain_text_document_goes_as_its_text() {
    let server = serve_in_order(vec![json_reply(200, &answer("Noted."))]).await;
    let question =
        Message::user("Summarize:").with_part(Part::document("text/plain", "北京: 小雨"));
    openai_at(&server.uri())
        .chat(ChatRequest::new(&[question], &[]))
        .await
        .unwrap();
    let content = &request_bodies(&server).await[0]["messages"][0]["content"];
    assert_eq!(
        content,
        &json!([
            {"type": "text", "text": "Summarize:"},
            {"type": "text", "text": "北京: 小雨"}
        ])
    );
}
