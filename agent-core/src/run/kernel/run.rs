//! One run's state and its life around the loop: what a run brings (`RunPlan`), the `Run` it
//! becomes, how it is driven from its first poll to its end (`drive`: the run's span, the hooks'
//! last word), and how it ends: finished, stopped or paused.

use std::future::{Future, pending};
use std::pin::{Pin, pin};
use std::time::{Duration, Instant};

use futures_util::future::Either;
use tracing::field::Empty;
use tracing::{Instrument, info_span};

use super::answer::Output;
use super::interrupt::{self, Interrupt};
use super::{Resumption, enabled};
use crate::call_info::RunId;
use crate::message::{Message, ToolResultMessage, Usage};
use crate::output::OutputCheck;
use crate::run::agent::Agent;
use crate::run::events::{EventSender, LiveEvent};
use crate::run::journal::Journal;
use crate::run::outcome::{RunError, RunOutput, StopReason, TokenKind};
use crate::run::pause::{PausedRun, PendingCall, Progress};
use crate::settings::ModelSettings;

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
    /// The run's id, which its tools may ask for ([`CallInfo`](crate::CallInfo)).
    pub(crate) run_id: RunId,
}

/// Runs `agent` on `messages` until it finishes, stops, fails or `cancel` (if any) completes.
// Not an `async fn`: the run is set up here and only the `Run` goes into the future, where an
// `async fn` would keep each argument (and a copy of it) beside it. The clock starts at the
// first poll, as it would in an `async fn`. Inlined, with `Run::new`, so that a caller that boxes
// the future (`boxed`) makes the run in its box.
#[inline(always)]
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
        let cancel = pin!(match cancel {
            Some(cancel) => Either::Left(cancel),
            None => Either::Right(pending()),
        });
        let run_span = info_span!(
            "invoke_agent",
            "gen_ai.operation.name" = "invoke_agent",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "agent.steps" = Empty,
            "agent.stop_reason" = Empty,
        );
        // As `traced!`: a run no subscriber wants a span of keeps none in its future.
        let outcome = if let Some(span) = enabled(run_span) {
            Box::pin(run.go_traced(cancel, span)).await
        } else {
            let ending = run.go(cancel).await;
            run.conclude(ending)
        };
        for hook in &agent.hooks {
            hook.on_run_end(context, outcome.as_ref());
        }
        outcome
    }
}

/// One run in progress.
pub(super) struct Run<'a, S> {
    pub(super) agent: &'a Agent<S>,
    pub(super) context: &'a S,
    /// The settings of the next model call.
    pub(super) settings: ModelSettings,
    /// A typed run's output in the making (boxed: only typed runs have one).
    pub(super) output: Option<Box<Output<'a, S>>>,
    pub(super) messages: Vec<Message>,
    pub(super) usage: Usage,
    pub(super) step_usage: Vec<Usage>,
    /// The model that answered each step (see [`RunOutput::step_models`]).
    pub(super) step_models: Vec<Option<String>>,
    /// Calls started so far (those over the limit are not counted: they never start).
    pub(super) tool_calls: usize,
    /// When the time limit runs out, if the run has one (see `start_clock`).
    pub(super) deadline: Option<Instant>,
    /// Whether anything can cut an await short: a cancel signal or a deadline.
    pub(super) can_be_interrupted: bool,
    /// Where a streamed run sends its events; `None` for a plain run.
    pub(super) events: Option<EventSender>,
    /// The first reason a hook gave to stop the run, set while the calls of a step run.
    pub(super) stop_request: std::sync::OnceLock<String>,
    /// When this part of the run began, if it can pause (see `start_clock`).
    pub(super) started: Option<Instant>,
    /// How long the run had run before this part (when resumed).
    pub(super) elapsed_before: Duration,
    /// A paused run's decisions, settled before its next step.
    pub(super) resume: Option<Box<Resumption>>,
    /// For a durable run, where its model and tool calls are recorded.
    pub(super) journal: Option<&'a dyn Journal>,
    /// The run's id, handed to each tool call.
    pub(super) run_id: RunId,
}

impl<'a, S: Send + Sync + 'static> Run<'a, S> {
    /// A run of `agent` on `messages` as `plan` says, before its first step: its settings, limits
    /// and, when resumed, what it had used. Its clock is started by `start_clock`. Inlined: see
    /// `drive`.
    #[inline(always)]
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
        let (usage, step_usage, step_models, tool_calls) = match resumed {
            Some(paused) => (
                paused.usage,
                paused.step_usage.clone(),
                paused.step_models.clone(),
                paused.tool_calls,
            ),
            None => (
                Usage::default(),
                Vec::with_capacity(agent.limits.max_steps.min(4)),
                Vec::new(),
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
            step_models,
            tool_calls,
            stop_request: std::sync::OnceLock::new(),
            started: None,
            elapsed_before: plan
                .resume
                .as_ref()
                .map_or(Duration::ZERO, |resume| resume.paused.elapsed()),
            resume: plan.resume,
            journal: plan.journal,
            run_id: plan.run_id,
        }
    }

    /// Starts the run's clock: its deadline, when it has a time limit (a resumed run's counts
    /// the time it had used), and its start, when it can pause (a paused run keeps how long it
    /// ran).
    #[inline]
    fn start_clock(&mut self) {
        self.deadline = interrupt::time_limit(self.agent, self.journal)
            .map(|limit| Instant::now() + limit.saturating_sub(self.elapsed_before));
        if self.agent.tools.some_calls_wait() {
            self.started = Some(Instant::now());
        }
    }
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// The run to its end inside `span`, which records its figures: the tokens it used, its steps
    /// and why it stopped (or the error it failed with).
    async fn go_traced<C: Future<Output = ()> + Send>(
        &mut self,
        cancel: Pin<&mut C>,
        span: tracing::Span,
    ) -> Result<RunOutput, RunError> {
        let ending = self.go(cancel).instrument(span.clone()).await;
        let outcome = self.conclude(ending);
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
        outcome
    }

    /// Sends an event to the stream, if this run is streamed (the event is only made then).
    #[inline]
    pub(super) fn emit(&self, event: impl FnOnce() -> LiveEvent) {
        if let Some(events) = &self.events {
            // A receiver that went away just stops listening; the run goes on.
            events.send(event());
        }
    }

    /// The limit reached before the next model call, if any.
    pub(super) fn budget_spent(&self) -> Option<StopReason> {
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
    #[inline]
    pub(super) fn finish(&mut self, stop_reason: StopReason, text: Option<String>) -> RunOutput {
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
            step_models: std::mem::take(&mut self.step_models),
            paused: None,
        }
    }

    /// The run's output when calls wait: the transcript up to the reply that made them, and the
    /// state to resume from (with the results of the reply's other calls).
    pub(super) fn pause(
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
                step_models: self.step_models.clone(),
                tool_calls: self.tool_calls,
                elapsed: self.elapsed_before + ran_for,
                settings: self.settings.clone(),
                over_tool_call_limit,
                run_id: self.run_id.clone(),
            },
        );
        let text = self.agent.tools.texts().run_paused().to_owned();
        let mut output = self.finish(StopReason::Paused, Some(text));
        output.paused = Some(paused);
        output
    }
}
