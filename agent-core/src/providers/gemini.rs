//! Google Gemini `generateContent` (`POST {base}/models/{model}:generateContent`).
//!
//! Wire format: <https://ai.google.dev/api/generate-content>, the function-calling guide
//! <https://ai.google.dev/gemini-api/docs/function-calling>, the thinking guide
//! <https://ai.google.dev/gemini-api/docs/thinking> and the thought-signatures guide
//! <https://ai.google.dev/gemini-api/docs/thought-signatures>.
//!
//! - Parts: images, documents and audio alike, as `inlineData` (bytes) or `fileData` (a URL or a
//!   file URI). A tool result's parts follow the `functionResponse` parts of their turn as parts
//!   of the same `user` turn, each result's introduced by a line naming its function: a
//!   `functionResponse` itself carries JSON only (its newer `parts` field takes only inline
//!   images and PDFs, from Gemini 3 on), while sibling parts work with every model.
//! - Reasoning: thought parts (`thought: true`) become [`Reasoning`] with their
//!   `thoughtSignature`. Thought parts in a row make one piece until one of them brings a
//!   signature, which closes it: so a thought streamed in pieces is the same reasoning as the
//!   thought whole. A signature on the reply's text (Gemini 3 puts one on its last part, in a
//!   stream often on an empty text part) is kept as a [`Reasoning`] with empty text, the
//!   signature and the id [`TEXT_SIGNATURE`]; a function call's signature stays on its
//!   [`ToolCall::signature`]. A model turn goes back as its thought parts in order (with
//!   `thought: true` and their signatures), then its text with the text's signature (or, when
//!   the text is empty, an empty text part with it after the calls, where Gemini puts it), then
//!   its calls with theirs. Thinking tokens (`thoughtsTokenCount`) count as output tokens: they
//!   are billed as output.
//! - Thinking: `generationConfig.thinkingConfig`. Gemini 3 models (by name) take a
//!   `thinkingLevel`: `low` for a low effort (and for [`Thinking::Off`], as Gemini 3 cannot stop
//!   thinking), `high` above (the levels every Gemini 3 model takes). Older models take a
//!   `thinkingBudget`: the budget of [`Thinking::budget_tokens`], 0 for off. Thought summaries are
//!   asked for (`includeThoughts`) whenever thinking is on.

use std::collections::HashMap;
use std::fmt;

use reqwest::header::HeaderName;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::common::{
    Common, KeyHeader, common_builder_methods, encode, object_or_empty, system_text,
};
use super::dialect;
use super::http::{Endpoint, join_url, parse_reply, stream_error, unexpected_reply};
use super::schemas::{Dialect, SchemaJson};
use crate::content::{Media, Part, Source};
use crate::message::{AssistantMessage, Message, ToolCall, Usage};
use crate::model::{BoxStream, StreamEvent};
use crate::model::{ChatRequest, ChatResponse, FinishReason, Model, ModelError};
use crate::reasoning::Reasoning;
use crate::settings::{Effort, Thinking, ToolChoice};
use crate::texts::{ReturnedBy, Texts};
use crate::tool::{BoxFuture, ToolDef};

mod reply;
use reply::is_text_signature;
pub(super) use reply::{parse_chunk, parse_response, push_reasoning};

/// What this adapter's [`Reasoning`] says wrote it.
pub(crate) const PROVIDER: &str = "gemini";

/// The [`Reasoning::id`] of a piece that is no thought but the `thoughtSignature` Gemini put on
/// the reply's text: it goes back on the text part.
pub(crate) const TEXT_SIGNATURE: &str = "text";

/// Gemini's own endpoint.
pub const GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// Ids this adapter makes up for calls Gemini gave none start with this; they are not sent back.
/// The rest is fresh (32 hexadecimal digits), never made again in this process or another.
const SYNTHETIC_ID_PREFIX: &str = "gemini_call_";

/// A Gemini model behind the `generateContent` API.
///
/// - **Parts**: images, documents and audio as bytes (`inlineData`) or by URL or file URI
///   (`fileData`). A tool result's parts follow the function responses of their turn, introduced
///   by a line naming the function.
/// - **Reasoning**: thought summaries are [`Reasoning`] from `"gemini"` with their thought
///   signatures. A signature Gemini puts on the reply's text is a [`Reasoning`] with empty text,
///   that signature and the id `"text"`; a function call's is its
///   [`ToolCall::signature`]. All go back where they came from. Thinking tokens count as output.
/// - **Thinking** ([`ModelSettings::thinking`](crate::ModelSettings::thinking)): `thinkingBudget`
///   ([`Thinking::budget_tokens`], 0 for [`Thinking::Off`]) with thought summaries included; for
///   Gemini 3 models (`gemini-3...`) `thinkingLevel` instead: `low` for a low effort and for off
///   (Gemini 3 always thinks), `high` for medium and high. Gemini 2.5 Pro cannot stop thinking
///   either and refuses a budget of 0.
///
/// ```
/// use agent_core::providers::Gemini;
///
/// let gemini = Gemini::new("gemini-2.5-flash").api_key("...");
/// ```
pub struct Gemini {
    common: Common,
    base_url: String,
    /// The model's `generateContent` and `streamGenerateContent` URLs, made from `base_url`.
    generate: Endpoint,
    stream: Endpoint,
    json_schema: bool,
}

impl Gemini {
    /// A model on Google's endpoint. Schemas go as JSON Schema (`parametersJsonSchema`,
    /// `responseJsonSchema`) to models that take it (Gemini 2.5 and later, by the model's name),
    /// else in Gemini's OpenAPI subset: see [`json_schema`](Self::json_schema).
    pub fn new(model: impl Into<String>) -> Self {
        let model = model.into();
        let json_schema = takes_json_schema(&model);
        Gemini {
            generate: method_url(GEMINI_BASE_URL, &model, "generateContent"),
            stream: method_url(GEMINI_BASE_URL, &model, "streamGenerateContent?alt=sse"),
            common: Common::new(model),
            base_url: GEMINI_BASE_URL.to_owned(),
            json_schema,
        }
    }

    /// Chooses how schemas are sent. JSON Schema (`parametersJsonSchema`, `responseJsonSchema`)
    /// keeps what the tool's schema says: references (recursive types too), maps with the type
    /// of their values, `const`, every standard format. Gemini's OpenAPI subset (`parameters`,
    /// `responseSchema`), which older models need, has none of those: references are inlined up
    /// to a depth of 8 (a recursive type is cut there), a map is a bare object, and the formats
    /// it does not know are dropped.
    pub fn json_schema(mut self, json_schema: bool) -> Self {
        self.json_schema = json_schema;
        self
    }

    /// A tool's parameters in the form this model takes, made once per tool.
    fn parameters(&self, tool: &ToolDef) -> WireSchema {
        let (dialect, transform): (Dialect, fn(&Value) -> Option<Value>) = if self.json_schema {
            (Dialect::GeminiJson, |schema| {
                Some(dialect::gemini_json(schema))
            })
        } else {
            (Dialect::GeminiOpenApi, |schema| {
                Some(dialect::gemini(schema))
            })
        };
        let schema = self
            .common
            .schemas
            .get(tool, dialect, transform)
            .unwrap_or_else(SchemaJson::null);
        self.schema_as(schema)
    }

    /// A schema under the field name of the form this model takes.
    fn schema_as(&self, schema: SchemaJson) -> WireSchema {
        if self.json_schema {
            WireSchema::Json(schema)
        } else {
            WireSchema::OpenApi(schema)
        }
    }

    /// A response format's schema in the form this model takes.
    fn response_schema(&self, schema: &Value) -> WireSchema {
        let schema = if self.json_schema {
            dialect::gemini_json(schema)
        } else {
            dialect::gemini(schema)
        };
        self.schema_as(SchemaJson::of(&schema))
    }

    common_builder_methods!();

    /// Sends requests elsewhere: `base` is the part before `/models/{model}:generateContent`.
    pub fn base_url(mut self, base: &str) -> Self {
        self.base_url = base.to_owned();
        self.generate = method_url(base, &self.common.model, "generateContent");
        self.stream = method_url(base, &self.common.model, "streamGenerateContent?alt=sse");
        self
    }

    /// The request body for this conversation, as it goes on the wire (the same for a streamed
    /// reply: the URL asks for the stream).
    pub(crate) fn request_body<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> Result<WireRequest<'a>, ModelError> {
        let declarations: Vec<WireDeclaration<'a>> = request
            .tools
            .iter()
            .map(|tool| {
                // A function without parameters leaves `parameters` out: Gemini refuses an object
                // schema with no properties.
                let has_parameters = tool
                    .parameters
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|properties| !properties.is_empty());
                WireDeclaration {
                    name: &tool.name,
                    description: &tool.description,
                    parameters: has_parameters.then(|| self.parameters(tool)),
                }
            })
            .collect();
        let format = request.response_format;
        let generation = WireGenerationConfig {
            max_output_tokens: self.common.max_tokens(&request),
            temperature: self.common.temperature(&request),
            response_mime_type: format.map(|_| "application/json"),
            response_schema: format.map(|format| self.response_schema(&format.schema).into()),
            thinking_config: request
                .settings
                .thinking
                .map(|thinking| thinking_config(&self.common.model, thinking)),
        };
        let has_generation = generation.max_output_tokens.is_some()
            || generation.temperature.is_some()
            || generation.response_mime_type.is_some()
            || generation.thinking_config.is_some();
        Ok(WireRequest {
            system_instruction: system_text(request.messages).map(|text| WireSystem {
                parts: [WireSystemPart { text }],
            }),
            contents: wire_contents(request.messages, request.texts)?,
            tool_config: request.tool_choice().map(wire_tool_config),
            tools: (!declarations.is_empty()).then_some([WireTools {
                function_declarations: declarations,
            }]),
            generation_config: has_generation.then_some(generation),
        })
    }
}

/// The URL of one of `model`'s methods (`generateContent`, `streamGenerateContent`) under `base`.
fn method_url(base: &str, model: &str, method: &str) -> Endpoint {
    Endpoint::new(join_url(base, &format!("models/{model}:{method}")))
}

impl Model for Gemini {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let body = self.request_body(request).and_then(|body| encode(&body));
        Box::pin(
            self.common
                .send(&self.generate, key_header(), body, parse_response),
        )
    }

    fn chat_stream<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
        let body = self.request_body(request).and_then(|body| encode(&body));
        let request = self.common.stream_request(&self.stream, key_header(), body);
        super::sse::stream_reply::<super::gemini_stream::GeminiReassembler>(request)
    }

    fn model_id(&self) -> Option<&str> {
        Some(&self.common.model)
    }
}

fn key_header() -> KeyHeader {
    KeyHeader {
        name: HeaderName::from_static("x-goog-api-key"),
        prefix: "",
    }
}

impl fmt::Debug for Gemini {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gemini")
            .field("base_url", &self.base_url)
            .field("json_schema", &self.json_schema)
            .field("common", &self.common)
            .finish()
    }
}

/// The history as Gemini wants it: `user` and `model` turns of parts; tool results become
/// `functionResponse` parts named after the call they answer, grouped into one `user` turn, the
/// parts of the results after them. Fails on a part Gemini cannot take.
fn wire_contents<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
) -> Result<Vec<WireContentOut<'a>>, ModelError> {
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut contents: Vec<WireContentOut<'_>> = Vec::new();
    // The parts of the tool results since the last other message, which follow their responses.
    let mut attachments: Vec<WirePartOut<'_>> = Vec::new();
    for message in messages {
        if !matches!(message, Message::Tool(_)) && !attachments.is_empty() {
            push_turn(&mut contents, "user", std::mem::take(&mut attachments));
        }
        let (role, parts) = match message {
            Message::System { .. } => continue,
            Message::User { content, parts } if parts.is_empty() => {
                ("user", vec![WirePartOut::text(content)])
            }
            Message::User { content, parts } => {
                let mut wire = Vec::with_capacity(parts.len() + 1);
                // Gemini refuses empty text parts.
                if !content.is_empty() {
                    wire.push(WirePartOut::text(content));
                }
                for part in parts {
                    wire.extend(wire_part(part));
                }
                ("user", wire)
            }
            Message::Assistant(reply) => ("model", model_parts(reply, &mut names)),
            Message::Tool(result) => {
                let name = names
                    .get(result.tool_call_id.as_str())
                    .copied()
                    .unwrap_or("unknown_tool");
                let response = if result.is_error {
                    WireResponseBody::Error {
                        error: &result.content,
                    }
                } else {
                    WireResponseBody::Result {
                        result: &result.content,
                    }
                };
                if !result.parts.is_empty() {
                    attachments.push(WirePartOut::Introduction {
                        text: texts.returned_parts(ReturnedBy::Tool(name)),
                    });
                    attachments.extend(result.parts.iter().filter_map(wire_part));
                }
                let part = WirePartOut::FunctionResponse {
                    function_response: WireFunctionResponse {
                        id: sent_id(&result.tool_call_id),
                        name,
                        response,
                    },
                };
                ("user", vec![part])
            }
        };
        push_turn(&mut contents, role, parts);
    }
    push_turn(&mut contents, "user", attachments);
    Ok(contents)
}

/// Adds parts to the conversation: to the last turn when it has the same role, else as a turn.
fn push_turn<'a>(
    contents: &mut Vec<WireContentOut<'a>>,
    role: &'static str,
    parts: Vec<WirePartOut<'a>>,
) {
    if parts.is_empty() {
        return;
    }
    match contents.last_mut() {
        Some(last) if last.role == role => last.parts.extend(parts),
        _ => contents.push(WireContentOut { role, parts }),
    }
}

/// A model turn: its thoughts in order, its text, its calls, each with its signature.
fn model_parts<'a>(
    reply: &'a AssistantMessage,
    names: &mut HashMap<&'a str, &'a str>,
) -> Vec<WirePartOut<'a>> {
    let mut parts = Vec::with_capacity(2 + reply.tool_calls.len() + reply.reasoning.len());
    let own = || {
        reply
            .reasoning
            .iter()
            .filter(|piece| piece.is_from(PROVIDER))
    };
    for thought in own().filter(|piece| !is_text_signature(piece)) {
        if thought.text.is_empty() && thought.signature.is_none() {
            continue;
        }
        parts.push(WirePartOut::Text {
            text: &thought.text,
            thought: true,
            thought_signature: thought.signature.as_deref(),
        });
    }
    let mut text_signatures = own()
        .filter(|piece| is_text_signature(piece))
        .filter_map(|piece| piece.signature.as_deref());
    if !reply.content.is_empty() {
        parts.push(WirePartOut::Text {
            text: &reply.content,
            thought: false,
            thought_signature: text_signatures.next(),
        });
    }
    for call in &reply.tool_calls {
        names.insert(&call.id, &call.name);
        parts.push(WirePartOut::FunctionCall {
            function_call: WireFunctionCallOut {
                id: sent_id(&call.id),
                name: &call.name,
                args: object_or_empty(&call.arguments),
            },
            thought_signature: call.signature.as_deref(),
        });
    }
    // A signature that came on an empty text part (or a second one) goes back on one, after the
    // calls: where Gemini puts it.
    for signature in text_signatures {
        parts.push(WirePartOut::Text {
            text: "",
            thought: false,
            thought_signature: Some(signature),
        });
    }
    parts
}

/// One part of a user message or a tool result: text, or media as `inlineData` (bytes) or
/// `fileData` (a URL). Gemini takes every kind; empty text is left out (Gemini refuses it).
fn wire_part(part: &Part) -> Option<WirePartOut<'_>> {
    match part {
        Part::Text { text } if text.is_empty() => None,
        Part::Text { text } => Some(WirePartOut::text(text)),
        Part::Image(media) | Part::Document(media) | Part::Audio(media) => Some(media_part(media)),
    }
}

fn media_part(media: &Media) -> WirePartOut<'_> {
    let mime_type = &media.media_type;
    match &media.source {
        Source::Base64(data) => WirePartOut::InlineData {
            inline_data: WireBlob { mime_type, data },
        },
        Source::Url(file_uri) => WirePartOut::FileData {
            file_data: WireFileData {
                mime_type,
                file_uri,
            },
        },
    }
}

/// A call id as it goes back to Gemini: ids this adapter made up are not sent.
fn sent_id(id: &str) -> Option<&str> {
    (!id.starts_with(SYNTHETIC_ID_PREFIX)).then_some(id)
}

/// A `generateContent` request body.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireRequest<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    system_instruction: Option<WireSystem>,
    contents: Vec<WireContentOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<[WireTools<'a>; 1]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_config: Option<WireToolConfig<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation_config: Option<WireGenerationConfig>,
}

#[derive(Serialize)]
struct WireSystem {
    parts: [WireSystemPart; 1],
}

#[derive(Serialize)]
struct WireSystemPart {
    text: String,
}

#[derive(Serialize)]
struct WireContentOut<'a> {
    role: &'static str,
    parts: Vec<WirePartOut<'a>>,
}

/// A part of a turn: Gemini tells the kinds apart by which field is present.
#[derive(Serialize)]
#[serde(untagged)]
enum WirePartOut<'a> {
    #[serde(rename_all = "camelCase")]
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        thought: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    /// The line that introduces a tool result's parts.
    Introduction { text: String },
    #[serde(rename_all = "camelCase")]
    InlineData { inline_data: WireBlob<'a> },
    #[serde(rename_all = "camelCase")]
    FileData { file_data: WireFileData<'a> },
    #[serde(rename_all = "camelCase")]
    FunctionCall {
        function_call: WireFunctionCallOut<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
    #[serde(rename_all = "camelCase")]
    FunctionResponse {
        function_response: WireFunctionResponse<'a>,
    },
}

impl<'a> WirePartOut<'a> {
    /// A plain text part.
    fn text(text: &'a str) -> Self {
        WirePartOut::Text {
            text,
            thought: false,
            thought_signature: None,
        }
    }
}

/// Bytes, base64-encoded.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireBlob<'a> {
    mime_type: &'a str,
    data: &'a str,
}

/// A file Gemini fetches.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireFileData<'a> {
    mime_type: &'a str,
    file_uri: &'a str,
}

#[derive(Serialize)]
struct WireFunctionCallOut<'a> {
    name: &'a str,
    args: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
}

#[derive(Serialize)]
struct WireFunctionResponse<'a> {
    name: &'a str,
    response: WireResponseBody<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
}

/// A function's response: `{"result": ...}`, or `{"error": ...}` for a failed call.
#[derive(Serialize)]
#[serde(untagged)]
enum WireResponseBody<'a> {
    Result { result: &'a str },
    Error { error: &'a str },
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireTools<'a> {
    function_declarations: Vec<WireDeclaration<'a>>,
}

#[derive(Serialize)]
struct WireDeclaration<'a> {
    name: &'a str,
    description: &'a str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    parameters: Option<WireSchema>,
}

/// A schema under the field name its form goes by: `parametersJsonSchema` / `parameters` for a
/// function, which the generation config's response schema renames.
#[derive(Serialize)]
enum WireSchema {
    #[serde(rename = "parametersJsonSchema")]
    Json(SchemaJson),
    #[serde(rename = "parameters")]
    OpenApi(SchemaJson),
}

/// The response schema, under its form's field name.
#[derive(Serialize)]
enum WireResponseSchema {
    #[serde(rename = "responseJsonSchema")]
    Json(SchemaJson),
    #[serde(rename = "responseSchema")]
    OpenApi(SchemaJson),
}

impl From<WireSchema> for WireResponseSchema {
    fn from(schema: WireSchema) -> Self {
        match schema {
            WireSchema::Json(schema) => WireResponseSchema::Json(schema),
            WireSchema::OpenApi(schema) => WireResponseSchema::OpenApi(schema),
        }
    }
}

/// Whether a Gemini model takes JSON Schema, by its name: 2.5 and every later version do (and
/// names this code does not know, which are newer), 1.x and 2.0 do not.
fn takes_json_schema(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model);
    !["gemini-1.", "gemini-2.0", "gemini-pro", "gemini-ultra"]
        .iter()
        .any(|old| name.starts_with(old))
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireGenerationConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    response_mime_type: Option<&'static str>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    response_schema: Option<WireResponseSchema>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_config: Option<WireThinkingConfig>,
}

/// `thinkingConfig`: a budget (models before Gemini 3) or a level (Gemini 3), and whether thought
/// summaries come back.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireThinkingConfig {
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_budget: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking_level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    include_thoughts: Option<bool>,
}

/// The thinking config for a model, by its name: Gemini 3 takes a level and cannot stop thinking
/// (off is its lowest level); older models take a budget, 0 for off.
fn thinking_config(model: &str, thinking: Thinking) -> WireThinkingConfig {
    let name = model.rsplit('/').next().unwrap_or(model);
    let on = thinking != Thinking::Off;
    let (thinking_budget, thinking_level) = if name.starts_with("gemini-3") {
        // `low` and `high` are the levels every Gemini 3 model takes.
        let level = match thinking.effort() {
            None | Some(Effort::Low) => "low",
            Some(_) => "high",
        };
        (None, Some(level))
    } else {
        (Some(thinking.budget_tokens().unwrap_or(0)), None)
    };
    WireThinkingConfig {
        thinking_budget,
        thinking_level,
        include_thoughts: on.then_some(true),
    }
}

/// `toolConfig.functionCallingConfig`: `AUTO`, `ANY` (some function, or only the one allowed),
/// `NONE`.
fn wire_tool_config(choice: &ToolChoice) -> WireToolConfig<'_> {
    let (mode, allowed) = match choice {
        ToolChoice::Auto => ("AUTO", None),
        ToolChoice::Required => ("ANY", None),
        ToolChoice::None => ("NONE", None),
        ToolChoice::Tool(name) => ("ANY", Some([name.as_str()])),
    };
    WireToolConfig {
        function_calling_config: WireFunctionCallingConfig {
            mode,
            allowed_function_names: allowed,
        },
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireToolConfig<'a> {
    function_calling_config: WireFunctionCallingConfig<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct WireFunctionCallingConfig<'a> {
    mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    allowed_function_names: Option<[&'a str; 1]>,
}
