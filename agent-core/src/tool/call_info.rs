//! Who is calling a tool: the run's id and the model's call id, for a tool that needs a key of its
//! own for the call (an idempotency key for the system it calls, a row in an audit log).

use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::fresh::fresh_u128;
use crate::message::ToolCall;

/// The id of one run, the same from its start to its end: kept by a [paused](crate::PausedRun) run
/// and the run that resumes it, and, in a durable run, the workflow's key, so that every replay of
/// the run sees the same id.
///
/// A run is given a fresh one when it starts, unless it is given its own
/// ([`RunRequest::run_id`](crate::RunRequest::run_id)). A fresh id is 32 hexadecimal digits,
/// random, unlike any other run's; it is made as the run starts, and written out only when asked
/// for, so a run that never reads it pays for no text.
///
/// ```
/// use agent_core::RunId;
///
/// let given = RunId::from("order-1234");
/// assert_eq!(given.to_string(), "order-1234");
/// let fresh = RunId::new();
/// assert_eq!(fresh.to_string().len(), 32);
/// assert_ne!(fresh, RunId::new());
/// // Written out and read back (a saved run, a header), it is the same id.
/// assert_eq!(RunId::from(fresh.to_string()), fresh);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RunId(Repr);

#[derive(Clone, PartialEq, Eq, Hash)]
enum Repr {
    /// Made here: written out as 32 hexadecimal digits, the high half first. (Two halves, not a
    /// `u128`: that would align every run that holds an id to 16 bytes.)
    Fresh([u64; 2]),
    /// Given by the caller (a workflow key, a saved run's id).
    Given(Arc<str>),
}

impl RunId {
    /// A fresh id, unlike any other.
    pub fn new() -> Self {
        let id = fresh_u128();
        RunId(Repr::Fresh([(id >> 64) as u64, id as u64]))
    }
}

impl Default for RunId {
    fn default() -> Self {
        RunId::new()
    }
}

impl From<&str> for RunId {
    fn from(id: &str) -> Self {
        // One form for each id: the text of a fresh id reads back as that id.
        let hex = |byte: &u8| byte.is_ascii_digit() || (b'a'..=b'f').contains(byte);
        if id.len() == 32
            && id.as_bytes().iter().all(hex)
            && let (Ok(high), Ok(low)) = (
                u64::from_str_radix(&id[..16], 16),
                u64::from_str_radix(&id[16..], 16),
            )
        {
            return RunId(Repr::Fresh([high, low]));
        }
        RunId(Repr::Given(Arc::from(id)))
    }
}

impl From<String> for RunId {
    fn from(id: String) -> Self {
        RunId::from(id.as_str())
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Fresh([high, low]) => write!(f, "{high:016x}{low:016x}"),
            Repr::Given(id) => f.write_str(id),
        }
    }
}

impl fmt::Debug for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "RunId({self})")
    }
}

impl Serialize for RunId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RunId {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(RunId::from)
    }
}

/// A tool parameter that says which call this is: the run's id, the model's id for the call, and
/// the tool's name. Like [`State`](crate::State), it comes from the run, not the model, and is not
/// in the tool's schema.
///
/// The run id and the call id together name one call for good: in a durable run both are the same
/// on every replay (the run id is the workflow's key, and the call id comes from the model's
/// recorded reply), so [`idempotency_key`](CallInfo::idempotency_key) is a key another system can
/// use to do the call's work once, however often the call is retried.
///
/// ```
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{AssistantMessage, CallInfo, RunId, ToolCall, agent, tool};
///
/// /// Charge the customer's card.
/// #[tool(idempotent)]
/// async fn charge(call: CallInfo, cents: u32) -> String {
///     // A real tool sends this as the payment API's idempotency key.
///     format!("charged {cents} cents, key {}", call.idempotency_key())
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let model = ScriptedModel::new([
///     AssistantMessage::tool_calls([ToolCall::new("call_7", "charge", r#"{"cents":500}"#)]),
///     AssistantMessage::text("Done."),
/// ]);
/// let agent = agent!(model, charge);
/// let out = agent.run("Charge me 5 dollars").run_id("order-1234").await?;
/// assert_eq!(out.messages[3].content(), "charged 500 cents, key order-1234/call_7");
/// # Ok::<(), agent_core::RunError>(())
/// # }).unwrap();
/// ```
///
/// A call made outside a run ([`ToolSet::dispatch`](crate::ToolSet::dispatch), a call an MCP
/// client makes) is a run of its own: it gets a fresh run id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct CallInfo {
    /// The id of the run that made the call.
    pub run_id: RunId,
    /// The model's id for the call (the result answers it).
    pub call_id: String,
    /// The name of the tool called.
    pub tool: String,
}

impl CallInfo {
    /// The call of `call` in the run `run_id`.
    pub fn new(run_id: RunId, call: &ToolCall) -> Self {
        CallInfo {
            run_id,
            call_id: call.id.clone(),
            tool: call.name.clone(),
        }
    }

    /// `{run_id}/{call_id}`: one key per call, the same each time the call is retried or replayed.
    /// A `/` or `%` in the run id is written `%2F` or `%25`, so the first `/` always ends the run
    /// id and two different calls never share a key (run `a/b`, call `c` is `a%2Fb/c`; run `a`,
    /// call `b/c` is `a/b/c`).
    ///
    /// ```
    /// use agent_core::{CallInfo, RunId, ToolCall};
    ///
    /// let key = |run: &str, call: &str| {
    ///     CallInfo::new(RunId::from(run), &ToolCall::new(call, "charge", "{}")).idempotency_key()
    /// };
    /// assert_eq!(key("order-7", "call_1"), "order-7/call_1");
    /// assert_ne!(key("a/b", "c"), key("a", "b/c"));
    /// ```
    pub fn idempotency_key(&self) -> String {
        let run_id = self.run_id.to_string();
        if !run_id.contains(['/', '%']) {
            return format!("{run_id}/{}", self.call_id);
        }
        let mut key = String::with_capacity(run_id.len() + self.call_id.len() + 8);
        for character in run_id.chars() {
            match character {
                '/' => key.push_str("%2F"),
                '%' => key.push_str("%25"),
                other => key.push(other),
            }
        }
        key.push('/');
        key.push_str(&self.call_id);
        key
    }
}
