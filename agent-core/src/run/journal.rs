//! Where a run's model calls and tool calls go through when something outside the process must
//! remember them: a durable-execution engine journals each one, so a run replayed after a crash
//! gets the recorded replies and results back instead of calling the model or the tool again.

use std::sync::Arc;

use crate::message::{ToolCall, ToolResultMessage};
use crate::model::{ChatResponse, ModelError};
use crate::reasons::tool_error::ToolError;
use crate::run::guard::Judged;
use crate::tool::scope::AgentPath;
use crate::tool::{BoxFuture, ToolDef};

/// Records each model call and each tool call of a run as one step, and hands recorded ones back
/// on replay. Implemented by the durable runners (`restate`; another engine can implement it
/// outside the crate) and given to a run with [`RunRequest::journal`](super::RunRequest::journal);
/// a plain run has none.
///
/// A journaled run must make the same calls in the same order each time it is replayed: the loop
/// then runs a step's tool calls one after another (never at once) and applies no wall-clock time
/// limit, whose firing would differ between the first run and its replay.
pub trait Journal: Send + Sync {
    /// Makes the model call of `step` (or gives back its recorded reply).
    fn model_call<'a>(
        &'a self,
        step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;

    /// Makes a model call a context policy asks for before the model call of `step` (a summary
    /// of older turns: [`Turns::ask`](crate::context::Turns::ask)), or gives back its recorded
    /// reply, so that a replay never asks twice.
    fn context_call<'a>(
        &'a self,
        step: usize,
        call: BoxFuture<'a, Result<ChatResponse, ModelError>>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>>;

    /// Runs a tool call (or gives back its recorded result). `definition` is the tool's, when the
    /// agent has it: its annotations say whether running it twice would be harmless. When the
    /// journal has no result to give (the call was cut off by a crash and is not safe to repeat:
    /// [`ToolError::OutcomeUnknown`]; the journal itself failed: [`ToolError::Journal`]), it says
    /// so, and the run words the result as it words every other.
    fn tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        definition: Option<&'a ToolDef>,
        run: BoxFuture<'a, ToolResultMessage>,
    ) -> BoxFuture<'a, Result<ToolResultMessage, ToolError>>;

    /// Asks a guard whose verdict takes time (a model asked as a judge), or gives back its
    /// recorded verdict and the tokens it used, so that a replay never asks twice and counts the
    /// same tokens. `key` names the check, the same on every replay (the guard, the place, the
    /// step, the call). By default, asks.
    fn guard_check<'a>(
        &'a self,
        key: String,
        check: BoxFuture<'a, Judged>,
    ) -> BoxFuture<'a, Judged> {
        let _ = key;
        check
    }

    /// This journal as a handle that a run started inside one of this run's calls (an agent
    /// called as a tool, [`Agent::as_tool`](crate::Agent::as_tool)) can keep: that run's model
    /// and tool calls are then journaled here too, each as its own step, in order, and the call
    /// that started it is not journaled as a whole (a crash inside the child repeats none of
    /// its steps). `None`, the default: such a call is journaled as one tool call, and a crash
    /// inside it runs the child again.
    fn for_runs_it_starts(&self) -> Option<Arc<dyn Journal>> {
        None
    }

    /// This journal for the run of the agent at `agent` that one of this run's calls started
    /// (a handle from [`for_runs_it_starts`](Journal::for_runs_it_starts)): its steps say which
    /// agent made them, so a journal of a tree of agents reads as one. `None`, the default: the
    /// handle as it is.
    fn for_agent(&self, agent: &AgentPath) -> Option<Arc<dyn Journal>> {
        let _ = agent;
        None
    }
}
