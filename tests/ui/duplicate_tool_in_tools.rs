use agent_core::{ToolSet, tool, tools};

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> String {
    city
}

fn main() {
    let _tools: ToolSet = tools!(get_weather, get_weather);
}
