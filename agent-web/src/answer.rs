//! An answer's run: the chat's next turn (a new message answered, the same question answered
//! again, or a paused run going on with the person's decisions) run on the chat's session and
//! streamed into the answer's log as UI message stream chunks, the chat titled after its first
//! exchange, the caller's budget counted.

use std::sync::Arc;

use agent_core::session::{ConversationHold, SessionStore};
use agent_core::{
    Input, NoContext, PausedRun, Ready, RunEvent, RunKind, RunOutput, RunRequest, RunStream, Text,
};
use axum::body::Bytes;
use futures_util::StreamExt;

use crate::Shared;
use crate::chunks::{Chunk, Encoder};
use crate::cut_off::ReplySoFar;
use crate::grants::CallGrants;
use crate::limits::Admission;
use crate::live::Live;
use crate::plan::{Plan, Start};
use crate::titles::Titling;

/// The grants of the calls `paused` waits on, by call id, for the chat kept under `chat_key`.
pub(crate) fn granted(
    grants: &CallGrants,
    chat_key: &str,
    paused: Option<&PausedRun>,
) -> Vec<(String, String)> {
    paused
        .into_iter()
        .flat_map(|paused| {
            paused.pending().iter().map(move |pending| {
                let grant = grants.grant(chat_key, paused, &pending.call);
                (pending.call.id.clone(), grant)
            })
        })
        .collect()
}

/// One server-sent event carrying `data`.
fn frame(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// The run of an answer, streamed: in the caller's `context`, on the chat `hold` holds (the plan's
/// hold, kept to the run's end), cancelled when `cancelled` completes (the client went away).
fn answering<'a, S: Send + Sync + 'static, K: RunKind<WithSession: Ready>>(
    run: RunRequest<'a, S, NoContext, Text, K>,
    context: &'a S,
    store: &'a dyn SessionStore,
    hold: ConversationHold,
    cancelled: impl Future<Output = ()> + Send + 'a,
) -> RunStream<'a, RunOutput> {
    let run = run.context(context).session_held(store, hold);
    run.until(cancelled).stream()
}

/// Runs the chat's next turn as `plan` says (the answer to a new message, the same question
/// answered again, or a paused run going on with the person's decisions) into the answer's log
/// `live`, which its clients read; when a client stops it, or none reads it for the rejoin window,
/// the run is cancelled, and either way what it did is kept in the conversation.
/// The run has the caller's `context` and runs on the chat the plan holds; the tokens of each of
/// its steps are counted against the caller's budget (`admission`, which lets the caller's next
/// run in when it drops).
pub(crate) async fn answer<S: Send + Sync + 'static, I>(
    shared: Arc<Shared<S, I>>,
    context: S,
    plan: Plan,
    live: Arc<Live>,
    admission: Option<Admission>,
) {
    let store = &*shared.store;
    let send = |chunks: Vec<Chunk>| {
        for chunk in chunks {
            // A chunk is plain data: serializing cannot fail.
            let json = serde_json::to_string(&chunk).unwrap_or_default();
            live.push(frame(&json));
        }
    };
    // A stop, or every client gone for the rejoin window, cancels the run, even while a tool
    // works.
    let cancelled = Arc::clone(&live).abandoned(shared.rejoin_within);
    let agent = &shared.agent;
    let chat_key = plan.hold.id().to_owned();
    let first_question = plan.first_question;
    let mut title = None;
    let (context, hold) = (&context, plan.hold);
    let mut events = match plan.start {
        Start::Ask(input) => {
            let run = agent.run(input.text).parts(input.parts);
            answering(run, context, store, hold, cancelled)
        }
        Start::Again => answering(agent.run(Input::nothing()), context, store, hold, cancelled),
        Start::Resume(decisions) => answering(
            agent.resume_session(decisions),
            context,
            store,
            hold,
            cancelled,
        ),
    };
    let mut encoder = Encoder::answering(&plan.chat_id, plan.decided, plan.denied, plan.shown);
    send(vec![Encoder::start(&plan.message_id)]);
    let mut reply = ReplySoFar::default();
    let mut cut_off = None;
    while let Some(event) = events.next().await {
        reply.see(&event);
        if let (RunEvent::StepFinished { usage, .. }, Some(admission)) = (&event, &admission) {
            admission.spend(usage.total_tokens()).await;
        }
        let chunks = match event {
            RunEvent::Finished(result) => {
                let metadata = match (&shared.metadata, &result) {
                    (Some(metadata), Ok(output)) => metadata(output),
                    _ => None,
                };
                // The chat's first exchange titles it.
                if let (Some(question), Ok(output)) = (&first_question, &result) {
                    let texts = agent.tools().texts();
                    title = Some(shared.titler.title(question, output, texts));
                }
                // Each call the run now waits on goes out with its grant.
                let grants = match &result {
                    Ok(output) => granted(&shared.grants, &chat_key, output.paused.as_ref()),
                    Err(_) => Vec::new(),
                };
                cut_off = reply.cut_off(&result);
                encoder.finish(&result, metadata, grants)
            }
            event => encoder.encode(event),
        };
        send(chunks);
    }
    drop(events);
    // A reply stopped halfway is kept as far as it went, before the stream ends (a reload then
    // reads it back).
    if let Some(cut_off) = cut_off {
        cut_off.keep(store, &chat_key).await;
    }
    // The run is over, its transcript kept: now it can be titled, before the stream ends (a list
    // asked for then has the title); a model asked for a title is awaited after it ends.
    let asked = match title {
        Some(Titling::Now(title)) => {
            set_title(store, &chat_key, title).await;
            None
        }
        Some(Titling::Asked(asked)) => Some(asked),
        None => None,
    };
    // The caller's next run may start.
    drop(admission);
    live.push(frame("[DONE]"));
    live.finish();
    shared.live.end(&chat_key, &live);
    if let Some(asked) = asked {
        set_title(store, &chat_key, asked.await).await;
    }
}

/// Titles the chat kept under `chat_key`, if `title` is one.
async fn set_title(store: &dyn SessionStore, chat_key: &str, title: Option<String>) {
    if let Some(title) = title
        && let Err(problem) = store.set_title(chat_key, Some(&title)).await
    {
        tracing::warn!(%problem, "a chat could not be titled");
    }
}
