//! The lethal mix: an agent that reads untrusted content, can read private data, and can send
//! data out will sooner or later be told by the untrusted content to send the private data out
//! (a prompt injection). Such an agent must have an approval on every tool that sends data out,
//! or a guard on its tools' results, or say in code that it takes the risk
//! ([`Agent::allow_lethal_mix`](crate::Agent::allow_lethal_mix)); otherwise `agent!` does not
//! compile it and a run refuses to start ([`RunError::LethalMix`](crate::RunError::LethalMix)).

use std::fmt;

use crate::tool::{ToolAnnotations, ToolDef};

/// What a tool touches, as the lethal-mix check reads it (from its [`ToolAnnotations`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Touches {
    /// It reads content no one vouches for.
    pub reads_untrusted: bool,
    /// It reads private data.
    pub reads_private: bool,
    /// It can send data out.
    pub sends_out: bool,
    /// Each call waits for a person's approval.
    pub requires_approval: bool,
}

impl Touches {
    /// Nothing.
    pub const NONE: Touches = Touches {
        reads_untrusted: false,
        reads_private: false,
        sends_out: false,
        requires_approval: false,
    };

    /// What a tool with `annotations` touches.
    pub fn of(annotations: &ToolAnnotations) -> Self {
        Touches {
            reads_untrusted: annotations.reads_untrusted,
            reads_private: annotations.reads_private,
            sends_out: annotations.sends_out,
            requires_approval: annotations.requires_approval,
        }
    }

    /// It sends data out with no person to approve each call.
    pub const fn sends_out_unapproved(self) -> bool {
        self.sends_out && !self.requires_approval
    }

    /// What a tool made of `tools` touches (an agent called as a tool, with its agent's tools):
    /// all that any of them reads, and a way out when one of them sends data out without an
    /// approval (one that waits for a person is still asked inside). Its calls need no approval
    /// of their own for it.
    pub fn of_all<'a>(tools: impl IntoIterator<Item = &'a ToolDef>) -> Self {
        tools.into_iter().fold(Touches::NONE, |all, tool| {
            let touches = Touches::of(&tool.annotations);
            Touches {
                reads_untrusted: all.reads_untrusted || touches.reads_untrusted,
                reads_private: all.reads_private || touches.reads_private,
                sends_out: all.sends_out || touches.sends_out_unapproved(),
                requires_approval: false,
            }
        })
    }

    /// Marks `annotations` with what this touches (besides what they say already).
    pub fn mark(self, annotations: &mut ToolAnnotations) {
        annotations.reads_untrusted |= self.reads_untrusted;
        annotations.reads_private |= self.reads_private;
        annotations.sends_out |= self.sends_out;
        annotations.requires_approval |= self.requires_approval;
    }
}

/// The lethal mix in an agent's tools: the tools of each kind (a tool may be of several).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LethalMix {
    /// The tools that read untrusted content.
    pub untrusted: Vec<String>,
    /// The tools that read private data.
    pub private: Vec<String>,
    /// The tools that send data out without an approval.
    pub sends_out: Vec<String>,
}

impl LethalMix {
    /// The mix among `tools`, if they make one: at least one reads untrusted content, one reads
    /// private data, and one sends data out without an approval.
    pub fn among<'a>(tools: impl IntoIterator<Item = &'a ToolDef>) -> Option<LethalMix> {
        let mut mix = LethalMix {
            untrusted: Vec::new(),
            private: Vec::new(),
            sends_out: Vec::new(),
        };
        for tool in tools {
            let touches = Touches::of(&tool.annotations);
            if touches.reads_untrusted {
                mix.untrusted.push(tool.name.clone());
            }
            if touches.reads_private {
                mix.private.push(tool.name.clone());
            }
            if touches.sends_out_unapproved() {
                mix.sends_out.push(tool.name.clone());
            }
        }
        let whole =
            !mix.untrusted.is_empty() && !mix.private.is_empty() && !mix.sends_out.is_empty();
        whole.then_some(mix)
    }
}

impl fmt::Display for LethalMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |names: &[String]| {
            (names.iter())
                .map(|name| format!("`{name}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        write!(
            f,
            "the agent's tools make the lethal mix: {} read untrusted content, {} read private \
             data, and {} send data out, so a page or a message can tell the model to send the \
             private data out. Require approval on the tools that send data out \
             (`#[tool(requires_approval)]`), add a guard on the tools' results \
             (`Agent::guard(At::RESULTS, ...)`, or `guard_results = ...` in `agent!`), or \
             accept the risk in code (`Agent::allow_lethal_mix(\"why\")`)",
            list(&self.untrusted),
            list(&self.private),
            list(&self.sends_out),
        )
    }
}

impl std::error::Error for LethalMix {}

/// What `agent!` checks at compile time: each tool's name and what it touches, in a constant.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct MixCheck {
    /// The tool's name.
    pub name: &'static str,
    /// What it touches.
    pub touches: Touches,
}

/// The room for the message of a mix found at compile time.
const MESSAGE_ROOM: usize = 1024;

impl MixCheck {
    /// The compile-time error message for `tools` when they make the lethal mix (empty when
    /// they do not), with its length: the three kinds' tools named, and the ways to fix it.
    pub const fn message(tools: &[MixCheck]) -> ([u8; MESSAGE_ROOM], usize) {
        let mut kinds = [false; 3];
        let mut index = 0;
        while index < tools.len() {
            let touches = tools[index].touches;
            kinds[0] |= touches.reads_untrusted;
            kinds[1] |= touches.reads_private;
            kinds[2] |= touches.sends_out_unapproved();
            index += 1;
        }
        let mut out = Message::new();
        if !(kinds[0] && kinds[1] && kinds[2]) {
            return (out.bytes, 0);
        }
        out.push("these tools make the lethal mix: untrusted content comes in through ");
        out.kind(tools, 0, ", private data through ");
        out.kind(tools, 1, ", and data goes out without approval through ");
        out.kind(
            tools,
            2,
            ", so a page or a message can tell the model to send the private data out. \
             Fix it: put `#[tool(requires_approval)]` on the tools that send data out, give \
             `agent!` a guard on the tools' results after a `;` \
             (`agent!(model, tool_a, tool_b; guard_results = my_guard)`: a `.guard(..)` \
             chained after `agent!` comes too late for this check), or accept the risk \
             the same way (`agent!(model, tool_a, tool_b; allow_lethal_mix = \"why\")`)",
        );
        (out.bytes, out.length)
    }

    /// The text of `message`'s bytes.
    pub const fn text(message: &([u8; MESSAGE_ROOM], usize)) -> &str {
        let (bytes, _) = message.0.split_at(message.1);
        match std::str::from_utf8(bytes) {
            Ok(text) => text,
            Err(_) => "these tools make the lethal mix",
        }
    }
}

/// A message written at compile time, cut (at a character) when it would overflow its room.
struct Message {
    bytes: [u8; MESSAGE_ROOM],
    length: usize,
}

impl Message {
    const fn new() -> Self {
        Message {
            bytes: [0; MESSAGE_ROOM],
            length: 0,
        }
    }

    const fn push(&mut self, text: &str) {
        let text = text.as_bytes();
        let mut index = 0;
        // Whole characters only: a byte that continues a character goes with the one it starts.
        while index < text.len() && self.length < MESSAGE_ROOM {
            let mut end = index + 1;
            while end < text.len() && text[end] & 0xC0 == 0x80 {
                end += 1;
            }
            if self.length + (end - index) > MESSAGE_ROOM {
                return;
            }
            while index < end {
                self.bytes[self.length] = text[index];
                self.length += 1;
                index += 1;
            }
        }
    }

    /// The tools of kind `kind` (0 untrusted, 1 private, 2 sends out), named, then `after`.
    const fn kind(&mut self, tools: &[MixCheck], kind: usize, after: &str) {
        let mut index = 0;
        let mut first = true;
        while index < tools.len() {
            let touches = tools[index].touches;
            let of_kind = match kind {
                0 => touches.reads_untrusted,
                1 => touches.reads_private,
                _ => touches.sends_out_unapproved(),
            };
            if of_kind {
                if !first {
                    self.push(", ");
                }
                first = false;
                self.push("`");
                self.push(tools[index].name);
                self.push("`");
            }
            index += 1;
        }
        self.push(after);
    }
}
