//! The OpenAI Responses adapter's errors over real HTTP, against loopback servers that speak the
//! documented wire format: an error event in a stream reads as the same error object does as an
//! HTTP status, a rate limit is retried only before any content, and HTTP errors are typed with
//! the key never shown.

use agent_core::{ChatRequest, Message, Model, ModelError, RunError, RunEvent, agent};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tests::http::{json_reply, no_retries, received, serve_event_streams, serve_in_order};
use tests::responses_wire::{ANSWER, answer, event, responses_at, stream_of, stream_start};
use tests::{get_weather, streamed_output, streamed_text};

/// The error a stream made of `body` ends with, with no retries, after checking it ends there.
async fn stream_error(body: String) -> ModelError {
    let (base, _) = serve_event_streams(vec![body], 16).await;
    let messages = [Message::user("hi")];
    let mut events: Vec<_> = responses_at(&base)
        .http_config(no_retries())
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await;
    let last = events.pop().expect("an event");
    assert!(events.iter().all(Result::is_ok), "{events:?}");
    last.expect_err("the stream fails")
}

/// The error the same error object gives as an HTTP status.
async fn http_error(status: u16, error: &Value) -> ModelError {
    let server = serve_in_order(vec![json_reply(
        status,
        &json!({"error": error}).to_string(),
    )])
    .await;
    let messages = [Message::user("hi")];
    responses_at(&server.uri())
        .http_config(no_retries())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("an error status")
}

#[tokio::test]
async fn error_events_sort_like_their_http_statuses() {
    let cases = [
        (
            429,
            json!({"code": "rate_limit_exceeded", "message": "Rate limit reached for gpt-5 on tokens per min (TPM)."}),
        ),
        (
            503,
            json!({"code": "server_is_overloaded", "message": "Our servers are currently overloaded. Please try again later."}),
        ),
        (
            500,
            json!({"code": "server_error", "message": "The server had an error while processing your request."}),
        ),
        (
            429,
            json!({"code": "insufficient_quota", "message": "You exceeded your current quota."}),
        ),
        (
            400,
            json!({"code": "invalid_prompt", "message": "Invalid prompt: flagged."}),
        ),
    ];
    for (status, error) in cases {
        let as_status = http_error(status, &error).await;
        let failed = json!({"type": "response.failed", "response": {
            "id": "resp_test", "object": "response", "status": "failed", "output": [], "error": error,
        }});
        let documented = json!({"type": "error", "code": error["code"], "message": error["message"], "param": null});
        let nested = json!({"type": "error", "error": error});
        for data in [failed, documented, nested] {
            let in_stream = stream_error(stream_start() + &event(&data)).await;
            assert_eq!(
                format!("{in_stream:?}"),
                format!("{as_status:?}"),
                "{data}: in the stream, then as a status"
            );
            assert_eq!(in_stream.is_retryable(), as_status.is_retryable(), "{data}");
        }
    }
    let overloaded = stream_error(stream_start() + &event(&json!({"type": "error", "code": "server_is_overloaded", "message": "busy", "param": null}))).await;
    assert!(
        matches!(&overloaded, ModelError::Overloaded { status: 503, message } if message == "busy")
    );
    assert!(overloaded.is_retryable());
    // What the adapter cannot sort stays a stream error, with its message.
    let unknown = stream_error(
        stream_start()
            + &event(&json!({"type": "error", "code": "brand_new", "message": "Something new"})),
    )
    .await;
    assert!(
        matches!(&unknown, ModelError::Stream { message } if message == "Something new"),
        "{unknown:?}"
    );
    let cut = stream_error(stream_start()).await;
    assert!(
        matches!(&cut, ModelError::Stream { message } if message.contains("cut off")),
        "{cut:?}"
    );
}

#[tokio::test]
async fn a_rate_limit_before_any_content_is_retried_and_after_content_is_not() {
    let limited = event(
        &json!({"type": "response.failed", "response": {"status": "failed", "output": [],
        "error": {"code": "rate_limit_exceeded", "message": "Rate limit reached"}}}),
    );
    let created = stream_of(&answer());
    let created = created[..created.find("event: response.output_item.added").unwrap()].to_owned();
    let (base, requests) =
        serve_event_streams(vec![created + &limited, stream_of(&answer())], 16).await;
    let events: Vec<RunEvent> = agent!(responses_at(&base), get_weather)
        .run("hi")
        .stream()
        .collect()
        .await;
    assert_eq!(streamed_text(&events), ANSWER, "once, not twice");
    assert_eq!(streamed_output(&events).text, ANSWER);
    assert_eq!(requests.lock().unwrap().len(), 2);

    let (base, requests) =
        serve_event_streams(vec![stream_start() + &limited, stream_of(&answer())], 16).await;
    let events: Vec<RunEvent> = agent!(responses_at(&base), get_weather)
        .run("hi")
        .stream()
        .collect()
        .await;
    match events.last() {
        Some(RunEvent::Finished(Err(RunError::Model { source, .. }))) => {
            assert!(
                matches!(source, ModelError::RateLimited { .. }),
                "{source:?}"
            )
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(requests.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn http_errors_are_typed_and_the_key_never_shows() {
    let server = serve_in_order(vec![json_reply(
        401,
        r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
    )])
    .await;
    let model = responses_at(&server.uri()).api_key("secret-key-that-must-not-leak");
    assert!(!format!("{model:?}").contains("secret-key"));
    let messages = [Message::user("hi")];
    let error = model
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("refused");
    assert!(
        matches!(&error, ModelError::Authentication { status: 401, .. }),
        "{error:?}"
    );
    assert!(!format!("{error:?}").contains("secret-key"));

    // A 500 is retried; an exhausted quota is not.
    let server = serve_in_order(vec![
        json_reply(
            500,
            r#"{"error":{"message":"The server had an error.","type":"server_error"}}"#,
        ),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let reply = responses_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .unwrap();
    assert_eq!(reply.message.content, ANSWER);
    assert_eq!(received(&server).await.len(), 2);
    let server = serve_in_order(vec![
        json_reply(429, r#"{"error":{"message":"You exceeded your current quota.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#),
        json_reply(200, &answer().to_string()),
    ])
    .await;
    let error = responses_at(&server.uri())
        .chat(ChatRequest::new(&messages, &[]))
        .await
        .expect_err("no quota");
    assert!(
        matches!(error, ModelError::QuotaExhausted { .. }),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}
