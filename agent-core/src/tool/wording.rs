//! How a tool set words what a call came to for the model ([`Wording`]): its texts, how an error
//! reads, and the most a result may hold. The set makes every result with it
//! ([`ToolSet::result_message`](crate::ToolSet::result_message)), and a run's guards word a
//! result they withhold with the same value.

use crate::content::Part;
use crate::message::{ToolCall, ToolResultMessage};
use crate::reasons::tool_error::ToolError;
use crate::texts::{English, Texts};
use crate::tool::ToolOutput;
use crate::tool::dispatcher::{DEFAULT_RESULT_LIMIT, ErrorStyle};

/// A tool set's wording of results: its texts, its error style and its result limit.
#[derive(Clone, Copy)]
pub(crate) struct Wording<'t> {
    pub(crate) texts: &'t dyn Texts,
    pub(crate) error_style: ErrorStyle,
    /// The most characters a result's text may hold; the rest is cut, with the texts' marker.
    pub(crate) result_limit: usize,
}

impl Default for Wording<'_> {
    /// English, errors after their lead-in, the default result limit.
    fn default() -> Self {
        Wording {
            texts: &English,
            error_style: ErrorStyle::default(),
            result_limit: DEFAULT_RESULT_LIMIT,
        }
    }
}

impl Wording<'_> {
    /// What the model reads for `call` and `outcome` (see
    /// [`ToolSet::result_message`](crate::ToolSet::result_message)).
    #[inline]
    pub(crate) fn result_message(
        &self,
        call: &ToolCall,
        outcome: Result<ToolOutput, ToolError>,
    ) -> ToolResultMessage {
        let mut parts = Vec::new();
        let (content, is_error) = match outcome {
            Ok(ToolOutput::Text(text) | ToolOutput::Json(text)) => (text, false),
            Ok(ToolOutput::Done) => (self.texts.tool_done().to_owned(), false),
            Ok(ToolOutput::Parts(mut all)) => {
                let text = match all.first_mut() {
                    Some(Part::Text { text }) => {
                        let text = std::mem::take(text);
                        all.remove(0);
                        text
                    }
                    _ => String::new(),
                };
                parts = all;
                (text, false)
            }
            Err(error) => match self.error_style {
                ErrorStyle::LeadIn => (self.texts.tool_error(&error), true),
                ErrorStyle::Bare => (self.texts.tool_error_message(&error), true),
            },
        };
        // Each text is cut to the limit; images and documents are the provider's to refuse.
        for part in &mut parts {
            if let Part::Text { text } = part {
                *text = self.cut_to_limit(std::mem::take(text));
            }
        }
        ToolResultMessage {
            tool_call_id: call.id.clone(),
            content: self.cut_to_limit(content),
            parts,
            is_error,
        }
    }

    /// `text` cut to the result limit, with the texts' marker: what the model is shown of
    /// anything a call produced.
    pub(crate) fn cut_to_limit(&self, text: String) -> String {
        // A string of at most `limit` bytes has at most `limit` characters: the common case
        // costs a comparison here, not a call.
        if text.len() <= self.result_limit {
            return text;
        }
        truncate(text, self.result_limit, self.texts)
    }
}

/// Cuts `text` to `limit` characters (never inside a character) and appends the texts' marker.
pub(crate) fn truncate(mut text: String, limit: usize, texts: &dyn Texts) -> String {
    let Some((cut, _)) = text.char_indices().nth(limit) else {
        return text;
    };
    let total = limit + text[cut..].chars().count();
    text.truncate(cut);
    text.push_str(&texts.truncated(limit, total));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str, result_limit: usize, texts: &dyn Texts) -> String {
        let wording = Wording {
            texts,
            result_limit,
            ..Wording::default()
        };
        wording.cut_to_limit(text.to_owned())
    }

    #[test]
    fn a_long_result_is_cut_at_a_character() {
        assert_eq!(cut("短文本", 3, &English), "短文本");
        assert_eq!(
            cut("北京今天小雨🌧️", 4, &English),
            "北京今天\n[result truncated: showing the first 4 of 8 characters]"
        );
        assert_eq!(
            cut("ab🌧cd", 3, &crate::Chinese),
            "ab🌧\n（结果过长，已截断）"
        );
    }
}
