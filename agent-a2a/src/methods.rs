//! The JSON-RPC methods: a message sent (answered when its task ends or waits, or streamed),
//! tasks read, listed, cancelled and subscribed to; what the agent does not offer (push
//! notifications, an extended card) refused with its code.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agent_web::{Admission, Caller};
use axum::response::Response;
use axum::response::sse::Event;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use crate::follow::{Follow, Next};
use crate::handler::TaskHandler;
use crate::handler::{Updates, Work};
use crate::jsonrpc::{RpcError, json_response, param, response};
use crate::tasks::{Entry, Tasks};
use crate::wire::{Message, StreamEvent, Task, fresh};

/// What the methods work with: the tasks, and what does their work.
pub(crate) struct Desk<S> {
    pub(crate) tasks: Arc<Tasks>,
    pub(crate) handler: Arc<dyn TaskHandler<S>>,
    /// How long a stream waits before it sends a keep-alive (zero: it sends none).
    pub(crate) keep_alive: Duration,
}

/// A call of a method: its id, its params, and who called.
pub(crate) struct Call<S> {
    pub(crate) id: Value,
    pub(crate) params: Value,
    pub(crate) caller: Caller<S>,
}

/// `SendMessage` (`streamed: false`) and `SendStreamingMessage`.
pub(crate) async fn send<S: Send + Sync + 'static>(
    desk: &Desk<S>,
    call: Call<S>,
    streamed: bool,
    admission: Option<Admission>,
) -> Response {
    let Call { id, params, caller } = call;
    let started = match start(desk, &params, caller, admission) {
        Ok(started) => started,
        Err(error) => return json_response(&response(&id, Err(error))),
    };
    let Started {
        entry,
        first,
        seen,
        handled,
    } = started;
    let configuration = params.get("configuration");
    let history = history_length(configuration);
    if streamed {
        let follow = Follow::new(entry, seen, true, Some(handled));
        return event_stream(id, Some(StreamEvent::Task(first)), follow, desk.keep_alive);
    }
    let immediately = configuration
        .and_then(|configuration| param(configuration, "returnImmediately", "return_immediately"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if immediately {
        return json_response(&response(
            &id,
            Ok(json!({ "task": trimmed(first, history) })),
        ));
    }
    let mut follow = Follow::new(Arc::clone(&entry), seen, true, Some(handled));
    while let Some(next) = follow.next().await {
        if let Next::Failed(error) = next {
            return json_response(&response(&id, Err(error)));
        }
    }
    let result = match entry.reply() {
        Some(message) => json!({ "message": message }),
        None => json!({ "task": trimmed(entry.snapshot(), history) }),
    };
    json_response(&response(&id, Ok(result)))
}

/// A message taken on: its task (new, or one that waited for the client), the task as it was
/// then and how many events it had, and how the handler's work on it ends.
struct Started {
    entry: Arc<Entry>,
    first: Task,
    seen: usize,
    handled: oneshot::Receiver<Result<(), RpcError>>,
}

/// Takes on the message in `params`: checks it against its task, keeps it, and starts the
/// handler's work on it.
fn start<S: Send + Sync + 'static>(
    desk: &Desk<S>,
    params: &Value,
    caller: Caller<S>,
    admission: Option<Admission>,
) -> Result<Started, RpcError> {
    let message = params
        .get("message")
        .ok_or_else(|| RpcError::invalid_params("the params have no `message`"))?;
    let mut message: Message = serde_json::from_value(message.clone())
        .map_err(|error| RpcError::invalid_params(format!("the message does not fit: {error}")))?;
    if message.parts.is_empty() {
        return Err(RpcError::invalid_params("the message has no parts"));
    }
    let (entry, resumes) = match &message.task_id {
        Some(task_id) => {
            let entry = (desk.tasks.get(&caller.key(task_id)))
                .ok_or_else(|| RpcError::task_not_found(task_id))?;
            let task = entry.snapshot();
            if message
                .context_id
                .as_ref()
                .is_some_and(|id| *id != task.context_id)
            {
                return Err(RpcError::invalid_params(format!(
                    "task `{task_id}` is of context `{}`, not `{}`",
                    task.context_id,
                    message.context_id.as_deref().unwrap_or_default()
                )));
            }
            if task.status.state.is_terminal() {
                return Err(RpcError::unsupported(format!(
                    "task `{task_id}` has ended: send a new message without its id"
                )));
            }
            if !task.status.state.is_interrupted() {
                return Err(RpcError::unsupported(format!(
                    "task `{task_id}` is at work: wait for it, or cancel it"
                )));
            }
            message.context_id = Some(task.context_id.clone());
            entry.add_message(message.clone());
            (entry, true)
        }
        None => {
            let context_id = message.context_id.clone().unwrap_or_else(fresh);
            caller
                .checked_key(&context_id)
                .map_err(|problem| RpcError::invalid_params(format!("the contextId: {problem}")))?;
            let task_id = fresh();
            let key = caller.key(&task_id).into_owned();
            let entry = desk.tasks.create(key, task_id, context_id, message.clone());
            (entry, false)
        }
    };
    let (first, seen) = entry.snapshot_at();
    message.task_id = Some(first.id.clone());
    message.context_id = Some(first.context_id.clone());
    let conversation = caller.key(&first.context_id).into_owned();
    let updates = Updates {
        entry: Arc::clone(&entry),
        task_id: first.id.clone(),
        context_id: first.context_id.clone(),
        admission: admission.map(Arc::new),
    };
    let (done, handled) = oneshot::channel();
    let (handler, tasks) = (Arc::clone(&desk.handler), Arc::clone(&desk.tasks));
    let taken = Arc::clone(&entry);
    let message_id = message.message_id.clone();
    tokio::spawn(async move {
        let context = caller.into_context();
        let work = Work {
            context: &context,
            conversation: &conversation,
            message,
            resumes,
            updates,
        };
        let outcome = handler.handle(work).await;
        // A message refused before any work is not kept: a new task goes, an answer leaves the
        // task as it was.
        if outcome.is_err() && taken.events_after(seen).is_empty() {
            if resumes {
                taken.withdraw(&message_id);
            } else {
                tasks.forget(&taken.key);
            }
        }
        let _ = done.send(outcome);
    });
    Ok(Started {
        entry,
        first,
        seen,
        handled,
    })
}

/// `GetTask`.
pub(crate) fn get<S>(desk: &Desk<S>, call: &Call<S>) -> Result<Value, RpcError> {
    let entry = task(desk, call)?;
    let history = history_length(Some(&call.params));
    Ok(serde_json::to_value(trimmed(entry.snapshot(), history)).unwrap_or_default())
}

/// `CancelTask`: a task at work is stopped; one that waits for the client is let go.
pub(crate) async fn cancel<S: Send + Sync + 'static>(
    desk: &Desk<S>,
    call: &Call<S>,
) -> Result<Value, RpcError> {
    let entry = task(desk, call)?;
    let before = entry.snapshot();
    if before.status.state.is_terminal()
        || !entry.set_status(crate::wire::TaskState::Canceled, None)
    {
        return Err(RpcError::not_cancelable(&before.id));
    }
    if before.status.state.is_interrupted() {
        let conversation = call.caller.key(&before.context_id);
        desk.handler.cancelled(&conversation, &before.id).await;
    }
    Ok(serde_json::to_value(entry.snapshot()).unwrap_or_default())
}

/// `ListTasks`: the caller's tasks, of one context if asked, newest first, a page at a time.
pub(crate) fn list<S>(desk: &Desk<S>, call: &Call<S>) -> Result<Value, RpcError> {
    let params = &call.params;
    let context_id = param(params, "contextId", "context_id").and_then(Value::as_str);
    let page_size = (param(params, "pageSize", "page_size").and_then(Value::as_u64))
        .filter(|size| *size > 0)
        .map_or(50, |size| size.min(100)) as usize;
    let from: usize = (param(params, "pageToken", "page_token").and_then(Value::as_str))
        .and_then(|token| token.parse().ok())
        .unwrap_or(0);
    let artifacts = (param(params, "includeArtifacts", "include_artifacts"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let history = history_length(Some(params));
    let prefix = call.caller.key("").into_owned();
    let tasks = desk.tasks.list(&prefix, context_id);
    let total = tasks.len();
    let page: Vec<Task> = (tasks.into_iter().skip(from).take(page_size))
        .map(|mut task| {
            if !artifacts {
                task.artifacts.clear();
            }
            trimmed(task, history)
        })
        .collect();
    let next = from + page.len();
    let next_token = if next < total {
        next.to_string()
    } else {
        String::new()
    };
    Ok(json!({
        "tasks": page,
        "nextPageToken": next_token,
        "pageSize": page_size,
        "totalSize": total,
    }))
}

/// `SubscribeToTask`: the task as it is, then its events until it ends.
pub(crate) fn subscribe<S>(desk: &Desk<S>, call: Call<S>) -> Response {
    let entry = match task(desk, &call) {
        Ok(entry) => entry,
        Err(error) => return json_response(&response(&call.id, Err(error))),
    };
    let (task, seen) = entry.snapshot_at();
    if task.status.state.is_terminal() {
        let error = RpcError::unsupported(format!(
            "task `{}` has ended: read it with GetTask",
            task.id
        ));
        return json_response(&response(&call.id, Err(error)));
    }
    let follow = Follow::new(entry, seen, false, None);
    event_stream(
        call.id,
        Some(StreamEvent::Task(task)),
        follow,
        desk.keep_alive,
    )
}

/// The caller's task the params name (`id`).
fn task<S>(desk: &Desk<S>, call: &Call<S>) -> Result<Arc<Entry>, RpcError> {
    let id = (call.params.get("id").and_then(Value::as_str))
        .ok_or_else(|| RpcError::invalid_params("the params have no task `id`"))?;
    desk.tasks
        .get(&call.caller.key(id))
        .ok_or_else(|| RpcError::task_not_found(id))
}

/// The `historyLength` asked for in `params`, if any.
fn history_length(params: Option<&Value>) -> Option<usize> {
    let length = param(params?, "historyLength", "history_length")?;
    length.as_u64().map(|length| length as usize)
}

/// `task` with at most its last `history` messages (`0`: none).
fn trimmed(mut task: Task, history: Option<usize>) -> Task {
    if let Some(keep) = history {
        let cut = task.history.len().saturating_sub(keep);
        task.history.drain(..cut);
    }
    task
}

/// A stream of the request `id`'s events: `first`, then what `follow` reads, each a JSON-RPC
/// response of its own on one `data:` line; the response ends with the following. While it waits,
/// a keep-alive comment goes every `keep_alive` (none when zero).
fn event_stream(
    id: Value,
    first: Option<StreamEvent>,
    follow: Follow,
    keep_alive: Duration,
) -> Response {
    let events = futures_util::stream::unfold(
        (first, follow, id),
        move |(first, mut follow, id)| async move {
            let outcome = match first {
                Some(event) => Ok(serde_json::to_value(&event).unwrap_or_default()),
                None => match follow.next().await? {
                    Next::Event(event) => Ok(serde_json::to_value(&event).unwrap_or_default()),
                    Next::Failed(error) => Err(error),
                },
            };
            // Compact JSON has no line breaks: the response is one `data:` line.
            let event = Event::default().data(response(&id, outcome).to_string());
            Some((Ok::<_, Infallible>(event), (None, follow, id)))
        },
    );
    agent_web::sse_response(events, keep_alive)
}
