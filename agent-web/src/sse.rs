//! A server-sent event stream as the servers on other protocols answer with one (AG-UI, A2A):
//! each item one event, a keep-alive comment while it waits, and no buffering by a proxy.

use std::convert::Infallible;
use std::time::Duration;

use axum::http::HeaderValue;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;

/// How long a stream may wait with nothing to send before a keep-alive comment goes, unless a
/// server says otherwise: proxies and load balancers close a connection quiet for longer (often
/// after 30 to 60 seconds).
pub const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(15);

/// `events` as a `text/event-stream` response: a comment (`: keep-alive`) goes after every
/// `keep_alive` with nothing to send (never when zero), and `x-accel-buffering: no` asks a proxy
/// that buffers (nginx) to pass each event on as it comes.
///
/// ```
/// use std::time::Duration;
/// use axum::response::sse::Event;
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let events = futures_util::stream::iter([Ok(Event::default().data("{}"))]);
/// let response = agent_web::sse_response(events, Duration::from_secs(15));
/// assert_eq!(response.headers()["x-accel-buffering"], "no");
/// # });
/// ```
pub fn sse_response(
    events: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
    keep_alive: Duration,
) -> Response {
    let events = Sse::new(events);
    let mut response = if keep_alive.is_zero() {
        events.into_response()
    } else {
        let every = KeepAlive::new().interval(keep_alive).text("keep-alive");
        events.keep_alive(every).into_response()
    };
    (response.headers_mut()).insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
