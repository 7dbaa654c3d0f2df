//! A local RFC 3161 time-stamping authority for the tests of timestamps
//! (evaluator/tests/lab_tsa.rs, evaluator/tests/lab_renewal.rs): a test PKI made by
//! lab/tsa/make-certs.sh, and lab/tsa/tsa.py (`openssl ts -reply` behind HTTP) on a free
//! loopback port.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A test PKI made by lab/tsa/make-certs.sh in `dir/pki-<key>-<digest>`.
pub fn pki(dir: &Path, key: &str, digest: &str) -> PathBuf {
    make_pki(&dir.join(format!("pki-{key}-{digest}")), &[key, digest])
}

/// A test PKI (RSA, SHA-256) in `dir` whose TSA certificate is valid until `not_after`
/// (seconds since the Unix epoch, UTC): make-certs.sh's NOT_AFTER.
pub fn pki_until(dir: &Path, not_after: u64) -> PathBuf {
    let at = chrono::DateTime::from_timestamp(i64::try_from(not_after).expect("a time"), 0)
        .expect("a time")
        .format("%Y%m%d%H%M%SZ")
        .to_string();
    make_pki(dir, &["rsa", "sha256", &at])
}

fn make_pki(pki: &Path, args: &[&str]) -> PathBuf {
    let out = Command::new(repo().join("lab/tsa/make-certs.sh"))
        .arg(pki)
        .args(args)
        .output()
        .expect("run make-certs.sh");
    assert!(
        out.status.success(),
        "make-certs.sh: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    pki.to_path_buf()
}

/// lab/tsa/tsa.py on a free loopback port; stopped (by its PID) when dropped.
pub struct Tsa {
    child: Child,
    base: String,
}

impl Tsa {
    /// Start it over the PKI in `pki`.
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

    /// The URL of one of its paths (`/tsa`, `/garbage`, …).
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
