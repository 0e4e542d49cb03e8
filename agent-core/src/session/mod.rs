//! Conversations that outlive a run and its process: a [`SessionStore`] keeps each
//! conversation's messages (and a paused run, if one waits) by conversation id, and a run given
//! [`session(&store, id)`](crate::RunRequest::session) loads, runs and appends in one go:
//! streamed, cancellable, typed or with images like any other run.
//!
//! [`MemorySessions`] ships here; the crate `agent-sql` has `SqliteSessions` (bundled SQLite:
//! nothing to install) and `PostgresSessions` (several processes, on several machines, serving one
//! database). The trait they implement is the run's session seam; write your own over another
//! database.
//!
//! **Concurrent runs on one conversation are serialized**: a run holds its conversation from load
//! to append, and a second run on it waits for the first to finish, then sees its messages. Runs on
//! different conversations do not wait for each other. `PostgresSessions` serializes them across
//! processes too (an advisory lock in the database). As a safety net across processes (two
//! programs on one SQLite file), an append is refused with [`SessionError::Conflict`] when the
//! conversation changed since it was loaded, and nothing is written.
//!
//! A conversation can also be cut back ([`SessionStore::truncate`]): the web endpoint takes back
//! an answer that way when a chat asks for it again. A cut has the same guarantees as an append: it
//! is refused when the conversation changed since it was loaded, and it is made whole or not at
//! all.

mod memory;

pub use crate::run::context::Summary;
pub use crate::run::store::{
    Append, Conversation, ConversationHold, ConversationLocks, KeptChild, LastRequest, Listed,
    SessionError, SessionStore,
};
pub use memory::MemorySessions;
