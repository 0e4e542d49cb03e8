use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, agent, tool};

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> String {
    city
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent = agent!(model, get_weather, get_weather);
}
