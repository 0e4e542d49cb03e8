//! Who is asking: the function a [`ChatServer`](super::ChatServer) is given to turn each request
//! into its run's context (or a rejection), and the key the context's chats are kept under.

use std::borrow::Cow;
use std::future::Future;
use std::sync::Arc;

use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use agent_core::BoxFuture;

/// The user a run's context is for: the key their chats are kept under. Implement it for the
/// context an [`identify`](super::ChatServer::identify) function gives; two contexts with the
/// same owner share their chats, and no request reaches the chats of another owner.
///
/// The key is the context's, not the client's: a chat id the client sends only names a chat
/// among the owner's own.
///
/// ```
/// use agent_web::ChatOwner;
///
/// #[derive(Clone)]
/// struct User {
///     id: String,
///     plan: &'static str,
/// }
///
/// impl ChatOwner for User {
///     fn owner(&self) -> &str {
///         &self.id
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "the context `{Self}` does not say whose chats these are",
    label = "the server keeps each chat under its caller's owner key",
    note = "implement `agent_web::ChatOwner` for `{Self}`: `fn owner(&self) -> &str` gives the user's id"
)]
pub trait ChatOwner {
    /// The key of this user's chats (their account id, say; never something the client chose
    /// unchecked).
    fn owner(&self) -> &str;
}

/// The caller a request is from, as an [`Identity`] found them: the run's context, and the owner
/// their chats are kept under (none: the server does not identify callers, and keys chats by the
/// client's ids alone). What a server on another protocol (AG-UI, A2A) asks an identity for, to
/// keep chats and count limits as [`ChatServer`](super::ChatServer) does.
pub struct Caller<S> {
    pub(crate) context: S,
    pub(crate) owner: Option<String>,
    /// The owner is a visitor the server knows by its cookie (a browser, not a person signed in).
    pub(crate) visitor: bool,
}

impl<S> Caller<S> {
    /// The store key of chat `chat_id` of this caller: the chat id itself on a server that does
    /// not identify callers (as it always was), else the owner and the chat id joined by U+001F,
    /// which no chat id holds (chat ids have no control characters), so two owners' keys never
    /// meet, nor an owner's key an anonymous chat id.
    pub fn key<'a>(&self, chat_id: &'a str) -> Cow<'a, str> {
        match self.prefix() {
            None => Cow::Borrowed(chat_id),
            Some(prefix) => Cow::Owned(prefix + chat_id),
        }
    }

    /// The store key of chat `chat_id` of this caller, as [`key`](Self::key), once `chat_id` is
    /// checked to be one (1 to 200 bytes, not all blank, no control characters); else why it is not.
    pub fn checked_key<'a>(&self, chat_id: &'a str) -> Result<Cow<'a, str>, String> {
        super::request::check_chat_id(chat_id)?;
        Ok(self.key(chat_id))
    }

    /// What the store keys of this caller's chats start with: the owner and U+001F; `None` on a
    /// server that does not identify callers (its chats are keyed by their ids alone).
    pub(crate) fn prefix(&self) -> Option<String> {
        self.owner.as_ref().map(|owner| format!("{owner}\u{1f}"))
    }

    /// The key of the caller's use, for limits ([`Limiter::admit`](super::Limiter::admit)): their
    /// owner, or `""` for every caller of a server that does not identify them (a visitor known
    /// by a cookie included: a browser gets a new one by dropping its cookie, so the limits of a
    /// server without sign-in are the server's).
    pub fn limit_key(&self) -> &str {
        match &self.owner {
            Some(owner) if !self.visitor => owner,
            _ => "",
        }
    }

    /// Whether the server identifies its callers: a chat id then names a chat among the caller's
    /// own, and going on with one they do not have is refused (`404`), as for one that does not
    /// exist.
    pub fn is_identified(&self) -> bool {
        self.owner.is_some()
    }

    /// The run's context.
    pub fn context(&self) -> &S {
        &self.context
    }

    /// The run's context, taken.
    pub fn into_context(self) -> S {
        self.context
    }
}

/// How a server finds who is asking: no one in particular ([`Anonymous`], for an `Agent<()>`), or
/// the function given to [`identify`](super::ChatServer::identify) ([`Identified`]).
///
/// A server of an agent whose runs need a context is not served until it is told who is asking:
///
/// ```compile_fail
/// use std::sync::Arc;
/// use agent_web::ChatServer;
///
/// #[derive(Clone)]
/// struct User(String);
///
/// let agent: agent_core::Agent<User> = agent_core::Agent::new(
///     agent_core::testing::ScriptedModel::new(Vec::<agent_core::AssistantMessage>::new()),
/// );
/// // error: this `ChatServer` serves an `Agent<User>` and does not know who is asking
/// let router = ChatServer::new(Arc::new(agent)).router();
/// ```
#[diagnostic::on_unimplemented(
    message = "this `ChatServer` serves an `Agent<{S}>` and does not know who is asking",
    label = "each request's run needs a `{S}`",
    note = "give the server a function from the request to the context: `.identify(|parts| async move {{ ... }})`"
)]
pub trait Identity<S>: Send + Sync + 'static {
    /// The caller of the request with these parts, or the response that refuses it.
    fn caller(&self, parts: Parts) -> impl Future<Output = Result<Caller<S>, Response>> + Send;
}

/// A server that does not ask who is calling: every request's run has the context `()`. What
/// [`ChatServer::new`](super::ChatServer::new) starts with: there each browser is a visitor of its
/// own, known by a signed cookie, and its chats are its own; on a server that opts out
/// ([`ChatServer::shared_chats`](super::ChatServer::shared_chats)), and on the servers of other
/// protocols, a chat is kept under the id the client gives it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Anonymous;

impl Identity<()> for Anonymous {
    fn caller(&self, _: Parts) -> impl Future<Output = Result<Caller<()>, Response>> + Send {
        std::future::ready(Ok(Caller {
            context: (),
            owner: None,
            visitor: false,
        }))
    }
}

/// The function from a request to its caller's context.
type IdentifyFn<S> = dyn Fn(Parts) -> BoxFuture<'static, Result<S, Response>> + Send + Sync;

/// A server that asks who is calling with the function given to
/// [`identify`](super::ChatServer::identify).
pub struct Identified<S> {
    identify: Arc<IdentifyFn<S>>,
}

impl<S> Identified<S> {
    /// The identity that asks `identify` (as [`ChatServer::identify`](super::ChatServer::identify)
    /// describes it): for a server on another protocol that keeps chats as `ChatServer` does.
    pub fn new<F, Fut, R>(identify: F) -> Self
    where
        F: Fn(Parts) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<S, R>> + Send + 'static,
        R: IntoResponse,
    {
        Identified {
            identify: Arc::new(move |parts| {
                let found = identify(parts);
                Box::pin(async move { found.await.map_err(IntoResponse::into_response) })
            }),
        }
    }
}

impl<S> std::fmt::Debug for Identified<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Identified")
    }
}

impl<S: ChatOwner + Send + Sync + 'static> Identity<S> for Identified<S> {
    fn caller(&self, parts: Parts) -> impl Future<Output = Result<Caller<S>, Response>> + Send {
        let found = (self.identify)(parts);
        async move {
            let context = found.await?;
            let owner = Some(context.owner().to_owned());
            Ok(Caller {
                context,
                owner,
                visitor: false,
            })
        }
    }
}
