//! How a tool call fails: every kind of failure, each with the words that explain it.

use std::any::Any;
use std::fmt;
use std::time::Duration;

use crate::reasons::argument_issue::{ArgumentIssue, IssueKind, JsonType, SyntaxError};

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
        /// What the parser found wrong, and where.
        error: SyntaxError,
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
        /// The panic message, when it had one.
        message: Option<String>,
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
    /// The call had started when it was cut off, and may have had its effect: the run was
    /// cancelled or ran out of time while it ran, or the run stopped (its process died, its
    /// future was dropped) before its result was recorded.
    Interrupted {
        /// What cut it off.
        by: Interruption,
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
    /// A durable run's journal could not record the call: its engine gave up on the step. What
    /// the engine said is data: the words around it are the agent's.
    Journal {
        /// The engine's message.
        message: String,
    },
    /// The tool is run by the application ([`ExternalTool`](crate::ExternalTool)), and was
    /// called where no one can run it: outside a run that can pause for the caller's result.
    RunByCaller {
        /// The tool.
        tool: String,
    },
    /// A plain function's blocking thread did not give its result.
    Thread {
        /// What happened to it.
        problem: ThreadProblem,
    },
    /// The tool's result could not be serialized as JSON.
    Unserializable {
        /// The serializer's message.
        message: String,
    },
    /// A remote MCP server could not serve the call. What the server itself said is data: the
    /// words around it are the agent's.
    Remote {
        /// The server's name for messages (its own name in backquotes, or how it was reached).
        server: String,
        /// What went wrong.
        problem: RemoteProblem,
    },
}

/// What cut off a call that had started ([`ToolError::Interrupted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Interruption {
    /// The run was cancelled.
    Cancelled,
    /// The run's time limit passed.
    TimeLimit,
    /// The run stopped before the call's result was recorded (its process died, or its future
    /// was dropped): found by the next run of the conversation.
    Unrecorded,
}

/// What happened to a plain function's blocking thread that gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThreadProblem {
    /// No thread could be started for it.
    NotStarted {
        /// The system's message.
        message: String,
    },
    /// The runtime shut down before the function started.
    RuntimeShutDown,
    /// The thread ended without sending a result (it was killed).
    EndedWithoutResult,
    /// The result was taken already (the future was polled after it finished).
    ResultTaken,
}

/// Why a remote MCP server could not serve a call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RemoteProblem {
    /// The server answered the request with a protocol error.
    Refused {
        /// The server's message.
        message: String,
        /// The JSON-RPC error code.
        code: i32,
    },
    /// The server stopped or closed the connection.
    Unreachable,
    /// The request failed otherwise.
    Failed {
        /// The SDK's message.
        message: String,
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

    /// The error for arguments that are JSON but not an object of named arguments (for a tool
    /// that reads its arguments itself).
    pub fn arguments_not_an_object(value: &serde_json::Value) -> Self {
        ToolError::InvalidArguments {
            issues: vec![ArgumentIssue::new(
                "",
                IssueKind::NotAnObject {
                    found: JsonType::of(value),
                },
            )],
        }
    }

    /// The error for arguments that are not JSON, as the parser says why (for a tool that reads
    /// its arguments itself).
    pub fn invalid_json(error: &serde_json::Error) -> Self {
        ToolError::InvalidJson {
            error: SyntaxError::of(error),
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
/// `Display` of [`ToolError::UnknownTool`]), written piece by piece.
fn describe_unknown_tool(name: &str, available: &[String], f: &mut impl fmt::Write) -> fmt::Result {
    f.write_str("there is no tool named `")?;
    f.write_str(name)?;
    let Some((first, others)) = available.split_first() else {
        return f.write_str("`; no tools are available");
    };
    f.write_str("`; available tools: ")?;
    f.write_str(first)?;
    for tool in others {
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
            ToolError::UnknownTool { name, available } => describe_unknown_tool(name, available, f),
            ToolError::InvalidJson { error } => {
                write!(f, "the arguments are not valid JSON: {error}")
            }
            ToolError::InvalidArguments { issues } => write!(
                f,
                "invalid arguments: {}",
                ArgumentIssue::render(issues, "arguments", ": ", "; ", ArgumentIssue::english)
            ),
            ToolError::Failed { message } => f.write_str(message),
            ToolError::Panicked {
                message: Some(message),
            } => write!(f, "the tool panicked: {message}"),
            ToolError::Panicked { message: None } => {
                f.write_str("the tool panicked: a panic without a message")
            }
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
            ToolError::Interrupted { by } => {
                let when = match by {
                    Interruption::Cancelled => "when the run was cancelled",
                    Interruption::TimeLimit => "when the run's time limit passed",
                    Interruption::Unrecorded => "before its result was recorded",
                };
                write!(
                    f,
                    "the call was interrupted {when}: it had started and may have had its \
                     effect, so check before calling it again"
                )
            }
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
            ToolError::Journal { message } => {
                write!(
                    f,
                    "the durable run's journal could not record this call: {message}"
                )
            }
            ToolError::RunByCaller { tool } => {
                write!(f, "`{tool}` is run by the application, not by the agent")
            }
            ToolError::Thread { problem } => match problem {
                ThreadProblem::NotStarted { message } => write!(
                    f,
                    "the tool could not be started on a thread of its own: {message}"
                ),
                ThreadProblem::RuntimeShutDown => {
                    f.write_str("the tool was not run: its runtime shut down first")
                }
                ThreadProblem::EndedWithoutResult => {
                    f.write_str("the tool's thread ended without a result")
                }
                ThreadProblem::ResultTaken => f.write_str("the tool's result was already taken"),
            },
            ToolError::Unserializable { message } => {
                write!(f, "the tool's result could not be serialized: {message}")
            }
            ToolError::Remote { server, problem } => match problem {
                RemoteProblem::Refused { message, code } => write!(
                    f,
                    "the MCP server {server} refused the call: {message} (error {code})"
                ),
                RemoteProblem::Unreachable => write!(
                    f,
                    "the MCP server {server} cannot be reached: it stopped or closed the connection"
                ),
                RemoteProblem::Failed { message } => {
                    write!(f, "the call to the MCP server {server} failed: {message}")
                }
            },
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

/// The error of a call whose tool panicked, with the panic's message.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    let message = if let Some(text) = payload.downcast_ref::<&str>() {
        Some((*text).to_owned())
    } else {
        payload.downcast_ref::<String>().cloned()
    };
    ToolError::Panicked { message }
}
