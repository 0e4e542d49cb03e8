//! OpenAI streaming over real HTTP: server-sent events in the documented chunk format, written a
//! few bytes at a time by a loopback server, so characters and escapes split across reads.

use agent_core::providers::OpenAi;
use agent_core::{AssistantMessage, Message, ModelError, RunError, RunEvent, ToolCall, agent};
use futures_util::StreamExt;
use tests::http::{fixture, quick_retries, serve_event_streams};
use tests::{get_weather, now};

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
        let events: Vec<RunEvent> = agent.run_stream("北京天气？").collect().await;

        let text: String = events
            .iter()
            .filter_map(|event| match event {
                RunEvent::TextDelta(text) => Some(text.as_str()),
                _ => None,
            })
            .collect();
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

async fn stream_error(body: &str) -> ModelError {
    let (base, _) = serve_event_streams(vec![body.to_owned()], 16).await;
    let agent = agent!(openai_at(&base), get_weather);
    let events: Vec<RunEvent> = agent.run_stream("hi").collect().await;
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

#[tokio::test]
async fn an_error_event_is_a_typed_error() {
    let body = "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":\"server_error\"}}\n\n";
    let error = stream_error(body).await;
    assert!(
        matches!(&error, ModelError::Stream { message } if message == "The server had an error while processing your request."),
        "{error:?}"
    );
}

#[tokio::test]
async fn a_chunk_that_is_not_json_is_a_decode_error() {
    let error =
        stream_error("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}\n\n").await;
    assert!(matches!(error, ModelError::Decode { .. }), "{error:?}");
}
