//! Every language's texts worded in it, every failure and refusal included.

use super::chinese::chinese_issue;
use super::*;
use crate::tool::arguments::classify;

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
            server: RemoteServer::Named("files".into()),
            problem: RemoteProblem::Refused {
                message: "没有这个工具".into(),
                code: -32602,
            },
        },
        ToolError::Remote {
            server: RemoteServer::Named("files".into()),
            problem: RemoteProblem::Unreachable,
        },
        ToolError::Remote {
            server: RemoteServer::Named("files".into()),
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
    let words = Chinese.part_not_shown(&audio);
    assert!(!english_run(&words), "{words}");
    assert_eq!(
        words,
        "[音频（audio/wav）未显示：当前模型服务不接受这类内容]"
    );
    for why in [
        NotRun::ApprovalDeclined,
        NotRun::ApprovalCancelled,
        NotRun::ApprovalNotAccepted,
        NotRun::ApprovalImpossible("wipe".into()),
        NotRun::ApprovalNotAsked("连接断了".into()),
    ] {
        let words = Chinese.not_run(&why);
        assert!(!english_run(&words), "{why:?} in Chinese: {words}");
        // The English words, as they were when the MCP server wrote them itself.
        assert!(English.not_run(&why).starts_with(['t', '`']), "{why:?}");
    }
}
