//! The registry of an agent's tools and the dispatcher that runs one call (the reference loop's
//! `runTool`): look the tool up, let it parse and run, catch every failure, stringify, truncate.

use std::any::TypeId;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt;
use futures_util::future::CatchUnwind;

use crate::limits::DEFAULT_TOOL_TIMEOUT;
use crate::message::{ToolCall, ToolResultMessage};
use crate::reasons::not_run::NotRun;
use crate::reasons::tool_error::{ToolError, panicked};
use crate::texts::{English, Texts};
use crate::tool::call_info::RunId;
use crate::tool::scope::RunScope;
use crate::tool::wording::Wording;
use crate::tool::{BoxFuture, Tool, ToolDef, ToolOutput};

/// The longest result, in characters, a tool call may hand the model unless configured otherwise.
pub const DEFAULT_RESULT_LIMIT: usize = 8000;

/// A set of tools with unique names, and the dispatcher that runs calls to them.
pub struct ToolSet<S = ()> {
    tools: Vec<Arc<dyn Tool<S>>>,
    /// The tools' definitions in registration order, kept side by side so every request borrows them.
    definitions: Vec<ToolDef>,
    /// The tools' names, shared by every unknown-tool error (a misspelled name then costs no copy
    /// of the list, however many tools there are): made on the first, forgotten on a change.
    names: OnceLock<Arc<[String]>>,
    /// Whether some tool's calls can wait (for an approval or for the caller).
    some_calls_wait: bool,
    /// Whether some tool's calls start runs of their own (agents called as tools).
    some_start_runs: bool,
    /// The texts set with [`set_texts`](ToolSet::set_texts); `None` for [`English`].
    texts: Option<Arc<dyn Texts>>,
    /// How a failed call's error reads in its result.
    error_style: ErrorStyle,
    result_limit: usize,
    tool_timeout: Duration,
    /// The definitions offered in typed runs, the final-answer tool last, by output type: made on
    /// the first typed run, borrowed by the next. Emptied when the tools or texts change.
    with_output: Mutex<Vec<(TypeId, Arc<[ToolDef]>)>>,
}

/// How the error of a failed call reads in its result ([`ToolSet::set_error_style`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ErrorStyle {
    /// After the texts' lead-in ([`Texts::tool_error`]: "Error: ..."), as the agent's own model
    /// reads it.
    #[default]
    LeadIn,
    /// The error's words alone ([`Texts::tool_error_message`]), for a client whose own agent adds
    /// its lead-in: an MCP server's.
    Bare,
}

/// What is to happen to a call the model asked for, decided before it reaches
/// [`ToolSet::outcome`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CallDecision<'a> {
    /// Run it as the model asked.
    Run,
    /// Run it with these arguments (a JSON text) instead; the result still answers the call's id.
    RunWith {
        /// The arguments to use.
        arguments: &'a str,
    },
    /// Do not run it; the model gets an error result saying why.
    NotRun(NotRun),
}

/// Why a tool could not be added to a [`ToolSet`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ToolSetError {
    /// A tool of that name is already there.
    #[error("a tool named `{name}` is already registered; tool names must be unique")]
    DuplicateName {
        /// The name both tools have.
        name: String,
    },
    /// The name is not one every provider accepts.
    #[error(
        "invalid tool name `{name}`: use 1 to 64 ASCII letters, digits, `_` or `-`, starting with a letter or `_`"
    )]
    InvalidName {
        /// The rejected name.
        name: String,
    },
}

impl<S: Send + Sync + 'static> Default for ToolSet<S> {
    fn default() -> Self {
        ToolSet::new()
    }
}

impl<S: Send + Sync + 'static> ToolSet<S> {
    /// An empty set with English texts and the default result limit.
    pub fn new() -> Self {
        ToolSet {
            tools: Vec::new(),
            definitions: Vec::new(),
            names: OnceLock::new(),
            some_calls_wait: false,
            some_start_runs: false,
            texts: None,
            error_style: ErrorStyle::LeadIn,
            result_limit: DEFAULT_RESULT_LIMIT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            with_output: Mutex::new(Vec::new()),
        }
    }

    /// Adds a tool; fails if its name is taken or invalid. A shared tool (an `Arc<dyn Tool<S>>`)
    /// is kept as it is.
    pub fn add(&mut self, tool: impl Tool<S>) -> Result<(), ToolSetError> {
        let tool = shared(tool);
        self.check_name(&tool.definition().name, &[])?;
        self.add_checked(tool);
        Ok(())
    }

    /// Adds tools, all or none: fails, adding none of them, if a name is taken (by a tool already
    /// in the set, or by another of these) or invalid.
    pub fn add_all<T: Tool<S>>(
        &mut self,
        tools: impl IntoIterator<Item = T>,
    ) -> Result<(), ToolSetError> {
        let tools: Vec<Arc<dyn Tool<S>>> = tools.into_iter().map(shared).collect();
        for (index, tool) in tools.iter().enumerate() {
            self.check_name(&tool.definition().name, &tools[..index])?;
        }
        for tool in tools {
            self.add_checked(tool);
        }
        Ok(())
    }

    /// Whether `name` may be added beside the set's tools and `also`.
    fn check_name(&self, name: &str, also: &[Arc<dyn Tool<S>>]) -> Result<(), ToolSetError> {
        if !is_valid_tool_name(name) {
            return Err(ToolSetError::InvalidName {
                name: name.to_owned(),
            });
        }
        let taken = self.get(name).is_some()
            || also.iter().any(|earlier| earlier.definition().name == name);
        if taken {
            return Err(ToolSetError::DuplicateName {
                name: name.to_owned(),
            });
        }
        Ok(())
    }

    /// Adds a tool whose name [`check_name`](ToolSet::check_name) allowed.
    fn add_checked(&mut self, tool: Arc<dyn Tool<S>>) {
        let definition = tool.definition();
        let annotations = &definition.annotations;
        self.some_calls_wait |= annotations.requires_approval || annotations.external;
        self.some_start_runs |= tool.starts_runs();
        self.definitions.push(definition.clone());
        self.names = OnceLock::new();
        self.tools.push(tool);
        self.forget_output_definitions();
    }

    /// Sets the texts used for error results and markers.
    pub fn set_texts(&mut self, texts: Arc<dyn Texts>) {
        self.texts = Some(texts);
        self.forget_output_definitions();
    }

    /// The definitions with a final-answer tool last, for output type `key`: `make` builds that
    /// tool the first time; later typed runs of the same type borrow the list.
    pub(crate) fn definitions_with_output(
        &self,
        key: TypeId,
        make: impl FnOnce(&Self) -> ToolDef,
    ) -> Arc<[ToolDef]> {
        let mut cache = self
            .with_output
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((_, definitions)) = cache.iter().find(|(cached, _)| *cached == key) {
            return Arc::clone(definitions);
        }
        let mut definitions = self.definitions.clone();
        definitions.push(make(self));
        let definitions: Arc<[ToolDef]> = definitions.into();
        cache.push((key, Arc::clone(&definitions)));
        definitions
    }

    fn forget_output_definitions(&mut self) {
        self.with_output
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// The texts used for error results and markers.
    pub fn texts(&self) -> &dyn Texts {
        self.texts.as_deref().unwrap_or(&English)
    }

    /// Sets how a failed call's error reads in its result: after the texts' lead-in (the default)
    /// or bare, for a client that adds its own (an MCP server's clients).
    pub fn set_error_style(&mut self, style: ErrorStyle) {
        self.error_style = style;
    }

    /// Sets the longest result, in characters, a call may hand the model.
    pub fn set_result_limit(&mut self, characters: usize) {
        self.result_limit = characters;
    }

    /// Sets how long a call may run when its tool sets no timeout of its own (default 120 s).
    pub fn set_tool_timeout(&mut self, timeout: Duration) {
        self.tool_timeout = timeout;
    }

    /// The definitions of all tools, in the order they were added.
    pub fn definitions(&self) -> &[ToolDef] {
        &self.definitions
    }

    /// Whether some tool's calls can wait, for an approval or for the caller: only then can a
    /// run pause.
    pub(crate) fn some_calls_wait(&self) -> bool {
        self.some_calls_wait
    }

    /// Whether some tool's calls start runs of their own (agents called as tools).
    pub(crate) fn some_start_runs(&self) -> bool {
        self.some_start_runs
    }

    /// The tool with this name.
    pub fn get(&self, name: &str) -> Option<&dyn Tool<S>> {
        // A linear scan beats hashing for the handful of tools an agent has.
        let index = self.definitions.iter().position(|def| def.name == name)?;
        Some(&*self.tools[index])
    }

    /// How many tools there are.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Runs one call as the model asked, outside any run (a run of its own, with a fresh id), to
    /// the result the model reads. Never fails: every failure becomes a result with `is_error`
    /// set. [`outcome`](ToolSet::outcome), then [`result_message`](ToolSet::result_message).
    pub async fn dispatch(&self, context: &S, call: &ToolCall) -> ToolResultMessage {
        let outcome = self
            .outcome(
                context,
                call,
                CallDecision::Run,
                &RunScope::new(RunId::new()),
            )
            .await;
        self.result_message(call, outcome)
    }

    /// The one way a call is run, whatever was decided about it: run as the model asked (looked
    /// up, its arguments parsed, its time limited, a panic caught), run with other arguments, or
    /// answered without running. `run` is the id of the run that made the call (a tool that takes
    /// a [`CallInfo`](crate::CallInfo) reads it). What becomes of the call goes to
    /// [`result_message`](ToolSet::result_message), the one place its result is made: the agent
    /// loop runs every call through these two, and the MCP server every call of a tool it has
    /// (keeping a JSON result whole in between).
    pub async fn outcome(
        &self,
        context: &S,
        call: &ToolCall,
        decision: CallDecision<'_>,
        run: &RunScope,
    ) -> Result<ToolOutput, ToolError> {
        // Boxed: few calls are rewritten, and it is kept while the call runs.
        let rewritten;
        let call = match decision {
            CallDecision::Run => call,
            CallDecision::RunWith { arguments } => {
                rewritten = Box::new(ToolCall {
                    arguments: arguments.to_owned(),
                    ..call.clone()
                });
                &*rewritten
            }
            CallDecision::NotRun(why) => return Err(ToolError::NotRun { why }),
        };
        let tool = self
            .get(&call.name)
            .ok_or_else(|| self.unknown_tool(&call.name))?;
        self.start(tool, context, call, run)?.await
    }

    /// The answer to a call that is not run, saying `why`: what `outcome` gives for
    /// [`CallDecision::NotRun`], as the model reads it.
    pub(crate) fn not_run(&self, call: &ToolCall, why: NotRun) -> ToolResultMessage {
        self.result_message(call, Err(ToolError::NotRun { why }))
    }

    /// Starts one call of `tool`: its future, with panics caught and its time limited; or why it
    /// could not start (a panic while making the future).
    fn start<'a>(
        &'a self,
        tool: &'a dyn Tool<S>,
        context: &'a S,
        call: &'a ToolCall,
        run: &'a RunScope,
    ) -> Result<Running<'a, S>, ToolError> {
        let limit = tool
            .definition()
            .annotations
            .timeout
            .unwrap_or(self.tool_timeout);
        let future =
            catch_unwind(AssertUnwindSafe(|| tool.call(context, call, run))).map_err(panicked)?;
        Ok(Running {
            work: AssertUnwindSafe(future).catch_unwind(),
            tool,
            limit,
            timer: None,
        })
    }

    /// The error for a name no tool has.
    fn unknown_tool(&self, name: &str) -> ToolError {
        let available = self.names.get_or_init(|| {
            self.definitions
                .iter()
                .map(|def| def.name.clone())
                .collect()
        });
        ToolError::UnknownTool {
            name: name.to_owned(),
            available: Arc::clone(available),
        }
    }

    /// What the model reads for a call and what became of it: the one place a
    /// [`ToolResultMessage`] is made, on every path (ran, ran with other arguments, not run for
    /// any reason, an external call's result, a final answer taken or corrected, a durable
    /// outcome unknown, a call served over MCP). A tool's output becomes the text and its parts;
    /// an error is worded by the set's [`Texts`] (with their lead-in, unless the set is an MCP
    /// server's); every text is cut to the result limit.
    ///
    /// ```
    /// use agent_core::{ToolCall, ToolError, ToolOutput, ToolSet};
    ///
    /// let tools: ToolSet = ToolSet::new();
    /// let call = ToolCall::new("c1", "lookup", "{}");
    /// let done = tools.result_message(&call, Ok(ToolOutput::Text("found".into())));
    /// assert_eq!((done.content.as_str(), done.is_error), ("found", false));
    /// let failed = tools.result_message(&call, Err(ToolError::failed("the index is down")));
    /// assert_eq!(failed.content, "Error: the index is down");
    /// ```
    #[inline]
    pub fn result_message(
        &self,
        call: &ToolCall,
        outcome: Result<ToolOutput, ToolError>,
    ) -> ToolResultMessage {
        self.wording().result_message(call, outcome)
    }

    /// How the set words results: its texts, its error style and its result limit.
    pub(crate) fn wording(&self) -> Wording<'_> {
        Wording {
            texts: self.texts(),
            error_style: self.error_style,
            result_limit: self.result_limit,
        }
    }

    /// Binds one context for all calls: every tool is handed `context` from now on, and the set
    /// needs none from the caller.
    pub fn bind_context(self, context: S) -> ToolSet<()> {
        self.bind_shared_context(Arc::new(context))
    }

    /// [`bind_context`](ToolSet::bind_context) with a context shared with others (the agent's
    /// hooks).
    pub(crate) fn bind_shared_context(self, context: Arc<S>) -> ToolSet<()> {
        let tools = self
            .tools
            .into_iter()
            .map(|tool| {
                Arc::new(BoundTool {
                    tool,
                    context: Arc::clone(&context),
                }) as Arc<dyn Tool<()>>
            })
            .collect();
        ToolSet {
            tools,
            definitions: self.definitions,
            names: self.names,
            some_calls_wait: self.some_calls_wait,
            some_start_runs: self.some_start_runs,
            texts: self.texts,
            error_style: self.error_style,
            result_limit: self.result_limit,
            tool_timeout: self.tool_timeout,
            with_output: self.with_output,
        }
    }
}

/// A copy shares the tools themselves; settings changed on it do not reach the original.
impl<S> Clone for ToolSet<S> {
    fn clone(&self) -> Self {
        ToolSet {
            tools: self.tools.clone(),
            definitions: self.definitions.clone(),
            names: self.names.clone(),
            some_calls_wait: self.some_calls_wait,
            some_start_runs: self.some_start_runs,
            texts: self.texts.clone(),
            error_style: self.error_style,
            result_limit: self.result_limit,
            tool_timeout: self.tool_timeout,
            with_output: Mutex::new(Vec::new()),
        }
    }
}

impl<S> std::fmt::Debug for ToolSet<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSet")
            .field(
                "tools",
                &self
                    .definitions
                    .iter()
                    .map(|def| &def.name)
                    .collect::<Vec<_>>(),
            )
            .field("result_limit", &self.result_limit)
            .finish_non_exhaustive()
    }
}

/// `name` with every character a tool name may not have replaced by `_`, a `_` put first when it
/// does not start as a tool name may, cut to the longest tool name: a name
/// [`is_valid_tool_name`] accepts, for a tool whose name comes from elsewhere (an MCP server's).
///
/// ```
/// assert_eq!(agent_core::valid_tool_name("search.web"), "search_web");
/// assert_eq!(agent_core::valid_tool_name("3d-render"), "_3d-render");
/// assert!(agent_core::is_valid_tool_name(&agent_core::valid_tool_name(&"ü".repeat(99))));
/// ```
pub fn valid_tool_name(name: &str) -> String {
    let mut valid: String = name
        .chars()
        .map(|character| {
            if is_tool_name_character(character) {
                character
            } else {
                '_'
            }
        })
        .collect();
    if !valid.starts_with(is_tool_name_start) {
        valid.insert(0, '_');
    }
    // Every character is ASCII now, so any byte index is a boundary.
    valid.truncate(MAX_TOOL_NAME_LENGTH);
    valid
}

/// Whether `name` matches `^[A-Za-z_][A-Za-z0-9_-]{0,63}$`, the tool names every supported provider
/// and MCP accept: OpenAI's and Anthropic's `^[A-Za-z0-9_-]{1,64}$`, and Gemini's rule that a name
/// starts with a letter or an underscore.
pub fn is_valid_tool_name(name: &str) -> bool {
    (1..=MAX_TOOL_NAME_LENGTH).contains(&name.len())
        && name.starts_with(is_tool_name_start)
        && name.chars().all(is_tool_name_character)
}

/// Whether a tool name may start with `character`: an ASCII letter or `_` (Gemini's rule).
fn is_tool_name_start(character: char) -> bool {
    character.is_ascii_alphabetic() || character == '_'
}

/// The longest tool name every provider accepts.
const MAX_TOOL_NAME_LENGTH: usize = 64;

/// Whether `character` may stand in a tool name: an ASCII letter or digit, `_` or `-`.
fn is_tool_name_character(character: char) -> bool {
    character.is_ascii_alphanumeric() || character == '_' || character == '-'
}

/// A tool's call in flight: its future, a panic while polling it caught as an error, and at most
/// `limit` to finish (then dropped, with the error saying so).
///
/// The timer is armed only if the call does not finish on its first poll, and it is
/// runtime-independent (`futures-timer`): no executor setting can make it panic.
pub(crate) struct Running<'a, S> {
    work: CatchUnwind<AssertUnwindSafe<BoxFuture<'a, Result<ToolOutput, ToolError>>>>,
    tool: &'a dyn Tool<S>,
    limit: Duration,
    timer: Option<futures_timer::Delay>,
}

impl<S: 'static> Future for Running<'_, S> {
    type Output = Result<ToolOutput, ToolError>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Poll::Ready(outcome) = Pin::new(&mut this.work).poll(context) {
            return Poll::Ready(outcome.unwrap_or_else(|payload| Err(panicked(payload))));
        }
        let limit = this.limit;
        let timer = this
            .timer
            .get_or_insert_with(|| futures_timer::Delay::new(limit));
        match Pin::new(timer).poll(context) {
            Poll::Pending => Poll::Pending,
            // A function on a blocking thread is not stopped by dropping its future: say so.
            Poll::Ready(()) if this.tool.runs_on_a_blocking_thread() => {
                Poll::Ready(Err(ToolError::Abandoned { after: limit }))
            }
            Poll::Ready(()) => Poll::Ready(Err(ToolError::TimedOut { after: limit })),
        }
    }
}

/// `tool` as a shared tool: an `Arc<dyn Tool<S>>` as it is (a tool too, but wrapping it again
/// would cost every call a second pointer to follow), anything else in a new `Arc`.
fn shared<S: Send + Sync + 'static, T: Tool<S>>(tool: T) -> Arc<dyn Tool<S>> {
    let mut tool = Some(tool);
    let as_any: &mut dyn std::any::Any = &mut tool;
    match as_any.downcast_mut::<Option<Arc<dyn Tool<S>>>>() {
        Some(already) => already.take().expect("taken once"),
        None => Arc::new(tool.expect("taken once")),
    }
}

/// A tool with its context bound, so it needs none from the caller.
struct BoundTool<S> {
    tool: Arc<dyn Tool<S>>,
    context: Arc<S>,
}

// Every method forwarded, or the bound tool would lose what it says about itself.
#[deny(clippy::missing_trait_methods)]
impl<S: Send + Sync + 'static> Tool<()> for BoundTool<S> {
    fn definition(&self) -> &ToolDef {
        self.tool.definition()
    }

    fn call<'a>(
        &'a self,
        _context: &'a (),
        call: &'a ToolCall,
        run: &'a RunScope,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        self.tool.call(&self.context, call, run)
    }

    fn runs_on_a_blocking_thread(&self) -> bool {
        self.tool.runs_on_a_blocking_thread()
    }

    fn starts_runs(&self) -> bool {
        self.tool.starts_runs()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_from_elsewhere_become_valid() {
        assert_eq!(valid_tool_name("get-sum"), "get-sum");
        assert_eq!(valid_tool_name("files.read"), "files_read");
        assert_eq!(valid_tool_name("天气/today"), "___today");
        let long = valid_tool_name(&"x".repeat(100));
        assert_eq!(long.len(), 64);
        assert!(is_valid_tool_name(&valid_tool_name("")));
        assert_eq!(valid_tool_name("3d-render"), "_3d-render");
        assert!(is_valid_tool_name(&valid_tool_name(&"9".repeat(100))));
    }

    use super::*;

    #[test]
    fn tool_names_follow_the_provider_rule() {
        assert!(is_valid_tool_name("get_weather"));
        assert!(is_valid_tool_name("a-b_C9"));
        assert!(is_valid_tool_name(&"x".repeat(64)));
        assert!(!is_valid_tool_name(""));
        assert!(!is_valid_tool_name(&"x".repeat(65)));
        assert!(!is_valid_tool_name("get weather"));
        assert!(!is_valid_tool_name("天气"));
        assert!(!is_valid_tool_name("a.b"));
        assert!(is_valid_tool_name("_private"));
        assert!(!is_valid_tool_name("3d_render"));
        assert!(!is_valid_tool_name("-flag"));
    }
}
