//! An answer's log copied to an [`AnswerLog`] for the other instances of a server, and read back
//! there: the instance running the answer writes what it streamed every [`SHARE_EVERY`] (and at
//! the end), hearing back a stop asked elsewhere and the reads of clients elsewhere; another
//! instance follows the answer for a client that rejoins it there.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use futures_util::Stream;
use futures_util::future::select;

use super::answer_log::AnswerLog;
use super::live::Live;
use agent_core::session::SessionError;

/// How often an answer's new frames are written to the shared log, and how often an instance
/// following it there reads them.
pub const SHARE_EVERY: Duration = Duration::from_millis(250);

/// How long an answer under way may go without a write before an instance following it takes its
/// writer for dead (its process ended) and ends the stream: the chat's stored conversation holds
/// what the answer did.
pub const STALE_AFTER: Duration = Duration::from_secs(10);

/// Writes `live` to `log` as answer `answer` of the chat kept under `chat`, until it is done.
/// A write that fails is tried again with the next (the frames are kept until one succeeds).
pub(super) async fn share(live: Arc<Live>, log: Arc<dyn AnswerLog>, chat: String, answer: String) {
    let mut written = 0;
    loop {
        let (frames, done) = live.frames_from(written);
        // One chunk per write: the frames joined, as the stream carries them.
        let chunk: Vec<Bytes> = match frames.as_slice() {
            [] => Vec::new(),
            [frame] => vec![frame.clone()],
            frames => vec![Bytes::from(frames.concat())],
        };
        match log.write(&chat, &answer, &chunk, done).await {
            Ok(heard) => {
                written += frames.len();
                if heard.stop {
                    live.stop();
                }
                if let Some(ago) = heard.read_ago {
                    live.read_elsewhere(ago);
                }
                if done {
                    return;
                }
            }
            Err(problem) => {
                tracing::warn!(%problem, "an answer could not be shared with the other instances");
            }
        }
        let tick = std::pin::pin!(tokio::time::sleep(SHARE_EVERY));
        let ended = std::pin::pin!(live.ended());
        select(tick, ended).await;
    }
}

/// The chat's answer under way as another instance writes it to `log`, read for a client from its
/// first chunk until it is done; `None` when the chat has none under way.
pub(super) async fn follow(
    log: Arc<dyn AnswerLog>,
    chat: String,
) -> Result<Option<impl Stream<Item = Bytes> + Send + 'static>, SessionError> {
    let Some(first) = log.read(&chat, 0, true).await? else {
        return Ok(None);
    };
    if first.done || first.written_ago > STALE_AFTER {
        return Ok(None);
    }
    let following = Following {
        read: first.chunks.len(),
        pending: first.chunks.into(),
        done: false,
        log,
        chat,
        answer: first.answer,
    };
    Ok(Some(futures_util::stream::unfold(
        following,
        |mut following| async move {
            let chunk = following.next().await?;
            Some((chunk, following))
        },
    )))
}

/// Where a client following an answer through the log is.
struct Following {
    log: Arc<dyn AnswerLog>,
    chat: String,
    answer: String,
    /// Chunks read so far.
    read: usize,
    /// Chunks read and not yet sent.
    pending: VecDeque<Bytes>,
    /// The last chunk has been read.
    done: bool,
}

impl Following {
    /// The next chunk, once the log has it; `None` at the answer's end, when a new answer of the
    /// chat replaced it, when its writer went silent, or when the log cannot be read.
    async fn next(&mut self) -> Option<Bytes> {
        loop {
            if let Some(chunk) = self.pending.pop_front() {
                return Some(chunk);
            }
            if self.done {
                return None;
            }
            tokio::time::sleep(SHARE_EVERY).await;
            let logged = match self.log.read(&self.chat, self.read, true).await {
                Ok(Some(logged)) if logged.answer == self.answer => logged,
                Ok(_) => return None,
                Err(problem) => {
                    tracing::warn!(%problem, "a shared answer could not be read");
                    return None;
                }
            };
            self.read += logged.chunks.len();
            self.pending.extend(logged.chunks);
            self.done = logged.done;
            if !self.done && self.pending.is_empty() && logged.written_ago > STALE_AFTER {
                return None;
            }
        }
    }
}
