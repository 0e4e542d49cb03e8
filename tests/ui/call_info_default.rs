use agent_core::{CallInfo, tool};

/// Charge the card on file.
#[tool]
fn charge(#[arg(default)] call: CallInfo, cents: u32) -> String {
    format!("{} {cents}", call.call_id)
}

fn main() {}
