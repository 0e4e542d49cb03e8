//! The call-policy seam: what is to become of each call the model makes. A run has an ordered
//! list of [`CallPolicy`] values; before each model call each may stop the run, on each reply
//! each may rule on calls the reply as a whole decides, and each call left open is ruled on by
//! the list in order when it starts, the rulings folded into one.

use std::time::Duration;

use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::run::outcome::StopReason;
use crate::run::pause::Waiting;
use crate::texts::Texts;
use crate::tool::call_info::RunId;
use crate::tool::{BoxFuture, ToolDef, ToolOutput};
use crate::usage::Usage;

/// What is to become of one call.
#[derive(Debug)]
#[non_exhaustive]
pub enum Ruling {
    /// Run it (with its arguments as they stand: a policy before may have rewritten them).
    Run,
    /// Run it with these arguments (a JSON text) instead; the policies after see the rewritten
    /// call.
    RunWith(String),
    /// Answer it without running it: why it was not run, or what stands for its result.
    Answer(Result<ToolOutput, ToolError>),
    /// Answer it without running it, with `ToolError::NotRun` worded for this reason, and end
    /// the run when the step's calls are done ([`StopReason::Stopped`]).
    Stop(String),
    /// Wait for a person or the caller: the run pauses once the reply's other calls are done.
    Wait(Waiting),
}

impl Ruling {
    /// Whether the call is still to run.
    pub fn runs(&self) -> bool {
        matches!(self, Ruling::Run | Ruling::RunWith(_))
    }

    /// The call is not run, for this reason (worded by the run's [`Texts`] when its result is
    /// made).
    pub fn not_run(why: NotRun) -> Self {
        Ruling::Answer(Err(ToolError::NotRun { why }))
    }
}

/// A policy's ruling on one call: at once, or after an await (a hook, a person's approver).
pub enum Ruled<'a> {
    /// Known at once.
    Now(Ruling),
    /// Known when the future completes.
    Later(BoxFuture<'a, Ruling>),
}

impl From<Ruling> for Ruled<'_> {
    fn from(ruling: Ruling) -> Self {
        Ruled::Now(ruling)
    }
}

impl Ruled<'_> {
    /// The ruling.
    pub async fn get(self) -> Ruling {
        match self {
            Ruled::Now(ruling) => ruling,
            Ruled::Later(future) => future.await,
        }
    }
}

/// Where a run stands, as the policies see it.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct RunStatus<'a> {
    /// The step about to be taken, or being taken, from 1.
    pub step: usize,
    /// Tokens used so far.
    pub usage: Usage,
    /// Calls counted against the tool-call limit so far.
    pub tool_calls: usize,
    /// Whether the run can pause (a typed run cannot): a call that waits in one that cannot is
    /// answered as not run.
    pub can_pause: bool,
    /// The run's id.
    pub run_id: &'a RunId,
    /// The run's words, for a call answered without running.
    pub texts: &'a dyn Texts,
    /// The run's transcript so far (while a step's calls run: up to the reply that made them).
    pub messages: &'a [Message],
}

impl std::fmt::Debug for RunStatus<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunStatus")
            .field("step", &self.step)
            .field("usage", &self.usage)
            .field("tool_calls", &self.tool_calls)
            .field("can_pause", &self.can_pause)
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

/// A call being ruled on when it starts.
#[non_exhaustive]
pub struct PolicyCall<'a, S> {
    /// The run's context.
    pub context: &'a S,
    /// The call, with its arguments as the policies before have left them.
    pub call: &'a ToolCall,
    /// The definition of the tool it calls, if the agent has one of that name.
    pub tool: Option<&'a ToolDef>,
    /// The ruling of the policies before: [`Ruling::Run`] or [`Ruling::Wait`] (a call answered
    /// or stopped is not shown to the policies after).
    pub so_far: &'a Ruling,
    /// Where the run stands.
    pub status: &'a RunStatus<'a>,
}

impl<S> Clone for PolicyCall<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for PolicyCall<'_, S> {}

/// Where the rulings of a reply's calls are kept while they are made: one place per call, in
/// call order (the kernel's slots).
pub(crate) trait RulingPlaces {
    /// How many calls there are.
    fn count(&self) -> usize;
    /// Whether no one has ruled on call `index` yet.
    fn is_open(&self, index: usize) -> bool;
    /// Rules on call `index`, which is open.
    fn set(&mut self, index: usize, ruling: Ruling);
}

/// The rulings of a reply's calls, as the answer check and the policies make them before any
/// call runs: one per call, in call order, none while no one has ruled.
pub struct ReplyRulings<'r> {
    places: &'r mut dyn RulingPlaces,
    stop_after: &'r mut Option<StopReason>,
}

impl<'r> ReplyRulings<'r> {
    pub(crate) fn new(
        places: &'r mut dyn RulingPlaces,
        stop_after: &'r mut Option<StopReason>,
    ) -> Self {
        ReplyRulings { places, stop_after }
    }

    /// The indices of the calls no one has ruled on yet.
    pub fn open(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.places.count()).filter(|&index| self.places.is_open(index))
    }

    /// Whether call `index` has a ruling.
    pub fn is_ruled(&self, index: usize) -> bool {
        index < self.places.count() && !self.places.is_open(index)
    }

    /// Rules on call `index`, unless someone has.
    pub fn rule(&mut self, index: usize, ruling: Ruling) {
        if index < self.places.count() && self.places.is_open(index) {
            self.places.set(index, ruling);
        }
    }

    /// Ends the run once this step's calls are done, unless an earlier policy already asked.
    pub fn stop_after(&mut self, reason: StopReason) {
        self.stop_after.get_or_insert(reason);
    }
}

/// One value at the call-policy seam. A run's policies are an ordered list (see
/// [`Agent::policy`](crate::Agent::policy) for the order); each method has a default that lets
/// everything through, so a policy implements only what it rules on.
///
/// ```
/// use agent_core::seams::{CallPolicy, PolicyCall, Ruled, Ruling};
/// use agent_core::NotRun;
///
/// /// No call to `rm` in this deployment.
/// struct NoRm;
///
/// impl<S: Send + Sync + 'static> CallPolicy<S> for NoRm {
///     fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
///         let refused = Ruling::not_run(NotRun::Skipped("rm is off".into()));
///         (call.call.name == "rm").then(|| refused.into())
///     }
/// }
/// ```
pub trait CallPolicy<S = ()>: Send + Sync {
    /// Before each model call: `Some` ends the run there with that reason;
    /// [`StopReason::Paused`] has it wait there instead (it ends paused with no call waiting,
    /// and a resume with no decisions goes on with the model call), in a run that can pause.
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        let _ = status;
        None
    }

    /// What the reply as a whole decides of its calls, before any runs (a limit on how many,
    /// a call cut off): rulings for calls no one ruled on yet, in `rulings`.
    fn on_reply(
        &self,
        status: &RunStatus<'_>,
        reply: &AssistantMessage,
        cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let _ = (status, reply, cut_off, rulings);
    }

    /// Rules on one call when it starts, given the ruling so far (`call.so_far`): `None` leaves
    /// it as it is (the default).
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        let _ = call;
        None
    }

    /// A last look at a call about to run, whoever ruled that it runs (the policies, or a person
    /// who approved it on a resumed run), with the arguments it will run with: `None` lets it
    /// run (the default); a ruling that answers or stops it, or runs it with other arguments,
    /// counts. The guards on calls' arguments are here, so an approved call is checked too.
    fn before_run<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        let _ = call;
        None
    }

    /// A look at a call's result (of the tool `tool`, if the agent has it) that may take time
    /// (a guard asking a judge), before the model reads it and before
    /// [`after_call`](Self::after_call): the future may change the result.
    /// Every result of a call that ran or was answered without running (not those of calls not
    /// run or interrupted, whose words are the run's). Nothing by default.
    fn check_result<'a>(
        &'a self,
        context: &'a S,
        status: &RunStatus<'_>,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
        result: &'a mut ToolResultMessage,
    ) -> Option<BoxFuture<'a, ()>> {
        let _ = (context, status, call, tool, result);
        None
    }

    /// After each call, with the result the model is to read (which a policy may change) and how
    /// long the call took from its ruling to its result: every result, a call that was answered
    /// without running, interrupted or not run included. Nothing by default.
    fn after_call(
        &self,
        context: &S,
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        let _ = (context, call, result, elapsed);
    }
}

/// A shared policy is a policy (one value in the lists of several agents, or kept to read).
// Every method forwarded, or the shared policy would lose one.
#[deny(clippy::missing_trait_methods)]
impl<S, P: CallPolicy<S> + ?Sized> CallPolicy<S> for std::sync::Arc<P> {
    fn before_step(&self, status: &RunStatus<'_>) -> Option<StopReason> {
        (**self).before_step(status)
    }

    fn on_reply(
        &self,
        status: &RunStatus<'_>,
        reply: &AssistantMessage,
        cut_off: bool,
        rulings: &mut ReplyRulings<'_>,
    ) {
        (**self).on_reply(status, reply, cut_off, rulings);
    }

    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        (**self).rule(call)
    }

    fn before_run<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        (**self).before_run(call)
    }

    fn check_result<'a>(
        &'a self,
        context: &'a S,
        status: &RunStatus<'_>,
        call: &'a ToolCall,
        tool: Option<&'a ToolDef>,
        result: &'a mut ToolResultMessage,
    ) -> Option<BoxFuture<'a, ()>> {
        (**self).check_result(context, status, call, tool, result)
    }

    fn after_call(
        &self,
        context: &S,
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        (**self).after_call(context, call, result, elapsed);
    }
}
