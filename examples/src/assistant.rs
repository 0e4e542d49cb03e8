//! The assistant the served examples (`web`, `durable`) share: the weather tool, a note deletion
//! that needs a person's approval, and an offline stand-in for an LLM that drives them.

use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatRequest, ChatResponse, Message, Model, ModelError,
    Reasoning, ToolCall, tool,
};

use crate::weather::get_weather;

/// Delete all of the user's notes. It cannot be undone.
#[tool(destructive, requires_approval)]
pub fn delete_notes() -> String {
    "deleted 12 notes".to_owned()
}

/// The assistant on `model`: the weather tool and the note deletion, whose approvals wait for a
/// person ([`Agent::defer_approvals`]). Its tools need no context, so its runs may have any
/// (`S`: the signed-in user of a web chat, say).
pub fn assistant<S: Send + Sync + 'static>(model: impl Model + 'static) -> Agent<S> {
    Agent::new(model)
        .system("You are a brief, friendly assistant. Use the tools for facts.")
        .try_tool(get_weather {})
        .and_then(|agent| agent.try_tool(delete_notes {}))
        .expect("valid tools")
        .defer_approvals()
}

/// The offline stand-in for an LLM: weather questions go to the tool, "delete" asks for the
/// deletion, a tool's result is summed up, anything else gets a hint.
#[derive(Debug, Clone, Copy, Default)]
pub struct StandIn;

impl Model for StandIn {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let reply = match request.messages.last() {
            Some(Message::Tool(result)) => {
                AssistantMessage::text(format!("Done. The tool said: {}", result.content))
            }
            Some(Message::User { content, .. }) => answer(content, request.messages.len()),
            _ => AssistantMessage::text("How can I help?"),
        };
        Box::pin(std::future::ready(Ok(ChatResponse::new(reply))))
    }
}

fn answer(question: &str, turn: usize) -> AssistantMessage {
    let asked = question.to_lowercase();
    let call_id = format!("call_{turn}");
    if let Some(city) = ["Beijing", "Shanghai"]
        .into_iter()
        .find(|city| asked.contains(&city.to_lowercase()))
    {
        let arguments = format!(r#"{{"city":"{city}"}}"#);
        return AssistantMessage::tool_calls([ToolCall::new(call_id, "get_weather", arguments)])
            .with_reasoning(Reasoning::new(
                "offline",
                format!("A weather question about {city}: ask the tool."),
            ));
    }
    if asked.contains("delete") {
        return AssistantMessage::tool_calls([ToolCall::new(call_id, "delete_notes", "{}")])
            .with_text("I will delete your notes once you approve.");
    }
    AssistantMessage::text(
        "I am the offline stand-in. Ask about the weather in Beijing or Shanghai, or ask me to \
         delete your notes.",
    )
}

/// What a served example starts from: the assistant (on the model the environment names, see
/// `providers::from_env`, or else on the [`StandIn`]) and a listener on `127.0.0.1`, at the port of
/// its command line (`[--port PORT]`) or `default_port`. When either cannot be had, the message is
/// printed and the exit code to end with is returned.
pub async fn served_assistant<S: Send + Sync + 'static>(
    name: &str,
    default_port: u16,
) -> Result<(Agent<S>, tokio::net::TcpListener), std::process::ExitCode> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let port = port_argument(&arguments, default_port).map_err(|message| {
        eprintln!("{message}\nusage: {name} [--port PORT]");
        std::process::ExitCode::from(2)
    })?;
    let agent = match agent_core::providers::from_env() {
        Ok(Some(model)) => assistant(model),
        Ok(None) => assistant(StandIn),
        Err(error) => {
            eprintln!("error: {error}");
            return Err(std::process::ExitCode::FAILURE);
        }
    };
    match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => Ok((agent, listener)),
        Err(error) => {
            eprintln!("error: cannot listen on 127.0.0.1:{port}: {error}");
            Err(std::process::ExitCode::FAILURE)
        }
    }
}

/// The port of a command line `[--port PORT]`, `default` when it names none.
pub fn port_argument(arguments: &[String], default: u16) -> Result<u16, String> {
    match arguments {
        [] => Ok(default),
        [flag, port] if flag == "--port" => port
            .parse()
            .map_err(|_| format!("--port takes a number, not `{port}`")),
        _ => Err(format!("unexpected arguments: {}", arguments.join(" "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_is_an_argument() {
        assert_eq!(port_argument(&[], 3000), Ok(3000));
        assert_eq!(port_argument(&["--port".into(), "0".into()], 3000), Ok(0));
        assert!(port_argument(&["--port".into(), "x".into()], 3000).is_err());
        assert!(port_argument(&["--bind".into()], 3000).is_err());
    }
}
