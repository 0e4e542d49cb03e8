//! A long support conversation that stays within a small context window: a `Summarize` context
//! policy puts a summary of the oldest turns in their place once the conversation outgrows the
//! window, the session keeps every message (and each summary, with the messages it stands for),
//! and each turn prints what was stored, what was sent, the tokens and cost the summary saved (the
//! tokens estimated from the characters), and a compaction when one was made.
//!
//! `cargo run -p examples --example long_support` runs offline: scripted models play the support
//! agent and the summarizer. With a provider in the environment (`OPENAI_API_KEY=...`,
//! `AGENT_MODEL=ollama:qwen2.5`, see `providers::from_env`) both are the real model.

use std::sync::Mutex;

use agent_core::context::Summarize;
use agent_core::providers::from_env;
use agent_core::seams::{ModelCall, ModelLayer, Next};
use agent_core::session::{MemorySessions, SessionStore};
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, BoxFuture, ChatResponse, Message, Model, ModelError, Price,
};

/// The window each request must fit in, in (estimated) tokens: small, so the summaries show.
const WINDOW: u64 = 600;

/// What the customer asks, turn by turn.
const QUESTIONS: [&str; 16] = [
    "Hi, I'm Mei from Chen Logistics, order 88213 hasn't arrived.",
    "It was supposed to arrive last Tuesday at our Rotterdam warehouse.",
    "The tracking page says 'label created' and nothing since.",
    "We need the pallets for a customer shipment on Friday.",
    "Can you check whether it left the Hamburg depot?",
    "If it's lost, can you send a replacement by express?",
    "Who pays for the express shipping in that case?",
    "Our account manager used to be Lars; is he still around?",
    "Please also update our delivery contact to dock-office@chen.example.",
    "What's the cut-off time for express dispatch today?",
    "OK, and will the replacement have a new order number?",
    "Can you email me the new tracking link as soon as it exists?",
    "One more thing: our invoice for order 88213 was already charged.",
    "Will that charge be refunded if the original is lost?",
    "How long does a refund usually take to show on our statement?",
    "Thanks. To confirm: what exactly happens next, and when?",
];

/// A token estimate of a history: a quarter of its characters.
fn tokens(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|message| message.content().len() as u64 / 4 + 4)
        .sum()
}

/// What the last request carried, as the model-call layers inside the context policy see it.
#[derive(Default)]
struct LastSent(Mutex<Option<(u64, bool)>>);

impl ModelLayer for LastSent {
    fn call<'a>(
        &'a self,
        call: ModelCall<'a, ()>,
        next: Next<'a, ()>,
    ) -> BoxFuture<'a, Result<ChatResponse, ModelError>> {
        let messages = call.request.messages;
        let marker = call.request.texts.context_summary("");
        let summarized = messages.iter().any(|message| {
            matches!(message, Message::User { content, .. } if content.starts_with(marker.trim_end()))
        });
        *self.0.lock().unwrap() = Some((tokens(messages), summarized));
        next.call(call)
    }
}

/// The offline support agent: an answer per question.
fn scripted_agent() -> ScriptedModel {
    ScriptedModel::new(QUESTIONS.iter().enumerate().map(|(turn, question)| {
        AssistantMessage::text(format!(
            "(turn {turn}) Thanks, noted: \"{question}\" I have checked order 88213 in our \
             system and will follow up on this point right away."
        ))
    }))
}

/// The offline summarizer: a short summary each time it is asked.
fn scripted_summarizer() -> ScriptedModel {
    ScriptedModel::new((1..=10).map(|index| {
        AssistantMessage::text(format!(
            "Summary {index}: Mei (Chen Logistics) reports order 88213 missing; replacement by \
             express discussed; contact and refund questions answered."
        ))
    }))
}

/// One line per turn: what the store holds, what was sent, and what that saved.
async fn converse(agent: &Agent, sent: &LastSent, store: &MemorySessions) -> Vec<String> {
    // A price per million tokens, to show what the summary saves: $3 in, $15 out.
    let price = Price::per_million(3.0, 15.0);
    let mut lines = Vec::new();
    for (turn, question) in QUESTIONS.iter().enumerate() {
        let output = match agent.run(*question).session(store, "mei").await {
            Ok(output) => output,
            Err(error) => {
                lines.push(format!("turn {turn:2}: error: {error}"));
                break;
            }
        };
        let stored = store.load("mei").await.unwrap_or_default().messages;
        let Some((request, summarized)) = *sent.0.lock().unwrap() else {
            continue;
        };
        // The last request, had it carried everything: the history before the answer.
        let whole = tokens(&stored[..stored.len().saturating_sub(1)]);
        let stored = tokens(&stored);
        let saved = whole.saturating_sub(request);
        let dollars = agent_core::Usage::new(saved, 0).cost(&price);
        // A compaction this turn: the summary made, kept in the session with what it stands for.
        let compacted = output.summaries.last().map_or(String::new(), |summary| {
            let stands_for = summary.covers.len();
            format!("; summarized the first {stands_for} messages")
        });
        lines.push(format!(
            "turn {turn:2}: stored {stored:4} tokens, sent {request:4}{}, saved {saved:4} (${dollars:.5}){compacted}",
            if summarized { " with a summary" } else { "" }
        ));
    }
    lines
}

/// The agent over `model`, its older turns summarized by `summarizer`, and the layer that sees
/// what each request carries.
fn support_agent(
    model: impl Model + 'static,
    summarizer: impl Model + 'static,
    sent: std::sync::Arc<LastSent>,
) -> Agent {
    Agent::new(model)
        .system("You are Chen Logistics' support agent at the carrier. Be brief and concrete.")
        .context_policy(Summarize::new(summarizer, WINDOW))
        .model_layer(sent)
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let sent = std::sync::Arc::new(LastSent::default());
    let agent = match (from_env(), from_env()) {
        (Ok(Some(model)), Ok(Some(summarizer))) => {
            println!("(model: {model})");
            support_agent(model, summarizer, sent.clone())
        }
        (Ok(None), _) => {
            println!("(offline: no AGENT_MODEL or API key set, so scripted models play the LLM)");
            support_agent(scripted_agent(), scripted_summarizer(), sent.clone())
        }
        (Err(error), _) | (_, Err(error)) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
        (Ok(Some(_)), Ok(None)) => unreachable!("the same environment"),
    };
    for line in converse(&agent, &sent, &MemorySessions::new()).await {
        println!("{line}");
    }
    std::process::ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_conversation_stays_within_the_window_once_summarized() {
        let sent = std::sync::Arc::new(LastSent::default());
        let agent = support_agent(scripted_agent(), scripted_summarizer(), sent.clone());
        let store = MemorySessions::new();
        let lines = converse(&agent, &sent, &store).await;
        assert_eq!(lines.len(), QUESTIONS.len(), "{lines:#?}");
        assert!(lines[0].ends_with("saved    0 ($0.00000)"), "{}", lines[0]);
        let last = lines.last().unwrap();
        assert!(last.contains("with a summary"), "{last}");
        // Each compaction is printed, and the session keeps its summary.
        let compactions = lines
            .iter()
            .filter(|line| line.contains("; summarized the first"));
        let stored = store.load("mei").await.unwrap();
        assert_eq!(compactions.count(), stored.summaries.len());
        assert!(!stored.summaries.is_empty());
        // Every message is kept; the last request carried much less.
        let stored = store.load("mei").await.unwrap();
        assert_eq!(stored.messages.len(), 1 + 2 * QUESTIONS.len());
        let (request, _) = sent.0.lock().unwrap().unwrap();
        assert!(request < tokens(&stored.messages) / 2, "{request}");
    }
}
