//! The guards on each call's arguments and each tool's result, as a call policy: a call is
//! checked just before it runs, whoever ruled that it runs (the policies, or a person who
//! approved it on a resumed run), with the arguments it will run with; a result before the model
//! reads it. A refusal is answered in the run's words, as a call not run
//! ([`NotRun::Guarded`]) or a result withheld ([`ToolError::Withheld`]).

use std::borrow::Cow;
use std::future::pending;
use std::sync::Arc;

use super::checks::{Asking, Folded, GuardRun, Subject};
use super::{Place, What};
use crate::message::{ToolCall, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::seams::{CallPolicy, PolicyCall, Ruled, Ruling, RunStatus};
use crate::tool::dispatcher::ToolSet;
use crate::tool::{BoxFuture, ToolDef};

/// The guards of one run's part at the call-policy seam.
pub(crate) struct GuardPolicy<'r, S> {
    pub(crate) run: Arc<GuardRun<'r>>,
    pub(crate) tools: &'r ToolSet<S>,
}

impl<S: Send + Sync + 'static> CallPolicy<S> for GuardPolicy<'_, S> {
    fn before_run<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        if !self.run.checks(Place::Call, None) {
            return None;
        }
        let PolicyCall {
            call, tool, status, ..
        } = call;
        let step = status.step;
        Some(Ruled::Later(Box::pin(async move {
            let mut current = Call {
                call: Cow::Borrowed(call),
                tool,
            };
            let asking = asking(Place::Call, step, &call.id);
            match self.run.fold(asking, &mut current).await {
                Folded::Through => match current.call {
                    Cow::Owned(rewritten) => Ruling::RunWith(rewritten.arguments),
                    Cow::Borrowed(_) => Ruling::Run,
                },
                Folded::Refused { guard, reason } => {
                    Ruling::not_run(NotRun::Guarded { guard, reason })
                }
                // The tripwire is fired: the run is interrupted before the call starts.
                Folded::Tripped => pending().await,
            }
        })))
    }

    fn check_result<'a>(
        &'a self,
        _context: &'a S,
        status: &RunStatus<'_>,
        call: &'a ToolCall,
        result: &'a mut ToolResultMessage,
    ) -> Option<BoxFuture<'a, ()>> {
        if !self.run.checks(Place::Result, None) {
            return None;
        }
        let step = status.step;
        let tool: Option<&ToolDef> = self.tools.get(&call.name).map(|tool| tool.definition());
        Some(Box::pin(async move {
            let asking = asking(Place::Result, step, &call.id);
            let mut checked = Result { call, tool, result };
            let folded = self.run.fold(asking, &mut checked).await;
            let result = checked.result;
            match folded {
                Folded::Through => {}
                Folded::Refused { guard, reason } => {
                    let withheld = ToolError::Withheld { guard, reason };
                    *result = self.tools.result_message(call, Err(withheld));
                }
                Folded::Tripped => pending().await,
            }
        }))
    }
}

/// A call about to run, as the guards see it (a rewrite is of its arguments).
pub(super) struct Call<'a> {
    pub(super) call: Cow<'a, ToolCall>,
    pub(super) tool: Option<&'a ToolDef>,
}

impl Subject for Call<'_> {
    fn what(&self) -> What<'_> {
        What::Call {
            call: &self.call,
            tool: self.tool,
        }
    }

    fn rewrite(&mut self, arguments: String) {
        self.call.to_mut().arguments = arguments;
    }
}

/// A call's result, as the guards see it (a rewrite is of its text).
pub(super) struct Result<'a> {
    pub(super) call: &'a ToolCall,
    pub(super) tool: Option<&'a ToolDef>,
    pub(super) result: &'a mut ToolResultMessage,
}

impl Subject for Result<'_> {
    fn what(&self) -> What<'_> {
        What::Result {
            call: self.call,
            tool: self.tool,
            result: self.result,
        }
    }

    fn rewrite(&mut self, text: String) {
        self.result.content = text;
    }
}

fn asking<'k>(place: Place, step: usize, key: &'k str) -> Asking<'k> {
    Asking {
        place,
        step,
        key,
        beside: None,
        partial: false,
    }
}
