//! Fresh ids: 128 bits that no other process, restart or thread hands out again. Run ids and the
//! ids made up for calls a provider sent without one are drawn here (and through a fresh run id,
//! the web endpoint's answer ids), so a key built from them (an idempotency key, a message id in a
//! shared database) never meets one made elsewhere.

use std::cell::Cell;
use std::hash::{BuildHasher, RandomState};

thread_local! {
    /// The next value this thread hands out: a random start, counted up. Each thread's start is
    /// drawn apart (in each process anew), so two values meet only by a 128-bit chance.
    static NEXT: Cell<u128> = Cell::new(random_u128());
}

/// 128 random bits, from the standard library's randomly keyed hasher (seeded by the operating
/// system in each process).
fn random_u128() -> u128 {
    let high = RandomState::new().hash_one(0x5eed_u64);
    let low = RandomState::new().hash_one(std::thread::current().id());
    (u128::from(high) << 64) | u128::from(low)
}

/// A fresh value.
pub(crate) fn fresh_u128() -> u128 {
    NEXT.with(|next| {
        let value = next.get();
        next.set(value.wrapping_add(1));
        value
    })
}

/// A fresh value as 32 lowercase hexadecimal digits, after `prefix`.
#[cfg_attr(not(any(feature = "openai", feature = "gemini")), allow(dead_code))]
pub(crate) fn fresh_id(prefix: &str) -> String {
    format!("{prefix}{:032x}", fresh_u128())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_32_hex_digits_after_their_prefix_and_never_repeat() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| fresh_id("x_")).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let hex = id.strip_prefix("x_").unwrap();
            assert_eq!(hex.len(), 32);
            assert!(
                hex.bytes()
                    .all(|byte| byte.is_ascii_hexdigit() && !byte.is_ascii_uppercase())
            );
        }
    }

    #[test]
    fn threads_start_apart() {
        let here = fresh_u128();
        let there = std::thread::spawn(fresh_u128).join().unwrap();
        assert!(here.abs_diff(there) > 1 << 64, "{here:x} {there:x}");
    }
}
