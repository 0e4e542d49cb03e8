//! [`SessionStore`](agent_core::session::SessionStore)s on SQL databases, so conversations
//! outlive a process and several processes can serve them:
//!
//! - [`SqliteSessions`] (feature `sqlite`, on by default): an SQLite file (bundled: nothing to
//!   install), in WAL mode; several processes may share the file.
//! - [`PostgresSessions`] (feature `postgres`): PostgreSQL, for several processes on several
//!   machines (web servers behind one load balancer); the runs on a conversation are serialized
//!   across all of them by an advisory lock.
//!
//! Both keep each message as JSON text, in order, and a paused run's saved form beside them; both
//! migrate their schema on open, pass the session store contract every store passes
//! (`tests/src/session_contract.rs`), and are built on `agent-core`'s public API alone.

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "postgres")]
mod postgres_schema;
#[cfg(feature = "sqlite")]
mod sqlite;
#[cfg(feature = "sqlite")]
mod sqlite_loaded;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod stored;

/// The pool [`PostgresSessions::from_pool`] takes, and through it `tokio_postgres`: the versions
/// the store is built with.
#[cfg(feature = "postgres")]
pub use deadpool_postgres;
#[cfg(feature = "postgres")]
pub use postgres::PostgresSessions;
#[cfg(feature = "sqlite")]
pub use sqlite::SqliteSessions;
