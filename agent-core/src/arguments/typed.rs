//! Parsing a tool's raw JSON arguments into its typed parameters, and explaining every way they do
//! not fit: the field paths and messages the model reads.

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::fit::drop_optional_nulls;
use crate::argument_issue::{ArgumentIssue, IssueKind, issue_of};
use crate::schema::parameters_schema;
use crate::tool_error::ToolError;

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
            Err(Strict::Invalid(error)) => vec![ArgumentIssue::new("", issue_of(&error))],
        },
        Err(error) => vec![ArgumentIssue::new(
            render_path(error.path()),
            issue_of(error.inner()),
        )],
    }
}

/// Why a strict parse failed.
pub(crate) enum Strict<E> {
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
pub(crate) fn deserialize_strictly<'de, T, D>(deserializer: D) -> Result<T, Strict<D::Error>>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    deserialize_strictly_saying(deserializer, None)
}

/// [`deserialize_strictly`], telling the model which fields there are (`top_level`) about an
/// unknown field of the arguments object itself, rather than the general word.
pub(crate) fn deserialize_strictly_saying<'de, T, D>(
    deserializer: D,
    top_level: Option<&[String]>,
) -> Result<T, Strict<D::Error>>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    use serde_ignored::Path;
    let mut unknown = Vec::new();
    let value = serde_ignored::deserialize(deserializer, |path| {
        let expected = match (top_level, &path) {
            (
                Some(names),
                Path::Map {
                    parent: Path::Root, ..
                },
            ) => Some(names.to_vec()),
            _ => None,
        };
        let kind = IssueKind::UnknownField {
            field: None,
            expected,
        };
        unknown.push(ArgumentIssue::new(ignored_path(&path), kind));
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
/// the slower path run: it reads `null` for an optional parameter, or an optional field at any
/// depth, as "left out" (what OpenAI's strict mode sends), and otherwise finds every field that is
/// wrong, missing or unknown.
///
/// Generic only where it must be: this is compiled again for every `#[tool]` in a user's crate,
/// so everything that does not name `T` (the slow path, the diagnosis) is in plain functions,
/// compiled once in agent-core.
pub fn parse_arguments<T: DeserializeOwned + JsonSchema>(
    raw: &str,
    fields: &[FieldSpec],
) -> Result<T, ToolError> {
    parse_arguments_with(raw, fields, parse_strictly::<T>)
}

/// [`parse_arguments`] for parameters that are all [`flat`](FieldSpec::flat): they hold no
/// struct, so no field can be dropped inside them and the strict parser is never needed (unknown
/// fields of the arguments object itself are refused by the argument struct). `#[tool]` calls this
/// when it can tell from the types as written; a user's build then compiles the argument struct's
/// `Deserialize` for one deserializer, as for a hand-written tool.
pub fn parse_flat_arguments<T: DeserializeOwned + JsonSchema>(
    raw: &str,
    fields: &[FieldSpec],
) -> Result<T, ToolError> {
    parse_arguments_with(raw, fields, |raw| {
        serde_json::from_str::<T>(raw).map_err(Strict::Invalid)
    })
}

/// [`parse_arguments`], strict parses made by `parse_strictly`.
fn parse_arguments_with<T: DeserializeOwned + JsonSchema>(
    raw: &str,
    fields: &[FieldSpec],
    parse_strictly: fn(&str) -> Result<T, Strict<serde_json::Error>>,
) -> Result<T, ToolError> {
    // Models send "" for "no arguments". (Most arguments start with their brace: no trimming.)
    let raw = if !raw.starts_with('{') && raw.trim().is_empty() {
        "{}"
    } else {
        raw
    };
    if let Some(strict) = fast_path(raw, fields) {
        let parsed = if strict {
            parse_strictly(raw)
        } else {
            serde_json::from_str::<T>(raw).map_err(Strict::Invalid)
        };
        match parsed {
            Ok(arguments) => return Ok(arguments),
            Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
            Err(Strict::Invalid(error)) if !error.is_data() => {
                return Err(ToolError::invalid_json(&error));
            }
            Err(Strict::Invalid(_)) => {}
        }
    }
    let mut arguments = None;
    let outcome = parse_slowly(raw, fields, parameters_schema::<T>, &mut |text| {
        arguments = Some(parse_strictly(text)?);
        Ok(())
    });
    match (arguments, outcome) {
        // Kept by the one parse that succeeded, wherever it was.
        (Some(arguments), _) => Ok(arguments),
        (None, Err(error)) => Err(error),
        // Never: `parse_slowly` succeeds only through `parse`, which keeps the arguments.
        (None, Ok(())) => Err(ToolError::InvalidArguments {
            issues: vec![ArgumentIssue::new("", IssueKind::DoesNotFit)],
        }),
    }
}

/// Whether the arguments can take the fast path (only an object: serde's derive would also take
/// an array as positional fields), and whether it must be the strict parser: fields can only be
/// dropped inside a struct, so parameters that hold none, or arguments with no nested object (a
/// plain loop beats a call into memchr for a few dozen bytes), skip its cost.
fn fast_path(raw: &str, fields: &[FieldSpec]) -> Option<bool> {
    let inside = match raw.strip_prefix('{') {
        Some(inside) => inside,
        None => raw.trim_start().strip_prefix('{')?,
    };
    Some(!fields.iter().all(|field| field.flat) && inside.bytes().any(|byte| byte == b'{'))
}

/// Deserializes `T` from JSON text strictly (see [`deserialize_strictly`]), to its end.
///
/// Every strict parse of a tool's arguments comes through here, even those that start from a
/// `Value` (written back to text first, on paths that are rare): the generated argument struct's
/// `Deserialize` is then compiled for two deserializers (this and the plain fast parse) rather
/// than one per path, which was most of what `#[tool]` cost a user's build. Flat parameters need
/// no strict parse at all ([`parse_flat_arguments`]).
fn parse_strictly<T: DeserializeOwned>(raw: &str) -> Result<T, Strict<serde_json::Error>> {
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let arguments = deserialize_strictly::<T, _>(&mut deserializer)?;
    deserializer.end().map_err(Strict::Invalid)?;
    Ok(arguments)
}

/// The arguments' parser when the fast path did not take them: `parse` parses a JSON text
/// strictly into the arguments (keeping them), `schema` makes their schema. Tries again without
/// the `null`s of optional fields, then explains what does not fit.
fn parse_slowly(
    raw: &str,
    fields: &[FieldSpec],
    schema: fn() -> Value,
    parse: &mut dyn FnMut(&str) -> Result<(), Strict<serde_json::Error>>,
) -> Result<(), ToolError> {
    let mut value: Value = match serde_json::from_str(raw) {
        Ok(value) => value,
        Err(error) => return Err(ToolError::invalid_json(&error)),
    };
    let (dropped, nested_null) = match &mut value {
        Value::Object(map) => {
            let before = map.len();
            map.retain(|key, value| {
                !(value.is_null()
                    && fields
                        .iter()
                        .any(|field| field.name == key && !field.required))
            });
            (map.len() < before, map.values().any(holds_null))
        }
        _ => (false, false),
    };
    if dropped {
        match parse(&value.to_string()) {
            Ok(()) => return Ok(()),
            Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
            Err(Strict::Invalid(_)) => {}
        }
    }
    // Strict dialects make optional fields nullable at every depth: `null` deeper down means "left
    // out" too, where the parameters' schema (made only now, on this rare path) says it may be.
    if nested_null && let Value::Object(map) = &value {
        let mut cleaned = map.clone();
        if drop_optional_nulls(&mut cleaned, &schema()) {
            match parse(&Value::Object(cleaned).to_string()) {
                Ok(()) => return Ok(()),
                Err(Strict::Unknown(issues)) => return Err(ToolError::InvalidArguments { issues }),
                Err(Strict::Invalid(_)) => {}
            }
        }
    }
    Err(diagnose(raw, &value, fields, parse))
}

fn diagnose(
    raw: &str,
    value: &Value,
    fields: &[FieldSpec],
    parse: &mut dyn FnMut(&str) -> Result<(), Strict<serde_json::Error>>,
) -> ToolError {
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
                    issues.push(ArgumentIssue::new(path, issue.kind));
                }
            }
            None if field.required => issues.push(ArgumentIssue::new(
                field.name,
                IssueKind::Missing { field: None },
            )),
            None => {}
        }
    }
    for key in map.keys() {
        if !fields.iter().any(|field| field.name == key) {
            let expected = fields.iter().map(|field| field.name.to_owned()).collect();
            let kind = IssueKind::UnknownField {
                field: None,
                expected: Some(expected),
            };
            issues.push(ArgumentIssue::new(key.as_str(), kind));
        }
    }
    if issues.is_empty() {
        // Field by field everything fits, so the problem spans fields (a duplicate key, say) and
        // lies in the arguments object itself: report what the whole parse says.
        match parse(raw) {
            Err(Strict::Invalid(error)) => issues.push(ArgumentIssue::new("", issue_of(&error))),
            Err(Strict::Unknown(unknown)) => issues = unknown,
            Ok(()) => {}
        }
    }
    ToolError::InvalidArguments { issues }
}

/// Whether a `null` is anywhere inside `value`.
fn holds_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(holds_null),
        Value::Object(fields) => fields.values().any(holds_null),
        _ => false,
    }
}

pub(crate) fn render_path(path: &serde_path_to_error::Path) -> String {
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
