//! Model fallback over real HTTP: chains of the vendor adapters, each pointed at a loopback
//! server speaking its vendor's wire format. The first model fails the way vendors fail (a rate
//! limit past its retries, an exhausted quota, a storm of 5xx, a refused connection, a timeout, an
//! error event in a stream) and the next one answers; a bad request, a refused key (unless the rule
//! says so) and a stream that already passed text on do not fall back; when every vendor fails,
//! the error carries each one. What a run of a chain sends and says is in `fallback_runs.rs`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_core::providers::{Anthropic, HttpConfig};
use agent_core::{
    Agent, ChatRequest, ChatResponse, Fallback, Message, Model, ModelError, RunError, RunEvent,
    StreamEvent,
};
use futures_util::StreamExt;
use tests::http::{
    always, event_stream_reply, fixture, json_reply, quick_retries, received, request_bodies,
};
use tests::vendors::{CLAUDE_ANSWERED, OPENAI_ANSWERED, claude_at, gemini_at, openai_at};
use tests::{finished_stream, streamed_text};
use wiremock::{MockServer, ResponseTemplate};

/// A rule that falls back as the default one does, and records each error it was asked about, so
/// a test knows what the first model failed with.
fn recording(seen: &Arc<Mutex<Vec<String>>>) -> impl Fn(&ModelError) -> bool + Send + Sync + use<> {
    let seen = Arc::clone(seen);
    move |error| {
        seen.lock().unwrap().push(format!("{error:?}"));
        Fallback::should_fall_back(error)
    }
}

fn question() -> Vec<Message> {
    vec![Message::user("Do I need an umbrella in Beijing today?")]
}

async fn chat(model: &dyn Model) -> Result<ChatResponse, ModelError> {
    let messages = question();
    model.chat(ChatRequest::new(&messages, &[])).await
}

async fn stream(model: &dyn Model) -> Vec<Result<StreamEvent, ModelError>> {
    let messages = question();
    model
        .chat_stream(ChatRequest::new(&messages, &[]))
        .collect()
        .await
}

/// How the first model fails in one case, and how many requests that takes it with its retries.
struct Failing {
    name: &'static str,
    /// The first model's base URL (a server, or a port where none listens).
    base: String,
    config: HttpConfig,
    requests: Option<usize>,
    /// What the first model's error looks like (its `Debug`).
    error: &'static str,
    _server: Option<MockServer>,
}

impl Failing {
    async fn served(
        name: &'static str,
        reply: ResponseTemplate,
        config: HttpConfig,
        requests: usize,
        error: &'static str,
    ) -> Self {
        let server = always(reply).await;
        Failing {
            name,
            base: server.uri(),
            config,
            requests: Some(requests),
            error,
            _server: Some(server),
        }
    }

    async fn requests(&self) -> Option<usize> {
        match &self._server {
            Some(server) => Some(received(server).await.len()),
            None => None,
        }
    }
}

/// Each way a vendor fails that a retry of the same model cannot fix, past the adapter's retries.
async fn failures() -> Vec<Failing> {
    let retries = quick_retries().max_retries(2);
    let mut cases = vec![
        Failing::served(
            "429 past its retries",
            json_reply(429, &fixture("openai", "error_rate_limit.json")),
            retries.clone(),
            3,
            "RateLimited",
        )
        .await,
        Failing::served(
            "quota exhausted (never retried)",
            json_reply(429, &fixture("openai", "error_insufficient_quota.json")),
            retries.clone(),
            1,
            "QuotaExhausted",
        )
        .await,
        Failing::served(
            "503 storm",
            json_reply(503, r#"{"error":{"message":"Service Unavailable"}}"#),
            retries.clone(),
            3,
            "Overloaded",
        )
        .await,
        Failing::served(
            "500 storm",
            json_reply(500, r#"{"error":{"message":"The server had an error"}}"#),
            retries.clone(),
            3,
            "Server",
        )
        .await,
        Failing::served(
            "timeout",
            ResponseTemplate::new(200).set_delay(Duration::from_secs(5)),
            retries
                .clone()
                .max_retries(1)
                .request_timeout(Duration::from_millis(150)),
            2,
            "Timeout",
        )
        .await,
    ];
    // A port where nothing listens: the connection is refused.
    let port = tests::restate::free_port();
    cases.push(Failing {
        name: "connection refused",
        base: format!("http://127.0.0.1:{port}"),
        config: retries,
        requests: None,
        error: "Transport",
        _server: None,
    });
    cases
}

#[tokio::test]
async fn each_failure_a_retry_cannot_fix_falls_back_to_the_next_vendor() {
    for case in failures().await {
        let backup = always(json_reply(200, &fixture("anthropic", "answer.json"))).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let chain = Fallback::new(openai_at(&case.base, case.config.clone()))
            .then(claude_at(&backup.uri()))
            .fall_back_when(recording(&seen));
        let reply = chat(&chain).await.unwrap_or_else(|error| {
            panic!("{}: the chain failed: {error}", case.name);
        });
        assert_eq!(
            reply.message.content, "Yes: light rain and 18°C in Beijing. Take an umbrella.",
            "{}",
            case.name
        );
        assert_eq!(
            reply.model.as_deref(),
            Some(CLAUDE_ANSWERED),
            "{}",
            case.name
        );
        let seen = seen.lock().unwrap().clone();
        assert_eq!(seen.len(), 1, "{}: {seen:?}", case.name);
        assert!(seen[0].starts_with(case.error), "{}: {seen:?}", case.name);
        assert_eq!(case.requests().await, case.requests, "{}", case.name);
        assert_eq!(received(&backup).await.len(), 1, "{}", case.name);
    }
}

#[tokio::test]
async fn each_failure_a_retry_cannot_fix_falls_back_when_streamed_too() {
    for case in failures().await {
        let backup = always(event_stream_reply(fixture(
            "anthropic",
            "stream_answer.sse",
        )))
        .await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let chain = Fallback::new(openai_at(&case.base, case.config.clone()))
            .then(claude_at(&backup.uri()))
            .fall_back_when(recording(&seen));
        let events = stream(&chain).await;
        let (deltas, reply) = finished_stream(&events);
        // Nothing of the failed model reached the caller: the text is the backup's, once.
        assert_eq!(deltas, ["北京今天有小雨，", "记得带伞。"], "{}", case.name);
        assert_eq!(reply.message.content, "北京今天有小雨，记得带伞。");
        assert_eq!(
            reply.model.as_deref(),
            Some(CLAUDE_ANSWERED),
            "{}",
            case.name
        );
        let seen = seen.lock().unwrap().clone();
        assert!(
            seen.len() == 1 && seen[0].starts_with(case.error),
            "{}: {seen:?}",
            case.name
        );
        assert_eq!(case.requests().await, case.requests, "{}", case.name);
        let bodies = request_bodies(&backup).await;
        assert_eq!(bodies.len(), 1, "{}", case.name);
        assert_eq!(bodies[0]["stream"], true);
    }
}

#[tokio::test]
async fn an_error_event_before_the_first_delta_falls_back() {
    // Anthropic's stream opens with a 200, then says it is overloaded before any content.
    let primary = always(event_stream_reply(fixture(
        "anthropic",
        "stream_overloaded.sse",
    )))
    .await;
    let backup = always(event_stream_reply(fixture(
        "openai",
        "stream_chinese_text.sse",
    )))
    .await;
    let chain = Fallback::new(
        Anthropic::new("claude-sonnet-4-5")
            .base_url(&primary.uri())
            .http_config(quick_retries().max_retries(1)),
    )
    .then(openai_at(&backup.uri(), quick_retries()));
    let events = stream(&chain).await;
    let (deltas, reply) = finished_stream(&events);
    assert_eq!(deltas.concat(), "北京今天有小雨，记得带伞。");
    assert_eq!(reply.model.as_deref(), Some(OPENAI_ANSWERED));
    // Its own retry first (the stream failed before its first event), then the fallback.
    assert_eq!(received(&primary).await.len(), 2);
    assert_eq!(received(&backup).await.len(), 1);
}

#[tokio::test]
async fn a_bad_request_does_not_fall_back() {
    let primary = always(json_reply(
        400,
        &fixture("openai", "error_invalid_request.json"),
    ))
    .await;
    let backup = always(json_reply(200, &fixture("anthropic", "answer.json"))).await;
    let chain =
        Fallback::new(openai_at(&primary.uri(), quick_retries())).then(claude_at(&backup.uri()));

    let error = chat(&chain).await.unwrap_err();
    assert!(
        matches!(&error, ModelError::InvalidRequest { status: 400, message } if message.starts_with("Invalid schema")),
        "{error:?}"
    );
    let events = stream(&chain).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        matches!(
            &events[0],
            Err(ModelError::InvalidRequest { status: 400, .. })
        ),
        "{events:?}"
    );
    assert_eq!(received(&primary).await.len(), 2, "never retried");
    assert!(received(&backup).await.is_empty(), "never asked");
}

#[tokio::test]
async fn a_refused_key_falls_back_only_when_the_rule_says_so() {
    let primary = always(json_reply(401, &fixture("openai", "error_auth.json"))).await;
    let backup = always(json_reply(200, &fixture("anthropic", "answer.json"))).await;
    let by_default =
        Fallback::new(openai_at(&primary.uri(), quick_retries())).then(claude_at(&backup.uri()));
    let error = chat(&by_default).await.unwrap_err();
    assert!(
        matches!(error, ModelError::Authentication { status: 401, .. }),
        "{error:?}"
    );
    assert!(received(&backup).await.is_empty());

    let on_keys_too = Fallback::new(openai_at(&primary.uri(), quick_retries()))
        .then(claude_at(&backup.uri()))
        .fall_back_when(|error| {
            Fallback::should_fall_back(error) || matches!(error, ModelError::Authentication { .. })
        });
    let reply = chat(&on_keys_too).await.unwrap();
    assert_eq!(reply.model.as_deref(), Some(CLAUDE_ANSWERED));
}

#[tokio::test]
async fn a_stream_that_fails_after_its_first_delta_does_not_fall_back() {
    // OpenAI streams two pieces of text, then the connection ends before the reply is finished.
    let whole = fixture("openai", "stream_chinese_text.sse");
    let third_chunk = whole.match_indices("data: ").nth(3).unwrap().0;
    let cut = whole[..third_chunk].to_owned();
    let primary = always(event_stream_reply(cut)).await;
    let backup = always(event_stream_reply(fixture(
        "anthropic",
        "stream_answer.sse",
    )))
    .await;
    let chain =
        Fallback::new(openai_at(&primary.uri(), quick_retries())).then(claude_at(&backup.uri()));

    let events = stream(&chain).await;
    let (last, before) = events.split_last().unwrap();
    let deltas: Vec<&StreamEvent> = before
        .iter()
        .map(|event| event.as_ref().expect("only the last event fails"))
        .collect();
    assert_eq!(
        deltas,
        [
            &StreamEvent::TextDelta("北京今天".into()),
            &StreamEvent::TextDelta("有小雨，".into())
        ]
    );
    assert!(
        matches!(last, Err(ModelError::Stream { message }) if message.contains("cut off")),
        "{last:?}"
    );
    assert_eq!(received(&primary).await.len(), 1);
    assert!(
        received(&backup).await.is_empty(),
        "the backup was never asked"
    );

    // In a streamed run, the caller saw the text, then the run failed with the stream's error.
    let run: Vec<RunEvent> = Agent::new(chain).run("北京天气？").stream().collect().await;
    assert_eq!(streamed_text(&run), "北京今天有小雨，");
    assert!(
        matches!(
            run.last(),
            Some(RunEvent::Finished(Err(RunError::Model {
                source: ModelError::Stream { .. },
                ..
            })))
        ),
        "{:?}",
        run.last()
    );
    assert!(received(&backup).await.is_empty());
}

#[tokio::test]
async fn when_every_vendor_fails_the_error_carries_each_one() {
    let openai = always(json_reply(
        503,
        r#"{"error":{"message":"Service Unavailable"}}"#,
    ))
    .await;
    let gemini = always(json_reply(
        429,
        &fixture("gemini", "error_daily_quota.json"),
    ))
    .await;
    let claude = always(json_reply(
        529,
        &fixture("anthropic", "error_overloaded.json"),
    ))
    .await;
    let no_retries = quick_retries().max_retries(0);
    let chain = Fallback::new(openai_at(&openai.uri(), no_retries.clone()))
        .then(gemini_at(&gemini.uri(), no_retries.clone()))
        .then(
            Anthropic::new("claude-sonnet-4-5")
                .base_url(&claude.uri())
                .http_config(no_retries),
        );

    for error in [
        chat(&chain).await.unwrap_err(),
        stream(&chain).await.pop().unwrap().unwrap_err(),
    ] {
        let ModelError::AllFailed { failures } = &error else {
            panic!("{error:?}");
        };
        let summary: Vec<(usize, Option<&str>, bool)> = failures
            .iter()
            .map(|failure| {
                (
                    failure.index,
                    failure.model.as_deref(),
                    failure.error.is_retryable(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                (0, Some("gpt-4o-mini"), true),
                (1, Some("gemini-2.5-flash"), false),
                (2, Some("claude-sonnet-4-5"), true),
            ]
        );
        assert!(matches!(
            failures[0].error,
            ModelError::Overloaded { status: 503, .. }
        ));
        assert!(matches!(
            failures[1].error,
            ModelError::QuotaExhausted { .. }
        ));
        assert!(matches!(
            failures[2].error,
            ModelError::Overloaded { status: 529, .. }
        ));
        // Some model may be back later: a durable run tries the chain again.
        assert!(error.is_retryable());
        let text = error.to_string();
        assert!(
            text.starts_with("every model of the fallback chain failed: model 1 (gpt-4o-mini): the provider is overloaded (503)"),
            "{text}"
        );
        assert!(
            text.contains(
                "; model 3 (claude-sonnet-4-5): the provider is overloaded (529): Overloaded"
            ),
            "{text}"
        );
        // No key in the error, nor in the chain's Debug.
        let shown = format!("{error:?} {chain:?}");
        assert!(!shown.contains("secret"), "{shown}");
    }
}
