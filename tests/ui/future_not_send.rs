use std::rc::Rc;

use agent_core::tool;

async fn fetch() -> u32 {
    7
}

/// Count something, holding an `Rc` across an `.await`.
#[tool]
async fn count() -> u32 {
    let shared = Rc::new(1);
    let more = fetch().await;
    *shared + more
}

fn main() {}
