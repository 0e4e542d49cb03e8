//! The OpenAI Chat Completions adapter over real HTTP against a loopback server that speaks the
//! documented wire format (replies in `fixtures/openai`).

use std::time::{Duration, Instant};

use agent_core::providers::{HeaderName, HeaderValue, HttpConfig, OpenAi};
use agent_core::{ModelError, RunError, agent};
use tests::http::{
    fixture, json_reply, quick_retries, received, request_bodies, serve_in_order,
    serve_truncated_once,
};
use tests::{get_time, get_weather, tool_results};
use wiremock::ResponseTemplate;

fn openai_at(base: &str) -> OpenAi {
    OpenAi::new("gpt-4o-mini")
        .api_key("test-key-123")
        .base_url(&format!("{base}/v1"))
        .http_config(quick_retries())
}

async fn model_error(model: OpenAi) -> ModelError {
    let agent = agent!(model, get_weather);
    match agent.run("Weather in Beijing?").await {
        Err(RunError::Model { source, .. }) => source,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_full_run_with_two_tool_turns_over_http() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "weather_call.json")),
        json_reply(200, &fixture("openai", "two_calls.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let model = openai_at(&server.uri()).header(
        HeaderName::from_static("x-team"),
        HeaderValue::from_static("agents"),
    );
    let agent = agent!(model, get_weather, get_time).system("Answer briefly.");
    let output = agent
        .run("Do I need an umbrella in Beijing today?")
        .await
        .unwrap();

    assert_eq!(
        output.text,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );
    assert_eq!(output.steps, 3);
    assert_eq!(output.usage.input_tokens, 121 + 190 + 280);
    assert_eq!(output.usage.output_tokens, 19 + 41 + 17);
    let results = tool_results(&output);
    assert_eq!(results.len(), 3);
    assert!(results[0].is_error, "kelvin is not a unit");
    assert!(!results[1].is_error);
    // Invalid JSON arguments from the model reach the tool runner as an error result.
    assert!(results[2].is_error);
    assert!(
        results[2]
            .content
            .starts_with("Error: the arguments are not valid JSON"),
        "{}",
        results[2].content
    );

    let requests = received(&server).await;
    assert_eq!(requests[0].url.path(), "/v1/chat/completions");
    assert_eq!(requests[0].headers["authorization"], "Bearer test-key-123");
    assert_eq!(requests[0].headers["x-team"], "agents");
    assert_eq!(requests[0].headers["content-type"], "application/json");
    insta::assert_json_snapshot!("openai_requests", request_bodies(&server).await);
}

#[tokio::test]
async fn strict_tools_are_sent_in_strict_mode() {
    let server = serve_in_order(vec![json_reply(200, &fixture("openai", "answer.json"))]).await;
    let agent = agent!(openai_at(&server.uri()).strict_tools(true), get_weather);
    assert!(agent.run("hi").await.unwrap().is_finished());
    let body = &request_bodies(&server).await[0];
    insta::assert_json_snapshot!("openai_strict_tool", body["tools"]);
}

#[tokio::test]
async fn a_400_is_an_invalid_request_with_the_providers_message_and_no_retry() {
    let server = serve_in_order(vec![
        json_reply(400, &fixture("openai", "error_invalid_request.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    let ModelError::InvalidRequest { status, message } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(*status, 400);
    assert!(
        message.starts_with("Invalid schema for function 'get_weather'"),
        "{message}"
    );
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_401_is_an_authentication_error_without_the_key() {
    let server = serve_in_order(vec![json_reply(401, &fixture("openai", "error_auth.json"))]).await;
    let model = openai_at(&server.uri()).api_key("secret-key-that-must-not-leak");
    let debug = format!("{model:?}");
    assert!(!debug.contains("secret-key"), "{debug}");
    let error = model_error(model).await;
    assert!(
        matches!(&error, ModelError::Authentication { status: 401, .. }),
        "{error:?}"
    );
    for text in [error.to_string(), format!("{error:?}")] {
        assert!(!text.contains("secret-key"), "{text}");
    }
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_429_is_retried_after_the_servers_delay() {
    let server = serve_in_order(vec![
        json_reply(429, &fixture("openai", "error_rate_limit.json"))
            .insert_header("retry-after", "1"),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let started = Instant::now();
    let agent = agent!(openai_at(&server.uri()), get_weather);
    let output = agent.run("hi").await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "retried after {:?}",
        started.elapsed()
    );
    assert_eq!(
        output.text,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_429_past_the_retry_budget_is_a_typed_rate_limit() {
    let server = serve_in_order(vec![
        json_reply(429, &fixture("openai", "error_rate_limit.json"))
            .insert_header("retry-after-ms", "30000"),
    ])
    .await;
    let error = model_error(
        openai_at(&server.uri())
            .http_config(quick_retries().max_retry_time(Duration::from_secs(5))),
    )
    .await;
    let ModelError::RateLimited {
        retry_after,
        message,
    } = &error
    else {
        panic!("{error:?}")
    };
    assert_eq!(*retry_after, Some(Duration::from_secs(30)));
    assert!(message.starts_with("Rate limit reached"));
    assert_eq!(
        received(&server).await.len(),
        1,
        "a 30 s wait does not fit in a 5 s budget"
    );
}

#[tokio::test]
async fn a_500_then_success_is_retried() {
    let server = serve_in_order(vec![
        json_reply(500, r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}"#),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let agent = agent!(openai_at(&server.uri()), get_weather);
    assert!(agent.run("hi").await.unwrap().is_finished());
    assert_eq!(received(&server).await.len(), 2);
}

#[tokio::test]
async fn a_529_is_overloaded_and_retries_are_bounded() {
    let overloaded = || json_reply(529, r#"{"error":{"message":"Overloaded"}}"#);
    let server = serve_in_order(vec![overloaded(), overloaded(), overloaded(), overloaded()]).await;
    let error =
        model_error(openai_at(&server.uri()).http_config(quick_retries().max_retries(2))).await;
    assert!(
        matches!(&error, ModelError::Overloaded { status: 529, message } if message == "Overloaded"),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 3, "one try and two retries");
}

#[tokio::test]
async fn a_reply_that_hangs_past_the_timeout_is_a_timeout() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "answer.json")).set_delay(Duration::from_secs(10)),
    ])
    .await;
    let config = HttpConfig::default()
        .request_timeout(Duration::from_millis(300))
        .max_retries(0);
    let started = Instant::now();
    let error = model_error(openai_at(&server.uri()).http_config(config)).await;
    assert!(
        matches!(error, ModelError::Timeout { after } if after == Duration::from_millis(300)),
        "{error:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn a_connection_cut_mid_body_is_a_transport_error() {
    let base = serve_truncated_once(500, r#"{"id":"chatcmpl-1","choices":[{"#).await;
    let error = model_error(openai_at(&base).http_config(quick_retries().max_retries(0))).await;
    assert!(matches!(error, ModelError::Transport { .. }), "{error:?}");
}

#[tokio::test]
async fn a_truncated_json_body_is_a_decode_error_with_an_excerpt() {
    let server = serve_in_order(vec![json_reply(
        200,
        r#"{"id":"chatcmpl-1","choices":[{"index":0,"#,
    )])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    let ModelError::Decode { excerpt, .. } = &error else {
        panic!("{error:?}")
    };
    assert_eq!(excerpt, r#"{"id":"chatcmpl-1","choices":[{"index":0,"#);
}

#[tokio::test]
async fn html_instead_of_json_is_a_decode_error() {
    let html = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>";
    let server = serve_in_order(vec![
        ResponseTemplate::new(200).set_body_raw(html, "text/html"),
    ])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    let ModelError::Decode { message, excerpt } = &error else {
        panic!("{error:?}")
    };
    assert!(message.contains("expected value"), "{message}");
    assert!(excerpt.starts_with("<html><head><title>502"), "{excerpt}");
}

#[tokio::test]
async fn a_reply_without_choices_is_a_decode_error() {
    let server = serve_in_order(vec![json_reply(
        200,
        r#"{"id":"x","object":"chat.completion","choices":[]}"#,
    )])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    assert!(
        matches!(&error, ModelError::Decode { message, .. } if message == "the reply has no choices"),
        "{error:?}"
    );
}

#[tokio::test]
async fn azure_deployments_use_their_url_and_key_header() {
    let server = serve_in_order(vec![json_reply(200, &fixture("openai", "answer.json"))]).await;
    let model = OpenAi::azure(&server.uri(), "my-gpt", "2024-10-21")
        .api_key("azure-key")
        .http_config(quick_retries());
    assert!(
        agent!(model, get_weather)
            .run("hi")
            .await
            .unwrap()
            .is_finished()
    );
    let request = &received(&server).await[0];
    assert_eq!(
        request.url.path(),
        "/openai/deployments/my-gpt/chat/completions"
    );
    assert_eq!(request.url.query(), Some("api-version=2024-10-21"));
    assert_eq!(request.headers["api-key"], "azure-key");
    assert!(request.headers.get("authorization").is_none());
}

#[tokio::test]
async fn an_insufficient_quota_429_is_exhausted_and_never_retried() {
    let server = serve_in_order(vec![
        json_reply(429, &fixture("openai", "error_insufficient_quota.json"))
            .insert_header("retry-after", "1"),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    assert!(
        matches!(&error, ModelError::QuotaExhausted { message } if message.starts_with("You exceeded your current quota")),
        "{error:?}"
    );
    assert!(!error.is_retryable());
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_402_from_a_compatible_server_is_an_exhausted_quota() {
    let server = serve_in_order(vec![json_reply(
        402,
        r#"{"error":{"code":402,"message":"Insufficient credits. Add more using https://openrouter.ai/settings/credits"}}"#,
    )])
    .await;
    let error = model_error(openai_at(&server.uri())).await;
    assert!(
        matches!(&error, ModelError::QuotaExhausted { message } if message.starts_with("Insufficient credits")),
        "{error:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn calls_without_ids_or_with_object_arguments_are_paired_and_run() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "calls_without_ids.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let agent = agent!(openai_at(&server.uri()), get_weather, get_time);
    let output = agent.run("Weather and time in Beijing?").await.unwrap();
    let agent_core::Message::Assistant(reply) = &output.messages[2] else {
        panic!("{:?}", output.messages[2])
    };
    let ids: Vec<&str> = reply
        .tool_calls
        .iter()
        .map(|call| call.id.as_str())
        .collect();
    assert!(
        ids.iter().all(|id| id.starts_with("call_agent_")),
        "{ids:?}"
    );
    assert_ne!(ids[0], ids[1]);
    assert_eq!(reply.tool_calls[0].arguments, r#"{"city":"北京"}"#);
    let results = tool_results(&output);
    assert_eq!(results.len(), 2);
    for (result, id) in results.iter().zip(&ids) {
        assert_eq!(result.tool_call_id, *id);
        assert!(!result.is_error, "{}", result.content);
    }
    assert_eq!(results[1].content, "It is 08:30 in Beijing.");
    // Sent back paired.
    let bodies = request_bodies(&server).await;
    let sent = &bodies[1]["messages"];
    for (index, id) in ids.iter().enumerate() {
        assert_eq!(sent[2]["tool_calls"][index]["id"], *id);
        assert_eq!(sent[3 + index]["tool_call_id"], *id);
    }
}

/// The headers are made once per adapter and kept: a key or header set after the adapter has made
/// requests must still reach the next request, and an earlier one must not linger.
#[tokio::test]
async fn a_key_or_header_set_after_requests_is_sent_from_then_on() {
    use agent_core::{ChatRequest, Model};

    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "answer.json")),
        json_reply(200, &fixture("openai", "answer.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let messages = &[agent_core::Message::user("Hello")];
    let ask = |model: OpenAi| async move {
        model
            .chat(ChatRequest::new(messages, &[]))
            .await
            .expect("a reply");
        model
    };
    let model = ask(openai_at(&server.uri())).await;
    let model = ask(model.api_key("second-key")).await;
    ask(model.header(
        HeaderName::from_static("x-team"),
        HeaderValue::from_static("agents"),
    ))
    .await;

    let requests = received(&server).await;
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].headers["authorization"], "Bearer test-key-123");
    assert_eq!(requests[1].headers["authorization"], "Bearer second-key");
    assert!(requests[1].headers.get("x-team").is_none());
    assert_eq!(requests[2].headers["authorization"], "Bearer second-key");
    assert_eq!(requests[2].headers["x-team"], "agents");
    assert_eq!(requests[2].headers["content-type"], "application/json");
}
