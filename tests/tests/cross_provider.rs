//! A transcript recorded with one provider goes on with another: the core's history maps onto each
//! wire format.

use agent_core::providers::{Anthropic, Gemini, OpenAi};
use agent_core::{Message, agent};
use tests::http::{fixture, json_reply, quick_retries, request_bodies, serve_in_order};
use tests::{get_time, get_weather};

#[tokio::test]
async fn an_openai_transcript_continues_on_anthropic_and_gemini() {
    let openai_server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "weather_call.json")),
        json_reply(200, &fixture("openai", "two_calls.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let openai = OpenAi::new("gpt-4o-mini")
        .base_url(&openai_server.uri())
        .http_config(quick_retries());
    let first = agent!(openai, get_weather, get_time)
        .run("Umbrella in Beijing?")
        .await
        .unwrap();
    // Save and load it, as an application would between two sessions.
    let transcript: Vec<Message> =
        serde_json::from_str(&serde_json::to_string(&first.messages).unwrap()).unwrap();

    let anthropic_server =
        serve_in_order(vec![json_reply(200, &fixture("anthropic", "answer.json"))]).await;
    let claude = Anthropic::new("claude-sonnet-4-5")
        .base_url(&anthropic_server.uri())
        .http_config(quick_retries());
    let second = agent!(claude, get_weather, get_time)
        .run("And tomorrow?")
        .history(transcript.clone())
        .await
        .unwrap();
    assert!(second.is_finished());
    let body = &request_bodies(&anthropic_server).await[0];
    let messages = body["messages"].as_array().unwrap();
    // The first run's seven messages after the system prompt, then the new question.
    let roles: Vec<&str> = messages
        .iter()
        .map(|message| message["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant",
            "user"
        ]
    );
    assert_eq!(messages[3]["content"][2]["id"], "call_99999def");
    // The call whose arguments were invalid JSON goes as an empty input; its error result follows.
    assert_eq!(messages[3]["content"][2]["input"], serde_json::json!({}));
    assert_eq!(messages[4]["content"][1]["is_error"], true);
    assert_eq!(messages[6]["content"][0]["text"], "And tomorrow?");
    assert_eq!(body["system"], first.messages[0].content());

    let gemini_server =
        serve_in_order(vec![json_reply(200, &fixture("gemini", "answer.json"))]).await;
    let gemini = Gemini::new("gemini-2.5-flash")
        .base_url(&gemini_server.uri())
        .http_config(quick_retries());
    let third = agent!(gemini, get_weather, get_time)
        .run("And tomorrow?")
        .history(transcript)
        .await
        .unwrap();
    assert!(third.is_finished());
    let body = &request_bodies(&gemini_server).await[0];
    let contents = body["contents"].as_array().unwrap();
    let roles: Vec<&str> = contents
        .iter()
        .map(|content| content["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        ["user", "model", "user", "model", "user", "model", "user"]
    );
    // Results are named after the calls they answer, and keep the provider's call ids.
    let responses = &contents[4]["parts"];
    assert_eq!(responses[0]["functionResponse"]["name"], "get_weather");
    assert_eq!(responses[1]["functionResponse"]["name"], "get_time");
    assert_eq!(responses[1]["functionResponse"]["id"], "call_99999def");
    assert!(responses[1]["functionResponse"]["response"]["error"].is_string());
}
