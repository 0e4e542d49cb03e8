//! Watching and steering a run: hooks called at each point of the loop, and approval of tools that
//! need it.

use std::future::Future;
use std::time::Duration;

use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::model::ChatResponse;
use crate::run::outcome::{RunError, RunOutput};
use crate::tool::{BoxFuture, ToolDef};

/// What to do with a tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ToolDecision {
    /// Run it as asked.
    Run,
    /// Run it with these arguments instead (a JSON text).
    RunWith {
        /// The arguments to use.
        arguments: String,
    },
    /// Do not run it; the model gets an error result with this reason.
    Skip {
        /// Why, in words the model can act on.
        reason: String,
    },
    /// Do not run it, and end the run after this step with [`StopReason::Stopped`](crate::StopReason::Stopped).
    Stop {
        /// Why.
        reason: String,
    },
}

/// Observes and intercepts a run. Every method has a default that does nothing, so implement only
/// what you need; several hooks can be given to one agent and are called in the order given.
///
/// Observation hooks are plain calls on the loop's path: keep them quick. The before-tool hook is
/// async so it can ask someone.
pub trait Hooks: Send + Sync + 'static {
    /// Before each model request, with the history about to be sent.
    fn on_model_request(&self, step: usize, messages: &[Message]) {
        let _ = (step, messages);
    }

    /// After each model reply.
    fn on_model_response(&self, step: usize, response: &ChatResponse) {
        let _ = (step, response);
    }

    /// Before each tool call: run it, rewrite its arguments, skip it, or stop the run. `tool` is
    /// `None` when the model named a tool that does not exist.
    fn before_tool_call<'a>(
        &'a self,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        let _ = (call, tool);
        Box::pin(std::future::ready(ToolDecision::Run))
    }

    /// After each tool result, with how long the call took.
    fn on_tool_result(&self, call: &ToolCall, result: &ToolResultMessage, elapsed: Duration) {
        let _ = (call, result, elapsed);
    }

    /// When the run ends, however it ends.
    fn on_run_end(&self, outcome: &Result<RunOutput, RunError>) {
        let _ = outcome;
    }
}

/// The answer to "may this call run?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// It may.
    Approved,
    /// It may not; the model is told, with the reason when there is one.
    Denied {
        /// Why, if the person said.
        reason: Option<String>,
    },
}

/// Decides whether a call to a tool marked `requires_approval` may run. Any
/// `Fn(ToolCall, ToolDef) -> impl Future<Output = Approval>` is one.
pub trait Approver: Send + Sync + 'static {
    /// Asks about one call.
    fn approve<'a>(&'a self, call: &'a ToolCall, tool: &'a ToolDef) -> BoxFuture<'a, Approval>;
}

impl<F, Fut> Approver for F
where
    F: Fn(ToolCall, ToolDef) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve<'a>(&'a self, call: &'a ToolCall, tool: &'a ToolDef) -> BoxFuture<'a, Approval> {
        Box::pin(self(call.clone(), tool.clone()))
    }
}
