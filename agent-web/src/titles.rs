//! A chat's title, made when its first question is answered: by a function of the exchange (the
//! question's first words unless the server gives its own, [`ChatServer::title`]), or by asking a
//! model for one ([`ChatServer::title_by_model`]).
//!
//! [`ChatServer::title`]: super::ChatServer::title
//! [`ChatServer::title_by_model`]: super::ChatServer::title_by_model

use std::sync::Arc;

use agent_core::BoxFuture;
use agent_core::Message;
use agent_core::ModelSettings;
use agent_core::RunOutput;
use agent_core::Texts;
use agent_core::{ChatRequest, Model};

/// The most characters a title keeps.
pub const MAX_TITLE: usize = 80;

/// The most characters of the question and of the answer a model is shown to title a chat.
const SHOWN: usize = 2000;

/// The most tokens a model's title may have.
const TITLE_TOKENS: u32 = 40;

/// A title made of the question's text and the run that answered it, called as the run ends;
/// `None` leaves the chat untitled.
pub(crate) type TitleFunction = Arc<dyn Fn(&str, &RunOutput) -> Option<String> + Send + Sync>;

/// How a server titles its chats.
#[derive(Clone)]
pub(crate) enum Titler {
    /// A function of the exchange.
    Function(TitleFunction),
    /// A model asked for a title of the first exchange, in the agent's language.
    Model(Arc<dyn Model>),
}

/// A title being made: at once, or by a model the caller awaits.
pub(crate) enum Titling {
    Now(Option<String>),
    Asked(BoxFuture<'static, Option<String>>),
}

impl Titler {
    /// The question's first words.
    pub(crate) fn first_words() -> Self {
        Titler::Function(Arc::new(|question, _| first_words(question)))
    }

    /// The title of the chat that began with `question`, answered by `output`, cleaned
    /// ([`clean_title`]). A model asked in the words of `texts` that fails, or answers nothing
    /// usable, titles the chat with the question's first words.
    pub(crate) fn title(&self, question: &str, output: &RunOutput, texts: &dyn Texts) -> Titling {
        match self {
            Titler::Function(title) => {
                Titling::Now(title(question, output).and_then(|title| clean_title(&title)))
            }
            Titler::Model(model) => {
                let prompt = texts.chat_title_prompt(&shown(question), &shown(&output.text));
                let (model, fallback) = (Arc::clone(model), first_words(question));
                Titling::Asked(Box::pin(async move {
                    asked(&*model, prompt).await.or(fallback)
                }))
            }
        }
    }
}

/// The title `model` answers `prompt` with, cleaned; `None` when it fails or says nothing usable.
async fn asked(model: &dyn Model, prompt: String) -> Option<String> {
    let messages = [Message::user(prompt)];
    let settings = ModelSettings::new()
        .max_tokens(TITLE_TOKENS)
        .temperature(0.2);
    let request = ChatRequest::new(&messages, &[]).with_settings(&settings);
    match model.chat(request).await {
        Ok(reply) => clean_title(unquoted(&reply.message.content)),
        Err(problem) => {
            tracing::warn!(%problem, "a model could not title a chat");
            None
        }
    }
}

/// At most [`SHOWN`] characters of `text`.
fn shown(text: &str) -> String {
    text.chars().take(SHOWN).collect()
}

/// A model's title without the quotes, label marks and full stop models tend to put around it.
fn unquoted(title: &str) -> &str {
    let quotes: &[char] = &[
        '"', '\'', '“', '”', '‘', '’', '「', '」', '《', '》', '*', '#',
    ];
    title
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or_default()
        .trim_matches(quotes)
        .trim_end_matches(['.', '。'])
        .trim()
}

/// The default title: the question's first line, its first words up to about 60 characters.
pub(crate) fn first_words(question: &str) -> Option<String> {
    let line = question
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())?;
    if line.chars().count() <= 60 {
        return Some(line.to_owned());
    }
    let mut title = String::new();
    for word in line.split_whitespace() {
        if title.chars().count() + word.chars().count() > 60 {
            break;
        }
        if !title.is_empty() {
            title.push(' ');
        }
        title.push_str(word);
    }
    if title.is_empty() {
        // One long word: cut at a character.
        title = line.chars().take(60).collect();
    }
    title.push('…');
    Some(title)
}

/// A title as kept: trimmed, without control characters, at most [`MAX_TITLE`] characters;
/// `None` when nothing is left.
pub(crate) fn clean_title(title: &str) -> Option<String> {
    let cleaned: String = title
        .trim()
        .chars()
        .filter(|character| !character.is_control())
        .take(MAX_TITLE)
        .collect();
    (!cleaned.is_empty()).then_some(cleaned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::AssistantMessage;
    use agent_core::ModelError;
    use agent_core::testing::{ScriptStep, ScriptedModel};
    use agent_core::{Chinese, English};

    #[test]
    fn a_title_is_the_questions_first_words() {
        assert_eq!(
            first_words("  Weather in Oslo?\nmore").as_deref(),
            Some("Weather in Oslo?")
        );
        let long = "Please plan a three day trip through the fjords with a stop in Bergen and Flåm";
        let title = first_words(long).unwrap();
        assert!(
            title.ends_with('…') && title.chars().count() <= 61,
            "{title}"
        );
        assert!(long.starts_with(title.trim_end_matches('…')));
        assert_eq!(first_words(" \n "), None);
        assert_eq!(clean_title(" a\u{7}b "), Some("ab".to_owned()));
        assert_eq!(clean_title("   "), None);
    }

    /// The title `titler` gives a chat whose first question is answered "Rain, 12 °C.".
    async fn titled(titler: &Titler, texts: &dyn Texts) -> Option<String> {
        let agent: agent_core::Agent =
            agent_core::Agent::new(ScriptedModel::new([AssistantMessage::text("Rain, 12 °C.")]));
        let output = agent.run("Weather in Oslo tomorrow?").await.unwrap();
        match titler.title("Weather in Oslo tomorrow?", &output, texts) {
            Titling::Now(title) => title,
            Titling::Asked(asked) => asked.await,
        }
    }

    #[tokio::test]
    async fn a_model_titles_the_first_exchange_in_the_agents_language() {
        let model = Arc::new(ScriptedModel::new([
            AssistantMessage::text("\"Oslo weather tomorrow.\"\n"),
            AssistantMessage::text("「奥斯陆天气」"),
        ]));
        let titler = Titler::Model(model.clone());
        assert_eq!(
            titled(&titler, &English).await.as_deref(),
            Some("Oslo weather tomorrow")
        );
        assert_eq!(
            titled(&titler, &Chinese).await.as_deref(),
            Some("奥斯陆天气")
        );
        // What each was asked: the exchange, in the agent's language.
        let asked = model.requests();
        let [english, chinese] = asked.as_slice() else {
            panic!("{asked:?}")
        };
        let english = english.messages.last().unwrap().content();
        assert!(english.starts_with("Write a title") && english.contains("Rain, 12 °C."));
        let chinese = chinese.messages.last().unwrap().content();
        assert!(chinese.contains("标题") && chinese.contains("Weather in Oslo tomorrow?"));
    }

    #[tokio::test]
    async fn a_model_that_fails_leaves_the_questions_first_words() {
        let model = ScriptedModel::from_steps([ScriptStep::error(|| ModelError::Transport {
            message: "connection refused".into(),
        })]);
        let titler = Titler::Model(Arc::new(model));
        assert_eq!(
            titled(&titler, &English).await.as_deref(),
            Some("Weather in Oslo tomorrow?")
        );
    }
}
