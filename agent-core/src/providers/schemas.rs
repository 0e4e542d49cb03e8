//! Tools' parameter schemas in an adapter's dialects, made the first time a request offers the
//! tool and kept by the adapter, already serialized: a request from a long-lived tool set pays for
//! the transforms and for writing the schema's JSON once, not on every model call.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde::{Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::tool::ToolDef;

/// The dialects a schema is kept in (see [`dialect`](super::dialect)).
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

impl Dialect {
    /// What makes a schema's form in this dialect: `None` when the dialect cannot say it.
    fn transform(self) -> fn(&Value) -> Option<Value> {
        match self {
            Dialect::Anthropic => |schema| Some(super::dialect::anthropic(schema)),
            Dialect::OpenAi => |schema| Some(super::dialect::openai(schema)),
            Dialect::OpenAiStrict => super::dialect::openai_strict,
            Dialect::GeminiJson => |schema| Some(super::dialect::gemini_json(schema)),
            Dialect::GeminiOpenApi => |schema| Some(super::dialect::gemini(schema)),
        }
    }
}

/// A schema's JSON text, as it goes into a request body: one the adapter keeps, or one made for
/// this request.
#[derive(Debug)]
pub(crate) enum SchemaJson {
    Kept(Arc<RawValue>),
    Made(Box<RawValue>),
}

impl SchemaJson {
    /// `schema`'s text, made now.
    #[cfg_attr(not(feature = "gemini"), allow(dead_code))]
    pub(crate) fn of(schema: &Value) -> Self {
        SchemaJson::Made(to_json(schema))
    }

    /// `null`, for a schema no form can say.
    pub(crate) fn null() -> Self {
        SchemaJson::Made(RawValue::NULL.to_owned())
    }
}

impl Serialize for SchemaJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            SchemaJson::Kept(json) => json.serialize(serializer),
            SchemaJson::Made(json) => json.serialize(serializer),
        }
    }
}

/// A schema's JSON text.
fn to_json(schema: &Value) -> Box<RawValue> {
    // A `Value` always serializes.
    serde_json::value::to_raw_value(schema).unwrap_or_else(|_| RawValue::NULL.to_owned())
}

/// How many tools' forms an adapter keeps before it starts over: a program whose tool names keep
/// changing (tools made at run time, remote tool lists) does not grow the adapter without end.
const MOST_TOOLS: usize = 1024;

/// The forms an adapter has made, by tool name. Each remembers the schema it was made from: a
/// tool whose parameters differ from it (changed since, or another tool set's tool of the same
/// name) gets a fresh form, never a stale one.
#[derive(Default)]
pub(crate) struct KeptSchemas {
    tools: Mutex<HashMap<String, [Option<Form>; 5]>>,
}

struct Form {
    source: Value,
    json: Option<Arc<RawValue>>,
}

impl KeptSchemas {
    /// `tool`'s parameters in `dialect`, made the first time, as JSON text; `None` when the
    /// dialect cannot say them.
    pub(crate) fn form(&self, tool: &ToolDef, dialect: Dialect) -> Option<SchemaJson> {
        self.get(tool, dialect, dialect.transform())
    }

    /// `tool`'s parameters in `dialect`, made by `transform` the first time, as JSON text; `None`
    /// when `transform` cannot say them.
    fn get(
        &self,
        tool: &ToolDef,
        dialect: Dialect,
        transform: fn(&Value) -> Option<Value>,
    ) -> Option<SchemaJson> {
        let schema = &tool.parameters;
        {
            let tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(Some(form)) = tools.get(&tool.name).map(|forms| &forms[dialect as usize])
                && form.source == *schema
            {
                return form.json.clone().map(SchemaJson::Kept);
            }
        }
        // Made without the lock: another request on this adapter need not wait for it.
        let json: Option<Arc<RawValue>> =
            transform(schema).as_ref().map(|form| to_json(form).into());
        let mut tools = self.tools.lock().unwrap_or_else(PoisonError::into_inner);
        if tools.len() >= MOST_TOOLS && !tools.contains_key(&tool.name) {
            tools.clear();
        }
        tools.entry(tool.name.clone()).or_default()[dialect as usize] = Some(Form {
            source: schema.clone(),
            json: json.clone(),
        });
        json.map(SchemaJson::Kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upper(schema: &Value) -> Option<Value> {
        Some(Value::String(schema.as_str()?.to_uppercase()))
    }

    fn text(json: Option<SchemaJson>) -> Option<String> {
        json.map(|json| serde_json::to_string(&json).unwrap())
    }

    #[test]
    fn a_form_is_kept_for_its_schema_and_remade_for_another() {
        let kept = KeptSchemas::default();
        let first = ToolDef::new("t", "", Value::from("a"));
        assert_eq!(
            text(kept.get(&first, Dialect::OpenAi, upper)).as_deref(),
            Some(r#""A""#)
        );
        let again = kept.get(&first, Dialect::OpenAi, |_| unreachable!("kept"));
        assert!(matches!(again, Some(SchemaJson::Kept(_))));
        // The schema changed: a fresh form, not the kept one.
        let changed = ToolDef::new("t", "", Value::from("b"));
        assert_eq!(
            text(kept.get(&changed, Dialect::OpenAi, upper)).as_deref(),
            Some(r#""B""#)
        );
        // Another dialect, kept apart; a form that cannot be said is kept as such.
        let number = ToolDef::new("t", "", Value::from(1));
        assert!(kept.get(&number, Dialect::OpenAiStrict, upper).is_none());
        assert!(
            kept.get(&number, Dialect::OpenAiStrict, |_| unreachable!("kept"))
                .is_none()
        );
    }

    #[test]
    fn past_the_most_tools_it_starts_over() {
        let kept = KeptSchemas::default();
        for index in 0..=MOST_TOOLS {
            let tool = ToolDef::new(format!("t{index}"), "", Value::from("a"));
            kept.get(&tool, Dialect::Anthropic, upper);
        }
        let tools = kept.tools.lock().unwrap();
        assert_eq!(tools.len(), 1);
    }
}
