//! Loopback HTTP helpers for the provider tests: fixture bodies, a scripted sequence of replies on a
//! wiremock server (or one that answers every request alike, after some first replies), and a raw
//! TCP server that breaks a reply off in the middle.

use std::path::PathBuf;
use std::time::Duration;

use agent_core::providers::HttpConfig;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// A fixture file's text: `tests/fixtures/{provider}/{name}`.
pub fn fixture(provider: &str, name: &str) -> String {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "fixtures", provider, name]
        .iter()
        .collect();
    std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("fixture {}: {error}", path.display()))
}

/// A JSON reply with this status and body.
pub fn json_reply(status: u16, body: &str) -> ResponseTemplate {
    ResponseTemplate::new(status).set_body_raw(body.as_bytes().to_vec(), "application/json")
}

/// Serves `replies` in order, one per POST, on a fresh loopback server.
pub async fn serve_in_order(replies: Vec<ResponseTemplate>) -> MockServer {
    let server = MockServer::start().await;
    for (index, reply) in replies.into_iter().enumerate() {
        Mock::given(method("POST"))
            .respond_with(reply)
            .up_to_n_times(1)
            .with_priority(u8::try_from(index + 1).unwrap_or(u8::MAX))
            .mount(&server)
            .await;
    }
    server
}

/// The JSON bodies of every request the server received, in order.
pub async fn request_bodies(server: &MockServer) -> Vec<Value> {
    received(server)
        .await
        .iter()
        .map(|request| serde_json::from_slice(&request.body).expect("a JSON request body"))
        .collect()
}

/// Every request the server received.
pub async fn received(server: &MockServer) -> Vec<Request> {
    server.received_requests().await.expect("recording is on")
}

/// Fast retries, so failure tests take milliseconds, not seconds.
pub fn quick_retries() -> HttpConfig {
    HttpConfig::default()
        .backoff(Duration::from_millis(5), Duration::from_millis(20))
        .request_timeout(Duration::from_secs(5))
}

/// A server on 127.0.0.1 that answers one request with a header promising a longer body than it
/// sends, then closes the connection. Returns its base URL.
pub async fn serve_truncated_once(promised: usize, sent: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        // Serve a few connections in case the client retries, then stop.
        for _ in 0..4 {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let mut buffer = vec![0u8; 64 * 1024];
            let _ = socket.read(&mut buffer).await;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {promised}\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(sent.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
    });
    format!("http://{address}")
}

/// A server on 127.0.0.1 that answers each request in turn with the next of `bodies` as a
/// server-sent-event stream, written `piece` bytes at a time (so pieces split characters and
/// escapes wherever they fall), then closes. Returns its base URL and a handle to the request bodies
/// it received.
pub async fn serve_event_streams(
    bodies: Vec<String>,
    piece: usize,
) -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let address = listener.local_addr().expect("an address");
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = std::sync::Arc::clone(&received);
    tokio::spawn(async move {
        for body in bodies {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let request = read_request(&mut socket).await;
            record.lock().expect("not poisoned").push(request);
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.set_nodelay(true);
            for (index, chunk) in body.as_bytes().chunks(piece.max(1)).enumerate() {
                let _ = socket.write_all(chunk).await;
                let _ = socket.flush().await;
                // A pause now and then, so the client sees the pieces as separate reads.
                if index % 8 == 0 {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
            let _ = socket.shutdown().await;
        }
    });
    (format!("http://{address}"), received)
}

/// Reads one HTTP request (head and `content-length` body) and returns its body.
async fn read_request(socket: &mut tokio::net::TcpStream) -> String {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    while let Ok(read) = socket.read(&mut chunk).await {
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
        let text = String::from_utf8_lossy(&buffer);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|line| {
                    let (name, value) = line.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buffer.len() >= end + 4 + length {
                return String::from_utf8_lossy(&buffer[end + 4..end + 4 + length]).into_owned();
            }
        }
    }
    String::new()
}

/// A loopback server that answers every POST with the reply it was last primed with, and records
/// every request: the backend of a conformance harness.
pub struct PrimedServer {
    server: MockServer,
    reply: std::sync::Arc<std::sync::Mutex<ResponseTemplate>>,
}

impl PrimedServer {
    /// Starts one on 127.0.0.1; until primed it answers 500.
    pub async fn start() -> Self {
        let server = MockServer::start().await;
        let reply = std::sync::Arc::new(std::sync::Mutex::new(ResponseTemplate::new(500)));
        let shared = std::sync::Arc::clone(&reply);
        Mock::given(method("POST"))
            .respond_with(move |_: &Request| {
                shared
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .clone()
            })
            .mount(&server)
            .await;
        PrimedServer { server, reply }
    }

    /// The server's base URL.
    pub fn uri(&self) -> String {
        self.server.uri()
    }

    /// Answers every request from now on with `reply`.
    pub fn prime(&self, reply: ResponseTemplate) {
        *self
            .reply
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = reply;
    }

    /// The last request received.
    pub async fn last_request(&self) -> Option<Request> {
        received(&self.server).await.pop()
    }

    /// The JSON body of the last request received.
    pub async fn last_body(&self) -> Option<Value> {
        let request = self.last_request().await?;
        serde_json::from_slice(&request.body).ok()
    }
}

/// A server-sent-event stream reply (the whole stream as one body).
pub fn event_stream_reply(body: String) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_raw(body.into_bytes(), "text/event-stream")
}

/// No retries, so a failure reaches the caller at once (the conformance harnesses want each error
/// as it is).
pub fn no_retries() -> HttpConfig {
    HttpConfig::default()
        .max_retries(0)
        .request_timeout(Duration::from_secs(10))
}

/// A loopback server that answers every POST with `reply`.
pub async fn always(reply: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(reply)
        .mount(&server)
        .await;
    server
}

/// A loopback server that answers with `first`, one POST each, then with `then` to every POST.
pub async fn first_then_always(first: Vec<ResponseTemplate>, then: ResponseTemplate) -> MockServer {
    let server = MockServer::start().await;
    for (index, reply) in first.into_iter().enumerate() {
        Mock::given(method("POST"))
            .respond_with(reply)
            .up_to_n_times(1)
            .with_priority(u8::try_from(index + 1).unwrap())
            .mount(&server)
            .await;
    }
    Mock::given(method("POST"))
        .respond_with(then)
        .with_priority(u8::MAX)
        .mount(&server)
        .await;
    server
}
