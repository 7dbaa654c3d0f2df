//! The whole OAuth flow through the real `mcp-collect` binary against the lab's
//! oidc-provider AS and py2-auth resource server: a headless first login
//! (`--no-browser`, the URL read from stderr, login and consent played by
//! lab/oidc/browser.sh), a second run from the cache with no authorization URL, and
//! `--reauth` forcing a new login. No token, refresh token or code may appear in any
//! bundle byte or on stdout/stderr; the cache file is 0600.

mod support;

use std::path::{Path, PathBuf};

use support::lab;

use support::headless::{collect_headless, Headless as Outcome, URL_LINE};

/// Run `mcp-collect --no-browser [extra] url`, playing the user when it asks for a login.
fn run(home: &Path, url: &str, extra: &[&str]) -> Outcome {
    collect_headless(
        Path::new(env!("CARGO_BIN_EXE_mcp-collect")),
        home,
        url,
        extra,
    )
}

fn cache_files(home: &Path) -> Vec<PathBuf> {
    let dir = home.join("credentials");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Every string value under a key that names a credential, in the cache file.
fn cached_secrets(home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for f in cache_files(home) {
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&f).expect("cache")).expect("cache json");
        fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, x) in m {
                        match x {
                            serde_json::Value::String(s)
                                if k.contains("token") || k.contains("secret") =>
                            {
                                if s.len() >= 8 {
                                    out.push(s.clone());
                                }
                            }
                            other => walk(other, out),
                        }
                    }
                }
                serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                _ => {}
            }
        }
        walk(&v, &mut out);
    }
    out
}

fn bundle(o: &Outcome) -> (PathBuf, mcp_probe_schema::Verified) {
    let path = PathBuf::from(o.stdout.lines().next().expect("a bundle path"));
    let v = mcp_probe_schema::open(&std::fs::read(&path).expect("bundle"), &[])
        .expect("bundle verifies");
    (path, v)
}

fn assert_clean(o: &Outcome, path: &Path, secrets: &[String]) {
    let bytes = std::fs::read(path).expect("bundle");
    let hay = String::from_utf8_lossy(&bytes);
    for s in secrets {
        assert!(
            !hay.contains(s.as_str()),
            "a credential leaked into {}",
            path.display()
        );
        assert!(
            !o.stdout.contains(s.as_str()) && !o.stderr.contains(s.as_str()),
            "a credential was printed"
        );
    }
}

#[test]
fn login_then_cache_then_reauth() {
    let Some(rs) = lab("LAB_RS") else { return };
    let home = tempfile::tempdir().expect("tempdir");

    // 1. First run: headless login.
    let first = run(home.path(), &rs, &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let delivered = first
        .delivered
        .clone()
        .expect("an authorization URL was printed and completed");
    let code = url::Url::parse(&delivered)
        .expect("redirect URL")
        .query_pairs()
        .find(|(k, _)| k == "code")
        .map(|(_, v)| v.into_owned())
        .expect("a code in the redirect");
    assert_eq!(
        first.stdout.lines().count(),
        1,
        "stdout carries only the bundle path: {}",
        first.stdout
    );
    let (path1, v1) = bundle(&first);
    let s = v1.evidence.session.as_ref().expect("session");
    assert!(s.auth_required && s.authenticated, "{s:?}");
    assert_eq!(s.revision.as_deref(), Some("2026-07-28"));
    let facts = v1
        .evidence
        .tokens
        .iter()
        .find(|t| t.source == "oauth")
        .expect("oauth token facts");
    assert_eq!(
        facts
            .jwt_claims
            .as_ref()
            .and_then(|c| c.get("aud"))
            .and_then(|a| a.as_str()),
        Some(rs.as_str())
    );
    assert!(v1
        .records
        .iter()
        .any(|r| r.legs.iter().any(|l| l == "oauth.register")));
    assert!(v1
        .records
        .iter()
        .any(|r| r.legs.iter().any(|l| l == "oauth.token")));
    let files = cache_files(home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&files[0])
                .expect("meta")
                .permissions()
                .mode()
                & 0o777,
            0o600
        );
    }
    let mut secrets = cached_secrets(home.path());
    assert!(secrets.len() >= 2, "access and refresh tokens cached");
    secrets.push(code);
    assert_clean(&first, &path1, &secrets);

    // 2. Second run: from the cache, no authorization URL, no registration, no login.
    let second = run(home.path(), &rs, &[]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.delivered.is_none() && !second.stderr.contains(URL_LINE),
        "{}",
        second.stderr
    );
    let (path2, v2) = bundle(&second);
    assert!(v2
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.authenticated));
    assert!(!v2.records.iter().any(|r| r
        .legs
        .iter()
        .any(|l| l == "oauth.register" || l == "oauth.token")));
    assert_clean(&second, &path2, &secrets);

    // 3. --reauth: the cache is discarded and a new login happens.
    let third = run(home.path(), &rs, &["--reauth"]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(
        third.delivered.is_some(),
        "--reauth forces a new authorization URL: {}",
        third.stderr
    );
    let (path3, v3) = bundle(&third);
    assert!(v3
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.authenticated));
    let mut all = secrets.clone();
    all.extend(cached_secrets(home.path()));
    assert_clean(&third, &path3, &all);
    // Earlier bundles hold none of the new credentials either.
    assert_clean(&first, &path1, &all);
}

/// A cached access token the endpoint refuses (revoked, or signed with a rotated key) is
/// replaced once by a refresh grant, and the run gets its session; a token that is still
/// refused is named as what it was, with the endpoint's error, never as "no credential".
#[test]
fn a_refused_cached_token_is_refreshed_once_then_named() {
    let Some(rs) = lab("LAB_RS") else { return };
    let home = tempfile::tempdir().expect("tempdir");
    // --info: the audience legs (whose wrong-audience refresh grant spends the refresh
    // token at this AS) are not sent, so the cached refresh token stays good.
    let first = run(home.path(), &rs, &["--info"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let files = cache_files(home.path());
    assert_eq!(files.len(), 1, "{files:?}");
    // The cached access token is no longer one the server accepts (still fresh by its
    // expiry): the server's refusal is the only sign.
    let revoke = |f: &Path| {
        let mut v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(f).expect("cache")).expect("json");
        v["tokens"]["access_token"] = "revoked-access-token-0123456789".into();
        std::fs::write(f, serde_json::to_vec(&v).expect("json")).expect("write");
    };
    revoke(&files[0]);
    let second = run(home.path(), &rs, &["--info"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second
            .stderr
            .contains("the endpoint refused the cached OAuth access token"),
        "{}",
        second.stderr
    );
    assert!(
        second.delivered.is_none(),
        "a refresh, not a new login: {}",
        second.stderr
    );
    let (_, v2) = bundle(&second);
    assert!(v2
        .evidence
        .session
        .as_ref()
        .is_some_and(|s| s.authenticated));
    assert!(v2
        .records
        .iter()
        .any(|r| r.legs.iter().any(|l| l == "oauth.refresh")));

    // Revoked again, and the refresh token too: the refresh is refused, and without a
    // person (no terminal, and the login's redirect never comes) the run says which
    // credential was refused and why, and that no other could be obtained.
    revoke(&files[0]);
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&files[0]).expect("cache")).expect("json");
    v["tokens"]["refresh_token"] = "revoked-refresh-token-0123456789".into();
    std::fs::write(&files[0], serde_json::to_vec(&v).expect("json")).expect("write");
    let bin = Path::new(env!("CARGO_BIN_EXE_mcp-collect"));
    let out = std::process::Command::new(bin)
        .env("MCP_PROBE_HOME", home.path())
        .args(["-o"])
        .arg(home.path().join("out3"))
        .arg(&rs)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "the endpoint refused the cached OAuth access token (Bearer error=invalid_token"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("no credential was given"), "{stderr}");
}
