//! Typed runs and per-run settings over real HTTP, against loopback servers speaking each vendor's
//! documented wire format: the schema goes out in the provider's own form (snapshots), the reply is
//! read into the type, and an answer that does not fit makes the correction round trip.

use agent_core::providers::{Anthropic, Gemini, OpenAi};
use agent_core::{Agent, Model, OutputMode, ToolChoice, agent};
use serde_json::{Value, json};
use tests::http::{json_reply, quick_retries, request_bodies, serve_in_order};
use tests::{Priority, Ticket, get_weather};
use wiremock::MockServer;

const MISSING_PRIORITY: &str = r#"{"title": "Umbrella broke", "customer": null}"#;
const GOOD: &str = r#"{"title": "Umbrella broke", "priority": "high", "customer": null}"#;

fn good_ticket() -> Ticket {
    Ticket {
        title: "Umbrella broke".into(),
        priority: Priority::High,
        customer: None,
    }
}

fn openai_text(text: &str) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1741569956,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": text, "refusal": null },
            "finish_reason": "stop"
        }],
        "usage": { "prompt_tokens": 90, "completion_tokens": 20, "total_tokens": 110 }
    })
    .to_string()
}

fn anthropic_reply(content: Value, stop_reason: &str) -> String {
    json!({
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": { "input_tokens": 90, "output_tokens": 20 }
    })
    .to_string()
}

fn gemini_text(text: &str) -> String {
    json!({
        "candidates": [{
            "content": { "parts": [{ "text": text }], "role": "model" },
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": { "promptTokenCount": 90, "candidatesTokenCount": 20, "totalTokenCount": 110 },
        "modelVersion": "gemini-2.5-flash"
    })
    .to_string()
}

fn openai_at(server: &MockServer) -> OpenAi {
    OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries())
}

fn anthropic_at(server: &MockServer) -> Anthropic {
    Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries())
}

fn gemini_at(server: &MockServer) -> Gemini {
    Gemini::new("gemini-2.5-flash")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries())
}

/// Runs a native-mode typed run whose first answer lacks a field and whose second fits; returns
/// the request bodies after checking the value and the correction.
async fn native_round_trip(model: impl Model + 'static, server: &MockServer) -> Vec<Value> {
    let agent = Agent::new(model)
        .system("File tickets.")
        .output_mode(OutputMode::Native);
    let out = agent
        .run("My umbrella broke in the rain")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    assert_eq!(out.run.steps, 2);
    let bodies = request_bodies(server).await;
    assert_eq!(bodies.len(), 2);
    let sent = bodies[1].to_string();
    assert!(
        sent.contains("priority: missing required field"),
        "the correction names the field: {sent}"
    );
    bodies
}

#[tokio::test]
async fn openai_native_output_is_a_strict_json_schema_response_format() {
    let server = serve_in_order(vec![
        json_reply(200, &openai_text(MISSING_PRIORITY)),
        json_reply(200, &openai_text(GOOD)),
    ])
    .await;
    let bodies = native_round_trip(openai_at(&server), &server).await;
    insta::assert_json_snapshot!("openai_native_output", bodies);
}

#[tokio::test]
async fn anthropic_native_output_is_an_output_config_format() {
    let server = serve_in_order(vec![
        json_reply(
            200,
            &anthropic_reply(
                json!([{ "type": "text", "text": MISSING_PRIORITY }]),
                "end_turn",
            ),
        ),
        json_reply(
            200,
            &anthropic_reply(json!([{ "type": "text", "text": GOOD }]), "end_turn"),
        ),
    ])
    .await;
    let bodies = native_round_trip(anthropic_at(&server), &server).await;
    // Structured outputs refuse numbers' bounds: they travel in the description.
    let customer = &bodies[0]["output_config"]["format"]["schema"]["properties"]["customer"];
    assert!(customer.get("minimum").is_none(), "{customer}");
    assert!(
        customer["description"]
            .as_str()
            .is_some_and(|text| text.ends_with("(minimum: 0)")),
        "{customer}"
    );
    insta::assert_json_snapshot!("anthropic_native_output", bodies);
}

#[tokio::test]
async fn gemini_native_output_is_a_json_mime_type_and_response_schema() {
    let server = serve_in_order(vec![
        json_reply(200, &gemini_text(MISSING_PRIORITY)),
        json_reply(200, &gemini_text(GOOD)),
    ])
    .await;
    let bodies = native_round_trip(gemini_at(&server), &server).await;
    insta::assert_json_snapshot!("gemini_native_output", bodies);
}

#[tokio::test]
async fn anthropic_tool_output_forces_a_tool_call_and_reads_the_final_answer_call() {
    let server = serve_in_order(vec![
        json_reply(
            200,
            &anthropic_reply(
                json!([{
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "final_result",
                    "input": { "title": "Umbrella broke", "priority": "urgent" }
                }]),
                "tool_use",
            ),
        ),
        json_reply(
            200,
            &anthropic_reply(
                json!([{
                    "type": "tool_use",
                    "id": "toolu_2",
                    "name": "final_result",
                    "input": { "title": "Umbrella broke", "priority": "high" }
                }]),
                "tool_use",
            ),
        ),
    ])
    .await;
    let agent = agent!(anthropic_at(&server), get_weather);
    let out = agent
        .run("My umbrella broke in the rain")
        .output::<Ticket>()
        .await
        .unwrap();
    assert_eq!(out.value, good_ticket());
    let bodies = request_bodies(&server).await;
    assert_eq!(bodies[0]["tool_choice"], json!({ "type": "any" }));
    let correction = &bodies[1]["messages"][2]["content"][0];
    assert_eq!(correction["type"], "tool_result");
    assert_eq!(correction["is_error"], true);
    assert_eq!(
        correction["content"],
        "the answer does not fit the schema: priority: expected one of \"low\", \"high\", got \
         \"urgent\". Please try again."
    );
    insta::assert_json_snapshot!("anthropic_output_tool", bodies[0]["tools"]);
}

/// Labels for a ticket: a map, which Anthropic's structured outputs cannot express.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Labels {
    #[allow(dead_code)]
    labels: std::collections::HashMap<String, String>,
}

#[tokio::test]
async fn a_schema_anthropic_cannot_express_is_refused_before_anything_is_sent() {
    let server = serve_in_order(vec![]).await;
    let agent = Agent::new(anthropic_at(&server)).output_mode(OutputMode::Native);
    let error = agent.run("Label it").output::<Labels>().await.unwrap_err();
    let agent_core::RunError::Model { source, .. } = error else {
        panic!("expected a model error, got {error:?}");
    };
    assert!(
        matches!(&source, agent_core::ModelError::Unsupported { message } if message.contains("OutputMode::Tool")),
        "{source}"
    );
    assert!(!source.is_retryable());
    assert!(request_bodies(&server).await.is_empty());
}

/// Sends one request with a named tool choice and per-run sampling; returns its body.
async fn settings_body(model: impl Model + 'static, server: &MockServer) -> Value {
    let agent = agent!(model, get_weather).temperature(0.9);
    // The reply is not what matters here.
    let _ = agent
        .run("Weather in Beijing?")
        .tool_choice(ToolChoice::Tool("get_weather".into()))
        .temperature(0.25)
        .max_tokens(300)
        .await;
    request_bodies(server).await.remove(0)
}

#[tokio::test]
async fn tool_choice_and_sampling_reach_each_provider_in_its_form() {
    let server = serve_in_order(vec![json_reply(200, &openai_text("Rain."))]).await;
    let body = settings_body(openai_at(&server), &server).await;
    assert_eq!(
        body["tool_choice"],
        json!({ "type": "function", "function": { "name": "get_weather" } })
    );
    assert_eq!(body["temperature"], 0.25);
    assert_eq!(body["max_completion_tokens"], 300);

    let server = serve_in_order(vec![json_reply(
        200,
        &anthropic_reply(json!([{ "type": "text", "text": "Rain." }]), "end_turn"),
    )])
    .await;
    let body = settings_body(anthropic_at(&server), &server).await;
    assert_eq!(
        body["tool_choice"],
        json!({ "type": "tool", "name": "get_weather" })
    );
    assert_eq!(body["temperature"], 0.25);
    assert_eq!(body["max_tokens"], 300);

    let server = serve_in_order(vec![json_reply(200, &gemini_text("Rain."))]).await;
    let body = settings_body(gemini_at(&server), &server).await;
    assert_eq!(
        body["toolConfig"],
        json!({ "functionCallingConfig": { "mode": "ANY", "allowedFunctionNames": ["get_weather"] } })
    );
    assert_eq!(body["generationConfig"]["temperature"], 0.25);
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 300);
}

#[tokio::test]
async fn no_tool_choice_is_sent_when_no_tools_are_offered() {
    let server = serve_in_order(vec![json_reply(200, &openai_text("Hi."))]).await;
    let agent = Agent::new(openai_at(&server)).tool_choice(ToolChoice::Required);
    let _answer = agent.run("Hello").await.unwrap();
    let body = request_bodies(&server).await.remove(0);
    assert!(body.get("tool_choice").is_none(), "{body}");
}
