use agent_core::guard::{At, Verdict, guard_fn};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, agent, tool};

/// Fetch a web page.
#[tool(reads_untrusted)]
fn fetch_page(url: String) -> String {
    url
}

/// Read the user's inbox.
#[tool(reads_private)]
fn read_inbox() -> String {
    String::new()
}

/// Send an email.
#[tool(sends_out)]
fn send_email(to: String, body: String) -> String {
    format!("{to}: {body}")
}

// A guard chained after `agent!` comes after its check of the tools: the error says to give the
// guard inside, `agent!(model, ...; guard_results = ...)`, which compiles.
fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent: Agent = agent!(model, fetch_page, read_inbox, send_email)
        .guard(At::RESULTS, guard_fn("g", |_| Verdict::Allow));
}
