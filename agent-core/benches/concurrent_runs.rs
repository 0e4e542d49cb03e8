//! 10,000 agent runs at once on one tokio runtime, each of 3 model turns that wait 20 ms: the wall
//! time (ideal: 60 ms) and the peak memory per run.
//!
//! `cargo bench -p agent-core --bench concurrent_runs`. Memory is counted by a global allocator that
//! tracks the bytes live, so the figure is what the runs themselves hold at their peak.

mod common;
#[path = "common/counting_alloc.rs"]
mod counting_alloc;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use agent_core::agent;
use common::{TurnsModel, get_weather};
use counting_alloc::{CountingAlloc, LIVE, PEAK};

const RUNS: usize = 10_000;
const TURNS: usize = 3;
const LATENCY: Duration = Duration::from_millis(20);

#[global_allocator]
static ALLOCATOR: CountingAlloc = CountingAlloc;

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    let agent = Arc::new(agent!(
        TurnsModel {
            turns: TURNS,
            latency: LATENCY
        },
        get_weather
    ));
    // Warm up: the tool's definition is built once, the timer wheel and worker threads start.
    let warm_up = runtime.block_on(async { agent.run("warm up").await.expect("runs") });
    assert_eq!(warm_up.steps, TURNS);

    for round in 1..=3 {
        let baseline = LIVE.load(Ordering::Relaxed);
        PEAK.store(baseline, Ordering::Relaxed);
        let started = Instant::now();
        let finished = runtime.block_on(async {
            let handles: Vec<_> = (0..RUNS)
                .map(|_| {
                    let agent = Arc::clone(&agent);
                    tokio::spawn(async move { agent.run("Umbrella?").await })
                })
                .collect();
            let mut finished = 0;
            for handle in handles {
                let output = handle.await.expect("no panic").expect("runs");
                assert_eq!(output.steps, TURNS);
                finished += 1;
            }
            finished
        });
        let wall = started.elapsed();
        let peak = PEAK.load(Ordering::Relaxed) - baseline;
        println!(
            "concurrent_runs round {round}: {finished} runs x {TURNS} turns of {} ms: wall {:.1} ms (ideal {} ms), peak {} KiB in all, {} bytes per run",
            LATENCY.as_millis(),
            wall.as_secs_f64() * 1000.0,
            LATENCY.as_millis() * TURNS as u128,
            peak / 1024,
            peak / RUNS,
        );
    }
}
