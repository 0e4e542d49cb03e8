//! The use of [`UserLimits`] counted in PostgreSQL, for several instances of a server on one
//! database (cargo features `web` and `postgres`).

use std::fmt;
use std::time::Duration;

use deadpool_postgres::Pool;
use deadpool_postgres::tokio_postgres::Transaction;

use super::limits::{BUSY_RETRY, LimitStore, Refused, UserLimits};
use agent_core::BoxFuture;
use agent_core::session::SessionError;

/// The tables, made by the first [`PostgresLimits::new`] on a database.
const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS agent_core_limit_windows (
        owner TEXT NOT NULL,
        budget TEXT NOT NULL,
        began TIMESTAMPTZ NOT NULL,
        spent BIGINT NOT NULL,
        PRIMARY KEY (owner, budget)
    );
    CREATE TABLE IF NOT EXISTS agent_core_limit_runs (
        id BIGSERIAL PRIMARY KEY,
        owner TEXT NOT NULL,
        started TIMESTAMPTZ NOT NULL DEFAULT now()
    );
    CREATE INDEX IF NOT EXISTS agent_core_limit_runs_owner ON agent_core_limit_runs (owner);";

/// The advisory lock that keeps two instances from making the tables at once.
const SCHEMA_LOCK: i64 = 0x6167_656e_745f_6c69;

/// A window of `budget` for `owner`, begun anew when over (its length `$3` in seconds): its spent
/// amount and the seconds it has left.
const WINDOW: &str = "
    INSERT INTO agent_core_limit_windows AS window_row (owner, budget, began, spent)
    VALUES ($1, $2, now(), 0)
    ON CONFLICT (owner, budget) DO UPDATE SET
        began = CASE WHEN window_row.began + make_interval(secs => $3) <= now()
                     THEN now() ELSE window_row.began END,
        spent = CASE WHEN window_row.began + make_interval(secs => $3) <= now()
                     THEN 0 ELSE window_row.spent END
    RETURNING spent,
        EXTRACT(EPOCH FROM (began + make_interval(secs => $3) - now()))::float8";

/// Adds `$3` to `owner`'s token window (its length `$4` in seconds), begun anew when over.
const SPEND: &str = "
    INSERT INTO agent_core_limit_windows AS window_row (owner, budget, began, spent)
    VALUES ($1, $2, now(), $3)
    ON CONFLICT (owner, budget) DO UPDATE SET
        began = CASE WHEN window_row.began + make_interval(secs => $4) <= now()
                     THEN now() ELSE window_row.began END,
        spent = CASE WHEN window_row.began + make_interval(secs => $4) <= now()
                     THEN $3 ELSE window_row.spent + $3 END";

/// Counts the use of [`UserLimits`] in PostgreSQL, so that every instance of a server on one
/// database shares each user's budgets: the multi-instance choice (the default,
/// [`MemoryLimits`](super::MemoryLimits), counts in each process). Made on a pool (the sessions'
/// store's, `agent_sql::PostgresSessions::pool`), it keeps two
/// tables of its own there.
///
/// A request is let in by one transaction that holds the user (an advisory lock on their key),
/// so two instances letting the same user in at once cannot both take the last place. Windows
/// are timed by the database's clock, the same for every instance. A run counts as under way
/// until its instance says it ended; one whose instance died stops counting after the
/// [lease](UserLimits::run_lease).
///
/// ```no_run
/// # async fn run(agent: agent_core::Agent) -> Result<(), Box<dyn std::error::Error>> {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use agent_sql::PostgresSessions;
/// use agent_web::{ChatServer, PostgresLimits, UserLimits};
///
/// let store = PostgresSessions::connect("postgres://app@db/app").await?;
/// let limits = UserLimits::new()
///     .requests(30, Duration::from_secs(60))
///     .kept_in(PostgresLimits::new(store.pool().clone()).await?);
/// let server = ChatServer::new(Arc::new(agent)).sessions(Arc::new(store)).limits(limits);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct PostgresLimits {
    pool: Pool,
}

impl fmt::Debug for PostgresLimits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Not the pool's configuration: nothing of the credentials.
        f.debug_struct("PostgresLimits")
            .field("pool_size", &self.pool.status().size)
            .finish_non_exhaustive()
    }
}

impl PostgresLimits {
    /// Counts on `pool`, after making its tables if the database has none.
    pub async fn new(pool: Pool) -> Result<Self, SessionError> {
        make_tables(&pool, SCHEMA_LOCK, SCHEMA).await?;
        Ok(PostgresLimits { pool })
    }

    async fn admit_in(&self, owner: &str, limits: &UserLimits) -> Result<u64, Refused> {
        let failed = |error: &dyn fmt::Display| Refused::Failed(error.to_string());
        let mut client = self.pool.get().await.map_err(|error| failed(&error))?;
        let transaction = client.transaction().await.map_err(|error| failed(&error))?;
        let key = format!("agent_core_limits/{owner}");
        transaction
            .execute(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                &[&key],
            )
            .await
            .map_err(|error| failed(&error))?;
        if let Some(cap) = limits.run_cap() {
            let lease = limits.lease().as_secs_f64();
            transaction
                .execute(
                    "DELETE FROM agent_core_limit_runs
                     WHERE owner = $1 AND started < now() - make_interval(secs => $2)",
                    &[&owner, &lease],
                )
                .await
                .map_err(|error| failed(&error))?;
            let running: i64 = transaction
                .query_one(
                    "SELECT count(*) FROM agent_core_limit_runs WHERE owner = $1",
                    &[&owner],
                )
                .await
                .map_err(|error| failed(&error))?
                .get(0);
            if usize::try_from(running).unwrap_or(usize::MAX) >= cap {
                return Err(Refused::Wait(BUSY_RETRY));
            }
        }
        for (budget, limit) in [
            ("requests", limits.request_budget()),
            ("tokens", limits.token_budget()),
        ] {
            let Some((allowed, per)) = limit else {
                continue;
            };
            let (spent, rest) = window(&transaction, owner, budget, per)
                .await
                .map_err(|error| failed(&error))?;
            if u64::try_from(spent).unwrap_or(0) >= allowed {
                let rest = Duration::try_from_secs_f64(rest.max(0.0)).unwrap_or(per);
                return Err(Refused::Wait(rest));
            }
        }
        if limits.request_budget().is_some() {
            transaction
                .execute(
                    "UPDATE agent_core_limit_windows SET spent = spent + 1
                     WHERE owner = $1 AND budget = 'requests'",
                    &[&owner],
                )
                .await
                .map_err(|error| failed(&error))?;
        }
        let run = match limits.run_cap() {
            Some(_) => {
                let id: i64 = transaction
                    .query_one(
                        "INSERT INTO agent_core_limit_runs (owner) VALUES ($1) RETURNING id",
                        &[&owner],
                    )
                    .await
                    .map_err(|error| failed(&error))?
                    .get(0);
                u64::try_from(id).unwrap_or(0)
            }
            None => 0,
        };
        transaction.commit().await.map_err(|error| failed(&error))?;
        Ok(run)
    }
}

/// The window of `budget` for `owner` as of now: what was spent in it and the seconds it has
/// left.
async fn window(
    transaction: &Transaction<'_>,
    owner: &str,
    budget: &str,
    per: Duration,
) -> Result<(i64, f64), deadpool_postgres::tokio_postgres::Error> {
    let row = transaction
        .query_one(WINDOW, &[&owner, &budget, &per.as_secs_f64()])
        .await?;
    Ok((row.get(0), row.get(1)))
}

impl LimitStore for PostgresLimits {
    fn admit<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
    ) -> BoxFuture<'a, Result<u64, Refused>> {
        Box::pin(self.admit_in(owner, limits))
    }

    fn spend<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
        tokens: u64,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some((_, per)) = limits.token_budget() else {
                return Ok(());
            };
            let tokens = i64::try_from(tokens).unwrap_or(i64::MAX);
            let client = self.pool.get().await.map_err(|error| error.to_string())?;
            client
                .execute(SPEND, &[&owner, &"tokens", &tokens, &per.as_secs_f64()])
                .await
                .map_err(|error| error.to_string())?;
            Ok(())
        })
    }

    fn release(&self, _owner: &str, run: u64) {
        let (Ok(id), Ok(runtime)) = (i64::try_from(run), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        if id == 0 {
            return;
        }
        let pool = self.pool.clone();
        // The run's place is given back by a task of its own; should it fail (the database gone),
        // the lease ends the run's count.
        runtime.spawn(async move {
            let Ok(client) = pool.get().await else {
                return;
            };
            let deleted = client
                .execute("DELETE FROM agent_core_limit_runs WHERE id = $1", &[&id])
                .await;
            if let Err(problem) = deleted {
                tracing::warn!(%problem, "a finished run could not be let go of in PostgreSQL");
            }
        });
    }
}

/// A database failure as the store's error.
/// Makes the tables `schema` says on `pool`'s database, if it has none, holding the advisory lock
/// `lock` meanwhile so that two instances starting at once do not make them together.
pub(crate) async fn make_tables(pool: &Pool, lock: i64, schema: &str) -> Result<(), SessionError> {
    let mut client = pool.get().await.map_err(store_error)?;
    let transaction = client.transaction().await.map_err(store_error)?;
    transaction
        .execute("SELECT pg_advisory_xact_lock($1)", &[&lock])
        .await
        .map_err(store_error)?;
    transaction
        .batch_execute(schema)
        .await
        .map_err(store_error)?;
    transaction.commit().await.map_err(store_error)
}

/// A database's failure as the stores say it.
pub(crate) fn store_error(error: impl fmt::Display) -> SessionError {
    SessionError::Store {
        message: error.to_string(),
    }
}
