//! Why a call the model asked for was not run: a reason as data, worded by each language's
//! [`Texts::not_run`](crate::Texts::not_run).

/// Why the agent did not run a call the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotRun {
    /// A hook skipped it (or stopped the run), with its reason.
    Skipped(String),
    /// The approver said no, with its reason if it gave one.
    Denied(Option<String>),
    /// The tool needs approval and the agent has no approver.
    NoApprover,
    /// The run's limit of tool calls is reached.
    ToolCallLimit(usize),
    /// The [`Budget`](crate::Budget) the run shares with its tree of agents has no tool calls
    /// left.
    BudgetSpent,
    /// The run's time limit passed before the call started (one that had started is
    /// [`ToolError::Interrupted`](crate::ToolError::Interrupted)).
    TimeLimit,
    /// The run was cancelled before the call started (one that had started is
    /// [`ToolError::Interrupted`](crate::ToolError::Interrupted)).
    Cancelled,
    /// A [guard](crate::guard::Guard) tripped and stopped the run's tree before the call started
    /// (one that had started is [`ToolError::Interrupted`](crate::ToolError::Interrupted)).
    Tripped,
    /// The model gave its final answer in the same reply, so the run ends without this call.
    AnswerGiven,
    /// The run ended (a typed run's output was rejected once too often) before this call ran.
    RunEnded,
    /// The model's reply was cut off at its output token limit (finish reason
    /// [`Length`](crate::FinishReason::Length)) before this call's arguments were complete: the
    /// half-written JSON is not run, nor reported as arguments the model got wrong.
    CutOff,
    /// The call would wait for a person's approval or the caller's result, and this run cannot
    /// pause (a typed run).
    CannotWait,
    /// The person, asked through an MCP client, declined the call.
    ApprovalDeclined,
    /// The person, asked through an MCP client, cancelled the question.
    ApprovalCancelled,
    /// The MCP client answered the question with something other than "accept".
    ApprovalNotAccepted,
    /// The tool (named) needs the person's approval, and the MCP client cannot ask them (it does
    /// not support elicitation).
    ApprovalImpossible(String),
    /// The person's approval could not be asked, with the error's message.
    ApprovalNotAsked(String),
    /// A [guard](crate::guard::Guard) did not let the call run: the guard's name and its
    /// reason (the guard's own words).
    Guarded {
        /// The guard's name.
        guard: String,
        /// Why, in the guard's words.
        reason: String,
    },
}
