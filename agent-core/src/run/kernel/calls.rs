//! The dispatcher seam, as a run uses it: a step's calls (or a resumed run's decided ones)
//! carried out as ruled, through [`ToolSet::execute`](crate::ToolSet::execute) and the journal
//! when the run has one, concurrently or one by one, raced against the run's interruption. Each
//! outcome lands in its slot as soon as it is known, so an interruption drops only the calls
//! still in flight: one that finished keeps its real result (its effects happened, and the hooks
//! saw it).

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::future::{Either, join_all};
use tracing::field::Empty;
use tracing::{Instrument, info_span};

use super::interrupt::Interrupt;
use super::policy::Ruling;
use super::{Run, enabled};
use crate::message::{ToolCall, ToolResultMessage};
use crate::run::pause::PendingCall;
use crate::texts::NotRun;
use crate::toolset::CallDecision;

/// What became of one call: answered, or waiting.
pub(super) enum Called {
    Answered(ToolResultMessage),
    Waiting(PendingCall),
}

impl Called {
    /// Whether the call waits for a person or the caller.
    pub(super) fn waits(&self) -> bool {
        matches!(self, Called::Waiting(_))
    }
}

/// One call's place while a step's calls are carried out, made by the policy.
pub(super) enum Slot {
    /// Not carried out (yet): its ruling, or `None` for the policy to rule when it starts (boxed:
    /// most calls have none yet, and a slot the size of a result is made into one in place).
    Open(Option<Box<Ruling>>),
    Done(Called),
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Carries out `calls` as ruled (one slot per call, in order): concurrently unless the
    /// agent asks for one at a time or a journal records them in order. What each came to, in
    /// call order, and the interruption that cut them short, if one did: calls it dropped are
    /// answered as not run, saying why.
    pub(super) async fn carry_out<C: Future<Output = ()> + Send>(
        &self,
        calls: &[ToolCall],
        mut slots: Vec<Slot>,
        cancel: &mut Pin<&mut C>,
    ) -> (Vec<Called>, Option<Interrupt>) {
        let work = async {
            let each = slots.iter_mut().zip(calls);
            if self.agent.concurrent_tools && calls.len() > 1 && self.journal.is_none() {
                join_all(each.map(|(slot, call)| self.fill(slot, call))).await;
            } else {
                for (slot, call) in each {
                    self.fill(slot, call).await;
                }
            }
        };
        let interrupted = self.interruptible(work, cancel).await.err();
        let called = slots
            .into_iter()
            .zip(calls)
            .map(|(slot, call)| match slot {
                Slot::Done(called) => called,
                Slot::Open(_) => {
                    let why = interrupted.map_or(NotRun::RunEnded, Interrupt::not_run);
                    Called::Answered(self.agent.tools.not_run(call, why))
                }
            })
            .collect();
        (called, interrupted)
    }

    /// Carries out the call of an open slot, and puts what it came to there.
    async fn fill(&self, slot: &mut Slot, call: &ToolCall) {
        let Slot::Open(ruling) = slot else { return };
        let ruling = ruling.take();
        *slot = Slot::Done(self.call(call, ruling).await);
    }

    /// One call, traced: ruled on (unless it was already), then carried out, its result shown to
    /// the hooks. (Not an `async fn`: the traced call is boxed, and the untraced one should not
    /// carry room for the span.)
    fn call<'c>(
        &'c self,
        call: &'c ToolCall,
        ruling: Option<Box<Ruling>>,
    ) -> impl Future<Output = Called> + Send + 'c {
        let Some(span) = enabled(tool_span(call)) else {
            return Either::Left(self.rule_and_call(call, ruling));
        };
        Either::Right(async move {
            let called = Box::pin(self.rule_and_call(call, ruling))
                .instrument(span.clone())
                .await;
            if let Called::Answered(result) = &called
                && result.is_error
            {
                span.record("error.type", "tool_error");
            }
            called
        })
    }

    async fn rule_and_call(&self, call: &ToolCall, ruling: Option<Box<Ruling>>) -> Called {
        // Only a hook reads how long a call took (the policy's time counts: an approver may
        // take long).
        let started = (!self.agent.hooks.is_empty() && ruling.is_none()).then(Instant::now);
        let ruling = match ruling {
            Some(ruling) => *ruling,
            None => self.decide(call).await,
        };
        let tools = &self.agent.tools;
        let result = match ruling {
            Ruling::Wait(pending) => return Called::Waiting(pending),
            Ruling::Answer(outcome) => tools.result_message(call, outcome),
            Ruling::Run => self.execute(call, CallDecision::Run).await,
            Ruling::RunWith(arguments) => {
                let decision = CallDecision::RunWith {
                    arguments: &arguments,
                };
                self.execute(call, decision).await
            }
        };
        let elapsed = started.map_or(Duration::ZERO, |started| started.elapsed());
        for hook in &self.agent.hooks {
            hook.on_tool_result(self.context, call, &result, elapsed);
        }
        Called::Answered(result)
    }

    /// Runs a call as decided, through the journal when the run has one: a recorded result comes
    /// back from it instead of running the call again.
    async fn execute(&self, call: &ToolCall, decision: CallDecision<'_>) -> ToolResultMessage {
        let tools = &self.agent.tools;
        tracing::debug!(arguments = %call.arguments, "tool call");
        let result = match self.journal {
            None => tools.execute(self.context, call, decision).await,
            Some(journal) => {
                let definition = tools.get(&call.name).map(|tool| tool.definition());
                let run = Box::pin(tools.execute(self.context, call, decision));
                match journal.tool_call(call, definition, run).await {
                    Ok(result) => result,
                    Err(error) => tools.result_message(call, Err(error)),
                }
            }
        };
        tracing::debug!(is_error = result.is_error, content = %result.content, "tool result");
        result
    }
}

/// The span of a tool call.
fn tool_span(call: &ToolCall) -> tracing::Span {
    info_span!(
        "execute_tool",
        "gen_ai.operation.name" = "execute_tool",
        "gen_ai.tool.name" = %call.name,
        "gen_ai.tool.call.id" = %call.id,
        "gen_ai.tool.type" = "function",
        "error.type" = Empty,
    )
}
