//! What guards cost a run when they let everything through: a run of ten steps (nine
//! `get_weather` calls, then the answer, as `overhead`'s `loop_10_steps`) with no guard
//! (`no_guards`), with a guard at every place (`At::ALL`) that answers `Verdict::Allow` at once
//! (`allow_now`: a `guard_fn`), and with one whose allow takes an await (`allow_later`: a `Guard`
//! answering `Checking::Later`). A guard at every place is asked 30 times in such a run: the
//! input, ten requests, nine calls, nine results and the answer. `allow_now_at` puts the guard at
//! one place only. Every future completes without waiting (no runtime in the figures). The
//! budget: `allow_now` at most 1.1x `no_guards`.
//!
//! `cargo bench -p agent-core --bench guards`. After divan's figures (when the bench is run
//! whole, with no filter), the three cases are timed again in rounds that take turns (a batch of
//! runs of each, in an order that rotates), and the median of the rounds' ratios is printed: on a
//! machine whose speed wanders, a ratio within one round is the figure to trust.

// Only the weather tool and its model of the shared bench items are used here.
#[allow(dead_code)]
mod common;

use std::future::IntoFuture;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use agent_core::guard::{At, Checked, Checking, Guard, Judged, Place, Verdict, guard_fn};
use agent_core::{Agent, RunOutput, Usage, agent};
use common::{TurnsModel, get_weather};
use divan::Bencher;
use futures_util::FutureExt;

/// The model calls of each run.
const STEPS: usize = 10;

/// How many times a guard at every place is asked in a run of [`STEPS`] steps.
const CHECKS: usize = 1 + STEPS + 2 * (STEPS - 1) + 1;

/// Rounds of the ratio section, and the runs of each case per round.
const ROUNDS: usize = 61;
const RUNS_PER_ROUND: usize = 500;

fn main() {
    divan::main();
    // The rounds run with the bench run whole by `cargo bench`, which passes `--bench` alone: not
    // under `cargo test` (no arguments), nor with a filter or divan's options.
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    if arguments == ["--bench"] {
        ratios();
    }
}

/// A guard whose allow takes an await: its verdict is a boxed future, as a judge's is.
struct AllowLater;

impl Guard for AllowLater {
    fn name(&self) -> &str {
        "allow later"
    }

    fn check<'a>(&'a self, _checked: &Checked<'_>) -> Checking<'a> {
        Checking::Later(Box::pin(async {
            Judged::new(Verdict::Allow, Usage::default())
        }))
    }
}

/// The three cases.
#[derive(Clone, Copy, Debug)]
enum Case {
    NoGuards,
    AllowNow,
    AllowLater,
}

impl Case {
    const ALL: [Case; 3] = [Case::NoGuards, Case::AllowNow, Case::AllowLater];

    fn name(self) -> &'static str {
        match self {
            Case::NoGuards => "no_guards",
            Case::AllowNow => "allow_now",
            Case::AllowLater => "allow_later",
        }
    }

    /// The agent of the case: the plain agent, and its guard at every place.
    fn agent(self) -> Agent {
        let agent = match self {
            Case::NoGuards => plain_agent(),
            Case::AllowNow => plain_agent().guard(At::ALL, guard_fn("allow", |_| Verdict::Allow)),
            Case::AllowLater => plain_agent().guard(At::ALL, AllowLater),
        };
        check(self, &agent);
        agent
    }
}

/// `overhead`'s ten-step agent: a model that calls `get_weather` nine times, then answers.
fn plain_agent() -> Agent {
    let model = TurnsModel {
        turns: STEPS,
        latency: Duration::ZERO,
    };
    agent!(model, get_weather).max_steps(STEPS)
}

/// Checks, before timing, that a guarded run is the plain run (the same transcript) and that a
/// guard at every place is asked [`CHECKS`] times in it.
fn check(case: Case, agent: &Agent) {
    let plain = run(&plain_agent());
    assert_eq!(run(agent).messages, plain.messages, "{case:?}");
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    let counting = plain_agent().guard(
        At::ALL,
        guard_fn("count", move |checked| {
            assert!(At::ALL.has(checked.what.place()));
            if checked.what.place() == Place::Answer {
                assert_eq!(checked.step, STEPS);
            }
            counted.fetch_add(1, Ordering::Relaxed);
            Verdict::Allow
        }),
    );
    let _ = run(&counting);
    assert_eq!(asked.load(Ordering::Relaxed), CHECKS);
}

/// Runs to the end and hands back the output, whose drop divan leaves outside the timing.
fn run(agent: &Agent) -> RunOutput {
    let output = (agent.run("Umbrella?").into_future())
        .now_or_never()
        .expect("ready")
        .expect("runs");
    debug_assert_eq!(output.steps, STEPS);
    output
}

fn bench(bencher: Bencher, case: Case) {
    let agent = case.agent();
    bencher.bench_local(|| run(&agent));
}

/// Ten steps, no guard: the baseline.
#[divan::bench]
fn no_guards(bencher: Bencher) {
    bench(bencher, Case::NoGuards);
}

/// Ten steps, a `guard_fn` that allows at once at every place (30 checks).
#[divan::bench]
fn allow_now(bencher: Bencher) {
    bench(bencher, Case::AllowNow);
}

/// Ten steps, a guard whose allow is a boxed future at every place (30 checks).
#[divan::bench]
fn allow_later(bencher: Bencher) {
    bench(bencher, Case::AllowLater);
}

/// Ten steps, a `guard_fn` that allows at once at one place: what each place costs, and (from
/// `input` and `answer`, each asked once) what a run pays for having guards at all.
#[divan::bench(args = ["input", "requests", "calls", "results", "answer"])]
fn allow_now_at(bencher: Bencher, place: &str) {
    let at = match place {
        "input" => At::INPUT,
        "requests" => At::REQUESTS,
        "calls" => At::CALLS,
        "results" => At::RESULTS,
        _ => At::ANSWER,
    };
    let agent = plain_agent().guard(at, guard_fn("allow", |_| Verdict::Allow));
    assert_eq!(run(&agent).messages, run(&plain_agent()).messages);
    bencher.bench_local(|| run(&agent));
}

/// The time of [`RUNS_PER_ROUND`] runs of `agent`, per run.
fn batch(agent: &Agent) -> Duration {
    let started = Instant::now();
    for _ in 0..RUNS_PER_ROUND {
        let _ = divan::black_box(run(agent));
    }
    started.elapsed() / RUNS_PER_ROUND as u32
}

/// The median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// The cases in rounds that take turns (the order rotates each round, so none is always first),
/// and the median of each guarded case's ratio to `no_guards` within a round.
fn ratios() {
    let agents: Vec<Agent> = Case::ALL.iter().map(|case| case.agent()).collect();
    // A warm-up round, not counted.
    for agent in &agents {
        batch(agent);
    }
    let mut times = vec![Vec::new(); Case::ALL.len()];
    for round in 0..ROUNDS {
        let mut this_round = [Duration::ZERO; 3];
        for turn in 0..Case::ALL.len() {
            let index = (round + turn) % Case::ALL.len();
            this_round[index] = batch(&agents[index]);
        }
        for (index, time) in this_round.into_iter().enumerate() {
            times[index].push(time);
        }
    }
    println!();
    println!(
        "{ROUNDS} rounds of {RUNS_PER_ROUND} runs of each, in turn ({STEPS} steps, {CHECKS} checks a guarded run):"
    );
    let nanos = |time: &Duration| time.as_nanos() as f64;
    let baseline: Vec<f64> = times[0].iter().map(nanos).collect();
    for (index, case) in Case::ALL.iter().enumerate() {
        let own: Vec<f64> = times[index].iter().map(nanos).collect();
        let ratio: Vec<f64> = (own.iter().zip(&baseline))
            .map(|(own, base)| own / base)
            .collect();
        let per_check = (own.iter().zip(&baseline))
            .map(|(own, base)| (own - base) / CHECKS as f64)
            .collect();
        let (low, high) = ratio.iter().fold((f64::MAX, f64::MIN), |(low, high), &r| {
            (low.min(r), high.max(r))
        });
        println!(
            "  {:<12} {:>9.0} ns a run (median)  {:.3}x no_guards (median; rounds {:.3}-{:.3})  {:>5.1} ns a check",
            case.name(),
            median(own.clone()),
            median(ratio),
            low,
            high,
            median(per_check),
        );
    }
}
