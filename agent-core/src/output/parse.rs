//! Reading the model's output: the JSON in its answer, parsed into the output type, with every
//! problem found (each with its field path) when it does not fit.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::OutputProblem;
use super::plan::OutputShape;
use crate::arguments::{Strict, deserialize_strictly, message_without_position, render_path};
use crate::tool_error::ArgumentIssue;

/// The JSON in an answer written as text: the answer itself, the inside of a fenced code block,
/// or the span from the first `{` or `[` to the last `}` or `]` (models put words around it).
pub(crate) fn json_in_text(text: &str) -> &str {
    let text = text.trim();
    if let Some(fenced) = fenced_block(text) {
        return fenced;
    }
    if text.starts_with(['{', '[']) {
        return text;
    }
    let start = text.find(['{', '[']);
    let end = text.rfind(['}', ']']);
    match (start, end) {
        (Some(start), Some(end)) if start < end => &text[start..=end],
        _ => text,
    }
}

/// The inside of the first ```` ``` ```` block (with or without a language tag).
fn fenced_block(text: &str) -> Option<&str> {
    let after = &text[text.find("```")? + 3..];
    // The language tag runs to the end of the line.
    let body = &after[after.find('\n')? + 1..];
    let end = body.find("```")?;
    Some(body[..end].trim())
}

/// Parses `raw` into `T`. A problem is reported with every field that is missing, of the wrong
/// type or unknown (found by walking the value along `schema`), or, when the schema finds nothing,
/// with serde's own error and its path.
pub(crate) fn parse_output<T: DeserializeOwned>(
    raw: &str,
    shape: &OutputShape,
) -> Result<T, OutputProblem> {
    // The common case, an output that fits, is read straight from the text; strictly unless no
    // field can be dropped silently (with every field required, a misspelt one is missing).
    let fast = if shape.every_field_required {
        serde_json::from_str::<T>(raw).ok()
    } else {
        let mut deserializer = serde_json::Deserializer::from_str(raw);
        deserialize_strictly::<T, _>(&mut deserializer)
            .ok()
            .filter(|_| deserializer.end().is_ok())
    };
    if let Some(output) = fast {
        return Ok(output);
    }
    let schema = &shape.schema;
    let mut value: Value =
        serde_json::from_str(raw).map_err(|error| OutputProblem::InvalidJson {
            message: error.to_string(),
        })?;
    let mut parsed = deserialize_strictly::<T, _>(&value);
    // Strict dialects make every field required and the optional ones nullable: `null` there
    // means "left out", which a defaulted field that is not an `Option` takes only when absent.
    if matches!(parsed, Err(Strict::Invalid(_)))
        && (SchemaWalk { root: schema }).drop_optional_nulls(&mut value, schema)
    {
        parsed = deserialize_strictly::<T, _>(&value);
    }
    match parsed {
        Ok(output) => Ok(output),
        Err(Strict::Unknown(issues)) => Err(OutputProblem::Invalid { issues }),
        Err(Strict::Invalid(_)) => {
            let mut issues = Vec::new();
            SchemaWalk { root: schema }.check(&value, schema, "", &mut issues);
            if issues.is_empty() {
                // The schema cannot say it (a range, a custom deserializer): serde's own words.
                if let Err(error) = serde_path_to_error::deserialize::<_, T>(&value) {
                    issues.push(ArgumentIssue::new(
                        render_path(error.path()),
                        message_without_position(error.inner()),
                    ));
                }
            }
            Err(OutputProblem::Invalid { issues })
        }
    }
}

/// Finds where a value departs from a (neutral, schemars-made) schema: the keywords that say what
/// a type is (`type`, `enum`, `const`, `required`, `properties`, `additionalProperties: false`,
/// `items`, `anyOf`/`oneOf`, `$ref` into `$defs`). Bounds and formats are left to serde.
struct SchemaWalk<'a> {
    root: &'a Value,
}

impl SchemaWalk<'_> {
    fn check(&self, value: &Value, schema: &Value, path: &str, issues: &mut Vec<ArgumentIssue>) {
        let Some(schema) = self.resolve(schema).as_object() else {
            return;
        };
        for keyword in ["anyOf", "oneOf"] {
            if let Some(Value::Array(branches)) = schema.get(keyword) {
                let fits = branches.iter().any(|branch| {
                    let mut inner = Vec::new();
                    self.check(value, branch, path, &mut inner);
                    inner.is_empty()
                });
                if !fits {
                    issues.push(ArgumentIssue::new(
                        path,
                        format!(
                            "{} does not match any of the allowed shapes",
                            kind_of(value)
                        ),
                    ));
                }
                return;
            }
        }
        if let Some(Value::Array(allowed)) = schema.get("enum")
            && !allowed.contains(value)
        {
            let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            issues.push(ArgumentIssue::new(
                path,
                format!("expected one of {}, got {value}", allowed.join(", ")),
            ));
            return;
        }
        if let Some(expected) = schema.get("const")
            && expected != value
        {
            issues.push(ArgumentIssue::new(
                path,
                format!("expected {expected}, got {value}"),
            ));
            return;
        }
        if let Some(types) = schema.get("type")
            && !has_type(value, types)
        {
            issues.push(ArgumentIssue::new(
                path,
                format!("expected {}, got {}", type_names(types), kind_of(value)),
            ));
            return;
        }
        match value {
            Value::Object(fields) => {
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
                for (name, field) in fields {
                    match properties.and_then(|properties| properties.get(name)) {
                        Some(field_schema) => {
                            self.check(field, field_schema, &join(path, name), issues)
                        }
                        None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                            issues.push(ArgumentIssue::new(join(path, name), "unknown field"))
                        }
                        None => {}
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item_schema) = schema.get("items") {
                    for (index, item) in items.iter().enumerate() {
                        self.check(item, item_schema, &join(path, &index.to_string()), issues);
                    }
                }
            }
            _ => {}
        }
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
        // A bounded number of hops: a reference to a reference is rare, a cycle is a broken schema.
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
        Value::String(name) => article(name),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .map(article)
            .collect::<Vec<_>>()
            .join(" or "),
        other => other.to_string(),
    }
}

fn article(name: &str) -> String {
    match name {
        "null" => "null".to_owned(),
        "integer" | "object" | "array" => format!("an {name}"),
        _ => format!("a {name}"),
    }
}

fn kind_of(value: &Value) -> &'static str {
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
    fn json_is_found_in_fences_and_among_words() {
        assert_eq!(json_in_text(" {\"a\": 1} "), "{\"a\": 1}");
        assert_eq!(json_in_text("```json\n{\"a\": 1}\n```"), "{\"a\": 1}");
        assert_eq!(
            json_in_text("Here it is:\n```\n[1, 2]\n```\nDone."),
            "[1, 2]"
        );
        assert_eq!(
            json_in_text("Sure! {\"a\": {\"b\": 2}} Hope that helps."),
            "{\"a\": {\"b\": 2}}"
        );
        assert_eq!(json_in_text("no json here"), "no json here");
    }

    #[test]
    fn every_problem_is_found_along_the_schema() {
        let schema = json!({
            "type": "object",
            "properties": {
                "title": { "type": "string" },
                "priority": { "$ref": "#/$defs/Priority" },
                "tags": { "type": "array", "items": { "type": "string" } },
                "due": { "type": ["string", "null"] }
            },
            "required": ["title", "priority", "tags"],
            "$defs": { "Priority": { "type": "string", "enum": ["low", "high"] } }
        });
        let mut issues = Vec::new();
        let value = json!({ "priority": "urgent", "tags": ["a", 2], "due": 3 });
        SchemaWalk { root: &schema }.check(&value, &schema, "", &mut issues);
        let rendered: Vec<String> = issues.iter().map(ToString::to_string).collect();
        assert_eq!(
            rendered,
            [
                "title: missing required field",
                "due: expected a string or null, got an integer",
                "priority: expected one of \"low\", \"high\", got \"urgent\"",
                "tags.1: expected a string, got an integer",
            ]
        );
    }
}
