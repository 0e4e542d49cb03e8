//! The messages of the conversations an SQLite store loaded last, kept in memory so that the
//! next load of one reads and parses only the messages appended since (a turn's few, not the
//! whole conversation). They are valid while the conversation was not cut back: the database
//! counts its cuts, and a load whose count differs reads the conversation whole again (this store's
//! own cuts cut what it keeps the same way). Appends
//! by other processes are read as this store's own are, from the database.

use std::collections::HashMap;

use agent_core::Message;

/// How many conversations are kept: a server's busiest; the least recently loaded goes first.
const MOST: usize = 64;

/// The conversations loaded last, by id.
#[derive(Debug, Default)]
pub(super) struct Loaded {
    conversations: HashMap<String, Kept>,
    /// Counts loads, to find the least recently loaded.
    clock: u64,
}

/// A conversation's messages as loaded, after `cuts` cuts.
#[derive(Debug)]
struct Kept {
    cuts: i64,
    messages: Vec<Message>,
    loaded_at: u64,
}

impl Loaded {
    /// The messages of conversation `id` loaded before, when it has had `cuts` cuts since it was
    /// created and at least `len` messages are still there; else none.
    pub(super) fn take(&mut self, id: &str, cuts: i64, len: usize) -> Vec<Message> {
        match self.conversations.remove(id) {
            Some(kept) if kept.cuts == cuts && kept.messages.len() <= len => kept.messages,
            _ => Vec::new(),
        }
    }

    /// Cuts the messages kept of conversation `id` back to its first `keep`, the cut it had after
    /// `cuts - 1` cuts, now made its `cuts`th; when they were not of the conversation as it was
    /// just before, they go.
    pub(super) fn cut(&mut self, id: &str, cuts: i64, keep: usize) {
        match self.conversations.get_mut(id) {
            Some(kept) if kept.cuts + 1 == cuts => {
                kept.messages.truncate(keep);
                kept.cuts = cuts;
            }
            Some(_) => {
                self.conversations.remove(id);
            }
            None => {}
        }
    }

    /// Keeps `messages` as conversation `id`'s after `cuts` cuts; the least recently loaded
    /// conversation goes when there are too many.
    pub(super) fn keep(&mut self, id: &str, cuts: i64, messages: &[Message]) {
        if self.conversations.len() >= MOST
            && let Some(oldest) = (self.conversations.iter())
                .min_by_key(|(_, kept)| kept.loaded_at)
                .map(|(id, _)| id.clone())
        {
            self.conversations.remove(&oldest);
        }
        self.clock += 1;
        let kept = Kept {
            cuts,
            messages: messages.to_vec(),
            loaded_at: self.clock,
        };
        self.conversations.insert(id.to_owned(), kept);
    }
}
