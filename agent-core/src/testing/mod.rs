//! Test doubles and checks for your own tests, and for running agents offline.
//!
//! - [`ScriptedModel`] replays a script of replies and errors and records every request.
//! - [`conformance`] checks that a [`Model`](crate::Model) keeps the contract every model of this
//!   crate keeps: your own models and wrappers can run it too.

pub mod conformance;
mod scripted;

pub use scripted::{RecordedRequest, ScriptExhausted, ScriptStep, ScriptedModel};
