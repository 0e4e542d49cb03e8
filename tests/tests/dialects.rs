//! Each provider's schema dialect, snapshot-tested on every schema of the core's snapshot set.

use agent_core::providers::dialect;
use tests::schema_set;

#[test]
fn openai_strict_dialect() {
    for (name, definition) in schema_set::all() {
        insta::assert_json_snapshot!(
            format!("openai_strict_{name}"),
            dialect::openai_strict(&definition.parameters)
        );
    }
}

#[test]
fn openai_dialect() {
    for (name, definition) in schema_set::all() {
        insta::assert_json_snapshot!(
            format!("openai_{name}"),
            dialect::openai(&definition.parameters)
        );
    }
}

#[test]
fn anthropic_dialect() {
    for (name, definition) in schema_set::all() {
        insta::assert_json_snapshot!(
            format!("anthropic_{name}"),
            dialect::anthropic(&definition.parameters)
        );
    }
}

#[test]
fn gemini_dialect() {
    for (name, definition) in schema_set::all() {
        insta::assert_json_snapshot!(
            format!("gemini_{name}"),
            dialect::gemini(&definition.parameters)
        );
    }
}

#[test]
fn gemini_json_dialect() {
    for (name, definition) in schema_set::all() {
        insta::assert_json_snapshot!(
            format!("gemini_json_{name}"),
            dialect::gemini_json(&definition.parameters)
        );
    }
}

/// What no provider accepts never reaches one: schemars' own formats, and for Gemini every
/// reference, `additionalProperties`, `const` and `null` type.
#[test]
fn dialects_hold_no_keyword_their_provider_rejects() {
    fn keys(value: &serde_json::Value, found: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, child) in map {
                    if key == "format" {
                        found.push(format!("format={child}"));
                    } else if key != "properties" {
                        found.push(key.clone());
                    }
                    keys(child, found);
                }
            }
            serde_json::Value::Array(items) => items.iter().for_each(|item| keys(item, found)),
            _ => {}
        }
    }
    for (name, definition) in schema_set::all() {
        let schemars_formats = [
            "\"uint8\"",
            "\"uint16\"",
            "\"uint32\"",
            "\"uint64\"",
            "\"uint\"",
            "\"int8\"",
            "\"int16\"",
            "\"int32\"",
            "\"int64\"",
            "\"int\"",
            "\"float\"",
            "\"double\"",
        ];
        for (dialect_name, transformed) in [
            ("openai", dialect::openai(&definition.parameters)),
            ("anthropic", dialect::anthropic(&definition.parameters)),
        ] {
            let mut found = Vec::new();
            keys(&transformed, &mut found);
            for format in schemars_formats {
                assert!(
                    !found.contains(&format!("format={format}")),
                    "{name}, {dialect_name}: {found:?}"
                );
            }
        }
        let mut found = Vec::new();
        keys(&dialect::gemini(&definition.parameters), &mut found);
        // Gemini knows int32, int64, float and double, but not the unsigned ones.
        for rejected in [
            "$ref",
            "$defs",
            "additionalProperties",
            "const",
            "$schema",
            "title",
            "oneOf",
            "format=\"uint8\"",
            "format=\"uint32\"",
        ] {
            assert!(
                !found.iter().any(|key| key == rejected),
                "{name}: gemini got {rejected}: {found:?}"
            );
        }
    }
}

/// OpenAI's strict mode refuses a `$ref` with keywords beside it (`$ref cannot have keywords
/// {'description'}`): a documented field of a struct type stands on its own instead.
#[test]
fn strict_references_stand_alone() {
    fn check(value: &serde_json::Value, name: &str) {
        match value {
            serde_json::Value::Object(node) => {
                if node.contains_key("$ref") {
                    assert_eq!(node.len(), 1, "{name}: {value}");
                }
                node.values().for_each(|child| check(child, name));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|item| check(item, name)),
            _ => {}
        }
    }
    let mut documented_references = 0;
    for (name, definition) in schema_set::all() {
        if definition.parameters.to_string().contains("\"$ref\"") {
            documented_references += 1;
        }
        if let Some(strict) = dialect::openai_strict(&definition.parameters) {
            check(&strict, name);
        }
    }
    assert!(documented_references > 0, "the set has references to check");
}
