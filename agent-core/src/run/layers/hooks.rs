//! [`Hooks`] at the seams they watch and steer: a model-call layer (told of each request and
//! reply) and a call policy (asked before each call, told of each result).

use std::sync::Arc;
use std::time::Duration;

use crate::message::{ToolCall, ToolResultMessage};
use crate::model::{ChatResponse, ModelError};
use crate::reasons::not_run::NotRun;
use crate::run::hooks::{Hooks, ToolDecision};
use crate::run::seams::{CallPolicy, ModelCall, ModelLayer, Next, PolicyCall, Ruled, Ruling};
use crate::tool::BoxFuture;

/// An agent's hooks, at the seams.
pub(crate) struct Hooked<S>(pub(crate) Arc<dyn Hooks<S>>);

impl<S: Send + Sync + 'static> ModelLayer<S> for Hooked<S> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let (context, step) = (call.context, call.step);
            self.0
                .on_model_request(context, step, call.request.messages);
            let reply = next.call(call).await;
            if let Ok(response) = &reply {
                self.0.on_model_response(context, step, response);
            }
            reply
        })
    }
}

impl<S: Send + Sync + 'static> CallPolicy<S> for Hooked<S> {
    /// [`Hooks::before_tool_call`], for a call still to run.
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        if !call.so_far.runs() {
            return None;
        }
        Some(Ruled::Later(Box::pin(async move {
            let decided = (self.0)
                .before_tool_call(call.context, call.call, call.tool)
                .await;
            match decided {
                ToolDecision::Run => Ruling::Run,
                ToolDecision::RunWith { arguments } => Ruling::RunWith(arguments),
                ToolDecision::Skip { reason } => Ruling::not_run(NotRun::Skipped(reason)),
                ToolDecision::Stop { reason } => Ruling::Stop(reason),
            }
        })))
    }

    /// [`Hooks::on_tool_result`].
    fn after_call(
        &self,
        context: &S,
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        self.0.on_tool_result(context, call, result, elapsed);
    }
}
