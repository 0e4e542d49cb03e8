//! Holding a conversation: one run at a time on each, any number on different ones.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures_util::lock::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Which conversations are held, for a [`SessionStore`](super::store::SessionStore) to serialize the runs
/// on each. Entries live while a conversation is held or waited for.
#[derive(Debug, Default)]
pub struct ConversationLocks {
    held: Mutex<HashMap<String, Arc<AsyncMutex<()>>>>,
}

/// A held conversation; dropping it lets the next run in.
#[derive(Debug)]
pub struct ConversationHold {
    kept: Option<Kept>,
    guard: Option<OwnedMutexGuard<()>>,
    id: String,
    locks: Option<Arc<ConversationLocks>>,
}

impl ConversationLocks {
    /// No conversation held.
    pub fn new() -> Arc<Self> {
        Arc::new(ConversationLocks::default())
    }

    /// Waits until no one else holds `id`, then holds it.
    pub async fn hold(self: &Arc<Self>, id: &str) -> ConversationHold {
        let lock = {
            let mut held = self
                .held
                .lock()
                .unwrap_or_else(|poison| poison.into_inner());
            Arc::clone(held.entry(id.to_owned()).or_default())
        };
        let guard = lock.lock_owned().await;
        ConversationHold {
            kept: None,
            guard: Some(guard),
            id: id.to_owned(),
            locks: Some(Arc::clone(self)),
        }
    }
}

/// What a hold keeps besides its place in the queue (a lock held in a database, say).
struct Kept {
    _also: Box<dyn Send + Sync>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Kept(..)")
    }
}

impl ConversationHold {
    /// The id of the conversation held.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Keeps `also` as long as the hold, dropping it just before the next run in this process
    /// is let in: for a store that also holds the conversation elsewhere (an advisory lock in
    /// the database, for runs in other processes) and lets go of it in `also`'s `Drop`.
    pub fn keeping(mut self, also: impl Send + Sync + 'static) -> Self {
        self.kept = Some(Kept {
            _also: Box::new(also),
        });
        self
    }
}

impl Drop for ConversationHold {
    fn drop(&mut self) {
        drop(self.kept.take());
        drop(self.guard.take());
        let Some(locks) = self.locks.take() else {
            return;
        };
        let mut held = locks
            .held
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // Only the map's reference left: no one holds or waits for it.
        if held
            .get(&self.id)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            held.remove(&self.id);
        }
    }
}
