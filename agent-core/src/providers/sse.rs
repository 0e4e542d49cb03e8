//! Server-sent events into [`StreamEvent`]s: the driver every streaming adapter shares. Each adapter
//! gives a [`Reassembler`] that reads its provider's events and builds the reply.

use std::collections::VecDeque;
use std::future::Future;
use std::time::Duration;

use eventsource_stream::{Event, EventStreamError, Eventsource};
use futures_util::{Stream, StreamExt};

use crate::model::ModelError;
use crate::model::{BoxStream, StreamEvent};

/// Where stream events go.
pub(crate) type Out = VecDeque<Result<StreamEvent, ModelError>>;

/// Reads one provider's events and assembles its reply.
pub(crate) trait Reassembler: Send + 'static {
    /// Takes one event, pushing what it means onto `out`; `true` once the reply is complete (the
    /// last thing pushed is then `Finished`, or an error).
    fn take(&mut self, event: &Event, out: &mut Out) -> bool;

    /// The stream ended before `take` said the reply was complete: the reply if it is whole
    /// anyway, else the error.
    fn at_end(&mut self) -> Result<StreamEvent, ModelError> {
        Err(cut_off())
    }
}

/// The error for a stream that stopped before the reply was finished.
pub(crate) fn cut_off() -> ModelError {
    ModelError::Stream {
        message: "the stream was cut off before the reply was finished".to_owned(),
    }
}

/// The error for an event whose data is not the documented shape.
#[cfg_attr(not(any(feature = "openai", feature = "anthropic")), allow(dead_code))]
pub(crate) fn bad_event(error: serde_json::Error, data: &str) -> ModelError {
    ModelError::Decode {
        message: format!("a stream event is not the documented shape: {error}"),
        excerpt: data.chars().take(200).collect(),
    }
}

/// A streamed reply: `opened` sends the request (with the adapter's retries); its response is
/// read as events by a fresh `R`, or its error becomes the stream's only item.
pub(crate) fn stream_reply<'a, R: Reassembler + Default>(
    opened: impl Future<Output = Result<reqwest::Response, ModelError>> + Send + 'a,
    request_timeout: Duration,
) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
    Box::pin(
        futures_util::stream::once(opened).flat_map(move |opened| match opened {
            Ok(response) => events(response, request_timeout, R::default()).boxed(),
            Err(error) => futures_util::stream::iter([Err(error)]).boxed(),
        }),
    )
}

/// The events of a streamed reply, read from a successful response.
fn events<R: Reassembler>(
    response: reqwest::Response,
    request_timeout: Duration,
    reassembler: R,
) -> impl Stream<Item = Result<StreamEvent, ModelError>> + Send {
    let source = response
        .bytes_stream()
        .eventsource()
        .map(move |event| event.map_err(|error| transport_error(error, request_timeout)));
    reassemble(Box::pin(source), reassembler)
}

/// The events a whole server-sent-event body yields, read the way a live stream is read: for the
/// fuzz targets.
#[cfg(feature = "fuzzing")]
pub(crate) fn events_of_bytes<R: Reassembler + Default>(
    body: &[u8],
) -> Vec<Result<StreamEvent, ModelError>> {
    use futures_util::FutureExt;
    let bytes = futures_util::stream::iter([Ok::<_, std::convert::Infallible>(body.to_vec())]);
    let source = bytes.eventsource().map(|event| {
        event.map_err(|error| ModelError::Stream {
            message: format!("the stream is not valid server-sent events: {error}"),
        })
    });
    // Nothing in the source waits, so the whole stream is read on the first poll.
    reassemble(Box::pin(source), R::default())
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap_or_default()
}

/// Feeds events to a reassembler and yields what it makes of them, then its verdict on the end.
fn reassemble<R: Reassembler>(
    source: Source,
    reassembler: R,
) -> impl Stream<Item = Result<StreamEvent, ModelError>> + Send {
    let state = State {
        source,
        reassembler,
        pending: VecDeque::new(),
        finished: false,
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
                Some(Ok(event)) => {
                    state.finished = state.reassembler.take(&event, &mut state.pending)
                }
                Some(Err(error)) => {
                    state.finished = true;
                    state.pending.push_back(Err(error));
                }
                None => {
                    state.finished = true;
                    let end = state.reassembler.at_end();
                    state.pending.push_back(end);
                }
            }
        }
    })
}

type Source = std::pin::Pin<Box<dyn Stream<Item = Result<Event, ModelError>> + Send>>;

struct State<R> {
    source: Source,
    reassembler: R,
    pending: Out,
    finished: bool,
}

fn transport_error(
    error: EventStreamError<reqwest::Error>,
    request_timeout: Duration,
) -> ModelError {
    match error {
        EventStreamError::Transport(error) if error.is_timeout() => ModelError::Timeout {
            after: request_timeout,
        },
        EventStreamError::Transport(error) => ModelError::Stream {
            message: format!("the connection broke: {error}"),
        },
        other => ModelError::Stream {
            message: format!("the stream is not valid server-sent events: {other}"),
        },
    }
}
