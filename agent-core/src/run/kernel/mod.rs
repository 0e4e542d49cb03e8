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
//! A paused run going on (`resume`) turns its decisions into rulings and carries them out the
//! same way. A feature the run does not use is skipped where its seam finds it absent (no hooks,
//! no journal, no typed output, nothing to interrupt).

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::time::{Duration, Instant};

use tracing::field::Empty;
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

mod answer;
mod calls;
mod interrupt;
mod model_call;
mod policy;
mod resume;

pub(crate) use resume::Resumption;

use super::agent::Agent;
use super::events::{EventSender, HandOver, LiveEvent};
use super::journal::Journal;
use super::outcome::{RunError, RunOutput, StopReason, TokenKind};
use super::pause::{PausedRun, PendingCall, Progress};
use crate::limits::AtStepLimit;
use crate::message::{AssistantMessage, Message, ToolResultMessage, Usage};
use crate::model::{FinishReason, ModelError};
use crate::output::OutputCheck;
use crate::settings::ModelSettings;
use crate::texts::NotRun;
use answer::{Output, Verdict};
use calls::Slot;
use interrupt::Interrupt;

/// `span`, if a subscriber wants it.
#[inline]
fn enabled(span: tracing::Span) -> Option<tracing::Span> {
    (!span.is_disabled()).then_some(span)
}

/// What one run brings besides the agent and its history.
pub(crate) struct RunPlan<'a, S> {
    /// The context the tools, hooks and approver are handed.
    pub(crate) context: &'a S,
    /// This run's settings, over the agent's.
    pub(crate) settings: Option<ModelSettings>,
    /// For a typed run, how its output is asked for and checked.
    pub(crate) output: Option<&'a dyn OutputCheck<S>>,
    /// For a paused run going on: where it was, and the decisions on its waiting calls. Boxed:
    /// every run's future carries the field, and few runs resume.
    pub(crate) resume: Option<Box<Resumption>>,
    /// For a durable run, where its model and tool calls are recorded.
    pub(crate) journal: Option<&'a dyn Journal>,
}

/// Runs `agent` on `messages` until it finishes, stops, fails or `cancel` (if any) completes.
// Not an `async fn`: the run is set up here and only the `Run` goes into the future, where an
// `async fn` would keep each argument (and a copy of it) beside it. The clock starts at the
// first poll, as it would in an `async fn`.
pub(crate) fn drive<'a, S: Send + Sync + 'static, C: Future<Output = ()> + Send>(
    agent: &'a Agent<S>,
    plan: RunPlan<'a, S>,
    messages: Vec<Message>,
    cancel: Option<C>,
    events: Option<EventSender>,
) -> impl Future<Output = Result<RunOutput, RunError>> + Send {
    let context = plan.context;
    let mut run = Run::new(agent, plan, messages, cancel.is_some(), events);
    async move {
        run.start_clock();
        let cancel = pin!(async move {
            match cancel {
                Some(cancel) => cancel.await,
                None => pending().await,
            }
        });
        let run_span = info_span!(
            "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "agent.steps" = Empty,
            "agent.stop_reason" = Empty,
        );
        // As `traced!`, keeping the span to record the run's figures in.
        let (mut outcome, span) = if let Some(span) = enabled(run_span) {
            let outcome = Box::pin(run.go(cancel)).instrument(span.clone()).await;
            (outcome, Some(span))
        } else {
            (run.go(cancel).await, None)
        };
        // A typed run that ended without its output did not do what it was asked.
        if let Some(output) = &mut run.output
            && !output.taken
            && let Ok(ended) = outcome
        {
            outcome = Err(RunError::NoOutput {
                stop_reason: ended.stop_reason,
                attempts: std::mem::take(&mut output.attempts),
                messages: ended.messages,
                usage: ended.usage,
            });
        }
        if let Some(span) = span {
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
        }
        for hook in &agent.hooks {
            hook.on_run_end(context, outcome.as_ref());
        }
        outcome
    }
}

/// One run in progress.
struct Run<'a, S> {
    agent: &'a Agent<S>,
    context: &'a S,
    /// The settings of the next model call.
    settings: ModelSettings,
    /// A typed run's output in the making (boxed: only typed runs have one).
    output: Option<Box<Output<'a, S>>>,
    messages: Vec<Message>,
    usage: Usage,
    step_usage: Vec<Usage>,
    /// Calls started so far (those over the limit are not counted: they never start).
    tool_calls: usize,
    /// When the time limit runs out, if the run has one (see `start_clock`).
    deadline: Option<Instant>,
    /// Whether anything can cut an await short: a cancel signal or a deadline.
    can_be_interrupted: bool,
    /// Where a streamed run sends its events; `None` for a plain run.
    events: Option<EventSender>,
    /// The first reason a hook gave to stop the run, set while the calls of a step run.
    stop_request: std::sync::OnceLock<String>,
    /// When this part of the run began, if it can pause (see `start_clock`).
    started: Option<Instant>,
    /// How long the run had run before this part (when resumed).
    elapsed_before: Duration,
    /// A paused run's decisions, settled before its next step.
    resume: Option<Box<Resumption>>,
    /// For a durable run, where its model and tool calls are recorded.
    journal: Option<&'a dyn Journal>,
    /// The places of a step's calls, kept from step to step (see [`Slot`]).
    slots: Vec<Slot>,
}

/// How a step ended.
enum Step {
    /// The model wants its results: go on.
    Continue,
    /// The run is over.
    End(StopReason, Option<String>),
    /// The model call failed.
    Failed(ModelError),
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

impl<'a, S: Send + Sync + 'static> Run<'a, S> {
    /// A run of `agent` on `messages` as `plan` says, before its first step: its settings, limits
    /// and, when resumed, what it had used. Its clock is started by `start_clock`.
    fn new(
        agent: &'a Agent<S>,
        plan: RunPlan<'a, S>,
        mut messages: Vec<Message>,
        cancellable: bool,
        events: Option<EventSender>,
    ) -> Self {
        let resumed = plan.resume.as_ref().map(|resume| &*resume.paused.0);
        // The run's own settings over the agent's, or over the paused run's when it goes on.
        let base = resumed.map_or(&agent.settings, |paused| &paused.settings);
        let mut settings = match plan.settings {
            Some(settings) => settings.or(base),
            None => base.clone(),
        };
        let output = plan
            .output
            .map(|check| Box::new(Output::new(check, agent, &mut settings, &mut messages)));
        // What a resumed run had used; room for a few steps in a new one.
        let (usage, step_usage, tool_calls) = match resumed {
            Some(paused) => (paused.usage, paused.step_usage.clone(), paused.tool_calls),
            None => (
                Usage::default(),
                Vec::with_capacity(agent.limits.max_steps.min(4)),
                0,
            ),
        };
        Run {
            agent,
            context: plan.context,
            settings,
            output,
            can_be_interrupted: cancellable || interrupt::time_limit(agent, plan.journal).is_some(),
            events,
            deadline: None,
            messages,
            usage,
            step_usage,
            tool_calls,
            stop_request: std::sync::OnceLock::new(),
            started: None,
            elapsed_before: plan
                .resume
                .as_ref()
                .map_or(Duration::ZERO, |resume| resume.paused.elapsed()),
            resume: plan.resume,
            journal: plan.journal,
            slots: Vec::new(),
        }
    }

    /// Starts the run's clock: its deadline, when it has a time limit (a resumed run's counts
    /// the time it had used), and its start, when it can pause (a paused run keeps how long it
    /// ran).
    fn start_clock(&mut self) {
        self.deadline = interrupt::time_limit(self.agent, self.journal)
            .map(|limit| Instant::now() + limit.saturating_sub(self.elapsed_before));
        if self.agent.tools.some_calls_wait() {
            self.started = Some(Instant::now());
        }
    }
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// The loop: a paused run's decisions first, then a step at a time up to the step limit.
    async fn go<C: Future<Output = ()> + Send>(
        &mut self,
        mut cancel: Pin<&mut C>,
    ) -> Result<RunOutput, RunError> {
        if let Some(resume) = self.resume.take()
            // Boxed: few runs resume, and every run's future would hold its room.
            && let Some(reason) = Box::pin(self.resume(resume, &mut cancel)).await
        {
            return Ok(self.finish(reason, None));
        }
        let max_steps = self.agent.limits.max_steps;
        for step in self.step_usage.len() + 1..=max_steps {
            // In a block of its own: the step's outcome is not kept across the hand-over.
            {
                self.emit(|| LiveEvent::StepStarted { step });
                let outcome = traced!(
                    self.step(step, Ask::Next, &mut cancel),
                    info_span!("step", "agent.step" = step)
                );
                let usage = self.step_usage.get(step - 1).copied().unwrap_or_default();
                self.emit(|| LiveEvent::StepFinished { step, usage });
                if let Some(ended) = self.ended(step, outcome) {
                    return ended;
                }
            }
            // A streamed run lets its reader see each step's events before the next step.
            if self.events.is_some() {
                HandOver::default().await;
            }
        }
        if self.agent.limits.at_step_limit == AtStepLimit::AskForFinalAnswer {
            let step = max_steps + 1;
            let outcome = Box::pin(self.step(step, Ask::FinalAnswer, &mut cancel)).await;
            if let Some(ended) = self.ended(step, outcome) {
                return ended;
            }
        }
        Ok(self.finish(StopReason::StepLimit { limit: max_steps }, None))
    }

    /// One step: ask the model, check its answer, rule on each call it made, carry the calls
    /// out, record what happened, and say whether the run goes on.
    async fn step<C: Future<Output = ()> + Send>(
        &mut self,
        step: usize,
        ask: Ask,
        cancel: &mut Pin<&mut C>,
    ) -> Step {
        if let Some(reason) = self.budget_spent() {
            return Step::End(reason, None);
        }
        // The reply is kept; the rest of the response is dropped here, so the step's future does
        // not hold it across the awaits below.
        let (mut reply, cut_off) = match self.ask_model(step, ask, cancel).await {
            Ok(Ok(response)) => {
                let cut_off = response.finish_reason == Some(FinishReason::Length);
                (response.message, cut_off)
            }
            Ok(Err(error)) => return Step::Failed(error),
            Err(interrupt) => return Step::End(self.interrupted(interrupt), None),
        };
        if ask == Ask::FinalAnswer && self.output.is_none() {
            // Offered no tools, it should call none; calls it makes anyway would stay unanswered.
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
        let answer = reply.tool_calls.is_empty().then(|| reply.content.clone());

        let mut slots = std::mem::take(&mut self.slots);
        let rulings = self.rule(&reply, cut_off, &verdict, ask, &mut slots);
        for call in &reply.tool_calls {
            self.emit(|| LiveEvent::ToolCallRequested(call.clone()));
        }
        // Boxed: the calls' futures are large, and every run's future would carry room for them.
        // A reply without calls (a run's last, most often) has nothing to carry out.
        let interrupted = if reply.tool_calls.is_empty() {
            None
        } else {
            Box::pin(self.carry_out(&reply.tool_calls, &mut slots, cancel)).await
        };
        self.tool_calls += rulings.counted;
        if let Some(output) = &mut self.output {
            output.correction = None;
        }
        let mut stop = interrupted.map(|interrupt| self.interrupted(interrupt));
        if let Some(reason) = self.stop_request.take() {
            stop = stop.or(Some(StopReason::Stopped { reason }));
        }
        let paused = stop.is_none() && slots.iter().any(Slot::waits);
        let paused = if paused {
            Some(self.waiting(reply, &mut slots, rulings.over_limit))
        } else {
            self.record(reply, &mut slots);
            None
        };
        self.slots = slots;
        if let Some(paused) = paused {
            return paused;
        }

        let limit = self.agent.limits.max_steps;
        let finished = match ask {
            Ask::Next => StopReason::Finished,
            Ask::FinalAnswer => StopReason::StepLimitAnswered { limit },
        };
        match (stop, verdict) {
            (Some(reason), _) => Step::End(reason, None),
            (None, Verdict::Taken { text }) => Step::End(finished, Some(text)),
            // The last try of a typed run ends it without an output.
            _ if ask == Ask::FinalAnswer && self.output.is_some() => {
                Step::End(StopReason::StepLimit { limit }, None)
            }
            (None, Verdict::Rejected) if self.output_retries_spent() => Step::OutputRejected,
            _ if answer.is_some() => Step::End(finished, answer),
            _ => match self.agent.limits.max_tool_calls {
                Some(limit) if rulings.over_limit => {
                    Step::End(StopReason::ToolCallLimit { limit }, None)
                }
                _ => Step::Continue,
            },
        }
    }

    /// How the run ends after `step` came to `outcome`: `None` if it goes on.
    #[inline]
    fn ended(&mut self, step: usize, outcome: Step) -> Option<Result<RunOutput, RunError>> {
        Some(match outcome {
            Step::Continue => return None,
            Step::End(reason, text) => Ok(self.finish(reason, text)),
            Step::Paused {
                pending,
                finished,
                over_limit,
            } => Ok(self.pause(pending, finished, over_limit)),
            Step::Failed(source) => Err(RunError::Model {
                step,
                source,
                messages: std::mem::take(&mut self.messages),
                usage: self.usage,
            }),
            Step::OutputRejected => Err(RunError::Output {
                attempts: self
                    .output
                    .as_mut()
                    .map(|output| std::mem::take(&mut output.attempts))
                    .unwrap_or_default(),
                messages: std::mem::take(&mut self.messages),
                usage: self.usage,
            }),
        })
    }

    /// The transcript: the reply first, then one result per call, in call order, each also
    /// sent to the stream. A call that still waits (the run stopped) is answered as not run.
    fn record(&mut self, reply: AssistantMessage, slots: &mut Vec<Slot>) {
        for (slot, call) in slots.iter_mut().zip(&reply.tool_calls) {
            self.close(slot, call, NotRun::RunEnded);
        }
        self.messages.reserve(1 + slots.len());
        self.messages.push(Message::Assistant(reply));
        for slot in slots.drain(..) {
            // Every slot was answered above.
            if let Slot::Answered(result) = slot {
                self.emit(|| LiveEvent::ToolResult(result.clone()));
                self.messages.push(Message::Tool(result));
            }
        }
    }

    /// The step when some of its calls wait: the reply goes into the transcript, the results of
    /// the others wait with them in the paused run.
    fn waiting(
        &mut self,
        reply: AssistantMessage,
        slots: &mut Vec<Slot>,
        over_limit: bool,
    ) -> Step {
        let mut pending = Vec::new();
        let mut finished = Vec::with_capacity(slots.len());
        for (slot, call) in slots.drain(..).zip(&reply.tool_calls) {
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
        self.messages.push(Message::Assistant(reply));
        Step::Paused {
            pending,
            finished,
            over_limit,
        }
    }

    /// Sends an event to the stream, if this run is streamed (the event is only made then).
    fn emit(&self, event: impl FnOnce() -> LiveEvent) {
        if let Some(events) = &self.events {
            // A receiver that went away just stops listening; the run goes on.
            events.send(event());
        }
    }

    /// The limit reached before the next model call, if any.
    fn budget_spent(&self) -> Option<StopReason> {
        let limits = &self.agent.limits;
        if let Some(limit) = limits.max_input_tokens
            && self.usage.input_tokens >= limit
        {
            return Some(StopReason::TokenLimit {
                kind: TokenKind::Input,
                limit,
                used: self.usage.input_tokens,
            });
        }
        if let Some(limit) = limits.max_output_tokens
            && self.usage.output_tokens >= limit
        {
            return Some(StopReason::TokenLimit {
                kind: TokenKind::Output,
                limit,
                used: self.usage.output_tokens,
            });
        }
        if self
            .deadline
            .is_some_and(|deadline| Instant::now() >= deadline)
        {
            return Some(self.interrupted(Interrupt::TimeLimit));
        }
        None
    }

    /// The run's output when it ends, with `text` or the texts' words for why it stopped.
    fn finish(&mut self, stop_reason: StopReason, text: Option<String>) -> RunOutput {
        let text = text.unwrap_or_else(|| {
            let texts = self.agent.tools.texts();
            match stop_reason {
                StopReason::StepLimit { limit } => texts.step_limit_reached(limit),
                _ => texts.run_stopped().to_owned(),
            }
        });
        RunOutput {
            text,
            messages: std::mem::take(&mut self.messages),
            steps: self.step_usage.len(),
            stop_reason,
            usage: self.usage,
            step_usage: std::mem::take(&mut self.step_usage),
            paused: None,
        }
    }

    /// The run's output when calls wait: the transcript up to the reply that made them, and the
    /// state to resume from (with the results of the reply's other calls).
    fn pause(
        &mut self,
        pending: Vec<PendingCall>,
        finished: Vec<ToolResultMessage>,
        over_tool_call_limit: bool,
    ) -> RunOutput {
        let ran_for = self
            .started
            .map_or(Duration::ZERO, |started| started.elapsed());
        let paused = PausedRun::new(
            self.messages.clone(),
            pending,
            finished,
            Progress {
                usage: self.usage,
                step_usage: self.step_usage.clone(),
                tool_calls: self.tool_calls,
                elapsed: self.elapsed_before + ran_for,
                settings: self.settings.clone(),
                over_tool_call_limit,
            },
        );
        let text = self.agent.tools.texts().run_paused().to_owned();
        let mut output = self.finish(StopReason::Paused, Some(text));
        output.paused = Some(paused);
        output
    }
}
