use agent_core::guard::{Verdict, guard_fn};
use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, agent, tool};

/// Look up the weather.
#[tool]
fn get_weather(city: String) -> String {
    city
}

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let g = guard_fn("g", |_| Verdict::Allow);
    let _agent = agent!(model, get_weather; guard_reslts = g);
}
