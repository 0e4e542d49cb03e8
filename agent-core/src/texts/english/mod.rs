//! The English texts (the default): the table in `mod.rs`, the words for every reason in
//! `reasons` (which are also the reasons' `Display`).

mod reasons;

pub(crate) use reasons::{issue_words, syntax_words};

use super::*;

/// English texts (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct English;

/// [`English`]'s lead-in of an error result.
const ENGLISH_LEAD_IN: &str = "Error: ";

/// `lead_in`, then `error`'s English words, in one allocation with room for a typical error up
/// front (`format!` guesses from its literal pieces only, and grew the text twice).
fn english_words(error: &ToolError, lead_in: &str) -> String {
    let mut text = String::with_capacity(lead_in.len() + 120);
    text.push_str(lead_in);
    // Writing into a `String` cannot fail.
    let _ = reasons::tool_error(error, &mut text);
    text
}

impl Texts for English {
    fn system_prompt(&self) -> &str {
        "You are a helpful assistant that can use tools. When a tool returns an error, read the error \
         and adjust your next call. If you cannot complete the task, say so honestly. Never make up \
         results."
    }

    // `ToolError`'s `Display` is these words.
    fn tool_error_message(&self, error: &ToolError) -> String {
        english_words(error, "")
    }

    fn tool_error_lead_in(&self, error: &ToolError) -> &str {
        match error {
            // A correction is the agent's own words, not a failure to report.
            ToolError::AnswerRejected { .. } => "",
            _ => ENGLISH_LEAD_IN,
        }
    }

    // The same words as the default, written into one allocation.
    fn tool_error(&self, error: &ToolError) -> String {
        english_words(error, self.tool_error_lead_in(error))
    }

    fn tool_done(&self) -> &str {
        "Done."
    }

    fn truncated(&self, shown: usize, total: usize) -> String {
        format!("\n[result truncated: showing the first {shown} of {total} characters]")
    }

    fn step_limit_reached(&self, steps: usize) -> String {
        format!("Stopped after {steps} steps without finishing; try narrowing the question.")
    }

    fn not_run(&self, why: &NotRun) -> String {
        why.to_string()
    }

    fn run_stopped(&self) -> &str {
        "Stopped before finishing."
    }

    fn run_paused(&self) -> &str {
        "Waiting for a decision before going on."
    }

    fn output_tool_description(&self, description: Option<&str>) -> String {
        match description {
            Some(description) => format!(
                "Give your final answer with this tool, once you have everything it needs: {description}"
            ),
            None => "Give your final answer with this tool, once you have everything it needs."
                .to_owned(),
        }
    }

    fn output_correction(&self, problem: &OutputProblem) -> String {
        format!("{problem}. Please try again.")
    }

    fn output_received(&self) -> &str {
        "Final answer received."
    }

    fn output_instructions(&self, schema: &str) -> String {
        format!(
            "Your final answer must be only a JSON value that matches this JSON schema, with no \
             other text:\n{schema}"
        )
    }

    fn content_note(&self, note: ContentNote<'_>) -> String {
        match note {
            ContentNote::Image { media_type } => format!("[image: {media_type}]"),
            ContentNote::Document { media_type } => format!("[document: {media_type}]"),
            ContentNote::Audio { media_type } => format!("[audio: {media_type}]"),
            ContentNote::TextResource { uri } => format!("[resource {uri}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: Some(media_type),
            } => format!("[resource {uri}: {media_type}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: None,
            } => format!("[resource {uri}: binary data]"),
            ContentNote::UnknownResource => "[resource]".to_owned(),
            ContentNote::ResourceLink { name, uri } => format!("[resource link {name}: {uri}]"),
            ContentNote::UnknownContent => {
                "[content of a kind this client does not know]".to_owned()
            }
        }
    }

    fn returned_parts(&self, call: ReturnedBy<'_>) -> String {
        match call {
            ReturnedBy::CallId(id) => format!("The tool call {id} returned these:"),
            ReturnedBy::Tool(name) => format!("The {name} call returned these:"),
        }
    }

    fn part_not_shown(&self, part: &Part) -> String {
        let media_type = part.media().map_or("", |media| media.media_type.as_str());
        format!(
            "[{} ({media_type}) not shown: the model service cannot take it]",
            part.kind()
        )
    }

    fn handed_off(&self, agent: &str) -> String {
        format!("The conversation is now with {agent}.")
    }

    fn context_summary(&self, summary: &str) -> String {
        format!("[A summary of the earlier conversation, left out here to save room]\n{summary}")
    }

    fn summary_request(&self, previous: Option<&str>, transcript: &str) -> String {
        let previous = previous.map_or(String::new(), |previous| {
            format!("The summary of what came before them:\n{previous}\n\n")
        });
        format!(
            "Summarize the conversation below for the assistant that goes on with it: what the \
             user wants, what was decided and done (the tools called and what they returned that \
             still matters), and what is still open. Keep names, numbers and ids exactly. Reply \
             with the summary alone, in the language of the conversation.\n\n{previous}\
             The turns, as JSON messages:\n{transcript}"
        )
    }

    fn result_left_out(&self, characters: usize, call_id: &str, tool: &str) -> String {
        format!(
            "[This result ({characters} characters) is left out here to save room; to read it, \
             call `{tool}` with the call id \"{call_id}\".]"
        )
    }

    fn recall_tool(&self) -> [&'static str; 3] {
        [
            "Reads a tool result that is left out of the conversation to save room, by the id \
             of the call it answers; a long result is read a page at a time.",
            "The id of the call whose result to read.",
            "The character to read from: 0, the start, when left out; a page says where the next \
             one starts.",
        ]
    }

    fn result_page(
        &self,
        from: usize,
        to: usize,
        total: usize,
        call_id: &str,
        tool: &str,
    ) -> String {
        match to < total {
            true => format!(
                "[Characters {from} to {to} of {total} of this result; to read on, call `{tool}` \
                 with the call id \"{call_id}\" and from {to}.]"
            ),
            false => format!("[Characters {from} to {to} of {total} of this result: its end.]"),
        }
    }

    fn chat_title_prompt(&self, question: &str, answer: &str) -> String {
        format!(
            "Write a title of at most six words for a chat that begins with the exchange below, \
             in the language of the question. Reply with the title alone.\n\n\
             Question:\n{question}\n\nAnswer:\n{answer}"
        )
    }

    fn judge_request(&self, what: JudgeSubject<'_>) -> String {
        let subject = match what {
            JudgeSubject::Input(text) => format!("input:\n\n{text}"),
            JudgeSubject::Request(text) => format!("request:\n\n{text}"),
            JudgeSubject::Call { tool, arguments } => {
                format!("call:\n\na call of the tool `{tool}` with {arguments}")
            }
            JudgeSubject::Result { tool, content } => {
                format!("result:\n\nthe result of the tool `{tool}`:\n{content}")
            }
            JudgeSubject::Answer(text) => format!("answer:\n\n{text}"),
        };
        format!(
            "Check this {subject}\n\nAnswer with `allow`, whether it may go on, and `reason`, \
             why, in a sentence."
        )
    }

    fn agent_input(&self) -> &str {
        "The request, in full: the agent sees nothing of this conversation but this text."
    }

    fn handoff_summary(&self) -> &str {
        "What the next agent needs to know of the conversation so far: who the user is, what \
         they asked, what was found and done."
    }
}
