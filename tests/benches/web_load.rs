//! 1000 chats at once against the web endpoint over loopback, the model an in-process stand-in,
//! with each session store: in memory, an SQLite file, and PostgreSQL (a server of its own, pools
//! of several sizes); and against the AG-UI and A2A endpoints (`agui`, `a2a`, in memory). Two measures per case:
//!
//! - **Throughput**: three rounds of 1000 chats, the model answering each after 200 ms; chats per
//!   second and the time to first byte (p50, p99). The clients are raw loopback sockets in this
//!   process (a request written, the response read into a small buffer).
//! - **Memory per open stream**: 1000 chats from a child process (this program again, `client`),
//!   the model holding every answer until all 1000 runs have started; the live heap of this
//!   process (the server alone) at that moment, above what it was before, divided by 1000. Its
//!   floor (with the in-memory store): a bare axum route that reads the same body and holds a
//!   server-sent event stream open, served the same way (`agent_web::serve_router`).
//!
//! ```text
//! cargo bench -p tests --bench web_load [-- memory agui a2a sqlite postgres]
//! ```
//!
//! The PostgreSQL case starts its own server through the tests' harness (`tests::postgres`:
//! Debian's binaries, `apt-get install postgresql`, a fresh cluster in a temporary folder on a
//! loopback port, stopped when the case ends); without the binaries it says so and is skipped.

// The allocation counter agent-core's benches share.
#[path = "../../agent-core/benches/common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_a2a::A2aServer;
use agent_agui::AguiServer;
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Model, ModelError,
};
use agent_web::ChatServer;
use counting_alloc::{CountingAlloc, LIVE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const CHATS: usize = 1000;
const LATENCY: Duration = Duration::from_millis(200);

/// Answers every request after [`LATENCY`]; while a memory round holds its gate, once every chat
/// of the round has reached it instead.
struct StandIn {
    gate: Arc<Gate>,
}

/// What holds the answers of a memory round until all its chats are open.
struct Gate {
    holding: AtomicBool,
    arrived: AtomicUsize,
    /// The live heap when the round's last chat reached the model.
    all_open: AtomicUsize,
    opened: tokio::sync::watch::Sender<bool>,
}

impl Gate {
    fn new() -> Self {
        Gate {
            holding: AtomicBool::new(false),
            arrived: AtomicUsize::new(0),
            all_open: AtomicUsize::new(0),
            opened: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Holds the answers from now until [`CHATS`] runs have reached the model.
    fn hold(&self) {
        self.arrived.store(0, Ordering::SeqCst);
        self.opened.send_replace(false);
        self.holding.store(true, Ordering::SeqCst);
    }

    fn release(&self) {
        self.holding.store(false, Ordering::SeqCst);
    }

    /// Waits until the round's chats have all started (the last one to arrive opens the gate).
    async fn pass(&self) {
        if self.arrived.fetch_add(1, Ordering::SeqCst) + 1 == CHATS {
            self.all_open
                .store(LIVE.load(Ordering::SeqCst), Ordering::SeqCst);
            self.opened.send_replace(true);
            return;
        }
        let mut opened = self.opened.subscribe();
        let waited = tokio::time::timeout(Duration::from_secs(60), opened.wait_for(|open| *open));
        assert!(
            waited.await.is_ok(),
            "every chat of the round reaches the model"
        );
    }
}

impl Model for StandIn {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async {
            if self.gate.holding.load(Ordering::SeqCst) {
                self.gate.pass().await;
            } else {
                tokio::time::sleep(LATENCY).await;
            }
            Ok(ChatResponse::new(AssistantMessage::text("It rains.")))
        })
    }
}

/// The endpoint a round talks to: the web endpoint (`ChatServer`, the AI SDK's stream) or the
/// AG-UI one (`AguiServer`).
#[derive(Clone, Copy, PartialEq)]
enum Endpoint {
    Web,
    Agui,
    A2a,
}

impl Endpoint {
    /// Its name on the client process's command line.
    fn name(self) -> &'static str {
        match self {
            Endpoint::Web => "web",
            Endpoint::Agui => "agui",
            Endpoint::A2a => "a2a",
        }
    }

    /// The request of one chat: its path and its body.
    fn request(self, chat: &str) -> (&'static str, String) {
        match self {
            Endpoint::Web => (
                "/api/chat",
                format!(
                    r#"{{"id":"{chat}","messages":[{{"id":"m1","role":"user","parts":[{{"type":"text","text":"Rain?"}}]}}]}}"#
                ),
            ),
            Endpoint::Agui => (
                "/",
                format!(
                    r#"{{"threadId":"{chat}","runId":"r","messages":[{{"id":"m1","role":"user","content":"Rain?"}}]}}"#
                ),
            ),
            Endpoint::A2a => (
                "/",
                format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{{"message":{{"messageId":"m1","contextId":"{chat}","role":"ROLE_USER","parts":[{{"text":"Rain?"}}]}}}}}}"#
                ),
            ),
        }
    }

    /// What the end of a whole answer holds.
    fn end(self) -> &'static str {
        match self {
            Endpoint::Web => "[DONE]",
            Endpoint::Agui => "RUN_FINISHED",
            Endpoint::A2a => "TASK_STATE_COMPLETED",
        }
    }
}

/// One chat: the time to the response's first byte, and whether the stream ended whole.
async fn chat(endpoint: Endpoint, address: std::net::SocketAddr, chat: String) -> (Duration, bool) {
    let (path, body) = endpoint.request(&chat);
    let request = format!(
        "POST {path} HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         a2a-version: 1.0\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(address)
        .await
        .expect("a connection");
    let started = Instant::now();
    socket
        .write_all(request.as_bytes())
        .await
        .expect("the request goes");
    let mut buffer = [0u8; 2048];
    let mut first_byte = None;
    let mut tail = Vec::new();
    loop {
        let read = socket.read(&mut buffer).await.expect("the response comes");
        if read == 0 {
            break;
        }
        first_byte.get_or_insert_with(|| started.elapsed());
        tail.extend_from_slice(&buffer[..read]);
        let keep = tail.len().saturating_sub(256);
        tail.drain(..keep);
    }
    let done = String::from_utf8_lossy(&tail).contains(endpoint.end());
    (first_byte.unwrap_or(Duration::MAX), done)
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Serves `store` on a loopback port behind `endpoint` and runs three throughput rounds of
/// [`CHATS`] chats at once against it and a memory round, printing their figures under `case`.
async fn measure(case: &str, endpoint: Endpoint, store: Arc<dyn SessionStore>) {
    let gate = Arc::new(Gate::new());
    let agent: Agent = Agent::new(StandIn {
        gate: Arc::clone(&gate),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    let agent = Arc::new(agent);
    let server = match endpoint {
        Endpoint::Web => tokio::spawn(ChatServer::new(agent).sessions(store).serve(listener)),
        Endpoint::Agui => tokio::spawn(AguiServer::new(agent).sessions(store).serve(listener)),
        Endpoint::A2a => tokio::spawn(A2aServer::new(agent).sessions(store).serve(listener)),
    };
    // A warm-up chat, so the server's lazily built parts are not counted per stream.
    let _ = chat(endpoint, address, format!("{case}-warm-up")).await;

    for round in 1..=3 {
        let started = Instant::now();
        let chats: Vec<_> = (0..CHATS)
            .map(|chat_id| {
                tokio::spawn(chat(endpoint, address, format!("{case}-{round}-{chat_id}")))
            })
            .collect();
        let mut first_bytes = Vec::with_capacity(CHATS);
        let mut failed = 0;
        for chat in chats {
            let (first_byte, done) = chat.await.expect("a chat task");
            first_bytes.push(first_byte);
            failed += usize::from(!done);
        }
        let wall = started.elapsed();
        first_bytes.sort_unstable();
        println!(
            "{case} round {round}: {CHATS} chats in {wall:.2?} ({:.0} chats/s, {failed} failed); \
             first byte p50 {:.1?}, p99 {:.1?}",
            CHATS as f64 / wall.as_secs_f64(),
            percentile(&first_bytes, 0.5),
            percentile(&first_bytes, 0.99),
        );
        assert_eq!(failed, 0, "every chat ends whole");
    }

    let open = open_streams(endpoint, address, &gate, case).await;
    println!("{case} memory: {open:.1} KB of live heap per open stream ({CHATS} open at once)");
    server.abort();
}

/// A memory round against the server at `address` (its answers held by `gate`): [`CHATS`] chats
/// at once from a client process, and the server's live heap per open stream, in KB, when all are
/// open.
async fn open_streams(
    endpoint: Endpoint,
    address: std::net::SocketAddr,
    gate: &Gate,
    case: &str,
) -> f64 {
    gate.hold();
    let baseline = LIVE.load(Ordering::SeqCst);
    let client = tokio::process::Command::new(std::env::current_exe().expect("this program"))
        .args([
            "client",
            endpoint.name(),
            &address.to_string(),
            &format!("{case}-open"),
        ])
        .output()
        .await
        .expect("the client process runs");
    gate.release();
    let report = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success() && report.trim() == "failed 0",
        "every chat of the memory round ends whole: {report} {}",
        String::from_utf8_lossy(&client.stderr)
    );
    let open = gate
        .all_open
        .load(Ordering::SeqCst)
        .saturating_sub(baseline);
    open as f64 / CHATS as f64 / 1024.0
}

/// The floor of the memory per open stream: a bare axum route that reads the same body and holds
/// a server-sent event stream open (one event, then `[DONE]` once the gate opens), served the
/// same way.
async fn bare_route() {
    use axum::body::{Body, Bytes};
    use futures_util::StreamExt;
    let gate = Arc::new(Gate::new());
    let held = Arc::clone(&gate);
    let route = axum::routing::post(move |body: Bytes| {
        let gate = Arc::clone(&held);
        async move {
            assert!(!body.is_empty());
            let events = futures_util::stream::once(async { Bytes::from_static(b"data: {}\n\n") })
                .chain(futures_util::stream::once(async move {
                    if gate.holding.load(Ordering::SeqCst) {
                        gate.pass().await;
                    }
                    Bytes::from_static(b"data: [DONE]\n\n")
                }))
                .map(Ok::<_, std::convert::Infallible>);
            (
                [(axum::http::header::CONTENT_TYPE, "text/event-stream")],
                Body::from_stream(events),
            )
        }
    });
    let app = axum::Router::new().route("/api/chat", route);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    let server = tokio::spawn(agent_web::serve_router(listener, app));
    let _ = chat(Endpoint::Web, address, "bare-warm-up".to_owned()).await;
    let open = open_streams(Endpoint::Web, address, &gate, "bare").await;
    println!(
        "bare axum route memory: {open:.1} KB of live heap per open stream ({CHATS} open at once)"
    );
    server.abort();
}

/// The client process of a memory round: [`CHATS`] chats at once against `address` (the endpoint
/// named `endpoint`), ids after `prefix`; prints how many did not end whole.
fn client(endpoint: &str, address: &str, prefix: &str) {
    let endpoint = match endpoint {
        "agui" => Endpoint::Agui,
        "a2a" => Endpoint::A2a,
        _ => Endpoint::Web,
    };
    let address: std::net::SocketAddr = address.parse().expect("an address");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let failed = runtime.block_on(async {
        let chats: Vec<_> = (0..CHATS)
            .map(|chat_id| tokio::spawn(chat(endpoint, address, format!("{prefix}-{chat_id}"))))
            .collect();
        let mut failed = 0;
        for chat in chats {
            let (_, done) = chat.await.expect("a chat task");
            failed += usize::from(!done);
        }
        failed
    });
    println!("failed {failed}");
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments pick the stores (all when none).
    let picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    if let [mode, endpoint, address, prefix] = picked.as_slice()
        && mode == "client"
    {
        return client(endpoint, address, prefix);
    }
    let wanted = |store: &str| picked.is_empty() || picked.iter().any(|pick| pick == store);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        if wanted("memory") {
            // The floor first: a server stopped just before would free its memory during this
            // round, and the floor would read low.
            bare_route().await;
            measure("memory", Endpoint::Web, Arc::new(MemorySessions::new())).await;
        }
        if wanted("agui") {
            measure("agui", Endpoint::Agui, Arc::new(MemorySessions::new())).await;
        }
        if wanted("a2a") {
            measure("a2a", Endpoint::A2a, Arc::new(MemorySessions::new())).await;
        }
        if wanted("sqlite") {
            sqlite().await;
        }
        if wanted("postgres") {
            postgres().await;
        }
    });
}

async fn sqlite() {
    let path = std::env::temp_dir().join(format!("web-load-{}.sqlite", std::process::id()));
    let store = agent_sql::SqliteSessions::open(&path).expect("an SQLite file");
    measure("sqlite", Endpoint::Web, Arc::new(store)).await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Pool sizes the PostgreSQL case measures: the default of `PostgresSessions::connect`, and more.
/// Each conversation with a run going on keeps one connection, so at most `size - 1` run at once.
const POOLS: [usize; 3] = [16, 64, 256];

async fn postgres() {
    use agent_sql::PostgresSessions;
    use agent_sql::deadpool_postgres::{Manager, Pool, tokio_postgres};
    use tests::postgres::{PostgresServer, binaries};

    if binaries().is_none() {
        println!("postgres: skipped (no initdb, pg_ctl and postgres found)");
        return;
    }
    let server = PostgresServer::start();
    for size in POOLS {
        let config: tokio_postgres::Config = server.url("postgres").parse().expect("the URL");
        let manager = Manager::new(config, tokio_postgres::NoTls);
        let pool = Pool::builder(manager)
            .max_size(size)
            .build()
            .expect("a pool");
        let store = PostgresSessions::from_pool(pool)
            .await
            .expect("the store connects");
        measure(
            &format!("postgres-pool-{size}"),
            Endpoint::Web,
            Arc::new(store),
        )
        .await;
    }
}
