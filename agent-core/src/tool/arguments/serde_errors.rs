//! serde's and serde_json's errors sorted into reasons (a [`SyntaxError`] for text that is not
//! JSON, an [`IssueKind`] for a value that does not fit) by what their messages say: serde
//! reports them in no other form. [`sort`] is the one function that reads serde's words; the
//! corpus test below pins what it reads to the serde_json version in `Cargo.lock`.

use crate::reasons::argument_issue::{
    Expected, Found, IssueKind, JsonType, SyntaxError, SyntaxProblem,
};
use crate::reasons::tool_error::ToolError;
use crate::texts::english;

/// What serde_json reported, sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Sorted {
    /// The text is not JSON: what the parser found wrong, and where.
    Syntax(SyntaxError),
    /// The value does not fit its type.
    Issue(IssueKind),
}

/// Sorts a serde_json error by its message: a syntax error (or text that ended early) by the
/// parser's message, a data error by the shape of serde's (stable ones). A message is sorted only
/// when the kind's English words are the message again, so an English model reads what serde said;
/// one of no known shape is kept as it is ([`IssueKind::Other`], [`SyntaxProblem::Other`]).
pub(crate) fn sort(error: &serde_json::Error) -> Sorted {
    let text = error.to_string();
    let (line, column) = (error.line(), error.column());
    let suffix = format!(" at line {line} column {column}");
    let message = match text.strip_suffix(&suffix) {
        Some(message) if line > 0 => message,
        _ => &text,
    };
    if error.is_data() {
        return Sorted::Issue(classify(message));
    }
    let problem = SyntaxProblem::KNOWN
        .into_iter()
        .find(|known| english::syntax_words(known) == message)
        .unwrap_or_else(|| SyntaxProblem::Other(message.to_owned()));
    Sorted::Syntax(SyntaxError {
        problem,
        line,
        column,
    })
}

/// A value's error as an issue (a deserializer's, or one of a text already known to be JSON).
pub(crate) fn issue_of(error: &serde_json::Error) -> IssueKind {
    match sort(error) {
        Sorted::Issue(kind) => kind,
        // Not reached for a value; kept in serde's words, as data.
        Sorted::Syntax(_) => IssueKind::Other {
            message: error.to_string(),
        },
    }
}

/// A text's error as a syntax error (the text is not JSON).
pub(crate) fn syntax_of(error: &serde_json::Error) -> SyntaxError {
    match sort(error) {
        Sorted::Syntax(syntax) => syntax,
        // A text parsed as a bare JSON value has no data errors; kept in serde's words, as data.
        Sorted::Issue(_) => SyntaxError {
            problem: SyntaxProblem::Other(error.to_string()),
            line: error.line(),
            column: error.column(),
        },
    }
}

impl ToolError {
    /// The error for arguments that are not JSON, as the parser says why (for a tool that reads
    /// its arguments itself).
    pub fn invalid_json(error: &serde_json::Error) -> Self {
        ToolError::InvalidJson {
            error: syntax_of(error),
        }
    }
}

/// A data error's message (its position cut off) sorted into a kind, checked against the English
/// words of the kind.
fn classify(message: &str) -> IssueKind {
    let kind = sort_data(message);
    if let Some(kind) = kind {
        let mut again = String::with_capacity(message.len());
        english::issue_words(&kind, &mut again);
        if again == message {
            return kind;
        }
    }
    IssueKind::Other {
        message: message.to_owned(),
    }
}

impl SyntaxProblem {
    /// Every problem of a known kind, to sort the parser's messages by.
    pub(crate) const KNOWN: [SyntaxProblem; 21] = [
        SyntaxProblem::UnfinishedList,
        SyntaxProblem::UnfinishedObject,
        SyntaxProblem::UnfinishedString,
        SyntaxProblem::UnfinishedValue,
        SyntaxProblem::ExpectedColon,
        SyntaxProblem::ExpectedCommaOrListEnd,
        SyntaxProblem::ExpectedCommaOrObjectEnd,
        SyntaxProblem::ExpectedIdent,
        SyntaxProblem::ExpectedValue,
        SyntaxProblem::ExpectedDoubleQuote,
        SyntaxProblem::InvalidEscape,
        SyntaxProblem::InvalidNumber,
        SyntaxProblem::NumberOutOfRange,
        SyntaxProblem::InvalidUnicodeCodePoint,
        SyntaxProblem::ControlCharacter,
        SyntaxProblem::KeyMustBeAString,
        SyntaxProblem::LoneLeadingSurrogate,
        SyntaxProblem::TrailingComma,
        SyntaxProblem::TrailingCharacters,
        SyntaxProblem::UnexpectedEndOfHexEscape,
        SyntaxProblem::RecursionLimitExceeded,
    ];
}

/// [`classify`]'s guess, before it is checked.
fn sort_data(message: &str) -> Option<IssueKind> {
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

#[cfg(test)]
mod corpus;
