//! 1000 chats at once against the web endpoint over loopback, the model an in-process stand-in
//! that answers after 200 ms, so every stream is open at the same time: chats per second, the time
//! to first byte (p50, p99) and the memory each open stream holds at the peak, with each session
//! store: in memory, an SQLite file, and PostgreSQL (a server of its own, pools of several sizes).
//!
//! ```text
//! cargo bench -p tests --bench web_load [-- memory sqlite postgres]
//! ```
//!
//! The clients are raw loopback sockets in the same process (a request written, the response read
//! into a small buffer), so the memory figure is the server's per stream plus a few hundred bytes
//! of client. The PostgreSQL case starts its own server through the tests' harness
//! (`tests::postgres`: Debian's binaries, `apt-get install postgresql`, a fresh cluster in a
//! temporary folder on a loopback port, stopped when the case ends); without the binaries it says
//! so and is skipped.

// The allocation counter agent-core's benches share.
#[path = "../../agent-core/benches/common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::web::ChatServer;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Model, ModelError,
};
use counting_alloc::{CountingAlloc, LIVE, PEAK};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

const CHATS: usize = 1000;
const LATENCY: Duration = Duration::from_millis(200);

/// Answers every request after [`LATENCY`].
struct Slow;

impl Model for Slow {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async {
            tokio::time::sleep(LATENCY).await;
            Ok(ChatResponse::new(AssistantMessage::text("It rains.")))
        })
    }
}

/// One chat: the time to the response's first byte, and whether the stream ended with `[DONE]`.
async fn chat(address: std::net::SocketAddr, chat: String) -> (Duration, bool) {
    let body = format!(
        r#"{{"id":"{chat}","messages":[{{"id":"m1","role":"user","parts":[{{"type":"text","text":"Rain?"}}]}}]}}"#
    );
    let request = format!(
        "POST /api/chat HTTP/1.1\r\nhost: {address}\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
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
        let keep = tail.len().saturating_sub(64);
        tail.drain(..keep);
    }
    let done = String::from_utf8_lossy(&tail).contains("[DONE]");
    (first_byte.unwrap_or(Duration::MAX), done)
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * fraction).round() as usize;
    sorted[at.min(sorted.len() - 1)]
}

/// Serves `store` on a loopback port and runs three rounds of [`CHATS`] chats at once against it,
/// printing each round's figures under `case`.
async fn measure(case: &str, store: Arc<dyn SessionStore>) {
    let agent: Agent = Agent::new(Slow);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("an address");
    let server = tokio::spawn(
        ChatServer::new(Arc::new(agent))
            .sessions(store)
            .serve(listener),
    );
    // A warm-up chat, so the server's lazily built parts are not counted per stream.
    let _ = chat(address, format!("{case}-warm-up")).await;

    for round in 1..=3 {
        let baseline = LIVE.load(Ordering::Relaxed);
        PEAK.store(baseline, Ordering::Relaxed);
        let started = Instant::now();
        let chats: Vec<_> = (0..CHATS)
            .map(|chat_id| tokio::spawn(chat(address, format!("{case}-{round}-{chat_id}"))))
            .collect();
        let mut first_bytes = Vec::with_capacity(CHATS);
        let mut failed = 0;
        for chat in chats {
            let (first_byte, done) = chat.await.expect("a chat task");
            first_bytes.push(first_byte);
            failed += usize::from(!done);
        }
        let wall = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(baseline);
        first_bytes.sort_unstable();
        println!(
            "{case} round {round}: {CHATS} chats in {wall:.2?} ({:.0} chats/s, {failed} failed); \
             first byte p50 {:.1?}, p99 {:.1?}; peak {:.1} KB per open stream",
            CHATS as f64 / wall.as_secs_f64(),
            percentile(&first_bytes, 0.5),
            percentile(&first_bytes, 0.99),
            peak as f64 / CHATS as f64 / 1024.0,
        );
        assert_eq!(failed, 0, "every chat ends with [DONE]");
    }
    server.abort();
}

fn main() {
    // `cargo bench` passes `--bench`; other arguments pick the stores (all when none).
    let picked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let wanted = |store: &str| picked.is_empty() || picked.iter().any(|pick| pick == store);
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        if wanted("memory") {
            measure("memory", Arc::new(MemorySessions::new())).await;
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
    let store = agent_core::session::SqliteSessions::open(&path).expect("an SQLite file");
    measure("sqlite", Arc::new(store)).await;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
    }
}

/// Pool sizes the PostgreSQL case measures: the default of `PostgresSessions::connect`, and more.
/// Each conversation with a run going on keeps one connection, so at most `size - 1` run at once.
const POOLS: [usize; 3] = [16, 64, 256];

async fn postgres() {
    use agent_core::session::PostgresSessions;
    use agent_core::session::deadpool_postgres::{Manager, Pool, tokio_postgres};
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
        measure(&format!("postgres-pool-{size}"), Arc::new(store)).await;
    }
}
