//! What a typed run asks of the model: the output type's schema (made once per type), the
//! final-answer tool or the native format it travels as, and the check each answer goes through.

use std::any::TypeId;
use std::sync::{Mutex, OnceLock, PoisonError};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{OutputMode, OutputProblem};
use crate::reasons::argument_issue::{ArgumentIssue, Found, IssueKind, JsonType};
use crate::schema::root_schema;
use crate::settings::ResponseFormat;
use crate::tool::arguments::{SchemaFit, Unfit};

/// A type a run can give its answer as: any `DeserializeOwned + JsonSchema` value that can cross
/// threads.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a run's output",
    label = "the model's answer cannot be parsed into `{Self}`, or it has no JSON schema",
    note = "an output type must implement `serde::Deserialize` and `schemars::JsonSchema` (and be `Send + 'static`): add `#[derive(Deserialize, JsonSchema)]` to `{Self}`"
)]
pub trait OutputType: DeserializeOwned + JsonSchema + Send + 'static {}

#[diagnostic::do_not_recommend]
impl<T: DeserializeOwned + JsonSchema + Send + 'static> OutputType for T {}

/// A check of a typed run's value beyond its type: `Err(message)` sends `message` back to the
/// model, which tries again (within the run's retries). It is handed the run's context.
pub type Validator<'a, S, T> = Box<dyn Fn(&S, &T) -> Result<(), String> + Send + Sync + 'a>;

/// The name of the final-answer tool and of the native format.
pub(crate) const OUTPUT_NAME: &str = "final_result";

/// An output type's schema and the two forms it is sent in, made once per type and agent (see
/// [`OutputShapes`]).
pub(crate) struct OutputShape {
    /// The schema the model sees (the type's own when it is an object, else `{"response": ...}`),
    /// and how outputs are read by it.
    pub(crate) fit: SchemaFit,
    /// Whether the value sits under `response` (the providers want an object at the root).
    pub(crate) wrapped: bool,
    /// What the type is (its doc comment), for the final-answer tool's description.
    pub(crate) description: Option<String>,
    /// The native format.
    pub(crate) format: ResponseFormat,
}

/// How many output types' shapes a block of [`OutputShapes`] holds.
const SHAPES_A_BLOCK: usize = 4;

/// The shapes of the output types an agent's typed runs ask for, made on the first run of each
/// type and kept by the agent: schemars is slow next to a run with an instant model. Slots set
/// once, in blocks added as more types come, so a run finds its shape without a lock and borrows
/// it for as long as it borrows the agent (a program has a few output types, and comparing a few
/// `TypeId`s costs less than hashing one).
#[derive(Default)]
pub(crate) struct OutputShapes {
    slots: [OnceLock<(TypeId, Box<OutputShape>)>; SHAPES_A_BLOCK],
    more: OnceLock<Box<OutputShapes>>,
}

impl OutputShapes {
    /// The shape of `T`, made the first time.
    pub(crate) fn of<T: JsonSchema + 'static>(&self) -> &OutputShape {
        let key = TypeId::of::<T>();
        let mut made = None;
        let mut block = self;
        loop {
            for slot in &block.slots {
                if slot.get().is_none() {
                    // Another run may fill the slot first, with this type or another.
                    let shape = made.take().unwrap_or_else(|| {
                        Box::new(OutputShape::new(root_schema::<T>().unwrap_or_default()))
                    });
                    if let Err((_, shape)) = slot.set((key, shape)) {
                        made = Some(shape);
                    }
                }
                if let Some((kept, shape)) = slot.get()
                    && *kept == key
                {
                    return shape;
                }
            }
            block = block.more.get_or_init(Box::default);
        }
    }
}

impl OutputShape {
    fn new(mut schema: Map<String, Value>) -> OutputShape {
        let description = match schema.remove("description") {
            Some(Value::String(description)) => Some(description),
            _ => None,
        };
        schema.remove("title");
        let is_object = schema.get("type").and_then(Value::as_str) == Some("object")
            && schema.contains_key("properties");
        let (schema, wrapped) = if is_object {
            (Value::Object(schema), false)
        } else {
            // Definitions stay at the root, where the references point.
            let definitions = schema.remove("$defs");
            let mut root = Map::new();
            root.insert("type".into(), "object".into());
            root.insert(
                "properties".into(),
                Value::Object(Map::from_iter([("response".into(), Value::Object(schema))])),
            );
            root.insert("required".into(), Value::Array(vec!["response".into()]));
            if let Some(definitions) = definitions {
                root.insert("$defs".into(), definitions);
            }
            (Value::Object(root), true)
        };
        let mut format = ResponseFormat::new(OUTPUT_NAME, schema.clone());
        format.description.clone_from(&description);
        OutputShape {
            format,
            description,
            fit: SchemaFit::of(schema, true),
            wrapped,
        }
    }
}

/// What the loop needs of a typed run, whatever its type: the shape to send and a check that
/// keeps the value it accepts.
pub(crate) trait OutputCheck<S>: Send + Sync {
    /// The output type's identity, to cache what is made for it.
    fn key(&self) -> TypeId;
    /// How the output is asked for.
    fn mode(&self) -> OutputMode;
    /// How many rejected outputs are sent back before the run fails.
    fn retries(&self) -> usize;
    /// The schema and its forms.
    fn shape(&self) -> &OutputShape;
    /// Reads `raw` as the output and runs the validators; keeps the value when it is taken.
    fn accept(&self, context: &S, raw: &str) -> Result<(), OutputProblem>;
}

/// The check of a run whose output is a `T`.
pub(crate) struct TypedCheck<'a, S, T> {
    mode: OutputMode,
    retries: usize,
    shape: &'a OutputShape,
    validators: Vec<Validator<'a, S, T>>,
    value: Mutex<Option<T>>,
}

impl<'a, S, T: OutputType> TypedCheck<'a, S, T> {
    pub(crate) fn new(
        mode: OutputMode,
        retries: usize,
        shape: &'a OutputShape,
        validators: Vec<Validator<'a, S, T>>,
    ) -> Self {
        TypedCheck {
            mode,
            retries,
            shape,
            validators,
            value: Mutex::new(None),
        }
    }

    /// The value taken, once the run is over.
    pub(crate) fn into_value(self) -> Option<T> {
        self.value
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// `{"response": value}`, as a wrapped output is sent.
#[derive(serde::Deserialize)]
struct Wrapped<T> {
    response: T,
}

impl<S: Sync, T: OutputType> OutputCheck<S> for TypedCheck<'_, S, T> {
    fn key(&self) -> TypeId {
        TypeId::of::<T>()
    }

    fn mode(&self) -> OutputMode {
        self.mode
    }

    fn retries(&self) -> usize {
        self.retries
    }

    fn shape(&self) -> &OutputShape {
        self.shape
    }

    fn accept(&self, context: &S, raw: &str) -> Result<(), OutputProblem> {
        let fit = &self.shape.fit;
        let value = if self.shape.wrapped {
            fit.parse::<Wrapped<T>>(raw).map(|wrapped| wrapped.response)
        } else {
            fit.parse::<T>(raw)
        }
        .map_err(|unfit| match unfit {
            Unfit::Json(error) => OutputProblem::InvalidJson { error },
            Unfit::NotAnObject(value) => OutputProblem::Invalid {
                issues: vec![ArgumentIssue::new(
                    "",
                    IssueKind::WrongType {
                        expected: vec![JsonType::Object],
                        found: Found::Kind(JsonType::of(&value)),
                    },
                )],
            },
            Unfit::Issues(issues) => OutputProblem::Invalid { issues },
        })?;
        for validate in &self.validators {
            validate(context, &value).map_err(|message| OutputProblem::Rejected { message })?;
        }
        *self.value.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Kind<const N: usize> {
        field: u8,
    }

    #[test]
    fn an_agent_keeps_each_types_shape_once_however_many_types() {
        let shapes = OutputShapes::default();
        let first: *const OutputShape = shapes.of::<Kind<0>>();
        let others: [*const OutputShape; 9] = [
            shapes.of::<Kind<1>>(),
            shapes.of::<Kind<2>>(),
            shapes.of::<Kind<3>>(),
            shapes.of::<Kind<4>>(),
            shapes.of::<Kind<5>>(),
            shapes.of::<Kind<6>>(),
            shapes.of::<Kind<7>>(),
            shapes.of::<Kind<8>>(),
            shapes.of::<Kind<9>>(),
        ];
        assert!(std::ptr::eq(first, shapes.of::<Kind<0>>()));
        assert!(std::ptr::eq(others[8], shapes.of::<Kind<9>>()));
        assert!(!others.contains(&first));
        assert!(shapes.of::<Kind<9>>().fit.schema()["properties"]["field"].is_object());
    }
}
