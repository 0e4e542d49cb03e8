//! The kernel of a run (the reference loop's `runAgent`): one small loop over the seams
//! ([`seams`](crate::seams)). A step asks the model through the model-call layers, has the
//! answer check read the reply, has the call policies rule on its calls, carries them out
//! through the dispatcher, and records what happened in the transcript, until the answer check
//! takes an answer or something says stop. The loop knows no feature by name: each is a value
//! at a seam.
//!
//! - `run_state`: the run's state, how it starts, and how it ends (its output, a pause, a drop);
//! - `ask`: the model call through the layers, its usage counted;
//! - `calls`: the policies' rulings on a reply and on each call, the calls carried out (in
//!   order, or at once) and their results in call order;
//! - `interrupt`: the cancel signal and the time limit each await is raced against;
//! - `resume`: a paused run's decisions carried out before its first step.

mod ask;
mod calls;
mod interrupt;
mod resume;
mod run_state;

pub(crate) use resume::Resumption;
pub(crate) use run_state::{CheckHeld, RunSetup, Seams};

use std::future::Future;

use tracing::field::Empty;
use tracing::{Instrument, info_span};

use crate::limits::AtStepLimit;
use crate::message::Message;
use crate::model::{FinishReason, ModelError};
use crate::reasons::not_run::NotRun;
use crate::run::agent::Agent;
use crate::run::events::{HandOver, LiveEvent};
use crate::run::outcome::{RunError, RunOutput, StopReason};
use crate::run::seams::{Judgement, Reviewed};
use crate::run::tree::Family;
use run_state::Run;

/// How a step ended.
enum Step {
    /// The model wants its results: go on.
    Continue,
    /// The run is over.
    Ended(Ending),
}

/// How a run ended, before its output is made.
enum Ending {
    /// Finished or stopped, with its answer or none.
    Stopped(StopReason, Option<String>),
    /// The model call of step `.0` failed.
    Failed(usize, ModelError),
    /// The answer check gave up on the model's answers.
    GaveUp,
    /// The transcript could not be kept, or the run could not go on: this error.
    Error(RunError),
    /// Calls wait for a person or the caller: the run pauses, with this output (boxed: few runs
    /// pause, and every step's outcome would carry its room).
    Paused(Box<RunOutput>),
}

/// Runs `agent` as `setup` says until it finishes, stops, fails, pauses or is cancelled, inside
/// the run's span; its hooks are told how it ended (also when its future is dropped first). The
/// run is made here and moved into the future, which then holds it alone, not `setup` too.
pub(crate) fn drive<'r, S: Send + Sync + 'static>(
    agent: &'r Agent<S>,
    setup: RunSetup<'r, S>,
) -> impl Future<Output = Result<RunOutput, RunError>> + Send + 'r {
    let mut run = Run::new(agent, setup);
    async move {
        let span = info_span!(
            "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "agent.steps" = Empty,
            "agent.stop_reason" = Empty,
        );
        let ending = run.go().instrument(span.clone()).await;
        let mut outcome = run.conclude(ending);
        // The hooks see the runs its calls started, as its caller will.
        if let (Ok(output), Some(family)) = (&mut outcome, Family::of(&run.scope)) {
            output.children = family.so_far(&output.messages);
        }
        match &outcome {
            Ok(output) => {
                span.record("gen_ai.usage.input_tokens", output.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", output.usage.output_tokens);
                span.record("agent.steps", output.steps);
                let reason = tracing::field::debug(&output.stop_reason);
                span.record("agent.stop_reason", reason);
            }
            Err(error) => {
                span.record("agent.stop_reason", tracing::field::display(error));
            }
        }
        run.tell_end(outcome.as_ref());
        outcome
    }
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// The loop: a paused run's decisions first, then a step at a time up to the step limit, and
    /// at the limit, if the agent asks for it, one last step for a final answer.
    async fn go(&mut self) -> Ending {
        // The run's input first passes the guards that check it (a rewrite is what the run
        // starts from); a trip ends the run before its first step.
        if std::mem::take(&mut self.check_input)
            && let Some(guards) = &self.guards
            && let Some(checking) = guards.check_input(&mut self.messages)
            && checking.await.is_some()
        {
            return Ending::Stopped(StopReason::Cancelled, None);
        }
        // Boxed: few runs resume, and the run's future would otherwise keep room for it.
        if let Some(resume) = self.resume.take()
            && let Some(ending) = Box::pin(self.resume(*resume)).await
        {
            return ending;
        }
        let limit = self.agent.limits.max_steps;
        let last = match self.agent.limits.at_step_limit {
            AtStepLimit::AskForFinalAnswer => limit + 1,
            _ => limit,
        };
        let first = self.tally.step_usage.len() + 1;
        for step in first..=last {
            // A streamed run lets its reader see each step's events before the next step.
            if step > first && self.events.is_some() {
                HandOver::default().await;
            }
            self.emit(|| LiveEvent::StepStarted { step });
            let span = info_span!("step", "agent.step" = step);
            let outcome = self.step(step, step > limit).instrument(span).await;
            self.emit(|| LiveEvent::StepFinished {
                step,
                usage: self.tally.step_usage.last().copied().unwrap_or_default(),
                model: self.tally.step_models.get(step - 1).cloned().flatten(),
            });
            if let Step::Ended(ending) = outcome {
                return ending;
            }
        }
        Ending::Stopped(StopReason::StepLimit { limit }, None)
    }

    /// One step: ask the model, have the answer check read the reply, rule on its calls and
    /// carry them out, record what happened, and say whether the run goes on. `last_try`: the
    /// step past the limit that asks for a final answer.
    async fn step(&mut self, step: usize, last_try: bool) -> Step {
        // The time limit, or a policy, may end the run before its next model call.
        if let Some(reason) = self.stop_before(step) {
            // A policy may have the run wait here, before its model call (a budget a person
            // raises).
            if reason == StopReason::Paused && self.can_pause {
                let paused = self.paused(Vec::new(), Vec::new(), Vec::new(), false);
                return Step::Ended(self.paused_with(paused).await);
            }
            return Step::Ended(Ending::Stopped(reason, None));
        }
        let (mut reply, cut_off) = match self.ask(step, last_try).await {
            Ok(Ok(response)) => {
                let cut_off = response.finish_reason == Some(FinishReason::Length);
                (response.message, cut_off)
            }
            Ok(Err(error)) => return Step::Ended(Ending::Failed(step, error)),
            Err(interrupt) => return Step::Ended(Ending::Stopped(interrupt.stop_reason(), None)),
        };
        let judgement = self
            .seams
            .check
            .judge(self.context, &mut reply, cut_off, last_try);
        // A second look, which may take time (the guards on the answer).
        let judgement = {
            let review = (self.seams.check).review(self.context, &mut reply, judgement, last_try);
            match review {
                Reviewed::Now(judgement) => judgement,
                Reviewed::Later(review) => match self.interruption.race(review).await {
                    Ok(judgement) => judgement,
                    Err(interrupt) => {
                        return Step::Ended(Ending::Stopped(interrupt.stop_reason(), None));
                    }
                },
            }
        };
        if let Judgement::Retry(correction) = &judgement
            && reply.tool_calls.is_empty()
            && !last_try
        {
            // A rejected answer in text: the correction goes back as the user's next message.
            let correction = self.agent.tools.wording().cut_to_limit(correction.clone());
            self.messages.push(Message::Assistant(reply));
            self.messages.push(Message::user(correction));
            return Step::Continue;
        }
        // Nothing more runs once the run ends with this reply.
        let ends = match &judgement {
            Judgement::Answer(_) => Some(NotRun::AnswerGiven),
            Judgement::GiveUp => Some(NotRun::RunEnded),
            _ if last_try => Some(NotRun::RunEnded),
            _ => None,
        };
        // A reply without calls has nothing to rule on or carry out. One with calls carries them
        // out in a box of its own: a run waiting for its model holds no room for them.
        let carried = if reply.tool_calls.is_empty() {
            self.record(reply).await
        } else {
            Box::pin(self.carry_out(step, reply, cut_off, &judgement, ends)).await
        };
        let carried = match carried {
            Ok(carried) => carried,
            Err(ending) => return Step::Ended(ending),
        };
        let stop = carried.stop.or_else(|| {
            let reason = self.stop_request.take()?;
            Some(StopReason::Stopped { reason })
        });
        let ending = match (stop, judgement) {
            (Some(reason), _) => Ending::Stopped(reason, None),
            (None, Judgement::Answer(text)) => {
                let limit = self.agent.limits.max_steps;
                let reason = match last_try {
                    true => StopReason::StepLimitAnswered { limit },
                    false => StopReason::Finished,
                };
                Ending::Stopped(reason, Some(text))
            }
            (None, Judgement::GiveUp) => Ending::GaveUp,
            (None, _) if last_try => {
                let limit = self.agent.limits.max_steps;
                Ending::Stopped(StopReason::StepLimit { limit }, None)
            }
            (None, _) => match carried.stop_after {
                Some(reason) => Ending::Stopped(reason, None),
                None => return Step::Continue,
            },
        };
        Step::Ended(ending)
    }

    /// The run's output, or its error, from how it ended. A run whose answer check wanted an
    /// answer and got none did not do what it was asked: [`RunError::NoOutput`].
    fn conclude(&mut self, ending: Ending) -> Result<RunOutput, RunError> {
        let usage = self.used();
        // A guard tripped (here, or in another run of the tree): whatever the loop saw of it (an
        // interruption), the run fails with the trip.
        if let Some(trip) = (self.tripwire.as_ref()).and_then(|tripwire| tripwire.tripped())
            && !matches!(ending, Ending::Error(_))
        {
            return Err(RunError::Tripped {
                trip: Box::new(trip.clone()),
                messages: std::mem::take(&mut self.messages),
                usage,
            });
        }
        match ending {
            Ending::Stopped(reason, text) => match self.seams.check.unanswered(false) {
                Some(attempts) => Err(RunError::NoOutput {
                    stop_reason: reason,
                    attempts,
                    messages: std::mem::take(&mut self.messages),
                    usage,
                }),
                None => Ok(self.finish(reason, text)),
            },
            Ending::Paused(output) => Ok(*output),
            Ending::Failed(step, source) => Err(RunError::Model {
                step,
                source,
                messages: std::mem::take(&mut self.messages),
                usage,
            }),
            Ending::GaveUp => Err(RunError::Output {
                attempts: self.seams.check.unanswered(true).unwrap_or_default(),
                messages: std::mem::take(&mut self.messages),
                usage,
            }),
            Ending::Error(error) => Err(error),
        }
    }
}
