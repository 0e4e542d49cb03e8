//! A tool's part the provider cannot take (audio, here) does not end the run: in a tool result it
//! is named in a text the model reads, while the same part in a user message is refused before
//! anything is sent. Over loopback HTTP in each vendor's wire format. A Chinese agent's adapters
//! write those words, and the line before a tool's attachments, in Chinese.

use agent_core::providers::{Anthropic, OpenAi};
use agent_core::{Chinese, Message, Model, ModelError, Part, tool_fn};
use schemars::JsonSchema;
use serde::Deserialize;
use tests::english_run;
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

const NOT_SHOWN: &str = "[audio (audio/wav) not shown: the model service cannot take it]";

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
        named == "[audio (audio/flac) not shown: the model service cannot take it]",
        "{named}"
    );
}

/// A spoken weather report in Chinese, with a chart and audio in a format Chat Completions does
/// not take.
fn chinese_report() -> impl agent_core::Tool {
    tool_fn(
        "get_weather",
        "The weather, as a spoken report.",
        |weather: Weather| async move {
            vec![
                Part::text(format!("{}的天气播报：", weather.city)),
                Part::image("image/png", tests::PNG),
                Part::audio("audio/flac", b"fLaC"),
            ]
        },
    )
}

#[tokio::test]
async fn a_chinese_agent_s_adapters_write_their_own_words_in_chinese() {
    // OpenAI Chat Completions: the line before the attachments, and the audio it cannot take.
    let server = serve_in_order(vec![
        json_reply(200, &fixture("openai", "weather_call.json")),
        json_reply(200, &fixture("openai", "answer.json")),
    ])
    .await;
    let openai = OpenAi::new("gpt-4o-mini")
        .api_key("test-key")
        .base_url(&format!("{}/v1", server.uri()))
        .http_config(quick_retries());
    let agent = agent_core::Agent::new(openai)
        .texts(Chinese)
        .try_tool(chinese_report())
        .unwrap();
    let output = agent.run("北京天气怎么样？").await.unwrap();
    assert_eq!(output.steps, 2);
    let second = &request_bodies(&server).await[1];
    let attachments = second["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(attachments["role"], "user");
    let content = attachments["content"].as_array().unwrap();
    assert_eq!(
        content[0]["text"],
        "工具调用 call_12345xyz 返回了以下内容："
    );
    assert_eq!(content[1]["type"], "image_url");
    assert_eq!(
        content[2]["text"],
        "[音频（audio/flac）未显示：当前模型服务不接受这类内容]"
    );
    // No sentence the adapter wrote is English, in any message.
    for message in second["messages"].as_array().unwrap() {
        let texts: Vec<&str> = match &message["content"] {
            serde_json::Value::String(text) => vec![text.as_str()],
            serde_json::Value::Array(parts) => parts
                .iter()
                .filter_map(|part| part["text"].as_str())
                .collect(),
            _ => Vec::new(),
        };
        for text in texts {
            assert_eq!(english_run(text), None, "{text:?}");
        }
    }

    // Anthropic Messages: the audio it cannot take, named in the tool result.
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
        .texts(Chinese)
        .try_tool(spoken_weather())
        .unwrap();
    let output = agent.run("北京天气怎么样？").await.unwrap();
    assert_eq!(output.steps, 2);
    let second = &request_bodies(&server).await[1];
    let content = &second["messages"][2]["content"][0]["content"];
    assert_eq!(
        content[1]["text"],
        "[音频（audio/wav）未显示：当前模型服务不接受这类内容]"
    );
    let body = second.to_string();
    assert!(!body.contains("not shown"), "{body}");
    assert!(!body.contains("cannot take"), "{body}");
}
