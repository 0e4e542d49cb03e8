//! Server-sent events into [`StreamEvent`]s: the driver every streaming adapter shares. Each adapter
//! gives a [`Reassembler`] that reads its provider's events and builds the reply.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::{Stream, StreamExt};
use reqwest::header::HeaderMap;

use super::http::{Endpoint, HttpClient, RetryBudget};
use super::sse_decode::{Event, EventDecoder};
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

/// A request whose reply is read as server-sent events, ready to be sent (and sent again).
pub(crate) struct StreamRequest<'a> {
    /// The model asked for: the answering model of a reply that does not name one.
    pub(crate) model: &'a str,
    pub(crate) http: &'a HttpClient,
    pub(crate) url: &'a Endpoint,
    pub(crate) headers: &'a HeaderMap,
    pub(crate) body: bytes::Bytes,
}

impl StreamRequest<'_> {
    /// Sends the request, retrying failed statuses out of `budget`, and reads its reply as events.
    async fn open(&self, budget: &mut RetryBudget) -> Result<Source, ModelError> {
        let response = self
            .http
            .post_for_stream(self.url, self.headers, &self.body, budget)
            .await?;
        let request_timeout = self.http.config().request_timeout_value();
        let bytes = Box::pin(response.bytes_stream());
        Ok(Box::pin(decode(bytes, move |error| {
            transport_error(&error, request_timeout)
        })))
    }
}

/// A streamed reply: the request is sent (with the adapter's retries) and its response read as
/// events by a fresh `R`; a request that could not be made is the stream's only item.
///
/// A stream that fails with a retryable error (an in-stream `overloaded_error`, a rate limit, a
/// server error, a timeout) before it yielded a single event is sent again, out of the same retry
/// budget as the failed statuses of its openings; the caller never sees the failed attempt. Once
/// an event has gone out, an error ends the stream as it is: a retry would yield its deltas twice.
pub(crate) fn stream_reply<'a, R: Reassembler + Default>(
    request: Result<StreamRequest<'a>, ModelError>,
) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
    stream_reply_with(request, R::default)
}

/// [`stream_reply`] with the reassemblers `fresh` makes: one for the reply, and one more for each
/// time the request is sent again.
pub(crate) fn stream_reply_with<'a, R: Reassembler>(
    request: Result<StreamRequest<'a>, ModelError>,
    fresh: impl Fn() -> R + Send + 'a,
) -> BoxStream<'a, Result<StreamEvent, ModelError>> {
    match request {
        Ok(request) => Box::pin(reassemble(Some(request), None, fresh)),
        Err(error) => Box::pin(futures_util::stream::iter([Err(error)])),
    }
}

/// The events a whole server-sent-event body yields, read the way a live stream is read: for the
/// fuzz targets.
#[cfg(feature = "fuzzing")]
pub(crate) fn events_of_bytes<R: Reassembler + Default>(
    body: &[u8],
) -> Vec<Result<StreamEvent, ModelError>> {
    events_of_pieces::<R, _>([body.to_vec()])
}

/// The events a server-sent-event body yields when it arrives in these pieces, read the way a live
/// stream is read: for the fuzz targets and the benchmarks.
#[cfg(any(test, feature = "fuzzing", feature = "bench-internals"))]
pub(crate) fn events_of_pieces<R, B>(
    pieces: impl IntoIterator<Item = B, IntoIter: Send + 'static>,
) -> Vec<Result<StreamEvent, ModelError>>
where
    R: Reassembler + Default,
    B: AsRef<[u8]> + From<&'static [u8]> + Send + 'static,
{
    use futures_util::FutureExt;
    let bytes =
        futures_util::stream::iter(pieces.into_iter().map(Ok::<_, std::convert::Infallible>));
    let source = decode(bytes, |never| match never {});
    // Nothing in the source waits, so the whole stream is read on the first poll.
    reassemble(None, Some(Box::pin(source)), R::default)
        .collect::<Vec<_>>()
        .now_or_never()
        .unwrap_or_default()
}

/// The events of a body arriving as `bytes`; a failure to read it becomes `on_error`'s error, and
/// ends the events.
fn decode<S, B, E, F>(bytes: S, on_error: F) -> Decoding<S, F>
where
    S: Stream<Item = Result<B, E>> + Unpin + Send,
    B: AsRef<[u8]> + Send,
    E: Send,
    F: Fn(E) -> ModelError + Send + 'static,
{
    Decoding {
        bytes,
        on_error,
        decoder: EventDecoder::default(),
        out: VecDeque::new(),
        failure: None,
        ended: false,
    }
}

/// The stream [`decode`] returns. Written out rather than made with `unfold`: it is polled once per
/// piece of the body, and a network may hand the body over a few bytes at a time.
struct Decoding<S, F> {
    bytes: S,
    on_error: F,
    decoder: EventDecoder,
    /// Events read but not yet handed out.
    out: VecDeque<Event>,
    /// Why the body could not be read on: said after the events read before it.
    failure: Option<ModelError>,
    ended: bool,
}

// Nothing in it is pinned in place: the bytes' stream is `Unpin`.
impl<S: Unpin, F> Unpin for Decoding<S, F> {}

impl<S, B, E, F> Stream for Decoding<S, F>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
    F: Fn(E) -> ModelError,
{
    type Item = Result<Event, ModelError>;

    fn poll_next(
        mut self: std::pin::Pin<&mut Self>,
        context: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Self::Item>> {
        use std::task::Poll;
        let this = &mut *self;
        loop {
            if let Some(event) = this.out.pop_front() {
                return Poll::Ready(Some(Ok(event)));
            }
            if let Some(error) = this.failure.take() {
                return Poll::Ready(Some(Err(error)));
            }
            if this.ended {
                return Poll::Ready(None);
            }
            match std::pin::Pin::new(&mut this.bytes).poll_next(context) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => {
                    if let Err(error) = this.decoder.push(chunk.as_ref(), &mut this.out) {
                        this.failure = Some(error);
                        this.ended = true;
                    }
                }
                Poll::Ready(Some(Err(error))) => {
                    this.failure = Some((this.on_error)(error));
                    this.ended = true;
                }
                Poll::Ready(None) => {
                    this.decoder.finish(&mut this.out);
                    this.ended = true;
                }
            }
        }
    }
}

/// Feeds events to a reassembler (`fresh` makes one per attempt) and yields what it makes of them,
/// then its verdict on the end. With a `request`, the events come from sending it (again, after a
/// retryable failure before the first event); otherwise from `source`.
fn reassemble<'a, R: Reassembler, F: Fn() -> R + Send + 'a>(
    request: Option<StreamRequest<'a>>,
    source: Option<Source>,
    fresh: F,
) -> impl Stream<Item = Result<StreamEvent, ModelError>> + Send + 'a {
    let state = State {
        request,
        budget: RetryBudget::new(),
        source,
        reassembler: fresh(),
        fresh,
        pending: VecDeque::new(),
        finished: false,
        yielded: false,
    };
    futures_util::stream::unfold(state, |mut state| async move {
        loop {
            match state.pending.pop_front() {
                Some(Ok(mut event)) => {
                    state.yielded = true;
                    if let (StreamEvent::Finished(response), Some(request)) =
                        (&mut event, &state.request)
                        && response.model.is_none()
                    {
                        response.model = Some(request.model.to_owned());
                    }
                    return Some((Ok(event), state));
                }
                Some(Err(error)) => match state.retry_wait(&error) {
                    Some(wait) => {
                        tracing::debug!(%error, ?wait, "the stream failed before its first event; sending the request again");
                        tokio::time::sleep(wait).await;
                        state.restart();
                        continue;
                    }
                    None => return Some((Err(error), state)),
                },
                None => {}
            }
            if state.finished {
                return None;
            }
            if state.source.is_none()
                && let Some(request) = &state.request
            {
                match request.open(&mut state.budget).await {
                    Ok(source) => state.source = Some(source),
                    Err(error) => {
                        // Its openings were retried already.
                        state.finished = true;
                        return Some((Err(error), state));
                    }
                }
            }
            let next = match state.source.as_mut() {
                Some(source) => source.next().await,
                None => None,
            };
            match next {
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

struct State<'a, R, F> {
    /// The request the events come from, to send again; `None` for a body read whole.
    request: Option<StreamRequest<'a>>,
    /// The retries of this call, its openings' and its resendings' together.
    budget: RetryBudget,
    /// The events of the current attempt; `None` until the request is sent.
    source: Option<Source>,
    reassembler: R,
    /// Makes the reassembler of a new attempt.
    fresh: F,
    pending: Out,
    finished: bool,
    /// Whether an event has gone to the caller: from then on the request is never sent again.
    yielded: bool,
}

impl<R: Reassembler, F: Fn() -> R> State<'_, R, F> {
    /// The wait before sending the request again after `error`, when it is to be sent again.
    fn retry_wait(&mut self, error: &ModelError) -> Option<Duration> {
        if self.yielded {
            return None;
        }
        let request = self.request.as_ref()?;
        request.http.retry_wait(&mut self.budget, error, None)
    }

    /// Forgets the failed attempt: the next poll sends the request again.
    fn restart(&mut self) {
        self.source = None;
        self.reassembler = (self.fresh)();
        self.pending.clear();
        self.finished = false;
    }
}

fn transport_error(error: &reqwest::Error, request_timeout: Duration) -> ModelError {
    if error.is_timeout() {
        ModelError::Timeout {
            after: request_timeout,
        }
    } else {
        ModelError::Stream {
            message: format!("the connection broke: {error}"),
        }
    }
}
