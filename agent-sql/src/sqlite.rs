//! Conversations in an SQLite file (bundled SQLite, in WAL mode): they outlive the process, and
//! an append (or a cut) is one transaction, so a writer killed mid-append leaves the file whole.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::sqlite_loaded::Loaded;
use super::stored::{bodies, body, kept_from, message_from, paused_from, usage_from};
use agent_core::session::{
    Append, Conversation, ConversationHold, ConversationLocks, Listed, SessionError, SessionStore,
};
use agent_core::{BoxFuture, PausedRun, UsageByModel, run_blocking};

/// The conversation locks of the database file `file` in this process, shared by every store
/// open on it (held weakly: they go when the last store on the file does).
fn locks_of(file: PathBuf) -> Arc<ConversationLocks> {
    static FILES: Mutex<Vec<(PathBuf, Weak<ConversationLocks>)>> = Mutex::new(Vec::new());
    let mut files = FILES.lock().unwrap_or_else(|poison| poison.into_inner());
    files.retain(|(_, locks)| locks.strong_count() > 0);
    if let Some(locks) = files
        .iter()
        .find(|(open, _)| *open == file)
        .and_then(|(_, locks)| locks.upgrade())
    {
        return locks;
    }
    let locks = ConversationLocks::new();
    files.push((file, Arc::downgrade(&locks)));
    locks
}

/// The schema, one migration per version; a database at version `n` runs the migrations after
/// the `n`th (`PRAGMA user_version` keeps `n`). Never edit one that shipped: add the next.
const MIGRATIONS: &[&str] = &[
    // 1: conversations, their messages in order, and the paused run of each.
    "CREATE TABLE conversations (
         id TEXT PRIMARY KEY NOT NULL,
         paused TEXT
     ) WITHOUT ROWID;
     CREATE TABLE messages (
         conversation TEXT NOT NULL REFERENCES conversations(id),
         position INTEGER NOT NULL,
         body TEXT NOT NULL,
         PRIMARY KEY (conversation, position)
     ) WITHOUT ROWID;",
    // 2: each conversation's title, and when it last changed (milliseconds since 1970), for
    // lists of them.
    "ALTER TABLE conversations ADD COLUMN title TEXT;
     ALTER TABLE conversations ADD COLUMN updated INTEGER NOT NULL DEFAULT 0;",
    // 3: what each conversation's runs used (JSON), and the summaries of its parts, in order,
    // each with the end of the messages it stands for (a cut before that end removes it).
    "ALTER TABLE conversations ADD COLUMN usage TEXT;
     CREATE TABLE summaries (
         conversation TEXT NOT NULL REFERENCES conversations(id),
         position INTEGER NOT NULL,
         covers_end INTEGER NOT NULL,
         body TEXT NOT NULL,
         PRIMARY KEY (conversation, position)
     ) WITHOUT ROWID;",
    // 4: the runs its calls started (agents called as tools), in the order they ended, each with
    // the position of the reply that started it (a cut before it removes it).
    "CREATE TABLE children (
         conversation TEXT NOT NULL REFERENCES conversations(id),
         position INTEGER NOT NULL,
         started_at INTEGER NOT NULL,
         body TEXT NOT NULL,
         PRIMARY KEY (conversation, position)
     ) WITHOUT ROWID;",
    // 5: what its last model request sent (JSON): where the context policy cut, and what a
    // prompt cache holds of it; and how many times it was cut back, so that a store that kept
    // its messages loaded knows whether they are still its first ones.
    "ALTER TABLE conversations ADD COLUMN last_request TEXT;
     ALTER TABLE conversations ADD COLUMN cuts INTEGER NOT NULL DEFAULT 0;",
];

/// A [`SessionStore`] in an SQLite file. Several processes may share the file: their appends are
/// serialized by SQLite, and one that finds the conversation changed since it loaded it is
/// refused ([`SessionError::Conflict`]).
#[derive(Debug, Clone)]
pub struct SqliteSessions {
    connection: Arc<Mutex<Connection>>,
    locks: Arc<ConversationLocks>,
    /// The messages of the conversations loaded last, so a load reads only those appended since.
    loaded: Arc<Mutex<Loaded>>,
}

impl SqliteSessions {
    /// Opens (or creates) the database at `path` and brings its schema up to date.
    /// Stores opened on one file in one process serialize their runs on a conversation together,
    /// as one store does.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        let connection = Connection::open(path.as_ref()).map_err(store_error)?;
        // The file exists now, so its canonical path names it however it was reached.
        let file =
            std::fs::canonicalize(path.as_ref()).unwrap_or_else(|_| path.as_ref().to_path_buf());
        SqliteSessions::with_connection(connection, locks_of(file))
    }

    /// A database in memory, gone when the store is: for tests.
    pub fn in_memory() -> Result<Self, SessionError> {
        let connection = Connection::open_in_memory().map_err(store_error)?;
        SqliteSessions::with_connection(connection, ConversationLocks::new())
    }

    fn with_connection(
        mut connection: Connection,
        locks: Arc<ConversationLocks>,
    ) -> Result<Self, SessionError> {
        // First, so that opening beside another process waits for it rather than failing.
        connection
            .busy_timeout(Duration::from_secs(10))
            .map_err(store_error)?;
        // WAL: readers do not block the writer, and a killed writer's half-done transaction is
        // rolled back on the next open. NORMAL sync is durable across a process crash.
        let _mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(store_error)?;
        connection
            .execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
            .map_err(store_error)?;
        migrate(&mut connection)?;
        Ok(SqliteSessions {
            connection: Arc::new(Mutex::new(connection)),
            locks,
            loaded: Arc::default(),
        })
    }

    /// The schema version of the database: the number of migrations applied.
    pub fn schema_version(&self) -> Result<u32, SessionError> {
        let connection = self.connection();
        connection
            .query_row("PRAGMA user_version", [], |row| row.get(0))
            .map_err(store_error)
    }

    /// The ids of the conversations kept, in order.
    pub fn ids(&self) -> Result<Vec<String>, SessionError> {
        let connection = self.connection();
        let mut statement = connection
            .prepare("SELECT id FROM conversations ORDER BY id")
            .map_err(store_error)?;
        let ids = statement
            .query_map([], |row| row.get(0))
            .map_err(store_error)?
            .collect::<Result<Vec<String>, _>>()
            .map_err(store_error)?;
        Ok(ids)
    }

    fn connection(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding it cannot leave a transaction half-done: SQLite rolls it back.
        self.connection
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Runs `work` with the connection on a blocking thread: SQLite calls block.
    async fn with<R: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Connection) -> Result<R, SessionError> + Send + 'static,
    ) -> Result<R, SessionError> {
        let connection = Arc::clone(&self.connection);
        let done = run_blocking(move || {
            let mut connection = connection
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            work(&mut connection)
        });
        done.await.map_err(|error| SessionError::Store {
            message: error.to_string(),
        })?
    }
}

/// Applies the migrations the database does not have yet, all in one write transaction: a second
/// process opening the same new file waits, then finds them applied.
fn migrate(connection: &mut Connection) -> Result<(), SessionError> {
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store_error)?;
    // Read inside the transaction: no other process can migrate between the read and the writes.
    let version: i64 = transaction
        .query_row("PRAGMA user_version", [], |row| row.get(0))
        .map_err(store_error)?;
    let version = usize::try_from(version).unwrap_or(usize::MAX);
    if version > MIGRATIONS.len() {
        return Err(SessionError::Store {
            message: format!(
                "the database is at schema version {version}, newer than this build's {}",
                MIGRATIONS.len()
            ),
        });
    }
    if version == MIGRATIONS.len() {
        return Ok(());
    }
    for migration in &MIGRATIONS[version..] {
        transaction.execute_batch(migration).map_err(store_error)?;
    }
    transaction
        .pragma_update(None, "user_version", sql_integer(MIGRATIONS.len()))
        .map_err(store_error)?;
    transaction.commit().map_err(store_error)
}

/// A count or place as SQLite's integer (no conversation is longer than `i64::MAX`).
fn sql_integer(value: usize) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

fn store_error(error: rusqlite::Error) -> SessionError {
    SessionError::Store {
        message: error.to_string(),
    }
}

impl SessionStore for SqliteSessions {
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold> {
        Box::pin(self.locks.hold(id))
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>> {
        let id = id.to_owned();
        let loaded = Arc::clone(&self.loaded);
        Box::pin(self.with(move |connection| {
            let mut loaded = loaded.lock().unwrap_or_else(|poison| poison.into_inner());
            load(connection, &mut loaded, &id)
        }))
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        // Serialized here, so the blocking thread owns what it writes.
        let written = Written::of(&added);
        let id = id.to_owned();
        Box::pin(async move {
            let written = written?;
            self.with(move |connection| append(connection, &id, expected_len, written))
                .await
        })
    }

    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let id = id.to_owned();
        let loaded = Arc::clone(&self.loaded);
        Box::pin(self.with(move |connection| {
            let mut loaded = loaded.lock().unwrap_or_else(|poison| poison.into_inner());
            truncate(connection, &mut loaded, &id, expected_len, keep)
        }))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>> {
        let prefix = prefix.to_owned();
        Box::pin(self.with(move |connection| list(connection, &prefix)))
    }

    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let (id, title) = (id.to_owned(), title.map(str::to_owned));
        Box::pin(self.with(move |connection| set_title(connection, &id, title.as_deref())))
    }
}

fn load(
    connection: &mut Connection,
    loaded: &mut Loaded,
    id: &str,
) -> Result<Conversation, SessionError> {
    // One read transaction: the messages, the paused run, the usage and the summaries of one
    // moment, whatever another process appends meanwhile.
    let transaction = connection.transaction().map_err(store_error)?;
    type Row = (Option<String>, Option<String>, Option<String>, i64);
    let row: Option<Row> = transaction
        .query_row(
            "SELECT paused, usage, last_request, cuts FROM conversations WHERE id = ?1",
            [id],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)),
        )
        .optional()
        .map_err(store_error)?;
    let (paused, usage, last_request, cuts) = match row {
        Some((paused, usage, last, cuts)) => (paused, usage, last, cuts),
        None => (None, None, None, 0),
    };
    // The messages loaded before, while the conversation was not cut back since: only those
    // appended after them are read (by this process or another).
    let mut messages = loaded.take(id, cuts, stored_len(&transaction, id)?);
    let from = messages.len();
    let mut statement = transaction
        .prepare_cached(
            "SELECT body FROM messages WHERE conversation = ?1 AND position >= ?2 ORDER BY position",
        )
        .map_err(store_error)?;
    let rows = statement
        .query_map(params![id, sql_integer(from)], |row| {
            row.get::<_, String>(0)
        })
        .map_err(store_error)?;
    for (offset, body) in rows.enumerate() {
        let body = body.map_err(store_error)?;
        messages.push(message_from(id, from + offset, &body)?);
    }
    drop(statement);
    loaded.keep(id, cuts, &messages);
    let len = messages.len();
    let paused = paused.map(|text| paused_from(id, len, &text)).transpose()?;
    let usage = usage_from(id, len, usage.as_deref())?;
    let last_request = (last_request.as_deref())
        .map(|text| kept_from(id, len, "last request", 0, text))
        .transpose()?;
    let summaries = bodies_of(
        &transaction,
        "SELECT body FROM summaries WHERE conversation = ?1 ORDER BY position",
        id,
    )?
    .iter()
    .enumerate()
    .map(|(index, body)| kept_from(id, len, "summary", index, body))
    .collect::<Result<Vec<_>, _>>()?;
    let children = bodies_of(
        &transaction,
        "SELECT body FROM children WHERE conversation = ?1 ORDER BY position",
        id,
    )?
    .iter()
    .enumerate()
    .map(|(index, body)| kept_from(id, len, "child run", index, body))
    .collect::<Result<Vec<_>, _>>()?;
    Ok(Conversation::new(messages)
        .with_paused(paused)
        .with_summaries(summaries)
        .with_usage(usage)
        .with_children(children)
        .with_last_request(last_request))
}

/// The texts `query` (of one column, for conversation `id`) reads, in its order.
fn bodies_of(
    transaction: &rusqlite::Transaction<'_>,
    query: &str,
    id: &str,
) -> Result<Vec<String>, SessionError> {
    let mut statement = transaction.prepare_cached(query).map_err(store_error)?;
    let rows = statement
        .query_map([id], |row| row.get::<_, String>(0))
        .map_err(store_error)?;
    rows.collect::<Result<_, _>>().map_err(store_error)
}

/// What an append writes, serialized: the messages, the paused run, the summaries (with the end
/// of what each stands for), the child runs (with where each started) and the usage to add.
struct Written {
    messages: Vec<String>,
    paused: Option<String>,
    summaries: Vec<(usize, String)>,
    children: Vec<(usize, String)>,
    usage: UsageByModel,
    last_request: Option<String>,
}

impl Written {
    fn of(added: &Append<'_>) -> Result<Self, SessionError> {
        let summaries = (added.summaries.iter())
            .map(|summary| Ok((summary.covers.end, body(summary)?)))
            .collect::<Result<_, SessionError>>()?;
        let children = (added.children.iter())
            .map(|child| Ok((child.at, body(child)?)))
            .collect::<Result<_, SessionError>>()?;
        Ok(Written {
            messages: bodies(added.messages)?,
            paused: added.paused.map(PausedRun::to_json),
            summaries,
            children,
            usage: added.usage.clone(),
            last_request: added.last_request.as_ref().map(body).transpose()?,
        })
    }
}

/// How many messages conversation `id` has, read from the last position (positions run from 0
/// without gaps): one step down the index, however long the conversation.
fn stored_len(transaction: &rusqlite::Transaction<'_>, id: &str) -> Result<usize, SessionError> {
    let last: Option<i64> = transaction
        .query_row(
            "SELECT position FROM messages WHERE conversation = ?1 ORDER BY position DESC LIMIT 1",
            [id],
            |row| row.get(0),
        )
        .optional()
        .map_err(store_error)?;
    Ok(last.map_or(0, |last| usize::try_from(last + 1).unwrap_or(usize::MAX)))
}

/// How many messages conversation `id` has, refused with [`SessionError::Conflict`] unless
/// `expected_len`. Read inside the write transaction that depends on it.
fn check_len(
    transaction: &rusqlite::Transaction<'_>,
    id: &str,
    expected_len: usize,
) -> Result<(), SessionError> {
    let found = stored_len(transaction, id)?;
    if found != expected_len {
        return Err(SessionError::Conflict {
            id: id.to_owned(),
            expected: expected_len,
            found,
        });
    }
    Ok(())
}

fn append(
    connection: &mut Connection,
    id: &str,
    expected_len: usize,
    written: Written,
) -> Result<(), SessionError> {
    // IMMEDIATE: the write lock is taken before the count is read, so no other writer slips in
    // between.
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store_error)?;
    check_len(&transaction, id, expected_len)?;
    transaction
        .execute(
            "INSERT INTO conversations (id, paused, updated) VALUES (?1, ?2, ?3)
             ON CONFLICT (id) DO UPDATE SET paused = excluded.paused, updated = excluded.updated",
            params![id, written.paused, now_millis()],
        )
        .map_err(store_error)?;
    {
        let mut insert = transaction
            .prepare_cached(
                "INSERT INTO messages (conversation, position, body) VALUES (?1, ?2, ?3)",
            )
            .map_err(store_error)?;
        for (offset, body) in written.messages.iter().enumerate() {
            insert
                .execute(params![id, sql_integer(expected_len + offset), body])
                .map_err(store_error)?;
        }
    }
    add_kept(
        &transaction,
        "INSERT INTO summaries (conversation, position, covers_end, body)
         SELECT ?1, coalesce(max(position) + 1, 0), ?2, ?3
         FROM summaries WHERE conversation = ?1",
        id,
        &written.summaries,
    )?;
    add_kept(
        &transaction,
        "INSERT INTO children (conversation, position, started_at, body)
         SELECT ?1, coalesce(max(position) + 1, 0), ?2, ?3
         FROM children WHERE conversation = ?1",
        id,
        &written.children,
    )?;
    if let Some(last) = &written.last_request {
        transaction
            .execute(
                "UPDATE conversations SET last_request = ?2 WHERE id = ?1",
                params![id, last],
            )
            .map_err(store_error)?;
    }
    if !written.usage.is_empty() {
        let before: Option<String> = transaction
            .query_row(
                "SELECT usage FROM conversations WHERE id = ?1",
                [id],
                |row| row.get(0),
            )
            .map_err(store_error)?;
        let mut usage = usage_from(id, expected_len, before.as_deref())?;
        usage.merge(&written.usage);
        transaction
            .execute(
                "UPDATE conversations SET usage = ?2 WHERE id = ?1",
                params![id, body(&usage)?],
            )
            .map_err(store_error)?;
    }
    transaction.commit().map_err(store_error)
}

/// Adds what is kept beside conversation `id`'s messages (summaries, child runs) after what it
/// has, by `insert` (of the conversation, the position in the messages each goes with, the body).
fn add_kept(
    transaction: &rusqlite::Transaction<'_>,
    insert: &str,
    id: &str,
    items: &[(usize, String)],
) -> Result<(), SessionError> {
    if items.is_empty() {
        return Ok(());
    }
    let mut insert = transaction.prepare_cached(insert).map_err(store_error)?;
    for (at, body) in items {
        insert
            .execute(params![id, sql_integer(*at), body])
            .map_err(store_error)?;
    }
    Ok(())
}

fn truncate(
    connection: &mut Connection,
    loaded: &mut Loaded,
    id: &str,
    expected_len: usize,
    keep: usize,
) -> Result<(), SessionError> {
    // IMMEDIATE, as an append: no other writer between the count and the cut.
    let transaction = connection
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(store_error)?;
    check_len(&transaction, id, expected_len)?;
    if keep >= expected_len {
        return Ok(());
    }
    transaction
        .execute(
            "DELETE FROM messages WHERE conversation = ?1 AND position >= ?2",
            params![id, sql_integer(keep)],
        )
        .map_err(store_error)?;
    // A summary of messages cut away goes with them.
    transaction
        .execute(
            "DELETE FROM summaries WHERE conversation = ?1 AND covers_end > ?2",
            params![id, sql_integer(keep)],
        )
        .map_err(store_error)?;
    // So does a child run a cut call started.
    transaction
        .execute(
            "DELETE FROM children WHERE conversation = ?1 AND started_at >= ?2",
            params![id, sql_integer(keep)],
        )
        .map_err(store_error)?;
    // The paused run waited in the last message, which is gone; a conversation cut to nothing
    // loses its title too.
    let cuts: i64 = transaction
        .query_row(
            "UPDATE conversations SET paused = NULL, updated = ?2, cuts = cuts + 1,
                 title = CASE WHEN ?3 = 0 THEN NULL ELSE title END
             WHERE id = ?1
             RETURNING cuts",
            params![id, now_millis(), sql_integer(keep)],
            |row| row.get(0),
        )
        .map_err(store_error)?;
    transaction.commit().map_err(store_error)?;
    // The messages this store keeps loaded are cut the same way.
    loaded.cut(id, cuts, keep);
    Ok(())
}

fn list(connection: &mut Connection, prefix: &str) -> Result<Vec<Listed>, SessionError> {
    let mut statement = connection
        .prepare_cached(
            "SELECT id, title, updated FROM conversations
             WHERE substr(id, 1, length(?1)) = ?1
               AND EXISTS (SELECT 1 FROM messages WHERE conversation = conversations.id)
             ORDER BY updated DESC, id",
        )
        .map_err(store_error)?;
    let rows = statement
        .query_map([prefix], |row| {
            let millis: i64 = row.get(2)?;
            let updated =
                SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0));
            Ok(Listed::new(row.get::<_, String>(0)?, row.get(1)?, updated))
        })
        .map_err(store_error)?;
    rows.collect::<Result<_, _>>().map_err(store_error)
}

fn set_title(
    connection: &mut Connection,
    id: &str,
    title: Option<&str>,
) -> Result<(), SessionError> {
    connection
        .execute(
            "UPDATE conversations SET title = ?2
             WHERE id = ?1 AND EXISTS (SELECT 1 FROM messages WHERE conversation = ?1)",
            params![id, title],
        )
        .map_err(store_error)?;
    Ok(())
}

/// Now, in milliseconds since 1970.
fn now_millis() -> i64 {
    let since = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}
