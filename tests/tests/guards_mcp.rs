//! Guards on tools served over MCP: an MCP client's calls pass the server's guards as a run's
//! calls pass an agent's, before they run and before their results go back.

use std::sync::Mutex;

use agent_core::guard::{At, Verdict, What, guard_fn};
use agent_core::{Agent, ToolSet, tool, tools};
use agent_mcp::{McpClient, McpServer, McpTool};
use tests::{call, model_calling, tool_results};

/// Folders wiped.
static WIPED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Deletes every file in a folder.
#[tool]
fn wipe(folder: String) -> String {
    WIPED.lock().unwrap().push(folder.clone());
    format!("wiped {folder}")
}

/// Looks a customer up.
#[tool]
fn customer(name: String) -> String {
    format!("{name}, card 4111 1111 1111 1111")
}

/// The tools served with guards, and a client of them.
async fn connected(server: McpServer) -> McpClient {
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (read, write) = tokio::io::split(server_end);
    tokio::spawn(async move {
        let _ = server.serve_io(read, write).await;
    });
    let (read, write) = tokio::io::split(client_end);
    McpClient::connect_io(read, write).await.unwrap()
}

#[tokio::test]
async fn a_served_tools_calls_and_results_pass_the_servers_guards() {
    let served: ToolSet = tools!(wipe, customer);
    let server = McpServer::new(served)
        .guard(
            At::CALLS,
            guard_fn("not home", |checked| match &checked.what {
                What::Call { call, .. } if call.arguments.contains("/home") => {
                    Verdict::Refuse("the home folder stays".into())
                }
                _ => Verdict::Allow,
            }),
        )
        .guard(
            At::RESULTS,
            guard_fn("cards", |checked| {
                Verdict::Rewrite(checked.what.text().replace("4111 1111 1111 1111", "[card]"))
            }),
        )
        .guard(
            At::CALLS,
            guard_fn("root", |checked| {
                match checked.what.text().contains("\"/\"") {
                    true => Verdict::trip("a wipe of the root"),
                    false => Verdict::Allow,
                }
            }),
        );
    let client = connected(server).await;
    let remote: Vec<McpTool> = client.tools().await.unwrap();
    let model = model_calling(
        [
            call(0, "wipe", r#"{"folder":"/home"}"#),
            call(1, "wipe", r#"{"folder":"/tmp/cache"}"#),
            call(2, "customer", r#"{"name":"Ann"}"#),
            call(3, "wipe", r#"{"folder":"/"}"#),
        ],
        "done",
    );
    let agent = Agent::new(model).try_tools(remote).unwrap();
    let output = agent.run("tidy up").await.unwrap();
    let results: Vec<(bool, &str)> = tool_results(&output)
        .iter()
        .map(|result| (result.is_error, result.content.as_str()))
        .collect();
    assert!(results[0].0);
    assert!(
        results[0]
            .1
            .contains("the guard `not home` did not let this call run: the home folder stays"),
        "{}",
        results[0].1
    );
    assert_eq!(results[1], (false, "wiped /tmp/cache"));
    assert_eq!(results[2], (false, "Ann, card [card]"));
    // A trip is an error of the protocol, which the client's agent reads as a failed call.
    assert!(results[3].0);
    assert!(
        results[3].1.contains("a wipe of the root"),
        "{}",
        results[3].1
    );
    assert_eq!(*WIPED.lock().unwrap(), ["/tmp/cache"]);
}

#[tokio::test]
async fn a_clients_tools_marked_for_what_they_touch_make_the_lethal_mix() {
    let served: ToolSet = tools!(wipe, customer);
    let client = connected(McpServer::new(served)).await;
    let mut remote = client.tools().await.unwrap().into_iter();
    let (wipe, customer) = (remote.next().unwrap(), remote.next().unwrap());
    let marked = |post: McpTool| {
        let page = customer.clone().renamed("page").reading_untrusted();
        let records = customer.clone().reading_private();
        let agent: Agent = Agent::new(model_calling([], "never"));
        agent.try_tools([page, records, post]).unwrap()
    };
    let agent = marked(wipe.clone().renamed("post").sending_out());
    let mix = agent.lethal_mix().unwrap();
    assert_eq!(
        (mix.untrusted, mix.private, mix.sends_out),
        (
            vec!["page".to_owned()],
            vec!["customer".to_owned()],
            vec!["post".to_owned()]
        )
    );
    // An approval on the one that sends data out answers for it.
    let agent = marked(wipe.renamed("post").sending_out().requiring_approval());
    assert!(agent.lethal_mix().is_none());
}
