//! The tasks a server holds: each one's state, history and artifacts, the events it has had (what
//! a stream or a subscriber reads, every reader the same ones in the same order), and the signal
//! that cancels the work on it. Kept in memory, by the caller's key; the oldest ended tasks are
//! let go past a bound.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::watch;

use crate::wire::{
    Artifact, ArtifactUpdate, Message, StatusUpdate, StreamEvent, Task, TaskState, TaskStatus, now,
};

/// How many ended tasks a server keeps for `GetTask` before it lets the oldest go.
pub const KEPT_TASKS: usize = 10_000;

/// One task: where it stands, and what happened to it.
pub(crate) struct Entry {
    pub(crate) key: String,
    record: Mutex<Record>,
    /// How many events the task has had; readers wait on it.
    events: watch::Sender<usize>,
    /// Whether the task was cancelled.
    cancel: watch::Sender<bool>,
}

struct Record {
    task: Task,
    events: Vec<StreamEvent>,
    /// A message the agent answered with instead of a task.
    reply: Option<Message>,
}

impl Entry {
    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task as it is now.
    pub(crate) fn snapshot(&self) -> Task {
        self.record().task.clone()
    }

    /// The task now, and how many events it has had.
    pub(crate) fn snapshot_at(&self) -> (Task, usize) {
        let record = self.record();
        (record.task.clone(), record.events.len())
    }

    /// The events after the first `seen`.
    pub(crate) fn events_after(&self, seen: usize) -> Vec<StreamEvent> {
        self.record()
            .events
            .get(seen..)
            .unwrap_or_default()
            .to_vec()
    }

    /// A receiver that wakes when the task has another event.
    pub(crate) fn watch(&self) -> watch::Receiver<usize> {
        self.events.subscribe()
    }

    /// The message the agent answered with, if it answered with one instead of a task.
    pub(crate) fn reply(&self) -> Option<Message> {
        self.record().reply.clone()
    }

    pub(crate) fn state(&self) -> TaskState {
        self.record().task.status.state
    }

    /// Completes when the task is cancelled.
    pub(crate) fn cancelled(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut cancelled = self.cancel.subscribe();
        async move {
            let _ = cancelled.wait_for(|cancelled| *cancelled).await;
        }
    }

    /// Adds the user's `message` to the task's history.
    pub(crate) fn add_message(&self, message: Message) {
        self.record().task.history.push(message);
    }

    /// Takes the message `message_id` back out of the history (an answer refused).
    pub(crate) fn withdraw(&self, message_id: &str) {
        let history = &mut self.record().task.history;
        if let Some(at) = history
            .iter()
            .rposition(|message| message.message_id == message_id)
        {
            history.remove(at);
        }
    }

    /// Moves the task to `state`, with the agent's `message`: an event for its readers. A task
    /// that has ended stays as it ended. Whether it moved.
    pub(crate) fn set_status(&self, state: TaskState, message: Option<Message>) -> bool {
        let mut record = self.record();
        let task = &mut record.task;
        if task.status.state.is_terminal() {
            return false;
        }
        let message = message.map(|message| self.own(message, task));
        if let Some(message) = &message {
            task.history.push(message.clone());
        }
        task.status = TaskStatus {
            state,
            message,
            timestamp: Some(now()),
        };
        let update = StatusUpdate {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            status: task.status.clone(),
        };
        record.events.push(StreamEvent::StatusUpdate(update));
        self.events.send_replace(record.events.len());
        if state == TaskState::Canceled {
            self.cancel.send_replace(true);
        }
        true
    }

    /// Adds `artifact` to the task (its parts to the artifact of the same id, with `append`): an
    /// event for its readers.
    pub(crate) fn add_artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) {
        let mut record = self.record();
        let task = &mut record.task;
        if task.status.state.is_terminal() {
            return;
        }
        let existing =
            (task.artifacts.iter_mut()).find(|kept| kept.artifact_id == artifact.artifact_id);
        match existing {
            Some(kept) if append => {
                for part in &artifact.parts {
                    let last = kept.parts.last_mut();
                    match (last, &part.text) {
                        // Streamed text joins the text before it.
                        (Some(last), Some(more)) if last.text.is_some() && part.raw.is_none() => {
                            last.text.get_or_insert_default().push_str(more);
                        }
                        _ => kept.parts.push(part.clone()),
                    }
                }
            }
            Some(kept) => *kept = artifact.clone(),
            None => task.artifacts.push(artifact.clone()),
        }
        let update = ArtifactUpdate {
            task_id: task.id.clone(),
            context_id: task.context_id.clone(),
            artifact,
            append,
            last_chunk,
        };
        record.events.push(StreamEvent::ArtifactUpdate(update));
        self.events.send_replace(record.events.len());
    }

    /// Answers with `message` instead of a task: the task ends with it.
    pub(crate) fn set_reply(&self, message: Message) {
        let mut record = self.record();
        let message = self.own(message, &record.task);
        record.reply = Some(message.clone());
        record.task.history.push(message.clone());
        record.task.status = TaskStatus {
            state: TaskState::Completed,
            message: None,
            timestamp: Some(now()),
        };
        record.events.push(StreamEvent::Message(message));
        self.events.send_replace(record.events.len());
    }

    /// `message` as one of this task's: its task and context named.
    fn own(&self, mut message: Message, task: &Task) -> Message {
        message.task_id = Some(task.id.clone());
        message.context_id = Some(task.context_id.clone());
        message
    }
}

/// The tasks of a server, by the caller's key of each.
#[derive(Default)]
pub(crate) struct Tasks {
    kept: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    by_key: HashMap<String, Arc<Entry>>,
    /// Keys in the order the tasks were made, to let the oldest ended ones go.
    order: VecDeque<String>,
}

impl Tasks {
    /// A new task `id` in context `context_id`, kept under `key`, submitted with the user's
    /// `message` (its ids set to the task's).
    pub(crate) fn create(
        &self,
        key: String,
        id: String,
        context_id: String,
        mut message: Message,
    ) -> Arc<Entry> {
        message.task_id = Some(id.clone());
        message.context_id = Some(context_id.clone());
        let task = Task {
            id,
            context_id,
            status: TaskStatus {
                state: TaskState::Submitted,
                message: None,
                timestamp: Some(now()),
            },
            artifacts: Vec::new(),
            history: vec![message],
            metadata: None,
        };
        let entry = Arc::new(Entry {
            key: key.clone(),
            record: Mutex::new(Record {
                task,
                events: Vec::new(),
                reply: None,
            }),
            events: watch::Sender::new(0),
            cancel: watch::Sender::new(false),
        });
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.by_key.insert(key.clone(), Arc::clone(&entry));
        kept.order.push_back(key);
        if kept.order.len() > KEPT_TASKS {
            let Kept { by_key, order } = &mut *kept;
            // The oldest task that has ended goes; one still at work stays.
            if let Some(at) = order.iter().position(|key| {
                by_key
                    .get(key)
                    .is_none_or(|entry| entry.state().is_terminal())
            }) && let Some(key) = order.remove(at)
            {
                by_key.remove(&key);
            }
        }
        entry
    }

    /// The task kept under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Entry>> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.by_key.get(key).cloned()
    }

    /// Lets the task kept under `key` go (one that answered with a message, say).
    pub(crate) fn forget(&self, key: &str) {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.by_key.remove(key);
        kept.order.retain(|kept| kept != key);
    }

    /// The tasks whose keys start with `prefix` and that are of context `context_id` (all of the
    /// caller's, `None`), newest first.
    pub(crate) fn list(&self, prefix: &str, context_id: Option<&str>) -> Vec<Task> {
        let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let mut tasks: Vec<Task> = (kept.order.iter().rev())
            .filter(|key| key.starts_with(prefix))
            .filter_map(|key| kept.by_key.get(key))
            .map(|entry| entry.snapshot())
            .filter(|task| context_id.is_none_or(|id| task.context_id == id))
            .collect();
        tasks.sort_by(|a, b| b.status.timestamp.cmp(&a.status.timestamp));
        tasks
    }
}
