//! Answers being streamed, kept while they run so that a client can rejoin one: after a reload or
//! a dropped connection, `GET /api/chat/{id}/stream` reads the chat's answer in progress from its
//! first chunk (what the AI SDK's `resume` asks), and `DELETE /api/chat/{id}/stream` stops it.
//!
//! Each answer is a log of its frames. Its readers (the request that started it, and any that
//! rejoin) each read the log from the start at their own pace; a client going away does not stop
//! the run at once: it is cancelled when no one has read it for the server's rejoin window, or
//! when a client stops it. The log lives in the process that runs the answer, and, on a server
//! whose answers are shared ([`AnswerLog`](super::AnswerLog)), is copied there for the other
//! instances (`shared_answers.rs`): a rejoin or a stop this process does not run the answer of
//! goes there.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::{Stream, StreamExt};
use tokio::sync::Notify;

use super::errors::store_failed;
use super::identity::Identity;
use super::{Shared, chat_of, refuse, shared_answers};
use agent_core::Message;

/// The answers in progress, by chat key.
#[derive(Default)]
pub(crate) struct LiveAnswers {
    answers: Mutex<HashMap<String, Arc<Live>>>,
}

impl LiveAnswers {
    fn answers(&self) -> MutexGuard<'_, HashMap<String, Arc<Live>>> {
        self.answers
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The log of a new answer in the chat kept under `key`, which begins there as `begun` says.
    pub(crate) fn start(&self, key: &str, begun: Begun) -> Arc<Live> {
        let live = Arc::new(Live {
            begun,
            ..Live::default()
        });
        self.answers().insert(key.to_owned(), Arc::clone(&live));
        live
    }

    /// The answer in progress in the chat kept under `key`, if one is.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<Live>> {
        self.answers().get(key).cloned()
    }

    /// `live` has ended: a rejoin finds it no more (a later answer of the chat stays).
    pub(crate) fn end(&self, key: &str, live: &Arc<Live>) {
        let mut answers = self.answers();
        if answers.get(key).is_some_and(|kept| Arc::ptr_eq(kept, live)) {
            answers.remove(key);
        }
    }
}

/// Where an answer begins in its chat: what a read-back shows while the answer runs (the answer
/// itself comes with the stream a client rejoins, from its first chunk).
#[derive(Debug, Default)]
pub(crate) struct Begun {
    /// How many of the chat's stored messages come before the answer; the messages the run
    /// stores after them are the answer's (and its question's, when the question is new).
    pub(crate) kept: usize,
    /// How many of the chat's summaries were made before the answer.
    pub(crate) summaries: usize,
    /// The question the answer answers, when it is new to the chat: the run stores it with its
    /// first reply.
    pub(crate) question: Option<Message>,
    /// The answer's message id, which a read-back gives an answer the run goes on with (an
    /// approval's, or the steps a regenerate kept), as the stream does.
    pub(crate) message_id: String,
}

/// One answer's log.
#[derive(Default)]
pub(crate) struct Live {
    state: Mutex<State>,
    /// Woken on each frame, at the end, at a stop, and when a reader goes.
    changed: Notify,
    /// Where the answer begins in its chat.
    pub(crate) begun: Begun,
}

struct State {
    frames: Vec<Bytes>,
    done: bool,
    stopped: bool,
    readers: usize,
    /// When a client last read the answer: here (the last reader went then) or on another
    /// instance.
    last_read: Instant,
}

impl Default for State {
    fn default() -> Self {
        State {
            frames: Vec::new(),
            done: false,
            stopped: false,
            readers: 0,
            last_read: Instant::now(),
        }
    }
}

impl State {
    /// How long the answer may still go unread before it is abandoned; `None` while a client
    /// reads it here, or once it is done.
    fn unread_left(&self, window: Duration) -> Option<Duration> {
        (self.readers == 0 && !self.done).then(|| window.saturating_sub(self.last_read.elapsed()))
    }
}

impl Live {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Adds a frame to the log.
    pub(crate) fn push(&self, frame: Bytes) {
        self.state().frames.push(frame);
        self.changed.notify_waiters();
    }

    /// The answer is complete: readers end after its last frame.
    pub(crate) fn finish(&self) {
        self.state().done = true;
        self.changed.notify_waiters();
    }

    /// A client asked to stop the answer.
    pub(crate) fn stop(&self) {
        self.state().stopped = true;
        self.changed.notify_waiters();
    }

    /// Another instance read the answer for a client `ago`.
    pub(crate) fn read_elsewhere(&self, ago: Duration) {
        let at = Instant::now().checked_sub(ago).unwrap_or_else(Instant::now);
        let mut state = self.state();
        state.last_read = state.last_read.max(at);
        drop(state);
        self.changed.notify_waiters();
    }

    /// The frames from the `from`th on, and whether the answer is done.
    pub(crate) fn frames_from(&self, from: usize) -> (Vec<Bytes>, bool) {
        let state = self.state();
        (
            state.frames.get(from..).unwrap_or_default().to_vec(),
            state.done,
        )
    }

    /// Whether the answer is done.
    pub(crate) fn is_done(&self) -> bool {
        self.state().done
    }

    /// Completes when the answer is done.
    pub(crate) async fn ended(&self) {
        self.wait_for(|state| state.done.then_some(())).await;
    }

    /// What `check` finds in the state, once it finds something: checked now and after each
    /// change.
    async fn wait_for<T>(&self, mut check: impl FnMut(&State) -> Option<T>) -> T {
        loop {
            let mut changed = std::pin::pin!(self.changed.notified());
            changed.as_mut().enable();
            if let Some(found) = check(&self.state()) {
                return found;
            }
            changed.await;
        }
    }

    /// A reader of the log from its first frame, counted until it is dropped.
    pub(crate) fn reader(self: &Arc<Self>) -> impl Stream<Item = Bytes> + Send + 'static {
        self.state().readers += 1;
        let reader = Reader {
            live: Arc::clone(self),
            at: 0,
        };
        futures_util::stream::unfold(reader, |mut reader| async move {
            let frame = reader.next().await?;
            Some((frame, reader))
        })
    }

    /// Completes when the answer is to be cancelled: a client stopped it, or no client has read
    /// it, here or on another instance, for `window` (a client that went away and did not come
    /// back).
    pub(crate) async fn abandoned(self: Arc<Self>, window: Duration) {
        loop {
            let mut changed = std::pin::pin!(self.changed.notified());
            changed.as_mut().enable();
            let left = {
                let state = self.state();
                if state.stopped {
                    return;
                }
                state.unread_left(window)
            };
            match left {
                None => changed.await,
                Some(left) if left.is_zero() => return,
                Some(left) => {
                    let sleep = std::pin::pin!(tokio::time::sleep(left));
                    futures_util::future::select(sleep, changed).await;
                }
            }
        }
    }
}

/// Where one reader is in the log.
struct Reader {
    live: Arc<Live>,
    at: usize,
}

impl Reader {
    /// The next frame, once there is one; `None` after the last of a complete answer.
    async fn next(&mut self) -> Option<Bytes> {
        let at = self.at;
        let frame = self
            .live
            .wait_for(|state| match state.frames.get(at) {
                Some(frame) => Some(Some(frame.clone())),
                None => state.done.then_some(None),
            })
            .await;
        self.at += usize::from(frame.is_some());
        frame
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let mut state = self.live.state();
        state.readers -= 1;
        state.last_read = Instant::now();
        drop(state);
        self.live.changed.notify_waiters();
    }
}

/// The UI message stream of `live`, from its first chunk.
pub(super) fn event_stream(live: &Arc<Live>) -> Response {
    stream_response(live.reader())
}

/// `frames` as a UI message stream response.
pub(super) fn stream_response(frames: impl Stream<Item = Bytes> + Send + 'static) -> Response {
    let frames = frames.map(Ok::<_, Infallible>);
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (
                header::HeaderName::from_static("x-vercel-ai-ui-message-stream"),
                "v1",
            ),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}

/// `GET /api/chat/{id}/stream`: the caller's answer in progress in chat `id`, from its first
/// chunk (what the AI SDK's `resume` asks after a reload); `204` when none is.
pub(super) async fn rejoin<S: Send + Sync + 'static, I: Identity<S>>(
    axum::extract::State(shared): axum::extract::State<Arc<Shared<S, I>>>,
    Path(chat_id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let key = match chat_of(&shared, parts, &chat_id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    if let Some(live) = shared.live.get(&key) {
        return event_stream(&live);
    }
    let Some(log) = &shared.answer_log else {
        return StatusCode::NO_CONTENT.into_response();
    };
    // Another instance may be running it.
    match shared_answers::follow(Arc::clone(log), key).await {
        Ok(Some(frames)) => stream_response(frames),
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(problem) => store_failed(problem, &chat_id),
    }
}

/// `DELETE /api/chat/{id}/stream`: stops the caller's answer in progress in chat `id` (what it
/// did so far is kept, every finished call with its result): `204`; `404` when none is.
pub(super) async fn stop<S: Send + Sync + 'static, I: Identity<S>>(
    axum::extract::State(shared): axum::extract::State<Arc<Shared<S, I>>>,
    Path(chat_id): Path<String>,
    request: axum::extract::Request,
) -> Response {
    let (parts, _) = request.into_parts();
    let key = match chat_of(&shared, parts, &chat_id).await {
        Ok(key) => key,
        Err(refused) => return refused,
    };
    let stopped = match (shared.live.get(&key), &shared.answer_log) {
        (Some(live), _) => {
            live.stop();
            true
        }
        // Another instance may be running it: it stops it when it next writes.
        (None, Some(log)) => match log.stop(&key).await {
            Ok(stopped) => stopped,
            Err(problem) => return store_failed(problem, &chat_id),
        },
        (None, None) => false,
    };
    if stopped {
        StatusCode::NO_CONTENT.into_response()
    } else {
        refuse(
            StatusCode::NOT_FOUND,
            &format!("no answer is under way in chat `{chat_id}`"),
        )
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn readers_read_from_the_start_at_their_own_pace() {
        let live = Arc::new(Live::default());
        let first = live.reader();
        live.push(Bytes::from_static(b"a"));
        let late = live.reader();
        live.push(Bytes::from_static(b"b"));
        live.finish();
        let frames: Vec<Bytes> = first.collect().await;
        assert_eq!(frames, [Bytes::from_static(b"a"), Bytes::from_static(b"b")]);
        assert_eq!(late.collect::<Vec<_>>().await.len(), 2);
    }

    #[tokio::test]
    async fn an_unread_answer_is_abandoned_after_the_window_and_a_stopped_one_at_once() {
        let ms = Duration::from_millis;
        let live = Arc::new(Live::default());
        let reader = live.reader();
        let abandoned = tokio::spawn(Arc::clone(&live).abandoned(ms(300)));
        tokio::time::sleep(ms(500)).await;
        assert!(!abandoned.is_finished(), "read: not abandoned");
        drop(reader);
        tokio::time::sleep(ms(100)).await;
        assert!(!abandoned.is_finished(), "within the window");
        // A reader comes back in time: not abandoned.
        let back = live.reader();
        tokio::time::sleep(ms(500)).await;
        assert!(!abandoned.is_finished());
        drop(back);
        tokio::time::timeout(ms(2000), abandoned)
            .await
            .unwrap()
            .unwrap();

        let stopped = Arc::new(Live::default());
        let _reader = stopped.reader();
        let abandoned = tokio::spawn(Arc::clone(&stopped).abandoned(Duration::from_secs(60)));
        stopped.stop();
        tokio::time::timeout(ms(1000), abandoned)
            .await
            .unwrap()
            .unwrap();
    }
}
