//! A tool's parameter schema in each provider's dialect, computed the first time an adapter needs
//! it and kept with the tool's definition, already serialized: a request from a long-lived tool set
//! pays for the transforms and for writing the schema's JSON once, not on every model call.

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;
use serde_json::value::RawValue;

/// The dialects a schema is kept in (see `providers::dialect`).
#[derive(Debug, Clone, Copy)]
// Each adapter uses its own; with some adapters left out, theirs are unused.
#[cfg_attr(
    not(all(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]
pub(crate) enum Dialect {
    /// Anthropic's form.
    Anthropic,
    /// OpenAI's form outside strict mode.
    OpenAi,
    /// OpenAI's strict form (`None` when strict mode cannot say the schema).
    OpenAiStrict,
    /// Gemini's JSON-Schema form.
    GeminiJson,
    /// Gemini's OpenAPI-subset form.
    GeminiOpenApi,
}

/// The forms computed so far. Each remembers the schema it was made from: a definition whose
/// `parameters` were changed since gets a fresh form (not kept), never a stale one.
#[derive(Clone, Default)]
pub(crate) struct DialectForms {
    forms: [OnceLock<Form>; 5],
}

#[derive(Clone)]
struct Form {
    source: Value,
    result: Option<Box<RawValue>>,
}

/// A schema's JSON text, as it goes into a request body.
pub(crate) fn to_json(schema: &Value) -> Box<RawValue> {
    // A `Value` always serializes.
    serde_json::value::to_raw_value(schema).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

#[cfg_attr(not(feature = "http"), allow(dead_code))]
impl DialectForms {
    /// `schema` in `dialect`, made by `transform` the first time, as JSON text.
    pub(crate) fn get<'a>(
        &'a self,
        schema: &Value,
        dialect: Dialect,
        transform: fn(&Value) -> Option<Value>,
    ) -> Option<Cow<'a, RawValue>> {
        let form = self.forms[dialect as usize].get_or_init(|| Form {
            source: schema.clone(),
            result: transform(schema).as_ref().map(to_json),
        });
        if form.source == *schema {
            form.result.as_deref().map(Cow::Borrowed)
        } else {
            transform(schema).as_ref().map(to_json).map(Cow::Owned)
        }
    }
}

impl fmt::Debug for DialectForms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = self
            .forms
            .iter()
            .filter(|form| form.get().is_some())
            .count();
        write!(f, "DialectForms({kept} kept)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(schema: &Value) -> Option<Value> {
        Some(Value::String(schema.as_str()?.to_uppercase()))
    }

    #[test]
    fn a_form_is_kept_for_its_schema_and_remade_for_another() {
        let forms = DialectForms::default();
        let first = forms.get(&Value::from("a"), Dialect::OpenAi, upper);
        assert!(matches!(first, Some(Cow::Borrowed(json)) if json.get() == r#""A""#));
        // The schema changed: a fresh form, not the kept one.
        let changed = forms.get(&Value::from("b"), Dialect::OpenAi, upper);
        assert!(matches!(changed, Some(Cow::Owned(json)) if json.get() == r#""B""#));
        assert!(
            forms
                .get(&Value::from(1), Dialect::OpenAiStrict, upper)
                .is_none()
        );
    }
}
