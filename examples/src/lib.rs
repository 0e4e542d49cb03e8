//! Examples live in `examples/`; run one with `cargo run -p examples --example weather`. The MCP
//! server binary is `cargo run -p examples --bin mcp_server`.

pub mod assistant;
pub mod signed_in;
pub mod weather;
