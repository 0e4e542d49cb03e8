//! Support for the code `#[tool]` and `agent!` generate. Not a public API: it may change at any time.

pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::schema::{output_schema, parameters_schema};

use std::fmt::Display;
use std::marker::PhantomData;
use std::sync::OnceLock;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::tool::{ArgumentIssue, ToolDef, ToolError, ToolOutput};

/// A lazily built tool definition, one per `#[tool]`.
pub type DefinitionCell = OnceLock<ToolDef>;

/// What the argument parser needs to know about one model-facing parameter to explain a mismatch.
pub struct FieldSpec {
    /// The JSON field name.
    pub name: &'static str,
    /// Whether leaving it out is an error.
    pub required: bool,
    /// Parses the field's value alone, returning the path inside it and the message on failure.
    pub check: fn(&Value) -> Option<(String, String)>,
}

/// Checks one field's value against its type.
pub fn check_field<T: DeserializeOwned>(value: &Value) -> Option<(String, String)> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => None,
        Err(error) => Some((render_path(error.path()), error.into_inner().to_string())),
    }
}

/// Parses a tool's raw arguments. The fast path is one `serde_json::from_str`; only when it fails does
/// the slower path run: it reads `null` for an optional parameter as "left out" (what OpenAI's strict
/// mode sends), and otherwise finds every field that is wrong, missing or unknown.
pub fn parse_arguments<T: DeserializeOwned>(
    raw: &str,
    fields: &[FieldSpec],
) -> Result<T, ToolError> {
    // Models send "" for "no arguments".
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    // Only an object: serde's derive would also take an array as positional fields.
    if raw.trim_start().starts_with('{') {
        match serde_json::from_str::<T>(raw) {
            Ok(arguments) => return Ok(arguments),
            Err(error) if !error.is_data() => {
                return Err(ToolError::InvalidJson {
                    message: error.to_string(),
                });
            }
            Err(_) => {}
        }
    }
    let mut value: Value = match serde_json::from_str(raw) {
        Ok(value) => value,
        Err(error) => {
            return Err(ToolError::InvalidJson {
                message: error.to_string(),
            });
        }
    };
    if let Value::Object(map) = &mut value {
        let before = map.len();
        map.retain(|key, value| {
            !(value.is_null()
                && fields
                    .iter()
                    .any(|field| field.name == key && !field.required))
        });
        if map.len() < before
            && let Ok(arguments) = T::deserialize(&value)
        {
            return Ok(arguments);
        }
    }
    Err(diagnose::<T>(raw, &value, fields))
}

fn diagnose<T: DeserializeOwned>(raw: &str, value: &Value, fields: &[FieldSpec]) -> ToolError {
    let Value::Object(map) = value else {
        return ToolError::arguments_not_an_object(value);
    };
    let mut issues = Vec::new();
    for field in fields {
        match map.get(field.name) {
            Some(value) => {
                if let Some((inner, message)) = (field.check)(value) {
                    let path = if inner.is_empty() {
                        field.name.to_owned()
                    } else {
                        format!("{}.{inner}", field.name)
                    };
                    issues.push(ArgumentIssue::new(path, message));
                }
            }
            None if field.required => {
                issues.push(ArgumentIssue::new(field.name, "missing required field"))
            }
            None => {}
        }
    }
    for key in map.keys() {
        if !fields.iter().any(|field| field.name == key) {
            let message = if fields.is_empty() {
                "unknown field: this tool takes no arguments".to_owned()
            } else {
                let expected: Vec<String> = fields
                    .iter()
                    .map(|field| format!("`{}`", field.name))
                    .collect();
                format!("unknown field, expected one of {}", expected.join(", "))
            };
            issues.push(ArgumentIssue::new(key.as_str(), message));
        }
    }
    if issues.is_empty() {
        // Field by field everything fits, so the problem spans fields (a duplicate key, say):
        // report what the whole parse says, with its path.
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        if let Err(error) = serde_path_to_error::deserialize::<_, T>(&mut deserializer) {
            let path = render_path(error.path());
            issues.push(ArgumentIssue::new(
                path,
                message_without_position(error.inner()),
            ));
        }
    }
    ToolError::InvalidArguments { issues }
}

fn render_path(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        let part = match segment {
            Segment::Seq { index } => index.to_string(),
            Segment::Map { key } => key.clone(),
            Segment::Enum { variant } => variant.clone(),
            Segment::Unknown => "?".to_owned(),
        };
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&part);
    }
    out
}

/// serde_json appends " at line L column C", which means nothing to a model reading a field path.
fn message_without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&suffix) {
        Some(message) if error.line() > 0 => message.to_owned(),
        _ => text,
    }
}

/// Compares two strings in a `const` context, for `agent!`'s duplicate-name check.
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut index = 0;
    while index < a.len() {
        if a[index] != b[index] {
            return false;
        }
        index += 1;
    }
    true
}

// What a tool's return value becomes, chosen by type with autoref-based specialization: generated
// code calls `(&&Kind(&value)).method()`, and an impl for `&Kind<X>` wins over one for `Kind<T>`.

/// Borrows a value so its type can pick an impl.
pub struct Kind<'a, T>(pub &'a T);

/// The return value is a `Result`.
pub struct ResultTag;
/// The return value is not a `Result`.
pub struct PlainTag;
/// Picks [`ResultTag`].
pub trait ResultKind {
    /// Classifies the return value.
    fn __result_kind(&self) -> ResultTag {
        ResultTag
    }
}
impl<T, E> ResultKind for &Kind<'_, Result<T, E>> {}
/// Picks [`PlainTag`].
pub trait PlainKind {
    /// Classifies the return value.
    fn __result_kind(&self) -> PlainTag {
        PlainTag
    }
}
impl<T> PlainKind for Kind<'_, T> {}

impl ResultTag {
    /// A `Result` stays itself.
    pub fn split<T, E>(self, value: Result<T, E>) -> Result<T, E> {
        value
    }
}
impl PlainTag {
    /// A plain value always succeeds.
    pub fn split<T>(self, value: T) -> Result<T, std::convert::Infallible> {
        Ok(value)
    }
}

/// The success value has a fixed meaning (text, nothing, a ready output).
pub struct ExactTag;
/// The success value is serialized as JSON.
pub struct JsonTag;
/// Picks [`ExactTag`].
pub trait ExactKind {
    /// Classifies the success value.
    fn __output_kind(&self) -> ExactTag {
        ExactTag
    }
}
impl ExactKind for &Kind<'_, String> {}
impl ExactKind for &Kind<'_, &str> {}
impl ExactKind for &Kind<'_, ()> {}
impl ExactKind for &Kind<'_, ToolOutput> {}
/// Picks [`JsonTag`].
pub trait JsonKind {
    /// Classifies the success value.
    fn __output_kind(&self) -> JsonTag {
        JsonTag
    }
}
impl<T> JsonKind for Kind<'_, T> {}

/// A success value with a fixed meaning.
pub trait ExactOutput {
    /// What the value means.
    fn into_output(self) -> ToolOutput;
}
impl ExactOutput for String {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Text(self)
    }
}
impl ExactOutput for &str {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Text(self.to_owned())
    }
}
impl ExactOutput for () {
    fn into_output(self) -> ToolOutput {
        ToolOutput::Done
    }
}
impl ExactOutput for ToolOutput {
    fn into_output(self) -> ToolOutput {
        self
    }
}

impl ExactTag {
    /// Text goes verbatim, `()` as done, a [`ToolOutput`] as it is.
    pub fn convert<T: ExactOutput>(self, value: T) -> Result<ToolOutput, ToolError> {
        Ok(value.into_output())
    }
}
impl JsonTag {
    /// Anything else is serialized.
    pub fn convert<T: Serialize>(self, value: T) -> Result<ToolOutput, ToolError> {
        ToolOutput::json(&value)
    }
}

/// The error is already a [`ToolError`].
pub struct ToolErrorTag;
/// The error displays.
pub struct DisplayTag;
/// Picks [`ToolErrorTag`].
pub trait ToolErrorKind {
    /// Classifies the error.
    fn __error_kind(&self) -> ToolErrorTag {
        ToolErrorTag
    }
}
impl ToolErrorKind for &Kind<'_, ToolError> {}
/// Picks [`DisplayTag`].
pub trait DisplayKind {
    /// Classifies the error.
    fn __error_kind(&self) -> DisplayTag {
        DisplayTag
    }
}
impl<E> DisplayKind for Kind<'_, E> {}

impl ToolErrorTag {
    /// A tool error stays itself.
    pub fn convert(self, error: ToolError) -> ToolError {
        error
    }
}
impl DisplayTag {
    /// Any other error becomes a failure with its message.
    pub fn convert<E: Display>(self, error: E) -> ToolError {
        ToolError::failed(error.to_string())
    }
}

// The output schema is chosen by type alone (no value exists when the definition is built), with the
// same autoref trick on a zero-sized `Probe<T>`: first the success type of the return type, then
// whether it has a schema.

/// Names a type so it can pick an impl.
pub struct Probe<T: ?Sized>(PhantomData<fn() -> T>);

impl<T: ?Sized> Probe<T> {
    /// A probe for `T`.
    pub const fn new() -> Self {
        Probe(PhantomData)
    }
}

impl<T: ?Sized> Default for Probe<T> {
    fn default() -> Self {
        Probe::new()
    }
}

/// The success type of a `Result`.
pub trait ResultSuccess<T> {
    /// Probes the success type.
    fn __success(&self) -> Probe<T> {
        Probe::new()
    }
}
impl<T, E> ResultSuccess<T> for &Probe<Result<T, E>> {}
/// Any other return type is its own success type.
pub trait PlainSuccess<T> {
    /// Probes the success type.
    fn __success(&self) -> Probe<T> {
        Probe::new()
    }
}
impl<T> PlainSuccess<T> for Probe<T> {}

/// A success type with a schema, which is the output schema when it describes an object.
pub trait WithOutputSchema {
    /// The output schema.
    fn __output_schema(&self) -> Option<Value>;
}
impl<T: schemars::JsonSchema> WithOutputSchema for &Probe<T> {
    fn __output_schema(&self) -> Option<Value> {
        output_schema::<T>()
    }
}
/// A success type without a schema has no output schema.
pub trait WithoutOutputSchema {
    /// No output schema.
    fn __output_schema(&self) -> Option<Value> {
        None
    }
}
impl<T> WithoutOutputSchema for Probe<T> {}

/// A type a tool parameter may have.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a tool parameter",
    label = "the model's JSON arguments cannot be parsed into `{Self}`, or it has no JSON schema",
    note = "a tool parameter must implement `serde::Deserialize` and `schemars::JsonSchema`: add `#[derive(Deserialize, JsonSchema)]` to it"
)]
pub trait ToolParameter {}
impl<T: DeserializeOwned + schemars::JsonSchema> ToolParameter for T {}

/// Fails to compile, at the parameter's type, when the type cannot be a tool parameter.
pub fn assert_tool_parameter<T: ToolParameter>() {}
