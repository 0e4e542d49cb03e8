//! A guard from a closure: plain code that answers at once.

use super::{Checked, Checking, Guard, Verdict};

/// A guard made of a name and a function ([`guard_fn`]).
pub struct GuardFn<F> {
    name: String,
    check: F,
}

/// A guard named `name` that answers with `check`, at once.
///
/// ```
/// use agent_core::guard::{Verdict, What, guard_fn};
///
/// // Card numbers never reach the model from a tool.
/// let redact = guard_fn("card numbers", |checked| match &checked.what {
///     What::Result { result, .. } if result.content.contains("4111") => {
///         Verdict::Rewrite(result.content.replace("4111", "****"))
///     }
///     _ => Verdict::Allow,
/// });
/// ```
pub fn guard_fn<F>(name: impl Into<String>, check: F) -> GuardFn<F>
where
    F: Fn(&Checked<'_>) -> Verdict + Send + Sync,
{
    GuardFn {
        name: name.into(),
        check,
    }
}

impl<F> Guard for GuardFn<F>
where
    F: Fn(&Checked<'_>) -> Verdict + Send + Sync,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn check<'a>(&'a self, checked: &Checked<'_>) -> Checking<'a> {
        Checking::Now((self.check)(checked))
    }
}

impl<F> std::fmt::Debug for GuardFn<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuardFn").field("name", &self.name).finish()
    }
}
