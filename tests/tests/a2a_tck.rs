//! The A2A endpoint (`agent_a2a::A2aServer`) against the A2A technology compatibility kit: every
//! MUST test of the 1.0 suite on the JSON-RPC transport (`tests::a2a::run_tck`).
//!
//! The kit tells the agent under test what to do by the prefix of each message's id
//! (`tck-complete-task`, `tck-input-required`, `tck-artifact-file`, ...). The agent under test
//! is the crate's own, `agent_a2a::tck::server()`: an agent (an `AgentHandler`, a model that reads
//! the scenario from the message and a tool that needs approval) behind `tck::Scenarios`, which
//! makes the artifacts and the message-only answer the kit asks for itself: every task, stream,
//! history, cancel, subscription and error is the server's.

use tests::a2a::{A2A_TCK, run_tck};
use tests::peers::Test;

/// Every MUST test of the kit passes.
async fn the_tck_must_tests_pass() {
    let server = agent_a2a::tck::server();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(server.serve(listener));
    let run = run_tck(&url).await;
    eprintln!(
        "the A2A TCK: {} passed, {} skipped",
        run.passed, run.skipped
    );
    assert!(run.success && run.failed == 0, "{}", run.output);
    assert!(run.passed >= 81, "{} passed:\n{}", run.passed, run.output);
}

fn main() -> std::process::ExitCode {
    tests::peers::main([
        Test::tokio("the_tck_must_tests_pass", the_tck_must_tests_pass).needs(&A2A_TCK),
    ])
}
