//! The audit rules: observability and audit.
//!
//! Every recommendation of this topic has an audit-log half no client can reach.
//! This build grades:
//!
//! * `lifecycle-metadata-recorded` and `audit-clock-synchronised`, reported only (always
//!   N/A; defined here as [`ReportedOnly`] values). `lifecycle-metadata-recorded` records
//!   what the wire shows about lifecycle metadata: whether each collected result names
//!   its server in `_meta["io.modelcontextprotocol/serverInfo"]` and whether the
//!   deprecated `logging` capability is advertised.
//! * `null-id-rejected` sub-verdict a on the wire: a `tools/list` with `"id": null` must be
//!   refused.
//! * `audience-refusals-alerted` sub-verdict a on the wire: a token minted for another resource
//!   must be refused.
//! * `notification-identity` sub-verdicts f and a on the wire: notifications name their sender
//!   (2026-07-28) and progress tokens map to requests the probe issued.

pub mod audience_refusals_alerted;
pub mod notification_identity;
pub mod null_id_rejected;

use mcp_probe_schema::vocab::{header, meta, REV_2026_07_28};
use serde::Serialize;
use serde_json::Value;

use crate::check::{Context, Legs};
use crate::checks::common::reported::{nothing, Observed, ReportedOnly};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;

/// `lifecycle-metadata-recorded`: lifecycle and invocation metadata recorded. It reads
/// the result of every HTTP record of the bundle, whatever its leg, so it declares no
/// leg.
pub static LIFECYCLE_METADATA_RECORDED: ReportedOnly = ReportedOnly {
    id: "lifecycle-metadata-recorded",
    reduction:
        "the whole recommendation is about the server's audit records, which are not read; the \
             per-result identity and the logging capability are recorded for the reviewer",
    legs: Legs::NONE,
    observe: lifecycle_metadata,
};

/// One JSON-RPC result the bundle holds, and whether it names its server.
struct ResultMeta {
    method: String,
    names_server: bool,
    seq: u64,
}

/// Every JSON-RPC message with a `result` in every HTTP response of the bundle, with
/// the method of the request it answered.
fn results(ev: &Bundle) -> Vec<ResultMeta> {
    let mut out = Vec::new();
    for (record, http) in ev.http_records() {
        let x = ev
            .exchange_of(record)
            .unwrap_or(Exchange::new(record, http));
        // Per-result serverInfo is a 2026-07-28 field: on a 2026-07-28 session, results
        // of legacy-shaped requests (the `revisions-pinned` a initialize sweep) are not counted.
        let asserted =
            mcp_probe_schema::derive::header(&http.request.headers, header::PROTOCOL_VERSION)
                .map(|h| h.value_str());
        if ev.is_modern() && asserted.as_deref() != Some(REV_2026_07_28) {
            continue;
        }
        let method =
            || x.with_request_method(|m| m.map_or_else(|| "(no method)".into(), escape_line));
        // The results are read from the messages' heads (a scan of the body, shared with
        // every reader of an answer's head), unless the messages are parsed already.
        let skimmed = x.with_message_heads(|heads| {
            let named = heads
                .iter()
                .filter(|h| h.result.is_some())
                .map(|h| h.result_names_server);
            push_results(&mut out, record.seq, method, named);
        });
        if skimmed.is_some() {
            continue;
        }
        x.with_messages(|msgs| {
            let named = msgs
                .iter()
                .filter_map(|m| m.get("result"))
                .map(|result| names_server(result.get("_meta")));
            push_results(&mut out, record.seq, method, named);
        });
    }
    out
}

/// One [`ResultMeta`] per result of record `seq` (`named`: whether each names the
/// server), with the request's `method`, which is read and escaped only for a record
/// with a result and moved into its last result.
fn push_results(
    out: &mut Vec<ResultMeta>,
    seq: u64,
    method: impl FnOnce() -> String,
    named: impl Iterator<Item = bool>,
) {
    let mut named = named.peekable();
    if named.peek().is_none() {
        return;
    }
    let mut method = method();
    while let Some(names_server) = named.next() {
        let method = if named.peek().is_some() {
            method.clone()
        } else {
            std::mem::take(&mut method)
        };
        out.push(ResultMeta {
            method,
            names_server,
            seq,
        });
    }
}

/// Whether a result's `_meta` names the server (a non-empty `serverInfo` object).
fn names_server(result_meta: Option<&Value>) -> bool {
    result_meta
        .and_then(|m| m.get(meta::SERVER_INFO))
        .and_then(Value::as_object)
        .is_some_and(|o| !o.is_empty())
}

/// The distinct methods of `rs`, in first-seen order.
fn methods<'a>(rs: impl Iterator<Item = &'a ResultMeta>) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for r in rs {
        if !seen.contains(&r.method.as_str()) {
            seen.push(&r.method);
        }
    }
    seen.join(", ")
}

/// The per-result identity observation.
fn naming_observation(rs: &[ResultMeta]) -> String {
    let n = rs.len();
    let k = rs.iter().filter(|r| r.names_server).count();
    let carry = crate::format_exact!(
        "{k} of {n} carry a non-empty _meta[\"{}\"]",
        meta::SERVER_INFO
    );
    if n == 0 {
        "no result collected, so whether results name their server was not observed".into()
    } else if k == n {
        crate::format_exact!(
            "every result names its server ({carry}; methods: {})",
            methods(rs.iter())
        )
    } else if k == 0 {
        crate::format_exact!(
            "no result names its server ({carry}; methods: {})",
            methods(rs.iter())
        )
    } else {
        crate::format_exact!(
            "some results name their server and some do not ({carry}; naming: {}; not naming: {})",
            methods(rs.iter().filter(|r| r.names_server)),
            methods(rs.iter().filter(|r| !r.names_server))
        )
    }
}

/// `lifecycle-metadata-recorded`'s details.
#[derive(Serialize)]
struct LifecycleFacts<'a> {
    /// The negotiated revision (null: none).
    negotiated_version: Option<&'a str>,
    /// Results carrying a non-empty per-result server identity.
    results_naming_server: usize,
    /// Results without one.
    results_not_naming_server: usize,
    /// The deprecated logging capability is advertised (null: capabilities not seen).
    advertises_deprecated_logging: Option<bool>,
}

/// Whether results name their server, whether the deprecated logging capability is
/// advertised, and the negotiated revision.
fn lifecycle_metadata(ev: &Bundle, _cx: &Context<'_>) -> Observed {
    let rs = results(ev);
    let logging = ev.capabilities().map(|c| c.get("logging").is_some());
    let logging_text = match logging {
        None => "server capabilities not observed, so the deprecated logging capability was not seen either way"
            .to_string(),
        Some(true) => crate::format_exact!(
            "the server advertises the logging capability, deprecated in {REV_2026_07_28}"
        ),
        Some(false) => crate::format_exact!(
            "the server does not advertise the logging capability (deprecated in {REV_2026_07_28})"
        ),
    };
    let revision = match ev.revision() {
        Some(r) => crate::format_exact!("negotiated revision {}", crate::fmt::Line(r)),
        None => "no revision negotiated".into(),
    };
    let remark = crate::format_exact!(
        "per-result server identity is an optional {REV_2026_07_28} recommendation, so its absence is \
         not a failure"
    );
    let k = rs.iter().filter(|r| r.names_server).count();
    let mut records: Vec<u64> = rs.iter().map(|r| r.seq).collect();
    records.extend(ev.session().and_then(|s| s.negotiated_in));
    let facts = LifecycleFacts {
        negotiated_version: ev.revision(),
        results_naming_server: k,
        results_not_naming_server: rs.len() - k,
        advertises_deprecated_logging: logging,
    };
    let details = crate::details::Details::from_facts(&facts).unwrap_or_default();
    Observed {
        notes: vec![naming_observation(&rs), logging_text, revision, remark],
        details,
        records,
    }
}

/// `audit-clock-synchronised`: audit timestamps accurate and monotonic.
pub static AUDIT_CLOCK_SYNCHRONISED: ReportedOnly = ReportedOnly {
    id: "audit-clock-synchronised",
    reduction:
        "the whole recommendation is about audit log values, which are not read; nothing is probed",
    legs: Legs::NONE,
    observe: nothing,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Check;
    use crate::fixture::{evidence, list_page, session};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::vocab::leg;
    use serde_json::json;

    /// Each result of a record gets the request's method, which is read only for a
    /// record with a result.
    #[test]
    fn every_result_of_a_record_gets_its_method() {
        let mut out = Vec::new();
        push_results(
            &mut out,
            1,
            || unreachable!("no result"),
            std::iter::empty(),
        );
        assert!(out.is_empty());
        push_results(&mut out, 2, || "tools/list".to_string(), [true].into_iter());
        push_results(
            &mut out,
            3,
            || "a\\u{1b}".to_string(),
            [false, true, false].into_iter(),
        );
        let got: Vec<(&str, bool, u64)> = out
            .iter()
            .map(|r| (r.method.as_str(), r.names_server, r.seq))
            .collect();
        assert_eq!(
            got,
            [
                ("tools/list", true, 2),
                ("a\\u{1b}", false, 3),
                ("a\\u{1b}", true, 3),
                ("a\\u{1b}", false, 3),
            ]
        );
    }

    fn has(o: &crate::verdict::Outcome, words: &[&str]) {
        for w in words {
            assert!(o.evidence.contains(w), "{w:?} not in {:?}", o.evidence);
        }
    }

    fn modern_results(metas: &[bool]) -> Bundle {
        let info = json!({"name": "m", "version": "1"});
        let records = metas
            .iter()
            .enumerate()
            .map(|(i, named)| {
                let mut result = json!({"tools": []});
                if *named {
                    result["_meta"] = json!({ meta::SERVER_INFO: info });
                } else {
                    result["_meta"] = json!({ meta::SERVER_INFO: {} });
                }
                let mut r = list_page(leg::INVENTORY_TOOLS, "tools/list", i as i64 + 1, result);
                if let mcp_probe_schema::model::Observation::Http(x) = &mut r.observation {
                    x.request.headers.push(mcp_probe_schema::model::Header::new(
                        "MCP-Protocol-Version",
                        REV_2026_07_28,
                    ));
                }
                r
            })
            .collect();
        evidence(
            Some(session(
                Some(REV_2026_07_28),
                json!({"tools": {}, "logging": {}}),
                Some(info.clone()),
            )),
            records,
        )
    }

    #[test]
    fn legacy_shaped_results_on_a_modern_session_are_not_counted() {
        // A `revisions-pinned` a sweep initialize (no 2026-07-28 header) answers without
        // _meta: it must not turn "every result names its server" into "some do and some
        // do not".
        let base = modern_results(&[true]);
        let sweep = list_page(
            leg::V_SWEEP,
            "initialize",
            9,
            json!({"protocolVersion": "2024-11-05"}),
        );
        let mut records: Vec<_> = base.http_records().map(|(r, _)| r.clone()).collect();
        records.push(sweep);
        let ev = crate::fixture::evidence(base.payload.session.clone(), records);
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &ev,
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        assert!(
            o.evidence.contains("every result names its server"),
            "{}",
            o.evidence
        );
    }

    #[test]
    fn every_result_names_its_server() {
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &modern_results(&[true, true]),
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &[
                "every result names its server",
                "2 of 2",
                "advertises the logging capability, deprecated",
                "negotiated revision 2026-07-28",
                "optional 2026-07-28 recommendation",
                "audit log",
            ],
        );
        assert_eq!(o.details["results_naming_server"], 2);
        assert_eq!(o.details["results_not_naming_server"], 0);
        assert_eq!(o.details["advertises_deprecated_logging"], true);
        assert_eq!(o.details["negotiated_version"], REV_2026_07_28);
        assert_eq!(o.details["transport"], "streamable-http");
    }

    #[test]
    fn no_result_names_its_server() {
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &modern_results(&[false, false]),
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(&o, &["no result names its server", "0 of 2"]);
        assert_eq!(o.details["results_not_naming_server"], 2);
    }

    #[test]
    fn some_results_name_their_server() {
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &modern_results(&[true, false, true]),
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &["some results name their server and some do not", "2 of 3"],
        );
        assert_eq!(o.details["results_naming_server"], 2);
        assert_eq!(o.details["results_not_naming_server"], 1);
    }

    #[test]
    fn no_result_collected_and_no_session() {
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &evidence(None, Vec::new()),
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
        has(
            &o,
            &[
                "no result collected",
                "capabilities not observed",
                "no revision negotiated",
                "transport unknown",
            ],
        );
        assert!(o.details["advertises_deprecated_logging"].is_null());
        assert!(o.details["negotiated_version"].is_null());
    }

    #[test]
    fn legacy_without_logging() {
        let ev = evidence(
            Some(session(Some("2025-06-18"), json!({"tools": {}}), None)),
            vec![list_page(
                leg::INVENTORY_TOOLS,
                "tools/list",
                1,
                json!({"tools": []}),
            )],
        );
        let o = run_rule(
            &LIFECYCLE_METADATA_RECORDED,
            &ev,
            &crate::fixture::cx("lifecycle-metadata-recorded"),
        );
        has(
            &o,
            &[
                "no result names its server (0 of 1 carry",
                "methods: tools/list",
                "does not advertise the logging",
            ],
        );
        assert_eq!(o.details["advertises_deprecated_logging"], false);
    }

    #[test]
    fn timestamps_are_na() {
        for ev in [modern_results(&[true]), evidence(None, Vec::new())] {
            let o = run_rule(
                &AUDIT_CLOCK_SYNCHRONISED,
                &ev,
                &crate::fixture::cx("audit-clock-synchronised"),
            );
            assert_eq!(o.verdict, Verdict::NotApplicable, "{o:?}");
            has(&o, &["reported only", "timestamp", "transport "]);
        }
    }
    /// Every example bundle grades without panicking: reported-only checks are N/A on
    /// all of them, `identity-matches-baseline` is UNKNOWN without a baseline and PASS
    /// against itself, and `null-id-rejected` says its leg is missing (the examples predate
    /// it: an old bundle graded by a newer grader says so instead of guessing).
    #[test]
    fn example_bundles() {
        let graded = |id: &str| crate::rules::rule(id).expect("a rule");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        let mut paths: Vec<_> = [dir.clone(), dir.join("compat")]
            .iter()
            .flat_map(|d| std::fs::read_dir(d).expect("examples dir"))
            .map(|e| e.expect("dir entry").path())
            .filter(|p| p.extension().is_some_and(|x| x == "mcpev"))
            .collect();
        paths.sort();
        assert!(!paths.is_empty(), "no bundles in {}", dir.display());
        let reported: [&dyn Check; 7] = [
            graded("stdio-preferred"),
            graded("stdio-credentials"),
            graded("per-tool-authorization"),
            graded("annotations-not-authorization"),
            graded("no-shared-downstream-identity"),
            &LIFECYCLE_METADATA_RECORDED,
            &AUDIT_CLOCK_SYNCHRONISED,
        ];
        for p in &paths {
            let bytes = std::fs::read(p).expect("read bundle");
            let v = mcp_probe_schema::open(&bytes, &[]).expect("example verifies");
            let ev = Bundle::new(p.display().to_string(), v);
            let name = p.display();
            let none = Context::default();
            for c in reported {
                let o = run_rule(c, &ev, &none);
                assert_eq!(
                    o.verdict,
                    Verdict::NotApplicable,
                    "{} on {name}: {o:?}",
                    "a reported-only check"
                );
                assert!(
                    o.evidence.contains("transport "),
                    "{} on {name}",
                    o.evidence
                );
            }
            let own = Context {
                baseline: Some(&ev),
                updating_baseline: false,
                ..Context::default()
            };
            let without = run_rule(graded("identity-matches-baseline"), &ev, &none);
            let against_self = run_rule(graded("identity-matches-baseline"), &ev, &own);
            let null_id = run_rule(&null_id_rejected::NullIdRejected, &ev, &none);
            assert_eq!(
                without.verdict,
                Verdict::Unknown,
                "identity-matches-baseline on {name}: {without:?}"
            );
            if ev.revision().is_some() {
                assert_eq!(
                    against_self.verdict,
                    Verdict::Pass,
                    "identity-matches-baseline on {name}: {against_self:?}"
                );
                if p.parent().is_some_and(|d| d.ends_with("compat")) {
                    // Recorded by a collector that did not send the null-id leg yet: an old
                    // bundle graded by a newer grader says so instead of guessing.
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Error,
                        "null-id-rejected on {name}: {null_id:?}"
                    );
                    assert!(
                        null_id.evidence.contains(leg::NULL_ID.as_str())
                            && null_id.evidence.contains("missing"),
                        "null-id-rejected on {name}: {null_id:?}"
                    );
                } else if ev.is_modern() {
                    // Every lab server refuses "id": null on the 2026-07-28 path with
                    // 400 and -32600.
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Pass,
                        "null-id-rejected on {name}: {null_id:?}"
                    );
                } else {
                    // py1 (legacy only) treats it as a notification: 202, empty body.
                    assert_eq!(
                        null_id.verdict,
                        Verdict::Fail,
                        "null-id-rejected on {name}: {null_id:?}"
                    );
                    assert!(null_id.evidence.contains("202"), "{null_id:?}");
                }
            } else {
                // No session: the endpoint wanted a credential the run did not have, so
                // the runner's precondition decides before any leg is read.
                assert!(ev.session().is_some_and(|s| s.auth_required), "{name}");
                assert_eq!(
                    against_self.verdict,
                    Verdict::Unknown,
                    "identity-matches-baseline on {name}"
                );
                assert_eq!(
                    null_id.verdict,
                    Verdict::Unknown,
                    "null-id-rejected on {name}"
                );
            }
        }
    }
}
