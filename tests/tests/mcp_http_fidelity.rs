//! Our MCP server's answers to what a strict client (the Python SDK's) sends and expects, over
//! streamable HTTP on loopback with raw requests: parameters that do not fit a `tools/call` are
//! invalid params (`-32602`), a body that is not JSON is `400` with a parse error, and ending a
//! session is `200`.

use agent_core::tools;
use agent_mcp::McpServer;
use serde_json::{Value, json};
use tests::get_weather;

struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn start(url: String) -> Self {
        let http = reqwest::Client::new();
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": { "name": "raw", "version": "1" }
            }
        });
        let reply = post(&http, &url, None, initialize.to_string()).await;
        let id = reply
            .headers()
            .get("mcp-session-id")
            .expect("a session id")
            .to_str()
            .unwrap()
            .to_owned();
        let _ = reply.bytes().await;
        let initialized = json!({ "jsonrpc": "2.0", "method": "notifications/initialized" });
        post(&http, &url, Some(&id), initialized.to_string()).await;
        Session { http, url, id }
    }

    /// Sends a request; returns the status and the JSON-RPC message in the reply (plain JSON, or
    /// the first `data:` line of an event stream that holds one).
    async fn send(&self, body: String) -> (u16, Value) {
        let reply = post(&self.http, &self.url, Some(&self.id), body).await;
        let status = reply.status().as_u16();
        let text = reply.text().await.unwrap();
        let message = text
            .lines()
            .filter_map(|line| line.strip_prefix("data:"))
            .find_map(|data| serde_json::from_str(data.trim()).ok())
            .or_else(|| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        (status, message)
    }
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    session: Option<&str>,
    body: String,
) -> reqwest::Response {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body);
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn strict_clients_get_the_answers_the_spec_gives() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = McpServer::new(tools!(get_weather));
    let serving = tokio::spawn(server.serve_http(listener, async move {
        let _ = stopped.await;
    }));
    let session = Session::start(url.clone()).await;

    let not_an_object = json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "get_weather", "arguments": [1, 2] }
    });
    let (_, reply) = session.send(not_an_object.to_string()).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        "Invalid params for tools/call: `arguments` must be an object"
    );
    let no_name = json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": { "arguments": {} }
    });
    let (_, reply) = session.send(no_name.to_string()).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(
        reply["error"]["message"],
        "Invalid params for tools/call: `name` is missing"
    );
    let unknown = json!({ "jsonrpc": "2.0", "id": 4, "method": "tools/explode", "params": {} });
    let (_, reply) = session.send(unknown.to_string()).await;
    assert_eq!(reply["error"]["code"], -32601, "{reply}");

    let (status, reply) = session.send("{\"jsonrpc\":".to_owned()).await;
    assert_eq!(status, 400);
    assert_eq!(reply["error"]["code"], -32700, "{reply}");
    assert_eq!(reply["id"], Value::Null);

    // A good call still works after all that.
    let good = json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": { "name": "get_weather", "arguments": { "city": "Beijing" } }
    });
    let (status, reply) = session.send(good.to_string()).await;
    assert_eq!(status, 200);
    assert_eq!(reply["result"]["isError"], false, "{reply}");

    let ended = session
        .http
        .delete(&url)
        .header("mcp-session-id", &session.id)
        .send()
        .await
        .unwrap();
    assert_eq!(ended.status().as_u16(), 200);

    let _ = stop.send(());
    serving.await.unwrap().unwrap();
}
