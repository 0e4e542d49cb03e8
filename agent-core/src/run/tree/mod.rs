//! Agents that call agents. An agent becomes a tool of another ([`AgentTool`], `agent_tool`);
//! its run is an ordinary run, tied to the run that called it through that call's
//! [`RunScope`](crate::RunScope): it is a child in the tree of agents (its
//! [`AgentPath`](crate::AgentPath)), spends from the [`Budget`](crate::Budget) the tree shares
//! (the budget's values at the call-policy and model-call seams: `run/layers/budget.rs`), sends
//! its events to the stream of the run that called it, tagged with its path, and is kept, whole,
//! in that run's output ([`ChildRun`](crate::ChildRun)).

mod agent_tool;
mod handoff;

pub use agent_tool::{AgentInput, AgentTool};
pub(crate) use handoff::{HandOffs, HandedOver, HandoffView, holder};
pub use handoff::{Handoff, HandoffHistory, HistoryFn};

use std::sync::{Arc, Mutex, PoisonError};

use crate::message::{Message, ToolCall};
use crate::run::events::EventSender;
use crate::run::guard::GuardScope;
use crate::run::journal::Journal;
use crate::run::outcome::ChildRun;
use crate::run::pause::{ChildResume, PausedChild, PausedRun};
use crate::tool::scope::{AgentPath, RunScope};

/// Words the parameters of a tool the crate derives from a type (an agent's input, a hand-off's
/// summary) in a language: the one field `field` described by `words`, and no description of the
/// whole, since the type's doc comments, which schemars puts there, are English whatever the
/// run's texts.
pub(crate) fn word_parameters(parameters: &mut serde_json::Value, field: &str, words: &str) {
    let Some(root) = parameters.as_object_mut() else {
        return;
    };
    root.remove("description");
    let property = (root
        .get_mut("properties")
        .and_then(|properties| properties.get_mut(field)))
    .and_then(serde_json::Value::as_object_mut);
    if let Some(property) = property {
        property.insert("description".into(), words.into());
    }
}

/// What a run keeps for the runs its calls start: where their events go (a streamed run's
/// stream), whether they may pause, their outputs as they end, those that paused (their calls
/// then wait for them), and those that go on from a pause. In a run's [`RunScope`] when one of
/// its agent's tools starts runs.
pub(crate) struct Family {
    pub(crate) events: Option<EventSender>,
    /// The journal the runs it starts keep their calls in, for a durable run whose journal
    /// lends itself to them.
    pub(crate) journal: Option<Arc<dyn Journal>>,
    /// Whether the run can pause, and so the runs it starts.
    pub(crate) can_pause: bool,
    /// The guards the runs it starts check with when their agents have none of their own (the
    /// guards of the part of the run that holds the conversation), and its tripwire.
    pub(crate) guards: Mutex<Option<GuardScope>>,
    children: Mutex<Vec<ChildRun>>,
    paused: Mutex<Vec<PausedChild>>,
    going_on: Mutex<Vec<ChildResume>>,
}

impl Family {
    pub(crate) fn new(
        events: Option<EventSender>,
        journal: Option<Arc<dyn Journal>>,
        can_pause: bool,
    ) -> Self {
        Family {
            events,
            journal,
            can_pause,
            guards: Mutex::new(None),
            children: Mutex::new(Vec::new()),
            paused: Mutex::new(Vec::new()),
            going_on: Mutex::new(Vec::new()),
        }
    }

    /// The guards of the runs it starts.
    pub(crate) fn guards(&self) -> Option<GuardScope> {
        lock(&self.guards).clone()
    }

    /// Keeps the paused run of the child `call` started.
    pub(crate) fn keep_paused(&self, call: &ToolCall, path: AgentPath, run: PausedRun) {
        let child = PausedChild {
            call: call.clone(),
            path,
            run,
        };
        lock(&self.paused).push(child);
    }

    /// Whether the child the call `id` started paused.
    pub(crate) fn waits(&self, id: &str) -> bool {
        lock(&self.paused).iter().any(|child| child.call.id == id)
    }

    /// The paused child of `call`, taken out.
    pub(crate) fn take_paused(&self, call: &ToolCall) -> Option<PausedChild> {
        let mut paused = lock(&self.paused);
        let index = paused.iter().position(|child| child.call.id == call.id)?;
        Some(paused.swap_remove(index))
    }

    /// A paused child that goes on when its call runs again.
    pub(crate) fn resume(&self, child: ChildResume) {
        lock(&self.going_on).push(child);
    }

    /// The paused child the call `id` goes on with, if it has one.
    pub(crate) fn take_resume(&self, id: &str) -> Option<ChildResume> {
        let mut going_on = lock(&self.going_on);
        let index = going_on.iter().position(|child| child.call.id == id)?;
        Some(going_on.swap_remove(index))
    }

    /// The family of the run `scope` is, if it keeps one.
    pub(crate) fn of(scope: &RunScope) -> Option<&Family> {
        scope.family.as_ref()?.downcast_ref::<Family>()
    }

    /// Keeps a child's run as it ends (a child that paused is kept in the paused run instead).
    pub(crate) fn keep(&self, child: ChildRun) {
        lock(&self.children).push(child);
    }

    /// How many children have ended.
    pub(crate) fn ended(&self) -> usize {
        lock(&self.children).len()
    }

    /// The children that ended after the first `kept`, in the order they ended.
    pub(crate) fn ended_since(&self, kept: usize) -> Vec<ChildRun> {
        lock(&self.children)
            .get(kept..)
            .unwrap_or_default()
            .to_vec()
    }

    /// The children kept, taken out, in the order of the calls in `messages` that started them.
    pub(crate) fn take(&self, messages: &[Message]) -> Vec<ChildRun> {
        in_call_order(std::mem::take(&mut *lock(&self.children)), messages)
    }

    /// A copy of the children kept so far, in the order of the calls in `messages` that started
    /// them: what a part's hooks are told when it ends.
    pub(crate) fn so_far(&self, messages: &[Message]) -> Vec<ChildRun> {
        in_call_order(lock(&self.children).clone(), messages)
    }
}

/// `children` in the order of the calls in `messages` that started them.
fn in_call_order(mut children: Vec<ChildRun>, messages: &[Message]) -> Vec<ChildRun> {
    // Each call's place among all the calls the run's replies made.
    let made = (messages.iter()).flat_map(|message| match message {
        Message::Assistant(reply) => reply.tool_calls.as_slice(),
        _ => &[],
    });
    let order = |call_id: &str| made.clone().position(|call| call.id == call_id);
    children.sort_by_key(|child| order(&child.call_id));
    children
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
