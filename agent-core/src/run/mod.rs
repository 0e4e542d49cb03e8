//! Running an agent: the entry points on [`Agent`], the loop behind them (`driver`), what a run
//! gives back (`outcome`) and its live events (`events`).

mod driver;
mod events;
pub(crate) mod outcome;

use std::future::Future;

pub use events::{RunEvent, RunStream};
pub use outcome::{RunError, RunOutput, StopReason, TokenKind};

use crate::agent::Agent;
use crate::message::Message;
use driver::drive;

impl Agent<()> {
    /// Runs the agent on a new conversation: system prompt, then `input`.
    pub async fn run(&self, input: impl Into<String>) -> Result<RunOutput, RunError> {
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
        drive(self, messages, None::<std::future::Pending<()>>, None).await
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
        drive(self, messages, Some(cancel), None).await
    }

    /// Goes on with an earlier conversation (say, the `messages` of a previous [`RunOutput`]): appends
    /// `input` and runs. A history that does not start with a system message gets the system prompt.
    pub async fn run_with_history(
        &self,
        history: Vec<Message>,
        input: impl Into<String>,
    ) -> Result<RunOutput, RunError> {
        let history = self.continued(history, input);
        drive(self, history, None::<std::future::Pending<()>>, None).await
    }

    /// Runs like [`run`](Agent::run), streaming what happens: step starts, the model's text as it
    /// arrives, each tool call and result, step ends, and last the very result `run` returns.
    /// Both go through one loop, so they cannot behave differently.
    pub fn run_stream(&self, input: impl Into<String>) -> RunStream<'_> {
        let messages = vec![Message::system(self.system_prompt()), Message::user(input)];
        self.stream_messages(messages)
    }

    /// [`run_with_history`](Agent::run_with_history), streamed: for a conversation that goes on.
    pub fn run_stream_with_history(
        &self,
        history: Vec<Message>,
        input: impl Into<String>,
    ) -> RunStream<'_> {
        let history = self.continued(history, input);
        self.stream_messages(history)
    }

    /// A history that goes on with `input`, with the system prompt in front if it had none.
    fn continued(&self, mut history: Vec<Message>, input: impl Into<String>) -> Vec<Message> {
        if !matches!(history.first(), Some(Message::System { .. })) {
            history.insert(0, Message::system(self.system_prompt()));
        }
        history.push(Message::user(input));
        history
    }

    fn stream_messages(&self, messages: Vec<Message>) -> RunStream<'_> {
        let (sender, receiver) = futures_channel::mpsc::unbounded();
        let run = drive(
            self,
            messages,
            None::<std::future::Pending<()>>,
            Some(sender),
        );
        RunStream::new(Box::pin(run), receiver)
    }

    /// Runs on a history as it is, adding nothing: for instance to go on after a step limit.
    pub async fn resume(&self, messages: Vec<Message>) -> Result<RunOutput, RunError> {
        drive(self, messages, None::<std::future::Pending<()>>, None).await
    }
}
