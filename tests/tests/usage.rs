//! Usage with one meaning for every vendor: each adapter, over loopback HTTP, reads its vendor's
//! documented usage body (cache reads and writes, reasoning) into the same `Usage`: input with
//! the cached tokens in it, output with the reasoning in it, and the parts said apart; a price
//! gives the call a cost.

use agent_core::providers::{Anthropic, Gemini, OpenAi, OpenAiResponses};
use agent_core::{Agent, Model, Price, Usage};
use serde_json::json;
use tests::http::{fixture, json_reply, quick_retries, serve_in_order};

/// The usage of one run of `model`, whose server answers once.
async fn usage_of(model: impl Model + 'static) -> Usage {
    let agent: Agent = Agent::new(model);
    agent
        .run("How long is the notice period?")
        .await
        .unwrap()
        .usage
}

#[tokio::test]
async fn anthropic_counts_the_cached_tokens_into_the_input() {
    let server = serve_in_order(vec![json_reply(
        200,
        &fixture("anthropic", "cached_answer.json"),
    )])
    .await;
    let model = Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries());
    let usage = usage_of(model).await;
    assert_eq!(
        usage,
        Usage::new(21 + 188 + 1800, 393).with_cache(1800, 188)
    );
    assert_eq!(usage.uncached_input_tokens(), 21);
    // Claude Sonnet's list price per million: $3 in, $0.30 cache reads, $3.75 cache writes, $15 out.
    let price = Price::per_million(3.0, 15.0).with_cache(0.3, 3.75);
    let expected = (21.0 * 3.0 + 1800.0 * 0.3 + 188.0 * 3.75 + 393.0 * 15.0) / 1e6;
    assert!((usage.cost(&price) - expected).abs() < 1e-12);
}

#[tokio::test]
async fn openai_chat_says_the_cached_and_reasoning_parts() {
    let server = serve_in_order(vec![json_reply(
        200,
        &fixture("openai", "cached_answer.json"),
    )])
    .await;
    let model = OpenAi::new("o4-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let usage = usage_of(model).await;
    assert_eq!(
        usage,
        Usage::new(2006, 300)
            .with_cache(1920, 0)
            .with_reasoning(192)
    );
}

#[tokio::test]
async fn openai_responses_says_the_cached_and_reasoning_parts() {
    let body = json!({
        "id": "resp_cache",
        "object": "response",
        "created_at": 1_760_000_000,
        "status": "completed",
        "model": "o4-mini-2025-04-16",
        "output": [{
            "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": "Three months.", "annotations": []}]
        }],
        "usage": {
            "input_tokens": 2006,
            "input_tokens_details": {"cached_tokens": 1920},
            "output_tokens": 300,
            "output_tokens_details": {"reasoning_tokens": 192},
            "total_tokens": 2306
        }
    });
    let server = serve_in_order(vec![json_reply(200, &body.to_string())]).await;
    let model = OpenAiResponses::new("o4-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let usage = usage_of(model).await;
    assert_eq!(
        usage,
        Usage::new(2006, 300)
            .with_cache(1920, 0)
            .with_reasoning(192)
    );
}

#[tokio::test]
async fn gemini_counts_the_thinking_into_the_output() {
    let server = serve_in_order(vec![json_reply(
        200,
        &fixture("gemini", "cached_answer.json"),
    )])
    .await;
    let model = Gemini::new("gemini-2.5-flash")
        .api_key("test-key")
        .base_url(&format!("{}/v1beta", server.uri()))
        .http_config(quick_retries());
    let usage = usage_of(model).await;
    assert_eq!(
        usage,
        Usage::new(2520, 31 + 412)
            .with_cache(2048, 0)
            .with_reasoning(412)
    );
    assert_eq!(usage.uncached_input_tokens(), 472);
}
