//! What a durable run's context is made from: the invocation (its run id, its headers, the
//! `context` of its body), and the function given to [`DurableAgent::context`](super::DurableAgent::context)
//! that makes it, or refuses the run with a status.

use std::fmt;
use std::sync::Arc;

use hyper::http::HeaderMap;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The invocation of a durable run, as the function given to
/// [`DurableAgent::context`](super::DurableAgent::context) sees it: the run id (the workflow key),
/// the request's headers, and the `context` of its body.
///
/// Restate journals an invocation's input and headers, so a replay of the run sees the same
/// invocation: a context made from it alone is the same on every replay.
#[derive(Clone, Copy)]
pub struct Invocation<'a> {
    run_id: &'a str,
    headers: &'a HeaderMap<String>,
    context: Option<&'a Value>,
}

/// Header names only: their values may be credentials, which logs must not get.
impl fmt::Debug for Invocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.headers.keys().map(|name| name.as_str()).collect();
        f.debug_struct("Invocation")
            .field("run_id", &self.run_id)
            .field("headers", &names)
            .field("context", &self.context.is_some())
            .finish()
    }
}

impl<'a> Invocation<'a> {
    pub(super) fn new(
        run_id: &'a str,
        headers: &'a HeaderMap<String>,
        context: Option<&'a Value>,
    ) -> Self {
        Invocation {
            run_id,
            headers,
            context,
        }
    }

    /// The run's id: the workflow key the client picked (`/{name}/{run_id}/run`).
    pub fn run_id(&self) -> &'a str {
        self.run_id
    }

    /// The value of the request's header `name` (any case), if it has one. Restate's ingress hands
    /// the client's headers on to the invocation; a header sent twice gives its first value.
    pub fn header(&self, name: &str) -> Option<&'a str> {
        self.headers.get(name).map(String::as_str)
    }

    /// Every header of the request, names in lower case.
    pub fn headers(&self) -> impl Iterator<Item = (&'a str, &'a str)> + use<'a> {
        self.headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
    }

    /// The `context` of the run request's body (`{"input": "...", "context": {...}}`), read as a
    /// `T`. Refused with `400` when the body has none, or when it does not fit `T` (the error
    /// names the field that does not).
    ///
    /// ```
    /// use agent_restate::{Invocation, Rejection};
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize)]
    /// struct User {
    ///     name: String,
    /// }
    ///
    /// fn user(invocation: &Invocation<'_>) -> Result<User, Rejection> {
    ///     invocation.context::<User>()
    /// }
    /// ```
    pub fn context<T: DeserializeOwned>(&self) -> Result<T, Rejection> {
        let Some(context) = self.context else {
            return Err(Rejection::bad_request(
                r#"this run request has no "context", and this agent's runs need one: {"input": "...", "context": {...}}"#,
            ));
        };
        serde_path_to_error::deserialize(context).map_err(|error| {
            let path = error.path().to_string();
            let at = if path == "." {
                String::new()
            } else {
                format!(" at `{path}`")
            };
            Rejection::bad_request(format!(
                "the run request's \"context\" does not fit{at}: {}",
                error.inner()
            ))
        })
    }
}

/// Why a durable run was refused before it started: a status (`400`, `401`, `403`) and a
/// message, what the client of the `run` request gets (and `output` after it). What the function
/// given to [`DurableAgent::context`](super::DurableAgent::context) answers when the invocation
/// does not make a context.
///
/// The run's workflow ends with it: Restate runs a workflow once per key, so the client starts
/// again under a new run id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    status: u16,
    message: String,
}

impl Rejection {
    /// `400 Bad Request`: the request does not say what the run needs.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Rejection {
            status: 400,
            message: message.into(),
        }
    }

    /// `401 Unauthorized`: the request does not say who is asking, or not in a way that checks out.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Rejection {
            status: 401,
            message: message.into(),
        }
    }

    /// `403 Forbidden`: who is asking may not run this agent.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Rejection {
            status: 403,
            message: message.into(),
        }
    }

    /// The status the client gets.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The message the client gets.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.status)
    }
}

impl std::error::Error for Rejection {}

/// How a durable agent makes each run's context: `()` for an `Agent<()>` ([`Contextless`]), or
/// the function given to [`DurableAgent::context`](super::DurableAgent::context)
/// ([`FromInvocation`]). A durable agent of an agent whose runs need a context is not bound to an
/// endpoint until it is given that function.
#[diagnostic::on_unimplemented(
    message = "this `DurableAgent` serves an `Agent<{S}>` and cannot make its runs' context",
    label = "each run needs a `{S}`",
    note = "give it a function from the invocation to the context: `.context(|invocation| ...)`, reading a header (`invocation.header(\"x-user\")`) or the run request's \"context\" (`invocation.context::<{S}>()`)"
)]
pub trait ContextSource<S>: Send + Sync + 'static {
    /// The context of the run of `invocation`, or why it is refused.
    #[doc(hidden)]
    fn make(&self, invocation: &Invocation<'_>) -> Result<S, Rejection>;
}

/// A durable agent whose runs have the context `()`: what [`DurableAgent::new`](super::DurableAgent::new)
/// starts with.
#[derive(Debug, Clone, Copy, Default)]
pub struct Contextless;

impl ContextSource<()> for Contextless {
    fn make(&self, _: &Invocation<'_>) -> Result<(), Rejection> {
        Ok(())
    }
}

/// The function that makes a run's context from its invocation.
type MakeContext<S> = dyn Fn(&Invocation<'_>) -> Result<S, Rejection> + Send + Sync;

/// A durable agent whose runs' context the function given to
/// [`DurableAgent::context`](super::DurableAgent::context) makes.
pub struct FromInvocation<S> {
    make: Arc<MakeContext<S>>,
}

impl<S> FromInvocation<S> {
    pub(super) fn new(
        make: impl Fn(&Invocation<'_>) -> Result<S, Rejection> + Send + Sync + 'static,
    ) -> Self {
        FromInvocation {
            make: Arc::new(make),
        }
    }
}

impl<S> fmt::Debug for FromInvocation<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FromInvocation")
    }
}

impl<S: 'static> ContextSource<S> for FromInvocation<S> {
    fn make(&self, invocation: &Invocation<'_>) -> Result<S, Rejection> {
        (self.make)(invocation)
    }
}

#[cfg(test)]
mod tests {
    use hyper::http::HeaderName;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Debug, Deserialize, PartialEq)]
    struct User {
        name: String,
        admin: bool,
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap<String> {
        let mut headers = HeaderMap::default();
        for (name, value) in pairs {
            headers.append(HeaderName::from_static(name), (*value).to_owned());
        }
        headers
    }

    #[test]
    fn headers_are_read_by_name_in_any_case() {
        let headers = headers(&[("x-user", "ada"), ("x-user", "bob"), ("x-plan", "pro")]);
        let invocation = Invocation::new("run-1", &headers, None);
        assert_eq!(invocation.run_id(), "run-1");
        assert_eq!(invocation.header("X-User"), Some("ada"));
        assert_eq!(invocation.header("x-other"), None);
        assert_eq!(invocation.header("not a header name"), None);
        let all: Vec<_> = invocation.headers().collect();
        assert_eq!(
            all,
            [("x-user", "ada"), ("x-user", "bob"), ("x-plan", "pro")]
        );
        let shown = format!("{invocation:?}");
        assert_eq!(
            shown,
            r#"Invocation { run_id: "run-1", headers: ["x-user", "x-plan"], context: false }"#
        );
    }

    #[test]
    fn the_bodys_context_is_read_as_a_type_or_refused_with_400() {
        let none = HeaderMap::default();
        let context = json!({ "name": "ada", "admin": true });
        let user = Invocation::new("r", &none, Some(&context)).context::<User>();
        assert_eq!(
            user,
            Ok(User {
                name: "ada".into(),
                admin: true
            })
        );

        let absent = Invocation::new("r", &none, None)
            .context::<User>()
            .unwrap_err();
        assert_eq!(absent.status(), 400);
        assert!(absent.message().contains(r#"has no "context""#), "{absent}");

        let wrong = json!({ "name": "ada", "admin": "yes" });
        let wrong = Invocation::new("r", &none, Some(&wrong))
            .context::<User>()
            .unwrap_err();
        assert_eq!(wrong.status(), 400);
        assert_eq!(
            wrong.message(),
            "the run request's \"context\" does not fit at `admin`: invalid type: string \"yes\", expected a boolean"
        );

        let not_an_object = json!("ada");
        let not_an_object = Invocation::new("r", &none, Some(&not_an_object))
            .context::<User>()
            .unwrap_err();
        assert_eq!(
            not_an_object.message(),
            "the run request's \"context\" does not fit: invalid type: string \"ada\", expected struct User"
        );
    }

    #[test]
    fn a_rejection_keeps_its_status() {
        assert_eq!(Rejection::bad_request("no").status(), 400);
        assert_eq!(Rejection::unauthorized("who?").status(), 401);
        let forbidden = Rejection::forbidden("not you");
        assert_eq!((forbidden.status(), forbidden.message()), (403, "not you"));
        assert_eq!(forbidden.to_string(), "not you (403)");
    }
}
