//! The answer-check seam: what a run offers the model on each request, how it reads each reply
//! (an answer, a correction, or not yet), and what it says of the calls its judgement decides. A
//! text run's check takes a reply without calls as its answer ([`TextAnswer`]); a typed run's
//! reads its value ([`RunRequest::output`](crate::RunRequest::output)).

use crate::message::{AssistantMessage, Message};
use crate::output::{OutputProblem, RejectedOutput};
use crate::settings::{ModelSettings, ResponseFormat, ToolChoice};
use crate::texts::Texts;
use crate::tool::BoxFuture;
use crate::tool::ToolDef;

use super::policy::ReplyRulings;

/// What the next request offers the model, which the answer check may change: made by the run
/// with the agent's tools and the run's tool choice.
#[non_exhaustive]
pub struct Offer<'a> {
    /// The tools on offer.
    pub tools: &'a [ToolDef],
    /// The tool choice; it stays the run's for the requests after.
    pub tool_choice: Option<ToolChoice>,
    /// The schema the answer must follow, if any.
    pub response_format: Option<&'a ResponseFormat>,
    /// Whether this is the run's last request (at the step limit, asking for a final answer).
    pub last_try: bool,
}

/// What a reply is, as the answer check reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Judgement {
    /// No answer in it: its calls are carried out and the run goes on.
    Continue,
    /// The run's answer (its text): the run ends; the reply's other calls are not run.
    Answer(String),
    /// An answer that does not do: the model is told this correction (as the user's next message
    /// when the reply has no calls) and tries again.
    Retry(String),
    /// An answer rejected once more than allowed: the run fails.
    GiveUp,
}

/// A judgement after a second look: at once, or when the future completes.
pub enum Reviewed<'a> {
    /// Known at once.
    Now(Judgement),
    /// Known when the future completes.
    Later(BoxFuture<'a, Judgement>),
}

impl Reviewed<'_> {
    /// The judgement.
    pub async fn get(self) -> Judgement {
        match self {
            Reviewed::Now(judgement) => judgement,
            Reviewed::Later(future) => future.await,
        }
    }
}

/// One value at the answer-check seam: one per run, made for it.
pub trait AnswerCheck<S = ()>: Send + Sync {
    /// Before the first step: sets up the conversation and settings (instructions in the system
    /// prompt, say). Nothing by default.
    fn prepare(&mut self, messages: &mut Vec<Message>, settings: &mut ModelSettings) {
        let _ = (messages, settings);
    }

    /// Shapes what the next request offers.
    fn offer<'a>(&'a self, offer: &mut Offer<'a>);

    /// Reads a reply. `cut_off`: it stopped at the output token limit. `last_try`: the run's
    /// last request. It may edit the reply before it goes into the transcript.
    fn judge(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        cut_off: bool,
        last_try: bool,
    ) -> Judgement;

    /// A second look at a reply after [`judge`](Self::judge), which may take time (the guards on
    /// the answer, one of them a model asked as a judge): the judgement that stands. The reply as
    /// `judge` left it, `judgement` as it stands, by default.
    fn review<'a>(
        &'a mut self,
        context: &'a S,
        reply: &'a mut AssistantMessage,
        judgement: Judgement,
        last_try: bool,
    ) -> Reviewed<'a> {
        let _ = (context, reply, last_try);
        Reviewed::Now(judgement)
    }

    /// The answer this check took (`Judgement::Answer`) was rewritten after it, by a review: the
    /// judgement of the rewrite. By default the rewrite is the answer (a text run's, whose reply
    /// then says it); a typed run reads its value from it again.
    fn rewritten(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        answer: String,
        last_try: bool,
    ) -> Judgement {
        let _ = (context, last_try);
        reply.content.clone_from(&answer);
        Judgement::Answer(answer)
    }

    /// The answer this check took was turned down after it, by a review, for `problem`: the
    /// judgement now. By default a retry with `problem` worded by `texts`; a typed run counts it
    /// among its rejected outputs (and gives up when its retries are spent).
    fn turned_down(
        &mut self,
        reply: &AssistantMessage,
        problem: OutputProblem,
        texts: &dyn Texts,
        last_try: bool,
    ) -> Judgement {
        let _ = (reply, last_try);
        Judgement::Retry(texts.output_correction(&problem))
    }

    /// Rules on the calls of the reply its judgement decides (a final-answer tool's calls, say).
    /// Nothing by default.
    fn rule_calls(
        &self,
        reply: &AssistantMessage,
        judgement: &Judgement,
        rulings: &mut ReplyRulings<'_>,
    ) {
        let _ = (reply, judgement, rulings);
    }

    /// Whether calls may wait for a person or the caller in this run (a run that must end with
    /// an answer cannot pause). Asked once, as the run starts. Yes by default.
    fn can_pause(&self) -> bool {
        true
    }

    /// The run ended without an answer (`gave_up`: this check gave up): the answers it turned
    /// down, when an answer was required (the run then fails), or `None` when the run's own text
    /// will do.
    fn unanswered(&mut self, gave_up: bool) -> Option<Vec<RejectedOutput>> {
        let _ = gave_up;
        None
    }
}

/// A text run's answer check: a reply without calls is the answer; at the last try, the reply's
/// text is, whatever it asked for (it was offered no tools, and its calls are dropped).
#[derive(Debug, Clone, Copy, Default)]
pub struct TextAnswer;

impl<S> AnswerCheck<S> for TextAnswer {
    fn offer<'a>(&'a self, offer: &mut Offer<'a>) {
        if offer.last_try {
            offer.tools = &[];
        }
    }

    fn judge(
        &mut self,
        _context: &S,
        reply: &mut AssistantMessage,
        _cut_off: bool,
        last_try: bool,
    ) -> Judgement {
        if last_try {
            reply.tool_calls.clear();
        }
        if reply.tool_calls.is_empty() {
            Judgement::Answer(reply.content.clone())
        } else {
            Judgement::Continue
        }
    }
}

/// A boxed check is a check (one chosen at run time).
// Every method forwarded, or the boxed check would lose one.
#[deny(clippy::missing_trait_methods)]
impl<S, C: AnswerCheck<S> + ?Sized> AnswerCheck<S> for Box<C> {
    fn prepare(&mut self, messages: &mut Vec<Message>, settings: &mut ModelSettings) {
        (**self).prepare(messages, settings);
    }

    fn offer<'a>(&'a self, offer: &mut Offer<'a>) {
        (**self).offer(offer);
    }

    fn judge(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        cut_off: bool,
        last_try: bool,
    ) -> Judgement {
        (**self).judge(context, reply, cut_off, last_try)
    }

    fn review<'a>(
        &'a mut self,
        context: &'a S,
        reply: &'a mut AssistantMessage,
        judgement: Judgement,
        last_try: bool,
    ) -> Reviewed<'a> {
        (**self).review(context, reply, judgement, last_try)
    }

    fn rewritten(
        &mut self,
        context: &S,
        reply: &mut AssistantMessage,
        answer: String,
        last_try: bool,
    ) -> Judgement {
        (**self).rewritten(context, reply, answer, last_try)
    }

    fn turned_down(
        &mut self,
        reply: &AssistantMessage,
        problem: OutputProblem,
        texts: &dyn Texts,
        last_try: bool,
    ) -> Judgement {
        (**self).turned_down(reply, problem, texts, last_try)
    }

    fn rule_calls(
        &self,
        reply: &AssistantMessage,
        judgement: &Judgement,
        rulings: &mut ReplyRulings<'_>,
    ) {
        (**self).rule_calls(reply, judgement, rulings);
    }

    fn can_pause(&self) -> bool {
        (**self).can_pause()
    }

    fn unanswered(&mut self, gave_up: bool) -> Option<Vec<RejectedOutput>> {
        (**self).unanswered(gave_up)
    }
}
