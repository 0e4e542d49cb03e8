//! What a typed run asks of the model: the output type's schema (made once per type), the
//! final-answer tool or the native format it travels as, and the check each answer goes through.

use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex, PoisonError, RwLock};

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{OutputMode, OutputProblem};
use crate::argument_issue::{ArgumentIssue, Found, IssueKind, JsonType};
use crate::arguments::{SchemaFit, Unfit};
use crate::schema::root_schema;
use crate::settings::ResponseFormat;

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

/// An output type's schema and the two forms it is sent in, made once per type.
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

impl OutputShape {
    /// The shape of `T`, made once per type and kept for the life of the program (as a type's
    /// schema is): schemars is slow next to a run with an instant model. Each thread keeps its own
    /// list of them, so a run takes no lock to find its shape; a list, since a program has a
    /// handful of output types, and comparing a few `TypeId`s costs less than hashing one.
    fn of<T: JsonSchema + 'static>() -> &'static OutputShape {
        static SHAPES: LazyLock<RwLock<HashMap<TypeId, &'static OutputShape>>> =
            LazyLock::new(RwLock::default);
        thread_local! {
            static KNOWN: RefCell<Vec<(TypeId, &'static OutputShape)>> = RefCell::default();
        }
        let key = TypeId::of::<T>();
        let known = KNOWN.with_borrow(|known| {
            known
                .iter()
                .find_map(|(type_id, shape)| (*type_id == key).then_some(*shape))
        });
        if let Some(shape) = known {
            return shape;
        }
        let shared = SHAPES
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .copied();
        let shape = shared.unwrap_or_else(|| {
            *SHAPES
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(key)
                .or_insert_with(|| {
                    Box::leak(Box::new(OutputShape::new(
                        root_schema::<T>().unwrap_or_default(),
                    )))
                })
        });
        KNOWN.with_borrow_mut(|known| known.push((key, shape)));
        shape
    }

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
    shape: &'static OutputShape,
    validators: Vec<Validator<'a, S, T>>,
    value: Mutex<Option<T>>,
}

impl<'a, S, T: OutputType> TypedCheck<'a, S, T> {
    pub(crate) fn new(
        mode: OutputMode,
        retries: usize,
        validators: Vec<Validator<'a, S, T>>,
    ) -> Self {
        TypedCheck {
            mode,
            retries,
            shape: OutputShape::of::<T>(),
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
