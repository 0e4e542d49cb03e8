//! Human approval before a dangerous tool: the agent may list files freely, but every call to
//! `delete_file` (marked `requires_approval`) asks on the terminal first. A "no" reaches the model as
//! an error result, and the run goes on.
//!
//! `cargo run -p examples --example approval` runs offline with a scripted model that tries to
//! delete two files; answer `y` or `n` at each prompt. With a provider in the environment (see
//! `providers::from_env`) it runs against the real model.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, Approval, AssistantMessage, Message, Model, RunError, State, ToolCall, ToolDef, agent,
    tool,
};

/// A pretend file system, shared by the tools.
#[derive(Clone)]
struct Files(Arc<Mutex<BTreeSet<String>>>);

impl Files {
    fn sample() -> Self {
        let names = ["notes.txt", "photos/", "report.pdf"].map(str::to_owned);
        Files(Arc::new(Mutex::new(names.into_iter().collect())))
    }

    fn names(&self) -> Vec<String> {
        self.0
            .lock()
            .map(|files| files.iter().cloned().collect())
            .unwrap_or_default()
    }
}

/// List the files in the working folder.
#[tool(read_only)]
fn list_files(State(files): State<Files>) -> Vec<String> {
    files.names()
}

/// Delete a file from the working folder. It cannot be undone.
#[tool(destructive, requires_approval)]
fn delete_file(
    State(files): State<Files>,
    /// The file's name, as `list_files` gives it
    path: String,
) -> Result<String, String> {
    let mut files = files
        .0
        .lock()
        .map_err(|_| "the file system is unavailable".to_owned())?;
    if files.remove(&path) {
        Ok(format!("deleted {path}"))
    } else {
        Err(format!("no file named {path}"))
    }
}

/// Asks a person, one question at a time, on `input` and `output`.
#[derive(Clone)]
struct Terminal {
    input: Arc<Mutex<dyn BufRead + Send>>,
    output: Arc<Mutex<dyn Write + Send>>,
}

impl Terminal {
    /// Shows the call and reads `y` or `n`; anything else, or the end of input, is a no.
    fn ask(&self, call: &ToolCall, tool: &ToolDef) -> Approval {
        let (Ok(mut input), Ok(mut output)) = (self.input.lock(), self.output.lock()) else {
            return Approval::deny("the terminal is unavailable");
        };
        let _ = write!(output, "  allow {} {}? [y/N] ", tool.name, call.arguments);
        let _ = output.flush();
        let mut answer = String::new();
        let _ = input.read_line(&mut answer);
        let _ = writeln!(output, "{}", answer.trim());
        if answer.trim().eq_ignore_ascii_case("y") {
            Approval::Approve
        } else {
            Approval::deny("the user said no")
        }
    }
}

fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new("call_1", "list_files", "{}")]),
        AssistantMessage::tool_calls([
            ToolCall::new("call_2", "delete_file", r#"{"path":"notes.txt"}"#),
            ToolCall::new("call_3", "delete_file", r#"{"path":"photos/"}"#),
        ]),
        AssistantMessage::text("I deleted what you allowed and kept the rest."),
    ])
}

/// Runs the agent with `model`, asking `terminal` before each deletion; returns what it printed
/// after the prompts: each step and the files left.
async fn run(model: impl Model + 'static, terminal: Terminal) -> Result<String, RunError> {
    let files = Files::sample();
    let agent: Agent = agent!(model, list_files, delete_file)
        .sequential_tools() // one question at a time
        .approve_with(move |call: ToolCall, tool: ToolDef| {
            let terminal = terminal.clone();
            // The terminal blocks; a real application would use spawn_blocking or an async reader.
            async move { terminal.ask(&call, &tool) }
        })
        .bind_context(files.clone());
    let output = agent.run("Clean up my working folder.").await?;
    let mut text = String::new();
    for message in &output.messages {
        match message {
            Message::Assistant(reply) => {
                for call in &reply.tool_calls {
                    text.push_str(&format!("call   {} {}\n", call.name, call.arguments));
                }
                if reply.tool_calls.is_empty() {
                    text.push_str(&format!("answer {}\n", reply.content));
                }
            }
            Message::Tool(result) => {
                let status = if result.is_error { "error " } else { "result" };
                text.push_str(&format!("{status} {}\n", result.content));
            }
            _ => {}
        }
    }
    text.push_str(&format!("files left: {}\n", files.names().join(", ")));
    Ok(text)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let terminal = Terminal {
        input: Arc::new(Mutex::new(std::io::BufReader::new(std::io::stdin()))),
        output: Arc::new(Mutex::new(std::io::stdout())),
    };
    let printed = match from_env() {
        Ok(Some(model)) => {
            println!("(model: {model})");
            run(model, terminal).await
        }
        Ok(None) => {
            println!("(offline: no AGENT_MODEL or API key set, so a scripted model plays the LLM)");
            run(scripted_model(), terminal).await
        }
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match printed {
        Ok(text) => {
            print!("{text}");
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;
    use std::sync::{Arc, Mutex};

    use super::{Terminal, run, scripted_model};

    /// Answers the prompts with `answers`; returns what was printed at the prompts and after.
    async fn answering(answers: &str) -> (String, String) {
        let output = Arc::new(Mutex::new(Vec::<u8>::new()));
        let terminal = Terminal {
            input: Arc::new(Mutex::new(Cursor::new(answers.as_bytes().to_vec()))),
            output: output.clone(),
        };
        let printed = run(scripted_model(), terminal).await.unwrap();
        let prompts = String::from_utf8(output.lock().unwrap().clone()).unwrap();
        (prompts, printed)
    }

    #[tokio::test]
    async fn a_yes_deletes_and_a_no_reaches_the_model_as_an_error() {
        let (prompts, printed) = answering("y\nn\n").await;
        assert_eq!(
            prompts,
            "  allow delete_file {\"path\":\"notes.txt\"}? [y/N] y\n  allow delete_file {\"path\":\"photos/\"}? [y/N] n\n"
        );
        assert_eq!(
            printed,
            "\
call   list_files {}
result [\"notes.txt\",\"photos/\",\"report.pdf\"]
call   delete_file {\"path\":\"notes.txt\"}
call   delete_file {\"path\":\"photos/\"}
result deleted notes.txt
error  Error: the call was not run: the user did not approve this call: the user said no
answer I deleted what you allowed and kept the rest.
files left: photos/, report.pdf
"
        );
    }

    #[tokio::test]
    async fn no_answer_at_all_is_a_no() {
        let (_, printed) = answering("").await;
        assert!(
            printed.ends_with("files left: notes.txt, photos/, report.pdf\n"),
            "{printed}"
        );
    }
}
