//! Conversations kept in memory: for tests, and for a process that is the only one serving them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use super::{
    Append, Conversation, ConversationHold, ConversationLocks, Listed, SessionError, SessionStore,
};
use crate::tool::BoxFuture;

/// A [`SessionStore`] in memory: gone with the process.
#[derive(Debug, Default)]
pub struct MemorySessions {
    conversations: Mutex<HashMap<String, Kept>>,
    locks: Arc<ConversationLocks>,
}

/// A conversation as kept: with its title and when it last changed.
#[derive(Debug, Default)]
struct Kept {
    conversation: Conversation,
    title: Option<String>,
    updated: Option<SystemTime>,
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

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Kept>> {
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
        let conversation = self.lock().get(id).map(|kept| kept.conversation.clone());
        Box::pin(std::future::ready(Ok(conversation.unwrap_or_default())))
    }

    fn append<'a>(
        &'a self,
        id: &'a str,
        expected_len: usize,
        added: Append<'a>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        let mut conversations = self.lock();
        let kept = conversations.entry(id.to_owned()).or_default();
        let conversation = &mut kept.conversation;
        let result = if conversation.messages.len() == expected_len {
            conversation.messages.extend_from_slice(added.messages);
            conversation.paused = added.paused.cloned();
            conversation.summaries.extend_from_slice(added.summaries);
            conversation.children.extend_from_slice(added.children);
            conversation.usage.merge(&added.usage);
            if added.last_request.is_some() {
                conversation.last_request = added.last_request;
            }
            kept.updated = Some(SystemTime::now());
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
            .map_or(0, |kept| kept.conversation.messages.len());
        let result = if found != expected_len {
            Err(SessionError::Conflict {
                id: id.to_owned(),
                expected: expected_len,
                found,
            })
        } else {
            if let Some(kept) = conversations.get_mut(id)
                && keep < found
            {
                let conversation = &mut kept.conversation;
                conversation.messages.truncate(keep);
                conversation.paused = None;
                conversation
                    .summaries
                    .retain(|summary| summary.covers.end <= keep);
                conversation.children.retain(|child| child.at < keep);
                kept.updated = Some(SystemTime::now());
                if keep == 0 {
                    kept.title = None;
                }
            }
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn list<'a>(&'a self, prefix: &'a str) -> BoxFuture<'a, Result<Vec<Listed>, SessionError>> {
        let mut listed: Vec<Listed> = self
            .lock()
            .iter()
            .filter(|(id, kept)| id.starts_with(prefix) && !kept.conversation.messages.is_empty())
            .map(|(id, kept)| {
                let updated = kept.updated.unwrap_or(SystemTime::UNIX_EPOCH);
                Listed::new(id.clone(), kept.title.clone(), updated)
            })
            .collect();
        listed.sort_by(|a, b| b.updated.cmp(&a.updated).then_with(|| a.id.cmp(&b.id)));
        Box::pin(std::future::ready(Ok(listed)))
    }

    fn set_title<'a>(
        &'a self,
        id: &'a str,
        title: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), SessionError>> {
        if let Some(kept) = self.lock().get_mut(id)
            && !kept.conversation.messages.is_empty()
        {
            kept.title = title.map(str::to_owned);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}
