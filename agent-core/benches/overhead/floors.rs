//! The floors the run's figures are measured against: the least a loop must do to come to the
//! same transcript (a model asked, its calls answered by parsing their arguments and serializing
//! their results with serde), written by hand.

use agent_core::{RunOutput, ToolCall};
use divan::black_box;
use futures_util::FutureExt;

use super::WeatherArgs;
use super::common::weather_in;

/// The loop of `floor_structured`.
pub mod structured {
    use agent_core::{
        ChatRequest, ChatResponse, Message, Model, ModelError, RunOutput, StopReason, ToolDef,
        Usage,
    };
    use futures_util::FutureExt;

    /// A run of `floor_loop`'s work in progress.
    struct Run<'a, M> {
        model: &'a M,
        definitions: &'a [ToolDef],
        messages: Vec<Message>,
        usage: Usage,
        step_usage: Vec<Usage>,
    }

    /// Runs to the end, kept out of line so that profiles show it whole.
    #[inline(never)]
    pub fn run(model: &impl Model, system_prompt: &str, definitions: &[ToolDef]) -> RunOutput {
        let mut messages = Vec::with_capacity(6);
        messages.push(Message::system(system_prompt));
        messages.push(Message::user(divan::black_box("Umbrella?")));
        let run = Run {
            model,
            definitions,
            messages,
            usage: Usage::default(),
            step_usage: Vec::with_capacity(4),
        };
        run.go().now_or_never().expect("ready")
    }

    impl<M: Model> Run<'_, M> {
        async fn go(mut self) -> RunOutput {
            loop {
                if let Some(text) = self.step().await {
                    return RunOutput {
                        text,
                        messages: self.messages,
                        steps: self.step_usage.len(),
                        stop_reason: StopReason::Finished,
                        usage: self.usage,
                        step_usage: self.step_usage,
                        // The scripted model names no model: a run keeps no list.
                        step_models: Vec::new(),
                        paused: None,
                        summaries: Vec::new(),
                        agent: Default::default(),
                        step_agents: Vec::new(),
                        children: Vec::new(),
                    };
                }
            }
        }

        /// One step: the answer, or `None` when the model called tools and the run goes on.
        async fn step(&mut self) -> Option<String> {
            let reply = self.ask_model().await.expect("answers").message;
            if reply.tool_calls.is_empty() {
                let text = reply.content.clone();
                self.messages.push(Message::Assistant(reply));
                return Some(text);
            }
            let results: Vec<_> = reply
                .tool_calls
                .iter()
                .map(|call| super::floor_call(call, self.definitions))
                .collect();
            self.messages.push(Message::Assistant(reply));
            self.messages.extend(results.into_iter().map(Message::Tool));
            None
        }

        async fn ask_model(&mut self) -> Result<ChatResponse, ModelError> {
            let request = ChatRequest::new(&self.messages, self.definitions);
            let response = self.model.chat(request).await?;
            self.usage += response.usage;
            self.step_usage.push(response.usage);
            Ok(response)
        }
    }
}

/// Checks, before timing, that a floor comes to what the run it stands for came to (`output`): the
/// same answer and transcript.
pub fn same_transcript(output: RunOutput, (text, messages): (String, Vec<agent_core::Message>)) {
    assert_eq!(text, output.text);
    assert_eq!(messages, output.messages);
}

/// The loop of `floor_loop_10_steps`, kept out of line so that profiles show it whole. Its
/// transcript starts with the run's room for six messages: a floor makes the same allocations.
#[inline(never)]
pub fn floor_loop(
    model: &impl agent_core::Model,
    system_prompt: &str,
    definitions: &[agent_core::ToolDef],
) -> (String, Vec<agent_core::Message>) {
    use agent_core::{ChatRequest, Message};

    let mut messages = Vec::with_capacity(6);
    messages.push(Message::system(system_prompt));
    messages.push(Message::user(black_box("Umbrella?")));
    loop {
        let reply = model
            .chat(ChatRequest::new(&messages, definitions))
            .now_or_never()
            .expect("ready")
            .expect("answers")
            .message;
        if reply.tool_calls.is_empty() {
            let text = reply.content.clone();
            messages.push(Message::Assistant(reply));
            return (text, messages);
        }
        let results: Vec<_> = reply
            .tool_calls
            .iter()
            .map(|call| floor_call(call, definitions))
            .collect();
        messages.push(Message::Assistant(reply));
        messages.extend(results.into_iter().map(Message::Tool));
    }
}

/// A call as the floors answer it: the tool found by name, its arguments parsed and its result
/// serialized as in `floor_serde`; a name no tool has gets the text a run gives the model (the
/// name, then the tools there are), written into one `String`.
pub fn floor_call(
    call: &ToolCall,
    definitions: &[agent_core::ToolDef],
) -> agent_core::ToolResultMessage {
    use agent_core::ToolResultMessage;

    if definitions.iter().any(|tool| tool.name == call.name) {
        let args: WeatherArgs = serde_json::from_str(&call.arguments).expect("valid");
        let content = serde_json::to_string(&weather_in(args.city)).expect("serializable");
        return ToolResultMessage::new(call.id.as_str(), content);
    }
    let mut content = String::with_capacity(120);
    content.push_str("Error: there is no tool named `");
    content.push_str(&call.name);
    content.push_str("`; available tools: ");
    for (index, tool) in definitions.iter().enumerate() {
        if index > 0 {
            content.push_str(", ");
        }
        content.push_str(&tool.name);
    }
    ToolResultMessage::error(call.id.as_str(), content)
}
