//! Typed runs: the model's answer as a value of the caller's type, checked against it and sent
//! back for another try when it does not fit (`plan`: what a run asks of the model, `parse`: how
//! an answer is read and every problem found).

mod parse;
mod plan;

pub(crate) use parse::json_in_text;
pub(crate) use plan::{OUTPUT_NAME, OutputCheck, OutputShapes, TypedCheck};
pub use plan::{OutputType, Validator};

pub(crate) use crate::reasons::output_problem::{OutputProblem, RejectedOutput};

/// How many times a typed run sends an invalid or rejected output back to the model for another
/// try, unless configured otherwise: two (three tries in all). One more model call is cheaper than
/// a failed run, and a model that has not fixed its answer after two corrections rarely does.
pub const DEFAULT_OUTPUT_RETRIES: usize = 2;

/// How a typed run asks the model for its output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputMode {
    /// A final-answer tool (`final_result`) whose parameters are the output type's schema: the
    /// model calls its other tools first, then gives its answer by calling this one (every request
    /// asks for a tool call). Works with every model that calls tools; the default, as in
    /// Pydantic AI.
    #[default]
    Tool,
    /// The provider's own structured output: OpenAI's `response_format` with a `json_schema`
    /// (strict when the schema allows), Gemini's `responseMimeType` with `responseJsonSchema`
    /// (`responseSchema` for models before 2.5), Anthropic's `output_config.format`. The answer's text is the value. A schema a provider
    /// cannot express there fails the model call with
    /// [`ModelError::Unsupported`](crate::ModelError::Unsupported) before anything is sent (a map
    /// for Anthropic). Gemini takes a response schema beside function declarations from Gemini 3
    /// on; older Gemini models refuse the two together: use [`OutputMode::Tool`] with them when the
    /// agent has tools.
    Native,
    /// The schema in the system prompt and the value as JSON in the answer's text, for models
    /// that can do neither (a fenced code block or text around the JSON is tolerated).
    Prompted,
}

/// How typed runs of an agent ask for their output, unless a run says otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OutputSettings {
    pub(crate) mode: OutputMode,
    pub(crate) retries: usize,
}

impl Default for OutputSettings {
    fn default() -> Self {
        OutputSettings {
            mode: OutputMode::default(),
            retries: DEFAULT_OUTPUT_RETRIES,
        }
    }
}
