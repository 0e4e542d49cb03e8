//! The values the crate ships for the run's seams ([`seams`](crate::seams)), and the order a run
//! puts them in (`Stacks`). Each is a value like any a user writes; the loop knows none of them.
//!
//! - model-call layers, outermost first: the agent's context policy
//!   ([`Agent::context_policy`](crate::Agent::context_policy)), the view of a conversation
//!   handed to the agent ([`Handoff`](crate::Handoff)), the agent's own ([`Agent::model_layer`]), each of its
//!   [`Hooks`](crate::Hooks) (told of each request and reply), [`ChatSpan`], the run's watch over
//!   its prompt cache, the run's spending from its budget, a durable run's journal; then the
//!   model (read as a stream when the run is streamed).
//! - call policies, in order: [`CutOffCalls`], the agent's limits, each of its hooks, the
//!   agent's own ([`Agent::policy`]), its hand-offs, [`ExternalTools`], [`Approvals`], in a run that cannot
//!   pause [`CannotPause`], and last the run's spending from its budget (a request or a call is
//!   taken only when no policy before stopped it).
//!
//! [`Agent::model_layer`]: crate::Agent::model_layer
//! [`Agent::policy`]: crate::Agent::policy

mod bound;
mod budget;
mod cache_watch;
mod cut_off;
mod hooks;
mod journal;
mod limits;
mod streamed;
mod trace;
mod waiting;

pub(crate) use bound::{BoundLayer, BoundPolicy};
pub(crate) use budget::Spending;
pub(crate) use cache_watch::CacheWatch;
pub use cut_off::CutOffCalls;
pub(crate) use hooks::Hooked;
pub(crate) use journal::Journaled;
pub(crate) use streamed::Streamed;
pub use trace::ChatSpan;
pub use waiting::{Approvals, CannotPause, ExternalTools};

use std::sync::Arc;

use crate::run::agent::Agent;
use crate::run::context::InRun;
use crate::run::guard::GuardRun;
use crate::run::seams::{AnswerCheck, CallPolicy, Held, Layer, ModelLayer, Policy};
use crate::run::tree::HandoffView;

/// A run's layers and policies, in their order: the agent's lent, the run's own held.
pub(crate) struct Stacks<'r, S> {
    pub(crate) layers: Vec<Layer<'r, S>>,
    pub(crate) policies: Vec<Policy<'r, S>>,
}

impl<'r, S: Send + Sync + 'static> Stacks<'r, S> {
    /// The stacks of a run of `agent` with `check` and the run's own values `own`.
    pub(crate) fn new(agent: &'r Agent<S>, check: &dyn AnswerCheck<S>, own: RunValues<'r>) -> Self {
        let RunValues {
            context,
            view,
            journal,
            watch,
            spending,
            pauses,
            defers_approvals,
            guards,
        } = own;
        let mut layers: Vec<Layer<'r, S>> =
            Vec::with_capacity(agent.layers.len() + agent.hooks.len() + 4);
        if let Some(context) = context {
            layers.push(Held::Own(Box::new(context)));
        }
        if let Some(view) = view {
            layers.push(Held::Own(Box::new(view)));
        }
        layers.extend(agent.layers.iter().map(|layer| Held::Lent(&**layer)));
        layers.extend((agent.hooks.iter()).map(|hooks| Held::Lent(hooks as &dyn ModelLayer<S>)));
        layers.push(Held::Lent(&ChatSpan));
        if let Some(watch) = watch {
            layers.push(Held::Own(Box::new(watch)));
        }
        // Outside the journal: a replayed reply is counted again, as the run's first time did.
        if let Some(guards) = &guards {
            layers.push(Held::Shared(
                Arc::clone(guards) as Arc<dyn ModelLayer<S> + 'r>
            ));
        }
        if let Some(spending) = &spending {
            layers.push(Held::Own(Box::new(spending.clone())));
        }
        if let Some(journal) = journal {
            layers.push(Held::Own(Box::new(journal)));
        }
        let mut policies: Vec<Policy<'r, S>> =
            Vec::with_capacity(agent.policies.len() + agent.hooks.len() + 5);
        policies.push(Held::Lent(&CutOffCalls));
        policies.push(Held::Lent(&agent.limits));
        // A request whose results a context policy left out offers a way to read them.
        if let Some(context) = &agent.context {
            policies.push(Held::Lent(&context.recall));
        }
        policies.extend((agent.hooks.iter()).map(|hooks| Held::Lent(hooks as &dyn CallPolicy<S>)));
        policies.extend(agent.policies.iter().map(|policy| Held::Lent(&**policy)));
        if !agent.handoffs.0.is_empty() {
            policies.push(Held::Lent(&agent.handoffs));
        }
        if agent.tools.some_calls_wait() {
            policies.push(Held::Lent(&ExternalTools));
            // An agent without an approver defers when the run that started it does.
            policies.push(match agent.approvals.approver {
                None if defers_approvals => Held::Own(Box::new(Approvals::deferring())),
                _ => Held::Lent(&agent.approvals),
            });
        }
        if !check.can_pause() || !pauses {
            policies.push(Held::Lent(&CannotPause));
        }
        // After every policy that rules: a guard sees a call as it will run.
        if let Some(guards) = guards {
            policies.push(Held::Shared(guards as Arc<dyn CallPolicy<S> + 'r>));
        }
        if let Some(spending) = spending {
            policies.push(Held::Own(Box::new(spending)));
        }
        Stacks { layers, policies }
    }
}

/// A run's own values at the seams, beside its agent's: the layer of the agent's context policy
/// in this run, the view of a conversation handed to the agent, a durable run's journal, the
/// watch over its prompt cache, its spending from its budget, and whether a call may wait.
pub(crate) struct RunValues<'r> {
    pub(crate) context: Option<InRun<'r>>,
    pub(crate) view: Option<HandoffView<'r>>,
    pub(crate) journal: Option<Journaled<'r>>,
    pub(crate) watch: Option<CacheWatch<'r>>,
    pub(crate) spending: Option<Spending>,
    pub(crate) pauses: bool,
    /// The run that started this one defers approvals: so does an agent without an approver.
    pub(crate) defers_approvals: bool,
    /// The guards of the part: on the input and requests, on calls and results.
    pub(crate) guards: Option<Arc<GuardRun<'r>>>,
}
