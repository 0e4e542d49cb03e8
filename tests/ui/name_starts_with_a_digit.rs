use agent_core::tool;

/// Render a model in 3D.
#[tool(name = "3d_render")]
fn render(model: String) -> String {
    model
}

fn main() {}
