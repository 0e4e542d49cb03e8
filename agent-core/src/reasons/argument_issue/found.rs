//! What an argument was found to be, and what was expected of it, as JSON sees them.

/// The kinds of JSON value, as schemas name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
}

/// A value the model gave, as a problem shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
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
}

/// What a type takes, as its deserializer says it.
#[derive(Debug, Clone, PartialEq, Eq)]
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
