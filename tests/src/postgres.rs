//! A real PostgreSQL server for the session store's tests: Debian's binaries (`initdb`, `pg_ctl`,
//! `postgres`, from `apt-get install postgresql`), a fresh cluster in a temporary folder, trust
//! auth, listening on a free loopback port only (its Unix socket inside the folder), stopped and
//! removed when the [`PostgresServer`] drops. As root, the binaries run as the `postgres` user
//! (they refuse root).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_sql::deadpool_postgres::tokio_postgres::{self, NoTls};

use crate::peers::Peer;

pub static POSTGRES: Peer = Peer {
    name: "PostgreSQL (initdb, pg_ctl)",
    why: "These tests run the PostgreSQL session store against a real server they start",
    enable: "install PostgreSQL's server binaries (`apt-get install postgresql`; they are found \
             in PATH or in /usr/lib/postgresql/<version>/bin)",
    detect: detect_postgres,
};

/// The folder holding `initdb`, `pg_ctl` and `postgres`: in PATH, or Debian's
/// `/usr/lib/postgresql/<version>/bin` (the newest).
pub fn binaries() -> Option<PathBuf> {
    let has_all = |dir: &Path| {
        ["initdb", "pg_ctl", "postgres"]
            .iter()
            .all(|name| dir.join(name).is_file())
    };
    let in_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    // `initdb` in PATH may be a link into the versioned folder, which also has `postgres`.
    for dir in &in_path {
        let initdb = dir.join("initdb");
        if let Ok(real) = std::fs::canonicalize(&initdb)
            && let Some(real_dir) = real.parent()
            && has_all(real_dir)
        {
            return Some(real_dir.to_path_buf());
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            Some((version, entry.path().join("bin")))
        })
        .filter(|(_, dir)| has_all(dir))
        .collect();
    versions.sort();
    versions.pop().map(|(_, dir)| dir)
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|output| output.stdout.trim_ascii() == b"0")
}

fn detect_postgres() -> Result<(), String> {
    if binaries().is_none() {
        return Err("no initdb, pg_ctl and postgres in PATH or /usr/lib/postgresql/*/bin".into());
    }
    if is_root() {
        let user = Command::new("id").args(["-u", "postgres"]).output();
        if !user.is_ok_and(|output| output.status.success()) {
            return Err("running as root, and there is no `postgres` user to run them as".into());
        }
    }
    Ok(())
}

/// A PostgreSQL server of its own, on `127.0.0.1:port`.
pub struct PostgresServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    folder: PathBuf,
    bin: PathBuf,
    as_postgres: bool,
    databases: AtomicUsize,
}

impl PostgresServer {
    /// Makes a cluster in a fresh temporary folder and starts it; panics with the server's log
    /// when it does not start.
    pub fn start() -> Self {
        static STARTED: AtomicUsize = AtomicUsize::new(0);
        let bin = binaries().expect("PostgreSQL's binaries");
        let folder = std::env::temp_dir().join(format!(
            "agent-core-pg-{}-{}",
            std::process::id(),
            STARTED.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&folder);
        std::fs::create_dir_all(&folder).expect("the server's folder");
        let as_postgres = is_root();
        if as_postgres {
            let status = Command::new("chown")
                .args(["postgres:", &folder.display().to_string()])
                .status()
                .expect("chown");
            assert!(status.success(), "chown of {}", folder.display());
        }
        let port = crate::restate::free_port();
        let server = PostgresServer {
            port,
            folder,
            bin,
            as_postgres,
            databases: AtomicUsize::new(0),
        };
        let data = server.folder.join("data");
        server.run(
            "initdb",
            &[
                "-D",
                &data.display().to_string(),
                "-U",
                "postgres",
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
        );
        let options = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} \
             -c fsync=off -c max_connections=200",
            server.folder.display()
        );
        server.run(
            "pg_ctl",
            &[
                "-D",
                &data.display().to_string(),
                "-l",
                &server.folder.join("log").display().to_string(),
                "-o",
                &options,
                "-w",
                "start",
            ],
        );
        server
    }

    /// Runs one of the binaries (as `postgres` when root), panicking with its output on failure.
    fn run(&self, binary: &str, args: &[&str]) {
        let program = self.bin.join(binary);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&program);
            command
        } else {
            Command::new(&program)
        };
        let output = command
            .args(args)
            .current_dir(&self.folder)
            .output()
            .unwrap_or_else(|error| panic!("{binary}: {error}"));
        if !output.status.success() {
            let log = std::fs::read_to_string(self.folder.join("log")).unwrap_or_default();
            panic!(
                "{binary} failed: {}\n{}\n{}\nlog:\n{log}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }

    /// The URL of database `name` on this server, as user `postgres` with no password.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// A new, empty database (named after `name`, numbered): its URL.
    pub async fn fresh_database(&self, name: &str) -> String {
        let number = self.databases.fetch_add(1, Ordering::SeqCst);
        let database = format!("{name}_{number}");
        let (client, connection) = tokio_postgres::connect(&self.url("postgres"), NoTls)
            .await
            .expect("a connection to the test server");
        let connection = tokio::spawn(connection);
        client
            .batch_execute(&format!("CREATE DATABASE \"{database}\""))
            .await
            .expect("CREATE DATABASE");
        drop(client);
        let _ = connection.await;
        self.url(&database)
    }
}

impl Drop for PostgresServer {
    fn drop(&mut self) {
        let data = self.folder.join("data").display().to_string();
        let stop = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            self.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        }));
        if stop.is_err() {
            eprintln!("note: the test PostgreSQL server did not stop");
        }
        let _ = std::fs::remove_dir_all(&self.folder);
    }
}

/// One server for a whole test binary, started on first use; [`stop_shared`] stops it.
static SHARED: Mutex<Option<&'static PostgresServer>> = Mutex::new(None);

/// The test binary's server, started on first use.
pub fn shared() -> &'static PostgresServer {
    let mut shared = SHARED.lock().unwrap_or_else(|poison| poison.into_inner());
    shared.get_or_insert_with(|| Box::leak(Box::new(PostgresServer::start())))
}

/// Stops the test binary's server, if one was started: at the end of `main`, after every test.
pub fn stop_shared() {
    let shared = SHARED.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(server) = *shared {
        // Leaked, so never dropped: stop it by hand.
        let data = server.folder.join("data").display().to_string();
        server.run("pg_ctl", &["-D", &data, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&server.folder);
    }
}
