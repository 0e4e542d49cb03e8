//! serde's and serde_json's errors sorted into [`IssueKind`]s, by what serde's messages say (the
//! only form in which serde reports them).

use super::{Expected, Found, IssueKind, JsonType};

/// Sorts a deserializer's message into a kind of problem by its shape (serde's and serde_json's
/// messages have stable ones), or keeps it as [`IssueKind::Other`]. A message is sorted only when
/// the kind's English words are the message again, so an English model reads what serde said.
pub(crate) fn classify(message: &str) -> IssueKind {
    let kind = sort(message);
    if let Some(kind) = kind {
        let mut again = String::with_capacity(message.len());
        let _ = kind.describe(&mut again);
        if again == message {
            return kind;
        }
    }
    IssueKind::Other {
        message: message.to_owned(),
    }
}

/// [`classify`]'s guess, before it is checked.
fn sort(message: &str) -> Option<IssueKind> {
    if let Some(rest) = message.strip_prefix("invalid type: ") {
        let (found, expected) = split_found(rest)?;
        return Some(IssueKind::InvalidType {
            found,
            expected: expected_of(expected),
        });
    }
    if let Some(rest) = message.strip_prefix("invalid value: ") {
        let (found, expected) = split_found(rest)?;
        return Some(IssueKind::InvalidValue {
            found,
            expected: expected_of(expected),
        });
    }
    if let Some(rest) = message.strip_prefix("invalid length ") {
        let (length, expected) = rest.split_once(", expected ")?;
        return Some(IssueKind::InvalidLength {
            length: length.parse().ok()?,
            expected: expected_of(expected),
        });
    }
    if let Some(rest) = message.strip_prefix("missing field `") {
        return Some(IssueKind::Missing {
            field: Some(rest.strip_suffix('`')?.to_owned()),
        });
    }
    if let Some(rest) = message.strip_prefix("duplicate field `") {
        return Some(IssueKind::DuplicateField {
            field: rest.strip_suffix('`')?.to_owned(),
        });
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        let (field, expected) = named_and_expected(rest, "there are no fields")?;
        return Some(IssueKind::UnknownField {
            field: Some(field),
            expected: Some(expected),
        });
    }
    if let Some(rest) = message.strip_prefix("unknown variant `") {
        let (variant, expected) = named_and_expected(rest, "there are no variants")?;
        return Some(IssueKind::UnknownVariant { variant, expected });
    }
    if let Some(name) = message.strip_prefix("data did not match any variant of untagged enum ") {
        return Some(IssueKind::NoVariantMatches {
            name: name.to_owned(),
        });
    }
    None
}

/// ``name`, expected `a` or `b`` (after the opening backquote): the name, and the names listed
/// (none when the message says `none`).
fn named_and_expected(rest: &str, none: &str) -> Option<(String, Vec<String>)> {
    if let Some(name) = rest.strip_suffix(&format!("`, {none}")) {
        return Some((name.to_owned(), Vec::new()));
    }
    // The name is the model's and may hold anything; the names listed are the type's own.
    let (name, listed) = rest.rsplit_once("`, expected ")?;
    let (many, listed) = match listed.strip_prefix("one of ") {
        Some(listed) => (true, listed),
        None => (false, listed),
    };
    let inner = listed.strip_prefix('`')?.strip_suffix('`')?;
    let names = if many {
        inner.split("`, `").map(str::to_owned).collect()
    } else if let Some((first, second)) = inner.split_once("` or `") {
        vec![first.to_owned(), second.to_owned()]
    } else {
        vec![inner.to_owned()]
    };
    Some((name.to_owned(), names))
}

/// ``integer `42`, expected a string``: what was given, and the rest after `, expected `.
fn split_found(rest: &str) -> Option<(Found, &str)> {
    const SEPARATOR: &str = ", expected ";
    if let Some(quoted) = rest.strip_prefix("string ") {
        // A string as Rust quotes it: to its closing quote, past escaped ones.
        let mut escaped = false;
        let end = quoted
            .char_indices()
            .skip(1)
            .find_map(|(index, character)| {
                match (escaped, character) {
                    (false, '\\') => escaped = true,
                    (false, '"') => return Some(index + 1),
                    _ => escaped = false,
                }
                None
            })?;
        let expected = quoted[end..].strip_prefix(SEPARATOR)?;
        let text = quoted[..end].to_owned();
        return Some((
            Found::Value {
                kind: JsonType::String,
                text,
            },
            expected,
        ));
    }
    for (prefix, kind) in [
        ("boolean `", JsonType::Boolean),
        ("integer `", JsonType::Integer),
        ("floating point `", JsonType::Number),
    ] {
        if let Some(value) = rest.strip_prefix(prefix) {
            let (text, expected) = value.split_once('`')?;
            let expected = expected.strip_prefix(SEPARATOR)?;
            return Some((
                Found::Value {
                    kind,
                    text: text.to_owned(),
                },
                expected,
            ));
        }
    }
    let (found, expected) = rest.split_once(SEPARATOR)?;
    let found = match found {
        "null" => Found::Value {
            kind: JsonType::Null,
            text: "null".to_owned(),
        },
        "sequence" => Found::Kind(JsonType::Array),
        "map" => Found::Kind(JsonType::Object),
        other => Found::Other(other.to_owned()),
    };
    Some((found, expected))
}

/// What a type takes, sorted from its deserializer's words.
fn expected_of(words: &str) -> Expected {
    match words {
        "a string" => return Expected::Type(JsonType::String),
        "a boolean" => return Expected::Type(JsonType::Boolean),
        "a sequence" => return Expected::Type(JsonType::Array),
        "a map" => return Expected::Type(JsonType::Object),
        "unit" => return Expected::Type(JsonType::Null),
        "f32" | "f64" => return Expected::Float(words.to_owned()),
        _ => {}
    }
    if Expected::integer_range(words).is_some() {
        return Expected::Integer(words.to_owned());
    }
    let count = |text: &str| text.parse::<usize>().ok();
    if let Some(size) = words.strip_prefix("a tuple of size ").and_then(count) {
        return Expected::Tuple(size);
    }
    if let Some(length) = words.strip_prefix("an array of length ").and_then(count) {
        return Expected::Array(length);
    }
    if let Some((of, elements)) = words.rsplit_once(" with ")
        && let Some(number) = elements
            .strip_suffix(" elements")
            .or_else(|| elements.strip_suffix(" element"))
        && let Some(number) = count(number)
    {
        return Expected::WithElements {
            of: Box::new(expected_of(of)),
            count: number,
        };
    }
    let single = |name: &str| !name.is_empty() && !name.contains(char::is_whitespace);
    if let Some(name) = words.strip_prefix("struct ").filter(|name| single(name)) {
        return Expected::Struct(name.to_owned());
    }
    if let Some(name) = words
        .strip_prefix("tuple struct ")
        .filter(|name| single(name))
    {
        return Expected::TupleStruct(name.to_owned());
    }
    if let Some(name) = words.strip_prefix("enum ").filter(|name| single(name)) {
        return Expected::Enum(name.to_owned());
    }
    Expected::Other(words.to_owned())
}

/// Sorts a serde error of a value that was not read (a deserializer's, with no position) into a
/// kind of problem.
pub(crate) fn issue_of(error: &serde_json::Error) -> IssueKind {
    let text = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&suffix) {
        Some(message) if error.line() > 0 => classify(message),
        _ => classify(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::HashMap;

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Stop {
        city: String,
        nights: u8,
        quiet: Option<bool>,
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Pair {
        a: u32,
        b: u32,
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    enum Unit {
        Celsius,
        Fahrenheit,
        Kelvin,
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum Either {
        Number(u32),
        Text(String),
    }

    fn message_of<T: for<'de> Deserialize<'de> + std::fmt::Debug>(json: &str) -> String {
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        serde_json::from_value::<T>(value).unwrap_err().to_string()
    }

    /// Every message of these shapes is sorted into its kind, and its English words are serde's.
    #[test]
    fn serde_messages_are_sorted_and_worded_as_serde_words_them() {
        let cases = [
            (
                message_of::<Stop>(r#"{"city": 3, "nights": 1}"#),
                "InvalidType",
            ),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": 300}"#),
                "InvalidValue",
            ),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": -1}"#),
                "InvalidValue",
            ),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": 1.5}"#),
                "InvalidType",
            ),
            (
                message_of::<Stop>(r#"{"city": null, "nights": 1}"#),
                "InvalidType",
            ),
            (
                message_of::<Stop>(r#"{"city": [1], "nights": 1}"#),
                "InvalidType",
            ),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": 1, "quiet": "yes, expected"}"#),
                "InvalidType",
            ),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": 1, "quiet": "say \"no\""}"#),
                "InvalidType",
            ),
            (message_of::<Stop>(r#"{"city": "a"}"#), "Missing"),
            (
                message_of::<Stop>(r#"{"city": "a", "nights": 1, "x": 1}"#),
                "UnknownField",
            ),
            (
                message_of::<Pair>(r#"{"a": 1, "b": 2, "c`, expected `z": 1}"#),
                "UnknownField",
            ),
            (message_of::<Stop>(r#"[]"#), "InvalidLength"),
            (message_of::<Stop>(r#""x""#), "InvalidType"),
            (message_of::<Unit>(r#""rankine""#), "UnknownVariant"),
            (message_of::<Unit>(r#"3"#), "InvalidType"),
            (message_of::<Either>(r#"true"#), "NoVariantMatches"),
            (
                message_of::<HashMap<String, bool>>(r#"{"a": 1}"#),
                "InvalidType",
            ),
            (message_of::<Vec<i64>>(r#"[true]"#), "InvalidType"),
            (message_of::<(u8, u8)>(r#"[1]"#), "InvalidLength"),
            (message_of::<f64>(r#""x""#), "InvalidType"),
        ];
        for (message, kind) in cases {
            let sorted = classify(&message);
            assert!(
                format!("{sorted:?}").starts_with(kind),
                "{message} was sorted as {sorted:?}"
            );
            assert_eq!(sorted.to_string(), message);
        }
        let duplicate = serde_json::from_str::<Pair>(r#"{"a": 1, "a": 2, "b": 3}"#).unwrap_err();
        assert!(
            matches!(issue_of(&duplicate), IssueKind::DuplicateField { field } if field == "a")
        );
        assert!(matches!(
            classify("not a date"),
            IssueKind::Other { message } if message == "not a date"
        ));
    }
}
