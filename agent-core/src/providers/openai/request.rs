//! The Chat Completions request: the core's history, tools and settings on the wire. The walk over
//! the history is the shared one ([`map_history`]); this file says what differs: system messages
//! among the messages, content parts and the media the API takes, the reasoning that goes back and
//! to whom, a tool message as text with its media in a user message after the step's results;
//! tools and structured output in the OpenAI dialect, the reasoning effort; and the OpenAI model
//! families' reasoning (shared with the Responses adapter).

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use super::reasoning::{DetailBack, details_back, plain_text};
use crate::content::{MediaUrl, Part, Source};
use crate::message::{AssistantMessage, Message, ToolResultMessage};
use crate::model::{ChatRequest, ModelError};
use crate::providers::common::{Common, openai_parameters};
use crate::providers::dialect;
use crate::providers::mapping::{
    At, ChoiceWords, Content, HistoryWire, ResultParts, document_text, map_history,
};
use crate::providers::schemas::SchemaJson;
use crate::settings::{Effort, ResponseFormat, Thinking, ToolChoice};
use crate::texts::Texts;
use crate::tool::ToolDef;

/// The request body for this conversation, as it goes on the wire; `stream` asks for a
/// streamed reply with usage in its last chunk.
pub(super) fn request_body<'a>(
    common: &'a Common,
    service: &'a str,
    strict_tools: bool,
    request: ChatRequest<'a>,
    stream: bool,
) -> Result<WireRequest<'a>, ModelError> {
    Ok(WireRequest {
        model: &common.model,
        messages: wire_messages(request.messages, request.texts, service)?,
        tools: request
            .tools
            .iter()
            .map(|tool| wire_tool(common, strict_tools, tool))
            .collect(),
        tool_choice: request.tool_choice().map(wire_tool_choice),
        response_format: request.response_format.map(wire_response_format),
        max_completion_tokens: common.max_tokens(&request),
        temperature: common.temperature(&request),
        reasoning_effort: request
            .settings
            .thinking
            .map(|thinking| reasoning_effort(&common.model, thinking)),
        prompt_cache_key: request.cache_key(),
        stream,
        stream_options: stream.then_some(WireStreamOptions {
            include_usage: true,
        }),
    })
}

fn wire_tool<'a>(common: &Common, strict_tools: bool, tool: &'a ToolDef) -> WireTool<'a> {
    let (parameters, strict) = openai_parameters(&common.schemas, tool, strict_tools);
    WireTool {
        kind: "function",
        function: WireFunction {
            name: &tool.name,
            description: &tool.description,
            strict: strict.then_some(true),
            parameters,
        },
    }
}

/// The history as Chat Completions messages. Tool messages are text only, so the images and
/// documents of tool results go in one user message after the tool messages of their step (the
/// workaround OpenAI documents), each introduced by the id of the call that produced it.
///
/// Only the reasoning `service` wrote goes back, in the shape it came in: plain text as
/// `reasoning_content`, OpenRouter's entries as `reasoning_details`, unmodified. The reasoning of a
/// turn that called tools goes back in every later request, as DeepSeek's thinking mode requires
/// (it answers `400` without it, once the user has spoken again after a tool loop) and OpenRouter
/// asks of signed thinking; so does the reasoning of any turn since the last user message. An
/// older answer's reasoning does not, as DeepSeek asks.
fn wire_messages<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
    service: &'a str,
) -> Result<Vec<WireMessage<'a>>, ModelError> {
    let mut wire = Messages {
        messages: Vec::with_capacity(messages.len()),
        service,
    };
    map_history(&mut wire, messages, texts)?;
    Ok(wire.messages)
}

/// Chat Completions messages, as [`map_history`] hands it the history.
struct Messages<'a> {
    messages: Vec<WireMessage<'a>>,
    /// The service whose reasoning goes back.
    service: &'a str,
}

impl<'a> HistoryWire<'a> for Messages<'a> {
    type Part = WirePart<'a>;
    /// A tool message is text: its text parts join its text, its media go after.
    const RESULT_PARTS: ResultParts = ResultParts::After;
    const EMPTY_TEXT_PARTS: bool = true;

    fn text(text: Cow<'a, str>) -> WirePart<'a> {
        WirePart::Text { text }
    }

    fn part(part: &'a Part) -> Result<WirePart<'a>, ModelError> {
        wire_part(part)
    }

    fn system(&mut self, content: &'a str) {
        self.messages.push(WireMessage::System { content });
    }

    fn user(&mut self, content: Content<'a, WirePart<'a>>) {
        self.messages.push(WireMessage::User { content });
    }

    fn assistant(&mut self, reply: &'a AssistantMessage, at: &At<'a>) {
        let reasoning_back = !reply.tool_calls.is_empty() || at.since_last_user();
        let message = assistant_message(reply, reasoning_back.then_some(self.service));
        self.messages.push(message);
    }

    // The wire format has no error flag: the text says it (the dispatcher's error texts do).
    fn tool_result(
        &mut self,
        result: &'a ToolResultMessage,
        _: Content<'a, WirePart<'a>>,
        _: &At<'a>,
    ) {
        let mut content = Cow::Borrowed(result.content.as_str());
        for part in &result.parts {
            if let Part::Text { text } = part {
                content.to_mut().push('\n');
                content.to_mut().push_str(text);
            }
        }
        self.messages.push(WireMessage::Tool {
            tool_call_id: &result.tool_call_id,
            content,
        });
    }

    fn goes_after(part: &Part) -> bool {
        part.media().is_some()
    }

    fn after_results(&mut self, parts: Vec<WirePart<'a>>) {
        self.messages.push(WireMessage::User {
            content: Content::Parts(parts),
        });
    }
}

/// An assistant turn, with the reasoning `reasoning_of` wrote when it is to go back.
fn assistant_message<'a>(
    reply: &'a AssistantMessage,
    reasoning_of: Option<&str>,
) -> WireMessage<'a> {
    let reasoning_of = reasoning_of.filter(|_| !reply.reasoning.is_empty());
    WireMessage::Assistant {
        // An assistant turn that only calls tools has `content: null`.
        content: (!reply.content.is_empty() || reply.tool_calls.is_empty())
            .then_some(reply.content.as_str()),
        reasoning_content: reasoning_of.and_then(|service| plain_text(reply, service)),
        reasoning_details: reasoning_of
            .map_or_else(Vec::new, |service| details_back(reply, service)),
        tool_calls: reply
            .tool_calls
            .iter()
            .map(|call| WireToolCall {
                id: &call.id,
                kind: "function",
                function: WireCalledFunction {
                    name: &call.name,
                    arguments: &call.arguments,
                },
            })
            .collect(),
    }
}

/// One content part. Audio goes as bytes in WAV or MP3 and documents as bytes (`file_data`);
/// anything else is refused before a request is sent.
fn wire_part(part: &Part) -> Result<WirePart<'_>, ModelError> {
    Ok(match part {
        Part::Text { text } => WirePart::Text {
            text: Cow::Borrowed(text),
        },
        Part::Image(media) => WirePart::ImageUrl {
            image_url: WireImageUrl {
                url: media.as_url(),
            },
        },
        Part::Document(media) => match &media.source {
            Source::Base64(data) if media.media_type.starts_with("text/plain") => {
                // Files are PDFs here: plain text goes as the text it is.
                let text = document_text(data).ok_or_else(|| {
                    unsupported("a text/plain document whose bytes are not UTF-8")
                })?;
                WirePart::Text {
                    text: Cow::Owned(text),
                }
            }
            Source::Base64(_) if media.media_type == "application/pdf" => WirePart::File {
                file: WireFile {
                    filename: media.name.as_deref().unwrap_or("document.pdf"),
                    file_data: media.as_url(),
                },
            },
            Source::Base64(_) => {
                return Err(unsupported(&format!(
                    "a document of type {:?}; it takes PDF and plain text",
                    media.media_type
                )));
            }
            Source::Url(_) => {
                return Err(unsupported(
                    "a document by URL: Chat Completions takes documents as bytes; \
                     fetch it and send Part::document",
                ));
            }
        },
        Part::Audio(media) => {
            let format = match media.media_type.as_str() {
                "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
                "audio/mpeg" | "audio/mp3" => "mp3",
                _ => return Err(unsupported("audio other than WAV or MP3")),
            };
            match &media.source {
                Source::Base64(data) => WirePart::InputAudio {
                    input_audio: WireAudio { data, format },
                },
                Source::Url(_) => {
                    return Err(unsupported(
                        "audio by URL: Chat Completions takes audio as bytes",
                    ));
                }
            }
        }
    })
}

fn unsupported(what: &str) -> ModelError {
    ModelError::Unsupported {
        message: format!("OpenAI Chat Completions cannot take {what}"),
    }
}

/// `reasoning_effort` for `model`: the effort, or for off the least that model family takes.
fn reasoning_effort(model: &str, thinking: Thinking) -> &'static str {
    thinking
        .effort()
        .map_or_else(|| least_effort(model), Effort::as_str)
}

/// The least reasoning an OpenAI model family takes: `none` from GPT-5.1 on, `minimal` for GPT-5,
/// `low` for the o-series and the rest (which cannot stop reasoning).
pub(crate) fn least_effort(model: &str) -> &'static str {
    let name = model.rsplit('/').next().unwrap_or(model);
    if name.starts_with("gpt-5.") {
        "none"
    } else if name.starts_with("gpt-5") {
        "minimal"
    } else {
        "low"
    }
}

/// Whether an OpenAI model reasons (and so has reasoning to encrypt and send back): the o-series,
/// GPT-5 and later, Codex. Models of other services are taken not to.
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    ["o1", "o3", "o4", "gpt-5", "gpt-6", "codex"]
        .iter()
        .any(|family| name.starts_with(family))
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
        (kind, Some(name)) => WireToolChoice::Function {
            kind,
            function: WireFunctionName { name },
        },
    }
}

/// `response_format` of type `json_schema`: strict (Structured Outputs) when the schema can be
/// said in the strict dialect, as tools are.
fn wire_response_format(format: &ResponseFormat) -> WireResponseFormat<'_> {
    let strict = dialect::openai_strict(&format.schema);
    WireResponseFormat {
        kind: "json_schema",
        json_schema: WireJsonSchema {
            name: &format.name,
            description: format.description.as_deref(),
            strict: strict.is_some().then_some(true),
            schema: strict.unwrap_or_else(|| dialect::openai(&format.schema)),
        },
    }
}

/// A Chat Completions request body.
#[derive(Serialize)]
pub(crate) struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<WireTool<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_choice: Option<WireToolChoice<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<WireResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    stream_options: Option<WireStreamOptions>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum WireToolChoice<'a> {
    Mode(&'static str),
    Function {
        #[serde(rename = "type")]
        kind: &'static str,
        function: WireFunctionName<'a>,
    },
}

#[derive(Serialize)]
struct WireFunctionName<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct WireResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    json_schema: WireJsonSchema<'a>,
}

#[derive(Serialize)]
struct WireJsonSchema<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    schema: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}

#[derive(Serialize)]
struct WireStreamOptions {
    include_usage: bool,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "snake_case")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: Content<'a, WirePart<'a>>,
    },
    Assistant {
        content: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<String>,
        /// OpenRouter's: the entries it gave, as they came.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        reasoning_details: Vec<DetailBack<'a>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WirePart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: WireImageUrl<'a> },
    InputAudio { input_audio: WireAudio<'a> },
    File { file: WireFile<'a> },
}

#[derive(Serialize)]
struct WireImageUrl<'a> {
    url: MediaUrl<'a>,
}

#[derive(Serialize)]
struct WireAudio<'a> {
    data: &'a str,
    format: &'static str,
}

#[derive(Serialize)]
struct WireFile<'a> {
    filename: &'a str,
    file_data: MediaUrl<'a>,
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireCalledFunction<'a>,
}

#[derive(Serialize)]
struct WireCalledFunction<'a> {
    name: &'a str,
    arguments: &'a str,
}

#[derive(Serialize)]
struct WireTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: SchemaJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    strict: Option<bool>,
}
