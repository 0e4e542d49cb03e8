//! 1000 runs at once over real HTTP: each run is one `OpenAi` model call to a loopback server that
//! speaks Chat Completions and answers at once. Its floor is a plain `reqwest` POST of the very
//! body the adapter sends, with the same headers, on a client built the same way, also 1000 at
//! once. Beside it, the same POST whose client also writes the body from parsed JSON and reads
//! the reply into a typed struct: the JSON no client can skip, 15-20% of the plain POST by itself.
//! The budget holds against that second floor (at most 1.2x): what it shows is the framework's own
//! cost per model call, its request and reply types and the loop around the call.
//!
//! `cargo bench -p agent-core --bench http_runs`. Nine rounds of each after a warm-up round, and
//! the median of their ratios; the memory figure is the peak of live bytes above the baseline
//! (client, server and runs together: compare the two lines, not the absolute figure).

// Only the weather tool of the shared bench items is used here.
#[allow(dead_code)]
mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use agent_core::agent;
use agent_core::providers::OpenAi;
use common::get_weather;
use counting_alloc::{CountingAlloc, LIVE, PEAK};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const RUNS: usize = 1000;

/// Rounds measured after the warm-up, each side in turn.
const ROUNDS: usize = 9;

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// The reply every request gets: a short answer, as OpenAI sends it.
const REPLY: &str = r#"{"id":"chatcmpl-1","object":"chat.completion","created":1733200000,"model":"gpt-test","choices":[{"index":0,"message":{"role":"assistant","content":"Take an umbrella: light rain in Beijing, 18 °C."},"finish_reason":"stop"}],"usage":{"prompt_tokens":52,"completion_tokens":14,"total_tokens":66}}"#;

/// The first request body the server saw: what the floor sends.
static FIRST_BODY: OnceLock<Vec<u8>> = OnceLock::new();

/// A keep-alive HTTP/1.1 server that answers every POST with [`REPLY`].
async fn serve(listener: TcpListener) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(answer(stream));
    }
}

async fn answer(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{REPLY}",
        REPLY.len()
    );
    let mut buffer = Vec::with_capacity(8192);
    loop {
        // Headers, then the body its content-length announces.
        let header_end = loop {
            if let Some(end) = find(&buffer, b"\r\n\r\n") {
                break end + 4;
            }
            let mut chunk = [0; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        };
        let headers = String::from_utf8_lossy(&buffer[..header_end]).to_ascii_lowercase();
        let length: usize = headers
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|value| value.trim().parse().ok())
            .unwrap_or(0);
        while buffer.len() < header_end + length {
            let mut chunk = [0; 8192];
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(read) => buffer.extend_from_slice(&chunk[..read]),
            }
        }
        let _ = FIRST_BODY.set(buffer[header_end..header_end + length].to_vec());
        buffer.drain(..header_end + length);
        if stream.write_all(response.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// The floor's request: `body` POSTed with the adapter's headers; the reply's body.
async fn plain_post(client: &reqwest::Client, url: &str, body: Vec<u8>) -> bytes::Bytes {
    let response = client
        .post(url)
        .header("authorization", "Bearer test-key")
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .expect("sent");
    assert!(response.status().is_success());
    response.bytes().await.expect("a body")
}

/// What a client reads of [`REPLY`]: the message, why it stopped, the tokens.
#[derive(serde::Deserialize)]
struct Reply {
    choices: Vec<Choice>,
    #[allow(dead_code)]
    usage: ReplyUsage,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct Choice {
    message: ReplyMessage,
    finish_reason: Option<String>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct ReplyMessage {
    role: String,
    content: Option<String>,
}

#[derive(serde::Deserialize)]
#[allow(dead_code)]
struct ReplyUsage {
    prompt_tokens: u64,
    completion_tokens: u64,
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

/// Runs `RUNS` copies of `one` at once; the wall time and the peak of live bytes above the start.
async fn at_once<F>(one: impl Fn() -> F) -> (Duration, usize)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let baseline = LIVE.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let started = Instant::now();
    let tasks: Vec<_> = (0..RUNS).map(|_| tokio::spawn(one())).collect();
    for task in tasks {
        task.await.expect("the task finishes");
    }
    let wall = started.elapsed();
    (wall, PEAK.load(Ordering::Relaxed).saturating_sub(baseline))
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let base = format!("http://{}/v1", listener.local_addr().expect("its address"));
        tokio::spawn(serve(listener));

        let model = OpenAi::new("gpt-test").base_url(&base).api_key("test-key");
        let agent = Arc::new(agent!(model, get_weather));
        let url = format!("{base}/chat/completions");
        let floor = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .expect("a client");

        let run = || {
            let agent = Arc::clone(&agent);
            async move {
                let output = agent.run("Umbrella in Beijing?").await.expect("runs");
                assert_eq!(output.steps, 1);
            }
        };
        let post = || {
            let floor = floor.clone();
            let url = url.clone();
            async move {
                let body = FIRST_BODY.get().expect("a body was seen").clone();
                let bytes = plain_post(&floor, &url, body).await;
                assert_eq!(bytes.len(), REPLY.len());
            }
        };

        // Warm up both: connections are opened and pooled, the tool's definition built.
        at_once(run).await;
        at_once(post).await;

        // The POST plus the JSON work no client can skip: the request body written from a parsed
        // form of it, the reply read into a typed struct. What the run pays beyond this line is
        // the framework's own: the conversation made into the wire form, the reply into messages,
        // the loop.
        let request: serde_json::Value =
            serde_json::from_slice(FIRST_BODY.get().expect("a body was seen"))
                .expect("the body is JSON");
        let request = Arc::new(request);
        let post_with_json = || {
            let floor = floor.clone();
            let url = url.clone();
            let request = Arc::clone(&request);
            async move {
                let body = serde_json::to_vec(&*request).expect("serializable");
                let bytes = plain_post(&floor, &url, body).await;
                let reply: Reply = serde_json::from_slice(&bytes).expect("a reply");
                assert_eq!(reply.choices.len(), 1);
            }
        };

        at_once(post_with_json).await;
        println!("{RUNS} at once, one model call each (per call = wall time / {RUNS}):");
        let (mut to_plain, mut to_json) = (Vec::new(), Vec::new());
        for round in 1..=ROUNDS {
            let (framework, framework_bytes) = at_once(run).await;
            let (plain, plain_bytes) = at_once(post).await;
            let (with_json, _) = at_once(post_with_json).await;
            let per = |wall: Duration| wall.as_secs_f64() * 1e6 / RUNS as f64;
            println!(
                "round {round}: agent run {:.1} µs, plain reqwest POST {:.1} µs: {:.2}x; \
                 POST with its JSON written and read {:.1} µs: {:.2}x; \
                 peak above baseline {:.1} KB vs {:.1} KB per run",
                per(framework),
                per(plain),
                framework.as_secs_f64() / plain.as_secs_f64(),
                per(with_json),
                framework.as_secs_f64() / with_json.as_secs_f64(),
                framework_bytes as f64 / RUNS as f64 / 1024.0,
                plain_bytes as f64 / RUNS as f64 / 1024.0,
            );
            to_plain.push(framework.as_secs_f64() / plain.as_secs_f64());
            to_json.push(framework.as_secs_f64() / with_json.as_secs_f64());
        }
        println!(
            "median of {ROUNDS} rounds: {:.2}x the plain POST, {:.2}x the POST with its JSON \
             (budget 1.2x)",
            median(&mut to_plain),
            median(&mut to_json),
        );
    });
}

/// The middle value: rounds on a shared machine wander, a median of ratios less than any round.
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
