//! Limits per user: how many requests and tokens a user may spend in a window, and how many runs
//! of theirs may be under way at once ([`UserLimits`]), counted by a [`LimitStore`]: in the
//! process ([`MemoryLimits`], the default) or in a database every instance shares
//! ([`PostgresLimits`](super::PostgresLimits)).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use agent_core::BoxFuture;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

pub use super::memory_limits::MemoryLimits;

/// What one user may ask of a [`ChatServer`](super::ChatServer): requests per window, tokens per
/// window (counted from the usage the model reports for each step of their runs), and runs under
/// way at once. A request over any of them is refused with `429 Too Many Requests` and a
/// `retry-after` header (seconds), before anything is read from or written to the chat.
///
/// The user is the owner of the request's context ([`ChatOwner`](super::ChatOwner)); on a server
/// that does not [identify](super::ChatServer::identify) callers, everyone is one user, so the
/// limits are the whole server's.
///
/// Windows are fixed: a window starts with the user's first request after the last one ended.
/// A run is let in while the user's tokens in the window are under the budget, so the run that
/// crosses it finishes; the ones after it wait for the next window.
///
/// **Where the use is counted.** By default in the process ([`MemoryLimits`]): several instances
/// of a server behind one load balancer would share nothing, each letting every user have the
/// whole budget, and a restart forgets it. For several instances, count in the database they
/// share: [`kept_in`](UserLimits::kept_in) a [`PostgresLimits`](super::PostgresLimits) (cargo
/// features `web` and `postgres`), on the pool of the sessions' store.
///
/// ```
/// use std::time::Duration;
/// use agent_web::UserLimits;
///
/// let limits = UserLimits::new()
///     .requests(30, Duration::from_secs(60))
///     .tokens(200_000, Duration::from_secs(24 * 60 * 60))
///     .concurrent_runs(2);
/// ```
#[derive(Debug, Clone)]
pub struct UserLimits {
    requests: Option<(u64, Duration)>,
    tokens: Option<(u64, Duration)>,
    concurrent: Option<usize>,
    run_lease: Duration,
    store: Option<Arc<dyn LimitStore>>,
}

/// How long a run counts as under way, by default, when its instance never says it ended.
pub const DEFAULT_RUN_LEASE: Duration = Duration::from_secs(15 * 60);

impl Default for UserLimits {
    fn default() -> Self {
        UserLimits {
            requests: None,
            tokens: None,
            concurrent: None,
            run_lease: DEFAULT_RUN_LEASE,
            store: None,
        }
    }
}

impl UserLimits {
    /// No limits yet.
    pub fn new() -> Self {
        UserLimits::default()
    }

    /// At most `count` requests in each window of length `per`.
    pub fn requests(mut self, count: u64, per: Duration) -> Self {
        self.requests = Some((count, per));
        self
    }

    /// No new run once the user's runs used `tokens` (input and output) in the window of length
    /// `per`.
    pub fn tokens(mut self, tokens: u64, per: Duration) -> Self {
        self.tokens = Some((tokens, per));
        self
    }

    /// At most `runs` of the user's runs under way at once.
    pub fn concurrent_runs(mut self, runs: usize) -> Self {
        self.concurrent = Some(runs);
        self
    }

    /// How long a run counts as under way when the instance running it dies before saying it
    /// ended (a store shared by instances only; 15 minutes by default): set it above the longest
    /// run, or a user's runs past it stop counting against [`concurrent_runs`](Self::concurrent_runs).
    pub fn run_lease(mut self, lease: Duration) -> Self {
        self.run_lease = lease;
        self
    }

    /// Counts the use of these limits in `store` rather than in the process: a database every
    /// instance of the server shares, so a user has one budget however many there are.
    pub fn kept_in(mut self, store: impl LimitStore + 'static) -> Self {
        self.store = Some(Arc::new(store));
        self
    }

    /// The request budget: how many, in each window of how long.
    pub fn request_budget(&self) -> Option<(u64, Duration)> {
        self.requests
    }

    /// The token budget: how many, in each window of how long.
    pub fn token_budget(&self) -> Option<(u64, Duration)> {
        self.tokens
    }

    /// How many runs of a user may be under way at once.
    pub fn run_cap(&self) -> Option<usize> {
        self.concurrent
    }

    /// How long a run counts as under way when its instance never says it ended.
    pub fn lease(&self) -> Duration {
        self.run_lease
    }
}

/// Why a [`LimitStore`] did not let a run in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    /// Over a limit: how long until the user would be let in (`retry-after`).
    Wait(Duration),
    /// The store failed: what went wrong.
    Failed(String),
}

/// Where the use of [`UserLimits`] is counted, per user (the [`ChatOwner`](super::ChatOwner)'s
/// key): [`MemoryLimits`] in the process, [`PostgresLimits`](super::PostgresLimits) in a database
/// every instance shares. Implement it over your own (a Redis, say): `admit` checks and counts in
/// one step, so two instances letting the same user in at once cannot both take the last place.
pub trait LimitStore: Send + Sync + fmt::Debug {
    /// Lets a request of `owner` in under `limits`, counting the request and the run it starts
    /// (a number naming the run, for [`release`](Self::release)), or refuses it.
    fn admit<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
    ) -> BoxFuture<'a, Result<u64, Refused>>;

    /// Adds `tokens` to what `owner` spent in the token window of `limits`.
    fn spend<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
        tokens: u64,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// The run `run` of `owner` ended. Must not wait: a store that writes elsewhere hands the
    /// write to a task of its own.
    fn release(&self, owner: &str, run: u64);
}

/// How long a refused client waits when the wait cannot be known (a run of theirs must end).
pub(crate) const BUSY_RETRY: Duration = Duration::from_secs(1);

/// The limits, and where their use is counted: what a server asks before it runs a user's
/// request. [`ChatServer::limits`](super::ChatServer::limits) makes one; a server on another
/// protocol makes its own with [`Limiter::new`] and asks it the same way.
pub struct Limiter {
    limits: UserLimits,
    store: Arc<dyn LimitStore>,
}

impl fmt::Debug for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limiter")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// A request let in: it counts as one of its user's runs under way until dropped.
#[derive(Debug)]
pub struct Admission {
    limiter: Arc<Limiter>,
    owner: String,
    run: u64,
}

impl Limiter {
    /// Counts `limits` in their store ([`MemoryLimits`] unless [`UserLimits::kept_in`] gave one).
    pub fn new(limits: UserLimits) -> Arc<Self> {
        let store = limits
            .store
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryLimits::new()));
        Arc::new(Limiter { limits, store })
    }

    /// Lets a request of `owner` in ([`Caller::limit_key`](super::Caller::limit_key)), or says
    /// why not.
    pub async fn admit(self: &Arc<Self>, owner: &str) -> Result<Admission, Refused> {
        let run = self.store.admit(owner, &self.limits).await?;
        Ok(Admission {
            limiter: Arc::clone(self),
            owner: owner.to_owned(),
            run,
        })
    }
}

/// Lets `caller`'s request in under `limiter`, when the server has limits: the admission to hold
/// while its run goes (`None` without limits), or the response that refuses it (`429` with
/// `retry-after`, `500` when the store failed). What every endpoint asks before it runs anything.
pub async fn admit<S>(
    limiter: Option<&Arc<Limiter>>,
    caller: &super::Caller<S>,
) -> Result<Option<Admission>, Response> {
    let Some(limiter) = limiter else {
        return Ok(None);
    };
    match limiter.admit(caller.limit_key()).await {
        Ok(admission) => Ok(Some(admission)),
        Err(refused) => Err(refused.into_response()),
    }
}

impl Admission {
    /// Counts `tokens` the user's run used. A store that fails leaves them uncounted, and says so
    /// in the log.
    pub async fn spend(&self, tokens: u64) {
        let limiter = &self.limiter;
        if limiter.limits.tokens.is_none() {
            return;
        }
        if let Err(problem) = limiter
            .store
            .spend(&self.owner, &limiter.limits, tokens)
            .await
        {
            tracing::warn!(%problem, "the tokens a run used could not be counted");
        }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        self.limiter.store.release(&self.owner, self.run);
    }
}

/// A refusal as the response a client is given: `429` with a JSON error and `retry-after` (whole
/// seconds) over a limit, `500` when the store failed.
impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        match self {
            Refused::Wait(wait) => {
                let mut response = super::refuse(
                    StatusCode::TOO_MANY_REQUESTS,
                    "too many requests: try again later",
                );
                let seconds = retry_after(wait).to_string();
                if let Ok(value) = header::HeaderValue::from_str(&seconds) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
                response
            }
            Refused::Failed(problem) => {
                let message = format!("the limits could not be checked: {problem}");
                super::refuse(StatusCode::INTERNAL_SERVER_ERROR, &message)
            }
        }
    }
}

/// The `retry-after` value for a wait: whole seconds, rounded up, at least one.
fn retry_after(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_whole_seconds_rounded_up() {
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after(Duration::from_secs(3)), 3);
    }
}
