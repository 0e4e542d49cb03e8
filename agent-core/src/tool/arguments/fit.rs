//! Reading a JSON text into a type whose fields the code knows only from its schema: a closure
//! tool's argument struct ([`tool_fn`](crate::tool_fn)) and a typed run's output. The common case is
//! one parse; when it fails, every problem is found with its path, by walking the value along the
//! schema, for the model to read.

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::serde_errors::{issue_of, syntax_of};
use super::skipped::deserialize_noticing;
use super::typed::{Strict, deserialize_strictly_saying, render_path};
use super::walk::{MAX_ISSUES, Walk};
use crate::reasons::argument_issue::{ArgumentIssue, IssueKind, SyntaxError};

/// What the parser knows of a type from its JSON schema (draft 2020-12, as schemars makes it):
/// made once per type, used for every value read.
#[derive(Debug, Clone)]
pub(crate) struct SchemaFit {
    schema: Value,
    /// Whether a field the root does not name is an error (rather than taken by a flattened map,
    /// or unjudgeable when the schema is not an object's).
    closed: bool,
    /// The fields the root names: what the model is told about a field it does not.
    names: Vec<String>,
}

/// Why a text could not be read as the type.
#[derive(Debug)]
pub(crate) enum Unfit {
    /// It is not JSON: what the parser found wrong.
    Json(SyntaxError),
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
        let names = properties
            .map(|properties| properties.keys().cloned().collect())
            .unwrap_or_default();
        SchemaFit {
            closed,
            names,
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
        let top_level = self.closed.then_some(self.names.as_slice());
        // Only an object: serde's derive would also take an array as positional fields.
        if raw.trim_start().starts_with('{') {
            // The common case: one parse, which notices whether serde skipped a field (one the
            // type does not have, which would be lost silently).
            let mut deserializer = serde_json::Deserializer::from_str(raw);
            let parsed = deserialize_noticing::<T, _>(&mut deserializer)
                .and_then(|parsed| deserializer.end().map(|()| parsed));
            match parsed {
                Ok((value, false)) => return Ok(value),
                // One was: the strict parser says which, with its path.
                Ok((_, true)) => {
                    let mut deserializer = serde_json::Deserializer::from_str(raw);
                    match deserialize_strictly_saying::<T, _>(&mut deserializer, top_level) {
                        Ok(value) => return Ok(value),
                        Err(Strict::Unknown(issues)) => return Err(Unfit::Issues(issues)),
                        Err(Strict::Invalid(_)) => {}
                    }
                }
                Err(error) if !error.is_data() => return Err(Unfit::Json(syntax_of(&error))),
                Err(_) => {}
            }
        }
        let mut value: Value =
            serde_json::from_str(raw).map_err(|error| Unfit::Json(syntax_of(&error)))?;
        if !value.is_object() {
            return Err(Unfit::NotAnObject(value));
        }
        let walk = Walk { root: &self.schema };
        if walk.drop_optional_nulls(&mut value, &self.schema) {
            match deserialize_strictly_saying::<T, _>(&value, top_level) {
                Ok(fitting) => return Ok(fitting),
                Err(Strict::Unknown(issues)) => return Err(Unfit::Issues(issues)),
                Err(Strict::Invalid(_)) => {}
            }
        }
        let mut issues = Vec::new();
        walk.check(&value, &self.schema, "", &mut issues);
        if issues.len() >= MAX_ISSUES {
            issues.truncate(MAX_ISSUES);
            issues.push(ArgumentIssue::new("", IssueKind::MoreNotListed));
        }
        if issues.is_empty()
            && let Err(error) = serde_path_to_error::deserialize::<_, T>(&value)
        {
            // The schema cannot say it (a range, a custom deserializer): serde's own words.
            issues.push(ArgumentIssue::new(
                render_path(error.path()),
                issue_of(error.inner()),
            ));
        }
        if issues.is_empty() {
            // serde takes the value after all: it failed only through the text.
            issues.push(ArgumentIssue::new("", IssueKind::DoesNotFit));
        }
        Err(Unfit::Issues(issues))
    }
}

/// Removes from an object of arguments every `null` given for a field its schema does not require,
/// at any depth: what a provider's strict dialect sends for "left out". Whether any was. A tool
/// that hands its arguments on (to an MCP server, say) calls it first: the other side may refuse
/// the `null`s.
///
/// ```
/// use serde_json::json;
/// let schema = json!({
///     "type": "object",
///     "properties": { "city": { "type": "string" }, "unit": { "type": "string" } },
///     "required": ["city"]
/// });
/// let mut arguments = json!({ "city": "Oslo", "unit": null });
/// let fields = arguments.as_object_mut().unwrap();
/// assert!(agent_core::drop_optional_nulls(fields, &schema));
/// assert_eq!(arguments, json!({ "city": "Oslo" }));
/// ```
pub fn drop_optional_nulls(fields: &mut serde_json::Map<String, Value>, schema: &Value) -> bool {
    let walk = Walk { root: schema };
    walk.drop_optional_nulls_in(fields, schema)
}

/// Whether an object schema lists its fields and takes no others: serde would drop any other.
pub(super) fn is_closed(schema: &Value) -> bool {
    schema.get("properties").is_some_and(Value::is_object)
        && matches!(
            schema.get("additionalProperties"),
            None | Some(Value::Bool(false))
        )
        && !["oneOf", "anyOf", "allOf", "$ref"]
            .iter()
            .any(|key| schema.get(key).is_some())
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
        let walk = Walk { root: fit.schema() };
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
}
