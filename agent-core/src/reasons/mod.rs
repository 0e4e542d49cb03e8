//! Every reason the model can be told about, as data: how a tool call failed ([`ToolError`](crate::ToolError)),
//! what is wrong with its arguments ([`ArgumentIssue`](crate::ArgumentIssue)), why a typed answer
//! was not taken ([`OutputProblem`](crate::OutputProblem)). Each language's
//! [`Texts`](crate::Texts) words them; none of them holds the agent's own words.

pub(crate) mod argument_issue;
pub(crate) mod not_run;
pub(crate) mod output_problem;
pub(crate) mod tool_error;
