//! What can be wrong with a tool's arguments or a typed run's answer, as data: each language's
//! [`Texts`](crate::Texts) words it. The English words are these types' `Display`; they are the
//! words serde and the JSON parser use where a problem comes from them, so an English model reads
//! what it always read.

use std::fmt;

/// One problem with a tool's arguments (or a typed run's answer): where it is, and what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentIssue {
    /// Where the problem is, as field names and indices joined by dots (`unit`, `stops.2.city`);
    /// empty when it concerns the arguments as a whole.
    pub path: String,
    /// What is wrong, for each language to word.
    pub kind: IssueKind,
}

/// What is wrong with a value at a path: every kind of problem the argument engine finds, whether
/// from the parameters' JSON schema or from the types' own deserializers (serde's errors, sorted
/// into these kinds by the shape of their messages).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IssueKind {
    /// A field that must be given is not there.
    Missing {
        /// `None` when the path names the missing field itself; the field's name when the path
        /// names the object that lacks it (as serde reports it: ``missing field `name` ``).
        field: Option<String>,
    },
    /// A field the type does not have, which would otherwise be dropped silently.
    UnknownField {
        /// `None` when the path names the unknown field itself; its name when the path names the
        /// object that has it (as serde reports it).
        field: Option<String>,
        /// The fields there are, when known (empty: there are none).
        expected: Option<Vec<String>>,
    },
    /// The arguments are JSON, but not an object of named arguments.
    NotAnObject {
        /// What they are instead.
        found: JsonType,
    },
    /// The value is not of the JSON type the schema says.
    WrongType {
        /// The types the schema allows.
        expected: Vec<JsonType>,
        /// What was given.
        found: Found,
    },
    /// The value is not one of the values the schema lists.
    NotOneOf {
        /// The allowed values, each as its JSON text.
        allowed: Vec<String>,
        /// What was given.
        found: Found,
    },
    /// The value is not the one value the schema allows.
    NotConst {
        /// The value allowed, as its JSON text.
        expected: String,
        /// The value given, as its JSON text.
        found: String,
    },
    /// The value fits none of the shapes the schema allows here.
    NoShapeMatches {
        /// What kind of value was given.
        found: JsonType,
    },
    /// The type does not take a value of this kind (serde's "invalid type").
    InvalidType {
        /// What was given.
        found: Found,
        /// What the type takes.
        expected: Expected,
    },
    /// The type takes values of this kind, but not this one: out of range, say (serde's
    /// "invalid value").
    InvalidValue {
        /// What was given.
        found: Found,
        /// What the type takes.
        expected: Expected,
    },
    /// A list or tuple of the wrong length.
    InvalidLength {
        /// The length given.
        length: usize,
        /// What the type takes.
        expected: Expected,
    },
    /// A name that is none of an enum's variants.
    UnknownVariant {
        /// The name given.
        variant: String,
        /// The variants there are (empty: there are none).
        expected: Vec<String>,
    },
    /// The same field is given twice.
    DuplicateField {
        /// The field.
        field: String,
    },
    /// The value fits none of the variants of an untagged enum.
    NoVariantMatches {
        /// The enum's name.
        name: String,
    },
    /// More problems were found than are listed.
    MoreNotListed,
    /// Every field fits, but the whole does not fit the schema.
    DoesNotFit,
    /// What a type's own deserializer said, as it said it: a last resort, for messages of no
    /// known shape. Its words are the type's, not the agent's.
    Other {
        /// The deserializer's message.
        message: String,
    },
}

/// The kinds of JSON value, as schemas name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Boolean,
    /// A number without a fraction.
    Integer,
    /// Any number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// The type of a JSON value (`Integer` for a number without a fraction).
    pub fn of(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Boolean,
            Value::Number(number) if number.is_f64() => JsonType::Number,
            Value::Number(_) => JsonType::Integer,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }

    /// The type a schema's `type` keyword names, if it is one.
    pub(crate) fn named(name: &str) -> Option<Self> {
        Some(match name {
            "null" => JsonType::Null,
            "boolean" => JsonType::Boolean,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "string" => JsonType::String,
            "array" => JsonType::Array,
            "object" => JsonType::Object,
            _ => return None,
        })
    }

    /// The English words for a value of this type: `a string`, `an integer`, `null`.
    pub fn english(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Boolean => "a boolean",
            JsonType::Integer => "an integer",
            JsonType::Number => "a number",
            JsonType::String => "a string",
            JsonType::Array => "an array",
            JsonType::Object => "an object",
        }
    }
}

/// A value the model gave, as a problem shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Found {
    /// A value shown as itself.
    Value {
        /// Its type.
        kind: JsonType,
        /// Its text: JSON, or a string as Rust quotes it where serde reported it.
        text: String,
    },
    /// A value shown by its type alone (a container, or a value too long to show).
    Kind(JsonType),
    /// A value as a type's deserializer described it, in its own words.
    Other(String),
}

impl Found {
    /// A value as a problem shows it: itself when it is short and not a container, else its type.
    pub(crate) fn shown(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        let kind = JsonType::of(value);
        match value {
            Value::Array(_) | Value::Object(_) => Found::Kind(kind),
            scalar => {
                let text = scalar.to_string();
                if text.len() <= 40 {
                    Found::Value { kind, text }
                } else {
                    Found::Kind(kind)
                }
            }
        }
    }

    /// As a schema problem shows it: `"x"`, `2`, `an array`.
    fn english(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Found::Value { text, .. } => f.write_str(text),
            Found::Kind(kind) => f.write_str(kind.english()),
            Found::Other(text) => f.write_str(text),
        }
    }

    /// As serde shows it: ``integer `2` ``, `string "x"`, `sequence`.
    fn serde_english(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Found::Value {
                kind: JsonType::Null,
                ..
            } => f.write_str("null"),
            Found::Value {
                kind: JsonType::String,
                text,
            } => write!(f, "string {text}"),
            Found::Value { kind, text } => write!(f, "{} `{text}`", serde_kind(*kind)),
            Found::Kind(kind) => f.write_str(serde_kind(*kind)),
            Found::Other(text) => f.write_str(text),
        }
    }
}

/// serde's word for a kind of value.
fn serde_kind(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "boolean",
        JsonType::Integer => "integer",
        JsonType::Number => "floating point",
        JsonType::String => "string",
        JsonType::Array => "sequence",
        JsonType::Object => "map",
    }
}

/// What a type takes, as its deserializer says it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Expected {
    /// A value of a JSON type (`a string`, `a boolean`, `a sequence`, `a map`, `unit`).
    Type(JsonType),
    /// An integer of a Rust type, by its name: `u8`, `i64`, `usize`.
    Integer(String),
    /// A number of a Rust type, by its name: `f32`, `f64`.
    Float(String),
    /// A struct, by its name.
    Struct(String),
    /// A tuple struct, by its name.
    TupleStruct(String),
    /// An enum, by its name.
    Enum(String),
    /// A tuple of this many elements.
    Tuple(usize),
    /// An array of this length.
    Array(usize),
    /// A type given as a list (a struct or tuple struct), with this many elements.
    WithElements {
        /// The type.
        of: Box<Expected>,
        /// How many elements it has.
        count: usize,
    },
    /// What the type's deserializer says, in its own words.
    Other(String),
}

impl Expected {
    /// The range of values of [`Integer`](Expected::Integer)'s type, when it is a known one.
    pub fn integer_range(name: &str) -> Option<(i128, u128)> {
        Some(match name {
            "u8" => (0, u8::MAX.into()),
            "u16" => (0, u16::MAX.into()),
            "u32" => (0, u32::MAX.into()),
            "u64" | "usize" => (0, u64::MAX.into()),
            "u128" => (0, u128::MAX),
            "i8" => (i8::MIN.into(), i8::MAX as u128),
            "i16" => (i16::MIN.into(), i16::MAX as u128),
            "i32" => (i32::MIN.into(), i32::MAX as u128),
            "i64" | "isize" => (i64::MIN.into(), i64::MAX as u128),
            "i128" => (i128::MIN, i128::MAX as u128),
            _ => return None,
        })
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Type(JsonType::Null) => f.write_str("unit"),
            Expected::Type(JsonType::Array) => f.write_str("a sequence"),
            Expected::Type(JsonType::Object) => f.write_str("a map"),
            Expected::Type(kind) => f.write_str(kind.english()),
            Expected::Integer(name) | Expected::Float(name) | Expected::Other(name) => {
                f.write_str(name)
            }
            Expected::Struct(name) => write!(f, "struct {name}"),
            Expected::TupleStruct(name) => write!(f, "tuple struct {name}"),
            Expected::Enum(name) => write!(f, "enum {name}"),
            Expected::Tuple(size) => write!(f, "a tuple of size {size}"),
            Expected::Array(length) => write!(f, "an array of length {length}"),
            Expected::WithElements { of, count: 1 } => write!(f, "{of} with 1 element"),
            Expected::WithElements { of, count } => write!(f, "{of} with {count} elements"),
        }
    }
}

/// Names in backquotes as serde lists them: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
fn serde_one_of(names: &[String], f: &mut impl fmt::Write) -> fmt::Result {
    match names {
        [one] => write!(f, "`{one}`"),
        [first, second] => write!(f, "`{first}` or `{second}`"),
        names => {
            f.write_str("one of ")?;
            backquoted(names, f)
        }
    }
}

/// Names in backquotes, joined by commas.
fn backquoted(names: &[String], f: &mut impl fmt::Write) -> fmt::Result {
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            f.write_str(", ")?;
        }
        write!(f, "`{name}`")?;
    }
    Ok(())
}

impl IssueKind {
    /// Writes the English words for this problem (its `Display`) to `f`.
    pub(crate) fn describe(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            IssueKind::Missing { field: None } => f.write_str("missing required field"),
            IssueKind::Missing { field: Some(field) } => write!(f, "missing field `{field}`"),
            IssueKind::UnknownField {
                field: None,
                expected: None,
            } => {
                f.write_str("unknown field; leave it out or check its spelling against the schema")
            }
            IssueKind::UnknownField {
                field: None,
                expected: Some(names),
            } if names.is_empty() => f.write_str("unknown field: this tool takes no arguments"),
            IssueKind::UnknownField {
                field: None,
                expected: Some(names),
            } => {
                f.write_str("unknown field, expected one of ")?;
                backquoted(names, f)
            }
            IssueKind::UnknownField {
                field: Some(field),
                expected,
            } => match expected.as_deref() {
                None => write!(f, "unknown field `{field}`"),
                Some([]) => write!(f, "unknown field `{field}`, there are no fields"),
                Some(names) => {
                    write!(f, "unknown field `{field}`, expected ")?;
                    serde_one_of(names, f)
                }
            },
            IssueKind::NotAnObject { found } => {
                let found = match found {
                    // Any number, whole or not.
                    JsonType::Integer => JsonType::Number,
                    other => *other,
                };
                write!(
                    f,
                    "expected a JSON object of named arguments, got {}",
                    found.english()
                )
            }
            IssueKind::WrongType { expected, found } => {
                f.write_str("expected ")?;
                for (index, kind) in expected.iter().enumerate() {
                    if index > 0 {
                        f.write_str(" or ")?;
                    }
                    f.write_str(kind.english())?;
                }
                f.write_str(", got ")?;
                found.english(f)
            }
            IssueKind::NotOneOf { allowed, found } => {
                write!(f, "expected one of {}, got ", allowed.join(", "))?;
                found.english(f)
            }
            IssueKind::NotConst { expected, found } => {
                write!(f, "expected {expected}, got {found}")
            }
            IssueKind::NoShapeMatches { found } => write!(
                f,
                "{} does not match any of the allowed shapes",
                found.english()
            ),
            IssueKind::InvalidType { found, expected } => {
                f.write_str("invalid type: ")?;
                found.serde_english(f)?;
                write!(f, ", expected {expected}")
            }
            IssueKind::InvalidValue { found, expected } => {
                f.write_str("invalid value: ")?;
                found.serde_english(f)?;
                write!(f, ", expected {expected}")
            }
            IssueKind::InvalidLength { length, expected } => {
                write!(f, "invalid length {length}, expected {expected}")
            }
            IssueKind::UnknownVariant { variant, expected } => {
                if expected.is_empty() {
                    write!(f, "unknown variant `{variant}`, there are no variants")
                } else {
                    write!(f, "unknown variant `{variant}`, expected ")?;
                    serde_one_of(expected, f)
                }
            }
            IssueKind::DuplicateField { field } => write!(f, "duplicate field `{field}`"),
            IssueKind::NoVariantMatches { name } => {
                write!(f, "data did not match any variant of untagged enum {name}")
            }
            IssueKind::MoreNotListed => f.write_str("more problems like these, not listed"),
            IssueKind::DoesNotFit => f.write_str("the value does not fit the schema"),
            IssueKind::Other { message } => f.write_str(message),
        }
    }
}

/// The English words for the problem.
impl fmt::Display for IssueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.describe(f)
    }
}

impl ArgumentIssue {
    /// An issue at a path.
    pub fn new(path: impl Into<String>, kind: IssueKind) -> Self {
        ArgumentIssue {
            path: path.into(),
            kind,
        }
    }

    /// Renders issues as `path`, `path_separator`, the words `word` writes for the problem, joined
    /// by `separator`; `whole` labels an issue with no path.
    pub(crate) fn render(
        issues: &[ArgumentIssue],
        whole: &str,
        path_separator: &str,
        separator: &str,
        word: fn(&IssueKind, &mut String),
    ) -> String {
        let mut out = String::new();
        for (index, issue) in issues.iter().enumerate() {
            if index > 0 {
                out.push_str(separator);
            }
            out.push_str(if issue.path.is_empty() {
                whole
            } else {
                &issue.path
            });
            out.push_str(path_separator);
            word(&issue.kind, &mut out);
        }
        out
    }

    /// Writes the English words for `kind` to `out`: [`render`](ArgumentIssue::render)'s `word`
    /// for English.
    pub(crate) fn english(kind: &IssueKind, out: &mut String) {
        // Writing into a `String` cannot fail.
        let _ = kind.describe(out);
    }
}

/// `path: problem` in English, or the problem alone when it concerns the whole.
impl fmt::Display for ArgumentIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        self.kind.describe(f)
    }
}

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
