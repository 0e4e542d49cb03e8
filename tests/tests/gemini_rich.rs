//! The Gemini `generateContent` adapter with rich messages, over real HTTP on 127.0.0.1: images,
//! documents and audio as `inlineData` / `fileData` parts, a tool's image after its function
//! response, thoughts and thought signatures sent back where they came from through a tool loop,
//! the thinking config on the wire (a budget, or Gemini 3's level), and thoughts streamed as
//! reasoning deltas (replies in `fixtures/gemini`).

use agent_core::providers::Gemini;
use agent_core::{
    AssistantMessage, ChatRequest, ChatResponse, Chinese, Effort, FinishReason, Media, Message,
    Model, ModelSettings, Part, Reasoning, RunEvent, StreamEvent, Thinking, ToolCall,
    ToolResultMessage, agent,
};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::http::{
    fixture, json_reply, quick_retries, request_bodies, serve_event_streams, serve_in_order,
};
use tests::{PNG, get_weather, screenshot, streamed_reasoning};

/// The signatures in the fixtures.
const THOUGHT_SIGNATURE: &str = "CiQB0e2Kb8ThoughtSigOne+/=";
const CALL_SIGNATURE: &str = "CiQB0e2Kb8CallSigTwo+/==";
const TEXT_SIGNATURE: &str = "CiQB0e2Kb8TextSigThree+/=";

fn gemini_at(base: &str) -> Gemini {
    Gemini::new("gemini-2.5-flash")
        .api_key("test-key-789")
        .base_url(&format!("{base}/v1beta"))
        .http_config(quick_retries())
}

fn thinking(thinking: Thinking) -> ModelSettings {
    ModelSettings::new().thinking(thinking)
}

/// The conversation of the snapshot: every kind of part, two calls of one turn, the first answered
/// with an image and text after its result, and reasoning of another provider (not sent).
fn rich_history() -> Vec<Message> {
    vec![
        Message::system("Describe what you are shown."),
        Message::user("What do these show?")
            .with_part(Part::image("image/png", PNG))
            .with_part(Part::image_url("https://example.com/chart.webp"))
            .with_part(Part::Document(
                Media::bytes("application/pdf", b"%PDF-1.7 minimal").with_name("receipt.pdf"),
            ))
            .with_part(Part::document_url("gs://bucket/report.pdf"))
            .with_part(Part::text("And listen:"))
            .with_part(Part::audio("audio/wav", b"RIFF....WAVE")),
        Message::Assistant(
            AssistantMessage::tool_calls([
                ToolCall::new("call_s1", "screenshot", r#"{"url":"https://example.com"}"#),
                ToolCall::new("call_w1", "get_weather", r#"{"city":"北京"}"#),
            ])
            .with_reasoning(Reasoning::new("anthropic", "not Gemini's").with_signature("sig")),
        ),
        Message::Tool(
            ToolResultMessage::new("call_s1", "Screenshot of https://example.com:")
                .with_part(Part::image("image/png", PNG))
                .with_part(Part::text("(taken at 1280×800)")),
        ),
        Message::Tool(ToolResultMessage::new(
            "call_w1",
            r#"{"city":"北京","weather":"小雨","temp":18}"#,
        )),
        Message::user("Thanks. And this one?")
            .with_part(Part::image_url("https://example.com/x.png")),
    ]
}

#[tokio::test]
async fn images_documents_audio_and_a_tools_image_go_as_parts() {
    let server = serve_in_order(vec![json_reply(200, &fixture("gemini", "answer.json"))]).await;
    let messages = rich_history();
    let reply = gemini_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert!(!reply.message.content.is_empty());
    let body = request_bodies(&server).await.remove(0);
    let user = &body["contents"][0]["parts"];
    assert_eq!(
        user[1],
        json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}})
    );
    assert_eq!(
        user[2],
        json!({"fileData": {"mimeType": "image/webp", "fileUri": "https://example.com/chart.webp"}})
    );
    assert_eq!(user[6]["inlineData"]["mimeType"], "audio/wav");
    // Only Gemini's own reasoning goes back: the model turn is the two calls.
    assert_eq!(body["contents"][1]["parts"].as_array().unwrap().len(), 2);
    // The results' turn: both responses, then the screenshot's parts, then the next user message.
    let results = &body["contents"][2];
    assert_eq!(results["role"], "user");
    let kinds: Vec<&str> = results["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| {
            part.as_object()
                .and_then(|fields| fields.keys().next())
                .map_or("", String::as_str)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "functionResponse",
            "functionResponse",
            "text",
            "inlineData",
            "text",
            "text",
            "fileData"
        ]
    );
    assert_eq!(
        results["parts"][2]["text"],
        "The screenshot call returned these:"
    );
    insta::assert_json_snapshot!("gemini_rich_parts", body);
}

/// Gemini's reply that calls `screenshot` on example.com.
fn screenshot_call() -> String {
    json!({
        "candidates": [{
            "content": {"parts": [{"functionCall": {"name": "screenshot", "args": {"url": "https://example.com"}}}], "role": "model"},
            "finishReason": "STOP", "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 120, "candidatesTokenCount": 12, "totalTokenCount": 132}
    })
    .to_string()
}

#[tokio::test]
async fn a_tool_that_returns_an_image_is_answered_with_its_response_and_the_image() {
    let server = serve_in_order(vec![
        json_reply(200, &screenshot_call()),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let output = agent!(gemini_at(&server.uri()), screenshot)
        .run("Show me example.com")
        .await
        .unwrap();
    assert!(output.is_finished());
    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies[1]["contents"][2],
        json!({
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "screenshot", "response": {"result": "Screenshot of https://example.com:"}}},
                {"text": "The screenshot call returned these:"},
                {"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}
            ]
        })
    );
}

#[tokio::test]
async fn a_chinese_agent_s_tool_images_are_introduced_in_chinese() {
    let server = serve_in_order(vec![
        json_reply(200, &screenshot_call()),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let output = agent!(gemini_at(&server.uri()), screenshot)
        .texts(Chinese)
        .run("看看 example.com")
        .await
        .unwrap();
    assert!(output.is_finished());
    let bodies = request_bodies(&server).await;
    let parts = &bodies[1]["contents"][2]["parts"];
    assert_eq!(
        parts[1],
        json!({"text": "对 screenshot 的调用返回了以下内容："})
    );
    assert_eq!(parts[2]["inlineData"]["mimeType"], "image/png");
    assert!(!bodies[1].to_string().contains("returned these"));
}

/// The parts of a fixture reply's model turn, as Gemini gave them.
fn fixture_parts(name: &str) -> Vec<Value> {
    let reply: Value = serde_json::from_str(&fixture("gemini", name)).unwrap();
    reply["candidates"][0]["content"]["parts"]
        .as_array()
        .unwrap()
        .clone()
}

/// The model turn that goes back for `thinking_function_call.json`: its two thought parts as one
/// (they came as one thought, closed by its signature), the text, the call with its signature.
fn first_turn_sent_back() -> Value {
    let parts = fixture_parts("thinking_function_call.json");
    let thought = format!(
        "{}{}",
        parts[0]["text"].as_str().unwrap(),
        parts[1]["text"].as_str().unwrap()
    );
    json!({
        "role": "model",
        "parts": [
            {"text": thought, "thought": true, "thoughtSignature": THOUGHT_SIGNATURE},
            {"text": "查一下北京。"},
            {"functionCall": {"name": "get_weather", "args": {"city": "北京"}, "id": "call_w1"}, "thoughtSignature": CALL_SIGNATURE}
        ]
    })
}

#[tokio::test]
async fn a_tool_run_with_thinking_sends_thoughts_and_signatures_back_where_they_came_from() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("gemini", "thinking_function_call.json")),
        json_reply(200, &fixture("gemini", "thinking_answer.json")),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let agent = agent!(gemini_at(&server.uri()), get_weather)
        .model_settings(thinking(Thinking::Budget(2048)));
    let output = agent.run("北京天气？").await.unwrap();
    assert_eq!(output.text, "北京今天有小雨，记得带伞。");
    assert_eq!(
        output.usage.output_tokens,
        30 + 82 + 16 + 44,
        "thinking tokens count as output"
    );
    let replies: Vec<&AssistantMessage> = output
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Assistant(reply) => Some(reply),
            _ => None,
        })
        .collect();
    assert_eq!(
        replies[0].reasoning,
        [Reasoning::new(
            "gemini",
            "**Checking the weather**\nThe user asks about 北京; I will call get_weather."
        )
        .with_signature(THOUGHT_SIGNATURE)]
    );
    assert_eq!(
        replies[0].tool_calls[0].signature.as_deref(),
        Some(CALL_SIGNATURE)
    );
    assert_eq!(
        replies[1].reasoning,
        [
            Reasoning::new("gemini", "**Answering**\n小雨 and 18°C: an umbrella."),
            Reasoning::new("gemini", "")
                .with_signature(TEXT_SIGNATURE)
                .with_id("text"),
        ]
    );

    let bodies = request_bodies(&server).await;
    assert_eq!(bodies.len(), 2);
    for body in &bodies {
        assert_eq!(
            body["generationConfig"]["thinkingConfig"],
            json!({"thinkingBudget": 2048, "includeThoughts": true})
        );
    }
    assert_eq!(bodies[1]["contents"][1], first_turn_sent_back());

    // A conversation that goes on sends the answer's text signature back on its text.
    let mut history = output.messages.clone();
    history.push(Message::user("明天呢？"));
    let server = serve_in_order(vec![json_reply(200, &fixture("gemini", "answer.json"))]).await;
    gemini_at(&server.uri())
        .chat(ChatRequest::new(&history, &[]))
        .await
        .unwrap();
    let body = request_bodies(&server).await.remove(0);
    assert_eq!(
        body["contents"][3],
        json!({
            "role": "model",
            "parts": [
                {"text": "**Answering**\n小雨 and 18°C: an umbrella.", "thought": true},
                {"text": "北京今天有小雨，记得带伞。", "thoughtSignature": TEXT_SIGNATURE}
            ]
        })
    );
}

#[tokio::test]
async fn a_signature_on_an_empty_text_part_goes_back_after_the_calls() {
    // As Gemini sometimes ends a turn of calls: an empty text part with the signature.
    let reply = json!({
        "candidates": [{
            "content": {"parts": [
                {"functionCall": {"name": "get_weather", "args": {"city": "北京"}}},
                {"text": "", "thoughtSignature": TEXT_SIGNATURE}
            ], "role": "model"},
            "finishReason": "STOP", "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}
    });
    let server = serve_in_order(vec![
        json_reply(200, &reply.to_string()),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let output = agent!(gemini_at(&server.uri()), get_weather)
        .run("北京天气？")
        .await
        .unwrap();
    assert!(output.is_finished());
    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies[1]["contents"][1]["parts"],
        json!([
            {"functionCall": {"name": "get_weather", "args": {"city": "北京"}}},
            {"text": "", "thoughtSignature": TEXT_SIGNATURE}
        ])
    );
}

/// The `thinkingConfig` a request for `model` with `thinking` carries.
async fn thinking_config(model: &str, thinking_setting: Option<Thinking>) -> Value {
    let server = serve_in_order(vec![json_reply(200, &fixture("gemini", "answer.json"))]).await;
    let gemini = Gemini::new(model)
        .base_url(&server.uri())
        .http_config(quick_retries());
    let messages = [Message::user("北京天气？")];
    let settings = thinking_setting.map_or_else(ModelSettings::new, thinking);
    gemini
        .chat(ChatRequest::new(&messages, &[]).with_settings(&settings))
        .await
        .unwrap();
    let body = request_bodies(&server).await.remove(0);
    body["generationConfig"]["thinkingConfig"].clone()
}

#[tokio::test]
async fn thinking_settings_are_a_budget_or_gemini_3s_level() {
    let cases = [
        (
            "gemini-2.5-flash",
            Some(Thinking::Budget(3000)),
            json!({"thinkingBudget": 3000, "includeThoughts": true}),
        ),
        (
            "gemini-2.5-flash",
            Some(Thinking::Effort(Effort::Medium)),
            json!({"thinkingBudget": 4096, "includeThoughts": true}),
        ),
        (
            "gemini-2.5-flash",
            Some(Thinking::Off),
            json!({"thinkingBudget": 0}),
        ),
        ("gemini-2.5-flash", None, Value::Null),
        (
            "gemini-3-pro-preview",
            Some(Thinking::Effort(Effort::Low)),
            json!({"thinkingLevel": "low", "includeThoughts": true}),
        ),
        (
            "gemini-3-pro-preview",
            Some(Thinking::Effort(Effort::High)),
            json!({"thinkingLevel": "high", "includeThoughts": true}),
        ),
        (
            "models/gemini-3-flash-preview",
            Some(Thinking::Budget(5000)),
            json!({"thinkingLevel": "high", "includeThoughts": true}),
        ),
        (
            "gemini-3-flash-preview",
            Some(Thinking::Budget(1000)),
            json!({"thinkingLevel": "low", "includeThoughts": true}),
        ),
        (
            "gemini-3-pro-preview",
            Some(Thinking::Off),
            json!({"thinkingLevel": "low"}),
        ),
    ];
    for (model, setting, expected) in cases {
        assert_eq!(
            thinking_config(model, setting).await,
            expected,
            "{model} with {setting:?}"
        );
    }
}

/// The reply the plain call gives for a fixture body.
async fn plain_reply(name: &str) -> ChatResponse {
    let server = serve_in_order(vec![json_reply(200, &fixture("gemini", name))]).await;
    let messages = [Message::user("北京天气？")];
    gemini_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap()
}

#[tokio::test]
async fn thoughts_stream_as_reasoning_deltas_at_any_split_and_end_as_the_plain_reply() {
    for (stream, plain) in [
        ("stream_thinking_call.sse", "thinking_function_call.json"),
        ("stream_thinking_answer.sse", "thinking_answer.json"),
    ] {
        let plain = plain_reply(plain).await;
        for piece in [1, 2, 3, 7, 64, 4096] {
            let (base, _) = serve_event_streams(vec![fixture("gemini", stream)], piece).await;
            let messages = [Message::user("北京天气？")];
            let settings = thinking(Thinking::Budget(2048));
            let events: Vec<_> = gemini_at(&base)
                .chat_stream(ChatRequest::new(&messages, &[]).with_settings(&settings))
                .collect()
                .await;
            let reasoning: String = events
                .iter()
                .filter_map(|event| match event {
                    Ok(StreamEvent::ReasoningDelta(text)) => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(
                reasoning, plain.message.reasoning[0].text,
                "{stream} in {piece}"
            );
            let Some(Ok(StreamEvent::Finished(streamed))) = events.last() else {
                panic!("{stream} in {piece}: {events:?}")
            };
            assert_eq!(streamed, &plain, "{stream} in pieces of {piece}");
        }
    }
    assert_eq!(
        plain_reply("thinking_function_call.json")
            .await
            .finish_reason,
        Some(FinishReason::ToolCalls)
    );
}

#[tokio::test]
async fn a_streamed_run_yields_reasoning_deltas_and_sends_the_signatures_back() {
    for piece in [1, 5, 4096] {
        let (base, requests) = serve_event_streams(
            vec![
                fixture("gemini", "stream_thinking_call.sse"),
                fixture("gemini", "stream_thinking_answer.sse"),
            ],
            piece,
        )
        .await;
        let gemini = Gemini::new("gemini-2.5-flash")
            .base_url(&base)
            .http_config(quick_retries());
        let agent = agent!(gemini, get_weather).model_settings(thinking(Thinking::Budget(2048)));
        let events: Vec<RunEvent> = agent.run("北京天气？").stream().collect().await;
        let reasoning = streamed_reasoning(&events);
        assert_eq!(
            reasoning,
            "**Checking the weather**\nThe user asks about 北京; I will call get_weather.\
             **Answering**\n小雨 and 18°C: an umbrella.",
            "pieces of {piece}"
        );
        let Some(RunEvent::Finished(Ok(output))) = events.last() else {
            panic!("{:?}", events.last())
        };
        assert_eq!(output.text, "北京今天有小雨，记得带伞。");
        assert_eq!(output.usage.output_tokens, 30 + 82 + 16 + 44);
        let second: Value = serde_json::from_str(&requests.lock().unwrap()[1]).unwrap();
        assert_eq!(
            second["contents"][1],
            first_turn_sent_back(),
            "pieces of {piece}"
        );
    }
}
