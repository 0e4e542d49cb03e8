//! The dispatcher seam, as a run uses it: a step's calls (or a resumed run's decided ones)
//! carried out as ruled, through [`ToolSet::execute`](crate::ToolSet::execute) and the journal
//! when the run has one, concurrently or one by one, raced against the run's interruption. Each
//! outcome lands in its slot as soon as it is known, so an interruption drops only the calls
//! still in flight: one that finished keeps its real result (its effects happened, and the hooks
//! saw it).

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use tracing::field::Empty;
use tracing::{Instrument, info_span};

use super::interrupt::Interrupt;
use super::policy::Ruling;
use super::{Run, enabled};
use crate::message::{ToolCall, ToolResultMessage};
use crate::run::pause::PendingCall;
use crate::texts::NotRun;
use crate::toolset::CallDecision;

/// One call's place while a step's calls are carried out: opened by the policy, then what the
/// call came to.
pub(super) enum Slot {
    /// Not carried out (yet): its ruling, or `None` for the policy to rule when it starts (boxed:
    /// most calls have none yet).
    Open(Option<Box<Ruling>>),
    /// It waits for a person or the caller.
    Waiting(PendingCall),
    /// Its result.
    Answered(ToolResultMessage),
}

impl Slot {
    /// Whether the call waits for a person or the caller.
    pub(super) fn waits(&self) -> bool {
        matches!(self, Slot::Waiting(_))
    }
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Carries out `calls` as ruled, each into its slot (one per call, in order): concurrently
    /// unless the agent asks for one at a time or a journal records them in order; raced against
    /// the run's interruption when it can be interrupted. The interruption that cut them short,
    /// if one did: the calls it dropped are answered as not run, saying why.
    pub(super) async fn carry_out<C: Future<Output = ()> + Send>(
        &self,
        calls: &[ToolCall],
        slots: &mut [Slot],
        cancel: &mut Pin<&mut C>,
    ) -> Option<Interrupt> {
        let interrupted =
            if self.agent.concurrent_tools && calls.len() > 1 && self.journal.is_none() {
                let each = slots.iter_mut().zip(calls);
                // Boxed: the run's future holds the calls' one by one, and would otherwise carry
                // room for all of them at once as well.
                let all = Box::pin(join_all(each.map(|(slot, call)| self.fill(slot, call))));
                raced!(self, all, cancel).err()
            } else {
                // One at a time, each call raced on its own: a call that finished keeps its slot.
                // (`fill`, written out: raced as a future of its own, it costs every call a move.)
                let mut interrupted = None;
                for (slot, call) in slots.iter_mut().zip(calls) {
                    let Slot::Open(ruling) = slot else { continue };
                    let mut ruling = ruling.take();
                    // The traced call made here, boxed, so that only its box is kept across the
                    // await, not the span.
                    let traced = enabled(tool_span(call))
                        .map(|span| Box::pin(self.traced(call, ruling.take(), span)));
                    let filled = match traced {
                        None => raced!(self, self.rule_and_call(call, ruling), cancel),
                        Some(traced) => raced!(self, traced, cancel),
                    };
                    match filled {
                        Ok(filled) => *slot = filled,
                        Err(interrupt) => {
                            interrupted = Some(interrupt);
                            break;
                        }
                    }
                }
                interrupted
            };
        if let Some(interrupt) = interrupted {
            for (slot, call) in slots.iter_mut().zip(calls) {
                self.close(slot, call, interrupt.not_run());
            }
        }
        interrupted
    }

    /// Answers the call of `slot` as not run, saying `why`, unless it has its result.
    pub(super) fn close(&self, slot: &mut Slot, call: &ToolCall, why: NotRun<'_>) {
        if !matches!(slot, Slot::Answered(_)) {
            let open = std::mem::replace(slot, Slot::Open(None));
            *slot = Slot::Answered(self.result(open, call, why));
        }
    }

    /// The result of `call` from its slot: its own, or, when it has none, that it was not run,
    /// saying `why`.
    pub(super) fn result(&self, slot: Slot, call: &ToolCall, why: NotRun<'_>) -> ToolResultMessage {
        match slot {
            Slot::Answered(result) => result,
            Slot::Waiting(pending) => self.agent.tools.not_run(&pending.call, why),
            Slot::Open(_) => self.agent.tools.not_run(call, why),
        }
    }

    /// Carries out the call of an open slot, and puts what it came to there.
    async fn fill(&self, slot: &mut Slot, call: &ToolCall) {
        if let Slot::Open(ruling) = slot {
            let ruling = ruling.take();
            *slot = match enabled(tool_span(call)) {
                None => self.rule_and_call(call, ruling).await,
                Some(span) => Box::pin(self.traced(call, ruling, span)).await,
            };
        }
    }

    /// One call, in `span`: `rule_and_call`, traced.
    async fn traced(
        &self,
        call: &ToolCall,
        ruling: Option<Box<Ruling>>,
        span: tracing::Span,
    ) -> Slot {
        let slot = self
            .rule_and_call(call, ruling)
            .instrument(span.clone())
            .await;
        if let Slot::Answered(result) = &slot
            && result.is_error
        {
            span.record("error.type", "tool_error");
        }
        slot
    }

    /// One call: ruled on (unless it was already), then carried out as ruled, through the
    /// journal when the run has one (a recorded result comes back from it instead of running the
    /// call again), its result shown to the hooks.
    async fn rule_and_call(&self, call: &ToolCall, ruling: Option<Box<Ruling>>) -> Slot {
        // Only a hook reads how long a call took (the policy's time counts: an approver may
        // take long).
        let started = (!self.agent.hooks.is_empty() && ruling.is_none()).then(Instant::now);
        // Looked up once: the policy reads its definition, and the call runs it.
        let tool = self.agent.tools.get(&call.name);
        // The ruling is matched in a block of its own, not kept: held across the call's await,
        // it would take room in every call's future.
        let rewritten = {
            let ruling = match ruling {
                Some(ruling) => *ruling,
                // Boxed: few calls have anyone to consult, and every call's future would carry
                // room for the policy's.
                None if self.consults_on(tool) => Box::pin(self.decide(call, tool)).await,
                // Nothing to consult (no hook, a tool that neither waits nor needs approval).
                None => Ruling::Run,
            };
            match ruling {
                Ruling::Wait(pending) => return Slot::Waiting(pending),
                Ruling::Answer(outcome) => {
                    let result = self.agent.tools.result_message(call, outcome);
                    return self.answered(call, result, started);
                }
                Ruling::Run => None,
                Ruling::RunWith(arguments) => Some(arguments),
            }
        };
        let decision = match &rewritten {
            None => CallDecision::Run,
            Some(arguments) => CallDecision::RunWith { arguments },
        };
        let tools = &self.agent.tools;
        tracing::debug!(arguments = %call.arguments, "tool call");
        let result = match self.journal {
            // What `ToolSet::execute` is, without a layer around it.
            None => tools.result_message(
                call,
                tools
                    .outcome(tool, self.context, call, decision, Some(&self.run_id))
                    .await,
            ),
            Some(journal) => {
                let definition = tool.map(|tool| tool.definition());
                let run =
                    Box::pin(tools.execute_in_run(self.context, call, decision, &self.run_id));
                match journal.tool_call(call, definition, run).await {
                    Ok(result) => result,
                    Err(error) => tools.result_message(call, Err(error)),
                }
            }
        };
        tracing::debug!(is_error = result.is_error, content = %result.content, "tool result");
        self.answered(call, result, started)
    }

    /// A call's slot once it has its result, which the hooks are shown.
    fn answered(
        &self,
        call: &ToolCall,
        result: ToolResultMessage,
        started: Option<Instant>,
    ) -> Slot {
        let elapsed = started.map_or(Duration::ZERO, |started| started.elapsed());
        for hook in &self.agent.hooks {
            hook.on_tool_result(self.context, call, &result, elapsed);
        }
        Slot::Answered(result)
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
