//! What was wrong with a typed run's answer: the words the model reads come from
//! [`Texts`](crate::Texts); this is what they are made from.

use crate::reasons::argument_issue::{ArgumentIssue, SyntaxError};

/// An output the model gave that was not taken, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedOutput {
    /// What the model gave: the JSON text (or, when it answered in words instead, its words).
    pub raw: String,
    /// Why it was not taken.
    pub problem: OutputProblem,
}

/// Why an output was not taken, as data: [`Texts::output_correction`](crate::Texts::output_correction)
/// words it; `Display` is [`English`](crate::English)'s words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputProblem {
    /// The output is not JSON.
    InvalidJson {
        /// What the parser found wrong, and where.
        error: SyntaxError,
    },
    /// The output is JSON but does not fit the type: every problem, each with its field path.
    Invalid {
        /// The problems.
        issues: Vec<ArgumentIssue>,
    },
    /// A validator rejected the value.
    Rejected {
        /// The validator's message.
        message: String,
    },
    /// The model answered in words instead of calling the final-answer tool.
    NotGiven {
        /// The final-answer tool.
        tool: String,
    },
    /// The answer stopped at the output-token limit before it was whole.
    CutOff,
    /// A [guard](crate::guard::Guard) did not accept the answer and asks for another.
    Guarded {
        /// The guard's name.
        guard: String,
        /// What the guard asks for, in its own words.
        feedback: String,
    },
}
