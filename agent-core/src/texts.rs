//! The texts the agent sends to the model (system prompt, error results, markers) and gives the caller.
//!
//! English by default; [`Chinese`] reproduces the reference loop's texts exactly. Implement [`Texts`]
//! for any other language.

use crate::output_problem::OutputProblem;
use crate::tool_error::{ArgumentIssue, ToolError, human_duration};

/// Every text the agent writes itself, with no defaults: a language states each one, so none of
/// another language's words can leak into it.
pub trait Texts: Send + Sync + 'static {
    /// The system prompt used when the agent is given none.
    fn system_prompt(&self) -> &str;

    /// What went wrong in a tool call, for each kind of failure: the language's one table of
    /// error words. An MCP server answers its clients with these alone; their own agents put
    /// their lead-in in front.
    fn tool_error_message(&self, error: &ToolError) -> String;

    /// What the model's error result starts with, before the message: `"Error: "` in English.
    fn tool_error_lead_in(&self, error: &ToolError) -> &str;

    /// The error result the model sees for a failed tool call: the lead-in, then the message.
    fn tool_error(&self, error: &ToolError) -> String {
        let mut text = self.tool_error_lead_in(error).to_owned();
        text.push_str(&self.tool_error_message(error));
        text
    }

    /// The result of a tool that succeeded with nothing to return (a `()` tool).
    fn tool_done(&self) -> &str;

    /// The marker appended to a result cut to `shown` of its `total` characters.
    fn truncated(&self, shown: usize, total: usize) -> String;

    /// The run's final text when it stopped at the step limit without an answer.
    fn step_limit_reached(&self, steps: usize) -> String;

    /// Why a call was not run, as the model is told.
    fn not_run(&self, why: NotRun<'_>) -> String;

    /// The run's final text when it stopped before the model answered for any other reason
    /// (a limit, a hook, cancellation).
    fn run_stopped(&self) -> &str;

    /// The run's final text when it paused, waiting for a person or the caller.
    fn run_paused(&self) -> &str;

    /// The description of a typed run's final-answer tool, from the output type's own
    /// description when it has one.
    fn output_tool_description(&self, description: Option<&str>) -> String;

    /// What the model is told when its output was not taken, so it tries again.
    fn output_correction(&self, problem: &OutputProblem) -> String;

    /// The result of the final-answer tool when the answer was taken.
    fn output_received(&self) -> &str;

    /// What a typed run in [`OutputMode::Prompted`](crate::OutputMode::Prompted) adds to the
    /// system prompt, with the output's JSON schema.
    fn output_instructions(&self, schema: &str) -> String;
}

/// Why the agent did not run a call the model asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotRun<'a> {
    /// A hook skipped it (or stopped the run), with its reason.
    Skipped(&'a str),
    /// The approver said no, with its reason if it gave one.
    Denied(Option<&'a str>),
    /// The tool needs approval and the agent has no approver.
    NoApprover,
    /// The run's limit of tool calls is reached.
    ToolCallLimit(usize),
    /// The run's time limit passed while the call was in flight.
    TimeLimit,
    /// The run was cancelled while the call was in flight.
    Cancelled,
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
}

/// English texts (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct English;

/// [`English`]'s lead-in of an error result.
const ENGLISH_LEAD_IN: &str = "Error: ";

/// `lead_in`, then `error`'s English words, in one allocation with room for a typical error up
/// front (`format!` guesses from its literal pieces only, and grew the text twice).
fn english_words(error: &ToolError, lead_in: &str) -> String {
    let mut text = String::with_capacity(lead_in.len() + 120);
    text.push_str(lead_in);
    // Writing into a `String` cannot fail.
    let _ = error.describe(&mut text);
    text
}

impl Texts for English {
    fn system_prompt(&self) -> &str {
        "You are a helpful assistant that can use tools. When a tool returns an error, read the error \
         and adjust your next call. If you cannot complete the task, say so honestly. Never make up \
         results."
    }

    // The English table is `ToolError`'s own `Display`.
    fn tool_error_message(&self, error: &ToolError) -> String {
        english_words(error, "")
    }

    fn tool_error_lead_in(&self, error: &ToolError) -> &str {
        match error {
            // A correction is the agent's own words, not a failure to report.
            ToolError::AnswerRejected { .. } => "",
            _ => ENGLISH_LEAD_IN,
        }
    }

    // The same words as the default, written into one allocation.
    fn tool_error(&self, error: &ToolError) -> String {
        english_words(error, self.tool_error_lead_in(error))
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

    fn not_run(&self, why: NotRun<'_>) -> String {
        match why {
            NotRun::Skipped(reason) => reason.to_owned(),
            NotRun::Denied(Some(reason)) => format!("the user did not approve this call: {reason}"),
            NotRun::Denied(None) => "the user did not approve this call".to_owned(),
            NotRun::NoApprover => {
                "this tool needs approval and no one is there to approve it".to_owned()
            }
            NotRun::ToolCallLimit(limit) => {
                format!("the run's limit of {limit} tool calls is reached")
            }
            NotRun::TimeLimit => "the run's time limit passed before this call finished".to_owned(),
            NotRun::Cancelled => "the run was cancelled before this call finished".to_owned(),
            NotRun::AnswerGiven => {
                "the final answer was given in the same reply, so the run ended without this call"
                    .to_owned()
            }
            NotRun::RunEnded => "the run ended before this call could run".to_owned(),
            NotRun::CutOff => "your reply was cut off at the output token limit before this \
                               call's arguments were complete; call the tool again with shorter \
                               arguments, or split the work into smaller calls"
                .to_owned(),
            NotRun::CannotWait => "this call must wait for a person or for the caller, and this \
                                   run cannot wait"
                .to_owned(),
        }
    }

    fn run_stopped(&self) -> &str {
        "Stopped before finishing."
    }

    fn run_paused(&self) -> &str {
        "Waiting for a decision before going on."
    }

    fn output_tool_description(&self, description: Option<&str>) -> String {
        match description {
            Some(description) => format!(
                "Give your final answer with this tool, once you have everything it needs: {description}"
            ),
            None => "Give your final answer with this tool, once you have everything it needs."
                .to_owned(),
        }
    }

    fn output_correction(&self, problem: &OutputProblem) -> String {
        format!("{problem}. Please try again.")
    }

    fn output_received(&self) -> &str {
        "Final answer received."
    }

    fn output_instructions(&self, schema: &str) -> String {
        format!(
            "Your final answer must be only a JSON value that matches this JSON schema, with no \
             other text:\n{schema}"
        )
    }
}

/// Chinese texts: exactly those of the reference TypeScript loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct Chinese;

impl Texts for Chinese {
    fn system_prompt(&self) -> &str {
        "你是一个能使用工具的助手。工具出错时根据错误信息调整；无法完成时如实说明，不要编造结果。"
    }

    fn tool_error_lead_in(&self, error: &ToolError) -> &str {
        match error {
            // The reference loop writes these two without its "出错：" lead-in.
            ToolError::UnknownTool { .. }
            | ToolError::InvalidArguments { .. }
            | ToolError::AnswerRejected { .. } => "",
            _ => "出错：",
        }
    }

    fn tool_error_message(&self, error: &ToolError) -> String {
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
            | ToolError::Panicked { message } => message.clone(),
            ToolError::TimedOut { after } => {
                format!("工具在 {} 内未完成，已取消", human_duration(*after))
            }
            ToolError::Abandoned { after } => format!(
                "工具在 {} 内未完成，已不再等待；它可能仍会完成，再次调用前请先确认",
                human_duration(*after)
            ),
            ToolError::NotRun { reason } => format!("未执行：{reason}"),
            ToolError::Retry { message } => format!("{message}；请修正后再次调用"),
            ToolError::AnswerRejected { correction } => correction.clone(),
            ToolError::OutcomeUnknown { tool } => format!(
                "此次调用 {tool} 的结果未知：它执行时服务停止了。为免其效果发生两次，没有再次执行；再次调用前请先确认它是否已生效"
            ),
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

    fn not_run(&self, why: NotRun<'_>) -> String {
        match why {
            NotRun::Skipped(reason) => reason.to_owned(),
            NotRun::Denied(Some(reason)) => format!("用户未批准此调用：{reason}"),
            NotRun::Denied(None) => "用户未批准此调用".to_owned(),
            NotRun::NoApprover => "此工具需要批准，但没有批准人".to_owned(),
            NotRun::ToolCallLimit(limit) => format!("已达到本次运行 {limit} 次工具调用的上限"),
            NotRun::TimeLimit => "此调用完成前，本次运行已超过时间上限".to_owned(),
            NotRun::Cancelled => "此调用完成前，运行已取消".to_owned(),
            NotRun::AnswerGiven => "同一回复中已给出最终答案，此调用未执行".to_owned(),
            NotRun::RunEnded => "此调用执行前，运行已结束".to_owned(),
            NotRun::CutOff => {
                "回复达到输出 token 上限被截断，此调用的参数不完整；请用更短的参数重新调用，或把工作拆成几次较小的调用"
                    .to_owned()
            }
            NotRun::CannotWait => "此调用需要等待用户批准或调用方的结果，但本次运行不能等待".to_owned(),
        }
    }

    fn run_stopped(&self) -> &str {
        "运行已停止，未完成。"
    }

    fn run_paused(&self) -> &str {
        "正在等待决定，之后继续。"
    }

    fn output_tool_description(&self, description: Option<&str>) -> String {
        match description {
            Some(description) => format!("信息齐全后，用此工具给出最终答案：{description}"),
            None => "信息齐全后，用此工具给出最终答案。".to_owned(),
        }
    }

    fn output_correction(&self, problem: &OutputProblem) -> String {
        let problem = match problem {
            OutputProblem::InvalidJson { message } => format!("答案不是合法的 JSON：{message}"),
            OutputProblem::Invalid { issues } => format!(
                "答案不符合结构：{}",
                ArgumentIssue::render(issues, "答案", "：", "；")
            ),
            OutputProblem::Rejected { message } => format!("答案未被接受：{message}"),
            OutputProblem::NotGiven { tool } => {
                format!("最终答案必须通过调用工具 {tool} 给出，而不是写成文字")
            }
            OutputProblem::CutOff => {
                "答案在完成前已达到输出长度上限而被截断；请更简短地重新给出".to_owned()
            }
        };
        format!("{problem}。请重试。")
    }

    fn output_received(&self) -> &str {
        "已收到最终答案。"
    }

    fn output_instructions(&self, schema: &str) -> String {
        format!("最终答案只能是符合以下 JSON Schema 的 JSON 值，不要有其他文字：\n{schema}")
    }
}
