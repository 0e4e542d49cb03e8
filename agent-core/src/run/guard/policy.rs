//! The guards on each call's arguments and each tool's result, as a call policy: a call is
//! checked just before it runs, whoever ruled that it runs (the policies, or a person who
//! approved it on a resumed run), with the arguments it will run with; a result before the model
//! reads it. A refusal is answered in the run's words, as a call not run
//! ([`NotRun::Guarded`]) or a result withheld ([`ToolError::Withheld`]).

use std::borrow::Cow;
use std::future::pending;

use super::checks::{Asking, Folded, GuardRun, Progress, Subject, Waiting};
use super::{Place, What};
use crate::message::{ToolCall, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::seams::{CallPolicy, PolicyCall, Ruled, Ruling, RunStatus};
use crate::tool::{BoxFuture, ToolDef};

/// The guards of one run's part at the call-policy seam.
impl<S: Send + Sync + 'static> CallPolicy<S> for GuardRun<'_> {
    fn before_run<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        if !self.checks(Place::Call, None) {
            return None;
        }
        let PolicyCall {
            call, tool, status, ..
        } = call;
        let mut current = Call {
            call: Cow::Borrowed(call),
            tool,
        };
        let asking = asking(Place::Call, status.step, &call.id);
        // The guards that answer at once are asked here; a run waits only for one that does not.
        match self.fold_now(asking, &mut current, 0) {
            // Through as it is: the call runs as the policies ruled.
            Progress::Done(Folded::Through) if matches!(current.call, Cow::Borrowed(_)) => None,
            Progress::Done(folded) => Some(match ruling(folded, current) {
                Some(ruling) => Ruled::Now(ruling),
                None => Ruled::Later(Box::pin(pending())),
            }),
            Progress::Waiting(waiting) => Some(self.rule_later(asking, current, waiting)),
        }
    }

    fn check_result<'a>(
        &'a self,
        _context: &'a S,
        status: &RunStatus<'_>,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
        result: &'a mut ToolResultMessage,
    ) -> Option<BoxFuture<'a, ()>> {
        if !self.checks(Place::Result, None) {
            return None;
        }
        let asking = asking(Place::Result, status.step, &call.id);
        let mut checked = Result { call, tool, result };
        match self.fold_now(asking, &mut checked, 0) {
            Progress::Done(Folded::Through) => None,
            Progress::Done(folded) => self.settle_result(folded, call, checked.result),
            Progress::Waiting(waiting) => Some(self.check_later(asking, checked, waiting)),
        }
    }
}

// The parts that wait for a guard are out of line (`inline(never)`): a check that answers at
// once runs through the seam's short path alone.
impl GuardRun<'_> {
    /// The ruling on `current` once the guard `waiting` waits for, and those after it, answer.
    #[inline(never)]
    fn rule_later<'a>(
        &'a self,
        asking: Asking<'a>,
        mut current: Call<'a>,
        waiting: Waiting<'a>,
    ) -> Ruled<'a> {
        Ruled::Later(Box::pin(async move {
            let folded = self.finish(asking, &mut current, waiting).await;
            match ruling(folded, current) {
                Some(ruling) => ruling,
                None => pending().await,
            }
        }))
    }

    /// The check of a result once the guard `waiting` waits for, and those after it, answer.
    #[inline(never)]
    fn check_later<'a>(
        &'a self,
        asking: Asking<'a>,
        mut checked: Result<'a>,
        waiting: Waiting<'a>,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let folded = self.finish(asking, &mut checked, waiting).await;
            let call = checked.call;
            if let Some(tripped) = self.settle_result(folded, call, checked.result) {
                tripped.await;
            }
        })
    }

    /// What the guards' fold makes of a call's result: withheld when refused; a future that
    /// never completes when tripped (the run is interrupted there), `None` otherwise.
    fn settle_result(
        &self,
        folded: Folded,
        call: &ToolCall,
        result: &mut ToolResultMessage,
    ) -> Option<BoxFuture<'static, ()>> {
        match folded {
            Folded::Through => None,
            Folded::Refused { guard, reason } => {
                let withheld = ToolError::Withheld { guard, reason };
                *result = self.wording.result_message(call, Err(withheld));
                None
            }
            Folded::Tripped => Some(Box::pin(pending())),
        }
    }
}

/// The ruling the guards' fold makes of a call: `None` when they tripped (the run is interrupted
/// before the call starts).
fn ruling(folded: Folded, current: Call<'_>) -> Option<Ruling> {
    match folded {
        Folded::Through => Some(match current.call {
            Cow::Owned(rewritten) => Ruling::RunWith(rewritten.arguments),
            Cow::Borrowed(_) => Ruling::Run,
        }),
        Folded::Refused { guard, reason } => {
            Some(Ruling::not_run(NotRun::Guarded { guard, reason }))
        }
        Folded::Tripped => None,
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
