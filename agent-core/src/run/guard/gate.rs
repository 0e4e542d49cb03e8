//! What of a streamed run's model stream waits for its guards before the caller sees it: every
//! event while a guard beside the model call has not answered, and the reply's text as the
//! agent's [`HoldBack`] says, until the guards on the answer have checked it. Text a guard stops
//! is never sent.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::HoldBack;
use crate::run::events::{EventSender, LiveEvent};

/// The events of one reply that wait.
pub(crate) struct Gate<'r> {
    events: &'r EventSender,
    hold_back: HoldBack,
    state: Mutex<Held>,
}

/// What waits, and how much of the reply's text may go.
#[derive(Default)]
struct Held {
    /// A guard beside the model call has not answered: nothing goes.
    beside: bool,
    events: VecDeque<LiveEvent>,
    /// The reply's text so far.
    text: String,
    /// Characters of `text` so far, those the guards last checked, and those that may go.
    characters: usize,
    checked: usize,
    allowed: usize,
}

/// How a reply's text ended with the guards on the answer.
pub(crate) enum Settled<'t> {
    /// Through as it is.
    Through,
    /// Through, rewritten to this.
    Rewritten(&'t str),
    /// Stopped: none of what waits is sent.
    Stopped,
}

impl<'r> Gate<'r> {
    pub(crate) fn new(events: &'r EventSender, hold_back: HoldBack) -> Self {
        Gate {
            events,
            hold_back,
            state: Mutex::new(Held::default()),
        }
    }

    fn held(&self) -> std::sync::MutexGuard<'_, Held> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new reply begins; `beside`: a guard beside its model call has yet to answer.
    pub(crate) fn begin(&self, beside: bool) {
        let mut held = self.held();
        *held = Held {
            beside,
            allowed: match self.hold_back {
                HoldBack::None => usize::MAX,
                _ => 0,
            },
            ..Held::default()
        };
    }

    /// Sends what may go, in order.
    fn release(&self, held: &mut Held) {
        if held.beside {
            return;
        }
        let mut sent = held.characters - held.events_characters();
        while let Some(event) = held.events.front() {
            if let LiveEvent::TextDelta(text) = event {
                let after = sent + text.chars().count();
                if after > held.allowed {
                    break;
                }
                sent = after;
            }
            if let Some(event) = held.events.pop_front() {
                self.events.send(event);
            }
        }
    }

    /// Whether text of the reply waits (held back for the guards on the answer).
    pub(crate) fn holds_text(&self) -> bool {
        self.held().events_characters() > 0
    }

    /// The guards beside the model call have answered: `through`, or not (nothing goes).
    pub(crate) fn beside_answered(&self, through: bool) {
        let mut held = self.held();
        held.beside = false;
        if through {
            self.release(&mut held);
        } else {
            held.events.clear();
        }
    }

    /// Takes one event of the model's stream; `Some(text so far)` when the text waiting reached
    /// the hold-back window and the guards are to check it.
    pub(super) fn take(&self, event: LiveEvent) -> Option<String> {
        let mut held = self.held();
        let mut check = None;
        if let LiveEvent::TextDelta(text) = &event {
            held.text.push_str(text);
            held.characters += text.chars().count();
            if let HoldBack::Window(window) = self.hold_back
                && held.characters - held.checked >= window.max(1)
            {
                check = Some(held.text.clone());
            }
        }
        held.events.push_back(event);
        self.release(&mut held);
        check
    }

    /// The guards let the first `characters` of the text through (as partial text): what is a
    /// window behind them may go, so that a word the window can hold is never sent half-checked.
    pub(super) fn allow(&self, characters: usize) {
        let mut held = self.held();
        held.checked = held.checked.max(characters);
        if let HoldBack::Window(window) = self.hold_back {
            held.allowed = held.allowed.max(characters.saturating_sub(window));
        }
        self.release(&mut held);
    }

    /// The reply is settled: what waits goes (its text rewritten), or is dropped.
    pub(crate) fn settle(&self, settled: Settled<'_>) {
        let mut held = self.held();
        held.beside = false;
        match settled {
            Settled::Through => {
                held.allowed = usize::MAX;
                self.release(&mut held);
            }
            Settled::Rewritten(text) => {
                // What was sent stays; the rest of the rewrite goes in place of what waits.
                let sent = held.characters - held.events_characters();
                held.events
                    .retain(|event| !matches!(event, LiveEvent::TextDelta(_)));
                let rest: String = text.chars().skip(sent).collect();
                if !rest.is_empty() {
                    held.events.push_back(LiveEvent::TextDelta(rest));
                }
                held.allowed = usize::MAX;
                self.release(&mut held);
            }
            Settled::Stopped => held.events.clear(),
        }
    }
}

impl Held {
    /// Characters of text among the events that wait.
    fn events_characters(&self) -> usize {
        (self.events.iter())
            .map(|event| match event {
                LiveEvent::TextDelta(text) => text.chars().count(),
                _ => 0,
            })
            .sum()
    }
}
