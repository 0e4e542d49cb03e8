//! Per-provider dialects of JSON schema. `#[tool]` makes one neutral schema (draft 2020-12, from
//! schemars); each adapter sends it through the transform for its provider.

use serde_json::{Map, Value};

/// `format` values JSON Schema defines. schemars also writes its own (`uint32`, `int64`, `double`,
/// ...), which providers reject or ignore; those are dropped (the bounds they imply stay as
/// `minimum`/`maximum`).
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Anthropic's `input_schema`: draft 2020-12 as it is, without non-standard formats.
pub fn anthropic(schema: &Value) -> Value {
    let mut schema = schema.clone();
    for_each_schema(&mut schema, &mut strip_nonstandard_format);
    schema
}

/// OpenAI's `parameters` outside strict mode: the neutral schema without non-standard formats.
pub fn openai(schema: &Value) -> Value {
    anthropic(schema)
}

/// OpenAI's strict mode (Structured Outputs), or `None` when the schema cannot be expressed there
/// (a map: strict mode wants `additionalProperties: false` on every object), in which case the
/// tool is sent without `strict`.
///
/// Every object gets `additionalProperties: false` and lists every property as required; a property
/// that was optional becomes nullable instead, which the argument parser reads as "left out".
/// `oneOf` becomes `anyOf`; keywords strict mode rejects (`default`, length and size bounds) move
/// into the description so the model still reads them. A `$ref` with keywords beside it (a field's
/// description) is refused by strict mode, so that one node takes the referenced schema in place,
/// its own keywords winning (what OpenAI's own SDK does).
pub fn openai_strict(schema: &Value) -> Option<Value> {
    let mut schema = openai(schema);
    let definitions = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut representable = true;
    for_each_schema(&mut schema, &mut |node| {
        inline_reference_with_siblings(node, &definitions);
        if node
            .get("additionalProperties")
            .is_some_and(|extra| extra != &Value::Bool(false))
        {
            representable = false;
        }
        rename_key(node, "oneOf", "anyOf");
        move_into_description(
            node,
            &[
                "default",
                "minLength",
                "maxLength",
                "minProperties",
                "maxProperties",
                "uniqueItems",
            ],
        );
        if node.get("type") == Some(&Value::from("object")) || node.contains_key("properties") {
            if !node.contains_key("properties") {
                // A free-form object: strict mode has no way to say it.
                representable = false;
                return;
            }
            node.insert("additionalProperties".into(), Value::Bool(false));
            let required: Vec<String> = node
                .get("required")
                .and_then(Value::as_array)
                .map(|names| {
                    names
                        .iter()
                        .filter_map(|name| name.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let Some(Value::Object(properties)) = node.get_mut("properties") else {
                return;
            };
            let mut all = Vec::with_capacity(properties.len());
            for (name, property) in properties.iter_mut() {
                if !required.contains(name) {
                    make_nullable(property);
                }
                all.push(Value::from(name.as_str()));
            }
            node.insert("required".into(), Value::Array(all));
        }
    });
    representable.then_some(schema)
}

/// Anthropic's structured outputs (`output_config.format`), or `None` when the schema cannot be
/// said there (a map, a free-form object). OpenAI's strict dialect (every object closed), with the
/// bounds Anthropic refuses there (numbers' and arrays' sizes) moved into the description.
pub fn anthropic_output(schema: &Value) -> Option<Value> {
    let mut schema = openai_strict(schema)?;
    for_each_schema(&mut schema, &mut |node| {
        move_into_description(
            node,
            &[
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
                "minItems",
                "maxItems",
            ],
        );
    });
    Some(schema)
}

/// A node that is a `$ref` and something more becomes the referenced schema with its own keywords
/// over it; a bare `$ref` stays (which keeps recursive types finite).
fn inline_reference_with_siblings(node: &mut Map<String, Value>, definitions: &Value) {
    if node.len() < 2 {
        return;
    }
    let Some(target) = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|reference| reference.strip_prefix("#/$defs/"))
        .and_then(|name| definitions.get(name))
        .and_then(Value::as_object)
    else {
        return;
    };
    let target = target.clone();
    node.remove("$ref");
    for (key, value) in target {
        node.entry(key).or_insert(value);
    }
}

/// Gemini's JSON Schema (`parametersJsonSchema`, `responseJsonSchema`, Gemini 2.5 and later):
/// draft 2020-12 with its references and maps, without non-standard formats, and in the words its
/// documentation lists (`anyOf` for `oneOf`, a one-value `enum` for `const`).
pub fn gemini_json(schema: &Value) -> Value {
    let mut schema = anthropic(schema);
    for_each_schema(&mut schema, &mut |node| {
        rename_key(node, "oneOf", "anyOf");
        if let Some(value) = node.remove("const") {
            node.insert("enum".into(), Value::Array(vec![value]));
        }
    });
    schema
}

/// Gemini's `parameters` (its OpenAPI 3.0 subset): references inlined and `$defs` removed, no
/// `additionalProperties`, `$schema` or `title`; `const` as a one-value `enum`, `oneOf` as `anyOf`,
/// a `null` type as `nullable: true`, and only the formats Gemini knows.
///
/// This adapter uses `parameters` rather than Gemini's newer `parametersJsonSchema`, because every
/// Gemini model and API version accepts `parameters`; the transform keeps what the model needs to
/// read (types, descriptions, enums, bounds, required fields).
pub fn gemini(schema: &Value) -> Value {
    let definitions = schema.get("$defs").cloned().unwrap_or(Value::Null);
    let mut schema = schema.clone();
    inline_references(&mut schema, &definitions, 0);
    for_each_schema(&mut schema, &mut |node| {
        // First, since collapsing `anyOf: [X, null]` merges X's keys into this node.
        gemini_nullable(node);
        for key in ["$schema", "$defs", "$id", "additionalProperties", "title"] {
            node.remove(key);
        }
        if let Some(value) = node.remove("const") {
            node.insert("enum".into(), Value::Array(vec![value]));
        }
        rename_key(node, "oneOf", "anyOf");
        move_into_description(node, &["default"]);
        let known = match node.get("type").and_then(Value::as_str) {
            Some("string") => &["date-time", "enum"][..],
            Some("integer") => &["int32", "int64"][..],
            Some("number") => &["float", "double"][..],
            _ => &[][..],
        };
        if node
            .get("format")
            .and_then(Value::as_str)
            .is_some_and(|format| !known.contains(&format))
        {
            node.remove("format");
        }
    });
    schema
}

/// Calls `visit` on every schema object in `value`: itself first, then its subschemas.
fn for_each_schema(value: &mut Value, visit: &mut dyn FnMut(&mut Map<String, Value>)) {
    let Value::Object(node) = value else { return };
    visit(node);
    for (key, child) in node.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = child {
                    for grandchild in children.values_mut() {
                        for_each_schema(grandchild, visit);
                    }
                }
            }
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = child {
                    for grandchild in children {
                        for_each_schema(grandchild, visit);
                    }
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => for_each_schema(child, visit),
            _ => {}
        }
    }
}

fn strip_nonstandard_format(node: &mut Map<String, Value>) {
    if node
        .get("format")
        .and_then(Value::as_str)
        .is_some_and(|format| !STANDARD_FORMATS.contains(&format))
    {
        node.remove("format");
    }
}

fn rename_key(node: &mut Map<String, Value>, from: &str, to: &str) {
    if let Some(value) = node.remove(from) {
        node.insert(to.to_owned(), value);
    }
}

/// Removes `keys` and says in the description what they said.
fn move_into_description(node: &mut Map<String, Value>, keys: &[&str]) {
    let mut notes = Vec::new();
    for key in keys {
        if let Some(value) = node.remove(*key) {
            notes.push(format!("{key}: {value}"));
        }
    }
    if notes.is_empty() {
        return;
    }
    let note = format!("({})", notes.join(", "));
    let description = match node.get("description").and_then(Value::as_str) {
        Some(text) => format!("{text} {note}"),
        None => note,
    };
    node.insert("description".into(), Value::from(description));
}

/// Lets `null` through a schema: in its `type` where it has one, otherwise as an `anyOf` branch.
fn make_nullable(property: &mut Value) {
    let Value::Object(node) = property else {
        return;
    };
    match node.get_mut("type") {
        Some(Value::String(kind)) if kind == "null" => return,
        Some(Value::String(kind)) => {
            let kind = std::mem::take(kind);
            node.insert(
                "type".into(),
                Value::Array(vec![Value::from(kind), Value::from("null")]),
            );
        }
        Some(Value::Array(kinds)) => {
            if !kinds.iter().any(|kind| kind == "null") {
                kinds.push(Value::from("null"));
            }
        }
        _ => {
            if let Some(Value::Array(branches)) = node.get_mut("anyOf") {
                if !branches
                    .iter()
                    .any(|branch| branch.get("type") == Some(&Value::from("null")))
                {
                    branches.push(serde_json::json!({"type": "null"}));
                }
                return;
            }
            let description = node.remove("description");
            let inner = Value::Object(std::mem::take(node));
            node.insert("anyOf".into(), serde_json::json!([inner, {"type": "null"}]));
            if let Some(description) = description {
                node.insert("description".into(), description);
            }
            return;
        }
    }
    if let Some(Value::Array(values)) = node.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Gemini marks optional values `nullable` instead of allowing a `null` type.
fn gemini_nullable(node: &mut Map<String, Value>) {
    if let Some(Value::Array(kinds)) = node.get("type") {
        let others: Vec<Value> = kinds
            .iter()
            .filter(|kind| *kind != "null")
            .cloned()
            .collect();
        if others.len() < kinds.len() {
            node.insert("nullable".into(), Value::Bool(true));
        }
        if let [single] = others.as_slice() {
            node.insert("type".into(), single.clone());
        }
    }
    let Some(Value::Array(branches)) = node.get_mut("anyOf") else {
        return;
    };
    let before = branches.len();
    branches.retain(|branch| branch.get("type") != Some(&Value::from("null")));
    if branches.len() < before {
        node.insert("nullable".into(), Value::Bool(true));
    }
    let Some(Value::Array(branches)) = node.get("anyOf") else {
        return;
    };
    if let [Value::Object(only)] = branches.as_slice() {
        let only = only.clone();
        node.remove("anyOf");
        for (key, value) in only {
            // The outer description (the parameter's) wins over the type's.
            node.entry(key).or_insert(value);
        }
    }
}

/// How deep a recursive type is unfolded before it is cut off.
const MAX_INLINE_DEPTH: usize = 8;

/// Replaces every `{"$ref": "#/$defs/Name"}` with the definition, keeping the referring node's
/// own keys (its description).
fn inline_references(value: &mut Value, definitions: &Value, depth: usize) {
    match value {
        Value::Object(node) => {
            if let Some(Value::String(reference)) = node.get("$ref") {
                let name = reference.rsplit('/').next().unwrap_or_default();
                let target = definitions.get(name).cloned();
                node.remove("$ref");
                match target {
                    Some(Value::Object(definition)) if depth < MAX_INLINE_DEPTH => {
                        for (key, value) in definition {
                            node.entry(key).or_insert(value);
                        }
                    }
                    _ => {
                        node.entry("type").or_insert_with(|| Value::from("object"));
                    }
                }
                for child in node.values_mut() {
                    inline_references(child, definitions, depth + 1);
                }
                return;
            }
            for child in node.values_mut() {
                inline_references(child, definitions, depth);
            }
        }
        Value::Array(items) => {
            for item in items {
                inline_references(item, definitions, depth);
            }
        }
        _ => {}
    }
}
