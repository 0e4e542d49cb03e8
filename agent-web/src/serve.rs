//! Serving routes over HTTP/1.1 with the least memory each connection can hold: what the
//! endpoints' `serve` methods do, since an open answer stream keeps its connection for as long as
//! the answer takes.
//!
//! hyper's connection holds a write buffer and a read buffer. By default the read buffer may grow
//! to hundreds of KB and, in practice, stays at 16 KB after the first request; capped at 8 KB (the
//! least hyper allows) it stays there, which is 25% of what an open stream of these endpoints
//! holds (`web_load`: 36 KB down to 27 KB). A request's head must then fit in 8 KB: a larger one
//! is refused with `431 Request Header Fields Too Large` (Tomcat's default limit is the same). An application that needs more serves the routers (`ChatServer::router`, ...) itself.

use std::time::Duration;

use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;

/// The most a connection's read buffer holds: a request's head must fit in it.
pub const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// Serves `router` on `listener` until the process ends, over HTTP/1.1, each connection holding
/// as little memory as hyper allows: its read buffer held to [`MAX_REQUEST_HEAD`], which a
/// request's head must fit in (a larger one is refused with `431 Request Header Fields Too
/// Large`). By default hyper's read buffer stays at 16 KB after the first request; an open
/// answer stream keeps its connection for as long as the answer takes, so this is a quarter of
/// what one holds. An application that needs larger heads serves the routers itself
/// (`axum::serve(listener, router.into_make_service())`).
pub async fn serve_router(
    listener: tokio::net::TcpListener,
    router: axum::Router,
) -> std::io::Result<()> {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            // A connection that went away before it was taken: the next one is.
            Err(error) if is_connection_error(&error) => continue,
            // Out of file descriptors, say: wait for some to be let go rather than spin.
            Err(error) => {
                tracing::error!(%error, "a connection could not be accepted");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        // Each event of a stream goes out as it is written.
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let mut connection = hyper::server::conn::http1::Builder::new();
            connection.max_buf_size(MAX_REQUEST_HEAD);
            // A connection that ends badly (the client went away) is the client's business.
            let _ = connection
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Whether `error` is about one connection, not the listener.
fn is_connection_error(error: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    matches!(
        error.kind(),
        ErrorKind::ConnectionRefused | ErrorKind::ConnectionAborted | ErrorKind::ConnectionReset
    )
}
