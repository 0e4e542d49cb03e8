//! Asking again (`regenerate()` in the AI SDK: `trigger: "regenerate-message"`): the answer asked
//! for again is taken back from the conversation, with every turn after it, and its question is
//! answered anew without being stored twice; the answer's steps whose calls had effects stay
//! ([`effects`] finds them). Editing (`sendMessage({ text, messageId })`): the
//! question the edited message replaces is taken back with every turn after it, and the edited
//! one asked in its place.
//!
//! Which answer: the one `messageId` names, or the chat's last. An answer's message id says where
//! the conversation stood when its question came (see [`answer_id`]), so the server finds an
//! earlier answer without keeping the client's ids; a client that sends only its newest message
//! is served the same. The question is the request's last message: the client sends the messages
//! up to it. When the conversation does not hold that question where the answer's began (it was
//! refused before the model answered, and so never kept), the conversation is cut back to where
//! it would be and the question is asked as a new one.

use agent_core::Message;
use agent_core::RunId;

/// A fresh message id for an answer in chat `chat_id` to a question that came when the
/// conversation had `base` messages (the question is the first user message from there on):
/// `msg-{chat_id}-{base}-{32 hexadecimal digits}`. The digits are fresh, never made again by this
/// server or another (two instances on one database), so an answer given again has an id of its
/// own.
pub(crate) fn answer_id(chat_id: &str, base: usize) -> String {
    // A fresh run id is 32 hexadecimal digits that no server makes twice.
    format!("msg-{chat_id}-{base}-{}", RunId::new())
}

/// The message id an answer read back from the store has (the stream's own id is not kept): the
/// same form as [`answer_id`], so the endpoint places it on the next request.
pub(crate) fn read_back_id(chat_id: &str, base: usize) -> String {
    format!("msg-{chat_id}-{base}-0")
}

/// The `base` of an [`answer_id`] of chat `chat_id`; `None` for any other id.
fn answer_base(chat_id: &str, id: &str) -> Option<usize> {
    let rest = id
        .strip_prefix("msg-")?
        .strip_prefix(chat_id)?
        .strip_prefix('-')?;
    let (base, serial) = rest.split_once('-')?;
    let digits = |text: &str, digit: fn(&u8) -> bool| {
        !text.is_empty() && text.bytes().all(|byte| digit(&byte))
    };
    // The serial: hexadecimal (ids given by earlier versions counted in decimal, which reads too).
    let serial_digit = |byte: &u8| byte.is_ascii_digit() || (b'a'..=b'f').contains(byte);
    if !digits(base, u8::is_ascii_digit) || !digits(serial, serial_digit) {
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

/// The calls in `messages[from..]` whose effects a cut would hide: each call with a result that
/// is not an error, to a tool `harmless` does not vouch for (read-only or idempotent); their tool
/// names, and the place of the last result of each turn (the messages up to the next question)
/// that holds one. An answer taken back, or a question edited away, must never let the model call
/// them again without knowing they ran.
pub(crate) struct Effects {
    /// The tools whose calls had effects, in order, each once.
    pub(crate) tools: Vec<String>,
    /// The first turn's last tool result (its index in the conversation), when the first turn
    /// holds one of the calls; `None` when none is in it.
    pub(crate) first_turn_end: Option<usize>,
    /// Whether a turn after the first holds one.
    pub(crate) in_later_turns: bool,
}

/// What [`Effects`] a cut of `messages` back to `from` would hide.
pub(crate) fn effects(
    messages: &[Message],
    from: usize,
    harmless: impl Fn(&str) -> bool,
) -> Effects {
    let mut effects = Effects {
        tools: Vec::new(),
        first_turn_end: None,
        in_later_turns: false,
    };
    let mut names = std::collections::HashMap::new();
    let mut turn = 0;
    let mut last_result_of_first_turn = None;
    for (at, message) in messages.iter().enumerate().skip(from) {
        match message {
            // A question starts the next turn (the first is the one `from` is in).
            Message::User { .. } if at > from => turn += 1,
            Message::Assistant(reply) => {
                for call in &reply.tool_calls {
                    names.insert(call.id.as_str(), call.name.as_str());
                }
            }
            Message::Tool(result) => {
                if turn == 0 {
                    last_result_of_first_turn = Some(at);
                }
                let Some(tool) = names.get(result.tool_call_id.as_str()) else {
                    continue;
                };
                if result.is_error || harmless(tool) {
                    continue;
                }
                if turn == 0 {
                    effects.first_turn_end = Some(at);
                } else {
                    effects.in_later_turns = true;
                }
                if !effects.tools.iter().any(|known| known == tool) {
                    effects.tools.push((*tool).to_owned());
                }
            }
            _ => {}
        }
    }
    // The first turn is kept through its last result, not only the last one that had effects.
    if effects.first_turn_end.is_some() {
        effects.first_turn_end = last_result_of_first_turn;
    }
    effects
}

/// The answer a request shows before an edited question: its message id, and the question it
/// answered when the request holds it.
pub(crate) struct Before<'a> {
    pub(crate) answer_id: &'a str,
    pub(crate) question: Option<&'a Message>,
}

/// Where in `messages` the question an edit replaces is: the conversation is cut back to that
/// many messages and the edited question asked there (the conversation's length when it holds no
/// such question: the message is new). `None` when `before` is not an answer of chat `chat_id`
/// that the conversation reaches (an id from before it was cut back, say).
///
/// The client's ids for user messages are its own, so the question is placed by the answer before
/// it, whose id says where that answer's question came (see [`answer_id`]): the edited question
/// is the first user message after that one; with no answer before it, the conversation's first.
/// When the conversation does not hold the answer's question there (it was refused before the
/// model answered, and never kept), the edited one takes that place instead. User messages the
/// request shows between the answer and the edited one (`unanswered`: sent, never answered) are
/// passed over where the conversation holds them, in order.
pub(crate) fn edited(
    chat_id: &str,
    messages: &[Message],
    before: Option<Before<'_>>,
    unanswered: &[Message],
) -> Option<usize> {
    let next_question = |from: usize| {
        let after = messages.get(from..)?;
        let offset = after
            .iter()
            .position(|message| matches!(message, Message::User { .. }))?;
        Some(from + offset)
    };
    let mut from = match before {
        None => 0,
        Some(Before {
            answer_id,
            question,
        }) => {
            let base = answer_base(chat_id, answer_id).filter(|base| *base <= messages.len())?;
            match next_question(base) {
                // The answer's question is kept: the edited one came after it.
                Some(at) if question.is_none_or(|question| messages[at] == *question) => at + 1,
                _ => base,
            }
        }
    };
    for sent in unanswered {
        match next_question(from) {
            Some(at) if messages[at] == *sent => from = at + 1,
            _ => break,
        }
    }
    Some(next_question(from).unwrap_or(messages.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_core::AssistantMessage;

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
        let id = answer_id("chat-1", 3);
        assert!(id.starts_with("msg-chat-1-3-"), "{id}");
        assert_ne!(id, answer_id("chat-1", 3));
        assert_eq!(answer_base("chat-1", &id), Some(3));
        assert_eq!(answer_base("chat-1", "msg-chat-1-3-17"), Some(3));
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
    fn an_edited_question_goes_where_the_one_it_replaces_was() {
        let messages = chat();
        let hi = Message::user("Hi");
        let after_first = || Before {
            answer_id: "msg-chat-1-0-4",
            question: Some(&hi),
        };
        // The first question; the second, after the first answer; a new one, after the last.
        assert_eq!(edited("chat-1", &messages, None, &[]), Some(1));
        assert_eq!(
            edited("chat-1", &messages, Some(after_first()), &[]),
            Some(3)
        );
        let weather = Message::user("Weather?");
        let after_last = Before {
            answer_id: "msg-chat-1-3-9",
            question: Some(&weather),
        };
        assert_eq!(edited("chat-1", &messages, Some(after_last), &[]), Some(5));
        // A client that sends no question before the answer is taken at its word.
        let bare = Before {
            answer_id: "msg-chat-1-0-4",
            question: None,
        };
        assert_eq!(edited("chat-1", &messages, Some(bare), &[]), Some(3));
        // A question sent and never answered is passed over where it was kept, not where it was
        // not.
        assert_eq!(
            edited(
                "chat-1",
                &messages,
                Some(after_first()),
                std::slice::from_ref(&weather)
            ),
            Some(5)
        );
        let refused = Message::user("Read this PDF");
        assert_eq!(
            edited(
                "chat-1",
                &messages,
                Some(after_first()),
                std::slice::from_ref(&refused)
            ),
            Some(3)
        );
        // An answer whose question was refused, and never kept: the turn the client dropped after
        // it (asked at the same place) is replaced.
        let after_refused = Before {
            answer_id: "msg-chat-1-3-5",
            question: Some(&refused),
        };
        assert_eq!(
            edited("chat-1", &messages, Some(after_refused), &[]),
            Some(3)
        );
        // Answers the chat does not have.
        for id in ["msg-chat-1-6-0", "msg-other-1-0", "a1"] {
            let unknown = Before {
                answer_id: id,
                question: Some(&hi),
            };
            assert_eq!(
                edited("chat-1", &messages, Some(unknown), &[]),
                None,
                "{id}"
            );
        }
        // A new chat.
        assert_eq!(edited("chat-1", &[], None, &[]), Some(0));
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
