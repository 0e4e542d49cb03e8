//! One budget for a tree of agents: the requests, tokens, tool calls and cost a run and every run
//! it starts (agents called as tools) may spend together, and a cancel signal they share.
//!
//! Requests and tool calls are taken from the budget before they are made, under one lock, so
//! runs going on at once can never make more than it allows (ten children started together
//! against a budget of three requests make three). Tokens and cost are known only when a reply
//! comes: a request may start while they are under their limits, so runs at once can pass them
//! by what their requests in flight then use.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use futures_channel::oneshot;
use futures_util::FutureExt;
use futures_util::future::Shared;
use serde::{Deserialize, Serialize};

use crate::prices::PriceTable;
use crate::usage::{Usage, UsageByModel};

/// Which part of a [`Budget`] ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BudgetItem {
    /// Model requests.
    Requests,
    /// Tokens, input and output together.
    Tokens,
    /// Tool calls.
    ToolCalls,
    /// Cost, by the budget's price table.
    Cost,
}

impl fmt::Display for BudgetItem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BudgetItem::Requests => "requests",
            BudgetItem::Tokens => "tokens",
            BudgetItem::ToolCalls => "tool calls",
            BudgetItem::Cost => "cost",
        })
    }
}

/// The limits of a [`Budget`]; `None` is no limit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BudgetLimits {
    /// Model requests.
    pub requests: Option<u64>,
    /// Tokens, input and output together ([`Usage::total_tokens`]).
    pub tokens: Option<u64>,
    /// Tool calls that run.
    pub tool_calls: Option<u64>,
    /// Cost, in the currency of the budget's [`PriceTable`].
    pub cost: Option<f64>,
}

impl BudgetLimits {
    /// No limits.
    pub fn new() -> Self {
        BudgetLimits::default()
    }

    /// Limits the model requests.
    pub fn max_requests(mut self, requests: u64) -> Self {
        self.requests = Some(requests);
        self
    }

    /// Limits the tokens, input and output together.
    pub fn max_tokens(mut self, tokens: u64) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Limits the tool calls.
    pub fn max_tool_calls(mut self, calls: u64) -> Self {
        self.tool_calls = Some(calls);
        self
    }

    /// Limits the cost (priced by the budget's price table).
    pub fn max_cost(mut self, cost: f64) -> Self {
        self.cost = Some(cost);
        self
    }
}

/// What a [`Budget`] has spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spent {
    /// Model requests made (or about to be: a request is counted when it is let through).
    pub requests: u64,
    /// Tool calls let through.
    pub tool_calls: u64,
    /// Tokens the replies used.
    pub usage: Usage,
    /// What they cost by the budget's price table (models it has no price for cost nothing).
    pub cost: f64,
}

/// A budget shared by a run and every run it starts: give it to a run with
/// [`RunRequest::budget`](crate::RunRequest::budget), and each agent called as a tool
/// ([`Agent::as_tool`](crate::Agent::as_tool)) spends from it too, or from a
/// [slice](Budget::slice) of it. A run that reaches it ends with
/// [`StopReason::BudgetSpent`](crate::StopReason::BudgetSpent); its calls past it are not run.
/// [`cancel`](Budget::cancel) stops every run that shares it.
///
/// A handle: clones share one ledger.
///
/// ```
/// use agent_core::{Budget, BudgetItem};
///
/// let budget = Budget::new().max_requests(3).max_tokens(20_000);
/// let child = budget.slice().max_requests(1);
/// assert!(child.take_request().is_ok());
/// // The slice's own limit is reached; the whole tree's is not.
/// assert_eq!(child.take_request(), Err(BudgetItem::Requests));
/// assert_eq!(budget.spent().requests, 1);
/// ```
#[derive(Clone)]
pub struct Budget(Arc<Ledger>);

struct Ledger {
    /// The budget this one is a slice of: what this one spends, it spends too.
    parent: Option<Budget>,
    books: Mutex<Books>,
    cancel: Cancel,
}

#[derive(Default)]
struct Books {
    limits: BudgetLimits,
    prices: PriceTable,
    spent: Spent,
    /// Usage by the agent that made it (its path) and by model.
    by_agent: BTreeMap<String, UsageByModel>,
    /// Whether a run that finds it spent waits for a person rather than ends.
    pauses: bool,
    /// When every run that shares it must end, and the time limit that set it.
    deadline: Option<(Instant, Duration)>,
    /// Tokens the requests in flight are expected to use (see [`Budget::reserve_tokens`]).
    reserved: u64,
}

/// What a [`Budget`] has spent and may spend, to keep (with a paused run, say) and take up
/// again in another process ([`Budget::from_state`]). Its price table is not in it: give it
/// again with [`Budget::max_cost`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct BudgetState {
    /// The limits.
    pub limits: BudgetLimits,
    /// What was spent.
    pub spent: Spent,
    /// Usage by agent path and by model.
    pub by_agent: BTreeMap<String, UsageByModel>,
    /// Whether runs that find it spent wait ([`Budget::pause_when_spent`]).
    #[serde(default)]
    pub pauses: bool,
}

impl Budget {
    /// A budget without limits (it counts, and can cancel); set them with the methods below.
    pub fn new() -> Self {
        Budget::with_parent(None)
    }

    fn with_parent(parent: Option<Budget>) -> Self {
        let cancel = match &parent {
            Some(parent) => parent.0.cancel.clone(),
            None => Cancel::new(),
        };
        Budget(Arc::new(Ledger {
            parent,
            books: Mutex::default(),
            cancel,
        }))
    }

    /// A budget of its own for part of the tree (a child given a share): what it spends is
    /// spent from this one too, so it ends at its own limits or this one's, whichever comes
    /// first. Cancelling either cancels both.
    pub fn slice(&self) -> Budget {
        Budget::with_parent(Some(self.clone()))
    }

    fn books(&self) -> std::sync::MutexGuard<'_, Books> {
        self.0.books.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Limits the model requests.
    pub fn max_requests(self, requests: u64) -> Self {
        self.books().limits.requests = Some(requests);
        self
    }

    /// Limits the tokens, input and output together.
    pub fn max_tokens(self, tokens: u64) -> Self {
        self.books().limits.tokens = Some(tokens);
        self
    }

    /// Limits the tool calls.
    pub fn max_tool_calls(self, calls: u64) -> Self {
        self.books().limits.tool_calls = Some(calls);
        self
    }

    /// Gives every run that shares the budget `limit` from now: each ends with
    /// [`StopReason::TimeLimit`](crate::StopReason::TimeLimit) when it passes (what is in flight
    /// cut off, as a run's own time limit does). Not kept in its [`state`](Budget::state).
    pub fn time_limit(self, limit: Duration) -> Self {
        self.books().deadline = Some((Instant::now() + limit, limit));
        self
    }

    /// When every run that shares the budget must end (the earliest of its own and that of the
    /// budget it is a slice of), and the time limit that set it.
    pub fn deadline(&self) -> Option<(Instant, Duration)> {
        let own = self.books().deadline;
        earliest(own, self.0.parent.as_ref().and_then(Budget::deadline))
    }

    /// Limits the cost, priced by `prices`.
    pub fn max_cost(self, cost: f64, prices: PriceTable) -> Self {
        {
            let mut books = self.books();
            books.limits.cost = Some(cost);
            books.prices = prices;
        }
        self
    }

    /// Makes a run that finds the budget spent (no request, tokens or money left) wait for a
    /// person instead of ending: it ends [paused](crate::StopReason::Paused) before its next
    /// model call, with no call waiting; once the budget is raised
    /// ([`set_limits`](Budget::set_limits)), [`Agent::resume`](crate::Agent::resume) with no
    /// decisions goes on. (Calls past its tool calls are not run either way; a run that cannot
    /// pause, a typed one, ends.)
    pub fn pause_when_spent(self) -> Self {
        self.books().pauses = true;
        self
    }

    /// Whether runs that find it spent wait rather than end (this budget's choice, or the one
    /// it is a slice of).
    pub fn pauses(&self) -> bool {
        self.books().pauses || self.0.parent.as_ref().is_some_and(Budget::pauses)
    }

    /// What it has spent and may spend, to take up again elsewhere.
    pub fn state(&self) -> BudgetState {
        let books = self.books();
        BudgetState {
            limits: books.limits.clone(),
            spent: books.spent,
            by_agent: books.by_agent.clone(),
            pauses: books.pauses,
        }
    }

    /// A budget that goes on from `state` (kept by another process, or before a pause).
    pub fn from_state(state: BudgetState) -> Self {
        let budget = Budget::new();
        {
            let mut books = budget.books();
            books.limits = state.limits;
            books.spent = state.spent;
            books.by_agent = state.by_agent;
            books.pauses = state.pauses;
        }
        budget
    }

    /// The limits now.
    pub fn limits(&self) -> BudgetLimits {
        self.books().limits.clone()
    }

    /// Sets other limits (a person extending a budget that ran out, before the run goes on).
    pub fn set_limits(&self, limits: BudgetLimits) {
        self.books().limits = limits;
    }

    /// What this budget has spent (a slice: what was spent through it).
    pub fn spent(&self) -> Spent {
        self.books().spent
    }

    /// Usage by the agent that made it ([`AgentPath`](crate::AgentPath) as text) and by model.
    pub fn by_agent(&self) -> BTreeMap<String, UsageByModel> {
        self.books().by_agent.clone()
    }

    /// Stops every run that shares this budget: each ends as cancelled
    /// ([`StopReason::Cancelled`](crate::StopReason::Cancelled)).
    pub fn cancel(&self) {
        self.0.cancel.fire();
    }

    /// Whether [`cancel`](Budget::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.cancel.fired()
    }

    /// Completes when the budget is cancelled.
    pub fn cancelled(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.0.cancel.wait()
    }

    /// Takes one model request: refused with what ran out, here or in a budget this is a slice
    /// of (then nothing is taken).
    pub fn take_request(&self) -> Result<(), BudgetItem> {
        {
            let mut books = self.books();
            books.refusal()?;
            if books
                .limits
                .requests
                .is_some_and(|limit| books.spent.requests >= limit)
            {
                return Err(BudgetItem::Requests);
            }
            books.spent.requests += 1;
        }
        let taken = match &self.0.parent {
            Some(parent) => parent.take_request(),
            None => Ok(()),
        };
        if taken.is_err() {
            self.books().spent.requests -= 1;
        }
        taken
    }

    /// Takes up to `calls` tool calls: how many were granted (fewer when the budget, or one this
    /// is a slice of, has fewer left).
    pub fn take_tool_calls(&self, calls: u64) -> u64 {
        let granted = {
            let mut books = self.books();
            let left = (books.limits.tool_calls)
                .map_or(calls, |limit| limit.saturating_sub(books.spent.tool_calls));
            let granted = calls.min(left);
            books.spent.tool_calls += granted;
            granted
        };
        let Some(parent) = &self.0.parent else {
            return granted;
        };
        let taken = parent.take_tool_calls(granted);
        self.books().spent.tool_calls -= granted - taken;
        taken
    }

    /// Whether it, or a budget it is a slice of, limits tokens: what a request's expected tokens
    /// are reserved for.
    pub fn limits_tokens(&self) -> bool {
        self.books().limits.tokens.is_some()
            || (self.0.parent.as_ref()).is_some_and(Budget::limits_tokens)
    }

    /// Reserves `tokens`, what a request about to be sent is expected to use (its input and the
    /// longest reply it allows), so that requests sent at once (agents called as tools in
    /// parallel) cannot together pass the token limit: refused when they would, with the requests
    /// already in flight, here or in a budget this is a slice of (then nothing is reserved). A
    /// request with nothing else in flight is never refused for its expectation alone (what was
    /// spent decides, as for [`take_request`](Budget::take_request)). Release it with
    /// [`release_tokens`](Budget::release_tokens) once the reply is counted, or the request is
    /// dropped.
    ///
    /// ```
    /// use agent_core::{Budget, BudgetItem};
    ///
    /// let budget = Budget::new().max_tokens(3_500);
    /// for _ in 0..3 {
    ///     assert!(budget.reserve_tokens(1_050).is_ok());
    /// }
    /// assert_eq!(budget.reserve_tokens(1_050), Err(BudgetItem::Tokens));
    /// budget.release_tokens(1_050);
    /// assert!(budget.reserve_tokens(1_050).is_ok());
    /// ```
    pub fn reserve_tokens(&self, tokens: u64) -> Result<(), BudgetItem> {
        {
            let mut books = self.books();
            let spent = books.spent.usage.total_tokens();
            let over = (books.limits.tokens)
                .is_some_and(|limit| books.reserved > 0 && spent + books.reserved + tokens > limit);
            if over {
                return Err(BudgetItem::Tokens);
            }
            books.reserved += tokens;
        }
        let reserved = match &self.0.parent {
            Some(parent) => parent.reserve_tokens(tokens),
            None => Ok(()),
        };
        if reserved.is_err() {
            let mut books = self.books();
            books.reserved = books.reserved.saturating_sub(tokens);
        }
        reserved
    }

    /// Gives back tokens [`reserve_tokens`](Budget::reserve_tokens) reserved.
    pub fn release_tokens(&self, tokens: u64) {
        {
            let mut books = self.books();
            books.reserved = books.reserved.saturating_sub(tokens);
        }
        if let Some(parent) = &self.0.parent {
            parent.release_tokens(tokens);
        }
    }

    /// Counts what a reply of `model` used, made by the agent at `agent` (a path's text).
    pub fn spend(&self, agent: &str, model: Option<&str>, usage: Usage) {
        {
            let mut books = self.books();
            let cost = (books.prices.cost([(&usage, model)])).unwrap_or(0.0);
            books.spent.usage += usage;
            books.spent.cost += cost;
            (books.by_agent.entry(agent.to_owned()).or_default()).add(model, usage);
        }
        if let Some(parent) = &self.0.parent {
            parent.spend(agent, model, usage);
        }
    }

    /// What has run out for a new request, if anything (the tokens or the cost; requests are
    /// counted as they are taken).
    pub fn exhausted(&self) -> Option<BudgetItem> {
        let own = self.books().refusal().err();
        own.or_else(|| self.0.parent.as_ref().and_then(Budget::exhausted))
    }
}

/// The earlier of two deadlines (each an instant, and the time limit that set it).
pub(crate) fn earliest(
    one: Option<(Instant, Duration)>,
    other: Option<(Instant, Duration)>,
) -> Option<(Instant, Duration)> {
    match (one, other) {
        (Some(one), Some(other)) => Some(if other.0 < one.0 { other } else { one }),
        (one, other) => one.or(other),
    }
}

impl Books {
    /// Refuses a request once the tokens or the cost are spent.
    fn refusal(&self) -> Result<(), BudgetItem> {
        if (self.limits.tokens).is_some_and(|limit| self.spent.usage.total_tokens() >= limit) {
            return Err(BudgetItem::Tokens);
        }
        if (self.limits.cost).is_some_and(|limit| self.spent.cost >= limit) {
            return Err(BudgetItem::Cost);
        }
        Ok(())
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let books = self.books();
        f.debug_struct("Budget")
            .field("limits", &books.limits)
            .field("spent", &books.spent)
            .field("slice", &self.0.parent.is_some())
            .field("cancelled", &self.0.cancel.fired())
            .finish()
    }
}

/// A cancel signal every holder can fire and wait for.
#[derive(Clone)]
struct Cancel {
    sender: Arc<Mutex<Option<oneshot::Sender<()>>>>,
    fired: Shared<oneshot::Receiver<()>>,
}

impl Cancel {
    fn new() -> Self {
        let (sender, receiver) = oneshot::channel();
        Cancel {
            sender: Arc::new(Mutex::new(Some(sender))),
            fired: receiver.shared(),
        }
    }

    fn fire(&self) {
        let sender = self
            .sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(sender) = sender {
            let _ = sender.send(());
        }
    }

    fn fired(&self) -> bool {
        self.sender
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_none()
    }

    /// Completes when fired (never, if every holder is gone unfired: the sender is kept here).
    fn wait(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let fired = self.fired.clone();
        async move {
            if fired.await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }
}
