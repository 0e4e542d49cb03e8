//! A terminal chat over any provider from the environment (scripted offline when none is set):
//! the model's words print as they arrive, its reasoning dimmed after a `thinking:` label, each
//! tool call and result on its own line, and the conversation carries across turns. `/reset`
//! starts over; Ctrl-D (end of input) quits. `AGENT_THINKING=low|medium|high|off` sets how much a
//! reasoning model thinks.
//!
//! `cargo run -p examples --example chat`

use std::io::{BufRead, IsTerminal, Write};

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Effort, Message, Model, Reasoning, RunEvent, Thinking, ToolCall,
    agent, tool,
};
use futures_util::StreamExt;

/// Look up today's weather for a city.
#[tool]
fn get_weather(
    /// City name, e.g. "Beijing"
    city: String,
) -> String {
    format!("{city}: light rain, 18°C")
}

/// The offline stand-in for an LLM: one reply per turn of the session the test plays.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Beijing"}"#,
        )])
        .with_reasoning(Reasoning::new(
            "scripted",
            "An umbrella depends on the weather: ask the tool.",
        )),
        AssistantMessage::text("Light rain in Beijing: take an umbrella."),
        AssistantMessage::text("You asked about Beijing a moment ago."),
        AssistantMessage::text("Hello! What would you like to know?"),
    ])
}

/// How reasoning looks: dimmed on a terminal, plain elsewhere (a pipe, the test).
struct Style {
    dim: &'static str,
    reset: &'static str,
}

impl Style {
    const PLAIN: Style = Style { dim: "", reset: "" };
    const TERMINAL: Style = Style {
        dim: "\x1b[2m",
        reset: "\x1b[0m",
    };
}

/// Runs the chat loop until the input ends.
async fn chat(
    agent: &Agent,
    input: &mut impl BufRead,
    output: &mut impl Write,
    style: &Style,
) -> std::io::Result<()> {
    let mut history: Vec<Message> = Vec::new();
    loop {
        write!(output, "> ")?;
        output.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            writeln!(output)?;
            return Ok(());
        }
        let line = line.trim();
        match line {
            "" => continue,
            "/reset" => {
                history.clear();
                writeln!(output, "(conversation reset)")?;
                continue;
            }
            _ => {}
        }
        let mut events = agent
            .run(line)
            .history(std::mem::take(&mut history))
            .stream();
        // Whether reasoning is being printed: the next other event ends its line first.
        let mut thinking = false;
        while let Some(event) = events.next().await {
            if thinking && !matches!(event, RunEvent::ReasoningDelta(_)) {
                writeln!(output, "{}", style.reset)?;
                thinking = false;
            }
            match event {
                RunEvent::ReasoningDelta(text) => {
                    if !thinking {
                        write!(output, "  {}thinking: ", style.dim)?;
                        thinking = true;
                    }
                    write!(output, "{text}")?;
                    output.flush()?;
                }
                RunEvent::TextDelta(text) => {
                    write!(output, "{text}")?;
                    output.flush()?;
                }
                RunEvent::ToolCallRequested(call) => {
                    writeln!(output, "  [call {} {}]", call.name, call.arguments)?
                }
                RunEvent::ToolResult(result) => {
                    let label = if result.is_error { "error" } else { "result" };
                    writeln!(output, "  [{label} {}]", result.content)?;
                }
                RunEvent::Finished(Ok(run)) => {
                    writeln!(output)?;
                    history = run.messages;
                }
                RunEvent::Finished(Err(error)) => {
                    writeln!(output, "\n(error: {error})")?;
                    history = error.messages().to_vec();
                }
                _ => {}
            }
        }
    }
}

fn agent_with(model: impl Model + 'static) -> Agent {
    agent!(model, get_weather).system("You are a brief, friendly assistant.")
}

/// `AGENT_THINKING`, if set: how much a reasoning model thinks.
fn thinking_from_env() -> Result<Option<Thinking>, String> {
    let Ok(value) = std::env::var("AGENT_THINKING") else {
        return Ok(None);
    };
    Ok(Some(match value.trim().to_ascii_lowercase().as_str() {
        "off" => Thinking::Off,
        "low" => Thinking::Effort(Effort::Low),
        "medium" => Thinking::Effort(Effort::Medium),
        "high" => Thinking::Effort(Effort::High),
        other => match other.parse::<u32>() {
            Ok(budget) => Thinking::Budget(budget),
            Err(_) => {
                return Err(format!(
                    "AGENT_THINKING={value}: use off, low, medium, high or a token budget"
                ));
            }
        },
    }))
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let thinking = match thinking_from_env() {
        Ok(thinking) => thinking,
        Err(message) => {
            eprintln!("error: {message}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let agent = match from_env() {
        Ok(Some(model)) => {
            println!("(model: {model}; /reset starts over, Ctrl-D quits)");
            agent_with(model)
        }
        Ok(None) => {
            println!(
                "(offline: no AGENT_MODEL or API key set, so a scripted model plays the LLM; /reset starts over, Ctrl-D quits)"
            );
            agent_with(scripted_model())
        }
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let agent = match thinking {
        Some(thinking) => agent.thinking(thinking),
        None => agent,
    };
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let mut output = std::io::stdout();
    let style = if output.is_terminal() {
        Style::TERMINAL
    } else {
        Style::PLAIN
    };
    match chat(&agent, &mut input, &mut output, &style).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use super::{Style, agent_with, chat, scripted_model};

    #[tokio::test]
    async fn a_session_keeps_the_conversation_resets_and_quits_at_the_end_of_input() {
        let agent = agent_with(scripted_model());
        let mut input = Cursor::new("Umbrella in Beijing?\n\nWhat did I ask?\n/reset\nhi\n");
        let mut output = Vec::new();
        chat(&agent, &mut input, &mut output, &Style::PLAIN)
            .await
            .unwrap();
        let screen = String::from_utf8(output).unwrap();
        assert_eq!(
            screen,
            "\
>   thinking: An umbrella depends on the weather: ask the tool.
  [call get_weather {\"city\":\"Beijing\"}]
  [result Beijing: light rain, 18°C]
Light rain in Beijing: take an umbrella.
> > You asked about Beijing a moment ago.
> (conversation reset)
> Hello! What would you like to know?
> 
"
        );
    }
}
