//! The texts the agent sends to the model (system prompt, error results, markers) and gives the caller.
//!
//! English by default; [`Chinese`] reproduces the reference loop's texts exactly. Implement [`Texts`]
//! for any other language.

use crate::tool::{ArgumentIssue, ToolError};

/// Every text the agent writes itself.
pub trait Texts: Send + Sync + 'static {
    /// The system prompt used when the agent is given none.
    fn system_prompt(&self) -> &str;

    /// The error result the model sees for a failed tool call.
    fn tool_error(&self, error: &ToolError) -> String;

    /// The result of a tool that succeeded with nothing to return (a `()` tool).
    fn tool_done(&self) -> &str;

    /// The marker appended to a result cut to `shown` of its `total` characters.
    fn truncated(&self, shown: usize, total: usize) -> String;

    /// The run's final text when it stopped at the step limit without an answer.
    fn step_limit_reached(&self, steps: usize) -> String;
}

/// English texts (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct English;

impl Texts for English {
    fn system_prompt(&self) -> &str {
        "You are a helpful assistant that can use tools. When a tool returns an error, read the error \
         and adjust your next call. If you cannot complete the task, say so honestly. Never make up \
         results."
    }

    fn tool_error(&self, error: &ToolError) -> String {
        match error {
            ToolError::UnknownTool { name, available } if available.is_empty() => {
                format!("Error: there is no tool named `{name}`; no tools are available.")
            }
            ToolError::UnknownTool { name, available } => format!(
                "Error: there is no tool named `{name}`. Available tools: {}.",
                available.join(", ")
            ),
            ToolError::InvalidJson { message } => {
                format!("Error: the arguments are not valid JSON: {message}")
            }
            ToolError::InvalidArguments { issues } => format!(
                "Error: invalid arguments: {}",
                ArgumentIssue::render(issues, "arguments", ": ", "; ")
            ),
            ToolError::Failed { message } => format!("Error: {message}"),
            ToolError::Panicked { message } => format!("Error: the tool crashed: {message}"),
        }
    }

    fn tool_done(&self) -> &str {
        "Done."
    }

    fn truncated(&self, shown: usize, total: usize) -> String {
        format!("\n[result truncated: showing the first {shown} of {total} characters]")
    }

    fn step_limit_reached(&self, steps: usize) -> String {
        format!("Stopped after {steps} steps without finishing; try narrowing the question.")
    }
}

/// Chinese texts: exactly those of the reference TypeScript loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct Chinese;

impl Texts for Chinese {
    fn system_prompt(&self) -> &str {
        "你是一个能使用工具的助手。工具出错时根据错误信息调整；无法完成时如实说明，不要编造结果。"
    }

    fn tool_error(&self, error: &ToolError) -> String {
        match error {
            ToolError::UnknownTool { name, .. } => format!("不存在工具 {name}"),
            ToolError::InvalidArguments { issues } => {
                format!(
                    "参数校验失败：{}",
                    ArgumentIssue::render(issues, "参数", "：", "；")
                )
            }
            ToolError::InvalidJson { message }
            | ToolError::Failed { message }
            | ToolError::Panicked { message } => format!("出错：{message}"),
        }
    }

    fn tool_done(&self) -> &str {
        "执行成功"
    }

    fn truncated(&self, _shown: usize, _total: usize) -> String {
        "\n（结果过长，已截断）".to_owned()
    }

    fn step_limit_reached(&self, steps: usize) -> String {
        format!("已执行 {steps} 步仍未完成，请缩小问题范围后重试。")
    }
}
