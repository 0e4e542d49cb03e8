//! Running an agent: the entry points on [`Agent`], a run with its options (`builder`), the loop
//! behind them (`driver`), what a run gives back (`outcome`) and its live events (`events`).

mod builder;
mod driver;
mod events;
pub(crate) mod journal;
pub(crate) mod outcome;
pub(crate) mod pause;
mod resumed;

use std::future::Future;

pub use builder::{RunBuilder, TypedRun};
pub use events::{RunEvent, RunStream};
pub use outcome::{RunError, RunOutput, StopReason, TokenKind};
pub use pause::{Decision, PAUSED_RUN_VERSION, PausedRun, PendingCall, ResumeError, Waiting};
pub use resumed::ResumedRun;

use crate::agent::Agent;
use crate::message::Message;
use crate::output::OutputType;
pub(crate) use driver::{RunPlan, drive};

impl<S: Send + Sync + 'static> Agent<S> {
    /// A run on a new conversation (system prompt, then `input`) with its own `context`: the value
    /// the tools' [`State`](crate::State) parameters, the hooks and the approver are handed in
    /// this run. One agent serves many runs at once, each with its own context (the user a web
    /// request is for, say); a tool asking for a part the context does not have is a compile
    /// error. `.await` the [`RunBuilder`], or set it up further first.
    pub fn run_with<'a>(&'a self, context: &'a S, input: impl Into<String>) -> RunBuilder<'a, S> {
        let messages = self.new_conversation(input);
        RunBuilder::new(self, context, messages)
    }

    /// Goes on with a [paused](StopReason::Paused) run, with `context`, given one [`Decision`]
    /// per waiting call (by call id): approved calls run (with edited arguments where given),
    /// denied ones are answered with the reason, external ones with the caller's result; then the
    /// loop goes on under the same limits, the steps, tokens, tool calls and time already used
    /// counting. `paused` may come from another process ([`PausedRun::from_json`]). Decisions that
    /// do not fit (an unknown call id, a call without a decision or with two, a tool this agent
    /// lacks, a result for a call waiting for approval) are [`RunError::Resume`], and nothing runs.
    pub fn resume_paused_with<'a>(
        &'a self,
        context: &'a S,
        paused: PausedRun,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> ResumedRun<'a, S> {
        let decisions = decisions
            .into_iter()
            .map(|(id, decision)| (id.into(), decision))
            .collect();
        ResumedRun::new(self, context, paused, decisions)
    }

    /// A new conversation: the system prompt, then `input`, with room for six messages: a run
    /// that calls a tool once and answers never reallocates it, and a longer one grows it once
    /// less than from four (measured: 2-3% of a two-step run, nothing for one that answers at once).
    fn new_conversation(&self, input: impl Into<String>) -> Vec<Message> {
        let mut messages = Vec::with_capacity(6);
        messages.push(Message::system(self.system_prompt()));
        messages.push(Message::user(input));
        messages
    }
}

impl Agent<()> {
    /// Runs the agent on a new conversation: system prompt, then `input`.
    // Not an `async fn`, here and in `resume`: each would wrap the loop's future in one more,
    // moved whole on its way in (measured: 40 of the 3,547 instructions of a run that answers
    // at once).
    pub fn run(
        &self,
        input: impl Into<String>,
    ) -> impl Future<Output = Result<RunOutput, RunError>> + Send + '_ {
        let messages = self.new_conversation(input);
        self.resume(messages)
    }

    /// Runs on `input` for an answer of type `T`: see [`TypedRun`]. The same as
    /// `agent.run_with(&(), input).output::<T>()`.
    pub fn run_typed<T: OutputType>(&self, input: impl Into<String>) -> TypedRun<'_, (), T> {
        self.run_with(&(), input).output::<T>()
    }

    /// Runs like [`run`](Agent::run) until `cancel` completes; then the model call or tool calls in
    /// flight are dropped (cancelled) and the run ends with
    /// [`StopReason::Cancelled`](crate::StopReason::Cancelled) and the transcript so far. Dropping the
    /// future of any run cancels it as well.
    pub async fn run_until(
        &self,
        input: impl Into<String>,
        cancel: impl Future<Output = ()> + Send,
    ) -> Result<RunOutput, RunError> {
        let messages = self.new_conversation(input);
        drive(self, RunPlan::new(&()), messages, Some(cancel), None).await
    }

    /// Goes on with an earlier conversation (say, the `messages` of a previous [`RunOutput`]): appends
    /// `input` and runs. A history that does not start with a system message gets the system prompt.
    pub async fn run_with_history(
        &self,
        history: Vec<Message>,
        input: impl Into<String>,
    ) -> Result<RunOutput, RunError> {
        self.run_with(&(), input).history(history).await
    }

    /// Runs like [`run`](Agent::run), streaming what happens: step starts, the model's text as it
    /// arrives, each tool call and result, step ends, and last the very result `run` returns.
    /// Both go through one loop, so they cannot behave differently.
    pub fn run_stream(&self, input: impl Into<String>) -> RunStream<'_> {
        self.run_with(&(), input).stream()
    }

    /// [`run_with_history`](Agent::run_with_history), streamed: for a conversation that goes on.
    pub fn run_stream_with_history(
        &self,
        history: Vec<Message>,
        input: impl Into<String>,
    ) -> RunStream<'_> {
        self.run_with(&(), input).history(history).stream()
    }

    /// Goes on with a paused run: [`resume_paused_with`](Agent::resume_paused_with) for an agent
    /// without a per-run context.
    ///
    /// ```
    /// use agent_core::{Agent, AssistantMessage, Decision, PausedRun, StopReason, ToolCall, tool};
    /// use agent_core::testing::ScriptedModel;
    ///
    /// /// Deletes a file.
    /// #[tool(requires_approval)]
    /// fn delete(path: String) -> String {
    ///     format!("deleted {path}")
    /// }
    ///
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let model = ScriptedModel::new([
    ///     AssistantMessage::tool_calls([ToolCall::new("c1", "delete", r#"{"path":"old.log"}"#)]),
    ///     AssistantMessage::text("Done."),
    /// ]);
    /// let agent = Agent::new(model).try_tool(delete {}).unwrap().defer_approvals();
    /// let first = agent.run("Clean up").await.unwrap();
    /// assert_eq!(first.stop_reason, StopReason::Paused);
    ///
    /// // Saved, and loaded again (here or in another process, by a fresh agent).
    /// let saved = first.paused.unwrap().to_json();
    /// let paused = PausedRun::from_json(&saved).unwrap();
    /// assert_eq!(paused.pending()[0].call.name, "delete");
    /// let done = agent.resume_paused(paused, [("c1", Decision::Approve)]).await.unwrap();
    /// assert_eq!(done.text, "Done.");
    /// # });
    /// ```
    pub fn resume_paused(
        &self,
        paused: PausedRun,
        decisions: impl IntoIterator<Item = (impl Into<String>, Decision)>,
    ) -> ResumedRun<'_, ()> {
        self.resume_paused_with(&(), paused, decisions)
    }

    /// Runs on a history as it is, adding nothing: for instance to go on after a step limit.
    #[inline]
    pub fn resume(
        &self,
        messages: Vec<Message>,
    ) -> impl Future<Output = Result<RunOutput, RunError>> + Send + '_ {
        drive(
            self,
            RunPlan::new(&()),
            messages,
            None::<std::future::Pending<()>>,
            None,
        )
    }
}
