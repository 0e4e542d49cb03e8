//! The Anthropic Messages request: the core's history, tools and settings mapped onto the wire
//! body (system prompt apart, turns merged by role, content blocks, thinking and its limits).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use base64::Engine as _;

use super::response::PROVIDER;
use crate::content::{Media, Part, Source};
use crate::message::{Message, ToolResultMessage};
use crate::model::{ChatRequest, ModelError};
use crate::providers::common::{Common, system_text, tool_result_part};
use crate::providers::dialect;
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
    Ok(WireRequest {
        model: &common.model,
        max_tokens,
        system: system_text(request.messages),
        messages: wire_messages(request.messages, request.texts)?,
        tools: request
            .tools
            .iter()
            .map(|tool| WireTool {
                name: &tool.name,
                description: &tool.description,
                input_schema: common
                    .schemas
                    .get(tool, Dialect::Anthropic, |schema| {
                        Some(dialect::anthropic(schema))
                    })
                    .unwrap_or_else(SchemaJson::null),
            })
            .collect(),
        tool_choice: tool_choice.map(wire_tool_choice),
        output_config,
        thinking,
        temperature,
        stream,
    })
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
    let (kind, name) = match choice {
        ToolChoice::Auto => ("auto", None),
        ToolChoice::Required => ("any", None),
        ToolChoice::None => ("none", None),
        ToolChoice::Tool(name) => ("tool", Some(name.as_str())),
    };
    WireToolChoice { kind, name }
}

/// The history as Anthropic wants it: system messages go to their own field, and consecutive
/// messages of one role are merged, so every tool result of a turn lands in one user message (tool
/// results first, as the API requires). Fails on a part Anthropic cannot take.
fn wire_messages<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
) -> Result<Vec<WireMessage<'a>>, ModelError> {
    let mut wire: Vec<WireMessage<'_>> = Vec::new();
    for message in messages {
        let (role, blocks): (&str, Vec<WireBlock<'_>>) = match message {
            Message::System { .. } => continue,
            Message::User { content, parts } if parts.is_empty() => (
                "user",
                vec![WireBlock::Text {
                    text: content.into(),
                }],
            ),
            Message::User { content, parts } => ("user", blocks_of(content, parts, None)?),
            Message::Assistant(reply) => {
                let mut blocks =
                    Vec::with_capacity(1 + reply.tool_calls.len() + reply.reasoning.len());
                // This API's thinking goes back first, in order and unchanged: the API checks the
                // signatures, and refuses a tool loop whose last turn lost its thinking.
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
                        input: tool_input(&call.arguments),
                    });
                }
                ("assistant", blocks)
            }
            Message::Tool(result) => ("user", vec![tool_result(result, texts)?]),
        };
        if blocks.is_empty() {
            continue;
        }
        match wire.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => wire.push(WireMessage {
                role,
                content: blocks,
            }),
        }
    }
    Ok(wire)
}

/// A tool result: its text alone, or its text and parts as content blocks.
fn tool_result<'a>(
    result: &'a ToolResultMessage,
    texts: &dyn Texts,
) -> Result<WireBlock<'a>, ModelError> {
    let content = if result.parts.is_empty() {
        WireToolContent::Text(&result.content)
    } else {
        WireToolContent::Blocks(blocks_of(&result.content, &result.parts, Some(texts))?)
    };
    Ok(WireBlock::ToolResult {
        tool_use_id: &result.tool_call_id,
        content,
        is_error: result.is_error,
    })
}

/// A text and the parts after it, as content blocks (the API refuses empty text blocks). In a
/// tool result (`in_tool_result`, with the request's texts), a part the API cannot take is named
/// in a text block instead of refused.
fn blocks_of<'a>(
    text: &'a str,
    parts: &'a [Part],
    in_tool_result: Option<&dyn Texts>,
) -> Result<Vec<WireBlock<'a>>, ModelError> {
    let mut blocks = Vec::with_capacity(parts.len() + 1);
    if !text.is_empty() {
        blocks.push(WireBlock::Text { text: text.into() });
    }
    for part in parts {
        if matches!(part, Part::Text { text } if text.is_empty()) {
            continue;
        }
        blocks.push(match in_tool_result {
            Some(texts) => tool_result_part(part, texts, part_block, |text| WireBlock::Text {
                text: text.into(),
            })?,
            None => part_block(part)?,
        });
    }
    Ok(blocks)
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
            let text = base64::engine::general_purpose::STANDARD
                .decode(data)
                .ok()
                .and_then(|bytes| String::from_utf8(bytes).ok())
                .ok_or_else(|| {
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

/// Anthropic takes a tool's input as a JSON object: the call's arguments, as the model wrote them.
fn tool_input(arguments: &str) -> &RawValue {
    crate::providers::common::object_or_empty(arguments)
}

/// A Messages request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<String>,
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

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<WireBlock<'a>>,
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
        content: WireToolContent<'a>,
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

/// A tool result's content: a string, or content blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum WireToolContent<'a> {
    Text(&'a str),
    Blocks(Vec<WireBlock<'a>>),
}

#[derive(Serialize)]
struct WireTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: SchemaJson,
}
