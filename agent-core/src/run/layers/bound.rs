//! A layer or policy of an `Agent<S>` whose context is bound
//! ([`Agent::bind_context`](crate::Agent::bind_context)): it serves the `Agent<()>` that agent
//! becomes, handed the bound context.

use std::sync::Arc;
use std::time::Duration;

use crate::message::{AssistantMessage, ToolCall, ToolResultMessage};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::run::outcome::StopReason;
use crate::run::seams::{
    CallPolicy, ModelCall, ModelLayer, Next, PolicyCall, ReplyRulings, Ruled, RunStatus,
};
use crate::tool::{BoxFuture, ToolDef};

/// A model-call layer with its context bound.
pub(crate) struct BoundLayer<S> {
    pub(crate) layer: Arc<dyn ModelLayer<S>>,
    pub(crate) context: Arc<S>,
}

/// The layers inside a bound layer, seen from it as its model.
struct Rest<'a> {
    next: Next<'a, ()>,
    step: usize,
}

impl Model for Rest<'_> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.next.call(ModelCall {
            context: &(),
            step: self.step,
            request,
        })
    }
}

impl<S: Send + Sync + 'static> ModelLayer<()> for BoundLayer<S> {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, ()>,
        next: Next<'a, ()>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async move {
            let rest = Rest {
                next,
                step: call.step,
            };
            let call = ModelCall {
                context: &*self.context,
                step: call.step,
                request: call.request,
            };
            self.layer.call(call, Next::new(&[], &rest)).await
        })
    }
}

/// A call policy with its context bound.
pub(crate) struct BoundPolicy<S> {
    pub(crate) policy: Arc<dyn CallPolicy<S>>,
    pub(crate) context: Arc<S>,
}

// Every method forwarded, or the bound policy would lose one.
#[deny(clippy::missing_trait_methods)]
impl<S: Send + Sync + 'static> CallPolicy<()> for BoundPolicy<S> {
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        self.policy.before_step(status)
    }

    fn on_reply(
        &self,
        status: &RunStatus<'_>,
        reply: &AssistantMessage,
        cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        self.policy.on_reply(status, reply, cut_off, rulings);
    }

    fn rule<'a>(&'a self, call: PolicyCall<'a, ()>) -> Option<Ruled<'a>> {
        self.policy.rule(PolicyCall {
            context: &*self.context,
            call: call.call,
            tool: call.tool,
            so_far: call.so_far,
            status: call.status,
        })
    }

    fn before_run<'a>(&'a self, call: PolicyCall<'a, ()>) -> Option<Ruled<'a>> {
        self.policy.before_run(PolicyCall {
            context: &*self.context,
            call: call.call,
            tool: call.tool,
            so_far: call.so_far,
            status: call.status,
        })
    }

    fn check_result<'a>(
        &'a self,
        _context: &'a (),
        status: &RunStatus<'_>,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
        result: &'a mut ToolResultMessage,
    ) -> Option<BoxFuture<'a, ()>> {
        self.policy
            .check_result(&self.context, status, call, tool, result)
    }

    fn after_call(
        &self,
        _context: &(),
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        self.policy.after_call(&self.context, call, result, elapsed);
    }
}
