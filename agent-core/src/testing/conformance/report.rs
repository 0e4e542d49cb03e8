//! What a run of the suite found.

use std::fmt;

/// What the suite found: the cases that passed, failed, and were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Report {
    /// The cases that passed, in the order they ran.
    pub passed: Vec<&'static str>,
    /// The cases that failed, and why.
    pub failed: Vec<CaseFailure>,
    /// The error cases the harness cannot produce.
    pub skipped: Vec<&'static str>,
}

/// A case that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFailure {
    /// The case's name (see the table in the [module docs](super)).
    pub case: &'static str,
    /// What did not hold.
    pub reason: String,
}

impl Report {
    /// Whether every case that ran passed.
    pub fn is_ok(&self) -> bool {
        self.failed.is_empty()
    }

    /// The failure of this case, if it failed.
    pub fn failure(&self, case: &str) -> Option<&CaseFailure> {
        self.failed.iter().find(|failure| failure.case == case)
    }

    /// Panics, naming every failed case and why, unless all passed.
    #[track_caller]
    pub fn assert_ok(&self) {
        if !self.is_ok() {
            panic!("{self}");
        }
    }

    pub(super) fn record(&mut self, case: &'static str, outcome: Result<(), String>) {
        match outcome {
            Ok(()) => self.passed.push(case),
            Err(reason) => self.failed.push(CaseFailure { case, reason }),
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_ok() {
            return write!(
                f,
                "the model conforms: {} cases passed, {} skipped",
                self.passed.len(),
                self.skipped.len()
            );
        }
        write!(
            f,
            "the model does not conform: {} of {} cases failed",
            self.failed.len(),
            self.failed.len() + self.passed.len()
        )?;
        for failure in &self.failed {
            write!(f, "\n- {}: {}", failure.case, failure.reason)?;
        }
        Ok(())
    }
}
