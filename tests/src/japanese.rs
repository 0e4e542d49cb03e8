//! A third language, defined outside `agent-core` as a user would: every text the agent writes,
//! in Japanese. Every reason is matched without a wildcard arm (the reason enums are exhaustive),
//! so a reason added to `agent-core` fails to compile here until it is worded.
//! `tests/tests/result_paths.rs` walks every result path with it and finds no English in what the
//! model read.

use std::fmt::Write as _;
use std::time::Duration;

use agent_core::{
    AgentFailure, ArgumentIssue, ContentNote, Expected, Found, Interruption, IssueKind, JsonType,
    JudgeSubject, NotRun, OutputProblem, Part, RemoteAgentProblem, RemoteProblem, RemoteServer,
    ReturnedBy, SyntaxError, SyntaxProblem, TaskEnd, Texts, ThreadProblem, ToolError,
};

/// Japanese texts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Japanese;

/// The lead-in of an error result.
const LEAD_IN: &str = "エラー：";

impl Texts for Japanese {
    fn system_prompt(&self) -> &str {
        "あなたはツールを使えるアシスタントです。ツールがエラーを返したら、その内容を読んで次の呼び出しを\
         直してください。できないときは正直にそう言い、結果を作り上げないでください。"
    }

    fn tool_error_message(&self, error: &ToolError) -> String {
        match error {
            ToolError::UnknownTool { name, available } => {
                let mut text = format!("「{name}」という名前のツールはありません");
                if available.is_empty() {
                    text.push_str("。使えるツールはありません");
                } else {
                    let _ = write!(text, "。使えるツール：{}", available.join("、"));
                }
                text
            }
            ToolError::InvalidJson { error } => {
                format!("引数が正しい JSON ではありません：{}", syntax(error))
            }
            ToolError::InvalidArguments { issues } => {
                format!("引数が正しくありません：{}", issue_list(issues, "引数"))
            }
            ToolError::Failed { message } => message.clone(),
            ToolError::Panicked {
                message: Some(message),
            } => format!("ツールがパニックしました：{message}"),
            ToolError::Panicked { message: None } => {
                "ツールがパニックしました（メッセージはありません）".to_owned()
            }
            ToolError::TimedOut { after } => {
                format!(
                    "ツールが {} 以内に終わらず、取り消されました",
                    duration(*after)
                )
            }
            ToolError::Abandoned { after } => format!(
                "ツールが {} 以内に終わらず、もう待っていません。まだ処理を終えるかもしれないので、\
                 もう一度呼ぶ前に確かめてください",
                duration(*after)
            ),
            ToolError::Interrupted {
                by: Interruption::Unrecorded,
            } => "この呼び出しの結果が記録される前に実行が止まりました。始まって効果があったかもしれず、\
                  まったく実行されなかったかもしれないので、もう一度呼ぶ前に確かめてください"
                .to_owned(),
            ToolError::Interrupted { by } => {
                let when = match by {
                    Interruption::Cancelled => "実行が取り消されたときに",
                    Interruption::TimeLimit => "実行の制限時間が過ぎたときに",
                    Interruption::Tripped => "ガードが実行を止めたときに",
                    Interruption::Unrecorded => "結果が記録される前に",
                };
                format!(
                    "この呼び出しは{when}中断されました。すでに始まっていて効果があったかもしれないので、\
                     もう一度呼ぶ前に確かめてください"
                )
            }
            ToolError::NotRun { why } => format!("実行されませんでした：{}", self.not_run(why)),
            ToolError::Retry { message } => {
                format!("{message}。直してからもう一度ツールを呼んでください")
            }
            ToolError::AnswerRejected { correction } => correction.clone(),
            ToolError::OutcomeUnknown { tool } => format!(
                "「{tool}」のこの呼び出しの結果は分かりません。実行中にサービスが止まりました。効果が二度\
                 起きないよう再実行はしていません。もう一度呼ぶ前に、効果があったか確かめてください"
            ),
            ToolError::Journal { message } => {
                format!("永続実行の記録にこの呼び出しを書けませんでした：{message}")
            }
            ToolError::RunByCaller { tool } => {
                format!("「{tool}」はエージェントではなくアプリケーションが実行するツールです")
            }
            ToolError::Withheld { guard, reason } => {
                format!(
                    "呼び出しは実行されましたが、ガード「{guard}」が結果を差し止めました：{reason}"
                )
            }
            ToolError::Thread { problem } => match problem {
                ThreadProblem::NotStarted { message } => {
                    format!("ツール用のスレッドを起動できませんでした：{message}")
                }
                ThreadProblem::RuntimeShutDown => {
                    "ツールは実行されませんでした。先にランタイムが止まりました".to_owned()
                }
                ThreadProblem::EndedWithoutResult => {
                    "ツールのスレッドが結果を返さずに終わりました".to_owned()
                }
                ThreadProblem::ResultTaken => "ツールの結果はすでに取り出されています".to_owned(),
            },
            ToolError::Unserializable { message } => {
                format!("ツールの結果を JSON にできませんでした：{message}")
            }
            ToolError::Remote { server, problem } => {
                let server = server_words(server);
                match problem {
                    RemoteProblem::Refused { message, code } => format!(
                        "MCP サーバー{server}が呼び出しを拒否しました：{message}（エラー {code}）"
                    ),
                    RemoteProblem::Unreachable => format!(
                        "MCP サーバー{server}に接続できません。止まったか、接続を閉じました"
                    ),
                    RemoteProblem::Failed { message } => {
                        format!("MCP サーバー{server}への呼び出しが失敗しました：{message}")
                    }
                }
            }
            ToolError::AgentFailed { agent, why } => {
                let why = match why {
                    AgentFailure::Model { step, message } if message.is_empty() => {
                        format!("そのモデルの呼び出しがステップ {step} で失敗しました")
                    }
                    AgentFailure::Model { step, message } => {
                        format!("そのモデルの呼び出しがステップ {step} で失敗しました：{message}")
                    }
                    AgentFailure::Output { tries } => {
                        format!("{tries} 回答えましたが、どれも受け付けられませんでした")
                    }
                    AgentFailure::NoOutput => "答えを出す前に止まりました".to_owned(),
                    AgentFailure::Tripped { guard } => {
                        format!("ガード「{guard}」がそれを止めました")
                    }
                    AgentFailure::LethalMix => "そのツールは信頼できない内容と私的なデータを読み、\
                         外にデータを送れるため、始まりませんでした"
                        .to_owned(),
                    AgentFailure::Session => "その会話を読み込むことも保存することもできませんでした"
                        .to_owned(),
                    AgentFailure::Resume => "一時停止した実行を再開できませんでした".to_owned(),
                    AgentFailure::Dropped => "その実行は終わる前に破棄されました".to_owned(),
                };
                format!("エージェント「{agent}」は最後までできませんでした：{why}")
            }
            ToolError::RemoteAgent { agent, problem } => match problem {
                RemoteAgentProblem::Unreachable => {
                    format!("リモートのエージェント「{agent}」に接続できません")
                }
                RemoteAgentProblem::Garbled => {
                    format!("リモートのエージェント「{agent}」の返事がプロトコルに合っていません")
                }
                RemoteAgentProblem::Refused { message, code } => format!(
                    "リモートのエージェント「{agent}」が依頼を断りました：{message}（エラー {code}）"
                ),
                RemoteAgentProblem::Task { state, message } => {
                    let how = match state {
                        TaskEnd::WaitsForInput => "さらに入力を待っています",
                        TaskEnd::Cancelled => "取り消されました",
                        TaskEnd::Rejected => "断られました",
                        TaskEnd::Failed => "失敗しました",
                    };
                    let mut words =
                        format!("リモートのエージェント「{agent}」のタスクは{how}");
                    if !message.is_empty() {
                        let _ = write!(words, "：{message}");
                    }
                    words
                }
            },
        }
    }

    fn tool_error_lead_in(&self, error: &ToolError) -> &str {
        match error {
            // A correction is the agent's own words, not a failure to report.
            ToolError::AnswerRejected { .. } => "",
            _ => LEAD_IN,
        }
    }

    fn tool_done(&self) -> &str {
        "完了しました。"
    }

    fn truncated(&self, shown: usize, total: usize) -> String {
        format!(
            "\n［結果が長すぎるため、{total} 文字のうち最初の {shown} 文字だけを表示しています］"
        )
    }

    fn step_limit_reached(&self, steps: usize) -> String {
        format!("{steps} ステップで終わりませんでした。質問を絞ってください。")
    }

    fn not_run(&self, why: &NotRun) -> String {
        match why {
            NotRun::Skipped(reason) => reason.clone(),
            NotRun::Denied(Some(reason)) => {
                format!("ユーザーはこの呼び出しを承認しませんでした：{reason}")
            }
            NotRun::Denied(None) => "ユーザーはこの呼び出しを承認しませんでした".to_owned(),
            NotRun::NoApprover => "このツールには承認が必要ですが、承認する人がいません".to_owned(),
            NotRun::ToolCallLimit(limit) => {
                format!("この実行のツール呼び出しの上限 {limit} 回に達しました")
            }
            NotRun::BudgetSpent => {
                "この実行と連携するエージェントが共有する予算に、ツール呼び出しの残りがありません"
                    .to_owned()
            }
            NotRun::TimeLimit => "この呼び出しが始まる前に実行の制限時間が過ぎました".to_owned(),
            NotRun::Cancelled => "この呼び出しが始まる前に実行が取り消されました".to_owned(),
            NotRun::Tripped => "この呼び出しが始まる前にガードが実行を止めました".to_owned(),
            NotRun::AnswerGiven => {
                "同じ返答で最終回答が出たので、この呼び出しをせずに実行を終えました".to_owned()
            }
            NotRun::RunEnded => "この呼び出しの前に実行が終わりました".to_owned(),
            NotRun::CutOff => "返答が出力トークンの上限で切れ、この呼び出しの引数が途中までしか\
                               ありません。短い引数でもう一度呼ぶか、作業を小さく分けてください"
                .to_owned(),
            NotRun::CannotWait => {
                "この呼び出しは人か呼び出し元を待つ必要がありますが、この実行は待てません"
                    .to_owned()
            }
            NotRun::ApprovalDeclined => "ユーザーはこの呼び出しを断りました".to_owned(),
            NotRun::ApprovalCancelled => "ユーザーはこの呼び出しを取り消しました".to_owned(),
            NotRun::ApprovalNotAccepted => {
                "ユーザーはこの呼び出しを受け入れませんでした".to_owned()
            }
            NotRun::ApprovalImpossible(tool) => format!(
                "「{tool}」にはユーザーの承認が必要ですが、このクライアントはユーザーに尋ねられません\
                 （elicitation に対応していません）"
            ),
            NotRun::ApprovalNotAsked(error) => {
                format!("ユーザーに承認を求められませんでした：{error}")
            }
            NotRun::Guarded { guard, reason } => {
                format!("ガード「{guard}」がこの呼び出しを止めました：{reason}")
            }
        }
    }

    fn run_stopped(&self) -> &str {
        "終わる前に止まりました。"
    }

    fn run_paused(&self) -> &str {
        "判断を待っています。そのあと続けます。"
    }

    fn output_tool_description(&self, description: Option<&str>) -> String {
        match description {
            Some(description) => {
                format!(
                    "必要なことがそろったら、このツールで最終回答を出してください：{description}"
                )
            }
            None => "必要なことがそろったら、このツールで最終回答を出してください。".to_owned(),
        }
    }

    fn output_correction(&self, problem: &OutputProblem) -> String {
        let problem = match problem {
            OutputProblem::InvalidJson { error } => {
                format!("回答が正しい JSON ではありません：{}", syntax(error))
            }
            OutputProblem::Invalid { issues } => {
                format!("回答がスキーマに合いません：{}", issue_list(issues, "回答"))
            }
            OutputProblem::Rejected { message } => {
                format!("回答は受け入れられませんでした：{message}")
            }
            OutputProblem::NotGiven { tool } => {
                format!("最終回答は文章ではなく、ツール「{tool}」を呼んで出してください")
            }
            OutputProblem::CutOff => {
                "回答が出力トークンの上限で途中で切れました。もっと短くしてください".to_owned()
            }
            OutputProblem::Guarded { guard, feedback } => {
                format!("ガード「{guard}」がこの回答を受け入れませんでした：{feedback}")
            }
        };
        format!("{problem}。もう一度お願いします。")
    }

    fn output_received(&self) -> &str {
        "最終回答を受け取りました。"
    }

    fn output_instructions(&self, schema: &str) -> String {
        format!(
            "最終回答は、次の JSON スキーマに合う JSON の値だけにしてください（ほかの文章は不要です）：\n{schema}"
        )
    }

    fn content_note(&self, note: ContentNote<'_>) -> String {
        match note {
            ContentNote::Image { media_type } => format!("［画像：{media_type}］"),
            ContentNote::Document { media_type } => format!("［文書：{media_type}］"),
            ContentNote::Audio { media_type } => format!("［音声：{media_type}］"),
            ContentNote::TextResource { uri } => format!("［リソース {uri}］"),
            ContentNote::BinaryResource {
                uri,
                media_type: Some(media_type),
            } => format!("［リソース {uri}：{media_type}］"),
            ContentNote::BinaryResource {
                uri,
                media_type: None,
            } => format!("［リソース {uri}：バイナリデータ］"),
            ContentNote::UnknownResource => "［リソース］".to_owned(),
            ContentNote::ResourceLink { name, uri } => {
                format!("［リソースへのリンク {name}：{uri}］")
            }
            ContentNote::UnknownContent => "［このクライアントの知らない種類の内容］".to_owned(),
        }
    }

    fn returned_parts(&self, call: ReturnedBy<'_>) -> String {
        match call {
            ReturnedBy::CallId(id) => format!("ツール呼び出し {id} が返したもの："),
            ReturnedBy::Tool(name) => format!("「{name}」の呼び出しが返したもの："),
        }
    }

    fn part_not_shown(&self, part: &Part) -> String {
        let media_type = part.media().map_or("", |media| media.media_type.as_str());
        format!("［{media_type} の内容は表示されていません：このモデルサービスは受け付けません］")
    }

    fn handed_off(&self, agent: &str) -> String {
        format!("会話を {agent} に引き継ぎました。")
    }

    fn context_summary(&self, summary: &str) -> String {
        format!("［紙幅のため、これより前の会話は省略しました。要約：］\n{summary}")
    }

    fn summary_request(&self, previous: Option<&str>, transcript: &str) -> String {
        let previous = previous.map_or(String::new(), |previous| {
            format!("それより前の要約：\n{previous}\n\n")
        });
        format!(
            "この会話を引き継ぐアシスタントのために、次の会話を要約してください。ユーザーの望み、決まったことと\
             済んだこと（呼んだツールと、その結果のうちまだ大事なもの）、まだ残っていることを書き、名前・数字・\
             ID はそのまま残してください。要約だけを、会話と同じ言語で返してください。\n\n{previous}\
             会話（JSON のメッセージ）：\n{transcript}"
        )
    }

    fn result_left_out(&self, characters: usize, call_id: &str, tool: &str) -> String {
        format!(
            "［紙幅のため、この結果（{characters} 文字）は省略しました。読むには、呼び出し ID \
             「{call_id}」で `{tool}` を呼んでください。］"
        )
    }

    fn recall_tool(&self) -> [&'static str; 3] {
        [
            "紙幅のため会話から省略されたツールの結果を、それが答える呼び出しの ID で読みます。\
             長い結果は一ページずつ読みます。",
            "結果を読む呼び出しの ID。",
            "読み始める文字の位置。省略すると 0（先頭）。各ページに次のページの位置が書いてあります。",
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
                "［この結果の全 {total} 文字のうち {from} から {to} 文字目です。続きを読むには、\
                 呼び出し ID「{call_id}」と from {to} で `{tool}` を呼んでください。］"
            ),
            false => format!(
                "［この結果の全 {total} 文字のうち {from} から {to} 文字目で、終わりです。］"
            ),
        }
    }

    fn chat_title_prompt(&self, question: &str, answer: &str) -> String {
        format!(
            "次のやりとりで始まる会話に、質問と同じ言語で十五文字以内の題名をつけてください。\
             題名だけを返してください。\n\n質問：\n{question}\n\n回答：\n{answer}"
        )
    }

    fn judge_request(&self, what: JudgeSubject<'_>) -> String {
        let subject = match what {
            JudgeSubject::Input(text) => format!("この入力を調べてください：\n\n{text}"),
            JudgeSubject::Request(text) => format!("このリクエストを調べてください：\n\n{text}"),
            JudgeSubject::Call { tool, arguments } => format!(
                "この呼び出しを調べてください：\n\nツール「{tool}」を {arguments} で呼び出します"
            ),
            JudgeSubject::Result { tool, content } => {
                format!("この結果を調べてください：\n\nツール「{tool}」の結果：\n{content}")
            }
            JudgeSubject::Answer(text) => format!("この回答を調べてください：\n\n{text}"),
        };
        format!(
            "{subject}\n\n先へ進めてよいかを `allow` で、その理由を一文で `reason` で答えてください。"
        )
    }

    fn agent_input(&self) -> &str {
        "依頼の全文：エージェントにはこの文のほか、この会話の何も見えません。"
    }

    fn handoff_summary(&self) -> &str {
        "次のエージェントが知っておくべき、ここまでの会話：ユーザーは誰か、何を頼んだか、何がわかり、何をしたか。"
    }
}

/// A duration: `250 ミリ秒`, `1.5 秒`.
fn duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ミリ秒", duration.as_millis())
    } else {
        format!("{} 秒", (duration.as_secs_f64() * 10.0).round() / 10.0)
    }
}

/// An MCP server: its name or program in 「」, else how it was reached.
fn server_words(server: &RemoteServer) -> String {
    match server {
        RemoteServer::Named(name) | RemoteServer::Program(name) => format!("「{name}」"),
        RemoteServer::Url(url) => format!("（{url}）"),
        RemoteServer::Stream => "（ストリーム経由）".to_owned(),
    }
}

/// Issues as `path：problem`, joined by `；`.
fn issue_list(issues: &[ArgumentIssue], whole: &str) -> String {
    ArgumentIssue::render(issues, whole, "：", "；", issue)
}

/// A JSON type.
fn json_type(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "真偽値",
        JsonType::Integer => "整数",
        JsonType::Number => "数値",
        JsonType::String => "文字列",
        JsonType::Array => "配列",
        JsonType::Object => "オブジェクト",
    }
}

/// A value the model gave: itself, or its type.
fn found(found: &Found, out: &mut String) {
    match found {
        Found::Value { text, .. } => out.push_str(text),
        Found::Kind(kind) => out.push_str(json_type(*kind)),
        // A type's own words: data, quoted.
        Found::Other(text) => {
            let _ = write!(out, "「{text}」");
        }
    }
}

/// What a type takes.
fn expected(expected: &Expected, out: &mut String) {
    let _ = match expected {
        Expected::Type(kind) => write!(out, "{}", json_type(*kind)),
        Expected::Integer(name) => match Expected::integer_range(name) {
            Some((low, high)) => write!(out, "整数 {name}（{low} から {high} まで）"),
            None => write!(out, "整数 {name}"),
        },
        Expected::Float(name) => write!(out, "数値 {name}"),
        Expected::Struct(name) => write!(out, "オブジェクト {name}"),
        Expected::TupleStruct(name) => write!(out, "タプル構造体 {name}"),
        Expected::Enum(name) => write!(out, "列挙型 {name}"),
        Expected::Tuple(size) => write!(out, "要素 {size} 個のタプル"),
        Expected::Array(length) => write!(out, "長さ {length} の配列"),
        Expected::WithElements { of, count } => {
            self::expected(of, out);
            write!(out, "（要素 {count} 個）")
        }
        // A type's own words: data, quoted.
        Expected::Other(words) => write!(out, "「{words}」"),
    };
}

/// Names in backquotes, joined by `、`.
fn names(names: &[String], out: &mut String) {
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            out.push('、');
        }
        let _ = write!(out, "`{name}`");
    }
}

/// One problem with a value.
fn issue(kind: &IssueKind, out: &mut String) {
    match kind {
        IssueKind::Missing { field: None } => out.push_str("必須の項目がありません"),
        IssueKind::Missing { field: Some(field) } => {
            let _ = write!(out, "項目 `{field}` がありません");
        }
        IssueKind::UnknownField { field, expected } => {
            out.push_str("知らない項目");
            if let Some(field) = field {
                let _ = write!(out, " `{field}`");
            }
            match expected.as_deref() {
                None => out.push_str("です。外すか、スキーマと綴りを比べてください"),
                Some([]) => out.push_str("です。ここには項目がありません"),
                Some(expected) => {
                    out.push_str("です。使えるのは ");
                    names(expected, out);
                    out.push_str(" のどれかです");
                }
            }
        }
        IssueKind::NotAnObject { found } => {
            let _ = write!(
                out,
                "名前つき引数の JSON オブジェクトが必要ですが、{}でした",
                json_type(*found)
            );
        }
        IssueKind::WrongType {
            expected,
            found: given,
        } => {
            for (index, kind) in expected.iter().enumerate() {
                if index > 0 {
                    out.push('か');
                }
                out.push_str(json_type(*kind));
            }
            out.push_str("が必要ですが、");
            found(given, out);
            out.push_str("でした");
        }
        IssueKind::NotOneOf {
            allowed,
            found: given,
        } => {
            let _ = write!(out, "{} のどれかが必要ですが、", allowed.join("、"));
            found(given, out);
            out.push_str("でした");
        }
        IssueKind::NotConst {
            expected,
            found: given,
        } => {
            let _ = write!(out, "{expected} が必要ですが、{given} でした");
        }
        IssueKind::NoShapeMatches { found } => {
            let _ = write!(
                out,
                "この{}は許される形のどれにも合いません",
                json_type(*found)
            );
        }
        IssueKind::InvalidType {
            found: given,
            expected: wanted,
        } => {
            out.push_str("型が違います：");
            expected(wanted, out);
            out.push_str("が必要ですが、");
            found(given, out);
            out.push_str("でした");
        }
        IssueKind::InvalidValue {
            found: given,
            expected: wanted,
        } => {
            out.push_str("値が正しくありません：");
            expected(wanted, out);
            out.push_str("が必要ですが、");
            found(given, out);
            out.push_str("でした");
        }
        IssueKind::InvalidLength {
            length,
            expected: wanted,
        } => {
            let _ = write!(out, "長さが正しくありません：長さ {length} でしたが、");
            expected(wanted, out);
            out.push_str("が必要です");
        }
        IssueKind::UnknownVariant { variant, expected } => {
            let _ = write!(out, "知らない値 `{variant}` です");
            if expected.is_empty() {
                out.push_str("。ここに選べる値はありません");
            } else {
                out.push_str("。使えるのは ");
                names(expected, out);
                out.push_str(" のどれかです");
            }
        }
        IssueKind::DuplicateField { field } => {
            let _ = write!(out, "項目 `{field}` が二回あります");
        }
        IssueKind::NoVariantMatches { name } => {
            let _ = write!(out, "{name} のどの形にも合いません");
        }
        IssueKind::MoreNotListed => out.push_str("同じような問題がほかにもあります（省略）"),
        IssueKind::DoesNotFit => out.push_str("値がスキーマに合いません"),
        // The deserializer's own words: data, quoted.
        IssueKind::Other { message } => {
            let _ = write!(out, "条件に合いません：「{message}」");
        }
    }
}

/// Why a text is not JSON, and where.
fn syntax(error: &SyntaxError) -> String {
    let problem = match &error.problem {
        SyntaxProblem::UnfinishedList => "配列が終わる前に文章が終わりました",
        SyntaxProblem::UnfinishedObject => "オブジェクトが終わる前に文章が終わりました",
        SyntaxProblem::UnfinishedString => "文字列が終わる前に文章が終わりました",
        SyntaxProblem::UnfinishedValue => "値を書き終える前に文章が終わりました",
        SyntaxProblem::ExpectedColon => "ここには `:` が必要です",
        SyntaxProblem::ExpectedCommaOrListEnd => "ここには `,` か `]` が必要です",
        SyntaxProblem::ExpectedCommaOrObjectEnd => "ここには `,` か `}` が必要です",
        SyntaxProblem::ExpectedIdent => "ここには true、false、null のどれかが必要です",
        SyntaxProblem::ExpectedValue => "ここには値が必要です",
        SyntaxProblem::ExpectedDoubleQuote => "ここには `\"` が必要です",
        SyntaxProblem::InvalidEscape => "正しくないエスケープです",
        SyntaxProblem::InvalidNumber => "正しくない数値です",
        SyntaxProblem::NumberOutOfRange => "数値が範囲外です",
        SyntaxProblem::InvalidUnicodeCodePoint => "正しくない Unicode コードポイントです",
        SyntaxProblem::ControlCharacter => {
            "文字列にエスケープされていない制御文字（U+0000 から U+001F）があります"
        }
        SyntaxProblem::KeyMustBeAString => "オブジェクトのキーは文字列でなければなりません",
        SyntaxProblem::LoneLeadingSurrogate => "16 進エスケープに対のない上位サロゲートがあります",
        SyntaxProblem::TrailingComma => "最後に余分なカンマがあります",
        SyntaxProblem::TrailingCharacters => "JSON の値のあとに余分な文字があります",
        SyntaxProblem::UnexpectedEndOfHexEscape => "16 進エスケープが途中で終わっています",
        SyntaxProblem::RecursionLimitExceeded => "入れ子が深すぎます",
        // The parser's own words: data, quoted.
        SyntaxProblem::Other(message) => return format!("「{message}」"),
    };
    if error.line > 0 {
        format!("{} 行 {} 列目：{problem}", error.line, error.column)
    } else {
        problem.to_owned()
    }
}
