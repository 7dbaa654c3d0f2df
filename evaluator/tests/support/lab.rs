//! Shared by the grader's lab tests: lab variables, the `mcp-collect` binary (another
//! package's: `scripts/test.sh` builds it before the tests), and a collection that plays
//! the user through an OAuth login with `lab/oidc/browser.sh` when one is asked for.
#![allow(dead_code, unreachable_pub)]

#[path = "../../../collector/tests/support/headless.rs"]
mod headless;

use std::path::{Path, PathBuf};

use mcp_probe_evaluator::evidence::Evidence;
use mcp_probe_evaluator::verdict::{LegOutcome, Outcome};

/// A lab variable: the environment, else `lab/run/env`.
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

/// The built `mcp-collect`, if any.
pub fn collector() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let p = target.join("debug/mcp-collect");
    p.is_file().then_some(p)
}

/// The outcome of leg `id` of `o`.
pub fn leg(o: &Outcome, id: &str) -> LegOutcome {
    o.legs
        .iter()
        .find(|l| l.id == id)
        .map(|l| l.outcome)
        .unwrap_or_else(|| panic!("no leg {id} in {o:?}"))
}

/// One `mcp-collect --no-browser` run and what it printed.
pub struct Run {
    /// The bundle, verified.
    pub evidence: Evidence,
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
        evidence: Evidence::new(path, v),
        stderr,
        logged_in,
    }
}
