//! A streamed run's model: the agent's model read as a stream, its text and reasoning passed on
//! to the run's events as they arrive, the reply the one the stream ends with.

use std::sync::Arc;

use futures_util::StreamExt;

use crate::model::{ChatRequest, ChatResponse, Model, ModelError, StreamEvent};
use crate::run::events::{EventSender, LiveEvent};
use crate::run::guard::GuardRun;
use crate::tool::BoxFuture;

/// The model of a streamed run: the innermost end of its model-call layers. A run with guards
/// passes the stream through them (what waits for them, see `guard::gate`).
pub(crate) struct Streamed<'m> {
    pub(crate) model: &'m dyn Model,
    pub(crate) events: &'m EventSender,
    pub(crate) guards: Option<Arc<GuardRun<'m>>>,
}

impl Streamed<'_> {
    /// Passes `event` on; `false`: a guard stopped the stream.
    async fn pass(&self, event: LiveEvent) -> bool {
        match &self.guards {
            Some(guards) => guards.stream(event).await,
            None => {
                self.events.send(event);
                true
            }
        }
    }
}

impl Model for Streamed<'_> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let mut stream = self.model.chat_stream(request);
        Box::pin(async move {
            while let Some(event) = stream.next().await {
                let passed = match event? {
                    StreamEvent::TextDelta(text) => self.pass(LiveEvent::TextDelta(text)).await,
                    StreamEvent::ReasoningDelta(text) => {
                        self.pass(LiveEvent::ReasoningDelta(text)).await
                    }
                    StreamEvent::Finished(response) => return Ok(response),
                    _ => true,
                };
                // A guard tripped: the run is interrupted, and the stream goes no further.
                if !passed {
                    return std::future::pending().await;
                }
            }
            // A stream that ends without its reply is an error, never a half-built reply.
            Err(ModelError::Stream {
                message: "the stream ended before the reply was finished".to_owned(),
            })
        })
    }

    fn model_id(&self) -> Option<&str> {
        self.model.model_id()
    }
}
