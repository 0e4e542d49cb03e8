//! `POST`: one AG-UI run. The caller is identified and let in under their limits, the body read,
//! the thread held (so no other run of it gets in between) and the turn checked against what the
//! thread keeps, all before the stream starts: what does not fit is an HTTP error with a JSON body
//! and nothing run. Then the run streams its events as server-sent events; a client that goes away
//! cancels it, and what it did is kept in the thread.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use agent_core::session::{ConversationHold, SessionStore};
use agent_core::{
    Agent, NoContext, Ready, RunEvent, RunKind, RunOutput, RunRequest, RunStream, Text,
};
use agent_web::{Admission, Identity};
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::response::sse::Event;
use futures_util::StreamExt;
use tokio::sync::mpsc;

use crate::Shared;
use crate::events::{Encoder, Sent};
use crate::input::{RunInput, Turn};
use crate::interrupts::{Refusal, decisions, interrupts};
use agent_web::refuse;

/// Events waiting for a slow client before the run waits for it.
const QUEUE: usize = 64;

/// What a run starts from, checked against the thread.
enum Start {
    Ask {
        text: String,
        parts: Vec<agent_core::Part>,
    },
    Resume(Vec<(String, agent_core::Decision)>),
}

pub(crate) async fn run<S: Send + Sync + 'static, I: Identity<S>>(
    State(shared): State<Arc<Shared<S, I>>>,
    request: axum::extract::Request,
) -> Response {
    let (parts, body) = request.into_parts();
    // The content type first: a body of another type is not read as JSON.
    let content_type = (parts.headers.get(header::CONTENT_TYPE))
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    if !media_type.eq_ignore_ascii_case("application/json") {
        let message =
            format!("the body's content type is `{content_type}`: send `application/json`");
        return refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message);
    }
    let caller = match shared.identity.caller(parts).await {
        Ok(caller) => caller,
        Err(refused) => return refused,
    };
    let Ok(bytes) = axum::body::to_bytes(body, shared.body_limit).await else {
        let message = format!("the body is over {} bytes", shared.body_limit);
        return refuse(StatusCode::PAYLOAD_TOO_LARGE, &message);
    };
    let input = match crate::input::parse(&bytes) {
        Ok(input) => input,
        Err(problem) => return refuse(StatusCode::BAD_REQUEST, &problem),
    };
    let key = match caller.checked_key(&input.thread_id) {
        Ok(key) => key.into_owned(),
        Err(problem) => return refuse(StatusCode::BAD_REQUEST, &problem),
    };
    let admission = match agent_web::admit(shared.limiter.as_ref(), &caller).await {
        Ok(admission) => admission,
        Err(refused) => return refused,
    };
    let store = &*shared.store;
    let hold = store.hold(&key).await;
    let conversation = match store.load(&key).await {
        Ok(conversation) => conversation,
        Err(problem) => {
            let message = format!("the thread could not be read: {problem}");
            return refuse(StatusCode::INTERNAL_SERVER_ERROR, &message);
        }
    };
    let RunInput {
        thread_id,
        run_id,
        turn,
    } = input;
    let start = match (turn, conversation.paused) {
        (Turn::Ask { .. }, Some(_)) => {
            let message = format!(
                "thread `{thread_id}` waits on the interrupts its last run ended with: answer \
                 them with `resume`"
            );
            return refuse(StatusCode::CONFLICT, &message);
        }
        (Turn::Ask { text, parts }, None) => Start::Ask { text, parts },
        (Turn::Resume(_), None) => {
            let (status, message) = if conversation.messages.is_empty() {
                (StatusCode::NOT_FOUND, "there is no thread")
            } else {
                (StatusCode::CONFLICT, "no run waits in thread")
            };
            return refuse(status, &format!("{message} `{thread_id}`"));
        }
        (Turn::Resume(entries), Some(paused)) => {
            match decisions(&shared.grants, &key, &paused, &entries) {
                Ok(decisions) => Start::Resume(decisions),
                Err(Refusal::NotIssued(message)) => {
                    return refuse(StatusCode::FORBIDDEN, &message);
                }
                Err(Refusal::Unfit(message)) => return refuse(StatusCode::BAD_REQUEST, &message),
            }
        }
    };
    let keep_alive = shared.keep_alive;
    let (sender, receiver) = mpsc::channel(QUEUE);
    let encoder = Encoder::new(thread_id, run_id);
    let thread = Thread { key, hold, encoder };
    tokio::spawn(answer(
        shared,
        caller.into_context(),
        start,
        thread,
        sender,
        admission,
    ));
    event_stream(receiver, keep_alive)
}

/// The thread a run answers in: its store key, the hold on it, and the run's encoder.
struct Thread {
    key: String,
    hold: ConversationHold,
    encoder: Encoder,
}

/// Runs `start` on the thread in the caller's `context`, sending its events to `sender` until the
/// run ends or the client goes away (the run is then cancelled, what it did kept). Each step's
/// tokens count against the caller's budget (`admission`, released when the run ends).
async fn answer<S: Send + Sync + 'static, I>(
    shared: Arc<Shared<S, I>>,
    context: S,
    start: Start,
    thread: Thread,
    sender: mpsc::Sender<String>,
    admission: Option<Admission>,
) {
    let Thread {
        key,
        hold,
        mut encoder,
    } = thread;
    let gone = {
        let sender = sender.clone();
        async move { sender.closed().await }
    };
    let agent: &Agent<S> = &shared.agent;
    let store = &*shared.store;
    let mut events = match start {
        Start::Ask { text, parts } => {
            streamed(agent.run(text).parts(parts), &context, store, hold, gone)
        }
        Start::Resume(decisions) => {
            streamed(agent.resume_session(decisions), &context, store, hold, gone)
        }
    };
    let send = |events: Vec<Sent>| {
        let sender = &sender;
        async move {
            for event in events {
                // An event is plain data: serializing cannot fail.
                let json = serde_json::to_string(&event).unwrap_or_default();
                // A client gone drops what it would have read; the run is cancelled by then.
                let _ = sender.send(json).await;
            }
        }
    };
    send(vec![encoder.start()]).await;
    while let Some(event) = events.next().await {
        if let (RunEvent::StepFinished { usage, .. }, Some(admission)) = (&event, &admission) {
            admission.spend(usage.total_tokens()).await;
        }
        let out = match event {
            RunEvent::Finished(outcome) => {
                let paused = outcome
                    .as_ref()
                    .ok()
                    .and_then(|output| output.paused.as_ref());
                let waits_on =
                    paused.map_or_else(Vec::new, |paused| interrupts(&shared.grants, &key, paused));
                encoder.finish(&outcome, waits_on)
            }
            event => encoder.encode(event),
        };
        send(out).await;
    }
}

/// The run streamed: in `context`, on the thread `hold` holds (kept to the run's end), cancelled
/// when `gone` completes.
fn streamed<'a, S: Send + Sync + 'static, K: RunKind<WithSession: Ready>>(
    run: RunRequest<'a, S, NoContext, Text, K>,
    context: &'a S,
    store: &'a dyn SessionStore,
    hold: ConversationHold,
    gone: impl Future<Output = ()> + Send + 'a,
) -> RunStream<'a, RunOutput> {
    run.context(context)
        .session_held(store, hold)
        .until(gone)
        .stream()
}

/// The events (each one's JSON) as a server-sent event stream, a keep-alive comment going every
/// `keep_alive` while it waits (none when zero).
fn event_stream(events: mpsc::Receiver<String>, keep_alive: Duration) -> Response {
    let events = futures_util::stream::unfold(events, |mut events| async move {
        let json = events.recv().await?;
        // Compact JSON has no line breaks: each event is one `data:` line.
        Some((Ok::<_, Infallible>(Event::default().data(json)), events))
    });
    agent_web::sse_response(events, keep_alive)
}
