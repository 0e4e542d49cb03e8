//! How a run holds the values at its seams: lent by the agent, or its own.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::{AnswerCheck, CallPolicy, ModelLayer};

/// A value at a seam: lent by the agent (its limits, hooks and policies outlive the run) or the
/// run's own (its budget's spending, its journal, the view of a conversation handed to it),
/// made for the run and dropped with it, or shared with the run's other seams (its guards).
pub(crate) enum Held<'r, T: ?Sized> {
    Lent(&'r T),
    Own(Box<T>),
    Shared(Arc<T>),
}

impl<T: ?Sized> Deref for Held<'_, T> {
    type Target = T;

    fn deref(&self) -> &T {
        match self {
            Held::Lent(value) => value,
            Held::Own(value) => value,
            Held::Shared(value) => value,
        }
    }
}

/// A model-call layer of a run.
pub(crate) type Layer<'r, S> = Held<'r, dyn ModelLayer<S> + 'r>;

/// A call policy of a run.
pub(crate) type Policy<'r, S> = Held<'r, dyn CallPolicy<S> + 'r>;

/// A run's answer check: the one its request made, lent, or the run's own around it (the guards
/// on the answer).
pub(crate) enum CheckHeld<'r, S> {
    Lent(&'r mut dyn AnswerCheck<S>),
    Own(Box<dyn AnswerCheck<S> + 'r>),
}

impl<'r, S> Deref for CheckHeld<'r, S> {
    type Target = dyn AnswerCheck<S> + 'r;

    fn deref(&self) -> &Self::Target {
        match self {
            CheckHeld::Lent(check) => *check,
            CheckHeld::Own(check) => &**check,
        }
    }
}

impl<S> DerefMut for CheckHeld<'_, S> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        match self {
            CheckHeld::Lent(check) => *check,
            CheckHeld::Own(check) => &mut **check,
        }
    }
}
