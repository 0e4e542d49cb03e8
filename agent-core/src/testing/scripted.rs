//! A model that replays a script.

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::message::{AssistantMessage, Message};
use crate::model::{ChatRequest, ChatResponse, Model, ModelError};
use crate::settings::{ModelSettings, ResponseFormat};
use crate::tool::{BoxFuture, ToolDef};

/// A model that replays a script of replies (and errors, see [`ScriptStep`]) and records every
/// request it receives.
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
///
/// Clones share one script and one record, so a test can keep a clone to inspect, or to
/// [`push`](Self::push) more of the script while an agent holds the other.
#[derive(Clone)]
pub struct ScriptedModel {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    script: Vec<ScriptStep>,
    requests: Vec<RecordedRequest>,
}

/// A request a [`ScriptedModel`] received.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordedRequest {
    /// The history it was sent.
    pub messages: Vec<Message>,
    /// The tools it was offered.
    pub tools: Vec<ToolDef>,
    /// Its settings: tool choice, temperature, the longest reply.
    #[serde(skip_serializing_if = "ModelSettings::is_empty")]
    pub settings: ModelSettings,
    /// The schema the answer was asked to follow, in a typed run's native mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
}

/// One entry of a [`ScriptedModel`]'s script: a reply, or an error the model fails with.
///
/// ```
/// use agent_core::testing::{ScriptStep, ScriptedModel};
/// use agent_core::{AssistantMessage, ModelError};
///
/// let model = ScriptedModel::from_steps([
///     ScriptStep::error(|| ModelError::Server { status: 500, message: "try again".into() }),
///     ScriptStep::reply(AssistantMessage::text("Hello.")),
/// ]);
/// ```
#[derive(Clone)]
pub struct ScriptStep(Step);

#[derive(Clone)]
enum Step {
    Reply(ChatResponse),
    Fail(Arc<dyn Fn() -> ModelError + Send + Sync>),
}

impl ScriptStep {
    /// A step that answers with this reply.
    pub fn reply(reply: impl Into<ChatResponse>) -> Self {
        ScriptStep(Step::Reply(reply.into()))
    }

    /// A step that fails with the error `make` gives ([`ModelError`] is not `Clone`, so the step
    /// holds how to make it). A conformance [`Failure`](super::conformance::Failure) converts
    /// into a step too.
    pub fn error(make: impl Fn() -> ModelError + Send + Sync + 'static) -> Self {
        ScriptStep(Step::Fail(Arc::new(make)))
    }

    fn answer(&self) -> Result<ChatResponse, ModelError> {
        match &self.0 {
            Step::Reply(reply) => Ok(reply.clone()),
            Step::Fail(make) => Err(make()),
        }
    }
}

impl From<ChatResponse> for ScriptStep {
    fn from(reply: ChatResponse) -> Self {
        ScriptStep::reply(reply)
    }
}

impl From<AssistantMessage> for ScriptStep {
    fn from(reply: AssistantMessage) -> Self {
        ScriptStep::reply(reply)
    }
}

impl fmt::Debug for ScriptStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Step::Reply(reply) => f.debug_tuple("Reply").field(reply).finish(),
            Step::Fail(make) => f.debug_tuple("Error").field(&make()).finish(),
        }
    }
}

/// How a [`ScriptedModel`] fails once asked for more replies than its script holds. It reaches the
/// caller inside [`ModelError::Other`]; [`ModelError::downcast_ref`] gets it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the scripted model has run out: it was asked for reply {request} but was given only {scripted}"
)]
pub struct ScriptExhausted {
    /// Which request this was, counting from 1.
    pub request: usize,
    /// How many steps the script held.
    pub scripted: usize,
}

impl ScriptedModel {
    /// A model that gives these replies, one per request, in order; after the last it fails with
    /// [`ScriptExhausted`].
    pub fn new<R: Into<ChatResponse>>(replies: impl IntoIterator<Item = R>) -> Self {
        ScriptedModel::from_steps(replies.into_iter().map(ScriptStep::reply))
    }

    /// A model that takes these steps, replies and errors, one per request, in order; after the
    /// last it fails with [`ScriptExhausted`].
    pub fn from_steps(steps: impl IntoIterator<Item = ScriptStep>) -> Self {
        ScriptedModel {
            inner: Arc::new(Mutex::new(Inner {
                script: steps.into_iter().collect(),
                requests: Vec::new(),
            })),
        }
    }

    /// Adds a step at the end of the script (for every clone).
    pub fn push(&self, step: impl Into<ScriptStep>) {
        self.lock().script.push(step.into());
    }

    /// Every request received so far, in order. Clones share one record.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.lock().requests.clone()
    }

    /// The last request received.
    pub fn last_request(&self) -> Option<RecordedRequest> {
        self.lock().requests.last().cloned()
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while the lock was held leaves a usable record; keep going.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for ScriptedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.lock();
        f.debug_struct("ScriptedModel")
            .field("script", &inner.script)
            .field("requests", &inner.requests)
            .finish()
    }
}

impl Model for ScriptedModel {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = {
            let mut inner = self.lock();
            inner.requests.push(RecordedRequest {
                messages: request.messages.to_vec(),
                tools: request.tools.to_vec(),
                settings: request.settings.clone(),
                response_format: request.response_format.cloned(),
            });
            let index = inner.requests.len() - 1;
            match inner.script.get(index) {
                Some(step) => step.answer(),
                None => Err(ModelError::other(ScriptExhausted {
                    request: index + 1,
                    scripted: inner.script.len(),
                })),
            }
        };
        Box::pin(async move { reply })
    }
}
