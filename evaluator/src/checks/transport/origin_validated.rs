//! Rule `origin-validated`: Origin validated on all requests.
//!
//! Three complete `tools/list` requests differ only in the `Origin` header: a hostile
//! one, the endpoint's own (the stand-in for the operator's allowlist) and none. The
//! hostile answer is graded only once the own-origin request was accepted, so a refusal
//! is shown to depend on the Origin; the no-Origin answer is informational.
//! docs/checks.md states the rules under the row this rule grades.

use mcp_probe_schema::derive;
use mcp_probe_schema::vocab::{header, leg, LegId, REV_2025_11_25};
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::checks::common::policy::{absent, approved, Approved};
use crate::checks::common::response::{answer, Answer, Kind, Resp};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, Verdict};
use mcp_probe_schema::model::Era;

/// The Origin the collector sends on the hostile leg (docs/collector.md); the recorded
/// header is quoted when present.
pub use mcp_probe_schema::vocab::probe::HOSTILE_ORIGIN;

/// Origin validated on all requests.
#[derive(Debug)]
pub struct OriginValidated;

/// The reduction when no policy states the allowed origins (`absent` says why).
fn reduction(absent: &str) -> String {
    crate::format_exact!(
        "the operator's Origin allowlist is not discoverable ({absent}): the endpoint's own origin \
         stands in for it (a deployment whose allowlist excludes its own origin reads UNKNOWN); only \
         POST requests are probed (GET streams, DELETE and CORS preflight are not); the no-Origin \
         request is informational (non-browser clients send none)"
    )
}

/// The reduction when the operator's policy states the allowed origins.
const REDUCTION_POLICY: &str = "the Origin allowlist is the policy's allowed_origins; the collector \
     probes one allowed Origin (the probe input allowed_origin, else the endpoint's own origin) and one hostile \
     Origin, not every entry; only POST requests are probed (GET streams, DELETE and CORS preflight are not); \
     the no-Origin request is informational (non-browser clients send none)";

/// The policy key this rule reads.
const ALLOWED_ORIGINS: &str = "allowed_origins";

/// True when `origin` is one of `list` (origins compare without regard to ASCII case).
fn listed(list: &[String], origin: &str) -> bool {
    list.iter().any(|a| {
        a.trim_end_matches('/')
            .eq_ignore_ascii_case(origin.trim_end_matches('/'))
    })
}

/// The verdict when the policy's allowlist does not hold the control Origin the bundle sent: that
/// request is a second Origin the server must refuse, and no allowed Origin was probed,
/// so an acceptance of either fails and a refusal cannot be shown to depend on the Origin.
fn judge_unlisted_control(
    hostile: &Answer,
    own: &Answer,
    hostile_origin: &str,
    own_origin: Option<&str>,
    a: Approved<'_>,
) -> (Verdict, String) {
    let source = crate::format_exact!(
        "the policy's {ALLOWED_ORIGINS} ({}: {})",
        crate::fmt::Line(a.file),
        crate::fmt::Line(&a.list.join(", "))
    );
    let own_origin = own_origin
        .map(escape_line)
        .unwrap_or_else(|| "(no Origin recorded)".into());
    let mut shown = Vec::new();
    for (origin, ans) in [(escape_line(hostile_origin), hostile), (own_origin, own)] {
        match ans {
            Answer::Response(r) if r.kind() == Kind::Accepted => {
                return (
                    Verdict::Fail,
                    crate::format_exact!(
                    "Origin {origin} (record #{}): {}: accepted although it is not among {source}",
                    r.seq,
                    r.described()
                ),
                )
            }
            Answer::Response(r) => shown.push(crate::format_exact!(
                "Origin {origin} (record #{}): {}",
                r.seq,
                r.described()
            )),
            Answer::NoResponse { seq, why } => shown.push(crate::format_exact!(
                "Origin {origin} (record #{seq}): no response ({why})"
            )),
            Answer::Skipped(reason) => {
                shown.push(crate::format_exact!("Origin {origin}: not sent ({reason})"))
            }
            Answer::Missing => shown.push(crate::format_exact!("Origin {origin}: not recorded")),
        }
    }
    (
        Verdict::Unknown,
        crate::format_exact!(
            "{}: neither Origin is among {source}, so no allowed Origin was probed and a refusal is not \
             shown to depend on the Origin; give allowed_origin in the probe inputs",
            shown.join("; ")
        ),
    )
}

impl Check for OriginValidated {
    fn id(&self) -> &'static str {
        "origin-validated"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) the Origin legs are POSTs to the message URL; the stream's \
             GET was sent without an Origin and was not probed with a hostile one",
        )
    }

    /// The no-Origin leg is informational: read when present, never graded.
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(&[leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN], &[leg::ORIGIN_NONE])
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let hostile = answer(ev, leg::ORIGIN_HOSTILE);
        let own = answer(ev, leg::ORIGIN_OWN);
        let no_origin = answer(ev, leg::ORIGIN_NONE);
        let hostile_origin = request_header(ev, leg::ORIGIN_HOSTILE, header::ORIGIN)
            .unwrap_or_else(|| HOSTILE_ORIGIN.into());
        let own_origin = request_header(ev, leg::ORIGIN_OWN, header::ORIGIN);
        let policy = approved(cx, ALLOWED_ORIGINS, |d| d.allowed_origins.as_ref());
        let (verdict, text) = match policy {
            Some(a) if !own_origin.as_deref().is_some_and(|o| listed(a.list, o)) => {
                judge_unlisted_control(&hostile, &own, &hostile_origin, own_origin.as_deref(), a)
            }
            _ => judge_origin(ev, &hostile, &own, &hostile_origin, own_origin.as_deref()),
        };
        let text = match policy {
            Some(a) if own_origin.as_deref().is_some_and(|o| listed(a.list, o)) => {
                crate::format_exact!(
                    "{text}; the control Origin is among the policy's {ALLOWED_ORIGINS} ({}: {})",
                    crate::fmt::Line(a.file),
                    crate::fmt::Line(&a.list.join(", "))
                )
            }
            _ => text,
        };
        let reduction = if policy.is_some() {
            REDUCTION_POLICY.to_string()
        } else {
            reduction(&absent(cx, ALLOWED_ORIGINS))
        };
        let info = match &no_origin {
            Answer::Response(r) => crate::format_exact!(
                "no-Origin request (record #{}): {} (informational)",
                r.seq,
                r.status_label()
            ),
            Answer::NoResponse { seq, why } => {
                crate::format_exact!(
                    "no-Origin request (record #{seq}): no response ({why}) (informational)"
                )
            }
            Answer::Skipped(reason) => {
                crate::format_exact!("no-Origin request not sent ({reason})")
            }
            Answer::Missing => "no-Origin request not recorded".into(),
        };
        let records: Vec<u64> = [leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN, leg::ORIGIN_NONE]
            .iter()
            .flat_map(|l| ev.records_for(*l).map(|r| r.seq))
            .collect();
        Outcome::single(verdict, crate::format_exact!("{text}; {info}"), reduction)
            .with_records(records)
            .with_facts(&OriginValidatedFacts {
                hostile_status: hostile.status(),
                hostile_origin,
                allowed_origin_probed: own_origin,
                allowed_origin_status: own.status(),
                no_origin_status: no_origin.status(),
                negotiated_revision: ev.revision().map(str::to_string),
            })
    }
}

/// The details of `origin-validated`, in report order (absent values are null).
#[derive(Debug, Serialize)]
struct OriginValidatedFacts {
    /// The Origin sent on the hostile leg.
    hostile_origin: String,
    /// Its HTTP status.
    hostile_status: Option<u16>,
    /// The endpoint's own origin, sent as the allowlist stand-in.
    allowed_origin_probed: Option<String>,
    /// Its HTTP status.
    allowed_origin_status: Option<u16>,
    /// HTTP status of the request without Origin.
    no_origin_status: Option<u16>,
    /// The negotiated revision.
    negotiated_revision: Option<String>,
}

/// Decide from the hostile leg gated on the own-origin stand-in (docs/checks.md, under
/// the rule's row); revisions from 2025-11-25 on require the 403.
fn judge_origin(
    ev: &Bundle,
    hostile: &Answer,
    own: &Answer,
    hostile_origin: &str,
    own_origin: Option<&str>,
) -> (Verdict, String) {
    let own_origin = own_origin
        .map(escape_line)
        .unwrap_or_else(|| "(no Origin recorded)".into());
    for (what, a) in [("hostile-Origin", hostile), ("own-Origin", own)] {
        match a {
            Answer::Skipped(reason) => {
                return (
                    Verdict::Unknown,
                    crate::format_exact!("the {what} request was not sent ({reason}); a full run decides"),
                )
            }
            Answer::NoResponse { seq, why } => {
                return (
                    Verdict::Error,
                    crate::format_exact!("the {what} request (record #{seq}) drew no response ({why}): the observation was never made"),
                )
            }
            Answer::Missing => unreachable!("the runner requires both legs"),
            Answer::Response(_) => {}
        }
    }
    let (Answer::Response(h), Answer::Response(o)) = (hostile, own) else {
        unreachable!("every other shape returned above")
    };
    let hostile_shown = crate::fmt::Line(hostile_origin);
    let hs = Said {
        what: "Origin",
        origin: &hostile_shown,
        r: h,
    };
    let os = Said {
        what: "own Origin",
        origin: &own_origin,
        r: o,
    };
    // A hostile Origin given a result or a stream is the failure itself, whatever the
    // stand-in shows.
    if h.kind() == Kind::Accepted {
        return (
            Verdict::Fail,
            crate::format_exact!("{hs}: accepted, so the server does not validate Origin (no DNS-rebinding protection); {os}"),
        );
    }
    if o.status == 400 {
        return (
            Verdict::Error,
            crate::format_exact!(
                "{hs}; {os}: the request with the endpoint's own Origin was refused with 400 too, so it was \
                 rejected before the Origin was evaluated (e.g. a header or session problem of the probe)"
            ),
        );
    }
    match o.kind() {
        Kind::Accepted => {}
        Kind::Unattributable => {
            return (
                Verdict::Error,
                crate::format_exact!("{hs}; {os}: the stand-in's answer is not attributable to the server (a gateway may have produced it)"),
            )
        }
        Kind::Redirect | Kind::Refused => {
            let why = match o.status {
                401 => "refused at authentication (an expired or missing credential masks the Origin decision; \
                        re-run with a valid credential)",
                403 => "forbidden as well (the own origin may not be on the allowlist; re-run with the real \
                        allowlisted Origin)",
                300..=399 => "redirected (not followed)",
                _ => "not accepted",
            };
            return (
                Verdict::Unknown,
                crate::format_exact!("{hs}; {os}: the stand-in was {why}, so the hostile leg's answer is not shown to depend on the Origin"),
            );
        }
    }
    let rev = ev.revision().unwrap_or("no revision");
    let fixed = rev >= REV_2025_11_25;
    match h.kind() {
        Kind::Accepted => unreachable!("handled above"),
        Kind::Refused if h.status == 403 => (
            Verdict::Pass,
            crate::format_exact!("{hs}: refused with 403 while {os}: accepted, so the Origin is validated on the request itself"),
        ),
        Kind::Refused if fixed => (
            Verdict::Fail,
            crate::format_exact!(
                "{hs}: refused with HTTP {} rather than 403 while {os}: accepted; {REV_2025_11_25} and later \
                 (negotiated: {}) require 403 for an invalid Origin (the only difference between the two \
                 requests is the Origin, though the refusal may not be an Origin decision)",
                h.status,
                crate::fmt::Line(rev)
            ),
        ),
        Kind::Refused => (
            Verdict::Pass,
            crate::format_exact!(
                "{hs}: refused while {os}: accepted, so the Origin is validated; deviation: HTTP {} rather than \
                 403, which the negotiated revision {} does not fix ({REV_2025_11_25} and later require 403)",
                h.status,
                crate::fmt::Line(rev)
            ),
        ),
        Kind::Redirect => (
            Verdict::Unknown,
            crate::format_exact!("{hs}: redirected (not followed) while {os}: accepted; where the redirect leads was not observed"),
        ),
        Kind::Unattributable => (
            Verdict::Error,
            crate::format_exact!(
                "{hs}: not attributable to the server (a gateway may have produced it) while {os}: accepted"
            ),
        ),
    }
}

/// One leg's answer as the evidence names it (`Origin … (record #n): HTTP 403 …`), as a
/// format argument: written into the sentence that names it, with no string of its own.
struct Said<'a> {
    /// Which Origin the leg sent (`Origin`, `own Origin`).
    what: &'static str,
    /// The Origin, as shown.
    origin: &'a dyn std::fmt::Display,
    /// The leg's answer.
    r: &'a Resp,
}

impl std::fmt::Display for Said<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} (record #{}): {}",
            self.what,
            self.origin,
            self.r.seq,
            self.r.described()
        )
    }
}

/// The recorded request's header `name`, as text.
fn request_header(ev: &Bundle, l: LegId, name: &str) -> Option<String> {
    ev.exchanges(l).last().and_then(|x| {
        derive::header(&x.http.request.headers, name).map(|h| escape_line(&h.value_str()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::response::testing::{
        failed, has, with_request_header, OK, REQ, SSE_OK,
    };
    use crate::fixture::{evidence, example_bundles as examples, exchange, session, skipped};
    /// The rule graded directly, rendered outside any definition (local names).
    fn run(
        check: &dyn crate::check::Check,
        ev: &crate::evidence::Bundle,
        cx: &crate::check::Context<'_>,
    ) -> crate::verdict::Outcome {
        crate::fixture::local(crate::preconditions::run_rule(check, ev, cx))
    }
    use mcp_probe_schema::model::{ErrorKind, Record};
    use serde_json::json;

    fn origin_leg(l: LegId, origin: Option<&str>, status: u16, ct: &str, body: &str) -> Record {
        let r = exchange(&[l], REQ, status, ct, body, &[]);
        match origin {
            Some(o) => with_request_header(r, "Origin", o),
            None => r,
        }
    }

    fn grade(rev: &str, hostile: (u16, &str, &str), own: (u16, &str, &str)) -> Outcome {
        grade_policy(rev, hostile, own, None)
    }

    fn grade_policy(
        rev: &str,
        hostile: (u16, &str, &str),
        own: (u16, &str, &str),
        allowed: Option<&[&str]>,
    ) -> Outcome {
        let records = vec![
            origin_leg(
                leg::ORIGIN_HOSTILE,
                Some(HOSTILE_ORIGIN),
                hostile.0,
                hostile.1,
                hostile.2,
            ),
            origin_leg(
                leg::ORIGIN_OWN,
                Some("http://127.0.0.1:8080"),
                own.0,
                own.1,
                own.2,
            ),
            origin_leg(leg::ORIGIN_NONE, None, 200, "application/json", OK),
        ];
        let ev = evidence(
            Some(session(Some(rev), json!({"tools": {}}), None)),
            records,
        );
        match allowed {
            None => run(&OriginValidated, &ev, &Context::default()),
            Some(list) => {
                let p = crate::checks::common::oauth::testing::applied(crate::policy::Decisions {
                    allowed_origins: Some(list.iter().map(|s| s.to_string()).collect()),
                    ..Default::default()
                });
                crate::checks::common::oauth::testing::grade_with(&OriginValidated, &ev, &p)
            }
        }
    }

    #[test]
    fn the_policy_allowlist_replaces_the_own_origin_stand_in() {
        let refused = (403, "text/plain", "Invalid Origin header");
        // The control (own origin) is on the list: graded as without a policy, and the
        // evidence names the key and the file.
        let o = grade_policy(
            "2026-07-28",
            refused,
            ACCEPTED,
            Some(&["http://127.0.0.1:8080", "https://app.example"]),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(&o, &["among the policy's allowed_origins (policy.toml"]);
        assert!(
            o.reduction.contains("the policy's allowed_origins"),
            "{}",
            o.reduction
        );
        // The control is not on the list and was accepted: a second Origin outside the
        // allowlist accepted is a failure (it passes without the policy).
        let o = grade_policy(
            "2026-07-28",
            refused,
            ACCEPTED,
            Some(&["https://app.example"]),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            &[
                "Origin http://127.0.0.1:8080",
                "accepted although it is not among the policy's allowed_origins",
            ],
        );
        assert_eq!(
            grade("2026-07-28", refused, ACCEPTED).verdict,
            Verdict::Pass
        );
        // Both refused, neither listed: no allowed Origin was probed, so UNKNOWN naming the
        // input that would decide it.
        let o = grade_policy(
            "2026-07-28",
            refused,
            refused,
            Some(&["https://app.example"]),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            &[
                "no allowed Origin was probed",
                "allowed_origin in the probe inputs",
            ],
        );
        // Case and a trailing slash do not make an origin another one.
        let o = grade_policy(
            "2026-07-28",
            refused,
            ACCEPTED,
            Some(&["HTTP://127.0.0.1:8080/"]),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
    }

    const ACCEPTED: (u16, &str, &str) = (200, "application/json", OK);

    #[test]
    fn hostile_403_own_accepted_passes() {
        let o = grade(
            "2026-07-28",
            (403, "text/plain", "Invalid Origin header"),
            ACCEPTED,
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "refused with 403",
                "Invalid Origin header",
                "own Origin http://127.0.0.1:8080",
                "informational",
            ],
        );
        assert_eq!(o.details["hostile_status"], 403);
        assert_eq!(o.details["allowed_origin_status"], 200);
        assert_eq!(o.details["no_origin_status"], 200);
        assert_eq!(o.details["hostile_origin"], HOSTILE_ORIGIN);
        assert_eq!(o.details["allowed_origin_probed"], "http://127.0.0.1:8080");
        assert_eq!(o.records, vec![0, 1, 2]);
    }

    #[test]
    fn hostile_accepted_fails() {
        let o = grade(
            "2025-11-25",
            (200, "text/event-stream", SSE_OK),
            (200, "text/event-stream", SSE_OK),
        );
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["HTTP 200", "accepted", "DNS-rebinding"]);
    }

    #[test]
    fn hostile_401_with_own_401_is_unknown_never_fail() {
        let o = grade(
            "2025-11-25",
            (401, "application/json", ""),
            (401, "application/json", ""),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["refused at authentication"]);
        let o = grade(
            "2025-11-25",
            (403, "text/plain", "x"),
            (403, "text/plain", "x"),
        );
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["allowlist"]);
    }

    #[test]
    fn other_refusal_fails_from_2025_11_25_on() {
        let body =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Invalid Origin"}}"#;
        let o = grade("2025-11-25", (400, "application/json", body), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, &["HTTP 400 rather than 403", "2025-11-25 and later"]);
        let o = grade("2026-07-28", (401, "application/json", ""), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
    }

    #[test]
    fn other_refusal_passes_with_the_deviation_before_2025_11_25() {
        let o = grade("2025-06-18", (400, "text/plain", "bad origin"), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            &[
                "deviation",
                "HTTP 400 rather than 403",
                "2025-06-18 does not fix",
            ],
        );
    }

    #[test]
    fn own_400_is_error() {
        let o = grade(
            "2025-11-25",
            (400, "application/json", ""),
            (400, "application/json", ""),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &["before the Origin was evaluated"]);
    }

    #[test]
    fn unattributable_answers_are_error() {
        let o = grade(
            "2025-11-25",
            (502, "text/html", "<html>bad gateway</html>"),
            ACCEPTED,
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        let o = grade(
            "2025-11-25",
            (403, "text/plain", "x"),
            (200, "text/html", "<html>login</html>"),
        );
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    #[test]
    fn redirect_is_unknown() {
        let o = grade("2025-11-25", (302, "text/html", ""), ACCEPTED);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["redirected"]);
    }

    #[test]
    fn skipped_and_failed_legs() {
        let records = vec![skipped(
            &[leg::ORIGIN_HOSTILE, leg::ORIGIN_OWN, leg::ORIGIN_NONE],
            "not sent: --info run (connect and enumerate only)",
        )];
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), records);
        let o = run(&OriginValidated, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(&o, &["--info"]);
        assert!(o.details["hostile_status"].is_null());

        let records = vec![
            failed(
                origin_leg(leg::ORIGIN_HOSTILE, Some(HOSTILE_ORIGIN), 200, "", ""),
                ErrorKind::Reset,
            ),
            origin_leg(
                leg::ORIGIN_OWN,
                Some("http://127.0.0.1:8080"),
                200,
                "application/json",
                OK,
            ),
        ];
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), records);
        let o = run(&OriginValidated, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(
            &o,
            &[
                "drew no response",
                "reset",
                "no-Origin request not recorded",
            ],
        );
    }

    #[test]
    fn bundle_without_the_legs_is_error_naming_them() {
        let ev = evidence(Some(session(Some("2025-11-25"), json!({}), None)), vec![]);
        let o = run(&OriginValidated, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(&o, &[leg::ORIGIN_HOSTILE.as_str(), "missing"]);
    }

    /// The examples, recorded from real lab servers: the servers that refuse a hostile
    /// Origin pass; the TypeScript SDK and FastMCP (which answer it) fail; the TLS targets,
    /// which forbid the collector's own Origin as well, are UNKNOWN (nothing shows the
    /// hostile one was refused for being hostile), and so is the login-gated endpoint a
    /// run without a credential never got past (no leg read).
    #[test]
    fn example_bundles() {
        let mut seen = Vec::new();
        for ev in examples() {
            let o = run(&OriginValidated, &ev, &Context::default());
            let name = ev.path.rsplit('/').next().unwrap_or_default().to_string();
            let want = match name.as_str() {
                "ts2.mcpev" | "fastmcp.mcpev" => Verdict::Fail,
                "py2-auth.mcpev" | "tls-legacy.mcpev" | "tls-modern.mcpev" => Verdict::Unknown,
                _ => Verdict::Pass,
            };
            assert_eq!(
                ev.has_leg(leg::ORIGIN_HOSTILE),
                name != "py2-auth.mcpev",
                "{name}: the Origin legs"
            );
            assert_eq!(o.verdict, want, "origin-validated on {name}: {o:?}");
            seen.push(want);
        }
        for v in [Verdict::Pass, Verdict::Fail, Verdict::Unknown] {
            assert!(seen.contains(&v), "no example graded {v}");
        }
    }
}
