//! The model call of a step: the request made from the transcript, the run's settings and what
//! the answer check offers, sent through the model-call layers to the model; the reply's usage
//! counted.

use super::Run;
use super::interrupt::Interrupt;
use crate::model::{ChatRequest, ChatResponse, ModelError};
use crate::run::outcome::record_step_model;
use crate::run::seams::{ModelCall, Next, Offer};
use crate::settings::ToolChoice;

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Calls the model for `step` (`last_try`: the step past the limit, for a final answer),
    /// unless the run is interrupted first.
    pub(super) async fn ask(
        &mut self,
        step: usize,
        last_try: bool,
    ) -> Result<Result<ChatResponse, ModelError>, Interrupt> {
        let mut offer = Offer {
            tools: self.agent.tools.definitions(),
            tool_choice: self.settings.tool_choice.clone(),
            response_format: None,
            last_try,
        };
        self.seams.check.offer(&mut offer);
        let Offer {
            tools,
            tool_choice,
            response_format,
            ..
        } = offer;
        self.settings.tool_choice = tool_choice;
        let mut request = ChatRequest::new(&self.messages, tools)
            .with_settings(&self.settings)
            .with_texts(self.agent.tools.texts());
        request.response_format = response_format;
        let call = ModelCall {
            context: self.context,
            step,
            request,
        };
        let through = Next::new(&self.seams.layers, &*self.seams.model).call(call);
        let response = match self.interruption.race(through).await? {
            Ok(response) => response,
            Err(error) => return Ok(Err(error)),
        };
        self.tally.usage += response.usage;
        self.tally.step_usage.push(response.usage);
        let steps = self.tally.step_usage.len();
        record_step_model(&mut self.tally.step_models, steps, &response);
        // A forced tool choice holds once: the model has called a tool and must now be free to
        // answer (the answer check asks again for what it needs).
        let forced = (self.settings.tool_choice.as_ref()).is_some_and(ToolChoice::forces_a_call);
        if forced && !response.message.tool_calls.is_empty() {
            self.settings.tool_choice = None;
        }
        Ok(Ok(response))
    }
}
