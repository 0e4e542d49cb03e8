//! Our MCP client against the official reference server, `@modelcontextprotocol/server-everything`
//! (TypeScript, from npm), over stdio and streamable HTTP on loopback: its tools listed, handed to an
//! agent beside a native tool, called in a run driven by a scripted model; and the server killed
//! mid-run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use agent_core::providers::{OpenAi, dialect};
use agent_core::{
    Agent, BoxFuture, Hooks, RemoteServer, RunOutput, Tool, ToolCall, ToolDecision, ToolDef,
};
use agent_mcp::{McpClient, McpTool};
use serde_json::Value;
use tests::http::{fixture, json_reply, quick_retries, request_bodies, serve_in_order};
use tests::node::{NODE, everything_http, everything_stdio};
use tests::peers::Test;
use tests::{call, model_calling, now, tool_results};
use tokio::sync::Notify;

fn definition(tool: &McpTool) -> &ToolDef {
    Tool::<()>::definition(tool)
}

fn find<'a>(tools: &'a [McpTool], name: &str) -> &'a McpTool {
    tools
        .iter()
        .find(|tool| tool.remote_name() == name)
        .unwrap_or_else(|| panic!("server-everything has no `{name}`"))
}

/// A run whose model calls server-everything's tools (and a native one), then answers.
async fn run_with_everything(tools: Vec<McpTool>) -> RunOutput {
    let model = model_calling(
        [
            call(0, "echo", r#"{"message":"hello from Rust"}"#),
            call(1, "get-sum", r#"{"a":2,"b":3.5}"#),
            call(2, "get-sum", r#"{"a":"two","b":1}"#),
            call(3, "get-structured-content", r#"{"location":"Chicago"}"#),
            call(4, "get-tiny-image", ""),
            call(5, "now", "{}"),
        ],
        "all done",
    );
    Agent::new(model)
        .try_tools(tools)
        .unwrap()
        .try_tool(now {})
        .unwrap()
        .run("use the tools")
        .await
        .unwrap()
}

fn check_run(output: &RunOutput) {
    assert_eq!(output.text, "all done");
    let results = tool_results(output);
    assert_eq!(results.len(), 6);
    assert_eq!(
        (results[0].is_error, results[0].content.as_str()),
        (false, "Echo: hello from Rust")
    );
    assert_eq!(
        (results[1].is_error, results[1].content.as_str()),
        (false, "The sum of 2 and 3.5 is 5.5.")
    );
    // The server validates the arguments; its complaint reaches the model as an error result.
    assert!(results[2].is_error);
    assert!(
        results[2].content.starts_with("Error: ")
            && results[2]
                .content
                .contains("expected number, received string"),
        "{}",
        results[2].content
    );
    assert!(!results[3].is_error);
    let structured: Value = serde_json::from_str(&results[3].content).unwrap();
    assert_eq!(structured["conditions"], "Light rain / drizzle");
    // The image reaches the model as an image, between the two texts.
    assert_eq!(results[4].content, "Here's the image you requested:");
    let [image, caption] = results[4].parts.as_slice() else {
        panic!("{:?}", results[4].parts);
    };
    let media = image.media().expect("an image part");
    assert_eq!(
        (image.kind(), media.media_type.as_str()),
        ("image", "image/png")
    );
    assert!(matches!(&media.source, agent_core::Source::Base64(data) if data.len() > 100));
    assert_eq!(
        caption,
        &agent_core::Part::text("The image above is the MCP logo.")
    );
    assert_eq!(
        (results[5].is_error, results[5].content.as_str()),
        (false, "12:00")
    );
}

fn check_listing(tools: &[McpTool]) {
    for name in [
        "echo",
        "get-sum",
        "get-structured-content",
        "trigger-long-running-operation",
    ] {
        find(tools, name);
    }
    let sum = definition(find(tools, "get-sum"));
    assert_eq!(sum.name, "get-sum");
    assert!(!sum.description.is_empty());
    // Imported into the neutral form: no draft-07 `$schema`.
    assert_eq!(
        sum.parameters,
        serde_json::json!({
            "type": "object",
            "properties": {
                "a": { "type": "number", "description": "First number" },
                "b": { "type": "number", "description": "Second number" }
            },
            "required": ["a", "b"]
        })
    );
    assert_eq!(sum.annotations.read_only, Some(true));
    assert!(
        definition(find(tools, "get-structured-content"))
            .output_schema
            .is_some()
    );
    assert!(sum.output_schema.is_none());
}

async fn its_tools_run_in_an_agent_over_stdio() {
    let client = McpClient::spawn(everything_stdio()).await.unwrap();
    assert_eq!(
        client.server_name(),
        &RemoteServer::Named("mcp-servers/everything".into())
    );
    let tools = client.tools().await.unwrap();
    check_listing(&tools);
    check_run(&run_with_everything(tools).await);
}

async fn its_tools_run_in_an_agent_over_http() {
    let (_server, url) = everything_http().await;
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let client = McpClient::connect(url).await.unwrap();
    let tools = client.tools().await.unwrap();
    check_listing(&tools);
    check_run(&run_with_everything(tools).await);
}

/// Notifies when the run is about to call `trigger-long-running-operation`.
struct SignalsTheLongCall(Arc<Notify>);

impl Hooks for SignalsTheLongCall {
    fn before_tool_call<'a>(
        &'a self,
        _context: &'a (),
        call: &'a ToolCall,
        _tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        if call.name == "trigger-long-running-operation" {
            self.0.notify_one();
        }
        Box::pin(async { ToolDecision::Run })
    }
}

async fn a_server_killed_mid_run_gives_error_results() {
    let client = McpClient::spawn(everything_stdio()).await.unwrap();
    let pid = client.process_id().expect("a spawned server has a pid");
    let tools = client.tools().await.unwrap();
    let model = agent_core::testing::ScriptedModel::new([
        agent_core::AssistantMessage::tool_calls([call(
            0,
            "trigger-long-running-operation",
            r#"{"duration":20,"steps":20}"#,
        )]),
        agent_core::AssistantMessage::tool_calls([call(
            1,
            "echo",
            r#"{"message":"still there?"}"#,
        )]),
        agent_core::AssistantMessage::text("the server is gone"),
    ]);
    let started = Arc::new(Notify::new());
    let agent = Agent::new(model)
        .try_tools(tools)
        .unwrap()
        .hook(SignalsTheLongCall(Arc::clone(&started)));
    let killer = tokio::spawn(async move {
        // The run is about to send the 20 s call (the hook runs just before it): the server dies
        // before or while it handles the call, and either way the call must fail as unreachable.
        started.notified().await;
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    });
    let started = Instant::now();
    let output = agent.run("go").await.unwrap();
    killer.await.unwrap();
    // The 20 s operation was cut short by the kill, not waited out.
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(output.text, "the server is gone");
    let unreachable = "Error: the MCP server `mcp-servers/everything` cannot be reached: it stopped or closed the connection";
    let results: Vec<(bool, &str)> = tool_results(&output)
        .iter()
        .map(|result| (result.is_error, result.content.as_str()))
        .collect();
    assert_eq!(results, [(true, unreachable), (true, unreachable)]);
}

/// What no provider accepts never reaches one, for schemas written by someone else (zod, draft-07).
async fn its_schemas_go_through_each_providers_transform() {
    let client = McpClient::spawn(everything_stdio()).await.unwrap();
    let tools = client.tools().await.unwrap();
    fn keys(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, child) in map {
                    found.push(key.clone());
                    if key != "properties" {
                        keys(child, found);
                    } else if let Value::Object(properties) = child {
                        properties
                            .values()
                            .for_each(|property| keys(property, found));
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| keys(item, found)),
            _ => {}
        }
    }
    for tool in &tools {
        let parameters = &definition(tool).parameters;
        for transformed in [
            dialect::openai(parameters),
            dialect::anthropic(parameters),
            dialect::gemini(parameters),
        ] {
            let mut found = Vec::new();
            keys(&transformed, &mut found);
            assert!(
                !found.contains(&"$schema".to_owned()),
                "{}: {found:?}",
                tool.remote_name()
            );
        }
        let mut found = Vec::new();
        keys(&dialect::gemini(parameters), &mut found);
        for rejected in [
            "$ref",
            "$defs",
            "definitions",
            "additionalProperties",
            "default",
        ] {
            assert!(
                !found.contains(&rejected.to_owned()),
                "{}: {found:?}",
                tool.remote_name()
            );
        }
        if let Some(strict) = dialect::openai_strict(parameters) {
            // Strict mode: every property required, the object closed.
            let properties = strict["properties"].as_object().unwrap();
            assert_eq!(
                strict["required"].as_array().unwrap().len(),
                properties.len()
            );
            assert_eq!(strict["additionalProperties"], false);
        }
    }

    // And end to end: an OpenAI request in strict mode carries them in its dialect.
    let openai = serve_in_order(vec![json_reply(200, &fixture("openai", "answer.json"))]).await;
    let model = OpenAi::new("gpt-4o-mini")
        .base_url(&openai.uri())
        .http_config(quick_retries())
        .strict_tools(true);
    let sum = find(&tools, "get-sum").clone();
    let expected = dialect::openai_strict(&definition(&sum).parameters).unwrap();
    let output = Agent::new(model)
        .try_tool(sum)
        .unwrap()
        .run("add")
        .await
        .unwrap();
    assert!(output.is_finished());
    let body = &request_bodies(&openai).await[0];
    let sent = &body["tools"][0]["function"];
    assert_eq!(sent["name"], "get-sum");
    assert_eq!(sent["strict"], true);
    assert_eq!(sent["parameters"], expected);
}

fn main() -> std::process::ExitCode {
    tests::peers::main(
        [
            Test::tokio(
                "its_tools_run_in_an_agent_over_stdio",
                its_tools_run_in_an_agent_over_stdio,
            ),
            Test::tokio(
                "its_tools_run_in_an_agent_over_http",
                its_tools_run_in_an_agent_over_http,
            ),
            Test::tokio(
                "a_server_killed_mid_run_gives_error_results",
                a_server_killed_mid_run_gives_error_results,
            ),
            Test::tokio(
                "its_schemas_go_through_each_providers_transform",
                its_schemas_go_through_each_providers_transform,
            ),
        ]
        .map(|test| test.needs(&NODE)),
    )
}
