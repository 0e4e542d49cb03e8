//! Running an agent: the entry points on [`Agent`], a run with its options (`builder`), the loop
//! behind them (`driver`), what a run gives back (`outcome`) and its live events (`events`).

mod builder;
mod driver;
mod events;
pub(crate) mod outcome;

use std::future::Future;

pub use builder::{RunBuilder, TypedRun};
pub use events::{RunEvent, RunStream};
pub use outcome::{RunError, RunOutput, StopReason, TokenKind};

use crate::agent::Agent;
use crate::message::Message;
use crate::output::OutputType;
use driver::{RunPlan, drive};

impl<S: Send + Sync + 'static> Agent<S> {
    /// A run on a new conversation (system prompt, then `input`) with its own `context`: the value
    /// the tools' [`State`](crate::State) parameters, the hooks and the approver are handed in
    /// this run. One agent serves many runs at once, each with its own context (the user a web
    /// request is for, say); a tool asking for a part the context does not have is a compile
    /// error. `.await` the [`RunBuilder`], or set it up further first.
    pub fn run_with<'a>(&'a self, context: &'a S, input: impl Into<String>) -> RunBuilder<'a, S> {
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
        RunBuilder::new(self, context, messages)
    }
}

impl Agent<()> {
    /// Runs the agent on a new conversation: system prompt, then `input`.
    pub async fn run(&self, input: impl Into<String>) -> Result<RunOutput, RunError> {
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
        self.resume(messages).await
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
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
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

    /// Runs on a history as it is, adding nothing: for instance to go on after a step limit.
    pub async fn resume(&self, messages: Vec<Message>) -> Result<RunOutput, RunError> {
        drive(
            self,
            RunPlan::new(&()),
            messages,
            None::<std::future::Pending<()>>,
            None,
        )
        .await
    }
}
