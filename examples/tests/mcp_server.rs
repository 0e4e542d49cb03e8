//! The `mcp_server` binary, driven by the official TypeScript and Python SDKs' clients over stdio and
//! streamable HTTP: what it lists is what `#[tool]` generated, and every kind of call comes back as
//! the spec says.

use std::process::Stdio;

use agent_core::Tool;
use examples::weather::{get_time, get_weather};
use serde_json::{Value, json};
use tests::node::{NODE, sdk_client};
use tests::peers::Test;
use tests::python::{PYTHON_MCP, python_client};
use tokio::io::{AsyncBufReadExt, BufReader};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp_server");

/// `RADAR_PNG` in base64, encoded apart from the crate.
const RADAR_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR42mOQizoBRwzEcQD9oxQBMj0hIQAAAABJRU5ErkJggg==";

/// One call of each kind: structured success, plain success, bad argument, the tool's own error,
/// an unknown tool.
fn calls() -> Value {
    json!([
        { "name": "get_weather", "arguments": { "city": "Beijing", "unit": "fahrenheit" } },
        { "name": "get_time", "arguments": { "city": "Paris" } },
        { "name": "get_weather", "arguments": { "city": "Beijing", "unit": "kelvin" } },
        { "name": "get_weather", "arguments": { "city": "Atlantis" } },
        { "name": "get_forecast", "arguments": {} },
        { "name": "rain_radar", "arguments": { "city": "Beijing" } }
    ])
}

fn check_report(report: &Value) {
    assert_eq!(report["serverInfo"]["name"], "agent-core-weather");

    let tools = report["tools"].as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["get_weather", "get_time", "rain_radar"]);
    let weather = Tool::<()>::definition(&get_weather {});
    assert_eq!(tools[0]["description"], weather.description.as_str());
    assert_eq!(tools[0]["inputSchema"], weather.parameters);
    assert_eq!(
        &tools[0]["outputSchema"],
        weather.output_schema.as_ref().unwrap()
    );
    assert_eq!(
        tools[0]["annotations"],
        json!({ "readOnlyHint": true, "idempotentHint": true })
    );
    assert_eq!(
        tools[1]["inputSchema"],
        Tool::<()>::definition(&get_time {}).parameters
    );
    assert!(
        tools[1].get("outputSchema").is_none(),
        "text results have no schema"
    );

    let calls = report["calls"].as_array().unwrap();
    let structured = &calls[0]["result"];
    assert_eq!(structured["isError"], false);
    let expected = json!({ "city": "Beijing", "weather": "light rain", "temp": 64, "unit": "°F" });
    assert_eq!(structured["structuredContent"], expected);
    // The text block carries the same JSON, for clients that ignore structured content.
    let text: Value =
        serde_json::from_str(structured["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, expected);

    assert_eq!(
        calls[1]["result"],
        json!({ "content": [{ "type": "text", "text": "It is 08:30 in Paris." }], "isError": false })
    );

    let bad_argument = &calls[2]["result"];
    assert_eq!(bad_argument["isError"], true);
    assert_eq!(
        bad_argument["content"][0]["text"],
        "invalid arguments: unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`"
    );

    let failed = &calls[3]["result"];
    assert_eq!(failed["isError"], true);
    assert_eq!(
        failed["content"][0]["text"],
        "no weather data for `Atlantis`; try a larger city nearby"
    );

    let unknown = &calls[4]["error"];
    assert_eq!(unknown["code"], -32602, "{unknown}");
    assert_eq!(unknown["message"], "Unknown tool: get_forecast");
    assert_eq!(
        unknown["data"]["available"],
        json!(["get_weather", "get_time", "rain_radar"])
    );

    // A tool's image is MCP image content, base64 with its MIME type, after the caption.
    let radar = &calls[5]["result"];
    assert_eq!(
        radar["content"],
        json!([
            { "type": "text", "text": "Rain radar for Beijing, last hour:" },
            { "type": "image", "data": RADAR_BASE64, "mimeType": "image/png" }
        ])
    );
    assert_eq!(radar["isError"], false);
}

async fn the_sdk_client_uses_it_over_stdio() {
    let report = sdk_client(&["stdio", SERVER], &calls()).await;
    check_report(&report);
}

async fn the_sdk_client_uses_it_over_http() {
    let (mut server, url) = http_server().await;
    let report = sdk_client(&["http", &url], &calls()).await;
    check_report(&report);
    server.kill().await.unwrap();
}

/// The server on `--http 127.0.0.1:0`, and its URL once it listens.
async fn http_server() -> (tokio::process::Child, String) {
    let mut server = tokio::process::Command::new(SERVER)
        .args(["--http", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    let line = lines
        .next_line()
        .await
        .unwrap()
        .expect("the server prints its address");
    let url = line
        .strip_prefix("listening on ")
        .expect("an address line")
        .to_owned();
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    (server, url)
}

/// The Python SDK reports what it logs as warnings: a clean session has none (it logged
/// "Session termination failed: 202" while ending a session answered 202).
fn check_python_report(report: &Value) {
    check_report(report);
    assert_eq!(report["warnings"], json!([]), "{}", report["warnings"]);
}

async fn the_python_sdk_client_uses_it_over_stdio() {
    check_python_report(&python_client(&["stdio", SERVER], &calls()).await);
}

async fn the_python_sdk_client_uses_it_over_http() {
    let (mut server, url) = http_server().await;
    check_python_report(&python_client(&["http", &url], &calls()).await);
    server.kill().await.unwrap();
}

fn a_wrong_argument_is_refused_with_the_usage() {
    let output = std::process::Command::new(SERVER)
        .arg("--sse")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(
        stderr.contains("usage: mcp_server [--stdio | --http ADDRESS]"),
        "{stderr}"
    );
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio(
            "the_sdk_client_uses_it_over_stdio",
            the_sdk_client_uses_it_over_stdio,
        )
        .needs(&NODE),
        Test::tokio(
            "the_sdk_client_uses_it_over_http",
            the_sdk_client_uses_it_over_http,
        )
        .needs(&NODE),
        Test::tokio(
            "the_python_sdk_client_uses_it_over_stdio",
            the_python_sdk_client_uses_it_over_stdio,
        )
        .needs(&PYTHON_MCP),
        Test::tokio(
            "the_python_sdk_client_uses_it_over_http",
            the_python_sdk_client_uses_it_over_http,
        )
        .needs(&PYTHON_MCP),
        Test::sync(
            "a_wrong_argument_is_refused_with_the_usage",
            a_wrong_argument_is_refused_with_the_usage,
        ),
    ])
}
