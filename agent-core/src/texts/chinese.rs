//! The Chinese texts: the reference loop's words, and every other text in the same voice.

use super::*;

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
            ToolError::Interrupted {
                by: Interruption::Unrecorded,
            } => "运行在此调用的结果记录之前停止了：它可能已开始执行并产生效果，也可能根本没有执行，再次调用前请先确认".to_owned(),
            ToolError::Interrupted { by } => {
                let when = match by {
                    Interruption::Cancelled => "运行被取消时",
                    Interruption::TimeLimit => "运行超过时间上限时",
                    Interruption::Tripped => "护栏停止运行时",
                    Interruption::Unrecorded => "在结果记录之前",
                };
                format!("此调用{when}被中断：它已开始执行，可能已产生效果，再次调用前请先确认")
            }
            ToolError::NotRun { why } => format!("未执行：{}", self.not_run(why)),
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
            ToolError::Withheld { guard, reason } => {
                format!("此调用已执行，但守卫 {guard} 扣下了它的结果：{reason}")
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
            ToolError::Remote { server, problem } => {
                let server = chinese_server(server);
                match problem {
                    RemoteProblem::Refused { message, code } => {
                        format!("MCP 服务器 {server} 拒绝了此调用：{message}（错误 {code}）")
                    }
                    RemoteProblem::Unreachable => {
                        format!("无法连接 MCP 服务器 {server}：它已停止或关闭了连接")
                    }
                    RemoteProblem::Failed { message } => {
                        format!("调用 MCP 服务器 {server} 失败：{message}")
                    }
                }
            }
            ToolError::AgentFailed { agent, why } => {
                let why = match why {
                    AgentFailure::Model { step, message } if message.is_empty() => {
                        format!("它的模型在第 {step} 步调用失败")
                    }
                    AgentFailure::Model { step, message } => {
                        format!("它的模型在第 {step} 步调用失败：{message}")
                    }
                    AgentFailure::Output { tries } => {
                        format!("它给了 {tries} 次答案，都没有被接受")
                    }
                    AgentFailure::NoOutput => "它在给出答案之前就停止了".to_owned(),
                    AgentFailure::Tripped { guard } => format!("守卫 {guard} 停止了它"),
                    AgentFailure::LethalMix => {
                        "它的工具既能读取不可信的内容和私密数据，又能向外发送数据，因此没有启动"
                            .to_owned()
                    }
                    AgentFailure::Session => "无法加载或保存它的对话".to_owned(),
                    AgentFailure::Resume => "无法恢复它暂停的运行".to_owned(),
                    AgentFailure::Dropped => "它的运行在结束前被丢弃了".to_owned(),
                };
                format!("代理 {agent} 未能完成：{why}")
            }
            ToolError::RemoteAgent { agent, problem } => match problem {
                RemoteAgentProblem::Unreachable => format!("无法连接远程代理 {agent}"),
                RemoteAgentProblem::Garbled => {
                    format!("远程代理 {agent} 的回答不符合它的协议")
                }
                RemoteAgentProblem::Refused { message, code } => {
                    format!("远程代理 {agent} 拒绝了请求：{message}（错误 {code}）")
                }
                RemoteAgentProblem::Task { state, message } => {
                    let how = match state {
                        TaskEnd::WaitsForInput => "在等待更多输入",
                        TaskEnd::Cancelled => "已被取消",
                        TaskEnd::Rejected => "被拒绝了",
                        TaskEnd::Failed => "失败了",
                    };
                    match message.is_empty() {
                        true => format!("远程代理 {agent} 的任务{how}"),
                        false => format!("远程代理 {agent} 的任务{how}：{message}"),
                    }
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

    fn not_run(&self, why: &NotRun) -> String {
        match why {
            NotRun::Skipped(reason) => reason.clone(),
            NotRun::Denied(Some(reason)) => format!("用户未批准此调用：{reason}"),
            NotRun::Denied(None) => "用户未批准此调用".to_owned(),
            NotRun::NoApprover => "此工具需要批准，但没有批准人".to_owned(),
            NotRun::ToolCallLimit(limit) => format!("已达到本次运行 {limit} 次工具调用的上限"),
            NotRun::BudgetSpent => "本次运行与协作代理共用的预算已没有剩余的工具调用次数".to_owned(),
            NotRun::TimeLimit => "此调用开始前，本次运行已超过时间上限".to_owned(),
            NotRun::Cancelled => "此调用开始前，运行已取消".to_owned(),
            NotRun::Tripped => "此调用开始前，护栏已停止运行".to_owned(),
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
            NotRun::Guarded { guard, reason } => format!("守卫 {guard} 不允许执行此调用：{reason}"),
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
            OutputProblem::Guarded { guard, feedback } => {
                format!("守卫 {guard} 没有接受这个答案：{feedback}")
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

    fn part_not_shown(&self, part: &Part) -> String {
        let kind = match part {
            Part::Image(_) => "图片",
            Part::Document(_) => "文档",
            Part::Audio(_) => "音频",
            Part::Text { .. } => "文本",
        };
        let media_type = part.media().map_or("", |media| media.media_type.as_str());
        format!("[{kind}（{media_type}）未显示：当前模型服务不接受这类内容]")
    }

    fn handed_off(&self, agent: &str) -> String {
        format!("对话已转交给 {agent}。")
    }

    fn context_summary(&self, summary: &str) -> String {
        format!("［为节省篇幅，此前的对话已省略，以下是摘要］\n{summary}")
    }

    fn summary_request(&self, previous: Option<&str>, transcript: &str) -> String {
        let previous = previous.map_or(String::new(), |previous| {
            format!("此前内容的摘要：\n{previous}\n\n")
        });
        format!(
            "请为接下来继续这段对话的助手总结下面的对话：用户想要什么，已经决定和完成了什么（调用了哪些工具、\
             返回的结果中仍然重要的部分），还有什么没有解决。名称、数字和编号保持原样。只回复摘要本身，\
             使用对话所用的语言。\n\n{previous}对话内容（JSON 格式的消息）：\n{transcript}"
        )
    }

    fn result_left_out(&self, characters: usize, call_id: &str, tool: &str) -> String {
        format!(
            "［为节省篇幅，此处省略了这条结果（{characters} 个字符）；如需查看，\
             请以调用 ID “{call_id}” 调用 `{tool}`。］"
        )
    }

    fn recall_tool(&self) -> [&'static str; 3] {
        [
            "按所回应调用的 ID，读取为节省篇幅而从对话中省略的工具结果；较长的结果分页读取。",
            "要读取其结果的调用的 ID。",
            "从第几个字符开始读：省略时为 0，即开头；每一页都会说明下一页从哪里开始。",
        ]
    }

    fn result_page(
        &self,
        from: usize,
        to: usize,
        total: usize,
        call_id: &str,
        tool: &str,
    ) -> String {
        match to < total {
            true => format!(
                "［这是该结果共 {total} 个字符中的第 {from} 至 {to} 个；如需继续阅读，\
                 请以调用 ID “{call_id}” 和 from {to} 调用 `{tool}`。］"
            ),
            false => format!("［这是该结果共 {total} 个字符中的第 {from} 至 {to} 个，已到结尾。］"),
        }
    }

    fn chat_title_prompt(&self, question: &str, answer: &str) -> String {
        format!(
            "为以下面这段问答开头的对话写一个标题，不超过十二个字，使用提问所用的语言。\
             只回复标题本身。\n\n问题：\n{question}\n\n回答：\n{answer}"
        )
    }

    fn judge_request(&self, what: JudgeSubject<'_>) -> String {
        let subject = match what {
            JudgeSubject::Input(text) => format!("这条输入：\n\n{text}"),
            JudgeSubject::Request(text) => format!("这个请求：\n\n{text}"),
            JudgeSubject::Call { tool, arguments } => {
                format!("这次调用：\n\n以 {arguments} 调用工具 {tool}")
            }
            JudgeSubject::Result { tool, content } => {
                format!("这个结果：\n\n工具 {tool} 的结果：\n{content}")
            }
            JudgeSubject::Answer(text) => format!("这个回答：\n\n{text}"),
        };
        format!("请检查{subject}\n\n用 `allow` 回答是否可以继续，用 `reason` 一句话说明理由。")
    }

    fn agent_input(&self) -> &str {
        "完整的请求：除了这段文字，该代理看不到这段对话的任何内容。"
    }

    fn handoff_summary(&self) -> &str {
        "下一个代理需要知道的到目前为止的对话内容：用户是谁，问了什么，查到了什么、做了什么。"
    }
}

/// An MCP server in Chinese: its name or program in backquotes, else how it was reached.
fn chinese_server(server: &RemoteServer) -> String {
    match server {
        RemoteServer::Named(name) | RemoteServer::Program(name) => format!("`{name}`"),
        RemoteServer::Url(url) => format!("（{url}）"),
        RemoteServer::Stream => "（经数据流连接）".to_owned(),
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
pub(super) fn chinese_issue(kind: &IssueKind, out: &mut String) {
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
