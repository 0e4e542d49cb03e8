//! Answers in progress kept where every instance of a server can read them ([`AnswerLog`]), so a
//! client that reloads onto another instance behind a load balancer rejoins its answer there, and
//! a stop sent to any instance reaches the one running it.

use std::time::Duration;

use axum::body::Bytes;

use agent_core::BoxFuture;
use agent_core::session::SessionError;

/// Where a [`ChatServer`](super::ChatServer)'s answers in progress are kept for other instances
/// ([`ChatServer::answers_shared_in`](super::ChatServer::answers_shared_in)): the crate has
/// [`SqliteAnswers`](super::SqliteAnswers) and [`PostgresAnswers`](super::PostgresAnswers).
///
/// The instance running an answer writes what it has streamed every
/// [`SHARE_EVERY`](super::SHARE_EVERY) (the bytes of the UI message stream, in chunks); each write
/// is also its sign of life, and tells it whether another instance was asked to stop the answer
/// and when one last read it for a client (so the answer is not cancelled as unread while a client
/// follows it elsewhere). Another instance serves a rejoin by reading the chunks in turn until the
/// answer is done, or its writer has been silent too long ([`STALE_AFTER`](super::STALE_AFTER):
/// its process died).
///
/// A chat has one answer in its log: a new answer of the chat replaces the last. An answer's log
/// may be forgotten once it is done (a done answer is not rejoined); the crate's stores forget it
/// a minute after.
pub trait AnswerLog: Send + Sync + 'static {
    /// Writes what answer `answer` of the chat kept under `chat` streamed since the last write:
    /// `chunks` (none: a sign of life), and `done` when it ended. The first write of an answer
    /// replaces the chat's last.
    fn write<'a>(
        &'a self,
        chat: &'a str,
        answer: &'a str,
        chunks: &'a [Bytes],
        done: bool,
    ) -> BoxFuture<'a, Result<Heard, SessionError>>;

    /// The chat's last answer: its chunks from the `from`th on (counted from 0), whether it is
    /// done, and how long since its writer wrote. An instance that reads it for a client says so
    /// (`reading`), which the writer hears. `None` when the chat has none.
    fn read<'a>(
        &'a self,
        chat: &'a str,
        from: usize,
        reading: bool,
    ) -> BoxFuture<'a, Result<Option<Logged>, SessionError>>;

    /// Asks the instance running the chat's answer to stop it: `false` when the chat has no answer
    /// under way.
    fn stop<'a>(&'a self, chat: &'a str) -> BoxFuture<'a, Result<bool, SessionError>>;
}

/// What the writer of an answer hears back from a [write](AnswerLog::write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct Heard {
    /// A client asked another instance to stop the answer.
    pub stop: bool,
    /// How long since another instance last read the answer for a client; `None` when none has.
    pub read_ago: Option<Duration>,
}

impl Heard {
    /// What a write hears back.
    pub fn new(stop: bool, read_ago: Option<Duration>) -> Self {
        Heard { stop, read_ago }
    }
}

/// An answer as a [read](AnswerLog::read) finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Logged {
    /// The answer's id (a new answer of the chat has another).
    pub answer: String,
    /// Its chunks from the one asked for.
    pub chunks: Vec<Bytes>,
    /// It ended: no chunk comes after these.
    pub done: bool,
    /// How long since its writer last wrote.
    pub written_ago: Duration,
}

impl Logged {
    /// An answer as read.
    pub fn new(answer: String, chunks: Vec<Bytes>, done: bool, written_ago: Duration) -> Self {
        Logged {
            answer,
            chunks,
            done,
            written_ago,
        }
    }
}

/// A duration in whole milliseconds, as the stores keep times.
#[cfg(feature = "sqlite")]
pub(super) fn millis(duration: Duration) -> i64 {
    i64::try_from(duration.as_millis()).unwrap_or(i64::MAX)
}

/// Milliseconds as a duration (a negative count, from clocks a little apart, is none).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(super) fn from_millis(millis: i64) -> Duration {
    Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}
