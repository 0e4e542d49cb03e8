//! One run's state, what it starts from (`RunSetup`), and how it ends: finished, stopped, failed,
//! paused, or dropped before its end (then its hooks are still told).

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Ending;
use super::interrupt::Interruption;
use super::resume::Resumption;
use crate::budget::Budget;
use crate::message::{Message, ToolResultMessage};
use crate::model::Model;
use crate::run::agent::Agent;
use crate::run::events::{EventSender, LiveEvent};
use crate::run::guard::{GuardRun, GuardedAnswer, Tripwire};
use crate::run::journal::Journal;
use crate::run::outcome::{RunError, RunOutput, StopReason};
use crate::run::pause::{PausedChild, PausedRun, PendingCall, Progress};
use crate::run::seams::{AnswerCheck, Held, Layer, Policy, RunStatus, Transcript, Used};
use crate::settings::{ModelSettings, PromptCache};
use crate::tool::BoxFuture;
use crate::tool::scope::RunScope;
use crate::usage::Usage;

/// The values at a run's seams, in their order.
pub(crate) struct Seams<'r, S> {
    /// The model at the end of the layers (the agent's, or the agent's read as a stream).
    pub(crate) model: Held<'r, dyn Model + 'r>,
    pub(crate) layers: Vec<Layer<'r, S>>,
    pub(crate) policies: Vec<Policy<'r, S>>,
    pub(crate) check: CheckHeld<'r, S>,
    pub(crate) transcript: Option<&'r mut dyn Transcript>,
    /// For a durable run, where its tool calls are recorded (its model calls are, by a layer).
    pub(crate) journal: Option<&'r dyn Journal>,
}

/// A run's answer check: the one its request made, lent, or that one with the part's guards on
/// the answer around it.
pub(crate) enum CheckHeld<'r, S> {
    Lent(&'r mut (dyn AnswerCheck<S> + 'r)),
    Guarded(GuardedAnswer<'r, dyn AnswerCheck<S> + 'r>),
}

impl<'r, S: Send + Sync> Deref for CheckHeld<'r, S> {
    type Target = dyn AnswerCheck<S> + 'r;

    fn deref(&self) -> &Self::Target {
        match self {
            CheckHeld::Lent(check) => *check,
            CheckHeld::Guarded(guarded) => guarded,
        }
    }
}

impl<S: Send + Sync> DerefMut for CheckHeld<'_, S> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            CheckHeld::Lent(check) => *check,
            CheckHeld::Guarded(guarded) => guarded,
        }
    }
}

/// Everything a run starts from, made by its request.
pub(crate) struct RunSetup<'r, S> {
    pub(crate) context: &'r S,
    pub(crate) seams: Seams<'r, S>,
    /// This run's settings, over the agent's (or a paused run's).
    pub(crate) settings: Option<ModelSettings>,
    pub(crate) messages: Vec<Message>,
    pub(crate) resume: Option<Box<Resumption>>,
    /// The session's id, for a run in one: the conversation its prompt cache is keyed by.
    pub(crate) conversation: Option<&'r str>,
    /// The run's id, its agent's place in a tree of agents, its budget: what its tools are
    /// handed.
    pub(crate) scope: RunScope,
    pub(crate) events: Option<&'r EventSender>,
    pub(crate) cancel: Option<BoxFuture<'r, ()>>,
    /// The run's guards, when it has any: the tokens they used.
    pub(crate) guards: Option<Arc<GuardRun<'r>>>,
    /// Its guards check its input before the first step.
    pub(crate) check_input: bool,
    /// The tripwire of the run's tree, when it has one: whether a guard tripped.
    pub(crate) tripwire: Option<&'r Tripwire>,
}

/// What a run has used, counted against its limits and reported at its end.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) usage: Usage,
    pub(super) step_usage: Vec<Usage>,
    /// The model that answered each step (see [`RunOutput::step_models`]).
    pub(super) step_models: Vec<Option<String>>,
    /// Calls that could run so far (those over the limit never start, and are not counted).
    pub(super) tool_calls: usize,
}

/// One run in progress.
pub(super) struct Run<'r, S: Send + Sync + 'static> {
    pub(super) agent: &'r Agent<S>,
    pub(super) context: &'r S,
    pub(super) seams: Seams<'r, S>,
    /// The settings of the next model call.
    pub(super) settings: ModelSettings,
    pub(super) messages: Vec<Message>,
    pub(super) tally: Tally,
    pub(super) scope: RunScope,
    pub(super) events: Option<&'r EventSender>,
    pub(super) interruption: Interruption<'r>,
    /// When this part of the run began, and how long it had run before (a resumed run's).
    pub(super) started: Instant,
    pub(super) elapsed_before: Duration,
    /// The first reason a policy gave to stop the run, set while a step's calls run.
    pub(super) stop_request: std::sync::OnceLock<String>,
    /// A paused run's decisions, carried out before the first step.
    pub(super) resume: Option<Box<Resumption>>,
    pub(super) guards: Option<Arc<GuardRun<'r>>>,
    /// Its input is yet to be checked by its guards.
    pub(super) check_input: bool,
    pub(super) tripwire: Option<&'r Tripwire>,
    /// Whether calls may wait in this run (its answer check's say, asked once).
    pub(super) can_pause: bool,
    /// Whether the run's end was told to its hooks (if not when it is dropped, it was dropped).
    ended: bool,
}

impl<'r, S: Send + Sync + 'static> Run<'r, S> {
    /// A run of `agent` as `setup` says, before its first step; its clock starts now.
    pub(super) fn new(agent: &'r Agent<S>, setup: RunSetup<'r, S>) -> Self {
        let resumed = setup.resume.as_ref().map(|resume| &*resume.paused.0);
        // The run's own settings over the agent's, or over the paused run's when it goes on.
        let base = resumed.map_or(&agent.settings, |paused| &paused.settings);
        let mut settings = match setup.settings {
            Some(settings) => settings.or(base),
            None => base.clone(),
        };
        if let Some(cache) = &mut settings.prompt_cache
            && cache.key.is_none()
        {
            let conversation = setup.conversation.map(str::to_owned);
            let conversation = conversation.unwrap_or_else(|| setup.scope.id().to_string());
            cache.key = Some(PromptCache::key_for(&conversation));
        }
        let mut messages = setup.messages;
        let mut seams = setup.seams;
        seams.check.prepare(&mut messages, &mut settings);
        let can_pause = seams.check.can_pause();
        let tally = match resumed {
            Some(paused) => Tally {
                usage: paused.usage,
                step_usage: paused.step_usage.clone(),
                step_models: paused.step_models.clone(),
                tool_calls: paused.tool_calls,
            },
            None => Tally::default(),
        };
        let elapsed_before = setup
            .resume
            .as_ref()
            .map_or(Duration::ZERO, |resume| resume.paused.elapsed());
        // A journaled run has no time limit: replayed, it would fire at another point.
        let time_limit = agent.limits.time_limit.filter(|_| seams.journal.is_none());
        let shared =
            (setup.scope.budget().and_then(Budget::deadline)).filter(|_| seams.journal.is_none());
        Run {
            agent,
            context: setup.context,
            seams,
            settings,
            messages,
            tally,
            scope: setup.scope,
            events: setup.events,
            interruption: Interruption::new(
                setup.cancel,
                time_limit,
                elapsed_before,
                shared,
                setup.tripwire,
            ),
            started: Instant::now(),
            elapsed_before,
            stop_request: std::sync::OnceLock::new(),
            resume: setup.resume,
            guards: setup.guards,
            check_input: setup.check_input,
            tripwire: setup.tripwire,
            can_pause,
            ended: false,
        }
    }

    /// The tokens the run used: its model calls', its guards', and a reply its guards stopped.
    pub(super) fn used(&self) -> Usage {
        match self.guards.as_ref().and_then(|guards| guards.spent()) {
            Some(spent) => self.tally.usage + spent,
            None => self.tally.usage,
        }
    }

    /// Where the run stands at `step`, for its policies.
    pub(super) fn status(&self, step: usize) -> RunStatus<'_> {
        RunStatus {
            step,
            usage: self.tally.usage,
            tool_calls: self.tally.tool_calls,
            can_pause: self.can_pause,
            run_id: self.scope.id(),
            texts: self.agent.tools.texts(),
            messages: &self.messages,
        }
    }

    /// Sends an event to the stream, if this run is streamed (the event is only made then).
    pub(super) fn emit(&self, event: impl FnOnce() -> LiveEvent) {
        if let Some(events) = &self.events {
            // A receiver that went away just stops listening; the run goes on.
            events.send(event());
        }
    }

    /// Hands the transcript to the run's [`Transcript`], if it has one; `paused`: the run pauses
    /// with it. A transcript that cannot be kept ends the run with [`RunError::Session`].
    pub(super) async fn keep(&mut self, paused: Option<&PausedRun>) -> Result<(), Ending> {
        let Some(transcript) = self.seams.transcript.as_deref_mut() else {
            return Ok(());
        };
        let used = Used::new(&self.tally.step_usage, &self.tally.step_models);
        match transcript.keep(&self.messages, paused, used).await {
            Ok(()) => Ok(()),
            Err(source) => Err(Ending::Error(RunError::Session {
                source,
                messages: std::mem::take(&mut self.messages),
                usage: self.used(),
            })),
        }
    }

    /// Whether the run keeps its transcript anywhere but in memory (then each part is handed to
    /// [`keep`](Self::keep)).
    pub(super) fn keeps(&self) -> bool {
        self.seams.transcript.is_some()
    }

    /// Tells the hooks how the run ended, once.
    pub(super) fn tell_end(&mut self, outcome: Result<&RunOutput, &RunError>) {
        self.ended = true;
        for hook in &self.agent.hooks {
            hook.0.on_run_end(self.context, outcome);
        }
    }

    /// The run's output when it ends, with `text` or the texts' words for why it stopped.
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
            steps: self.tally.step_usage.len(),
            stop_reason,
            usage: self.used(),
            step_usage: std::mem::take(&mut self.tally.step_usage),
            step_models: std::mem::take(&mut self.tally.step_models),
            paused: None,
            summaries: Vec::new(),
            agent: self.scope.path().clone(),
            step_agents: Vec::new(),
            children: Vec::new(),
        }
    }

    /// The paused run the run ends with when calls wait: the transcript up to the reply that made
    /// them, and what it needs to go on (with the results of the reply's other calls).
    pub(super) fn paused(
        &self,
        pending: Vec<PendingCall>,
        children: Vec<PausedChild>,
        finished: Vec<ToolResultMessage>,
        over_tool_call_limit: bool,
    ) -> PausedRun {
        PausedRun::new(
            self.messages.clone(),
            pending,
            children,
            finished,
            Progress {
                usage: self.used(),
                step_usage: self.tally.step_usage.clone(),
                step_models: self.tally.step_models.clone(),
                tool_calls: self.tally.tool_calls,
                elapsed: self.elapsed_before + self.started.elapsed(),
                settings: self.settings.clone(),
                over_tool_call_limit,
                run_id: self.scope.id().clone(),
            },
        )
    }
}

/// A run dropped before its end (a timeout around its future, an aborted task) still ends
/// visibly: its hooks are told, with [`RunError::Dropped`] and the transcript so far.
impl<S: Send + Sync + 'static> Drop for Run<'_, S> {
    fn drop(&mut self) {
        if self.ended || self.agent.hooks.is_empty() {
            return;
        }
        let dropped = RunError::Dropped {
            messages: std::mem::take(&mut self.messages),
            usage: self.used(),
        };
        self.tell_end(Err(&dropped));
    }
}
