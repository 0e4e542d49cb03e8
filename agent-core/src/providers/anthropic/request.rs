//! The Anthropic Messages request: the core's history, tools and settings on the wire. The walk
//! over the history is the shared one ([`map_history`]); this file says what differs: content
//! blocks and the media the API takes, an assistant turn's thinking blocks first, a tool result as
//! a `tool_result` block holding its parts, turns merged by role; and the settings only this API
//! has (thinking and its limits, structured output).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::response::PROVIDER;
use crate::content::{Media, Part, Source};
use crate::message::{AssistantMessage, Message, ToolResultMessage};
use crate::model::{ChatRequest, ModelError};
use crate::providers::common::Common;
use crate::providers::dialect;
use crate::providers::mapping::{
    At, ChoiceWords, Content, HistoryWire, ResultParts, RoleTurn, document_text, map_history,
    object_or_empty, parameters, push_turn, system_text,
};
use crate::providers::schemas::{Dialect, SchemaJson};
use crate::settings::{Thinking, ToolChoice};
use crate::texts::Texts;

/// The reply cap when none is set: the Messages API requires one.
const DEFAULT_MAX_TOKENS: u32 = 4096;

/// The smallest thinking budget the API takes.
const MIN_THINKING_BUDGET: u32 = 1024;

/// The request body for this conversation, as it goes on the wire; `stream` asks for a
/// streamed reply.
pub(super) fn request_body<'a>(
    common: &'a Common,
    request: ChatRequest<'a>,
    stream: bool,
) -> Result<WireRequest<'a>, ModelError> {
    let output_config = match request.response_format {
        Some(format) => Some(WireOutputConfig {
            format: WireOutputFormat {
                kind: "json_schema",
                schema: dialect::anthropic_output(&format.schema).ok_or_else(|| {
                    ModelError::Unsupported {
                        message: "Anthropic's structured outputs cannot express this output \
                                  type's schema (it holds a map or a free-form object); ask \
                                  for it with OutputMode::Tool instead"
                            .to_owned(),
                    }
                })?,
            },
        }),
        None => None,
    };
    let max_tokens = common.max_tokens(&request).unwrap_or(DEFAULT_MAX_TOKENS);
    let temperature = common.temperature(&request);
    let tool_choice = request.tool_choice();
    let (thinking, max_tokens) = match request.settings.thinking {
        None => (None, max_tokens),
        Some(Thinking::Off) => (Some(WireThinking::Disabled), max_tokens),
        Some(thinking) => {
            refuse_with_thinking(tool_choice, temperature)?;
            let budget = thinking
                .budget_tokens()
                .unwrap_or(MIN_THINKING_BUDGET)
                .max(MIN_THINKING_BUDGET);
            // The budget is part of `max_tokens`, which must exceed it.
            let max_tokens = if max_tokens > budget {
                max_tokens
            } else {
                budget.saturating_add(max_tokens)
            };
            (
                Some(WireThinking::Enabled {
                    budget_tokens: budget,
                }),
                max_tokens,
            )
        }
    };
    let (messages, landed) = wire_messages(request.messages, request.texts)?;
    let mut wire = WireRequest {
        model: &common.model,
        max_tokens,
        system: system_text(request.messages).map(WireSystem::Text),
        messages,
        tools: request
            .tools
            .iter()
            .map(|tool| WireTool {
                name: &tool.name,
                description: &tool.description,
                input_schema: parameters(&common.schemas, tool, Dialect::Anthropic),
                cache_control: None,
            })
            .collect(),
        tool_choice: tool_choice.map(wire_tool_choice),
        output_config,
        thinking,
        temperature,
        stream,
    };
    if let Some(cache) = &request.settings.prompt_cache {
        place_breakpoints(&mut wire, &cache.pins, request.messages, &landed);
    }
    Ok(wire)
}

/// The most `cache_control` breakpoints a request may have.
const MAX_BREAKPOINTS: usize = 4;

/// Places the prompt cache's breakpoints, at most [`MAX_BREAKPOINTS`]: the user's `pins` (indices
/// into `history`, each the wire message it landed in, by `landed`) first, then the last tool
/// definition, the system text, and the last message (the moving tail), while room is left.
fn place_breakpoints(
    wire: &mut WireRequest<'_>,
    pins: &[usize],
    history: &[Message],
    landed: &[usize],
) {
    let mut placed = 0;
    for &pin in pins {
        if placed == MAX_BREAKPOINTS {
            return;
        }
        let Some(message) = history.get(pin) else {
            continue;
        };
        let marked = if matches!(message, Message::System { .. }) {
            wire.cache_system()
        } else {
            // The wire message of the last message that is not a system one, up to the pin.
            let turns = history[..=pin]
                .iter()
                .filter(|message| !matches!(message, Message::System { .. }))
                .count();
            let Some(&index) = landed.get(turns - 1) else {
                continue;
            };
            wire.messages
                .get_mut(index)
                .is_some_and(|message| !std::mem::replace(&mut message.cached, true))
        };
        placed += usize::from(marked);
    }
    if placed < MAX_BREAKPOINTS
        && let Some(tool) = wire.tools.last_mut()
        && tool.cache_control.is_none()
    {
        tool.cache_control = Some(EPHEMERAL);
        placed += 1;
    }
    if placed < MAX_BREAKPOINTS && wire.cache_system() {
        placed += 1;
    }
    if placed < MAX_BREAKPOINTS
        && let Some(last) = wire.messages.last_mut()
    {
        last.cached = true;
    }
}

/// The settings the API refuses with extended thinking on: a choice that forces a tool call, a
/// temperature other than 1. Refused here, before anything is sent, with what to do instead.
fn refuse_with_thinking(
    tool_choice: Option<&ToolChoice>,
    temperature: Option<f32>,
) -> Result<(), ModelError> {
    if tool_choice.is_some_and(ToolChoice::forces_a_call) {
        return Err(ModelError::Unsupported {
            message: "Anthropic's extended thinking cannot be combined with a tool choice that \
                      forces a call (`any` or a named tool); use ToolChoice::Auto, turn thinking \
                      off (Thinking::Off), or, for a typed run, ask for the answer with \
                      OutputMode::Native or OutputMode::Prompted instead of OutputMode::Tool"
                .to_owned(),
        });
    }
    if let Some(temperature) = temperature
        && (temperature - 1.0).abs() > f32::EPSILON
    {
        return Err(ModelError::Unsupported {
            message: format!(
                "Anthropic's extended thinking only takes a temperature of 1, not {temperature}; \
                 leave the temperature unset or turn thinking off (Thinking::Off)"
            ),
        });
    }
    Ok(())
}

/// `tool_choice`: `auto`, `any` (some tool), `none`, or the tool that must be called.
fn wire_tool_choice(choice: &ToolChoice) -> WireToolChoice<'_> {
    const WORDS: ChoiceWords = ChoiceWords {
        auto: "auto",
        required: "any",
        none: "none",
        tool: "tool",
    };
    let (kind, name) = WORDS.say(choice);
    WireToolChoice { kind, name }
}

/// The history as Anthropic wants it: system messages go to their own field, and consecutive
/// messages of one role are merged, so every tool result of a turn lands in one user message (tool
/// results first, as the API requires). Fails on a part Anthropic cannot take.
/// With the turns, the turn each message that is not a system one landed in, in order.
fn wire_messages<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
) -> Result<(Vec<WireMessage<'a>>, Vec<usize>), ModelError> {
    let mut turns = Turns {
        turns: Vec::new(),
        landed: Vec::with_capacity(messages.len()),
    };
    map_history(&mut turns, messages, texts)?;
    Ok((turns.turns, turns.landed))
}

/// The Messages API's turns, as [`map_history`] hands it the history, and the turn each message
/// landed in (for the prompt cache's pins).
struct Turns<'a> {
    turns: Vec<WireMessage<'a>>,
    landed: Vec<usize>,
}

impl<'a> Turns<'a> {
    /// Adds `blocks` in `role`'s turn, noting where they landed.
    fn push(&mut self, role: &'static str, blocks: Vec<WireBlock<'a>>) {
        push_turn(&mut self.turns, role, blocks);
        self.landed.push(self.turns.len().saturating_sub(1));
    }
}

impl<'a> HistoryWire<'a> for Turns<'a> {
    type Part = WireBlock<'a>;
    /// A `tool_result` holds content blocks.
    const RESULT_PARTS: ResultParts = ResultParts::Inside;
    /// The API refuses empty text blocks.
    const EMPTY_TEXT_PARTS: bool = false;

    fn text(text: Cow<'a, str>) -> WireBlock<'a> {
        WireBlock::Text { text }
    }

    fn part(part: &'a Part) -> Result<WireBlock<'a>, ModelError> {
        part_block(part)
    }

    fn user(&mut self, content: Content<'a, WireBlock<'a>>) {
        let blocks = content.into_parts(|text| WireBlock::Text { text: text.into() });
        self.push("user", blocks);
    }

    fn assistant(&mut self, reply: &'a AssistantMessage, _: &At<'a>) {
        self.push("assistant", assistant_blocks(reply));
    }

    fn tool_result(
        &mut self,
        result: &'a ToolResultMessage,
        output: Content<'a, WireBlock<'a>>,
        _: &At<'a>,
    ) {
        let block = WireBlock::ToolResult {
            tool_use_id: &result.tool_call_id,
            content: output,
            is_error: result.is_error,
        };
        self.push("user", vec![block]);
    }
}

impl<'a> RoleTurn<WireBlock<'a>> for WireMessage<'a> {
    fn new(role: &'static str, content: Vec<WireBlock<'a>>) -> Self {
        WireMessage {
            role,
            content,
            cached: false,
        }
    }

    fn role(&self) -> &'static str {
        self.role
    }

    fn parts(&mut self) -> &mut Vec<WireBlock<'a>> {
        &mut self.content
    }
}

/// An assistant turn: its thinking, its text, its calls.
fn assistant_blocks(reply: &AssistantMessage) -> Vec<WireBlock<'_>> {
    let mut blocks = Vec::with_capacity(1 + reply.tool_calls.len() + reply.reasoning.len());
    // This API's thinking goes back first, in order and unchanged: the API checks the signatures,
    // and refuses a tool loop whose last turn lost its thinking.
    for piece in reply
        .reasoning
        .iter()
        .filter(|piece| piece.is_from(PROVIDER))
    {
        if let Some(data) = &piece.encrypted {
            blocks.push(WireBlock::RedactedThinking { data });
        } else if let Some(signature) = &piece.signature {
            blocks.push(WireBlock::Thinking {
                thinking: &piece.text,
                signature,
            });
        }
    }
    // The API refuses empty text blocks.
    if !reply.content.is_empty() {
        blocks.push(WireBlock::Text {
            text: reply.content.as_str().into(),
        });
    }
    for call in &reply.tool_calls {
        blocks.push(WireBlock::ToolUse {
            id: &call.id,
            name: &call.name,
            // The call's arguments as the object the API takes, as the model wrote them.
            input: object_or_empty(&call.arguments),
        });
    }
    blocks
}

/// One part as a content block, or why the API cannot take it.
fn part_block(part: &Part) -> Result<WireBlock<'_>, ModelError> {
    match part {
        Part::Text { text } => Ok(WireBlock::Text {
            text: text.as_str().into(),
        }),
        Part::Image(media) => image_block(media),
        Part::Document(media) => document_block(media),
        Part::Audio(_) => Err(unsupported(
            "audio; transcribe it and send the text, or use a provider that takes audio (Gemini)",
        )),
    }
}

/// The image types the API takes as bytes.
const IMAGE_TYPES: [&str; 4] = ["image/jpeg", "image/png", "image/gif", "image/webp"];

fn image_block(media: &Media) -> Result<WireBlock<'_>, ModelError> {
    let source = match &media.source {
        Source::Url(url) => WireSource::Url { url },
        Source::Base64(data) => {
            let media_type = media.media_type.as_str();
            if !IMAGE_TYPES.contains(&media_type) {
                return Err(unsupported(&format!(
                    "an image of type {media_type:?}; it takes JPEG, PNG, GIF and WebP"
                )));
            }
            WireSource::Base64 { media_type, data }
        }
    };
    Ok(WireBlock::Image { source })
}

/// A document: a PDF as bytes or by URL, or plain text as bytes (sent as its text, the source
/// the API has for it).
fn document_block(media: &Media) -> Result<WireBlock<'_>, ModelError> {
    let essence = media
        .media_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    let source = match (essence.as_str(), &media.source) {
        ("application/pdf", Source::Base64(data)) => WireSource::Base64 {
            media_type: "application/pdf",
            data,
        },
        ("application/pdf", Source::Url(url)) => WireSource::Url { url },
        ("text/plain", Source::Base64(data)) => {
            let text = document_text(data).ok_or_else(|| {
                unsupported("a text/plain document whose bytes are not base64-encoded UTF-8")
            })?;
            WireSource::Text {
                media_type: "text/plain",
                data: text,
            }
        }
        ("text/plain", Source::Url(_)) => {
            return Err(unsupported(
                "a text/plain document by URL (only PDFs go by URL); fetch it and send \
                 Part::document(\"text/plain\", bytes)",
            ));
        }
        _ => {
            return Err(unsupported(&format!(
                "a document of type {:?}; it takes PDF and plain text",
                media.media_type
            )));
        }
    };
    Ok(WireBlock::Document {
        source,
        title: media.name.as_deref(),
    })
}

fn unsupported(what: &str) -> ModelError {
    ModelError::Unsupported {
        message: format!("Anthropic Messages cannot take {what}"),
    }
}

/// A Messages request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<WireSystem>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    output_config: Option<WireOutputConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<WireThinking>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

#[derive(Serialize)]
struct WireToolChoice<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'a str>,
}

/// `thinking`: `{"type": "enabled", "budget_tokens": ...}` or `{"type": "disabled"}`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireThinking {
    Enabled { budget_tokens: u32 },
    Disabled,
}

#[derive(Serialize)]
struct WireOutputConfig {
    format: WireOutputFormat,
}

#[derive(Serialize)]
struct WireOutputFormat {
    #[serde(rename = "type")]
    kind: &'static str,
    schema: Value,
}

impl WireRequest<'_> {
    /// Marks the system text as a breakpoint of the prompt cache: whether it was not one yet.
    fn cache_system(&mut self) -> bool {
        match self.system.take() {
            Some(WireSystem::Text(text)) => {
                self.system = Some(WireSystem::Cached([WireSystemBlock {
                    kind: "text",
                    text,
                    cache_control: EPHEMERAL,
                }]));
                true
            }
            other => {
                self.system = other;
                false
            }
        }
    }
}

/// `system`: its text, or (as a breakpoint of the prompt cache) one text block marked so.
#[derive(Serialize)]
#[serde(untagged)]
enum WireSystem {
    Text(String),
    Cached([WireSystemBlock; 1]),
}

#[derive(Serialize)]
struct WireSystemBlock {
    #[serde(rename = "type")]
    kind: &'static str,
    text: String,
    cache_control: CacheControl,
}

/// `cache_control`: a breakpoint of the prompt cache, the prefix up to it cached.
#[derive(Serialize, Clone, Copy)]
struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
}

/// The prompt cache's one kind of breakpoint: five minutes.
const EPHEMERAL: CacheControl = CacheControl { kind: "ephemeral" };

/// A turn; `cached` marks its last block as a breakpoint of the prompt cache.
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
    cached: bool,
}

impl Serialize for WireMessage<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeSeq, SerializeStruct};

        /// The content, its last block with `cache_control` when the turn is a breakpoint.
        struct Blocks<'m, 'a>(&'m WireMessage<'a>);

        impl Serialize for Blocks<'_, '_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                #[derive(Serialize)]
                struct Cached<'b, 'a> {
                    #[serde(flatten)]
                    block: &'b WireBlock<'a>,
                    cache_control: CacheControl,
                }
                let blocks = &self.0.content;
                let mut seq = serializer.serialize_seq(Some(blocks.len()))?;
                for (index, block) in blocks.iter().enumerate() {
                    if self.0.cached && index + 1 == blocks.len() {
                        seq.serialize_element(&Cached {
                            block,
                            cache_control: EPHEMERAL,
                        })?;
                    } else {
                        seq.serialize_element(block)?;
                    }
                }
                seq.end()
            }
        }

        let mut message = serializer.serialize_struct("WireMessage", 2)?;
        message.serialize_field("role", self.role)?;
        message.serialize_field("content", &Blocks(self))?;
        message.end()
    }
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireBlock<'a> {
    Text {
        text: Cow<'a, str>,
    },
    Image {
        source: WireSource<'a>,
    },
    Document {
        source: WireSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        title: Option<&'a str>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a RawValue,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: Content<'a, WireBlock<'a>>,
        is_error: bool,
    },
}

/// Where an image's or a document's content is.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireSource<'a> {
    Base64 {
        media_type: &'a str,
        data: &'a str,
    },
    Url {
        url: &'a str,
    },
    /// A plain-text document's text.
    Text {
        media_type: &'static str,
        data: String,
    },
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: SchemaJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}
