use agent_core::tool;

struct Search;

#[tool]
impl Search {
    /// Search the web.
    #[tool]
    async fn search(&self, query: String) -> String {
        query
    }

    /// Search the docs.
    #[tool(name = "search")]
    async fn search_docs(&self, query: String) -> String {
        query
    }
}

fn main() {}
