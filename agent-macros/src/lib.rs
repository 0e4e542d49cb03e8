//! Procedural macros for `agent-core`. Use them through `agent_core::{tool, agent, tools}`: the generated
//! code refers to `::agent_core`, or to the path given by `#[tool(crate = "...")]` and
//! `agent!(crate = path; ...)`.

use proc_macro::TokenStream;

mod agent;
mod respan;
mod tool;

/// Turns a function into a tool the model can call. See `agent_core::tool` for the full story.
///
/// The function keeps its signature. Beside it appears a unit struct of the same name (in the type
/// namespace only) that implements `agent_core::Tool`, which is what `agent!` and `Agent::try_tool` take.
///
/// On an inherent `impl` block, `#[tool]` makes each method of the block marked `#[tool]` a tool
/// that calls the method on one shared value, and the type an `agent_core::ToolBox`, which
/// `Agent::try_toolbox` takes; see `ToolBox` for the rules.
#[proc_macro_attribute]
pub fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let source = tool::Source::of(proc_macro::Span::call_site());
    tool::expand(attr.into(), item.into(), &source).into()
}

/// Builds an agent from a model and `#[tool]` functions: `agent!(model, tool_a, module::tool_b)`,
/// or `agent!(crate = path::to::agent_core; model, tool_a)` from a crate that re-exports agent-core.
///
/// Listing a tool twice, or two tools with the same name, is a compile error.
///
/// So is the lethal mix: tools that read untrusted content (`#[tool(reads_untrusted)]`), tools
/// that read private data (`#[tool(reads_private)]`) and tools that send data out
/// (`#[tool(sends_out)]`) without `requires_approval`, in one agent. Settings after the tools,
/// behind a `;`, answer for it: `agent!(model, a, b; guard_results = guard)` adds a guard on the
/// tools' results (`Agent::guard(At::RESULTS, guard)`), and
/// `agent!(model, a, b; allow_lethal_mix = "why")` accepts the risk (`Agent::allow_lethal_mix`).
#[proc_macro]
pub fn agent(input: TokenStream) -> TokenStream {
    agent::expand_agent(input.into()).into()
}

/// Builds a tool set from `#[tool]` functions: `tools!(tool_a, module::tool_b)` (or
/// `tools!(crate = path; tool_a)`), with the checks of `agent!`. For serving tools over MCP or dispatching calls without an agent.
#[proc_macro]
pub fn tools(input: TokenStream) -> TokenStream {
    agent::expand_tools(input.into()).into()
}
