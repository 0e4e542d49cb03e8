//! Parsing a tool's raw JSON arguments into its typed parameters, and explaining every way they do
//! not fit: the field paths and messages the model reads.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, DeserializeSeed};
use serde_json::{Map, Value};

use super::drop_optional_nulls;
use super::serde_errors::issue_of;
use super::slots::{ArgumentsSeed, Slots};
use super::walk::{MAX_ISSUES, Walk};
use crate::reasons::argument_issue::{ArgumentIssue, IssueKind};
use crate::reasons::tool_error::ToolError;
use crate::schema::{arguments_schema_with, root_schema};

/// One model-facing parameter of a `#[tool]`: a row of the table the macro generates, from which
/// the arguments are parsed, explained when they do not fit, and described in the schema. What
/// depends on the parameter's type is a function of that type alone, shared by every tool with a
/// parameter of the type; the rest is plain data.
#[derive(Clone, Copy)]
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
    /// The type's schema, as a property (a reference into `$defs` for a type with a name).
    pub schema: fn(&mut SchemaGenerator) -> Schema,
    /// Whether schemars counts the type as optional (an `Option`): then it is not required.
    pub optional: fn() -> bool,
    /// The parameter's description; empty for none.
    pub description: &'static str,
    /// For a parameter with a default: the default as JSON, when it serializes.
    pub default: Option<fn() -> Option<Value>>,
}

impl FieldSpec {
    /// The row of a parameter of type `P` named `name`.
    pub const fn of<P: DeserializeOwned + JsonSchema>(
        name: &'static str,
        required: bool,
        flat: bool,
        description: &'static str,
    ) -> Self {
        FieldSpec {
            name,
            required,
            flat,
            check: check_field::<P>,
            schema: SchemaGenerator::subschema_for::<P>,
            // What schemars' derive asks to decide whether a field is required: the one hidden
            // item of schemars this crate uses, as the derived code did.
            optional: P::_schemars_private_is_option,
            description,
            default: None,
        }
    }

    /// The row of a parameter with a default; `value` is the default as JSON, when it serializes.
    pub const fn with_default(mut self, value: fn() -> Option<Value>) -> Self {
        self.default = Some(value);
        self
    }
}

/// The JSON schema of a tool's arguments, from its table: the schema schemars' derive makes for a
/// struct of the parameters (`deny_unknown_fields`, each field's description and default), as
/// [`parameters_schema`](crate::parameters_schema) delivers it.
pub fn arguments_schema(fields: &[FieldSpec]) -> Value {
    arguments_schema_with(|generator| {
        let mut object = Map::new();
        object.insert("type".into(), "object".into());
        object.insert("additionalProperties".into(), false.into());
        for field in fields {
            let mut property = (field.schema)(generator);
            if !field.description.is_empty() {
                property.insert("description".into(), field.description.into());
            }
            if let Some(default) = field.default.and_then(|default| default()) {
                property.insert("default".into(), default);
            }
            if let Some(properties) = object
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
            {
                properties.insert(field.name.to_owned(), property.into());
            }
            let optional = field.default.is_some() || (field.optional)();
            if !optional
                && let Some(required) = object
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()))
                    .as_array_mut()
            {
                required.push(field.name.into());
            }
        }
        object
    })
}

/// Checks one field's value against its type: every problem inside it, each with its path inside
/// it. A value serde takes is checked for unknown fields; an object or a list serde refuses is
/// walked along the type's schema, so a misspelt field and the field it leaves missing are both
/// named (serde would stop at the first). A plain value, and what the schema cannot say (a range,
/// a custom deserializer), get serde's error.
pub fn check_field<T: DeserializeOwned + JsonSchema>(value: &Value) -> Vec<ArgumentIssue> {
    match serde_path_to_error::deserialize::<_, T>(value) {
        Ok(_) => match deserialize_strictly::<T, _>(value) {
            Ok(_) => Vec::new(),
            Err(Strict::Unknown(issues)) => issues,
            Err(Strict::Invalid(error)) => vec![ArgumentIssue::new("", issue_of(&error))],
        },
        Err(error) => {
            // A value with fields or items inside may hold several problems: all of them.
            let nested = value.is_object() || value.is_array();
            let mut issues = if nested {
                schema_issues::<T>(value)
            } else {
                Vec::new()
            };
            if issues.is_empty() {
                issues.push(ArgumentIssue::new(
                    render_path(error.path()),
                    issue_of(error.inner()),
                ));
            }
            issues
        }
    }
}

/// Where `value` departs from `T`'s schema, each problem at its path inside the value.
fn schema_issues<T: JsonSchema>(value: &Value) -> Vec<ArgumentIssue> {
    let Some(schema) = root_schema::<T>().map(Value::Object) else {
        return Vec::new();
    };
    let walk = Walk { root: &schema };
    let mut issues = Vec::new();
    walk.check(value, &schema, "", &mut issues);
    if issues.len() >= MAX_ISSUES {
        issues.truncate(MAX_ISSUES);
        issues.push(ArgumentIssue::new("", IssueKind::MoreNotListed));
    }
    issues
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
    deserialize_seed_strictly(std::marker::PhantomData::<T>, deserializer, top_level)
}

/// [`deserialize_strictly_saying`] of what `seed` reads.
fn deserialize_seed_strictly<'de, T, D>(
    seed: T,
    deserializer: D,
    top_level: Option<&[String]>,
) -> Result<T::Value, Strict<D::Error>>
where
    T: DeserializeSeed<'de>,
    D: serde::Deserializer<'de>,
{
    use serde_ignored::Path;
    let mut unknown = Vec::new();
    let mut notice = |path: Path<'_>| {
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
    };
    let value = seed
        .deserialize(serde_ignored::Deserializer::new(deserializer, &mut notice))
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

/// Parses a tool's raw arguments into its parameters (`slots`, described row by row by `fields`).
/// The fast path is one pass of serde_json over the text; only when it fails does the slower path
/// run: it reads `null` for an optional parameter, or an optional field at any depth, as "left
/// out" (what OpenAI's strict mode sends), and otherwise finds every field that is wrong, missing
/// or unknown.
///
/// Generic only in the parameters' types: tools whose parameters have the same types share one
/// instance, and everything that does not name them (the slow path, the diagnosis, the schema) is
/// in plain functions, compiled once in agent-core.
pub fn parse_arguments<S: Slots>(
    raw: &str,
    fields: &[FieldSpec],
    slots: S,
) -> Result<S::Values, ToolError> {
    parse_arguments_with(raw, fields, slots, parse_strictly::<S>)
}

/// [`parse_arguments`] for parameters that are all [`flat`](FieldSpec::flat): they hold no
/// struct, so no field can be dropped inside them and the strict parser is never needed (unknown
/// fields of the arguments object itself are refused all the same). `#[tool]` calls this when it
/// can tell from the types as written; the parameters are then read by one deserializer only.
pub fn parse_flat_arguments<S: Slots>(
    raw: &str,
    fields: &[FieldSpec],
    slots: S,
) -> Result<S::Values, ToolError> {
    parse_arguments_with(raw, fields, slots, parse_plainly::<S>)
}

/// How one parse of the arguments' text is made: plainly or strictly.
type Parse<S> =
    fn(&str, &[FieldSpec], S) -> Result<<S as Slots>::Values, Strict<serde_json::Error>>;

/// [`parse_arguments`], strict parses made by `parse_strictly`.
fn parse_arguments_with<S: Slots>(
    raw: &str,
    fields: &[FieldSpec],
    slots: S,
    parse_strictly: Parse<S>,
) -> Result<S::Values, ToolError> {
    // Models send "" for "no arguments". (Most arguments start with their brace: no trimming.)
    let raw = if !raw.starts_with('{') && raw.trim().is_empty() {
        "{}"
    } else {
        raw
    };
    if let Some(strict) = fast_path(raw, fields) {
        let parsed = if strict {
            parse_strictly(raw, fields, slots)
        } else {
            parse_plainly(raw, fields, slots)
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
    let outcome = parse_slowly(raw, fields, &mut |text| {
        arguments = Some(parse_strictly(text, fields, slots)?);
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

/// Reads the arguments from JSON text, to its end: what `serde_json::from_str` does.
#[inline]
fn parse_plainly<S: Slots>(
    raw: &str,
    fields: &[FieldSpec],
    slots: S,
) -> Result<S::Values, Strict<serde_json::Error>> {
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let arguments = ArgumentsSeed { fields, slots }
        .deserialize(&mut deserializer)
        .map_err(Strict::Invalid)?;
    deserializer.end().map_err(Strict::Invalid)?;
    Ok(arguments)
}

/// Reads the arguments from JSON text strictly (see [`deserialize_strictly`]), to its end.
///
/// Every strict parse of a tool's arguments comes through here, even those that start from a
/// `Value` (written back to text first, on paths that are rare): the parameters are then read by
/// two deserializers (this and the plain fast parse) rather than one per path. Flat parameters
/// need no strict parse at all ([`parse_flat_arguments`]).
fn parse_strictly<S: Slots>(
    raw: &str,
    fields: &[FieldSpec],
    slots: S,
) -> Result<S::Values, Strict<serde_json::Error>> {
    let mut deserializer = serde_json::Deserializer::from_str(raw);
    let arguments =
        deserialize_seed_strictly(ArgumentsSeed { fields, slots }, &mut deserializer, None)?;
    deserializer.end().map_err(Strict::Invalid)?;
    Ok(arguments)
}

/// The arguments' parser when the fast path did not take them: `parse` parses a JSON text
/// strictly into the arguments (keeping them). Tries again without the `null`s of optional
/// fields, then explains what does not fit.
fn parse_slowly(
    raw: &str,
    fields: &[FieldSpec],
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
        if drop_optional_nulls(&mut cleaned, &arguments_schema(fields)) {
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
