//! Renewed timestamps end to end: `mcp-collect timestamp` asks a local TSA (`openssl ts`
//! behind lab/tsa/tsa.py) for detached tokens beside bundles (`<bundle>.tsr`,
//! `<bundle>.tsr.2`, …), and `mcp-grade verify` checks each token and the links between
//! them; each sidecar is also checked with `openssl ts -verify` over the bytes the
//! format says it covers, independently of our verifier.
//!
//! Needs `openssl` and `python3` (the lab's own tools) and the built `mcp-collect`
//! (`cargo build --workspace --bins`); the chain that starts with a bundle's own token
//! also needs the lab (`LAB_PY2`). A missing piece fails the test
//! (`support::lab::require`).

mod support;

use support::grade_run::{mcp_grade, Run};
use support::tsa::{pki, pki_until, Tsa};

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// `mcp-collect ARGS` in `dir`: exit code, stdout, stderr.
fn collect(bin: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(bin)
        .current_dir(dir)
        .env("MCP_PROBE_HOME", dir.join("home"))
        .env_remove("HOME")
        .args(args)
        .output()
        .expect("run mcp-collect");
    (
        out.status.code().expect("exited"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mcp-collect timestamp --tsa URL BUNDLE...` in `dir`.
fn renew(bin: &Path, dir: &Path, tsa: &str, bundles: &[&str]) -> (i32, String, String) {
    let mut args = vec!["timestamp", "--timeout", "10", "--tsa", tsa];
    args.extend_from_slice(bundles);
    collect(bin, dir, &args)
}

/// `mcp-grade verify [--json] --tsa-cert CA... BUNDLE` in `dir`.
fn verify(dir: &Path, json: bool, cas: &[&Path], bundle: &str) -> Run {
    let mut args: Vec<String> = vec!["verify".into()];
    if json {
        args.push("--json".into());
    }
    for ca in cas {
        args.push("--tsa-cert".into());
        args.push(ca.display().to_string());
    }
    args.push(bundle.into());
    mcp_grade(dir, None, args)
}

/// An example bundle copied into `dir` as `name`.
fn example(dir: &Path, example: &str, name: &str) -> PathBuf {
    let to = dir.join(name);
    std::fs::copy(repo().join("examples").join(example), &to).expect("copy example");
    to
}

/// `openssl ts -verify` of the sidecar `token` over `data` (the bytes the format says
/// it covers) against `ca`: true when it says OK.
fn openssl_verifies(dir: &Path, token: &Path, data: &[u8], ca: &Path) -> bool {
    let d = dir.join("covered.bin");
    std::fs::write(&d, data).expect("write data");
    let out = Command::new("openssl")
        .args(["ts", "-verify", "-token_in", "-in"])
        .arg(token)
        .arg("-data")
        .arg(&d)
        .arg("-CAfile")
        .arg(ca)
        .output()
        .expect("run openssl ts -verify");
    out.status.success() && String::from_utf8_lossy(&out.stdout).contains("Verification: OK")
}

/// The bytes sidecar `slot` of `bundle` covers: the bundle file, then every earlier
/// sidecar, in order.
fn covered(bundle: &Path, slot: usize) -> Vec<u8> {
    let mut data = std::fs::read(bundle).expect("bundle");
    for earlier in 1..slot {
        data.extend(
            std::fs::read(mcp_probe_schema::renewal::path(bundle, earlier)).expect("sidecar"),
        );
    }
    data
}

/// A sidecar made without `mcp-collect` (which refuses a late one): `openssl ts` with the
/// TSA configuration in `pki`, over what `slot` must cover, written into the slot.
fn openssl_sidecar(dir: &Path, bundle: &Path, slot: usize, pki: &Path) -> PathBuf {
    let data = dir.join("to-stamp.bin");
    std::fs::write(&data, covered(bundle, slot)).expect("write");
    let q = dir.join("q.tsq");
    let sidecar = mcp_probe_schema::renewal::path(bundle, slot);
    for args in [
        vec![
            "ts".to_string(),
            "-query".into(),
            "-data".into(),
            data.display().to_string(),
            "-sha256".into(),
            "-cert".into(),
            "-out".into(),
            q.display().to_string(),
        ],
        vec![
            "ts".into(),
            "-reply".into(),
            "-config".into(),
            pki.join("tsa.cnf").display().to_string(),
            "-queryfile".into(),
            q.display().to_string(),
            "-token_out".into(),
            "-out".into(),
            sidecar.display().to_string(),
        ],
    ] {
        let out = Command::new("openssl")
            .args(&args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    sidecar
}

/// The gate of the tests that need no lab server: the collector, and (through the
/// lab's own tools) openssl and python3.
fn setup() -> Option<(PathBuf, tempfile::TempDir)> {
    let bin = support::lab::require_collector()?;
    Some((bin, tempfile::tempdir().expect("tempdir")))
}

#[test]
fn renewals_of_a_stamped_bundle_verify_link_by_link() {
    let Some((url, bin)) = support::lab::require_one("LAB_PY2") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let pki = pki(dir, "rsa", "sha256");
    let ca = pki.join("ca.pem");
    let tsa = Tsa::start(&pki);
    let (code, stdout, stderr) = collect(
        &bin,
        dir,
        &[
            "--timeout",
            "5",
            "-o",
            "out",
            "--tsa",
            &tsa.url("/tsa"),
            &url,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let bundle = dir.join(stdout.lines().next().expect("a bundle path"));
    let name = bundle
        .strip_prefix(dir)
        .expect("under dir")
        .display()
        .to_string();

    // Without a sidecar, verify says what it always said: no renewal part, no key.
    let before = verify(dir, false, &[&ca], &name);
    assert_eq!(before.code, 0, "{before:?}");
    assert!(!before.stdout.contains("proven since"), "{before:?}");
    let json = verify(dir, true, &[&ca], &name);
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("json");
    assert!(v.get("renewal").is_none(), "{v}");
    let embedded_time = v["timestamp"]["gen_time"]
        .as_str()
        .expect("gen_time")
        .to_string();

    // Three renewals: slots 1, 2, 3, each run taking the next one and leaving the
    // earlier files as they were.
    let mut kept: Vec<Vec<u8>> = Vec::new();
    for slot in 1..=3 {
        let (code, stdout, stderr) = renew(&bin, dir, &tsa.url("/tsa"), &[&name]);
        assert_eq!(code, 0, "{stderr}");
        let sidecar = mcp_probe_schema::renewal::path(&bundle, slot);
        let shown = mcp_probe_schema::renewal::path(Path::new(&name), slot);
        assert_eq!(stdout, format!("{}\n", shown.display()), "{stderr}");
        for (earlier, bytes) in kept.iter().enumerate() {
            let p = mcp_probe_schema::renewal::path(&bundle, earlier + 1);
            assert_eq!(
                &std::fs::read(&p).expect("kept"),
                bytes,
                "{} changed",
                p.display()
            );
        }
        kept.push(std::fs::read(&sidecar).expect("sidecar written"));
        // openssl agrees: each sidecar is a token over the bundle and the earlier ones.
        assert!(
            openssl_verifies(dir, &sidecar, &covered(&bundle, slot), &ca),
            "slot {slot}"
        );
        assert!(!openssl_verifies(
            dir,
            &sidecar,
            &covered(&bundle, slot + 1),
            &ca
        ));
    }

    let ok = verify(dir, false, &[&ca], &name);
    assert_eq!(ok.code, 0, "{ok:?}");
    let line = ok.stdout.trim();
    assert!(
        line.contains(&format!("; proven since {embedded_time} by 4 linked timestamps: embedded by CN=lab TSA (rsa),O=mcp-probe lab at {embedded_time}, certificate until ")),
        "{line}"
    );
    for slot in 1..=3 {
        let shown = mcp_probe_schema::renewal::path(Path::new(&name), slot);
        assert!(
            line.contains(&format!(" -> {} by CN=lab TSA (rsa)", shown.display())),
            "{line}"
        );
    }
    let json = verify(dir, true, &[&ca], &name);
    assert_eq!(json.code, 0, "{json:?}");
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("json");
    let r = &v["renewal"];
    assert_eq!(r["state"], "valid", "{r}");
    assert_eq!(r["proven_since"], embedded_time.as_str());
    let links = r["links"].as_array().expect("links");
    assert_eq!(links.len(), 4, "{r}");
    assert_eq!(links[0]["file"], serde_json::Value::Null);
    let mut last = String::new();
    for (i, l) in links.iter().enumerate() {
        if i > 0 {
            let shown = mcp_probe_schema::renewal::path(Path::new(&name), i);
            assert_eq!(l["file"], shown.display().to_string().as_str());
        }
        let t = l["gen_time"].as_str().expect("gen_time").to_string();
        assert!(t >= last, "genTimes in order: {r}");
        assert!(l["certificate_until"]
            .as_str()
            .is_some_and(|u| u > t.as_str()));
        last = t;
    }

    // A copy whose embedded token was changed (the unprotected header is not signed, so
    // the bundle still verifies): the collector does not renew over it.
    let bytes = std::fs::read(&bundle).expect("bundle");
    let signature = match mcp_probe_schema::tsp::stamp_of(&bytes).expect("structure") {
        mcp_probe_schema::tsp::Stamp::Token { signature, .. } => signature,
        other => panic!("no embedded token: {other:?}"),
    };
    let imprint = mcp_probe_schema::tsp::imprint(&signature);
    let at = bytes
        .windows(imprint.len())
        .position(|w| w == imprint)
        .expect("the embedded imprint is in the file");
    let mut changed = bytes.clone();
    changed[at + 3] ^= 0x01;
    assert!(mcp_probe_schema::open(&changed, &[]).is_ok());
    std::fs::write(dir.join("changed.mcpev"), &changed).expect("write");
    let (code, stdout, stderr) = renew(&bin, dir, &tsa.url("/tsa"), &["changed.mcpev"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("changed.mcpev: its embedded timestamp does not date it (imprint: "),
        "{stderr}"
    );
    assert!(!dir.join("changed.mcpev.tsr").exists());
}

#[test]
fn a_tampered_or_missing_sidecar_fails_naming_it_and_the_step() {
    let Some((bin, tmp)) = setup() else {
        return;
    };
    let dir = tmp.path();
    let pki = pki(dir, "p256", "sha256");
    let ca = pki.join("ca.pem");
    let tsa = Tsa::start(&pki);
    let bundle = example(dir, "py1.mcpev", "a.mcpev");
    for _ in 0..2 {
        let (code, _, stderr) = renew(&bin, dir, &tsa.url("/tsa"), &["a.mcpev"]);
        assert_eq!(code, 0, "{stderr}");
    }
    let first = dir.join("a.mcpev.tsr");
    let good = std::fs::read(&first).expect("a.mcpev.tsr");
    let ok = verify(dir, false, &[&ca], "a.mcpev");
    assert_eq!(ok.code, 0, "{ok:?}");
    // A bundle without an embedded token: the chain starts with the first sidecar.
    assert!(
        ok.stdout.contains("; no timestamp; proven since ")
            && ok
                .stdout
                .contains(" by 2 linked timestamps: a.mcpev.tsr by CN=lab TSA (p256)"),
        "{ok:?}"
    );
    // Without the TSA's anchor, the first sidecar fails at the chain step.
    let untrusted = verify(dir, false, &[], "a.mcpev");
    assert_eq!(untrusted.code, 3, "{untrusted:?}");
    assert!(
        untrusted
            .stdout
            .contains("INVALID a.mcpev: a.mcpev.tsr: timestamp chain: "),
        "{untrusted:?}"
    );

    // One bit of the imprint (SHA-256 of the bundle file) flipped.
    let imprint = mcp_probe_schema::bundle::sha256(&std::fs::read(&bundle).expect("bundle"));
    let at = good
        .windows(32)
        .position(|w| w == imprint)
        .expect("the imprint is in the token");
    let mut tampered = good.clone();
    tampered[at + 7] ^= 0x01;
    std::fs::write(&first, &tampered).expect("write");
    let bad = verify(dir, false, &[&ca], "a.mcpev");
    assert_eq!(bad.code, 3, "{bad:?}");
    assert_eq!(
        bad.stdout.trim(),
        "INVALID a.mcpev: a.mcpev.tsr: timestamp imprint: the message imprint is not SHA-256 of the bundle file"
    );
    let json = verify(dir, true, &[&ca], "a.mcpev");
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("json");
    assert_eq!(v["valid"], false);
    assert_eq!(v["renewal"]["state"], "invalid");
    assert_eq!(v["renewal"]["sidecar"], "a.mcpev.tsr");
    assert_eq!(v["renewal"]["step"], "imprint");
    // The collector will not renew over it either.
    let (code, stdout, stderr) = renew(&bin, dir, &tsa.url("/tsa"), &["a.mcpev"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("a.mcpev: the existing sidecar a.mcpev.tsr does not extend it (imprint: "),
        "{stderr}"
    );
    assert!(!dir.join("a.mcpev.tsr.3").exists());

    // The first sidecar as it was, the second one's bytes changed at its end (the
    // SignerInfo's signature): the second fails at the signature step.
    std::fs::write(&first, &good).expect("restore");
    let second = dir.join("a.mcpev.tsr.2");
    let good2 = std::fs::read(&second).expect("a.mcpev.tsr.2");
    let mut tampered = good2.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0x01;
    std::fs::write(&second, &tampered).expect("write");
    let bad = verify(dir, false, &[&ca], "a.mcpev");
    assert_eq!(bad.code, 3, "{bad:?}");
    assert!(
        bad.stdout
            .contains("INVALID a.mcpev: a.mcpev.tsr.2: timestamp signature: "),
        "{bad:?}"
    );

    // A slot missing before another: the later one is named, at the sequence step.
    std::fs::write(&second, &good2).expect("restore");
    std::fs::rename(&second, dir.join("a.mcpev.tsr.3")).expect("rename");
    let gap = verify(dir, false, &[&ca], "a.mcpev");
    assert_eq!(gap.code, 3, "{gap:?}");
    assert!(
        gap.stdout.contains(
            "INVALID a.mcpev: a.mcpev.tsr.3: timestamp sequence: a.mcpev.tsr.2 does not exist"
        ),
        "{gap:?}"
    );
    // Sidecars swapped: each fails its imprint.
    std::fs::rename(dir.join("a.mcpev.tsr.3"), &second).expect("rename");
    std::fs::write(&first, &good2).expect("swap");
    std::fs::write(&second, &good).expect("swap");
    let swapped = verify(dir, false, &[&ca], "a.mcpev");
    assert_eq!(swapped.code, 3, "{swapped:?}");
    assert!(
        swapped.stdout.contains("a.mcpev.tsr: timestamp imprint: "),
        "{swapped:?}"
    );
}

#[test]
fn a_renewal_extends_a_timestamp_past_its_certificate_only_when_made_in_time() {
    let Some((bin, tmp)) = setup() else {
        return;
    };
    let dir = tmp.path();
    // TSA B's certificate ends in ten years; TSA A's a few seconds from now (made
    // second, so the seconds are left for the renewals).
    let long = pki(dir, "rsa", "sha256");
    let until = now() + 10;
    let short = pki_until(&dir.join("pki-short"), until);
    let (tsa_a, tsa_b) = (Tsa::start(&short), Tsa::start(&long));
    let cas = [short.join("ca.pem"), long.join("ca.pem")];
    let cas: Vec<&Path> = cas.iter().map(PathBuf::as_path).collect();
    example(dir, "py1.mcpev", "in-time.mcpev");
    let late = example(dir, "fastmcp.mcpev", "late.mcpev");

    // Both stamped by A; in-time.mcpev renewed by B while A's certificate is valid.
    let (code, stdout, stderr) = renew(
        &bin,
        dir,
        &tsa_a.url("/tsa"),
        &["in-time.mcpev", "late.mcpev"],
    );
    assert_eq!(code, 0, "{stderr}");
    let mut written: Vec<&str> = stdout.lines().collect();
    written.sort_unstable();
    assert_eq!(written, ["in-time.mcpev.tsr", "late.mcpev.tsr"]);
    let (code, _, stderr) = renew(&bin, dir, &tsa_b.url("/tsa"), &["in-time.mcpev"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        now() <= until,
        "the renewal in time took too long to test the late one"
    );

    // A's certificate has expired.
    while now() <= until + 1 {
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    // The chain renewed in time still proves the first time, and extends again with B.
    let (code, stdout, stderr) = renew(&bin, dir, &tsa_b.url("/tsa"), &["in-time.mcpev"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "in-time.mcpev.tsr.3\n");
    let ok = verify(dir, true, &cas, "in-time.mcpev");
    assert_eq!(ok.code, 0, "{ok:?}");
    let v: serde_json::Value = serde_json::from_str(ok.stdout.trim()).expect("json");
    let links = v["renewal"]["links"].as_array().expect("links");
    assert_eq!(links.len(), 3, "{v}");
    // Two TSAs (one subject): A's certificate ends before B's.
    assert!(links[0]["certificate_until"].as_str() < links[1]["certificate_until"].as_str());
    assert_eq!(v["renewal"]["proven_since"], links[0]["gen_time"]);
    let a_until = links[0]["certificate_until"].as_str().expect("until");
    assert!(
        links[2]["gen_time"].as_str().is_some_and(|t| t > a_until),
        "{v}"
    );

    // late.mcpev was not renewed in time: the collector refuses to write the renewal…
    let (code, stdout, stderr) = renew(&bin, dir, &tsa_b.url("/tsa"), &["late.mcpev"]);
    assert_eq!(code, 4, "{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains("late.mcpev: late.mcpev.tsr.2 not written: the TSA's token is dated ")
            && stderr.contains("after the TSA certificate of late.mcpev.tsr expired"),
        "{stderr}"
    );
    assert!(!dir.join("late.mcpev.tsr.2").exists());
    // … and one made anyway (by openssl) is refused by verify, at the link step.
    let sidecar = openssl_sidecar(dir, &late, 2, &long);
    assert!(openssl_verifies(
        dir,
        &sidecar,
        &covered(&late, 2),
        &long.join("ca.pem")
    ));
    let bad = verify(dir, false, &cas, "late.mcpev");
    assert_eq!(bad.code, 3, "{bad:?}");
    assert!(
        bad.stdout
            .contains("INVALID late.mcpev: late.mcpev.tsr.2: timestamp link: its genTime ")
            && bad
                .stdout
                .contains("is after the TSA certificate of late.mcpev.tsr expired"),
        "{bad:?}"
    );
    let json = verify(dir, true, &cas, "late.mcpev");
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).expect("json");
    assert_eq!(v["renewal"]["step"], "link");
    assert_eq!(v["renewal"]["sidecar"], "late.mcpev.tsr.2");
    assert_eq!(v["renewal"]["links"].as_array().map(Vec::len), Some(1));
}

#[test]
fn inputs_that_are_not_bundles_and_tsas_that_fail_are_named() {
    let Some((bin, tmp)) = setup() else {
        return;
    };
    let dir = tmp.path();
    let pki = pki(dir, "rsa", "sha256");
    let tsa = Tsa::start(&pki);
    example(dir, "py1.mcpev", "good.mcpev");
    std::fs::write(dir.join("notes.txt"), "not a bundle\n").expect("write");
    std::fs::create_dir(dir.join("folder.mcpev")).expect("mkdir");
    let mut altered = std::fs::read(repo().join("examples/fastmcp.mcpev")).expect("example");
    let mid = altered.len() / 2;
    altered[mid] ^= 0x01;
    std::fs::write(dir.join("altered.mcpev"), &altered).expect("write");

    let (code, stdout, stderr) = renew(
        &bin,
        dir,
        &tsa.url("/tsa"),
        &[
            "good.mcpev",
            "notes.txt",
            "missing.mcpev",
            "folder.mcpev",
            "altered.mcpev",
        ],
    );
    assert_eq!(code, 4, "{stderr}");
    assert_eq!(stdout, "good.mcpev.tsr\n", "{stderr}");
    for (file, why) in [
        ("notes.txt", "not a bundle: it is "),
        ("missing.mcpev", "cannot read: "),
        ("folder.mcpev", "cannot read: is a directory"),
        ("altered.mcpev", "not a bundle: signature invalid"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("mcp-collect: error: {file}: {why}"))),
            "{file}: {stderr}"
        );
        assert!(!dir.join(format!("{file}.tsr")).exists(), "{file}");
    }
    assert!(
        stderr.contains("4 of 5 bundle(s) got no new timestamp"),
        "{stderr}"
    );

    // A TSA that fails leaves no sidecar, and says why.
    for (path, why) in [
        ("/garbage", "not an RFC 3161 TimeStampResp"),
        ("/reject", "refused the request: status rejection"),
        (
            "/other",
            "the token's message imprint is not the one requested",
        ),
    ] {
        let (code, stdout, stderr) = renew(&bin, dir, &tsa.url(path), &["good.mcpev"]);
        assert_eq!(code, 4, "{path}: {stderr}");
        assert!(stdout.is_empty(), "{path}: {stdout}");
        assert!(
            stderr.contains(&format!("good.mcpev: --tsa {}: ", tsa.url(path)))
                && stderr.contains(why),
            "{path}: {stderr}"
        );
        assert!(!dir.join("good.mcpev.tsr.2").exists(), "{path}");
    }

    // Usage errors, before any request: the same file twice, a URL that is not one.
    let (code, stdout, stderr) =
        renew(&bin, dir, &tsa.url("/tsa"), &["good.mcpev", "./good.mcpev"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("are the same file"), "{stderr}");
    let (code, _, stderr) = renew(&bin, dir, "ftp://127.0.0.1/tsa", &["good.mcpev"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--tsa ftp://127.0.0.1/tsa: "), "{stderr}");
    assert!(!dir.join("good.mcpev.tsr.2").exists());
}
