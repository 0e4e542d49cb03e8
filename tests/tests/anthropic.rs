//! The Anthropic Messages adapter over real HTTP against a loopback server that speaks the
//! documented wire format (replies in `fixtures/anthropic`).

use agent_core::providers::Anthropic;
use agent_core::{ModelError, RunError, agent};
use tests::http::{fixture, json_reply, quick_retries, received, request_bodies, serve_in_order};
use tests::{get_time, get_weather, tool_results};

fn claude_at(base: &str) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key-456")
        .base_url(base)
        .max_tokens(1024)
        .http_config(quick_retries())
}

#[tokio::test]
async fn a_full_run_with_two_tool_turns_over_http() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("anthropic", "tool_use.json")),
        json_reply(200, &fixture("anthropic", "two_tool_uses.json")),
        json_reply(200, &fixture("anthropic", "answer.json")),
    ])
    .await;
    let agent = agent!(claude_at(&server.uri()), get_weather, get_time).system("Answer briefly.");
    let output = agent
        .run("Do I need an umbrella in Beijing today?")
        .await
        .unwrap();

    assert_eq!(
        output.text,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );
    assert_eq!(output.steps, 3);
    assert_eq!(output.usage.input_tokens, 512 + 640 + 790);
    assert_eq!(output.usage.output_tokens, 71 + 96 + 24);
    let results = tool_results(&output);
    assert_eq!(results.len(), 3);
    assert!(results[0].is_error, "kelvin is not a unit");
    assert_eq!(results[0].tool_call_id, "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(results[2].content, "It is 08:30 in Beijing.");

    let requests = received(&server).await;
    assert_eq!(requests[0].url.path(), "/v1/messages");
    assert_eq!(requests[0].headers["x-api-key"], "test-key-456");
    assert_eq!(requests[0].headers["anthropic-version"], "2023-06-01");
    // The third request carries both results of the second turn in one user message, errors marked.
    let bodies = request_bodies(&server).await;
    let last_turn = &bodies[2]["messages"].as_array().unwrap()[4];
    assert_eq!(last_turn["role"], "user");
    assert_eq!(last_turn["content"].as_array().unwrap().len(), 2);
    insta::assert_json_snapshot!("anthropic_requests", bodies);
}

#[tokio::test]
async fn a_400_carries_anthropics_message() {
    let server = serve_in_order(vec![json_reply(
        400,
        &fixture("anthropic", "error_invalid_request.json"),
    )])
    .await;
    let agent = agent!(claude_at(&server.uri()), get_weather);
    let Err(RunError::Model { source, .. }) = agent.run("hi").await else {
        panic!("expected an error")
    };
    assert!(
        matches!(&source, ModelError::InvalidRequest { status: 400, message }
            if message == "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
        "{source:?}"
    );
    assert_eq!(received(&server).await.len(), 1);
}

#[tokio::test]
async fn a_529_overloaded_is_retried_then_succeeds() {
    let server = serve_in_order(vec![
        json_reply(529, &fixture("anthropic", "error_overloaded.json")),
        json_reply(200, &fixture("anthropic", "answer.json")),
    ])
    .await;
    let agent = agent!(claude_at(&server.uri()), get_weather);
    assert!(agent.run("hi").await.unwrap().is_finished());
    assert_eq!(received(&server).await.len(), 2);
}
