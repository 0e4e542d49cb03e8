//! A typed run: a support email becomes a `Ticket` struct. The model looks the customer up with a
//! tool first, then gives the ticket; an answer that does not fit the type (or that the validator
//! rejects) goes back to the model as a correction, and the program gets a checked `Ticket`.
//!
//! `cargo run -p examples --example extract` runs offline: a scripted model plays the LLM and
//! forgets a field on its first try, so the correction round trip shows. With a provider in the
//! environment (`OPENAI_API_KEY=...`, `AGENT_MODEL=ollama:qwen2.5`, see `providers::from_env`) it
//! runs against the real model.
//!
//! The agent is built once and each run brings its own context (here the CRM a request is served
//! from), as a web server would give each request its own user.

use std::collections::HashMap;
use std::sync::Arc;

use agent_core::providers::from_env;
use agent_core::testing::ScriptedModel;
use agent_core::{
    Agent, AssistantMessage, Model, RunError, State, ToolCall, TypedOutput, agent, tool,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A support ticket filed from a customer's email.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Ticket {
    /// The customer's id, from `find_customer`.
    customer_id: u32,
    category: Category,
    priority: Priority,
    /// One sentence saying what the customer needs.
    summary: String,
    /// Whether the customer asks for money back.
    refund_requested: bool,
}

/// What the ticket is about.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Category {
    Billing,
    Bug,
    Account,
    Other,
}

/// How soon someone must answer.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Priority {
    Low,
    Normal,
    Urgent,
}

/// A customer record.
#[derive(Debug, Clone, Serialize)]
struct Customer {
    id: u32,
    name: String,
    plan: &'static str,
}

/// The CRM a run looks customers up in: each run is handed its own.
#[derive(Clone)]
struct Crm {
    customers: Arc<HashMap<String, Customer>>,
}

impl Crm {
    fn demo() -> Self {
        let customer = Customer {
            id: 4711,
            name: "Mei Chen".into(),
            plan: "business",
        };
        Crm {
            customers: Arc::new(HashMap::from([("mei@example.com".to_owned(), customer)])),
        }
    }
}

/// Find a customer by the email address they wrote from.
#[tool(read_only)]
fn find_customer(
    State(crm): State<Crm>,
    /// The sender's email address
    email: String,
) -> Result<Customer, String> {
    crm.customers
        .get(&email.to_lowercase())
        .cloned()
        .ok_or_else(|| format!("no customer with the email {email}"))
}

const EMAIL: &str = "From: mei@example.com\n\
    Subject: Charged twice!!\n\n\
    Hi, my card was charged twice for the March invoice of our business plan. \
    Please refund the second charge today, our budget review is tomorrow.";

/// The offline stand-in for an LLM: it looks the customer up, forgets the priority on its first
/// try, and gives the whole ticket when told.
fn scripted_model() -> ScriptedModel {
    ScriptedModel::new([
        AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "find_customer",
            r#"{"email":"mei@example.com"}"#,
        )]),
        AssistantMessage::tool_calls([ToolCall::new(
            "call_2",
            "final_result",
            r#"{"customer_id":4711,"category":"billing","summary":"Charged twice for the March invoice; wants the second charge refunded.","refund_requested":true}"#,
        )]),
        AssistantMessage::tool_calls([ToolCall::new(
            "call_3",
            "final_result",
            r#"{"customer_id":4711,"category":"billing","priority":"urgent","summary":"Charged twice for the March invoice; wants the second charge refunded.","refund_requested":true}"#,
        )]),
    ])
}

/// The agent: built once, serving runs for any CRM.
fn ticket_agent(model: impl Model + 'static) -> Agent<Crm> {
    agent!(model, find_customer)
        .system("You file support tickets. Look the sender up before you file.")
        .max_steps(6)
}

/// Files the email as a ticket, with `crm` as this run's context.
async fn file_ticket(agent: &Agent<Crm>, crm: &Crm) -> Result<TypedOutput<Ticket>, RunError> {
    agent
        .run(EMAIL)
        .context(crm)
        .output::<Ticket>()
        // A check the type cannot make: the customer must exist in this run's CRM.
        .validate(|crm: &Crm, ticket: &Ticket| {
            if crm.customers.values().any(|c| c.id == ticket.customer_id) {
                Ok(())
            } else {
                Err(format!(
                    "customer {} does not exist; use find_customer",
                    ticket.customer_id
                ))
            }
        })
        .await
}

/// What the run did, then the ticket.
fn render(out: &TypedOutput<Ticket>) -> String {
    let mut text = String::new();
    for message in &out.run.messages[2..] {
        match message {
            agent_core::Message::Assistant(reply) => {
                for call in &reply.tool_calls {
                    text.push_str(&format!("call    {} {}\n", call.name, call.arguments));
                }
            }
            agent_core::Message::Tool(result) => {
                let status = if result.is_error { "error " } else { "result" };
                text.push_str(&format!("{status}  {}\n", result.content));
            }
            _ => {}
        }
    }
    text.push_str(&format!(
        "ticket: {:#?}\n({} model calls)\n",
        out.value, out.run.steps
    ));
    text
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let outcome = match from_env() {
        Ok(Some(model)) => {
            println!("(model: {model})");
            file_ticket(&ticket_agent(model), &Crm::demo()).await
        }
        Ok(None) => {
            println!("(offline: no AGENT_MODEL or API key set, so a scripted model plays the LLM)");
            file_ticket(&ticket_agent(scripted_model()), &Crm::demo()).await
        }
        Err(error) => {
            eprintln!("error: {error}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match outcome {
        Ok(out) => {
            print!("{}", render(&out));
            std::process::ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn files_the_email_as_a_ticket_after_one_correction() {
        let out = file_ticket(&ticket_agent(scripted_model()), &Crm::demo())
            .await
            .unwrap();
        assert_eq!(
            out.value,
            Ticket {
                customer_id: 4711,
                category: Category::Billing,
                priority: Priority::Urgent,
                summary: "Charged twice for the March invoice; wants the second charge refunded."
                    .into(),
                refund_requested: true,
            }
        );
        let printed = render(&out);
        assert!(printed.starts_with(
            "call    find_customer {\"email\":\"mei@example.com\"}\n\
             result  {\"id\":4711,\"name\":\"Mei Chen\",\"plan\":\"business\"}\n"
        ));
        assert!(
            printed.contains(
                "error   the answer does not fit the schema: priority: missing required field. \
                 Please try again.\n"
            ),
            "{printed}"
        );
        assert!(printed.ends_with("(3 model calls)\n"), "{printed}");
    }

    #[tokio::test]
    async fn a_ticket_for_a_customer_the_crm_lacks_is_sent_back() {
        let empty = Crm {
            customers: Arc::new(HashMap::new()),
        };
        let unknown_customer = AssistantMessage::tool_calls([ToolCall::new(
            "call_1",
            "final_result",
            r#"{"customer_id":1,"category":"other","priority":"low","summary":"?","refund_requested":false}"#,
        )]);
        // The first try and both retries.
        let model = ScriptedModel::new(std::iter::repeat_n(unknown_customer, 3));
        let error = file_ticket(&ticket_agent(model), &empty).await.unwrap_err();
        let RunError::Output { attempts, .. } = error else {
            panic!("expected an output error, got {error:?}");
        };
        assert_eq!(attempts.len(), 3);
        assert_eq!(
            attempts[0].problem.to_string(),
            "the answer was not accepted: customer 1 does not exist; use find_customer"
        );
    }
}
