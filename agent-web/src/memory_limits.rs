//! The use of [`UserLimits`] counted in the process: the default [`LimitStore`].

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::limits::{BUSY_RETRY, LimitStore, Refused, UserLimits};
use agent_core::BoxFuture;

/// Past this many users kept, those with nothing to remember are forgotten.
const PRUNE_AT: usize = 4096;

/// A budget's window: when it began and what was spent in it.
#[derive(Debug, Default)]
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
#[derive(Debug, Default)]
struct Use {
    requests: Window,
    tokens: Window,
    running: usize,
}

/// Counts the use of [`UserLimits`] in the process: what a server does unless its limits are
/// [kept in](UserLimits::kept_in) a store shared by instances. Several instances of a server
/// share nothing this way, and a restart forgets it.
#[derive(Debug, Default)]
pub struct MemoryLimits {
    users: Mutex<HashMap<String, Use>>,
}

impl MemoryLimits {
    /// Nothing counted yet.
    pub fn new() -> Self {
        MemoryLimits::default()
    }

    fn users(&self) -> MutexGuard<'_, HashMap<String, Use>> {
        // The map stays whole whatever panicked while it was held.
        self.users
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn admit_now(&self, owner: &str, limits: &UserLimits) -> Result<u64, Refused> {
        let now = Instant::now();
        let (requests, tokens) = (limits.request_budget(), limits.token_budget());
        let mut users = self.users();
        if users.len() >= PRUNE_AT {
            users.retain(|_, user| {
                user.running > 0
                    || requests.is_some_and(|(_, per)| user.requests.live(per, now))
                    || tokens.is_some_and(|(_, per)| user.tokens.live(per, now))
            });
        }
        let user = users.entry(owner.to_owned()).or_default();
        if limits.run_cap().is_some_and(|cap| user.running >= cap) {
            return Err(Refused::Wait(BUSY_RETRY));
        }
        if let Some((count, per)) = requests {
            user.requests.refresh(per, now);
            if user.requests.spent >= count {
                return Err(Refused::Wait(user.requests.rest(per, now)));
            }
        }
        if let Some((budget, per)) = tokens {
            user.tokens.refresh(per, now);
            if user.tokens.spent >= budget {
                return Err(Refused::Wait(user.tokens.rest(per, now)));
            }
        }
        user.requests.spent += 1;
        user.running += 1;
        Ok(0)
    }
}

impl LimitStore for MemoryLimits {
    fn admit<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
    ) -> BoxFuture<'a, Result<u64, Refused>> {
        let admitted = self.admit_now(owner, limits);
        Box::pin(std::future::ready(admitted))
    }

    fn spend<'a>(
        &'a self,
        owner: &'a str,
        limits: &'a UserLimits,
        tokens: u64,
    ) -> BoxFuture<'a, Result<(), String>> {
        if let Some((_, per)) = limits.token_budget() {
            let mut users = self.users();
            let user = users.entry(owner.to_owned()).or_default();
            user.tokens.refresh(per, Instant::now());
            user.tokens.spent = user.tokens.spent.saturating_add(tokens);
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn release(&self, owner: &str, _run: u64) {
        if let Some(user) = self.users().get_mut(owner) {
            user.running = user.running.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admit(store: &MemoryLimits, owner: &str, limits: &UserLimits) -> Result<u64, Refused> {
        store.admit_now(owner, limits)
    }

    #[test]
    fn each_user_has_their_own_budget_and_runs() {
        let store = MemoryLimits::new();
        let limits = UserLimits::new()
            .requests(2, Duration::from_secs(60))
            .concurrent_runs(1);
        admit(&store, "ann", &limits).unwrap();
        // Ann's run is under way; Bob is another user.
        assert_eq!(
            admit(&store, "ann", &limits),
            Err(Refused::Wait(BUSY_RETRY))
        );
        admit(&store, "bob", &limits).unwrap();
        store.release("ann", 0);
        admit(&store, "ann", &limits).unwrap();
        store.release("ann", 0);
        // Two requests in the window: the third waits for its end.
        let Err(Refused::Wait(wait)) = admit(&store, "ann", &limits) else {
            panic!("let in past the budget")
        };
        assert!(wait > Duration::from_secs(58) && wait <= Duration::from_secs(60));
    }

    #[tokio::test]
    async fn tokens_spent_close_the_window_to_new_runs() {
        let store = MemoryLimits::new();
        let limits = UserLimits::new().tokens(100, Duration::from_secs(60));
        admit(&store, "ann", &limits).unwrap();
        store.spend("ann", &limits, 60).await.unwrap();
        store.release("ann", 0);
        admit(&store, "ann", &limits).unwrap();
        store.spend("ann", &limits, 60).await.unwrap();
        assert!(admit(&store, "ann", &limits).is_err());
        assert!(admit(&store, "bob", &limits).is_ok());
    }
}
