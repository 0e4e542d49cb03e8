//! A trip: a guard ended the run. The tripwire is shared by every run of a tree of agents (a run
//! and the runs its calls start): a trip anywhere sets it, and every run of the tree is
//! interrupted by it as by a cancel (the model call in flight dropped, calls that started
//! answered as interrupted, those that had not as not run), and then fails with the trip. A guard
//! trips while its run polls it; the seam value it sits in then never completes, so the run's
//! race against its interruption, which looks at the tripwire after each poll, ends there.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use super::Place;
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

/// The first trip of a tree of runs, once there is one.
#[derive(Default)]
pub(crate) struct Tripwire {
    trip: OnceLock<Tripped>,
}

impl Tripwire {
    pub(crate) fn new() -> Self {
        Tripwire::default()
    }

    /// Trips it (the first trip is the one kept).
    pub(crate) fn trip(&self, tripped: Tripped) {
        let _ = self.trip.set(tripped);
    }

    /// The trip, if it has tripped.
    pub(crate) fn tripped(&self) -> Option<&Tripped> {
        self.trip.get()
    }
}
