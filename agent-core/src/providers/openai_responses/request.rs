//! The Responses request: the core's history, tools and settings on the wire. The walk over the
//! history is the shared one ([`map_history`]); this file says what differs: input items and
//! content parts, an assistant turn's encrypted reasoning items, a tool result's output holding its
//! parts; the system prompt as `instructions`, tools and structured output in the OpenAI dialect,
//! the reasoning config, `store` and `include`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::response::PROVIDER;
use crate::content::{Media, MediaUrl, Part, Source};
use crate::message::{AssistantMessage, Message, ToolResultMessage};
use crate::model::{ChatRequest, ModelError};
use crate::providers::common::{Common, openai_parameters};
use crate::providers::dialect;
use crate::providers::mapping::{
    At, ChoiceWords, Content, HistoryWire, ResultParts, map_history, system_text,
};
use crate::providers::openai::least_effort;
use crate::providers::schemas::SchemaJson;
use crate::reasoning::Reasoning;
use crate::settings::{Effort, ResponseFormat, Thinking, ToolChoice};
use crate::texts::Texts;
use crate::tool::ToolDef;

/// What of the adapter's configuration shapes the request body.
#[derive(Clone, Copy)]
pub(super) struct Options {
    /// Tools in strict mode where it can say their schema.
    pub(super) strict_tools: bool,
    /// `store`, and so no reasoning sent back.
    pub(super) store: bool,
    /// Whether to ask for the encrypted form of the reasoning.
    pub(super) encrypted_reasoning: bool,
}

/// The request body for this conversation, as it goes on the wire; `stream` asks for a
/// streamed reply. Refuses what the API cannot take (audio) before anything is sent.
pub(super) fn request_body<'a>(
    common: &'a Common,
    options: Options,
    request: ChatRequest<'a>,
    stream: bool,
) -> Result<WireRequest<'a>, ModelError> {
    Ok(WireRequest {
        model: &common.model,
        // An agent without a system prompt still has an (empty) system message.
        instructions: system_text(request.messages).filter(|text| !text.trim().is_empty()),
        input: wire_input(request.messages, request.texts, !options.store)?,
        tools: request
            .tools
            .iter()
            .map(|tool| wire_tool(common, options.strict_tools, tool))
            .collect(),
        tool_choice: request.tool_choice().map(wire_tool_choice),
        text: request.response_format.map(wire_text),
        max_output_tokens: common.max_tokens(&request),
        temperature: common.temperature(&request),
        reasoning: request
            .settings
            .thinking
            .map(|thinking| wire_reasoning(&common.model, thinking)),
        store: options.store,
        include: if options.encrypted_reasoning {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        prompt_cache_key: request.cache_key(),
        stream,
    })
}

fn wire_tool<'a>(common: &Common, strict_tools: bool, tool: &'a ToolDef) -> WireTool<'a> {
    // The same forms as Chat Completions'.
    let (parameters, strict) = openai_parameters(&common.schemas, tool, strict_tools);
    WireTool {
        kind: "function",
        name: &tool.name,
        description: &tool.description,
        strict,
        parameters,
    }
}

/// The history as Responses input items. System messages are not among them: they go in
/// `instructions`. With `send_reasoning`, each assistant turn's reasoning from this API goes
/// before it.
fn wire_input<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
    send_reasoning: bool,
) -> Result<Vec<WireInput<'a>>, ModelError> {
    let mut input = Input {
        items: Vec::with_capacity(messages.len()),
        send_reasoning,
    };
    map_history(&mut input, messages, texts)?;
    Ok(input.items)
}

/// Responses input items, as [`map_history`] hands it the history.
struct Input<'a> {
    items: Vec<WireInput<'a>>,
    /// Whether this API's reasoning goes back.
    send_reasoning: bool,
}

impl<'a> HistoryWire<'a> for Input<'a> {
    type Part = WirePart<'a>;
    /// A tool result's `output` is "a string or a list of `input_text`, `input_image` and
    /// `input_file`" (the `input` item "Function tool call output",
    /// <https://platform.openai.com/docs/api-reference/responses/create>), so a tool's images
    /// reach the model with its result rather than in a message after it.
    const RESULT_PARTS: ResultParts = ResultParts::Inside;
    const EMPTY_TEXT_PARTS: bool = true;

    fn text(text: Cow<'a, str>) -> WirePart<'a> {
        WirePart::Text { text }
    }

    fn part(part: &'a Part) -> Result<WirePart<'a>, ModelError> {
        wire_part(part)
    }

    fn user(&mut self, content: Content<'a, WirePart<'a>>) {
        self.items.push(WireInput::Message {
            role: "user",
            content,
        });
    }

    fn assistant(&mut self, reply: &'a AssistantMessage, _: &At<'a>) {
        assistant_items(reply, self.send_reasoning, &mut self.items);
    }

    // The wire format has no error flag: the text says it (the dispatcher's error texts do).
    fn tool_result(
        &mut self,
        result: &'a ToolResultMessage,
        output: Content<'a, WirePart<'a>>,
        _: &At<'a>,
    ) {
        self.items
            .push(WireInput::Item(WireItem::FunctionCallOutput {
                call_id: &result.tool_call_id,
                output,
            }));
    }
}

/// An assistant turn: its reasoning items, its text as an assistant message, then one
/// `function_call` item per call.
fn assistant_items<'a>(
    reply: &'a AssistantMessage,
    send_reasoning: bool,
    input: &mut Vec<WireInput<'a>>,
) {
    let follows = !reply.content.is_empty() || !reply.tool_calls.is_empty();
    // A reasoning item with nothing after it is refused ("provided without its required
    // following item").
    if send_reasoning && follows {
        input.extend(
            reasoning_items(&reply.reasoning)
                .into_iter()
                .map(|item| WireInput::Item(WireItem::Reasoning(item))),
        );
    }
    if !reply.content.is_empty() {
        input.push(WireInput::Message {
            role: "assistant",
            content: Content::Text(&reply.content),
        });
    }
    for call in &reply.tool_calls {
        input.push(WireInput::Item(WireItem::FunctionCall {
            call_id: &call.id,
            name: &call.name,
            arguments: &call.arguments,
        }));
    }
}

/// The reasoning items of a reply that this API wrote, as it handed them out: consecutive pieces
/// with the same id are one item, and each piece's text one of its summary parts. Pieces from
/// other providers, and items without an id or an encrypted form, are left out: the API would
/// look those up among the responses it kept, and it keeps none (`store: false`).
fn reasoning_items(reasoning: &[Reasoning]) -> Vec<WireReasoning<'_>> {
    let mut items: Vec<WireReasoning<'_>> = Vec::new();
    for piece in reasoning.iter().filter(|piece| piece.is_from(PROVIDER)) {
        let Some(id) = piece.id.as_deref() else {
            continue;
        };
        if items.last().is_none_or(|last| last.id != id) {
            items.push(WireReasoning {
                id,
                summary: Vec::new(),
                encrypted_content: None,
            });
        }
        let Some(item) = items.last_mut() else {
            continue;
        };
        if !piece.text.is_empty() {
            item.summary.push(WireSummary {
                kind: "summary_text",
                text: &piece.text,
            });
        }
        if item.encrypted_content.is_none() {
            item.encrypted_content = piece.encrypted.as_deref();
        }
    }
    items.retain(|item| item.encrypted_content.is_some());
    items
}

/// One content part: images and documents by bytes (a `data:` URL) or by URL; audio is refused
/// before a request is sent.
fn wire_part(part: &Part) -> Result<WirePart<'_>, ModelError> {
    Ok(match part {
        Part::Text { text } => WirePart::Text {
            text: text.as_str().into(),
        },
        Part::Image(media) => WirePart::Image {
            image_url: media.as_url(),
            detail: "auto",
        },
        Part::Document(media) => match &media.source {
            Source::Base64(_) => WirePart::File {
                filename: Some(file_name(media)),
                file_data: Some(media.as_url()),
                file_url: None,
            },
            Source::Url(url) => WirePart::File {
                filename: media.name.as_deref().map(Cow::Borrowed),
                file_data: None,
                file_url: Some(url),
            },
        },
        Part::Audio(_) => {
            return Err(ModelError::Unsupported {
                message: "the OpenAI Responses API cannot take audio parts; transcribe the \
                          audio first, or send it through OpenAi (Chat Completions) to an \
                          audio model"
                    .to_owned(),
            });
        }
    })
}

/// A document's file name: its own, else one whose extension says its type (the API reads the
/// type of `file_data` from the name).
fn file_name(media: &Media) -> Cow<'_, str> {
    if let Some(name) = &media.name {
        return Cow::Borrowed(name);
    }
    Cow::Borrowed(match media.media_type.as_str() {
        "application/pdf" => "document.pdf",
        "text/plain" => "document.txt",
        "text/markdown" => "document.md",
        "text/csv" => "document.csv",
        "application/json" => "document.json",
        _ => "document",
    })
}

/// `reasoning`: the effort, with a readable summary; off is the least the model family takes
/// (`none`, `minimal` or `low`).
fn wire_reasoning(model: &str, thinking: Thinking) -> WireReasoningConfig {
    WireReasoningConfig {
        effort: thinking
            .effort()
            .map_or_else(|| least_effort(model), Effort::as_str),
        summary: "auto",
    }
}

/// `tool_choice`: a word, or the function that must be called.
fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    const WORDS: ChoiceWords = ChoiceWords {
        auto: "auto",
        required: "required",
        none: "none",
        tool: "function",
    };
    match WORDS.say(choice) {
        (mode, None) => WireToolChoice::Mode(mode),
        (kind, Some(name)) => WireToolChoice::Function { kind, name },
    }
}

/// `text.format` of type `json_schema`: strict (Structured Outputs) when the schema can be said
/// in the strict dialect, as tools are.
fn wire_text(format: &ResponseFormat) -> WireText<'_> {
    let strict = dialect::openai_strict(&format.schema);
    WireText {
        format: WireFormat {
            kind: "json_schema",
            name: &format.name,
            description: format.description.as_deref(),
            strict: strict.is_some(),
            schema: strict.unwrap_or_else(|| dialect::openai(&format.schema)),
        },
    }
}

/// A Responses request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions: Option<String>,
    input: Vec<WireInput<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<WireText<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<WireReasoningConfig>,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// One input item: a message in the short form (`role` and `content`), or a typed item.
#[derive(Serialize)]
#[serde(untagged)]
enum WireInput<'a> {
    Message {
        role: &'static str,
        content: Content<'a, WirePart<'a>>,
    },
    Item(WireItem<'a>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireItem<'a> {
    Reasoning(WireReasoning<'a>),
    FunctionCall {
        call_id: &'a str,
        name: &'a str,
        arguments: &'a str,
    },
    FunctionCallOutput {
        call_id: &'a str,
        output: Content<'a, WirePart<'a>>,
    },
}

#[derive(Serialize)]
struct WireReasoning<'a> {
    id: &'a str,
    summary: Vec<WireSummary<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    encrypted_content: Option<&'a str>,
}

#[derive(Serialize)]
struct WireSummary<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

/// Input content: `input_text`, `input_image`, `input_file`.
#[derive(Serialize)]
#[serde(tag = "type")]
enum WirePart<'a> {
    #[serde(rename = "input_text")]
    Text { text: Cow<'a, str> },
    #[serde(rename = "input_image")]
    Image {
        image_url: MediaUrl<'a>,
        detail: &'static str,
    },
    #[serde(rename = "input_file")]
    File {
        #[serde(skip_serializing_if = "Option::is_none")]
        filename: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        file_data: Option<MediaUrl<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        file_url: Option<&'a str>,
    },
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    description: &'a str,
    parameters: SchemaJson,
    strict: bool,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        name: &'a str,
    },
}

#[derive(Serialize)]
struct WireText<'a> {
    format: WireFormat<'a>,
}

#[derive(Serialize)]
struct WireFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    schema: Value,
    strict: bool,
}

#[derive(Serialize)]
struct WireReasoningConfig {
    effort: &'static str,
    summary: &'static str,
}

#[cfg(test)]
mod tests {
    use super::super::response::parse_response;
    use super::*;

    #[test]
    fn reasoning_goes_back_as_the_reply_gave_it() {
        let reply = br#"{"status":"completed","output":[
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Rain?"},{"type":"summary_text","text":"Check."}],"encrypted_content":"gAAA"},
            {"type":"message","content":[{"type":"output_text","text":"Let me check."}]}]}"#;
        let reply = parse_response(reply).unwrap();
        // One item, two summary parts, the encrypted form once.
        let items = reasoning_items(&reply.message.reasoning);
        assert_eq!(
            serde_json::to_value(WireItem::Reasoning(items.into_iter().next().unwrap())).unwrap(),
            serde_json::json!({"type": "reasoning", "id": "rs_1", "summary": [
                {"type": "summary_text", "text": "Rain?"}, {"type": "summary_text", "text": "Check."}
            ], "encrypted_content": "gAAA"})
        );
    }
}
