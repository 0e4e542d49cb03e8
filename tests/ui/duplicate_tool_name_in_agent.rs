use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, agent, tool};

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> String {
    city
}

mod v2 {
    use agent_core::tool;

    /// Look up the weather, version 2.
    #[tool(name = "get_weather")]
    pub fn get_weather_v2(city: String) -> String {
        city
    }
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let agent = agent!(model, get_weather, v2::get_weather_v2);
    let _run = async move { agent.run("hi").await };
}
