//! Calls that wait, as call policies: a tool the caller runs ([`ExternalTools`]), one that needs
//! a person's approval ([`Approvals`]), and a run that cannot wait for either ([`CannotPause`]).

use std::sync::Arc;

use crate::message::ToolCall;
use crate::reasons::not_run::NotRun;
use crate::run::hooks::{Approval, Approver};
use crate::run::pause::Waiting;
use crate::run::seams::{CallPolicy, PolicyCall, Ruled, Ruling};
use crate::tool::ToolDef;

/// A call of an [external](crate::ToolAnnotations::external) tool waits for the caller's result.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExternalTools;

impl<S> CallPolicy<S> for ExternalTools {
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        let external = call.tool.is_some_and(|tool| tool.annotations.external);
        (external && call.so_far.runs()).then(|| Ruling::Wait(Waiting::Result).into())
    }
}

/// A call of a tool that [requires approval](crate::ToolAnnotations::requires_approval) goes to
/// the agent's [`Approver`]: approved, denied, or deferred to a person (it waits). Without an
/// approver it is denied ([`NotRun::NoApprover`]).
pub struct Approvals<S> {
    pub(crate) approver: Option<Arc<dyn Approver<S>>>,
    /// The approver defers every call ([`Agent::defer_approvals`](crate::Agent::defer_approvals)).
    pub(crate) deferring: bool,
}

impl<S> Default for Approvals<S> {
    fn default() -> Self {
        Approvals {
            approver: None,
            deferring: false,
        }
    }
}

impl<S> Approvals<S> {
    /// Approvals that defer every call: each waits for a person.
    pub(crate) fn deferring() -> Self {
        Approvals {
            approver: Some(Arc::new(|_: ToolCall, _: ToolDef| {
                std::future::ready(Approval::Defer)
            })),
            deferring: true,
        }
    }

    /// Whether calls needing approval wait for a person: this approver defers, or, without one,
    /// `inherited` (the run that started this one defers).
    pub(crate) fn defers(&self, inherited: bool) -> bool {
        match self.approver {
            Some(_) => self.deferring,
            None => inherited,
        }
    }
}

impl<S: Send + Sync + 'static> CallPolicy<S> for Approvals<S> {
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        let tool = call
            .tool
            .filter(|tool| tool.annotations.requires_approval)?;
        if !call.so_far.runs() {
            return None;
        }
        let Some(approver) = &self.approver else {
            return Some(Ruling::not_run(NotRun::NoApprover).into());
        };
        Some(Ruled::Later(Box::pin(async move {
            match approver.approve(call.context, call.call, tool).await {
                Approval::Approve => Ruling::Run,
                Approval::Deny { reason } => Ruling::not_run(NotRun::Denied(reason)),
                Approval::Defer => Ruling::Wait(Waiting::Approval),
            }
        })))
    }
}

/// In a run that cannot pause (a typed run), a call that would wait is answered as not run
/// ([`NotRun::CannotWait`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct CannotPause;

impl<S> CallPolicy<S> for CannotPause {
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        let waits = matches!(call.so_far, Ruling::Wait(_));
        waits.then(|| Ruling::not_run(NotRun::CannotWait).into())
    }
}
