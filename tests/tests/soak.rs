//! Soak: 10,000 concurrent runs with random tool failures, timeouts and model errors. Every run ends
//! with a result or a typed error, and memory returns to where it started.
//!
//! Ignored by default (it takes a few seconds and wants the machine to itself):
//! `cargo test -p tests --test soak -- --ignored`.
#![allow(unsafe_code)] // the counting allocator below

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use agent_core::{
    AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message, Model, ModelError, RunError,
    StopReason, ToolCall, agent, tool,
};

struct CountingAlloc;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call goes to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

/// Fails for every third number.
#[tool]
fn flaky(n: u64) -> Result<String, String> {
    if n.is_multiple_of(3) {
        Err(format!("flaky failure for {n}"))
    } else {
        Ok(format!("ok {n}"))
    }
}

/// Sleeps, sometimes past its timeout.
#[tool(timeout = "20ms")]
async fn slow(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis} ms")
}

/// Plays a model whose choices depend on the run's number (in the user message) and its turn.
struct ChaosModel;

fn mix(mut x: u64) -> u64 {
    // SplitMix64: a cheap, well-spread hash.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

impl Model for ChaosModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let run: u64 = match &request.messages[1] {
            Message::User { content, .. } => content.parse().unwrap_or(0),
            _ => 0,
        };
        let turn = (request.messages.len() - 2) / 2;
        let dice = mix(run * 16 + turn as u64);
        let reply = if dice.is_multiple_of(50) {
            Err(ModelError::other("chaos: the model fell over"))
        } else {
            Ok(match turn {
                0 => AssistantMessage::tool_calls([
                    ToolCall::new("a", "flaky", format!(r#"{{"n":{}}}"#, dice % 100)),
                    ToolCall::new("b", "slow", format!(r#"{{"millis":{}}}"#, dice % 40)),
                ]),
                1 if dice.is_multiple_of(4) => {
                    AssistantMessage::tool_calls([ToolCall::new("c", "flaky", "{")])
                }
                _ => AssistantMessage::text("done"),
            })
        };
        Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(dice % 5)).await;
            reply.map(ChatResponse::new)
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "soak test: run it by name with --ignored"]
async fn ten_thousand_chaotic_runs_end_cleanly_and_memory_returns() {
    const RUNS: usize = 10_000;
    // Warm up what is built once (tool definitions, timer thread), then measure from here.
    {
        let agent = agent!(ChaosModel, flaky, slow);
        let _ = agent.run("1").await;
    }
    let baseline = LIVE.load(Ordering::SeqCst);

    let agent = Arc::new(agent!(ChaosModel, flaky, slow).max_steps(4));
    let handles: Vec<_> = (0..RUNS)
        .map(|index| {
            let agent = Arc::clone(&agent);
            tokio::spawn(async move { agent.run(index.to_string()).await })
        })
        .collect();
    let (mut finished, mut failed, mut timeouts, mut tool_errors) = (0, 0, 0, 0);
    for handle in handles {
        match handle.await.expect("no run panics") {
            Ok(output) => {
                assert!(matches!(
                    output.stop_reason,
                    StopReason::Finished | StopReason::StepLimit { .. }
                ));
                for message in &output.messages {
                    if let Message::Tool(result) = message {
                        tool_errors += usize::from(result.is_error);
                        timeouts +=
                            usize::from(result.content.contains("did not finish within 20 ms"));
                    }
                }
                finished += 1;
            }
            Err(RunError::Model { source, .. }) => {
                assert!(source.to_string().contains("chaos"), "{source}");
                failed += 1;
            }
            Err(other) => panic!("unexpected error: {other:?}"),
        }
    }
    assert_eq!(finished + failed, RUNS);
    assert!(
        failed > 0 && timeouts > 0 && tool_errors > timeouts,
        "{failed} {timeouts} {tool_errors}"
    );
    drop(agent);

    // Timer and runtime bookkeeping may keep a little; the runs themselves keep nothing.
    let after = LIVE.load(Ordering::SeqCst);
    let kept = after.saturating_sub(baseline);
    println!(
        "{finished} finished, {failed} failed, {timeouts} timeouts, {tool_errors} tool errors; kept {kept} bytes"
    );
    assert!(
        kept < 256 * 1024,
        "memory did not return: {kept} bytes more than at the start"
    );
}
