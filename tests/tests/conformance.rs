//! Every model this crate ships runs the model conformance suite (`agent_core::testing::conformance`):
//! each HTTP adapter over real HTTP against a loopback server that turns the suite's canonical
//! replies and failures into its vendor's documented JSON bodies, error bodies and server-sent
//! events; the model `providers::from_variables` builds for each vendor; the `Box`, `Arc` and `&`
//! wrappers; and the scripted model. Then the suite is shown to fail models that break the contract.

use std::sync::Arc;

use agent_core::providers::{Anthropic, EnvModel, Gemini, OpenAi, OpenAiResponses, from_variables};
use agent_core::testing::ScriptedModel;
use agent_core::testing::conformance::{
    self, Call, Capabilities, ErrorKind, Exchange, Failure, Harness, Report,
};
use agent_core::{BoxFuture, ChatRequest, ChatResponse, Fallback, Message, Model, ModelError};
use futures_util::FutureExt;
use serde_json::Value;
use tests::canonical::{anthropic, gemini, openai, responses};
use tests::http::{PrimedServer, event_stream_reply, json_reply, no_retries};
use wiremock::ResponseTemplate;

/// The wire formats.
#[derive(Clone, Copy, Debug)]
enum Vendor {
    OpenAi,
    Anthropic,
    Gemini,
    OpenAiResponses,
}

/// A harness that speaks one vendor's wire format on a loopback server.
struct VendorHarness {
    vendor: Vendor,
    server: PrimedServer,
}

impl VendorHarness {
    async fn start(vendor: Vendor) -> Self {
        VendorHarness {
            vendor,
            server: PrimedServer::start().await,
        }
    }

    /// The adapter for this vendor, pointed at the loopback server, without retries.
    fn adapter(&self) -> Box<dyn Model> {
        match self.vendor {
            Vendor::OpenAi => Box::new(self.openai()),
            Vendor::Anthropic => Box::new(self.anthropic()),
            Vendor::Gemini => Box::new(self.gemini()),
            Vendor::OpenAiResponses => Box::new(self.openai_responses()),
        }
    }

    fn openai_responses(&self) -> OpenAiResponses {
        OpenAiResponses::new("gpt-5")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1", self.server.uri()))
            .http_config(no_retries())
    }

    fn anthropic(&self) -> Anthropic {
        Anthropic::new("claude-sonnet-4-5")
            .api_key("conformance-key")
            .base_url(&self.server.uri())
            .http_config(no_retries())
    }

    fn openai(&self) -> OpenAi {
        OpenAi::new("gpt-4o-mini")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1", self.server.uri()))
            .http_config(no_retries())
    }

    fn gemini(&self) -> Gemini {
        Gemini::new("gemini-2.5-flash")
            .api_key("conformance-key")
            .base_url(&format!("{}/v1beta", self.server.uri()))
            .http_config(no_retries())
    }

    /// The model `from_variables` makes for this vendor, its base URL variable pointing here.
    fn env_model(&self) -> EnvModel {
        let base = self.server.uri();
        let variables: Vec<(&str, String)> = match self.vendor {
            Vendor::OpenAi => vec![
                ("AGENT_MODEL", "openai:gpt-4o-mini".into()),
                ("OPENAI_API_KEY", "conformance-key".into()),
                ("OPENAI_BASE_URL", format!("{base}/v1")),
            ],
            Vendor::Anthropic => vec![
                ("AGENT_MODEL", "anthropic:claude-sonnet-4-5".into()),
                ("ANTHROPIC_API_KEY", "conformance-key".into()),
                ("ANTHROPIC_BASE_URL", base),
            ],
            Vendor::Gemini => vec![
                ("AGENT_MODEL", "gemini:gemini-2.5-flash".into()),
                ("GEMINI_API_KEY", "conformance-key".into()),
                ("GEMINI_BASE_URL", format!("{base}/v1beta")),
            ],
            Vendor::OpenAiResponses => vec![
                ("AGENT_MODEL", "openai-responses:gpt-5".into()),
                ("OPENAI_API_KEY", "conformance-key".into()),
                ("OPENAI_BASE_URL", format!("{base}/v1")),
            ],
        };
        from_variables(|name| {
            variables
                .iter()
                .find(|(variable, _)| *variable == name)
                .map(|(_, value)| value.clone())
        })
        .expect("a valid choice")
        .expect("a model")
        .http_config(no_retries())
    }

    fn reply(&self, exchange: &Exchange, call: Call) -> ResponseTemplate {
        match (exchange, call) {
            (Exchange::Reply(reply), Call::Chat) => {
                let body = match self.vendor {
                    Vendor::OpenAi => openai::reply(reply),
                    Vendor::Anthropic => anthropic::reply(reply),
                    Vendor::Gemini => gemini::reply(reply),
                    Vendor::OpenAiResponses => responses::reply(reply),
                };
                json_reply(200, &body.to_string())
            }
            (Exchange::Reply(reply), Call::Stream) => event_stream_reply(match self.vendor {
                Vendor::OpenAi => openai::stream(reply),
                Vendor::Anthropic => anthropic::stream(reply),
                Vendor::Gemini => gemini::stream(reply),
                Vendor::OpenAiResponses => responses::stream(reply),
            }),
            (Exchange::Fail(failure), call) => self.failure(failure, call),
            (other, _) => panic!("an exchange this harness does not know: {other:?}"),
        }
    }

    fn failure(&self, failure: &Failure, call: Call) -> ResponseTemplate {
        let message = failure.message.as_str();
        match failure.kind {
            ErrorKind::Undecodable if call == Call::Chat => ResponseTemplate::new(200)
                .set_body_raw(
                    "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>",
                    "text/html",
                ),
            ErrorKind::Undecodable
            | ErrorKind::StreamCutOff
            | ErrorKind::StreamErrorEvent
            | ErrorKind::StreamOverloaded => event_stream_reply(match self.vendor {
                Vendor::OpenAi => openai::broken_stream(failure.kind, message),
                Vendor::Anthropic => anthropic::broken_stream(failure.kind, message),
                Vendor::Gemini => gemini::broken_stream(failure.kind, message),
                Vendor::OpenAiResponses => responses::broken_stream(failure.kind, message),
            }),
            kind => {
                let (status, body) = match self.vendor {
                    // The same errors, whichever of OpenAI's APIs.
                    Vendor::OpenAi | Vendor::OpenAiResponses => openai::error(kind, message),
                    Vendor::Anthropic => anthropic::error(kind, message),
                    Vendor::Gemini => gemini::error(kind, message, failure.retry_after),
                };
                let reply = json_reply(status, &body.to_string());
                match (self.vendor, failure.retry_after) {
                    // Gemini says it in the body; the others in the header.
                    (Vendor::Gemini, _) | (_, None) => reply,
                    (_, Some(after)) => {
                        reply.insert_header("retry-after", after.as_secs().to_string().as_str())
                    }
                }
            }
        }
    }
}

impl Harness for VendorHarness {
    fn capabilities(&self) -> Capabilities {
        Capabilities::new().streaming().failing_with(ErrorKind::ALL)
    }

    async fn prime(&self, exchange: &Exchange, call: Call) {
        self.server.prime(self.reply(exchange, call));
    }

    async fn last_request(&self) -> Option<Value> {
        self.server.last_body().await
    }
}

#[tokio::test]
async fn the_openai_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::OpenAi).await;
    let report = conformance::assert_conforms(&harness.openai(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_anthropic_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::Anthropic).await;
    let report = conformance::assert_conforms(&harness.anthropic(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_gemini_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::Gemini).await;
    let report = conformance::assert_conforms(&harness.gemini(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_openai_responses_adapter_conforms() {
    let harness = VendorHarness::start(Vendor::OpenAiResponses).await;
    let report = conformance::assert_conforms(&harness.openai_responses(), &harness).await;
    assert!(report.skipped.is_empty(), "{report:?}");
}

#[tokio::test]
async fn the_model_from_the_environment_conforms_for_every_vendor() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let model = harness.env_model();
        let report = conformance::run(&model, &harness).await;
        assert!(report.is_ok(), "{vendor:?} via from_variables: {report}");
    }
}

#[tokio::test]
async fn box_arc_and_reference_wrappers_conform() {
    let openai = VendorHarness::start(Vendor::OpenAi).await;
    let boxed: Box<dyn Model> = Box::new(openai.openai());
    conformance::assert_conforms(&boxed, &openai).await;

    let anthropic = VendorHarness::start(Vendor::Anthropic).await;
    let shared: Arc<dyn Model> = Arc::from(anthropic.adapter());
    conformance::assert_conforms(&shared, &anthropic).await;

    let gemini = VendorHarness::start(Vendor::Gemini).await;
    let adapter = gemini.gemini();
    let borrowed: &Gemini = &adapter;
    conformance::assert_conforms(&borrowed, &gemini).await;
}

#[tokio::test]
async fn a_fallback_chain_of_one_model_is_that_model_for_every_vendor() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let chain = Fallback::new(harness.adapter());
        let report = conformance::run(&chain, &harness).await;
        assert!(report.is_ok(), "{vendor:?} alone in a chain: {report}");
        assert!(report.skipped.is_empty(), "{report:?}");
    }
}

/// A model that cannot take any request.
struct CannotTakeIt;

impl Model for CannotTakeIt {
    fn chat<'a>(
        &'a self,
        _request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        Box::pin(async {
            Err(ModelError::Unsupported {
                message: "nothing, ever".into(),
            })
        })
    }
}

#[tokio::test]
async fn a_fallback_chain_answers_exactly_as_the_model_that_answered() {
    // The first model fails every call; the suite sees the second one's replies, streams and
    // errors unchanged (only an `Unsupported` error falls back here, which the harness never
    // makes).
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let chain = Fallback::new(CannotTakeIt)
            .then(harness.adapter())
            .fall_back_when(|error| matches!(error, ModelError::Unsupported { .. }));
        let report = conformance::run(&chain, &harness).await;
        assert!(report.is_ok(), "{vendor:?} second in a chain: {report}");
    }
}

#[tokio::test]
async fn the_scripted_model_conforms_and_so_do_its_wrappers() {
    let model = ScriptedModel::new(Vec::<ChatResponse>::new());
    let report = conformance::assert_conforms(&model, &model).await;
    assert!(report.skipped.is_empty(), "{report:?}");
    // Clones share the script, so one can be the harness while the other sits in a wrapper.
    let boxed: Box<dyn Model> = Box::new(model.clone());
    conformance::assert_conforms(&boxed, &model).await;
}

/// A wrapper that forwards `chat` but forgets `chat_stream`: it falls back to the default, which
/// makes a plain call and streams the whole reply at once.
struct ForgetsToStream<M>(M);

impl<M: Model> Model for ForgetsToStream<M> {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        self.0.chat(request)
    }
}

#[tokio::test]
async fn a_wrapper_that_does_not_forward_streaming_fails_the_suite() {
    for vendor in [
        Vendor::OpenAi,
        Vendor::Anthropic,
        Vendor::Gemini,
        Vendor::OpenAiResponses,
    ] {
        let harness = VendorHarness::start(vendor).await;
        let broken = ForgetsToStream(harness.adapter());
        let report = conformance::run(&broken, &harness).await;
        for case in ["stream_text", "stream_tool_calls"] {
            assert!(report.failure(case).is_some(), "{vendor:?}: {report}");
        }
        // What it does forward still passes.
        for case in ["text", "parallel_calls", "tool_result_sent_back"] {
            assert!(report.passed.contains(&case), "{vendor:?}: {report}");
        }

        // `assert_conforms` panics, naming the case.
        let panic = std::panic::AssertUnwindSafe(conformance::assert_conforms(&broken, &harness))
            .catch_unwind()
            .await
            .expect_err("the suite must fail");
        let message = panic.downcast_ref::<String>().expect("a formatted message");
        assert!(message.contains("- stream_text: "), "{message}");
    }
}

/// A wrapper that fails the contract in other ways, one at a time.
#[derive(Clone, Copy, Debug)]
enum Sabotage {
    /// Drops tool results from the history.
    DropsToolResults,
    /// Reports no usage.
    LosesUsage,
    /// Turns every error into `ModelError::Other`.
    UntypesErrors,
    /// Reports overload and server failures as `ModelError::Stream`, as the adapters once did with
    /// those that came inside a stream: they would not be retried.
    StreamsProviderErrors,
}

struct Sabotaged(ScriptedModel, Sabotage);

impl Model for Sabotaged {
    fn chat<'a>(
        &'a self,
        request: ChatRequest<'a>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let sabotage = self.1;
        Box::pin(async move {
            let kept: Vec<Message> = request
                .messages
                .iter()
                .filter(|message| {
                    !matches!(
                        (sabotage, message),
                        (Sabotage::DropsToolResults, Message::Tool(_))
                    )
                })
                .cloned()
                .collect();
            let reply = self.0.chat(ChatRequest::new(&kept, request.tools)).await;
            match (sabotage, reply) {
                (Sabotage::LosesUsage, Ok(reply)) => Ok(reply.with_usage(Default::default())),
                (Sabotage::UntypesErrors, Err(error)) => Err(ModelError::other(error.to_string())),
                (
                    Sabotage::StreamsProviderErrors,
                    Err(
                        ModelError::Overloaded { message, .. } | ModelError::Server { message, .. },
                    ),
                ) => Err(ModelError::Stream { message }),
                (_, reply) => reply,
            }
        })
    }
}

#[tokio::test]
async fn the_suite_catches_lost_tool_results_usage_and_error_types() {
    let expectations: [(Sabotage, &[&str]); 4] = [
        (
            Sabotage::StreamsProviderErrors,
            &[
                "error_overloaded",
                "error_server",
                "error_stream_event",
                "error_stream_overloaded",
            ],
        ),
        (Sabotage::DropsToolResults, &["tool_result_sent_back"]),
        (Sabotage::LosesUsage, &["text", "usage", "stream_text"]),
        (
            Sabotage::UntypesErrors,
            &[
                "error_authentication",
                "error_rate_limited",
                "error_quota_exhausted",
                "error_stream_cut_off",
                "error_stream_overloaded",
            ],
        ),
    ];
    for (sabotage, failing) in expectations {
        let script = ScriptedModel::new(Vec::<ChatResponse>::new());
        let report: Report = conformance::run(&Sabotaged(script.clone(), sabotage), &script).await;
        for case in failing {
            assert!(report.failure(case).is_some(), "{sabotage:?}: {report}");
        }
        assert!(!report.is_ok());
    }
}
