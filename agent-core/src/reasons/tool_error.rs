//! How a tool call fails: every kind of failure, as data. Each language's
//! [`Texts`](crate::Texts) words it; `Display` is [`English`](crate::English)'s words.

use std::any::Any;
use std::time::Duration;

use crate::reasons::argument_issue::{ArgumentIssue, IssueKind, JsonType, SyntaxError};
use crate::reasons::not_run::NotRun;

/// Why a tool call failed. Every variant reaches the model as an error result, never as a crashed run.
///
/// Its `Display` asks [`English`](crate::English) for the words the model reads (after
/// "Error: "), so the two cannot drift apart. Every reason here and in the types it holds is
/// exhaustive on purpose: a language written outside this crate words each one without a
/// wildcard arm, and a reason added later is a compile error there until it is worded.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        /// Why.
        why: NotRun,
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
    /// A [guard](crate::guard::Guard) withheld the call's result from the model (the call ran).
    Withheld {
        /// The guard's name.
        guard: String,
        /// Why, in the guard's words.
        reason: String,
    },
    /// A remote MCP server could not serve the call. What the server itself said is data: the
    /// words around it are the agent's.
    Remote {
        /// Which server.
        server: RemoteServer,
        /// What went wrong.
        problem: RemoteProblem,
    },
    /// An agent called as a tool ([`AgentTool`](crate::AgentTool)) failed: its run ended in an
    /// error (the error itself, for people, is in the calling run's
    /// [`RunOutput::children`](crate::RunOutput::children)).
    AgentFailed {
        /// The agent's name.
        agent: String,
        /// How its run failed.
        why: AgentFailure,
    },
    /// A remote agent (an A2A agent called as a tool, `agent_a2a::A2aTool`) did not answer the
    /// call. What the agent itself said is data: the words around it are the agent's.
    RemoteAgent {
        /// The remote agent's name, from its card.
        agent: String,
        /// What went wrong.
        problem: RemoteAgentProblem,
    },
}

/// How the run of an agent called as a tool failed ([`ToolError::AgentFailed`]): the kind of its
/// [`RunError`](crate::RunError), as data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentFailure {
    /// A call of its model failed.
    Model {
        /// The step whose model call failed, from 1.
        step: usize,
        /// What the provider said, in its words (empty when it said nothing: a timeout, a
        /// connection that failed).
        message: String,
    },
    /// Its typed answer was not taken in as many tries as it had.
    Output {
        /// How many answers it gave.
        tries: usize,
    },
    /// It ended before it gave its typed answer (a limit, a hook, a cancellation).
    NoOutput,
    /// A guard stopped it.
    Tripped {
        /// The guard's name.
        guard: String,
    },
    /// Its tools make the lethal mix, so it did not start.
    LethalMix,
    /// Its session could not be loaded or saved.
    Session,
    /// Its paused run could not be resumed.
    Resume,
    /// Its run was dropped before it ended.
    Dropped,
}

/// Why a remote agent did not answer a call ([`ToolError::RemoteAgent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteAgentProblem {
    /// The request did not go, or the reply did not come.
    Unreachable,
    /// It answered with something its protocol does not allow.
    Garbled,
    /// It refused the request with a JSON-RPC error.
    Refused {
        /// Its message.
        message: String,
        /// The JSON-RPC error code.
        code: i64,
    },
    /// Its task ended, or stopped, without an answer. (The task's id is left out: the model
    /// cannot use it, as each call starts a task of its own.)
    Task {
        /// How it stands.
        state: TaskEnd,
        /// What the agent said of it (empty when nothing).
        message: String,
    },
}

/// How a remote agent's task stands when it gave no answer ([`RemoteAgentProblem::Task`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEnd {
    /// It waits for more input (or for a sign-in).
    WaitsForInput,
    /// It was cancelled.
    Cancelled,
    /// The agent refused it.
    Rejected,
    /// It failed.
    Failed,
}

/// What cut off a call that had started ([`ToolError::Interrupted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interruption {
    /// The run was cancelled.
    Cancelled,
    /// The run's time limit passed.
    TimeLimit,
    /// A [guard](crate::guard::Guard) tripped and stopped the run's tree.
    Tripped,
    /// The run stopped before the call's result was recorded (its process died, or its future
    /// was dropped): found by the next run of the conversation, which cannot know whether the
    /// call had started.
    Unrecorded,
}

/// What happened to a plain function's blocking thread that gave no result.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Which MCP server a call went to, as the model is told: by the name it gave itself, else by
/// how it was reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteServer {
    /// The name the server gave itself.
    Named(String),
    /// The program started to serve it (over stdio).
    Program(String),
    /// Its URL (streamable HTTP).
    Url(String),
    /// A stream the application connected it over.
    Stream,
}

/// Why a remote MCP server could not serve a call.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

impl std::error::Error for ToolError {}

/// The error of a call whose tool panicked, with the panic's message.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    let message = if let Some(text) = payload.downcast_ref::<&str>() {
        Some((*text).to_owned())
    } else {
        payload.downcast_ref::<String>().cloned()
    };
    ToolError::Panicked { message }
}
