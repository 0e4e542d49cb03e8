//! What lets a model read a tool result its requests carry only as a note (a context policy
//! shortened it): the tool [`RECALL_TOOL`], offered with such a request, and the call policy that
//! answers its calls from the run's transcript, where the result is whole (and in the session's
//! store). The tool is no tool of the agent's: nothing runs, and it is not served elsewhere.

use serde_json::{Value, json};

use crate::message::Message;
use crate::reasons::argument_issue::{ArgumentIssue, Found, IssueKind, JsonType};
use crate::reasons::tool_error::ToolError;
use crate::run::seams::{CallPolicy, PolicyCall, Ruled, Ruling};
use crate::texts::Texts;
use crate::tool::{ToolDef, ToolOutput};

/// The name of the tool a model reads a left-out tool result with, by the id of the call it
/// answers ([`Texts::result_left_out`] tells it how).
pub const RECALL_TOOL: &str = "read_left_out_result";

/// The tool's definition, in the run's words.
pub(crate) fn recall_definition(texts: &dyn Texts) -> ToolDef {
    let [description, parameter] = texts.recall_tool();
    ToolDef::new(
        RECALL_TOOL,
        description,
        json!({
            "type": "object",
            "properties": { "call_id": { "type": "string", "description": parameter } },
            "required": ["call_id"],
            "additionalProperties": false,
        }),
    )
}

/// Answers each call of [`RECALL_TOOL`] with the result it asks for, from the transcript; a call
/// id with no result there is an argument problem that lists the ids that have one.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Recall;

impl<S> CallPolicy<S> for Recall {
    fn rule<'a>(&'a self, call: PolicyCall<'a, S>) -> Option<Ruled<'a>> {
        if call.call.name != RECALL_TOOL {
            return None;
        }
        let results = (call.status.messages.iter()).filter_map(|message| match message {
            Message::Tool(result) => Some(result),
            _ => None,
        });
        let arguments: Value = serde_json::from_str(&call.call.arguments).unwrap_or_default();
        let asked = &arguments["call_id"];
        let answer = match asked.as_str() {
            Some(id) => match results.clone().find(|result| result.tool_call_id == id) {
                Some(result) if result.parts.is_empty() => {
                    Ok(ToolOutput::Text(result.content.clone()))
                }
                Some(result) => {
                    let text = crate::content::Part::text(result.content.clone());
                    Ok(ToolOutput::Parts(
                        std::iter::once(text).chain(result.parts.clone()).collect(),
                    ))
                }
                None => Err(IssueKind::NotOneOf {
                    allowed: results
                        .map(|result| Value::from(result.tool_call_id.as_str()).to_string())
                        .collect(),
                    found: Found::shown(asked),
                }),
            },
            None if asked.is_null() => Err(IssueKind::Missing { field: None }),
            None => Err(IssueKind::WrongType {
                expected: vec![JsonType::String],
                found: Found::shown(asked),
            }),
        };
        let answer = answer.map_err(|kind| ToolError::InvalidArguments {
            issues: vec![ArgumentIssue::new("call_id", kind)],
        });
        Some(Ruling::Answer(answer).into())
    }
}
