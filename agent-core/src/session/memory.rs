//! Conversations kept in memory: for tests, and for a process that is the only one serving them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::{Conversation, ConversationHold, ConversationLocks, SessionError, SessionStore};
use crate::message::Message;
use crate::run::PausedRun;
use crate::tool::BoxFuture;

/// A [`SessionStore`] in memory: gone with the process.
#[derive(Debug, Default)]
pub struct MemorySessions {
    conversations: Mutex<HashMap<String, Conversation>>,
    locks: Arc<ConversationLocks>,
}

impl MemorySessions {
    /// No conversations yet.
    pub fn new() -> Self {
        MemorySessions::default()
    }

    /// The ids of the conversations kept, in no order.
    pub fn ids(&self) -> Vec<String> {
        self.lock().keys().cloned().collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Conversation>> {
        // A panic elsewhere cannot leave a half-written conversation: appends and cuts are whole.
        self.conversations
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

impl SessionStore for MemorySessions {
    fn hold<'a>(&'a self, id: &'a str) -> BoxFuture<'a, ConversationHold> {
        Box::pin(self.locks.hold(id))
    }

    fn load<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Conversation, SessionError>> {
        let conversation = self.lock().get(id).cloned().unwrap_or_default();
        Box::pin(std::future::ready(Ok(conversation)))
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        messages: &'a [Message],
        paused: Option<&'a PausedRun>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let mut conversations = self.lock();
        let conversation = conversations.entry(id.to_owned()).or_default();
        let result = if conversation.messages.len() == expected_len {
            conversation.messages.extend_from_slice(messages);
            conversation.paused = paused.cloned();
            Ok(())
        } else {
            Err(SessionError::Conflict {
                id: id.to_owned(),
                expected: expected_len,
                found: conversation.messages.len(),
            })
        };
        Box::pin(std::future::ready(result))
    }

    fn truncate<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        keep: usize,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let mut conversations = self.lock();
        let found = conversations
            .get(id)
            .map_or(0, |conversation| conversation.messages.len());
        let result = if found != expected_len {
            Err(SessionError::Conflict {
                id: id.to_owned(),
                expected: expected_len,
                found,
            })
        } else {
            if let Some(conversation) = conversations.get_mut(id)
                && keep < found
            {
                conversation.messages.truncate(keep);
                conversation.paused = None;
            }
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
}
