use agent_core::tool;

mod billing {
    /// A type of one's own, named like agent-core's.
    pub struct CallInfo;
}

use billing::CallInfo;

/// Charge the card on file.
#[tool]
fn charge(call: CallInfo, cents: u32) -> String {
    let _ = call;
    cents.to_string()
}

fn main() {}
