//! Answers in progress kept in PostgreSQL, for several instances of a server on one database
//! (cargo features `web` and `postgres`).

use std::fmt;
use std::time::Duration;

use axum::body::Bytes;
use deadpool_postgres::Pool;

use super::answer_log::{AnswerLog, Heard, Logged, from_millis};
use super::postgres_limits::{make_tables, store_error};
use agent_core::BoxFuture;
use agent_core::session::SessionError;

/// The tables, made by the first [`PostgresAnswers::new`] on a database.
const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS agent_core_answers (
        chat TEXT PRIMARY KEY,
        answer TEXT NOT NULL,
        done BOOLEAN NOT NULL,
        stop BOOLEAN NOT NULL,
        written TIMESTAMPTZ NOT NULL,
        read TIMESTAMPTZ,
        chunks BIGINT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS agent_core_answer_chunks (
        chat TEXT NOT NULL,
        seq BIGINT NOT NULL,
        data BYTEA NOT NULL,
        PRIMARY KEY (chat, seq)
    );";

/// The advisory lock that keeps two instances from making the tables at once.
const SCHEMA_LOCK: i64 = 0x6167_656e_745f_616e;

/// How long a done answer is kept before a write forgets it.
const KEPT_AFTER_DONE: Duration = Duration::from_secs(60);

/// Milliseconds from `$column` to now, by the database's clock.
macro_rules! ago {
    ($column:literal) => {
        concat!(
            "(EXTRACT(EPOCH FROM (now() - ",
            $column,
            ")) * 1000)::bigint"
        )
    };
}

/// An [`AnswerLog`] in PostgreSQL, for instances of a server on one database: made on a pool (the
/// sessions' store's, `agent_sql::PostgresSessions::pool`), it
/// keeps two tables of its own there. Times are the database's clock, the same for every
/// instance.
///
/// ```no_run
/// # async fn run(agent: agent_core::Agent) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use agent_sql::PostgresSessions;
/// use agent_web::{ChatServer, PostgresAnswers};
///
/// let store = PostgresSessions::connect("postgres://app@db/app").await?;
/// let answers = PostgresAnswers::new(store.pool().clone()).await?;
/// let server = ChatServer::new(Arc::new(agent))
///     .sessions(Arc::new(store))
///     .answers_shared_in(answers);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct PostgresAnswers {
    pool: Pool,
}

impl fmt::Debug for PostgresAnswers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool's configuration: nothing of the credentials.
        f.debug_struct("PostgresAnswers")
            .field("pool_size", &self.pool.status().size)
            .finish_non_exhaustive()
    }
}

impl PostgresAnswers {
    /// Keeps answers on `pool`, after making its tables if the database has none.
    pub async fn new(pool: Pool) -> Result<Self, SessionError> {
        make_tables(&pool, SCHEMA_LOCK, SCHEMA).await?;
        Ok(PostgresAnswers { pool })
    }

    async fn write_in(
        &self,
        chat: &str,
        answer: &str,
        chunks: &[Bytes],
        done: bool,
    ) -> Result<Heard, SessionError> {
        let mut client = self.pool.get().await.map_err(store_error)?;
        let transaction = client.transaction().await.map_err(store_error)?;
        let kept = transaction
            .query_opt(
                concat!(
                    "SELECT answer, stop, chunks, ",
                    ago!("read"),
                    " FROM agent_core_answers WHERE chat = $1 FOR UPDATE"
                ),
                &[&chat],
            )
            .await
            .map_err(store_error)?;
        let (stop, read_ago, written) = match kept {
            Some(row) if row.get::<_, &str>(0) == answer => {
                let read_ago: Option<i64> = row.get(3);
                (row.get(1), read_ago.map(from_millis), row.get::<_, i64>(2))
            }
            // A new answer of the chat: the last one's log goes.
            _ => {
                transaction
                    .execute(
                        "DELETE FROM agent_core_answer_chunks WHERE chat = $1",
                        &[&chat],
                    )
                    .await
                    .map_err(store_error)?;
                transaction
                    .execute(
                        "INSERT INTO agent_core_answers
                             (chat, answer, done, stop, written, read, chunks)
                         VALUES ($1, $2, false, false, now(), NULL, 0)
                         ON CONFLICT (chat) DO UPDATE SET answer = $2, done = false,
                             stop = false, written = now(), read = NULL, chunks = 0",
                        &[&chat, &answer],
                    )
                    .await
                    .map_err(store_error)?;
                (false, None, 0)
            }
        };
        for (seq, chunk) in (written..).zip(chunks) {
            transaction
                .execute(
                    "INSERT INTO agent_core_answer_chunks (chat, seq, data) VALUES ($1, $2, $3)",
                    &[&chat, &seq, &chunk.as_ref()],
                )
                .await
                .map_err(store_error)?;
        }
        let count = written + i64::try_from(chunks.len()).unwrap_or(i64::MAX);
        transaction
            .execute(
                "UPDATE agent_core_answers SET chunks = $2, written = now(), done = $3
                 WHERE chat = $1",
                &[&chat, &count, &done],
            )
            .await
            .map_err(store_error)?;
        if done {
            let kept_for = KEPT_AFTER_DONE.as_secs_f64();
            transaction
                .execute(
                    "DELETE FROM agent_core_answer_chunks WHERE chat IN
                         (SELECT chat FROM agent_core_answers
                          WHERE done AND written < now() - make_interval(secs => $1))",
                    &[&kept_for],
                )
                .await
                .map_err(store_error)?;
            transaction
                .execute(
                    "DELETE FROM agent_core_answers
                     WHERE done AND written < now() - make_interval(secs => $1)",
                    &[&kept_for],
                )
                .await
                .map_err(store_error)?;
        }
        transaction.commit().await.map_err(store_error)?;
        Ok(Heard::new(stop, read_ago))
    }

    async fn read_in(
        &self,
        chat: &str,
        from: usize,
        reading: bool,
    ) -> Result<Option<Logged>, SessionError> {
        let mut client = self.pool.get().await.map_err(store_error)?;
        let transaction = client.transaction().await.map_err(store_error)?;
        if reading {
            transaction
                .execute(
                    "UPDATE agent_core_answers SET read = now() WHERE chat = $1",
                    &[&chat],
                )
                .await
                .map_err(store_error)?;
        }
        let Some(row) = transaction
            .query_opt(
                concat!(
                    "SELECT answer, done, ",
                    ago!("written"),
                    " FROM agent_core_answers WHERE chat = $1"
                ),
                &[&chat],
            )
            .await
            .map_err(store_error)?
        else {
            return Ok(None);
        };
        let from = i64::try_from(from).unwrap_or(i64::MAX);
        let chunks = transaction
            .query(
                "SELECT data FROM agent_core_answer_chunks WHERE chat = $1 AND seq >= $2
                 ORDER BY seq",
                &[&chat, &from],
            )
            .await
            .map_err(store_error)?
            .iter()
            .map(|row| Bytes::from(row.get::<_, Vec<u8>>(0)))
            .collect();
        transaction.commit().await.map_err(store_error)?;
        Ok(Some(Logged::new(
            row.get(0),
            chunks,
            row.get(1),
            from_millis(row.get(2)),
        )))
    }
}

impl AnswerLog for PostgresAnswers {
    fn write<'a>(
        &'a self,
        chat: &'a str,
        answer: &'a str,
        chunks: &'a [Bytes],
        done: bool,
    ) -> BoxFuture<'a, Result<Heard, SessionError>> {
        Box::pin(self.write_in(chat, answer, chunks, done))
    }

    fn read<'a>(
        &'a self,
        chat: &'a str,
        from: usize,
        reading: bool,
    ) -> BoxFuture<'a, Result<Option<Logged>, SessionError>> {
        Box::pin(self.read_in(chat, from, reading))
    }

    fn stop<'a>(&'a self, chat: &'a str) -> BoxFuture<'a, Result<bool, SessionError>> {
        Box::pin(async move {
            let client = self.pool.get().await.map_err(store_error)?;
            let changed = client
                .execute(
                    "UPDATE agent_core_answers SET stop = true WHERE chat = $1 AND NOT done",
                    &[&chat],
                )
                .await
                .map_err(store_error)?;
            Ok(changed > 0)
        })
    }
}
