//! An agent served over [A2A](https://a2a-protocol.org), the Agent2Agent protocol (1.0, the
//! JSON-RPC binding), so other agents and A2A clients reach it.
//!
//! `GET /.well-known/agent-card.json` serves the agent's card (its name, its tools as skills, that
//! it streams, how callers sign in); `POST /` takes JSON-RPC: `SendMessage` (answered when the
//! task ends or waits for the client), `SendStreamingMessage` (the task, then its updates, as
//! server-sent events), `GetTask`, `ListTasks`, `CancelTask`, `SubscribeToTask`. Push
//! notifications and an extended card are not offered, and say so with their error codes.
//!
//! Each message without a task id starts a task; its context is a conversation the server keeps
//! (a new one when the message names none). How an agent does a task's work, and how a client
//! approves its calls or answers a tool the client runs (`input-required`, with grants the server
//! signed), is [`AgentHandler`]'s. Anything else that answers A2A messages is served the same way
//! through [`TaskHandler`].
//!
//! Who is asking works as on the web endpoint: [`A2aServer::identify`] gives each request's run
//! its context (or refuses it), tasks and conversations are kept per
//! [`ChatOwner`](agent_web::ChatOwner), and [`UserLimits`](agent_web::UserLimits) cap each
//! user's messages, tokens and runs at once.
//!
//! ```no_run
//! use std::sync::Arc;
//! use agent_a2a::A2aServer;
//! # async fn serve(agent: agent_core::Agent) -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8000").await?;
//! A2aServer::new(Arc::new(agent)).serve(listener).await
//! # }
//! ```

mod agent_handler;
mod card;
mod client;
mod follow;
mod handler;
mod jsonrpc;
mod methods;
mod parts;
mod server;
mod tasks;
pub mod tck;
mod wire;

pub use agent_handler::{AgentHandler, AnswerKind, DataAnswer, TextAnswer};
pub use agent_web::DEFAULT_KEEP_ALIVE;
pub use card::CARD_MAX_AGE;
pub use client::{A2aClient, A2aClientError, A2aTool, SendResult};
pub use handler::{TaskHandler, Updates, Work};
pub use jsonrpc::RpcError;
pub use server::{A2aServer, DEFAULT_BODY_LIMIT};
pub use tasks::KEPT_TASKS;
pub use wire::{
    AgentCard, AgentInterface, Artifact, ArtifactUpdate, Capabilities, Message, MessagePart, Role,
    Skill, StatusUpdate, StreamEvent, Task, TaskState, TaskStatus,
};
