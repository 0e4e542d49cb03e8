//! Test doubles for your own tests, and for running agents offline.

use std::sync::Mutex;

use crate::message::Message;
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::tool::{BoxFuture, ToolDef};

/// A model that replays a script of replies and records every request it receives.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{Agent, AssistantMessage, ToolCall};
///
/// # tokio_test_block(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new("call_1", "missing_tool", "{}")]),
///     AssistantMessage::text("I could not look that up."),
/// ]);
/// let agent = Agent::new(model.clone());
/// let out = agent.run("Look it up").await.unwrap();
/// assert_eq!(out.text, "I could not look that up.");
/// assert_eq!(model.requests().len(), 2);
/// # });
/// # fn tokio_test_block(f: impl std::future::Future<Output = ()>) {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct ScriptedModel {
    inner: std::sync::Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    script: Vec<ChatResponse>,
    requests: Mutex<Vec<RecordedRequest>>,
}

/// A request a [`ScriptedModel`] received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// The history it was sent.
    pub messages: Vec<Message>,
    /// The tools it was offered.
    pub tools: Vec<ToolDef>,
}

impl ScriptedModel {
    /// A model that gives these replies, one per request, in order; after the last it fails with
    /// [`ModelError::ScriptExhausted`].
    pub fn new<R: Into<ChatResponse>>(replies: impl IntoIterator<Item = R>) -> Self {
        ScriptedModel {
            inner: std::sync::Arc::new(Inner {
                script: replies.into_iter().map(Into::into).collect(),
                requests: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Every request received so far, in order. Clones share one record.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.lock().last().cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<RecordedRequest>> {
        // A panic elsewhere while the lock was held leaves a usable record; keep going.
        self.inner
            .requests
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Model for ScriptedModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let index = {
            let mut requests = self.lock();
            requests.push(RecordedRequest {
                messages: request.messages.to_vec(),
                tools: request.tools.to_vec(),
            });
            requests.len() - 1
        };
        let reply = self
            .inner
            .script
            .get(index)
            .cloned()
            .ok_or(ModelError::ScriptExhausted {
                request: index + 1,
                scripted: self.inner.script.len(),
            });
        Box::pin(async move { reply })
    }
}
