//! The lab's OAuth pair for tests that drive a real `Login`: the AS metadata and the
//! resource server's RFC 9728 document, a headless browser step (`lab/oidc/browser.sh
//! URL --deliver` plays login and consent), and readers of the recorded legs.

use mcp_probe_schema::vocab::LegId;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use mcp_probe_collector::journal::Journal;
use mcp_probe_collector::oauth::{Credential, Login};
use mcp_probe_collector::transport::http::{Client, Request};
use mcp_probe_schema::model::{Header, HttpExchange, HttpOutcome, Observation, Record};
use serde_json::Value;
use tokio::sync::mpsc;

use super::lab;

/// Seal the journal as complete with test key 7 and return the bundle's path.
pub fn seal_with_test_key(j: &Mutex<Journal>) -> PathBuf {
    let key = mcp_probe_schema::testkit::test_key(7);
    j.lock()
        .expect("journal lock")
        .seal(mcp_probe_schema::model::RunStatus::Complete, &key)
        .expect("seal")
}

/// A temporary folder (removed when dropped) and the login state and output paths in it.
pub fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (state, out) = (tmp.path().join("state"), tmp.path().join("out"));
    (tmp, state, out)
}

/// A recording client trusting the default stores.
pub fn client() -> Client {
    let trust = mcp_probe_collector::transport::tls::Trust::load(None).expect("trust store");
    Client::new(trust, Duration::from_secs(30), 1 << 20)
}

/// GET a JSON document (200 expected).
pub async fn get_json(client: &Client, url: &str) -> Value {
    let sent = client
        .send(Request {
            method: "GET".into(),
            url: url::Url::parse(url).expect("url"),
            headers: vec![Header::new("Accept", "application/json")],
            body: Vec::new(),
            await_id: None,
            head_only_stream: false,
            connect_to: None,
        })
        .await;
    match sent.exchange.outcome {
        HttpOutcome::Response(r) if r.status == 200 => {
            serde_json::from_slice(&r.body.bytes).expect("json")
        }
        other => panic!("GET {url}: {other:?}"),
    }
}

/// The lab pair, its metadata documents, and a login for the resource server.
pub struct Lab {
    pub as_url: String,
    pub rs_url: String,
    pub client: Client,
    pub meta: Value,
    pub prm: Value,
}

impl Lab {
    /// `None` (a skip) when the lab is not up outside CI.
    pub async fn up() -> Option<Lab> {
        let (as_url, rs_url) = (lab("LAB_AS")?, lab("LAB_RS")?);
        let client = client();
        let meta = get_json(
            &client,
            &format!("{as_url}/.well-known/oauth-authorization-server"),
        )
        .await;
        let rs = url::Url::parse(&rs_url).expect("LAB_RS");
        let prm = get_json(
            &client,
            &format!(
                "{}/.well-known/oauth-protected-resource{}",
                rs.origin().ascii_serialization(),
                rs.path()
            ),
        )
        .await;
        Some(Lab {
            as_url,
            rs_url,
            client,
            meta,
            prm,
        })
    }

    /// A headless login (no browser; the authorization URL comes out of `rx`).
    pub fn login(&self, state_dir: &Path) -> (Login, mpsc::UnboundedReceiver<String>) {
        let ep = url::Url::parse(&self.rs_url).expect("LAB_RS");
        let mut login =
            Login::new(&ep, &self.meta, Some(&self.prm), None, state_dir).expect("login");
        let (tx, rx) = mpsc::unbounded_channel();
        login.no_browser = true;
        login.callback_timeout = Duration::from_secs(60);
        login.on_authorize_url = Some(tx);
        (login, rx)
    }
}

/// lab/oidc/browser.sh.
pub fn browser_sh() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/oidc/browser.sh")
}

/// Run `login.obtain` while `browser.sh URL --deliver` plays the user; `extra_resource`
/// is added to the authorization URL (the user grants a second resource too). Returns
/// the credential, the authorization URL and the redirect the browser delivered.
pub async fn obtain_interactive(
    login: &mut Login,
    rx: &mut mpsc::UnboundedReceiver<String>,
    client: &Client,
    journal: &Mutex<Journal>,
    extra_resource: Option<&str>,
) -> (Credential, url::Url, url::Url) {
    let user = async {
        let url = tokio::time::timeout(Duration::from_secs(60), rx.recv())
            .await
            .ok()
            .flatten()?;
        let mut u = url::Url::parse(&url).expect("authorization URL");
        if let Some(r) = extra_resource {
            u.query_pairs_mut().append_pair("resource", r);
        }
        let out = tokio::task::spawn_blocking(move || {
            std::process::Command::new(browser_sh())
                .arg(u.as_str())
                .arg("--deliver")
                .output()
                .expect("run lab/oidc/browser.sh")
        })
        .await
        .expect("browser task");
        assert!(
            out.status.success(),
            "browser.sh failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let redirect = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Some((url, redirect))
    };
    let (cred, seen) = tokio::join!(login.obtain(client, journal), user);
    let cred = cred.expect("login");
    let (url, redirect) = seen.expect("an authorization URL was issued");
    (
        cred,
        url::Url::parse(&url).expect("authorization URL"),
        url::Url::parse(&redirect).expect("redirect URL"),
    )
}

/// Records serving leg `l`.
pub fn records_of(records: &[Record], l: LegId) -> Vec<&Record> {
    records
        .iter()
        .filter(|r| r.legs.iter().any(|x| x == l))
        .collect()
}

/// The HTTP exchange of a record (panics otherwise).
pub fn http(r: &Record) -> &HttpExchange {
    match &r.observation {
        Observation::Http(x) => x,
        other => panic!("not an HTTP record: {other:?}"),
    }
}

/// The response status of a record (panics without a response).
pub fn status(r: &Record) -> u16 {
    match &http(r).outcome {
        HttpOutcome::Response(resp) => resp.status,
        HttpOutcome::Error(e) => panic!("no response: {e}"),
    }
}

/// True when `needle` occurs in `hay`.
pub fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}
