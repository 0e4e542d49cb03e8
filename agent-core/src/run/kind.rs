//! What a run request starts from, as a type: a new run, a paused run it was given, or the paused
//! run kept in a session. The builder's methods that apply to one kind only exist on it, and a run
//! that resumes a session's paused run cannot start before it is given the session: each misuse is
//! a compile error, not a setting dropped at run time.

/// A new run, from an input ([`Agent::run`](crate::Agent::run)): it may have parts after its text
/// and a history before it.
#[derive(Debug, Clone, Copy)]
pub struct Starting;

/// A run resuming a paused run it was given ([`Agent::resume`](crate::Agent::resume)): the
/// paused run holds its conversation, so it takes no parts or history.
#[derive(Debug, Clone, Copy)]
pub struct Resuming;

/// A run resuming the paused run kept in a session
/// ([`Agent::resume_session`](crate::Agent::resume_session)): it starts once given the session
/// ([`session`](crate::RunRequest::session) or [`session_held`](crate::RunRequest::session_held)),
/// which makes it [`Resuming`].
#[derive(Debug, Clone, Copy)]
pub struct ResumingSession;

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Starting {}
    impl Sealed for super::Resuming {}
    impl Sealed for super::ResumingSession {}
}

/// What a run request starts from: [`Starting`], [`Resuming`] or [`ResumingSession`].
pub trait RunKind: sealed::Sealed {
    /// The kind once the run is given a session.
    type WithSession: RunKind;
}

impl RunKind for Starting {
    type WithSession = Starting;
}

impl RunKind for Resuming {
    type WithSession = Resuming;
}

impl RunKind for ResumingSession {
    type WithSession = Resuming;
}

/// A new run: one that adds the input's message to its conversation, so it takes parts after the
/// input's text and a history before it.
#[diagnostic::on_unimplemented(
    message = "a resumed run adds no message: it takes no parts and no history",
    label = "only a new run (`agent.run(..)`) takes this",
    note = "to go on with a transcript, start a new run with no input: `agent.run(Input::nothing()).history(messages)`"
)]
pub trait NewRun: RunKind {}

impl NewRun for Starting {}

/// A run request that has what it needs to start.
#[diagnostic::on_unimplemented(
    message = "this run resumes the paused run kept in a session, but has no session",
    label = "the run starts here without one",
    note = "give it the session whose paused run it resumes: `.session(&store, id)`"
)]
pub trait Ready: RunKind {}

impl Ready for Starting {}

impl Ready for Resuming {}
