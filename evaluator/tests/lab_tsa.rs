//! RFC 3161 timestamps end to end: `openssl ts` as a local TSA behind lab/tsa/tsa.py,
//! a real lab server collected with `mcp-collect --tsa`, and `mcp-grade verify
//! --tsa-cert`; the stored token is also checked with `openssl ts -verify`, independently
//! of our verifier.
//!
//! Needs `openssl` and `python3` (the lab's own tools), the lab (`LAB_PY2`) and the
//! built `mcp-collect` (`cargo build --workspace --bins`). A missing piece fails the
//! test (`support::lab::require`).

mod support;

use support::grade_run;
use support::tsa::{pki, Tsa};

use std::path::{Path, PathBuf};
use std::process::Command;

use grade_run::mcp_grade;
use mcp_probe_evaluator::timestamp::{verify, TsaTrust};
use mcp_probe_schema::tsp::{stamp_of, Stamp};

/// `mcp-collect --tsa TSA URL` into `dir`: exit code, stderr, the bundle path.
fn collect(bin: &Path, dir: &Path, url: &str, tsa: &str) -> (i32, String, PathBuf) {
    let out = Command::new(bin)
        .env("MCP_PROBE_HOME", dir.join("home"))
        .env_remove("HOME")
        .args(["--timeout", "5", "-o"])
        .arg(dir.join("out"))
        .args(["--tsa", tsa, url])
        .output()
        .expect("run mcp-collect");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let path = PathBuf::from(
        stdout
            .lines()
            .next()
            .unwrap_or_else(|| panic!("no bundle path; stderr: {stderr}")),
    );
    (out.status.code().expect("exited"), stderr, path)
}

fn token_of(bundle: &Path) -> (Vec<u8>, Vec<u8>) {
    match stamp_of(&std::fs::read(bundle).expect("bundle")).expect("structure") {
        Stamp::Token { token, signature } => (token, signature),
        other => panic!("no token in {}: {other:?}", bundle.display()),
    }
}

fn setup() -> Option<(PathBuf, String, tempfile::TempDir)> {
    let (url, bin) = support::lab::require_one("LAB_PY2")?;
    Some((bin, url, tempfile::tempdir().expect("tempdir")))
}

/// openssl ts -verify of a token over `signature` against `ca`: true when it says OK.
fn openssl_verifies(dir: &Path, token: &[u8], signature: &[u8], ca: &Path) -> bool {
    let (t, s) = (dir.join("token.der"), dir.join("signature.bin"));
    std::fs::write(&t, token).expect("write token");
    std::fs::write(&s, signature).expect("write signature");
    let out = Command::new("openssl")
        .args(["ts", "-verify", "-token_in", "-in"])
        .arg(&t)
        .arg("-data")
        .arg(&s)
        .arg("-CAfile")
        .arg(ca)
        .output()
        .expect("run openssl ts -verify");
    let text = String::from_utf8_lossy(&out.stdout);
    out.status.success() && text.contains("Verification: OK")
}

#[test]
fn a_timestamped_bundle_verifies_with_its_tsa_and_fails_with_another() {
    let Some((bin, url, dir)) = setup() else {
        return;
    };
    let pki = pki(dir.path(), "rsa", "sha256");
    let tsa = Tsa::start(&pki);
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let (code, stderr, bundle) = collect(&bin, dir.path(), &url, &tsa.url("/tsa"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("timestamped by"), "{stderr}");

    let ok = mcp_grade(
        dir.path(),
        None,
        [
            "verify".as_ref(),
            "--tsa-cert".as_ref(),
            pki.join("ca.pem").as_os_str(),
            bundle.as_os_str(),
        ],
    );
    assert_eq!(ok.code, 0, "{ok:?}");
    assert!(
        ok.stdout
            .contains("timestamp by CN=lab TSA (rsa),O=mcp-probe lab at "),
        "{ok:?}"
    );
    let json = mcp_grade(
        dir.path(),
        None,
        [
            "verify".as_ref(),
            "--json".as_ref(),
            "--tsa-cert".as_ref(),
            pki.join("ca.pem").as_os_str(),
            bundle.as_os_str(),
        ],
    );
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("json");
    assert_eq!(v["valid"], true);
    assert_eq!(v["timestamp"]["state"], "valid");
    assert_eq!(v["timestamp"]["policy"], "1.3.6.1.4.1.55555.1.1");
    // genTime is the TSA's clock at sealing: after the run began, not in the future.
    let (token, signature) = token_of(&bundle);
    let trust = TsaTrust::load(&[pki.join("ca.pem")]).expect("ca.pem");
    let t = verify(&token, &signature, &trust).expect("token verifies");
    assert!(t.gen_time + 2 >= before, "{} < {before}", t.gen_time);
    assert!(t.gen_time <= before + 600);

    // The wrong trust anchor, or none (the public roots): the chain step fails.
    for extra in [
        vec![
            "--tsa-cert".to_string(),
            pki.join("other-ca.pem").display().to_string(),
        ],
        vec![],
    ] {
        let bad = mcp_grade(
            dir.path(),
            None,
            ["verify".to_string()]
                .into_iter()
                .chain(extra)
                .chain([bundle.display().to_string()]),
        );
        assert_eq!(bad.code, 3, "{bad:?}");
        assert!(bad.stdout.contains("INVALID "), "{bad:?}");
        assert!(bad.stdout.contains("timestamp chain: "), "{bad:?}");
    }

    // Reports name the TSA and its time: the text summary and the JSON report (graded
    // with the TSA's CA), and say why not without it.
    let text = mcp_grade(
        dir.path(),
        None,
        [
            "--tsa-cert".as_ref(),
            pki.join("ca.pem").as_os_str(),
            bundle.as_os_str(),
        ],
    );
    // (the summary wraps to 80 columns: compare with the whitespace folded)
    let folded = text.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        folded.contains("timestamp by CN=lab TSA (rsa),O=mcp-probe lab at "),
        "{text:?}"
    );
    let report = mcp_grade(
        dir.path(),
        None,
        [
            "--format".as_ref(),
            "json".as_ref(),
            "--tsa-cert".as_ref(),
            pki.join("ca.pem").as_os_str(),
            bundle.as_os_str(),
        ],
    );
    let r: serde_json::Value = serde_json::from_str(&report.stdout).expect("json report");
    let ts = &r["servers"][0]["timestamp"];
    assert_eq!(ts["state"], "valid", "{ts}");
    assert_eq!(ts["tsa"], "CN=lab TSA (rsa),O=mcp-probe lab");
    assert!(ts["gen_time"].as_str().is_some_and(|t| t.ends_with('Z')));
    let untrusted = mcp_grade(
        dir.path(),
        None,
        ["--format".as_ref(), "json".as_ref(), bundle.as_os_str()],
    );
    let r: serde_json::Value = serde_json::from_str(&untrusted.stdout).expect("json report");
    assert_eq!(r["servers"][0]["timestamp"]["state"], "invalid");
    assert_eq!(r["servers"][0]["timestamp"]["step"], "chain");

    // openssl agrees, on the token as stored: OK with the TSA's CA, not with another.
    assert!(openssl_verifies(
        dir.path(),
        &token,
        &signature,
        &pki.join("ca.pem")
    ));
    assert!(!openssl_verifies(
        dir.path(),
        &token,
        &signature,
        &pki.join("other-ca.pem")
    ));
}

#[test]
fn a_tampered_token_fails_naming_the_step() {
    let Some((bin, url, dir)) = setup() else {
        return;
    };
    let pki = pki(dir.path(), "p256", "sha256");
    let tsa = Tsa::start(&pki);
    let (code, stderr, bundle) = collect(&bin, dir.path(), &url, &tsa.url("/tsa"));
    assert_eq!(code, 0, "{stderr}");
    let bytes = std::fs::read(&bundle).expect("bundle");
    let (token, signature) = token_of(&bundle);
    let at = bytes
        .windows(token.len())
        .position(|w| w == token.as_slice())
        .expect("the token's bytes are in the file");
    let imprint = mcp_probe_schema::tsp::imprint(&signature);
    let imprint_at = token
        .windows(32)
        .position(|w| w == imprint)
        .expect("the imprint is in the token");
    // Last byte of the token: inside the SignerInfo's signature. A byte of the imprint:
    // the TSTInfo now dates another hash.
    for (offset, step) in [
        (token.len() - 1, "timestamp signature: "),
        (imprint_at + 5, "timestamp imprint: "),
    ] {
        let mut tampered = bytes.clone();
        tampered[at + offset] ^= 0x01;
        // The COSE signature does not cover the unprotected header: the bundle itself
        // still verifies; only the token check can catch this.
        assert!(mcp_probe_schema::open(&tampered, &[]).is_ok());
        let path = dir.path().join("tampered.mcpev");
        std::fs::write(&path, &tampered).expect("write");
        let r = mcp_grade(
            dir.path(),
            None,
            [
                "verify".as_ref(),
                "--tsa-cert".as_ref(),
                pki.join("ca.pem").as_os_str(),
                path.as_os_str(),
            ],
        );
        assert_eq!(r.code, 3, "{r:?}");
        assert!(r.stdout.contains(step), "{step}: {r:?}");
    }
}

#[test]
fn a_tsa_that_fails_leaves_a_sealed_verifiable_bundle_saying_why() {
    let Some((bin, url, dir)) = setup() else {
        return;
    };
    let pki = pki(dir.path(), "rsa", "sha256");
    let tsa = Tsa::start(&pki);
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        format!(
            "http://127.0.0.1:{}/tsa",
            l.local_addr().expect("addr").port()
        )
    };
    for (tsa_url, why) in [
        (tsa.url("/garbage"), "not an RFC 3161 TimeStampResp"),
        (tsa.url("/reject"), "refused the request: status rejection"),
        (tsa.url("/other"), "message imprint is not SHA-256"),
        (down, "no reply: connect"),
    ] {
        let (code, stderr, bundle) = collect(&bin, dir.path(), &url, &tsa_url);
        assert_eq!(code, 0, "{tsa_url}: {stderr}");
        assert!(stderr.contains("no timestamp"), "{stderr}");
        assert!(stderr.contains(why), "{why}: {stderr}");
        let r = mcp_grade(
            dir.path(),
            None,
            ["verify".as_ref(), "--json".as_ref(), bundle.as_os_str()],
        );
        assert_eq!(r.code, 0, "{r:?}");
        let v: serde_json::Value = serde_json::from_str(r.stdout.trim()).expect("json");
        assert_eq!(v["valid"], true, "{r:?}");
        assert_eq!(v["timestamp"]["state"], "not-obtained", "{r:?}");
        assert!(
            v["timestamp"]["reason"]
                .as_str()
                .is_some_and(|s| s.contains(why)),
            "{r:?}"
        );
    }
}

/// Every signature algorithm the grader claims, on tokens `openssl ts` made (PKCS#1
/// v1.5 and ECDSA) and, for RSASSA-PSS (which `openssl ts` cannot sign), on the same
/// TSTInfo re-signed with `openssl cms -sign` by an rsaEncryption key and by an
/// id-RSASSA-PSS key.
#[test]
fn tokens_of_every_supported_algorithm_verify() {
    if Command::new("openssl").arg("version").output().is_err()
        && support::lab::absent::<()>("openssl", "install it (`lab/install.sh` does)").is_none()
    {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let signature: Vec<u8> = (0..64u8).map(|i| i.wrapping_mul(37)).collect();
    let sig = dir.path().join("sig");
    std::fs::write(&sig, &signature).expect("write");
    let run = |args: &[&str]| {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(dir.path())
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let p = |p: &Path| p.display().to_string();
    let q = dir.path().join("q.tsq");
    run(&[
        "ts",
        "-query",
        "-data",
        &p(&sig),
        "-sha256",
        "-cert",
        "-out",
        &p(&q),
    ]);
    // The TSTInfo of the first token, for the PSS re-signing.
    let tst = dir.path().join("tst.der");
    // Every certificate first: the re-signed TSTInfo's genTime must fall in their validity.
    let cases: Vec<(&str, &str, &str, PathBuf)> = [
        ("rsa", "sha256", ""),
        ("rsa", "sha384", ""),
        ("rsa", "sha512", ""),
        ("p256", "sha256", ""),
        ("p384", "sha384", ""),
        ("rsa", "sha256", "pss"),
        ("rsa", "sha512", "pss"),
        ("rsa-pss", "sha256", "pss"),
        ("rsa-pss", "sha384", "pss"),
    ]
    .into_iter()
    .map(|(k, d, pss)| (k, d, pss, pki(dir.path(), k, d)))
    .collect();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    for (key, digest, pss_key, pki) in cases {
        let t = pki.join(format!("t-{pss_key}.der"));
        if pss_key.is_empty() {
            run(&[
                "ts",
                "-reply",
                "-config",
                &p(&pki.join("tsa.cnf")),
                "-queryfile",
                &p(&q),
                "-token_out",
                "-out",
                &p(&t),
            ]);
            if !tst.exists() {
                run(&[
                    "cms",
                    "-verify",
                    "-noverify",
                    "-inform",
                    "DER",
                    "-in",
                    &p(&t),
                    "-out",
                    &p(&tst),
                ]);
            }
        } else {
            run(&[
                "cms",
                "-sign",
                "-binary",
                "-nodetach",
                "-nosmimecap",
                "-md",
                digest,
                "-econtent_type",
                "1.2.840.113549.1.9.16.1.4",
                "-signer",
                &p(&pki.join("tsa.pem")),
                "-inkey",
                &p(&pki.join("tsa.key")),
                "-keyopt",
                "rsa_padding_mode:pss",
                "-keyopt",
                "rsa_pss_saltlen:digest",
                "-in",
                &p(&tst),
                "-outform",
                "DER",
                "-out",
                &p(&t),
            ]);
        }
        let case = format!("{key}/{digest}/{pss_key}");
        let token = std::fs::read(&t).expect("token");
        let trust = TsaTrust::load(&[pki.join("ca.pem")]).expect("ca");
        let got = verify(&token, &signature, &trust).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(got.tsa, format!("CN=lab TSA ({key}),O=mcp-probe lab"));
        // Over another signature, the same token fails at the imprint.
        let e = verify(&token, b"another signature", &trust).expect_err("other imprint");
        assert_eq!(e.step.name(), "imprint", "{case}");
        let other = TsaTrust::load(&[pki.join("other-ca.pem")]).expect("other ca");
        let e = verify(&token, &signature, &other).expect_err("other anchor");
        assert_eq!(e.step.name(), "chain", "{case}");
        // A flipped bit in the signature value: the signature step.
        let mut bad = token.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x01;
        let e = verify(&bad, &signature, &trust).expect_err("flipped");
        assert_eq!(e.step.name(), "signature", "{case}");
    }
}
