//! The texts the agent sends to the model (system prompt, error results, markers) and gives the caller.
//!
//! English by default; [`Chinese`] reproduces the reference loop's texts exactly. Implement [`Texts`]
//! for any other language.

use std::fmt::Write as _;
use std::time::Duration;

use crate::content::Part;
use crate::reasons::argument_issue::{
    ArgumentIssue, Expected, Found, IssueKind, JsonType, SyntaxError, SyntaxProblem,
};
use crate::reasons::not_run::NotRun;
use crate::reasons::output_problem::OutputProblem;
use crate::reasons::tool_error::{
    AgentFailure, Interruption, RemoteAgentProblem, RemoteProblem, RemoteServer, TaskEnd,
    ThreadProblem, ToolError,
};

mod chinese;
pub(crate) mod english;
#[cfg(test)]
pub(crate) mod tests;

pub use chinese::Chinese;
pub use english::English;

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
    fn not_run(&self, why: &NotRun) -> String;

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
    /// Anthropic Messages, say), so the model knows what it was not shown. The adapter's own
    /// account of why, which is for the developer, is logged (a `tracing` warning), not told to
    /// the model.
    fn part_not_shown(&self, part: &Part) -> String;

    /// The message that stands for the turns a context policy left out of a request, with their
    /// summary (see [`Shape::summary`](crate::context::Shape)).
    fn context_summary(&self, summary: &str) -> String;

    /// What a model is asked to summarize a conversation's oldest turns by (the
    /// [`Summarize`](crate::context::Summarize) context policy): the instruction, the last summary
    /// when there was one, and the turns left out as JSON messages. The reply is the summary
    /// alone.
    fn summary_request(&self, previous: Option<&str>, transcript: &str) -> String;

    /// What a tool result says in a request whose context policy left its content out (see
    /// [`Shape::shortened`](crate::context::Shape)): the result of call `call_id` had
    /// `characters` characters, and the model can read it with the tool named `tool`
    /// ([`RECALL_TOOL`](crate::context::RECALL_TOOL)).
    fn result_left_out(&self, characters: usize, call_id: &str, tool: &str) -> String;

    /// The description of the tool [`RECALL_TOOL`](crate::context::RECALL_TOOL), offered with a
    /// request that has results left out, and of its parameters: the call's id, and the character
    /// to read from (for a result read a page at a time).
    fn recall_tool(&self) -> [&'static str; 3];

    /// What ends a page of a left-out result read back with the tool `tool`
    /// ([`RECALL_TOOL`](crate::context::RECALL_TOOL)): it holds the characters `from` to `to` of
    /// the `total` of call `call_id`'s result, and (when `to` is short of `total`) how to read on.
    fn result_page(
        &self,
        from: usize,
        to: usize,
        total: usize,
        call_id: &str,
        tool: &str,
    ) -> String;

    /// The result of the call by which a model handed the conversation to the agent `agent`
    /// (see [`Handoff`](crate::Handoff)).
    fn handed_off(&self, agent: &str) -> String;

    /// What a model is asked to title a chat by, from its first exchange (the web endpoint's
    /// `ChatServer::title_by_model`): the instruction, the question and the answer, in one user
    /// message. The reply is the title alone.
    fn chat_title_prompt(&self, question: &str, answer: &str) -> String;

    /// What a judge's model is asked (a [`guard::Judge`](crate::guard::Judge), asked by the
    /// judge's own agent's texts): to check `what`, and to answer with `allow` (whether it may
    /// go on) and `reason` (why, in a sentence), the fields of its answer.
    ///
    /// Added in this version: a language of one's own words it too.
    fn judge_request(&self, what: JudgeSubject<'_>) -> String;

    /// The description of the one parameter (`input`) of an agent called as a tool: an
    /// [`AgentTool`](crate::AgentTool) (in the called agent's texts) and a remote A2A agent's
    /// tool. It says the called agent sees nothing of the conversation but this text.
    ///
    /// Added in this version: a language of one's own words it too.
    fn agent_input(&self) -> &str;

    /// The description of the `summary` parameter of a hand-off tool that passes a summary on
    /// ([`HandoffHistory::Summary`](crate::HandoffHistory::Summary), in the texts of the agent
    /// handed to): what the next agent needs to know of the conversation.
    ///
    /// Added in this version: a language of one's own words it too.
    fn handoff_summary(&self) -> &str;
}

/// What a judge checks, as [`Texts::judge_request`] words it: the place of the run and its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeSubject<'a> {
    /// The run's input: its text.
    Input(&'a str),
    /// A request to the model: the text of its newest message.
    Request(&'a str),
    /// A call about to run.
    Call {
        /// The tool called.
        tool: &'a str,
        /// Its arguments, as JSON.
        arguments: &'a str,
    },
    /// A tool's result, before the model reads it.
    Result {
        /// The tool that gave it.
        tool: &'a str,
        /// The result's text.
        content: &'a str,
    },
    /// The run's answer.
    Answer(&'a str),
}

/// The call a tool result's parts came from, as [`Texts::returned_parts`] names it: by what the
/// provider's wire format pairs a result with its call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReturnedBy<'a> {
    /// The call with this id (OpenAI Chat Completions).
    CallId(&'a str),
    /// The call of the tool with this name (Gemini, which pairs results with calls by name).
    Tool(&'a str),
}

/// Content a tool result names rather than shows: what an MCP client (`agent_mcp::McpClient`)
/// makes of a server's content that the model cannot read as it is. The URIs, names and media
/// types are the server's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// A duration for people, in every language's texts: `250 ms`, `1.5 s`, `30 s`.
pub(crate) fn human_duration(duration: Duration) -> String {
    if duration < Duration::from_secs(1) {
        format!("{} ms", duration.as_millis())
    } else {
        format!("{} s", (duration.as_secs_f64() * 10.0).round() / 10.0)
    }
}
