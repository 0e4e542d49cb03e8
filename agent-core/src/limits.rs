//! The limits of one run.

use std::time::Duration;

/// How many model calls a run may make unless configured otherwise.
pub const DEFAULT_MAX_STEPS: usize = 10;

/// How long one tool call may run unless the agent or the tool says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// The limits of a run. Each one reached stops the run with its own
/// [`StopReason`](crate::StopReason) and the transcript so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    pub max_steps: usize,
    pub max_tool_calls: Option<usize>,
    pub max_input_tokens: Option<u64>,
    pub max_output_tokens: Option<u64>,
    pub time_limit: Option<Duration>,
    pub at_step_limit: AtStepLimit,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_steps: DEFAULT_MAX_STEPS,
            max_tool_calls: None,
            max_input_tokens: None,
            max_output_tokens: None,
            time_limit: None,
            at_step_limit: AtStepLimit::Stop,
        }
    }
}

/// What a run does when it reaches its step limit with the model still asking for tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum AtStepLimit {
    /// Stop with [`StopReason::StepLimit`](crate::StopReason::StepLimit) (the default).
    #[default]
    Stop,
    /// Make one last model call with no tools offered, so the model gives its best answer from
    /// what it has; the run ends with
    /// [`StopReason::StepLimitAnswered`](crate::StopReason::StepLimitAnswered).
    AskForFinalAnswer,
}
