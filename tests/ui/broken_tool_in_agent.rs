use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, agent, tool, tools, ToolSet};

/// Look up the weather.
#[tool(title = "Weather")]
fn get_weather(city: String) -> String {
    city
}

/// Tell the time.
#[tool]
fn now() -> String {
    "12:00".to_owned()
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent: Agent = agent!(model, get_weather, now);
    let _tools: ToolSet = tools!(now, get_weather);
    // The function stays callable.
    let _text: String = get_weather("Beijing".to_owned());
}
