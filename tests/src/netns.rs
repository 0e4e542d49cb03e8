//! A private network namespace with nothing but loopback, for tests whose peers try the internet
//! on their own (Chromium's background services, restate-server's version check): the test binary
//! runs itself again inside one (`unshare -n`, as root), where it and every peer it starts live.

use std::process::ExitCode;

/// Runs this binary again inside a network namespace of its own, with loopback up and `marker`
/// set in its environment, and passes on its exit status. `None` when this process is already
/// the one inside (`marker` is set), or when there is no namespace to be had (not root, no
/// `unshare`): then the caller runs its tests here, and those that need the namespace check
/// [`inside`] and are reported ignored.
pub fn rerun_inside(marker: &str) -> Option<ExitCode> {
    if inside(marker) {
        return None;
    }
    let me = std::env::current_exe().ok()?;
    let status = std::process::Command::new("unshare")
        .args([
            "-n",
            "--",
            "sh",
            "-c",
            "ip link set lo up && exec \"$0\" \"$@\"",
        ])
        .arg(me)
        .args(std::env::args_os().skip(1))
        .env(marker, "1")
        .status()
        .ok()?;
    // `unshare` itself failing (no privilege) is 1 before anything ran: run here, ignored.
    if !status.success() {
        let probe = std::process::Command::new("unshare")
            .args(["-n", "true"])
            .status()
            .ok()?;
        if !probe.success() {
            return None;
        }
    }
    Some(ExitCode::from(
        u8::try_from(status.code().unwrap_or(1)).unwrap_or(1),
    ))
}

/// Whether this process runs inside the namespace [`rerun_inside`] made.
pub fn inside(marker: &str) -> bool {
    std::env::var_os(marker).is_some()
}
