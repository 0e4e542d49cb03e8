//! A tool's part the provider cannot take (audio, here) does not end the run: in a tool result it
//! is named in a text the model reads, while the same part in a user message is refused before
//! anything is sent. Over loopback HTTP in each vendor's wire format.

use agent_core::providers::{Anthropic, OpenAi};
use agent_core::{Message, Model, ModelError, Part, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use tests::http::{fixture, json_reply, quick_retries, request_bodies, serve_in_order};

/// The weather, read aloud.
#[derive(Deserialize, JsonSchema)]
struct Weather {
    /// The city.
    city: String,
    /// The unit.
    #[allow(dead_code)]
    unit: Option<String>,
}

fn spoken_weather() -> impl agent_core::Tool {
    tool_fn(
        "get_weather",
        "The weather, as a spoken report.",
        |weather: Weather| async move {
            vec![
                Part::text(format!("A spoken report for {}:", weather.city)),
                Part::audio("audio/wav", b"RIFF0000WAVE"),
            ]
        },
    )
}

const NOT_SHOWN: &str = "[audio (audio/wav) not shown: Anthropic Messages cannot take audio;";

#[tokio::test]
async fn anthropic_names_the_audio_in_the_tool_result_and_goes_on() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("anthropic", "tool_use.json")),
        json_reply(200, &fixture("anthropic", "answer.json")),
    ])
    .await;
    let claude = Anthropic::new("claude-sonnet-4-5")
        .api_key("test-key")
        .base_url(&server.uri())
        .http_config(quick_retries());
    let agent = agent_core::Agent::new(claude)
        .try_tool(spoken_weather())
        .unwrap();
    let output = agent.run("Weather in Beijing?").await.unwrap();
    assert_eq!(output.steps, 2);

    let second = &request_bodies(&server).await[1];
    let content = &second["messages"][2]["content"][0]["content"];
    assert_eq!(content[0]["text"], "A spoken report for Beijing:");
    let named = content[1]["text"].as_str().unwrap();
    assert!(named.starts_with(NOT_SHOWN), "{named}");

    // The same audio from the user is refused, unsent.
    let question = Message::user("Listen:").with_part(Part::audio("audio/wav", b"RIFF"));
    let claude = Anthropic::new("claude-sonnet-4-5").base_url(&server.uri());
    let error = claude
        .chat(agent_core::ChatRequest::new(&[question], &[]))
        .await
        .unwrap_err();
    assert!(matches!(error, ModelError::Unsupported { .. }), "{error:?}");
    assert_eq!(request_bodies(&server).await.len(), 2);
}

#[tokio::test]
async fn openai_chat_names_audio_it_cannot_take_among_the_attachments() {
    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "weather_call.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let flac = tool_fn(
        "get_weather",
        "The weather, as a spoken report.",
        |weather: Weather| async move {
            vec![
                Part::text(format!("A spoken report for {}:", weather.city)),
                Part::audio("audio/flac", b"fLaC"),
            ]
        },
    );
    let openai = OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let agent = agent_core::Agent::new(openai).try_tool(flac).unwrap();
    let output = agent.run("Weather in Beijing?").await.unwrap();
    assert_eq!(output.steps, 2);
    let second = &request_bodies(&server).await[1]["messages"];
    let attachments = second.as_array().unwrap().last().unwrap();
    assert_eq!(attachments["role"], "user");
    let named = attachments["content"][1]["text"].as_str().unwrap();
    assert!(
        named.starts_with("[audio (audio/flac) not shown: OpenAI Chat Completions cannot take"),
        "{named}"
    );
}
