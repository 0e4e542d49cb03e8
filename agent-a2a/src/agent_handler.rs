//! An agent doing the work of A2A tasks: see [`AgentHandler`].

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::session::{Append, ConversationHold, SessionStore};
use agent_core::{
    Agent, BoxFuture, Decision, NoContext, OutputType, Part, PausedRun, PendingCall, Ready,
    RunEvent, RunKind, RunOutput, RunRequest, RunStream, StopReason, Text, TypedOutput, Waiting,
};
use agent_web::CallGrants;
use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use serde::Serialize;
use serde_json::{Value, json};

use crate::handler::{TaskHandler, Updates, Work};
use crate::jsonrpc::RpcError;
use crate::parts::{part_in, part_out};
use crate::wire::{Artifact, Message, MessagePart, fresh};

/// An agent doing the work of A2A tasks. A task's context is a conversation kept in a session
/// store (under the caller's own key); each message a client sends is one run on it:
///
/// - the task is `working` while the run goes; what the model says in each step is an artifact
///   streamed as it comes (one per step, its pieces appended, the last one marked), and the parts
///   a tool returns (images, documents, text) are an artifact of their own;
/// - a run that answers completes the task, the answer its status message (an agent served for a
///   typed output, [`DataAnswer`], adds the value as a data artifact `output`); one that fails
///   fails it, with why; one cancelled is `canceled`;
/// - a run that stops for a person's approval, or for a tool the client runs, leaves the task
///   `input-required`: its status message lists the waiting calls (a data part `{"waiting":
///   [{"toolCallId", "tool", "arguments", "waitsFor": "approval" | "result", "grant"}]}`). The
///   client answers in the same task with a data part `{"decisions": [...]}`, one per call, each
///   with the call's `grant` and `{"approved": true}`, `{"approved": false, "reason": "..."}`,
///   `{"arguments": {...}}` (run with those), `{"result": ...}` or `{"error": "..."}` (a client
///   tool's outcome). A grant is the server's signature of that call of that pause: an answer
///   without one the server issued, or one that answers only some of the calls, is refused with
///   the task left waiting, nothing run. A message with no decisions denies the waiting calls, its
///   text the reason the model reads;
/// - each task owns its pause: only its own answer resumes it, and only its own cancel lets it
///   go. A conversation holds one run at a time, so a new task in a context where another task
///   waits lets that one go (its calls answered as interrupted) and ends it `canceled`, its status
///   message naming the task that went on. Which task waits is kept in memory, as the tasks are.
///
/// `A` is what its answer is: words ([`TextAnswer`], the default), or a value of a type
/// ([`DataAnswer`]).
pub struct AgentHandler<S, A = TextAnswer> {
    agent: Arc<Agent<S>>,
    store: Arc<dyn SessionStore>,
    grants: CallGrants,
    /// The task whose run waits in each conversation (by its store key), and where that task's
    /// progress goes.
    pauses: Mutex<HashMap<String, Updates>>,
    answer: PhantomData<fn() -> A>,
}

impl<S, A> AgentHandler<S, A> {
    /// `agent`, keeping its conversations in `store`, signing the calls it waits on with `grants`.
    pub fn new(agent: Arc<Agent<S>>, store: Arc<dyn SessionStore>, grants: CallGrants) -> Self {
        AgentHandler {
            agent,
            store,
            grants,
            pauses: Mutex::default(),
            answer: PhantomData,
        }
    }
}

/// What an agent's answer to a task is: how a new message's run goes, and the value it gives at
/// its end, if any.
pub trait AnswerKind<S>: Send + Sync + 'static {
    /// `run` (a new message's), in `context`, on the conversation `hold` holds, cancelled when
    /// `cancelled` completes: its events, the last one with the answer's value, if the answer is
    /// a value.
    fn stream<'a>(
        run: RunRequest<'a, S>,
        context: &'a S,
        store: &'a dyn SessionStore,
        hold: ConversationHold,
        cancelled: BoxFuture<'a, ()>,
    ) -> BoxStream<'a, (RunEvent, Option<Value>)>;
}

/// An answer in words: the status message of the task it completes.
pub struct TextAnswer;

impl<S: Send + Sync + 'static> AnswerKind<S> for TextAnswer {
    fn stream<'a>(
        run: RunRequest<'a, S>,
        context: &'a S,
        store: &'a dyn SessionStore,
        hold: ConversationHold,
        cancelled: BoxFuture<'a, ()>,
    ) -> BoxStream<'a, (RunEvent, Option<Value>)> {
        let events = streamed(run, context, store, hold, cancelled);
        events.map(|event| (event, None)).boxed()
    }
}

/// An answer that is a value of type `T` (the run asks for it, as
/// [`RunRequest::output`](agent_core::RunRequest::output) does): a data artifact `output` of the
/// task it completes. A typed run cannot wait for a person, so such an agent's calls that need
/// approval are refused, not asked.
pub struct DataAnswer<T>(PhantomData<fn() -> T>);

impl<S: Send + Sync + 'static, T: OutputType + Serialize> AnswerKind<S> for DataAnswer<T> {
    fn stream<'a>(
        run: RunRequest<'a, S>,
        context: &'a S,
        store: &'a dyn SessionStore,
        hold: ConversationHold,
        cancelled: BoxFuture<'a, ()>,
    ) -> BoxStream<'a, (RunEvent, Option<Value>)> {
        let run = run.output::<T>().context(context).session_held(store, hold);
        let events = run.until(cancelled).stream();
        events
            .map(|event| {
                let mut value = None;
                let event = event.map_output(|typed: TypedOutput<T>| {
                    value = serde_json::to_value(&typed.value).ok();
                    typed.run
                });
                (event, value)
            })
            .boxed()
    }
}

/// What a run starts from.
enum Start {
    Ask { text: String, parts: Vec<Part> },
    Resume(Vec<(String, Decision)>),
}

impl<S: Send + Sync + 'static, A: AnswerKind<S>> TaskHandler<S> for AgentHandler<S, A> {
    fn handle<'a>(&'a self, work: Work<'a, S>) -> BoxFuture<'a, Result<(), RpcError>> {
        Box::pin(self.work(work))
    }

    fn cancelled<'a>(&'a self, conversation: &'a str, task_id: &'a str) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let store = &*self.store;
            let _hold = store.hold(conversation).await;
            // What waits in the conversation is another task's (or nothing): it stays.
            if !self.owns(conversation, task_id) {
                return;
            }
            self.pauses_held().remove(conversation);
            // The waiting calls are let go: the next run answers them as interrupted.
            if let Err(problem) = clear_pause(store, conversation).await {
                tracing::warn!(%problem, "a cancelled task's waiting calls could not be let go");
            }
        })
    }
}

impl<S: Send + Sync + 'static, A: AnswerKind<S>> AgentHandler<S, A> {
    async fn work(&self, work: Work<'_, S>) -> Result<(), RpcError> {
        let Work {
            context,
            conversation: key,
            message,
            resumes,
            updates,
        } = work;
        let store = &*self.store;
        let hold = store.hold(key).await;
        let kept = store.load(key).await.map_err(store_failed)?;
        let task_id = updates.task_id();
        let start = match (resumes, kept.paused) {
            (true, Some(paused)) if self.owns(key, task_id) => {
                Start::Resume(self.decisions(key, &paused, &message)?)
            }
            (true, _) => {
                return Err(RpcError::unsupported(format!(
                    "task `{task_id}` no longer waits for an answer: send a new message without \
                     its id"
                )));
            }
            (false, paused) => {
                // A new task while another waits in the conversation: the waiting calls are
                // let go (the run answers them as interrupted), the new message asked.
                if paused.is_some() {
                    clear_pause(store, key).await.map_err(store_failed)?;
                }
                let earlier = self.pauses_held().remove(key);
                if let Some(earlier) = earlier.filter(|earlier| earlier.task_id() != task_id) {
                    let why = format!(
                        "Task `{task_id}` went on in this context before this task was \
                         answered: its waiting calls were let go."
                    );
                    earlier.let_go(Message::agent(vec![MessagePart::text(why)]));
                }
                let (text, parts) = input(&message);
                Start::Ask { text, parts }
            }
        };
        updates.working();
        let cancelled = Box::pin(updates.cancelled());
        let agent = &*self.agent;
        let mut events = match start {
            Start::Ask { text, parts } => A::stream(
                agent.run(text).parts(parts),
                context,
                store,
                hold,
                cancelled,
            ),
            Start::Resume(decisions) => {
                let run = agent.resume_session(decisions);
                let events = streamed(run, context, store, hold, cancelled);
                events.map(|event| (event, None)).boxed()
            }
        };
        let mut said = Said::default();
        while let Some((event, value)) = events.next().await {
            if let Some(value) = value {
                let output = Artifact::new(vec![MessagePart::data(value)]).named("output");
                updates.artifact(output, false, true);
            }
            match event {
                RunEvent::TextDelta(delta) => said.more(delta, &updates),
                RunEvent::StepFinished { usage, .. } => {
                    said.end(&updates);
                    updates.spent(usage.total_tokens()).await;
                }
                RunEvent::ToolResult(result) if !result.parts.is_empty() => {
                    let parts = result.parts.iter().map(part_out).collect();
                    let name = format!("the result of call {}", result.tool_call_id);
                    updates.artifact(Artifact::new(parts).named(name), false, true);
                }
                RunEvent::Finished(outcome) => {
                    said.end(&updates);
                    self.finish(key, outcome, &updates);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The task's state once the run ended.
    fn finish(
        &self,
        key: &str,
        outcome: Result<RunOutput, agent_core::RunError>,
        updates: &Updates,
    ) {
        match outcome {
            Ok(output) => match &output.paused {
                Some(paused) => {
                    // Told before the client learns the task waits, which may answer at once.
                    (self.pauses_held()).insert(key.to_owned(), updates.detached());
                    updates.input_required(self.waiting(key, paused));
                }
                None if matches!(output.stop_reason, StopReason::Cancelled) => {
                    self.pauses_held().remove(key);
                    updates.canceled();
                }
                None => {
                    self.pauses_held().remove(key);
                    let answer = (!output.text.is_empty()).then(|| MessagePart::text(output.text));
                    updates.completed(Some(Message::agent(answer.into_iter().collect())));
                }
            },
            Err(error) => {
                updates.failed(Message::agent(vec![MessagePart::text(error.to_string())]))
            }
        }
    }

    /// Whether the run waiting in conversation `key` is task `task_id`'s.
    fn owns(&self, key: &str, task_id: &str) -> bool {
        (self.pauses_held().get(key)).is_some_and(|owner| owner.task_id() == task_id)
    }

    fn pauses_held(&self) -> std::sync::MutexGuard<'_, HashMap<String, Updates>> {
        self.pauses.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The message of a task waiting on `paused`'s calls: what each waits for, with its grant.
    fn waiting(&self, key: &str, paused: &PausedRun) -> Message {
        let waiting: Vec<Value> = (paused.pending().iter())
            .map(|pending| {
                let call = &pending.call;
                let arguments: Value = serde_json::from_str(&call.arguments)
                    .unwrap_or_else(|_| Value::String(call.arguments.clone()));
                json!({
                    "toolCallId": call.id,
                    "tool": call.name,
                    "arguments": arguments,
                    "waitsFor": waits_for(pending),
                    "grant": self.grants.grant(key, paused, call),
                })
            })
            .collect();
        let names: Vec<String> = (paused.pending().iter())
            .map(|pending| format!("`{}` ({})", pending.call.name, waits_for(pending)))
            .collect();
        let text = format!(
            "Waiting for {}: answer in this task with a data part {{\"decisions\": [...]}}, one \
             per call, each with its grant.",
            names.join(", ")
        );
        Message::agent(vec![
            MessagePart::text(text),
            MessagePart::data(json!({ "waiting": waiting })),
        ])
    }

    /// The decisions a client's `message` makes on `paused`'s calls: each with the grant of its
    /// call; with none, every waiting call is denied, the message's text the reason.
    fn decisions(
        &self,
        key: &str,
        paused: &PausedRun,
        message: &Message,
    ) -> Result<Vec<(String, Decision)>, RpcError> {
        let given = (message.parts.iter())
            .filter_map(|part| part.data.as_ref()?.get("decisions")?.as_array())
            .flatten();
        let mut decided: Vec<(String, Decision)> = Vec::new();
        for answer in given {
            let grant = answer
                .get("grant")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let pending = (paused.pending().iter())
                .find(|pending| self.grants.verify(key, paused, &pending.call, grant))
                .ok_or_else(|| {
                    RpcError::invalid_params(
                        "a decision's grant was not issued by this server for this task's calls: \
                         answer the calls its status message lists, each with its grant",
                    )
                })?;
            if decided.iter().any(|(id, _)| *id == pending.call.id) {
                return Err(RpcError::invalid_params(format!(
                    "call `{}` is decided twice",
                    pending.call.id
                )));
            }
            decided.push((pending.call.id.clone(), decision(pending, answer)?));
        }
        // A run goes on with every waiting call decided: an answer to some of them would leave
        // the others without one, so it is refused, the task still waiting.
        let unanswered: Vec<String> = (paused.pending().iter())
            .filter(|pending| !decided.iter().any(|(id, _)| *id == pending.call.id))
            .map(|pending| format!("`{}`", pending.call.id))
            .collect();
        if !decided.is_empty() && !unanswered.is_empty() {
            return Err(RpcError::invalid_params(format!(
                "call {} is not answered: answer every call the task waits on in one message, \
                 each with its grant",
                unanswered.join(", ")
            )));
        }
        if decided.is_empty() {
            let reason = Some(message.text()).filter(|text| !text.is_empty());
            decided = (paused.pending().iter())
                .map(|pending| {
                    let reason = reason.clone();
                    (pending.call.id.clone(), Decision::Deny { reason })
                })
                .collect();
        }
        Ok(decided)
    }
}

/// What a call waits for, as the waiting message says it.
fn waits_for(pending: &PendingCall) -> &'static str {
    match pending.waits_for {
        Waiting::Result => "result",
        _ => "approval",
    }
}

/// The decision one answer makes on its call.
fn decision(pending: &PendingCall, answer: &Value) -> Result<Decision, RpcError> {
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .map(str::to_owned);
    // A client tool's outcome: its result, or its error.
    let outcome = [("result", false), ("error", true)]
        .into_iter()
        .find_map(|(key, is_error)| Some((answer.get(key)?, is_error)));
    if let Some((value, is_error)) = outcome {
        let content = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_owned);
        return Ok(Decision::Result {
            content,
            parts: Vec::new(),
            is_error,
        });
    }
    if answer.get("approved").and_then(Value::as_bool) == Some(false) {
        return Ok(Decision::Deny { reason });
    }
    if matches!(pending.waits_for, Waiting::Result) {
        return Err(RpcError::invalid_params(format!(
            "call `{}` runs on the client: send its `result` (or `error`)",
            pending.call.id
        )));
    }
    match answer.get("arguments") {
        None | Some(Value::Null) => Ok(Decision::Approve),
        Some(arguments @ Value::Object(_)) => Ok(Decision::ApproveWith {
            arguments: arguments.to_string(),
        }),
        Some(_) => Err(RpcError::invalid_params(format!(
            "the arguments for call `{}` must be a JSON object",
            pending.call.id
        ))),
    }
}

/// What the model says in the step under way, streamed as an artifact of the step: each piece
/// sent when the next comes, so the last one can be marked as such.
#[derive(Default)]
struct Said {
    artifact_id: Option<String>,
    sent: bool,
    held: Option<String>,
}

impl Said {
    fn more(&mut self, delta: String, updates: &Updates) {
        if let Some(held) = self.held.replace(delta) {
            self.send(held, false, updates);
        }
    }

    /// The step ended: its last piece goes, marked.
    fn end(&mut self, updates: &Updates) {
        if let Some(held) = self.held.take() {
            self.send(held, true, updates);
        }
        *self = Said::default();
    }

    fn send(&mut self, text: String, last: bool, updates: &Updates) {
        let id = self.artifact_id.get_or_insert_with(fresh).clone();
        let artifact = Artifact {
            artifact_id: id,
            name: None,
            description: None,
            parts: vec![MessagePart::text(text)],
            metadata: None,
        };
        updates.artifact(artifact, self.sent, last);
        self.sent = true;
    }
}

/// A message's text and its other parts, as a run's input.
fn input(message: &Message) -> (String, Vec<Part>) {
    let parts = (message.parts.iter())
        .filter(|part| part.text.is_none())
        .filter_map(part_in)
        .collect();
    (message.text(), parts)
}

/// Clears the run waiting in conversation `key`, if one does.
async fn clear_pause(
    store: &dyn SessionStore,
    key: &str,
) -> Result<(), agent_core::session::SessionError> {
    let kept = store.load(key).await?;
    if kept.paused.is_none() {
        return Ok(());
    }
    store
        .append(key, kept.messages.len(), Append::messages(&[]).paused(None))
        .await
}

fn store_failed(problem: agent_core::session::SessionError) -> RpcError {
    RpcError::internal(format!(
        "the conversation could not be read or kept: {problem}"
    ))
}

/// The run streamed: in `context`, on the conversation `hold` holds, cancelled when `cancelled`
/// completes.
fn streamed<'a, S: Send + Sync + 'static, K: RunKind<WithSession: Ready>>(
    run: RunRequest<'a, S, NoContext, Text, K>,
    context: &'a S,
    store: &'a dyn SessionStore,
    hold: ConversationHold,
    cancelled: impl Future<Output = ()> + Send + 'a,
) -> RunStream<'a, RunOutput> {
    run.context(context)
        .session_held(store, hold)
        .until(cancelled)
        .stream()
}
