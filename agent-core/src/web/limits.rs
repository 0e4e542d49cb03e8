//! Limits per user: how many requests and tokens a user may spend in a window, and how many runs
//! of theirs may be under way at once. Kept in the process: see [`UserLimits`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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
/// crosses it finishes; the ones after it wait for the next window. The count is kept in the
/// process: several instances of a server behind one load balancer share nothing, and each lets
/// every user have the whole budget (limit at the balancer, or divide the budget, if that
/// matters); a restart forgets it.
///
/// ```
/// use std::time::Duration;
/// use agent_core::web::UserLimits;
///
/// let limits = UserLimits::new()
///     .requests(30, Duration::from_secs(60))
///     .tokens(200_000, Duration::from_secs(24 * 60 * 60))
///     .concurrent_runs(2);
/// ```
#[derive(Debug, Clone, Default)]
pub struct UserLimits {
    requests: Option<(u64, Duration)>,
    tokens: Option<(u64, Duration)>,
    concurrent: Option<usize>,
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
}

/// How long a refused client waits when the wait cannot be known (a run of theirs must end).
const BUSY_RETRY: Duration = Duration::from_secs(1);

/// Past this many users kept, those with nothing to remember are forgotten.
const PRUNE_AT: usize = 4096;

/// A budget's window: when it began and what was spent in it.
#[derive(Default)]
struct Window {
    began: Option<Instant>,
    spent: u64,
}

impl Window {
    /// Starts a new window if this one is over (or none began).
    fn refresh(&mut self, per: Duration, now: Instant) {
        if self.began.is_none_or(|began| now >= began + per) {
            self.began = Some(now);
            self.spent = 0;
        }
    }

    /// How long until this window ends.
    fn rest(&self, per: Duration, now: Instant) -> Duration {
        self.began.map_or(Duration::ZERO, |began| {
            (began + per).saturating_duration_since(now)
        })
    }

    fn live(&self, per: Duration, now: Instant) -> bool {
        self.began.is_some_and(|began| now < began + per)
    }
}

/// One user's use.
#[derive(Default)]
struct Use {
    requests: Window,
    tokens: Window,
    running: usize,
}

/// The limits, and every user's use of them.
pub(crate) struct Limiter {
    limits: UserLimits,
    users: Mutex<HashMap<String, Use>>,
}

/// A request let in: it counts as one of its user's runs under way until dropped.
pub(crate) struct Admission {
    limiter: Arc<Limiter>,
    owner: String,
}

impl Limiter {
    pub(crate) fn new(limits: UserLimits) -> Arc<Self> {
        Arc::new(Limiter {
            limits,
            users: Mutex::new(HashMap::new()),
        })
    }

    fn users(&self) -> MutexGuard<'_, HashMap<String, Use>> {
        // The map stays whole whatever panicked while it was held.
        self.users
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Lets a request of `owner` in, or says how long until it would be.
    pub(crate) fn admit(self: &Arc<Self>, owner: &str) -> Result<Admission, Duration> {
        let now = Instant::now();
        let limits = &self.limits;
        let mut users = self.users();
        if users.len() >= PRUNE_AT {
            users.retain(|_, user| {
                user.running > 0
                    || limits
                        .requests
                        .is_some_and(|(_, per)| user.requests.live(per, now))
                    || limits
                        .tokens
                        .is_some_and(|(_, per)| user.tokens.live(per, now))
            });
        }
        let user = users.entry(owner.to_owned()).or_default();
        if limits.concurrent.is_some_and(|cap| user.running >= cap) {
            return Err(BUSY_RETRY);
        }
        if let Some((count, per)) = limits.requests {
            user.requests.refresh(per, now);
            if user.requests.spent >= count {
                return Err(user.requests.rest(per, now));
            }
        }
        if let Some((tokens, per)) = limits.tokens {
            user.tokens.refresh(per, now);
            if user.tokens.spent >= tokens {
                return Err(user.tokens.rest(per, now));
            }
        }
        user.requests.spent += 1;
        user.running += 1;
        Ok(Admission {
            limiter: Arc::clone(self),
            owner: owner.to_owned(),
        })
    }
}

impl Admission {
    /// Counts `tokens` the user's run used.
    pub(crate) fn spend(&self, tokens: u64) {
        let Some((_, per)) = self.limiter.limits.tokens else {
            return;
        };
        let mut users = self.limiter.users();
        let user = users.entry(self.owner.clone()).or_default();
        user.tokens.refresh(per, Instant::now());
        user.tokens.spent = user.tokens.spent.saturating_add(tokens);
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut users = self.limiter.users();
        if let Some(user) = users.get_mut(&self.owner) {
            user.running = user.running.saturating_sub(1);
        }
    }
}

/// The `retry-after` value for a wait: whole seconds, rounded up, at least one.
pub(crate) fn retry_after(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_user_has_their_own_budget_and_runs() {
        let limiter = Limiter::new(
            UserLimits::new()
                .requests(2, Duration::from_secs(60))
                .concurrent_runs(1),
        );
        let first = limiter.admit("ann").unwrap();
        // Ann's run is under way; Bob is another user.
        assert_eq!(limiter.admit("ann").err(), Some(BUSY_RETRY));
        let bob = limiter.admit("bob").unwrap();
        drop(first);
        drop(limiter.admit("ann").unwrap());
        // Two requests in the window: the third waits for its end.
        let wait = limiter.admit("ann").err().unwrap();
        assert!(wait > Duration::from_secs(58) && wait <= Duration::from_secs(60));
        drop(bob);
    }

    #[test]
    fn tokens_spent_close_the_window_to_new_runs() {
        let limiter = Limiter::new(UserLimits::new().tokens(100, Duration::from_secs(60)));
        let run = limiter.admit("ann").unwrap();
        run.spend(60);
        drop(run);
        limiter.admit("ann").unwrap().spend(60);
        assert!(limiter.admit("ann").is_err());
        assert!(limiter.admit("bob").is_ok());
    }

    #[test]
    fn waits_are_whole_seconds_rounded_up() {
        assert_eq!(retry_after(Duration::ZERO), 1);
        assert_eq!(retry_after(Duration::from_millis(1500)), 2);
        assert_eq!(retry_after(Duration::from_secs(3)), 3);
    }
}
