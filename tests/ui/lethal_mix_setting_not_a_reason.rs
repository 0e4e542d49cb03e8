use agent_core::testing::ScriptedModel;
use agent_core::{AssistantMessage, agent, tool};

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

fn main() {
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent = agent!(model, fetch_page, read_inbox, send_email; allow_lethal_mix = 3);
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent = agent!(model, fetch_page, read_inbox, send_email; allow_lethal_mix = "");
    let model = ScriptedModel::new([AssistantMessage::text("hi")]);
    let _agent = agent!(
        model, fetch_page, read_inbox, send_email;
        allow_lethal_mix = "demo",
        allow_lethal_mix = "again",
    );
}
