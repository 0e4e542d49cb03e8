//! Approval over MCP: our server asks the person before running a `requires_approval` tool,
//! through MCP elicitation, and the official TypeScript SDK's client answers (accept, decline,
//! cancel), or cannot be asked (no elicitation capability).

use agent_core::{tool, tools};
use agent_mcp::McpServer;
use serde_json::{Value, json};
use tests::peers::Test;
use tests::{
    node::{NODE, sdk_client_with},
    wipe,
};

/// Says hello.
#[tool(read_only)]
fn hello() -> String {
    "hello".to_owned()
}

/// Serves `wipe` and `hello` over streamable HTTP on loopback; runs the SDK's client with
/// `elicit` (`accept`, `decline`, `cancel`, or `None` for a client without the capability).
async fn call_wipe(server: McpServer, elicit: Option<&str>) -> Value {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve_http(listener, async move {
        let _ = stopped.await;
    }));
    let calls = json!([
        { "name": "hello" },
        { "name": "wipe", "arguments": { "folder": "/tmp/old" } }
    ]);
    let env: Vec<(&str, &str)> = elicit
        .map(|answer| ("MCP_CLIENT_ELICIT", answer))
        .into_iter()
        .collect();
    let report = sdk_client_with(&["http", &url], &calls, &env).await;
    let _ = stop.send(());
    serving.await.unwrap().unwrap();
    report
}

fn server() -> McpServer {
    McpServer::new(tools!(wipe, hello))
}

async fn an_accepted_call_runs() {
    let report = call_wipe(server(), Some("accept")).await;
    assert_eq!(
        report["elicitations"],
        json!(["Allow `wipe` to run with {\"folder\":\"/tmp/old\"}?"]),
        "asked once, for the tool that needs it"
    );
    let result = &report["calls"][1]["result"];
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["text"], "wiped /tmp/old");
    assert_eq!(report["calls"][0]["result"]["content"][0]["text"], "hello");
}

async fn a_declined_or_cancelled_call_is_an_error_result_naming_it() {
    for (answer, words) in [
        (
            "decline",
            "the call was not run: the user declined this call",
        ),
        (
            "cancel",
            "the call was not run: the user cancelled this call",
        ),
    ] {
        let report = call_wipe(server(), Some(answer)).await;
        let result = &report["calls"][1]["result"];
        assert_eq!(result["isError"], true, "{answer}");
        assert_eq!(result["content"][0]["text"], words, "{answer}");
        assert_eq!(report["elicitations"].as_array().unwrap().len(), 1);
    }
}

async fn a_client_that_cannot_ask_gets_an_error_unless_allowed() {
    let report = call_wipe(server(), None).await;
    let result = &report["calls"][1]["result"];
    assert_eq!(result["isError"], true);
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("`wipe` needs the user's approval, and approval was not possible"),
        "{text}"
    );
    assert_eq!(report["elicitations"], json!([]));

    let allowed = call_wipe(server().allow_without_approval(true), None).await;
    assert_eq!(allowed["calls"][1]["result"]["isError"], false);
    assert_eq!(
        allowed["calls"][1]["result"]["content"][0]["text"],
        "wiped /tmp/old"
    );
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio("an_accepted_call_runs", an_accepted_call_runs).needs(&NODE),
        Test::tokio(
            "a_declined_or_cancelled_call_is_an_error_result_naming_it",
            a_declined_or_cancelled_call_is_an_error_result_naming_it,
        )
        .needs(&NODE),
        Test::tokio(
            "a_client_that_cannot_ask_gets_an_error_unless_allowed",
            a_client_that_cannot_ask_gets_an_error_unless_allowed,
        )
        .needs(&NODE),
    ])
}
