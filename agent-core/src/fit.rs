//! Reading a JSON text into a type whose fields the code knows only from its schema: a closure
//! tool's argument struct ([`tool_fn`](crate::tool_fn)) and a typed run's output. The common case is
//! one parse; when it fails, every problem is found with its path, by walking the value along the
//! schema, for the model to read.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::arguments::{
    Strict, deserialize_strictly_saying, message_without_position, render_path,
    unknown_field_expecting,
};
use crate::tool_error::ArgumentIssue;

/// What the parser knows of a type from its JSON schema (draft 2020-12, as schemars makes it):
/// made once per type, used for every value read.
#[derive(Debug, Clone)]
pub(crate) struct SchemaFit {
    schema: Value,
    /// Whether a field the root does not name is an error (rather than taken by a flattened map,
    /// or unjudgeable when the schema is not an object's).
    closed: bool,
    /// What the model is told about such a field: which ones there are.
    unknown: String,
    /// Whether every field of every object is required: then a misspelt field cannot be dropped
    /// silently (it is missing), and a value is read without the strict parser.
    every_field_required: bool,
}

/// Why a text could not be read as the type.
#[derive(Debug)]
pub(crate) enum Unfit {
    /// It is not JSON: the parser's message.
    Json(String),
    /// It is JSON but not an object.
    NotAnObject(Value),
    /// It does not fit: every problem, each with its path.
    Issues(Vec<ArgumentIssue>),
}

impl SchemaFit {
    /// What `schema` says; `an_object` whether the type's own schema describes an object (a
    /// `serde_json::Value`'s does not, though an arguments schema made from it is an object's).
    pub(crate) fn of(schema: Value, an_object: bool) -> Self {
        let properties = schema.get("properties").and_then(Value::as_object);
        let closed = an_object && is_closed(&schema);
        let unknown = unknown_field_expecting(
            properties
                .map(|properties| properties.keys().map(String::as_str).collect())
                .unwrap_or_default(),
        );
        SchemaFit {
            closed,
            unknown,
            every_field_required: every_field_required(&schema),
            schema,
        }
    }

    /// The schema.
    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }

    /// Whether a field the root does not name is an error.
    pub(crate) fn closed(&self) -> bool {
        self.closed
    }

    /// Reads `raw` as a `T`: at once when it fits; otherwise `null` for a field that may be left
    /// out counts as left out (what strict dialects send), and failing that, every missing,
    /// unknown or mistyped field is reported with its path (or, when the schema cannot say what is
    /// wrong, serde's first error with its path).
    pub(crate) fn parse<T: DeserializeOwned>(&self, raw: &str) -> Result<T, Unfit> {
        let top_level = self.closed.then_some(self.unknown.as_str());
        // Only an object: serde's derive would also take an array as positional fields.
        if raw.trim_start().starts_with('{') {
            let parsed = if self.every_field_required {
                serde_json::from_str::<T>(raw).map_err(Strict::Invalid)
            } else {
                let mut deserializer = serde_json::Deserializer::from_str(raw);
                deserialize_strictly_saying::<T, _>(&mut deserializer, top_level)
                    .and_then(|value| deserializer.end().map(|()| value).map_err(Strict::Invalid))
            };
            match parsed {
                Ok(value) => return Ok(value),
                Err(Strict::Unknown(issues)) => return Err(Unfit::Issues(issues)),
                Err(Strict::Invalid(error)) if !error.is_data() => {
                    return Err(Unfit::Json(error.to_string()));
                }
                Err(Strict::Invalid(_)) => {}
            }
        }
        let mut value: Value =
            serde_json::from_str(raw).map_err(|error| Unfit::Json(error.to_string()))?;
        if !value.is_object() {
            return Err(Unfit::NotAnObject(value));
        }
        let walk = Walk {
            root: &self.schema,
            top_level: &self.unknown,
        };
        if walk.drop_optional_nulls(&mut value, &self.schema) {
            match deserialize_strictly_saying::<T, _>(&value, top_level) {
                Ok(fitting) => return Ok(fitting),
                Err(Strict::Unknown(issues)) => return Err(Unfit::Issues(issues)),
                Err(Strict::Invalid(_)) => {}
            }
        }
        let mut issues = Vec::new();
        walk.check(&value, &self.schema, "", &mut issues);
        if issues.is_empty()
            && let Err(error) = serde_path_to_error::deserialize::<_, T>(&value)
        {
            // The schema cannot say it (a range, a custom deserializer): serde's own words.
            issues.push(ArgumentIssue::new(
                render_path(error.path()),
                message_without_position(error.inner()),
            ));
        }
        if issues.is_empty() {
            // serde takes the value after all: it failed only through the text.
            issues.push(ArgumentIssue::new("", "the value does not fit the schema"));
        }
        Err(Unfit::Issues(issues))
    }
}

/// Whether an object schema lists its fields and takes no others: serde would drop any other.
fn is_closed(schema: &Value) -> bool {
    schema.get("properties").is_some_and(Value::is_object)
        && matches!(
            schema.get("additionalProperties"),
            None | Some(Value::Bool(false))
        )
        && !["oneOf", "anyOf", "allOf", "$ref"]
            .iter()
            .any(|key| schema.get(key).is_some())
}

/// Whether every object schema anywhere in `schema` requires all of its properties.
fn every_field_required(schema: &Value) -> bool {
    match schema {
        Value::Object(node) => {
            let required = node.get("required").and_then(Value::as_array);
            let all_required = match node.get("properties").and_then(Value::as_object) {
                Some(properties) => properties.keys().all(|name| {
                    required.is_some_and(|required| required.iter().any(|r| r == name.as_str()))
                }),
                None => true,
            };
            all_required && node.values().all(every_field_required)
        }
        Value::Array(items) => items.iter().all(every_field_required),
        _ => true,
    }
}

/// Finds where a value departs from its schema, by the keywords that say what a type is (`type`,
/// `enum`, `const`, `required`, `properties`, closed objects, `items`, `anyOf`/`oneOf`, `$ref` into
/// `$defs`). Bounds and formats are left to serde.
struct Walk<'a> {
    root: &'a Value,
    /// What the model is told about an unknown field at the root.
    top_level: &'a str,
}

impl Walk<'_> {
    fn check(&self, value: &Value, schema: &Value, path: &str, issues: &mut Vec<ArgumentIssue>) {
        let schema = self.resolve(schema);
        let Some(node) = schema.as_object() else {
            return;
        };
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = node.get(keyword) {
                let fits = branches.iter().any(|branch| {
                    let mut inner = Vec::new();
                    self.check(value, branch, path, &mut inner);
                    inner.is_empty()
                });
                if !fits {
                    let message = match self.allowed_values(branches) {
                        // An enum whose variants have doc comments: one `const` per variant.
                        Some(allowed) => one_of(&allowed, value),
                        None => format!(
                            "{} does not match any of the allowed shapes",
                            kind_of(value)
                        ),
                    };
                    issues.push(ArgumentIssue::new(path, message));
                }
                return;
            }
        }
        if let Some(Value::Array(allowed)) = node.get("enum")
            && !allowed.contains(value)
        {
            let allowed: Vec<&Value> = allowed.iter().collect();
            issues.push(ArgumentIssue::new(path, one_of(&allowed, value)));
            return;
        }
        if let Some(expected) = node.get("const")
            && expected != value
        {
            issues.push(ArgumentIssue::new(
                path,
                format!("expected {expected}, got {value}"),
            ));
            return;
        }
        if let Some(types) = node.get("type")
            && !has_type(value, types)
        {
            issues.push(ArgumentIssue::new(
                path,
                format!("expected {}, got {}", type_names(types), shown(value)),
            ));
            return;
        }
        match value {
            Value::Object(fields) => self.check_object(fields, schema, path, issues),
            Value::Array(items) => {
                if let Some(item_schema) = node.get("items") {
                    for (index, item) in items.iter().enumerate() {
                        self.check(item, item_schema, &join(path, &index.to_string()), issues);
                    }
                }
            }
            _ => {}
        }
    }

    fn check_object(
        &self,
        fields: &serde_json::Map<String, Value>,
        schema: &Value,
        path: &str,
        issues: &mut Vec<ArgumentIssue>,
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    issues.push(ArgumentIssue::new(
                        join(path, name),
                        "missing required field",
                    ));
                }
            }
        }
        let closed = is_closed(schema);
        for (name, field) in fields {
            match properties.and_then(|properties| properties.get(name)) {
                Some(field_schema) => self.check(field, field_schema, &join(path, name), issues),
                None if closed => {
                    let message = if path.is_empty() {
                        self.top_level.to_owned()
                    } else {
                        unknown_field_expecting(
                            properties
                                .map(|properties| properties.keys().map(String::as_str).collect())
                                .unwrap_or_default(),
                        )
                    };
                    issues.push(ArgumentIssue::new(join(path, name), message));
                }
                None => {}
            }
        }
    }

    /// The values the branches allow, when each allows only values it lists (`const`, `enum`).
    fn allowed_values<'s>(&'s self, branches: &'s [Value]) -> Option<Vec<&'s Value>> {
        let mut allowed = Vec::new();
        for branch in branches {
            let branch = self.resolve(branch);
            match (branch.get("const"), branch.get("enum")) {
                (Some(value), _) => allowed.push(value),
                (None, Some(Value::Array(values))) => allowed.extend(values),
                _ => return None,
            }
        }
        Some(allowed)
    }

    /// Removes every `null` given for a field that is not required, at any depth; whether any was.
    fn drop_optional_nulls(&self, value: &mut Value, schema: &Value) -> bool {
        let schema = self.resolve(schema);
        let mut dropped = false;
        match value {
            Value::Object(fields) => {
                let required = schema.get("required").and_then(Value::as_array);
                let is_required = |name: &str| {
                    required.is_some_and(|required| required.iter().any(|r| r == name))
                };
                let before = fields.len();
                fields.retain(|name, field| !field.is_null() || is_required(name));
                dropped |= fields.len() < before;
                if let Some(properties) = schema.get("properties") {
                    for (name, field) in fields.iter_mut() {
                        if let Some(field_schema) = properties.get(name) {
                            dropped |= self.drop_optional_nulls(field, field_schema);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for item in items {
                        dropped |= self.drop_optional_nulls(item, item_schema);
                    }
                }
            }
            _ => {}
        }
        dropped
    }

    /// Follows a `#/$defs/...` reference (or any local JSON pointer) to its schema.
    fn resolve<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let mut schema = schema;
        // A bounded number of hops: a reference to a reference is rare, a cycle a broken schema.
        for _ in 0..8 {
            match schema.get("$ref").and_then(Value::as_str) {
                Some(reference) => match reference
                    .strip_prefix('#')
                    .and_then(|pointer| self.root.pointer(pointer))
                {
                    Some(target) => schema = target,
                    None => return &Value::Null,
                },
                None => return schema,
            }
        }
        &Value::Null
    }
}

fn one_of(allowed: &[&Value], value: &Value) -> String {
    let allowed: Vec<String> = allowed.iter().map(ToString::to_string).collect();
    format!(
        "expected one of {}, got {}",
        allowed.join(", "),
        shown(value)
    )
}

fn join(path: &str, segment: &str) -> String {
    if path.is_empty() {
        segment.to_owned()
    } else {
        format!("{path}.{segment}")
    }
}

fn has_type(value: &Value, types: &Value) -> bool {
    let is = |name: &str| match name {
        "null" => value.is_null(),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.is_i64() || value.is_u64(),
        _ => true,
    };
    match types {
        Value::String(name) => is(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).any(is),
        _ => true,
    }
}

fn type_names(types: &Value) -> String {
    match types {
        Value::String(name) => with_article(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(with_article)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.to_string(),
    }
}

fn with_article(name: &str) -> String {
    match name {
        "null" => "null".to_owned(),
        "integer" | "object" | "array" => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

/// A value as the model is shown it in an error: itself when it is short and not a container,
/// else its kind.
fn shown(value: &Value) -> String {
    match value {
        Value::Array(_) | Value::Object(_) => kind_of(value).to_owned(),
        scalar => {
            let text = scalar.to_string();
            if text.len() <= 40 {
                text
            } else {
                kind_of(scalar).to_owned()
            }
        }
    }
}

/// What kind of JSON value this is, in words.
pub(crate) fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(number) if number.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_problem_is_found_along_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": { "type": "string" },
                "priority": { "$ref": "#/$defs/Priority" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "due": { "type": ["string", "null"] },
                "owner": { "$ref": "#/$defs/Person" }
            },
            "required": ["title", "priority", "tags"],
            "$defs": {
                "Priority": { "type": "string", "enum": ["low", "high"] },
                "Person": { "type": "object", "properties": { "name": { "type": "string" } } }
            }
        });
        let fit = SchemaFit::of(schema, true);
        let value = json!({
            "priority": "urgent", "tags": ["a", 2], "due": 3, "owner": { "nmae": "Li" }, "extra": 1
        });
        let walk = Walk {
            root: fit.schema(),
            top_level: &fit.unknown,
        };
        let mut issues = Vec::new();
        walk.check(&value, fit.schema(), "", &mut issues);
        let rendered: Vec<String> = issues.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            [
                "title: missing required field",
                "due: expected a string or null, got 3",
                "extra: unknown field, expected one of `due`, `owner`, `priority`, `tags`, `title`",
                "owner.nmae: unknown field, expected one of `name`",
                "priority: expected one of \"low\", \"high\", got \"urgent\"",
                "tags.1: expected a string, got 2",
            ]
        );
    }

    #[test]
    fn types_whose_fields_are_all_required_are_told_apart() {
        assert!(every_field_required(&json!({
            "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"]
        })));
        assert!(!every_field_required(&json!({
            "type": "object",
            "properties": { "a": { "$ref": "#/$defs/A" } },
            "required": ["a"],
            "$defs": { "A": { "type": "object", "properties": { "b": {} } } }
        })));
    }
}
