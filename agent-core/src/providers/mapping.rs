//! The one mapping of the core's history, tools and settings onto a vendor's request, where the
//! vendors agree. Each vendor's `request.rs` implements [`HistoryWire`] for what differs (its
//! content parts, the shape of its turns) and builds its body around what [`map_history`] made.
//!
//! What every vendor gets from here:
//!
//! - **System messages**: left to a field of their own ([`system_text`], the default), or turns of
//!   the history where the vendor says so ([`HistoryWire::system`]).
//! - **A user message**: its text alone when it has no parts; else its text (unless empty) and
//!   each part as the vendor takes it ([`HistoryWire::part`]). A part the vendor cannot take fails
//!   the request with [`ModelError::Unsupported`] before anything is sent: it is the user's to fix.
//! - **A tool result**: its text and parts the same way ([`ResultParts::Inside`]), or, where the
//!   vendor's tool result takes text or JSON only, its text, and its parts in a user turn after the
//!   step's results, introduced by a line that names who returned them ([`ResultParts::After`]). A
//!   part the vendor cannot take is named in a text instead of refused ([`Texts::part_not_shown`]):
//!   the tool's output is not the user's to fix, and the model learns what it was not shown.
//! - **Empty text parts**: sent, or left out where the vendor refuses them
//!   ([`HistoryWire::EMPTY_TEXT_PARTS`]).
//! - **Turns of one role in a row**: merged into one ([`push_turn`]), for the vendors that want
//!   the roles to alternate.
//! - **Tools**: each tool's parameters in the vendor's dialect, made once and kept ([`parameters`]);
//!   the tool choice in the vendor's words ([`ChoiceWords`]). The sampling settings (temperature,
//!   the reply cap) are [`Common`](super::common::Common)'s.
//!
//! What stays with each vendor: an assistant turn (its reasoning, text and calls are where the
//! wire formats differ most), the wire types, the settings only it has (thinking, structured
//! output), and the body around the history.

use std::borrow::Cow;

use base64::Engine as _;
use serde::Serialize;
use serde_json::value::RawValue;

use super::schemas::{Dialect, KeptSchemas, SchemaJson};
use crate::content::Part;
use crate::message::{AssistantMessage, Message, ToolResultMessage};
use crate::model::ModelError;
use crate::settings::ToolChoice;
use crate::texts::{ReturnedBy, Texts};
use crate::tool::ToolDef;

/// What a vendor's wire format makes of each piece of the history; [`map_history`] walks the
/// history and calls it. The `'a` is the history's: wire pieces borrow from it.
pub(super) trait HistoryWire<'a> {
    /// A content part: of a user message, of a tool result, or after the step's tool results.
    type Part;

    /// Where a tool result's parts go.
    const RESULT_PARTS: ResultParts;

    /// Whether a text part that is empty is sent (some vendors refuse empty text).
    const EMPTY_TEXT_PARTS: bool;

    /// A text part.
    fn text(text: Cow<'a, str>) -> Self::Part;

    /// A part as the vendor takes it, or [`ModelError::Unsupported`] saying why it cannot.
    fn part(part: &'a Part) -> Result<Self::Part, ModelError>;

    /// A system message, for a vendor that takes the system prompt among the turns. Left out by
    /// default: the vendor sends [`system_text`] in a field of its own.
    fn system(&mut self, content: &'a str) {
        let _ = content;
    }

    /// A user message: its text alone, or its text and parts.
    fn user(&mut self, content: Content<'a, Self::Part>);

    /// An assistant turn.
    fn assistant(&mut self, reply: &'a AssistantMessage, at: &At<'a>);

    /// A tool result, and its `output`: its text and parts ([`ResultParts::Inside`]), or its text
    /// ([`ResultParts::After`], where the parts go after the step's results).
    fn tool_result(
        &mut self,
        result: &'a ToolResultMessage,
        output: Content<'a, Self::Part>,
        at: &At<'a>,
    );

    /// With [`ResultParts::After`]: whether a result's part goes after the results (all of them by
    /// default); the rest are the vendor's to send with the result.
    fn goes_after(part: &Part) -> bool {
        let _ = part;
        true
    }

    /// With [`ResultParts::After`]: who returned a result's parts, as the line before them names
    /// it; by default the call, by its id.
    fn returned_by(result: &'a ToolResultMessage, at: &At<'a>) -> ReturnedBy<'a> {
        let _ = at;
        ReturnedBy::CallId(&result.tool_call_id)
    }

    /// With [`ResultParts::After`]: the parts of a step's tool results, each result's introduced,
    /// once its results are in (before the next other message, or at the end). A vendor with
    /// `After` sends them here; the default, for `Inside`, is never called.
    fn after_results(&mut self, parts: Vec<Self::Part>) {
        let _ = parts;
    }
}

/// Where a tool result's parts go.
#[derive(Clone, Copy)]
pub(super) enum ResultParts {
    /// In the result, after its text: the vendor's tool result takes content parts (Anthropic's
    /// `tool_result` blocks, the Responses API's `function_call_output`).
    Inside,
    /// After the step's results, in a user turn: the vendor's tool result takes text (Chat
    /// Completions) or JSON (Gemini) only. Each result's parts ([`HistoryWire::goes_after`]) are
    /// introduced by a line naming who returned them ([`HistoryWire::returned_by`]), and handed
    /// to [`HistoryWire::after_results`].
    After,
}

/// Walks the history, handing each piece to `wire`; `texts` words what the request itself says
/// (the line before a tool result's parts, a part not shown). Fails on a user's part the vendor
/// cannot take.
pub(super) fn map_history<'a, W: HistoryWire<'a>>(
    wire: &mut W,
    messages: &'a [Message],
    texts: &dyn Texts,
) -> Result<(), ModelError> {
    let last_user = messages
        .iter()
        .rposition(|message| matches!(message, Message::User { .. }));
    // The parts of the tool results since the last other message, which follow those results.
    let mut after: Vec<W::Part> = Vec::new();
    for (index, message) in messages.iter().enumerate() {
        if !after.is_empty() && !matches!(message, Message::Tool(_)) {
            wire.after_results(std::mem::take(&mut after));
        }
        let at = At {
            messages,
            index,
            last_user,
        };
        match message {
            Message::System { content } => wire.system(content),
            Message::User { content, parts } => {
                let content = content_of::<W>(content, parts, None)?;
                wire.user(content);
            }
            Message::Assistant(reply) => wire.assistant(reply, &at),
            Message::Tool(result) => {
                let output = match W::RESULT_PARTS {
                    ResultParts::Inside => {
                        content_of::<W>(&result.content, &result.parts, Some(texts))?
                    }
                    ResultParts::After => {
                        parts_after::<W>(result, &at, texts, &mut after)?;
                        Content::Text(&result.content)
                    }
                };
                wire.tool_result(result, output, &at);
            }
        }
    }
    if !after.is_empty() {
        wire.after_results(after);
    }
    Ok(())
}

/// A text and the parts after it: the text alone when there are none, else the text (unless
/// empty) and each part. In a tool result (`in_tool_result`, with the request's texts), a part the
/// vendor cannot take is named in a text instead of refused.
fn content_of<'a, W: HistoryWire<'a>>(
    text: &'a str,
    parts: &'a [Part],
    in_tool_result: Option<&dyn Texts>,
) -> Result<Content<'a, W::Part>, ModelError> {
    if parts.is_empty() {
        return Ok(Content::Text(text));
    }
    let mut wire = Vec::with_capacity(parts.len() + 1);
    if !text.is_empty() {
        wire.push(W::text(Cow::Borrowed(text)));
    }
    for part in parts
        .iter()
        .filter(|part| W::EMPTY_TEXT_PARTS || !is_empty_text(part))
    {
        wire.push(match in_tool_result {
            Some(texts) => tool_result_part(part, texts, W::part, |text| W::text(text.into()))?,
            None => W::part(part)?,
        });
    }
    Ok(Content::Parts(wire))
}

/// A tool result's parts that go after the step's results, introduced by a line naming who
/// returned them, added to `after`.
fn parts_after<'a, W: HistoryWire<'a>>(
    result: &'a ToolResultMessage,
    at: &At<'a>,
    texts: &dyn Texts,
    after: &mut Vec<W::Part>,
) -> Result<(), ModelError> {
    let mut going = result
        .parts
        .iter()
        .filter(|part| W::goes_after(part))
        .peekable();
    if going.peek().is_none() {
        return Ok(());
    }
    let returned_by = W::returned_by(result, at);
    after.push(W::text(texts.returned_parts(returned_by).into()));
    for part in going.filter(|part| W::EMPTY_TEXT_PARTS || !is_empty_text(part)) {
        after.push(tool_result_part(part, texts, W::part, |text| {
            W::text(text.into())
        })?);
    }
    Ok(())
}

fn is_empty_text(part: &Part) -> bool {
    matches!(part, Part::Text { text } if text.is_empty())
}

/// Where a piece of the history is: what the vendor may ask of the messages around it.
pub(super) struct At<'a> {
    messages: &'a [Message],
    index: usize,
    last_user: Option<usize>,
}

impl<'a> At<'a> {
    /// Whether no user message comes after this one: it is part of the turn in progress.
    pub(super) fn since_last_user(&self) -> bool {
        self.last_user.is_none_or(|user| self.index > user)
    }

    /// The name of the tool the call with this id called: the latest such call before here.
    pub(super) fn call_name(&self, id: &str) -> Option<&'a str> {
        self.messages[..self.index]
            .iter()
            .rev()
            .filter_map(|message| match message {
                Message::Assistant(reply) => Some(reply),
                _ => None,
            })
            .find_map(|reply| reply.tool_calls.iter().rev().find(|call| call.id == id))
            .map(|call| call.name.as_str())
    }
}

/// A user message's content or a tool result's: its text alone, or its text and parts. It
/// serializes as the wire formats that take either have it: a string, or an array of parts.
#[derive(Serialize)]
#[serde(untagged)]
pub(super) enum Content<'a, P> {
    Text(&'a str),
    Parts(Vec<P>),
}

impl<'a, P> Content<'a, P> {
    /// The content as parts, its text alone as one (`text` makes it): for the wire formats whose
    /// content is always a list.
    pub(super) fn into_parts(self, text: impl FnOnce(&'a str) -> P) -> Vec<P> {
        match self {
            Content::Text(content) => vec![text(content)],
            Content::Parts(parts) => parts,
        }
    }
}

/// A turn of one role, for the wire formats whose turns alternate (Anthropic, Gemini).
pub(super) trait RoleTurn<P>: Sized {
    /// A turn of `role` holding `parts`.
    fn new(role: &'static str, parts: Vec<P>) -> Self;
    /// Its role.
    fn role(&self) -> &'static str;
    /// Its parts.
    fn parts(&mut self) -> &mut Vec<P>;
}

/// Adds parts to the conversation: to the last turn when it has the same role, else as a turn of
/// their own; no parts, no turn.
pub(super) fn push_turn<T: RoleTurn<P>, P>(turns: &mut Vec<T>, role: &'static str, parts: Vec<P>) {
    if parts.is_empty() {
        return;
    }
    match turns.last_mut() {
        Some(last) if last.role() == role => last.parts().extend(parts),
        _ => turns.push(T::new(role, parts)),
    }
}

/// The system messages of a history, joined: for the vendors that take them apart from the turns.
pub(super) fn system_text(messages: &[Message]) -> Option<String> {
    let parts: Vec<&str> = messages
        .iter()
        .filter_map(|message| match message {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n\n"))
}

/// A tool result's part as its vendor takes it, or, where it cannot (`convert` says
/// [`ModelError::Unsupported`]), a text naming it in the request's language
/// ([`Texts::part_not_shown`]). The tool's output is not the user's to fix, so the run goes on and
/// the model knows what it was not shown; the adapter's reason, which is for the developer, is
/// logged. A user message's part is refused instead.
fn tool_result_part<'a, W>(
    part: &'a Part,
    texts: &dyn Texts,
    convert: impl FnOnce(&'a Part) -> Result<W, ModelError>,
    text: impl FnOnce(String) -> W,
) -> Result<W, ModelError> {
    match convert(part) {
        Err(ModelError::Unsupported { message }) => {
            tracing::warn!(reason = %message, "a tool result's part is not shown to the model");
            Ok(text(texts.part_not_shown(part)))
        }
        converted => converted,
    }
}

/// A tool call's arguments as the JSON object the vendors that take arguments as an object want,
/// borrowed from the history as the model wrote them. Arguments that are not an object (the model
/// wrote invalid JSON; an empty text) go as `{}`: the error result that follows in the history
/// already says what went wrong.
pub(super) fn object_or_empty(arguments: &str) -> &RawValue {
    match serde_json::from_str::<&RawValue>(arguments) {
        Ok(raw) if raw.get().starts_with('{') => raw,
        _ => empty_object(),
    }
}

/// `{}`, as a raw JSON value.
fn empty_object() -> &'static RawValue {
    match serde_json::from_str("{}") {
        Ok(empty) => empty,
        Err(_) => unreachable!("`{{}}` is JSON"),
    }
}

/// A `text/plain` document's bytes (base64, as the history keeps them) as the text they are, for
/// the vendors that take plain text as text; `None` when they are not base64 of UTF-8.
pub(super) fn document_text(data: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .ok()?;
    String::from_utf8(bytes).ok()
}

/// A tool's parameters in the vendor's `dialect`, made the first time a request offers the tool
/// and kept by the adapter; `null` for a schema the dialect cannot say.
pub(super) fn parameters(schemas: &KeptSchemas, tool: &ToolDef, dialect: Dialect) -> SchemaJson {
    schemas.form(tool, dialect).unwrap_or_else(SchemaJson::null)
}

/// A vendor's words for the tool choices. Every vendor has the same four (the model chooses, it
/// must call some tool, it may call none, it must call the tool named); they differ in the words
/// and in where the name goes.
pub(super) struct ChoiceWords {
    pub(super) auto: &'static str,
    pub(super) required: &'static str,
    pub(super) none: &'static str,
    /// The word for a choice of one tool, which comes with its name.
    pub(super) tool: &'static str,
}

impl ChoiceWords {
    /// `choice` in these words, and the name of the tool it names.
    pub(super) fn say<'a>(&self, choice: &'a ToolChoice) -> (&'static str, Option<&'a str>) {
        match choice {
            ToolChoice::Auto => (self.auto, None),
            ToolChoice::Required => (self.required, None),
            ToolChoice::None => (self.none, None),
            ToolChoice::Tool(name) => (self.tool, Some(name)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;
    use crate::texts::English;

    /// A wire that writes down what the walk hands it; `AFTER` chooses where results' parts go.
    #[derive(Default)]
    struct Record<const AFTER: bool>(Vec<String>);

    fn said(content: Content<'_, String>) -> String {
        match content {
            Content::Text(text) => format!("{text:?}"),
            Content::Parts(parts) => format!("{parts:?}"),
        }
    }

    impl<'a, const AFTER: bool> HistoryWire<'a> for Record<AFTER> {
        type Part = String;
        const RESULT_PARTS: ResultParts = if AFTER {
            ResultParts::After
        } else {
            ResultParts::Inside
        };
        const EMPTY_TEXT_PARTS: bool = false;

        fn text(text: Cow<'a, str>) -> String {
            format!("text {text}")
        }

        fn part(part: &'a Part) -> Result<String, ModelError> {
            match part {
                Part::Text { text } => Ok(format!("text {text}")),
                Part::Image(_) => Ok("image".to_owned()),
                _ => Err(ModelError::Unsupported {
                    message: "no".to_owned(),
                }),
            }
        }

        fn system(&mut self, content: &'a str) {
            self.0.push(format!("system {content}"));
        }

        fn user(&mut self, content: Content<'a, String>) {
            self.0.push(format!("user {}", said(content)));
        }

        fn assistant(&mut self, reply: &'a AssistantMessage, at: &At<'a>) {
            let recent = at.since_last_user();
            self.0.push(format!("assistant {} {recent}", reply.content));
        }

        fn tool_result(
            &mut self,
            result: &'a ToolResultMessage,
            output: Content<'a, String>,
            at: &At<'a>,
        ) {
            let name = at.call_name(&result.tool_call_id);
            self.0.push(format!("result {name:?} {}", said(output)));
        }

        fn goes_after(part: &Part) -> bool {
            part.media().is_some()
        }

        fn after_results(&mut self, parts: Vec<String>) {
            self.0.push(format!("after {parts:?}"));
        }
    }

    fn history() -> Vec<Message> {
        let png = Part::image("image/png", b"png");
        let wav = Part::audio("audio/wav", b"wav");
        vec![
            Message::system("be brief"),
            Message::user("look")
                .with_part(png.clone())
                .with_part(Part::text(""))
                .with_part(Part::text("here")),
            Message::Assistant(AssistantMessage::tool_calls([
                ToolCall::new("c1", "snap", "{}"),
                ToolCall::new("c2", "hear", "{}"),
            ])),
            Message::Tool(
                ToolResultMessage::new("c1", "done")
                    .with_part(png)
                    .with_part(Part::text("caption")),
            ),
            Message::Tool(ToolResultMessage::new("c2", "heard").with_part(wav)),
            Message::Tool(ToolResultMessage::new("c3", "plain")),
            Message::user("thanks"),
            Message::Assistant(AssistantMessage::text("welcome")),
        ]
    }

    fn walked<const AFTER: bool>(messages: &[Message]) -> Vec<String> {
        let mut wire = Record::<AFTER>::default();
        map_history(&mut wire, messages, &English).unwrap();
        wire.0
    }

    #[test]
    fn the_parts_of_results_go_in_them_or_after_the_step() {
        let messages = history();
        let not_shown = English.part_not_shown(&Part::audio("audio/wav", b"wav"));
        let introduced = |name| English.returned_parts(ReturnedBy::CallId(name));
        let user = r#"user ["text look", "image", "text here"]"#;
        assert_eq!(
            walked::<false>(&messages),
            [
                "system be brief".to_owned(),
                user.to_owned(),
                "assistant  false".to_owned(),
                r#"result Some("snap") ["text done", "image", "text caption"]"#.to_owned(),
                format!(r#"result Some("hear") ["text heard", "text {not_shown}"]"#),
                r#"result None "plain""#.to_owned(),
                r#"user "thanks""#.to_owned(),
                "assistant welcome true".to_owned(),
            ]
        );
        assert_eq!(
            walked::<true>(&messages),
            [
                "system be brief".to_owned(),
                user.to_owned(),
                "assistant  false".to_owned(),
                r#"result Some("snap") "done""#.to_owned(),
                r#"result Some("hear") "heard""#.to_owned(),
                r#"result None "plain""#.to_owned(),
                format!(
                    "after {:?}",
                    [
                        format!("text {}", introduced("c1")),
                        "image".to_owned(),
                        format!("text {}", introduced("c2")),
                        format!("text {not_shown}"),
                    ]
                ),
                r#"user "thanks""#.to_owned(),
                "assistant welcome true".to_owned(),
            ]
        );
    }

    #[test]
    fn a_users_part_the_vendor_cannot_take_is_refused() {
        let messages = [Message::user("hear").with_part(Part::audio("audio/wav", b"wav"))];
        let mut wire = Record::<true>::default();
        assert!(matches!(
            map_history(&mut wire, &messages, &English),
            Err(ModelError::Unsupported { message }) if message == "no"
        ));
    }

    #[test]
    fn turns_of_one_role_in_a_row_are_one() {
        struct Turn(&'static str, Vec<u8>);
        impl RoleTurn<u8> for Turn {
            fn new(role: &'static str, parts: Vec<u8>) -> Self {
                Turn(role, parts)
            }
            fn role(&self) -> &'static str {
                self.0
            }
            fn parts(&mut self) -> &mut Vec<u8> {
                &mut self.1
            }
        }
        let mut turns: Vec<Turn> = Vec::new();
        push_turn(&mut turns, "user", vec![1]);
        push_turn(&mut turns, "user", vec![2, 3]);
        push_turn(&mut turns, "model", Vec::new());
        push_turn(&mut turns, "model", vec![4]);
        push_turn(&mut turns, "user", vec![5]);
        let turns: Vec<_> = turns.into_iter().map(|turn| (turn.0, turn.1)).collect();
        assert_eq!(
            turns,
            [
                ("user", vec![1, 2, 3]),
                ("model", vec![4]),
                ("user", vec![5])
            ]
        );
    }

    #[test]
    fn choices_in_a_vendors_words() {
        const WORDS: ChoiceWords = ChoiceWords {
            auto: "a",
            required: "r",
            none: "n",
            tool: "t",
        };
        let named = ToolChoice::Tool("look".to_owned());
        assert_eq!(WORDS.say(&ToolChoice::Auto), ("a", None));
        assert_eq!(WORDS.say(&ToolChoice::Required), ("r", None));
        assert_eq!(WORDS.say(&ToolChoice::None), ("n", None));
        assert_eq!(WORDS.say(&named), ("t", Some("look")));
    }
}
