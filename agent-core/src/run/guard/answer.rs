//! The guards on the answer, at the answer-check seam: the run's own check, with the guards'
//! review after its judgement (before the check's own review). An answer it took is shown to the guards (a typed answer as its JSON): a
//! rewrite is judged again by the check, a refusal or a retry is the check's answer turned down
//! (the model is asked for another, with the guard's words), a trip ends the run. The reply's
//! text, held back while it streamed, goes to the caller only then, or never; the text of a reply
//! that is not the answer (one that calls tools) is shown to the same guards before it goes.

use std::future::pending;
use std::sync::Arc;

use super::Place;
use super::checks::{AnswerText, Asking, Folded, GuardRun, Progress, Waiting};
use super::gate::{Gate, Settled};
use crate::message::{AssistantMessage, Message};
use crate::output::{OutputProblem, RejectedOutput};
use crate::run::seams::{AnswerCheck, Judgement, Offer, ReplyRulings, Reviewed};
use crate::settings::ModelSettings;
use crate::texts::Texts;

/// A run's answer check, and its guards on the answer.
pub(crate) struct GuardedAnswer<'r, C: ?Sized> {
    pub(crate) check: &'r mut C,
    pub(crate) run: Arc<GuardRun<'r>>,
}

/// The judgement once the guards have seen the answer, as they came out (`folded`, with the
/// answer as they left it in `checked`): the answer, `check`'s reading of a rewrite, its answer
/// turned down, or `None` when they tripped. What the stream holds of the reply goes, or is
/// dropped.
fn settle<S, C: AnswerCheck<S> + ?Sized>(
    check: &mut C,
    run: &GuardRun<'_>,
    context: &S,
    reply: &mut AssistantMessage,
    (folded, checked): (Folded, AnswerText),
    last_try: bool,
) -> Option<Judgement> {
    let gate = run.gate.as_ref();
    {
        let judgement = match folded {
            Folded::Through if !checked.rewritten => {
                if let Some(gate) = gate {
                    gate.settle(Settled::Through);
                }
                Judgement::Answer(checked.text)
            }
            Folded::Through => {
                let judgement = check.rewritten(context, reply, checked.text, last_try);
                if let Some(gate) = gate {
                    match &judgement {
                        Judgement::Answer(_) => gate.settle(Settled::Rewritten(&reply.content)),
                        _ => gate.settle(Settled::Stopped),
                    }
                }
                judgement
            }
            Folded::Refused { guard, reason } => {
                if let Some(gate) = gate {
                    gate.settle(Settled::Stopped);
                }
                let problem = OutputProblem::Guarded {
                    guard,
                    feedback: reason,
                };
                check.turned_down(reply, problem, run.texts(), last_try)
            }
            // The tripwire is fired: the run is interrupted where this is awaited.
            Folded::Tripped => return None,
        };
        Some(judgement)
    }
}

/// The review of an answer once the guard `waiting` waits for, and those after it, answer: the
/// judgement as the guards left it, then the check's own review (of `context`, `reply` and
/// `last_try`, the answer as the guards see it in `checked`). Out of line: an answer whose guards
/// answer at once runs through the review's short path alone.
#[inline(never)]
fn review_later<'a, S: Send + Sync, C: AnswerCheck<S> + ?Sized>(
    check: &'a mut C,
    run: &'a GuardRun<'_>,
    asking: Asking<'a>,
    (context, reply, mut checked, last_try): (&'a S, &'a mut AssistantMessage, AnswerText, bool),
    waiting: Waiting<'a>,
) -> Reviewed<'a> {
    Reviewed::Later(Box::pin(async move {
        let folded = run.finish(asking, &mut checked, waiting).await;
        match settle(check, run, context, reply, (folded, checked), last_try) {
            Some(judgement) => {
                (check.review(context, reply, judgement, last_try))
                    .get()
                    .await
            }
            None => pending().await,
        }
    }))
}

/// The review of a reply that is not the answer (it calls tools, say) while the stream holds its
/// text back: the guards on the answer see that text first, as they would an answer's, since a
/// person reads it all the same. Let through (rewritten, if a guard rewrote it), it goes; refused,
/// it is never sent, and the run goes on with the check's own review; tripped, the run ends.
fn review_held_text<'a, S: Send + Sync, C: AnswerCheck<S> + ?Sized>(
    check: &'a mut C,
    run: &'a GuardRun<'_>,
    (context, reply, judgement, last_try): (&'a S, &'a mut AssistantMessage, Judgement, bool),
) -> Reviewed<'a> {
    let mut checked = AnswerText::new(reply.content.clone(), false);
    let asking = asking(run.step());
    match run.fold_now(asking, &mut checked, 0) {
        Progress::Done(folded) => match settle_held_text(run, folded, &checked) {
            true => check.review(context, reply, judgement, last_try),
            false => Reviewed::Later(Box::pin(pending())),
        },
        Progress::Waiting(waiting) => Reviewed::Later(Box::pin(async move {
            let folded = run.finish(asking, &mut checked, waiting).await;
            if !settle_held_text(run, folded, &checked) {
                return pending().await;
            }
            (check.review(context, reply, judgement, last_try))
                .get()
                .await
        })),
    }
}

/// What the gate holds of a reply that is not the answer, once the guards have seen its text:
/// sent (as they left it), or dropped. `false` when they tripped.
fn settle_held_text(run: &GuardRun<'_>, folded: Folded, checked: &AnswerText) -> bool {
    let Some(gate) = &run.gate else {
        return !matches!(folded, Folded::Tripped);
    };
    match folded {
        Folded::Through if checked.rewritten => gate.settle(Settled::Rewritten(&checked.text)),
        Folded::Through => gate.settle(Settled::Through),
        Folded::Refused { .. } => gate.settle(Settled::Stopped),
        Folded::Tripped => return false,
    }
    true
}

fn asking(step: usize) -> Asking<'static> {
    Asking {
        place: Place::Answer,
        step,
        key: "",
        beside: None,
        partial: false,
    }
}

// Every method forwarded, or the guarded check would lose one.
#[deny(clippy::missing_trait_methods)]
impl<S: Send + Sync, C: AnswerCheck<S> + ?Sized> AnswerCheck<S> for GuardedAnswer<'_, C> {
    fn prepare(&mut self, messages: &mut Vec<Message>, settings: &mut ModelSettings) {
        self.check.prepare(messages, settings);
    }

    fn offer<'a>(&'a self, offer: &mut Offer<'a>) {
        self.check.offer(offer);
    }

    fn judge(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        cut_off: bool,
        last_try: bool,
    ) -> Judgement {
        self.check.judge(context, reply, cut_off, last_try)
    }

    /// The guards look first (those that answer at once here, the run waiting only for one
    /// that does not), then the check's own review.
    fn review<'a>(
        &'a mut self,
        context: &'a S,
        reply: &'a mut AssistantMessage,
        judgement: Judgement,
        last_try: bool,
    ) -> Reviewed<'a> {
        let GuardedAnswer { check, run } = self;
        let run: &'a GuardRun<'_> = run;
        let answer = match judgement {
            Judgement::Answer(answer) if run.checks(Place::Answer, None) => answer,
            judgement => {
                let held = run.gate.as_ref().is_some_and(Gate::holds_text);
                if held && run.checks(Place::Answer, None) {
                    let reply = (context, reply, judgement, last_try);
                    return review_held_text(&mut **check, run, reply);
                }
                // Nothing the guards on the answer see: what the stream holds of the reply goes.
                if let Some(gate) = &run.gate {
                    gate.settle(Settled::Through);
                }
                return check.review(context, reply, judgement, last_try);
            }
        };
        let mut checked = AnswerText::new(answer, false);
        let asking = asking(run.step());
        match run.fold_now(asking, &mut checked, 0) {
            Progress::Done(folded) => {
                match settle(*check, run, context, reply, (folded, checked), last_try) {
                    Some(judgement) => check.review(context, reply, judgement, last_try),
                    None => Reviewed::Later(Box::pin(pending())),
                }
            }
            Progress::Waiting(waiting) => {
                let answer = (context, reply, checked, last_try);
                review_later(&mut **check, run, asking, answer, waiting)
            }
        }
    }

    fn rewritten(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        answer: String,
        last_try: bool,
    ) -> Judgement {
        self.check.rewritten(context, reply, answer, last_try)
    }

    fn turned_down(
        &mut self,
        reply: &AssistantMessage,
        problem: OutputProblem,
        texts: &dyn Texts,
        last_try: bool,
    ) -> Judgement {
        self.check.turned_down(reply, problem, texts, last_try)
    }

    fn rule_calls(
        &self,
        reply: &AssistantMessage,
        judgement: &Judgement,
        rulings: &mut ReplyRulings<'_>,
    ) {
        self.check.rule_calls(reply, judgement, rulings);
    }

    fn can_pause(&self) -> bool {
        self.check.can_pause()
    }

    fn unanswered(&mut self, gave_up: bool) -> Option<Vec<RejectedOutput>> {
        self.check.unanswered(gave_up)
    }
}
