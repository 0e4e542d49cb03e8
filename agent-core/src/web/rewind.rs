//! Asking again (`regenerate()` in the AI SDK: `trigger: "regenerate-message"`): the answer asked
//! for again is taken back from the conversation, with every turn after it, and its question is
//! answered anew without being stored twice.
//!
//! Which answer: the one `messageId` names, or the chat's last. An answer's message id says where
//! the conversation stood when its question came (see [`answer_id`]), so the server finds an
//! earlier answer without keeping the client's ids; a client that sends only its newest message
//! is served the same. The question is the request's last message: the client sends the messages
//! up to it. When the conversation does not hold that question where the answer's began (it was
//! refused before the model answered, and so never kept), the conversation is cut back to where
//! it would be and the question is asked as a new one.

use crate::message::Message;

/// The message id of an answer in chat `chat_id` to a question that came when the conversation
/// had `base` messages (the question is the first user message from there on); `serial` makes it
/// unique in the server, so an answer given again has an id of its own.
pub(crate) fn answer_id(chat_id: &str, base: usize, serial: u64) -> String {
    format!("msg-{chat_id}-{base}-{serial}")
}

/// The `base` of an [`answer_id`] of chat `chat_id`; `None` for any other id.
fn answer_base(chat_id: &str, id: &str) -> Option<usize> {
    let rest = id
        .strip_prefix("msg-")?
        .strip_prefix(chat_id)?
        .strip_prefix('-')?;
    let (base, serial) = rest.split_once('-')?;
    let digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    if !digits(base) || !digits(serial) {
        return None;
    }
    base.parse().ok()
}

/// Which answer a regenerate takes back.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Target {
    /// The chat's last: the answer to its last question.
    Last,
    /// The answer to the question the request names by its own id (the request's last message):
    /// the last answer to a question like it.
    Question,
    /// The answer whose [`answer_id`] has this `base`.
    Answer(usize),
}

impl Target {
    /// What `message_id` names in chat `chat_id`, the request's last message having the id
    /// `question_id`; `None` when it names nothing the chat has.
    pub(crate) fn named(
        chat_id: &str,
        message_id: Option<&str>,
        question_id: Option<&str>,
    ) -> Option<Target> {
        match message_id {
            None => Some(Target::Last),
            Some(id) if Some(id) == question_id => Some(Target::Question),
            Some(id) => answer_base(chat_id, id).map(Target::Answer),
        }
    }
}

/// How a regenerate goes: the conversation cut back to its first `keep` messages, then the kept
/// question answered again (`ask` false) or the request's question asked as a new one (`ask`
/// true, when the conversation does not hold it); the new answer's id has this `base`.
#[derive(Debug, PartialEq)]
pub(crate) struct Rewind {
    pub(crate) keep: usize,
    pub(crate) ask: bool,
    pub(crate) base: usize,
}

/// How to take back the answer `target` names from `messages` and answer `question` again;
/// `None` when the conversation has no such answer (an id from before it was cut back, say).
pub(crate) fn rewind(messages: &[Message], target: Target, question: &Message) -> Option<Rewind> {
    let is_user = |message: &Message| matches!(message, Message::User { .. });
    let kept = |at: usize| Rewind {
        keep: at + 1,
        ask: false,
        base: at,
    };
    let asked_from = |base: usize| Rewind {
        keep: base,
        ask: true,
        base,
    };
    Some(match target {
        Target::Last => match messages.iter().rposition(is_user) {
            Some(at) if messages[at] == *question => kept(at),
            // The last question is not this one: this one was never kept. The answers the
            // client still shows stay.
            _ => asked_from(messages.len()),
        },
        Target::Question => match messages.iter().rposition(|message| message == question) {
            Some(at) => kept(at),
            None => asked_from(messages.len()),
        },
        Target::Answer(base) => {
            let after = messages.get(base..)?;
            match after.iter().position(is_user) {
                Some(offset) if after[offset] == *question => kept(base + offset),
                _ => asked_from(base),
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::AssistantMessage;

    fn chat() -> Vec<Message> {
        vec![
            Message::system("Be brief."),
            Message::user("Hi"),
            Message::Assistant(AssistantMessage::text("Hello!")),
            Message::user("Weather?"),
            Message::Assistant(AssistantMessage::text("Rain.")),
        ]
    }

    #[test]
    fn answer_ids_name_their_base_in_their_chat_only() {
        let id = answer_id("chat-1", 3, 17);
        assert_eq!(id, "msg-chat-1-3-17");
        assert_eq!(answer_base("chat-1", &id), Some(3));
        assert_eq!(answer_base("chat", &id), None);
        assert_eq!(answer_base("chat-1-3", &id), None);
        for other in [
            "msg-chat-1-3",
            "msg-chat-1--1-2",
            "msg-chat-1-+3-1",
            "m1",
            "",
        ] {
            assert_eq!(answer_base("chat-1", other), None, "{other}");
        }
    }

    #[test]
    fn the_last_answer_is_taken_back_to_its_question() {
        let messages = chat();
        let again = rewind(&messages, Target::Last, &Message::user("Weather?"));
        assert_eq!(
            again,
            Some(Rewind {
                keep: 4,
                ask: false,
                base: 3
            })
        );
        // A question the conversation never kept is asked, and nothing is taken back.
        let never = rewind(&messages, Target::Last, &Message::user("Read this PDF"));
        assert_eq!(
            never,
            Some(Rewind {
                keep: 5,
                ask: true,
                base: 5
            })
        );
    }

    #[test]
    fn an_earlier_answer_is_taken_back_with_the_turns_after_it() {
        let messages = chat();
        // The first answer's question came when the conversation was empty (the system prompt
        // is stored with it).
        let first = rewind(&messages, Target::Answer(0), &Message::user("Hi"));
        assert_eq!(
            first,
            Some(Rewind {
                keep: 2,
                ask: false,
                base: 1
            })
        );
        let by_question = rewind(&messages, Target::Question, &Message::user("Hi"));
        assert_eq!(by_question, first);
        // An answer whose question was refused, and never kept: the turns the client dropped
        // after it go, and the question is asked.
        let refused = rewind(
            &messages,
            Target::Answer(3),
            &Message::user("Read this PDF"),
        );
        assert_eq!(
            refused,
            Some(Rewind {
                keep: 3,
                ask: true,
                base: 3
            })
        );
        assert_eq!(
            rewind(&messages, Target::Answer(6), &Message::user("Hi")),
            None
        );
    }
}
