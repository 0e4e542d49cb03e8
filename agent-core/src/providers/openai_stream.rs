//! OpenAI Chat Completions streaming (`"stream": true`): Server-Sent Events of `chat.completion.chunk`
//! objects, ended by `data: [DONE]`. Tool-call fragments are assembled by index into whole calls,
//! exactly as the non-streaming reply would have them.
//!
//! Wire format: <https://platform.openai.com/docs/api-reference/chat-streaming>.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use eventsource_stream::{EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;

use crate::message::{AssistantMessage, ToolCall, Usage};
use crate::model::{ChatResponse, ModelError};
use crate::stream::StreamEvent;

/// The events of a streamed reply, read from a successful response.
pub(crate) fn events(
    response: reqwest::Response,
    request_timeout: Duration,
) -> impl Stream<Item = Result<StreamEvent, ModelError>> + Send {
    let state = State {
        source: Box::pin(response.bytes_stream().eventsource()),
        assembly: Assembly::default(),
        pending: VecDeque::new(),
        finished: false,
        request_timeout,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            if let Some(event) = state.pending.pop_front() {
                return Some((event, state));
            }
            if state.finished {
                return None;
            }
            match state.source.next().await {
                Some(Ok(event)) => state.take(&event.data),
                Some(Err(error)) => {
                    state.finished = true;
                    state.pending.push_back(Err(state.error(error)));
                }
                None => {
                    state.finished = true;
                    // Some compatible servers end without `[DONE]` once the reply has finished.
                    let event = if state.assembly.finish_reason.is_some() {
                        Ok(state.assembly.finish())
                    } else {
                        Err(ModelError::Stream {
                            message: "the stream was cut off before the reply was finished"
                                .to_owned(),
                        })
                    };
                    state.pending.push_back(event);
                }
            }
        }
    })
}

type Source = std::pin::Pin<
    Box<
        dyn Stream<Item = Result<eventsource_stream::Event, EventStreamError<reqwest::Error>>>
            + Send,
    >,
>;

struct State {
    source: Source,
    assembly: Assembly,
    pending: VecDeque<Result<StreamEvent, ModelError>>,
    finished: bool,
    request_timeout: Duration,
}

impl State {
    /// Takes one event's data: a chunk, `[DONE]`, or an error object.
    fn take(&mut self, data: &str) {
        if data.trim() == "[DONE]" {
            self.finished = true;
            self.pending
                .push_back(Ok(StreamEvent::Usage(self.assembly.usage)));
            self.pending.push_back(Ok(self.assembly.finish()));
            return;
        }
        let chunk: Chunk = match serde_json::from_str(data) {
            Ok(chunk) => chunk,
            Err(error) => {
                self.finished = true;
                self.pending.push_back(Err(ModelError::Decode {
                    message: format!("a stream chunk is not the documented shape: {error}"),
                    excerpt: data.chars().take(200).collect(),
                }));
                return;
            }
        };
        if let Some(error) = chunk.error {
            self.finished = true;
            let message = error
                .get("message")
                .and_then(|message| message.as_str())
                .map_or_else(|| error.to_string(), str::to_owned);
            self.pending.push_back(Err(ModelError::Stream { message }));
            return;
        }
        if let Some(usage) = chunk.usage {
            self.assembly.usage = Usage {
                input_tokens: usage.prompt_tokens,
                output_tokens: usage.completion_tokens,
            };
        }
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(text) = choice.delta.content.filter(|text| !text.is_empty()) {
                self.assembly.content.push_str(&text);
                self.pending.push_back(Ok(StreamEvent::TextDelta(text)));
            }
            for fragment in choice.delta.tool_calls.unwrap_or_default() {
                let call = self
                    .assembly
                    .calls
                    .entry(fragment.index)
                    .or_insert_with(|| ToolCall::new("", "", ""));
                let function = fragment.function.unwrap_or_default();
                let is_new = call.id.is_empty() && call.name.is_empty();
                if let Some(id) = fragment.id {
                    call.id.push_str(&id);
                }
                if let Some(name) = function.name {
                    call.name.push_str(&name);
                }
                if is_new && !(call.id.is_empty() && call.name.is_empty()) {
                    self.pending.push_back(Ok(StreamEvent::ToolCallStart {
                        index: fragment.index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                    }));
                }
                if let Some(arguments) =
                    function.arguments.filter(|arguments| !arguments.is_empty())
                {
                    call.arguments.push_str(&arguments);
                    self.pending.push_back(Ok(StreamEvent::ToolCallArguments {
                        index: fragment.index,
                        fragment: arguments,
                    }));
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.assembly.finish_reason = Some(reason);
            }
        }
    }

    fn error(&self, error: EventStreamError<reqwest::Error>) -> ModelError {
        match error {
            EventStreamError::Transport(error) if error.is_timeout() => ModelError::Timeout {
                after: self.request_timeout,
            },
            EventStreamError::Transport(error) => ModelError::Stream {
                message: format!("the connection broke: {error}"),
            },
            other => ModelError::Stream {
                message: format!("the stream is not valid server-sent events: {other}"),
            },
        }
    }
}

/// The reply so far.
#[derive(Default)]
struct Assembly {
    content: String,
    calls: BTreeMap<usize, ToolCall>,
    finish_reason: Option<String>,
    usage: Usage,
}

impl Assembly {
    fn finish(&mut self) -> StreamEvent {
        let calls = std::mem::take(&mut self.calls).into_values().collect();
        let message = AssistantMessage {
            content: std::mem::take(&mut self.content),
            tool_calls: calls,
        };
        let mut response = ChatResponse::new(message).with_usage(self.usage);
        response.finish_reason = self
            .finish_reason
            .as_deref()
            .map(super::openai::finish_reason);
        StreamEvent::Finished(response)
    }
}

#[derive(Deserialize)]
struct Chunk {
    #[serde(default)]
    choices: Vec<ChunkChoice>,
    usage: Option<ChunkUsage>,
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct ChunkChoice {
    #[serde(default)]
    index: usize,
    #[serde(default)]
    delta: Delta,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    content: Option<String>,
    tool_calls: Option<Vec<CallFragment>>,
}

#[derive(Deserialize)]
struct CallFragment {
    #[serde(default)]
    index: usize,
    id: Option<String>,
    function: Option<FunctionFragment>,
}

#[derive(Deserialize, Default)]
struct FunctionFragment {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}
