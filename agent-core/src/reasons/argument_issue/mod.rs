//! What can be wrong with a tool's arguments or a typed run's answer, as data: each language's
//! [`Texts`](crate::Texts) words it. The English words are these types' `Display`; they are the
//! words serde and the JSON parser use where a problem comes from them, so an English model reads
//! what it always read.

mod found;
mod serde_errors;
mod syntax;

pub use found::{Expected, Found, JsonType};
use found::{backquoted, serde_one_of};
#[cfg(test)]
pub(crate) use serde_errors::classify;
pub(crate) use serde_errors::issue_of;
pub use syntax::{SyntaxError, SyntaxProblem};

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
