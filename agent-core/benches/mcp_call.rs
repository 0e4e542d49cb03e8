//! What a tool call costs through MCP, next to the same call through the dispatcher: `McpTool` ->
//! JSON-RPC over an in-process pipe -> `McpServer` -> the dispatcher, and back.
//!
//! `cargo bench -p agent-core --features mcp --bench mcp_call`. Both run on one current-thread tokio
//! runtime, so the pipe and the SDK's tasks are measured, not thread hand-offs.

#[allow(dead_code)] // the shared models are for the other benchmarks
mod common;

use agent_core::mcp::{McpClient, McpServer, McpTool};
use agent_core::{Tool, ToolCall, ToolSet, tools};
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
    bencher.bench_local(|| {
        runtime
            .block_on(Tool::<()>::call(&tool, &(), black_box(&call)))
            .expect("the call succeeds")
    });
}
