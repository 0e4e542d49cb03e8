//! The kernel of a run (the reference loop's `runAgent`): one small loop, and the seams every
//! feature of a run plugs into. A step asks the model, rules on each call it made, carries the
//! calls out and records what happened, until the model answers or something says stop:
//!
//! - **the model call** (`model_call`): the request from the run's settings, then a plain call, a
//!   streamed one (its text passed on as it comes) or a durable engine's [`Journal`] step, raced
//!   against interruption (`interrupt`: the cancel signal and the time limit);
//! - **the call policy** (`policy`): the limits, the answer check's say over final-answer calls,
//!   then per call the hooks, external tools and the approver: one [`Ruling`](policy::Ruling)
//!   per call (run, run with other arguments, answered without running, or wait);
//! - **the dispatcher** (`calls`): the ruled calls carried out through
//!   [`ToolSet::execute`](crate::ToolSet::execute) (and the journal), concurrently or in order,
//!   each outcome kept as it comes, so an interruption drops only the calls still in flight;
//! - **the transcript** (`record`, here): the reply, then one result per call in call order, and
//!   the run's events; or a pause, when calls wait;
//! - **the answer check** (`answer`): a typed run's output, taken or sent back with a correction.
//!
//! The run itself, its state and how it starts and ends (finished, stopped, paused), is in
//! `run`; this file holds the loop. A paused run going on (`resume`) turns its decisions into
//! rulings and carries them out the same way. A feature the run does not use is skipped where its seam finds it absent (no hooks,
//! no journal, no typed output, nothing to interrupt).

use std::future::Future;
use std::pin::Pin;

use tracing::{Instrument, info_span};

/// Awaits `$future` inside the span `$span` makes, or bare when no subscriber wants the span
/// (tracing's `Instrumented` costs a poll, a drop and a move of the future even then). A traced
/// future is boxed: kept inline, it would make room for itself in every run's future, traced or
/// not. `traced!(small: ..)` instruments a small future in place, in a span the caller keeps.
macro_rules! traced {
    (small: $future:expr, $span:expr) => {
        if $span.is_disabled() {
            $future.await
        } else {
            $future.instrument($span.clone()).await
        }
    };
    ($future:expr, $span:expr) => {
        if let Some(span) = enabled($span) {
            Box::pin($future).instrument(span).await
        } else {
            $future.await
        }
    };
}

/// Awaits `$work` raced against the run's cancel signal and deadline, if it can be interrupted:
/// `Ok` with its output, or `Err` with the interruption that came first. The work is pinned where
/// it is awaited, in the caller's future; only the race, when there is one, is boxed (see
/// `Run::race`). With a span, the race (or the work alone) is traced as `traced!(small: ..)`.
macro_rules! raced {
    ($run:expr, $work:expr, $cancel:expr) => {{
        let work = std::pin::pin!($work);
        if $run.can_be_interrupted {
            $run.race(work, $cancel).await
        } else {
            Ok(work.await)
        }
    }};
    ($run:expr, $work:expr, $cancel:expr, $span:expr) => {{
        let work = std::pin::pin!($work);
        if $run.can_be_interrupted {
            traced!(small: $run.race(work, $cancel), $span)
        } else {
            Ok(traced!(small: work, $span))
        }
    }};
}

mod answer;
mod calls;
mod interrupt;
mod model_call;
mod policy;
mod resume;
mod run;

pub(crate) use resume::Resumption;
use run::Run;
pub(crate) use run::{RunPlan, drive};

use super::events::{HandOver, LiveEvent};
use super::outcome::{RunError, RunOutput, StopReason};
use super::pause::PendingCall;
use crate::limits::AtStepLimit;
use crate::message::{Message, ToolCall, ToolResultMessage};
use crate::model::{FinishReason, ModelError};
use crate::texts::NotRun;
use answer::Verdict;
use calls::Slot;

/// The future `make` makes, pinned in a box it is made in, where `Box::pin` would make it on the
/// stack and move it in.
#[inline(always)]
pub(crate) fn boxed<F: Future>(make: impl FnOnce() -> F) -> Pin<Box<F>> {
    Box::into_pin(Box::write(Box::new_uninit(), make()))
}

/// `span`, if a subscriber wants it.
#[inline]
fn enabled(span: tracing::Span) -> Option<tracing::Span> {
    (!span.is_disabled()).then_some(span)
}

/// How a step ended.
enum Step {
    /// The model wants its results: go on.
    Continue,
    /// The run is over.
    Ended(Ending),
}

/// How a run ended, before its output is made (`Run::conclude`, once, at the top: the output is
/// large, and each layer it passed through would move it).
pub(super) enum Ending {
    /// Finished or stopped, with its answer or none.
    Stopped(StopReason, Option<String>),
    /// The model call of step `.0` failed.
    Failed(usize, ModelError),
    /// A typed run's output was rejected once more than it may be.
    OutputRejected,
    /// Calls wait for a person or the caller: the run pauses.
    Paused {
        pending: Vec<PendingCall>,
        finished: Vec<ToolResultMessage>,
        /// The reply asked for more calls than the limit allows: the run ends once resumed.
        over_limit: bool,
    },
}

/// Which model call a step makes: an ordinary one, or the last one at the step limit, which
/// offers no tools (a typed run's final-answer tool alone) and runs no call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ask {
    Next,
    FinalAnswer,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// The loop: a paused run's decisions first, then a step at a time up to the step limit.
    async fn go<C: Future<Output = ()> + Send>(&mut self, mut cancel: Pin<&mut C>) -> Ending {
        if let Some(resume) = self.resume.take()
            // Boxed: few runs resume, and every run's future would hold its room.
            && let Some(reason) = Box::pin(self.resume(resume, &mut cancel)).await
        {
            return Ending::Stopped(reason, None);
        }
        // The places of a step's calls, kept from step to step for their room (see [`Slot`]).
        let mut slots = Vec::new();
        let mut step = self.step_usage.len();
        // The limit is read where it is needed, not kept: the run's future would keep it.
        while step < self.agent.limits.max_steps {
            step += 1;
            // In a block of its own: the step's outcome is not kept across the hand-over.
            {
                self.emit(|| LiveEvent::StepStarted { step });
                let outcome = traced!(
                    self.step(step, Ask::Next, &mut cancel, &mut slots),
                    info_span!("step", "agent.step" = step)
                );
                self.emit(|| LiveEvent::StepFinished {
                    step,
                    usage: self.step_usage.get(step - 1).copied().unwrap_or_default(),
                    model: self.step_models.get(step - 1).cloned().flatten(),
                });
                if let Step::Ended(ending) = outcome {
                    return ending;
                }
            }
            // A streamed run lets its reader see each step's events before the next step.
            if self.events.is_some() {
                HandOver::default().await;
            }
        }
        if self.agent.limits.at_step_limit == AtStepLimit::AskForFinalAnswer {
            let step = self.agent.limits.max_steps + 1;
            let outcome =
                Box::pin(self.step(step, Ask::FinalAnswer, &mut cancel, &mut slots)).await;
            if let Step::Ended(ending) = outcome {
                return ending;
            }
        }
        let limit = self.agent.limits.max_steps;
        Ending::Stopped(StopReason::StepLimit { limit }, None)
    }

    /// One step: ask the model, check its answer, rule on each call it made, carry the calls
    /// out, record what happened, and say whether the run goes on.
    async fn step<C: Future<Output = ()> + Send>(
        &mut self,
        step: usize,
        ask: Ask,
        cancel: &mut Pin<&mut C>,
        slots: &mut Vec<Slot>,
    ) -> Step {
        if let Some(reason) = self.budget_spent() {
            return Step::Ended(Ending::Stopped(reason, None));
        }
        // The reply is read in a block of its own and goes into the transcript there, so that
        // the step's future does not keep it (or the rest of the response) while its calls run.
        let (verdict, over_limit, at) = {
            let (mut reply, cut_off) = match self.ask_model(step, ask, cancel).await {
                Ok(Ok(response)) => {
                    let cut_off = response.finish_reason == Some(FinishReason::Length);
                    (response.message, cut_off)
                }
                Ok(Err(error)) => return Step::Ended(Ending::Failed(step, error)),
                Err(interrupt) => {
                    return Step::Ended(Ending::Stopped(self.interrupted(interrupt), None));
                }
            };
            if ask == Ask::FinalAnswer && self.output.is_none() {
                // Offered no tools, it should call none; calls it makes anyway would stay
                // unanswered.
                reply.tool_calls.clear();
            }
            let verdict = self.judge_output(&reply, cut_off);
            if matches!(verdict, Verdict::Rejected)
                && reply.tool_calls.is_empty()
                && ask == Ask::Next
                && !self.output_retries_spent()
            {
                // A rejected answer in text: the correction goes back as the user's next message.
                let correction = self.agent.tools.cut_to_limit(self.take_correction());
                self.messages.push(Message::Assistant(reply));
                self.messages.push(Message::user(correction));
                return Step::Continue;
            }
            // A reply without calls (a run's last, most often) has nothing to rule on or carry
            // out: its text is the answer, and the step ends here.
            if reply.tool_calls.is_empty() {
                let answer = reply.content.clone();
                self.messages.push(Message::Assistant(reply));
                return self.step_end(ask, verdict, None, Some(answer), false);
            }
            let rulings = self.rule(&reply, cut_off, &verdict, ask, slots);
            self.tool_calls += rulings.counted;
            for call in &reply.tool_calls {
                self.emit(|| LiveEvent::ToolCallRequested(call.clone()));
            }
            // The reply first; its calls' results follow it, in call order.
            self.messages.reserve(1 + reply.tool_calls.len());
            let at = self.messages.len();
            self.messages.push(Message::Assistant(reply));
            (verdict, rulings.over_limit, at)
        };
        let interrupted = self.carry_out(self.calls_at(at), slots, cancel).await;
        let mut stop = interrupted.map(|interrupt| self.interrupted(interrupt));
        if let Some(reason) = self.stop_request.take() {
            stop = stop.or(Some(StopReason::Stopped { reason }));
        }
        let waits = stop.is_none() && slots.iter().any(Slot::waits);
        if waits {
            return self.waiting(at, slots, over_limit);
        }
        self.record(at, slots);
        self.step_end(ask, verdict, stop, None, over_limit)
    }

    /// How a step ends once its reply and results are in the transcript: the run goes on, or
    /// it is over (stopped, its answer taken, its output rejected once too often, a limit).
    /// `answer`: the text of a reply without calls.
    #[inline(always)]
    fn step_end(
        &mut self,
        ask: Ask,
        verdict: Verdict,
        stop: Option<StopReason>,
        answer: Option<String>,
        over_limit: bool,
    ) -> Step {
        if let Some(output) = &mut self.output {
            output.correction = None;
        }
        let limit = self.agent.limits.max_steps;
        let finished = match ask {
            Ask::Next => StopReason::Finished,
            Ask::FinalAnswer => StopReason::StepLimitAnswered { limit },
        };
        let ending = match (stop, verdict) {
            (Some(reason), _) => Ending::Stopped(reason, None),
            (None, Verdict::Taken { text }) => Ending::Stopped(finished, Some(text)),
            // The last try of a typed run ends it without an output.
            _ if ask == Ask::FinalAnswer && self.output.is_some() => {
                Ending::Stopped(StopReason::StepLimit { limit }, None)
            }
            (None, Verdict::Rejected) if self.output_retries_spent() => Ending::OutputRejected,
            _ if answer.is_some() => Ending::Stopped(finished, answer),
            _ => match self.agent.limits.max_tool_calls {
                Some(limit) if over_limit => {
                    Ending::Stopped(StopReason::ToolCallLimit { limit }, None)
                }
                _ => return Step::Continue,
            },
        };
        Step::Ended(ending)
    }

    /// The run's output, or its error, from how it ended. A typed run that ended without its
    /// output did not do what it was asked: [`RunError::NoOutput`].
    #[inline]
    pub(super) fn conclude(&mut self, ending: Ending) -> Result<RunOutput, RunError> {
        match ending {
            Ending::Stopped(reason, text) => match &mut self.output {
                Some(typed) if !typed.taken => Err(RunError::NoOutput {
                    stop_reason: reason,
                    attempts: std::mem::take(&mut typed.attempts),
                    messages: std::mem::take(&mut self.messages),
                    usage: self.usage,
                }),
                _ => Ok(self.finish(reason, text)),
            },
            Ending::Paused {
                pending,
                finished,
                over_limit,
            } => Ok(self.pause(pending, finished, over_limit)),
            Ending::Failed(step, source) => Err(RunError::Model {
                step,
                source,
                messages: std::mem::take(&mut self.messages),
                usage: self.usage,
            }),
            Ending::OutputRejected => Err(RunError::Output {
                attempts: self
                    .output
                    .as_mut()
                    .map(|output| std::mem::take(&mut output.attempts))
                    .unwrap_or_default(),
                messages: std::mem::take(&mut self.messages),
                usage: self.usage,
            }),
        }
    }

    /// The calls of the reply at `at` in the transcript.
    fn calls_at(&self, at: usize) -> &[ToolCall] {
        match self.messages.get(at) {
            Some(Message::Assistant(reply)) => &reply.tool_calls,
            _ => &[],
        }
    }

    /// The transcript after the reply at `at`: one result per call, in call order, each also
    /// sent to the stream. A call that still waits (the run stopped) is answered as not run.
    #[inline]
    fn record(&mut self, at: usize, slots: &mut Vec<Slot>) {
        for (slot, call) in slots.iter_mut().zip(self.calls_at(at)) {
            self.close(slot, call, NotRun::RunEnded);
        }
        for slot in slots.iter_mut() {
            // Every slot was answered above.
            if let Slot::Answered(result) = std::mem::replace(slot, Slot::Open(None)) {
                self.emit(|| LiveEvent::ToolResult(result.clone()));
                self.messages.push(Message::Tool(result));
            }
        }
        slots.clear();
    }

    /// The step when some of its calls wait: the reply at `at` stays in the transcript, the
    /// results of its other calls wait with them in the paused run.
    fn waiting(&mut self, at: usize, slots: &mut Vec<Slot>, over_limit: bool) -> Step {
        let mut pending = Vec::new();
        let mut finished = Vec::with_capacity(slots.len());
        for (slot, call) in slots.drain(..).zip(self.calls_at(at)) {
            match slot {
                Slot::Waiting(waiting) => pending.push(waiting),
                Slot::Answered(result) => finished.push(result),
                // Not reached: a step pauses only when no interruption dropped a call.
                open => finished.push(self.result(open, call, NotRun::RunEnded)),
            }
        }
        for result in &finished {
            self.emit(|| LiveEvent::ToolResult(result.clone()));
        }
        Step::Ended(Ending::Paused {
            pending,
            finished,
            over_limit,
        })
    }
}
