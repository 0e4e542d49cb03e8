//! Where in a run a guard checks: one place ([`Place`]), or a set of them ([`At`]).

use std::fmt;
use std::ops::BitOr;

use serde::{Deserialize, Serialize};

/// One place of a run a guard checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// The run's input, before the first model call.
    Input,
    /// Each request to the model.
    Request,
    /// Each tool call's arguments, before it runs.
    Call,
    /// Each tool's result, before the model reads it.
    Result,
    /// The run's answer (and its text as it streams).
    Answer,
}

impl Place {
    /// Every place, in the order a run meets them.
    pub const ALL: [Place; 5] = [
        Place::Input,
        Place::Request,
        Place::Call,
        Place::Result,
        Place::Answer,
    ];

    /// The place's position in [`Place::ALL`].
    #[inline]
    pub(crate) fn index(self) -> usize {
        match self {
            Place::Input => 0,
            Place::Request => 1,
            Place::Call => 2,
            Place::Result => 3,
            Place::Answer => 4,
        }
    }

    /// The place's name: `input`, `request`, `call`, `result`, `answer`.
    pub fn as_str(self) -> &'static str {
        match self {
            Place::Input => "input",
            Place::Request => "request",
            Place::Call => "call",
            Place::Result => "result",
            Place::Answer => "answer",
        }
    }

    fn bit(self) -> u8 {
        match self {
            Place::Input => 1,
            Place::Request => 2,
            Place::Call => 4,
            Place::Result => 8,
            Place::Answer => 16,
        }
    }
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The places a guard checks, joined with `|`: `At::CALLS | At::RESULTS`.
///
/// ```
/// use agent_core::guard::{At, Place};
///
/// let at = At::INPUT | At::ANSWER;
/// assert!(at.has(Place::Input));
/// assert!(!at.has(Place::Call));
/// assert!(At::ALL.has(Place::Result));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct At(u8);

impl At {
    /// The run's input.
    pub const INPUT: At = At(1);
    /// Each model request.
    pub const REQUESTS: At = At(2);
    /// Each call's arguments.
    pub const CALLS: At = At(4);
    /// Each tool's result.
    pub const RESULTS: At = At(8);
    /// The answer.
    pub const ANSWER: At = At(16);
    /// Every place.
    pub const ALL: At = At(31);

    /// Whether `place` is one of these.
    pub fn has(self, place: Place) -> bool {
        self.0 & place.bit() != 0
    }
}

impl BitOr for At {
    type Output = At;

    fn bitor(self, other: At) -> At {
        At(self.0 | other.0)
    }
}

impl fmt::Debug for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut list = f.debug_set();
        for place in Place::ALL.into_iter().filter(|place| self.has(*place)) {
            list.entry(&place);
        }
        list.finish()
    }
}
