//! Every language's texts worded in it, every failure and refusal included.

use super::chinese::chinese_issue;
use super::*;

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

/// A value the model gave, shown as itself.
fn value(kind: JsonType, text: &str) -> Found {
    Found::Value {
        kind,
        text: text.to_owned(),
    }
}

/// Each shape of serde's messages with the kind it is sorted into (the sorting is checked against
/// these in `tool/arguments/serde_errors/corpus.rs`; here, their words).
pub(crate) fn serde_shapes() -> Vec<(&'static str, IssueKind)> {
    let names = |names: &[&str]| names.iter().map(|name| (*name).to_owned()).collect();
    let invalid_type = |found, expected| IssueKind::InvalidType { found, expected };
    let invalid_value = |found, expected| IssueKind::InvalidValue { found, expected };
    let integer = |name: &str| Expected::Integer(name.to_owned());
    vec![
        (
            "invalid type: integer `42`, expected a string",
            invalid_type(
                value(JsonType::Integer, "42"),
                Expected::Type(JsonType::String),
            ),
        ),
        (
            "invalid type: string \"x\", expected u32",
            invalid_type(value(JsonType::String, "\"x\""), integer("u32")),
        ),
        (
            "invalid type: null, expected a boolean",
            invalid_type(
                value(JsonType::Null, "null"),
                Expected::Type(JsonType::Boolean),
            ),
        ),
        (
            "invalid type: sequence, expected a map",
            invalid_type(
                Found::Kind(JsonType::Array),
                Expected::Type(JsonType::Object),
            ),
        ),
        (
            "invalid type: map, expected a sequence",
            invalid_type(
                Found::Kind(JsonType::Object),
                Expected::Type(JsonType::Array),
            ),
        ),
        (
            "invalid type: floating point `1.5`, expected i64",
            invalid_type(value(JsonType::Number, "1.5"), integer("i64")),
        ),
        (
            "invalid type: boolean `true`, expected f64",
            invalid_type(
                value(JsonType::Boolean, "true"),
                Expected::Float("f64".to_owned()),
            ),
        ),
        (
            "invalid type: string \"x\", expected struct Stop",
            invalid_type(
                value(JsonType::String, "\"x\""),
                Expected::Struct("Stop".to_owned()),
            ),
        ),
        (
            "invalid type: integer `3`, expected enum Unit",
            invalid_type(
                value(JsonType::Integer, "3"),
                Expected::Enum("Unit".to_owned()),
            ),
        ),
        (
            "invalid value: integer `300`, expected u8",
            invalid_value(value(JsonType::Integer, "300"), integer("u8")),
        ),
        (
            "invalid value: integer `-1`, expected usize",
            invalid_value(value(JsonType::Integer, "-1"), integer("usize")),
        ),
        (
            "invalid length 0, expected struct Stop with 2 elements",
            IssueKind::InvalidLength {
                length: 0,
                expected: Expected::WithElements {
                    of: Box::new(Expected::Struct("Stop".to_owned())),
                    count: 2,
                },
            },
        ),
        (
            "invalid length 0, expected tuple struct Pair with 1 element",
            IssueKind::InvalidLength {
                length: 0,
                expected: Expected::WithElements {
                    of: Box::new(Expected::TupleStruct("Pair".to_owned())),
                    count: 1,
                },
            },
        ),
        (
            "invalid length 1, expected a tuple of size 2",
            IssueKind::InvalidLength {
                length: 1,
                expected: Expected::Tuple(2),
            },
        ),
        (
            "invalid length 1, expected an array of length 3",
            IssueKind::InvalidLength {
                length: 1,
                expected: Expected::Array(3),
            },
        ),
        (
            "missing field `city`",
            IssueKind::Missing {
                field: Some("city".to_owned()),
            },
        ),
        (
            "unknown field `cty`, expected `city` or `unit`",
            IssueKind::UnknownField {
                field: Some("cty".to_owned()),
                expected: Some(names(&["city", "unit"])),
            },
        ),
        (
            "unknown field `cty`, expected one of `a`, `b`, `c`",
            IssueKind::UnknownField {
                field: Some("cty".to_owned()),
                expected: Some(names(&["a", "b", "c"])),
            },
        ),
        (
            "unknown field `cty`, there are no fields",
            IssueKind::UnknownField {
                field: Some("cty".to_owned()),
                expected: Some(Vec::new()),
            },
        ),
        (
            "unknown variant `kelvin`, expected `celsius` or `fahrenheit`",
            IssueKind::UnknownVariant {
                variant: "kelvin".to_owned(),
                expected: names(&["celsius", "fahrenheit"]),
            },
        ),
        (
            "unknown variant `x`, there are no variants",
            IssueKind::UnknownVariant {
                variant: "x".to_owned(),
                expected: Vec::new(),
            },
        ),
        (
            "duplicate field `city`",
            IssueKind::DuplicateField {
                field: "city".to_owned(),
            },
        ),
        (
            "data did not match any variant of untagged enum Either",
            IssueKind::NoVariantMatches {
                name: "Either".to_owned(),
            },
        ),
    ]
}

#[test]
fn serdes_shapes_are_worded_in_english_as_serde_words_them() {
    for (message, kind) in serde_shapes() {
        assert_eq!(kind.to_string(), message);
    }
}

/// Every kind of argument problem, as the engine finds them.
fn every_issue() -> Vec<IssueKind> {
    let mut kinds: Vec<IssueKind> = serde_shapes().into_iter().map(|(_, kind)| kind).collect();
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
    let out_of_range = IssueKind::InvalidValue {
        found: Found::Value {
            kind: JsonType::Integer,
            text: "300".into(),
        },
        expected: Expected::Integer("u8".into()),
    };
    assert_eq!(
        out_of_range.to_string(),
        "invalid value: integer `300`, expected u8"
    );
    chinese_issue(&out_of_range, &mut words);
    assert_eq!(words, "取值无效：应为整数 u8（0 到 255），实际为 300");
    // A message of no known shape is the type's own words, quoted as data.
    let mut words = String::new();
    let other = IssueKind::Other {
        message: "not a date".into(),
    };
    chinese_issue(&other, &mut words);
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
        English.part_not_shown(&Part::audio("audio/wav", b"RIFF")),
        "[audio (audio/wav) not shown: the model service cannot take it]"
    );
}

/// Which kind of failure an error is, by a match with no wildcard arm: a kind added to
/// [`ToolError`] is a compile error here until [`every_tool_error`] has one of it.
fn tool_error_kind(error: &ToolError) -> usize {
    match error {
        ToolError::UnknownTool { .. } => 0,
        ToolError::InvalidJson { .. } => 1,
        ToolError::InvalidArguments { .. } => 2,
        ToolError::Failed { .. } => 3,
        ToolError::Panicked { .. } => 4,
        ToolError::TimedOut { .. } => 5,
        ToolError::Abandoned { .. } => 6,
        ToolError::Interrupted { .. } => 7,
        ToolError::NotRun { .. } => 8,
        ToolError::Retry { .. } => 9,
        ToolError::AnswerRejected { .. } => 10,
        ToolError::OutcomeUnknown { .. } => 11,
        ToolError::Journal { .. } => 12,
        ToolError::RunByCaller { .. } => 13,
        ToolError::Thread { .. } => 14,
        ToolError::Unserializable { .. } => 15,
        ToolError::Remote { .. } => 16,
        ToolError::Withheld { .. } => 17,
        ToolError::AgentFailed { .. } => 18,
        ToolError::RemoteAgent { .. } => 19,
    }
}

/// How many kinds [`tool_error_kind`] tells apart.
const TOOL_ERROR_KINDS: usize = 20;

/// Why a call was not run, by a match with no wildcard arm: a reason added to [`NotRun`] is a
/// compile error here until [`every_not_run`] has it.
fn not_run_kind(why: &NotRun) -> usize {
    match why {
        NotRun::Skipped(_) => 0,
        NotRun::Denied(_) => 1,
        NotRun::NoApprover => 2,
        NotRun::ToolCallLimit(_) => 3,
        NotRun::TimeLimit => 4,
        NotRun::Cancelled => 5,
        NotRun::AnswerGiven => 6,
        NotRun::RunEnded => 7,
        NotRun::CutOff => 8,
        NotRun::CannotWait => 9,
        NotRun::ApprovalDeclined => 10,
        NotRun::ApprovalCancelled => 11,
        NotRun::ApprovalNotAccepted => 12,
        NotRun::ApprovalImpossible(_) => 13,
        NotRun::ApprovalNotAsked(_) => 14,
        NotRun::BudgetSpent => 15,
        NotRun::Guarded { .. } => 16,
        NotRun::Tripped => 17,
    }
}

/// How many reasons [`not_run_kind`] tells apart.
const NOT_RUN_KINDS: usize = 18;

/// Every reason a call is not run (the data of each in Chinese, as a Chinese run's would be).
fn every_not_run() -> Vec<NotRun> {
    vec![
        NotRun::Skipped("今天不用查".into()),
        NotRun::Denied(Some("不行，留着".into())),
        NotRun::Denied(None),
        NotRun::NoApprover,
        NotRun::ToolCallLimit(3),
        NotRun::BudgetSpent,
        NotRun::TimeLimit,
        NotRun::Cancelled,
        NotRun::Tripped,
        NotRun::AnswerGiven,
        NotRun::RunEnded,
        NotRun::CutOff,
        NotRun::CannotWait,
        NotRun::ApprovalDeclined,
        NotRun::ApprovalCancelled,
        NotRun::ApprovalNotAccepted,
        NotRun::ApprovalImpossible("wipe".into()),
        NotRun::ApprovalNotAsked("连接断了".into()),
        NotRun::Guarded {
            guard: "隐私".into(),
            reason: "不能把地址发出去".into(),
        },
    ]
}

/// Every kind of failure, each of its inner reasons too.
fn every_tool_error() -> Vec<ToolError> {
    let mut errors = vec![
        ToolError::UnknownTool {
            name: "天气".into(),
            available: vec!["搜索".to_owned()].into(),
        },
        ToolError::InvalidJson {
            error: SyntaxError {
                problem: SyntaxProblem::UnfinishedValue,
                line: 1,
                column: 9,
            },
        },
        ToolError::InvalidArguments {
            issues: vec![ArgumentIssue::new(
                "城市",
                IssueKind::Missing { field: None },
            )],
        },
        ToolError::failed("今天不想干活"),
        ToolError::Panicked {
            message: Some("炸了".into()),
        },
        ToolError::Panicked { message: None },
        ToolError::TimedOut {
            after: std::time::Duration::from_millis(250),
        },
        ToolError::Abandoned {
            after: std::time::Duration::from_secs(30),
        },
        ToolError::Interrupted {
            by: Interruption::Cancelled,
        },
        ToolError::Interrupted {
            by: Interruption::TimeLimit,
        },
        ToolError::Interrupted {
            by: Interruption::Tripped,
        },
        ToolError::Interrupted {
            by: Interruption::Unrecorded,
        },
        ToolError::retry("房间号是 R-101 这样的"),
        ToolError::AnswerRejected {
            correction: "答案未被接受：太短。请重试。".into(),
        },
        ToolError::OutcomeUnknown {
            tool: "付款".into(),
        },
        ToolError::Journal {
            message: "调用已被终止".into(),
        },
        ToolError::Withheld {
            guard: "隐私".into(),
            reason: "页面里有指令".into(),
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
    ];
    for server in [
        RemoteServer::Named("files".into()),
        RemoteServer::Program("files-server".into()),
        RemoteServer::Url("http://127.0.0.1:8000/mcp".into()),
        RemoteServer::Stream,
    ] {
        for problem in [
            RemoteProblem::Refused {
                message: "没有这个工具".into(),
                code: -32602,
            },
            RemoteProblem::Unreachable,
            RemoteProblem::Failed {
                message: "超时".into(),
            },
        ] {
            errors.push(ToolError::Remote {
                server: server.clone(),
                problem,
            });
        }
    }
    for why in [
        AgentFailure::Model {
            step: 2,
            message: String::new(),
        },
        AgentFailure::Model {
            step: 2,
            message: "服务器过载".into(),
        },
        AgentFailure::Output { tries: 3 },
        AgentFailure::NoOutput,
        AgentFailure::Tripped {
            guard: "注入".into(),
        },
        AgentFailure::LethalMix,
        AgentFailure::Session,
        AgentFailure::Resume,
        AgentFailure::Dropped,
    ] {
        errors.push(ToolError::AgentFailed {
            agent: "研究员".into(),
            why,
        });
    }
    let states = [
        TaskEnd::WaitsForInput,
        TaskEnd::Cancelled,
        TaskEnd::Rejected,
        TaskEnd::Failed,
    ];
    let tasks = states.into_iter().flat_map(|state| {
        ["", "没有找到航班"].map(|message| RemoteAgentProblem::Task {
            state,
            message: message.into(),
        })
    });
    let problems = [
        RemoteAgentProblem::Unreachable,
        RemoteAgentProblem::Garbled,
        RemoteAgentProblem::Refused {
            message: "没有这个方法".into(),
            code: -32601,
        },
    ];
    for problem in problems.into_iter().chain(tasks) {
        errors.push(ToolError::RemoteAgent {
            agent: "订票".into(),
            problem,
        });
    }
    errors.extend(
        every_not_run()
            .into_iter()
            .map(|why| ToolError::NotRun { why }),
    );
    errors
}

/// Every subject a judge is asked about.
fn every_judge_subject() -> [JudgeSubject<'static>; 5] {
    [
        JudgeSubject::Input("今天天气如何"),
        JudgeSubject::Request("今天天气如何"),
        JudgeSubject::Call {
            tool: "天气",
            arguments: r#"{"城市":"北京"}"#,
        },
        JudgeSubject::Result {
            tool: "天气",
            content: "小雨",
        },
        JudgeSubject::Answer("要带伞"),
    ]
}

#[test]
fn what_other_agents_and_judges_read_is_worded_in_chinese() {
    for what in every_judge_subject() {
        let words = Chinese.judge_request(what);
        assert!(!english_run(&words), "{what:?} in Chinese: {words}");
        assert!(words.contains("`allow`") && words.contains("`reason`"));
        let english = English.judge_request(what);
        assert!(english.contains("`allow`") && english.contains("`reason`"));
    }
    for words in [Chinese.agent_input(), Chinese.handoff_summary()] {
        assert!(!english_run(words), "{words}");
    }
}

/// Which kind of problem an issue is, by a match with no wildcard arm: a kind added to
/// [`IssueKind`] is a compile error here until [`every_issue`] has one of it (all but `Other`,
/// which is data).
fn issue_kind(kind: &IssueKind) -> usize {
    match kind {
        IssueKind::Missing { .. } => 0,
        IssueKind::UnknownField { .. } => 1,
        IssueKind::NotAnObject { .. } => 2,
        IssueKind::WrongType { .. } => 3,
        IssueKind::NotOneOf { .. } => 4,
        IssueKind::NotConst { .. } => 5,
        IssueKind::NoShapeMatches { .. } => 6,
        IssueKind::InvalidType { .. } => 7,
        IssueKind::InvalidValue { .. } => 8,
        IssueKind::InvalidLength { .. } => 9,
        IssueKind::UnknownVariant { .. } => 10,
        IssueKind::DuplicateField { .. } => 11,
        IssueKind::NoVariantMatches { .. } => 12,
        IssueKind::MoreNotListed => 13,
        IssueKind::DoesNotFit => 14,
        IssueKind::Other { .. } => 15,
    }
}

#[test]
fn the_lists_of_reasons_have_every_kind() {
    let mut kinds: Vec<usize> = every_issue().iter().map(issue_kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, (0..15).collect::<Vec<_>>());
    let mut kinds: Vec<usize> = every_tool_error().iter().map(tool_error_kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, (0..TOOL_ERROR_KINDS).collect::<Vec<_>>());
    let mut kinds: Vec<usize> = every_not_run().iter().map(not_run_kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    assert_eq!(kinds, (0..NOT_RUN_KINDS).collect::<Vec<_>>());
}

#[test]
fn every_failure_and_refusal_is_worded_in_chinese() {
    for error in every_tool_error() {
        let words = Chinese.tool_error(&error);
        assert!(!english_run(&words), "{error:?} in Chinese: {words}");
        // English's words are the error's `Display`, after its lead-in.
        let english = English.tool_error(&error);
        assert!(
            english.ends_with(&error.to_string()),
            "{error:?}: {english}"
        );
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
    let words = Chinese.part_not_shown(&audio);
    assert!(!english_run(&words), "{words}");
    assert_eq!(
        words,
        "[音频（audio/wav）未显示：当前模型服务不接受这类内容]"
    );
    for why in every_not_run() {
        let words = Chinese.not_run(&why);
        assert!(!english_run(&words), "{why:?} in Chinese: {words}");
        assert_eq!(English.not_run(&why), why.to_string());
    }
}
