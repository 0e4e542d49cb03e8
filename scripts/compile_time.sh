#!/usr/bin/env bash
# Compile time, measured (issue 17): what `#[tool]` costs a user's incremental build, and what the
# optional features cost a cold build of agent-core.
#
#   scripts/compile_time.sh            # both measurements (a cold build takes minutes)
#   scripts/compile_time.sh tools      # only 30 #[tool] functions against 30 hand-written tools
#   OPTIMIZE_MACROS=1 scripts/compile_time.sh tools   # the same with proc macros built optimized
#
# 1. Two crates in a scratch workspace (under $TMPDIR), each with 30 tools of two parameters and a
#    doc comment each: one with `#[tool]` on async fns, one implementing `Tool` by hand (a serde
#    struct for the arguments with a derived JSON schema, the definition built once, the call
#    parsed and answered). Both are built once, then each is rebuilt three times after touching
#    its source (`cargo build`, debug, incremental): the medians are printed.
# 2. `cargo build -p agent-core` from an empty target folder, default features and then
#    `--no-default-features`: the wall time of each.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/agent-core-compile-time.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
what="${1:-all}"

seconds() { # runs "$@" quietly, prints the wall time in seconds
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}

median() { printf '%s\n' "$@" | sort -n | sed -n "$(( ($# + 1) / 2 ))p"; }

tool_crates() {
  mkdir -p "$scratch/tools/macro_tools/src" "$scratch/tools/hand_tools/src"
  cat >"$scratch/tools/Cargo.toml" <<EOF
[workspace]
resolver = "3"
members = ["macro_tools", "hand_tools"]

[workspace.dependencies]
agent-core = { path = "$repo/agent-core", default-features = false }
schemars = "1.2"
serde = { version = "1", features = ["derive"] }
serde_json = "1"
EOF
  if [ -n "${OPTIMIZE_MACROS:-}" ]; then
    # Proc macros (and build scripts) built optimized: what is left is the code they generate.
    printf '\n[profile.dev.build-override]\nopt-level = 3\n' >>"$scratch/tools/Cargo.toml"
  fi
  for crate in macro_tools hand_tools; do
    cat >"$scratch/tools/$crate/Cargo.toml" <<EOF
[package]
name = "$crate"
version = "0.1.0"
edition = "2024"

[dependencies]
agent-core.workspace = true
schemars.workspace = true
serde.workspace = true
serde_json.workspace = true
EOF
  done
  {
    echo 'use agent_core::tool;'
    for i in $(seq 1 30); do
      cat <<EOF

/// Looks up entry $i of the catalogue: its label, repeated.
#[tool]
pub async fn lookup_$i(
    /// The label to look for
    label: String,
    /// How many times to repeat it
    times: u32,
) -> String {
    format!("$i: {}", label.repeat(times as usize))
}
EOF
    done
  } >"$scratch/tools/macro_tools/src/lib.rs"
  {
    cat <<'EOF'
use std::sync::OnceLock;

use agent_core::{
    BoxFuture, RunId, SyntaxError, SyntaxProblem, Tool, ToolCall, ToolDef, ToolError, ToolOutput,
    parameters_schema,
};
use schemars::JsonSchema;
use serde::Deserialize;

fn parse<'a, T: Deserialize<'a>>(call: &'a ToolCall) -> Result<T, ToolError> {
    serde_json::from_str(&call.arguments).map_err(|error| ToolError::InvalidJson {
        error: SyntaxError {
            problem: SyntaxProblem::Other(error.to_string()),
            line: error.line(),
            column: error.column(),
        },
    })
}
EOF
    for i in $(seq 1 30); do
      cat <<EOF

/// The arguments of \`lookup_$i\`.
#[derive(Deserialize, JsonSchema)]
pub struct Lookup${i}Args {
    /// The label to look for
    label: String,
    /// How many times to repeat it
    times: u32,
}

/// Looks up entry $i of the catalogue: its label, repeated.
pub struct Lookup$i;

impl Tool for Lookup$i {
    fn definition(&self) -> &ToolDef {
        static DEFINITION: OnceLock<ToolDef> = OnceLock::new();
        DEFINITION.get_or_init(|| {
            ToolDef::new(
                "lookup_$i",
                "Looks up entry $i of the catalogue: its label, repeated.",
                parameters_schema::<Lookup${i}Args>(),
            )
        })
    }

    fn call<'a>(
        &'a self,
        _state: &'a (),
        call: &'a ToolCall,
        _run: &'a RunId,
    ) -> BoxFuture<'a, Result<ToolOutput, ToolError>> {
        Box::pin(async move {
            let args: Lookup${i}Args = parse(call)?;
            Ok(ToolOutput::Text(format!("$i: {}", args.label.repeat(args.times as usize))))
        })
    }
}
EOF
    done
  } >"$scratch/tools/hand_tools/src/lib.rs"

  (cd "$scratch/tools" && cargo build -q 2>&1)
  for crate in macro_tools hand_tools; do
    local times=()
    for _ in 1 2 3; do
      touch "$scratch/tools/$crate/src/lib.rs"
      times+=("$(cd "$scratch/tools" && seconds cargo build -p "$crate")")
    done
    echo "$crate: incremental debug build after a touch, median of 3: $(median "${times[@]}") s (${times[*]})"
  done
}

cold_builds() {
  for features in "" "--no-default-features"; do
    local target="$scratch/target-cold"
    rm -rf "$target"
    echo "cargo build -p agent-core ${features:-(default features)}: $(cd "$repo" && CARGO_TARGET_DIR="$target" seconds cargo build -p agent-core $features) s, cold"
  done
}

tool_crates
if [ "$what" != "tools" ]; then
  cold_builds
fi
