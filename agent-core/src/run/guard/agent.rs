//! An agent's guards, as its builder sets them, and its check for the lethal mix.

use std::sync::Arc;

use super::checks::Registered;
use super::{At, Guard, HoldBack, LethalMix, Place};
use crate::run::agent::Agent;

impl<S: Send + Sync + 'static> Agent<S> {
    /// Adds a guard at the places `at` names, after those added before (each is shown what the
    /// ones before let through, a rewrite included). At the input and each request it checks
    /// before the model is called; at a call, before it runs; at a result, before the model
    /// reads it; at the answer, before the run ends with it. The agents this one starts (called
    /// as tools) and hands the conversation to check with its guards unless they have their own.
    ///
    /// ```
    /// use agent_core::guard::{At, Verdict, What, guard_fn};
    /// use agent_core::testing::ScriptedModel;
    /// use agent_core::{Agent, AssistantMessage, RunError};
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let agent = Agent::new(ScriptedModel::new([AssistantMessage::text("Sure.")])).guard(
    ///     At::INPUT,
    ///     guard_fn("no passwords", |checked| match &checked.what {
    ///         What::Input(_) if checked.what.text().contains("password") => {
    ///             Verdict::trip("a password in the input")
    ///         }
    ///         _ => Verdict::Allow,
    ///     }),
    /// );
    /// let error = agent.run("my password is hunter2").await.unwrap_err();
    /// let RunError::Tripped { trip, .. } = error else { panic!("{error}") };
    /// assert_eq!(trip.guard, "no passwords");
    /// # });
    /// ```
    pub fn guard(self, at: At, guard: impl Guard + 'static) -> Self {
        self.add_guard(at, Arc::new(guard), false)
    }

    /// Adds a guard that checks the input and each request at the same time as the model call
    /// (to save the guard's latency); at other places it checks as [`guard`](Agent::guard)
    /// does. Until it has answered, nothing the model says is streamed and no tool runs; a trip
    /// cancels the model call in flight. It can allow or trip: what it would rewrite or refuse
    /// the model has already read, so anything else it says trips.
    pub fn guard_beside(self, at: At, guard: impl Guard + 'static) -> Self {
        self.add_guard(at, Arc::new(guard), true)
    }

    fn add_guard(mut self, at: At, guard: Arc<dyn Guard>, beside: bool) -> Self {
        let guards = Arc::make_mut(self.guards.get_or_insert_with(Arc::default));
        guards.add(Registered { guard, at, beside });
        self
    }

    /// How much of the answer's streamed text waits for the guards on the answer
    /// ([`At::ANSWER`]) before the caller sees it: [`HoldBack::None`] by default.
    pub fn hold_back(mut self, hold_back: HoldBack) -> Self {
        Arc::make_mut(self.guards.get_or_insert_with(Arc::default)).hold_back = hold_back;
        self
    }

    /// Accepts that this agent's tools make the lethal mix (see [`LethalMix`]), for `reason`:
    /// its runs start even so.
    pub fn allow_lethal_mix(mut self, reason: &str) -> Self {
        self.mix_accepted = Some(Arc::from(reason));
        self
    }

    /// The lethal mix this agent's tools make, unless something answers for it: an approval on
    /// every tool that sends data out, a guard on the tools' results, or
    /// [`allow_lethal_mix`](Agent::allow_lethal_mix). A run of an agent that has one fails
    /// before it starts, with [`RunError::LethalMix`](crate::RunError::LethalMix); call this to
    /// find it when the agent is built from tools known only at run time.
    pub fn lethal_mix(&self) -> Option<LethalMix> {
        let guarded =
            (self.guards.as_ref()).is_some_and(|guards| guards.checks(Place::Result, None));
        if guarded || self.mix_accepted.is_some() {
            return None;
        }
        LethalMix::among(self.tools.definitions())
    }
}
