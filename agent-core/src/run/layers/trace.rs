//! The model call's span (OpenTelemetry's GenAI conventions: `chat`, with the tokens, the finish
//! reason and the model that answered), as a model-call layer.

use tracing::field::Empty;
use tracing::{Instrument, info_span};

use crate::model::{ChatResponse, ModelError};
use crate::run::seams::{ModelCall, ModelLayer, Next};
use crate::tool::BoxFuture;

/// Traces each model call in a `chat` span.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatSpan;

impl<S: Sync> ModelLayer<S> for ChatSpan {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, S>,
        next: Next<'a, S>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let span = info_span!(
            "chat",
            "gen_ai.operation.name" = "chat",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "gen_ai.response.finish_reasons" = Empty,
            "gen_ai.response.model" = Empty,
        );
        if span.is_disabled() {
            return next.call(call);
        }
        Box::pin(async move {
            let reply = next.call(call).instrument(span.clone()).await;
            if let Ok(response) = &reply {
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                if let Some(reason) = &response.finish_reason {
                    let reason = tracing::field::debug(reason);
                    span.record("gen_ai.response.finish_reasons", reason);
                }
                if let Some(model) = &response.model {
                    span.record("gen_ai.response.model", model.as_str());
                }
            }
            reply
        })
    }
}
