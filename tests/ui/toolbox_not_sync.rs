use std::cell::Cell;

use agent_core::tool;

struct Counter {
    count: Cell<u64>,
}

#[tool]
impl Counter {
    /// Bump the counter.
    #[tool]
    fn bump(&self) -> u64 {
        self.count.set(self.count.get() + 1);
        self.count.get()
    }
}

fn main() {}
