//! What a run's last model request sent, shared by the layers that read and set it (the context
//! layer: where it cut; the cache watch: its prefix's hash) and its session's transcript, which
//! stores it with the conversation so that the next run goes on from it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::summary::Positions;
use crate::run::store::LastRequest;

/// The last request of a run's conversation, in the run's positions: the one stored with its
/// session when the run began, then each the run sends.
#[derive(Debug, Default)]
pub(crate) struct LastSent {
    positions: Positions,
    last: Mutex<Option<LastRequest>>,
    /// Whether the run sent a request (what is kept is its own, not the stored one).
    sent: AtomicBool,
}

impl LastSent {
    /// Starting from `given`, the conversation's (in its positions), whose messages are at
    /// `positions` in the run's history.
    pub(crate) fn new(given: Option<LastRequest>, positions: Positions) -> Self {
        let last = given.map(|given| LastRequest {
            kept_from: positions.to_run(given.kept_from),
            shortened_to: positions.to_run(given.shortened_to),
            ..given
        });
        LastSent {
            positions,
            last: Mutex::new(last),
            sent: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<LastRequest>> {
        self.last
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// The last request, in the run's positions.
    pub(crate) fn last(&self) -> Option<LastRequest> {
        *self.lock()
    }

    /// Sets what `change` makes of the last request (a default one when none is known), as the
    /// request about to be sent.
    pub(crate) fn update(&self, change: impl FnOnce(&mut LastRequest)) {
        let mut last = self.lock();
        change(last.get_or_insert_with(LastRequest::default));
        self.sent.store(true, Ordering::Relaxed);
    }

    /// The last request the run sent, in the given conversation's positions (to store it); `None`
    /// when it sent none.
    pub(crate) fn to_store(&self) -> Option<LastRequest> {
        if !self.sent.load(Ordering::Relaxed) {
            return None;
        }
        let last = (*self.lock())?;
        Some(LastRequest {
            kept_from: self.positions.to_given(last.kept_from),
            shortened_to: self.positions.to_given(last.shortened_to),
            ..last
        })
    }
}
