//! A real Restate server for the durable-run tests and benchmark: the binary of the pinned npm
//! package `@restatedev/restate-server`, installed by
//! `npm ci --ignore-scripts --prefix tests/restate`, started on loopback ports with a fresh data
//! folder. restate-server looks up api.github.com at every start, so whoever starts it runs inside
//! a private network namespace ([`crate::netns`]) marked by [`IN_NAMESPACE`].

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::process::{Child, Command};

use crate::peers::Peer;

/// Set in the process inside the private network namespace.
pub const IN_NAMESPACE: &str = "AGENT_CORE_RESTATE_NETNS";

pub static RESTATE: Peer = Peer {
    name: "restate-server in a private network namespace",
    why: "These tests run durable agents on a real Restate server, isolated from any network",
    enable: "install Node.js and run `npm ci --ignore-scripts --prefix tests/restate`, as root \
             (the tests enter a network namespace of their own with `unshare -n`)",
    detect: detect_restate,
};

/// The server binary the npm package ships for this platform.
pub fn restate_binary() -> Option<PathBuf> {
    let packages =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("restate/node_modules/@restatedev");
    let entries = std::fs::read_dir(packages).ok()?;
    entries
        .filter_map(Result::ok)
        .map(|entry| entry.path().join("bin/restate-server"))
        .find(|binary| binary.is_file())
}

fn detect_restate() -> Result<(), String> {
    if restate_binary().is_none() {
        return Err("@restatedev/restate-server is not installed in tests/restate".to_owned());
    }
    if !crate::netns::inside(IN_NAMESPACE) {
        return Err("no private network namespace (`unshare -n` needs root)".to_owned());
    }
    Ok(())
}

pub fn free_port() -> u16 {
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    probe.local_addr().expect("its address").port()
}

/// A Restate server on loopback ports, with a fresh data folder.
pub struct Restate {
    /// The admin API, `http://127.0.0.1:PORT`.
    pub admin: String,
    /// The ingress, `http://127.0.0.1:PORT`.
    pub ingress: String,
    child: Child,
    folder: PathBuf,
    http: reqwest::Client,
}

impl Restate {
    /// Starts one and waits until its admin API and ingress answer.
    pub async fn start() -> Restate {
        let folder = std::env::temp_dir().join(format!(
            "agent-core-restate-{}-{}",
            std::process::id(),
            free_port()
        ));
        std::fs::create_dir_all(&folder).expect("a data folder");
        let (admin_port, ingress_port) = (free_port(), free_port());
        let log = std::fs::File::create(folder.join("restate.log")).expect("a log file");
        let child = Command::new(restate_binary().expect("restate-server"))
            .arg("--no-logo")
            .env("RESTATE_BASE_DIR", folder.join("data"))
            .env("RESTATE_NODE_NAME", "test-node")
            .env("RESTATE_LISTEN_MODE", "tcp")
            .env("RESTATE_BIND_IP", "127.0.0.1")
            .env("RESTATE_ADVERTISED_HOST", "127.0.0.1")
            .env("RESTATE_BIND_PORT", free_port().to_string())
            .env("RESTATE_ADMIN__BIND_PORT", admin_port.to_string())
            .env("RESTATE_INGRESS__BIND_PORT", ingress_port.to_string())
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            .env("RESTATE_ADMIN__DISABLE_WEB_UI", "true")
            .stdout(log.try_clone().expect("the log file"))
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("restate-server starts");
        let restate = Restate {
            child,
            folder,
            admin: format!("http://127.0.0.1:{admin_port}"),
            ingress: format!("http://127.0.0.1:{ingress_port}"),
            http: reqwest::Client::new(),
        };
        let ready = [
            format!("{}/health", restate.admin),
            format!("{}/restate/health", restate.ingress),
        ];
        for url in ready {
            restate.wait_for(&url).await;
        }
        restate
    }

    async fn wait_for(&self, url: &str) {
        let started = Instant::now();
        loop {
            if let Ok(response) = self.http.get(url).send().await
                && response.status().is_success()
            {
                return;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "restate-server never answered {url}; its log: {}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// What the server logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.folder.join("restate.log")).unwrap_or_default()
    }

    /// Registers the service endpoint at `port` (Restate asks it what it serves).
    pub async fn register(&self, port: u16) {
        let response = self
            .http
            .post(format!("{}/deployments", self.admin))
            .json(&json!({ "uri": format!("http://127.0.0.1:{port}") }))
            .send()
            .await
            .expect("the admin API answers");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(
            status.is_success(),
            "registration failed ({status}): {body}"
        );
    }

    /// What the admin API knows of the service `name`: its handlers, with the schemas they
    /// declared.
    pub async fn service(&self, name: &str) -> Value {
        let response = self
            .http
            .get(format!("{}/services/{name}", self.admin))
            .send()
            .await
            .expect("the admin API answers");
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        assert!(status.is_success(), "no service {name} ({status}): {body}");
        serde_json::from_str(&body).expect("a JSON service")
    }

    /// A request through the ingress to `path`; its status and JSON body (or its text, as a JSON
    /// string).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.call_with(method, path, &[], body).await
    }

    /// [`call`](Self::call) with `headers`.
    pub async fn call_with(
        &self,
        method: reqwest::Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = self
            .http
            .request(method, format!("{}/{path}", self.ingress));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .expect("the ingress answers");
        let status = response.status().as_u16();
        let text = response.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, body)
    }

    /// A POST of `body` through the ingress to `path`.
    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    /// The output of the run `run_id` of the workflow `service`, once it has one.
    pub async fn attach(&self, service: &str, run_id: &str) -> Value {
        let path = format!("restate/workflow/{service}/{run_id}/attach");
        let (status, body) = self.call(reqwest::Method::GET, &path, None).await;
        assert_eq!(
            status,
            200,
            "the run failed: {body}; restate's log: {}",
            self.log()
        );
        body
    }
}

impl Drop for Restate {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}
