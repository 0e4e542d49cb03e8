//! Approval that waits for a person, across processes: the agent may look at the logs freely,
//! but deleting them (a `requires_approval` tool) cannot happen in this run. The run pauses, its
//! state goes to an SQLite file with the conversation, and the program exits. Run it again with
//! `--approve` or `--deny [reason]`: it loads the paused run from the file, runs (or refuses) the
//! deletion, and the agent finishes.
//!
//! ```text
//! cargo run -p examples --example approve_later
//! cargo run -p examples --example approve_later -- --approve
//! ```
//!
//! Offline by default (a scripted model plays each half); with a provider in the environment (see
//! `providers::from_env`) a real model drives both. `--db PATH` picks the file (default: in the
//! system's temporary folder).

use std::path::PathBuf;
use std::process::ExitCode;

use agent_core::providers::from_env;
use agent_core::session::SessionStore;
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, Decision, Model, RunOutput, StopReason, ToolCall, tool};
use agent_sql::SqliteSessions;

/// The conversation this example keeps in the file.
const CONVERSATION: &str = "cleanup";

/// List the log files and their sizes.
#[tool(read_only)]
fn list_logs() -> Vec<String> {
    vec!["app.log: 1.2 GB".into(), "app.log.1: 800 MB".into()]
}

/// Delete log files. It cannot be undone.
#[tool(destructive, requires_approval)]
fn delete_logs(
    /// The files to delete, as `list_logs` names them
    files: Vec<String>,
) -> String {
    format!("deleted {}", files.join(", "))
}

/// What to do this time.
#[derive(Debug, PartialEq)]
enum Command {
    /// Start the cleanup; it pauses at the deletion.
    Start,
    /// Go on with the paused run.
    Decide(Decision),
}

fn parse(arguments: &[String]) -> Result<(Command, PathBuf), String> {
    let mut command = Command::Start;
    let mut database = std::env::temp_dir().join("agent-core-approve-later.db");
    let mut arguments = arguments.iter();
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--approve" => command = Command::Decide(Decision::Approve),
            "--deny" => {
                let reason = arguments.next().cloned();
                command = Command::Decide(Decision::Deny { reason });
            }
            "--db" => {
                let path = arguments.next().ok_or("--db needs a path")?;
                database = PathBuf::from(path);
            }
            other => {
                return Err(format!(
                    "unknown argument `{other}`; use --approve, --deny [reason] or --db PATH"
                ));
            }
        }
    }
    Ok((command, database))
}

/// The offline stand-in for each half: the first asks to delete, the second sums up.
fn scripted_model(command: &Command) -> ScriptedModel {
    match command {
        Command::Start => ScriptedModel::new([
            AssistantMessage::tool_calls([ToolCall::new("call_1", "list_logs", "{}")]),
            AssistantMessage::tool_calls([ToolCall::new(
                "call_2",
                "delete_logs",
                r#"{"files":["app.log","app.log.1"]}"#,
            )]),
        ]),
        Command::Decide(_) => ScriptedModel::new([AssistantMessage::text(
            "Done: the disk has 2 GB more room, or the logs stay if you said no.",
        )]),
    }
}

fn agent_with(model: impl Model + 'static) -> Agent {
    Agent::new(model)
        .try_tools([list_logs {}])
        .and_then(|agent| agent.try_tool(delete_logs {}))
        .expect("valid tools")
        .defer_approvals()
}

/// One half: start (and pause), or decide and finish. Returns what to print.
async fn run(
    agent: &Agent,
    store: &dyn SessionStore,
    command: Command,
    database: &std::path::Path,
) -> Result<String, String> {
    let output: RunOutput = match command {
        Command::Start => agent
            .run("Free some disk space: clean up the logs.")
            .session(store, CONVERSATION)
            .await
            .map_err(|error| error.to_string())?,
        Command::Decide(decision) => {
            let stored = store
                .load(CONVERSATION)
                .await
                .map_err(|error| error.to_string())?;
            let paused = stored
                .paused
                .ok_or("nothing waits for a decision: run without --approve/--deny first")?;
            let decisions: Vec<(String, Decision)> = paused
                .pending()
                .iter()
                .map(|pending| (pending.call.id.clone(), decision.clone()))
                .collect();
            agent
                .resume_session(decisions)
                .session(store, CONVERSATION)
                .await
                .map_err(|error| error.to_string())?
        }
    };
    if output.stop_reason != StopReason::Paused {
        return Ok(output.text);
    }
    let mut screen = String::new();
    for pending in output.paused.iter().flat_map(|paused| paused.pending()) {
        screen.push_str(&format!(
            "waiting for approval: {} {}\n",
            pending.call.name, pending.call.arguments
        ));
    }
    screen.push_str(&format!(
        "saved in {}; run again with --approve or --deny [reason]",
        database.display()
    ));
    Ok(screen)
}

/// Runs one half; `from_environment` lets a provider in the environment drive it (the tests
/// stay offline).
async fn main_with(arguments: &[String], from_environment: bool) -> Result<String, String> {
    let (command, database) = parse(arguments)?;
    let store = SqliteSessions::open(&database).map_err(|error| error.to_string())?;
    let model = if from_environment {
        from_env().map_err(|error| error.to_string())?
    } else {
        None
    };
    let agent = match model {
        Some(model) => agent_with(model),
        None => agent_with(scripted_model(&command)),
    };
    run(&agent, &store, command, &database).await
}

#[tokio::main]
async fn main() -> ExitCode {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    match main_with(&arguments, true).await {
        Ok(screen) => {
            println!("{screen}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database file in a fresh folder, removed with the folder when the test is over.
    fn database(name: &str) -> (tempfile::TempDir, String) {
        let folder = tempfile::Builder::new()
            .prefix("agent-core-approve-later-")
            .tempdir()
            .unwrap();
        let path = folder.path().join(format!("{name}.db"));
        (folder, path.display().to_string())
    }

    #[tokio::test]
    async fn it_pauses_then_finishes_when_approved_or_denied() {
        for (name, decision) in [
            ("approve", vec!["--approve"]),
            ("deny", vec!["--deny", "not now"]),
        ] {
            let (_folder, db) = database(name);
            let first = main_with(&["--db".into(), db.clone()], false)
                .await
                .unwrap();
            assert!(
                first.starts_with(
                    "waiting for approval: delete_logs {\"files\":[\"app.log\",\"app.log.1\"]}\n"
                ),
                "{first}"
            );
            assert!(first.contains("run again with --approve"), "{first}");

            let mut again: Vec<String> = decision.iter().map(|word| word.to_string()).collect();
            again.extend(["--db".into(), db.clone()]);
            let second = main_with(&again, false).await.unwrap();
            assert!(second.starts_with("Done:"), "{second}");

            // The file holds the whole conversation, the deletion answered as decided.
            let store = SqliteSessions::open(&db).unwrap();
            let stored = store.load(CONVERSATION).await.unwrap();
            assert!(stored.paused.is_none());
            let result = stored
                .messages
                .iter()
                .rev()
                .find_map(|message| match message {
                    agent_core::Message::Tool(result) => Some(result.content.clone()),
                    _ => None,
                })
                .unwrap();
            match name {
                "approve" => assert_eq!(result, "deleted app.log, app.log.1"),
                _ => assert!(
                    result.ends_with("did not approve this call: not now"),
                    "{result}"
                ),
            }
            // Nothing waits now.
            let nothing = main_with(&["--approve".into(), "--db".into(), db], false).await;
            assert!(nothing.unwrap_err().starts_with("nothing waits"));
        }
    }

    #[test]
    fn bad_arguments_say_what_to_use() {
        assert!(
            parse(&["--nope".into()])
                .unwrap_err()
                .contains("--approve, --deny")
        );
        assert_eq!(
            parse(&["--deny".into()]).unwrap().0,
            Command::Decide(Decision::Deny { reason: None })
        );
    }
}
