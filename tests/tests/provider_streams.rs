//! Anthropic and Gemini streaming over real HTTP: each vendor's documented event format, written a
//! few bytes at a time by a loopback server; the assembled replies equal the non-streaming ones.

use agent_core::providers::{Anthropic, Gemini};
use agent_core::{Message, ModelError, RunError, RunEvent, agent};
use futures_util::StreamExt;
use tests::http::{fixture, quick_retries, serve_event_streams};
use tests::{get_weather, now};

fn text_of(events: &[RunEvent]) -> String {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn output_of(events: &[RunEvent]) -> &agent_core::RunOutput {
    match events.last() {
        Some(RunEvent::Finished(Ok(output))) => output,
        other => panic!("expected a finished run, got {other:?}"),
    }
}

fn model_error(events: &[RunEvent]) -> &ModelError {
    match events.last() {
        Some(RunEvent::Finished(Err(RunError::Model { source, .. }))) => source,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn anthropic_streams_assemble_text_and_tool_calls() {
    for piece in [1, 5, 64, 4096] {
        let (base, requests) = serve_event_streams(
            vec![
                fixture("anthropic", "stream_two_tools.sse"),
                fixture("anthropic", "stream_answer.sse"),
            ],
            piece,
        )
        .await;
        let claude = Anthropic::new("claude-sonnet-4-5")
            .base_url(&base)
            .http_config(quick_retries());
        let events: Vec<RunEvent> = agent!(claude, get_weather, now)
            .run_stream("北京天气？")
            .collect()
            .await;
        assert_eq!(
            text_of(&events),
            "查一下北京。北京今天有小雨，记得带伞。",
            "pieces of {piece}"
        );
        let output = output_of(&events);
        let Message::Assistant(first) = &output.messages[2] else {
            panic!()
        };
        assert_eq!(first.content, "查一下北京。");
        let calls: Vec<(&str, &str, &str)> = first
            .tool_calls
            .iter()
            .map(|call| {
                (
                    call.id.as_str(),
                    call.name.as_str(),
                    call.arguments.as_str(),
                )
            })
            .collect();
        assert_eq!(
            calls,
            [
                ("toolu_01W", "get_weather", r#"{"city":"北京"}"#),
                ("toolu_01T", "now", "{}")
            ]
        );
        assert_eq!(output.text, "北京今天有小雨，记得带伞。");
        assert_eq!(output.usage.input_tokens, 472 + 600);
        assert_eq!(output.usage.output_tokens, 89 + 15);
        let Message::Tool(time) = &output.messages[4] else {
            panic!()
        };
        assert_eq!(time.content, "12:00");
        let first_request: serde_json::Value =
            serde_json::from_str(&requests.lock().unwrap()[0]).unwrap();
        assert_eq!(first_request["stream"], true);
    }
}

#[tokio::test]
async fn an_anthropic_error_event_and_a_cut_off_stream_are_typed_errors() {
    let overloaded = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let whole = fixture("anthropic", "stream_answer.sse");
    let cut = whole[..whole.find("event: message_stop").unwrap()].to_owned();
    for (body, expected) in [(overloaded.to_owned(), "Overloaded"), (cut, "cut off")] {
        let (base, _) = serve_event_streams(vec![body], 16).await;
        let claude = Anthropic::new("claude-sonnet-4-5")
            .base_url(&base)
            .http_config(quick_retries());
        let events: Vec<RunEvent> = agent!(claude, get_weather).run_stream("hi").collect().await;
        let error = model_error(&events);
        assert!(
            matches!(error, ModelError::Stream { message } if message.contains(expected)),
            "{error:?}"
        );
    }
}

#[tokio::test]
async fn gemini_streams_assemble_text_and_whole_calls() {
    for piece in [1, 5, 64, 4096] {
        let (base, _) = serve_event_streams(
            vec![
                fixture("gemini", "stream_calls.sse"),
                fixture("gemini", "stream_answer.sse"),
            ],
            piece,
        )
        .await;
        let gemini = Gemini::new("gemini-2.5-flash")
            .base_url(&base)
            .http_config(quick_retries());
        let events: Vec<RunEvent> = agent!(gemini, get_weather, now)
            .run_stream("北京天气？")
            .collect()
            .await;
        assert_eq!(
            text_of(&events),
            "查一下北京。北京今天有小雨，记得带伞。",
            "pieces of {piece}"
        );
        let output = output_of(&events);
        let Message::Assistant(first) = &output.messages[2] else {
            panic!()
        };
        let calls: Vec<(&str, &str)> = first
            .tool_calls
            .iter()
            .map(|call| (call.name.as_str(), call.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            [("get_weather", r#"{"city":"北京"}"#), ("now", "{}")]
        );
        assert_ne!(first.tool_calls[0].id, first.tool_calls[1].id);
        assert_eq!(output.usage.input_tokens, 201 + 260);
        assert_eq!(output.usage.output_tokens, 22 + 15);
        assert!(output.is_finished());
    }
}

#[tokio::test]
async fn a_gemini_stream_without_a_finish_reason_is_cut_off() {
    let whole = fixture("gemini", "stream_answer.sse");
    let first_event = whole.split("\n\n").next().unwrap().to_owned() + "\n\n";
    let (base, _) = serve_event_streams(vec![first_event], 16).await;
    let gemini = Gemini::new("gemini-2.5-flash")
        .base_url(&base)
        .http_config(quick_retries());
    let events: Vec<RunEvent> = agent!(gemini, get_weather).run_stream("hi").collect().await;
    assert!(
        matches!(model_error(&events), ModelError::Stream { message } if message.contains("cut off"))
    );
}
