//! Our MCP server and our MCP client, connected in process: a tool served over MCP and used by an
//! agent behaves as the same tool given to the agent directly.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use agent_core::{Agent, Tool, ToolDef, ToolSet, neutral_parameters, tools};
use agent_mcp::{McpClient, McpError, McpServer, McpTool, rmcp};
use tests::schema_set::report;
use tests::{call, explode, get_weather, model_calling, now, refuse, remember, tool_results};

static HANG_DROPPED: AtomicBool = AtomicBool::new(false);

/// Sets [`HANG_DROPPED`] when the call holding it is dropped.
struct DropFlag;

impl Drop for DropFlag {
    fn drop(&mut self) {
        HANG_DROPPED.store(true, Ordering::SeqCst);
    }
}

/// Never finishes.
#[agent_core::tool]
async fn hang() -> String {
    let _flag = DropFlag;
    std::future::pending::<String>().await
}

/// The fixture tools served by an in-process server, and a client connected to it.
async fn connected() -> (McpClient, tokio::task::JoinHandle<()>) {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let served: ToolSet = tools!(get_weather, explode, refuse, remember, report, hang);
    let server = McpServer::new(served).name("fixtures");
    let (read, write) = tokio::io::split(server_end);
    let serving = tokio::spawn(async move {
        server.serve_io(read, write).await.unwrap();
    });
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    (client, serving)
}

fn local(tool: &impl Tool) -> ToolDef {
    tool.definition().clone()
}

#[tokio::test]
async fn definitions_survive_the_trip() {
    let (client, _serving) = connected().await;
    assert_eq!(client.server_name().to_string(), "`fixtures`");
    let remote: Vec<ToolDef> = client
        .tools()
        .await
        .unwrap()
        .iter()
        .map(|tool| Tool::<()>::definition(tool).clone())
        .collect();
    let expected = [
        local(&get_weather {}),
        local(&explode {}),
        local(&refuse {}),
        local(&remember {}),
        local(&report {}),
        local(&hang {}),
    ];
    assert_eq!(remote, expected);
    // Our schemas are neutral already, so importing them changes nothing.
    for definition in &expected {
        assert_eq!(
            neutral_parameters(definition.parameters.clone()),
            definition.parameters
        );
    }
}

#[tokio::test]
async fn served_tools_behave_in_an_agent_as_native_ones() {
    let (client, _serving) = connected().await;
    let remote: Vec<McpTool> = client
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.with_prefix("remote_"))
        .collect();
    let model = model_calling(
        [
            call(
                0,
                "remote_get_weather",
                r#"{"city":"Beijing","unit":"fahrenheit"}"#,
            ),
            call(
                1,
                "remote_get_weather",
                r#"{"city":"Beijing","unit":"kelvin"}"#,
            ),
            call(2, "remote_explode", r#"{"reason":"test"}"#),
            call(3, "remote_refuse", ""),
            call(4, "remote_remember", r#"{"note":"milk"}"#),
            call(5, "remote_report", r#"{"unit":"celsius"}"#),
            call(6, "remote_get_weather", "[1, 2]"),
            call(7, "now", "{}"),
        ],
        "done",
    );
    let agent = Agent::new(model)
        .try_tools(remote)
        .unwrap()
        .try_tool(now {})
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(output.text, "done");
    let results: Vec<(bool, &str)> = tool_results(&output)
        .iter()
        .map(|result| (result.is_error, result.content.as_str()))
        .collect();
    assert_eq!(
        results,
        [
            (false, r#"{"city":"Beijing","weather":"小雨","temp":64}"#),
            (
                true,
                "Error: invalid arguments: unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`"
            ),
            (true, "Error: the tool panicked: boom: test"),
            (true, "Error: not allowed today"),
            (false, "Done."),
            (
                false,
                r#"{"temperature":18.5,"unit":"celsius","warnings":[]}"#
            ),
            (
                true,
                "Error: invalid arguments: arguments: expected a JSON object of named arguments, got an array"
            ),
            (false, "12:00"),
        ]
    );
}

/// Outlives its 50 ms timeout.
#[agent_core::tool(timeout = "50ms")]
async fn sluggish() -> String {
    tokio::time::sleep(Duration::from_secs(5)).await;
    "too late".to_owned()
}

#[tokio::test]
async fn the_model_reads_the_same_words_for_a_call_made_natively_or_over_mcp() {
    let calls = [
        call(0, "get_weather", r#"{"city":"Atlantis"}"#),
        call(
            1,
            "get_weather",
            r#"{"city":"Beijing","unit":"kelvin","wind":1}"#,
        ),
        call(2, "get_weather", r#"{"city":"#),
        call(3, "explode", r#"{"reason":"test"}"#),
        call(4, "refuse", ""),
        call(5, "sluggish", "{}"),
        call(6, "remember", r#"{"note":"milk"}"#),
    ];
    let native = Agent::new(model_calling(calls.clone(), "done"))
        .try_tools([get_weather {}])
        .unwrap()
        .try_tool(explode {})
        .unwrap()
        .try_tool(refuse {})
        .unwrap()
        .try_tool(sluggish {})
        .unwrap()
        .try_tool(remember {})
        .unwrap();
    let native = native.run("go").await.unwrap();

    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let served: ToolSet = tools!(get_weather, explode, refuse, sluggish, remember);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(served).serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    let remote = Agent::new(model_calling(calls, "done"))
        .try_tools(client.tools().await.unwrap())
        .unwrap();
    let remote = remote.run("go").await.unwrap();

    let words = |output: &agent_core::RunOutput| -> Vec<(bool, String)> {
        tool_results(output)
            .iter()
            .map(|result| (result.is_error, result.content.clone()))
            .collect()
    };
    assert_eq!(words(&remote), words(&native));
    // And those words are the table's, each kind of failure in its own.
    assert_eq!(
        words(&native),
        [
            (true, "Error: no weather station in Atlantis".to_owned()),
            (
                true,
                "Error: invalid arguments: unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`; \
                 wind: unknown field, expected one of `city`, `unit`"
                    .to_owned()
            ),
            (
                true,
                "Error: the arguments are not valid JSON: EOF while parsing a value at line 1 column 8"
                    .to_owned()
            ),
            (true, "Error: the tool panicked: boom: test".to_owned()),
            (true, "Error: not allowed today".to_owned()),
            (
                true,
                "Error: the tool did not finish within 50 ms and was cancelled".to_owned()
            ),
            (false, "Done.".to_owned()),
        ]
    );
}

/// A server that lists a tool it then does not know: as after a redeploy between list and call.
struct Forgetful;

impl rmcp::ServerHandler for Forgetful {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
        .with_server_info(rmcp::model::Implementation::new("forgetful", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<rmcp::model::PaginatedRequestParams>,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, rmcp::ErrorData> {
        let schema = serde_json::json!({ "type": "object" });
        let tool = rmcp::model::Tool::new(
            "files.read",
            "Reads a file.",
            std::sync::Arc::new(schema.as_object().unwrap().clone()),
        );
        Ok(rmcp::model::ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        Err(rmcp::ErrorData::invalid_params(
            format!("Unknown tool: {}", request.name),
            None,
        ))
    }
}

#[tokio::test]
async fn a_protocol_error_reaches_the_model_as_an_error_result() {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        let running = Forgetful.serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    let tools = client.tools().await.unwrap();
    // A name no provider accepts is made safe; calls still use the server's.
    assert_eq!(Tool::<()>::definition(&tools[0]).name, "files_read");
    assert_eq!(tools[0].remote_name(), "files.read");
    assert_eq!(
        Tool::<()>::definition(&tools[0]).parameters,
        serde_json::json!({ "type": "object", "properties": {} })
    );

    let model = model_calling([call(0, "files_read", "{}")], "the file is gone");
    let agent = Agent::new(model).try_tools(tools).unwrap();
    let output = agent.run("go").await.unwrap();
    let result = tool_results(&output)[0];
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: the MCP server `forgetful` refused the call: Unknown tool: files.read (error -32602)"
    );
}

#[tokio::test]
async fn a_closed_connection_gives_error_results() {
    let (client, serving) = connected().await;
    let tools = client.tools().await.unwrap();
    serving.abort();
    let _ = serving.await;
    let model = model_calling([call(0, "get_weather", r#"{"city":"Beijing"}"#)], "sorry");
    let agent = Agent::new(model).try_tools(tools).unwrap();
    let output = agent.run("go").await.unwrap();
    let result = tool_results(&output)[0];
    assert!(result.is_error);
    assert_eq!(
        result.content,
        "Error: the MCP server `fixtures` cannot be reached: it stopped or closed the connection"
    );
    assert_eq!(output.text, "sorry");
}

#[tokio::test]
async fn a_call_the_client_gives_up_on_is_cancelled_on_the_server() {
    let (client, _serving) = connected().await;
    let tools = client.tools().await.unwrap();
    let model = model_calling([call(0, "hang", "{}")], "it took too long");
    let agent = Agent::new(model)
        .tool_timeout(Duration::from_millis(200))
        .try_tools(tools)
        .unwrap();
    let output = agent.run("go").await.unwrap();
    assert_eq!(
        tool_results(&output)[0].content,
        "Error: the tool did not finish within 200 ms and was cancelled"
    );
    // Dropping the client's call sends `notifications/cancelled`; the server drops the tool's future.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while !HANG_DROPPED.load(Ordering::SeqCst) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the server never dropped the call"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_server_that_cannot_be_started_or_reached_is_a_typed_error() {
    let missing = tokio::process::Command::new("no-such-mcp-server-here");
    let error = McpClient::spawn(missing).await.unwrap_err();
    assert!(matches!(error, McpError::Spawn { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with("could not start the MCP server `no-such-mcp-server-here`: "),
        "{error}"
    );

    // A loopback port nobody listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let error = McpClient::connect(url.clone()).await.unwrap_err();
    assert!(matches!(error, McpError::Connect { .. }), "{error:?}");
    assert!(
        error
            .to_string()
            .starts_with(&format!("could not connect to the MCP server at {url}: ")),
        "{error}"
    );
}

#[tokio::test]
async fn a_remote_tool_can_require_approval() {
    let (client, _serving) = connected().await;
    let guarded: Vec<McpTool> = client
        .tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| match tool.remote_name() {
            "remember" => tool.requiring_approval(),
            _ => tool,
        })
        .collect();
    let model = model_calling([call(0, "remember", r#"{"note":"milk"}"#)], "not allowed");
    let output = Agent::new(model)
        .try_tools(guarded)
        .unwrap()
        .run("go")
        .await
        .unwrap();
    let result = tool_results(&output)[0];
    assert!(result.is_error);
    // Without an approver the call is denied.
    assert_eq!(
        result.content,
        "Error: the call was not run: this tool needs approval and no one is there to approve it"
    );
}

/// A long list of readings, as a JSON object.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Readings {
    /// One reading per hour
    hourly: Vec<f64>,
}

/// Return a day's worth of readings and more: longer than a small result limit.
#[agent_core::tool]
async fn readings() -> Readings {
    Readings {
        hourly: (0..200).map(f64::from).collect(),
    }
}

#[tokio::test]
async fn a_json_result_over_the_limit_keeps_its_whole_structured_content() {
    use rmcp::ServiceExt;
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let mut served: ToolSet = tools!(readings);
    served.set_result_limit(50);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(served).serve_io(read, write));
    let client = ().serve(client_end).await.unwrap();
    let result = client
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new("readings"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));
    let structured = result.structured_content.expect("structured content");
    assert_eq!(structured["hourly"].as_array().map(Vec::len), Some(200));
    // The text is cut to the limit, with the marker.
    let text = serde_json::to_value(&result.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.starts_with(r#"{"hourly":[0.0,1.0,"#), "{text}");
    assert!(
        text.contains("[result truncated: showing the first 50 of"),
        "{text}"
    );
}

/// Answers with the arguments it received, as they arrived.
struct EchoArguments(ToolDef);

impl Tool for EchoArguments {
    fn definition(&self) -> &ToolDef {
        &self.0
    }

    fn call<'a>(
        &'a self,
        _state: &'a (),
        call: &'a agent_core::ToolCall,
        _run: &'a agent_core::RunScope,
    ) -> agent_core::BoxFuture<'a, Result<agent_core::ToolOutput, agent_core::ToolError>> {
        let arguments = call.arguments.clone();
        Box::pin(async move { Ok(agent_core::ToolOutput::Text(arguments)) })
    }
}

/// A strict dialect makes an optional field nullable and the model sends `null` for "left out";
/// some servers refuse a `null` there, so the client leaves such fields out, at every depth.
#[tokio::test]
async fn nulls_for_optional_fields_are_left_out_before_the_call_goes_to_the_server() {
    let parameters = serde_json::json!({
        "type": "object",
        "properties": {
            "city": { "type": "string" },
            "unit": { "type": ["string", "null"] },
            "when": { "anyOf": [{ "$ref": "#/$defs/When" }, { "type": "null" }] },
            "note": { "type": ["string", "null"] }
        },
        "required": ["city", "note"],
        "$defs": { "When": { "type": "object", "properties": {
            "day": { "type": "string" },
            "hour": { "type": ["integer", "null"] }
        }, "required": ["day"] } }
    });
    let mut served = ToolSet::new();
    served
        .add(EchoArguments(ToolDef::new("echo", "Echo.", parameters)))
        .unwrap();
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(served).serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    let tools = client.tools().await.unwrap();
    let mut remote = ToolSet::new();
    remote.add(tools.into_iter().next().unwrap()).unwrap();

    let result = remote
        .dispatch(
            &(),
            &call(
                0,
                "echo",
                r#"{"city":"Oslo","unit":null,"when":{"day":"Mon","hour":null},"note":null}"#,
            ),
        )
        .await;
    assert!(!result.is_error, "{}", result.content);
    let received: serde_json::Value = serde_json::from_str(&result.content).unwrap();
    // `note` is required: its `null` is the model's to answer for, and goes as it is.
    assert_eq!(
        received,
        serde_json::json!({ "city": "Oslo", "when": { "day": "Mon" }, "note": null })
    );
}

/// Render the current chart: a caption, the picture, and the report it comes from.
#[agent_core::tool]
async fn chart() -> Vec<agent_core::Part> {
    vec![
        agent_core::Part::text("Rainfall this week:"),
        agent_core::Part::image("image/png", [0x89, b'P', b'N', b'G']),
        agent_core::Part::Document(
            agent_core::Media::bytes("application/pdf", b"%PDF-1.7").with_name("report.pdf"),
        ),
    ]
}

#[tokio::test]
async fn a_tools_image_goes_out_as_mcp_image_content_and_comes_back_as_a_part() {
    use agent_core::{Media, Part};
    use rmcp::ServiceExt;

    // What any MCP client sees: an image block, the PDF as an embedded resource.
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(tools!(chart)).serve_io(read, write));
    let raw = ().serve(client_end).await.unwrap();
    let result = raw
        .peer()
        .call_tool(rmcp::model::CallToolRequestParams::new("chart"))
        .await
        .unwrap();
    let blocks = serde_json::to_value(&result.content).unwrap();
    assert_eq!(
        blocks,
        serde_json::json!([
            {"type": "text", "text": "Rainfall this week:"},
            {"type": "image", "data": "iVBORw==", "mimeType": "image/png"},
            {"type": "resource", "resource": {
                "uri": "attachment:///report.pdf",
                "mimeType": "application/pdf",
                "blob": "JVBERi0xLjc="
            }}
        ])
    );

    // What an agent using the tool over MCP sees: the same result as calling it natively.
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(McpServer::new(tools!(chart)).serve_io(read, write));
    let (read, write) = tokio::io::split(client_end);
    let client = McpClient::connect_io(read, write).await.unwrap();
    let model = model_calling([call(0, "chart", "{}")], "done");
    let output = Agent::new(model)
        .try_tools(client.tools().await.unwrap())
        .unwrap()
        .run("chart")
        .await
        .unwrap();
    let result = tool_results(&output)[0];
    assert_eq!(result.content, "Rainfall this week:");
    assert_eq!(
        result.parts,
        vec![
            Part::Image(Media::base64("image/png", "iVBORw==")),
            Part::Document(
                Media::base64("application/pdf", "JVBERi0xLjc=")
                    .with_name("attachment:///report.pdf")
            ),
        ]
    );
}
