//! How a run holds the values at its layered seams: lent, its own, or shared among them.

use std::ops::Deref;
use std::sync::Arc;

use super::{CallPolicy, ModelLayer};

/// A value at a seam: lent by the agent (its limits, hooks and policies outlive the run), the
/// run's own (its budget's spending, its journal, the view of a conversation handed to it),
/// made for the run and dropped with it, or shared among the run's seams (its guards, which
/// check at several).
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
