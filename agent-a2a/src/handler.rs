//! What does the work of a task: a [`TaskHandler`]. The server keeps the tasks, speaks the
//! protocol (blocking or streamed answers, subscribers, cancels) and hands each message a client
//! sends to the handler, which tells the task's progress through [`Updates`]. An agent is one
//! ([`AgentHandler`](crate::AgentHandler)); anything else that answers A2A messages can be.

use std::sync::Arc;

use agent_core::BoxFuture;
use agent_web::Admission;

use crate::jsonrpc::RpcError;
use crate::tasks::Entry;
use crate::wire::{Artifact, Message, TaskState};

/// Does the work of tasks for a server of callers whose context is `S`.
pub trait TaskHandler<S>: Send + Sync + 'static {
    /// Works on `work.message`: a new task's first message, or the answer to a task waiting for
    /// input (`work.resumes`). Reports through `work.updates` and returns when the task has
    /// ended or waits for the client; an error before any update refuses the message (the
    /// client is answered with it, and a new task is not kept).
    fn handle<'a>(&'a self, work: Work<'a, S>) -> BoxFuture<'a, Result<(), RpcError>>;

    /// The task `task_id` of the conversation kept under `conversation` was cancelled while it
    /// waited for the client (nothing was at work on it): let go of what waits. Does nothing by
    /// default.
    fn cancelled<'a>(&'a self, conversation: &'a str, task_id: &'a str) -> BoxFuture<'a, ()> {
        let _ = (conversation, task_id);
        Box::pin(std::future::ready(()))
    }
}

/// A message to work on.
pub struct Work<'a, S> {
    /// The caller's context (who is asking).
    pub context: &'a S,
    /// The store key of the task's conversation (its context id, under the caller's own): where
    /// a handler keeps what the conversation said.
    pub conversation: &'a str,
    /// The message, its task and context ids set.
    pub message: Message,
    /// Whether it answers a task that waited for the client.
    pub resumes: bool,
    /// Where the task's progress goes.
    pub updates: Updates,
}

/// Where a handler tells a task's progress: each call is an event for the task's readers (a
/// stream, a subscriber) and changes what `GetTask` returns. Once the task has ended, further
/// updates are let go.
#[derive(Clone)]
pub struct Updates {
    pub(crate) entry: Arc<Entry>,
    pub(crate) task_id: String,
    pub(crate) context_id: String,
    /// The caller's place under their limits, held while the work goes on (every copy of these
    /// updates dropped lets their next message in).
    pub(crate) admission: Option<Arc<Admission>>,
}

impl Updates {
    /// The task's id.
    pub fn task_id(&self) -> &str {
        &self.task_id
    }

    /// The task's context id.
    pub fn context_id(&self) -> &str {
        &self.context_id
    }

    /// The task is being worked on.
    pub fn working(&self) {
        self.entry.set_status(TaskState::Working, None);
    }

    /// The task is done; `message` is the agent's answer, if it has one.
    pub fn completed(&self, message: Option<Message>) {
        self.entry.set_status(TaskState::Completed, message);
    }

    /// The task waits for the client: `message` says what it needs.
    pub fn input_required(&self, message: Message) {
        self.entry
            .set_status(TaskState::InputRequired, Some(message));
    }

    /// The task failed: `message` says why.
    pub fn failed(&self, message: Message) {
        self.entry.set_status(TaskState::Failed, Some(message));
    }

    /// The task was stopped before it was done.
    pub fn canceled(&self) {
        self.entry.set_status(TaskState::Canceled, None);
    }

    /// The task made `artifact`, or (`append`) more parts of the artifact of its id;
    /// `last_chunk`: nothing more of it comes.
    pub fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) {
        self.entry.add_artifact(artifact, append, last_chunk);
    }

    /// Answers with `message` alone, no task: what a question that needs no work gets.
    pub fn reply(&self, message: Message) {
        self.entry.set_reply(message);
    }

    /// Counts `tokens` the work used against the caller's token limit
    /// ([`UserLimits::tokens`](agent_web::UserLimits::tokens)); nothing on a server without
    /// limits.
    pub async fn spent(&self, tokens: u64) {
        if let Some(admission) = &self.admission {
            admission.spend(tokens).await;
        }
    }

    /// These updates without the caller's place under their limits: kept for a task that waits,
    /// which holds no place meanwhile.
    pub(crate) fn detached(&self) -> Updates {
        Updates {
            admission: None,
            ..self.clone()
        }
    }

    /// The task was let go before it was done, not by the client: `message` says why.
    pub(crate) fn let_go(&self, message: Message) {
        self.entry.set_status(TaskState::Canceled, Some(message));
    }

    /// Completes when the task is cancelled (the client's `CancelTask`).
    pub fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        self.entry.cancelled()
    }
}
