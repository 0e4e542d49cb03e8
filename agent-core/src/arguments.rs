//! Parsing a tool's raw JSON arguments into its typed parameters, and explaining every way they do
//! not fit: the field paths and messages the model reads.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::tool_error::{ArgumentIssue, ToolError};

/// What the argument parser needs to know about one model-facing parameter to explain a mismatch.
pub struct FieldSpec {
    /// The JSON field name.
    pub name: &'static str,
    /// Whether leaving it out is an error.
    pub required: bool,
    /// Whether the type can hold no struct, so no field inside it can be silently dropped
    /// (`String`, numbers, `Option`s and lists of them: `#[tool]` decides from how it is written).
    pub flat: bool,
    /// Parses the field's value alone: the problems inside it, each with its path inside it.
    pub check: fn(&Value) -> Vec<ArgumentIssue>,
}

/// Checks one field's value against its type: the first error with its path, or else every
/// unknown field inside it.
pub fn check_field<T: DeserializeOwned>(value: &Value) -> Vec<ArgumentIssue> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => match deserialize_strictly::<T, _>(value) {
            Ok(_) => Vec::new(),
            Err(Strict::Unknown(issues)) => issues,
            Err(Strict::Invalid(error)) => vec![ArgumentIssue::new("", error.to_string())],
        },
        Err(error) => vec![ArgumentIssue::new(
            render_path(error.path()),
            error.into_inner().to_string(),
        )],
    }
}

/// What the model is told about a field no parameter has, inside a parameter's value.
const UNKNOWN_FIELD: &str = "unknown field; leave it out or check its spelling against the schema";

/// Why a strict parse failed.
enum Strict<E> {
    /// The value does not fit the type.
    Invalid(E),
    /// It fits, but fields the type does not have were given (serde would drop them silently).
    Unknown(Vec<ArgumentIssue>),
}

/// Deserializes `T`, treating every field the type would silently ignore, at any depth, as an
/// error: a misspelt `agee` in a nested struct must not quietly become `age: None`. A type that
/// wants extra fields keeps them (a `#[serde(flatten)]` map takes them), so they are not ignored.
/// What serde reads through its own buffer (tagged and untagged enums, flattened structs) is out of
/// sight: there it drops unknown fields as it always does.
fn deserialize_strictly<'de, T, D>(deserializer: D) -> Result<T, Strict<D::Error>>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    deserialize_strictly_saying(deserializer, None)
}

/// [`deserialize_strictly`], telling the model `top_level` about an unknown field of the arguments
/// object itself (which fields there are), rather than the general word.
fn deserialize_strictly_saying<'de, T, D>(
    deserializer: D,
    top_level: Option<&str>,
) -> Result<T, Strict<D::Error>>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    use serde_ignored::Path;
    let mut unknown = Vec::new();
    let value = serde_ignored::deserialize(deserializer, |path| {
        let message = match (top_level, &path) {
            (
                Some(message),
                Path::Map {
                    parent: Path::Root, ..
                },
            ) => message,
            _ => UNKNOWN_FIELD,
        };
        unknown.push(ArgumentIssue::new(ignored_path(&path), message));
    })
    .map_err(Strict::Invalid)?;
    if unknown.is_empty() {
        Ok(value)
    } else {
        Err(Strict::Unknown(unknown))
    }
}

/// A path as the other issues write it: names and indices joined by dots, with nothing for the
/// `Option`s and newtypes it passes through.
fn ignored_path(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    let (parent, segment) = match path {
        Path::Root => return String::new(),
        Path::Seq { parent, index } => (parent, index.to_string()),
        Path::Map { parent, key } => (parent, key.clone()),
        Path::Some { parent }
        | Path::NewtypeStruct { parent }
        | Path::NewtypeVariant { parent } => {
            return ignored_path(parent);
        }
    };
    let mut out = ignored_path(parent);
    if !out.is_empty() {
        out.push('.');
    }
    out.push_str(&segment);
    out
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
    if let Some(inside) = raw.trim_start().strip_prefix('{') {
        // Fields can only be dropped inside a struct: parameters that hold none, or arguments with
        // no nested object (a plain loop beats a call into memchr for a few dozen bytes), skip the
        // strict parser's cost.
        let strict =
            !fields.iter().all(|field| field.flat) && inside.bytes().any(|byte| byte == b'{');
        let parsed = if strict {
            let mut deserializer = serde_json::Deserializer::from_str(raw);
            deserialize_strictly::<T, _>(&mut deserializer).and_then(|arguments| {
                deserializer
                    .end()
                    .map(|()| arguments)
                    .map_err(Strict::Invalid)
            })
        } else {
            serde_json::from_str::<T>(raw).map_err(Strict::Invalid)
        };
        match parsed {
            Ok(arguments) => return Ok(arguments),
            Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
            Err(Strict::Invalid(error)) if !error.is_data() => {
                return Err(ToolError::InvalidJson {
                    message: error.to_string(),
                });
            }
            Err(Strict::Invalid(_)) => {}
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
        if map.len() < before {
            match deserialize_strictly::<T, _>(&value) {
                Ok(arguments) => return Ok(arguments),
                Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
                Err(Strict::Invalid(_)) => {}
            }
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
                for issue in (field.check)(value) {
                    let path = if issue.path.is_empty() {
                        field.name.to_owned()
                    } else {
                        format!("{}.{}", field.name, issue.path)
                    };
                    issues.push(ArgumentIssue::new(path, issue.message));
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
            let message = unknown_top_level_field(fields.iter().map(|field| field.name));
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

/// What the model is told about an argument no parameter has: which ones there are.
fn unknown_top_level_field<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> String {
    if names.len() == 0 {
        return "unknown field: this tool takes no arguments".to_owned();
    }
    let expected: Vec<String> = names.map(|name| format!("`{name}`")).collect();
    format!("unknown field, expected one of {}", expected.join(", "))
}

/// What the parser knows, from its schema, of a type the arguments parse into whole (a closure
/// tool's argument struct, see [`tool_fn`](crate::tool_fn)): its fields are not known to the code
/// as `#[tool]`'s parameters are.
#[derive(Debug, Clone)]
pub(crate) struct SchemaFields {
    /// The fields that leaving out is an error.
    required: Vec<String>,
    /// Whether a field not in the schema is unknown (rather than taken, by a flattened map, or
    /// unjudgeable, when the schema is not an object's).
    closed: bool,
    /// The fields in the schema.
    names: Vec<String>,
    /// What the model is told about a field not in the schema.
    unknown: String,
}

impl SchemaFields {
    /// Reads the fields off an arguments schema (as [`parameters_schema`](crate::parameters_schema)
    /// makes it); `an_object` says whether the type's own schema describes an object (a
    /// `serde_json::Value`'s does not, though its arguments schema is an object's, of anything).
    pub(crate) fn of(schema: &Value, an_object: bool) -> Self {
        let properties = schema.get("properties").and_then(Value::as_object);
        let names: Vec<String> = properties
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|required| {
                required
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let closed = an_object
            && properties.is_some()
            && matches!(
                schema.get("additionalProperties"),
                None | Some(Value::Bool(false))
            )
            && !["oneOf", "anyOf", "allOf", "$ref"]
                .iter()
                .any(|key| schema.get(key).is_some());
        SchemaFields {
            unknown: unknown_top_level_field(names.iter().map(String::as_str)),
            required,
            closed,
            names,
        }
    }

    /// Whether a field the schema does not name is an error.
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }
}

/// Parses a tool's raw arguments into one type of the user's, whose fields the parser knows only
/// from its schema: as [`parse_arguments`] does for `#[tool]`, the fast path is one strict parse
/// (unknown fields at any depth are errors, with their paths), `null` for a field that is not
/// required means "left out", and otherwise the model is told every missing and unknown field and
/// the first field whose value does not fit, each with its path.
pub(crate) fn parse_whole<T: DeserializeOwned>(
    raw: &str,
    fields: &SchemaFields,
) -> Result<T, ToolError> {
    let raw = if raw.trim().is_empty() { "{}" } else { raw };
    let top_level = fields.closed.then_some(fields.unknown.as_str());
    // Only an object: serde's derive would also take an array as positional fields.
    if raw.trim_start().starts_with('{') {
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        let parsed = deserialize_strictly_saying::<T, _>(&mut deserializer, top_level).and_then(
            |arguments| {
                deserializer
                    .end()
                    .map(|()| arguments)
                    .map_err(Strict::Invalid)
            },
        );
        match parsed {
            Ok(arguments) => return Ok(arguments),
            Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
            Err(Strict::Invalid(error)) if !error.is_data() => {
                return Err(ToolError::InvalidJson {
                    message: error.to_string(),
                });
            }
            Err(Strict::Invalid(_)) => {}
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
    let Value::Object(map) = &mut value else {
        return Err(ToolError::arguments_not_an_object(&value));
    };
    let before = map.len();
    // `null` for a field that may be left out means it was; a required field's `null` stays, to be
    // reported.
    map.retain(|key, value| !value.is_null() || fields.required.contains(key));
    if map.len() < before {
        match deserialize_strictly_saying::<T, _>(&value, top_level) {
            Ok(arguments) => return Ok(arguments),
            Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
            Err(Strict::Invalid(_)) => {}
        }
    }
    Err(diagnose_whole::<T>(&value, fields))
}

/// Every missing and unknown field, by the schema, and the first value that does not fit, by serde.
fn diagnose_whole<T: DeserializeOwned>(value: &Value, fields: &SchemaFields) -> ToolError {
    let mut issues = Vec::new();
    if let Value::Object(map) = value {
        for name in &fields.required {
            if !map.contains_key(name) {
                issues.push(ArgumentIssue::new(name.as_str(), "missing required field"));
            }
        }
        if fields.closed {
            for key in map.keys() {
                if !fields.names.contains(key) {
                    issues.push(ArgumentIssue::new(key.as_str(), fields.unknown.as_str()));
                }
            }
        }
    }
    if let Err(error) = serde_path_to_error::deserialize::<_, T>(value) {
        let path = render_path(error.path());
        // An error about the object itself (a missing or unknown field) is already said above,
        // with the field's path.
        if !path.is_empty() || issues.is_empty() {
            issues.push(ArgumentIssue::new(path, error.into_inner().to_string()));
        }
    }
    if issues.is_empty() {
        // serde took the value after all (it only failed through the JSON text): say what it said.
        issues.push(ArgumentIssue::new(
            "",
            "the arguments do not fit the tool's parameters",
        ));
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
