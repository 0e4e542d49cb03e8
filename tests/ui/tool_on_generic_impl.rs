use agent_core::tool;

struct Store<T> {
    items: Vec<T>,
}

#[tool]
impl<T: Clone + Send + Sync + 'static> Store<T> {
    /// Count the items.
    #[tool]
    fn count(&self) -> usize {
        self.items.len()
    }
}

fn main() {}
