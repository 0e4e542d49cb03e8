//! A reply's calls, from its rulings to its results: the answer check and the policies rule on
//! what the reply as a whole decides, each call left open is ruled on by the policies in order
//! when it starts, and the calls are carried out through the dispatcher
//! ([`ToolSet::outcome`](crate::ToolSet::outcome) and
//! [`ToolSet::result_message`](crate::ToolSet::result_message), through the journal when the run
//! has one), at once or one by one, raced against the run's interruption. Each outcome lands in
//! its slot as it comes, so an interruption cuts only the calls still in flight: one that had
//! started is answered as interrupted (it may have had its effect), one that had not as not run.

use std::borrow::Cow;
use std::time::{Duration, Instant};

use std::pin::pin;

use futures_util::future::join_all;
use tracing::field::Empty;
use tracing::{Instrument, info_span};

use super::interrupt::Interrupt;
use super::{Ending, Run};
use crate::message::{AssistantMessage, Message, ToolCall, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::run::events::LiveEvent;
use crate::run::outcome::StopReason;
use crate::run::pause::{PausedRun, PendingCall};
use crate::run::seams::RulingPlaces;
use crate::run::seams::{Judgement, PolicyCall, ReplyRulings, Ruled, Ruling, RunStatus};
use crate::run::tree::Family;
use crate::tool::ToolDef;
use crate::tool::dispatcher::CallDecision;

/// One call's place while a step's calls are carried out.
pub(super) enum Slot {
    /// Not carried out yet: its ruling, or `None` for the policies to rule when it starts.
    Open(Option<Ruling>),
    /// Its tool is running: cut off now, it is interrupted, not "not run".
    Started,
    /// It waits for a person or the caller.
    Waiting(PendingCall),
    /// It started a run of its own (an agent called as a tool), which paused: it waits for it.
    WaitsForItsRun,
    /// Its result.
    Answered(ToolResultMessage),
}

impl Slot {
    /// Whether the call waits (then the run pauses, unless something cut the step short).
    pub(super) fn waits(&self) -> bool {
        matches!(self, Slot::Waiting(_) | Slot::WaitsForItsRun)
    }
}

/// Which of the policies' looks at a call is asked for.
#[derive(Clone, Copy)]
enum Asked {
    /// [`CallPolicy::rule`](crate::seams::CallPolicy::rule), when the call starts.
    Rule,
    /// [`CallPolicy::before_run`](crate::seams::CallPolicy::before_run), just before it runs.
    BeforeRun,
}

/// What a step's calls came to, besides their results in the transcript.
#[derive(Default)]
pub(super) struct Carried {
    /// The run was interrupted while they ran: it stops, for this reason.
    pub(super) stop: Option<StopReason>,
    /// A policy asked the run to end after this step.
    pub(super) stop_after: Option<StopReason>,
}

impl<S: Send + Sync + 'static> Run<'_, S> {
    /// Why the run ends (or waits) before the model call of `step`, if it does: the time limit
    /// or the cancel signal, or the first policy that says so.
    pub(super) fn stop_before(&self, step: usize) -> Option<StopReason> {
        if let Some(interrupt) = self.interruption.passed() {
            return Some(interrupt.stop_reason());
        }
        let status = self.status(step);
        (self.seams.policies.iter()).find_map(|policy| policy.before_step(&status))
    }

    /// Puts `reply` into the transcript and carries out its calls: ruled on (the answer check's
    /// say, then `ends` for the calls left when the run ends with this reply, then the
    /// policies'), run, and their results recorded after it in call order; or, when some wait,
    /// the run pauses (`Err(Ending::Paused)`). The transcript is kept before calls that may run
    /// start, and when the step's results are in.
    pub(super) async fn carry_out(
        &mut self,
        step: usize,
        reply: AssistantMessage,
        cut_off: bool,
        judgement: &Judgement,
        ends: Option<NotRun>,
    ) -> Result<Carried, Ending> {
        let mut slots: Vec<Slot> = reply.tool_calls.iter().map(|_| Slot::Open(None)).collect();
        let mut stop_after = None;
        {
            let status = self.status(step);
            let mut on_reply = ReplyRulings::new(&mut slots, &mut stop_after);
            self.seams
                .check
                .rule_calls(&reply, judgement, &mut on_reply);
            if let Some(why) = ends {
                let open: Vec<usize> = on_reply.open().collect();
                for index in open {
                    on_reply.rule(index, Ruling::not_run(why.clone()));
                }
            }
            for policy in &self.seams.policies {
                policy.on_reply(&status, &reply, cut_off, &mut on_reply);
            }
        }
        let open = slots.iter().filter(|slot| matches!(slot, Slot::Open(None)));
        self.tally.tool_calls += open.count();
        for call in &reply.tool_calls {
            self.emit(|| LiveEvent::ToolCallRequested(call.clone()));
        }
        // The reply first; its calls' results follow it, in call order.
        self.messages.reserve(1 + slots.len());
        self.messages.push(Message::Assistant(reply));
        if !slots.is_empty() && self.keeps() {
            self.keep(None).await?;
        }
        let at = self.messages.len() - 1;
        let interrupted = self.run_calls(step, self.calls_at(at), &mut slots).await;
        let waits = interrupted.is_none()
            && self.stop_request.get().is_none()
            && slots.iter().any(Slot::waits);
        if waits {
            return Err(self.pause(at, slots, &stop_after).await);
        }
        let why = interrupted.map_or(NotRun::RunEnded, Interrupt::not_run);
        for (index, slot) in slots.into_iter().enumerate() {
            let result = self.result(slot, &self.calls_at(at)[index], interrupted, why.clone());
            self.emit(|| LiveEvent::ToolResult(result.clone()));
            self.messages.push(Message::Tool(result));
        }
        if self.keeps() {
            self.keep(None).await?;
        }
        Ok(Carried {
            stop: interrupted.map(Interrupt::stop_reason),
            stop_after,
        })
    }

    /// Puts a reply without calls into the transcript, and keeps it.
    pub(super) async fn record(&mut self, reply: AssistantMessage) -> Result<Carried, Ending> {
        self.messages.push(Message::Assistant(reply));
        if self.keeps() {
            self.keep(None).await?;
        }
        Ok(Carried::default())
    }

    /// The calls of the reply at `at` in the transcript.
    pub(super) fn calls_at(&self, at: usize) -> &[ToolCall] {
        match self.messages.get(at) {
            Some(Message::Assistant(reply)) => &reply.tool_calls,
            _ => &[],
        }
    }

    /// Carries out `calls`, each into its slot: at once unless the agent asks for one at a time
    /// or a journal records them in order. The interruption that cut them short, if one did.
    pub(super) async fn run_calls(
        &self,
        step: usize,
        calls: &[ToolCall],
        slots: &mut [Slot],
    ) -> Option<Interrupt> {
        let status = self.status(step);
        let at_once =
            self.agent.concurrent_tools && calls.len() > 1 && self.seams.journal.is_none();
        if at_once {
            let each = slots.iter_mut().zip(calls);
            let all = join_all(each.map(|(slot, call)| self.fill(slot, call, &status)));
            return self.interruption.race(pin!(all)).await.err();
        }
        for (slot, call) in slots.iter_mut().zip(calls) {
            let one = pin!(self.fill(slot, call, &status));
            if let Err(interrupt) = self.interruption.race(one).await {
                return Some(interrupt);
            }
        }
        None
    }

    /// Carries out the call of an open slot as ruled (ruling on it first if no one has), and
    /// puts what it came to there.
    async fn fill(&self, slot: &mut Slot, call: &ToolCall, status: &RunStatus<'_>) {
        let Slot::Open(ruling) = slot else { return };
        let started = Instant::now();
        let tool = (self.agent.tools.get(&call.name)).map(|tool| tool.definition());
        // The ruling, and the arguments a rewrite gave the call (in a block of its own: the
        // rewritten call is not kept while the call runs).
        let (ruling, rewritten) = {
            let (current, ruling) = match ruling.take() {
                Some(ruling) => (Cow::Borrowed(call), ruling),
                None => self.rule(call, tool, status).await,
            };
            match (ruling, current) {
                (Ruling::Wait(waits_for), current) => {
                    let call = current.into_owned();
                    *slot = Slot::Waiting(PendingCall { call, waits_for });
                    return;
                }
                (Ruling::RunWith(arguments), _) => (Ruling::Run, Some(arguments)),
                (ruling, Cow::Owned(current)) => (ruling, Some(current.arguments)),
                (ruling, Cow::Borrowed(_)) => (ruling, None),
            }
        };
        // A call about to run has a last look from the policies, with the arguments it will run
        // with (a person's approval does not pass the guards by).
        let (ruling, rewritten) = match ruling.runs() {
            true => self.vet(call, tool, rewritten, status).await,
            false => (ruling, rewritten),
        };
        let mut result = match ruling {
            Ruling::Answer(outcome) => self.agent.tools.result_message(call, outcome),
            Ruling::Stop(reason) => {
                let mut result = self
                    .agent
                    .tools
                    .not_run(call, NotRun::Skipped(reason.clone()));
                // The first stop asked for is the one reported.
                let _ = self.stop_request.set(reason);
                self.after_call(call, &mut result, started.elapsed());
                *slot = Slot::Answered(result);
                return;
            }
            // Interrupted while it was ruled on (another call's guard tripped, say): it never
            // starts, and is answered as not run.
            _ if self.interruption.passed().is_some() => {
                *slot = Slot::Open(None);
                return;
            }
            _ => {
                *slot = Slot::Started;
                let decision = match &rewritten {
                    Some(arguments) => CallDecision::RunWith { arguments },
                    None => CallDecision::Run,
                };
                let result = self.dispatch(call, decision).await;
                // The call started a run that paused: the call waits for it.
                if Family::of(&self.scope).is_some_and(|family| family.waits(&call.id)) {
                    *slot = Slot::WaitsForItsRun;
                    return;
                }
                result
            }
        };
        for policy in &self.seams.policies {
            let checking = policy.check_result(self.context, status, call, tool, &mut result);
            if let Some(check) = checking {
                check.await;
            }
        }
        self.after_call(call, &mut result, started.elapsed());
        *slot = Slot::Answered(result);
    }

    /// The policies' ruling on `call` when it starts (see [`fold`](Self::fold)).
    async fn rule<'c>(
        &self,
        call: &'c ToolCall,
        tool: Option<&ToolDef>,
        status: &RunStatus<'_>,
    ) -> (Cow<'c, ToolCall>, Ruling) {
        self.fold(Cow::Borrowed(call), tool, status, Asked::Rule)
            .await
    }

    /// The policies' last look at `call` about to run (with `rewritten` arguments, if a ruling
    /// rewrote them): the ruling it runs under (to run, with the arguments it runs with, or an
    /// answer or a stop instead).
    async fn vet(
        &self,
        call: &ToolCall,
        tool: Option<&ToolDef>,
        rewritten: Option<String>,
        status: &RunStatus<'_>,
    ) -> (Ruling, Option<String>) {
        let current = match rewritten {
            Some(arguments) => Cow::Owned(ToolCall {
                arguments,
                ..call.clone()
            }),
            None => Cow::Borrowed(call),
        };
        match self.fold(current, tool, status, Asked::BeforeRun).await {
            (_, ruling @ (Ruling::Answer(_) | Ruling::Stop(_))) => (ruling, None),
            (Cow::Owned(current), _) => (Ruling::Run, Some(current.arguments)),
            (Cow::Borrowed(_), _) => (Ruling::Run, None),
        }
    }

    /// What the policies make of `call` (of the tool `tool`, if the agent has it) when `asked`,
    /// folded in order: each is shown the call as rewritten so far and the ruling so far, and
    /// the first that answers or stops it has the last word.
    async fn fold<'c>(
        &self,
        call: Cow<'c, ToolCall>,
        tool: Option<&ToolDef>,
        status: &RunStatus<'_>,
        asked_for: Asked,
    ) -> (Cow<'c, ToolCall>, Ruling) {
        let mut current = call;
        let mut so_far = Ruling::Run;
        for policy in &self.seams.policies {
            let asked = PolicyCall {
                context: self.context,
                call: &current,
                tool,
                so_far: &so_far,
                status,
            };
            let ruling = {
                let ruled = match asked_for {
                    Asked::Rule => policy.rule(asked),
                    Asked::BeforeRun => policy.before_run(asked),
                };
                match ruled {
                    None => continue,
                    Some(Ruled::Now(ruling)) => ruling,
                    Some(Ruled::Later(ruling)) => ruling.await,
                }
            };
            match ruling {
                // A rewrite of the arguments: the call runs as rewritten, unless a later policy
                // says otherwise.
                Ruling::RunWith(arguments) => {
                    let rewritten = ToolCall {
                        arguments,
                        ..current.into_owned()
                    };
                    current = Cow::Owned(rewritten);
                }
                ruling @ (Ruling::Answer(_) | Ruling::Stop(_)) => return (current, ruling),
                ruling => so_far = ruling,
            }
        }
        (current, so_far)
    }

    /// Runs `call` as `decision` says through the dispatcher, or through the journal when the
    /// run has one, in the call's span.
    async fn dispatch(&self, call: &ToolCall, decision: CallDecision<'_>) -> ToolResultMessage {
        let arguments = match decision {
            CallDecision::RunWith { arguments } => arguments,
            _ => &call.arguments,
        };
        let span = info_span!(
            "execute_tool",
            "gen_ai.operation.name" = "execute_tool",
            "gen_ai.tool.name" = %call.name,
            "gen_ai.tool.call.id" = %call.id,
            "gen_ai.tool.type" = "function",
            "error.type" = Empty,
        );
        let tools = &self.agent.tools;
        let work = async {
            tracing::debug!(arguments = %arguments, "tool call");
            let run = async {
                let outcome = tools
                    .outcome(self.context, call, decision, &self.scope)
                    .await;
                tools.result_message(call, outcome)
            };
            // A call that starts runs journaled in the same journal (an agent called as a tool
            // under a durable run) is not journaled as a whole: its runs' calls are.
            let whole = !self.starts_journaled_runs(call);
            let result = match self.seams.journal.filter(|_| whole) {
                None => run.await,
                Some(journal) => {
                    let definition = tools.get(&call.name).map(|tool| tool.definition());
                    match journal.tool_call(call, definition, Box::pin(run)).await {
                        Ok(result) => result,
                        Err(error) => tools.result_message(call, Err(error)),
                    }
                }
            };
            tracing::debug!(is_error = result.is_error, content = %result.content, "tool result");
            result
        };
        // Pinned where it is, so that the span's wrapper holds a pointer, not the call's state.
        let result = pin!(work).instrument(span.clone()).await;
        if result.is_error {
            span.record("error.type", "tool_error");
        }
        result
    }

    /// Whether `call` starts runs that keep their calls in this run's journal.
    fn starts_journaled_runs(&self, call: &ToolCall) -> bool {
        let family = Family::of(&self.scope);
        family.is_some_and(|family| family.journal.is_some())
            && (self.agent.tools.get(&call.name)).is_some_and(|tool| tool.starts_runs())
    }

    /// Shows `result` to the policies (which may change it).
    pub(super) fn after_call(
        &self,
        call: &ToolCall,
        result: &mut ToolResultMessage,
        elapsed: Duration,
    ) {
        for policy in &self.seams.policies {
            policy.after_call(self.context, call, result, elapsed);
        }
    }

    /// The result of `call` from its slot: its own; or, when it has none, that it was
    /// interrupted (it had started) or not run, saying `why`.
    pub(super) fn result(
        &self,
        slot: Slot,
        call: &ToolCall,
        interrupted: Option<Interrupt>,
        why: NotRun,
    ) -> ToolResultMessage {
        let tools = &self.agent.tools;
        let mut result = match slot {
            Slot::Answered(result) => return result,
            Slot::Started => match interrupted {
                Some(interrupt) => tools.result_message(call, Err(interrupt.cut_off())),
                None => tools.not_run(call, why),
            },
            Slot::Waiting(_) | Slot::WaitsForItsRun | Slot::Open(_) => tools.not_run(call, why),
        };
        self.after_call(call, &mut result, Duration::ZERO);
        result
    }

    /// The step when some of its calls wait: the reply at `at` stays in the transcript, the
    /// results of its other calls wait with them in the paused run, which the transcript keeps.
    pub(super) async fn pause(
        &mut self,
        at: usize,
        slots: Vec<Slot>,
        stop_after: &Option<StopReason>,
    ) -> Ending {
        let mut pending = Vec::new();
        let mut children = Vec::new();
        let mut finished = Vec::with_capacity(slots.len());
        let family = Family::of(&self.scope);
        for (slot, call) in slots.into_iter().zip(self.calls_at(at)) {
            match slot {
                Slot::Waiting(waiting) => pending.push(waiting),
                Slot::WaitsForItsRun => {
                    let paused = family.and_then(|family| family.take_paused(call));
                    children.extend(paused);
                }
                // Every other slot was answered: a step pauses only when nothing cut its calls.
                slot => finished.push(self.result(slot, call, None, NotRun::RunEnded)),
            }
        }
        for result in &finished {
            self.emit(|| LiveEvent::ToolResult(result.clone()));
        }
        let over_limit = matches!(stop_after, Some(StopReason::ToolCallLimit { .. }));
        let paused = self.paused(pending, children, finished, over_limit);
        self.paused_with(paused).await
    }

    /// The run ends with `paused`, which its transcript keeps.
    pub(super) async fn paused_with(&mut self, paused: PausedRun) -> Ending {
        if let Err(ending) = self.keep(Some(&paused)).await {
            return ending;
        }
        let text = self.agent.tools.texts().run_paused().to_owned();
        let mut output = self.finish(StopReason::Paused, Some(text));
        output.paused = Some(paused);
        Ending::Paused(Box::new(output))
    }
}

/// A reply's slots, as the places of its rulings.
impl RulingPlaces for Vec<Slot> {
    fn count(&self) -> usize {
        self.len()
    }

    fn is_open(&self, index: usize) -> bool {
        matches!(self.get(index), Some(Slot::Open(None)))
    }

    fn set(&mut self, index: usize, ruling: Ruling) {
        if let Some(slot) = self.get_mut(index) {
            *slot = Slot::Open(Some(ruling));
        }
    }
}
