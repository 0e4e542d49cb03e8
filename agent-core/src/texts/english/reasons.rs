//! English words for every reason the model is told of: each written piece by piece into any
//! `fmt::Write` (a `String` for the model, a `Formatter` for `Display`), and the reasons'
//! `Display`, which is these words. Where a problem comes from serde or the JSON parser, the words
//! are theirs, so an English model reads what serde said.

use std::fmt::{self, Write};

use crate::reasons::argument_issue::{
    ArgumentIssue, Expected, Found, IssueKind, JsonType, SyntaxError, SyntaxProblem,
};
use crate::reasons::not_run::NotRun;
use crate::reasons::output_problem::OutputProblem;
use crate::reasons::tool_error::{
    AgentFailure, Interruption, RemoteAgentProblem, RemoteProblem, RemoteServer, TaskEnd,
    ThreadProblem, ToolError,
};
use crate::texts::human_duration;

/// What went wrong in a tool call, in English (after the lead-in "Error: ").
pub(crate) fn tool_error(error: &ToolError, f: &mut impl Write) -> fmt::Result {
    match error {
        ToolError::UnknownTool { name, available } => unknown_tool(name, available, f),
        ToolError::InvalidJson { error } => {
            f.write_str("the arguments are not valid JSON: ")?;
            syntax_error(error, f)
        }
        ToolError::InvalidArguments { issues } => {
            f.write_str("invalid arguments: ")?;
            f.write_str(&issue_list(issues, "arguments"))
        }
        ToolError::Failed { message } => f.write_str(message),
        ToolError::Panicked {
            message: Some(message),
        } => write!(f, "the tool panicked: {message}"),
        ToolError::Panicked { message: None } => {
            f.write_str("the tool panicked: a panic without a message")
        }
        ToolError::TimedOut { after } => write!(
            f,
            "the tool did not finish within {} and was cancelled",
            human_duration(*after)
        ),
        ToolError::Abandoned { after } => write!(
            f,
            "the tool did not finish within {} and is no longer waited for; it may still \
             complete its work, so check before calling it again",
            human_duration(*after)
        ),
        ToolError::Interrupted {
            by: Interruption::Unrecorded,
        } => f.write_str(
            "the run stopped before this call's result was recorded: the call may have started \
             and had its effect, or not have run at all, so check before calling it again",
        ),
        ToolError::Interrupted { by } => {
            let when = match by {
                Interruption::Cancelled => "when the run was cancelled",
                Interruption::TimeLimit => "when the run's time limit passed",
                Interruption::Tripped => "when a guard stopped the run",
                Interruption::Unrecorded => "before its result was recorded",
            };
            write!(
                f,
                "the call was interrupted {when}: it had started and may have had its effect, so \
                 check before calling it again"
            )
        }
        ToolError::NotRun { why } => {
            f.write_str("the call was not run: ")?;
            not_run(why, f)
        }
        ToolError::Retry { message } => {
            write!(f, "{message}; correct this and call the tool again")
        }
        ToolError::AnswerRejected { correction } => f.write_str(correction),
        ToolError::OutcomeUnknown { tool } => write!(
            f,
            "the outcome of this call of `{tool}` is unknown: the service stopped while it ran. \
             It was not run again, so that its effect cannot happen twice; check whether it took \
             effect before calling it again"
        ),
        ToolError::Journal { message } => write!(
            f,
            "the durable run's journal could not record this call: {message}"
        ),
        ToolError::RunByCaller { tool } => {
            write!(f, "`{tool}` is run by the application, not by the agent")
        }
        ToolError::Withheld { guard, reason } => write!(
            f,
            "the call ran, and the guard `{guard}` withheld its result: {reason}"
        ),
        ToolError::Thread { problem } => match problem {
            ThreadProblem::NotStarted { message } => write!(
                f,
                "the tool could not be started on a thread of its own: {message}"
            ),
            ThreadProblem::RuntimeShutDown => {
                f.write_str("the tool was not run: its runtime shut down first")
            }
            ThreadProblem::EndedWithoutResult => {
                f.write_str("the tool's thread ended without a result")
            }
            ThreadProblem::ResultTaken => f.write_str("the tool's result was already taken"),
        },
        ToolError::Unserializable { message } => {
            write!(f, "the tool's result could not be serialized: {message}")
        }
        ToolError::Remote { server, problem } => {
            match problem {
                RemoteProblem::Refused { .. } | RemoteProblem::Unreachable => {
                    f.write_str("the MCP server ")?
                }
                RemoteProblem::Failed { .. } => f.write_str("the call to the MCP server ")?,
            }
            remote_server(server, f)?;
            match problem {
                RemoteProblem::Refused { message, code } => {
                    write!(f, " refused the call: {message} (error {code})")
                }
                RemoteProblem::Unreachable => {
                    f.write_str(" cannot be reached: it stopped or closed the connection")
                }
                RemoteProblem::Failed { message } => write!(f, " failed: {message}"),
            }
        }
        ToolError::AgentFailed { agent, why } => {
            write!(f, "the agent `{agent}` could not finish: ")?;
            agent_failure(why, f)
        }
        ToolError::RemoteAgent { agent, problem } => remote_agent(agent, problem, f),
    }
}

/// How an agent called as a tool failed.
fn agent_failure(why: &AgentFailure, f: &mut impl Write) -> fmt::Result {
    match why {
        AgentFailure::Model { step, message } if message.is_empty() => {
            write!(f, "its model failed at step {step}")
        }
        AgentFailure::Model { step, message } => {
            write!(f, "its model failed at step {step}: {message}")
        }
        AgentFailure::Output { tries } => {
            write!(f, "it gave no acceptable answer in {tries} tries")
        }
        AgentFailure::NoOutput => f.write_str("it stopped before it gave its answer"),
        AgentFailure::Tripped { guard } => write!(f, "the guard `{guard}` stopped it"),
        AgentFailure::LethalMix => f.write_str(
            "its tools could read untrusted content and private data and send data out, so it \
             did not start",
        ),
        AgentFailure::Session => f.write_str("its conversation could not be loaded or saved"),
        AgentFailure::Resume => f.write_str("its paused run could not be resumed"),
        AgentFailure::Dropped => f.write_str("its run was dropped before it ended"),
    }
}

/// Why a remote agent did not answer.
fn remote_agent(agent: &str, problem: &RemoteAgentProblem, f: &mut impl Write) -> fmt::Result {
    match problem {
        RemoteAgentProblem::Unreachable => {
            write!(f, "the remote agent `{agent}` could not be reached")
        }
        RemoteAgentProblem::Garbled => write!(
            f,
            "the remote agent `{agent}` answered with something its protocol does not allow"
        ),
        RemoteAgentProblem::Refused { message, code } => write!(
            f,
            "the remote agent `{agent}` refused the request: {message} (error {code})"
        ),
        RemoteAgentProblem::Task { state, message } => {
            let how = match state {
                TaskEnd::WaitsForInput => "waits for input",
                TaskEnd::Cancelled => "was cancelled",
                TaskEnd::Rejected => "was refused",
                TaskEnd::Failed => "failed",
            };
            write!(f, "the task of the remote agent `{agent}` {how}")?;
            match message.is_empty() {
                true => Ok(()),
                false => write!(f, ": {message}"),
            }
        }
    }
}

/// A call of `name`, which no tool has, naming the tools there are.
fn unknown_tool(name: &str, available: &[String], f: &mut impl Write) -> fmt::Result {
    f.write_str("there is no tool named `")?;
    f.write_str(name)?;
    let Some((first, others)) = available.split_first() else {
        return f.write_str("`; no tools are available");
    };
    f.write_str("`; available tools: ")?;
    f.write_str(first)?;
    for tool in others {
        f.write_str(", ")?;
        f.write_str(tool)?;
    }
    Ok(())
}

/// An MCP server: its own name or program in backquotes, else how it was reached.
fn remote_server(server: &RemoteServer, f: &mut impl Write) -> fmt::Result {
    match server {
        RemoteServer::Named(name) | RemoteServer::Program(name) => write!(f, "`{name}`"),
        RemoteServer::Url(url) => write!(f, "at {url}"),
        RemoteServer::Stream => f.write_str("over a stream"),
    }
}

/// Why a call was not run.
pub(crate) fn not_run(why: &NotRun, f: &mut impl Write) -> fmt::Result {
    match why {
        NotRun::Skipped(reason) => f.write_str(reason),
        NotRun::Denied(Some(reason)) => write!(f, "the user did not approve this call: {reason}"),
        NotRun::Denied(None) => f.write_str("the user did not approve this call"),
        NotRun::NoApprover => {
            f.write_str("this tool needs approval and no one is there to approve it")
        }
        NotRun::ToolCallLimit(limit) => {
            write!(f, "the run's limit of {limit} tool calls is reached")
        }
        NotRun::BudgetSpent => f.write_str(
            "the budget shared by this run and the agents it works with has no tool calls left",
        ),
        NotRun::TimeLimit => f.write_str("the run's time limit passed before this call started"),
        NotRun::Cancelled => f.write_str("the run was cancelled before this call started"),
        NotRun::Tripped => f.write_str("a guard stopped the run before this call started"),
        NotRun::AnswerGiven => f.write_str(
            "the final answer was given in the same reply, so the run ended without this call",
        ),
        NotRun::RunEnded => f.write_str("the run ended before this call could run"),
        NotRun::CutOff => f.write_str(
            "your reply was cut off at the output token limit before this call's arguments were \
             complete; call the tool again with shorter arguments, or split the work into \
             smaller calls",
        ),
        NotRun::CannotWait => f.write_str(
            "this call must wait for a person or for the caller, and this run cannot wait",
        ),
        NotRun::ApprovalDeclined => f.write_str("the user declined this call"),
        NotRun::ApprovalCancelled => f.write_str("the user cancelled this call"),
        NotRun::ApprovalNotAccepted => f.write_str("the user did not accept this call"),
        NotRun::ApprovalImpossible(tool) => write!(
            f,
            "`{tool}` needs the user's approval, and approval was not possible: this client \
             cannot ask the user (it does not support elicitation)"
        ),
        NotRun::ApprovalNotAsked(error) => {
            write!(f, "the user's approval could not be asked: {error}")
        }
        NotRun::Guarded { guard, reason } => {
            write!(f, "the guard `{guard}` did not let this call run: {reason}")
        }
    }
}

/// Why a typed run's answer was not taken.
pub(crate) fn output_problem(problem: &OutputProblem, f: &mut impl Write) -> fmt::Result {
    match problem {
        OutputProblem::InvalidJson { error } => {
            f.write_str("the answer is not valid JSON: ")?;
            syntax_error(error, f)
        }
        OutputProblem::Invalid { issues } => {
            f.write_str("the answer does not fit the schema: ")?;
            f.write_str(&issue_list(issues, "answer"))
        }
        OutputProblem::Rejected { message } => {
            write!(f, "the answer was not accepted: {message}")
        }
        OutputProblem::NotGiven { tool } => write!(
            f,
            "the final answer must be given by calling the `{tool}` tool, not as text"
        ),
        OutputProblem::CutOff => f.write_str(
            "the answer was cut off at the output token limit before it was complete; give it \
             again, shorter",
        ),
        OutputProblem::Guarded { guard, feedback } => {
            write!(
                f,
                "the guard `{guard}` did not accept the answer: {feedback}"
            )
        }
    }
}

/// Issues as `path: problem`, joined by `; `; `whole` names an issue with no path.
fn issue_list(issues: &[ArgumentIssue], whole: &str) -> String {
    ArgumentIssue::render(issues, whole, ": ", "; ", issue_words)
}

/// One problem with a value, into a `String` (which cannot fail).
pub(crate) fn issue_words(kind: &IssueKind, out: &mut String) {
    let _ = issue(kind, out);
}

/// One problem with a value.
pub(crate) fn issue(kind: &IssueKind, f: &mut impl Write) -> fmt::Result {
    match kind {
        IssueKind::Missing { field: None } => f.write_str("missing required field"),
        IssueKind::Missing { field: Some(field) } => write!(f, "missing field `{field}`"),
        IssueKind::UnknownField {
            field: None,
            expected: None,
        } => f.write_str("unknown field; leave it out or check its spelling against the schema"),
        IssueKind::UnknownField {
            field: None,
            expected: Some(names),
        } if names.is_empty() => f.write_str("unknown field: this tool takes no arguments"),
        IssueKind::UnknownField {
            field: None,
            expected: Some(names),
        } => {
            f.write_str("unknown field, expected one of ")?;
            backquoted(names, f)
        }
        IssueKind::UnknownField {
            field: Some(field),
            expected,
        } => match expected.as_deref() {
            None => write!(f, "unknown field `{field}`"),
            Some([]) => write!(f, "unknown field `{field}`, there are no fields"),
            Some(names) => {
                write!(f, "unknown field `{field}`, expected ")?;
                serde_one_of(names, f)
            }
        },
        IssueKind::NotAnObject { found } => {
            let found = match found {
                // Any number, whole or not.
                JsonType::Integer => JsonType::Number,
                other => *other,
            };
            write!(
                f,
                "expected a JSON object of named arguments, got {}",
                json_type(found)
            )
        }
        IssueKind::WrongType { expected, found } => {
            f.write_str("expected ")?;
            for (index, kind) in expected.iter().enumerate() {
                if index > 0 {
                    f.write_str(" or ")?;
                }
                f.write_str(json_type(*kind))?;
            }
            f.write_str(", got ")?;
            schema_found(found, f)
        }
        IssueKind::NotOneOf { allowed, found } => {
            write!(f, "expected one of {}, got ", allowed.join(", "))?;
            schema_found(found, f)
        }
        IssueKind::NotConst { expected, found } => write!(f, "expected {expected}, got {found}"),
        IssueKind::NoShapeMatches { found } => write!(
            f,
            "{} does not match any of the allowed shapes",
            json_type(*found)
        ),
        IssueKind::InvalidType { found, expected } => {
            f.write_str("invalid type: ")?;
            serde_found(found, f)?;
            f.write_str(", expected ")?;
            expected_words(expected, f)
        }
        IssueKind::InvalidValue { found, expected } => {
            f.write_str("invalid value: ")?;
            serde_found(found, f)?;
            f.write_str(", expected ")?;
            expected_words(expected, f)
        }
        IssueKind::InvalidLength { length, expected } => {
            write!(f, "invalid length {length}, expected ")?;
            expected_words(expected, f)
        }
        IssueKind::UnknownVariant { variant, expected } => {
            if expected.is_empty() {
                write!(f, "unknown variant `{variant}`, there are no variants")
            } else {
                write!(f, "unknown variant `{variant}`, expected ")?;
                serde_one_of(expected, f)
            }
        }
        IssueKind::DuplicateField { field } => write!(f, "duplicate field `{field}`"),
        IssueKind::NoVariantMatches { name } => {
            write!(f, "data did not match any variant of untagged enum {name}")
        }
        IssueKind::MoreNotListed => f.write_str("more problems like these, not listed"),
        IssueKind::DoesNotFit => f.write_str("the value does not fit the schema"),
        IssueKind::Other { message } => f.write_str(message),
    }
}

/// A value of a JSON type: `a string`, `an integer`, `null`.
fn json_type(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

/// A value as a schema problem shows it: `"x"`, `2`, `an array`.
fn schema_found(found: &Found, f: &mut impl Write) -> fmt::Result {
    match found {
        Found::Value { text, .. } | Found::Other(text) => f.write_str(text),
        Found::Kind(kind) => f.write_str(json_type(*kind)),
    }
}

/// A value as serde shows it: ``integer `2` ``, `string "x"`, `sequence`.
fn serde_found(found: &Found, f: &mut impl Write) -> fmt::Result {
    match found {
        Found::Value {
            kind: JsonType::Null,
            ..
        } => f.write_str("null"),
        Found::Value {
            kind: JsonType::String,
            text,
        } => write!(f, "string {text}"),
        Found::Value { kind, text } => write!(f, "{} `{text}`", serde_kind(*kind)),
        Found::Kind(kind) => f.write_str(serde_kind(*kind)),
        Found::Other(text) => f.write_str(text),
    }
}

/// serde's word for a kind of value.
fn serde_kind(kind: JsonType) -> &'static str {
    match kind {
        JsonType::Null => "null",
        JsonType::Boolean => "boolean",
        JsonType::Integer => "integer",
        JsonType::Number => "floating point",
        JsonType::String => "string",
        JsonType::Array => "sequence",
        JsonType::Object => "map",
    }
}

/// What a type takes, as serde says it.
fn expected_words(expected: &Expected, f: &mut impl Write) -> fmt::Result {
    match expected {
        Expected::Type(JsonType::Null) => f.write_str("unit"),
        Expected::Type(JsonType::Array) => f.write_str("a sequence"),
        Expected::Type(JsonType::Object) => f.write_str("a map"),
        Expected::Type(kind) => f.write_str(json_type(*kind)),
        Expected::Integer(name) | Expected::Float(name) | Expected::Other(name) => {
            f.write_str(name)
        }
        Expected::Struct(name) => write!(f, "struct {name}"),
        Expected::TupleStruct(name) => write!(f, "tuple struct {name}"),
        Expected::Enum(name) => write!(f, "enum {name}"),
        Expected::Tuple(size) => write!(f, "a tuple of size {size}"),
        Expected::Array(length) => write!(f, "an array of length {length}"),
        Expected::WithElements { of, count } => {
            expected_words(of, f)?;
            match count {
                1 => f.write_str(" with 1 element"),
                count => write!(f, " with {count} elements"),
            }
        }
    }
}

/// Names in backquotes as serde lists them: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
fn serde_one_of(names: &[String], f: &mut impl Write) -> fmt::Result {
    match names {
        [one] => write!(f, "`{one}`"),
        [first, second] => write!(f, "`{first}` or `{second}`"),
        names => {
            f.write_str("one of ")?;
            backquoted(names, f)
        }
    }
}

/// Names in backquotes, joined by commas.
fn backquoted(names: &[String], f: &mut impl Write) -> fmt::Result {
    for (index, name) in names.iter().enumerate() {
        if index > 0 {
            f.write_str(", ")?;
        }
        write!(f, "`{name}`")?;
    }
    Ok(())
}

/// Why a text is not JSON: the JSON parser's own words.
pub(crate) fn syntax_words(problem: &SyntaxProblem) -> &str {
    match problem {
        SyntaxProblem::UnfinishedList => "EOF while parsing a list",
        SyntaxProblem::UnfinishedObject => "EOF while parsing an object",
        SyntaxProblem::UnfinishedString => "EOF while parsing a string",
        SyntaxProblem::UnfinishedValue => "EOF while parsing a value",
        SyntaxProblem::ExpectedColon => "expected `:`",
        SyntaxProblem::ExpectedCommaOrListEnd => "expected `,` or `]`",
        SyntaxProblem::ExpectedCommaOrObjectEnd => "expected `,` or `}`",
        SyntaxProblem::ExpectedIdent => "expected ident",
        SyntaxProblem::ExpectedValue => "expected value",
        SyntaxProblem::ExpectedDoubleQuote => "expected `\"`",
        SyntaxProblem::InvalidEscape => "invalid escape",
        SyntaxProblem::InvalidNumber => "invalid number",
        SyntaxProblem::NumberOutOfRange => "number out of range",
        SyntaxProblem::InvalidUnicodeCodePoint => "invalid unicode code point",
        SyntaxProblem::ControlCharacter => {
            "control character (\\u0000-\\u001F) found while parsing a string"
        }
        SyntaxProblem::KeyMustBeAString => "key must be a string",
        SyntaxProblem::LoneLeadingSurrogate => "lone leading surrogate in hex escape",
        SyntaxProblem::TrailingComma => "trailing comma",
        SyntaxProblem::TrailingCharacters => "trailing characters",
        SyntaxProblem::UnexpectedEndOfHexEscape => "unexpected end of hex escape",
        SyntaxProblem::RecursionLimitExceeded => "recursion limit exceeded",
        SyntaxProblem::Other(message) => message,
    }
}

/// Why a text is not JSON, and where: `EOF while parsing a value at line 1 column 8`.
fn syntax_error(error: &SyntaxError, f: &mut impl Write) -> fmt::Result {
    f.write_str(syntax_words(&error.problem))?;
    if error.line > 0 {
        write!(f, " at line {} column {}", error.line, error.column)?;
    }
    Ok(())
}

/// The English words the model reads after "Error: ".
impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        tool_error(self, f)
    }
}

/// The English words for why a call was not run.
impl fmt::Display for NotRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        not_run(self, f)
    }
}

/// The English words for why an answer was not taken.
impl fmt::Display for OutputProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        output_problem(self, f)
    }
}

/// The English words for the problem (serde's, where it comes from serde).
impl fmt::Display for IssueKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        issue(self, f)
    }
}

/// `path: problem` in English, or the problem alone when it concerns the whole.
impl fmt::Display for ArgumentIssue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        issue(&self.kind, f)
    }
}

/// What a type takes, as serde says it.
impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        expected_words(self, f)
    }
}

/// The JSON parser's own English words: `EOF while parsing a value at line 1 column 8`.
impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        syntax_error(self, f)
    }
}

/// A value of the type: `a string`, `an integer`, `null`.
impl fmt::Display for JsonType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(json_type(*self))
    }
}

/// How the model is told of the server: `` `name` ``, `at https://…`, `over a stream`.
impl fmt::Display for RemoteServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        remote_server(self, f)
    }
}
