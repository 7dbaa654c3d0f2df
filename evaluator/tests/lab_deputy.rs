//! 3.3.5 (confused deputy) and 3.3.4e (the operator's out-of-scope call) on the shared
//! lab's py2-auth + oidc-provider pair (`LAB_RS`): the real `mcp-collect` logs in
//! headlessly (`--no-browser`, lab/oidc/browser.sh plays the user, as in lab_oauth.rs)
//! and the evaluator library grades the bundle.
//!
//! The lab AS is on 127.0.0.1 like the resource server but on another port. The 3.3.5
//! gate compares host:port (another port is another origin and another service), so it
//! opens: two scratch clients are registered at the AS and their authorization requests
//! are answered with oidc-provider's own interaction page (a 303 to `/interaction/<uid>`
//! carrying no onward `client_id`): no static client id is in use, so 3.3.5 is N/A with
//! that reason, after live registrations.
//!
//! 3.3.4e: the inputs name `whoami` as `scope_probe_tool`; it is in fact inside the grant
//! (py2-auth requires `mcp:tools` for every call, and the token has it), so the call
//! executes and 3.3.4e fails: the branch an operator's wrong claim (or a server that does
//! not enforce scopes) produces.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use mcp_probe_evaluator::check::Context;
use mcp_probe_evaluator::evidence::Evidence;
use mcp_probe_evaluator::grade::{implemented, run};
use mcp_probe_evaluator::verdict::{LegOutcome, Verdict};

const URL_LINE: &str = "mcp-collect: open this URL to log in: ";

fn lab(var: &str) -> Option<String> {
    if let Ok(v) = std::env::var(var) {
        return Some(v);
    }
    let env_file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/run/env");
    let text = std::fs::read_to_string(env_file).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{var}=")))
        .map(str::to_string)
}

fn collector() -> Option<PathBuf> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let p = target.join("debug/mcp-collect");
    p.is_file().then_some(p)
}

/// `mcp-collect --no-browser` with `args`, playing the user when a login URL appears.
fn collect(bin: &Path, home: &Path, url: &str, args: &[&str]) -> Evidence {
    let mut child = Command::new(bin)
        .env("MCP_PROBE_HOME", home)
        .args(["--no-browser", "-o"])
        .arg(home.join("out"))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn mcp-collect");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(60)) {
        if let Some(auth_url) = line.strip_prefix(URL_LINE) {
            let browser = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/oidc/browser.sh");
            let out = Command::new("bash")
                .arg(browser)
                .arg(auth_url)
                .arg("--deliver")
                .output()
                .expect("browser.sh");
            assert!(
                out.status.success(),
                "browser.sh: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            break;
        }
    }
    let out = child.wait_with_output().expect("wait mcp-collect");
    let stderr = reader.join().expect("stderr reader");
    assert_eq!(out.status.code(), Some(0), "{url}: {stderr}");
    let path = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .expect("a bundle path")
        .to_string();
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[])
        .expect("bundle verifies");
    Evidence::new(path, v)
}

#[test]
fn lab_rs_deputy_gate_opens_and_finds_no_static_client_id_and_scope_probe_executes() {
    let (Some(url), Some(bin)) = (lab("LAB_RS"), collector()) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "LAB_RS missing or mcp-collect not built (lab/up.sh; cargo build --workspace --bins)"
        );
        eprintln!("skipping: LAB_RS missing or mcp-collect not built");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let inputs = dir.path().join("inputs.json");
    std::fs::write(
        &inputs,
        serde_json::json!({ url.as_str(): {"scope_probe_tool": "whoami", "scope_probe_arguments": {}} }).to_string(),
    )
    .expect("inputs");
    let ev = collect(
        &bin,
        &dir.path().join("home"),
        &url,
        &["--inputs", inputs.to_str().expect("utf-8 path")],
    );
    assert!(ev.authenticated(), "the run logged in");
    if !ev.has_leg("3.3.5.register") {
        // Until collector/src/run.rs calls deputy_legs and scope_probe_leg (see
        // collector/src/legs_deputy.rs), the bundle holds neither leg.
        assert!(
            std::env::var_os("CI").is_none(),
            "mcp-collect recorded no 3.3.5 legs: run.rs does not call deputy_legs"
        );
        eprintln!("skipping: this mcp-collect build records no 3.3.5 legs yet");
        return;
    }

    // The collector registered two scratch clients (never cached) and sent both
    // authorization requests; oidc-provider answered each with its interaction page.
    let regs: Vec<_> = ev.exchanges("3.3.5.register").collect();
    assert_eq!(regs.len(), 2, "two scratch registrations");
    for r in &regs {
        assert_eq!(r.status(), Some(201), "open DCR answers 201");
        assert!(r
            .http
            .request
            .headers
            .iter()
            .all(|h| !h.name.eq_ignore_ascii_case("authorization")));
    }
    let auths: Vec<_> = ev.exchanges("3.3.5.authorize").collect();
    assert_eq!(auths.len(), 2);
    for a in &auths {
        assert_eq!(a.status(), Some(303), "{:?}", a.header("location"));
        assert!(a
            .header("location")
            .is_some_and(|l| l.contains("/interaction/")));
    }
    assert!(ev
        .skipped("3.3.5a.redirect")
        .is_some_and(|r| r.contains("no shared onward client_id")));
    // No scratch client reached the credential cache: only the working client is there.
    let creds = dir.path().join("home/credentials");
    let cached: Vec<String> = std::fs::read_dir(&creds)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default();
    assert!(
        cached.iter().all(|c| !c.contains("3.3.5 scratch client")),
        "scratch clients are never cached"
    );

    if let Some(check) = implemented("3.3.5") {
        let o = run(check, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        assert!(
            o.evidence.contains("not one shared static client id"),
            "{}",
            o.evidence
        );
        assert_eq!(
            o.details["downstream_client_ids"],
            serde_json::json!([null, null])
        );
        assert_eq!(o.details["registrations"].as_array().map(Vec::len), Some(2));
    } else {
        eprintln!("3.3.5 is not registered in this build; its verdict asserts are skipped");
    }

    // 3.3.4e: whoami ran (the token's grant covers it), so the operator's claim fails.
    let x = ev
        .exchanges("3.3.4e.call")
        .next()
        .expect("3.3.4e.call recorded");
    let body: serde_json::Value = x.request_json().expect("json body");
    assert_eq!(body["method"], "tools/call");
    assert_eq!(body["params"]["name"], "whoami");
    assert!(body["params"]["_meta"]["progressToken"].is_string());
    let o = run(
        implemented("3.3.4").expect("3.3.4"),
        &ev,
        &Context::default(),
    );
    let e = o
        .legs
        .iter()
        .find(|l| l.id == "3.3.4e")
        .expect("3.3.4e leg");
    if e.note.contains("makes no out-of-scope call") {
        // s3_oauth.rs still has its placeholder leg (the classifier of
        // evaluator/src/checks/s3_scope_probe.rs is not wired in yet).
        eprintln!(
            "3.3.4e is not graded from the call in this build: {}",
            e.note
        );
        return;
    }
    assert_eq!(e.outcome, LegOutcome::Fail, "{}", e.note);
    assert!(e.note.contains("executed"), "{}", e.note);
    assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
}
