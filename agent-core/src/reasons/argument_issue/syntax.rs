//! Arguments that are not JSON at all: what the parser found, and where.

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
