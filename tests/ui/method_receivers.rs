use std::rc::Rc;

use agent_core::tool;

struct Counter {
    count: u64,
}

#[tool]
impl Counter {
    /// Take the counter.
    #[tool]
    fn take(self) -> u64 {
        self.count
    }

    /// Bump the counter.
    #[tool]
    fn bump(&mut self) -> u64 {
        self.count += 1;
        self.count
    }

    /// Read the counter through an `Rc`.
    #[tool]
    fn read(self: Rc<Self>) -> u64 {
        self.count
    }
}

fn main() {}
