//! A typed run's answer check: what it offers the model (a final-answer tool, the provider's
//! structured output, or the schema in the system prompt), how each reply is read as a value of
//! the run's type, and how its final-answer calls are answered.

use std::sync::Arc;

use super::agent::Agent;
use super::seams::{AnswerCheck, Judgement, Offer, ReplyRulings, Ruling};
use crate::message::{AssistantMessage, Message};
use crate::output::{OutputCheck, OutputMode, OutputProblem, RejectedOutput, json_in_text};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::ToolError;
use crate::settings::{ModelSettings, ToolChoice};
use crate::texts::Texts;
use crate::tool::{ToolDef, ToolOutput};

/// A typed run's output in the making.
pub(crate) struct TypedAnswer<'a, S> {
    check: &'a dyn OutputCheck<S>,
    texts: &'a dyn Texts,
    /// The tools offered with the final-answer tool last, in [`OutputMode::Tool`].
    offered: Option<Arc<[ToolDef]>>,
    /// The outputs not taken so far.
    attempts: Vec<RejectedOutput>,
    /// Whether an output was taken.
    taken: bool,
    /// The answer to this step's final-answer calls, when their output was rejected.
    correction: Option<String>,
}

impl<'a, S: Send + Sync + 'static> TypedAnswer<'a, S> {
    /// The answer check of a run of `agent` whose output `check` reads.
    pub(crate) fn new(check: &'a dyn OutputCheck<S>, agent: &'a Agent<S>) -> Self {
        let texts = agent.tools.texts();
        let offered = (check.mode() == OutputMode::Tool).then(|| {
            agent.tools.definitions_with_output(check.key(), |tools| {
                // Last, under a name none of the agent's tools has.
                let mut name = crate::output::OUTPUT_NAME.to_owned();
                while tools.get(&name).is_some() {
                    name.push('_');
                }
                let shape = check.shape();
                let description = texts.output_tool_description(shape.description.as_deref());
                ToolDef::new(name, description, shape.fit.schema().clone())
            })
        });
        TypedAnswer {
            check,
            texts,
            offered,
            attempts: Vec::new(),
            taken: false,
            correction: None,
        }
    }
}

impl<S> TypedAnswer<'_, S> {
    /// The final-answer tool, in [`OutputMode::Tool`].
    fn tool(&self) -> Option<&ToolDef> {
        self.offered.as_ref().and_then(|offered| offered.last())
    }

    fn is_output_call(&self, name: &str) -> bool {
        self.tool().is_some_and(|tool| tool.name == name)
    }

    /// Keeps a rejected output and the correction for the model: a retry, or the end when the
    /// retries are spent (on the last try, the run ends at the step limit instead).
    fn reject(&mut self, raw: String, problem: OutputProblem, last_try: bool) -> Judgement {
        let correction = self.texts.output_correction(&problem);
        self.attempts.push(RejectedOutput { raw, problem });
        self.correction = Some(correction.clone());
        if self.attempts.len() > self.check.retries() && !last_try {
            Judgement::GiveUp
        } else {
            Judgement::Retry(correction)
        }
    }
}

impl<S: Send + Sync> AnswerCheck<S> for TypedAnswer<'_, S> {
    /// A call is asked for in [`OutputMode::Tool`]; the schema goes into the system prompt (once:
    /// a conversation that goes on keeps its first instructions) in [`OutputMode::Prompted`].
    fn prepare(&mut self, messages: &mut Vec<Message>, settings: &mut ModelSettings) {
        match self.check.mode() {
            OutputMode::Tool => {
                // The answer is a tool call, so one is asked for (a particular tool, if the run
                // names one, first).
                if !matches!(settings.tool_choice, Some(ToolChoice::Tool(_))) {
                    settings.tool_choice = Some(ToolChoice::Required);
                }
            }
            OutputMode::Prompted => {
                let schema = serde_json::to_string_pretty(self.check.shape().fit.schema())
                    .unwrap_or_default();
                let instructions = self.texts.output_instructions(&schema);
                match messages.first_mut() {
                    Some(Message::System { content }) if content.ends_with(&instructions) => {}
                    Some(Message::System { content }) => {
                        content.push_str("\n\n");
                        content.push_str(&instructions);
                    }
                    _ => messages.insert(0, Message::system(instructions)),
                }
            }
            OutputMode::Native => {}
        }
    }

    fn offer<'a>(&'a self, offer: &mut Offer<'a>) {
        match (self.offered.as_deref(), self.tool()) {
            // The last try: only the final-answer tool, and it must be called.
            (Some(_), Some(tool)) if offer.last_try => {
                offer.tools = std::slice::from_ref(tool);
                offer.tool_choice = Some(ToolChoice::Tool(tool.name.clone()));
            }
            (Some(offered), _) => {
                offer.tools = offered;
                // A forced tool choice holds once; then a call is still asked for.
                if offer.tool_choice.is_none() {
                    offer.tool_choice = Some(ToolChoice::Required);
                }
            }
            _ if offer.last_try => offer.tools = &[],
            _ => {}
        }
        if self.check.mode() == OutputMode::Native {
            offer.response_format = Some(&self.check.shape().format);
        }
    }

    fn judge(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        cut_off: bool,
        last_try: bool,
    ) -> Judgement {
        self.correction = None;
        let raw = match self.tool() {
            Some(tool) => match reply.tool_calls.iter().find(|call| call.name == tool.name) {
                Some(call) => call.arguments.as_str(),
                None if reply.tool_calls.is_empty() => {
                    let problem = OutputProblem::NotGiven {
                        tool: tool.name.clone(),
                    };
                    return self.reject(reply.content.clone(), problem, last_try);
                }
                None => return Judgement::Continue,
            },
            None if reply.tool_calls.is_empty() => json_in_text(&reply.content),
            None => return Judgement::Continue,
        };
        match self.check.accept(context, raw) {
            Ok(()) => {
                self.taken = true;
                // The run's text: the final-answer call's arguments, or the whole reply.
                let text = match self.tool() {
                    Some(_) => raw.to_owned(),
                    None => reply.content.clone(),
                };
                Judgement::Answer(text)
            }
            // An answer that is not whole JSON at the output token limit was cut, not written
            // wrong: the model is told so.
            Err(OutputProblem::InvalidJson { .. }) if cut_off => {
                let raw = raw.to_owned();
                self.reject(raw, OutputProblem::CutOff, last_try)
            }
            Err(problem) => {
                let raw = raw.to_owned();
                self.reject(raw, problem, last_try)
            }
        }
    }

    /// The rewrite is read as the run's value again, where the model put it: the final-answer
    /// call's arguments, or the reply's text.
    fn rewritten(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        answer: String,
        last_try: bool,
    ) -> Judgement {
        let output_call = match self.tool() {
            Some(tool) => reply
                .tool_calls
                .iter_mut()
                .find(|call| call.name == tool.name),
            None => None,
        };
        match output_call {
            Some(call) => call.arguments = answer,
            None => reply.content = answer,
        }
        self.taken = false;
        self.judge(context, reply, false, last_try)
    }

    /// The value taken is given back, and counted among the rejected outputs.
    fn turned_down(
        &mut self,
        reply: &AssistantMessage,
        problem: OutputProblem,
        _texts: &dyn Texts,
        last_try: bool,
    ) -> Judgement {
        self.taken = false;
        let raw = match self.tool() {
            Some(tool) => (reply.tool_calls.iter())
                .find(|call| call.name == tool.name)
                .map_or_else(String::new, |call| call.arguments.clone()),
            None => reply.content.clone(),
        };
        self.reject(raw, problem, last_try)
    }

    /// The first final-answer call of an answer taken is acknowledged and any other is not run;
    /// a rejected answer's calls get the correction.
    fn rule_calls(
        &self,
        reply: &AssistantMessage,
        judgement: &Judgement,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let mut acknowledged = false;
        for (index, call) in reply.tool_calls.iter().enumerate() {
            if !self.is_output_call(&call.name) {
                continue;
            }
            let ruling = match judgement {
                Judgement::Answer(_) if !acknowledged => {
                    acknowledged = true;
                    let received = self.texts.output_received().to_owned();
                    Ruling::Answer(Ok(ToolOutput::Text(received)))
                }
                Judgement::Answer(_) => Ruling::not_run(NotRun::AnswerGiven),
                _ => Ruling::Answer(Err(ToolError::AnswerRejected {
                    correction: self.correction.clone().unwrap_or_default(),
                })),
            };
            rulings.rule(index, ruling);
        }
    }

    /// A typed run cannot pause: it must end with its output.
    fn can_pause(&self) -> bool {
        false
    }

    fn unanswered(&mut self, _gave_up: bool) -> Option<Vec<RejectedOutput>> {
        (!self.taken).then(|| std::mem::take(&mut self.attempts))
    }
}
