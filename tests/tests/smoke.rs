use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, State, Tool, ToolCall, agent, tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Unit {
    /// Degrees Celsius
    Celsius,
    /// Degrees Fahrenheit
    Fahrenheit,
}

#[derive(Serialize)]
struct Weather {
    city: String,
    temp: i32,
}

/// Look up today's weather for a city.
///
/// Use it when the user asks about the weather.
#[tool]
async fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
    unit: Option<Unit>,
    #[arg(default = 3)] days: u32,
) -> Result<Weather, String> {
    let _ = (unit, days);
    Ok(Weather { city, temp: 18 })
}

#[derive(Clone)]
struct Db(String);

/// Find a user.
#[tool]
fn find_user(State(db): State<Db>, id: u32) -> String {
    format!("{}{id}", db.0)
}

#[tokio::test]
async fn smoke() {
    let def = Tool::<()>::definition(&get_weather {});
    println!("{}", serde_json::to_string_pretty(&def.parameters).unwrap());
    println!("{:?}", def.description);
    let model = ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("1", "get_weather", r#"{"city":"北京"}"#),
            ToolCall::new("2", "get_weather", r#"{"city":42, "unit":"kelvin", "x":1}"#),
            ToolCall::new("3", "find_user", r#"{"id":7}"#),
        ]),
        AssistantMessage::text("done"),
    ]);
    let agent = agent!(model.clone(), get_weather, find_user).bind_context(Db("u".into()));
    let out = agent.run("hi").await.unwrap();
    for m in &out.messages {
        println!("{m:?}");
    }
}
