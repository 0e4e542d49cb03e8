//! Anthropic and Gemini streaming over real HTTP: each vendor's documented event format, written a
//! few bytes at a time by a loopback server; the assembled replies equal the non-streaming ones.

use std::time::{Duration, Instant};

use agent_core::providers::{Anthropic, Gemini, HttpConfig};
use agent_core::{
    ChatRequest, FinishReason, Message, Model, ModelError, RunError, RunEvent, StreamEvent, agent,
};
use futures_util::StreamExt;
use serde_json::json;
use tests::http::{
    event_stream_reply, fixture, json_reply, no_retries, quick_retries, received,
    serve_event_streams, serve_in_order,
};
use tests::{finished_stream, get_weather, now, streamed_output, streamed_text};
use wiremock::ResponseTemplate;

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
            .run("北京天气？")
            .stream()
            .collect()
            .await;
        assert_eq!(
            streamed_text(&events),
            "查一下北京。北京今天有小雨，记得带伞。",
            "pieces of {piece}"
        );
        let output = streamed_output(&events);
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
async fn an_anthropic_stream_cut_off_before_its_stop_reason_is_a_typed_error() {
    let whole = fixture("anthropic", "stream_answer.sse");
    let cut = whole[..whole.find("event: message_delta").unwrap()].to_owned();
    let (base, _) = serve_event_streams(vec![cut], 16).await;
    let claude = Anthropic::new("claude-sonnet-4-5")
        .base_url(&base)
        .http_config(quick_retries());
    let events: Vec<RunEvent> = agent!(claude, get_weather)
        .run("hi")
        .stream()
        .collect()
        .await;
    let error = model_error(&events);
    assert!(
        matches!(error, ModelError::Stream { message } if message.contains("cut off")),
        "{error:?}"
    );
}

fn claude_at(base: &str, config: HttpConfig) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .base_url(base)
        .http_config(config)
}

fn gemini_at(base: &str, config: HttpConfig) -> Gemini {
    Gemini::new("gemini-2.5-flash")
        .base_url(&format!("{base}/v1beta"))
        .http_config(config)
}

/// Every event of one streamed model call.
async fn stream_events(model: &dyn Model) -> Vec<Result<StreamEvent, ModelError>> {
    let messages = [Message::user("北京天气？")];
    model
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await
}

/// The error a model stream ended with, after checking it ended there and nowhere else.
fn stream_failure(events: &[Result<StreamEvent, ModelError>]) -> &ModelError {
    let (last, before) = events.split_last().expect("an event");
    assert!(before.iter().all(Result::is_ok), "{events:?}");
    match last {
        Err(error) => error,
        Ok(event) => panic!("expected an error, got {event:?} in {events:?}"),
    }
}

#[tokio::test]
async fn an_anthropic_overloaded_event_before_any_content_is_retried_like_a_529() {
    let (base, requests) = serve_event_streams(
        vec![
            fixture("anthropic", "stream_overloaded.sse"),
            fixture("anthropic", "stream_answer.sse"),
        ],
        16,
    )
    .await;
    let claude = claude_at(&base, quick_retries());
    let events = stream_events(&claude).await;
    let (deltas, reply) = finished_stream(&events);
    // The failed attempt yielded nothing, so nothing is doubled.
    assert_eq!(deltas, ["北京今天有小雨，", "记得带伞。"]);
    assert_eq!(reply.message.content, "北京今天有小雨，记得带伞。");
    assert_eq!(reply.finish_reason, Some(FinishReason::Stop));
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    assert_eq!(requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn an_anthropic_overloaded_event_is_overloaded_when_no_retry_is_left() {
    let (base, requests) =
        serve_event_streams(vec![fixture("anthropic", "stream_overloaded.sse")], 16).await;
    let claude = claude_at(&base, quick_retries().max_retries(0));
    let events = stream_events(&claude).await;
    let error = stream_failure(&events);
    assert!(
        matches!(error, ModelError::Overloaded { status: 529, message } if message == "Overloaded"),
        "{error:?}"
    );
    assert!(error.is_retryable());
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn an_anthropic_error_event_after_content_ends_the_stream_without_a_retry() {
    let whole = fixture("anthropic", "stream_answer.sse");
    let overloaded = fixture("anthropic", "stream_overloaded.sse");
    let error_event = &overloaded[overloaded.find("event: error").unwrap()..];
    let body = whole[..whole.find("event: content_block_stop").unwrap()].to_owned() + error_event;
    // A second stream is there to be taken: it must not be.
    let (base, requests) = serve_event_streams(vec![body, whole.clone()], 16).await;
    let claude = claude_at(&base, quick_retries());
    let events = stream_events(&claude).await;
    let error = stream_failure(&events);
    assert!(
        matches!(error, ModelError::Overloaded { status: 529, .. }),
        "{error:?}"
    );
    let deltas: Vec<&StreamEvent> = events
        .iter()
        .filter_map(|event| event.as_ref().ok())
        .collect();
    assert_eq!(
        deltas,
        [
            &StreamEvent::TextDelta("北京今天有小雨，".into()),
            &StreamEvent::TextDelta("记得带伞。".into())
        ]
    );
    assert_eq!(requests.lock().unwrap().len(), 1);
}

/// The error a model meets when the server answers `reply`, with no retries.
async fn http_error(model: impl Fn(&str) -> Box<dyn Model>, reply: ResponseTemplate) -> ModelError {
    let server = serve_in_order(vec![reply]).await;
    let messages = [Message::user("hi")];
    let model = model(&server.uri());
    model
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("an error status")
}

/// Checks that an error reported in a stream is the same error as the HTTP status: variant,
/// status, message, delay, and so whether it is retried.
fn assert_same_error(in_stream: &ModelError, as_status: &ModelError, what: &str) {
    assert_eq!(
        format!("{in_stream:?}"),
        format!("{as_status:?}"),
        "{what}: in the stream, then as a status"
    );
    assert_eq!(in_stream.is_retryable(), as_status.is_retryable(), "{what}");
}

#[tokio::test]
async fn anthropic_error_events_sort_like_their_http_statuses() {
    let start = fixture("anthropic", "stream_overloaded.sse");
    let start = &start[..start.find("event: error").unwrap()];
    for (status, kind) in [
        (400, "invalid_request_error"),
        (401, "authentication_error"),
        (402, "billing_error"),
        (429, "rate_limit_error"),
        (500, "api_error"),
        (504, "timeout_error"),
        (529, "overloaded_error"),
    ] {
        let error =
            json!({"type": "error", "error": {"type": kind, "message": format!("{kind} (test)")}});
        let body = format!("{start}event: error\ndata: {error}\n\n");
        let (base, _) = serve_event_streams(vec![body], 16).await;
        let events = stream_events(&claude_at(&base, no_retries())).await;
        let in_stream = stream_failure(&events);
        let as_status = http_error(
            |base| Box::new(claude_at(base, no_retries())),
            json_reply(status, &error.to_string()),
        )
        .await;
        assert_same_error(in_stream, &as_status, kind);
    }
    // A billing error is an exhausted quota; a type the adapter does not know stays a stream error.
    let body = format!(
        "{start}event: error\ndata: {}\n\n",
        json!({"type": "error", "error": {"type": "billing_error", "message": "Your credit balance is too low"}})
    );
    let (base, _) = serve_event_streams(vec![body], 16).await;
    let events = stream_events(&claude_at(&base, no_retries())).await;
    assert!(matches!(
        stream_failure(&events),
        ModelError::QuotaExhausted { message } if message == "Your credit balance is too low"
    ));
    let body = format!(
        "{start}event: error\ndata: {}\n\n",
        json!({"type": "error", "error": {"type": "brand_new_error", "message": "Something new"}})
    );
    let (base, _) = serve_event_streams(vec![body], 16).await;
    let events = stream_events(&claude_at(&base, quick_retries())).await;
    let error = stream_failure(&events);
    assert!(
        matches!(error, ModelError::Stream { message } if message == "Something new"),
        "{error:?}"
    );
}

#[tokio::test]
async fn an_anthropic_stream_closed_after_its_stop_reason_is_whole() {
    let whole = fixture("anthropic", "stream_answer.sse");
    let stop = whole.find("event: message_stop").unwrap();
    let stop_data = stop + whole[stop..].find("data: ").unwrap();
    let stop_line_end = stop_data + whole[stop_data..].find('\n').unwrap();
    let delta_data = whole.find("data: {\"type\":\"message_delta\"").unwrap();
    let delta_line_end = delta_data + whole[delta_data..].find('\n').unwrap();
    let bodies = [
        // `message_stop`'s data line, then the connection closes: no blank line.
        &whole[..=stop_line_end],
        // Not even the line's end.
        &whole[..stop_line_end],
        // No `message_stop` at all, after a whole `message_delta`.
        &whole[..stop],
        // `message_delta`'s data line, and nothing more.
        &whole[..=delta_line_end],
    ];
    for (case, body) in bodies.into_iter().enumerate() {
        for piece in [1, 7, 4096] {
            let (base, _) = serve_event_streams(vec![body.to_owned()], piece).await;
            let events = stream_events(&claude_at(&base, no_retries())).await;
            let (deltas, reply) = finished_stream(&events);
            assert_eq!(deltas.concat(), "北京今天有小雨，记得带伞。", "case {case}");
            assert_eq!(reply.message.content, "北京今天有小雨，记得带伞。");
            assert_eq!(reply.finish_reason, Some(FinishReason::Stop), "case {case}");
            assert_eq!(reply.usage.output_tokens, 15, "case {case}");
        }
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
            .run("北京天气？")
            .stream()
            .collect()
            .await;
        assert_eq!(
            streamed_text(&events),
            "查一下北京。北京今天有小雨，记得带伞。",
            "pieces of {piece}"
        );
        let output = streamed_output(&events);
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
    let events: Vec<RunEvent> = agent!(gemini, get_weather)
        .run("hi")
        .stream()
        .collect()
        .await;
    assert!(
        matches!(model_error(&events), ModelError::Stream { message } if message.contains("cut off"))
    );
}

/// A Gemini error body (a fixture, written over several lines) as one stream event.
fn gemini_error_event(body: &str) -> String {
    let error: serde_json::Value = serde_json::from_str(body).unwrap();
    format!("data: {error}\r\n\r\n")
}

#[tokio::test]
async fn a_gemini_error_chunk_before_any_content_is_retried() {
    let (base, requests) = serve_event_streams(
        vec![
            gemini_error_event(&fixture("gemini", "error_unavailable.json")),
            fixture("gemini", "stream_answer.sse"),
        ],
        16,
    )
    .await;
    let events = stream_events(&gemini_at(&base, quick_retries())).await;
    let (deltas, reply) = finished_stream(&events);
    assert_eq!(deltas, ["北京今天有小雨，", "记得带伞。"]);
    assert_eq!(reply.finish_reason, Some(FinishReason::Stop));
    assert_eq!(requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn gemini_error_chunks_sort_like_their_http_statuses() {
    let internal =
        r#"{"error":{"code":500,"message":"An internal error has occurred.","status":"INTERNAL"}}"#;
    for (status, body) in [
        (503, fixture("gemini", "error_unavailable.json")),
        (500, internal.to_owned()),
        (400, fixture("gemini", "error_invalid_argument.json")),
        (429, fixture("gemini", "error_minute_quota.json")),
        (429, fixture("gemini", "error_daily_quota.json")),
    ] {
        let (base, _) = serve_event_streams(vec![gemini_error_event(&body)], 16).await;
        let events = stream_events(&gemini_at(&base, no_retries())).await;
        let in_stream = stream_failure(&events);
        let as_status = http_error(
            |base| Box::new(gemini_at(base, no_retries())),
            json_reply(status, &body),
        )
        .await;
        assert_same_error(in_stream, &as_status, &body);
    }
    // Without a numeric code, the status name says it.
    let body = r#"data: {"error":{"message":"The model is overloaded.","status":"UNAVAILABLE"}}"#;
    let (base, _) = serve_event_streams(vec![format!("{body}\r\n\r\n")], 16).await;
    let events = stream_events(&gemini_at(&base, no_retries())).await;
    assert!(matches!(
        stream_failure(&events),
        ModelError::Overloaded { status: 503, message } if message == "The model is overloaded."
    ));
}

#[tokio::test]
async fn a_gemini_daily_quota_is_exhausted_and_never_retried() {
    let daily = || json_reply(429, &fixture("gemini", "error_daily_quota.json"));
    let server = serve_in_order(vec![
        daily(),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let messages = [Message::user("hi")];
    let error = gemini_at(&server.uri(), quick_retries())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("the quota is used up");
    assert!(
        matches!(&error, ModelError::QuotaExhausted { message } if message.starts_with("You exceeded your current quota")),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    assert_eq!(
        received(&server).await.len(),
        1,
        "its RetryInfo is not waited on"
    );

    let server = serve_in_order(vec![
        daily(),
        event_stream_reply(fixture("gemini", "stream_answer.sse")),
    ])
    .await;
    let events = stream_events(&gemini_at(&server.uri(), quick_retries())).await;
    assert!(
        matches!(stream_failure(&events), ModelError::QuotaExhausted { .. }),
        "{events:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_gemini_rate_limit_waits_its_retry_delay_on_the_streamed_path_too() {
    // As the status of the streamed request.
    let server = serve_in_order(vec![
        json_reply(429, &fixture("gemini", "error_minute_quota.json")),
        event_stream_reply(fixture("gemini", "stream_answer.sse")),
    ])
    .await;
    let started = Instant::now();
    let events = stream_events(&gemini_at(&server.uri(), quick_retries())).await;
    assert_eq!(
        finished_stream(&events).1.message.content,
        "北京今天有小雨，记得带伞。"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the 0.3 s RetryInfo"
    );
    assert_eq!(received(&server).await.len(), 2);

    // As the stream's first event.
    let (base, requests) = serve_event_streams(
        vec![
            gemini_error_event(&fixture("gemini", "error_minute_quota.json")),
            fixture("gemini", "stream_answer.sse"),
        ],
        16,
    )
    .await;
    let started = Instant::now();
    let events = stream_events(&gemini_at(&base, quick_retries())).await;
    assert_eq!(
        finished_stream(&events).1.message.content,
        "北京今天有小雨，记得带伞。"
    );
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the 0.3 s RetryInfo"
    );
    assert_eq!(requests.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_gemini_stream_closed_without_its_last_blank_line_is_whole() {
    let whole = fixture("gemini", "stream_answer.sse");
    let body = whole.trim_end().to_owned() + "\r\n";
    let (base, _) = serve_event_streams(vec![body], 16).await;
    let events = stream_events(&gemini_at(&base, no_retries())).await;
    let (_, reply) = finished_stream(&events);
    assert_eq!(reply.message.content, "北京今天有小雨，记得带伞。");
    assert_eq!(reply.finish_reason, Some(FinishReason::Stop));
}
