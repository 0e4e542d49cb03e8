//! The answer-check seam: what a typed run (one that wants a value of a type) offers the model,
//! how each reply is judged, and how its final-answer calls are answered.

use std::sync::Arc;

use super::Run;
use super::policy::Ruling;
use crate::message::{AssistantMessage, Message, ToolCall};
use crate::output::{OutputCheck, OutputMode, OutputProblem, RejectedOutput, json_in_text};
use crate::run::agent::Agent;
use crate::settings::{ModelSettings, ToolChoice};
use crate::texts::NotRun;
use crate::tool::{ToolDef, ToolOutput};
use crate::tool_error::ToolError;

/// A typed run's output in the making.
pub(super) struct Output<'a, S> {
    pub(super) check: &'a dyn OutputCheck<S>,
    /// The tools offered with the final-answer tool last, in [`OutputMode::Tool`].
    pub(super) offered: Option<Arc<[ToolDef]>>,
    /// The outputs not taken so far.
    pub(super) attempts: Vec<RejectedOutput>,
    /// Whether an output was taken.
    pub(super) taken: bool,
    /// This step's answer to calls of the final-answer tool, when their output was rejected.
    pub(super) correction: Option<String>,
}

impl<'a, S> Output<'a, S> {
    /// Sets a typed run up: the final-answer tool on offer and a tool call asked for, or the
    /// schema in the system prompt, as the mode wants.
    pub(super) fn new(
        check: &'a dyn OutputCheck<S>,
        agent: &Agent<S>,
        settings: &mut ModelSettings,
        messages: &mut Vec<Message>,
    ) -> Self
    where
        S: Send + Sync + 'static,
    {
        let texts = agent.tools.texts();
        let shape = check.shape();
        let mut offered = None;
        match check.mode() {
            OutputMode::Tool => {
                offered = Some(agent.tools.definitions_with_output(check.key(), |tools| {
                    // Last, under a name none of the agent's tools has.
                    let mut name = crate::output::OUTPUT_NAME.to_owned();
                    while tools.get(&name).is_some() {
                        name.push('_');
                    }
                    let description = texts.output_tool_description(shape.description.as_deref());
                    ToolDef::new(name, description, shape.fit.schema().clone())
                }));
                // The answer is a tool call, so one is asked for (a particular tool, if the run
                // names one, first).
                if !matches!(settings.tool_choice, Some(ToolChoice::Tool(_))) {
                    settings.tool_choice = Some(ToolChoice::Required);
                }
            }
            OutputMode::Prompted => {
                let schema = serde_json::to_string_pretty(shape.fit.schema()).unwrap_or_default();
                let instructions = texts.output_instructions(&schema);
                match messages.first_mut() {
                    // Once: a conversation that goes on keeps its first instructions.
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
        Output {
            check,
            offered,
            attempts: Vec::new(),
            taken: false,
            correction: None,
        }
    }

    /// The final-answer tool, in [`OutputMode::Tool`].
    pub(super) fn tool(&self) -> Option<&ToolDef> {
        self.offered.as_ref().and_then(|offered| offered.last())
    }

    pub(super) fn is_output_call(&self, call: &ToolCall) -> bool {
        self.tool().is_some_and(|tool| tool.name == call.name)
    }
}

/// What became of a reply in a typed run.
pub(super) enum Verdict {
    /// The reply holds no output: the loop goes on as in any run.
    NoOutput,
    /// The output was taken (its JSON text); the run is over.
    Taken { text: String },
    /// The output was rejected, and the model was told why.
    Rejected,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Reads a typed run's output from a reply, if it holds one, and keeps the verdict: the value
    /// in the check, or the rejected output with the correction for the model. `cut_off`: the
    /// reply stopped at the output-token limit, so an answer that is not whole JSON was cut, not
    /// written wrong, and the model is told so.
    #[inline]
    pub(super) fn judge_output(&mut self, reply: &AssistantMessage, cut_off: bool) -> Verdict {
        if self.output.is_none() {
            return Verdict::NoOutput;
        }
        self.judge_typed(reply, cut_off)
    }

    /// `judge_output` for a typed run.
    fn judge_typed(&mut self, reply: &AssistantMessage, cut_off: bool) -> Verdict {
        let Some(output) = &mut self.output else {
            return Verdict::NoOutput;
        };
        let raw = match output.tool() {
            Some(tool) => match reply.tool_calls.iter().find(|call| call.name == tool.name) {
                Some(call) => call.arguments.as_str(),
                None if reply.tool_calls.is_empty() => {
                    let problem = OutputProblem::NotGiven {
                        tool: tool.name.clone(),
                    };
                    return self.reject(reply.content.clone(), problem);
                }
                None => return Verdict::NoOutput,
            },
            None if reply.tool_calls.is_empty() => json_in_text(&reply.content),
            None => return Verdict::NoOutput,
        };
        match output.check.accept(self.context, raw) {
            Ok(()) => {
                output.taken = true;
                // The run's text: the final-answer call's arguments, or the whole reply.
                let text = match output.tool() {
                    Some(_) => raw.to_owned(),
                    None => reply.content.clone(),
                };
                Verdict::Taken { text }
            }
            Err(OutputProblem::InvalidJson { .. }) if cut_off => {
                let raw = raw.to_owned();
                self.reject(raw, OutputProblem::CutOff)
            }
            Err(problem) => {
                let raw = raw.to_owned();
                self.reject(raw, problem)
            }
        }
    }

    fn reject(&mut self, raw: String, problem: OutputProblem) -> Verdict {
        // Cut where the model reads it, as a tool result is: a hostile output's problems must
        // not flood the conversation.
        let correction = self.agent.tools.texts().output_correction(&problem);
        if let Some(output) = &mut self.output {
            output.attempts.push(RejectedOutput { raw, problem });
            output.correction = Some(correction);
        }
        Verdict::Rejected
    }

    pub(super) fn is_output_call(&self, call: &ToolCall) -> bool {
        self.output
            .as_ref()
            .is_some_and(|output| output.is_output_call(call))
    }

    pub(super) fn output_retries_spent(&self) -> bool {
        self.output
            .as_ref()
            .is_some_and(|output| output.attempts.len() > output.check.retries())
    }

    pub(super) fn take_correction(&mut self) -> String {
        self.output
            .as_mut()
            .and_then(|output| output.correction.take())
            .unwrap_or_default()
    }

    /// The ruling on a final-answer call: the first of an answer taken is acknowledged and any
    /// other is not run; a rejected answer's calls get the correction.
    pub(super) fn answer_ruling(&self, verdict: &Verdict, acknowledged: &mut bool) -> Ruling {
        match verdict {
            Verdict::Taken { .. } if !*acknowledged => {
                *acknowledged = true;
                let received = self.agent.tools.texts().output_received().to_owned();
                Ruling::Answer(Ok(ToolOutput::Text(received)))
            }
            Verdict::Taken { .. } => self.refuse(NotRun::AnswerGiven),
            Verdict::NoOutput | Verdict::Rejected => {
                let correction = self
                    .output
                    .as_ref()
                    .and_then(|output| output.correction.clone())
                    .unwrap_or_default();
                Ruling::Answer(Err(ToolError::AnswerRejected { correction }))
            }
        }
    }
}
