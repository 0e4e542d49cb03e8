//! The argument engine: how a model's JSON becomes a typed value, with every problem reported at
//! its field path. `typed` deserializes straight into a `#[tool]`'s parameters, strictly (unknown
//! fields refused at any depth), read by `slots` along the table the macro generates; `fit`
//! checks a value against a JSON schema first, for closure tools, typed outputs and tools whose
//! type is known only by its schema (`walk` walks the schema, `skipped` notices what serde drops).
//! `serde_errors` sorts serde's errors into reasons: the one place that reads serde's words.

mod fit;
mod parameter;
mod serde_errors;
mod skipped;
mod slots;
mod typed;
mod walk;

pub use fit::drop_optional_nulls;
pub(crate) use fit::{SchemaFit, Unfit};
pub use parameter::ToolParameter;
pub use slots::{Slot, Slots};
pub use typed::{FieldSpec, arguments_schema, check_field, parse_arguments, parse_flat_arguments};
