//! The lethal mix as `#[tool]` and `agent!` see it: what each tool touches, each way to answer for
//! the mix in `agent!` (the errors when none is given are the UI tests' `lethal_mix_*`), and the
//! check of an agent built at run time.

use agent_core::guard::{Touches, Verdict, guard_fn};
use agent_core::testing::ScriptedModel;
use agent_core::{Agent, AssistantMessage, agent, tool};

/// Fetch a web page.
#[tool(reads_untrusted, read_only)]
fn fetch_page(url: String) -> String {
    url
}

/// Read the user's inbox.
#[tool(reads_private)]
fn read_inbox() -> String {
    String::new()
}

/// Send an email.
#[tool(sends_out)]
fn send_email(to: String, body: String) -> String {
    format!("{to}: {body}")
}

/// Send an email, once a person approves.
#[tool(sends_out, requires_approval)]
fn send_approved_email(to: String, body: String) -> String {
    format!("{to}: {body}")
}

/// Read a page the user wrote; it says `reads_untrusted = false` outright.
#[tool(reads_untrusted = false, reads_private = true)]
fn read_note() -> String {
    String::new()
}

/// A mailbox whose methods are tools.
struct Mailbox;

#[tool]
impl Mailbox {
    /// Send a message.
    #[tool(sends_out)]
    fn send(&self, to: String) -> String {
        to
    }
}

fn model() -> ScriptedModel {
    ScriptedModel::new([AssistantMessage::text("hi")])
}

fn names(names: &[String]) -> Vec<&str> {
    names.iter().map(String::as_str).collect()
}

#[test]
fn each_tool_says_what_it_touches() {
    let touches = |reads_untrusted, reads_private, sends_out, requires_approval| Touches {
        reads_untrusted,
        reads_private,
        sends_out,
        requires_approval,
    };
    assert_eq!(fetch_page::TOUCHES, touches(true, false, false, false));
    assert_eq!(read_inbox::TOUCHES, touches(false, true, false, false));
    assert_eq!(send_email::TOUCHES, touches(false, false, true, false));
    assert_eq!(
        send_approved_email::TOUCHES,
        touches(false, false, true, true)
    );
    assert_eq!(read_note::TOUCHES, touches(false, true, false, false));

    let annotations = &fetch_page {}.definition().annotations;
    assert!(annotations.reads_untrusted && !annotations.reads_private && !annotations.sends_out);
    assert_eq!(annotations.read_only, Some(true));
    let annotations = &send_approved_email {}.definition().annotations;
    assert!(annotations.sends_out && annotations.requires_approval);
}

#[test]
fn an_approval_on_the_sender_answers_for_the_mix() {
    let agent: Agent = agent!(model(), fetch_page, read_inbox, send_approved_email);
    assert!(agent.lethal_mix().is_none());
}

#[test]
fn a_guard_on_the_results_answers_for_the_mix() {
    let agent: Agent = agent!(
        model(), fetch_page, read_inbox, send_email;
        guard_results = guard_fn("g", |_| Verdict::Allow),
    );
    assert!(agent.lethal_mix().is_none());

    // The same without the guard, built at run time, has the mix.
    let unguarded: Agent = Agent::new(model())
        .try_tool(fetch_page {})
        .and_then(|agent| agent.try_tool(read_inbox {}))
        .and_then(|agent| agent.try_tool(send_email {}))
        .expect("distinct tools");
    assert!(unguarded.lethal_mix().is_some());
}

#[test]
fn the_mix_accepted_in_code_is_no_mix() {
    let agent: Agent = agent!(
        model(), fetch_page, read_inbox, send_email;
        allow_lethal_mix = "demo",
    );
    assert!(agent.lethal_mix().is_none());

    let both: Agent = agent!(
        model(), fetch_page, read_inbox, send_email;
        allow_lethal_mix = "demo", guard_results = guard_fn("g", |_| Verdict::Allow)
    );
    assert!(both.lethal_mix().is_none());
}

#[test]
fn settings_need_no_tools_and_tools_without_the_mix_need_no_settings() {
    let agent: Agent = agent!(model(); guard_results = guard_fn("g", |_| Verdict::Allow));
    assert!(agent.lethal_mix().is_none());
    let agent: Agent = agent!(model(), fetch_page, read_inbox, read_note,);
    assert!(agent.lethal_mix().is_none());
}

#[test]
fn an_agent_built_at_run_time_reports_the_mix_with_its_tools() {
    let agent: Agent = Agent::new(model())
        .try_tool(fetch_page {})
        .and_then(|agent| agent.try_tool(read_inbox {}))
        .and_then(|agent| agent.try_tool(read_note {}))
        .and_then(|agent| agent.try_toolbox(Mailbox))
        .expect("distinct tools");
    let mix = agent.lethal_mix().expect("the mix");
    assert_eq!(names(&mix.untrusted), ["fetch_page"]);
    assert_eq!(names(&mix.private), ["read_inbox", "read_note"]);
    assert_eq!(names(&mix.sends_out), ["send"]);

    let accepted = agent.allow_lethal_mix("demo");
    assert!(accepted.lethal_mix().is_none());
}
