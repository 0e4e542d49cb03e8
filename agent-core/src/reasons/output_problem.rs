//! What was wrong with a typed run's answer: the words the model reads come from
//! [`Texts`](crate::Texts); this is what they are made from.

use std::fmt;

use crate::reasons::argument_issue::{ArgumentIssue, SyntaxError};

/// An output the model gave that was not taken, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedOutput {
    /// What the model gave: the JSON text (or, when it answered in words instead, its words).
    pub raw: String,
    /// Why it was not taken.
    pub problem: OutputProblem,
}

/// Why an output was not taken. Its `Display` is what the model is told (in English; other
/// languages through [`Texts::output_correction`](crate::Texts::output_correction)).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
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
}

impl fmt::Display for OutputProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputProblem::InvalidJson { error } => {
                write!(f, "the answer is not valid JSON: {error}")
            }
            OutputProblem::Invalid { issues } => write!(
                f,
                "the answer does not fit the schema: {}",
                ArgumentIssue::render(issues, "answer", ": ", "; ", ArgumentIssue::english)
            ),
            OutputProblem::Rejected { message } => {
                write!(f, "the answer was not accepted: {message}")
            }
            OutputProblem::NotGiven { tool } => write!(
                f,
                "the final answer must be given by calling the `{tool}` tool, not as text"
            ),
            OutputProblem::CutOff => f.write_str(
                "the answer was cut off at the output token limit before it was complete; give it \
                 again, shorter",
            ),
        }
    }
}
