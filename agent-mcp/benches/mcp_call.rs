//! What a tool call costs through MCP, next to the same call through the dispatcher: `McpTool` ->
//! JSON-RPC over an in-process pipe -> `McpServer` -> the dispatcher, and back.
//!
//! `cargo bench -p agent-mcp --bench mcp_call`. Both run on one current-thread tokio
//! runtime, so the pipe and the SDK's tasks are measured, not thread hand-offs.

// agent-core's shared bench items; the models are for its other benchmarks.
#[allow(dead_code)]
#[path = "../../agent-core/benches/common/mod.rs"]
mod common;

use agent_core::{Tool, ToolCall, ToolSet, tools};
use agent_mcp::{McpClient, McpServer, McpTool};
use common::{ARGUMENTS, get_weather};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The floor: the dispatcher runs the call in process.
#[divan::bench]
fn dispatch_in_process(bencher: Bencher) {
    let runtime = runtime();
    let tools: ToolSet = tools!(get_weather);
    let call = ToolCall::new("call_1", "get_weather", ARGUMENTS);
    bencher.bench_local(|| runtime.block_on(tools.dispatch(&(), black_box(&call))));
}

/// The same call as an MCP `tools/call` to a server in process.
#[divan::bench]
fn call_over_mcp(bencher: Bencher) {
    let runtime = runtime();
    let tool: McpTool = runtime.block_on(async {
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(McpServer::new(tools!(get_weather)).serve_io(read, write));
        let (read, write) = tokio::io::split(client_end);
        let client = McpClient::connect_io(read, write).await.expect("connected");
        client.tools().await.expect("listed").remove(0)
    });
    let call = ToolCall::new("call_1", "get_weather", ARGUMENTS);
    let run = agent_core::RunScope::new(agent_core::RunId::new());
    bencher.bench_local(|| {
        runtime
            .block_on(Tool::<()>::call(&tool, &(), black_box(&call), &run))
            .expect("the call succeeds")
    });
}

/// A bare `rmcp` server with one tool that echoes its arguments: nothing of ours on either side.
#[derive(Clone)]
struct Echo;

impl rmcp::ServerHandler for Echo {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(
            rmcp::model::ServerCapabilities::builder()
                .enable_tools()
                .build(),
        )
    }

    async fn call_tool(
        &self,
        request: rmcp::model::CallToolRequestParams,
        _context: rmcp::service::RequestContext<rmcp::RoleServer>,
    ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
        let text = serde_json::to_string(&request.arguments).unwrap_or_default();
        let result =
            rmcp::model::CallToolResult::success(vec![rmcp::model::ContentBlock::text(text)]);
        Ok(result.into())
    }
}

/// The floor of an MCP call: a bare `rmcp` client calling the bare echo server over the same
/// in-process pipe, on the same runtime.
#[divan::bench]
fn rmcp_floor(bencher: Bencher) {
    use rmcp::ServiceExt;

    let runtime = runtime();
    let client = runtime.block_on(async {
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(server_end);
        tokio::spawn(async move {
            let running = Echo.serve((read, write)).await.expect("served");
            let _ = running.waiting().await;
        });
        let (read, write) = tokio::io::split(client_end);
        ().serve((read, write)).await.expect("connected")
    });
    let arguments: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(ARGUMENTS).expect("an object");
    bencher.bench_local(|| {
        let request = rmcp::model::CallToolRequestParams::new("get_weather")
            .with_arguments(black_box(arguments.clone()));
        runtime
            .block_on(client.peer().call_tool(request))
            .expect("the call succeeds")
    });
}
