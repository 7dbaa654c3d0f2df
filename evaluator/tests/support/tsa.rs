//! A local RFC 3161 time-stamping authority for the grader's tests, from the lab's own
//! tools: a test PKI made by lab/tsa/make-certs.sh, tokens made by `openssl ts -reply`
//! with it, and lab/tsa/tsa.py serving it over HTTP on loopback (for `mcp-collect --tsa`
//! and `mcp-collect timestamp`).
//! `openssl` and `python3` are the lab's tools (`lab/install.sh`); a test that cannot run
//! them fails through [`super::lab::absent`], unless the lab tests are skipped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `openssl`, or [`super::lab::absent`].
pub fn require_openssl() -> Option<()> {
    match Command::new("openssl").arg("version").output() {
        Ok(o) if o.status.success() => Some(()),
        _ => super::lab::absent("openssl", "install it (`lab/install.sh` does)"),
    }
}

/// A test PKI made by lab/tsa/make-certs.sh in `dir/pki-KEY-DIGEST`: `ca.pem` (the root
/// to give `--tsa-cert`), `other-ca.pem` (an unrelated root), `tsa.cnf` (for `openssl ts`).
pub fn pki(dir: &Path, key: &str, digest: &str) -> PathBuf {
    let pki = dir.join(format!("pki-{key}-{digest}"));
    let out = Command::new(repo().join("lab/tsa/make-certs.sh"))
        .arg(&pki)
        .args([key, digest])
        .output()
        .expect("run make-certs.sh");
    assert!(
        out.status.success(),
        "make-certs.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    pki
}

/// A test PKI (RSA, SHA-256) made by lab/tsa/make-certs.sh in `dir`, its TSA certificate
/// valid until `not_after` (seconds since the Unix epoch): make-certs.sh's NOT_AFTER, for
/// the renewals made too late (evaluator/tests/lab_renewal.rs).
pub fn pki_until(dir: &Path, not_after: u64) -> PathBuf {
    let at = chrono::DateTime::from_timestamp(i64::try_from(not_after).expect("a time"), 0)
        .expect("a time")
        .format("%Y%m%d%H%M%SZ")
        .to_string();
    let out = Command::new(repo().join("lab/tsa/make-certs.sh"))
        .arg(dir)
        .args(["rsa", "sha256", &at])
        .output()
        .expect("run make-certs.sh");
    assert!(
        out.status.success(),
        "make-certs.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    dir.to_path_buf()
}

/// An RFC 3161 token (DER) over SHA-256 of `signature` from `openssl ts -reply` with the
/// TSA of `pki`: genTime is now.
pub fn openssl_token(pki: &Path, signature: &[u8]) -> Vec<u8> {
    let dir = tempfile::tempdir().expect("tempdir");
    let (sig, query, token) = (
        dir.path().join("sig"),
        dir.path().join("q.tsq"),
        dir.path().join("t.der"),
    );
    std::fs::write(&sig, signature).expect("write the signature");
    let run = |args: &[&std::ffi::OsStr]| {
        let out = Command::new("openssl")
            .args(args)
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    let s = |s: &'static str| std::ffi::OsStr::new(s);
    run(&[
        s("ts"),
        s("-query"),
        s("-data"),
        sig.as_os_str(),
        s("-sha256"),
        s("-cert"),
        s("-out"),
        query.as_os_str(),
    ]);
    let cnf = pki.join("tsa.cnf");
    run(&[
        s("ts"),
        s("-reply"),
        s("-config"),
        cnf.as_os_str(),
        s("-queryfile"),
        query.as_os_str(),
        s("-token_out"),
        s("-out"),
        token.as_os_str(),
    ]);
    std::fs::read(&token).expect("the token")
}

/// lab/tsa/tsa.py on a free loopback port; stopped (by its PID) when dropped.
pub struct Tsa {
    child: Child,
    base: String,
}

impl Tsa {
    /// Start it with the TSA of `pki`.
    pub fn start(pki: &Path) -> Tsa {
        let mut child = Command::new("python3")
            .arg(repo().join("lab/tsa/tsa.py"))
            .arg(pki)
            .arg("0")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start tsa.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("tsa.py says its port");
        let port = line
            .trim()
            .strip_prefix("listening ")
            .unwrap_or_else(|| panic!("tsa.py printed {line:?}"));
        Tsa {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    /// The URL of `path` on it (`/tsa` answers with a token).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Tsa {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
