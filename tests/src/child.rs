//! Tests that kill a process of their own: an ignored test of the same test binary, run by name
//! in a child process, its output read line by line, then killed with SIGKILL.

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};

/// An ignored test of this test binary, running in a child process.
pub struct ChildTest {
    child: Child,
    /// Its output, kept open until the kill, so the child never fails on a closed pipe.
    lines: Lines<BufReader<ChildStdout>>,
}

impl ChildTest {
    /// Runs the ignored test `test` of this binary with the variable `var` set to `value`.
    pub fn start(test: &str, var: &str, value: &Path) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test, "--ignored", "--nocapture"])
            .env(var, value)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap()).lines();
        ChildTest { child, lines }
    }

    /// Reads the child's output until `count` lines for which `wanted` holds (the test
    /// harness prints lines of its own too); how many it saw before its output ended.
    pub fn read_until(&mut self, wanted: impl Fn(&str) -> bool, count: usize) -> usize {
        (self.lines.by_ref())
            .map_while(Result::ok)
            .filter(|line| wanted(line))
            .take(count)
            .count()
    }

    /// Whether the child still runs.
    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Kills the child: on Unix `kill` is SIGKILL, so no destructor runs and nothing is written
    /// last. Checks that the signal is what ended it.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        let status = self.child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9),
            "killed by SIGKILL"
        );
    }
}

/// Runs `future` to its end on a runtime of its own (current-thread, with I/O and time).
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}
