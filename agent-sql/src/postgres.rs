//! Conversations in PostgreSQL: several processes (web servers behind one load balancer, say) on
//! one database, each append (or cut) one transaction, and the runs on a conversation serialized
//! across all of them by an advisory lock.
//!
//! **Why a session-level advisory lock.** A run holds its conversation from load to append, which
//! can take minutes (the model answers, a slow tool runs). A lock held by a transaction
//! (`pg_advisory_xact_lock`, or a row lock) would keep a transaction open all that time: idle in
//! transaction, holding back vacuum and cut off by `idle_in_transaction_session_timeout`. A
//! session-level `pg_advisory_lock` needs no transaction: the hold takes a pooled connection,
//! locks the key (`hashtextextended` of the conversation id, computed by PostgreSQL so that every
//! process and every build agrees on it), keeps the connection while the run goes on, and unlocks
//! before handing it back. A process that dies loses its connections, and PostgreSQL releases
//! their locks. Runs in one process wait for each other in memory first, so a conversation takes at
//! most one connection per process while its runs queue.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use deadpool_postgres::tokio_postgres::{self, NoTls};
use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, PoolError, RecyclingMethod};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::postgres_schema::MIGRATIONS;
use super::stored::{bodies, body, kept_from, message_from, paused_from, usage_from};
use agent_core::session::{
    Append, Conversation, ConversationHold, ConversationLocks, Listed, SessionError, SessionStore,
};
use agent_core::{BoxFuture, PausedRun};

/// Adds what is kept beside conversation `id`'s messages (summaries, child runs) after what it
/// has in `table`: each body with the position in the messages it goes with (column `at`).
async fn add_kept(
    transaction: &tokio_postgres::Transaction<'_>,
    table: &str,
    at: &str,
    id: &str,
    positions: &[i64],
    bodies: &[String],
) -> Result<(), SessionError> {
    if bodies.is_empty() {
        return Ok(());
    }
    // The table and column are this file's own names, never input.
    let insert = format!(
        "INSERT INTO {table} (conversation, position, {at}, body)
         SELECT $1, (SELECT coalesce(max(position) + 1, 0) FROM {table} WHERE conversation = $1)
                    + item.number - 1,
                item.at, item.body
         FROM unnest($2::bigint[], $3::text[]) WITH ORDINALITY AS item (at, body, number)"
    );
    transaction
        .execute(&insert, &[&id, &positions, &bodies])
        .await
        .map(drop)
        .map_err(store_error)
}

/// The pool size [`PostgresSessions::connect`] makes.
const POOL_SIZE: usize = 16;

/// The key of conversation `id`'s advisory lock, as text for `hashtextextended`.
fn lock_key(id: &str) -> String {
    format!("agent-core conversation {id}")
}

/// A [`SessionStore`] in PostgreSQL. Any number of processes may share the database: runs on a
/// conversation are serialized across all of them (an advisory lock, see the module docs), and an
/// append or a cut that finds the conversation changed since it was loaded is refused
/// ([`SessionError::Conflict`]) and writes nothing.
///
/// ```no_run
/// use agent_sql::PostgresSessions;
/// # async fn run() -> Result<(), agent_core::session::SessionError> {
/// let store = PostgresSessions::connect("postgres://agent@db.internal/chats").await?;
/// # let agent: agent_core::Agent = agent_core::Agent::new(agent_core::testing::ScriptedModel::new([agent_core::AssistantMessage::text("Hi")]));
/// let output = agent.run("Hello").session(&store, "chat-42").await;
/// # let _ = output;
/// # Ok(())
/// # }
/// ```
///
/// The tables are `agent_core_schema`, `agent_core_conversations` and `agent_core_messages`, made
/// in the first schema of the connection's `search_path` by the store itself when it connects.
///
/// **TLS.** [`connect`](Self::connect) speaks plain TCP or a Unix socket (no TLS code is built in:
/// a URL asking `sslmode=require` is refused when connecting). For TLS, build a pool with the TLS
/// connector of your choice (`postgres-native-tls` or `tokio-postgres-rustls`) and hand it to
/// [`from_pool`](Self::from_pool).
///
/// **Pool size.** Each conversation with a run going on in this process keeps one connection (its
/// lock) for the run; the store keeps at least one of the pool's connections for loads and
/// appends, so at most `max_size - 1` conversations run at once in one process, and further runs
/// wait for one to finish.
#[derive(Clone)]
pub struct PostgresSessions {
    pool: Pool,
    /// The runs on each conversation in this process, queued before they take a connection.
    locks: Arc<ConversationLocks>,
    /// How many of the pool's connections may hold locks at once: one fewer than the pool has.
    lock_slots: Arc<Semaphore>,
}

impl fmt::Debug for PostgresSessions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool's configuration: nothing of the credentials, even redacted.
        let status = self.pool.status();
        f.debug_struct("PostgresSessions")
            .field("pool_size", &status.size)
            .field("pool_max_size", &status.max_size)
            .finish_non_exhaustive()
    }
}

impl PostgresSessions {
    /// Connects to the database at `url` (`postgres://user:password@host:port/dbname`, or the
    /// `key=value` form; see `tokio_postgres::Config`) with a pool of 16 connections, without
    /// TLS, and brings its schema up to date. The password appears in no error and no `Debug`
    /// output.
    pub async fn connect(url: &str) -> Result<Self, SessionError> {
        let config: tokio_postgres::Config = url.parse().map_err(|error| SessionError::Store {
            message: format!("the PostgreSQL URL does not parse: {error}"),
        })?;
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(POOL_SIZE)
            .build()
            .map_err(|error| SessionError::Store {
                message: format!("the connection pool: {error}"),
            })?;
        PostgresSessions::from_pool(pool).await
    }

    /// A store on an existing pool (with TLS, your own sizes and timeouts, or shared with the
    /// rest of the application), after bringing the database's schema up to date. The pool must
    /// have room for two connections at least: one to hold a conversation, one to write it.
    ///
    /// ```no_run
    /// use agent_sql::PostgresSessions;
    /// use agent_sql::deadpool_postgres::{Manager, Pool, tokio_postgres};
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let config: tokio_postgres::Config = "host=/run/postgresql dbname=chats".parse()?;
    /// let manager = Manager::new(config, tokio_postgres::NoTls);
    /// let pool = Pool::builder(manager).max_size(64).build()?;
    /// let store = PostgresSessions::from_pool(pool).await?;
    /// # let _ = store;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn from_pool(pool: Pool) -> Result<Self, SessionError> {
        let max_size = pool.status().max_size;
        if max_size < 2 {
            return Err(SessionError::Store {
                message: format!(
                    "the pool holds {max_size} connection(s): a session store needs two at least"
                ),
            });
        }
        let store = PostgresSessions {
            pool,
            locks: ConversationLocks::new(),
            lock_slots: Arc::new(Semaphore::new(max_size - 1)),
        };
        let mut client = store.client().await?;
        migrate(&mut client).await?;
        Ok(store)
    }

    /// The pool the store uses.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The schema version of the database: the number of migrations applied.
    pub async fn schema_version(&self) -> Result<u32, SessionError> {
        let client = self.client().await?;
        let row = client
            .query_one("SELECT version FROM agent_core_schema", &[])
            .await
            .map_err(store_error)?;
        let version: i32 = row.try_get(0).map_err(store_error)?;
        Ok(u32::try_from(version).unwrap_or(0))
    }

    /// The ids of the conversations kept, in order.
    pub async fn ids(&self) -> Result<Vec<String>, SessionError> {
        let client = self.client().await?;
        let rows = client
            .query("SELECT id FROM agent_core_conversations ORDER BY id", &[])
            .await
            .map_err(store_error)?;
        rows.iter()
            .map(|row| row.try_get(0).map_err(store_error))
            .collect()
    }

    async fn client(&self) -> Result<Object, SessionError> {
        self.pool.get().await.map_err(|error| {
            let message = match &error {
                PoolError::Backend(error) => error_message(error),
                other => other.to_string(),
            };
            SessionError::Store {
                message: format!("no connection to PostgreSQL: {message}"),
            }
        })
    }

    /// Takes the advisory lock of conversation `id` on a connection of its own.
    async fn lock_in_database(&self, id: &str) -> Result<DatabaseLock, SessionError> {
        let slot = Arc::clone(&self.lock_slots)
            .acquire_owned()
            .await
            .map_err(|error| SessionError::Store {
                message: error.to_string(),
            })?;
        let client = self.client().await?;
        // Until the lock is known to be taken (or let go), a connection dropped with this guard
        // is closed, not handed back: a lock granted after a cancelled wait dies with it.
        let lock = DatabaseLock {
            client: Some(client),
            key: lock_key(id),
            _slot: slot,
        };
        if let Some(client) = &lock.client {
            client
                .execute(
                    "SELECT pg_advisory_lock(hashtextextended($1, 0))",
                    &[&lock.key],
                )
                .await
                .map_err(store_error)?;
        }
        Ok(lock)
    }
}

/// A conversation's advisory lock, held on the connection kept here. Dropped without
/// [`release`](Self::release), it closes the connection (PostgreSQL then lets go of the lock)
/// rather than handing a locked connection back to the pool.
struct DatabaseLock {
    client: Option<Object>,
    key: String,
    _slot: OwnedSemaphorePermit,
}

impl DatabaseLock {
    /// Unlocks, and hands the connection back to the pool when that worked.
    async fn release(mut self) {
        let Some(client) = &self.client else {
            return;
        };
        let unlocked = client
            .query_one(
                "SELECT pg_advisory_unlock(hashtextextended($1, 0))",
                &[&self.key],
            )
            .await
            .and_then(|row| row.try_get::<_, bool>(0));
        match unlocked {
            Ok(true) => drop(self.client.take()),
            other => tracing::warn!(
                result = ?other,
                "a conversation's advisory lock did not unlock; closing its connection"
            ),
        }
    }
}

impl Drop for DatabaseLock {
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            drop(Object::take(client));
        }
    }
}

/// What a hold keeps: the lock in the database, released when the hold drops.
struct HeldInDatabase(Option<DatabaseLock>);

impl Drop for HeldInDatabase {
    fn drop(&mut self) {
        let Some(lock) = self.0.take() else {
            return;
        };
        // Unlocking is a round trip: done on the runtime, after the hold is gone. Outside a
        // runtime the lock drops, which closes its connection.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(lock.release());
        }
    }
}

/// Applies the migrations the database does not have yet, in one transaction under an advisory
/// lock of its own: processes starting together on a new database migrate it once.
async fn migrate(client: &mut Object) -> Result<(), SessionError> {
    let transaction = client.transaction().await.map_err(store_error)?;
    transaction
        .batch_execute(
            "SELECT pg_advisory_xact_lock(hashtextextended('agent-core schema', 0));
             CREATE TABLE IF NOT EXISTS agent_core_schema (version integer NOT NULL);",
        )
        .await
        .map_err(store_error)?;
    let row = transaction
        .query_opt("SELECT version FROM agent_core_schema", &[])
        .await
        .map_err(store_error)?;
    let version: i32 = match &row {
        Some(row) => row.try_get(0).map_err(store_error)?,
        None => 0,
    };
    let version = usize::try_from(version).unwrap_or(usize::MAX);
    if version > MIGRATIONS.len() {
        return Err(SessionError::Store {
            message: format!(
                "the database is at schema version {version}, newer than this build's {}",
                MIGRATIONS.len()
            ),
        });
    }
    if version == MIGRATIONS.len() && row.is_some() {
        return Ok(());
    }
    for migration in &MIGRATIONS[version..] {
        transaction
            .batch_execute(migration)
            .await
            .map_err(store_error)?;
    }
    let latest = i32::try_from(MIGRATIONS.len()).unwrap_or(i32::MAX);
    let statement = if row.is_some() {
        "UPDATE agent_core_schema SET version = $1"
    } else {
        "INSERT INTO agent_core_schema (version) VALUES ($1)"
    };
    transaction
        .execute(statement, &[&latest])
        .await
        .map_err(store_error)?;
    transaction.commit().await.map_err(store_error)
}

/// A count or place as PostgreSQL's bigint (no conversation is longer than `i64::MAX`).
fn sql_integer(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn store_error(error: tokio_postgres::Error) -> SessionError {
    SessionError::Store {
        message: error_message(&error),
    }
}

/// The server's own message when there is one (the error's `Display` alone says "db error").
fn error_message(error: &tokio_postgres::Error) -> String {
    match error.as_db_error() {
        Some(db) => format!("{} (SQLSTATE {})", db.message(), db.code().code()),
        None => error.to_string(),
    }
}

impl SessionStore for PostgresSessions {
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold> {
        Box::pin(async move {
            let hold = self.locks.hold(id).await;
            match self.lock_in_database(id).await {
                Ok(lock) => hold.keeping(HeldInDatabase(Some(lock))),
                // The run goes on held in this process only; its append is still refused if
                // another process wrote meanwhile (and the database being out of reach, it will
                // most likely fail to load anyway).
                Err(error) => {
                    tracing::warn!(
                        conversation = id,
                        %error,
                        "could not lock the conversation in PostgreSQL"
                    );
                    hold
                }
            }
        })
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>> {
        Box::pin(async move {
            let client = self.client().await?;
            // One statement, so one snapshot: the messages, the paused run, the summaries and the
            // usage of one moment.
            let row = client
                .query_one(
                    "SELECT (SELECT paused FROM agent_core_conversations WHERE id = $1),
                            ARRAY(SELECT body FROM agent_core_messages
                                  WHERE conversation = $1 ORDER BY position),
                            (SELECT usage FROM agent_core_conversations WHERE id = $1),
                            ARRAY(SELECT body FROM agent_core_summaries
                                  WHERE conversation = $1 ORDER BY position),
                            ARRAY(SELECT body FROM agent_core_children
                                  WHERE conversation = $1 ORDER BY position),
                            (SELECT last_request FROM agent_core_conversations WHERE id = $1)",
                    &[&id],
                )
                .await
                .map_err(store_error)?;
            let paused: Option<String> = row.try_get(0).map_err(store_error)?;
            let bodies: Vec<String> = row.try_get(1).map_err(store_error)?;
            let usage: Option<String> = row.try_get(2).map_err(store_error)?;
            let summaries: Vec<String> = row.try_get(3).map_err(store_error)?;
            let children: Vec<String> = row.try_get(4).map_err(store_error)?;
            let last_request: Option<String> = row.try_get(5).map_err(store_error)?;
            let messages = bodies
                .iter()
                .enumerate()
                .map(|(position, body)| message_from(id, position, body))
                .collect::<Result<Vec<_>, _>>()?;
            let len = messages.len();
            let paused = paused.map(|text| paused_from(id, len, &text)).transpose()?;
            let usage = usage_from(id, len, usage.as_deref())?;
            let summaries = (summaries.iter().enumerate())
                .map(|(index, body)| kept_from(id, len, "summary", index, body))
                .collect::<Result<Vec<_>, _>>()?;
            let children = (children.iter().enumerate())
                .map(|(index, body)| kept_from(id, len, "child run", index, body))
                .collect::<Result<Vec<_>, _>>()?;
            let last_request = (last_request.as_deref())
                .map(|text| kept_from(id, len, "last request", 0, text))
                .transpose()?;
            Ok(Conversation::new(messages)
                .with_paused(paused)
                .with_summaries(summaries)
                .with_usage(usage)
                .with_children(children)
                .with_last_request(last_request))
        })
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(async move {
            let summaries = bodies(added.summaries)?;
            let children = bodies(added.children)?;
            let bodies = bodies(added.messages)?;
            let paused = added.paused.map(PausedRun::to_json);
            let last_request = added.last_request.as_ref().map(body).transpose()?;
            let ends: Vec<i64> = (added.summaries.iter())
                .map(|summary| sql_integer(summary.covers.end))
                .collect();
            let started: Vec<i64> = (added.children.iter())
                .map(|child| sql_integer(child.at))
                .collect();
            let mut client = self.client().await?;
            let transaction = client.transaction().await.map_err(store_error)?;
            let found = lock_row(&transaction, id, true).await?;
            check_len(id, expected_len, found)?;
            transaction
                .execute(
                    "INSERT INTO agent_core_messages (conversation, position, body)
                     SELECT $1, $2 + item.number - 1, item.body
                     FROM unnest($3::text[]) WITH ORDINALITY AS item (body, number)",
                    &[&id, &sql_integer(expected_len), &bodies],
                )
                .await
                .map_err(store_error)?;
            transaction
                .execute(
                    "UPDATE agent_core_conversations SET length = $2, paused = $3, updated = now(),
                         last_request = coalesce($4, last_request)
                     WHERE id = $1",
                    &[
                        &id,
                        &sql_integer(expected_len + bodies.len()),
                        &paused,
                        &last_request,
                    ],
                )
                .await
                .map_err(store_error)?;
            add_kept(
                &transaction,
                "agent_core_summaries",
                "covers_end",
                id,
                &ends,
                &summaries,
            )
            .await?;
            add_kept(
                &transaction,
                "agent_core_children",
                "started_at",
                id,
                &started,
                &children,
            )
            .await?;
            if !added.usage.is_empty() {
                // The row is locked: no other writer between this read and the write.
                let row = transaction
                    .query_one(
                        "SELECT usage FROM agent_core_conversations WHERE id = $1",
                        &[&id],
                    )
                    .await
                    .map_err(store_error)?;
                let before: Option<String> = row.try_get(0).map_err(store_error)?;
                let mut usage = usage_from(id, expected_len, before.as_deref())?;
                usage.merge(&added.usage);
                transaction
                    .execute(
                        "UPDATE agent_core_conversations SET usage = $2 WHERE id = $1",
                        &[&id, &body(&usage)?],
                    )
                    .await
                    .map_err(store_error)?;
            }
            transaction.commit().await.map_err(store_error)
        })
    }

    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let transaction = client.transaction().await.map_err(store_error)?;
            let found = lock_row(&transaction, id, false).await?;
            // Nothing to cut, or refused: the transaction rolls back as it drops.
            check_len(id, expected_len, found)?;
            if keep >= expected_len {
                return Ok(());
            }
            transaction
                .execute(
                    "DELETE FROM agent_core_messages WHERE conversation = $1 AND position >= $2",
                    &[&id, &sql_integer(keep)],
                )
                .await
                .map_err(store_error)?;
            // A summary of messages cut away goes with them.
            transaction
                .execute(
                    "DELETE FROM agent_core_summaries WHERE conversation = $1 AND covers_end > $2",
                    &[&id, &sql_integer(keep)],
                )
                .await
                .map_err(store_error)?;
            // So does a child run a cut call started.
            transaction
                .execute(
                    "DELETE FROM agent_core_children WHERE conversation = $1 AND started_at >= $2",
                    &[&id, &sql_integer(keep)],
                )
                .await
                .map_err(store_error)?;
            // The paused run waited in the last message, which is gone; a conversation cut to
            // nothing loses its title too.
            transaction
                .execute(
                    "UPDATE agent_core_conversations
                     SET length = $2::bigint, paused = NULL, updated = now(),
                         title = CASE WHEN $2::bigint = 0 THEN NULL ELSE title END
                     WHERE id = $1",
                    &[&id, &sql_integer(keep)],
                )
                .await
                .map_err(store_error)?;
            transaction.commit().await.map_err(store_error)
        })
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>> {
        Box::pin(async move {
            let client = self.client().await?;
            let rows = client
                .query(
                    "SELECT id, title, (EXTRACT(EPOCH FROM updated) * 1000)::bigint
                     FROM agent_core_conversations
                     WHERE starts_with(id, $1) AND length > 0
                     ORDER BY updated DESC, id",
                    &[&prefix],
                )
                .await
                .map_err(store_error)?;
            rows.iter()
                .map(|row| {
                    let millis: i64 = row.try_get(2).map_err(store_error)?;
                    let updated = SystemTime::UNIX_EPOCH
                        + Duration::from_millis(u64::try_from(millis).unwrap_or(0));
                    let id: String = row.try_get(0).map_err(store_error)?;
                    let title: Option<String> = row.try_get(1).map_err(store_error)?;
                    Ok(Listed::new(id, title, updated))
                })
                .collect()
        })
    }

    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        Box::pin(async move {
            let client = self.client().await?;
            client
                .execute(
                    "UPDATE agent_core_conversations SET title = $2 WHERE id = $1 AND length > 0",
                    &[&id, &title],
                )
                .await
                .map_err(store_error)?;
            Ok(())
        })
    }
}

/// Locks conversation `id`'s row until the transaction ends (made first when `create`) and reads
/// its length: the latest committed one, after waiting for any other writer of it.
async fn lock_row(
    transaction: &deadpool_postgres::Transaction<'_>,
    id: &str,
    create: bool,
) -> Result<usize, SessionError> {
    let row = if create {
        // An update on conflict locks the row and returns its newest version.
        transaction
            .query_opt(
                "INSERT INTO agent_core_conversations AS c (id) VALUES ($1)
                 ON CONFLICT (id) DO UPDATE SET length = c.length
                 RETURNING length",
                &[&id],
            )
            .await
    } else {
        transaction
            .query_opt(
                "SELECT length FROM agent_core_conversations WHERE id = $1 FOR UPDATE",
                &[&id],
            )
            .await
    }
    .map_err(store_error)?;
    let length: i64 = match row {
        Some(row) => row.try_get(0).map_err(store_error)?,
        None => 0,
    };
    Ok(usize::try_from(length).unwrap_or(usize::MAX))
}

/// Refuses with [`SessionError::Conflict`] unless the conversation has `expected_len` messages.
fn check_len(id: &str, expected_len: usize, found: usize) -> Result<(), SessionError> {
    if found == expected_len {
        Ok(())
    } else {
        Err(SessionError::Conflict {
            id: id.to_owned(),
            expected: expected_len,
            found,
        })
    }
}
