//! Watching and steering a run: hooks called at each point of the loop, and approval of tools that
//! need it.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use super::outcome::{RunError, RunOutput};
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::model::ChatResponse;
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
/// `S` is the agent's context (see [`RunRequest::context`](crate::RunRequest::context)): every method is
/// handed the run's context. A hook that does not look at it works with any agent when it is
/// implemented for every `S`:
///
/// ```
/// use agent_core::{Hooks, Message};
///
/// struct CountRequests(std::sync::atomic::AtomicUsize);
///
/// impl<S> Hooks<S> for CountRequests {
///     fn on_model_request(&self, _context: &S, _step: usize, _messages: &[Message]) {
///         self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
///     }
/// }
/// ```
///
/// Observation hooks are plain calls on the loop's path: keep them quick. The before-tool hook is
/// async so it can ask someone.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is no hooks for an agent whose context is `{S}`",
    note = "a hook that does not read the context can serve every agent: `impl<S> Hooks<S> for {Self}`"
)]
pub trait Hooks<S = ()>: Send + Sync + 'static {
    /// Before each model request, with the history about to be sent.
    fn on_model_request(&self, context: &S, step: usize, messages: &[Message]) {
        let _ = (context, step, messages);
    }

    /// After each model reply.
    fn on_model_response(&self, context: &S, step: usize, response: &ChatResponse) {
        let _ = (context, step, response);
    }

    /// Before each tool call: run it, rewrite its arguments, skip it, or stop the run. `tool` is
    /// `None` when the model named a tool that does not exist.
    fn before_tool_call<'a>(
        &'a self,
        context: &'a S,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        let _ = (context, call, tool);
        Box::pin(std::future::ready(ToolDecision::Run))
    }

    /// After each tool result, with how long the call took.
    fn on_tool_result(
        &self,
        context: &S,
        call: &ToolCall,
        result: &ToolResultMessage,
        elapsed: Duration,
    ) {
        let _ = (context, call, result, elapsed);
    }

    /// When the run ends, however it ends.
    fn on_run_end(&self, context: &S, outcome: Result<&RunOutput, &RunError>) {
        let _ = (context, outcome);
    }
}

/// An [`Approver`]'s answer to "may this call run?": approve it, deny it, or defer it to a
/// person, who answers later with a [`Decision`](crate::Decision) of the same words.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Approval {
    /// Run it as the model asked.
    Approve,
    /// Do not run it; the model is told, with the reason when there is one.
    Deny {
        /// Why, if the person said.
        reason: Option<String>,
    },
    /// Ask later: the run ends paused ([`StopReason::Paused`](crate::StopReason::Paused)), with
    /// the call waiting in its [`PausedRun`](crate::PausedRun), once the reply's other calls have
    /// run; [`Agent::resume`](crate::Agent::resume) goes on with the person's
    /// decision, in this process or another. A typed run cannot wait: there the call is answered
    /// as not run.
    Defer,
}

impl Approval {
    /// Deny, telling the model why.
    pub fn deny(reason: impl Into<String>) -> Self {
        Approval::Deny {
            reason: Some(reason.into()),
        }
    }
}

/// Decides whether a call to a tool marked `requires_approval` may run. Any
/// `Fn(ToolCall, ToolDef) -> impl Future<Output = Approval>` is one, for every context; implement
/// the trait to decide by the run's context `S` (say, who the user is).
pub trait Approver<S = ()>: Send + Sync + 'static {
    /// Asks about one call.
    fn approve<'a>(
        &'a self,
        context: &'a S,
        call: &'a ToolCall,
        tool: &'a ToolDef,
    ) -> BoxFuture<'a, Approval>;
}

impl<S, F, Fut> Approver<S> for F
where
    F: Fn(ToolCall, ToolDef) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Approval> + Send + 'static,
{
    fn approve<'a>(
        &'a self,
        _context: &'a S,
        call: &'a ToolCall,
        tool: &'a ToolDef,
    ) -> BoxFuture<'a, Approval> {
        Box::pin(self(call.clone(), tool.clone()))
    }
}

/// Hooks whose context is bound: what [`Agent::bind_context`](crate::Agent::bind_context) makes of the hooks
/// it was given, so they need no context from the run.
pub(crate) struct BoundHooks<S> {
    pub(crate) hooks: Arc<dyn Hooks<S>>,
    pub(crate) context: Arc<S>,
}

// Every method forwarded, or the bound hooks would lose one.
#[deny(clippy::missing_trait_methods)]
impl<S: Send + Sync + 'static> Hooks<()> for BoundHooks<S> {
    fn on_model_request(&self, _context: &(), step: usize, messages: &[Message]) {
        self.hooks.on_model_request(&self.context, step, messages);
    }

    fn on_model_response(&self, _context: &(), step: usize, response: &ChatResponse) {
        self.hooks.on_model_response(&self.context, step, response);
    }

    fn before_tool_call<'a>(
        &'a self,
        _context: &'a (),
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
    ) -> BoxFuture<'a, ToolDecision> {
        self.hooks.before_tool_call(&self.context, call, tool)
    }

    fn on_tool_result(
        &self,
        _context: &(),
        call: &ToolCall,
        result: &ToolResultMessage,
        elapsed: Duration,
    ) {
        self.hooks
            .on_tool_result(&self.context, call, result, elapsed);
    }

    fn on_run_end(&self, _context: &(), outcome: Result<&RunOutput, &RunError>) {
        self.hooks.on_run_end(&self.context, outcome);
    }
}

/// An approver whose context is bound, as [`BoundHooks`].
pub(crate) struct BoundApprover<S> {
    pub(crate) approver: Arc<dyn Approver<S>>,
    pub(crate) context: Arc<S>,
}

impl<S: Send + Sync + 'static> Approver<()> for BoundApprover<S> {
    fn approve<'a>(
        &'a self,
        _context: &'a (),
        call: &'a ToolCall,
        tool: &'a ToolDef,
    ) -> BoxFuture<'a, Approval> {
        self.approver.approve(&self.context, call, tool)
    }
}
