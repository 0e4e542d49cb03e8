//! The texts the agent sends to the model (system prompt, error results, markers) and gives the caller.
//!
//! English by default; [`Chinese`] reproduces the reference loop's texts exactly. Implement [`Texts`]
//! for any other language.

use std::fmt::Write as _;

use crate::argument_issue::{
    ArgumentIssue, Expected, Found, IssueKind, JsonType, SyntaxError, SyntaxProblem,
};
use crate::content::Part;
use crate::output_problem::OutputProblem;
use crate::tool_error::{Interruption, RemoteProblem, ThreadProblem, ToolError, human_duration};

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

    /// The words that name, in a tool result's text, content the model is not shown as itself
    /// (what an MCP server sent: a resource, a link, content of an unknown kind, or an image in
    /// an error's text), so the model knows it is there.
    fn content_note(&self, note: ContentNote<'_>) -> String;

    /// The text before a tool result's images, documents and audio where the provider's wire
    /// format cannot carry them in the result itself, so an adapter sends them in a user message
    /// after it (OpenAI Chat Completions, Gemini): it tells the model which call they came from.
    fn returned_parts(&self, call: ReturnedBy<'_>) -> String;

    /// What a tool result's text says in place of a part its provider cannot take (audio for
    /// Anthropic Messages, say), so the model knows what it was not shown. `reason` is the
    /// adapter's own account of why, in English for the developer: the message it would refuse
    /// such a part of a user message with ([`ModelError::Unsupported`](crate::ModelError)). A
    /// language other than English may leave it out.
    fn part_not_shown(&self, part: &Part, reason: &str) -> String;
}

/// The call a tool result's parts came from, as [`Texts::returned_parts`] names it: by what the
/// provider's wire format pairs a result with its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReturnedBy<'a> {
    /// The call with this id (OpenAI Chat Completions).
    CallId(&'a str),
    /// The call of the tool with this name (Gemini, which pairs results with calls by name).
    Tool(&'a str),
}

/// Content a tool result names rather than shows: what an MCP client (`mcp::McpClient`, with the
/// `mcp` feature) makes of a server's content that the model cannot read as it is. The URIs, names and media
/// types are the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ContentNote<'a> {
    /// An image, in a result that can only be text (an error's).
    Image {
        /// Its media type, e.g. `image/png`.
        media_type: &'a str,
    },
    /// A document, in a result that can only be text.
    Document {
        /// Its media type, e.g. `application/pdf`.
        media_type: &'a str,
    },
    /// Audio, in a result that can only be text.
    Audio {
        /// Its media type, e.g. `audio/wav`.
        media_type: &'a str,
    },
    /// An embedded text resource: the line before its text.
    TextResource {
        /// The resource's URI.
        uri: &'a str,
    },
    /// An embedded binary resource the model cannot read: of no stated type, or of a type that is
    /// not an image, audio or a document.
    BinaryResource {
        /// The resource's URI.
        uri: &'a str,
        /// Its media type, when the server gave one.
        media_type: Option<&'a str>,
    },
    /// An embedded resource of a kind the client does not know.
    UnknownResource,
    /// A link to a resource the server did not send.
    ResourceLink {
        /// The resource's name.
        name: &'a str,
        /// Its URI.
        uri: &'a str,
    },
    /// Content of a kind the client does not know.
    UnknownContent,
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
    /// The run's time limit passed before the call started (one that had started is
    /// [`ToolError::Interrupted`]).
    TimeLimit,
    /// The run was cancelled before the call started (one that had started is
    /// [`ToolError::Interrupted`]).
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
    /// The person, asked through an MCP client, declined the call.
    ApprovalDeclined,
    /// The person, asked through an MCP client, cancelled the question.
    ApprovalCancelled,
    /// The MCP client answered the question with something other than "accept".
    ApprovalNotAccepted,
    /// The tool (named) needs the person's approval, and the MCP client cannot ask them (it does
    /// not support elicitation).
    ApprovalImpossible(&'a str),
    /// The person's approval could not be asked, with the error's message.
    ApprovalNotAsked(&'a str),
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
            NotRun::TimeLimit => "the run's time limit passed before this call started".to_owned(),
            NotRun::Cancelled => "the run was cancelled before this call started".to_owned(),
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
            NotRun::ApprovalDeclined => "the user declined this call".to_owned(),
            NotRun::ApprovalCancelled => "the user cancelled this call".to_owned(),
            NotRun::ApprovalNotAccepted => "the user did not accept this call".to_owned(),
            NotRun::ApprovalImpossible(tool) => format!(
                "`{tool}` needs the user's approval, and approval was not possible: this client \
                 cannot ask the user (it does not support elicitation)"
            ),
            NotRun::ApprovalNotAsked(error) => {
                format!("the user's approval could not be asked: {error}")
            }
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

    fn content_note(&self, note: ContentNote<'_>) -> String {
        match note {
            ContentNote::Image { media_type } => format!("[image: {media_type}]"),
            ContentNote::Document { media_type } => format!("[document: {media_type}]"),
            ContentNote::Audio { media_type } => format!("[audio: {media_type}]"),
            ContentNote::TextResource { uri } => format!("[resource {uri}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: Some(media_type),
            } => format!("[resource {uri}: {media_type}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: None,
            } => format!("[resource {uri}: binary data]"),
            ContentNote::UnknownResource => "[resource]".to_owned(),
            ContentNote::ResourceLink { name, uri } => format!("[resource link {name}: {uri}]"),
            ContentNote::UnknownContent => {
                "[content of a kind this client does not know]".to_owned()
            }
        }
    }

    fn returned_parts(&self, call: ReturnedBy<'_>) -> String {
        match call {
            ReturnedBy::CallId(id) => format!("The tool call {id} returned these:"),
            ReturnedBy::Tool(name) => format!("The {name} call returned these:"),
        }
    }

    fn part_not_shown(&self, part: &Part, reason: &str) -> String {
        let media_type = part.media().map_or("", |media| media.media_type.as_str());
        format!("[{} ({media_type}) not shown: {reason}]", part.kind())
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
                    ArgumentIssue::render(issues, "参数", "：", "；", chinese_issue)
                )
            }
            ToolError::InvalidJson { error } => {
                format!("参数不是合法的 JSON：{}", chinese_syntax(error))
            }
            ToolError::Failed { message } => message.clone(),
            ToolError::Panicked {
                message: Some(message),
            } => message.clone(),
            ToolError::Panicked { message: None } => "工具发生 panic，没有附带信息".to_owned(),
            ToolError::TimedOut { after } => {
                format!("工具在 {} 内未完成，已取消", human_duration(*after))
            }
            ToolError::Abandoned { after } => format!(
                "工具在 {} 内未完成，已不再等待；它可能仍会完成，再次调用前请先确认",
                human_duration(*after)
            ),
            ToolError::Interrupted { by } => {
                let when = match by {
                    Interruption::Cancelled => "运行被取消时",
                    Interruption::TimeLimit => "运行超过时间上限时",
                    Interruption::Unrecorded => "在结果记录之前",
                };
                format!("此调用{when}被中断：它已开始执行，可能已产生效果，再次调用前请先确认")
            }
            ToolError::NotRun { reason } => format!("未执行：{reason}"),
            ToolError::Retry { message } => format!("{message}；请修正后再次调用"),
            ToolError::AnswerRejected { correction } => correction.clone(),
            ToolError::OutcomeUnknown { tool } => format!(
                "此次调用 {tool} 的结果未知：它执行时服务停止了。为免其效果发生两次，没有再次执行；再次调用前请先确认它是否已生效"
            ),
            ToolError::Journal { message } => {
                format!("持久运行的日志未能记录此次调用：{message}")
            }
            ToolError::RunByCaller { tool } => {
                format!("工具 {tool} 由应用程序执行，不由智能体执行")
            }
            ToolError::Thread { problem } => match problem {
                ThreadProblem::NotStarted { message } => {
                    format!("无法为工具启动独立的线程：{message}")
                }
                ThreadProblem::RuntimeShutDown => "工具未执行：它的运行时已先关闭".to_owned(),
                ThreadProblem::EndedWithoutResult => "工具的线程结束了，但没有给出结果".to_owned(),
                ThreadProblem::ResultTaken => "工具的结果已被取走".to_owned(),
            },
            ToolError::Unserializable { message } => {
                format!("工具的结果无法序列化为 JSON：{message}")
            }
            ToolError::Remote { server, problem } => match problem {
                RemoteProblem::Refused { message, code } => {
                    format!("MCP 服务器 {server} 拒绝了此调用：{message}（错误 {code}）")
                }
                RemoteProblem::Unreachable => {
                    format!("无法连接 MCP 服务器 {server}：它已停止或关闭了连接")
                }
                RemoteProblem::Failed { message } => {
                    format!("调用 MCP 服务器 {server} 失败：{message}")
                }
            },
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
            NotRun::TimeLimit => "此调用开始前，本次运行已超过时间上限".to_owned(),
            NotRun::Cancelled => "此调用开始前，运行已取消".to_owned(),
            NotRun::AnswerGiven => "同一回复中已给出最终答案，此调用未执行".to_owned(),
            NotRun::RunEnded => "此调用执行前，运行已结束".to_owned(),
            NotRun::CutOff => {
                "回复达到输出 token 上限被截断，此调用的参数不完整；请用更短的参数重新调用，或把工作拆成几次较小的调用"
                    .to_owned()
            }
            NotRun::CannotWait => "此调用需要等待用户批准或调用方的结果，但本次运行不能等待".to_owned(),
            NotRun::ApprovalDeclined => "用户拒绝了此调用".to_owned(),
            NotRun::ApprovalCancelled => "用户取消了此调用".to_owned(),
            NotRun::ApprovalNotAccepted => "用户没有接受此调用".to_owned(),
            NotRun::ApprovalImpossible(tool) => format!(
                "{tool} 需要用户批准，但无法请求批准：此客户端不能询问用户（它不支持 elicitation）"
            ),
            NotRun::ApprovalNotAsked(error) => format!("无法请求用户批准：{error}"),
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
            OutputProblem::InvalidJson { error } => {
                format!("答案不是合法的 JSON：{}", chinese_syntax(error))
            }
            OutputProblem::Invalid { issues } => format!(
                "答案不符合结构：{}",
                ArgumentIssue::render(issues, "答案", "：", "；", chinese_issue)
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

    fn content_note(&self, note: ContentNote<'_>) -> String {
        match note {
            ContentNote::Image { media_type } => format!("[图片：{media_type}]"),
            ContentNote::Document { media_type } => format!("[文档：{media_type}]"),
            ContentNote::Audio { media_type } => format!("[音频：{media_type}]"),
            ContentNote::TextResource { uri } => format!("[资源 {uri}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: Some(media_type),
            } => format!("[资源 {uri}：{media_type}]"),
            ContentNote::BinaryResource {
                uri,
                media_type: None,
            } => format!("[资源 {uri}：二进制数据]"),
            ContentNote::UnknownResource => "[资源]".to_owned(),
            ContentNote::ResourceLink { name, uri } => format!("[资源链接 {name}：{uri}]"),
            ContentNote::UnknownContent => "[本客户端不认识的内容]".to_owned(),
        }
    }

    fn returned_parts(&self, call: ReturnedBy<'_>) -> String {
        match call {
            ReturnedBy::CallId(id) => format!("工具调用 {id} 返回了以下内容："),
            ReturnedBy::Tool(name) => format!("对 {name} 的调用返回了以下内容："),
        }
    }

    /// The English reason is left out: the words say only that the model service does not take
    /// such content.
    fn part_not_shown(&self, part: &Part, _reason: &str) -> String {
        let kind = match part {
            Part::Image(_) => "图片",
            Part::Document(_) => "文档",
            Part::Audio(_) => "音频",
            Part::Text { .. } => "文本",
        };
        let media_type = part.media().map_or("", |media| media.media_type.as_str());
        format!("[{kind}（{media_type}）未显示：当前模型服务不接受这类内容]")
    }
}

/// A JSON type in Chinese.
fn chinese_type(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "布尔值",
        JsonType::Integer => "整数",
        JsonType::Number => "数字",
        JsonType::String => "字符串",
        JsonType::Array => "数组",
        JsonType::Object => "对象",
    }
}

/// A value the model gave, in Chinese: itself, or its type.
fn chinese_found(found: &Found, out: &mut String) {
    match found {
        Found::Value { text, .. } => out.push_str(text),
        Found::Kind(kind) => out.push_str(chinese_type(*kind)),
        // A type's own words: data, quoted.
        Found::Other(text) => {
            let _ = write!(out, "“{text}”");
        }
    }
}

/// What a type takes, in Chinese.
fn chinese_expected(expected: &Expected, out: &mut String) {
    let _ = match expected {
        Expected::Type(kind) => write!(out, "{}", chinese_type(*kind)),
        Expected::Integer(name) => match Expected::integer_range(name) {
            Some((low, high)) => write!(out, "整数 {name}（{low} 到 {high}）"),
            None => write!(out, "整数 {name}"),
        },
        Expected::Float(name) => write!(out, "数字 {name}"),
        Expected::Struct(name) => write!(out, "对象 {name}"),
        Expected::TupleStruct(name) => write!(out, "元组结构体 {name}"),
        Expected::Enum(name) => write!(out, "枚举 {name}"),
        Expected::Tuple(size) => write!(out, "元组（{size} 个元素）"),
        Expected::Array(length) => write!(out, "数组（长度 {length}）"),
        Expected::WithElements { of, count } => {
            chinese_expected(of, out);
            write!(out, "（{count} 个元素）")
        }
        // A type's own words: data, quoted.
        Expected::Other(words) => write!(out, "“{words}”"),
    };
}

/// Names in backquotes, joined by Chinese commas.
fn chinese_names(names: &[String], out: &mut String) {
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            out.push('、');
        }
        let _ = write!(out, "`{name}`");
    }
}

/// One problem with the arguments (or an answer), in Chinese: [`Chinese`]'s words for
/// [`IssueKind`].
fn chinese_issue(kind: &IssueKind, out: &mut String) {
    match kind {
        IssueKind::Missing { field: None } => out.push_str("缺少必填字段"),
        IssueKind::Missing { field: Some(field) } => {
            let _ = write!(out, "缺少字段 `{field}`");
        }
        IssueKind::UnknownField { field, expected } => {
            out.push_str("未知字段");
            if let Some(field) = field {
                let _ = write!(out, " `{field}`");
            }
            match expected.as_deref() {
                None => out.push_str("；请去掉它，或对照 schema 检查拼写"),
                Some([]) => out.push_str("：此处不接受任何字段"),
                Some(names) => {
                    out.push_str("，应为 ");
                    chinese_names(names, out);
                    out.push_str(" 之一");
                }
            }
        }
        IssueKind::NotAnObject { found } => {
            let _ = write!(
                out,
                "应为由具名参数组成的 JSON 对象，实际为{}",
                chinese_type(*found)
            );
        }
        IssueKind::WrongType { expected, found } => {
            out.push_str("应为");
            for (index, kind) in expected.iter().enumerate() {
                if index > 0 {
                    out.push('或');
                }
                out.push_str(chinese_type(*kind));
            }
            out.push_str("，实际为 ");
            chinese_found(found, out);
        }
        IssueKind::NotOneOf { allowed, found } => {
            let _ = write!(out, "应为 {} 之一，实际为 ", allowed.join("、"));
            chinese_found(found, out);
        }
        IssueKind::NotConst { expected, found } => {
            let _ = write!(out, "应为 {expected}，实际为 {found}");
        }
        IssueKind::NoShapeMatches { found } => {
            let _ = write!(out, "此{}不符合任何允许的结构", chinese_type(*found));
        }
        IssueKind::InvalidType { found, expected } => {
            out.push_str("类型不对：应为");
            chinese_expected(expected, out);
            out.push_str("，实际为 ");
            chinese_found(found, out);
        }
        IssueKind::InvalidValue { found, expected } => {
            out.push_str("取值无效：应为");
            chinese_expected(expected, out);
            out.push_str("，实际为 ");
            chinese_found(found, out);
        }
        IssueKind::InvalidLength { length, expected } => {
            let _ = write!(out, "长度无效：实际长度为 {length}，应为");
            chinese_expected(expected, out);
        }
        IssueKind::UnknownVariant { variant, expected } => {
            let _ = write!(out, "未知的取值 `{variant}`");
            if expected.is_empty() {
                out.push_str("，此处没有可选的取值");
            } else {
                out.push_str("，应为 ");
                chinese_names(expected, out);
                out.push_str(" 之一");
            }
        }
        IssueKind::DuplicateField { field } => {
            let _ = write!(out, "字段 `{field}` 重复");
        }
        IssueKind::NoVariantMatches { name } => {
            let _ = write!(out, "不符合 {name} 的任何一种形式");
        }
        IssueKind::MoreNotListed => out.push_str("还有更多类似的问题，未一一列出"),
        IssueKind::DoesNotFit => out.push_str("值不符合 schema"),
        // The deserializer's own words: data, quoted.
        IssueKind::Other { message } => {
            let _ = write!(out, "不符合要求：“{message}”");
        }
    }
}

/// Why a text is not JSON, and where, in Chinese.
fn chinese_syntax(error: &SyntaxError) -> String {
    let problem = match &error.problem {
        SyntaxProblem::UnfinishedList => "数组还没结束，文本就结束了",
        SyntaxProblem::UnfinishedObject => "对象还没结束，文本就结束了",
        SyntaxProblem::UnfinishedString => "字符串还没结束，文本就结束了",
        SyntaxProblem::UnfinishedValue => "值还没写完，文本就结束了",
        SyntaxProblem::ExpectedColon => "此处应为 `:`",
        SyntaxProblem::ExpectedCommaOrListEnd => "此处应为 `,` 或 `]`",
        SyntaxProblem::ExpectedCommaOrObjectEnd => "此处应为 `,` 或 `}`",
        SyntaxProblem::ExpectedIdent => "此处应为 true、false 或 null",
        SyntaxProblem::ExpectedValue => "此处应为一个值",
        SyntaxProblem::ExpectedDoubleQuote => "此处应为 `\"`",
        SyntaxProblem::InvalidEscape => "无效的转义序列",
        SyntaxProblem::InvalidNumber => "无效的数字",
        SyntaxProblem::NumberOutOfRange => "数字超出范围",
        SyntaxProblem::InvalidUnicodeCodePoint => "无效的 Unicode 码点",
        SyntaxProblem::ControlCharacter => "字符串中有未转义的控制字符（U+0000 到 U+001F）",
        SyntaxProblem::KeyMustBeAString => "对象的键必须是字符串",
        SyntaxProblem::LoneLeadingSurrogate => "十六进制转义中有落单的前导代理项",
        SyntaxProblem::TrailingComma => "末尾多了一个逗号",
        SyntaxProblem::TrailingCharacters => "JSON 值之后还有多余的字符",
        SyntaxProblem::UnexpectedEndOfHexEscape => "十六进制转义不完整",
        SyntaxProblem::RecursionLimitExceeded => "嵌套层数超过上限",
        // The parser's own words: data, quoted.
        SyntaxProblem::Other(message) => return format!("“{message}”"),
    };
    if error.line > 0 {
        format!("第 {} 行第 {} 列：{problem}", error.line, error.column)
    } else {
        problem.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argument_issue::classify;

    /// Three ASCII words in a row, separated by nothing but ASCII: an English phrase.
    fn english_run(text: &str) -> bool {
        let mut words = 0;
        let mut in_word = false;
        for character in text.chars().chain(['\u{3000}']) {
            if character.is_ascii_alphabetic() {
                in_word = true;
                continue;
            }
            if in_word {
                in_word = false;
                words += 1;
                if words >= 3 {
                    return true;
                }
            }
            if !character.is_ascii() {
                words = 0;
            }
        }
        false
    }

    /// Every kind of argument problem, as the engine finds them.
    fn every_issue() -> Vec<IssueKind> {
        let from_serde = [
            "invalid type: integer `42`, expected a string",
            "invalid type: string \"x\", expected u32",
            "invalid type: null, expected a boolean",
            "invalid type: sequence, expected a map",
            "invalid type: map, expected a sequence",
            "invalid type: floating point `1.5`, expected i64",
            "invalid type: boolean `true`, expected f64",
            "invalid type: string \"x\", expected struct Stop",
            "invalid type: integer `3`, expected enum Unit",
            "invalid value: integer `300`, expected u8",
            "invalid value: integer `-1`, expected usize",
            "invalid length 0, expected struct Stop with 2 elements",
            "invalid length 0, expected tuple struct Pair with 1 element",
            "invalid length 1, expected a tuple of size 2",
            "invalid length 1, expected an array of length 3",
            "missing field `city`",
            "unknown field `cty`, expected `city` or `unit`",
            "unknown field `cty`, expected one of `a`, `b`, `c`",
            "unknown field `cty`, there are no fields",
            "unknown variant `kelvin`, expected `celsius` or `fahrenheit`",
            "unknown variant `x`, there are no variants",
            "duplicate field `city`",
            "data did not match any variant of untagged enum Either",
        ];
        let mut kinds: Vec<IssueKind> = from_serde.into_iter().map(classify).collect();
        kinds.extend([
            IssueKind::Missing { field: None },
            IssueKind::UnknownField {
                field: None,
                expected: None,
            },
            IssueKind::UnknownField {
                field: None,
                expected: Some(Vec::new()),
            },
            IssueKind::NotAnObject {
                found: JsonType::Integer,
            },
            IssueKind::WrongType {
                expected: vec![JsonType::Integer, JsonType::Null],
                found: Found::Kind(JsonType::Object),
            },
            IssueKind::NotOneOf {
                allowed: vec!["\"low\"".into(), "\"high\"".into()],
                found: Found::Value {
                    kind: JsonType::String,
                    text: "\"urgent\"".into(),
                },
            },
            IssueKind::NotConst {
                expected: "\"v1\"".into(),
                found: "2".into(),
            },
            IssueKind::NoShapeMatches {
                found: JsonType::Array,
            },
            IssueKind::MoreNotListed,
            IssueKind::DoesNotFit,
        ]);
        kinds
    }

    #[test]
    fn every_argument_problem_is_worded_in_chinese() {
        for kind in every_issue() {
            assert!(
                !matches!(kind, IssueKind::Other { .. }),
                "not sorted: {kind:?}"
            );
            let mut words = String::new();
            chinese_issue(&kind, &mut words);
            assert!(!english_run(&words), "{kind:?} in Chinese: {words}");
        }
        let mut words = String::new();
        chinese_issue(
            &classify("invalid value: integer `300`, expected u8"),
            &mut words,
        );
        assert_eq!(words, "取值无效：应为整数 u8（0 到 255），实际为 300");
        // A message of no known shape is the type's own words, quoted as data.
        let mut words = String::new();
        chinese_issue(&classify("not a date"), &mut words);
        assert_eq!(words, "不符合要求：“not a date”");
    }

    #[test]
    fn every_json_syntax_problem_is_worded_in_chinese() {
        for problem in SyntaxProblem::KNOWN {
            let error = SyntaxError {
                problem,
                line: 1,
                column: 2,
            };
            let words = Chinese.tool_error_message(&ToolError::InvalidJson { error });
            assert!(!english_run(&words), "{words}");
        }
    }

    #[test]
    fn the_adapters_english_words_are_as_they_were() {
        assert_eq!(
            English.returned_parts(ReturnedBy::CallId("call_1")),
            "The tool call call_1 returned these:"
        );
        assert_eq!(
            English.returned_parts(ReturnedBy::Tool("take_photo")),
            "The take_photo call returned these:"
        );
        assert_eq!(
            English.part_not_shown(
                &Part::audio("audio/wav", b"RIFF"),
                "Anthropic Messages cannot take audio"
            ),
            "[audio (audio/wav) not shown: Anthropic Messages cannot take audio]"
        );
    }

    #[test]
    fn every_failure_and_refusal_is_worded_in_chinese() {
        let errors = [
            ToolError::Panicked { message: None },
            ToolError::Interrupted {
                by: Interruption::Cancelled,
            },
            ToolError::Interrupted {
                by: Interruption::TimeLimit,
            },
            ToolError::Interrupted {
                by: Interruption::Unrecorded,
            },
            ToolError::RunByCaller {
                tool: "locate".into(),
            },
            ToolError::Thread {
                problem: ThreadProblem::NotStarted {
                    message: "资源不足".into(),
                },
            },
            ToolError::Thread {
                problem: ThreadProblem::RuntimeShutDown,
            },
            ToolError::Thread {
                problem: ThreadProblem::EndedWithoutResult,
            },
            ToolError::Thread {
                problem: ThreadProblem::ResultTaken,
            },
            ToolError::Unserializable {
                message: "键必须是字符串".into(),
            },
            ToolError::Journal {
                message: "调用已被终止".into(),
            },
            ToolError::Remote {
                server: "`files`".into(),
                problem: RemoteProblem::Refused {
                    message: "没有这个工具".into(),
                    code: -32602,
                },
            },
            ToolError::Remote {
                server: "`files`".into(),
                problem: RemoteProblem::Unreachable,
            },
            ToolError::Remote {
                server: "`files`".into(),
                problem: RemoteProblem::Failed {
                    message: "超时".into(),
                },
            },
        ];
        for error in errors {
            let words = Chinese.tool_error(&error);
            assert!(!english_run(&words), "{error:?} in Chinese: {words}");
            assert!(!error.to_string().is_empty());
        }
        for note in [
            ContentNote::Image {
                media_type: "image/png",
            },
            ContentNote::Document {
                media_type: "application/pdf",
            },
            ContentNote::Audio {
                media_type: "audio/wav",
            },
            ContentNote::TextResource { uri: "备忘://1" },
            ContentNote::BinaryResource {
                uri: "备忘://2",
                media_type: None,
            },
            ContentNote::BinaryResource {
                uri: "备忘://3",
                media_type: Some("application/zip"),
            },
            ContentNote::UnknownResource,
            ContentNote::ResourceLink {
                name: "报告",
                uri: "备忘://4",
            },
            ContentNote::UnknownContent,
        ] {
            let words = Chinese.content_note(note);
            assert!(!english_run(&words), "{note:?} in Chinese: {words}");
            assert!(!English.content_note(note).is_empty());
        }
        for call in [ReturnedBy::CallId("call_1"), ReturnedBy::Tool("take_photo")] {
            let words = Chinese.returned_parts(call);
            assert!(!english_run(&words), "{call:?} in Chinese: {words}");
        }
        let audio = Part::audio("audio/wav", b"RIFF");
        let reason = "Anthropic Messages cannot take audio";
        let words = Chinese.part_not_shown(&audio, reason);
        assert!(!english_run(&words), "{words}");
        assert_eq!(
            words,
            "[音频（audio/wav）未显示：当前模型服务不接受这类内容]"
        );
        for why in [
            NotRun::ApprovalDeclined,
            NotRun::ApprovalCancelled,
            NotRun::ApprovalNotAccepted,
            NotRun::ApprovalImpossible("wipe"),
            NotRun::ApprovalNotAsked("连接断了"),
        ] {
            let words = Chinese.not_run(why);
            assert!(!english_run(&words), "{why:?} in Chinese: {words}");
            // The English words, as they were when the MCP server wrote them itself.
            assert!(English.not_run(why).starts_with(['t', '`']), "{why:?}");
        }
    }
}
