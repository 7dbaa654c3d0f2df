//! `mcp-collect --from-config`: the real binary over fixture client configurations in a
//! temp dir. A stdio entry runs only with consent: `--allow-exec` when stdin is no
//! terminal (nobody is asked), or a yes to the question at a terminal
//! (`support/pty_answer.py` runs the collector under a pseudo-terminal); each collected entry gets a bundle whose `target.source`
//! names the file and entry; placeholders resolve from the environment and
//! `${input:...}` is recorded as unresolved; configured credentials are used only with
//! `--use-config-credentials`, and no secret of a configuration file appears in any
//! bundle, on stdout or on stderr, in clear or in a common encoding.
//!
//! The stdio server is `support/config_stdio.py` (standard library only); the remote
//! entries name the lab's `LAB_PY2` (skipped without the lab, as the other lab tests).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use base64::Engine as _;
use mcp_probe_schema::model::{ConfigSource, Evidence};
use mcp_probe_schema::redact::Redactor;
use support::*;

/// Secrets the fixtures hold.
const BEARER: &str = "SECRET-config-bearer-5f2a9c";
const API_KEY_HEADER: &str = "SECRET-config-xapikey-77b1";
const ENV_LITERAL: &str = "sk-SECRETconfigEnvLiteral0123";
const ENV_REFERENCED: &str = "SECRET-config-env-referenced-91d";

fn config_server() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/support/config_stdio.py")
        .display()
        .to_string()
}

/// The stdio entry: the config_stdio server, creating `marker`.
fn stdio_entry(marker: &Path) -> serde_json::Value {
    serde_json::json!({
        "command": python(),
        "args": [config_server(), marker.display().to_string()],
        "env": {
            "API_SECRET": ENV_LITERAL,
            "REF_SECRET": "${env:FC_REFERENCED}",
            "MODE": "${FC_MODE}",
            "ASKED": "${input:asked-key}"
        }
    })
}

fn write_config(dir: &Path, servers: serde_json::Value) -> PathBuf {
    let path = dir.join("proj/.mcp.json");
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &path,
        serde_json::to_string_pretty(&serde_json::json!({ "mcpServers": servers })).expect("json"),
    )
    .expect("write");
    path
}

fn run(dir: &tempfile::TempDir, args: &[&str]) -> Run {
    let mut c: Command = collect_cmd(dir);
    c.arg("--target-timeout")
        .arg("60")
        .args(args)
        .env("FC_REFERENCED", ENV_REFERENCED)
        .env("FC_MODE", "fast")
        .env_remove("FC_UNSET");
    let out = c.output().expect("run mcp-collect");
    Run {
        out,
        dir: tempfile::tempdir().expect("tempdir"),
    }
}

fn evidence(path: &Path) -> Evidence {
    let bytes = std::fs::read(path).expect("bundle");
    let u = mcp_probe_schema::bundle::open_unverified(&bytes).expect("a bundle");
    assert!(u.problem.is_none(), "{:?}", u.problem);
    u.evidence
}

fn source(e: &Evidence) -> &ConfigSource {
    e.target.source.as_ref().expect("target.source")
}

/// `secret` in `bytes`: in clear, in the encodings the redactor searches, in base64
/// and in hex.
fn leaks(bytes: &[u8], secret: &str) -> bool {
    let mut r = Redactor::new();
    r.add_secret(secret.as_bytes(), "test");
    let text = String::from_utf8_lossy(bytes);
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let b64url = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
    r.leaks(bytes)
        || text.contains(secret)
        || text.contains(b64.trim_end_matches('='))
        || text.contains(&b64url)
        || text.contains(&hex::encode(secret))
}

fn assert_no_leak(r: &Run, bundles: &[PathBuf]) {
    for s in [BEARER, API_KEY_HEADER, ENV_LITERAL, ENV_REFERENCED] {
        assert!(!leaks(&r.out.stdout, s), "{s} on stdout\n{}", r.describe());
        assert!(!leaks(&r.out.stderr, s), "{s} on stderr\n{}", r.describe());
        for b in bundles {
            let bytes = std::fs::read(b).expect("bundle");
            assert!(!leaks(&bytes, s), "{s} in {}", b.display());
        }
    }
}

#[test]
fn a_stdio_entry_runs_only_with_consent() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("marker");
    let config = write_config(
        dir.path(),
        serde_json::json!({ "local": stdio_entry(&marker) }),
    );
    let config = config.display().to_string();

    // No consent (stdin is not a terminal: nobody is asked): skipped, nothing to collect.
    let r = run(&dir, &["--from-config", &config]);
    assert_eq!(r.code(), 2, "{}", r.describe());
    assert!(!marker.exists(), "the command ran without consent");
    let err = r.stderr();
    assert!(
        err.contains(&format!("{config}: entry \"local\": not run:"))
            && err.contains("--allow-exec local"),
        "{err}"
    );
    assert!(r.bundles().is_empty(), "{}", r.describe());

    // Consent for another entry does not cover this one.
    let r = run(&dir, &["--from-config", &config, "--allow-exec", "other"]);
    assert_eq!(r.code(), 2, "{}", r.describe());
    assert!(!marker.exists(), "the command ran without its own consent");

    // --allow-exec local: it runs, and is collected.
    let r = run(&dir, &["--from-config", &config, "--allow-exec", "local"]);
    assert_eq!(r.code(), 0, "{}", r.describe());
    assert!(marker.exists(), "{}", r.describe());
    let bundles = r.bundles();
    assert_eq!(bundles.len(), 1, "{}", r.describe());
    let e = evidence(&bundles[0]);
    assert_eq!(
        e.target.transport,
        mcp_probe_schema::model::Transport::Stdio
    );
    assert!(e.session.is_some(), "{}", r.describe());
    let s = source(&e);
    assert_eq!(
        (s.client.as_str(), s.scope.as_str(), s.entry.as_str()),
        ("claude-code", "project", "local")
    );
    assert_eq!(s.consent.as_deref(), Some("allow-exec"));
    assert_eq!(s.transport, "stdio");
    let file_bytes = std::fs::read(&config).expect("config");
    assert_eq!(
        s.file_sha256,
        hex::encode(mcp_probe_schema::bundle::sha256(&file_bytes))
    );
    assert!(s.file.ends_with("proj/.mcp.json"), "{}", s.file);
    // Placeholders: MODE resolved, ASKED (`${input:...}`) not, and left out.
    let env = |n: &str| s.env.iter().find(|v| v.name == n).expect(n).clone();
    assert_eq!(env("MODE").written, "reference");
    assert!(env("MODE").supplied && !env("MODE").secret_like);
    assert_eq!(
        env("MODE").fingerprint.as_deref(),
        Some(mcp_probe_schema::bundle::fingerprint(b"fast").as_str())
    );
    assert!(!env("ASKED").supplied && env("ASKED").fingerprint.is_none());
    assert_eq!(s.unresolved, ["env.ASKED: ${input:asked-key}"]);
    // The secret-looking values are credentials: configured, not supplied.
    assert_eq!(env("API_SECRET").written, "literal");
    assert!(env("API_SECRET").secret_like && !env("API_SECRET").supplied);
    assert!(env("REF_SECRET").secret_like && !env("REF_SECRET").supplied);
    assert!(s.credential_configured && !s.credential_supplied);
    assert_no_leak(&r, &bundles);

    // `all` allows every entry.
    std::fs::remove_file(&marker).expect("rm marker");
    let r = run(&dir, &["--from-config", &config, "--allow-exec", "all"]);
    assert_eq!(r.code(), 0, "{}", r.describe());
    assert!(marker.exists(), "{}", r.describe());
}

#[test]
fn remote_and_stdio_entries_each_get_a_bundle_and_no_config_secret_leaks() {
    let Some(url) = lab("LAB_PY2") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("marker");
    let config = write_config(
        dir.path(),
        serde_json::json!({
            "remote": {"type": "http", "url": url,
                       "headers": {"Authorization": format!("Bearer {BEARER}"),
                                   "X-Api-Key": API_KEY_HEADER,
                                   "X-Trace": "${FC_MODE}"}},
            "local": stdio_entry(&marker),
            "unresolvable": {"type": "http", "url": "${FC_UNSET}/mcp"},
            "off": {"type": "http", "url": url, "disabled": true}
        }),
    );
    let config = config.display().to_string();

    for use_credentials in [false, true] {
        let _ = std::fs::remove_file(&marker);
        let mut args = vec!["--from-config", config.as_str(), "--allow-exec", "local"];
        if use_credentials {
            args.push("--use-config-credentials");
        }
        let r = run(&dir, &args);
        assert_eq!(r.code(), 0, "{}", r.describe());
        let err = r.stderr();
        for skipped in ["unresolvable", "off"] {
            assert!(
                err.contains(&format!("{config}: entry \"{skipped}\": ")),
                "{skipped}: {err}"
            );
        }
        let bundles = r.bundles();
        assert_eq!(bundles.len(), 2, "{}", r.describe());
        assert!(marker.exists());
        let all: Vec<Evidence> = bundles.iter().map(|b| evidence(b)).collect();
        let remote = all
            .iter()
            .find(|e| source(e).entry == "remote")
            .expect("remote");
        let local = all
            .iter()
            .find(|e| source(e).entry == "local")
            .expect("local");
        assert_eq!(remote.target.as_typed, url);
        assert!(remote.session.is_some(), "{}", r.describe());
        assert!(local.session.is_some(), "{}", r.describe());
        for e in [remote, local] {
            let s = source(e);
            assert!(s.credential_configured);
            assert_eq!(s.credential_supplied, use_credentials, "{}", s.entry);
        }
        let h = |n: &str| {
            source(remote)
                .headers
                .iter()
                .find(|v| v.name == n)
                .expect(n)
                .clone()
        };
        assert!(h("Authorization").secret_like && h("X-Api-Key").secret_like);
        assert_eq!(h("Authorization").supplied, use_credentials);
        assert_eq!(h("X-Api-Key").supplied, use_credentials);
        assert!(h("X-Trace").supplied && h("X-Trace").written == "reference");
        assert_eq!(
            h("Authorization").fingerprint.as_deref(),
            Some(
                mcp_probe_schema::bundle::fingerprint(format!("Bearer {BEARER}").as_bytes())
                    .as_str()
            )
        );
        // The bearer token was the run's credential, recorded as a fingerprint.
        let token_source = remote
            .tokens
            .iter()
            .find(|t| t.source == "config:remote")
            .map(|t| t.fingerprint.clone());
        if use_credentials {
            assert_eq!(
                token_source.as_deref(),
                Some(mcp_probe_schema::bundle::fingerprint(BEARER.as_bytes()).as_str())
            );
        } else {
            assert!(token_source.is_none());
        }
        let env = |n: &str| {
            source(local)
                .env
                .iter()
                .find(|v| v.name == n)
                .expect(n)
                .clone()
        };
        assert_eq!(env("API_SECRET").supplied, use_credentials);
        assert_eq!(env("REF_SECRET").supplied, use_credentials);
        assert_eq!(env("REF_SECRET").written, "reference");
        // The stdio server echoes every *_SECRET it was given on its stderr (in the
        // bundle): with the flag it had them, and they are redacted there too.
        assert_no_leak(&r, &bundles);
    }
}

#[test]
fn from_config_flags_are_checked() {
    let dir = tempfile::tempdir().expect("tempdir");
    // --allow-exec and --use-config-credentials need --from-config.
    for args in [
        &["--allow-exec", "x", "https://mcp.example.com"][..],
        &["--use-config-credentials", "https://mcp.example.com"][..],
        &["--from-config", "f.json", "https://mcp.example.com"][..],
        &["--from-config", "f.json", "--stdio", "--", "true"][..],
        &["--from-config", "f.json", "--list-config"][..],
    ] {
        let r = run(&dir, args);
        assert_eq!(r.code(), 2, "{args:?}: {}", r.describe());
    }
    // A supplied credential does not cross a proxy over plain http (before any traffic).
    let config = write_config(
        dir.path(),
        serde_json::json!({"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp",
                                      "headers": {"Authorization": format!("Bearer {BEARER}")}}}),
    );
    let config = config.display().to_string();
    let mut c = collect_cmd(&dir);
    c.args(["--from-config", &config, "--use-config-credentials"])
        .args(["--proxy", "http://127.0.0.1:9"])
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    let out = c.output().expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("the configuration entry \"remote\""), "{err}");
    assert!(!leaks(&out.stderr, BEARER), "{err}");
    // A missing file named explicitly: exit 2, the file named.
    let missing = dir.path().join("nope.json").display().to_string();
    let r = run(&dir, &["--from-config", &missing]);
    assert_eq!(r.code(), 2, "{}", r.describe());
    assert!(r.stderr().contains(&missing), "{}", r.describe());
}

#[test]
fn at_a_terminal_a_stdio_entry_runs_after_a_yes_and_not_after_a_no() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("marker");
    let config = write_config(
        dir.path(),
        serde_json::json!({ "local": stdio_entry(&marker) }),
    );
    let config = config.display().to_string();
    let pty = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/pty_answer.py");
    let under_pty = |answer: &str| {
        let mut c = Command::new(python());
        c.arg(&pty)
            .arg(answer)
            .arg(env!("CARGO_BIN_EXE_mcp-collect"))
            .arg("-o")
            .arg(dir.path().join("out"))
            .args(["--target-timeout", "60", "--from-config", &config])
            .env("MCP_PROBE_HOME", dir.path().join("home"))
            .env_remove("HOME")
            .env("FC_REFERENCED", ENV_REFERENCED)
            .env("FC_MODE", "fast");
        let out = c.output().expect("run under a pty");
        let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
        (out.status.code().unwrap_or(-1), text)
    };

    let (code, text) = under_pty("n");
    assert_eq!(code, 2, "{text}");
    assert!(!marker.exists(), "the command ran after a no: {text}");
    // The question names the entry and shows the exact command line.
    assert!(
        text.contains(&format!(
            "entry \"local\" runs `{} {} {}`",
            python(),
            config_server(),
            marker.display()
        )) && text.contains("[y/N]"),
        "{text}"
    );
    assert!(text.contains("not run: the operator answered no"), "{text}");

    let (code, text) = under_pty("y");
    assert_eq!(code, 0, "{text}");
    assert!(marker.exists(), "{text}");
    let bundle = text
        .lines()
        .find(|l| l.ends_with(".mcpev") && !l.starts_with("mcp-collect"))
        .expect("a bundle path");
    let e = evidence(Path::new(bundle));
    assert_eq!(source(&e).consent.as_deref(), Some("prompt"));
    for s in [ENV_LITERAL, ENV_REFERENCED] {
        assert!(!leaks(text.as_bytes(), s), "{s}: {text}");
    }
}
