//! Arguments that are not JSON at all: what the parser found, and where.

use std::fmt;

/// Why a text is not JSON, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// What is wrong.
    pub problem: SyntaxProblem,
    /// The line it is on, from 1 (0 when unknown).
    pub line: usize,
    /// The column it is at, from 1.
    pub column: usize,
}

/// What is wrong with a text that is not JSON: one kind for each of the JSON parser's errors.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SyntaxProblem {
    /// The text ended inside a list.
    UnfinishedList,
    /// The text ended inside an object.
    UnfinishedObject,
    /// The text ended inside a string.
    UnfinishedString,
    /// The text ended before a value.
    UnfinishedValue,
    /// `:` was expected.
    ExpectedColon,
    /// `,` or `]` was expected.
    ExpectedCommaOrListEnd,
    /// `,` or `}` was expected.
    ExpectedCommaOrObjectEnd,
    /// `true`, `false` or `null` was expected.
    ExpectedIdent,
    /// A value was expected.
    ExpectedValue,
    /// `"` was expected.
    ExpectedDoubleQuote,
    /// A backslash escape that is not one.
    InvalidEscape,
    /// A number that is not one.
    InvalidNumber,
    /// A number too large to be read.
    NumberOutOfRange,
    /// A `\u` escape that is no Unicode code point.
    InvalidUnicodeCodePoint,
    /// A control character inside a string.
    ControlCharacter,
    /// An object key that is not a string.
    KeyMustBeAString,
    /// A `\u` escape of a lone leading surrogate.
    LoneLeadingSurrogate,
    /// A comma before the end of a list or object.
    TrailingComma,
    /// More text after the value.
    TrailingCharacters,
    /// A `\u` escape cut short.
    UnexpectedEndOfHexEscape,
    /// Lists and objects nested too deep.
    RecursionLimitExceeded,
    /// Another problem, in the parser's words.
    Other(String),
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

    /// The problem whose English words (the parser's) are `message`.
    pub(crate) fn from_message(message: &str) -> Self {
        SyntaxProblem::KNOWN
            .into_iter()
            .find(|known| known.english() == message)
            .unwrap_or_else(|| SyntaxProblem::Other(message.to_owned()))
    }

    /// The English words, the JSON parser's own.
    pub fn english(&self) -> &str {
        match self {
            SyntaxProblem::UnfinishedList => "EOF while parsing a list",
            SyntaxProblem::UnfinishedObject => "EOF while parsing an object",
            SyntaxProblem::UnfinishedString => "EOF while parsing a string",
            SyntaxProblem::UnfinishedValue => "EOF while parsing a value",
            SyntaxProblem::ExpectedColon => "expected `:`",
            SyntaxProblem::ExpectedCommaOrListEnd => "expected `,` or `]`",
            SyntaxProblem::ExpectedCommaOrObjectEnd => "expected `,` or `}`",
            SyntaxProblem::ExpectedIdent => "expected ident",
            SyntaxProblem::ExpectedValue => "expected value",
            SyntaxProblem::ExpectedDoubleQuote => "expected `\"`",
            SyntaxProblem::InvalidEscape => "invalid escape",
            SyntaxProblem::InvalidNumber => "invalid number",
            SyntaxProblem::NumberOutOfRange => "number out of range",
            SyntaxProblem::InvalidUnicodeCodePoint => "invalid unicode code point",
            SyntaxProblem::ControlCharacter => {
                "control character (\\u0000-\\u001F) found while parsing a string"
            }
            SyntaxProblem::KeyMustBeAString => "key must be a string",
            SyntaxProblem::LoneLeadingSurrogate => "lone leading surrogate in hex escape",
            SyntaxProblem::TrailingComma => "trailing comma",
            SyntaxProblem::TrailingCharacters => "trailing characters",
            SyntaxProblem::UnexpectedEndOfHexEscape => "unexpected end of hex escape",
            SyntaxProblem::RecursionLimitExceeded => "recursion limit exceeded",
            SyntaxProblem::Other(message) => message,
        }
    }
}

impl SyntaxError {
    /// What the JSON parser says, sorted: its problem and position.
    pub(crate) fn of(error: &serde_json::Error) -> Self {
        let text = error.to_string();
        let (line, column) = (error.line(), error.column());
        let suffix = format!(" at line {line} column {column}");
        let message = match text.strip_suffix(&suffix) {
            Some(message) if line > 0 => message,
            _ => &text,
        };
        SyntaxError {
            problem: SyntaxProblem::from_message(message),
            line,
            column,
        }
    }
}

/// The parser's own English words: `EOF while parsing a value at line 1 column 8`.
impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.problem.english())?;
        if self.line > 0 {
            write!(f, " at line {} column {}", self.line, self.column)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parsers_messages_are_sorted_with_their_position() {
        for (text, problem) in [
            ("{\"a\": ", SyntaxProblem::UnfinishedValue),
            ("{\"a\": [1", SyntaxProblem::UnfinishedList),
            ("{\"a\"", SyntaxProblem::UnfinishedObject),
            ("{\"a", SyntaxProblem::UnfinishedString),
            ("{\"a\" 1}", SyntaxProblem::ExpectedColon),
            ("[1 2]", SyntaxProblem::ExpectedCommaOrListEnd),
            ("{\"a\": 1 \"b\"}", SyntaxProblem::ExpectedCommaOrObjectEnd),
            ("trux", SyntaxProblem::ExpectedIdent),
            ("{\"a\": }", SyntaxProblem::ExpectedValue),
            ("\"\\q\"", SyntaxProblem::InvalidEscape),
            ("-x", SyntaxProblem::InvalidNumber),
            ("{1: 2}", SyntaxProblem::KeyMustBeAString),
            ("[1,]", SyntaxProblem::TrailingComma),
            ("{} x", SyntaxProblem::TrailingCharacters),
            ("\"\u{1}\"", SyntaxProblem::ControlCharacter),
        ] {
            let error = serde_json::from_str::<serde_json::Value>(text).unwrap_err();
            let sorted = SyntaxError::of(&error);
            assert_eq!(sorted.problem, problem, "{text}");
            assert_eq!(sorted.to_string(), error.to_string());
        }
    }
}
