//! A trip: a guard ended the run. The tripwire is shared by every run of a tree of agents (a run
//! and the runs its calls start): a trip anywhere fires it, which interrupts every run of the
//! tree at once, as a cancel does (the model call in flight dropped, calls that started answered
//! as interrupted, those that had not as not run), and each of them then fails with the trip.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Place;
use crate::budget::Cancel;
use crate::tool::scope::AgentPath;

/// What a guard's trip says: which guard, where, its message and its information. Carried by
/// [`RunError::Tripped`](crate::RunError::Tripped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("the guard `{guard}` stopped the run at the {place}: {message}")]
#[non_exhaustive]
pub struct Tripped {
    /// The guard's name.
    pub guard: String,
    /// Where it checked.
    pub place: Place,
    /// The agent whose run it checked, in its tree of agents.
    pub agent: AgentPath,
    /// The guard's message.
    pub message: String,
    /// The guard's information (`null` when none).
    pub info: serde_json::Value,
}

/// The trip signal of a tree of runs, and the first trip.
pub(crate) struct Tripwire {
    trip: OnceLock<Tripped>,
    signal: Cancel,
}

impl Tripwire {
    pub(crate) fn new() -> Self {
        Tripwire {
            trip: OnceLock::new(),
            signal: Cancel::new(),
        }
    }

    /// Trips it (the first trip is the one kept) and interrupts every run that shares it.
    pub(crate) fn trip(&self, tripped: Tripped) {
        let _ = self.trip.set(tripped);
        self.signal.fire();
    }

    /// The trip, if it has tripped.
    pub(crate) fn tripped(&self) -> Option<&Tripped> {
        self.trip.get()
    }

    /// Completes when it trips.
    pub(crate) fn wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.signal.wait()
    }
}
