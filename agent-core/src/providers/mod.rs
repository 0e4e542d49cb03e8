//! Adapters for the real vendor APIs over HTTP, each behind its cargo feature (all on by default).
//!
//! Each adapter maps the core's history onto its provider's wire format and back, sends the tool
//! schemas through its provider's [`dialect`], retries what may succeed later (429, 5xx, 529,
//! broken connections) with exponential backoff and jitter, honouring `retry-after`, and sorts every
//! failure into a typed [`ModelError`](crate::ModelError).

mod common;
pub mod dialect;
mod env;
mod http;
// Each vendor uses what it needs of the shared mapping; with some vendors left out, theirs is unused.
#[cfg_attr(
    not(all(feature = "openai", feature = "anthropic", feature = "gemini")),
    allow(dead_code)
)]
mod mapping;
mod schemas;

#[cfg(feature = "anthropic")]
mod anthropic;
#[cfg(feature = "gemini")]
mod gemini;
#[cfg(feature = "openai")]
mod openai;
#[cfg(feature = "openai")]
mod openai_responses;
mod sse;
mod sse_decode;

#[cfg(feature = "fuzzing")]
#[doc(hidden)]
#[path = "fuzz.rs"]
pub mod __fuzz;

#[cfg(feature = "bench-internals")]
#[doc(hidden)]
#[path = "bench.rs"]
pub mod __bench;

#[cfg(feature = "anthropic")]
pub use anthropic::{ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, Anthropic};
pub use env::{EnvError, EnvModel, from_env, from_variables};
#[cfg(feature = "gemini")]
pub use gemini::{GEMINI_BASE_URL, Gemini};
pub use http::{ApiKey, HttpConfig};
#[cfg(feature = "openai")]
pub use openai::{OPENAI_BASE_URL, OpenAi};
#[cfg(feature = "openai")]
pub use openai_responses::OpenAiResponses;

/// Re-exported so extra headers can be built without depending on `reqwest`.
pub use reqwest::header::{HeaderName, HeaderValue};
