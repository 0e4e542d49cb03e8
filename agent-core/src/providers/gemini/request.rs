//! The Gemini `generateContent` request: the core's history, tools and settings on the wire. The
//! walk over the history is the shared one ([`map_history`]); this file says what differs: parts
//! (every kind of media, inline or by URI), a model turn's thoughts and signatures, a tool result
//! as a `functionResponse` named after its call with its parts after the step's results, turns
//! merged by role; function declarations in the model's schema form; the generation config with
//! its thinking config.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::response::{PROVIDER, SYNTHETIC_ID_PREFIX, is_text_signature};
use crate::content::{Media, Part, Source};
use crate::message::{AssistantMessage, Message, ToolResultMessage};
use crate::model::{ChatRequest, ModelError};
use crate::providers::common::Common;
use crate::providers::dialect;
use crate::providers::mapping::{
    self, At, ChoiceWords, Content, HistoryWire, ResultParts, RoleTurn, map_history,
    object_or_empty, push_turn, system_text,
};
use crate::providers::schemas::{Dialect, SchemaJson};
use crate::settings::{Effort, Thinking, ToolChoice};
use crate::texts::{ReturnedBy, Texts};
use crate::tool::ToolDef;

/// The request body for this conversation, as it goes on the wire (the same for a streamed
/// reply: the URL asks for the stream).
pub(super) fn request_body<'a>(
    common: &'a Common,
    json_schema: bool,
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
                parameters: has_parameters.then(|| parameters(common, json_schema, tool)),
            }
        })
        .collect();
    let format = request.response_format;
    let generation = WireGenerationConfig {
        max_output_tokens: common.max_tokens(&request),
        temperature: common.temperature(&request),
        response_mime_type: format.map(|_| "application/json"),
        response_schema: format.map(|format| response_schema(json_schema, &format.schema).into()),
        thinking_config: request
            .settings
            .thinking
            .map(|thinking| thinking_config(&common.model, thinking)),
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

/// A tool's parameters in the form this model takes, made once per tool.
fn parameters(common: &Common, json_schema: bool, tool: &ToolDef) -> WireSchema {
    let dialect = if json_schema {
        Dialect::GeminiJson
    } else {
        Dialect::GeminiOpenApi
    };
    schema_as(
        json_schema,
        mapping::parameters(&common.schemas, tool, dialect),
    )
}

/// A schema under the field name of the form this model takes.
fn schema_as(json_schema: bool, schema: SchemaJson) -> WireSchema {
    if json_schema {
        WireSchema::Json(schema)
    } else {
        WireSchema::OpenApi(schema)
    }
}

/// A response format's schema in the form this model takes.
fn response_schema(json_schema: bool, schema: &Value) -> WireSchema {
    let schema = if json_schema {
        dialect::gemini_json(schema)
    } else {
        dialect::gemini(schema)
    };
    schema_as(json_schema, SchemaJson::of(&schema))
}

/// The history as Gemini wants it: `user` and `model` turns of parts; tool results become
/// `functionResponse` parts named after the call they answer, grouped into one `user` turn, the
/// parts of the results after them. Fails on a part Gemini cannot take.
fn wire_contents<'a>(
    messages: &'a [Message],
    texts: &dyn Texts,
) -> Result<Vec<WireContentOut<'a>>, ModelError> {
    let mut turns = Turns(Vec::new());
    map_history(&mut turns, messages, texts)?;
    Ok(turns.0)
}

/// The name a tool result goes back under when no call of the history has its id.
const UNKNOWN_TOOL: &str = "unknown_tool";

/// Gemini's turns, as [`map_history`] hands it the history.
struct Turns<'a>(Vec<WireContentOut<'a>>);

impl<'a> HistoryWire<'a> for Turns<'a> {
    type Part = WirePartOut<'a>;
    /// A `functionResponse` carries JSON only (its newer `parts` field takes only inline images
    /// and PDFs, from Gemini 3 on); sibling parts after it work with every model.
    const RESULT_PARTS: ResultParts = ResultParts::After;
    /// Gemini refuses empty text parts.
    const EMPTY_TEXT_PARTS: bool = false;

    fn text(text: Cow<'a, str>) -> WirePartOut<'a> {
        WirePartOut::Text {
            text,
            thought: false,
            thought_signature: None,
        }
    }

    /// Text, or media as `inlineData` (bytes) or `fileData` (a URL): Gemini takes every kind.
    fn part(part: &'a Part) -> Result<WirePartOut<'a>, ModelError> {
        Ok(match part {
            Part::Text { text } => Self::text(text.into()),
            Part::Image(media) | Part::Document(media) | Part::Audio(media) => media_part(media),
        })
    }

    fn user(&mut self, content: Content<'a, WirePartOut<'a>>) {
        let parts = content.into_parts(|text| Self::text(text.into()));
        push_turn(&mut self.0, "user", parts);
    }

    fn assistant(&mut self, reply: &'a AssistantMessage, _: &At<'a>) {
        push_turn(&mut self.0, "model", model_parts(reply));
    }

    fn tool_result(
        &mut self,
        result: &'a ToolResultMessage,
        _: Content<'a, WirePartOut<'a>>,
        at: &At<'a>,
    ) {
        let response = if result.is_error {
            WireResponseBody::Error {
                error: &result.content,
            }
        } else {
            WireResponseBody::Result {
                result: &result.content,
            }
        };
        let part = WirePartOut::FunctionResponse {
            function_response: WireFunctionResponse {
                id: sent_id(&result.tool_call_id),
                name: at.call_name(&result.tool_call_id).unwrap_or(UNKNOWN_TOOL),
                response,
            },
        };
        push_turn(&mut self.0, "user", vec![part]);
    }

    /// Gemini pairs a result with its call by the function's name.
    fn returned_by(result: &'a ToolResultMessage, at: &At<'a>) -> ReturnedBy<'a> {
        ReturnedBy::Tool(at.call_name(&result.tool_call_id).unwrap_or(UNKNOWN_TOOL))
    }

    fn after_results(&mut self, parts: Vec<WirePartOut<'a>>) {
        push_turn(&mut self.0, "user", parts);
    }
}

impl<'a> RoleTurn<WirePartOut<'a>> for WireContentOut<'a> {
    fn new(role: &'static str, parts: Vec<WirePartOut<'a>>) -> Self {
        WireContentOut { role, parts }
    }

    fn role(&self) -> &'static str {
        self.role
    }

    fn parts(&mut self) -> &mut Vec<WirePartOut<'a>> {
        &mut self.parts
    }
}

/// A model turn: its thoughts in order, its text, its calls, each with its signature.
fn model_parts(reply: &AssistantMessage) -> Vec<WirePartOut<'_>> {
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
            text: thought.text.as_str().into(),
            thought: true,
            thought_signature: thought.signature.as_deref(),
        });
    }
    let mut text_signatures = own()
        .filter(|piece| is_text_signature(piece))
        .filter_map(|piece| piece.signature.as_deref());
    if !reply.content.is_empty() {
        parts.push(WirePartOut::Text {
            text: reply.content.as_str().into(),
            thought: false,
            thought_signature: text_signatures.next(),
        });
    }
    for call in &reply.tool_calls {
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
            text: "".into(),
            thought: false,
            thought_signature: Some(signature),
        });
    }
    parts
}

/// Media as `inlineData` (bytes) or `fileData` (a URL or a file URI).
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
        text: Cow<'a, str>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        thought: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        thought_signature: Option<&'a str>,
    },
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
    const WORDS: ChoiceWords = ChoiceWords {
        auto: "AUTO",
        required: "ANY",
        none: "NONE",
        tool: "ANY",
    };
    let (mode, allowed) = WORDS.say(choice);
    WireToolConfig {
        function_calling_config: WireFunctionCallingConfig {
            mode,
            allowed_function_names: allowed.map(|name| [name]),
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
