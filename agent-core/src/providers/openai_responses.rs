//! OpenAI Responses (`POST {base}/responses`): OpenAI's newer API, the one its reasoning models
//! are built around. This adapter uses it statelessly by default: the whole history goes with
//! every request (`store: false`), and the reasoning of earlier replies goes back as the encrypted
//! items the API handed out (`include: ["reasoning.encrypted_content"]`), so nothing depends on
//! what the server kept.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/responses/create> and
//! <https://platform.openai.com/docs/api-reference/responses/object>; errors as
//! <https://platform.openai.com/docs/guides/error-codes>.

use std::borrow::Cow;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{
    Common, KeyHeader, arguments_text, common_builder_methods, encode, made_up_call_id,
    openai_parameters, system_text, tool_result_part,
};
use super::dialect;
use super::http::{Endpoint, parse_reply, unexpected_reply};
use super::openai::{OPENAI_BASE_URL, is_reasoning_model, least_effort};
use super::schemas::SchemaJson;
use crate::content::{Media, MediaUrl, Part, Source};
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
use crate::reasoning::Reasoning;
use crate::settings::{Effort, ResponseFormat, Thinking, ToolChoice};
use crate::texts::Texts;
use crate::tool::{BoxFuture, ToolDef};

/// What this adapter's [`Reasoning`] says wrote it.
pub(crate) const PROVIDER: &str = "openai_responses";

/// A model behind the OpenAI Responses API.
///
/// Stateless unless [`store`](Self::store) says otherwise: every request carries the whole
/// conversation, and a reasoning model's reasoning goes back in the encrypted form the API gave
/// it, so a tool loop keeps its chain of thought without the server keeping anything. Tools are
/// sent in strict mode wherever strict mode can express their schema
/// ([`strict_tools`](Self::strict_tools)).
///
/// ```
/// use agent_core::providers::OpenAiResponses;
/// use agent_core::{Effort, ModelSettings, Thinking};
///
/// let gpt = OpenAiResponses::new("gpt-5").api_key("sk-...").max_tokens(4_000);
/// assert_eq!(gpt.model(), "gpt-5");
/// let local = OpenAiResponses::new("gpt-oss-20b").base_url("http://127.0.0.1:8000/v1");
/// // Reasoning effort (with a readable summary) is a per-request setting.
/// let settings = ModelSettings::new().thinking(Thinking::Effort(Effort::Low));
/// # let _ = (local, settings);
/// ```
pub struct OpenAiResponses {
    common: Common,
    url: Endpoint,
    strict_tools: bool,
    store: bool,
    /// Whether to ask for encrypted reasoning when not storing; `None`: by the model's name.
    encrypted_reasoning: Option<bool>,
}

impl OpenAiResponses {
    /// A model on OpenAI's endpoint; give it a key with [`api_key`](Self::api_key).
    pub fn new(model: impl Into<String>) -> Self {
        OpenAiResponses {
            common: Common::new(model),
            url: Endpoint::join(OPENAI_BASE_URL, "responses"),
            strict_tools: true,
            store: false,
            encrypted_reasoning: None,
        }
    }

    common_builder_methods!();

    /// Sends requests to another service that speaks the Responses API: `base` is the part
    /// before `/responses`, e.g. `http://127.0.0.1:8000/v1` for vLLM.
    pub fn base_url(mut self, base: &str) -> Self {
        self.url = Endpoint::join(base, "responses");
        self
    }

    /// Whether tools go in strict mode (Structured Outputs), so the model's arguments always fit
    /// their schema; on by default. A tool whose schema strict mode cannot express (a map) goes
    /// without it either way. Every tool says which (`strict: true` or `false`), since the
    /// Responses API takes a tool that does not say as strict.
    pub fn strict_tools(mut self, strict: bool) -> Self {
        self.strict_tools = strict;
        self
    }

    /// Whether OpenAI keeps each response (`store`); off by default.
    ///
    /// Off, the adapter asks for the encrypted form of the reasoning and sends it back with the
    /// history: nothing depends on what the server kept (and zero-data-retention organizations
    /// can use it). On, responses are kept (for the dashboard, evals, distillation), but earlier
    /// reasoning is not sent back: the API pairs a kept reasoning item by id with the items that
    /// followed it, whose ids a transcript does not keep, and refuses the request when they are
    /// missing. The history itself goes whole with every request either way.
    pub fn store(mut self, store: bool) -> Self {
        self.store = store;
        self
    }

    /// Whether reasoning comes back encrypted, to be sent back with the history (only when not
    /// storing). By default, for the models that reason (o-series, GPT-5 and later, Codex): the
    /// API refuses the request for a model that does not. Say so for a model whose name does not
    /// tell (a compatible service's reasoning model).
    pub fn encrypted_reasoning(mut self, encrypted: bool) -> Self {
        self.encrypted_reasoning = Some(encrypted);
        self
    }

    fn asks_for_encrypted_reasoning(&self) -> bool {
        !self.store
            && self
                .encrypted_reasoning
                .unwrap_or_else(|| is_reasoning_model(&self.common.model))
    }

    /// The request body for this conversation, as it goes on the wire; `stream` asks for a
    /// streamed reply. Refuses what the API cannot take (audio) before anything is sent.
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
        stream: bool,
    ) -> Result<WireRequest<'a>, ModelError> {
        Ok(WireRequest {
            model: &self.common.model,
            // An agent without a system prompt still has an (empty) system message.
            instructions: system_text(request.messages).filter(|text| !text.trim().is_empty()),
            input: wire_input(request.messages, request.texts, !self.store)?,
            tools: request
                .tools
                .iter()
                .map(|tool| self.wire_tool(tool))
                .collect(),
            tool_choice: request.tool_choice().map(wire_tool_choice),
            text: request.response_format.map(wire_text),
            max_output_tokens: self.common.max_tokens(&request),
            temperature: self.common.temperature(&request),
            reasoning: request
                .settings
                .thinking
                .map(|thinking| wire_reasoning(&self.common.model, thinking)),
            store: self.store,
            include: if self.asks_for_encrypted_reasoning() {
                vec!["reasoning.encrypted_content"]
            } else {
                Vec::new()
            },
            stream,
        })
    }

    fn wire_tool<'a>(&self, tool: &'a ToolDef) -> WireTool<'a> {
        // The same forms as Chat Completions'.
        let (parameters, strict) = openai_parameters(&self.common.schemas, tool, self.strict_tools);
        WireTool {
            kind: "function",
            name: &tool.name,
            description: &tool.description,
            strict,
            parameters,
        }
    }

    fn key_header() -> KeyHeader {
        KeyHeader {
            name: reqwest::header::AUTHORIZATION,
            prefix: "Bearer ",
        }
    }
}

impl Model for OpenAiResponses {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self
            .request_body(request, false)
            .and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.url, Self::key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self
            .request_body(request, true)
            .and_then(|body| encode(&body));
        let request = self
            .common
            .stream_request(&self.url, Self::key_header(), body);
        super::sse::stream_reply::<super::openai_responses_stream::ResponsesReassembler>(request)
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

impl fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAiResponses")
            .field("url", &self.url)
            .field("common", &self.common)
            .field("strict_tools", &self.strict_tools)
            .field("store", &self.store)
            .field("encrypted_reasoning", &self.encrypted_reasoning)
            .finish()
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
    let mut input = Vec::with_capacity(messages.len());
    for message in messages {
        match message {
            Message::System { .. } => {}
            Message::User { content, parts } => input.push(WireInput::Message {
                role: "user",
                content: user_content(content, parts)?,
            }),
            Message::Assistant(reply) => assistant_items(reply, send_reasoning, &mut input),
            // The wire format has no error flag: the text says it (the dispatcher's error texts do).
            Message::Tool(result) => input.push(WireInput::Item(WireItem::FunctionCallOutput {
                call_id: &result.tool_call_id,
                output: result_output(result, texts)?,
            })),
        }
    }
    Ok(input)
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
            content: WireContent::Text(&reply.content),
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

/// A user message's content: its text alone, or its text and parts.
fn user_content<'a>(text: &'a str, parts: &'a [Part]) -> Result<WireContent<'a>, ModelError> {
    if parts.is_empty() {
        return Ok(WireContent::Text(text));
    }
    with_parts(text, parts, None).map(WireContent::Parts)
}

/// A tool result's `output`: its text, or, when it has parts, its text and parts as input
/// content. The API takes either: `function_call_output.output` is "a string or a list of
/// `input_text`, `input_image` and `input_file`" (the `input` item "Function tool call output",
/// <https://platform.openai.com/docs/api-reference/responses/create>), so a tool's images reach
/// the model with its result rather than in a message after it.
fn result_output<'a>(
    result: &'a ToolResultMessage,
    texts: &dyn Texts,
) -> Result<WireContent<'a>, ModelError> {
    if result.parts.is_empty() {
        return Ok(WireContent::Text(&result.content));
    }
    with_parts(&result.content, &result.parts, Some(texts)).map(WireContent::Parts)
}

/// A text and the parts after it. In a tool result (`in_tool_result`, with the request's texts),
/// a part the API cannot take is named in a text instead of refused.
fn with_parts<'a>(
    text: &'a str,
    parts: &'a [Part],
    in_tool_result: Option<&dyn Texts>,
) -> Result<Vec<WirePart<'a>>, ModelError> {
    let mut wire = Vec::with_capacity(parts.len() + 1);
    if !text.is_empty() {
        wire.push(WirePart::Text { text: text.into() });
    }
    for part in parts {
        wire.push(match in_tool_result {
            Some(texts) => tool_result_part(part, texts, wire_part, |text| WirePart::Text {
                text: text.into(),
            })?,
            None => wire_part(part)?,
        });
    }
    Ok(wire)
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
    match choice {
        ToolChoice::Auto => WireToolChoice::Mode("auto"),
        ToolChoice::Required => WireToolChoice::Mode("required"),
        ToolChoice::None => WireToolChoice::Mode("none"),
        ToolChoice::Tool(name) => WireToolChoice::Function {
            kind: "function",
            name,
        },
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

/// Parses a Responses reply body. A call without a `call_id` gets one made up; arguments sent as
/// a JSON object are taken as their text; a 200 whose response says it failed is that failure's
/// typed error. Never panics, whatever the body.
pub(crate) fn parse_response(body: &[u8]) -> Result<ChatResponse, ModelError> {
    let reply: WireResponse = parse_reply(body)?;
    if reply.status.as_deref() == Some("failed") {
        return Err(failed(reply.error.as_ref()));
    }
    let Some(output) = reply.output else {
        return Err(unexpected_reply("the reply has no output", body));
    };
    let (message, refused) = message_of(output, &mut |_, _| made_up_call_id());
    let mut response = response_of(
        message,
        refused,
        reply.status.as_deref(),
        reply.incomplete_details.as_ref(),
        reply.usage.as_ref(),
    );
    response.model = reply.model.filter(|model| !model.is_empty());
    Ok(response)
}

/// The reply an `output` array holds, and whether the model refused. `call_id` gives the id of a
/// call the server sent without one, from its place among the calls and its item id.
pub(super) fn message_of(
    output: Vec<WireOutput>,
    call_id: &mut dyn FnMut(usize, Option<&str>) -> String,
) -> (AssistantMessage, bool) {
    let mut message = AssistantMessage::default();
    let mut refused = false;
    for item in output {
        match item {
            WireOutput::Message { content } => {
                for part in content {
                    match part {
                        WireOutputContent::OutputText { text } => message.content.push_str(&text),
                        WireOutputContent::Refusal { refusal } => {
                            refused = true;
                            message.content.push_str(&refusal);
                        }
                        WireOutputContent::Other => {}
                    }
                }
            }
            WireOutput::FunctionCall {
                id,
                call_id: sent,
                name,
                arguments,
            } => {
                let id = match sent.filter(|sent| !sent.is_empty()) {
                    Some(sent) => sent,
                    None => call_id(message.tool_calls.len(), id.as_deref()),
                };
                message.tool_calls.push(ToolCall::new(id, name, arguments));
            }
            WireOutput::Reasoning {
                id,
                summary,
                encrypted_content,
            } => message
                .reasoning
                .extend(reasoning_of(id, summary, encrypted_content)),
            WireOutput::Other => {}
        }
    }
    (message, refused)
}

/// A reasoning item's pieces: one per summary part, the encrypted form on the first; one piece
/// without text when there is no summary.
fn reasoning_of(
    id: Option<String>,
    summary: Vec<WireSummaryPart>,
    encrypted: Option<String>,
) -> Vec<Reasoning> {
    let mut texts: Vec<String> = summary.into_iter().map(|part| part.text).collect();
    if texts.is_empty() {
        texts.push(String::new());
    }
    let mut encrypted = encrypted;
    texts
        .into_iter()
        .map(|text| {
            let mut piece = Reasoning::new(PROVIDER, text);
            piece.id.clone_from(&id);
            piece.encrypted = encrypted.take();
            piece
        })
        .collect()
}

/// The whole reply: the message, why it stopped, and the tokens it took.
pub(super) fn response_of(
    message: AssistantMessage,
    refused: bool,
    status: Option<&str>,
    incomplete: Option<&WireIncomplete>,
    usage: Option<&WireUsage>,
) -> ChatResponse {
    let finish_reason = match status {
        Some("incomplete") => match incomplete.and_then(|details| details.reason.as_deref()) {
            Some("max_output_tokens") => FinishReason::Length,
            Some("content_filter") => FinishReason::ContentFilter,
            Some(other) => FinishReason::Other(other.to_owned()),
            None => FinishReason::Other("incomplete".to_owned()),
        },
        None | Some("completed") if refused => FinishReason::ContentFilter,
        None | Some("completed") if !message.tool_calls.is_empty() => FinishReason::ToolCalls,
        None | Some("completed") => FinishReason::Stop,
        Some(other) => FinishReason::Other(other.to_owned()),
    };
    let usage = usage
        .map(|usage| Usage {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
        })
        .unwrap_or_default();
    ChatResponse::new(message)
        .with_usage(usage)
        .with_finish_reason(finish_reason)
}

/// The error of a response that failed, from its `error` object.
pub(super) fn failed(error: Option<&Value>) -> ModelError {
    match error.filter(|error| !error.is_null()) {
        Some(error) => response_error(error),
        None => ModelError::Stream {
            message: "the response failed, and did not say why".to_owned(),
        },
    }
}

/// A Responses error object (`{"code", "message"}`, a `type` beside them in some) as its typed
/// error, sorted as the HTTP status its code stands for would be, so a rate limit or an overload
/// reported inside a reply is retried exactly as the status is. A code this adapter does not know
/// leaves it a [`ModelError::Stream`].
pub(super) fn response_error(error: &Value) -> ModelError {
    // Shaped as an HTTP error body, so an exhausted quota is told from a rate limit as it is there.
    let body = serde_json::json!({ "error": error }).to_string();
    super::openai_stream::typed_error(error, status_of, body.as_bytes())
}

/// The HTTP status an error code stands for: OpenAI's general codes, then the Responses API's own
/// (`server_is_overloaded` and `slow_down` are its overload; `invalid_prompt` and the image
/// codes its refusals of the input).
fn status_of(code: &str) -> Option<u16> {
    super::openai_stream::status_of(code).or(match code {
        "server_is_overloaded" | "slow_down" | "service_unavailable_error" => Some(503),
        "vector_store_timeout" => Some(504),
        "invalid_prompt" => Some(400),
        _ if code.starts_with("invalid_") || code.contains("image") => Some(400),
        _ => None,
    })
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
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    stream: bool,
}

/// One input item: a message in the short form (`role` and `content`), or a typed item.
#[derive(Serialize)]
#[serde(untagged)]
enum WireInput<'a> {
    Message {
        role: &'static str,
        content: WireContent<'a>,
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
        output: WireContent<'a>,
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

/// A message's content or a tool's output: a string, or an array of parts.
#[derive(Serialize)]
#[serde(untagged)]
enum WireContent<'a> {
    Text(&'a str),
    Parts(Vec<WirePart<'a>>),
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

/// A response object: the reply body, and what `response.completed` and its kin carry.
#[derive(Deserialize)]
pub(super) struct WireResponse {
    #[serde(default)]
    pub(super) status: Option<String>,
    /// `None` when the body has none (or `null`): a plain reply then is not the documented shape.
    #[serde(default)]
    pub(super) output: Option<Vec<WireOutput>>,
    #[serde(default)]
    pub(super) usage: Option<WireUsage>,
    #[serde(default)]
    pub(super) incomplete_details: Option<WireIncomplete>,
    #[serde(default)]
    pub(super) error: Option<Value>,
    /// The model that answered.
    #[serde(default)]
    pub(super) model: Option<String>,
}

/// One output item; the kinds this adapter does not use (built-in tools' calls) are skipped.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WireOutput {
    Message {
        #[serde(default, deserialize_with = "null_as_empty")]
        content: Vec<WireOutputContent>,
    },
    FunctionCall {
        /// The item's id (`fc_...`), not the call's.
        #[serde(default)]
        id: Option<String>,
        /// The call's id, which its result carries back; some compatible servers send none.
        #[serde(default)]
        call_id: Option<String>,
        #[serde(default)]
        name: String,
        /// A JSON text the model wrote; it may not be valid JSON, and the tool runner says so.
        #[serde(default, deserialize_with = "arguments_text")]
        arguments: String,
    },
    Reasoning {
        #[serde(default)]
        id: Option<String>,
        #[serde(default, deserialize_with = "null_as_empty")]
        summary: Vec<WireSummaryPart>,
        #[serde(default)]
        encrypted_content: Option<String>,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum WireOutputContent {
    OutputText {
        #[serde(default)]
        text: String,
    },
    Refusal {
        #[serde(default)]
        refusal: String,
    },
    #[serde(other)]
    Other,
}

#[derive(Deserialize)]
pub(super) struct WireSummaryPart {
    #[serde(default)]
    text: String,
}

#[derive(Deserialize)]
pub(super) struct WireIncomplete {
    #[serde(default)]
    reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireUsage {
    #[serde(default)]
    input_tokens: u64,
    #[serde(default)]
    output_tokens: u64,
}

/// Some compatible servers send `null` for an empty list.
fn null_as_empty<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    Ok(Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPLY: &str = r#"{"id":"resp_1","object":"response","status":"completed","output":[
        {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"Rain?"},{"type":"summary_text","text":"Check."}],"encrypted_content":"gAAA"},
        {"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Let me check.","annotations":[]}]},
        {"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":"{\"city\":\"北京\"}"},
        {"type":"function_call","id":"fc_2","name":"now","arguments":{}},
        {"type":"web_search_call","id":"ws_1","status":"completed"}],
        "usage":{"input_tokens":12,"output_tokens":34,"total_tokens":46}}"#;

    #[test]
    fn a_reply_reads_into_text_calls_reasoning_and_usage() {
        let reply = parse_response(REPLY.as_bytes()).unwrap();
        assert_eq!(reply.message.content, "Let me check.");
        assert_eq!(reply.finish_reason, Some(FinishReason::ToolCalls));
        assert_eq!(reply.usage.total_tokens(), 46);
        let calls = &reply.message.tool_calls;
        assert_eq!(
            calls[0],
            ToolCall::new("call_1", "get_weather", r#"{"city":"北京"}"#)
        );
        assert!(calls[1].id.starts_with("call_agent_"), "{:?}", calls[1]);
        assert_eq!(calls[1].arguments, "{}");
        assert_eq!(
            reply.message.reasoning,
            [
                Reasoning::new(PROVIDER, "Rain?")
                    .with_id("rs_1")
                    .with_encrypted("gAAA"),
                Reasoning::new(PROVIDER, "Check.").with_id("rs_1"),
            ]
        );
        // And back: one item, two summary parts, the encrypted form once.
        let items = reasoning_items(&reply.message.reasoning);
        assert_eq!(
            serde_json::to_value(WireItem::Reasoning(items.into_iter().next().unwrap())).unwrap(),
            serde_json::json!({"type": "reasoning", "id": "rs_1", "summary": [
                {"type": "summary_text", "text": "Rain?"}, {"type": "summary_text", "text": "Check."}
            ], "encrypted_content": "gAAA"})
        );
    }

    #[test]
    fn why_a_reply_stopped() {
        let finish = |body: &str| parse_response(body.as_bytes()).map(|reply| reply.finish_reason);
        assert_eq!(
            finish(r#"{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#).unwrap(),
            Some(FinishReason::Length)
        );
        assert_eq!(
            finish(r#"{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"No."}]}]}"#).unwrap(),
            Some(FinishReason::ContentFilter)
        );
        assert_eq!(
            finish(r#"{"output":[{"type":"message","content":null}]}"#).unwrap(),
            Some(FinishReason::Stop)
        );
        assert!(matches!(
            finish(r#"{"status":"failed","error":{"code":"server_error","message":"Boom"},"output":[]}"#),
            Err(ModelError::Server { status: 500, message }) if message == "Boom"
        ));
        assert!(matches!(
            finish(r#"{"status":"failed","error":{"code":"insufficient_quota","message":"Pay"}}"#),
            Err(ModelError::QuotaExhausted { .. })
        ));
        assert!(matches!(
            finish(r#"{"id":"resp_1"}"#),
            Err(ModelError::Decode { message, .. }) if message == "the reply has no output"
        ));
    }

    #[test]
    fn error_codes_sort_like_their_statuses() {
        let sorted =
            |code: &str| response_error(&serde_json::json!({"code": code, "message": "m"}));
        assert!(matches!(
            sorted("rate_limit_exceeded"),
            ModelError::RateLimited { .. }
        ));
        assert!(matches!(
            sorted("server_is_overloaded"),
            ModelError::Overloaded { status: 503, .. }
        ));
        assert!(matches!(
            sorted("invalid_api_key"),
            ModelError::Authentication { status: 401, .. }
        ));
        assert!(matches!(
            sorted("invalid_image_url"),
            ModelError::InvalidRequest { status: 400, .. }
        ));
        assert!(matches!(sorted("brand_new"), ModelError::Stream { message } if message == "m"));
    }

    /// A small deterministic generator, so the test needs no dependency and fails the same way.
    fn noise(seed: &mut u64) -> u8 {
        *seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (*seed >> 33) as u8
    }

    #[test]
    fn the_parser_never_panics() {
        let body = REPLY.as_bytes();
        for end in 0..=body.len() {
            let _ = parse_response(&body[..end]);
        }
        let mut seed = 7;
        for _ in 0..2_000 {
            let mut bytes = body.to_vec();
            for _ in 0..4 {
                let at = usize::from(noise(&mut seed)) * bytes.len() / 256;
                bytes[at] = noise(&mut seed);
            }
            let _ = parse_response(&bytes);
        }
    }
}
