//! The argument engine: how a model's JSON becomes a typed value, with every problem reported at
//! its field path. `typed` deserializes straight into a `#[tool]`'s argument struct, strictly
//! (unknown fields refused at any depth); `fit` checks a value against a JSON schema first, for
//! closure tools, typed outputs and tools whose type is known only by its schema (`walk` walks
//! the schema, `skipped` notices what serde drops).

mod fit;
mod skipped;
mod typed;
mod walk;

// MCP's client drops a model's nulls for optional fields before the server sees them.
#[cfg(feature = "mcp")]
pub(crate) use fit::drop_optional_nulls;
pub(crate) use fit::{SchemaFit, Unfit};
pub use typed::{FieldSpec, check_field, parse_arguments, parse_flat_arguments};
