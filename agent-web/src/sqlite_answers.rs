//! Answers in progress kept in an SQLite file that several instances of a server share (cargo
//! features `web` and `sqlite`).

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::answer_log::{AnswerLog, Heard, Logged, from_millis, millis};
use agent_core::session::SessionError;
use agent_core::{BoxFuture, run_blocking};

/// The tables, made by the first [`SqliteAnswers::open`] of a file.
const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS agent_core_answers (
        chat TEXT PRIMARY KEY,
        answer TEXT NOT NULL,
        done INTEGER NOT NULL,
        stop INTEGER NOT NULL,
        written INTEGER NOT NULL,
        read INTEGER,
        chunks INTEGER NOT NULL
    );
    CREATE TABLE IF NOT EXISTS agent_core_answer_chunks (
        chat TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (chat, seq)
    );";

/// How long a done answer is kept before a write forgets it.
const KEPT_AFTER_DONE: Duration = Duration::from_secs(60);

/// An [`AnswerLog`] in an SQLite file, for instances of a server on one machine that share it
/// (beside `agent_sql::SqliteSessions` on the same file, or another). It
/// keeps two tables of its own. Times are the machine's clock.
///
/// ```no_run
/// # fn run(agent: agent_core::Agent) -> Result<(), agent_core::session::SessionError> {
/// use std::sync::Arc;
/// use agent_sql::SqliteSessions;
/// use agent_web::{ChatServer, SqliteAnswers};
///
/// let server = ChatServer::new(Arc::new(agent))
///     .sessions(Arc::new(SqliteSessions::open("chats.sqlite")?))
///     .answers_shared_in(SqliteAnswers::open("chats.sqlite")?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SqliteAnswers {
    connection: Arc<Mutex<Connection>>,
}

impl SqliteAnswers {
    /// Opens (or creates) the file at `path` and makes the tables it lacks.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        let connection = Connection::open(path).map_err(store_error)?;
        connection
            .busy_timeout(Duration::from_secs(10))
            .map_err(store_error)?;
        let _mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(store_error)?;
        connection.execute_batch(SCHEMA).map_err(store_error)?;
        Ok(SqliteAnswers {
            connection: Arc::new(Mutex::new(connection)),
        })
    }

    /// Runs `work` in a write transaction on a blocking thread (SQLite calls block), with the
    /// time now in milliseconds.
    async fn with<R: Send + 'static>(
        &self,
        work: impl FnOnce(&rusqlite::Transaction<'_>, i64) -> rusqlite::Result<R> + Send + 'static,
    ) -> Result<R, SessionError> {
        let connection = Arc::clone(&self.connection);
        let done = run_blocking(move || {
            let mut connection = connection
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            let transaction = connection
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(store_error)?;
            let now = millis(
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default(),
            );
            let value = work(&transaction, now).map_err(store_error)?;
            transaction.commit().map_err(store_error)?;
            Ok(value)
        });
        done.await.map_err(|error| SessionError::Store {
            message: error.to_string(),
        })?
    }
}

fn store_error(error: rusqlite::Error) -> SessionError {
    SessionError::Store {
        message: error.to_string(),
    }
}

impl AnswerLog for SqliteAnswers {
    fn write<'a>(
        &'a self,
        chat: &'a str,
        answer: &'a str,
        chunks: &'a [Bytes],
        done: bool,
    ) -> BoxFuture<'a, Result<Heard, SessionError>> {
        let (chat, answer) = (chat.to_owned(), answer.to_owned());
        let chunks = chunks.to_vec();
        Box::pin(self.with(move |transaction, now| {
            let kept: Option<(String, bool, Option<i64>, i64)> = transaction
                .query_row(
                    "SELECT answer, stop, read, chunks FROM agent_core_answers WHERE chat = ?1",
                    params![chat],
                    |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
                )
                .optional()?;
            let (stop, read, written) = match kept {
                Some((kept, stop, read, written)) if kept == answer => (stop, read, written),
                // A new answer of the chat: the last one's log goes.
                _ => {
                    transaction.execute(
                        "DELETE FROM agent_core_answer_chunks WHERE chat = ?1",
                        params![chat],
                    )?;
                    transaction.execute(
                        "INSERT OR REPLACE INTO agent_core_answers
                             (chat, answer, done, stop, written, read, chunks)
                         VALUES (?1, ?2, 0, 0, ?3, NULL, 0)",
                        params![chat, answer, now],
                    )?;
                    (false, None, 0)
                }
            };
            for (seq, chunk) in (written..).zip(&chunks) {
                transaction.execute(
                    "INSERT INTO agent_core_answer_chunks (chat, seq, data) VALUES (?1, ?2, ?3)",
                    params![chat, seq, chunk.as_ref()],
                )?;
            }
            let count = written + i64::try_from(chunks.len()).unwrap_or(i64::MAX);
            transaction.execute(
                "UPDATE agent_core_answers SET chunks = ?2, written = ?3, done = ?4 WHERE chat = ?1",
                params![chat, count, now, done],
            )?;
            if done {
                let before = now - millis(KEPT_AFTER_DONE);
                transaction.execute(
                    "DELETE FROM agent_core_answer_chunks WHERE chat IN
                         (SELECT chat FROM agent_core_answers WHERE done = 1 AND written < ?1)",
                    params![before],
                )?;
                transaction.execute(
                    "DELETE FROM agent_core_answers WHERE done = 1 AND written < ?1",
                    params![before],
                )?;
            }
            Ok(Heard::new(stop, read.map(|read| from_millis(now - read))))
        }))
    }

    fn read<'a>(
        &'a self,
        chat: &'a str,
        from: usize,
        reading: bool,
    ) -> BoxFuture<'a, Result<Option<Logged>, SessionError>> {
        let chat = chat.to_owned();
        let from = i64::try_from(from).unwrap_or(i64::MAX);
        Box::pin(self.with(move |transaction, now| {
            if reading {
                transaction.execute(
                    "UPDATE agent_core_answers SET read = ?2 WHERE chat = ?1",
                    params![chat, now],
                )?;
            }
            let Some((answer, done, written)) = transaction
                .query_row(
                    "SELECT answer, done, written FROM agent_core_answers WHERE chat = ?1",
                    params![chat],
                    |row| Ok((row.get::<_, String>(0)?, row.get(1)?, row.get::<_, i64>(2)?)),
                )
                .optional()?
            else {
                return Ok(None);
            };
            let mut statement = transaction.prepare(
                "SELECT data FROM agent_core_answer_chunks WHERE chat = ?1 AND seq >= ?2
                 ORDER BY seq",
            )?;
            let chunks = statement
                .query_map(params![chat, from], |row| {
                    Ok(Bytes::from(row.get::<_, Vec<u8>>(0)?))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok(Some(Logged::new(
                answer,
                chunks,
                done,
                from_millis(now - written),
            )))
        }))
    }

    fn stop<'a>(&'a self, chat: &'a str) -> BoxFuture<'a, Result<bool, SessionError>> {
        let chat = chat.to_owned();
        Box::pin(self.with(move |transaction, _| {
            let changed = transaction.execute(
                "UPDATE agent_core_answers SET stop = 1 WHERE chat = ?1 AND done = 0",
                params![chat],
            )?;
            Ok(changed > 0)
        }))
    }
}
