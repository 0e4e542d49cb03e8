//! The Node side of the MCP interop tests: the official SDK's client (`mcp/client.mjs`) and the
//! reference server `@modelcontextprotocol/server-everything`, installed by `npm ci --prefix tests/mcp`.
//!
//! The tests that use them need [`NODE`]: see [`crate::peers`] for what happens when it is missing.

use std::path::PathBuf;
use std::process::Stdio;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};

use crate::peers::Peer;

/// `tests/mcp`, where `package.json` and the scripts are.
pub fn interop_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("mcp")
}

/// Node.js with the official MCP SDK and reference server installed in `tests/mcp`.
pub static NODE: Peer = Peer {
    name: "Node.js with the MCP SDK",
    why: "These tests check interoperability with the official TypeScript MCP SDK and its reference \
          server, which run on Node.js",
    enable: "install Node.js 18 or newer, then run `npm ci --prefix tests/mcp`",
    detect: detect_node,
};

/// `Ok` when `node` runs.
fn detect_node_binary() -> Result<(), String> {
    let version = std::process::Command::new("node").arg("--version").output();
    match version {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => Err(format!("`node --version` failed ({})", output.status)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Err("`node` is not on the PATH".to_owned())
        }
        Err(error) => Err(format!("`node` cannot be run: {error}")),
    }
}

fn detect_node() -> Result<(), String> {
    detect_node_binary()?;
    let packages = interop_dir().join("node_modules/@modelcontextprotocol");
    match ["sdk", "server-everything"]
        .into_iter()
        .filter(|package| !packages.join(package).is_dir())
        .collect::<Vec<_>>()[..]
    {
        [] => Ok(()),
        [package] => Err(format!(
            "@modelcontextprotocol/{package} is not installed in tests/mcp"
        )),
        _ => Err("the npm packages of tests/mcp are not installed".to_owned()),
    }
}

/// `tests/web`, where the AI SDK's `ai` package and the chat client script are.
pub fn web_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// Node.js with the AI SDK's `ai` package installed in `tests/web`.
pub static AI_SDK: Peer = Peer {
    name: "Node.js with the AI SDK",
    why: "These tests read our web endpoint's stream with the AI SDK's own client and parser",
    enable: "install Node.js 18 or newer, then run `npm ci --prefix tests/web`",
    detect: detect_ai_sdk,
};

fn detect_ai_sdk() -> Result<(), String> {
    detect_node_binary()?;
    if web_dir().join("node_modules/ai/package.json").is_file() {
        Ok(())
    } else {
        Err("the `ai` package is not installed in tests/web".to_owned())
    }
}

/// Runs the AI SDK's chat transport (`web/chat_client.mjs`) against `api` with `messages`;
/// returns `{chunks, message}`: every chunk it parsed, and the message it rebuilt.
pub async fn ai_sdk_chat(api: &str, chat_id: &str, messages: &Value) -> Value {
    let mut command = Command::new("node");
    command.arg(web_dir().join("chat_client.mjs"));
    let request = serde_json::json!({ "api": api, "chatId": chat_id, "messages": messages });
    client_report(command, &request, "chat_client.mjs").await
}

/// Drives the AI SDK's `Chat` (`web/chat_session.mjs`: what `useChat` wraps, over
/// `DefaultChatTransport`) against `api` through `script`: `{chatId, clientTools, steps}`, see the
/// script for the steps. Returns `{steps, requests, messages}`: the chat after each step, what
/// each request posted, and `chat.messages` at the end.
pub async fn ai_sdk_chat_session(api: &str, script: &Value) -> Value {
    let mut command = Command::new("node");
    command.arg(web_dir().join("chat_session.mjs"));
    let mut request = script.clone();
    request["api"] = Value::from(api);
    client_report(command, &request, "chat_session.mjs").await
}

/// `tests/agui`, where the official AG-UI client and its session script are.
pub fn agui_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("agui")
}

/// Node.js with the official AG-UI client (`@ag-ui/client`) installed in `tests/agui`.
pub static AG_UI: Peer = Peer {
    name: "Node.js with the AG-UI client",
    why: "These tests drive our AG-UI endpoint with the official AG-UI client, which checks the \
          event stream and rebuilds the conversation from it",
    enable: "install Node.js 18 or newer, then run `npm ci --prefix tests/agui`",
    detect: detect_ag_ui,
};

fn detect_ag_ui() -> Result<(), String> {
    detect_node_binary()?;
    if agui_dir()
        .join("node_modules/@ag-ui/client/package.json")
        .is_file()
    {
        Ok(())
    } else {
        Err("the `@ag-ui/client` package is not installed in tests/agui".to_owned())
    }
}

/// Drives one `HttpAgent` of the AG-UI client (`agui/agui_session.mjs`) against `url` through
/// `script`: `{threadId, headers, steps}`, see the script for the steps. Returns `{steps,
/// messages, state}`: for each step the events the agent saw, `runAgent`'s result, new messages
/// and error, and its pending interrupts after it; then the agent's messages and state at the end.
pub async fn agui_session(url: &str, script: &Value) -> Value {
    let mut command = Command::new("node");
    command.arg(agui_dir().join("agui_session.mjs"));
    let mut request = script.clone();
    request["url"] = Value::from(url);
    client_report(command, &request, "agui_session.mjs").await
}

/// `node <server-everything> stdio`, ready to spawn.
pub fn everything_stdio() -> Command {
    let mut command = Command::new("node");
    command.arg(everything_script()).arg("stdio");
    command
}

fn everything_script() -> PathBuf {
    interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// server-everything over streamable HTTP on a free loopback port: the process (killed when
/// dropped) and its endpoint URL.
pub async fn everything_http() -> (Child, String) {
    let mut child = Command::new("node")
        .current_dir(interop_dir())
        .arg("--import")
        .arg("./loopback.mjs")
        .arg(everything_script())
        .arg("streamableHttp")
        .env("PORT", "0")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node starts");
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut lines = BufReader::new(stderr).lines();
    let base = loop {
        let line = tokio::time::timeout(std::time::Duration::from_secs(30), lines.next_line())
            .await
            .expect("server-everything starts within 30 s")
            .expect("its stderr is readable")
            .expect("server-everything exited before listening");
        if let Some(address) = line.strip_prefix("loopback.mjs: listening on ") {
            break address.to_owned();
        }
    };
    // Keep draining stderr so the server never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, format!("{base}/mcp"))
}

/// Runs the official SDK's client (`mcp/client.mjs`) with `arguments` (`stdio <command...>` or
/// `http <url>`), making `calls`; returns its report: `{serverInfo, tools, calls}`.
pub async fn sdk_client(arguments: &[&str], calls: &Value) -> Value {
    sdk_client_with(arguments, calls, &[]).await
}

/// [`sdk_client`] with extra environment variables for `client.mjs` (`MCP_CLIENT_ELICIT`).
pub async fn sdk_client_with(arguments: &[&str], calls: &Value, env: &[(&str, &str)]) -> Value {
    let mut command = Command::new("node");
    command
        .arg(interop_dir().join("client.mjs"))
        .args(arguments)
        .envs(env.iter().copied());
    client_report(command, calls, "client.mjs").await
}

/// Runs an interop client (`command`), writes `calls` to its stdin, and reads the one JSON report
/// it prints; fails the test, naming `client`, when it fails.
pub(crate) async fn client_report(mut command: Command, calls: &Value, client: &str) -> Value {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("{client} starts: {error}"));
    let mut stdin = child.stdin.take().expect("stdin is piped");
    stdin
        .write_all(calls.to_string().as_bytes())
        .await
        .expect("the client reads its calls");
    drop(stdin);
    let output = child.wait_with_output().await.expect("the client runs");
    assert!(
        output.status.success(),
        "{client} failed ({}); its stderr is above",
        output.status
    );
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{client} prints one JSON report: {error}"))
}
