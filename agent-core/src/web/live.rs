//! Answers being streamed, kept while they run so that a client can rejoin one: after a reload or
//! a dropped connection, `GET /api/chat/{id}/stream` reads the chat's answer in progress from its
//! first chunk (what the AI SDK's `resume` asks), and `DELETE /api/chat/{id}/stream` stops it.
//!
//! Each answer is a log of its frames. Its readers (the request that started it, and any that
//! rejoin) each read the log from the start at their own pace; a client going away does not stop
//! the run at once: it is cancelled when no one has read it for the server's rejoin window, or
//! when a client stops it. The log lives in the process that runs the answer.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::future::Either;
use futures_util::{Stream, StreamExt};
use tokio::sync::Notify;

use super::identity::Identity;
use super::{Shared, chat_of, refuse};

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

    /// The log of a new answer in the chat kept under `key`.
    pub(crate) fn start(&self, key: &str) -> Arc<Live> {
        let live = Arc::new(Live::default());
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

/// One answer's log.
#[derive(Default)]
pub(crate) struct Live {
    state: Mutex<State>,
    /// Woken on each frame, at the end, at a stop, and when a reader goes.
    changed: Notify,
}

#[derive(Default)]
struct State {
    frames: Vec<Bytes>,
    done: bool,
    stopped: bool,
    readers: usize,
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

    /// Completes when the answer is to be cancelled: a client stopped it, or no one has read it
    /// for `window` (a client that went away and did not come back).
    pub(crate) async fn abandoned(self: Arc<Self>, window: Duration) {
        loop {
            let mut changed = std::pin::pin!(self.changed.notified());
            changed.as_mut().enable();
            let (stopped, unread) = {
                let state = self.state();
                (state.stopped, state.readers == 0 && !state.done)
            };
            if stopped {
                return;
            }
            if !unread {
                changed.await;
                continue;
            }
            let sleep = std::pin::pin!(tokio::time::sleep(window));
            if let Either::Left(_) = futures_util::future::select(sleep, changed).await {
                let state = self.state();
                if state.stopped || (state.readers == 0 && !state.done) {
                    return;
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
        loop {
            let mut changed = std::pin::pin!(self.live.changed.notified());
            changed.as_mut().enable();
            {
                let state = self.live.state();
                if let Some(frame) = state.frames.get(self.at) {
                    self.at += 1;
                    return Some(frame.clone());
                }
                if state.done {
                    return None;
                }
            }
            changed.await;
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.live.state().readers -= 1;
        self.live.changed.notify_waiters();
    }
}

/// The UI message stream of `live`, from its first chunk.
pub(super) fn event_stream(live: &Arc<Live>) -> Response {
    let frames = live.reader().map(Ok::<_, Infallible>);
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
    match shared.live.get(&key) {
        Some(live) => event_stream(&live),
        None => StatusCode::NO_CONTENT.into_response(),
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
    match shared.live.get(&key) {
        Some(live) => {
            live.stop();
            StatusCode::NO_CONTENT.into_response()
        }
        None => refuse(
            StatusCode::NOT_FOUND,
            &format!("no answer is under way in chat `{chat_id}`"),
        ),
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
