//! An agent's guards ([`Guards`]), what a run inherits of them ([`GuardScope`]), and one run's
//! part of them ([`GuardRun`]): asking each guard at a place in order, each shown what the ones
//! before left (a rewrite), the first that refuses, asks again or trips having the last word;
//! each ask in a `guard` span, its verdict journaled in a durable run, its tokens counted.

use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use tracing::field::Empty;
use tracing::{Instrument, Span, info_span};

use super::gate::Gate;
use super::{
    At, Checked, Checking, Guard, HoldBack, Judged, Place, Tripped, Tripwire, Verdict, What,
};
use crate::run::events::EventSender;
use crate::run::journal::Journal;
use crate::texts::Texts;
use crate::tool::BoxFuture;
use crate::tool::scope::AgentPath;
use crate::tool::wording::Wording;
use crate::usage::Usage;

/// One guard of an agent, and where it checks.
#[derive(Clone)]
pub(crate) struct Registered {
    pub(crate) guard: Arc<dyn Guard>,
    pub(crate) at: At,
    /// It checks the input and requests beside the model call, not before it.
    pub(crate) beside: bool,
}

/// An agent's guards, in the order they were added, and how much streamed text waits for them.
#[derive(Clone, Default)]
pub(crate) struct Guards {
    list: Vec<Registered>,
    pub(crate) hold_back: HoldBack,
    /// For each place (in `Place::ALL`'s order), whether a guard before the model and one
    /// beside it check there: kept as guards are added, asked at every step of every run.
    checking: [(bool, bool); 5],
}

impl Guards {
    /// Adds `registered`, after the others.
    pub(crate) fn add(&mut self, registered: Registered) {
        for place in Place::ALL {
            if registered.at.has(place) {
                let (before, beside) = &mut self.checking[place.index()];
                match registered.beside {
                    true => *beside = true,
                    false => *before = true,
                }
            }
        }
        self.list.push(registered);
    }

    /// The guards, in the order they were added.
    pub(crate) fn list(&self) -> &[Registered] {
        &self.list
    }

    /// Whether a guard checks at `place` (beside the model, or before it, when `beside` says).
    #[inline]
    pub(crate) fn checks(&self, place: Place, beside: Option<bool>) -> bool {
        let (before, by_the_model) = self.checking[place.index()];
        match beside {
            None => before || by_the_model,
            Some(true) => by_the_model,
            Some(false) => before,
        }
    }
}

/// What a run started by another run is given: the guards it checks with when its agent has none
/// of its own (those of the run that started it, if any), the tripwire of its tree of runs, and
/// whether a call needing approval waits for a person when its agent has no approver of its own
/// (the run that started it defers approvals).
#[derive(Clone)]
pub(crate) struct GuardScope {
    pub(crate) guards: Option<Arc<Guards>>,
    pub(crate) tripwire: Arc<Tripwire>,
    pub(crate) defers_approvals: bool,
}

/// What the guards at a place check: shown to each, rewritten by a rewrite.
pub(crate) trait Subject: Send + Sync {
    /// What a guard is shown.
    fn what(&self) -> What<'_>;
    /// Takes a guard's rewrite.
    fn rewrite(&mut self, text: String);
}

/// A text checked (an answer, or its streamed text so far).
pub(crate) struct AnswerText {
    pub(crate) text: String,
    pub(crate) partial: bool,
    /// A guard rewrote it to another text.
    pub(crate) rewritten: bool,
}

impl AnswerText {
    /// `text`, as checked once whole (`partial`: while it still streams).
    pub(crate) fn new(text: String, partial: bool) -> Self {
        AnswerText {
            text,
            partial,
            rewritten: false,
        }
    }
}

impl Subject for AnswerText {
    fn what(&self) -> What<'_> {
        What::Answer {
            text: &self.text,
            partial: self.partial,
        }
    }

    fn rewrite(&mut self, text: String) {
        self.rewritten |= text != self.text;
        self.text = text;
    }
}

/// How far a fold got without waiting.
pub(crate) enum Progress<'s> {
    /// To its end.
    Done(Folded),
    /// To a guard whose verdict takes time.
    Waiting(Waiting<'s>),
}

/// A fold waiting for a guard's verdict, and where it goes on after it.
pub(crate) struct Waiting<'s> {
    next: usize,
    registered: &'s Registered,
    judged: BoxFuture<'s, Judged>,
    span: Span,
}

/// The span of one check by `registered`.
#[inline(never)]
fn span_of(registered: &Registered, asking: Asking<'_>) -> Span {
    info_span!(
        "guard",
        "guard.name" = registered.guard.name(),
        "guard.place" = asking.place.as_str(),
        "guard.verdict" = Empty,
    )
}

/// Records a verdict of `kind` in the span of its check (a span no one listens to has no
/// fields to look up).
fn record(span: &Span, kind: &'static str) {
    if !span.is_disabled() {
        span.record("guard.verdict", kind);
    }
}

/// A guard's answer to one ask: an allow at once, another verdict at once (in its span already),
/// or a future of it and the span to await it in.
enum Asked<'s> {
    Allowed,
    Now(Verdict),
    Later(BoxFuture<'s, Judged>, Span),
}

/// A guard's answer other than an allow at once: another verdict at once (recorded in `span`),
/// or a future of one. (Out of line: an allow, the common answer, never loads it.)
#[cold]
#[inline(never)]
fn not_allowed(checking: Checking<'_>, span: Span) -> Asked<'_> {
    match checking {
        Checking::Now(verdict) => {
            record(&span, verdict.kind());
            Asked::Now(verdict)
        }
        Checking::Later(judged) => Asked::Later(judged, span),
    }
}

/// How the guards at a place came out.
pub(crate) enum Folded {
    /// Through (rewritten, if a guard rewrote it).
    Through,
    /// A guard refused it, or asked the model for another: the guard and its words.
    Refused { guard: String, reason: String },
    /// A guard tripped: the tripwire is fired.
    Tripped,
}

/// What a verdict comes to at a place.
enum Action {
    Go,
    Rewrite(String),
    Refuse(String),
    Trip(String, serde_json::Value),
}

/// How the guards are asked: the place's rules, and who is asked.
#[derive(Clone, Copy)]
pub(crate) struct Asking<'k> {
    pub(crate) place: Place,
    pub(crate) step: usize,
    /// What tells this check apart from the others of its step in a journal (a call's id).
    pub(crate) key: &'k str,
    /// Only the guards beside the model (`Some(true)`), only those before it (`Some(false)`),
    /// or all.
    pub(crate) beside: Option<bool>,
    /// The text is still streaming: only a trip counts.
    pub(crate) partial: bool,
}

/// One part of a run (one agent's) under guards.
pub(crate) struct GuardRun<'r> {
    pub(crate) guards: Arc<Guards>,
    pub(crate) tripwire: &'r Tripwire,
    pub(crate) agent: AgentPath,
    /// How the run's tools word a result: the guards' words for a result they withhold.
    pub(crate) wording: Wording<'r>,
    journal: Option<&'r dyn Journal>,
    /// Tokens the run used that none of its steps counts: its guards' verdicts', and a reply
    /// its guards beside the model stopped. Set at the first (a run whose guards take none never
    /// locks it).
    spent: OnceLock<Mutex<Usage>>,
    /// For a streamed run, what of the model's stream waits for the guards.
    pub(crate) gate: Option<Gate<'r>>,
    /// The step of the model call last made.
    step: AtomicUsize,
    /// The run's input is yet to be checked by the guards beside the model (at its first call).
    new_input: AtomicBool,
}

impl<'r> GuardRun<'r> {
    /// The guards' part of the run of `agent`; `new_input`: the run starts with input of its own
    /// (not a resume, not a conversation handed on), which its guards check.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        guards: Arc<Guards>,
        tripwire: &'r Tripwire,
        agent: AgentPath,
        wording: Wording<'r>,
        journal: Option<&'r dyn Journal>,
        events: Option<&'r EventSender>,
        new_input: bool,
    ) -> Self {
        let hold_back = match guards.checks(Place::Answer, None) {
            true => guards.hold_back,
            false => HoldBack::None,
        };
        GuardRun {
            gate: events.map(|events| Gate::new(events, hold_back)),
            guards,
            tripwire,
            agent,
            wording,
            journal,
            spent: OnceLock::new(),
            step: AtomicUsize::new(0),
            new_input: AtomicBool::new(new_input),
        }
    }

    /// Whether the run's input is yet to be checked by the guards beside the model: `true`
    /// once, at the run's first model call, when it starts with input of its own.
    #[inline]
    pub(crate) fn take_new_input(&self) -> bool {
        // Looked at before it is cleared: only the first call swaps it.
        self.new_input.load(Ordering::Relaxed) && self.new_input.swap(false, Ordering::Relaxed)
    }

    /// The run's words.
    #[inline]
    pub(crate) fn texts(&self) -> &'r dyn Texts {
        self.wording.texts
    }

    /// The step of the model call last made (0 before the first).
    #[inline]
    pub(crate) fn step(&self) -> usize {
        self.step.load(Ordering::Relaxed)
    }

    /// A model call of `step` begins.
    #[inline]
    pub(crate) fn begin_step(&self, step: usize) {
        self.step.store(step, Ordering::Relaxed);
    }

    /// The tokens the run used that none of its steps counts, so far (`None`: none yet).
    pub(crate) fn spent(&self) -> Option<Usage> {
        let spent = self.spent.get()?;
        Some(*spent.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Counts `usage` among the run's tokens that none of its steps counts.
    pub(crate) fn spend(&self, usage: Usage) {
        if usage != Usage::default() {
            let spent = self.spent.get_or_init(Mutex::default);
            *spent.lock().unwrap_or_else(|e| e.into_inner()) += usage;
        }
    }

    /// The trip, if the run's tree has tripped.
    pub(crate) fn tripped(&self) -> Option<&Tripped> {
        self.tripwire.tripped()
    }

    /// Whether the run is durable: its steps, the guards' verdicts among them, are journaled in
    /// one order, so none of them runs at the same time as another.
    pub(crate) fn is_journaled(&self) -> bool {
        self.journal.is_some()
    }

    /// Whether a guard checks at `place` (beside the model, or before it, when `beside` says).
    #[inline]
    pub(crate) fn checks(&self, place: Place, beside: Option<bool>) -> bool {
        self.guards.checks(place, beside)
    }

    /// Whether `registered` is asked when the guards are asked as `asking` says.
    fn asks(&self, registered: &Registered, asking: Asking<'_>) -> bool {
        registered.at.has(asking.place)
            && asking
                .beside
                .is_none_or(|beside| registered.beside == beside)
    }

    /// The guards at `asking.place` that are asked.
    fn chosen<'s>(&'s self, asking: Asking<'_>) -> impl Iterator<Item = &'s Registered> {
        (self.guards.list().iter()).filter(move |registered| self.asks(registered, asking))
    }

    /// What the guards at `asking.place` are shown of `what`.
    fn checked<'c>(&'c self, asking: Asking<'_>, what: What<'c>) -> Checked<'c> {
        Checked::new(what, &self.agent, asking.step, self.texts())
    }

    /// Asks `registered` about `checked`, in the check's span (which has the verdict when it is
    /// known at once, and goes with the future otherwise).
    #[inline(always)]
    fn ask<'s>(
        &'s self,
        registered: &'s Registered,
        asking: Asking<'_>,
        checked: &Checked<'_>,
    ) -> Asked<'s> {
        // No span is made where none can be taken: below the level spans are made at (the first
        // thing `info_span!` looks at, here before a call).
        let span = match tracing::level_enabled!(tracing::Level::INFO) {
            true => span_of(registered, asking),
            false => Span::none(),
        };
        // An allow is told apart where the guard left it, and owns nothing to drop: the common
        // answer is neither moved nor dropped.
        let checking = ManuallyDrop::new(span.in_scope(|| registered.guard.check(checked)));
        if let Checking::Now(Verdict::Allow) = &*checking {
            record(&span, "allow");
            return Asked::Allowed;
        }
        not_allowed(ManuallyDrop::into_inner(checking), span)
    }

    /// Asks the guards at `asking.place` in order about `subject`, from the `from`th on, as far
    /// as they answer at once: each is shown what the ones before left, and the first that
    /// refuses or trips has the last word (a trip fires the tripwire). The first guard whose
    /// verdict takes time stops it there: what is left is for [`finish`](Self::finish).
    #[inline]
    pub(crate) fn fold_now<'s, T: Subject + ?Sized>(
        &'s self,
        asking: Asking<'_>,
        subject: &mut T,
        from: usize,
    ) -> Progress<'s> {
        match self.past_allows(asking, &self.checked(asking, subject.what()), from) {
            None => Progress::Done(Folded::Through),
            Some(first) => self.fold_from(asking, subject, first),
        }
    }

    /// The rest of [`fold_now`](Self::fold_now) from the first guard that did not allow at once
    /// (its place in the list, and its answer). Out of line: a place whose guards all allow
    /// never loads it.
    #[cold]
    #[inline(never)]
    fn fold_from<'s, T: Subject + ?Sized>(
        &'s self,
        asking: Asking<'_>,
        subject: &mut T,
        first: (usize, &'s Registered, Asked<'s>),
    ) -> Progress<'s> {
        let mut next = Some(first);
        while let Some((index, registered, asked)) = next {
            match asked {
                Asked::Allowed => {}
                // At once: plain code, which a replay runs again as it ran.
                Asked::Now(verdict) => {
                    if let Some(folded) = self.apply(asking, registered, verdict, subject) {
                        return Progress::Done(folded);
                    }
                }
                Asked::Later(judged, span) => {
                    return Progress::Waiting(Waiting {
                        next: index + 1,
                        registered,
                        judged,
                        span,
                    });
                }
            }
            next = self.past_allows(asking, &self.checked(asking, subject.what()), index + 1);
        }
        Progress::Done(Folded::Through)
    }

    /// Asks the guards at `asking.place` about `what`, from the `from`th on, while they allow it
    /// at once: the first that does not (its place in the list, and its answer), if one does not.
    /// (One loop for every place and subject: the same few instructions check them all.)
    fn past_allows<'s>(
        &'s self,
        asking: Asking<'_>,
        checked: &Checked<'_>,
        from: usize,
    ) -> Option<(usize, &'s Registered, Asked<'s>)> {
        let list = self.guards.list();
        for (index, registered) in list.iter().enumerate().skip(from) {
            if !self.asks(registered, asking) {
                continue;
            }
            match self.ask(registered, asking, checked) {
                Asked::Allowed => {}
                asked => return Some((index, registered, asked)),
            }
        }
        None
    }

    /// The rest of a fold [`fold_now`](Self::fold_now) left waiting: the verdict awaited (through
    /// the journal, with its tokens), then the guards after it.
    pub(crate) async fn finish(
        &self,
        asking: Asking<'_>,
        subject: &mut dyn Subject,
        mut waiting: Waiting<'_>,
    ) -> Folded {
        loop {
            let Waiting {
                next,
                registered,
                judged,
                span,
            } = waiting;
            let verdict = self.judged(registered, asking, judged, &span).await;
            if let Some(folded) = self.apply(asking, registered, verdict, subject) {
                return folded;
            }
            match self.fold_now(asking, subject, next) {
                Progress::Done(folded) => return folded,
                Progress::Waiting(more) => waiting = more,
            }
        }
    }

    /// Asks the guards at `asking.place` in order about `subject` (see
    /// [`fold_now`](Self::fold_now)), awaiting those that take time.
    pub(crate) async fn fold(&self, asking: Asking<'_>, subject: &mut dyn Subject) -> Folded {
        match self.fold_now(asking, subject, 0) {
            Progress::Done(folded) => folded,
            Progress::Waiting(waiting) => self.finish(asking, subject, waiting).await,
        }
    }

    /// What `registered`'s `verdict` does to `subject`: `Some` when it has the last word.
    fn apply<T: Subject + ?Sized>(
        &self,
        asking: Asking<'_>,
        registered: &Registered,
        verdict: Verdict,
        subject: &mut T,
    ) -> Option<Folded> {
        match action(asking, registered.beside, verdict) {
            Action::Go => None,
            Action::Rewrite(text) => {
                subject.rewrite(text);
                None
            }
            Action::Refuse(reason) => {
                let guard = registered.guard.name().to_owned();
                Some(Folded::Refused { guard, reason })
            }
            Action::Trip(message, info) => {
                self.trip(registered, asking.place, message, info);
                Some(Folded::Tripped)
            }
        }
    }

    /// A verdict that takes time, awaited in its guard's span (through the journal in a durable
    /// run, which records its tokens with it), its tokens counted.
    async fn judged(
        &self,
        registered: &Registered,
        asking: Asking<'_>,
        judged: BoxFuture<'_, Judged>,
        span: &Span,
    ) -> Verdict {
        let judged = match self.journal {
            Some(journal) => {
                let key = journal_key(registered.guard.name(), asking);
                journal.guard_check(key, judged)
            }
            None => judged,
        };
        let Judged { verdict, usage } = judged.instrument(span.clone()).await;
        self.spend(usage);
        record(span, verdict.kind());
        verdict
    }

    /// Asks the guards at `asking.place` about `subject` all at once (those beside the model,
    /// which only allow or trip: none is shown another's rewrite), until one trips.
    pub(crate) async fn check_at_once(&self, asking: Asking<'_>, subject: &dyn Subject) -> Folded {
        let mut asked = FuturesUnordered::new();
        let checked = self.checked(asking, subject.what());
        for registered in self.chosen(asking) {
            let verdict = match self.ask(registered, asking, &checked) {
                Asked::Allowed => Verdict::Allow,
                Asked::Now(verdict) => verdict,
                // A durable run records its steps in one order on every replay: one guard at a
                // time.
                Asked::Later(judged, span) if self.is_journaled() => {
                    self.judged(registered, asking, judged, &span).await
                }
                Asked::Later(judged, span) => {
                    asked.push(async move {
                        let verdict = self.judged(registered, asking, judged, &span).await;
                        (registered, verdict)
                    });
                    continue;
                }
            };
            if let Action::Trip(message, info) = action(asking, true, verdict) {
                self.trip(registered, asking.place, message, info);
                return Folded::Tripped;
            }
        }
        while let Some((registered, verdict)) = asked.next().await {
            if let Action::Trip(message, info) = action(asking, true, verdict) {
                self.trip(registered, asking.place, message, info);
                return Folded::Tripped;
            }
        }
        Folded::Through
    }

    /// Fires the tripwire with `registered`'s trip.
    fn trip(
        &self,
        registered: &Registered,
        place: Place,
        message: String,
        info: serde_json::Value,
    ) {
        tracing::warn!(guard = registered.guard.name(), %place, %message, "guard tripped");
        self.tripwire.trip(Tripped {
            guard: registered.guard.name().to_owned(),
            place,
            agent: self.agent.clone(),
            message,
            info,
        });
    }
}

/// What `verdict` comes to at the place `asking` names, from a guard beside the model or not.
fn action(asking: Asking<'_>, beside: bool, verdict: Verdict) -> Action {
    let place = asking.place;
    let beside = beside && matches!(place, Place::Input | Place::Request);
    match verdict {
        Verdict::Allow => Action::Go,
        Verdict::Trip { message, info } => Action::Trip(message, info),
        // Text still streaming is only stopped or let through: the whole answer is judged at
        // its end.
        _ if asking.partial => Action::Go,
        verdict if beside => {
            Action::Trip(misplaced(&verdict, place, true), serde_json::Value::Null)
        }
        Verdict::Rewrite(text) if place != Place::Request => Action::Rewrite(text),
        Verdict::Refuse(reason) | Verdict::Retry(reason)
            if matches!(place, Place::Call | Place::Result | Place::Answer) =>
        {
            Action::Refuse(reason)
        }
        verdict => Action::Trip(misplaced(&verdict, place, false), serde_json::Value::Null),
    }
}

/// The message of a trip a verdict makes where it has no meaning.
fn misplaced(verdict: &Verdict, place: Place, beside: bool) -> String {
    let words = match verdict {
        Verdict::Rewrite(text) | Verdict::Refuse(text) | Verdict::Retry(text) => text.as_str(),
        _ => "",
    };
    let when = if beside { " beside the model call" } else { "" };
    format!(
        "a `{}` verdict{when} at the {place} (which only an allow or a trip can answer): {words}",
        verdict.kind()
    )
}

/// The name of a guard's check in a journal: the same on every replay of the run.
fn journal_key(name: &str, asking: Asking<'_>) -> String {
    let mut key = format!(
        "guard `{name}` at the {} of step {}",
        asking.place, asking.step
    );
    if !asking.key.is_empty() {
        key.push_str(", ");
        key.push_str(asking.key);
    }
    key
}
