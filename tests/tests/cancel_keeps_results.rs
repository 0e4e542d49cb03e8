//! A cancel or the time limit drops only the calls still in flight: a call of the same step that
//! finished keeps its real result (its effects happened, the hooks saw it), in a plain run, a
//! resumed run and a session run, whose store then holds the real result. A call cut off after
//! it started is told as interrupted (it may have had its effect), one that never started as not
//! run, and the hooks see both.

use std::time::Duration;

use agent_core::session::{MemorySessions, SessionStore};
use agent_core::{Agent, Decision, RunOutput, State, StopReason, ToolResultMessage, agent, tool};
use tests::{Progress, call, model_calling, results_in};

/// Writes a note at once (a side effect the transcript must not deny).
#[tool(requires_approval)]
async fn write_note(State(progress): State<Progress>, note: String) -> String {
    progress.quick_finished();
    format!("wrote {note}")
}

/// Takes an hour.
#[tool(requires_approval)]
async fn slow_report(State(progress): State<Progress>) -> String {
    progress.slow_began();
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "report".to_owned()
}

/// What the model reads of a call the cancel cut off after it started.
const INTERRUPTED: &str = "Error: the call was interrupted when the run was cancelled: it had \
     started and may have had its effect, so check before calling it again";

/// What the model reads of a call the cancel came before.
const NOT_STARTED: &str =
    "Error: the call was not run: the run was cancelled before this call started";

fn contents(output: &RunOutput) -> Vec<&str> {
    results_in(&output.messages)
        .into_iter()
        .map(|result| result.content.as_str())
        .collect()
}

/// An agent whose model asks for a note and the slow report in one reply; calls run when the
/// approver approves them (every call, unless `defer`).
fn agent(progress: &Progress, defer: bool) -> Agent {
    let model = model_calling(
        [
            call(0, "write_note", r#"{"note":"milk"}"#),
            call(1, "slow_report", "{}"),
            call(2, "write_note", r#"{"note":"eggs"}"#),
        ],
        "unreachable",
    );
    let agent = agent!(model, write_note, slow_report);
    let agent = if defer {
        agent.defer_approvals()
    } else {
        agent.approve_with(|_, _| std::future::ready(agent_core::Approval::Approve))
    };
    agent.bind_context(progress.clone())
}

#[tokio::test]
async fn a_cancelled_run_keeps_the_results_of_calls_that_finished() {
    let progress = Progress::default();
    let agent = agent(&progress, false);
    let output = agent
        .run("go")
        .until(progress.clone().reached(2))
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::Cancelled);
    assert_eq!(
        contents(&output),
        ["wrote milk", INTERRUPTED, "wrote eggs"],
        "only the call in flight is answered, as interrupted"
    );
}

#[tokio::test]
async fn the_time_limit_keeps_the_results_of_calls_that_finished() {
    let progress = Progress::default();
    let agent = agent(&progress, false).time_limit(Duration::from_millis(300));
    let output = agent.run("go").await.unwrap();
    assert!(
        matches!(output.stop_reason, StopReason::TimeLimit { .. }),
        "{:?}",
        output.stop_reason
    );
    let contents = contents(&output);
    assert_eq!(contents[0], "wrote milk");
    assert_eq!(contents[2], "wrote eggs");
    assert!(
        contents[1].contains("time limit"),
        "the slow call is answered as cut by the time limit: {}",
        contents[1]
    );
}

#[tokio::test]
async fn a_cancelled_resume_keeps_finished_and_decided_results() {
    let progress = Progress::default();
    let agent = agent(&progress, true);
    let paused = agent.run("go").await.unwrap();
    assert_eq!(paused.stop_reason, StopReason::Paused);
    let decisions = [
        ("call_0", Decision::Approve),
        ("call_1", Decision::Approve),
        ("call_2", Decision::deny("not eggs")),
    ];
    let output = agent
        .resume(paused.paused.unwrap(), decisions)
        .until(progress.clone().reached(1))
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::Cancelled);
    let contents = contents(&output);
    assert_eq!(contents[0], "wrote milk");
    assert_eq!(contents[1], INTERRUPTED);
    assert!(
        contents[2].contains("not eggs"),
        "the denial stays a denial: {}",
        contents[2]
    );
}

#[tokio::test]
async fn a_cancelled_session_run_stores_the_real_results() {
    let progress = Progress::default();
    let agent = agent(&progress, false);
    let store = MemorySessions::new();
    let output = agent
        .run("go")
        .session(&store, "notes")
        .until(progress.clone().reached(2))
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::Cancelled);
    let stored = store.load("notes").await.unwrap();
    let stored: Vec<&str> = results_in(&stored.messages)
        .into_iter()
        .map(|result| result.content.as_str())
        .collect();
    assert_eq!(stored, ["wrote milk", INTERRUPTED, "wrote eggs"]);
}

/// Records each result the hooks are shown.
#[derive(Clone, Default)]
struct Seen(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl agent_core::Hooks<Progress> for Seen {
    fn on_tool_result(
        &self,
        _context: &Progress,
        _call: &agent_core::ToolCall,
        result: &ToolResultMessage,
        _elapsed: Duration,
    ) {
        self.0.lock().unwrap().push(result.content.clone());
    }
}

#[tokio::test]
async fn one_call_at_a_time_tells_interrupted_from_not_run_and_the_hooks_see_both() {
    let progress = Progress::default();
    let seen = Seen::default();
    let model = model_calling(
        [
            call(0, "write_note", r#"{"note":"milk"}"#),
            call(1, "slow_report", "{}"),
            call(2, "write_note", r#"{"note":"eggs"}"#),
        ],
        "unreachable",
    );
    let agent = agent!(model, write_note, slow_report)
        .sequential_tools()
        .approve_with(|_, _| std::future::ready(agent_core::Approval::Approve))
        .hook(seen.clone())
        .bind_context(progress.clone());
    // Cancelled once the note is written and the report has begun.
    let output = agent
        .run("go")
        .until(progress.clone().reached(1))
        .await
        .unwrap();
    assert_eq!(output.stop_reason, StopReason::Cancelled);
    assert_eq!(contents(&output), ["wrote milk", INTERRUPTED, NOT_STARTED]);
    assert_eq!(
        *seen.0.lock().unwrap(),
        ["wrote milk", INTERRUPTED, NOT_STARTED]
    );
}
