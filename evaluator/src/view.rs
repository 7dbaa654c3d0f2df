//! `mcp-grade show --json`: the whole decoded bundle as one JSON document.
//!
//! Byte strings: digests and key material (`sha256`, `prev`, `chain_head`,
//! `public_key_hex`) are lower-case hex; every other byte string is standard base64 with
//! padding in a field whose name ends in `base64`. Bodies carry `text` as well when their
//! stored bytes are valid UTF-8, and header values are text (`value`) when valid UTF-8,
//! otherwise `value` is null and `value_base64` holds the bytes. Times are kept as the
//! bundle stores them (UTC microseconds) with an RFC 3339 rendering beside them
//! (`*_utc`). `docs/bundle.md` documents the layout.

use mcp_probe_schema::derive::{inventory, ListInventory};
use mcp_probe_schema::model::*;
use mcp_probe_schema::PublicKey;
use serde_json::{json, Map, Value};

use crate::fmt::{b64, hex, utc};
use crate::load::Loaded;

/// The document for a loaded bundle.
pub fn document(l: &Loaded) -> Value {
    let ev = &l.evidence;
    let records = l.decoded_records();
    let inv = inventory(&records);
    let list = |x: &ListInventory| {
        if x.observed {
            Value::Array(x.items.clone())
        } else {
            Value::Null
        }
    };
    let pages = |x: &ListInventory| json!({"observed": x.observed, "pages": x.pages, "complete": x.complete, "stopped": x.stopped});
    json!({
        "format": ev.format,
        "collector": {"name": ev.collector.name, "version": ev.collector.version, "build": ev.collector.build},
        "run": run(&ev.run),
        "target": {
            "as_typed": ev.target.as_typed,
            "base_url": ev.target.base_url,
            "candidates": ev.target.candidates,
            "endpoint": ev.target.endpoint,
            "addresses": ev.target.addresses,
        },
        "session": ev.session.as_ref().map(session),
        "tokens": ev.tokens.iter().map(token).collect::<Vec<_>>(),
        "records": l.records.iter().enumerate().map(|(i, r)| match r {
            Ok(r) => record(r),
            Err(e) => json!({"index": i, "error": e.to_string()}),
        }).collect::<Vec<_>>(),
        "chain_head": hex(&ev.chain_head),
        "signer": l.signer.as_ref().map(signer),
        "verification": {"valid": l.valid(), "problem": l.problem.as_ref().map(|p| p.to_string())},
        "negotiated_revision": ev.session.as_ref().and_then(|s| s.revision.clone()),
        "server_info": ev.session.as_ref().and_then(|s| s.server_info.clone()),
        "auth_required": ev.session.as_ref().map(|s| s.auth_required),
        "inventory": {
            "tools": list(&inv.tools),
            "resources": list(&inv.resources),
            "resource_templates": list(&inv.resource_templates),
            "prompts": list(&inv.prompts),
        },
        "inventory_pages": {
            "tools": pages(&inv.tools),
            "resources": pages(&inv.resources),
            "resource_templates": pages(&inv.resource_templates),
            "prompts": pages(&inv.prompts),
        },
    })
}

fn signer(k: &PublicKey) -> Value {
    json!({"key_id": k.key_id(), "public_key_hex": hex(&k.to_bytes())})
}

fn run(r: &Run) -> Value {
    let o = &r.options;
    json!({
        "run_id": r.run_id,
        "started_at": r.started_at,
        "started_at_utc": utc(r.started_at),
        "finished_at": r.finished_at,
        "finished_at_utc": utc(r.finished_at),
        "status": r.status.as_str(),
        "failure": r.failure,
        "options": {
            "timeout_ms": o.timeout_ms,
            "body_cap": o.body_cap,
            "max_pages": o.max_pages,
            "info_only": o.info_only,
            "token_env": o.token_env,
            "ca_file": o.ca_file.as_ref().map(|c| json!({
                "path": c.path,
                "sha256": c.sha256,
                "certificates": c.certificates.iter().map(|d| cert(d)).collect::<Vec<_>>(),
            })),
        },
        "inputs": r.inputs,
    })
}

fn era_name(e: Era) -> &'static str {
    match e {
        Era::Modern => "modern",
        Era::Legacy => "legacy",
    }
}

fn session(s: &Session) -> Value {
    let mut v = json!({
        "endpoint": s.endpoint,
        "auth_required": s.auth_required,
        "authenticated": s.authenticated,
        "era": s.era.map(era_name),
        "revision": s.revision,
        "server_info": s.server_info,
        "capabilities": s.capabilities,
        "session_id": s.session_id,
        "negotiated_in": s.negotiated_in,
    });
    if !s.other_eras.is_empty() {
        v["other_eras"] = s
            .other_eras
            .iter()
            .map(|o| {
                json!({
                    "era": era_name(o.era),
                    "revision": o.revision,
                    "server_info": o.server_info,
                    "capabilities": o.capabilities,
                    "session_id": o.session_id,
                    "negotiated_in": o.negotiated_in,
                })
            })
            .collect();
    }
    v
}

fn token(t: &TokenFacts) -> Value {
    json!({
        "source": t.source,
        "fingerprint": t.fingerprint,
        "jwt_header": t.jwt_header,
        "jwt_claims": t.jwt_claims,
        "expires_in": t.expires_in,
        "scope": t.scope,
        "token_type": t.token_type,
    })
}

/// One decoded record.
pub fn record(r: &Record) -> Value {
    json!({
        "seq": r.seq,
        "legs": r.legs,
        "started_at": r.started_at,
        "started_at_utc": utc(r.started_at),
        "duration_us": r.duration_us,
        "prev": hex(&r.prev),
        "observation": observation(&r.observation),
        "redactions": r.redactions.iter().map(|x| json!({
            "location": x.location, "what": x.what, "fingerprint": x.fingerprint,
        })).collect::<Vec<_>>(),
    })
}

fn observation(o: &Observation) -> Value {
    match o {
        Observation::Http(x) => {
            let (response, error) = match &x.outcome {
                HttpOutcome::Response(r) => (Some(response(r)), None),
                HttpOutcome::Error(e) => (None, Some(transport_error(e))),
            };
            json!({
                "kind": "http",
                "connection": x.connection,
                "first_attempt": x.first_attempt.as_ref().map(transport_error),
                "request": {
                    "method": x.request.method,
                    "url": x.request.url,
                    "version": x.request.version,
                    "headers": headers(&x.request.headers),
                    "body": body(&x.request.body),
                },
                "response": response,
                "error": error,
            })
        }
        Observation::Tls(t) => json!({
            "kind": "tls",
            "connection": t.connection,
            "sni": t.sni,
            "peer": t.peer,
            "version": t.version,
            "cipher_suite": t.cipher_suite,
            "alpn": t.alpn.as_ref().map(|a| String::from_utf8_lossy(a).into_owned()),
            "alpn_base64": t.alpn.as_ref().map(|a| b64(a)),
            "chain": t.chain.iter().map(|d| cert(d)).collect::<Vec<_>>(),
            "verification": t.verification.iter().map(|v| json!({
                "store": v.store, "ok": v.ok, "error": v.error,
            })).collect::<Vec<_>>(),
            "error": t.error.as_ref().map(transport_error),
        }),
        Observation::LegacyTls(p) => json!({
            "kind": "legacy_tls",
            "offered": p.offered,
            "client_hello_base64": b64(&p.client_hello),
            "server_bytes_base64": b64(&p.server_bytes),
            "error": p.error.as_ref().map(transport_error),
        }),
        Observation::Dns(d) => json!({
            "kind": "dns",
            "host": d.host,
            "addresses": d.addresses,
            "error": d.error.as_ref().map(transport_error),
        }),
        Observation::Skipped { reason } => json!({"kind": "skipped", "reason": reason}),
    }
}

fn response(r: &HttpResponse) -> Value {
    json!({
        "version": r.version,
        "status": r.status,
        "reason": r.reason,
        "headers": headers(&r.headers),
        "body": body(&r.body),
    })
}

fn headers(hs: &[Header]) -> Value {
    Value::Array(
        hs.iter()
            .map(|h| {
                let mut m = Map::new();
                m.insert("name".into(), h.name.clone().into());
                match std::str::from_utf8(&h.value) {
                    Ok(s) => {
                        m.insert("value".into(), s.into());
                    }
                    Err(_) => {
                        m.insert("value".into(), Value::Null);
                        m.insert("value_base64".into(), b64(&h.value).into());
                    }
                }
                Value::Object(m)
            })
            .collect(),
    )
}

/// The body end state as a word.
pub fn end_word(e: &BodyEnd) -> &'static str {
    match e {
        BodyEnd::Complete => "complete",
        BodyEnd::StoppedAfterResponse => "stopped_after_response",
        BodyEnd::LimitReached => "limit_reached",
        BodyEnd::HeadOnly => "head_only",
        BodyEnd::Error(_) => "error",
    }
}

fn body(b: &Body) -> Value {
    json!({
        "length": b.length,
        "stored": b.bytes.len(),
        "sha256": hex(&b.sha256),
        "end": end_word(&b.end),
        "end_error": match &b.end { BodyEnd::Error(e) => Some(transport_error(e)), _ => None },
        "base64": b64(&b.bytes),
        "text": std::str::from_utf8(&b.bytes).ok(),
    })
}

fn transport_error(e: &TransportError) -> Value {
    json!({"kind": e.kind.as_str(), "message": e.message})
}

fn cert(der: &[u8]) -> Value {
    json!({
        "length": der.len(),
        "sha256": hex(&mcp_probe_schema::bundle::sha256(der)),
        "common_name": crate::fmt::der_common_name(der),
        "der_base64": b64(der),
    })
}
