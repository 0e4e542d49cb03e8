//! One agent's part of a run: the values at the seams for the agent that holds the conversation
//! (its own, and the run's), then the kernel. A run is one part, or several when the
//! conversation is handed from agent to agent ([`Handoff`](crate::Handoff)); what the parts
//! share is [`RunWide`], and their outputs make one ([`joined`]).

use std::any::Any;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::Shared;

use super::agent::Agent;
use super::context::{LastSent, RunSummaries};
use super::events::EventSender;
use super::guard::{GuardRun, GuardScope, GuardedAnswer, Guards, Place, Tripwire};
use super::journal::Journal;
use super::kernel::{CheckHeld, Resumption, RunSetup, Seams, drive};
use super::layers::{CacheWatch, Journaled, RunValues, Spending, Stacks, Streamed};
use super::locks::ConversationHold;
use super::outcome::{RunError, RunOutput};
use super::seams::{AnswerCheck, Held, Transcript};
use super::store::SessionStore;
use super::tree::{Family, HandedOver, HandoffView};
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
    pub(super) summaries: RunSummaries,
    /// What the run's last model request sent (the session's last when it began).
    pub(super) sent: LastSent,
    /// The run's own settings, over each agent's.
    pub(super) settings: Option<ModelSettings>,
    /// For a run in a session: its store, its id, and the run's hold on it.
    pub(super) session: Option<InSession<'r>>,
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
    /// The guards an agent of the run with none of its own checks with: those of the run that
    /// started it, or else its first agent's.
    pub(super) guards: Option<Arc<Guards>>,
    /// The tripwire of the run's tree, when an agent of it has guards or it can start runs.
    pub(super) tripwire: Option<Arc<Tripwire>>,
    /// An agent of the run with no approver of its own defers approvals: the run that started it
    /// does.
    pub(super) defers_approvals: bool,
}

/// The session a run is in, held from its load to its last write.
pub(super) struct InSession<'r> {
    pub(super) store: &'r dyn SessionStore,
    pub(super) id: String,
    pub(super) _hold: ConversationHold,
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

/// `agent`'s part of the run on `messages` (or going on with `resume`), with `check` and
/// `transcript`, shown the conversation as `over` says when it was handed to it: the run's own
/// values at the seams, made here and held by the kernel's run with the agent's. `new_input`:
/// the part starts the run with input of its own (which its guards check first).
#[allow(clippy::too_many_arguments)]
pub(super) fn part<'r, 'w: 'r, S: Send + Sync + 'static, C: AnswerCheck<S>>(
    agent: &'r Agent<S>,
    over: Option<HandedOver<'r>>,
    wide: &'r RunWide<'w, S>,
    check: &'r mut C,
    transcript: Option<&'r mut (dyn Transcript + 'r)>,
    messages: Vec<Message>,
    mut resume: Option<Box<Resumption>>,
    new_input: bool,
) -> impl Future<Output = Result<RunOutput, RunError>> + Send + 'r {
    let path = wide.path_of(agent);
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
        .with_path(path.clone())
        .with_budget(wide.budget.clone());
    scope.family = (family.cloned()).map(|family| family as Arc<dyn Any + Send + Sync>);
    let guards = guard_run(agent, wide, &path, new_input);
    let model: Held<'r, dyn Model + 'r> = match &wide.events {
        Some(events) => Held::Own(Box::new(Streamed {
            model: &*agent.model,
            events,
            guards: guards.clone(),
        })),
        None => Held::Lent(&*agent.model),
    };
    // A run that asks for a prompt cache (by its own settings or the agent's) watches it.
    let cached = (wide.settings.as_ref())
        .and_then(|own| own.prompt_cache.as_ref())
        .or(agent.settings.prompt_cache.as_ref())
        .is_some();
    let own = RunValues {
        context: (agent.context.as_ref()).map(|layer| {
            let counter = agent.token_counter.as_deref();
            let events = wide.events.clone();
            layer.in_run(&wide.summaries, &wide.sent, wide.journal, counter, events)
        }),
        view: over.map(|over| HandoffView { over }),
        journal: wide.journal.map(Journaled),
        watch: cached.then(|| CacheWatch::new(&wide.sent)),
        spending: (wide.budget.clone()).map(|budget| {
            let max_reply = (wide.settings.as_ref())
                .and_then(|own| own.max_tokens)
                .or(agent.settings.max_tokens);
            Spending::new(budget, path, max_reply)
        }),
        pauses: wide.pauses,
        defers_approvals: wide.defers_approvals,
        guards: guards.clone(),
    };
    let stacks = Stacks::new(agent, &*check, own);
    let check = match &guards {
        Some(run) => CheckHeld::Guarded(GuardedAnswer {
            check,
            run: Arc::clone(run),
        }),
        None => CheckHeld::Lent(check),
    };
    let seams = Seams {
        model,
        layers: stacks.layers,
        policies: stacks.policies,
        check,
        transcript,
        journal: wide.journal,
    };
    let cancel = (wide.cancel.clone()).map(|cancel| Box::pin(cancel) as BoxFuture<'r, ()>);
    let setup = RunSetup {
        context: wide.context,
        seams,
        settings: wide.settings.clone(),
        messages,
        resume,
        conversation: wide.session.as_ref().map(|session| session.id.as_str()),
        scope,
        events: wide.events.as_ref(),
        cancel,
        // The guards on the input (those before the model) check it before the first step.
        check_input: new_input
            && (guards.as_ref()).is_some_and(|run| run.checks(Place::Input, Some(false))),
        guards,
        tripwire: wide.tripwire.as_deref(),
    };
    drive(agent, setup)
}

/// The guards of `agent`'s part of the run at `path`: the agent's own, or else the run's (of the
/// run that started it, or of its first agent). The runs the part's calls start are given them,
/// and the tree's tripwire. `new_input`: the part starts the run with input of its own.
fn guard_run<'r, S: Send + Sync + 'static>(
    agent: &'r Agent<S>,
    wide: &'r RunWide<'_, S>,
    path: &AgentPath,
    new_input: bool,
) -> Option<Arc<GuardRun<'r>>> {
    let guards = agent.guards.as_ref().or(wide.guards.as_ref()).cloned();
    let tripwire = wide.tripwire.as_ref()?;
    if let Some(family) = &wide.family {
        let scope = GuardScope {
            guards: guards.clone(),
            tripwire: Arc::clone(tripwire),
            defers_approvals: agent.approvals.defers(wide.defers_approvals),
        };
        *family.guards.lock().unwrap_or_else(|e| e.into_inner()) = Some(scope);
    }
    let wording = agent.tools.wording();
    let events = wide.events.as_ref();
    let (journal, path) = (wide.journal, path.clone());
    let run = GuardRun::new(guards?, tripwire, path, wording, journal, events, new_input);
    Some(Arc::new(run))
}

/// Whether an agent of a run of `agent` has guards: it, or an agent it can hand the
/// conversation to.
pub(super) fn has_guards<S: Send + Sync + 'static>(agent: &Agent<S>) -> bool {
    agent.guards.is_some() || (agent.handoffs.0.iter()).any(|handoff| has_guards(&handoff.target))
}

/// Whether a run of `agent` can start runs of its own: one of its tools does, or one of an
/// agent it can hand the conversation to.
pub(super) fn starts_runs<S: Send + Sync + 'static>(agent: &Agent<S>) -> bool {
    agent.tools.some_start_runs()
        || (agent.handoffs.0.iter()).any(|handoff| starts_runs(&handoff.target))
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
