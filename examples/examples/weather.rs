//! The reference loop, in Rust: an agent with a weather tool and a clock answers "Do I need an
//! umbrella in Beijing today?".
//!
//! `cargo run -p examples --example weather` runs offline: a scripted model plays the LLM, makes one
//! mistake (a unit the tool does not know), reads the error result, corrects itself, and answers.
//! Every step is printed: the model's tool calls, each tool result, the final answer.
//!
//! With a provider in the environment it runs against the real model instead, e.g.
//! `OPENAI_API_KEY=... cargo run -p examples --example weather`, or
//! `AGENT_MODEL=ollama:qwen2.5 cargo run -p examples --example weather` (see `providers::from_env`).

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{
    AssistantMessage, Message, Model, RunError, RunOutput, StopReason, ToolCall, agent,
};
use examples::weather::{get_time, get_weather};

/// The offline stand-in for an LLM: the replies a model would plausibly give.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "get_weather",
            r#"{"city":"Beijing","unit":"kelvin"}"#,
        )]),
        AssistantMessage::tool_calls([
            ToolCall::new("call_2", "get_weather", r#"{"city":"Beijing"}"#),
            ToolCall::new("call_3", "get_time", r#"{"city":"Beijing"}"#),
        ])
        .with_text("Kelvin is not supported; asking in Celsius, and checking the time too."),
        AssistantMessage::text(
            "Yes: light rain and 18°C in Beijing this morning. Take an umbrella.",
        ),
    ])
}

/// Runs the agent with `model` and renders its transcript.
async fn run(model: impl Model + 'static) -> Result<String, RunError> {
    let agent = agent!(model, get_weather, get_time).max_steps(10);
    let output = agent.run("Do I need an umbrella in Beijing today?").await?;
    Ok(render(&output))
}

/// Each step of a run, readably: what the model said and called, what each tool returned.
fn render(output: &RunOutput) -> String {
    let mut text = String::new();
    let mut step = 0;
    for message in &output.messages {
        match message {
            Message::User { content, .. } => text.push_str(&format!("user: {content}\n")),
            Message::Assistant(reply) if !reply.tool_calls.is_empty() => {
                step += 1;
                text.push_str(&format!("step {step}:\n"));
                if !reply.content.is_empty() {
                    text.push_str(&format!("  model: {}\n", reply.content));
                }
                for call in &reply.tool_calls {
                    text.push_str(&format!(
                        "  call   {} {} {}\n",
                        call.id, call.name, call.arguments
                    ));
                }
            }
            Message::Tool(result) => {
                let status = if result.is_error { "error " } else { "result" };
                text.push_str(&format!(
                    "  {status} {} {}\n",
                    result.tool_call_id, result.content
                ));
            }
            Message::Assistant(reply) => text.push_str(&format!("answer: {}\n", reply.content)),
            _ => {}
        }
    }
    let ending = match output.stop_reason {
        StopReason::Finished => "finished",
        StopReason::StepLimit { .. } => "stopped at the step limit",
        _ => "stopped",
    };
    text.push_str(&format!("({ending} after {} model calls)\n", output.steps));
    text
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    match choose_model_and_run().await {
        Ok(printed) => {
            print!("{printed}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Runs against the model the environment names, or offline when it names none.
async fn choose_model_and_run() -> Result<String, Box<dyn std::error::Error>> {
    let printed = match from_env()? {
        Some(model) => {
            println!("(model: {model})");
            run(model).await?
        }
        None => {
            println!("(offline: no AGENT_MODEL or API key set, so a scripted model plays the LLM)");
            run(scripted_model()).await?
        }
    };
    Ok(printed)
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_offline_and_prints_every_step() {
        let printed = super::run(super::scripted_model()).await.unwrap();
        let expected = "\
user: Do I need an umbrella in Beijing today?
step 1:
  call   call_1 get_weather {\"city\":\"Beijing\",\"unit\":\"kelvin\"}
  error  call_1 Error: invalid arguments: unit: unknown variant `kelvin`, expected `celsius` or `fahrenheit`
step 2:
  model: Kelvin is not supported; asking in Celsius, and checking the time too.
  call   call_2 get_weather {\"city\":\"Beijing\"}
  call   call_3 get_time {\"city\":\"Beijing\"}
  result call_2 {\"city\":\"Beijing\",\"weather\":\"light rain\",\"temp\":18,\"unit\":\"°C\"}
  result call_3 It is 08:30 in Beijing.
answer: Yes: light rain and 18°C in Beijing this morning. Take an umbrella.
(finished after 3 model calls)
";
        assert_eq!(printed, expected);
    }
}
