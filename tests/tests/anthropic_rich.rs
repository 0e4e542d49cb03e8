//! The Anthropic Messages adapter with rich messages, over real HTTP on 127.0.0.1: images and
//! documents as content blocks, a tool's image inside its `tool_result`, audio refused before
//! anything is sent, extended thinking sent back unchanged through a tool loop, the thinking
//! settings on the wire, and thinking streamed as reasoning deltas (replies in
//! `fixtures/anthropic`).

use agent_core::providers::Anthropic;
use agent_core::{
    AssistantMessage, ChatRequest, ChatResponse, Effort, FinishReason, Media, Message, Model,
    ModelError, ModelSettings, Part, Reasoning, RunError, RunEvent, StreamEvent, Thinking,
    ToolCall, ToolChoice, ToolResultMessage, agent,
};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::http::{
    fixture, json_reply, quick_retries, received, request_bodies, serve_event_streams,
    serve_in_order,
};
use tests::{PNG, get_weather, screenshot, streamed_reasoning};

fn claude_at(base: &str) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key-456")
        .base_url(base)
        .max_tokens(1024)
        .http_config(quick_retries())
}

fn thinking(thinking: Thinking) -> ModelSettings {
    ModelSettings::new().thinking(thinking)
}

/// The conversation of the snapshot: every kind of part Anthropic takes, a tool call answered
/// with an image, and reasoning it must not send (another provider's, and its own unsigned).
fn rich_history() -> Vec<Message> {
    vec![
        Message::system("Describe what you are shown."),
        Message::user("What do these show?")
            .with_part(Part::image("image/png", PNG))
            .with_part(Part::image_url("https://example.com/chart.webp"))
            .with_part(Part::Document(
                Media::bytes("application/pdf", b"%PDF-1.7 minimal").with_name("receipt.pdf"),
            ))
            .with_part(Part::document_url("https://example.com/report.pdf"))
            .with_part(Part::text("And this note:"))
            .with_part(Part::Document(
                Media::bytes("text/plain", "备注：明天下雨。".as_bytes()).with_name("note.txt"),
            )),
        Message::Assistant(
            AssistantMessage::tool_calls([ToolCall::new(
                "toolu_01S",
                "screenshot",
                r#"{"url":"https://example.com"}"#,
            )])
            .with_text("Let me look at the page too.")
            .with_reasoning(Reasoning::new("openai", "not Anthropic's to take"))
            .with_reasoning(Reasoning::new(
                "anthropic",
                "unsigned: the API would refuse it",
            )),
        ),
        Message::Tool(
            ToolResultMessage::new("toolu_01S", "Screenshot of https://example.com:")
                .with_part(Part::image("image/png", PNG))
                .with_part(Part::text("(taken at 1280×800)")),
        ),
    ]
}

#[tokio::test]
async fn images_documents_and_a_tools_image_go_as_content_blocks() {
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let messages = rich_history();
    let reply = claude_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(
        reply.message.content,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );
    let body = request_bodies(&server).await.remove(0);
    let user = &body["messages"][0]["content"];
    assert_eq!(
        user[0],
        json!({"type": "text", "text": "What do these show?"})
    );
    assert_eq!(
        user[1]["source"],
        json!({"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="})
    );
    assert_eq!(
        user[6],
        json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "备注：明天下雨。"}, "title": "note.txt"})
    );
    // Neither OpenAI's reasoning nor an unsigned piece goes back.
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "text", "text": "Let me look at the page too."})
    );
    let result = &body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["content"][1]["type"], "image");
    insta::assert_json_snapshot!("anthropic_rich_parts", body);
}

#[tokio::test]
async fn a_tool_that_returns_an_image_is_answered_with_an_image_block() {
    let server = serve_in_order(vec![
        json_reply(
            200,
            &json!({
                "id": "msg_01Sc", "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5-20250929",
                "content": [{"type": "tool_use", "id": "toolu_01Sc", "name": "screenshot", "input": {"url": "https://example.com"}}],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 300, "output_tokens": 40}
            })
            .to_string(),
        ),
        json_reply(200, &fixture("anthropic", "answer.json")),
    ])
    .await;
    let output = agent!(claude_at(&server.uri()), screenshot)
        .run("Show me example.com")
        .await
        .unwrap();
    assert!(output.is_finished());
    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies[1]["messages"][2]["content"][0],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_01Sc",
            "content": [
                {"type": "text", "text": "Screenshot of https://example.com:"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgoAAAANSUhEUg=="}}
            ],
            "is_error": false
        })
    );
}

/// The error a request with `message` meets, by the plain call and by the stream, and how many
/// requests reached the server.
async fn refused(message: Message) -> (ModelError, ModelError, usize) {
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let claude = claude_at(&server.uri());
    let messages = [message];
    let plain = claude
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("refused");
    let streamed: Vec<_> = claude
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    let [Err(streamed)] = <[_; 1]>::try_from(streamed).expect("one event") else {
        panic!("the stream did not fail")
    };
    (plain, streamed, received(&server).await.len())
}

#[tokio::test]
async fn audio_and_types_anthropic_cannot_take_are_refused_before_anything_is_sent() {
    let audio = Message::user("Transcribe this").with_part(Part::audio("audio/wav", b"RIFF"));
    let (plain, streamed, requests) = refused(audio).await;
    for error in [&plain, &streamed] {
        assert!(
            matches!(error, ModelError::Unsupported { message } if message.contains("audio")),
            "{error:?}"
        );
    }
    assert_eq!(requests, 0);

    // A tool's audio is not the user's to fix: it is named for the model, and the request goes.
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let messages = [
        Message::user("Record it"),
        Message::Assistant(AssistantMessage::tool_calls([ToolCall::new(
            "toolu_1", "record", "{}",
        )])),
        Message::Tool(
            ToolResultMessage::new("toolu_1", "").with_part(Part::audio("audio/mpeg", b"ID3")),
        ),
    ];
    claude_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect("sent, the audio named");
    let body = &request_bodies(&server).await[0];
    let named = body["messages"][2]["content"][0]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        named == "[audio (audio/mpeg) not shown: the model service cannot take it]",
        "{named}"
    );

    for (part, says) in [
        (Part::image("image/bmp", b"BM"), "image/bmp"),
        (
            Part::document_url("https://example.com/notes.txt"),
            "by URL",
        ),
        (
            Part::document("application/msword", b"\xd0\xcf\x11\xe0"),
            "application/msword",
        ),
        (Part::document("text/plain", [0xff, 0xfe, 0x00]), "UTF-8"),
    ] {
        let (plain, _, requests) = refused(Message::user("Read this").with_part(part)).await;
        assert!(
            matches!(&plain, ModelError::Unsupported { message } if message.contains(says)),
            "{plain:?}"
        );
        assert_eq!(requests, 0);
    }
}

/// The content blocks of a fixture reply, as the API gave them.
fn fixture_blocks(name: &str) -> Value {
    let reply: Value = serde_json::from_str(&fixture("anthropic", name)).unwrap();
    reply["content"].clone()
}

#[tokio::test]
async fn a_tool_run_with_thinking_sends_each_turns_thinking_back_unchanged() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("anthropic", "thinking_tool_use.json")),
        json_reply(200, &fixture("anthropic", "thinking_answer.json")),
    ])
    .await;
    let agent = agent!(claude_at(&server.uri()), get_weather)
        .model_settings(thinking(Thinking::Budget(2048)));
    let output = agent.run("北京天气？").await.unwrap();
    assert_eq!(output.text, "北京今天有小雨，记得带伞。");
    assert_eq!(output.usage.output_tokens, 148 + 64);
    assert_eq!(
        output.usage.reasoning_tokens, 41,
        "the thinking of the reply whose usage says it"
    );

    let Some(Message::Assistant(first)) = output
        .messages
        .iter()
        .find(|message| matches!(message, Message::Assistant(_)))
    else {
        panic!("{:?}", output.messages)
    };
    let blocks = fixture_blocks("thinking_tool_use.json");
    assert_eq!(
        first.reasoning,
        [
            Reasoning::new("anthropic", blocks[0]["thinking"].as_str().unwrap())
                .with_signature(blocks[0]["signature"].as_str().unwrap()),
            Reasoning::new("anthropic", "").with_encrypted(blocks[1]["data"].as_str().unwrap()),
        ]
    );
    let Some(Message::Assistant(last)) = output.messages.last() else {
        panic!()
    };
    assert_eq!(last.reasoning[0].text, "小雨, 18°C: an umbrella helps.");

    let bodies = request_bodies(&server).await;
    for body in &bodies {
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert_eq!(
            body["max_tokens"],
            2048 + 1024,
            "the budget, then the usual cap"
        );
    }
    // The second request carries the first reply's blocks exactly as they came: thinking with its
    // signature, the redacted data, the text, the call.
    assert_eq!(bodies[1]["messages"][1]["role"], "assistant");
    assert_eq!(bodies[1]["messages"][1]["content"], blocks);
}

/// The request body the adapter sends for these settings, or the error it fails with (then
/// checking that nothing was sent).
async fn body_for(
    claude: impl Fn(&str) -> Anthropic,
    settings: ModelSettings,
) -> Result<Value, ModelError> {
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let messages = [Message::user("北京天气？")];
    let tools = [get_weather {}.definition().clone()];
    let reply = claude(&server.uri())
        .chat(ChatRequest::new(&messages, &tools).with_settings(&settings))
        .await;
    let bodies = request_bodies(&server).await;
    match reply {
        Ok(_) => Ok(bodies.into_iter().next().expect("one request")),
        Err(error) => {
            assert!(bodies.is_empty(), "{error:?} after sending {bodies:?}");
            Err(error)
        }
    }
}

#[tokio::test]
async fn thinking_settings_go_on_the_wire_and_what_thinking_refuses_fails_first() {
    let plain = |base: &str| {
        Anthropic::new("claude-sonnet-4-5")
            .base_url(base)
            .http_config(quick_retries())
    };
    let body = body_for(plain, thinking(Thinking::Off)).await.unwrap();
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert_eq!(body["max_tokens"], 4096);
    // Off takes any tool choice and temperature.
    let settings = thinking(Thinking::Off)
        .tool_choice(ToolChoice::Required)
        .temperature(0.2);
    let body = body_for(plain, settings).await.unwrap();
    assert_eq!(body["tool_choice"], json!({"type": "any"}));

    let body = body_for(plain, thinking(Thinking::Budget(100)))
        .await
        .unwrap();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024}),
        "raised to the minimum"
    );
    assert_eq!(body["max_tokens"], 4096);
    let body = body_for(plain, thinking(Thinking::Effort(Effort::High)))
        .await
        .unwrap();
    assert_eq!(body["thinking"]["budget_tokens"], 16_384);
    assert_eq!(body["max_tokens"], 16_384 + 4096);
    let body = body_for(
        plain,
        thinking(Thinking::Effort(Effort::Medium)).max_tokens(32_000),
    )
    .await
    .unwrap();
    assert_eq!(body["thinking"]["budget_tokens"], 4096);
    assert_eq!(body["max_tokens"], 32_000, "a cap above the budget stays");
    // A temperature of 1 is the one thinking takes; auto and none are the choices it takes.
    let settings = thinking(Thinking::Budget(2000))
        .temperature(1.0)
        .tool_choice(ToolChoice::None);
    let body = body_for(plain, settings).await.unwrap();
    assert_eq!(body["temperature"], 1.0);
    assert_eq!(body["tool_choice"], json!({"type": "none"}));
    assert!(
        body_for(plain, ModelSettings::new())
            .await
            .unwrap()
            .get("thinking")
            .is_none()
    );

    for choice in [ToolChoice::Required, ToolChoice::Tool("get_weather".into())] {
        let error = body_for(plain, thinking(Thinking::Budget(2048)).tool_choice(choice))
            .await
            .expect_err("refused");
        assert!(
            matches!(&error, ModelError::Unsupported { message } if message.contains("OutputMode::Native")),
            "{error:?}"
        );
    }
    let error = body_for(plain, thinking(Thinking::Budget(2048)).temperature(0.2))
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, ModelError::Unsupported { message } if message.contains("temperature")),
        "{error:?}"
    );
    // The adapter's own temperature counts too.
    let error = body_for(
        |base| plain(base).temperature(0.5),
        thinking(Thinking::Effort(Effort::Low)),
    )
    .await
    .expect_err("refused");
    assert!(matches!(error, ModelError::Unsupported { .. }));
}

#[tokio::test]
async fn a_typed_run_in_tool_mode_with_thinking_is_told_what_to_use() {
    let server = serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let agent = agent!(claude_at(&server.uri()), get_weather)
        .model_settings(thinking(Thinking::Budget(2048)));
    let error = agent
        .run("File a ticket")
        .output::<tests::Ticket>()
        .await
        .expect_err("refused");
    let RunError::Model { source, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        matches!(source, ModelError::Unsupported { message } if message.contains("OutputMode::Prompted")),
        "{source:?}"
    );
    assert!(received(&server).await.is_empty());
}

/// Every event of one streamed call answering `messages`.
async fn stream_events(claude: &Anthropic) -> Vec<Result<StreamEvent, ModelError>> {
    let messages = [Message::user("北京天气？")];
    let settings = thinking(Thinking::Budget(2048));
    claude
        .chat_stream(ChatRequest::new(&messages, &[]).with_settings(&settings))
        .collect()
        .await
}

/// The reply the plain call gives for a fixture body.
async fn plain_reply(body: &str) -> ChatResponse {
    let server = serve_in_order(vec![json_reply(200, body)]).await;
    let messages = [Message::user("北京天气？")];
    claude_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap()
}

#[tokio::test]
async fn thinking_streams_as_reasoning_deltas_at_any_split_and_ends_as_the_plain_reply() {
    let plain = plain_reply(&fixture("anthropic", "thinking_tool_use.json")).await;
    assert_eq!(plain.finish_reason, Some(FinishReason::ToolCalls));
    for piece in [1, 2, 3, 7, 64, 4096] {
        let (base, requests) = serve_event_streams(
            vec![fixture("anthropic", "stream_thinking_tool_use.sse")],
            piece,
        )
        .await;
        let events = stream_events(&claude_at(&base)).await;
        let reasoning: String = events
            .iter()
            .filter_map(|event| match event {
                Ok(StreamEvent::ReasoningDelta(text)) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            reasoning, plain.message.reasoning[0].text,
            "pieces of {piece}"
        );
        let Some(Ok(StreamEvent::Finished(streamed))) = events.last() else {
            panic!("pieces of {piece}: {events:?}")
        };
        assert_eq!(streamed, &plain, "pieces of {piece}");
        // The reasoning comes before the text.
        let first_text = events
            .iter()
            .position(|event| matches!(event, Ok(StreamEvent::TextDelta(_))))
            .unwrap();
        let last_reasoning = events
            .iter()
            .rposition(|event| matches!(event, Ok(StreamEvent::ReasoningDelta(_))))
            .unwrap();
        assert!(last_reasoning < first_text);
        let request: Value = serde_json::from_str(&requests.lock().unwrap()[0]).unwrap();
        assert_eq!(request["stream"], true);
        assert_eq!(request["thinking"]["budget_tokens"], 2048);
    }
}

#[tokio::test]
async fn a_streamed_run_yields_reasoning_deltas_and_sends_the_thinking_back() {
    for piece in [1, 5, 4096] {
        let (base, requests) = serve_event_streams(
            vec![
                fixture("anthropic", "stream_thinking_tool_use.sse"),
                fixture("anthropic", "stream_thinking_answer.sse"),
            ],
            piece,
        )
        .await;
        let agent =
            agent!(claude_at(&base), get_weather).model_settings(thinking(Thinking::Budget(2048)));
        let events: Vec<RunEvent> = agent.run("北京天气？").stream().collect().await;
        let reasoning = streamed_reasoning(&events);
        assert_eq!(
            reasoning,
            "The user wants Beijing's weather. 先查天气，再回答。小雨, 18°C: an umbrella helps.",
            "pieces of {piece}"
        );
        let Some(RunEvent::Finished(Ok(output))) = events.last() else {
            panic!("{:?}", events.last())
        };
        assert_eq!(output.text, "北京今天有小雨，记得带伞。");
        assert_eq!(output.usage.reasoning_tokens, 41, "pieces of {piece}");
        let second: Value = serde_json::from_str(&requests.lock().unwrap()[1]).unwrap();
        assert_eq!(
            second["messages"][1]["content"],
            fixture_blocks("thinking_tool_use.json"),
            "pieces of {piece}"
        );
    }
}
