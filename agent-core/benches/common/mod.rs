//! What the benchmarks share: the tool, its arguments and result types, and in-process models.

use std::time::Duration;

use agent_core::{
    AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Model, ModelError, ToolCall, tool,
};
use serde::Serialize;

/// The small struct `get_weather` returns.
#[derive(Serialize)]
pub struct Weather {
    pub city: String,
    pub weather: &'static str,
    pub temp: i32,
}

/// Look up today's weather for a city.
#[tool]
pub async fn get_weather(
    /// City name
    city: String,
) -> Weather {
    weather_in(city)
}

/// What every weather tool of the benchmarks answers.
pub fn weather_in(city: String) -> Weather {
    Weather {
        city,
        weather: "小雨",
        temp: 18,
    }
}

pub const ARGUMENTS: &str = r#"{"city":"北京"}"#;

/// The answer a typed run gets through the final-answer tool.
pub const ADVICE: &str = r#"{"city":"北京","umbrella":true}"#;

/// A model that asks for `get_weather` once per turn and answers on turn `turns`, deciding from the
/// length of the history alone (constant time: it never walks the history).
pub struct TurnsModel {
    pub turns: usize,
    /// How long each turn "thinks"; zero answers at once, without a timer.
    pub latency: Duration,
}

impl Model for TurnsModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        // The history is system + user + two messages per finished turn.
        let turn = (request.messages.len() - 2) / 2 + 1;
        let reply = if turn < self.turns {
            AssistantMessage::tool_calls([ToolCall::new("call", "get_weather", ARGUMENTS)])
        } else if let Some(output) = request
            .tools
            .iter()
            .find(|tool| tool.name == "final_result")
        {
            // A typed run: the answer goes through the final-answer tool.
            AssistantMessage::tool_calls([ToolCall::new("answer", &output.name, ADVICE)])
        } else if request.response_format.is_some() {
            // A typed run in native mode: the answer is the JSON text.
            AssistantMessage::text(ADVICE)
        } else {
            AssistantMessage::text("Take an umbrella.")
        };
        let latency = self.latency;
        Box::pin(async move {
            if !latency.is_zero() {
                tokio::time::sleep(latency).await;
            }
            Ok(ChatResponse::new(reply))
        })
    }
}
