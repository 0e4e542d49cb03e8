//! What can be wrong with a tool's arguments or a typed run's answer, as data: each language's
//! [`Texts`](crate::Texts) words it. `Display` is [`English`](crate::English)'s words, which are
//! serde's and the JSON parser's where a problem comes from them, so an English model reads what
//! serde said.

mod found;
mod syntax;

pub use found::{Expected, Found, JsonType};
pub use syntax::{SyntaxError, SyntaxProblem};

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

impl ArgumentIssue {
    /// An issue at a path.
    pub fn new(path: impl Into<String>, kind: IssueKind) -> Self {
        ArgumentIssue {
            path: path.into(),
            kind,
        }
    }

    /// Renders issues as `path`, `path_separator`, the words `word` writes for the problem, joined
    /// by `separator`; `whole` labels an issue with no path. Each language's
    /// [`Texts`](crate::Texts) lists a call's issues so, with its own words and punctuation.
    pub fn render(
        issues: &[ArgumentIssue],
        whole: &str,
        path_separator: &str,
        separator: &str,
        mut word: impl FnMut(&IssueKind, &mut String),
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
}
