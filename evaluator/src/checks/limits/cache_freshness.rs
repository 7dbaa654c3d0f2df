//! Rule `cache-freshness`: static resources cached with freshness limits; per-user data
//! never shared-cached.
//!
//! Sub-verdict a is graded from the collector's `GET` of the operator-named static
//! resource (collector leg [`leg::STATIC_RESOURCE`], never with a credential; no path is
//! ever guessed, and a bundle without the record says why), sub-verdict b from the endpoint's own
//! `tools/list` response (the first page the collector's inventory read: a shared leg,
//! sent once), and sub-verdict c (the 2026-07-28 cacheable-result fields) is evidence only.
//! docs/checks.md states the rules under the row this rule grades.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{ErrorKind, HttpOutcome};
use mcp_probe_schema::tape::Json;
use mcp_probe_schema::vocab::{header, leg};
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Static resources cached with freshness limits; per-user data never shared-cached.
#[derive(Debug)]
pub struct CacheFreshness;
/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    crate::here!("b"),
    " reads the endpoint's POST response to tools/list where the benchmark's audit \
     probes a GET of per-user content; shared caches do not store POST responses by default, so the exposure is \
     thinner than the audit's case. ",
    crate::here!("a"),
    " (a static resource's validator and max-age) needs an operator-named path \
     (probe input static_resource_path) and grades that one resource only. ",
    crate::here!("c"),
    " is evidence only (the benchmark calls the protocol-layer fields an \
     optional aid). Cache behaviour of intermediaries and of other paths is not observed."
);

/// `Cache-Control` directives: comma-split, trimmed, lower-cased, empties dropped.
/// `None` when the header is absent (distinct from present and empty).
pub fn directives(value: Option<&str>) -> Option<Vec<String>> {
    value.map(|v| {
        v.split(',')
            .map(|d| d.trim().to_ascii_lowercase())
            .filter(|d| !d.is_empty())
            .collect()
    })
}

/// The status gate applied before headers are graded.
/// `Err((outcome, note))` when the status decides the leg.
fn status_gate(x: &Exchange<'_>, credential: bool) -> Result<u16, (SubOutcome, String)> {
    let Some(status) = x.status() else {
        let why = match &x.http.outcome {
            mcp_probe_schema::model::HttpOutcome::Error(e) => e.to_string(),
            _ => "no response".into(),
        };
        return Err((
            SubOutcome::Error,
            crate::format_exact!("no response to attribute a cache policy to ({why})"),
        ));
    };
    match status {
        304 => Ok(status),
        300..=399 => Err((SubOutcome::Unknown, crate::format_exact!("HTTP {status}: a redirect is not the resource (not followed)"))),
        401 if !credential => Err((
            SubOutcome::Unknown,
            "HTTP 401 to a request without a credential: the response is the challenge, not the content".into(),
        )),
        400.. => Err((SubOutcome::Error, crate::format_exact!("HTTP {status}: the cache policy of an error is not attributable"))),
        _ => Ok(status),
    }
}

/// The endpoint's own dynamic response: the first page of the first list the inventory
/// requested (tools/list preferred).
fn dynamic_response(ev: &Bundle) -> Option<(Exchange<'_>, &'static str)> {
    [
        (leg::INVENTORY_TOOLS, "tools/list"),
        (leg::INVENTORY_RESOURCES, "resources/list"),
        (leg::INVENTORY_PROMPTS, "prompts/list"),
        (
            leg::INVENTORY_RESOURCE_TEMPLATES,
            "resources/templates/list",
        ),
    ]
    .into_iter()
    .find_map(|(l, m)| ev.exchanges(l).next().map(|x| (x, m)))
}

impl Check for CacheFreshness {
    fn id(&self) -> &'static str {
        "cache-freshness"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(concat!(
            "on HTTP+SSE (2024-11-05) a list result arrives on the event stream: ",
            crate::here!("b"),
            " reads the \
             caching headers of the stream's GET, not of the POST acknowledgement"
        ))
    }

    /// [`leg::STATIC_RESOURCE`] is optional: a bundle without it (collected before the
    /// collector fetched it) grades sub-verdict a UNKNOWN saying so. The other inventory lists are read
    /// only when `tools/list` drew no exchange.
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::INVENTORY_TOOLS],
            &[
                leg::STATIC_RESOURCE,
                leg::INVENTORY_RESOURCES,
                leg::INVENTORY_PROMPTS,
                leg::INVENTORY_RESOURCE_TEMPLATES,
            ],
        )
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let mut records = Vec::new();
        let mut facts = CacheFreshnessFacts::default();
        let mut legs = vec![static_leg(ev, &mut records, &mut facts.static_resource)];
        match dynamic_response(ev) {
            None => {
                let why = ev
                    .skipped(leg::INVENTORY_TOOLS)
                    .map(|r| crate::format_exact!("the endpoint's tools/list was {r}"))
                    .unwrap_or_else(|| "no list response of the endpoint was recorded".into());
                legs.push(SubVerdict::new("b", SubOutcome::Unknown, why.clone()));
                legs.push(SubVerdict::new(
                    "c",
                    SubOutcome::Observed,
                    "not read: no list result recorded",
                ));
            }
            Some((answered, method)) => {
                records.push(answered.seq());
                // On HTTP+SSE the list result arrived on the event stream: its caching
                // headers are the stream's, not the POST acknowledgement's.
                let x = ev.answer_carrier(&answered);
                if x.seq() != answered.seq() {
                    records.push(x.seq());
                }
                let cc = x.header(header::CACHE_CONTROL);
                facts.endpoint = Some(EndpointFacts {
                    endpoint_status: x.status(),
                    endpoint_cache_control: cc.clone(),
                });
                legs.push(dynamic_leg(ev, &x, method, cc.as_deref()));
                legs.push(SubVerdict::new(
                    "c",
                    SubOutcome::Observed,
                    cacheable_fields(&answered, ev.is_modern()),
                ));
            }
        }
        Outcome::from_subs(legs, REDUCTION)
            .with_records(records)
            .with_facts(&facts)
    }
}

/// The details of this rule, in report order: the static resource's when it was fetched,
/// then the endpoint's when a list response was recorded.
#[derive(Debug, Default, Serialize)]
struct CacheFreshnessFacts {
    #[serde(flatten)]
    static_resource: Option<StaticFacts>,
    #[serde(flatten)]
    endpoint: Option<EndpointFacts>,
}

/// The fetched static resource (sub-verdict a).
#[derive(Debug, Serialize)]
struct StaticFacts {
    /// The URL fetched.
    static_url: String,
    /// Its HTTP status, null without a response.
    static_status: Option<u16>,
    /// Its `Cache-Control`, null when absent.
    static_cache_control: Option<String>,
}

/// The endpoint's own list response (sub-verdict b).
#[derive(Debug, Serialize)]
struct EndpointFacts {
    /// Its HTTP status, null without a response.
    endpoint_status: Option<u16>,
    /// Its `Cache-Control`, null when absent.
    endpoint_cache_control: Option<String>,
}

/// Sub-verdict b: the endpoint's own list response (`x`, answering `method`) graded as
/// dynamic content: `no-store` or `private` keeps it out of shared caches.
fn dynamic_leg(ev: &Bundle, x: &Exchange<'_>, method: &str, cc: Option<&str>) -> SubVerdict {
    let substrate = if ev.is_sse() {
        crate::format_exact!(
            "the HTTP+SSE event stream (record #{}) that carried the endpoint's own {method} result, \
             graded as dynamic content",
            x.seq()
        )
    } else {
        crate::format_exact!(
            "the endpoint's own {method} response (record #{}), graded as dynamic content",
            x.seq()
        )
    };
    let status = match status_gate(x, ev.authenticated()) {
        Err((o, note)) => {
            return SubVerdict::new("b", o, crate::format_exact!("{substrate}: {note}"))
        }
        Ok(status) => status,
    };
    let dirs = directives(cc);
    let shown = match cc {
        None => "no Cache-Control header".to_string(),
        Some(v) => crate::format_exact!("Cache-Control: {v}"),
    };
    let private = dirs
        .as_ref()
        .is_some_and(|d| d.iter().any(|x| x == "no-store" || x == "private"));
    let (o, verdict) = if private {
        (
            SubOutcome::Pass,
            "no-store/private keeps it out of shared caches",
        )
    } else if dirs
        .as_ref()
        .is_some_and(|d| d.iter().any(|x| x == "no-cache"))
    {
        (
            SubOutcome::Fail,
            "no-cache alone lets a shared cache store it (it only forces revalidation)",
        )
    } else {
        (
            SubOutcome::Fail,
            "neither no-store nor private is present, so a shared cache may store it",
        )
    };
    SubVerdict::new(
        "b",
        o,
        crate::format_exact!("{substrate}: HTTP {status}, {shown}; {verdict}"),
    )
}

/// True when `token` is `max-age=<digits>` exactly (`s-maxage=60`, `max-age=60x` and
/// `max-age=` do not count).
fn is_max_age(token: &str) -> bool {
    token
        .strip_prefix("max-age=")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Sub-verdict a: the operator's static resource. Graded from the [`leg::STATIC_RESOURCE`]
/// record when there is one; a skipped leg is UNKNOWN with the
/// collector's reason; a bundle without the record (an older collector) is UNKNOWN and
/// says whether the input was given. No path is ever guessed.
fn static_leg(ev: &Bundle, records: &mut Vec<u64>, facts: &mut Option<StaticFacts>) -> SubVerdict {
    const ID: &str = "a";
    let Some(x) = ev.exchanges(leg::STATIC_RESOURCE).last() else {
        if let Some(reason) = ev.skipped(leg::STATIC_RESOURCE) {
            return SubVerdict::new(
                ID,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the static resource was not fetched ({})",
                    crate::fmt::Line(reason)
                ),
            );
        }
        let static_path = ev
            .payload
            .run
            .inputs
            .as_ref()
            .and_then(|i| i.get("static_resource_path"))
            .and_then(Value::as_str);
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            match static_path {
                None => "no static resource path was given (probe input static_resource_path); no path is guessed, \
                         because a guessed path would belong to the vendor's web application, not the MCP server"
                    .to_string(),
                Some(p) => crate::format_exact!(
                    "static resource path {:?} was given but this bundle holds no {} record (collected before the \
                     collector fetched it)",
                    escape_line(p),
                    leg::STATIC_RESOURCE
                ),
            },
        );
    };
    records.push(x.seq());
    let url = escape_line(&x.http.request.url);
    let subject = crate::format_exact!("GET {url} (record #{}, no credential)", x.seq());
    let cc = x.header(header::CACHE_CONTROL);
    *facts = Some(StaticFacts {
        static_url: url.clone(),
        static_status: x.status(),
        static_cache_control: cc.clone(),
    });
    if let HttpOutcome::Error(e) = &x.http.outcome {
        if e.kind == ErrorKind::RefusedByGuard {
            return SubVerdict::new(
                ID,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{subject}: the network guard refused to send it ({})",
                    crate::fmt::Line(&e.message)
                ),
            );
        }
    }
    // The collector never sends a credential here; should a record carry one, a 401 is
    // read accordingly.
    let credential = derive::header(&x.http.request.headers, header::AUTHORIZATION).is_some();
    let status = match status_gate(&x, credential) {
        Err((o, note)) => return SubVerdict::new(ID, o, crate::format_exact!("{subject}: {note}")),
        Ok(status) => status,
    };
    let dirs = directives(cc.as_deref()).unwrap_or_default();
    let shown = match &cc {
        None => "no Cache-Control header".to_string(),
        Some(v) => crate::format_exact!("Cache-Control: {}", crate::fmt::Line(v)),
    };
    let non_shareable: Vec<&str> = dirs
        .iter()
        .map(String::as_str)
        .filter(|d| *d == "no-store" || *d == "private")
        .collect();
    let max_age = dirs.iter().find(|d| is_max_age(d));
    let validators: Vec<&str> = ["ETag", "Last-Modified"]
        .into_iter()
        .filter(|h| x.header(h).is_some())
        .collect();
    let head = crate::format_exact!("{subject}: HTTP {status}, {shown}");
    if !non_shareable.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "{head}; {} contradicts caching a static resource (checked before the validator)",
                non_shareable.join(" and ")
            ),
        );
    }
    match (validators.is_empty(), max_age) {
        (false, Some(m)) => SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "{head}; validator {} and {m}: cacheable with a freshness limit",
                validators.join(" and ")
            ),
        ),
        (no_validator, m) => {
            let mut lacks = Vec::new();
            if no_validator {
                lacks.push("a validator (neither ETag nor Last-Modified)");
            }
            if m.is_none() {
                lacks.push("a max-age=N directive");
            }
            SubVerdict::new(
                ID,
                SubOutcome::Fail,
                crate::format_exact!("{head}; lacks {}", lacks.join(" and ")),
            )
        }
    }
}

/// Sub-verdict c: `resultType`, `ttlMs`, `cacheScope` on the result (2026-07-28 fields).
fn cacheable_fields(x: &Exchange<'_>, modern: bool) -> String {
    if let Some(cut) = x.cut() {
        return crate::format_exact!("could not be read: {cut}");
    }
    // A list page: its answer is read from the tapes the inventory read it into.
    let msgs = x.tapes();
    match x.answer_in(&msgs).and_then(|a| a.get("result")) {
        Some(result) => cacheable_fields_of(result, modern),
        None => "could not be read: the response carries no JSON-RPC result".into(),
    }
}

/// [`cacheable_fields`] of a result read.
fn cacheable_fields_of(result: Json<'_>, modern: bool) -> String {
    let fields = ["resultType", "ttlMs", "cacheScope"];
    let present: Vec<String> = fields
        .iter()
        .filter_map(|f| {
            result
                .get(f)
                .map(|v| crate::format_exact!("{f}={}", v.to_value()))
        })
        .collect();
    let missing: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|f| result.get(f).is_none())
        .collect();
    if missing.is_empty() {
        crate::format_exact!("cacheable-result fields present: {}", present.join(", "))
    } else if modern {
        crate::format_exact!(
            "schema deviation under 2026-07-28: missing {}",
            missing.join(", ")
        )
    } else {
        crate::format_exact!(
            "the negotiated revision does not define {} yet",
            missing.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::sub as sub_of;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{Header, Observation, Record, TransportError};
    use serde_json::json;

    const REQ: &str = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#;
    const OK: &str = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}"#;

    fn grade_with(
        status: u16,
        ctype: &str,
        body: &str,
        headers: &[(&str, &str)],
        rev: &str,
    ) -> Outcome {
        let ev = evidence(
            Some(session(Some(rev), json!({"tools": {}}), None)),
            vec![exchange(
                &[leg::INVENTORY_TOOLS],
                REQ,
                status,
                ctype,
                body,
                headers,
            )],
        );
        run_rule(&CacheFreshness, &ev, &Context::default())
    }

    #[test]
    fn json_without_cache_control_fails_b() {
        let o = grade_with(200, "application/json", OK, &[], "2025-11-25");
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Fail);
        assert!(
            sub_of(&o, "b").note.contains("no Cache-Control header"),
            "{o:?}"
        );
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown);
        assert!(o.records.contains(&0));
    }

    #[test]
    fn no_cache_alone_fails() {
        let o = grade_with(
            200,
            "text/event-stream",
            "data: {}\n\n",
            &[("Cache-Control", "no-cache, no-transform")],
            "2025-11-25",
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Fail);
        assert!(sub_of(&o, "b").note.contains("no-cache alone"));
    }

    #[test]
    fn no_store_passes_b_but_a_keeps_the_check_unknown() {
        let o = grade_with(
            200,
            "application/json",
            OK,
            &[("Cache-Control", "No-Store, max-age=0")],
            "2025-11-25",
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Pass);
        assert_eq!(
            o.verdict,
            Verdict::Unknown,
            "leg a is unknown without an operator path"
        );
        let p = grade_with(
            200,
            "application/json",
            OK,
            &[("cache-control", "private")],
            "2025-11-25",
        );
        assert_eq!(sub_of(&p, "b").outcome, SubOutcome::Pass);
    }

    #[test]
    fn whole_tokens_only() {
        let o = grade_with(
            200,
            "application/json",
            OK,
            &[("Cache-Control", "no-store-remote, privately")],
            "2025-11-25",
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Fail);
    }

    #[test]
    fn error_statuses_are_not_attributable() {
        let o = grade_with(
            502,
            "text/html",
            "<html>bad gateway</html>",
            &[],
            "2025-11-25",
        );
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Error);
        assert_eq!(o.verdict, Verdict::Error);
        let r = grade_with(
            302,
            "text/html",
            "",
            &[("Location", "https://elsewhere/")],
            "2025-11-25",
        );
        assert_eq!(sub_of(&r, "b").outcome, SubOutcome::Unknown);
    }

    #[test]
    fn modern_fields_observed_and_deviation_named() {
        let body = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#;
        let o = grade_with(200, "application/json", body, &[], "2026-07-28");
        assert!(
            sub_of(&o, "c").note.contains("cacheScope=\"private\""),
            "{o:?}"
        );
        let d = grade_with(200, "application/json", OK, &[], "2026-07-28");
        assert!(sub_of(&d, "c").note.contains("schema deviation"));
        let l = grade_with(200, "application/json", OK, &[], "2025-11-25");
        assert!(sub_of(&l, "c").note.contains("does not define"));
    }

    #[test]
    fn tools_not_listed_is_unknown_with_the_reason() {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({}), None)),
            vec![skipped(
                &[leg::INVENTORY_TOOLS],
                "not requested: the server did not advertise the \"tools\" capability",
            )],
        );
        let o = run_rule(&CacheFreshness, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(sub_of(&o, "b").note.contains("capability"), "{o:?}");
    }

    /// A bundle with the endpoint's tools/list answered `endpoint_cc` and the static GET
    /// answered `status` with `headers`.
    fn with_static(endpoint_cc: &str, static_record: Record) -> Outcome {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            vec![
                exchange(
                    &[leg::INVENTORY_TOOLS],
                    REQ,
                    200,
                    "application/json",
                    OK,
                    &[("Cache-Control", endpoint_cc)],
                ),
                static_record,
            ],
        );
        run_rule(&CacheFreshness, &ev, &Context::default())
    }

    fn static_get(status: u16, headers: &[(&str, &str)]) -> Record {
        let mut r = exchange(
            &[leg::STATIC_RESOURCE],
            "",
            status,
            "application/javascript",
            "console.log(1)",
            headers,
        );
        if let Observation::Http(x) = &mut r.observation {
            x.request.method = "GET".into();
            x.request.url = "http://127.0.0.1:8080/static/app.js".into();
            x.request.headers = vec![Header::new("Accept", "*/*")];
        }
        r
    }

    /// A `no-store` endpoint and a static resource answered 200 with an ETag and
    /// `cache_control`.
    fn with_etag_static(cache_control: &str) -> Outcome {
        with_static(
            "no-store",
            static_get(
                200,
                &[("ETag", "\"abc\""), ("Cache-Control", cache_control)],
            ),
        )
    }

    #[test]
    fn static_with_validator_and_max_age_passes() {
        let o = with_etag_static("public, Max-Age=3600");
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass, "{o:?}");
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        assert!(
            sub_of(&o, "a")
                .note
                .contains("validator ETag and max-age=3600"),
            "{o:?}"
        );
        assert!(sub_of(&o, "a").note.contains("record #1"), "{o:?}");
        assert_eq!(o.records, vec![0, 1]);
        assert_eq!(o.details["static_status"], 200);
        assert_eq!(
            o.details["static_url"],
            "http://127.0.0.1:8080/static/app.js"
        );
        // A 304 carries the same headers and is graded.
        let n = with_static(
            "no-store",
            static_get(
                304,
                &[
                    ("Last-Modified", "Tue, 01 Dec 2026 00:00:00 GMT"),
                    ("Cache-Control", "max-age=60"),
                ],
            ),
        );
        assert_eq!(sub_of(&n, "a").outcome, SubOutcome::Pass, "{n:?}");
    }

    #[test]
    fn static_marked_no_store_fails_before_the_validator() {
        let o = with_etag_static("max-age=3600, no-store");
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Fail, "{o:?}");
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            sub_of(&o, "a").note.contains("no-store contradicts"),
            "{o:?}"
        );
    }

    #[test]
    fn static_lacking_validator_or_whole_max_age_fails() {
        let o = with_etag_static("s-maxage=60, max-age=60x");
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Fail, "{o:?}");
        assert!(sub_of(&o, "a").note.contains("lacks a max-age=N"), "{o:?}");
        let v = with_static(
            "no-store",
            static_get(200, &[("Cache-Control", "max-age=60")]),
        );
        assert_eq!(sub_of(&v, "a").outcome, SubOutcome::Fail, "{v:?}");
        assert!(sub_of(&v, "a").note.contains("lacks a validator"), "{v:?}");
        let n = with_static("no-store", static_get(200, &[]));
        assert!(
            sub_of(&n, "a").note.contains("no Cache-Control header")
                && sub_of(&n, "a").note.contains("validator")
                && sub_of(&n, "a").note.contains("max-age"),
            "{n:?}"
        );
    }

    #[test]
    fn static_status_gate() {
        let o = with_static("no-store", static_get(401, &[]));
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown, "{o:?}");
        assert!(sub_of(&o, "a").note.contains("without a credential"));
        let o = with_static("no-store", static_get(404, &[]));
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Error, "{o:?}");
        assert_eq!(o.verdict, Verdict::Error);
        let o = with_static("no-store", static_get(301, &[("Location", "/x")]));
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown, "{o:?}");
        let mut g = static_get(200, &[]);
        if let Observation::Http(x) = &mut g.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::RefusedByGuard,
                message: "private address".into(),
            });
        }
        let o = with_static("no-store", g);
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown, "{o:?}");
        assert!(sub_of(&o, "a").note.contains("guard"), "{o:?}");
        let mut t = static_get(200, &[]);
        if let Observation::Http(x) = &mut t.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Timeout,
                message: "30 s".into(),
            });
        }
        let o = with_static("no-store", t);
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Error, "{o:?}");
    }

    #[test]
    fn static_skipped_or_absent_is_unknown() {
        let o = with_static(
            "no-store",
            skipped(
                &[leg::STATIC_RESOURCE],
                "not sent: static_resource_path https://cdn.example/app.js is not on the endpoint's host",
            ),
        );
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown, "{o:?}");
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(
            sub_of(&o, "a").note.contains("not on the endpoint's host"),
            "{o:?}"
        );
        let mut ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            vec![exchange(
                &[leg::INVENTORY_TOOLS],
                REQ,
                200,
                "application/json",
                OK,
                &[],
            )],
        );
        ev.payload_mut().run.inputs = Some(json!({"static_resource_path": "/static/app.js"}));
        let o = run_rule(&CacheFreshness, &ev, &Context::default());
        assert!(
            sub_of(&o, "a")
                .note
                .contains(&format!("holds no {} record", leg::STATIC_RESOURCE)),
            "{o:?}"
        );
    }

    #[test]
    fn max_age_tokens() {
        assert!(is_max_age("max-age=0"));
        assert!(is_max_age("max-age=31536000"));
        assert!(!is_max_age("max-age="));
        assert!(!is_max_age("max-age=60x"));
        assert!(!is_max_age("s-maxage=60"));
        assert!(!is_max_age("max-age=-1"));
    }

    #[test]
    fn directive_parsing_distinguishes_absent_and_empty() {
        assert_eq!(directives(None), None);
        assert_eq!(directives(Some(" , ")), Some(vec![]));
        assert_eq!(
            directives(Some("No-Store , MAX-AGE=5")),
            Some(vec!["no-store".into(), "max-age=5".into()])
        );
    }
}
