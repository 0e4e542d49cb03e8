//! The Gemini `generateContent` adapter over real HTTP against a loopback server that speaks the
//! documented wire format (replies in `fixtures/gemini`).

use agent_core::providers::Gemini;
use agent_core::{Message, ModelError, RunError, agent};
use tests::http::{fixture, json_reply, quick_retries, received, request_bodies, serve_in_order};
use tests::{get_time, get_weather, now, tool_results};

fn gemini_at(base: &str) -> Gemini {
    Gemini::new("gemini-2.5-flash")
        .api_key("test-key-789")
        .base_url(&format!("{base}/v1beta"))
        .http_config(quick_retries())
}

#[tokio::test]
async fn a_full_run_with_two_tool_turns_over_http() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("gemini", "function_call.json")),
        json_reply(200, &fixture("gemini", "two_function_calls.json")),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let agent =
        agent!(gemini_at(&server.uri()), get_weather, get_time, now).system("Answer briefly.");
    let output = agent
        .run("Do I need an umbrella in Beijing today?")
        .await
        .unwrap();

    assert_eq!(
        output.text,
        "Yes: light rain and 18°C in Beijing. Take an umbrella."
    );
    assert_eq!(output.usage.input_tokens, 201 + 260 + 330);
    assert_eq!(
        output.usage.output_tokens,
        22 + 60 + 35 + 16,
        "thinking tokens count as output"
    );
    let results = tool_results(&output);
    assert_eq!(results.len(), 3);
    assert!(results[0].is_error);
    // Gemini gave no call ids: made-up ones pair every result with its call.
    let Message::Assistant(second) = &output.messages[4] else {
        panic!("{:?}", output.messages[4])
    };
    assert_eq!(second.tool_calls.len(), 2);
    assert_ne!(second.tool_calls[0].id, second.tool_calls[1].id);
    assert_eq!(results[1].tool_call_id, second.tool_calls[0].id);
    assert_eq!(results[2].tool_call_id, second.tool_calls[1].id);
    // The thought signature is kept and sent back.
    let Message::Assistant(first) = &output.messages[2] else {
        panic!()
    };
    assert_eq!(
        first.tool_calls[0].signature.as_deref(),
        Some("CiQB0e2Kb7cw3ZxYq1sR")
    );

    let requests = received(&server).await;
    assert_eq!(
        requests[0].url.path(),
        "/v1beta/models/gemini-2.5-flash:generateContent"
    );
    assert_eq!(requests[0].headers["x-goog-api-key"], "test-key-789");
    assert_eq!(requests[0].url.query(), None, "the key is never in the URL");
    insta::assert_json_snapshot!("gemini_requests", request_bodies(&server).await);
}

#[tokio::test]
async fn a_400_carries_geminis_message() {
    let server = serve_in_order(vec![json_reply(
        400,
        &fixture("gemini", "error_invalid_argument.json"),
    )])
    .await;
    let agent = agent!(gemini_at(&server.uri()), get_weather);
    let Err(RunError::Model { source, .. }) = agent.run("hi").await else {
        panic!("expected an error")
    };
    assert!(
        matches!(&source, ModelError::InvalidRequest { status: 400, message } if message.contains("should be non-empty for OBJECT type")),
        "{source:?}"
    );
}

#[tokio::test]
async fn a_503_unavailable_is_overloaded_and_retried() {
    let server = serve_in_order(vec![
        json_reply(503, &fixture("gemini", "error_unavailable.json")),
        json_reply(200, &fixture("gemini", "answer.json")),
    ])
    .await;
    let agent = agent!(gemini_at(&server.uri()), get_weather);
    assert!(agent.run("hi").await.unwrap().is_finished());
    assert_eq!(received(&server).await.len(), 2);
}

/// The parameters' form a request carries for a model: `parametersJsonSchema` or `parameters`.
async fn parameter_forms(model: Gemini, server: &wiremock::MockServer) -> Vec<&'static str> {
    let agent = agent!(model, get_weather);
    let _answer = agent.run("Weather in Beijing?").await.unwrap();
    let body = request_bodies(server).await.remove(0);
    let declaration = &body["tools"][0]["functionDeclarations"][0];
    ["parametersJsonSchema", "parameters"]
        .into_iter()
        .filter(|form| declaration.get(*form).is_some())
        .collect()
}

#[tokio::test]
async fn models_that_take_json_schema_get_it_and_older_ones_the_openapi_subset() {
    let answer = || json_reply(200, &fixture("gemini", "answer.json"));
    let at = |model: &str, server: &wiremock::MockServer| {
        Gemini::new(model)
            .api_key("test-key")
            .base_url(&server.uri())
            .http_config(quick_retries())
    };
    let server = serve_in_order(vec![answer()]).await;
    assert_eq!(
        parameter_forms(at("gemini-2.5-flash", &server), &server).await,
        ["parametersJsonSchema"]
    );
    let server = serve_in_order(vec![answer()]).await;
    assert_eq!(
        parameter_forms(at("gemini-2.0-flash", &server), &server).await,
        ["parameters"]
    );
    let server = serve_in_order(vec![answer()]).await;
    assert_eq!(
        parameter_forms(at("gemini-3-pro", &server).json_schema(false), &server).await,
        ["parameters"]
    );
    // JSON Schema keeps a map's value type, which the subset cannot say.
    let server = serve_in_order(vec![answer()]).await;
    let agent = agent!(at("gemini-3-pro", &server), tests::schema_set::set_counters);
    let _answer = agent.run("Count").await.unwrap();
    let body = request_bodies(&server).await.remove(0);
    let parameters = &body["tools"][0]["functionDeclarations"][0]["parametersJsonSchema"];
    assert!(
        parameters.to_string().contains("additionalProperties"),
        "{parameters}"
    );
}
