//! The OpenAI Responses adapter over real HTTP against loopback servers that speak the documented
//! wire format (<https://platform.openai.com/docs/api-reference/responses>): plain replies as JSON
//! bodies, streamed ones as server-sent events written a few bytes at a time. Its errors are in
//! `openai_responses_errors.rs`.

use agent_core::providers::OpenAiResponses;
use agent_core::{
    AssistantMessage, ChatRequest, Effort, Message, Model, ModelError, ModelSettings, Part,
    Reasoning, ResponseFormat, RunEvent, StreamEvent, Thinking, ToolCall, ToolChoice, ToolDef,
    ToolResultMessage, agent,
};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::http::{
    json_reply, quick_retries, received, request_bodies, serve_event_streams, serve_in_order,
};
use tests::responses_wire::{
    ANSWER, answer, call_item, reasoning_item, response, responses_at, stream_of, two_calls,
};
use tests::{
    get_time, get_weather, streamed_output, streamed_reasoning, streamed_text, tool_results,
};

#[tokio::test]
async fn a_run_with_parallel_calls_pairs_calls_and_outputs_by_call_id() {
    let server = serve_in_order(vec![
        json_reply(200, &two_calls().to_string()),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let agent =
        agent!(responses_at(&server.uri()), get_weather, get_time).system("Answer briefly.");
    let output = agent.run("北京天气？现在几点？").await.unwrap();

    assert_eq!(output.text, ANSWER);
    assert_eq!(output.steps, 2);
    assert_eq!(output.usage.input_tokens, 120 + 170);
    assert_eq!(output.usage.output_tokens, 30 + 21);
    assert_eq!(
        output.messages[2],
        Message::Assistant(AssistantMessage::tool_calls([
            ToolCall::new("call_w1", "get_weather", r#"{"city":"北京","unit":null}"#),
            ToolCall::new("call_t1", "get_time", r#"{"city":"Beijing"}"#),
        ]))
    );
    let results = tool_results(&output);
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|result| !result.is_error), "{results:?}");
    assert_eq!(results[1].content, "It is 08:30 in Beijing.");

    let requests = received(&server).await;
    assert_eq!(requests[0].url.path(), "/v1/responses");
    assert_eq!(requests[0].headers["authorization"], "Bearer test-key-123");
    let bodies = request_bodies(&server).await;
    let input = bodies[1]["input"].as_array().unwrap();
    let calls: Vec<&Value> = input
        .iter()
        .filter(|item| item["type"] == "function_call")
        .collect();
    let outputs: Vec<&Value> = input
        .iter()
        .filter(|item| item["type"] == "function_call_output")
        .collect();
    assert_eq!(calls.len(), 2);
    for (call, result) in calls.iter().zip(&outputs) {
        assert_eq!(call["call_id"], result["call_id"]);
    }
    assert_eq!(outputs[0]["call_id"], "call_w1");
    assert_eq!(outputs[1]["output"], "It is 08:30 in Beijing.");
    insta::assert_json_snapshot!("openai_responses_requests", bodies);
}

#[tokio::test]
async fn a_streamed_run_assembles_the_same_replies_as_the_plain_one() {
    let server = serve_in_order(vec![
        json_reply(200, &two_calls().to_string()),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let plain = agent!(responses_at(&server.uri()), get_weather, get_time)
        .run("北京天气？现在几点？")
        .await
        .unwrap();
    let plain_bodies = request_bodies(&server).await;

    for piece in [1, 3, 64, 4096] {
        let (base, requests) =
            serve_event_streams(vec![stream_of(&two_calls()), stream_of(&answer())], piece).await;
        let events: Vec<RunEvent> = agent!(responses_at(&base), get_weather, get_time)
            .run("北京天气？现在几点？")
            .stream()
            .collect()
            .await;
        assert_eq!(streamed_text(&events), ANSWER, "pieces of {piece} bytes");
        let output = streamed_output(&events);
        assert_eq!(output.messages, plain.messages, "pieces of {piece} bytes");
        assert_eq!(output.usage, plain.usage);

        let requests = requests.lock().unwrap();
        for (sent, plain) in requests.iter().zip(&plain_bodies) {
            let mut sent: Value = serde_json::from_str(sent).unwrap();
            assert_eq!(sent["stream"], true);
            sent.as_object_mut().unwrap().remove("stream");
            assert_eq!(&sent, plain, "the same request, streamed");
        }
    }
}

/// A weather report: a tool schema strict mode can say, and one it cannot (a map).
fn tools() -> Vec<ToolDef> {
    vec![
        ToolDef::new(
            "get_weather",
            "Look up today's weather for a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}),
        ),
        ToolDef::new(
            "tag",
            "Tag a photo.",
            json!({"type": "object", "properties": {"tags": {"type": "object", "additionalProperties": {"type": "string"}}}, "required": ["tags"]}),
        ),
    ]
}

/// The body the adapter sends for `messages`, answered with a plain text reply.
async fn body_for(
    model: impl Fn(&str) -> OpenAiResponses,
    messages: &[Message],
    settings: &ModelSettings,
    format: Option<&ResponseFormat>,
) -> Value {
    let server = serve_in_order(vec![json_reply(200, &answer().to_string())]).await;
    let tools = tools();
    let mut request = ChatRequest::new(messages, &tools).with_settings(settings);
    if let Some(format) = format {
        request = request.with_response_format(format);
    }
    let reply = model(&server.uri()).chat(request).await.unwrap();
    assert_eq!(reply.message.content, ANSWER);
    request_bodies(&server).await.remove(0)
}

#[tokio::test]
async fn images_documents_and_tool_result_parts_go_as_input_content() {
    let png = [0x89, b'P', b'N', b'G', 0x0d, 0x0a];
    let messages = vec![
        Message::system("You read receipts."),
        Message::user("What is on these?")
            .with_part(Part::image("image/png", png))
            .with_part(Part::image_url("https://example.com/receipt.jpg"))
            .with_part(Part::document("application/pdf", b"%PDF-1.7 receipt"))
            .with_part(Part::document_url("https://example.com/terms.pdf"))
            .with_part(Part::text("Total them up.")),
        Message::Assistant(
            AssistantMessage::text("Let me take a photo of the till.").with_tool_call(
                ToolCall::new("call_photo", "get_weather", r#"{"city":"北京"}"#),
            ),
        ),
        Message::Tool(
            ToolResultMessage::new("call_photo", "The till, photographed:")
                .with_part(Part::image("image/png", png)),
        ),
        Message::Tool(ToolResultMessage::error(
            "call_missing",
            "Error: no such call",
        )),
    ];
    let body = body_for(responses_at, &messages, &ModelSettings::new(), None).await;
    // A tool result's parts go inside its output.
    let output = &body["input"][3]["output"];
    assert_eq!(
        output[0],
        json!({"type": "input_text", "text": "The till, photographed:"})
    );
    assert_eq!(output[1]["type"], "input_image");
    assert_eq!(output[1]["image_url"], "data:image/png;base64,iVBORw0K");
    insta::assert_json_snapshot!("openai_responses_parts", body);
}

#[tokio::test]
async fn settings_a_response_format_and_strict_tools_are_sent() {
    let messages = vec![Message::user("Tag this photo.")];
    let settings = ModelSettings::new()
        .tool_choice(ToolChoice::Tool("tag".into()))
        .max_tokens(900)
        .temperature(0.3)
        .thinking(Thinking::Effort(Effort::High));
    let format = ResponseFormat::new(
        "photo_tags",
        json!({"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": "string"}}, "required": ["tags"]}),
    )
    .with_description("The tags of a photo.");
    let body = body_for(responses_at, &messages, &settings, Some(&format)).await;
    assert_eq!(body["tools"][0]["strict"], true);
    assert_eq!(body["tools"][1]["strict"], false, "a map cannot be strict");
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(body["store"], false);
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    insta::assert_json_snapshot!("openai_responses_settings", body);

    // Without strict tools none is strict; thinking off is the least effort; a stored model asks
    // for no encrypted reasoning; `required` and `none` are words.
    for (choice, word) in [
        (ToolChoice::Required, "required"),
        (ToolChoice::None, "none"),
    ] {
        let settings = ModelSettings::new()
            .tool_choice(choice)
            .thinking(Thinking::Off);
        let body = body_for(
            |base| responses_at(base).strict_tools(false).store(true),
            &messages,
            &settings,
            None,
        )
        .await;
        assert_eq!(body["tool_choice"], word);
        assert_eq!(body["reasoning"]["effort"], "minimal");
        assert_eq!(body["store"], true);
        assert!(body.get("include").is_none(), "{body}");
        assert!(
            body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .all(|tool| tool["strict"] == false)
        );
    }
}

#[tokio::test]
async fn audio_is_refused_before_anything_is_sent() {
    let server = serve_in_order(vec![json_reply(200, &answer().to_string())]).await;
    let model = responses_at(&server.uri());
    let messages =
        [Message::user("What does this say?").with_part(Part::audio("audio/wav", b"RIFF"))];
    let error = model
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("audio is refused");
    assert!(
        matches!(&error, ModelError::Unsupported { message } if message.contains("audio")),
        "{error:?}"
    );
    let events: Vec<_> = model
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    assert!(
        matches!(events.as_slice(), [Err(ModelError::Unsupported { .. })]),
        "{events:?}"
    );
    assert!(received(&server).await.is_empty(), "nothing was sent");
}

/// A first reply that reasons, then calls: what a reasoning model sends.
fn reasoning_then_call() -> Value {
    response(
        vec![
            reasoning_item(
                "rs_abc",
                &["**Checking the weather**", "I should look it up for 北京."],
                "gAAAAABencrypted-blob==",
            ),
            call_item("fc_w", "call_w1", "get_weather", r#"{"city":"北京"}"#),
        ],
        80,
        240,
    )
}

#[tokio::test]
async fn reasoning_goes_back_unchanged_before_its_call() {
    let server = serve_in_order(vec![
        json_reply(200, &reasoning_then_call().to_string()),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let agent = agent!(responses_at(&server.uri()), get_weather)
        .model_settings(ModelSettings::new().thinking(Thinking::Effort(Effort::Medium)));
    let output = agent.run("北京天气？").await.unwrap();
    assert_eq!(output.text, ANSWER);
    let Message::Assistant(first) = &output.messages[2] else {
        panic!("{:?}", output.messages[2])
    };
    assert_eq!(
        first.reasoning,
        [
            Reasoning::new("openai_responses", "**Checking the weather**")
                .with_id("rs_abc")
                .with_encrypted("gAAAAABencrypted-blob=="),
            Reasoning::new("openai_responses", "I should look it up for 北京.").with_id("rs_abc"),
        ]
    );

    let bodies = request_bodies(&server).await;
    assert_eq!(
        bodies[0]["reasoning"],
        json!({"effort": "medium", "summary": "auto"})
    );
    let input = bodies[1]["input"].as_array().unwrap();
    let kinds: Vec<&str> = input
        .iter()
        .map(|item| item["type"].as_str().unwrap_or("message"))
        .collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call_output"
        ]
    );
    assert_eq!(input[1], reasoning_then_call()["output"][0], "unchanged");
    assert_eq!(input[2]["call_id"], "call_w1");
    assert_eq!(input[3]["call_id"], "call_w1");
}

#[tokio::test]
async fn reasoning_from_another_provider_or_without_its_encrypted_form_is_not_sent() {
    let mut turn = AssistantMessage::tool_calls([ToolCall::new("call_1", "get_weather", "{}")]);
    turn = turn
        .with_reasoning(Reasoning::new("openai", "Chat Completions thinking"))
        .with_reasoning(Reasoning::new("openai_responses", "kept by id only").with_id("rs_old"))
        .with_reasoning(
            Reasoning::new("openai_responses", "")
                .with_id("rs_new")
                .with_encrypted("blob"),
        );
    let messages = vec![
        Message::user("hi"),
        Message::Assistant(turn),
        Message::Tool(ToolResultMessage::new("call_1", "sunny")),
    ];
    let body = body_for(responses_at, &messages, &ModelSettings::new(), None).await;
    assert_eq!(
        body["input"][1],
        json!({"type": "reasoning", "id": "rs_new", "summary": [], "encrypted_content": "blob"})
    );
    assert_eq!(body["input"][2]["type"], "function_call");
    // A stored model sends none back: the API would pair it by ids the transcript does not keep.
    let body = body_for(
        |base| responses_at(base).store(true),
        &messages,
        &ModelSettings::new(),
        None,
    )
    .await;
    assert_eq!(body["input"][1]["type"], "function_call");
}

#[tokio::test]
async fn streamed_reasoning_arrives_as_reasoning_deltas_at_any_split() {
    let mut plain = None;
    for piece in [1, 2, 5, 4096] {
        let (base, _) = serve_event_streams(
            vec![stream_of(&reasoning_then_call()), stream_of(&answer())],
            piece,
        )
        .await;
        let events: Vec<RunEvent> = agent!(responses_at(&base), get_weather)
            .run("北京天气？")
            .stream()
            .collect()
            .await;
        let reasoning = streamed_reasoning(&events);
        assert_eq!(
            reasoning, "**Checking the weather**I should look it up for 北京.",
            "pieces of {piece}"
        );
        let output = streamed_output(&events);
        assert_eq!(output.text, ANSWER);
        let Message::Assistant(first) = &output.messages[2] else {
            panic!()
        };
        assert_eq!(first.reasoning.len(), 2);
        assert_eq!(
            first.reasoning[0].encrypted.as_deref(),
            Some("gAAAAABencrypted-blob==")
        );
        match &plain {
            None => plain = Some(output.messages.clone()),
            Some(messages) => assert_eq!(&output.messages, messages, "pieces of {piece}"),
        }
    }

    // The model's own stream, written in pieces of every size up to 64 bytes (so every byte
    // boundary falls between two reads in some run), equals the plain reply.
    let messages = [Message::user("北京天气？")];
    let server = serve_in_order(vec![json_reply(200, &reasoning_then_call().to_string())]).await;
    let reply = responses_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap();
    let whole = stream_of(&reasoning_then_call());
    for piece in 1..=whole.len().min(64) {
        let (base, _) = serve_event_streams(vec![whole.clone()], piece).await;
        let events: Vec<StreamEvent> = responses_at(&base)
            .chat_stream(ChatRequest::new(&messages, &[]))
            .map(|event| event.unwrap())
            .collect()
            .await;
        let deltas: Vec<&str> = events
            .iter()
            .filter_map(|event| match event {
                StreamEvent::ReasoningDelta(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            deltas.concat(),
            "**Checking the weather**I should look it up for 北京.",
            "piece {piece}"
        );
        assert!(deltas.len() > 2, "{deltas:?}");
        let Some(StreamEvent::Finished(streamed)) = events.last() else {
            panic!("piece {piece}: {events:?}")
        };
        assert_eq!(streamed, &reply, "piece {piece}");
        assert!(
            events.contains(&StreamEvent::Usage(reply.usage)),
            "{events:?}"
        );
    }
}

#[tokio::test]
async fn a_call_without_a_call_id_gets_one_its_result_carries_back() {
    let mut reply = two_calls();
    reply["output"][0]
        .as_object_mut()
        .unwrap()
        .remove("call_id");
    let server = serve_in_order(vec![
        json_reply(200, &reply.to_string()),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let output = agent!(responses_at(&server.uri()), get_weather, get_time)
        .run("北京天气？")
        .await
        .unwrap();
    let Message::Assistant(first) = &output.messages[2] else {
        panic!()
    };
    let made_up = &first.tool_calls[0].id;
    assert!(made_up.starts_with("call_agent_"), "{made_up}");
    let bodies = request_bodies(&server).await;
    let input = &bodies[1]["input"];
    assert_eq!(input[1]["call_id"], made_up.as_str());
    assert_eq!(input[3]["call_id"], made_up.as_str());
}

#[tokio::test]
async fn encrypted_reasoning_is_asked_for_only_from_models_that_reason() {
    for (model, encrypted, off) in [
        ("gpt-5", true, "minimal"),
        ("gpt-5.1-codex", true, "none"),
        ("o4-mini", true, "low"),
        ("gpt-4.1", false, "low"),
    ] {
        let server = serve_in_order(vec![json_reply(200, &answer().to_string())]).await;
        let responses = OpenAiResponses::new(model)
            .api_key("test-key-123")
            .base_url(&format!("{}/v1", server.uri()))
            .http_config(quick_retries());
        let settings = ModelSettings::new().thinking(Thinking::Off);
        let messages = [Message::user("hi")];
        responses
            .chat(ChatRequest::new(&messages, &[]).with_settings(&settings))
            .await
            .unwrap();
        let body = &request_bodies(&server).await[0];
        let asked = body["include"] == json!(["reasoning.encrypted_content"]);
        assert_eq!(asked, encrypted, "{model}: {body}");
        assert_eq!(body["reasoning"]["effort"], off, "{model}");
    }
    // Said outright, for a model whose name does not tell.
    let server = serve_in_order(vec![json_reply(200, &answer().to_string())]).await;
    let local = OpenAiResponses::new("my-reasoner")
        .base_url(&format!("{}/v1", server.uri()))
        .encrypted_reasoning(true);
    local
        .chat(ChatRequest::new(&[Message::user("hi")], &[]))
        .await
        .unwrap();
    assert_eq!(
        request_bodies(&server).await[0]["include"],
        json!(["reasoning.encrypted_content"])
    );
}
