//! What a provider's prompt cache reuses over a long conversation in a session: each request
//! should begin with the one before it whole. A context policy that moves its cut every turn
//! rewrites the cache every turn; the crate's cut in steps, so that at least 95% of requests
//! repeat the previous request's prefix, with every policy, across the runs of a session and a
//! restart. The busts that remain are counted in the runs' usage, between runs as within one.

use std::sync::Arc;

use agent_core::context::{ContextPolicy, KeepLastTurns, Summarize, TokenWindow};
use agent_core::session::SessionStore;
use agent_core::testing::{RecordedRequest, ScriptedModel};
use agent_core::{
    Agent, AssistantMessage, ChatResponse, Message, ModelSettings, PromptCache, Usage,
};
use agent_sql::SqliteSessions;
use tests::long_conversation::{CONTEXT, SmallContext, model, note, question};

/// Whether `now` begins with `before` whole: its tools, then its messages.
fn repeats(before: &RecordedRequest, now: &RecordedRequest) -> bool {
    now.tools == before.tools && now.messages.starts_with(&before.messages)
}

/// How many of `requests` (after the first) do not begin with the one before them whole.
fn busts(requests: &[RecordedRequest]) -> usize {
    (requests.windows(2))
        .filter(|pair| !repeats(&pair[0], &pair[1]))
        .count()
}

/// An agent on `model` with a prompt cache, the tool `note` and `policy`.
fn agent(model: Arc<SmallContext>, policy: impl ContextPolicy) -> Agent {
    Agent::new(model)
        .try_tool(note {})
        .unwrap()
        .model_settings(ModelSettings::new().prompt_cache(PromptCache::auto()))
        .context_policy(policy)
}

/// Runs the turns `turns` of conversation "support" in `store`, each a run of `agent`; the cache
/// busts their usage counted.
async fn counted_busts(
    agent: &Agent,
    store: &dyn SessionStore,
    turns: std::ops::Range<usize>,
) -> u64 {
    let mut counted = 0;
    for turn in turns {
        let output = agent.run(question(turn)).session(store, "support").await;
        let output = output.unwrap_or_else(|error| panic!("turn {turn}: {error}"));
        assert!(output.text.starts_with(&format!("Turn {turn}:")));
        counted += output.usage.cache_busts;
    }
    counted
}

#[tokio::test]
async fn busts_between_the_turns_of_a_session_are_counted_across_a_restart() {
    // The last two turns, each a question and its answer: from the third turn on, each turn's
    // request leaves the oldest turn out, so it does not begin with the one before.
    let replies = (0..6).map(|turn| AssistantMessage::text(format!("Turn {turn}: done.")));
    let model = Arc::new(SmallContext(ScriptedModel::new(replies)));
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("support.db");
    let mut counted = 0;
    for turn in 0..6 {
        // Each turn in a store opened anew, by an agent made anew: another process.
        let store = SqliteSessions::open(&path).unwrap();
        counted += counted_busts(
            &agent(Arc::clone(&model), KeepLastTurns(2)),
            &store,
            turn..turn + 1,
        )
        .await;
    }
    let requests = model.0.requests();
    assert_eq!(requests.len(), 6);
    assert_eq!(busts(&requests), 4);
    assert_eq!(counted, 4, "the busts between turns were not counted");
}

/// A summarizer that answers with numbered summaries.
fn summarizer() -> ScriptedModel {
    ScriptedModel::new((0..300).map(|index| {
        ChatResponse::new(AssistantMessage::text(format!("summary {index}")))
            .with_usage(Usage::new(400, 60))
    }))
}

/// Three hundred turns (each a note, then an answer: 600 requests) under `policy`, the first 150
/// in one store, the rest in the same database opened again by an agent made anew: no request is
/// refused, the session keeps every message, at least 95% of the requests begin with the one
/// before them whole, and the runs' usage counts every one that does not.
async fn share_of_repeated_prefixes<P: ContextPolicy>(name: &str, policy: impl Fn() -> P) {
    let small = Arc::new(model(300));
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("support.db");
    let store = SqliteSessions::open(&path).unwrap();
    let mut counted = counted_busts(&agent(Arc::clone(&small), policy()), &store, 0..150).await;
    let reopened = SqliteSessions::open(&path).unwrap();
    counted += counted_busts(&agent(Arc::clone(&small), policy()), &reopened, 150..300).await;
    let stored = reopened.load("support").await.unwrap();
    assert_eq!(stored.messages.len(), 1 + 300 * 4, "{name}");
    assert_eq!(stored.messages[1], Message::user(question(0)), "{name}");
    let requests = small.0.requests();
    assert_eq!(requests.len(), 600, "{name}");
    let busted = busts(&requests);
    let share = 1.0 - busted as f64 / (requests.len() - 1) as f64;
    eprintln!(
        "{name}: {busted} busts in 600 requests, {:.1}% repeat the prefix",
        share * 100.0
    );
    assert!(
        share >= 0.95,
        "{name}: {:.3} of requests repeat the prefix",
        share
    );
    assert_eq!(counted, busted as u64, "{name}: busts counted in the usage");
}

#[tokio::test]
async fn keep_last_turns_repeats_the_prefix_of_95_percent_of_300_turns() {
    share_of_repeated_prefixes("KeepLastTurns(20)", || KeepLastTurns(20)).await;
}

#[tokio::test]
async fn a_token_window_repeats_the_prefix_of_95_percent_of_300_turns() {
    let window = CONTEXT as u64 * 8 / 10;
    share_of_repeated_prefixes("TokenWindow", || TokenWindow::new(window)).await;
}

#[tokio::test]
async fn a_token_window_shortening_results_repeats_the_prefix_of_95_percent_of_300_turns() {
    let window = CONTEXT as u64 * 8 / 10;
    share_of_repeated_prefixes("TokenWindow shortening results", || {
        TokenWindow::new(window).shortening_results()
    })
    .await;
}

#[tokio::test]
async fn summaries_repeat_the_prefix_of_95_percent_of_300_turns() {
    let window = CONTEXT as u64 * 8 / 10;
    share_of_repeated_prefixes("Summarize", || Summarize::new(summarizer(), window)).await;
}
