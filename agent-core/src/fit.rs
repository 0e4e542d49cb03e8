//! Reading a JSON text into a type whose fields the code knows only from its schema: a closure
//! tool's argument struct ([`tool_fn`](crate::tool_fn)) and a typed run's output. The common case is
//! one parse; when it fails, every problem is found with its path, by walking the value along the
//! schema, for the model to read.

use std::fmt;

use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor,
};
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

    /// Whether every field in `raw` is one its schema names, at every depth the schema can be
    /// followed to: one pass over the text, allocating nothing. `false` when it finds another, or
    /// cannot tell (a choice of shapes it cannot pick one of).
    fn names_only_known_fields(&self, raw: &str) -> bool {
        let walk = Walk {
            root: &self.schema,
            top_level: &self.unknown,
        };
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        KnownFields {
            walk: &walk,
            schema: &self.schema,
        }
        .deserialize(&mut deserializer)
        .unwrap_or(false)
    }

    /// Reads `raw` as a `T`: at once when it fits; otherwise `null` for a field that may be left
    /// out counts as left out (what strict dialects send), and failing that, every missing,
    /// unknown or mistyped field is reported with its path (or, when the schema cannot say what is
    /// wrong, serde's first error with its path).
    pub(crate) fn parse<T: DeserializeOwned>(&self, raw: &str) -> Result<T, Unfit> {
        let top_level = self.closed.then_some(self.unknown.as_str());
        // Only an object: serde's derive would also take an array as positional fields.
        if raw.trim_start().starts_with('{') {
            // The common case: the text parses, and a pass over it finds no field the schema does
            // not name (which serde would drop silently).
            match serde_json::from_str::<T>(raw) {
                Ok(value) if self.names_only_known_fields(raw) => return Ok(value),
                // An unknown field, or one the pass could not judge: the strict parser decides.
                Ok(_) => {
                    let mut deserializer = serde_json::Deserializer::from_str(raw);
                    match deserialize_strictly_saying::<T, _>(&mut deserializer, top_level) {
                        Ok(value) => return Ok(value),
                        Err(Strict::Unknown(issues)) => return Err(Unfit::Issues(issues)),
                        Err(Strict::Invalid(_)) => {}
                    }
                }
                Err(error) if !error.is_data() => return Err(Unfit::Json(error.to_string())),
                Err(_) => {}
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

/// A pass over a JSON value that checks each object's fields against its schema and skips the
/// values: `true` when every field is named (or taken by an open object).
struct KnownFields<'a> {
    walk: &'a Walk<'a>,
    schema: &'a Value,
}

impl KnownFields<'_> {
    /// The object schema a value here must follow: `None` when the schema offers several
    /// (an enum of structs), so the pass cannot tell which; `Null` (anything) when it says none.
    fn object_schema(&self) -> Option<&Value> {
        let node = self.walk.resolve(self.schema);
        let branches = ["anyOf", "oneOf"]
            .iter()
            .find_map(|keyword| node.get(keyword).and_then(Value::as_array));
        let Some(branches) = branches else {
            return Some(node);
        };
        let mut objects = branches
            .iter()
            .map(|branch| self.walk.resolve(branch))
            .filter(|branch| branch.get("properties").is_some());
        match (objects.next(), objects.next()) {
            (Some(object), None) => Some(object),
            _ => None,
        }
    }
}

impl<'de> DeserializeSeed<'de> for KnownFields<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for KnownFields<'_> {
    type Value = bool;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_str<E>(self, _: &str) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_unit<E>(self) -> Result<bool, E> {
        Ok(true)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<bool, A::Error> {
        let schema = self
            .walk
            .resolve(self.schema)
            .get("items")
            .unwrap_or(&Value::Null);
        let mut known = true;
        while let Some(item) = items.next_element_seed(KnownFields {
            walk: self.walk,
            schema,
        })? {
            known &= item;
        }
        Ok(known)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut fields: A) -> Result<bool, A::Error> {
        let Some(schema) = self.object_schema() else {
            while fields.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            return Ok(false);
        };
        let properties = schema.get("properties").and_then(Value::as_object);
        let closed = is_closed(schema);
        let mut known = true;
        while let Some(field) = fields.next_key_seed(FieldSchema { properties })? {
            match field {
                Some(schema) => {
                    known &= fields.next_value_seed(KnownFields {
                        walk: self.walk,
                        schema,
                    })?;
                }
                None => {
                    known &= !closed;
                    fields.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(known)
    }
}

/// Reads a field's name and gives its schema, if the object's schema names it.
struct FieldSchema<'a> {
    properties: Option<&'a serde_json::Map<String, Value>>,
}

impl<'de, 'a> DeserializeSeed<'de> for FieldSchema<'a> {
    type Value = Option<&'a Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de, 'a> Visitor<'de> for FieldSchema<'a> {
    type Value = Option<&'a Value>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a field name")
    }

    fn visit_str<E>(self, name: &str) -> Result<Self::Value, E> {
        Ok(self.properties.and_then(|properties| properties.get(name)))
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
    fn the_pass_over_the_text_finds_unknown_fields_at_any_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "home": { "anyOf": [{ "$ref": "#/$defs/Place" }, { "type": "null" }] },
                "visits": { "type": "array", "items": { "$ref": "#/$defs/Place" } },
                "tags": { "type": "object", "additionalProperties": { "type": "string" } },
                "pet": { "oneOf": [
                    { "type": "object", "properties": { "Cat": {} }, "required": ["Cat"] },
                    { "type": "object", "properties": { "Dog": {} }, "required": ["Dog"] }
                ] }
            },
            "$defs": { "Place": { "type": "object", "properties": { "city": { "type": "string" } } } }
        });
        let fit = SchemaFit::of(schema, true);
        let known = |raw: &str| fit.names_only_known_fields(raw);
        assert!(known(
            r#"{"name":"Li","home":{"city":"Xi'an"},"visits":[{"city":"Hefei"}]}"#
        ));
        assert!(known(r#"{"home":null,"tags":{"any":"key","goes":"here"}}"#));
        assert!(known(r#"{"na\u006de":"escaped but known"}"#));
        assert!(!known(r#"{"nmae":"Li"}"#));
        assert!(!known(r#"{"home":{"ctiy":"Xi'an"}}"#));
        assert!(!known(r#"{"visits":[{"city":"Hefei"},{"town":"Wuhu"}]}"#));
        // Two shapes of object to choose from: the pass cannot tell, the strict parser decides.
        assert!(!known(r#"{"pet":{"Cat":{}}}"#));
    }
}
