//! The lab, for the grader's tests that need it: its variables, the `mcp-collect` binary
//! (another package's: `scripts/test.sh` builds it before the tests), what
//! `lab/install.sh` installs, and a collection that plays the user through an OAuth login
//! with `lab/oidc/browser.sh` when one is asked for.
//!
//! A test that needs the lab asks [`require`] (or [`require_collector`],
//! [`require_installed`]) and nothing else: when what it needs is absent the test
//! **fails**, naming what is missing and how to get it, unless the operator opted out with
//! `MCP_PROBE_SKIP_LAB=1` (then it returns `None` and the test returns after a one-line
//! note on stderr). Under `CI` the opt-out is refused: CI starts the lab.

#[path = "../../../collector/tests/support/headless.rs"]
mod headless;

use std::path::{Path, PathBuf};

use mcp_probe_evaluator::evidence::Bundle;
use mcp_probe_evaluator::verdict::{Outcome, SubOutcome};

/// The variable that opts out of the lab tests.
pub const SKIP: &str = "MCP_PROBE_SKIP_LAB";

/// How to start the lab and give the tests its variables.
const START: &str = "the lab is not up: start it with `lab/up.sh` (after `lab/install.sh`), \
                     then `set -a; . lab/run/env; set +a`";

/// What every requirement does when `what` is absent: fail the test naming `what` and
/// `how` to get it, or, with `MCP_PROBE_SKIP_LAB=1` (and not under `CI`), note the skip
/// on stderr and return `None`.
///
/// # Panics
/// Whenever the opt-out is not given: a lab test never passes by not running.
pub fn absent<T>(what: &str, how: &str) -> Option<T> {
    let skip = std::env::var(SKIP).is_ok_and(|v| v == "1");
    let ci = std::env::var_os("CI").is_some();
    if skip && !ci {
        eprintln!("skipping ({SKIP}=1): {what} missing");
        return None;
    }
    if skip {
        panic!("{what} missing, and {SKIP}=1 is refused under CI: {how}");
    }
    panic!("{what} missing: {how}; or set {SKIP}=1 to skip the tests that need it");
}

/// The lab variables `vars` (in order) and the built `mcp-collect`: every one present, or
/// [`absent`] naming the missing ones.
pub fn require(vars: &[&str]) -> Option<(Vec<String>, PathBuf)> {
    let got: Vec<Option<String>> = vars.iter().map(|v| lab(v)).collect();
    let missing: Vec<&str> = vars
        .iter()
        .zip(&got)
        .filter(|(_, g)| g.is_none())
        .map(|(v, _)| *v)
        .collect();
    if !missing.is_empty() {
        return absent(&format!("lab variable(s) {}", missing.join(", ")), START);
    }
    let bin = require_collector()?;
    Some((got.into_iter().flatten().collect(), bin))
}

/// The one lab variable `var` and the built `mcp-collect` ([`require`]).
pub fn require_one(var: &str) -> Option<(String, PathBuf)> {
    let (mut urls, bin) = require(&[var])?;
    Some((urls.remove(0), bin))
}

/// The built `mcp-collect`, or [`absent`].
pub fn require_collector() -> Option<PathBuf> {
    collector().or_else(|| {
        absent(
            "the mcp-collect binary (another package's)",
            "build it first with `cargo build --workspace --bins` (scripts/test.sh does)",
        )
    })
}

/// `rel`, a path under the repository root that `lab/install.sh` installs (a venv's
/// python, a schema, a browser), or [`absent`].
pub fn require_installed(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    if p.exists() {
        return Some(p);
    }
    absent(rel, "the lab is not installed: run `lab/install.sh`")
}

/// A lab variable: the environment, else `lab/run/env` (no requirement: [`require`]).
pub fn lab(var: &str) -> Option<String> {
    if let Ok(v) = std::env::var(var) {
        return Some(v);
    }
    let env_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/run/env");
    let text = std::fs::read_to_string(env_file).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{var}=")))
        .map(str::to_string)
}

/// The built `mcp-collect`, if any (no requirement: [`require_collector`]).
pub fn collector() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let p = target.join("debug/mcp-collect");
    p.is_file().then_some(p)
}

/// The outcome of sub-verdict `id` of `o`.
pub fn sub(o: &Outcome, id: &str) -> SubOutcome {
    o.subs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.outcome)
        .unwrap_or_else(|| panic!("no sub-verdict {id} in {o:?}"))
}

/// One `mcp-collect --no-browser` run and what it printed.
pub struct Run {
    /// The bundle, verified.
    pub evidence: Bundle,
    /// Everything on stderr.
    pub stderr: String,
    /// An authorization URL was printed and browser.sh completed the login.
    pub logged_in: bool,
}

/// Run `mcp-collect --no-browser ARGS url` with its own `home`; when it prints an
/// authorization URL, play the user with browser.sh and deliver the redirect to its
/// loopback listener (as collector/tests/oauth_e2e.rs does).
pub fn collect_headless(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Run {
    let out = headless::collect_headless(bin, home, url, args);
    let stderr = out.stderr;
    let logged_in = out.delivered.is_some();
    let path = out
        .stdout
        .lines()
        .next()
        .expect("a bundle path")
        .to_string();
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[])
        .expect("bundle verifies");
    // 0: the target was reached with a session; 3: sealed without one (a server whose
    // metadata stops the login, say), which the bundle must then show.
    let session = v
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.revision.is_some());
    let want = if session { 0 } else { 3 };
    assert_eq!(out.code, want, "{url}: {stderr}");
    Run {
        evidence: Bundle::new(path, v),
        stderr,
        logged_in,
    }
}
