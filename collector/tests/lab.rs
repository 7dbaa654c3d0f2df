//! Integration tests: the real `mcp-collect` against every real lab server (lab/up.sh).
//! Expected revisions and inventories come from lab/expect.json, which was checked by
//! hand with curl against the same pinned servers.

mod support;

use mcp_probe_schema::derive::inventory;
use mcp_probe_schema::model::{Era, Observation, RunStatus};
use serde_json::Value;
use support::*;

fn expect(id: &str) -> Value {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../lab/expect.json");
    let v: Value =
        serde_json::from_slice(&std::fs::read(p).expect("lab/expect.json")).expect("json");
    v["targets"][id].clone()
}

fn names(items: &[Value], key: &str) -> Vec<String> {
    let mut n: Vec<String> = items
        .iter()
        .filter_map(|i| i.get(key)?.as_str().map(str::to_string))
        .collect();
    n.sort();
    n
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Collect one lab server and check revision, server identity, full inventory and the
/// bundle's signature and chain.
fn check(id: &str) {
    let e = expect(id);
    let Some(url) = lab(e["env"].as_str().expect("env")) else {
        return;
    };
    let run = collect(&["--info", &url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 1, "{}", run.describe());
    let v = open(&bundles[0]);
    assert_eq!(v.evidence.run.status, RunStatus::Complete, "{id}");
    let s = v.evidence.session.as_ref().expect("session");
    assert_eq!(s.endpoint, url);
    assert_eq!(
        s.revision.as_deref(),
        e["revision"].as_str(),
        "{id}: negotiated revision"
    );
    let era = if e["revision"] == "2026-07-28" {
        Era::Modern
    } else {
        Era::Legacy
    };
    assert_eq!(s.era, Some(era));
    assert_eq!(
        s.server_info.as_ref().and_then(|i| i.get("name")),
        Some(&e["serverInfo"]["name"]),
        "{id}"
    );
    assert_eq!(
        s.server_info.as_ref().and_then(|i| i.get("version")),
        Some(&e["serverInfo"]["version"]),
        "{id}"
    );
    assert!(!s.auth_required);
    let transport = e["transport"].as_str().unwrap_or("streamable-http");
    assert_eq!(v.evidence.target.transport.label(), transport, "{id}");
    let inv = inventory(&v.records);
    for (list, key, want) in [
        (&inv.tools, "name", &e["tools"]),
        (&inv.resources, "uri", &e["resources"]),
        (
            &inv.resource_templates,
            "uriTemplate",
            &e["resourceTemplates"],
        ),
        (&inv.prompts, "name", &e["prompts"]),
    ] {
        assert!(list.observed && list.complete, "{id}: {list:?}");
        assert_eq!(names(&list.items, key), strings(want), "{id}: {key}");
    }
    // The --info block names the same facts.
    let out = run.stdout();
    assert!(
        out.contains(&format!(
            "  revision: {}",
            e["revision"].as_str().unwrap_or("")
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!("  tools: {}", strings(&e["tools"]).len())),
        "{out}"
    );
    assert!(out.contains(&format!("  transport: {transport}")), "{out}");
    // Legacy sessions send notifications/initialized after the handshake.
    let initialized = v
        .records
        .iter()
        .any(|r| r.legs.iter().any(|l| l == "session.initialized"));
    assert_eq!(initialized, era == Era::Legacy, "{id}");
}

#[test]
fn py2_files_serves_its_root() {
    check("py2-files");
    check("py2-files-naive");
}

#[test]
fn py2_stateful_negotiates_2026_07_28() {
    check("py2");
}

#[test]
fn py2_stateless_json() {
    check("py2-sl-json");
}

#[test]
fn py2_without_dns_protection() {
    check("py2-nodns");
}

#[test]
fn py1_is_legacy_only_and_negotiates_2025_11_25() {
    check("py1");
}

#[test]
fn py1_on_http_sse_only() {
    check("py1-sse");
}

#[test]
fn fastmcp_on_http_sse_only() {
    check("fastmcp-sse");
}

#[test]
fn fastmcp_default() {
    check("fastmcp");
}

#[test]
fn fastmcp_auto_protection() {
    check("fastmcp-auto");
}

#[test]
fn ts2_default() {
    check("ts2");
}

#[test]
fn ts2_reject_legacy() {
    check("ts2-reject");
}

#[test]
fn paged_server_inventory_follows_every_cursor() {
    check("py2-paged");
    let Some(url) = lab("LAB_PY2_PAGED") else {
        return;
    };
    let run = collect(&[&url], &[]);
    let v = open(&run.bundles()[0]);
    let inv = inventory(&v.records);
    let e = expect("py2-paged");
    assert_eq!(
        inv.tools.pages,
        e["pages"]["tools"].as_u64().unwrap_or(0) as u32
    );
    assert_eq!(
        inv.resources.pages,
        e["pages"]["resources"].as_u64().unwrap_or(0) as u32
    );
    assert_eq!(inv.tools.items.len(), 23);
}

#[test]
fn page_bound_is_recorded_when_reached() {
    let Some(url) = lab("LAB_PY2_PAGED") else {
        return;
    };
    let run = collect(&["--max-pages", "2", &url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    let inv = inventory(&v.records);
    assert_eq!(inv.tools.pages, 2);
    assert_eq!(inv.tools.items.len(), 10);
    assert!(!inv.tools.complete);
    assert!(
        inv.tools
            .stopped
            .as_deref()
            .unwrap_or("")
            .contains("page bound 2"),
        "{:?}",
        inv.tools
    );
    assert_eq!(v.evidence.run.options.max_pages, 2);
}

#[test]
fn several_targets_at_once_one_bundle_each_in_order_of_completion() {
    let (Some(a), Some(b), Some(c)) = (lab("LAB_PY2"), lab("LAB_PY1"), lab("LAB_TS2")) else {
        return;
    };
    let run = collect(&["--concurrency", "2", &a, &b, &c], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 3, "{}", run.describe());
    let mut endpoints: Vec<String> = bundles
        .iter()
        .map(|p| open(p).evidence.target.endpoint.clone().unwrap_or_default())
        .collect();
    endpoints.sort();
    let mut want = vec![a, b, c];
    want.sort();
    assert_eq!(endpoints, want);
    // Progress goes to stderr, never stdout.
    assert!(run.stderr().contains("probing"), "{}", run.describe());
    assert!(!run.stdout().contains("probing"));
}

#[test]
fn auth_required_endpoint_is_recorded_with_its_challenge() {
    let Some(url) = lab("LAB_RS") else { return };
    let run = collect(&[&url], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    let s = v.evidence.session.as_ref().expect("session");
    assert!(s.auth_required);
    assert_eq!(s.revision, None);
    assert!(failure(&v).contains("401"));
    let challenge = v.records.iter().find_map(|r| match &r.observation {
        Observation::Http(x) => match &x.outcome {
            mcp_probe_schema::model::HttpOutcome::Response(resp) if resp.status == 401 => {
                mcp_probe_schema::derive::header(&resp.headers, "www-authenticate")
                    .map(|h| h.value_str().into_owned())
            }
            _ => None,
        },
        _ => None,
    });
    assert!(challenge.unwrap_or_default().contains("resource_metadata="));
    assert!(
        run.stderr().contains("requires authentication"),
        "{}",
        run.describe()
    );
}

#[test]
fn tls_front_with_lab_ca_records_version_cipher_and_chain() {
    let (Some(modern), Some(ca)) = (lab("LAB_TLS_MODERN"), lab("LAB_TLS_CA")) else {
        return;
    };
    let url = format!("https://{modern}/mcp");
    let v = collect_modern(&["--ca-file", &ca, &url]);
    let tls = v
        .records
        .iter()
        .find_map(|r| match &r.observation {
            Observation::Tls(t) => Some(t.clone()),
            _ => None,
        })
        .expect("a TLS record");
    assert_eq!(tls.version.as_deref(), Some("TLSv1_3"));
    assert!(
        tls.cipher_suite
            .as_deref()
            .unwrap_or("")
            .starts_with("TLS13_"),
        "{tls:?}"
    );
    assert_eq!(tls.chain.len(), 2, "nginx sends leaf and CA");
    assert!(tls.verification.iter().any(|c| c.store == "extra" && c.ok));
    assert!(tls
        .verification
        .iter()
        .any(|c| c.store == "bundled" && !c.ok));
    let ca_rec = v
        .evidence
        .run
        .options
        .ca_file
        .as_ref()
        .expect("ca file recorded");
    assert_eq!(ca_rec.certificates.len(), 1);
    // One TLS handshake for the whole run, probe legs included: connections are kept
    // alive and reused (an event stream that ends right after its response is read to
    // its end so the connection stays usable).
    let handshakes = v
        .records
        .iter()
        .filter(|r| matches!(r.observation, Observation::Tls(_)))
        .count();
    assert_eq!(handshakes, 1, "connections are reused");
}

#[test]
fn untrusted_or_expired_certificate_is_recorded_not_used() {
    let (Some(exp), Some(ca)) = (lab("LAB_TLS_EXPIRED"), lab("LAB_TLS_CA")) else {
        return;
    };
    let url = format!("https://{exp}/mcp");
    let run = collect(&["--ca-file", &ca, &url], &[]);
    assert_eq!(run.code(), 3, "no MCP session: {}", run.describe());
    let v = open(&run.bundles()[0]);
    assert_eq!(v.evidence.run.status, RunStatus::Failed);
    let tls = v.records.iter().find_map(|r| match &r.observation {
        Observation::Tls(t) => Some(t.clone()),
        _ => None,
    });
    let tls = tls.expect("the chain is evidence even when it does not verify");
    assert!(!tls.chain.is_empty());
    assert!(tls.verification.iter().all(|c| !c.ok));
    assert!(
        tls.verification
            .iter()
            .any(|c| c.error.as_deref().unwrap_or("").contains("expired")),
        "{tls:?}"
    );
    // Nothing was sent over the untrusted connection.
    let sent = v.records.iter().filter(|r| matches!(&r.observation, Observation::Http(x) if matches!(x.outcome, mcp_probe_schema::model::HttpOutcome::Response(_)))).count();
    assert_eq!(sent, 0);
    assert!(
        run.stderr().contains("tls-certificate"),
        "{}",
        run.describe()
    );
}

/// Collect with `args`: exit 0, one bundle, a session on 2026-07-28.
fn collect_modern(args: &[&str]) -> mcp_probe_schema::Verified {
    let run = collect(args, &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let v = open(&run.bundles()[0]);
    assert_eq!(
        v.evidence
            .session
            .as_ref()
            .and_then(|s| s.revision.as_deref()),
        Some("2026-07-28")
    );
    v
}

fn header_of(h: &[mcp_probe_schema::model::Header], name: &str) -> Option<String> {
    mcp_probe_schema::derive::header(h, name).map(|h| h.value_str().into_owned())
}

/// Every 2026-07-28 request carries the version header, `Mcp-Method`, `Mcp-Name` where
/// the method names something, and the whole `_meta` envelope, except the one element
/// its leg is about (docs/collector.md, "Probe legs").
#[test]
fn modern_probe_requests_are_complete_but_for_the_property_under_test() {
    for var in ["LAB_PY2", "LAB_TS2_REJECT"] {
        let Some(url) = lab(var) else { return };
        let v = collect_modern(&[&url]);
        let mut checked = 0;
        for r in &v.records {
            let Observation::Http(x) = &r.observation else {
                continue;
            };
            if x.request.method != "POST" {
                continue;
            }
            let l = r.legs[0].as_str();
            let h = &x.request.headers;
            let pv = header_of(h, "mcp-protocol-version");
            let mm = header_of(h, "mcp-method");
            let mn = header_of(h, "mcp-name");
            if let Some((_, rev)) = l.rsplit_once('@') {
                // A leg sent again on the legacy session of a dual-era server: complete
                // for that era (its version header, its session id, no 2026-07-28
                // routing headers), as the session in the bundle says.
                let era = &v.evidence.session.as_ref().expect("session").other_eras[0];
                assert_eq!(rev, era.revision, "{var} {l}");
                assert_eq!(pv.as_deref(), Some(rev), "{var} {l}");
                assert_eq!(mm, None, "{var} {l}");
                if l != "2.3.unauthenticated@2025-11-25" {
                    assert_eq!(header_of(h, "mcp-session-id"), era.session_id, "{var} {l}");
                }
                continue;
            }
            if l == "era.initialize" {
                // The other era's handshake and its notifications/initialized.
                continue;
            }
            if l == "10.2a.padded" {
                // The stored body is capped at 1 MiB; its headers are the control's.
                assert_eq!(
                    (pv.as_deref(), mm.as_deref()),
                    (Some("2026-07-28"), Some("tools/list")),
                    "{l}"
                );
                assert!(x.request.body.length > 1 << 20, "{l}");
                continue;
            }
            let body: Value = serde_json::from_slice(&x.request.body.bytes).expect("JSON body");
            let m = body["method"].as_str().unwrap_or_default().to_string();
            if m == "initialize" {
                // Legacy handshakes (detection fallback, 1.1a sweep) are legacy-shaped.
                continue;
            }
            let meta = &body["params"]["_meta"];
            let env_pv = meta["io.modelcontextprotocol/protocolVersion"]
                .as_str()
                .map(str::to_string);
            assert!(
                meta["io.modelcontextprotocol/clientCapabilities"].is_object(),
                "{var} {l}: {body}"
            );
            assert!(
                meta["io.modelcontextprotocol/clientInfo"].is_object(),
                "{var} {l}"
            );
            match l {
                "1.1b.bogus_version" => {
                    assert_eq!(
                        (pv.as_deref(), env_pv.as_deref()),
                        (Some("2024-01-01"), Some("2024-01-01")),
                        "{l}"
                    )
                }
                "1.1c.no_header" => assert_eq!(
                    (pv.as_deref(), env_pv.as_deref()),
                    (None, Some("2026-07-28")),
                    "{l}"
                ),
                "1.1d.no_meta_version" => {
                    assert_eq!(
                        (pv.as_deref(), env_pv.as_deref()),
                        (Some("2026-07-28"), None),
                        "{l}"
                    )
                }
                "1.1e.header_mismatch" => {
                    assert_eq!(
                        (pv.as_deref(), env_pv.as_deref()),
                        (Some("2025-03-26"), Some("2026-07-28")),
                        "{l}"
                    )
                }
                _ => assert_eq!(
                    (pv.as_deref(), env_pv.as_deref()),
                    (Some("2026-07-28"), Some("2026-07-28")),
                    "{l}"
                ),
            }
            if l == "2.4.no_method" {
                assert_eq!(mm, None, "{l}");
            } else {
                assert_eq!(
                    mm.as_deref(),
                    Some(m.as_str()),
                    "{var} {l}: Mcp-Method equals the body's method"
                );
            }
            let names_something =
                matches!(m.as_str(), "tools/call" | "prompts/get" | "resources/read");
            let body_name = body["params"]["name"]
                .as_str()
                .or(body["params"]["uri"].as_str())
                .map(str::to_string);
            match l {
                "2.4.no_name" => assert_eq!(mn, None, "{l}"),
                "2.4.name_mismatch" | "2.4.name_encoded_mismatch" => {
                    assert!(
                        mn.is_some() && mn != body_name,
                        "{l}: the name differs from the body"
                    )
                }
                _ if names_something => {
                    assert_eq!(mn, body_name, "{var} {l}: Mcp-Name equals the body's name")
                }
                _ => assert_eq!(
                    mn, None,
                    "{var} {l}: no Mcp-Name on a method that names nothing"
                ),
            }
            if l == "7.1.2.null_id" {
                assert!(body["id"].is_null(), "{l}");
            } else {
                assert!(body["id"].is_i64(), "{var} {l}: a real id");
            }
            checked += 1;
        }
        assert!(
            checked >= 20,
            "{var}: only {checked} modern requests checked"
        );
    }
}

/// The probe input `allowed_origin` replaces the endpoint's own origin on the 2.5
/// control leg, on every era the server serves; the hostile leg is unchanged.
#[test]
fn the_allowed_origin_input_is_the_2_5_control() {
    let Some(url) = lab("LAB_PY2_NODNS") else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("inputs.json");
    std::fs::write(
        &file,
        serde_json::json!({&url: {"allowed_origin": "https://app.example"}}).to_string(),
    )
    .expect("write");
    let v = collect_modern(&["--inputs", file.to_str().expect("utf-8"), &url]);
    let origins: Vec<(String, Option<String>)> = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l.starts_with("2.5.origin.")))
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => {
                Some((r.legs[0].clone(), header_of(&x.request.headers, "origin")))
            }
            _ => None,
        })
        .collect();
    let era = v.evidence.session.as_ref().expect("session").other_eras[0]
        .revision
        .clone();
    let want = |l: &str, o: Option<&str>| (l.to_string(), o.map(str::to_string));
    assert_eq!(
        origins,
        [
            want(
                "2.5.origin.hostile",
                Some("https://cis-rebinding-probe.example")
            ),
            want("2.5.origin.own", Some("https://app.example")),
            want("2.5.origin.none", None),
            want(
                &format!("2.5.origin.hostile@{era}"),
                Some("https://cis-rebinding-probe.example")
            ),
            want(
                &format!("2.5.origin.own@{era}"),
                Some("https://app.example")
            ),
            want(&format!("2.5.origin.none@{era}"), None),
        ]
    );
}

/// The Section 5 live legs are sent again on the legacy session of a dual-era server,
/// each complete for that era: py2 (mcp 2.3.0 `MCPServer`) answers `initialize` with
/// 2025-11-25, and every 5.1.1d, 5.1.2c and 5.1.3c/d request of the negotiated session
/// has its `@2025-11-25` twin carrying that session's id, without `Mcp-Name`.
#[test]
fn the_live_legs_are_sent_on_both_eras_of_a_dual_era_server() {
    let Some(url) = lab("LAB_PY2") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("inputs.json");
    std::fs::write(
        &file,
        serde_json::json!({&url: {"schema_probe_tool": "add", "schema_probe_arguments": {"a": 1, "b": 2}}})
            .to_string(),
    )
    .expect("write");
    let v = collect_modern(&["--inputs", file.to_str().expect("utf-8"), &url]);
    let era = v.evidence.session.as_ref().expect("session").other_eras[0].clone();
    let sent: Vec<(String, Option<String>, Option<String>, Value)> = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l.starts_with("5.1.")))
        .filter_map(|r| match &r.observation {
            Observation::Http(x) => Some((
                r.legs[0].clone(),
                header_of(&x.request.headers, "mcp-name"),
                header_of(&x.request.headers, "mcp-session-id"),
                serde_json::from_slice(&x.request.body.bytes).expect("JSON body"),
            )),
            _ => None,
        })
        .collect();
    let negotiated: Vec<&str> = sent
        .iter()
        .map(|s| s.0.as_str())
        .filter(|l| !l.contains('@'))
        .collect();
    assert_eq!(
        negotiated,
        [
            "5.1.1d.call",
            "5.1.2c.control",
            "5.1.2c.missing",
            "5.1.3c.control",
            "5.1.3c.missing_arg",
            "5.1.3d.unknown"
        ]
    );
    for l in &negotiated {
        let twin = format!("{l}@{}", era.revision);
        let (mine, theirs) = (
            sent.iter().find(|s| s.0 == *l).expect("negotiated"),
            sent.iter()
                .find(|s| s.0 == twin)
                .unwrap_or_else(|| panic!("{twin} not sent: {sent:?}")),
        );
        assert!(mine.1.is_some(), "{l}: no Mcp-Name on 2026-07-28");
        assert_eq!(theirs.1, None, "{twin}: Mcp-Name on a legacy session");
        assert_eq!(theirs.2, era.session_id, "{twin}");
        // The same method and params but the 2026-07-28 envelope.
        assert_eq!(mine.3["method"], theirs.3["method"], "{twin}");
        for k in ["name", "uri", "arguments"] {
            assert_eq!(mine.3["params"][k], theirs.3["params"][k], "{twin} {k}");
        }
        assert!(
            theirs.3["params"]["_meta"]
                .get("io.modelcontextprotocol/protocolVersion")
                .is_none(),
            "{twin}"
        );
    }
}

/// 7.2.2 on 2026-07-28: py2 (mcp 2.3.0 `MCPServer`) advertises `listChanged` in its
/// `server/discover` result and serves `subscriptions/listen`: with the tool-call
/// consent the listen stream is opened beside the progress call, complete for
/// 2026-07-28, and closed shortly after the call's answer (never held to a deadline).
#[test]
fn the_listen_stream_is_opened_beside_the_progress_call_and_closed_after_it() {
    let Some(url) = lab("LAB_PY2") else { return };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("inputs.json");
    std::fs::write(
        &file,
        serde_json::json!({&url: {"tool_calls_authorised": true, "tool_arguments": {"echo": {"text": "x"}}}})
            .to_string(),
    )
    .expect("write");
    let v = collect_modern(&["--inputs", file.to_str().expect("utf-8"), &url]);
    let listen: Vec<_> = v
        .records
        .iter()
        .filter(|r| r.legs.iter().any(|l| l == "7.2.2.listen"))
        .collect();
    assert_eq!(listen.len(), 1, "{listen:?}");
    let Observation::Http(x) = &listen[0].observation else {
        panic!("{:?}", listen[0])
    };
    let body: Value = serde_json::from_slice(&x.request.body.bytes).expect("JSON body");
    assert_eq!(body["method"], "subscriptions/listen");
    assert_eq!(
        body["params"]["notifications"],
        serde_json::json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true})
    );
    assert_eq!(
        body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        header_of(&x.request.headers, "mcp-method").as_deref(),
        Some("subscriptions/listen")
    );
    let mcp_probe_schema::model::HttpOutcome::Response(r) = &x.outcome else {
        panic!("{:?}", x.outcome)
    };
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body.end,
        mcp_probe_schema::model::BodyEnd::StoppedAfterResponse
    );
    assert!(
        String::from_utf8_lossy(&r.body.bytes).contains("notifications/subscriptions/acknowledged")
    );
    // Closed after the call's answer plus the grace, not at the request deadline.
    assert!(
        listen[0].duration_us < 5_000_000,
        "{}",
        listen[0].duration_us
    );
    // The GET channel does not exist on 2026-07-28: still recorded skipped.
    assert!(v
        .records
        .iter()
        .any(|r| r.legs.iter().any(|l| l == "7.2.2.channel")
            && matches!(r.observation, Observation::Skipped { .. })));
}
