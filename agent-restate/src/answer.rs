//! What a durable agent's runs answer with: their text ([`TextAnswer`]), or a value of the type
//! given to [`DurableAgent::output`](super::DurableAgent::output) ([`TypedAnswer`]).

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use restate_sdk::errors::TerminalError;
use serde::Serialize;
use serde_json::{Map, Value};

use agent_core::BoxFuture;
use agent_core::OutputType;
use agent_core::root_schema;
use agent_core::{RunError, RunOutput, RunRequest, WithContext};

/// How a durable agent's runs answer: [`TextAnswer`] or [`TypedAnswer`]. Implemented by those two
/// only.
pub trait DurableAnswer<S>: Send + Sync + 'static {
    /// Runs `run` to its end: its output, and for a typed run its value as JSON. A run that fails
    /// is a terminal error.
    #[doc(hidden)]
    fn answer<'a>(
        &'a self,
        run: RunRequest<'a, S, WithContext>,
    ) -> BoxFuture<'a, Result<(RunOutput, Option<Value>), TerminalError>>;

    /// The JSON schema of the `run` and `output` handlers' answer, for Restate's discovery.
    #[doc(hidden)]
    fn output_schema(&self) -> Option<Value>;
}

/// Runs answer with their text: a [`DurableOutput`](super::DurableOutput) without a `value`.
/// What [`DurableAgent::new`](super::DurableAgent::new) starts with.
#[derive(Debug, Clone, Copy, Default)]
pub struct TextAnswer;

impl<S: Send + Sync + 'static> DurableAnswer<S> for TextAnswer {
    fn answer<'a>(
        &'a self,
        run: RunRequest<'a, S, WithContext>,
    ) -> BoxFuture<'a, Result<(RunOutput, Option<Value>), TerminalError>> {
        Box::pin(async move {
            let output = run.await.map_err(failed)?;
            Ok((output, None))
        })
    }

    fn output_schema(&self) -> Option<Value> {
        None
    }
}

/// A check of a typed durable run's value beyond its type (see [`TypedAnswer`]).
type Check<S, T> = dyn Fn(&S, &T) -> Result<(), String> + Send + Sync;

/// Runs answer with a value of type `T`: a [`DurableOutput`](super::DurableOutput) whose `value`
/// is it, as JSON. What [`DurableAgent::output`](super::DurableAgent::output) asks for.
pub struct TypedAnswer<S, T> {
    validators: Vec<Arc<Check<S, T>>>,
    output: PhantomData<fn() -> T>,
}

impl<S, T> TypedAnswer<S, T> {
    pub(super) fn new() -> Self {
        TypedAnswer {
            validators: Vec::new(),
            output: PhantomData,
        }
    }

    pub(super) fn validate(
        &mut self,
        check: impl Fn(&S, &T) -> Result<(), String> + Send + Sync + 'static,
    ) {
        self.validators.push(Arc::new(check));
    }
}

impl<S, T> fmt::Debug for TypedAnswer<S, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TypedAnswer")
            .field("output", &std::any::type_name::<T>())
            .field("validators", &self.validators.len())
            .finish()
    }
}

impl<S, T> DurableAnswer<S> for TypedAnswer<S, T>
where
    S: Send + Sync + 'static,
    T: OutputType + Serialize,
{
    fn answer<'a>(
        &'a self,
        run: RunRequest<'a, S, WithContext>,
    ) -> BoxFuture<'a, Result<(RunOutput, Option<Value>), TerminalError>> {
        let mut run = run.output::<T>();
        for check in &self.validators {
            run = run.validate(move |context: &S, value: &T| check(context, value));
        }
        Box::pin(async move {
            let typed = run.await.map_err(failed)?;
            let value = serde_json::to_value(&typed.value).map_err(|error| {
                TerminalError::new_with_code(
                    500,
                    format!("the run's output cannot be written as JSON: {error}"),
                )
            })?;
            Ok((typed.run, Some(value)))
        })
    }

    fn output_schema(&self) -> Option<Value> {
        let mut value = root_schema::<T>().unwrap_or_default();
        // Definitions go to the root, where the references point.
        let definitions = value.remove("$defs");
        let mut properties = Map::new();
        properties.insert("value".into(), Value::Object(value));
        properties.insert("text".into(), serde_json::json!({ "type": "string" }));
        properties.insert("steps".into(), serde_json::json!({ "type": "integer" }));
        let mut root = Map::new();
        root.insert("type".into(), "object".into());
        root.insert("properties".into(), Value::Object(properties));
        root.insert(
            "required".into(),
            serde_json::json!(["value", "text", "stop_reason", "steps", "usage", "messages"]),
        );
        if let Some(definitions) = definitions {
            root.insert("$defs".into(), definitions);
        }
        Some(Value::Object(root))
    }
}

/// A run that failed ends its workflow with a terminal error (Restate does not retry it): the
/// same failure would come back. The error's text says which step failed and why.
pub(super) fn failed(error: RunError) -> TerminalError {
    TerminalError::new_with_code(500, error.to_string())
}

#[cfg(test)]
mod tests {
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Stop {
        city: String,
    }

    #[test]
    fn a_typed_answers_schema_has_the_value_under_value_and_its_definitions_at_the_root() {
        let schema = TypedAnswer::<(), Vec<Stop>>::new()
            .output_schema()
            .expect("a schema");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"][0], "value");
        let value = &schema["properties"]["value"];
        assert_eq!(value["type"], "array");
        assert_eq!(value["items"], json!({ "$ref": "#/$defs/Stop" }));
        assert_eq!(schema["$defs"]["Stop"]["required"], json!(["city"]));
        assert!(value.get("$defs").is_none());
        assert_eq!(DurableAnswer::<()>::output_schema(&TextAnswer), None);
    }
}
