//! The agent loop (the reference loop's `runAgent`), with its limits, hooks, approval, tracing and
//! cancellation: ask the model, run the tools it asks for, feed the results back, stop when it
//! answers without tools or when something says stop.

use std::future::{Future, pending};
use std::pin::pin;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::{Either, join_all, select};
use tracing::field::Empty;
use tracing::{Instrument, info_span};

mod typed;

/// Awaits `$future` inside the span `$span` makes, or bare when the span is disabled (no subscriber
/// wants it): tracing's `Instrumented` costs a poll, a drop and a move of the future every time,
/// even then. A traced future is boxed, and a disabled span dropped before the await: either kept
/// inline would make room for itself in every run's future, at each level (run, step, tool call),
/// traced or not. `traced!(small: ..)` instruments a small future (a boxed one, say) in place, in a
/// span the caller keeps to record in afterwards.
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

/// `span`, if a subscriber wants it.
#[inline]
fn enabled(span: tracing::Span) -> Option<tracing::Span> {
    (!span.is_disabled()).then_some(span)
}

/// Awaits `$future` as `traced!` does, raced against the run's cancel signal and deadline when
/// it has either (returning the `Interrupt` from the enclosing function if one comes first; the
/// race is boxed, so it does not enlarge every run's future); with neither, the future is awaited
/// as it is: an `interruptible` layer around each model call cost 8% of a plain run's time.
macro_rules! raced {
    ($run:expr, $future:expr, $cancel:expr, $span:expr) => {
        if $run.can_be_interrupted {
            traced!(small: Box::pin($run.interruptible($future, $cancel)), $span)?
        } else {
            // Each future raced is small: a model's boxed reply, or the stream reader.
            traced!(small: $future, $span)
        }
    };
}

use super::agent::Agent;
use super::events::{EventSender, HandOver, LiveEvent};
use super::journal::Journal;
use super::outcome::{RunError, RunOutput, StopReason, TokenKind};
use super::pause::{Decision, PausedRun, PendingCall, Progress, Waiting};
use crate::content::Part;
use crate::limits::AtStepLimit;
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, ModelError};
use crate::output::{OutputCheck, OutputMode};
use crate::run::hooks::{Approval, ToolDecision};
use crate::settings::{ModelSettings, ToolChoice};
use crate::texts::NotRun;
use crate::tool::{ToolDef, ToolOutput};
use crate::tool_error::ToolError;
use crate::toolset::CallDecision;
use typed::{Output, Verdict};

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

/// A paused run and one decision per waiting call, checked against each other.
pub(crate) struct Resumption {
    pub(crate) paused: PausedRun,
    pub(crate) decisions: Vec<(PendingCall, Decision)>,
}

/// Runs `agent` on `messages` until it finishes, stops, fails or `cancel` (if any) completes.
// Not an `async fn`: the run is set up here and only the `Run` goes into the future, where an
// `async fn` would keep each argument (and a copy of it) beside it; every executor moves a run's
// future at least once. The clock starts at the first poll, as it would in an `async fn`.
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
        // A typed run that ended without its output did not do what it was asked. (Checked in
        // place: the common outcome is not moved through a match of its own.)
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
        match (&outcome, span) {
            (_, None) => {}
            (Ok(output), Some(span)) => {
                span.record("gen_ai.usage.input_tokens", output.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", output.usage.output_tokens);
                span.record("agent.steps", output.steps);
                span.record(
                    "agent.stop_reason",
                    tracing::field::debug(&output.stop_reason),
                );
            }
            (Err(error), Some(span)) => {
                span.record("agent.stop_reason", tracing::field::display(error));
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
    /// A typed run's output in the making (boxed: only typed runs have one, and every run's
    /// future would hold its room).
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
    /// Where a streamed run sends its events; `None` for a plain run, which then pays nothing.
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

/// What became of one call: answered, or waiting.
enum Called {
    Answered(ToolResultMessage),
    Waiting(PendingCall),
}

/// What became of a step's calls, in call order. Most steps make one call, which needs no `Vec`.
enum CallsDone {
    One(Called),
    Many(Vec<Called>),
}

impl CallsDone {
    fn iter(&self) -> std::slice::Iter<'_, Called> {
        match self {
            CallsDone::One(called) => std::slice::from_ref(called).iter(),
            CallsDone::Many(called) => called.iter(),
        }
    }

    /// All of them: a lone call is put in a `Vec` of its own (only rare paths take it so).
    fn into_vec(self) -> Vec<Called> {
        match self {
            CallsDone::One(called) => vec![called],
            CallsDone::Many(called) => called,
        }
    }
}

/// What the limits say of a step's calls, decided before any of them runs.
struct Refusals {
    /// Why the first call is not run (`None`: it runs).
    first: Option<NotRun<'static>>,
    /// The same for each call in call order; empty when the step runs its lone call in place.
    each: Vec<Option<NotRun<'static>>>,
    /// How many calls count against the tool-call limit (at most what it allows).
    counted: usize,
    /// Whether more were asked for than it allows.
    over_limit: bool,
}

/// Where the calls of a step (or of a resumed run's decisions) put their outcomes as each one
/// comes, in call order, so that what finished outlives an interruption of the rest.
struct Slots<T>(std::sync::Mutex<Vec<Option<T>>>);

impl<T> Slots<T> {
    fn new(calls: usize) -> Self {
        Slots(std::sync::Mutex::new(
            std::iter::repeat_with(|| None).take(calls).collect(),
        ))
    }

    fn fill(&self, index: usize, value: T) {
        let mut slots = self.0.lock().unwrap_or_else(|poison| poison.into_inner());
        slots[index] = Some(value);
    }

    fn into_inner(self) -> Vec<Option<T>> {
        self.0
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// Why something in flight was dropped.
#[derive(Clone, Copy)]
enum Interrupt {
    Cancelled,
    TimeLimit,
}

impl Interrupt {
    /// Why a call it dropped, or one that had not started, was not run.
    fn not_run(self) -> NotRun<'static> {
        match self {
            Interrupt::Cancelled => NotRun::Cancelled,
            Interrupt::TimeLimit => NotRun::TimeLimit,
        }
    }
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
        // A resumed run has used some of its time already.
        let elapsed_before = plan
            .resume
            .as_ref()
            .map_or(Duration::ZERO, |resume| resume.paused.elapsed());
        // The run's own settings over the agent's, or over the paused run's when it goes on.
        let base = match &plan.resume {
            Some(resume) => &resume.paused.0.settings,
            None => &agent.settings,
        };
        let mut settings = match plan.settings {
            Some(settings) => settings.or(base),
            None => base.clone(),
        };
        let output = plan
            .output
            .map(|check| Box::new(Output::new(check, agent, &mut settings, &mut messages)));
        // What a resumed run had used.
        let (usage, step_usage, tool_calls) = match &plan.resume {
            Some(resume) => (
                resume.paused.0.usage,
                resume.paused.0.step_usage.clone(),
                resume.paused.0.tool_calls,
            ),
            // Room for a few steps, grown as a longer run needs.
            None => (
                Usage::default(),
                Vec::with_capacity(agent.limits.max_steps.min(4)),
                0,
            ),
        };
        // Made whole in one expression, where it is returned: built field by field, the run was
        // copied out whole (256 bytes) on its way to the run's future.
        Run {
            agent,
            context: plan.context,
            settings,
            output,
            can_be_interrupted: cancellable || time_limit(agent, plan.journal).is_some(),
            events,
            deadline: None,
            messages,
            usage,
            step_usage,
            tool_calls,
            stop_request: std::sync::OnceLock::new(),
            started: None,
            elapsed_before,
            resume: plan.resume,
            journal: plan.journal,
        }
    }

    /// Starts the run's clock: its deadline, when it has a time limit (a resumed run's counts
    /// the time it had used), and its start, when it can pause (a paused run keeps how long it
    /// ran; a clock read costs a tenth of a run that answers at once).
    fn start_clock(&mut self) {
        self.deadline = self
            .time_limit()
            .map(|limit| Instant::now() + limit.saturating_sub(self.elapsed_before));
        if self.agent.tools.some_calls_wait() {
            self.started = Some(Instant::now());
        }
    }
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// The run's wall-clock limit (see [`time_limit`]).
    fn time_limit(&self) -> Option<Duration> {
        time_limit(self.agent, self.journal)
    }

    async fn go<C: Future<Output = ()> + Send>(
        &mut self,
        mut cancel: std::pin::Pin<&mut C>,
    ) -> Result<RunOutput, RunError> {
        let max_steps = self.agent.limits.max_steps;
        if let Some(resume) = self.resume.take()
            // Boxed, as are the other rare paths below: inline, each would enlarge every run's
            // future, which is moved as a whole on its way in.
            && let Some(reason) = Box::pin(self.settle(resume, &mut cancel)).await
        {
            return Ok(self.finish(reason, None));
        }
        for step in self.step_usage.len() + 1..=max_steps {
            // In a block of its own: the step's outcome is not kept across the hand-over.
            {
                self.emit(|| LiveEvent::StepStarted { step });
                let outcome = traced!(
                    self.step(step, &mut cancel),
                    info_span!("step", "agent.step" = step)
                );
                let usage = self.step_usage.get(step - 1).copied().unwrap_or_default();
                self.emit(|| LiveEvent::StepFinished { step, usage });
                if let Some(ended) = self.ended(step, outcome) {
                    return ended;
                }
            }
            if self.events.is_some() {
                HandOver::default().await;
            }
        }
        if self.agent.limits.at_step_limit == AtStepLimit::AskForFinalAnswer {
            return Box::pin(self.final_answer(max_steps, &mut cancel)).await;
        }
        Ok(self.finish(StopReason::StepLimit { limit: max_steps }, None))
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

    async fn step<C: Future<Output = ()> + Send>(
        &mut self,
        step: usize,
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> Step {
        if let Some(reason) = self.budget_spent() {
            return Step::End(reason, None);
        }
        // The reply is kept; the rest of the response is dropped here, so the step's future does
        // not hold it across the awaits below.
        let (reply, at_token_limit) = {
            let response = match self.ask_model(step, true, cancel).await {
                Ok(Ok(response)) => response,
                Ok(Err(error)) => return Step::Failed(error),
                Err(interrupt) => return Step::End(self.interrupted(interrupt), None),
            };
            let at_token_limit = response.finish_reason == Some(FinishReason::Length);
            (response.message, at_token_limit)
        };
        let called_tools = !reply.tool_calls.is_empty();
        if called_tools
            && self
                .settings
                .tool_choice
                .as_ref()
                .is_some_and(ToolChoice::forces_a_call)
        {
            // Forced once: the model has called a tool and must now be free to answer; with a
            // final-answer tool, its answer is a tool call, so one is still asked for.
            let answers_by_tool = self
                .output
                .as_ref()
                .is_some_and(|output| output.tool().is_some());
            self.settings.tool_choice = answers_by_tool.then_some(ToolChoice::Required);
        }
        if self.output.is_some() {
            match self.judge_output(&reply, at_token_limit) {
                Verdict::NoOutput => {}
                Verdict::Taken => {
                    let text = self.record_output(reply);
                    return Step::End(StopReason::Finished, Some(text));
                }
                Verdict::Rejected if self.output_retries_spent() => {
                    // Every call answered, none run: the transcript stays valid to go on with.
                    let results = Box::pin(self.answer_output_calls(&reply)).await;
                    self.messages.push(Message::Assistant(reply));
                    self.messages.extend(results.into_iter().map(Message::Tool));
                    return Step::OutputRejected;
                }
                Verdict::Rejected if !called_tools => {
                    let correction = self.take_correction();
                    self.messages.push(Message::Assistant(reply));
                    self.messages.push(Message::user(correction));
                    return Step::Continue;
                }
                // The final-answer calls are answered with the correction, the others run.
                Verdict::Rejected => {}
            }
        }
        if !called_tools {
            let text = reply.content.clone();
            self.messages.push(Message::Assistant(reply));
            return Step::End(StopReason::Finished, Some(text));
        }
        for call in &reply.tool_calls {
            self.emit(|| LiveEvent::ToolCallRequested(call.clone()));
        }

        let calls = &reply.tool_calls;
        // The common step, one call and nothing that can interrupt it, awaits the call in place:
        // boxing it cost an allocation a step. Otherwise boxed: the calls' futures are large, and
        // every step would move them.
        let in_place = calls.len() == 1 && !self.can_be_interrupted;
        let Refusals {
            first: first_refusal,
            each: refusals,
            counted,
            over_limit,
        } = self.refusals(&reply, at_token_limit, in_place);
        // The lone call in place; several, or any that can be interrupted, in a boxed future of
        // their own, so that their code (the race, the interruption) is not in every step's.
        let (called, mut stop) = if in_place {
            (
                CallsDone::One(self.call(&calls[0], first_refusal).await),
                None,
            )
        } else {
            Box::pin(self.call_all(calls, &refusals, cancel)).await
        };
        if let Some(reason) = self.stop_request.take() {
            stop = stop.or(Some(StopReason::Stopped { reason }));
        }
        if let Some(output) = &mut self.output {
            output.correction = None;
        }
        self.tool_calls += counted;
        let waiting = called
            .iter()
            .any(|called| matches!(called, Called::Waiting(_)));
        if waiting && stop.is_none() {
            let mut pending = Vec::new();
            let mut finished = Vec::with_capacity(called.iter().len());
            for called in called.into_vec() {
                match called {
                    Called::Answered(result) => finished.push(result),
                    Called::Waiting(call) => pending.push(call),
                }
            }
            for result in &finished {
                self.emit(|| LiveEvent::ToolResult(result.clone()));
            }
            self.messages.push(Message::Assistant(reply));
            return Step::Paused {
                pending,
                finished,
                over_limit,
            };
        }
        // The reply first, then one result per call, in call order.
        self.messages.reserve(1 + called.iter().len());
        self.messages.push(Message::Assistant(reply));
        match called {
            // The common step: one call, answered, recorded without awaiting anything.
            CallsDone::One(Called::Answered(result)) => self.record(result),
            // Boxed: held beside the reply, it would be the largest part of every step's future.
            called => Box::pin(self.record_all(called)).await,
        }
        match (stop, self.agent.limits.max_tool_calls) {
            (Some(reason), _) => Step::End(reason, None),
            (None, Some(limit)) if over_limit => {
                Step::End(StopReason::ToolCallLimit { limit }, None)
            }
            _ => Step::Continue,
        }
    }

    /// What the limits say of `reply`'s calls, and how many count against the tool-call limit:
    /// decided before any runs (`in_place`: only the lone call's is needed).
    fn refusals(&self, reply: &AssistantMessage, at_token_limit: bool, in_place: bool) -> Refusals {
        let calls = &reply.tool_calls;
        // The common step (no tool-call limit, no typed output, not cut off): every call runs,
        // decided without walking the calls.
        if self.agent.limits.max_tool_calls.is_none() && self.output.is_none() && !at_token_limit {
            return Refusals {
                first: None,
                each: if in_place {
                    Vec::new()
                } else {
                    vec![None; calls.len()]
                },
                counted: calls.len(),
                over_limit: false,
            };
        }
        let allowed = self
            .agent
            .limits
            .max_tool_calls
            .map_or(usize::MAX, |limit| limit.saturating_sub(self.tool_calls));
        // The tool-call limit counts the calls that would run: not those of the final-answer
        // tool, which only hand over the output (only a typed run pays for telling them apart).
        let output_calls = match &self.output {
            Some(_) => calls
                .iter()
                .filter(|call| self.is_output_call(call))
                .count(),
            None => 0,
        };
        // A call cut off at the token limit never starts either.
        let cut_off = cut_off_call(reply, at_token_limit);
        let counted = calls.len()
            - output_calls
            - usize::from(cut_off.is_some_and(|index| !self.is_output_call(&calls[index])));
        let within_limit = |index: usize, call: &ToolCall| {
            if output_calls == 0 {
                return index < allowed;
            }
            self.is_output_call(call)
                || calls[..index]
                    .iter()
                    .filter(|earlier| !self.is_output_call(earlier))
                    .count()
                    < allowed
        };
        let limit = self.agent.limits.max_tool_calls.unwrap_or_default();
        let refusal = |index: usize, call: &ToolCall| {
            if cut_off == Some(index) {
                Some(NotRun::CutOff)
            } else if within_limit(index, call) {
                None
            } else {
                Some(NotRun::ToolCallLimit(limit))
            }
        };
        let each = if in_place {
            Vec::new()
        } else {
            calls
                .iter()
                .enumerate()
                .map(|(index, call)| refusal(index, call))
                .collect()
        };
        Refusals {
            first: refusal(0, &calls[0]),
            each,
            counted: counted.min(allowed),
            over_limit: counted > allowed,
        }
    }

    /// Runs a step's calls (concurrently, unless one at a time is asked for or a journal records
    /// them in order), each with its refusal, raced against the cancel signal and the deadline:
    /// what they came to, and why the run stops if they were cut short.
    async fn call_all<C: Future<Output = ()> + Send>(
        &self,
        calls: &[ToolCall],
        refusals: &[Option<NotRun<'static>>],
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> (CallsDone, Option<StopReason>) {
        // Each call's outcome lands in its slot as soon as it is known, so that an interruption
        // drops only the calls still in flight: one that finished keeps its real result (its
        // effects happened, and the hooks saw it).
        let slots = Slots::new(calls.len());
        let slots_ref = &slots;
        let run_all =
            async {
                let each = calls.iter().zip(refusals).enumerate().map(
                    |(index, (call, refusal))| async move {
                        let called = self.call(call, *refusal).await;
                        slots_ref.fill(index, called);
                    },
                );
                // A journal records the calls in the order they run: one by one, in call order.
                if self.agent.concurrent_tools && calls.len() > 1 && self.journal.is_none() {
                    join_all(each).await;
                } else {
                    for call in each {
                        call.await;
                    }
                }
            };
        let stop = self.interruptible(run_all, cancel).await.err();
        let called = slots
            .into_inner()
            .into_iter()
            .zip(calls)
            .map(|(called, call)| {
                // Still in flight when the run was interrupted: dropped, so answered as not run.
                called.unwrap_or_else(|| {
                    let why = stop.map_or(NotRun::RunEnded, Interrupt::not_run);
                    Called::Answered(self.agent.tools.not_run(call, why))
                })
            })
            .collect();
        (
            CallsDone::Many(called),
            stop.map(|interrupt| self.interrupted(interrupt)),
        )
    }

    /// One more model call with no tools offered, for the best answer at the step limit.
    async fn final_answer<C: Future<Output = ()> + Send>(
        &mut self,
        limit: usize,
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> Result<RunOutput, RunError> {
        let step = limit + 1;
        let response = match self.ask_model(step, false, cancel).await {
            Ok(Ok(response)) => response,
            Ok(Err(source)) => {
                return Err(RunError::Model {
                    step,
                    source,
                    messages: std::mem::take(&mut self.messages),
                    usage: self.usage,
                });
            }
            Err(interrupt) => {
                let reason = self.interrupted(interrupt);
                return Ok(self.finish(reason, None));
            }
        };
        let at_token_limit = response.finish_reason == Some(FinishReason::Length);
        let mut reply = response.message;
        if self.output.is_some() {
            // One try only: a rejected output ends the run without one.
            if let Verdict::Taken = self.judge_output(&reply, at_token_limit) {
                let text = self.record_output(reply);
                return Ok(self.finish(StopReason::StepLimitAnswered { limit }, Some(text)));
            }
            // Every call answered, none run: the transcript stays valid to go on with.
            let results = self.answer_output_calls(&reply).await;
            self.messages.push(Message::Assistant(reply));
            self.messages.extend(results.into_iter().map(Message::Tool));
            return Ok(self.finish(StopReason::StepLimit { limit }, None));
        }
        // Offered no tools, it should call none; calls it makes anyway would stay unanswered.
        reply.tool_calls.clear();
        let text = reply.content.clone();
        self.messages.push(Message::Assistant(reply));
        Ok(self.finish(StopReason::StepLimitAnswered { limit }, Some(text)))
    }

    /// Calls the model (with or without the tools), observed by the hooks and traced.
    async fn ask_model<C: Future<Output = ()> + Send>(
        &mut self,
        step: usize,
        offer_tools: bool,
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> Result<Result<ChatResponse, ModelError>, Interrupt> {
        for hook in &self.agent.hooks {
            hook.on_model_request(self.context, step, &self.messages);
        }
        let span = info_span!(
            "chat",
            "gen_ai.operation.name" = "chat",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "gen_ai.response.finish_reasons" = Empty,
        );
        let output = self.output.as_ref();
        let output_tool = output.and_then(|output| output.tool());
        let tools = match (offer_tools, output_tool) {
            (true, None) => self.agent.tools.definitions(),
            (true, Some(_)) => output
                .and_then(|output| output.offered.as_deref())
                .unwrap_or_default(),
            (false, None) => &[][..],
            // The last call of a typed run: only the final-answer tool, and it must be called (set
            // on the run's settings, which no later call reads).
            (false, Some(tool)) => {
                self.settings.tool_choice = Some(ToolChoice::Tool(tool.name.clone()));
                std::slice::from_ref(tool)
            }
        };
        let mut request = ChatRequest::new(&self.messages, tools).with_settings(&self.settings);
        if let Some(output) = output
            && output.check.mode() == OutputMode::Native
        {
            request = request.with_response_format(&output.check.shape().format);
        }
        let response = match (self.events, self.journal) {
            (_, Some(journal)) => {
                let reply = journal.model_call(step, Box::pin(self.agent.model.chat(request)));
                raced!(self, reply, cancel, span)
            }
            (Some(events), None) => {
                let stream = self.agent.model.chat_stream(request.with_deltas_only());
                raced!(self, streamed_reply(stream, events), cancel, span)
            }
            (None, None) => raced!(self, self.agent.model.chat(request), cancel, span),
        };
        if let Ok(response) = &response {
            if !span.is_disabled() {
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                if let Some(reason) = &response.finish_reason {
                    span.record(
                        "gen_ai.response.finish_reasons",
                        tracing::field::debug(reason),
                    );
                }
            }
            self.usage += response.usage;
            self.step_usage.push(response.usage);
            for hook in &self.agent.hooks {
                hook.on_model_response(self.context, step, response);
            }
        }
        Ok(response)
    }

    /// Runs one call through the hooks, the approver and the dispatcher, or answers it with why
    /// it was not run (`refusal`: past the tool-call limit, cut off at the token limit).
    async fn call(&self, call: &ToolCall, refusal: Option<NotRun<'static>>) -> Called {
        if let Some(output) = &self.output
            && output.is_output_call(call)
        {
            // A rejected output: the model reads why.
            let correction = output.correction.clone().unwrap_or_default();
            let rejected = Err(ToolError::AnswerRejected { correction });
            let result = self.agent.tools.result_message(call, rejected);
            self.observe(call, &result, None);
            return Called::Answered(result);
        }
        // As `traced!`, keeping the span to record an error in.
        if let Some(span) = enabled(tool_span(call)) {
            let called = Box::pin(self.call_inner(call, refusal))
                .instrument(span.clone())
                .await;
            if let Called::Answered(result) = &called
                && result.is_error
            {
                span.record("error.type", "tool_error");
            }
            return called;
        }
        self.call_inner(call, refusal).await
    }

    async fn call_inner(&self, call: &ToolCall, refusal: Option<NotRun<'static>>) -> Called {
        let tools = &self.agent.tools;
        if let Some(why) = refusal {
            let result = tools.not_run(call, why);
            self.observe(call, &result, None);
            return Called::Answered(result);
        }
        tracing::debug!(arguments = %call.arguments, "tool call");
        let tool = tools.get(&call.name);
        let definition = tool.map(|tool| tool.definition());
        let steered = definition.is_some_and(|definition| {
            definition.annotations.requires_approval || definition.annotations.external
        });
        let called = if self.agent.hooks.is_empty() && !steered {
            match self.journal {
                None => Called::Answered(tools.run_call(tool, self.context, call).await),
                // Boxed, so the common path's future stays small.
                Some(_) => Called::Answered(Box::pin(self.execute(call, CallDecision::Run)).await),
            }
        } else {
            // Boxed, so the common path's future stays small.
            Box::pin(self.steered_call(call, definition)).await
        };
        if let Called::Answered(result) = &called {
            tracing::debug!(is_error = result.is_error, content = %result.content, "tool result");
        }
        called
    }

    /// A call with hooks to ask and, if its tool needs it, an approver or the caller: decide, then
    /// execute or wait.
    async fn steered_call(&self, call: &ToolCall, definition: Option<&ToolDef>) -> Called {
        let started = Instant::now();
        let mut rewritten: Option<ToolCall> = None;
        let mut refusal: Option<String> = None;
        for hook in &self.agent.hooks {
            let current = rewritten.as_ref().unwrap_or(call);
            match hook
                .before_tool_call(self.context, current, definition)
                .await
            {
                ToolDecision::Run => continue,
                ToolDecision::RunWith { arguments } => {
                    rewritten = Some(ToolCall {
                        arguments,
                        ..current.clone()
                    });
                    continue;
                }
                ToolDecision::Skip { reason } => refusal = Some(reason),
                ToolDecision::Stop { reason } => {
                    // The first stop asked for is the one reported.
                    let _ = self.stop_request.set(reason.clone());
                    refusal = Some(reason);
                }
            }
            break;
        }
        let run = match &rewritten {
            Some(rewritten) => CallDecision::RunWith {
                arguments: &rewritten.arguments,
            },
            None => CallDecision::Run,
        };
        let call_to_run = rewritten.as_ref().unwrap_or(call);
        // Outlives the decision, which may borrow the approver's reason.
        let approval;
        let decision = if let Some(reason) = &refusal {
            CallDecision::NotRun(NotRun::Skipped(reason))
        } else if definition.is_some_and(|definition| definition.annotations.external) {
            match self.wait(call_to_run, Waiting::Result) {
                Ok(waiting) => return waiting,
                Err(why) => CallDecision::NotRun(why),
            }
        } else if let Some(definition) =
            definition.filter(|definition| definition.annotations.requires_approval)
        {
            match &self.agent.approver {
                None => CallDecision::NotRun(NotRun::NoApprover),
                Some(approver) => {
                    approval = approver
                        .approve(self.context, call_to_run, definition)
                        .await;
                    match &approval {
                        Approval::Approved => run,
                        Approval::Denied { reason } => {
                            CallDecision::NotRun(NotRun::Denied(reason.as_deref()))
                        }
                        Approval::Defer => match self.wait(call_to_run, Waiting::Approval) {
                            Ok(waiting) => return waiting,
                            Err(why) => CallDecision::NotRun(why),
                        },
                    }
                }
            }
        } else {
            run
        };
        let result = self.execute(call, decision).await;
        self.observe(call, &result, Some(started));
        Called::Answered(result)
    }

    /// Executes a call as decided; one that runs goes through the journal, if the run has one.
    async fn execute(&self, call: &ToolCall, decision: CallDecision<'_>) -> ToolResultMessage {
        let tools = &self.agent.tools;
        let runs = !matches!(decision, CallDecision::NotRun(_));
        match self.journal {
            Some(journal) if runs => {
                let definition = tools.get(&call.name).map(|tool| tool.definition());
                let execute = tools.execute(self.context, call, decision);
                match journal.tool_call(call, definition, Box::pin(execute)).await {
                    Ok(result) => result,
                    Err(error) => tools.result_message(call, Err(error)),
                }
            }
            _ => tools.execute(self.context, call, decision).await,
        }
    }

    /// A call's result: its own, or for a call that would wait, `why` it was not run.
    async fn answered(&self, called: Called, why: NotRun<'static>) -> ToolResultMessage {
        match called {
            Called::Answered(result) => result,
            Called::Waiting(pending) => {
                let decision = CallDecision::NotRun(why);
                let result = self
                    .agent
                    .tools
                    .execute(self.context, &pending.call, decision);
                result.await
            }
        }
    }

    /// Puts a call's result in the transcript (and the stream).
    fn record(&mut self, result: ToolResultMessage) {
        self.emit(|| LiveEvent::ToolResult(result.clone()));
        self.messages.push(Message::Tool(result));
    }

    /// Puts the calls' results in the transcript, in call order. The run ends here if a call
    /// waits: it is answered, so the transcript holds.
    async fn record_all(&mut self, called: CallsDone) {
        for called in called.into_vec() {
            let result = match called {
                Called::Answered(result) => result,
                // Boxed: this rare path would otherwise enlarge every step's future.
                waiting => Box::pin(self.answered(waiting, NotRun::RunEnded)).await,
            };
            self.record(result);
        }
    }

    /// A call that waits, or why it cannot: a typed run does not pause.
    fn wait(&self, call: &ToolCall, waits_for: Waiting) -> Result<Called, NotRun<'static>> {
        if self.output.is_some() {
            return Err(NotRun::CannotWait);
        }
        Ok(Called::Waiting(PendingCall {
            call: call.clone(),
            waits_for,
        }))
    }

    /// Shows a result to the hooks, with how long the call took when it ran.
    fn observe(&self, call: &ToolCall, result: &ToolResultMessage, started: Option<Instant>) {
        let elapsed = started.map_or(Duration::ZERO, |started| started.elapsed());
        for hook in &self.agent.hooks {
            hook.on_tool_result(self.context, call, result, elapsed);
        }
    }

    /// Sends an event to the stream, if this run is streamed (the event is only made then).
    fn emit(&self, event: impl FnOnce() -> LiveEvent) {
        if let Some(events) = &self.events {
            // A receiver that went away just stops listening; the run goes on.
            events.send(event());
        }
    }

    /// Runs `work` unless the run is cancelled or its time runs out first.
    async fn interruptible<T, C: Future<Output = ()> + Send>(
        &self,
        work: impl Future<Output = T>,
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> Result<T, Interrupt> {
        if !self.can_be_interrupted {
            return Ok(work.await);
        }
        let deadline = self.deadline;
        let time_up = pin!(async move {
            match deadline {
                Some(deadline) => {
                    futures_timer::Delay::new(deadline.saturating_duration_since(Instant::now()))
                        .await;
                }
                None => pending().await,
            }
        });
        let work = pin!(work);
        match select(work, select(cancel.as_mut(), time_up)).await {
            Either::Left((value, _)) => Ok(value),
            Either::Right((Either::Left(_), _)) => Err(Interrupt::Cancelled),
            Either::Right((Either::Right(_), _)) => Err(Interrupt::TimeLimit),
        }
    }

    fn interrupted(&self, interrupt: Interrupt) -> StopReason {
        match interrupt {
            Interrupt::Cancelled => StopReason::Cancelled,
            Interrupt::TimeLimit => StopReason::TimeLimit {
                limit: self.agent.limits.time_limit.unwrap_or_default(),
            },
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
        let paused = PausedRun::new(
            self.messages.clone(),
            pending,
            finished,
            Progress {
                usage: self.usage,
                step_usage: self.step_usage.clone(),
                tool_calls: self.tool_calls,
                elapsed: self.elapsed_before
                    + self
                        .started
                        .map_or(Duration::ZERO, |started| started.elapsed()),
                settings: self.settings.clone(),
                over_tool_call_limit,
            },
        );
        let text = self.agent.tools.texts().run_paused().to_owned();
        let mut output = self.finish(StopReason::Paused, Some(text));
        output.paused = Some(paused);
        output
    }

    /// Answers a paused run's waiting calls as decided (running the approved ones), then puts
    /// every result of the reply in call order into the transcript. A cancellation or the time
    /// limit while the approved calls run ends the run, every call answered.
    async fn settle<C: Future<Output = ()> + Send>(
        &mut self,
        resume: Box<Resumption>,
        cancel: &mut std::pin::Pin<&mut C>,
    ) -> Option<StopReason> {
        let Resumption { paused, decisions } = *resume;
        let this = &*self;
        let tools = &this.agent.tools;
        let context = this.context;
        // As in a step: each result lands in its slot when known, so an interruption drops only
        // the approved calls still running; a denial, a caller's result and a call that finished
        // keep their answers.
        let slots = Slots::new(decisions.len());
        let slots_ref = &slots;
        let decided = decisions
            .iter()
            .enumerate()
            .map(|(index, (pending, decision))| async move {
                let call = &pending.call;
                let started = Instant::now();
                let result = match decision {
                    Decision::Approve => this.execute(call, CallDecision::Run).await,
                    Decision::ApproveWith { arguments } => {
                        let decision = CallDecision::RunWith { arguments };
                        this.execute(call, decision).await
                    }
                    Decision::Deny { reason } => {
                        let decision = CallDecision::NotRun(NotRun::Denied(reason.as_deref()));
                        tools.execute(context, call, decision).await
                    }
                    Decision::Result {
                        content,
                        parts,
                        is_error,
                    } => tools.result_message(call, external_outcome(content, parts, *is_error)),
                };
                this.observe(call, &result, Some(started));
                slots_ref.fill(index, result);
            });
        // As the step's calls would have run: at once, or one by one for an agent that asks so.
        let run_all = async {
            if this.agent.concurrent_tools && this.journal.is_none() {
                join_all(decided).await;
            } else {
                for call in decided {
                    call.await;
                }
            }
        };
        let interrupted = this.interruptible(run_all, cancel).await.err();
        let mut decided: Vec<ToolResultMessage> = slots
            .into_inner()
            .into_iter()
            .zip(&decisions)
            .map(|(result, (pending, _))| {
                result.unwrap_or_else(|| {
                    let why = interrupted.map_or(NotRun::RunEnded, Interrupt::not_run);
                    tools.not_run(&pending.call, why)
                })
            })
            .collect();
        let stop = interrupted.map(|interrupt| self.interrupted(interrupt));
        for result in &decided {
            self.emit(|| LiveEvent::ToolResult(result.clone()));
        }
        // Every call of the reply, answered in the order the model made them.
        let mut finished = paused.0.finished;
        finished.append(&mut decided);
        let order: Vec<&str> = match paused.0.messages.last() {
            Some(Message::Assistant(reply)) => reply
                .tool_calls
                .iter()
                .map(|call| call.id.as_str())
                .collect(),
            _ => Vec::new(),
        };
        finished.sort_by_key(|result| {
            order
                .iter()
                .position(|id| *id == result.tool_call_id)
                .unwrap_or(usize::MAX)
        });
        self.messages = paused.0.messages;
        self.messages
            .extend(finished.into_iter().map(Message::Tool));
        // The step that paused asked for more calls than allowed: it ends the run, as it would have.
        stop.or_else(|| {
            let limit = self.agent.limits.max_tool_calls?;
            paused
                .0
                .over_tool_call_limit
                .then_some(StopReason::ToolCallLimit { limit })
        })
    }
}

/// A run's wall-clock limit. A journaled run has none: replayed from its journal, it would fire
/// at another point than in the first run.
fn time_limit<S>(agent: &Agent<S>, journal: Option<&dyn Journal>) -> Option<Duration> {
    agent.limits.time_limit.filter(|_| journal.is_none())
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

/// The place of the call a reply was cut off in: at the output token limit (the finish reason
/// [`FinishReason::Length`]), its last call, when that call's arguments are not whole JSON. Such a
/// call is answered with [`NotRun::CutOff`] rather than run, or parsed as if the model had written
/// bad arguments. An empty argument text means `{}`, here as everywhere: that call runs.
fn cut_off_call(reply: &AssistantMessage, at_token_limit: bool) -> Option<usize> {
    if !at_token_limit {
        return None;
    }
    let last = reply.tool_calls.len().checked_sub(1)?;
    let arguments = reply.tool_calls[last].arguments.trim();
    let unfinished =
        !arguments.is_empty() && serde_json::from_str::<serde::de::IgnoredAny>(arguments).is_err();
    unfinished.then_some(last)
}

/// Reads a streamed reply to its end, passing text on as it arrives; the reply is the one in
/// [`StreamEvent::Finished`]. A stream that ends without it is an error, never a half-built reply.
async fn streamed_reply(
    mut stream: BoxStream<'_, Result<StreamEvent, ModelError>>,
    events: EventSender,
) -> Result<ChatResponse, ModelError> {
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(text) => {
                events.send(LiveEvent::TextDelta(text));
            }
            StreamEvent::ReasoningDelta(text) => {
                events.send(LiveEvent::ReasoningDelta(text));
            }
            StreamEvent::Finished(response) => return Ok(response),
            _ => {}
        }
    }
    Err(ModelError::Stream {
        message: "the stream ended before the reply was finished".to_owned(),
    })
}

/// What became of an external call, as the caller answered it: its text and parts, or its
/// error (which has no parts: [`PendingCall::check`] refuses an error with parts).
fn external_outcome(
    content: &str,
    parts: &[Part],
    is_error: bool,
) -> Result<ToolOutput, ToolError> {
    if is_error {
        return Err(ToolError::failed(content));
    }
    if parts.is_empty() {
        return Ok(ToolOutput::Text(content.to_owned()));
    }
    let text = Part::Text {
        text: content.to_owned(),
    };
    Ok(ToolOutput::Parts(
        std::iter::once(text).chain(parts.iter().cloned()).collect(),
    ))
}
