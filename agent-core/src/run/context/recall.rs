//! What lets a model read a tool result its requests carry only as a note (a context policy
//! shortened it): the tool [`RECALL_TOOL`], offered with such a request, and the call policy that
//! answers its calls from the run's transcript, where the result is whole (and in the session's
//! store). The tool is no tool of the agent's: nothing runs, and it is not served elsewhere.

use serde_json::{Value, json};

use crate::content::Part;
use crate::message::{Message, ToolResultMessage};
use crate::reasons::argument_issue::{ArgumentIssue, Found, IssueKind, JsonType};
use crate::reasons::tool_error::ToolError;
use crate::run::seams::{CallPolicy, PolicyCall, Ruled, Ruling};
use crate::texts::Texts;
use crate::tool::{ToolDef, ToolOutput};

/// The name of the tool a model reads a left-out tool result with, by the id of the call it
/// answers ([`Texts::result_left_out`] tells it how).
pub const RECALL_TOOL: &str = "read_left_out_result";

/// The most characters of a left-out result a model reads back at once, unless the agent's
/// policy says ([`ContextPolicy::recall_page`](super::ContextPolicy::recall_page)): about 2,000
/// tokens.
pub const RECALL_PAGE: usize = 8_000;

/// The tool's definition, in the run's words.
pub(crate) fn recall_definition(texts: &dyn Texts) -> ToolDef {
    let [description, call_id, from] = texts.recall_tool();
    ToolDef::new(
        RECALL_TOOL,
        description,
        json!({
            "type": "object",
            "properties": {
                "call_id": { "type": "string", "description": call_id },
                "from": { "type": "integer", "minimum": 0, "description": from },
            },
            "required": ["call_id"],
            "additionalProperties": false,
        }),
    )
}

/// Answers each call of [`RECALL_TOOL`] with the result it asks for, from the transcript, a page
/// of at most `page` characters at a time (from the character `from`, the start by default),
/// each page but the last ending with the way to the next; a call id with no result there is an
/// argument problem that lists the ids that have one. A page, not the whole, so that what a model
/// reads back fits in the window that left it out: read whole, it would be left out again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recall {
    pub(crate) page: usize,
}

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
        let (asked, from) = (&arguments["call_id"], &arguments["from"]);
        let answer = match (asked.as_str(), from.as_u64()) {
            (_, None) if !from.is_null() => Err(ArgumentIssue::new(
                "from",
                IssueKind::WrongType {
                    expected: vec![JsonType::Integer],
                    found: Found::shown(from),
                },
            )),
            (Some(id), from) => match results.clone().find(|result| result.tool_call_id == id) {
                Some(result) => {
                    let from = usize::try_from(from.unwrap_or(0)).unwrap_or(usize::MAX);
                    Ok(self.page_of(result, from, call.status.texts))
                }
                None => Err(ArgumentIssue::new(
                    "call_id",
                    IssueKind::NotOneOf {
                        allowed: results
                            .map(|result| Value::from(result.tool_call_id.as_str()).to_string())
                            .collect(),
                        found: Found::shown(asked),
                    },
                )),
            },
            (None, _) if asked.is_null() => Err(ArgumentIssue::new(
                "call_id",
                IssueKind::Missing { field: None },
            )),
            (None, _) => Err(ArgumentIssue::new(
                "call_id",
                IssueKind::WrongType {
                    expected: vec![JsonType::String],
                    found: Found::shown(asked),
                },
            )),
        };
        let answer = answer.map_err(|issue| ToolError::InvalidArguments {
            issues: vec![issue],
        });
        Some(Ruling::Answer(answer).into())
    }
}

impl Recall {
    /// The page of `result` from character `from`: its parts go with the first page.
    fn page_of(&self, result: &ToolResultMessage, from: usize, texts: &dyn Texts) -> ToolOutput {
        let total = result.content.chars().count();
        let from = from.min(total);
        let to = total.min(from.saturating_add(self.page.max(1)));
        let mut text: String = result.content.chars().skip(from).take(to - from).collect();
        if from > 0 || to < total {
            text.push_str("\n\n");
            text.push_str(&texts.result_page(from, to, total, &result.tool_call_id, RECALL_TOOL));
        }
        match from == 0 && !result.parts.is_empty() {
            true => ToolOutput::Parts(
                std::iter::once(Part::text(text))
                    .chain(result.parts.clone())
                    .collect(),
            ),
            false => ToolOutput::Text(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texts::{Chinese, English};

    fn text(output: ToolOutput) -> String {
        match output {
            ToolOutput::Text(text) => text,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_long_result_is_read_a_page_at_a_time_each_saying_where_the_next_starts() {
        let result = ToolResultMessage::new("c1", "零一二三四五六七八九abcdefghij");
        let recall = Recall { page: 8 };
        let first = text(recall.page_of(&result, 0, &English));
        assert!(first.starts_with("零一二三四五六七\n\n"), "{first}");
        assert!(
            first.contains("0 to 8 of 20") && first.contains("from 8"),
            "{first}"
        );
        let second = text(recall.page_of(&result, 8, &English));
        assert!(second.starts_with("八九abcdef\n\n"), "{second}");
        let last = text(recall.page_of(&result, 16, &English));
        assert!(
            last.starts_with("ghij\n\n") && last.contains("its end"),
            "{last}"
        );
        // Past the end: an empty page that says so, not a failure.
        let past = text(recall.page_of(&result, 99, &English));
        assert!(past.contains("20 to 20 of 20"), "{past}");
        // A page in the run's language.
        let chinese = text(recall.page_of(&result, 0, &Chinese));
        assert!(chinese.contains("第 0 至 8 个") && !chinese.contains("Characters"));
    }

    #[test]
    fn a_result_that_fits_in_a_page_is_read_whole_with_its_parts() {
        let result = ToolResultMessage::new("c1", "short")
            .with_part(Part::image_url("https://x.test/a.png"));
        let recall = Recall { page: 8 };
        match recall.page_of(&result, 0, &English) {
            ToolOutput::Parts(parts) => {
                assert_eq!(parts[0], Part::text("short"));
                assert_eq!(parts.len(), 2);
            }
            other => panic!("{other:?}"),
        }
    }
}
