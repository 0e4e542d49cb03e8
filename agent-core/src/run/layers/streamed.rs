//! A streamed run's model: the agent's model read as a stream, its text and reasoning passed on
//! to the run's events as they arrive, the reply the one the stream ends with.

use futures_util::StreamExt;

use crate::model::{ChatRequest, ChatResponse, Model, ModelError, StreamEvent};
use crate::run::events::{EventSender, LiveEvent};
use crate::tool::BoxFuture;

/// The model of a streamed run: the innermost end of its model-call layers.
pub(crate) struct Streamed<'m> {
    pub(crate) model: &'m dyn Model,
    pub(crate) events: &'m EventSender,
}

impl Model for Streamed<'_> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let mut stream = self.model.chat_stream(request);
        Box::pin(async move {
            while let Some(event) = stream.next().await {
                match event? {
                    StreamEvent::TextDelta(text) => self.events.send(LiveEvent::TextDelta(text)),
                    StreamEvent::ReasoningDelta(text) => {
                        self.events.send(LiveEvent::ReasoningDelta(text));
                    }
                    StreamEvent::Finished(response) => return Ok(response),
                    _ => {}
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
