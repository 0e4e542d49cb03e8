//! Serving a Restate endpoint over HTTP/2 with Nagle's algorithm off.

use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;

/// Serves `endpoint` (the [`DurableAgent`](super::DurableAgent)s and other services bound to it)
/// on `listener` until the future is dropped: HTTP/2 without TLS, as the Restate server speaks
/// to its services, with `TCP_NODELAY` on every connection.
///
/// Use it instead of `restate_sdk::http_server::HttpServer`, which leaves Nagle's algorithm on:
/// each journaled step is a small write that then waits for the peer's delayed ACK, which
/// measured 20 ms per step on loopback (a 10-step run: 240 ms against 23 ms here; see
/// BENCHMARKS.md).
///
/// ```no_run
/// use std::sync::Arc;
///
/// use agent_restate::{DurableAgent, serve};
/// use agent_core::testing::ScriptedModel;
/// use agent_core::{AssistantMessage, agent};
/// use agent_restate::restate_sdk::prelude::Endpoint;
///
/// # async fn run() -> std::io::Result<()> {
/// let model = ScriptedModel::new([AssistantMessage::text("Hello!")]);
/// let agent = Arc::new(agent!(model).defer_approvals());
/// let endpoint = Endpoint::builder()
///     .bind(DurableAgent::new("Assistant", agent))
///     .build();
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:9080").await?;
/// serve(endpoint, listener).await;
/// # Ok(())
/// # }
/// ```
pub async fn serve(endpoint: Endpoint, listener: TcpListener) {
    let endpoint = HyperEndpoint::new(endpoint);
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of file descriptors, say: wait a little rather than spin.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        if let Err(error) = stream.set_nodelay(true) {
            tracing::warn!(%error, "cannot turn Nagle's algorithm off");
        }
        let connection = http2::Builder::new(TokioExecutor::new())
            .serve_connection(TokioIo::new(stream), endpoint.clone());
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "a connection from the Restate server ended");
            }
        });
    }
}
