//! The corpus [`sort`] is pinned to: serde_json's messages for each kind of problem, as the
//! version in `RECORDED_WITH` writes them, each with the kind it must be sorted into and the
//! English words that must give the message back. When serde_json changes a message, a case here
//! fails and says which; when `Cargo.lock` takes another serde_json, the version test fails until
//! the corpus is checked against it.

use std::collections::HashMap;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::*;

/// The serde_json version whose messages this corpus records.
const RECORDED_WITH: &str = "1.0.154";

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

/// A type whose own deserializer refuses every value in words of its own.
#[derive(Debug)]
struct Date;

impl<'de> Deserialize<'de> for Date {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let _ = serde_json::Value::deserialize(deserializer)?;
        Err(serde::de::Error::custom("not a date"))
    }
}

/// serde_json's error for `json` read as a `T` from a value (no position).
fn from_value<T: DeserializeOwned + std::fmt::Debug>(json: &str) -> serde_json::Error {
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    serde_json::from_value::<T>(value).unwrap_err()
}

/// serde_json's error for `text` read as a `T` from text (with a position).
fn from_text<T: DeserializeOwned + std::fmt::Debug>(text: &str) -> serde_json::Error {
    serde_json::from_str::<T>(text).unwrap_err()
}

/// The name of the kind an error was sorted into: the issue's, or the syntax problem's.
fn kind_name(sorted: &Sorted) -> String {
    let debug = match sorted {
        Sorted::Issue(kind) => format!("{kind:?}"),
        Sorted::Syntax(error) => format!("{:?}", error.problem),
    };
    let end = debug.find([' ', '(', '{']).unwrap_or(debug.len());
    debug[..end].to_owned()
}

/// Every case: serde_json's error, its message as recorded, the kind it is sorted into.
fn corpus() -> Vec<(serde_json::Error, &'static str, &'static str)> {
    vec![
        (
            from_value::<Stop>(r#"{"city": 3, "nights": 1}"#),
            "invalid type: integer `3`, expected a string",
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": 300}"#),
            "invalid value: integer `300`, expected u8",
            "InvalidValue",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": -1}"#),
            "invalid value: integer `-1`, expected u8",
            "InvalidValue",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": 1.5}"#),
            "invalid type: floating point `1.5`, expected u8",
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": null, "nights": 1}"#),
            "invalid type: null, expected a string",
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": [1], "nights": 1}"#),
            "invalid type: sequence, expected a string",
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": 1, "quiet": "yes, expected"}"#),
            r#"invalid type: string "yes, expected", expected a boolean"#,
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": 1, "quiet": "say \"no\""}"#),
            r#"invalid type: string "say \"no\"", expected a boolean"#,
            "InvalidType",
        ),
        (
            from_value::<Stop>(r#"{"city": "a"}"#),
            "missing field `nights`",
            "Missing",
        ),
        (
            from_value::<Stop>(r#"{"city": "a", "nights": 1, "x": 1}"#),
            "unknown field `x`, expected one of `city`, `nights`, `quiet`",
            "UnknownField",
        ),
        (
            from_value::<Pair>(r#"{"a": 1, "b": 2, "c`, expected `z": 1}"#),
            "unknown field `c`, expected `z`, expected `a` or `b`",
            "UnknownField",
        ),
        (
            from_value::<Stop>("[]"),
            "invalid length 0, expected struct Stop with 3 elements",
            "InvalidLength",
        ),
        (
            from_value::<Stop>(r#""x""#),
            r#"invalid type: string "x", expected struct Stop"#,
            "InvalidType",
        ),
        (
            from_value::<Unit>(r#""rankine""#),
            "unknown variant `rankine`, expected one of `celsius`, `fahrenheit`, `kelvin`",
            "UnknownVariant",
        ),
        (
            from_value::<Unit>("3"),
            "invalid type: integer `3`, expected string or map",
            "InvalidType",
        ),
        (
            from_value::<Either>("true"),
            "data did not match any variant of untagged enum Either",
            "NoVariantMatches",
        ),
        (
            from_value::<HashMap<String, bool>>(r#"{"a": 1}"#),
            "invalid type: integer `1`, expected a boolean",
            "InvalidType",
        ),
        (
            from_value::<Vec<i64>>("[true]"),
            "invalid type: boolean `true`, expected i64",
            "InvalidType",
        ),
        (
            from_value::<(u8, u8)>("[1]"),
            "invalid length 1, expected a tuple of size 2",
            "InvalidLength",
        ),
        (
            from_value::<f64>(r#""x""#),
            r#"invalid type: string "x", expected f64"#,
            "InvalidType",
        ),
        (
            from_text::<Pair>(r#"{"a": 1, "a": 2, "b": 3}"#),
            "duplicate field `a` at line 1 column 12",
            "DuplicateField",
        ),
        (from_value::<Date>("1"), "not a date", "Other"),
        (
            from_text::<serde_json::Value>("{\"a\": "),
            "EOF while parsing a value at line 1 column 6",
            "UnfinishedValue",
        ),
        (
            from_text::<serde_json::Value>("{\"a\": [1"),
            "EOF while parsing a list at line 1 column 8",
            "UnfinishedList",
        ),
        (
            from_text::<serde_json::Value>("{\"a\""),
            "EOF while parsing an object at line 1 column 4",
            "UnfinishedObject",
        ),
        (
            from_text::<serde_json::Value>("{\"a"),
            "EOF while parsing a string at line 1 column 3",
            "UnfinishedString",
        ),
        (
            from_text::<serde_json::Value>("{\"a\" 1}"),
            "expected `:` at line 1 column 6",
            "ExpectedColon",
        ),
        (
            from_text::<serde_json::Value>("[1 2]"),
            "expected `,` or `]` at line 1 column 4",
            "ExpectedCommaOrListEnd",
        ),
        (
            from_text::<serde_json::Value>("{\"a\": 1 \"b\"}"),
            "expected `,` or `}` at line 1 column 9",
            "ExpectedCommaOrObjectEnd",
        ),
        (
            from_text::<serde_json::Value>("trux"),
            "expected ident at line 1 column 4",
            "ExpectedIdent",
        ),
        (
            from_text::<serde_json::Value>("{\"a\": }"),
            "expected value at line 1 column 7",
            "ExpectedValue",
        ),
        (
            from_text::<serde_json::Value>("\"\\q\""),
            "invalid escape at line 1 column 3",
            "InvalidEscape",
        ),
        (
            from_text::<serde_json::Value>("-x"),
            "invalid number at line 1 column 2",
            "InvalidNumber",
        ),
        (
            from_text::<serde_json::Value>("{1: 2}"),
            "key must be a string at line 1 column 2",
            "KeyMustBeAString",
        ),
        (
            from_text::<serde_json::Value>("[1,]"),
            "trailing comma at line 1 column 4",
            "TrailingComma",
        ),
        (
            from_text::<serde_json::Value>("{} x"),
            "trailing characters at line 1 column 4",
            "TrailingCharacters",
        ),
        (
            from_text::<serde_json::Value>("\"\u{1}\""),
            "control character (\\u0000-\\u001F) found while parsing a string at line 1 column 2",
            "ControlCharacter",
        ),
    ]
}

#[test]
fn serde_jsons_messages_are_sorted_into_their_kinds_and_worded_back() {
    let mut wrong = Vec::new();
    for (error, message, kind) in corpus() {
        if error.to_string() != message {
            wrong.push(format!(
                "serde_json now writes {error:?}, recorded {message:?}"
            ));
            continue;
        }
        let sorted = sort(&error);
        if kind_name(&sorted) != kind {
            wrong.push(format!("{message:?} sorted as {sorted:?}, not {kind}"));
        }
        let english = match &sorted {
            Sorted::Issue(kind) if error.line() > 0 => {
                format!("{kind} at line {} column {}", error.line(), error.column())
            }
            Sorted::Issue(kind) => kind.to_string(),
            Sorted::Syntax(syntax) => syntax.to_string(),
        };
        if english != message {
            wrong.push(format!("{message:?} worded back as {english:?}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "against serde_json {RECORDED_WITH}'s messages:\n{}",
        wrong.join("\n")
    );
}

/// Each shape of serde's messages the texts word is sorted into its kind.
#[test]
fn each_shape_of_serdes_messages_is_sorted_into_its_kind() {
    for (message, kind) in crate::texts::tests::serde_shapes() {
        assert_eq!(classify(message), kind, "{message}");
    }
}

#[test]
fn every_known_syntax_problem_has_a_message_of_its_own() {
    for problem in SyntaxProblem::KNOWN {
        let words = english::syntax_words(&problem);
        let found: Vec<_> = SyntaxProblem::KNOWN
            .iter()
            .filter(|other| english::syntax_words(other) == words)
            .collect();
        assert_eq!(found, [&problem], "{words}");
    }
}

/// The corpus is of the serde_json the workspace builds with: a new version is taken only once
/// its messages have been checked here.
#[test]
fn the_corpus_is_of_the_serde_json_in_the_lock_file() {
    let lock = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.lock");
    // Outside the workspace (a published crate) there is no lock file to hold it to.
    let Ok(lock) = std::fs::read_to_string(lock) else {
        return;
    };
    let version = lock
        .split("[[package]]")
        .find(|package| package.contains("\nname = \"serde_json\"\n"))
        .and_then(|package| package.split("\nversion = \"").nth(1))
        .and_then(|rest| rest.split('"').next())
        .expect("Cargo.lock has serde_json");
    assert_eq!(
        version, RECORDED_WITH,
        "Cargo.lock takes serde_json {version}; this corpus records {RECORDED_WITH}'s messages: \
         run these tests, check each message and its kind, then set RECORDED_WITH"
    );
}
