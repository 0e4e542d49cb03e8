//! An agent using an MCP server's tools next to a native one.
//!
//! `cargo run -p examples --example mcp_agent` runs offline: the example tools' MCP server runs in
//! process (over a pipe), and a scripted model asks the weather through MCP and the time through a
//! native tool.
//!
//! Name a server to use its tools instead, spawned over stdio or reached by URL:
//! `cargo run -p examples --example mcp_agent -- npx -y @modelcontextprotocol/server-everything`, or
//! `... -- http://127.0.0.1:8000/mcp` (say, `cargo run -p examples --bin mcp_server -- --http
//! 127.0.0.1:8000`). Its tools are listed; with a provider in the environment (see the `weather`
//! example) a real model then answers the question given with `QUESTION=...`.

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Model, Tool, ToolCall, tool, tools};
use agent_mcp::{McpClient, McpServer};
use examples::weather::{get_time, get_weather};

/// Tell how many days are left until a date.
#[tool(read_only)]
fn days_until(
    /// The date, as `YYYY-MM-DD`
    date: String,
) -> String {
    format!("{date} is 12 days away.")
}

/// The example tools' server, in process, and a client connected to it over a pipe.
async fn in_process_server() -> Result<McpClient, Box<dyn std::error::Error>> {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let server = McpServer::new(tools!(get_weather, get_time)).name("agent-core-weather");
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(server.serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    Ok(McpClient::connect_io(read, write).await?)
}

/// Connects to the server named by the command line: a URL, or a command to spawn.
async fn named_server(arguments: &[String]) -> Result<McpClient, Box<dyn std::error::Error>> {
    if arguments[0].starts_with("http://") || arguments[0].starts_with("https://") {
        return Ok(McpClient::connect(arguments[0].clone()).await?);
    }
    let mut command = tokio::process::Command::new(&arguments[0]);
    command.args(&arguments[1..]);
    Ok(McpClient::spawn(command).await?)
}

/// The offline stand-in for an LLM, for the in-process server's tools.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([
            ToolCall::new("call_1", "get_weather", r#"{"city":"Shanghai"}"#),
            ToolCall::new("call_2", "days_until", r#"{"date":"2026-12-14"}"#),
        ]),
        AssistantMessage::text("Cloudy and 22°C in Shanghai; the trip is 12 days away."),
    ])
}

/// Lists the server's tools, then runs an agent with them and `days_until`, printing each result.
async fn run(
    client: McpClient,
    model: impl Model + 'static,
    question: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let remote = client.tools().await?;
    let mut printed = format!("tools of {}:\n", client.server_name());
    for tool in &remote {
        let definition = Tool::<()>::definition(tool);
        let summary = definition.description.lines().next().unwrap_or_default();
        printed.push_str(&format!("  {}: {summary}\n", definition.name));
    }
    let agent = Agent::new(model)
        .try_tools(remote)?
        .try_tool(days_until {})?
        .max_steps(10);
    let output = agent.run(question).await?;
    for message in &output.messages {
        if let agent_core::Message::Tool(result) = message {
            let status = if result.is_error { "error " } else { "result" };
            printed.push_str(&format!(
                "{status} {} {}\n",
                result.tool_call_id, result.content
            ));
        }
    }
    printed.push_str(&format!("answer: {}\n", output.text));
    Ok(printed)
}

async fn choose_and_run() -> Result<String, Box<dyn std::error::Error>> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let question = std::env::var("QUESTION").unwrap_or_else(|_| {
        "What is the weather in Shanghai, and how long until 2026-12-14?".into()
    });
    let model = from_env()?;
    if arguments.is_empty() {
        let client = in_process_server().await?;
        return match model {
            Some(model) => run(client, model, &question).await,
            None => run(client, scripted_model(), &question).await,
        };
    }
    let client = named_server(&arguments).await?;
    match model {
        Some(model) => run(client, model, &question).await,
        // A script cannot know another server's tools: list them and stop.
        None => {
            let answer = "(no model in the environment: set an API key or AGENT_MODEL to let one use these tools)";
            run(
                client,
                ScriptedModel::new([AssistantMessage::text(answer)]),
                &question,
            )
            .await
        }
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match choose_and_run().await {
        Ok(printed) => {
            print!("{printed}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_offline_through_an_in_process_server() {
        let client = super::in_process_server().await.unwrap();
        let printed = super::run(client, super::scripted_model(), "go")
            .await
            .unwrap();
        let expected = "\
tools of `agent-core-weather`:
  get_weather: Look up today's weather for a city. Use it when the user asks about the weather, what to wear, or whether to take an umbrella.
  get_time: Tell the local time in a city.
result call_1 {\"city\":\"Shanghai\",\"weather\":\"cloudy\",\"temp\":22,\"unit\":\"°C\"}
result call_2 2026-12-14 is 12 days away.
answer: Cloudy and 22°C in Shanghai; the trip is 12 days away.
";
        assert_eq!(printed, expected);
    }
}
