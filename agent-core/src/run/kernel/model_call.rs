//! The model-call seam: the request a step sends, and how it is sent: as a plain call, streamed
//! (the text passed on as it arrives), or as a step of a durable engine's journal; raced against
//! the run's interruption, observed by the hooks and traced.

use std::future::Future;
use std::pin::Pin;

use futures_util::StreamExt;
use tracing::field::Empty;
use tracing::{Instrument, info_span};

use super::interrupt::Interrupt;
use super::{Ask, Run};
use crate::model::{BoxStream, ChatRequest, ChatResponse, ModelError, StreamEvent};
use crate::output::OutputMode;
use crate::run::events::{EventSender, LiveEvent};
use crate::run::outcome::record_step_model;
use crate::settings::ToolChoice;

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Calls the model for `step` (with the tools on offer, or for a final answer with none),
    /// observed by the hooks and traced; the run's usage counts the reply.
    pub(super) async fn ask_model<C: Future<Output = ()> + Send>(
        &mut self,
        step: usize,
        ask: Ask,
        cancel: &mut Pin<&mut C>,
    ) -> Result<Result<ChatResponse, ModelError>, Interrupt> {
        for hook in &self.agent.hooks {
            hook.on_model_request(self.context, step, &self.messages);
        }
        let span = info_span!(
            "chat",
            "gen_ai.operation.name" = "chat",
            "gen_ai.usage.input_tokens" = Empty,
            "gen_ai.usage.output_tokens" = Empty,
            "gen_ai.response.finish_reasons" = Empty,
            "gen_ai.response.model" = Empty,
        );
        let output = self.output.as_ref();
        let output_tool = output.and_then(|output| output.tool());
        let tools = match (ask, output_tool) {
            (Ask::Next, None) => self.agent.tools.definitions(),
            (Ask::Next, Some(_)) => output
                .and_then(|output| output.offered.as_deref())
                .unwrap_or_default(),
            (Ask::FinalAnswer, None) => &[][..],
            // The last call of a typed run: only the final-answer tool, and it must be called (set
            // on the run's settings, which no later call reads).
            (Ask::FinalAnswer, Some(tool)) => {
                self.settings.tool_choice = Some(ToolChoice::Tool(tool.name.clone()));
                std::slice::from_ref(tool)
            }
        };
        let mut request = ChatRequest::new(&self.messages, tools)
            .with_settings(&self.settings)
            .with_texts(self.agent.tools.texts());
        if let Some(output) = output
            && output.check.mode() == OutputMode::Native
        {
            request = request.with_response_format(&output.check.shape().format);
        }
        let response = match (&self.events, self.journal) {
            (_, Some(journal)) => {
                let reply = journal.model_call(step, Box::pin(self.agent.model.chat(request)));
                raced!(self, reply, cancel, span)?
            }
            (Some(events), None) => {
                let stream = self.agent.model.chat_stream(request);
                raced!(self, streamed_reply(stream, events), cancel, span)?
            }
            (None, None) => raced!(self, self.agent.model.chat(request), cancel, span)?,
        };
        if let Ok(response) = &response {
            if !span.is_disabled() {
                span.record("gen_ai.usage.input_tokens", response.usage.input_tokens);
                span.record("gen_ai.usage.output_tokens", response.usage.output_tokens);
                if let Some(reason) = &response.finish_reason {
                    span.record(
                        "gen_ai.response.finish_reasons",
                        tracing::field::debug(reason),
                    );
                }
                if let Some(model) = &response.model {
                    span.record("gen_ai.response.model", model.as_str());
                }
            }
            self.usage += response.usage;
            self.step_usage.push(response.usage);
            record_step_model(&mut self.step_models, self.step_usage.len(), response);
            self.after_reply(response);
            for hook in &self.agent.hooks {
                hook.on_model_response(self.context, step, response);
            }
        }
        Ok(response)
    }

    /// The settings of the next call, after this reply: a forced tool choice holds once. The
    /// model has called a tool and must now be free to answer; with a final-answer tool, its
    /// answer is a tool call, so one is still asked for.
    fn after_reply(&mut self, response: &ChatResponse) {
        let forced = self
            .settings
            .tool_choice
            .as_ref()
            .is_some_and(ToolChoice::forces_a_call);
        if forced && !response.message.tool_calls.is_empty() {
            let answers_by_tool = self
                .output
                .as_ref()
                .is_some_and(|output| output.tool().is_some());
            self.settings.tool_choice = answers_by_tool.then_some(ToolChoice::Required);
        }
    }
}

/// Reads a streamed reply to its end, passing text on as it arrives; the reply is the one in
/// [`StreamEvent::Finished`]. A stream that ends without it is an error, never a half-built reply.
async fn streamed_reply(
    mut stream: BoxStream<'_, Result<StreamEvent, ModelError>>,
    events: &EventSender,
) -> Result<ChatResponse, ModelError> {
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(text) => events.send(LiveEvent::TextDelta(text)),
            StreamEvent::ReasoningDelta(text) => events.send(LiveEvent::ReasoningDelta(text)),
            StreamEvent::Finished(response) => return Ok(response),
            _ => {}
        }
    }
    Err(ModelError::Stream {
        message: "the stream ended before the reply was finished".to_owned(),
    })
}
