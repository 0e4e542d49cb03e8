//! How a tool call fails: every kind of failure, each with the words that explain it.

use std::any::Any;
use std::fmt;
use std::time::Duration;

/// Why a tool call failed. Every variant reaches the model as an error result, never as a crashed run.
///
/// Its `Display` is the English wording the model reads (after "Error: "): one table,
/// [`English`](crate::English)'s, serves both, so the two cannot drift apart.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolError {
    /// The model asked for a tool the agent does not have.
    UnknownTool {
        /// The name the model used.
        name: String,
        /// The tools that do exist, in the order they were added (shared with the tool set).
        available: std::sync::Arc<[String]>,
    },
    /// The arguments are not JSON.
    InvalidJson {
        /// The parser's message.
        message: String,
    },
    /// The arguments are JSON but do not fit the tool's parameters.
    InvalidArguments {
        /// Every problem found, each with the path of the field it concerns.
        issues: Vec<ArgumentIssue>,
    },
    /// The tool ran and returned an error.
    Failed {
        /// The tool's error message.
        message: String,
    },
    /// The tool panicked; the run goes on.
    Panicked {
        /// The panic message.
        message: String,
    },
    /// The tool ran past its timeout and was cancelled.
    TimedOut {
        /// The timeout.
        after: Duration,
    },
    /// The tool, a function on a blocking thread, ran past its timeout: the agent stopped waiting
    /// for it, but it may still finish its work.
    Abandoned {
        /// The timeout.
        after: Duration,
    },
    /// The call was not run: not approved, skipped by a hook, or past a limit of the run.
    NotRun {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// The tool asks the model to call it again, differently: a correction rather than a failure
    /// (Pydantic AI's `ModelRetry`). Return it with [`ToolError::retry`]. It has no budget of its
    /// own: the run's step and tool-call limits bound a model that never gets it right.
    Retry {
        /// What to change, in words the model can act on.
        message: String,
    },
    /// A typed run's final answer was not taken: the model reads the correction (already in the
    /// agent's words, from [`Texts::output_correction`](crate::Texts::output_correction)) and
    /// answers again.
    AnswerRejected {
        /// What to change, as [`Texts::output_correction`](crate::Texts::output_correction)
        /// words it.
        correction: String,
    },
    /// A durable run's journal found the call started but never finished (the service stopped
    /// while it ran): it is not run again, so that its effect cannot happen twice.
    OutcomeUnknown {
        /// The tool that was called.
        tool: String,
    },
}

impl ToolError {
    /// The error a tool returns when it ran but could not do its job.
    pub fn failed(message: impl Into<String>) -> Self {
        ToolError::Failed {
            message: message.into(),
        }
    }

    /// The error a tool returns to have the model call it again, differently: say what to change.
    ///
    /// ```
    /// use agent_core::{ToolError, tool};
    ///
    /// /// Book a meeting room.
    /// #[tool]
    /// fn book_room(room: String) -> Result<String, ToolError> {
    ///     if !room.starts_with("R-") {
    ///         return Err(ToolError::retry("room ids look like `R-101`; look the room up first"));
    ///     }
    ///     Ok(format!("booked {room}"))
    /// }
    /// ```
    pub fn retry(message: impl Into<String>) -> Self {
        ToolError::Retry {
            message: message.into(),
        }
    }

    /// The error for arguments that are JSON but not an object of named arguments.
    pub(crate) fn arguments_not_an_object(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        let kind = match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        ToolError::InvalidArguments {
            issues: vec![ArgumentIssue::new(
                "",
                format!("expected a JSON object of named arguments, got {kind}"),
            )],
        }
    }
}

impl std::error::Error for ToolError {}

/// The English words for each kind of failure: what `Display` writes and what
/// [`English`](crate::English) tells the model after "Error: ".
impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f)
    }
}

/// The English words for a call of `name`, which no tool has, naming the tools there are (the
/// `Display` of [`ToolError::UnknownTool`]). Piece by piece: a model that misspells a tool name
/// does it on a hot path, and `write!` with a joined list cost twice as much.
pub(crate) fn describe_unknown_tool<'a>(
    name: &str,
    mut available: impl Iterator<Item = &'a str>,
    f: &mut impl fmt::Write,
) -> fmt::Result {
    f.write_str("there is no tool named `")?;
    f.write_str(name)?;
    let Some(first) = available.next() else {
        return f.write_str("`; no tools are available");
    };
    f.write_str("`; available tools: ")?;
    f.write_str(first)?;
    for tool in available {
        f.write_str(", ")?;
        f.write_str(tool)?;
    }
    Ok(())
}

impl ToolError {
    /// Writes the English words for this failure (its `Display`) to `f`. Generic, so that
    /// [`English`](crate::English) writes into its `String` directly: through a `Formatter`, each
    /// piece was a dynamic call.
    pub(crate) fn describe(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            ToolError::UnknownTool { name, available } => {
                describe_unknown_tool(name, available.iter().map(String::as_str), f)
            }
            ToolError::InvalidJson { message } => {
                write!(f, "the arguments are not valid JSON: {message}")
            }
            ToolError::InvalidArguments { issues } => write!(
                f,
                "invalid arguments: {}",
                ArgumentIssue::render(issues, "arguments", ": ", "; ")
            ),
            ToolError::Failed { message } => f.write_str(message),
            ToolError::Panicked { message } => write!(f, "the tool panicked: {message}"),
            ToolError::TimedOut { after } => write!(
                f,
                "the tool did not finish within {} and was cancelled",
                human_duration(*after)
            ),
            ToolError::Abandoned { after } => write!(
                f,
                "the tool did not finish within {} and is no longer waited for; it may still \
                 complete its work, so check before calling it again",
                human_duration(*after)
            ),
            ToolError::NotRun { reason } => write!(f, "the call was not run: {reason}"),
            ToolError::Retry { message } => {
                write!(f, "{message}; correct this and call the tool again")
            }
            ToolError::AnswerRejected { correction } => f.write_str(correction),
            ToolError::OutcomeUnknown { tool } => write!(
                f,
                "the outcome of this call of `{tool}` is unknown: the service stopped while it \
                 ran. It was not run again, so that its effect cannot happen twice; check whether \
                 it took effect before calling it again"
            ),
        }
    }
}

/// A duration for people, in every language's texts: `250 ms`, `1.5 s`, `30 s`.
pub(crate) fn human_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", (duration.as_secs_f64() * 10.0).round() / 10.0)
    }
}

/// One problem with a tool's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentIssue {
    /// Where the problem is, as field names and indices joined by dots (`unit`, `stops.2.city`);
    /// empty when it concerns the arguments as a whole.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl ArgumentIssue {
    /// An issue at a path.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ArgumentIssue {
            path: path.into(),
            message: message.into(),
        }
    }

    /// Renders issues as `path: message` joined by `separator`; `whole` labels an issue with no path.
    pub(crate) fn render(
        issues: &[ArgumentIssue],
        whole: &str,
        path_separator: &str,
        separator: &str,
    ) -> String {
        let mut out = String::new();
        for (index, issue) in issues.iter().enumerate() {
            if index > 0 {
                out.push_str(separator);
            }
            out.push_str(if issue.path.is_empty() {
                whole
            } else {
                &issue.path
            });
            out.push_str(path_separator);
            out.push_str(&issue.message);
        }
        out
    }
}

impl fmt::Display for ArgumentIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// The error of a call whose tool panicked, with the panic's message.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    let message = if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "a panic without a message".to_owned()
    };
    ToolError::Panicked { message }
}
