//! OpenAI streaming over real HTTP: server-sent events in the documented chunk format, written a
//! few bytes at a time by a loopback server, so characters and escapes split across reads.

use agent_core::providers::OpenAi;
use agent_core::{
    AssistantMessage, ChatRequest, Message, Model, ModelError, RunError, RunEvent, StreamEvent,
    ToolCall, agent,
};
use futures_util::StreamExt;
use tests::http::{fixture, json_reply, quick_retries, serve_event_streams, serve_in_order};
use tests::{get_time, get_weather, now, streamed_text, tool_results};

fn openai_at(base: &str) -> OpenAi {
    OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{base}/v1"))
        .http_config(quick_retries())
}

#[tokio::test]
async fn a_streamed_run_assembles_the_same_replies_as_the_plain_api() {
    for piece in [1, 5, 64, 4096] {
        let (base, requests) = serve_event_streams(
            vec![
                fixture("openai", "stream_two_calls.sse"),
                fixture("openai", "stream_chinese_text.sse"),
            ],
            piece,
        )
        .await;
        let agent = agent!(openai_at(&base), get_weather, now);
        let events: Vec<RunEvent> = agent.run("北京天气？").stream().collect().await;

        let text = streamed_text(&events);
        assert_eq!(
            text, "北京今天有小雨，记得带伞。",
            "pieces of {piece} bytes"
        );
        let Some(RunEvent::Finished(Ok(output))) = events.last() else {
            panic!("pieces of {piece}: {events:?}")
        };
        // The calls are whole, in index order, exactly as a non-streaming reply has them.
        assert_eq!(
            output.messages[2],
            Message::Assistant(AssistantMessage::tool_calls([
                ToolCall::new("call_w1", "get_weather", r#"{"city":"北京"}"#),
                ToolCall::new("call_t1", "now", ""),
            ]))
        );
        assert_eq!(output.text, "北京今天有小雨，记得带伞。");
        assert_eq!(output.usage.input_tokens, 120 + 170);
        assert_eq!(output.usage.output_tokens, 30 + 12);
        let Message::Tool(weather) = &output.messages[3] else {
            panic!()
        };
        assert!(!weather.is_error, "{}", weather.content);
        let Message::Tool(time) = &output.messages[4] else {
            panic!()
        };
        assert_eq!(time.content, "12:00", "empty arguments mean {{}}");

        let first: serde_json::Value = serde_json::from_str(&requests.lock().unwrap()[0]).unwrap();
        assert_eq!(first["stream"], true);
        assert_eq!(first["stream_options"]["include_usage"], true);
    }
}

/// The error a run streaming `body` fails with, with no retries: the error as it is.
async fn stream_error(body: &str) -> ModelError {
    let (base, _) = serve_event_streams(vec![body.to_owned()], 16).await;
    let agent = agent!(
        openai_at(&base).http_config(quick_retries().max_retries(0)),
        get_weather
    );
    let events: Vec<RunEvent> = agent.run("hi").stream().collect().await;
    match events.into_iter().last() {
        Some(RunEvent::Finished(Err(RunError::Model { source, .. }))) => source,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_stream_cut_off_before_its_end_is_a_typed_error() {
    let whole = fixture("openai", "stream_two_calls.sse");
    let cut = &whole[..whole.find("\"finish_reason\":\"tool_calls\"").unwrap()];
    let error = stream_error(cut).await;
    assert!(
        matches!(&error, ModelError::Stream { message } if message.contains("cut off")),
        "{error:?}"
    );
}

const SERVER_ERROR: &str = "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\"}}\n\n";

#[tokio::test]
async fn an_error_event_is_a_typed_error() {
    let error = stream_error(SERVER_ERROR).await;
    assert!(
        matches!(&error, ModelError::Server { status: 500, message } if message == "The server had an error while processing your request."),
        "{error:?}"
    );
    assert!(error.is_retryable(), "as a 500 is");
}

#[tokio::test]
async fn an_error_chunk_before_any_content_is_retried() {
    let (base, requests) = serve_event_streams(
        vec![
            SERVER_ERROR.to_owned(),
            fixture("openai", "stream_chinese_text.sse"),
        ],
        16,
    )
    .await;
    let events: Vec<RunEvent> = agent!(openai_at(&base), get_weather)
        .run("北京天气？")
        .stream()
        .collect()
        .await;
    let text = streamed_text(&events);
    assert_eq!(text, "北京今天有小雨，记得带伞。", "once, not twice");
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{events:?}")
    };
    assert_eq!(output.text, "北京今天有小雨，记得带伞。");
    assert_eq!(requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_error_chunk_after_content_ends_the_stream_without_a_retry() {
    let whole = fixture("openai", "stream_chinese_text.sse");
    let second_event = whole.match_indices("\n\n").nth(1).unwrap().0 + 2;
    let body = whole[..second_event].to_owned() + SERVER_ERROR;
    let (base, requests) = serve_event_streams(vec![body, whole], 16).await;
    let messages = [Message::user("hi")];
    let events: Vec<Result<StreamEvent, ModelError>> = openai_at(&base)
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    assert!(
        matches!(events.as_slice(), [Ok(StreamEvent::TextDelta(text)), Err(ModelError::Server { status: 500, .. })] if text == "北京今天"),
        "{events:?}"
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn error_chunks_sort_like_their_http_statuses() {
    let quota = fixture("openai", "error_insufficient_quota.json");
    let overloaded = r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":"overloaded"}}"#;
    let vllm = r#"{"error":{"object":"error","message":"This model's maximum context length is 32768 tokens.","type":"BadRequestError","param":null,"code":400}}"#;
    let openrouter =
        r#"{"error":{"code":429,"message":"Rate limit exceeded: free-models-per-min."}}"#;
    for (status, body) in [
        (500, SERVER_ERROR["data: ".len()..].trim().to_owned()),
        (503, overloaded.to_owned()),
        (429, fixture("openai", "error_rate_limit.json")),
        (429, quota),
        (401, fixture("openai", "error_auth.json")),
        (400, fixture("openai", "error_invalid_request.json")),
        (400, vllm.to_owned()),
        (429, openrouter.to_owned()),
    ] {
        let chunk: serde_json::Value = serde_json::from_str(&body).unwrap();
        let in_stream = stream_error(&format!("data: {chunk}\n\n")).await;
        let server = serve_in_order(vec![json_reply(status, &body)]).await;
        let messages = [Message::user("hi")];
        let as_status = openai_at(&server.uri())
            .http_config(quick_retries().max_retries(0))
            .chat(ChatRequest::new(&messages, &[]))
            .await
            .expect_err("an error status");
        assert_eq!(format!("{in_stream:?}"), format!("{as_status:?}"), "{body}");
        assert_eq!(in_stream.is_retryable(), as_status.is_retryable());
    }
    let quota = stream_error(&format!(
        "data: {}\n\n",
        serde_json::from_str::<serde_json::Value>(&fixture(
            "openai",
            "error_insufficient_quota.json"
        ))
        .unwrap()
    ))
    .await;
    assert!(
        matches!(quota, ModelError::QuotaExhausted { .. }),
        "{quota:?}"
    );
    // An error the adapter cannot sort stays a stream error, with its message.
    let error = stream_error(
        "data: {\"error\":{\"message\":\"Something new\",\"type\":\"brand_new\"}}\n\n",
    )
    .await;
    assert!(
        matches!(&error, ModelError::Stream { message } if message == "Something new"),
        "{error:?}"
    );
    let error = stream_error("data: {\"error\":\"upstream went away\"}\n\n").await;
    assert!(
        matches!(&error, ModelError::Stream { message } if message == "upstream went away"),
        "{error:?}"
    );
}

#[tokio::test]
async fn streamed_calls_without_ids_or_with_object_arguments_are_paired_and_run() {
    let (base, requests) = serve_event_streams(
        vec![
            fixture("openai", "stream_calls_without_ids.sse"),
            fixture("openai", "stream_chinese_text.sse"),
        ],
        7,
    )
    .await;
    let events: Vec<RunEvent> = agent!(openai_at(&base), get_weather, get_time)
        .run("北京天气？")
        .stream()
        .collect()
        .await;
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{events:?}")
    };
    let Message::Assistant(reply) = &output.messages[2] else {
        panic!("{:?}", output.messages[2])
    };
    let made_up = &reply.tool_calls[0].id;
    assert!(made_up.starts_with("call_agent_"), "{made_up}");
    assert_eq!(
        reply.tool_calls[0],
        ToolCall::new(made_up.clone(), "get_weather", r#"{"city":"北京"}"#)
    );
    // An id sent with every fragment is the call's id once.
    assert_eq!(
        reply.tool_calls[1],
        ToolCall::new("call_t9", "get_time", r#"{"city":"Beijing"}"#)
    );
    let results = tool_results(output);
    assert_eq!(results[0].tool_call_id, *made_up);
    assert!(!results[0].is_error, "{}", results[0].content);
    assert_eq!(results[1].tool_call_id, "call_t9");
    assert!(!results[1].is_error, "{}", results[1].content);
    // Sent back paired: the assistant call and its result carry the same id.
    let second: serde_json::Value = serde_json::from_str(&requests.lock().unwrap()[1]).unwrap();
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["id"],
        made_up.as_str()
    );
    assert_eq!(
        second["messages"][2]["tool_calls"][0]["function"]["arguments"],
        r#"{"city":"北京"}"#
    );
    assert_eq!(second["messages"][3]["tool_call_id"], made_up.as_str());

    // The stream starts each call once, with the id and arguments it finishes with.
    let (base, _) =
        serve_event_streams(vec![fixture("openai", "stream_calls_without_ids.sse")], 5).await;
    let messages = [Message::user("hi")];
    let events: Vec<Result<StreamEvent, ModelError>> = openai_at(&base)
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    let Some(Ok(StreamEvent::Finished(reply))) = events.last() else {
        panic!("{events:?}")
    };
    let mut started = Vec::new();
    let mut arguments = [String::new(), String::new()];
    for event in &events {
        match event {
            Ok(StreamEvent::ToolCallStart { index, id, name }) => started.push((*index, id, name)),
            Ok(StreamEvent::ToolCallArguments { index, fragment }) => {
                assert!(started.iter().any(|(started, ..)| started == index));
                arguments[*index].push_str(fragment);
            }
            _ => {}
        }
    }
    assert_eq!(started.len(), 2, "{events:?}");
    for (index, id, name) in started {
        assert_eq!(*id, reply.message.tool_calls[index].id);
        assert_eq!(*name, reply.message.tool_calls[index].name);
        assert_eq!(arguments[index], reply.message.tool_calls[index].arguments);
    }
    assert!(reply.message.tool_calls[0].id.starts_with("call_agent_"));
}

#[tokio::test]
async fn a_stream_cut_at_the_token_limit_in_a_calls_arguments_does_not_run_it() {
    let (base, requests) = serve_event_streams(
        vec![
            fixture("openai", "stream_cut_at_length.sse"),
            fixture("openai", "stream_chinese_text.sse"),
        ],
        16,
    )
    .await;
    let events: Vec<RunEvent> = agent!(openai_at(&base), get_weather)
        .run("北京和上海的天气？")
        .stream()
        .collect()
        .await;
    let Some(RunEvent::Finished(Ok(output))) = events.last() else {
        panic!("{events:?}")
    };
    let Message::Assistant(reply) = &output.messages[2] else {
        panic!()
    };
    assert_eq!(
        reply.tool_calls[1].arguments, r#"{"city":"上"#,
        "kept as it came"
    );
    let Message::Tool(weather) = &output.messages[3] else {
        panic!()
    };
    assert!(!weather.is_error, "{}", weather.content);
    let Message::Tool(cut) = &output.messages[4] else {
        panic!()
    };
    assert_eq!(cut.tool_call_id, "call_w3");
    assert!(cut.is_error);
    assert!(
        cut.content.starts_with(
            "Error: the call was not run: your reply was cut off at the output token limit"
        ),
        "{}",
        cut.content
    );
    let second: serde_json::Value = serde_json::from_str(&requests.lock().unwrap()[1]).unwrap();
    assert_eq!(second["messages"][4]["content"], cut.content.as_str());
}

#[tokio::test]
async fn a_chunk_that_is_not_json_is_a_decode_error() {
    let error =
        stream_error("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}\n\n").await;
    assert!(matches!(error, ModelError::Decode { .. }), "{error:?}");
}
