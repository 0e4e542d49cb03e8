//! A request becomes a run: first made ready (its conversation: a new one, a history, or a
//! session's, loaded and held, repaired so every call is answered; or a paused run with its
//! decisions checked), then run: the part of the agent that holds the conversation
//! ([`part`](super::part)), the parts of the agents it is handed on to, and a session's last
//! write.

use std::future::Future;
use std::sync::Arc;

use futures_util::{FutureExt, TryFutureExt};

use super::agent::Agent;
use super::context::{LastSent, Positions, RunSummaries, Summary};
use super::events::EventSender;
use super::guard::Tripwire;
use super::kernel::Resumption;
use super::outcome::{RunError, RunOutput};
use super::part::{InSession, RunWide, has_guards, joined, part, starts_runs};
use super::pause::{Decision, PausedRun};
use super::repair::answer_every_call;
use super::request::{Input, Plan, ResumeFrom, Source, Start};
use super::seams::{AnswerCheck, Transcript};
use super::session_transcript::{Place, SessionTranscript};
use super::store::{Conversation, SessionError, session_error};
use super::tree::{Family, HandedOver, holder as holder_of};
use crate::budget::Budget;
use crate::content::Part;
use crate::message::Message;
use crate::tool::BoxFuture;
use crate::usage::Usage;

/// Runs `plan` in `context` with `check` as its answer check, sending its events to `events`
/// when streamed: first the run is made ready (a session's conversation loaded and held), then
/// it runs (the future that made it ready gone by then).
pub(super) fn start<'a, S: Send + Sync + 'static, C: AnswerCheck<S> + 'a>(
    plan: Plan<'a, S>,
    context: &'a S,
    check: C,
    events: Option<EventSender>,
) -> impl Future<Output = Result<RunOutput, RunError>> + Send + 'a {
    let can_pause = check.can_pause();
    ready(plan, context, events, can_pause).and_then(|ready| ready.run(check))
}

/// A run ready to start: what its parts share, and what its first part starts from.
struct Ready<'a, S> {
    wide: RunWide<'a, S>,
    opening: Opening,
}

/// What a run's first part starts from: its messages, or the paused run it goes on with; and for
/// a session run, where its new messages begin and how many model calls it had made before.
struct Opening {
    messages: Vec<Message>,
    resume: Option<Box<Resumption>>,
    place: Place,
    steps_before: usize,
}

/// Makes `plan` ready to run: its conversation (a new one, a history, or its session's, loaded
/// and held), or the paused run it goes on with, its decisions checked.
async fn ready<'a, S: Send + Sync + 'static>(
    plan: Plan<'a, S>,
    context: &'a S,
    events: Option<EventSender>,
    can_pause: bool,
) -> Result<Ready<'a, S>, RunError> {
    let Plan {
        agent,
        start,
        source,
        parts,
        settings,
        cancel,
        journal,
        run_id,
        summaries,
        budget,
        path,
        pauses,
        guards,
        ..
    } = plan;
    // An agent whose tools make the lethal mix does not run.
    if let Some(mix) = agent.lethal_mix() {
        return Err(RunError::LethalMix {
            mix: Box::new(mix),
            messages: Vec::new(),
            usage: Usage::default(),
        });
    }
    let (start, history, given, session, last_request) = match source {
        Source::New => (start, None, summaries, None, None),
        Source::History(history) => (start, Some(history), summaries, None, None),
        Source::Session { store, id, held } => {
            let hold = match held {
                Some(hold) => hold,
                None => store.hold(&id).await,
            };
            let stored = (store.load(&id).await)
                .map_err(|source| session_error(source, Vec::new(), Usage::default()))?;
            let last_request = stored.last_request;
            let (start, messages, summaries) = from_session(start, &id, stored)?;
            let session = InSession {
                store,
                id,
                _hold: hold,
            };
            (
                start,
                Some(messages),
                summaries,
                Some(session),
                last_request,
            )
        }
    };
    let (opening, positions) = begin(agent, start, history, parts)?;
    let family = starts_runs(agent).then(|| {
        let journal = journal.and_then(|journal| journal.for_runs_it_starts());
        let family = Family::new(events.clone(), journal, pauses && can_pause);
        // The runs that had ended before the pause this run goes on from.
        if let Some(resume) = &opening.resume {
            for child in &resume.paused.0.ended_children {
                family.keep(child.clone());
            }
        }
        Arc::new(family)
    });
    let run_id = run_id
        .or_else(|| (opening.resume.as_ref()).and_then(|resume| resume.paused.run_id().cloned()))
        .unwrap_or_default();
    let cancel = with_budget(cancel, budget.as_ref()).map(FutureExt::shared);
    // A run another run started shares its tree's tripwire; a run that has guards or can start
    // runs (whose guards would stop it) has one of its own.
    let (inherited, tripwire, defers_approvals) = match guards {
        Some(scope) => (scope.guards, Some(scope.tripwire), scope.defers_approvals),
        None => {
            let needed = has_guards(agent) || family.is_some();
            (None, needed.then(|| Arc::new(Tripwire::new())), false)
        }
    };
    // The guards of an agent with none of its own: those of the run that started this one, or
    // else the first agent's (for the agents it hands the conversation to).
    let guards = inherited.or_else(|| agent.guards.clone());
    let wide = RunWide {
        context,
        journal,
        events,
        budget,
        cancel,
        sent: LastSent::new(last_request, positions.clone()),
        summaries: RunSummaries::new(given, positions),
        settings,
        session,
        run_id,
        pauses,
        place: path,
        entry: agent,
        family,
        guards,
        tripwire,
        defers_approvals,
    };
    Ok(Ready { wide, opening })
}

impl<S: Send + Sync + 'static> Ready<'_, S> {
    /// The run: the part of the agent that holds the conversation, then of each agent it is
    /// handed on to, then a session's last write; its children and summaries put in its output.
    fn run<C: AnswerCheck<S>>(
        self,
        mut check: C,
    ) -> impl Future<Output = Result<RunOutput, RunError>> + Send {
        let Ready { wide, opening } = self;
        async move {
            // The agent that holds the conversation: the one its last hand-off went to.
            let so_far = (opening.resume.as_ref())
                .map_or(&opening.messages[..], |resume| resume.paused.messages());
            let (holder, over) = holder_of(wide.entry, so_far);
            let outcome = if wide.session.is_none() && holder.handoffs.0.is_empty() {
                let (messages, resume) = (opening.messages, opening.resume);
                let new_input = resume.is_none();
                part(
                    holder, over, &wide, &mut check, None, messages, resume, new_input,
                )
                .await
            } else {
                // Boxed: few runs are kept in a session or handed on, and every run's future
                // would keep room for what they do.
                Box::pin(parts(holder, over, &wide, &mut check, opening)).await
            };
            // The usage of the summaries this run made is its own too (a run resumed from a pause
            // goes on from its model calls': the summaries made before are in that part's output,
            // and in the session).
            let RunWide {
                family, summaries, ..
            } = wide;
            outcome.map(|mut output| {
                if let Some(family) = family {
                    output.children = family.take(&output.messages);
                    // A run that goes on from the pause keeps them too.
                    if let Some(paused) = &mut output.paused {
                        paused.0.ended_children = output.children.clone();
                    }
                }
                output.summaries = summaries.into_made();
                for summary in &output.summaries {
                    output.usage += summary.usage;
                }
                output
            })
        }
    }
}

/// The parts of a run kept in a session or whose agent can hand the conversation on: `holder`'s
/// part from `opening`, then the part of each agent it is handed on to, the transcript kept in
/// the session as they go and at the end.
async fn parts<S: Send + Sync + 'static, C: AnswerCheck<S>>(
    holder: &Agent<S>,
    over: Option<HandedOver<'_>>,
    wide: &RunWide<'_, S>,
    check: &mut C,
    opening: Opening,
) -> Result<RunOutput, RunError> {
    let mut transcript = (wide.session.as_ref()).map(|session| {
        SessionTranscript::new(
            session.store,
            &session.id,
            opening.place,
            &wide.summaries,
            &wide.sent,
            opening.steps_before,
            wide.family.as_deref(),
        )
    });
    let kept = transcript.as_mut().map(|kept| kept as &mut dyn Transcript);
    let (messages, resume) = (opening.messages, opening.resume);
    let new_input = resume.is_none();
    let outcome = match part(holder, over, wide, check, kept, messages, resume, new_input).await {
        Ok(done) if done.handed_off() => {
            // Boxed: few runs are handed on, and a session run's future would keep room for it.
            let kept = transcript.as_mut().map(|kept| kept as &mut dyn Transcript);
            Box::pin(handed_on(done, wide, check, kept)).await
        }
        outcome => outcome,
    };
    match transcript {
        Some(transcript) => transcript.close(outcome).await,
        None => outcome,
    }
}

/// The run after its agent handed the conversation on (`done`: the part that did): the part of
/// each agent it goes to, until one answers or ends otherwise, their outputs joined.
async fn handed_on<S: Send + Sync + 'static, C: AnswerCheck<S>>(
    mut done: RunOutput,
    wide: &RunWide<'_, S>,
    check: &mut C,
    mut transcript: Option<&mut (dyn Transcript + '_)>,
) -> Result<RunOutput, RunError> {
    let mut messages = std::mem::take(&mut done.messages);
    let mut before = done;
    loop {
        let (holder, over) = holder_of(wide.entry, &messages);
        let kept = transcript
            .as_mut()
            .map(|kept| &mut **kept as &mut dyn Transcript);
        match part(holder, over, wide, check, kept, messages, None, false).await {
            Ok(mut next) if next.handed_off() => {
                messages = std::mem::take(&mut next.messages);
                before = joined(before, next);
            }
            ended => return ended.map(|after| joined(before, after)),
        }
    }
}

/// The run's cancel signal: the one it was given, or its budget's
/// ([`Budget::cancel`](crate::Budget::cancel)), whichever comes first.
fn with_budget<'a>(
    cancel: Option<BoxFuture<'a, ()>>,
    budget: Option<&Budget>,
) -> Option<BoxFuture<'a, ()>> {
    let Some(budget) = budget else {
        return cancel;
    };
    let cancelled = budget.cancelled();
    Some(match cancel {
        None => Box::pin(cancelled),
        Some(cancel) => Box::pin(async move {
            futures_util::future::select(cancel, Box::pin(cancelled)).await;
        }),
    })
}

/// How a run of session `id` starts, given what the session keeps: a new run's input is refused
/// while calls wait there, and a run resuming from the session goes on with the paused run kept
/// there (refused when none is).
fn from_session(
    start: Start,
    id: &str,
    stored: Conversation,
) -> Result<(Start, Vec<Message>, Vec<Summary>), RunError> {
    let Conversation {
        messages,
        paused,
        summaries,
        ..
    } = stored;
    let start = match (start, paused) {
        (Start::Input(_), Some(paused)) => Err(SessionError::Paused {
            id: id.to_owned(),
            waiting: (paused.pending().iter())
                .map(|pending| pending.call.id.clone())
                .collect(),
        }),
        (
            Start::Resume {
                from: ResumeFrom::Session,
                decisions,
            },
            Some(paused),
        ) => Ok(Start::Resume {
            from: ResumeFrom::Run(paused),
            decisions,
        }),
        (
            Start::Resume {
                from: ResumeFrom::Session,
                ..
            },
            None,
        ) => Err(SessionError::NotPaused { id: id.to_owned() }),
        (start, _) => Ok(start),
    };
    match start {
        Ok(start) => Ok((start, messages, summaries)),
        Err(source) => Err(session_error(source, messages, Usage::default())),
    }
}

/// What a run starts from: the conversation of a new run (its history repaired, then its
/// input), or a paused run with its decisions checked (nothing runs when one does not fit); with
/// where the messages it was given are in its own.
fn begin<S: Send + Sync + 'static>(
    agent: &Agent<S>,
    start: Start,
    history: Option<Vec<Message>>,
    parts: Vec<Part>,
) -> Result<(Opening, Positions), RunError> {
    match start {
        Start::Input(input) => {
            let mut place = Place::of(history.as_deref().unwrap_or_default());
            let prompt = place.new_from - place.loaded;
            let (messages, repairs) = conversation(agent, history, input, parts);
            place.new_from += repairs.len();
            let repairs = repairs.into_iter().map(|at| at + prompt).collect();
            let opening = Opening {
                messages,
                resume: None,
                place,
                steps_before: 0,
            };
            Ok((opening, Positions { prompt, repairs }))
        }
        Start::Resume {
            from: ResumeFrom::Run(paused),
            decisions,
        } => {
            let place = Place::of(&paused.0.messages);
            // The decisions are on calls of the agent that held the conversation when it paused.
            let (holder, _) = holder_of(agent, paused.messages());
            let resume = resumption(holder, paused, decisions)?;
            let opening = Opening {
                messages: Vec::new(),
                steps_before: resume.paused.0.step_usage.len(),
                resume: Some(Box::new(resume)),
                place,
            };
            Ok((opening, Positions::default()))
        }
        Start::Resume {
            from: ResumeFrom::Session,
            ..
        } => {
            let source = SessionError::NotPaused { id: String::new() };
            let messages = history.unwrap_or_default();
            Err(session_error(source, messages, Usage::default()))
        }
    }
}

/// The conversation a new run starts with: its history (the system prompt in front if it has
/// none; every call answered) or the system prompt alone, then the input with its parts. With
/// it, the positions in the history (before the system prompt goes in front) of the results the
/// repair put among its messages (not after them).
fn conversation<S: Send + Sync + 'static>(
    agent: &Agent<S>,
    history: Option<Vec<Message>>,
    input: Input,
    parts: Vec<Part>,
) -> (Vec<Message>, Vec<usize>) {
    let mut messages = match history {
        Some(history) if !history.is_empty() => history,
        // Room for six: a run that calls a tool once and answers never grows it.
        _ => Vec::with_capacity(6),
    };
    let repaired = answer_every_call(&mut messages, &agent.tools);
    if !matches!(messages.first(), Some(Message::System { .. })) {
        messages.insert(0, Message::system(agent.system_prompt()));
    }
    if input.text.is_some() || !parts.is_empty() {
        messages.push(Message::User {
            content: input.text.unwrap_or_default(),
            parts,
        });
    }
    (messages, repaired)
}

/// A paused run with its decisions checked against its waiting calls: nothing runs when one does
/// not fit.
fn resumption<S: Send + Sync + 'static>(
    agent: &Agent<S>,
    paused: PausedRun,
    decisions: Vec<(String, Decision)>,
) -> Result<Resumption, RunError> {
    let matched = paused.match_decisions(decisions, |name| agent.tools.get(name).is_some());
    match matched {
        Ok(matched) => {
            let mut decisions = (matched.into_iter())
                .map(|(pending, decision)| (pending.clone(), decision))
                .collect();
            let mut paused = paused;
            let children = paused.take_children(&mut decisions);
            Ok(Resumption {
                paused,
                decisions,
                children,
                rerun: Vec::new(),
            })
        }
        Err(source) => Err(RunError::Resume {
            source,
            usage: paused.0.usage,
            messages: paused.0.messages,
        }),
    }
}
