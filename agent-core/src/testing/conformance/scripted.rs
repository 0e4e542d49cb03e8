//! The scripted model as its own harness.

use serde_json::Value;

use super::{Call, Capabilities, ErrorKind, Exchange, Failure, Harness};
use crate::testing::{ScriptStep, ScriptedModel};

impl From<Failure> for ScriptStep {
    fn from(failure: Failure) -> Self {
        ScriptStep::error(move || failure.to_model_error())
    }
}

/// The scripted model is its own harness: priming pushes the exchange onto its script, and the
/// last request is its last [`RecordedRequest`](crate::testing::RecordedRequest) as JSON. It does not
/// stream natively and can fail every way.
impl Harness for ScriptedModel {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new().failing_with(ErrorKind::ALL)
    }

    async fn prime(&self, exchange: &Exchange, _call: Call) {
        match exchange {
            Exchange::Reply(reply) => self.push(reply.clone()),
            Exchange::Fail(failure) => self.push(failure.clone()),
        }
    }

    async fn last_request(&self) -> Option<Value> {
        ScriptedModel::last_request(self).and_then(|request| serde_json::to_value(request).ok())
    }
}
