//! Grants: what makes an approval or a client-side tool's result one the server asked for. Each call
//! a paused run waits on goes out with a grant (a `data-call-grant` part of the answer, upserted by
//! its call id): an HMAC-SHA256, under the server's key, of the chat (its owner's store key), the
//! pause (the run's id and the conversation's length at the pause) and the call (its id, tool and
//! arguments). An answer to the call comes back with the message that holds the grant, and is taken
//! only when the grant is the one for that chat, pause and call: a replayed grant (an earlier pause,
//! another chat, another user's), an altered one, or none, is refused with nothing run.
//!
//! Keys rotate: the first signs, every one verifies, so grants issued before a rotation stay good
//! while the old key is kept. With keys given, grants hold across restarts and across instances
//! that share them; a server given none draws a key of its own when it starts.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

use agent_core::PausedRun;
use agent_core::RunId;
use agent_core::ToolCall;

/// The type of the data part a grant goes out in.
pub(crate) const GRANT_PART: &str = "data-call-grant";

type HmacSha256 = Hmac<Sha256>;

/// The keys grants are signed and checked with: what makes an answer to a waiting call one the
/// server asked for. A grant is an HMAC-SHA256 of the chat's store key, the pause (the run's id and
/// the conversation's length) and the call (its id, tool and arguments), so a grant from another
/// chat, user or pause, or an altered one, does not verify; the first key signs, every key
/// verifies (rotation). [`ChatServer`](super::ChatServer) issues a grant with each
/// call a paused run waits on; a server on another protocol does the same with the token that
/// protocol carries (an AG-UI interrupt's id, say), and takes an answer only with it.
#[derive(Clone)]
pub struct CallGrants {
    keys: Vec<Vec<u8>>,
}

impl std::fmt::Debug for CallGrants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the keys.
        f.debug_struct("CallGrants")
            .field("keys", &self.keys.len())
            .finish()
    }
}

impl CallGrants {
    /// Grants under `keys`: the first signs, each verifies.
    ///
    /// # Panics
    ///
    /// When `keys` is empty or holds an empty key: a server without a usable key cannot tell a
    /// grant it issued from one it did not.
    pub fn with_keys<K: AsRef<[u8]>>(keys: impl IntoIterator<Item = K>) -> Self {
        let keys: Vec<Vec<u8>> = keys.into_iter().map(|key| key.as_ref().to_vec()).collect();
        assert!(
            !keys.is_empty() && keys.iter().all(|key| !key.is_empty()),
            "grant keys: at least one is needed, none of them empty"
        );
        CallGrants { keys }
    }

    /// Grants under a key drawn now: good in this process only.
    pub fn drawn() -> Self {
        // Two fresh run ids: 256 bits from the operating system's randomness.
        let key = format!("{}{}", RunId::new(), RunId::new()).into_bytes();
        CallGrants { keys: vec![key] }
    }

    /// The grant for `call` of the paused run `paused` in the chat kept under `chat_key`.
    pub fn grant(&self, chat_key: &str, paused: &PausedRun, call: &ToolCall) -> String {
        let mac = mac(&self.keys[0], chat_key, paused, call);
        URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes())
    }

    /// Whether `grant` is the one for `call` of `paused` in the chat kept under `chat_key`, under
    /// any of the keys (compared in constant time).
    pub fn verify(&self, chat_key: &str, paused: &PausedRun, call: &ToolCall, grant: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(grant) else {
            return false;
        };
        self.keys
            .iter()
            .any(|key| mac(key, chat_key, paused, call).verify_slice(&tag).is_ok())
    }
}

impl CallGrants {
    /// A tag of `fields` under the signing key, for another use of the server's keys (a visitor's
    /// cookie): the first field names the use, so a tag of one use is never one of another.
    pub(crate) fn sign_fields(&self, fields: &[&str]) -> String {
        URL_SAFE_NO_PAD.encode(mac_of(&self.keys[0], fields).finalize().into_bytes())
    }

    /// Whether `tag` is the tag of `fields` under any of the keys (compared in constant time).
    pub(crate) fn verify_fields(&self, fields: &[&str], tag: &str) -> bool {
        let Ok(tag) = URL_SAFE_NO_PAD.decode(tag) else {
            return false;
        };
        (self.keys.iter()).any(|key| mac_of(key, fields).verify_slice(&tag).is_ok())
    }
}

/// The MAC of one grant's fields.
fn mac(key: &[u8], chat_key: &str, paused: &PausedRun, call: &ToolCall) -> HmacSha256 {
    let run_id = paused.run_id().map(ToString::to_string).unwrap_or_default();
    let at = paused.messages().len().to_string();
    let fields = [
        "call-grant/1",
        chat_key,
        &run_id,
        &at,
        &call.id,
        &call.name,
        &call.arguments,
    ];
    mac_of(key, &fields)
}

/// The MAC of `fields` under `key`, each field with its length in front so none runs into the
/// next.
fn mac_of(key: &[u8], fields: &[&str]) -> HmacSha256 {
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(mac) => mac,
        // HMAC takes a key of any length.
        Err(_) => unreachable!("HMAC keys have no length limit"),
    };
    for field in fields {
        mac.update(&(field.len() as u64).to_be_bytes());
        mac.update(field.as_bytes());
    }
    mac
}
