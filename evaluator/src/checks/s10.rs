//! Section 10 checks: caching and resource limits.
//!
//! 10.1 in this build grades leg b from the endpoint's own `tools/list` response (the
//! first page the collector's inventory read: a shared leg, sent once) and records leg c
//! (the 2026-07-28 cacheable-result fields) as evidence. Leg a needs an operator-named
//! static resource path, which this collector does not fetch yet: it is UNKNOWN and says
//! so, never guessed (spec/checks.md §11.6).

use mcp_probe_schema::vocab::leg;
use serde_json::Value;

use crate::catalogue::{entry, Entry};
use crate::check::{Check, Context};
use crate::evidence::{Evidence, Exchange};
use crate::verdict::{Leg, LegOutcome, Outcome};

/// The checks of this section this build grades.
pub static CHECKS: &[&dyn Check] = &[&C10_1];

/// 10.1: static resources cached with freshness limits; per-user data never shared-cached.
#[derive(Debug)]
pub struct Check10_1;
/// The 10.1 check.
pub static C10_1: Check10_1 = Check10_1;

const REDUCTION_10_1: &str = "10.1b reads the endpoint's POST response to tools/list where the benchmark's audit \
     probes a GET of per-user content; shared caches do not store POST responses by default, so the exposure is \
     thinner than the audit's case. 10.1a (a static resource's validator and max-age) needs an operator-named path \
     and is not fetched by this build. 10.1c is evidence only (the benchmark calls the protocol-layer fields an \
     optional aid). Cache behaviour of intermediaries and of other paths is not observed.";

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

/// The status gate applied before headers are graded (spec/checks.md §11.6).
/// `Err((outcome, note))` when the status decides the leg.
fn status_gate(x: &Exchange<'_>, credential: bool) -> Result<u16, (LegOutcome, String)> {
    let Some(status) = x.status() else {
        let why = match &x.http.outcome {
            mcp_probe_schema::model::HttpOutcome::Error(e) => e.to_string(),
            _ => "no response".into(),
        };
        return Err((
            LegOutcome::Error,
            format!("no response to attribute a cache policy to ({why})"),
        ));
    };
    match status {
        304 => Ok(status),
        300..=399 => Err((LegOutcome::Unknown, format!("HTTP {status}: a redirect is not the resource (not followed)"))),
        401 if !credential => Err((
            LegOutcome::Unknown,
            "HTTP 401 to a request without a credential: the response is the challenge, not the content".into(),
        )),
        400.. => Err((LegOutcome::Error, format!("HTTP {status}: the cache policy of an error is not attributable"))),
        _ => Ok(status),
    }
}

/// The endpoint's own dynamic response: the first page of the first list the inventory
/// requested (tools/list preferred, as the spec names it).
fn dynamic_response(ev: &Evidence) -> Option<(Exchange<'_>, &'static str)> {
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

impl Check for Check10_1 {
    fn entry(&self) -> &'static Entry {
        entry("10.1").expect("10.1 in the catalogue")
    }

    fn legs_read(&self) -> &'static [&'static str] {
        &[leg::INVENTORY_TOOLS]
    }

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let mut legs = Vec::new();
        let static_path = ev
            .payload
            .run
            .inputs
            .as_ref()
            .and_then(|i| i.get("static_resource_path"))
            .and_then(Value::as_str);
        legs.push(Leg::new(
            "10.1a",
            LegOutcome::Unknown,
            match static_path {
                None => "no static resource path was given (probe input static_resource_path); no path is guessed, \
                         because a guessed path would belong to the vendor's web application, not the MCP server"
                    .to_string(),
                Some(p) => format!("static resource path {p:?} was given but this build does not fetch it yet"),
            },
        ));
        let mut records = Vec::new();
        let mut details = serde_json::Map::new();
        match dynamic_response(ev) {
            None => {
                let why = ev
                    .skipped(leg::INVENTORY_TOOLS)
                    .map(|r| format!("the endpoint's tools/list was {r}"))
                    .unwrap_or_else(|| "no list response of the endpoint was recorded".into());
                legs.push(Leg::new("10.1b", LegOutcome::Unknown, why.clone()));
                legs.push(Leg::new(
                    "10.1c",
                    LegOutcome::Observed,
                    "not read: no list result recorded",
                ));
            }
            Some((x, method)) => {
                records.push(x.seq());
                let credential = ev.authenticated();
                let substrate = format!(
                    "the endpoint's own {method} response (record #{}), graded as dynamic content",
                    x.seq()
                );
                let cc = x.header("cache-control");
                details.insert(
                    "endpoint_status".into(),
                    x.status().map(Value::from).unwrap_or(Value::Null),
                );
                details.insert(
                    "endpoint_cache_control".into(),
                    cc.clone().map(Value::from).unwrap_or(Value::Null),
                );
                match status_gate(&x, credential) {
                    Err((o, note)) => {
                        legs.push(Leg::new("10.1b", o, format!("{substrate}: {note}")))
                    }
                    Ok(status) => {
                        let dirs = directives(cc.as_deref());
                        let shown = match &cc {
                            None => "no Cache-Control header".to_string(),
                            Some(v) => format!("Cache-Control: {v}"),
                        };
                        let private = dirs
                            .as_ref()
                            .is_some_and(|d| d.iter().any(|x| x == "no-store" || x == "private"));
                        let (o, verdict) = if private {
                            (
                                LegOutcome::Pass,
                                "no-store/private keeps it out of shared caches",
                            )
                        } else if dirs
                            .as_ref()
                            .is_some_and(|d| d.iter().any(|x| x == "no-cache"))
                        {
                            (LegOutcome::Fail, "no-cache alone lets a shared cache store it (it only forces revalidation)")
                        } else {
                            (LegOutcome::Fail, "neither no-store nor private is present, so a shared cache may store it")
                        };
                        legs.push(Leg::new(
                            "10.1b",
                            o,
                            format!("{substrate}: HTTP {status}, {shown}; {verdict}"),
                        ));
                    }
                }
                legs.push(Leg::new(
                    "10.1c",
                    LegOutcome::Observed,
                    cacheable_fields(&x, ev.is_modern()),
                ));
            }
        }
        let mut out = Outcome::from_legs(legs, REDUCTION_10_1).with_records(records);
        out.details = details;
        out
    }
}

/// 10.1c: `resultType`, `ttlMs`, `cacheScope` on the result (2026-07-28 fields).
fn cacheable_fields(x: &Exchange<'_>, modern: bool) -> String {
    let Some(result) = x.answer().and_then(|a| a.get("result").cloned()) else {
        return "could not be read: the response carries no JSON-RPC result".into();
    };
    let fields = ["resultType", "ttlMs", "cacheScope"];
    let present: Vec<String> = fields
        .iter()
        .filter_map(|f| result.get(*f).map(|v| format!("{f}={v}")))
        .collect();
    let missing: Vec<&str> = fields
        .iter()
        .copied()
        .filter(|f| result.get(*f).is_none())
        .collect();
    if missing.is_empty() {
        format!("cacheable-result fields present: {}", present.join(", "))
    } else if modern {
        format!(
            "schema deviation under 2026-07-28: missing {}",
            missing.join(", ")
        )
    } else {
        format!(
            "the negotiated revision does not define {} yet",
            missing.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::grade::run;
    use crate::verdict::Verdict;
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
        run(&C10_1, &ev, &Context::default())
    }

    fn leg_of<'a>(o: &'a Outcome, id: &str) -> &'a Leg {
        o.legs.iter().find(|l| l.id == id).expect("leg")
    }

    #[test]
    fn json_without_cache_control_fails_b() {
        let o = grade_with(200, "application/json", OK, &[], "2025-11-25");
        assert_eq!(o.verdict, Verdict::Fail);
        assert_eq!(leg_of(&o, "10.1b").outcome, LegOutcome::Fail);
        assert!(
            leg_of(&o, "10.1b").note.contains("no Cache-Control header"),
            "{o:?}"
        );
        assert_eq!(leg_of(&o, "10.1a").outcome, LegOutcome::Unknown);
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
        assert_eq!(leg_of(&o, "10.1b").outcome, LegOutcome::Fail);
        assert!(leg_of(&o, "10.1b").note.contains("no-cache alone"));
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
        assert_eq!(leg_of(&o, "10.1b").outcome, LegOutcome::Pass);
        assert_eq!(
            o.verdict,
            Verdict::Unknown,
            "10.1a is unknown without an operator path"
        );
        let p = grade_with(
            200,
            "application/json",
            OK,
            &[("cache-control", "private")],
            "2025-11-25",
        );
        assert_eq!(leg_of(&p, "10.1b").outcome, LegOutcome::Pass);
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
        assert_eq!(leg_of(&o, "10.1b").outcome, LegOutcome::Fail);
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
        assert_eq!(leg_of(&o, "10.1b").outcome, LegOutcome::Error);
        assert_eq!(o.verdict, Verdict::Error);
        let r = grade_with(
            302,
            "text/html",
            "",
            &[("Location", "https://elsewhere/")],
            "2025-11-25",
        );
        assert_eq!(leg_of(&r, "10.1b").outcome, LegOutcome::Unknown);
    }

    #[test]
    fn modern_fields_observed_and_deviation_named() {
        let body = r#"{"jsonrpc":"2.0","id":3,"result":{"tools":[],"resultType":"complete","ttlMs":0,"cacheScope":"private"}}"#;
        let o = grade_with(200, "application/json", body, &[], "2026-07-28");
        assert!(
            leg_of(&o, "10.1c").note.contains("cacheScope=\"private\""),
            "{o:?}"
        );
        let d = grade_with(200, "application/json", OK, &[], "2026-07-28");
        assert!(leg_of(&d, "10.1c").note.contains("schema deviation"));
        let l = grade_with(200, "application/json", OK, &[], "2025-11-25");
        assert!(leg_of(&l, "10.1c").note.contains("does not define"));
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
        let o = run(&C10_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown);
        assert!(leg_of(&o, "10.1b").note.contains("capability"), "{o:?}");
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
