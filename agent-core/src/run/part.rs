//! One agent's part of a run: the values at the seams for the agent that holds the conversation
//! (its own, and the run's), then the kernel. A run is one part, or several when the
//! conversation is handed from agent to agent ([`Handoff`](crate::Handoff)); what the parts
//! share is [`RunWide`], and their outputs make one ([`joined`]).

use std::any::Any;
use std::sync::Arc;

use futures_util::future::Shared;

use super::agent::Agent;
use super::context::RunSummaries;
use super::events::EventSender;
use super::journal::Journal;
use super::kernel::{Resumption, RunSetup, Seams, drive};
use super::layers::{CacheWatch, Journaled, RunValues, Spending, Stacks, Streamed};
use super::outcome::{RunError, RunOutput};
use super::seams::{AnswerCheck, Transcript};
use super::tree::{Family, HandOffs, HandedOver, HandoffView};
use crate::budget::Budget;
use crate::message::Message;
use crate::model::Model;
use crate::settings::ModelSettings;
use crate::tool::BoxFuture;
use crate::tool::call_info::RunId;
use crate::tool::scope::{AgentPath, RunScope};

/// What every part of one run shares, whichever agent holds the conversation.
pub(super) struct RunWide<'r, S> {
    pub(super) context: &'r S,
    pub(super) journal: Option<&'r dyn Journal>,
    pub(super) events: Option<EventSender>,
    pub(super) budget: Option<Budget>,
    /// The cancel signal (the run's own, or its budget's), shared by every part.
    pub(super) cancel: Option<Shared<BoxFuture<'r, ()>>>,
    pub(super) summaries: &'r RunSummaries,
    /// The run's own settings, over each agent's.
    pub(super) settings: Option<ModelSettings>,
    /// The session's id, for a run in one.
    pub(super) conversation: Option<&'r str>,
    pub(super) run_id: RunId,
    /// Whether a call may wait (not in a run started by one that cannot pause).
    pub(super) pauses: bool,
    /// For a run another run started: the place in the tree its first agent has.
    pub(super) place: Option<AgentPath>,
    /// The agent the run began with.
    pub(super) entry: &'r Agent<S>,
    /// Where the runs its calls start send their events and outputs, when an agent of the run
    /// has a tool that starts runs.
    pub(super) family: Option<Arc<Family>>,
}

impl<S> RunWide<'_, S> {
    /// The path of `agent`'s part: the place the run was given for its first agent, beside it
    /// for an agent the conversation was handed to; or the agent's own.
    fn path_of(&self, agent: &Agent<S>) -> AgentPath {
        match &self.place {
            Some(place) if std::ptr::eq(agent, self.entry) => place.clone(),
            Some(place) => place.beside(agent.path.as_str()),
            None => agent.path.clone(),
        }
    }
}

/// Runs `agent`'s part of the run on `messages` (or going on with `resume`), with `check` and
/// `transcript`, shown the conversation as `over` says when it was handed to it.
pub(super) async fn part<S: Send + Sync + 'static, C: AnswerCheck<S>>(
    agent: &Agent<S>,
    over: Option<HandedOver<'_>>,
    wide: &RunWide<'_, S>,
    check: &mut C,
    transcript: Option<&mut (dyn Transcript + '_)>,
    messages: Vec<Message>,
    mut resume: Option<Resumption>,
) -> Result<RunOutput, RunError> {
    let path = wide.path_of(agent);
    let spending = (wide.budget.clone()).map(|budget| Spending {
        budget,
        agent: path.clone(),
    });
    let family = wide.family.as_ref();
    // Paused children go on when the calls that started them run again.
    if let Some(resume) = &mut resume {
        for child in std::mem::take(&mut resume.children) {
            resume.rerun.push(child.call.clone());
            if let Some(family) = family {
                family.resume(child);
            }
        }
    }
    let mut scope = RunScope::new(wide.run_id.clone())
        .with_path(path)
        .with_budget(wide.budget.clone());
    scope.family = (family.cloned()).map(|family| family as Arc<dyn Any + Send + Sync>);
    let journaled = wide.journal.map(Journaled);
    let streamed = (wide.events.clone()).map(|events| Streamed {
        model: &*agent.model,
        events,
    });
    let model: &dyn Model = match &streamed {
        Some(streamed) => streamed,
        None => &*agent.model,
    };
    // A run that asks for a prompt cache (by its own settings or the agent's) watches it.
    let cached = (wide
        .settings
        .as_ref()
        .and_then(|own| own.prompt_cache.as_ref()))
    .or(agent.settings.prompt_cache.as_ref())
    .is_some();
    let watch = cached.then(CacheWatch::default);
    let context_layer = (agent.context.as_ref()).map(|layer| {
        let counter = agent.token_counter.as_deref();
        layer.in_run(wide.summaries, wide.journal, counter, wide.events.clone())
    });
    let view = over.map(|over| HandoffView { over });
    let handoffs = (!agent.handoffs.is_empty()).then(|| HandOffs {
        handoffs: &agent.handoffs,
    });
    let own = RunValues {
        context: context_layer.as_ref(),
        view: view.as_ref(),
        handoffs: handoffs.as_ref(),
        journal: journaled.as_ref(),
        watch: watch.as_ref(),
        spending: spending.as_ref(),
        pauses: wide.pauses,
    };
    let stacks = Stacks::new(agent, &*check, &own);
    let seams = Seams {
        model,
        layers: stacks.layers,
        policies: stacks.policies,
        check,
        // The transcript's own lifetime shortened to the part's.
        transcript: transcript.map(|kept| kept as &mut dyn Transcript),
        journal: wide.journal,
    };
    let cancel = (wide.cancel.clone()).map(|cancel| Box::pin(cancel) as BoxFuture<'_, ()>);
    let setup = RunSetup {
        context: wide.context,
        seams,
        settings: wide.settings.clone(),
        messages,
        resume,
        conversation: wide.conversation,
        scope,
        events: wide.events.clone(),
        cancel,
    };
    let outcome = drive(agent, setup).await;
    drop(context_layer);
    outcome
}

/// Whether a run of `agent` can start runs of its own: one of its tools does, or one of an
/// agent it can hand the conversation to.
pub(super) fn starts_runs<S: Send + Sync + 'static>(agent: &Agent<S>) -> bool {
    agent.tools.some_start_runs()
        || (agent.handoffs.iter()).any(|handoff| starts_runs(&handoff.target))
}

/// One output of a run whose conversation was handed on: what the part before did (`before`,
/// its messages taken: they are the start of `after`'s), then the part after, which answered.
/// (The children of both are the run's, put in at its end.)
pub(super) fn joined(before: RunOutput, after: RunOutput) -> RunOutput {
    let agents = |output: &RunOutput| {
        let mut agents = output.step_agents.clone();
        agents.resize(output.step_usage.len(), output.agent.clone());
        agents
    };
    let mut step_agents = agents(&before);
    step_agents.extend(agents(&after));
    let mut step_models = Vec::new();
    if !before.step_models.is_empty() || !after.step_models.is_empty() {
        step_models = before.step_models;
        step_models.resize(before.step_usage.len(), None);
        step_models.extend(after.step_models);
        step_models.resize(step_agents.len(), None);
    }
    let mut step_usage = before.step_usage;
    step_usage.extend(after.step_usage);
    RunOutput {
        steps: before.steps + after.steps,
        usage: before.usage + after.usage,
        step_usage,
        step_models,
        step_agents,
        ..after
    }
}
