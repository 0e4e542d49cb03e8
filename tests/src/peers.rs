//! Tests that need a peer outside the Rust toolchain (Node.js and the official MCP packages; later a
//! browser, a Restate server): a test binary with `harness = false` hands its tests to [`main`],
//! which runs them with `libtest-mimic`, so they show and filter like ordinary `#[test]`s.
//!
//! A peer that is missing never makes its tests pass:
//! - by default they are reported as `ignored (needs …)`, and the reason and how to enable them are
//!   printed once on stderr;
//! - in CI (`CI=true`, or `AGENT_CORE_REQUIRE_PEERS=1` as `.ci/run` sets) they fail;
//! - asked for with `-- --ignored` or `-- --include-ignored`, they run, so fail with the same reason.
//!
//! ```no_run
//! use tests::node::NODE;
//! use tests::peers::Test;
//!
//! async fn talks_to_node() { /* … */ }
//! fn needs_nothing() {}
//!
//! fn main() -> std::process::ExitCode {
//!     tests::peers::main([
//!         Test::tokio("talks_to_node", talks_to_node).needs(&NODE),
//!         Test::sync("needs_nothing", needs_nothing),
//!     ])
//! }
//! ```

use std::future::Future;
use std::process::ExitCode;

use libtest_mimic::{Arguments, Completion, Conclusion, Failed, Trial};

/// Something outside the Rust toolchain that some tests need.
#[derive(Debug)]
pub struct Peer {
    /// What it is, short enough for a test's `ignored (needs …)` line.
    pub name: &'static str,
    /// Why the tests need it.
    pub why: &'static str,
    /// How to install it so that the tests run.
    pub enable: &'static str,
    /// `Ok` when it is here; otherwise what is missing.
    pub detect: fn() -> Result<(), String>,
}

/// Whether a missing peer is a failure rather than a reason to ignore: the variable that says so.
fn required_by() -> Option<&'static str> {
    ["AGENT_CORE_REQUIRE_PEERS", "CI"]
        .into_iter()
        .find(|name| std::env::var(name).is_ok_and(|value| says_yes(&value)))
}

/// `CI=true`, `CI=1`, … but not `CI=false`, `CI=0`, `CI=no` or `CI=`.
fn says_yes(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false" | "no" | "off"
    )
}

type Body = Box<dyn FnOnce() + Send>;

/// One test: a name, a body that panics to fail, and the peers it needs.
pub struct Test {
    name: String,
    needs: Vec<&'static Peer>,
    body: Body,
}

impl Test {
    /// A plain test.
    pub fn sync(name: &str, body: impl FnOnce() + Send + 'static) -> Self {
        Test {
            name: name.to_owned(),
            needs: Vec::new(),
            body: Box::new(body),
        }
    }

    /// An async test, run on its own current-thread tokio runtime with every driver enabled (what
    /// `#[tokio::test]` gives).
    pub fn tokio<F>(name: &str, body: impl FnOnce() -> F + Send + 'static) -> Self
    where
        F: Future<Output = ()>,
    {
        Test::sync(name, move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a tokio runtime")
                .block_on(body());
        })
    }

    /// This test needs `peer`.
    pub fn needs(mut self, peer: &'static Peer) -> Self {
        self.needs.push(peer);
        self
    }
}

/// Why `peer` cannot run here, in full, on one line.
fn explanation(peer: &Peer, missing: &str) -> String {
    format!(
        "needs {}: {missing}. {}. To run them: {}.",
        peer.name, peer.why, peer.enable
    )
}

/// Runs `tests` as libtest does, with the command line's filters and flags; the exit code to return
/// from the test binary's `main`.
pub fn main(tests: impl IntoIterator<Item = Test>) -> ExitCode {
    run(&Arguments::from_args(), required_by(), tests).exit_code()
}

/// [`main`] with its command line and its environment (the variable that makes a missing peer a
/// failure) given.
fn run(
    arguments: &Arguments,
    required: Option<&'static str>,
    tests: impl IntoIterator<Item = Test>,
) -> Conclusion {
    let asked_for_ignored = arguments.ignored || arguments.include_ignored;

    let mut peers: Vec<(&'static Peer, Result<(), String>)> = Vec::new();
    let mut missing_for = |peer: &'static Peer| -> Option<String> {
        let detected = match peers.iter().find(|(known, _)| std::ptr::eq(*known, peer)) {
            Some((_, detected)) => detected.clone(),
            None => {
                let detected = (peer.detect)();
                peers.push((peer, detected.clone()));
                detected
            }
        };
        detected.err()
    };

    let mut trials = Vec::new();
    let mut ignored: Vec<(String, usize)> = Vec::new();
    for test in tests {
        let missing: Vec<(&'static Peer, String)> = test
            .needs
            .iter()
            .filter_map(|&peer| missing_for(peer).map(|missing| (peer, missing)))
            .collect();
        let Some((peer, what)) = missing.first() else {
            let body = test.body;
            trials.push(Trial::test(test.name, move || {
                body();
                Ok(())
            }));
            continue;
        };
        let full = explanation(peer, what);
        let trial = if let Some(variable) = required {
            // CI: the test cannot run, and that is a failure.
            Trial::test(test.name, move || {
                Err(Failed::from(format!(
                    "{full} ({variable} is set, so a missing peer is a failure)"
                )))
            })
        } else if asked_for_ignored {
            // Asked to run the ignored tests: this one runs, and cannot.
            Trial::test(test.name, move || Err(Failed::from(full))).with_ignored_flag(true)
        } else {
            let short = format!("needs {}: {what}", peer.name);
            let trial =
                Trial::ignorable_test(test.name, move || Ok(Completion::ignored_with(short)));
            if !arguments.is_filtered_out(&trial) {
                match ignored.iter_mut().find(|(known, _)| *known == full) {
                    Some((_, count)) => *count += 1,
                    None => ignored.push((full, 1)),
                }
            }
            trial
        };
        trials.push(trial);
    }

    if !arguments.list {
        for (full, count) in &ignored {
            let tests = if *count == 1 { "test" } else { "tests" };
            eprintln!(
                "note: {count} {tests} ignored: {full} In CI (CI=true or \
                 AGENT_CORE_REQUIRE_PEERS=1) a missing peer is a failure."
            );
        }
    }
    libtest_mimic::run(arguments, trials)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    static HERE: Peer = Peer {
        name: "a peer that is here",
        why: "Testing",
        enable: "nothing to do",
        detect: || Ok(()),
    };

    static GONE: Peer = Peer {
        name: "a peer that is gone",
        why: "Testing",
        enable: "nothing can be done",
        detect: || Err("it left".to_owned()),
    };

    /// Runs `tests` with `flags` on the command line, the report going to a file; returns the
    /// outcome counts (passed, failed, ignored, filtered out) and the report.
    fn outcome(
        name: &str,
        flags: &[&str],
        required: Option<&'static str>,
        tests: impl IntoIterator<Item = Test>,
    ) -> ((u64, u64, u64, u64), String) {
        let log = std::env::temp_dir().join(format!("peers-{}-{name}.log", std::process::id()));
        let log_flag = format!("--logfile={}", log.display());
        let arguments = Arguments::from_iter(
            ["peers", "--test-threads=1", &log_flag]
                .into_iter()
                .chain(flags.iter().copied()),
        );
        let conclusion = run(&arguments, required, tests);
        let report = std::fs::read_to_string(&log).expect("the report is written");
        std::fs::remove_file(&log).unwrap();
        (
            (
                conclusion.num_passed,
                conclusion.num_failed,
                conclusion.num_ignored,
                conclusion.num_filtered_out,
            ),
            report,
        )
    }

    /// [`outcome`] of a passing test per peer plus one that needs nothing; also how many bodies ran.
    fn three_tests(
        name: &str,
        flags: &[&str],
        required: Option<&'static str>,
    ) -> ((u64, u64, u64, u64), String, usize) {
        let ran = Arc::new(AtomicUsize::new(0));
        let body = |ran: &Arc<AtomicUsize>| {
            let ran = Arc::clone(ran);
            move || {
                ran.fetch_add(1, Ordering::SeqCst);
            }
        };
        let tests = [
            Test::sync("needs_here", body(&ran)).needs(&HERE),
            Test::tokio("needs_gone", {
                let body = body(&ran);
                move || async move { body() }
            })
            .needs(&HERE)
            .needs(&GONE),
            Test::sync("needs_nothing", body(&ran)),
        ];
        let (counts, report) = outcome(name, flags, required, tests);
        (counts, report, ran.load(Ordering::SeqCst))
    }

    /// Whether the report has the line `test {test} ... {outcome}` (with its padding).
    fn has_line(report: &str, test: &str, outcome: &str) -> bool {
        report.lines().any(|line| {
            line.strip_prefix("test ")
                .and_then(|line| line.split_once(" ... "))
                .is_some_and(|(name, result)| name.trim_end() == test && result == outcome)
        })
    }

    #[test]
    fn a_missing_peer_ignores_its_tests_and_never_passes_them() {
        let (counts, report, ran) = three_tests("ignores", &[], None);
        assert_eq!((counts, ran), ((2, 0, 1, 0), 2));
        assert!(
            has_line(
                &report,
                "needs_gone",
                "ignored (needs a peer that is gone: it left)"
            ),
            "{report}"
        );
        let (counts, _, ran) = three_tests("filtered", &["needs_gone"], None);
        assert_eq!((counts, ran), ((0, 0, 1, 2), 0));
    }

    #[test]
    fn a_missing_peer_fails_its_tests_when_peers_are_required() {
        let (counts, report, ran) = three_tests("required", &[], Some("CI"));
        assert_eq!((counts, ran), ((2, 1, 0, 0), 2));
        assert!(
            report.contains(
                "needs a peer that is gone: it left. Testing. To run them: nothing can be done. \
                 (CI is set, so a missing peer is a failure)"
            ),
            "{report}"
        );
    }

    #[test]
    fn asking_for_ignored_tests_runs_them_and_they_fail_without_their_peer() {
        let (counts, report, ran) = three_tests("include", &["--include-ignored"], None);
        assert_eq!((counts, ran), ((2, 1, 0, 0), 2));
        assert!(has_line(&report, "needs_gone", "FAILED"), "{report}");
        let (counts, _, ran) = three_tests("only", &["--ignored"], None);
        assert_eq!((counts, ran), ((0, 1, 0, 2), 0));
    }

    #[test]
    fn ci_variables_say_yes_unless_they_say_no() {
        for yes in ["true", "1", "TRUE", "yes", "github-actions"] {
            assert!(says_yes(yes), "{yes}");
        }
        for no in ["", " ", "0", "false", "False", "no", "off"] {
            assert!(!says_yes(no), "{no:?}");
        }
    }

    #[test]
    fn a_panicking_body_fails_its_test() {
        let tests = [
            Test::sync("panics", || panic!("on purpose")).needs(&HERE),
            Test::tokio("panics_async", || async { panic!("on purpose") }),
        ];
        let (counts, report) = outcome("panics", &[], None, tests);
        assert_eq!(counts, (0, 2, 0, 0));
        assert!(report.contains("test panicked: on purpose"), "{report}");
    }
}
