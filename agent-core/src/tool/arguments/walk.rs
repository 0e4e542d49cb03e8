//! Finding every place a JSON value departs from its schema, for the model to read.

use serde_json::Value;

use super::fit::is_closed;
use crate::reasons::argument_issue::{ArgumentIssue, Found, IssueKind, JsonType};

/// How many problems are told at most: a hostile value can hold millions, and the model needs a
/// few to fix its answer.
pub(super) const MAX_ISSUES: usize = 20;

/// Finds where a value departs from its schema, by the keywords that say what a type is (`type`,
/// `enum`, `const`, `required`, `properties`, closed objects, `items`, `anyOf`/`oneOf`, `$ref` into
/// `$defs`). Bounds and formats are left to serde.
pub(super) struct Walk<'a> {
    /// The schema `$ref`s point into.
    pub(super) root: &'a Value,
}

impl Walk<'_> {
    pub(super) fn check(
        &self,
        value: &Value,
        schema: &Value,
        path: &str,
        issues: &mut Vec<ArgumentIssue>,
    ) {
        if issues.len() >= MAX_ISSUES {
            return;
        }
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
                if fits {
                    return;
                }
                // An enum whose variants have doc comments: one `const` per variant.
                if let Some(allowed) = self.allowed_values(branches) {
                    issues.push(ArgumentIssue::new(path, one_of(&allowed, value)));
                    return;
                }
                // One branch takes a value of this JSON type (an `Option<T>`'s `T`, most
                // often): its own problems, at their paths, say more than "no shape matches".
                let mut takers = branches.iter().filter(|branch| self.takes(branch, value));
                if let (Some(only), None) = (takers.next(), takers.next()) {
                    self.check(value, only, path, issues);
                } else {
                    let kind = IssueKind::NoShapeMatches {
                        found: JsonType::of(value),
                    };
                    issues.push(ArgumentIssue::new(path, kind));
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
            let kind = IssueKind::NotConst {
                expected: expected.to_string(),
                found: value.to_string(),
            };
            issues.push(ArgumentIssue::new(path, kind));
            return;
        }
        if let Some(types) = node.get("type")
            && !has_type(value, types)
        {
            let kind = IssueKind::WrongType {
                expected: type_names(types),
                found: Found::shown(value),
            };
            issues.push(ArgumentIssue::new(path, kind));
            return;
        }
        match value {
            Value::Object(fields) => self.check_object(fields, schema, path, issues),
            Value::Array(items) => {
                if let Some(item_schema) = node.get("items") {
                    for (index, item) in items.iter().enumerate() {
                        if issues.len() >= MAX_ISSUES {
                            break;
                        }
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
                    let kind = IssueKind::Missing { field: None };
                    issues.push(ArgumentIssue::new(join(path, name), kind));
                }
            }
        }
        let closed = is_closed(schema);
        for (name, field) in fields {
            if issues.len() >= MAX_ISSUES {
                break;
            }
            match properties.and_then(|properties| properties.get(name)) {
                Some(field_schema) => self.check(field, field_schema, &join(path, name), issues),
                None if closed => {
                    // The fields this object has: what the model is told instead.
                    let expected = properties
                        .map(|properties| properties.keys().cloned().collect())
                        .unwrap_or_default();
                    let kind = IssueKind::UnknownField {
                        field: None,
                        expected: Some(expected),
                    };
                    issues.push(ArgumentIssue::new(join(path, name), kind));
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
    pub(super) fn drop_optional_nulls(&self, value: &mut Value, schema: &Value) -> bool {
        let schema = self.shape_of(schema);
        match value {
            Value::Object(fields) => self.drop_optional_nulls_in(fields, schema),
            Value::Array(items) => match schema.get("items") {
                Some(item_schema) => items.iter_mut().fold(false, |dropped, item| {
                    self.drop_optional_nulls(item, item_schema) | dropped
                }),
                None => false,
            },
            _ => false,
        }
    }

    /// [`drop_optional_nulls`](Self::drop_optional_nulls) for the fields of an object.
    pub(super) fn drop_optional_nulls_in(
        &self,
        fields: &mut serde_json::Map<String, Value>,
        schema: &Value,
    ) -> bool {
        let schema = self.shape_of(schema);
        let required = schema.get("required").and_then(Value::as_array);
        let is_required =
            |name: &str| required.is_some_and(|required| required.iter().any(|r| r == name));
        let before = fields.len();
        fields.retain(|name, field| !field.is_null() || is_required(name));
        let mut dropped = fields.len() < before;
        if let Some(properties) = schema.get("properties") {
            for (name, field) in fields.iter_mut() {
                if let Some(field_schema) = properties.get(name) {
                    dropped |= self.drop_optional_nulls(field, field_schema);
                }
            }
        }
        dropped
    }

    /// Whether `schema` takes a value of `value`'s JSON type at all (its `type`, `const`, `enum`,
    /// or a branch of its own choice does); a schema that says nothing of types takes any.
    fn takes(&self, schema: &Value, value: &Value) -> bool {
        let schema = self.resolve(schema);
        if let Some(types) = schema.get("type") {
            return has_type(value, types);
        }
        if let Some(expected) = schema.get("const") {
            return JsonType::of(expected) == JsonType::of(value);
        }
        if let Some(Value::Array(allowed)) = schema.get("enum") {
            return allowed
                .iter()
                .any(|allowed| JsonType::of(allowed) == JsonType::of(value));
        }
        match ["anyOf", "oneOf"]
            .iter()
            .find_map(|keyword| schema.get(keyword).and_then(Value::as_array))
        {
            Some(branches) => branches.iter().any(|branch| self.takes(branch, value)),
            None => true,
        }
    }

    /// The schema a value here follows: references followed, and of a choice the one branch that
    /// is not `null` (an `Option`'s), when there is one.
    fn shape_of<'s>(&'s self, schema: &'s Value) -> &'s Value {
        let schema = self.resolve(schema);
        let branches = ["anyOf", "oneOf"]
            .iter()
            .find_map(|keyword| schema.get(keyword).and_then(Value::as_array));
        let Some(branches) = branches else {
            return schema;
        };
        let mut others = branches
            .iter()
            .filter(|branch| branch.get("type") != Some(&Value::from("null")));
        match (others.next(), others.next()) {
            (Some(only), None) => self.resolve(only),
            _ => schema,
        }
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

/// `value` is none of the `allowed` values.
fn one_of(allowed: &[&Value], value: &Value) -> IssueKind {
    IssueKind::NotOneOf {
        allowed: allowed.iter().map(ToString::to_string).collect(),
        found: Found::shown(value),
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

/// The JSON types a schema's `type` keyword names.
fn type_names(types: &Value) -> Vec<JsonType> {
    match types {
        Value::String(name) => JsonType::named(name).into_iter().collect(),
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .filter_map(JsonType::named)
            .collect(),
        _ => Vec::new(),
    }
}
