//! Rule `audience-refusals-alerted`: alerts on audience and issuer validation failures.
//! The observable part (sub-verdict a): a token minted for another resource (by the refresh grant
//! of `audience-bound-tokens` b; no second grant is spent) draws 401/403 on a complete
//! `tools/list` that the probe's own token gets accepted (collector legs
//! [`leg::FOREIGN_CONTROL`], [`leg::FOREIGN_TOKEN`]). Logging, alerting and client-side issuer validation are out of a client's reach (the
//! reduction). Whether the presented token really names another resource is read from
//! the minted token's recorded facts, as `audience-bound-tokens` b reads it
//! (`checks::common::oauth::mint`): a token for the audited resource (the authorization
//! server ignored `resource`) or an opaque one that was accepted is UNKNOWN, never FAIL.

use std::collections::BTreeMap;

use mcp_probe_schema::vocab::{header, leg};
use serde::Serialize;

use crate::check::{Check, Context, Legs};
use crate::checks::common::oauth::mint::{binding, minted_facts, Binding};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Alerts on audience and issuer validation failures.
#[derive(Debug)]
pub struct AudienceRefusalsAlerted;
/// The one graded leg.
const SUB_A: &str = "a";

/// The details of the outcome.
#[derive(Serialize)]
struct AudienceFacts {
    /// The leg's outcome, by leg id (a reference).
    legs: BTreeMap<String, SubOutcome>,
    /// The status the control (the probe's own token) drew, if it was answered.
    control_status: Option<u16>,
    /// The status the foreign-audience token drew, if it was answered.
    wrong_audience_status: Option<u16>,
    /// A token minted for another resource was presented.
    had_foreign_audience_token: bool,
    /// How that token is bound, from its recorded facts (`audited_resource`,
    /// `unverified`, `foreign`, `not_recorded`); null when none was presented.
    minted_binding: Option<&'static str>,
}

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "not covered: ",
    crate::here!("b"),
    " (the refusal is logged as a structured event with an \
     error code), ",
    crate::here!("c"),
    " (an alert rule fires and is routed), ",
    crate::here!("d"),
    " (client-side issuer validation binds \
     the client, not the server); only the server's refusal of a foreign-audience token is observed"
);

/// How the token presented by `foreign` (the [`leg::FOREIGN_TOKEN`] request) is bound,
/// from the minted token's facts: the fingerprint its `Authorization` carries, the
/// resource the [`leg::FOREIGN_MINT`] grant named.
fn binding_of(ev: &Bundle, foreign: &Exchange<'_>) -> Binding {
    let presented = foreign
        .http
        .request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(header::AUTHORIZATION))
        .map(|h| {
            let v = h.value_str();
            let v = v.trim();
            v.split_once(' ').map_or(v, |(_, t)| t.trim()).to_string()
        })
        .unwrap_or_default();
    let named = ev
        .exchanges(leg::FOREIGN_MINT)
        .last()
        .and_then(|m| {
            url::form_urlencoded::parse(&m.http.request.body.bytes)
                .find(|(k, _)| k == "resource")
                .map(|(_, v)| v.into_owned())
        })
        .or_else(|| minted_facts(ev, &presented).and_then(|m| m.requested_resource.clone()))
        .unwrap_or_else(|| "(no resource)".into());
    binding(ev, &presented, &named)
}

/// The minted token's facts for the evidence: every reading but a foreign token that
/// was not accepted.
fn noted(b: &Binding, accepted: bool) -> String {
    match b {
        Binding::Foreign(_) if !accepted => String::new(),
        b => crate::format_exact!("; {}", b.sentence()),
    }
}

impl Check for AudienceRefusalsAlerted {
    fn id(&self) -> &'static str {
        "audience-refusals-alerted"
    }

    /// The foreign-token leg is recorded by every current collector (sent, or skipped
    /// saying why); the control and the mint are read when present, and a missing
    /// control leaves the leg UNKNOWN.
    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::FOREIGN_TOKEN],
            &[leg::FOREIGN_CONTROL, leg::FOREIGN_MINT],
        )
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let control = ev.exchanges(leg::FOREIGN_CONTROL).last();
        let foreign = ev.exchanges(leg::FOREIGN_TOKEN).last();
        let mut seqs = ev.seqs(leg::FOREIGN_CONTROL);
        seqs.extend(ev.seqs(leg::FOREIGN_TOKEN));
        seqs.extend(ev.seqs(leg::FOREIGN_MINT));
        let shown = |x: &Exchange<'_>| match x.status() {
            Some(s) => crate::format_exact!("HTTP {s} (record #{})", x.seq()),
            None => crate::format_exact!("no answer (record #{})", x.seq()),
        };
        let mut minted_binding = None;
        let (outcome, note) = match (&control, &foreign) {
            (_, None) => {
                let why = ev
                    .skipped(leg::FOREIGN_TOKEN)
                    .map(escape_line)
                    .unwrap_or_else(|| "no record of it".into());
                (
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "no token minted for another resource was presented ({why}); the server's audience \
                         validation was not exercised"
                    ),
                )
            }
            (None, Some(f)) => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the foreign-audience token answered {} but no control with the probe's own token is \
                     recorded, so a refusal is not attributable to the audience",
                    shown(f)
                ),
            ),
            (Some(c), Some(f)) => {
                let pair = crate::format_exact!(
                    "tools/list with the probe's own token: {}; the same with the foreign-audience token: {}",
                    shown(c),
                    shown(f)
                );
                let bound = binding_of(ev, f);
                minted_binding = Some(bound.kind());
                match (c.status(), f.status()) {
                    (Some(cs), _) if !(200..300).contains(&cs) => (
                        SubOutcome::Unknown,
                        crate::format_exact!(
                            "{pair}; the control was not accepted, so a refusal of the foreign token is not \
                             attributable to its audience"
                        ),
                    ),
                    (None, _) => (
                        SubOutcome::Unknown,
                        crate::format_exact!("{pair}; the control got no answer"),
                    ),
                    (_, None) => (
                        SubOutcome::Error,
                        crate::format_exact!("{pair}; the foreign-audience request got no answer"),
                    ),
                    // A token for the audited resource: nothing foreign was presented.
                    _ if matches!(bound, Binding::Audited(_)) => (
                        SubOutcome::Unknown,
                        crate::format_exact!("{pair}; {}: not decidable from this pair", bound.sentence()),
                    ),
                    (_, Some(401 | 403)) => (
                        SubOutcome::Pass,
                        crate::format_exact!(
                            "{pair}: a token for another audience is refused{}",
                            noted(&bound, false)
                        ),
                    ),
                    (_, Some(fs)) if (200..300).contains(&fs) && bound.acceptance_fails() => (
                        SubOutcome::Fail,
                        crate::format_exact!(
                            "{pair}: a token minted for another resource was accepted (the server does not \
                             validate its own audience){}",
                            noted(&bound, true)
                        ),
                    ),
                    (_, Some(fs)) if (200..300).contains(&fs) => (
                        SubOutcome::Unknown,
                        crate::format_exact!(
                            "{pair}: the minted token was accepted, which is not attributable to the server's \
                             audience validation{}",
                            noted(&bound, true)
                        ),
                    ),
                    _ => (
                        SubOutcome::Unknown,
                        crate::format_exact!("{pair}: neither 401/403 nor an acceptance"),
                    ),
                }
            }
        };
        Outcome::from_subs(vec![SubVerdict::new(SUB_A, outcome, note)], REDUCTION)
            .with_records(seqs)
            .with_facts(&AudienceFacts {
                legs: BTreeMap::from([(crate::refs::here(SUB_A), outcome)]),
                control_status: control.as_ref().and_then(Exchange::status),
                wrong_audience_status: foreign.as_ref().and_then(Exchange::status),
                had_foreign_audience_token: foreign.is_some(),
                minted_binding,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::{evidence, exchange, session, skipped, ENDPOINT};
    use crate::preconditions::run_rule;
    use crate::verdict::Verdict;
    use mcp_probe_schema::bundle::fingerprint;
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
    use mcp_probe_schema::model::{Header, MintedToken, TokenFacts};
    use mcp_probe_schema::vocab::LegId;
    use serde_json::json;
    use serde_json::Value;

    const LIST: &str = r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{}}"#;

    fn rec(l: LegId, status: u16) -> Record {
        let body = if (200..300).contains(&status) {
            r#"{"jsonrpc":"2.0","id":9,"result":{"tools":[]}}"#
        } else {
            r#"{"error":"invalid_token"}"#
        };
        exchange(&[l], LIST, status, "application/json", body, &[])
    }

    fn graded(records: Vec<Record>) -> Outcome {
        let ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            records,
        );
        run_rule(&AudienceRefusalsAlerted, &ev, &Context::default())
    }

    fn pair(control: u16, foreign: u16) -> Outcome {
        graded(vec![
            rec(leg::FOREIGN_CONTROL, control),
            rec(leg::FOREIGN_TOKEN, foreign),
        ])
    }

    #[test]
    fn foreign_refused_passes() {
        for s in [401, 403] {
            let o = pair(200, s);
            assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
            assert_eq!(o.details["wrong_audience_status"], json!(s));
            assert_eq!(o.details["control_status"], json!(200));
            assert_eq!(o.details["had_foreign_audience_token"], json!(true));
        }
    }

    #[test]
    fn foreign_accepted_fails() {
        let o = pair(200, 200);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(o.evidence.contains("accepted"), "{}", o.evidence);
    }

    #[test]
    fn control_not_accepted_is_unknown() {
        let o = pair(401, 401);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("not attributable"), "{}", o.evidence);
    }

    #[test]
    fn other_foreign_status_is_unknown() {
        assert_eq!(pair(200, 400).verdict, Verdict::Unknown);
        assert_eq!(pair(200, 500).verdict, Verdict::Unknown);
    }

    #[test]
    fn no_foreign_token_is_unknown() {
        let o = graded(vec![skipped(
            &[leg::FOREIGN_RESTORE, leg::FOREIGN_CONTROL, leg::FOREIGN_TOKEN],
            "not sent: the authorization server refused to mint a token for https://cis-probe.invalid/wrong-audience (error invalid_target)",
        )]);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(o.evidence.contains("invalid_target"), "{}", o.evidence);
        assert_eq!(o.details["had_foreign_audience_token"], json!(false));
    }

    #[test]
    fn foreign_transport_error_is_error() {
        let mut f = rec(leg::FOREIGN_TOKEN, 200);
        if let Observation::Http(x) = &mut f.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "connection reset".into(),
            });
        }
        let o = graded(vec![rec(leg::FOREIGN_CONTROL, 200), f]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
    }

    const FOREIGN: &str = "https://cis-probe.invalid/wrong-audience";

    /// The mint (naming [`FOREIGN`], answered with the token of fingerprint `b"minted"`),
    /// then the pair with each request's credential, graded with the mint's facts.
    fn minted_pair(foreign: u16, facts: Option<MintedToken>) -> Outcome {
        let auth = |mut r: Record, t: &[u8]| {
            if let Observation::Http(x) = &mut r.observation {
                x.request.headers.push(Header::new(
                    "Authorization",
                    format!("Bearer {}", fingerprint(t)),
                ));
            }
            r
        };
        let mint = exchange(
            &[leg::FOREIGN_MINT],
            &format!(
                "grant_type=refresh_token&resource={}",
                url::form_urlencoded::byte_serialize(FOREIGN.as_bytes()).collect::<String>()
            ),
            200,
            "application/json",
            &json!({"access_token": fingerprint(b"minted"), "token_type": "Bearer"}).to_string(),
            &[],
        );
        let mut ev = evidence(
            Some(session(Some("2025-11-25"), json!({"tools": {}}), None)),
            vec![
                mint,
                auth(rec(leg::FOREIGN_CONTROL, 200), b"own"),
                auth(rec(leg::FOREIGN_TOKEN, foreign), b"minted"),
            ],
        );
        ev.payload_mut().minted_tokens = facts.into_iter().collect();
        run_rule(&AudienceRefusalsAlerted, &ev, &Context::default())
    }

    /// Facts of the minted token: a JWT naming `aud`, or opaque (`None`).
    fn facts(aud: Option<Value>) -> MintedToken {
        MintedToken {
            leg: leg::FOREIGN_MINT.to_string(),
            seq: Some(0),
            requested_resource: Some(FOREIGN.into()),
            login_resource: Some(ENDPOINT.into()),
            token: TokenFacts {
                source: "oauth-grant".into(),
                fingerprint: fingerprint(b"minted"),
                jwt_header: aud.as_ref().map(|_| json!({"alg": "RS256"})),
                jwt_claims: aud.map(|a| json!({"aud": a, "iss": "http://127.0.0.1:9"})),
                expires_in: Some(600),
                scope: None,
                token_type: Some("Bearer".into()),
            },
        }
    }

    #[test]
    fn a_mint_naming_the_audited_resource_is_unknown_not_fail() {
        for aud in [json!(ENDPOINT), json!(["https://x.example", ENDPOINT])] {
            let o = minted_pair(200, Some(facts(Some(aud))));
            assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
            assert!(
                o.evidence.contains(
                    "the authorization server ignored the RFC 8707 resource parameter: the token minted \
                     for https://cis-probe.invalid/wrong-audience names"
                ) && o.evidence.contains("no foreign token was presented"),
                "{}",
                o.evidence
            );
            assert_eq!(o.details["minted_binding"], json!("audited_resource"));
        }
        let o = minted_pair(401, Some(facts(Some(json!(ENDPOINT)))));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
    }

    #[test]
    fn a_mint_naming_another_audience_accepted_fails() {
        for aud in [json!(FOREIGN), json!("https://api.example.com")] {
            let o = minted_pair(200, Some(facts(Some(aud))));
            assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
            assert!(o.evidence.contains("names"), "{}", o.evidence);
            assert_eq!(o.details["minted_binding"], json!("foreign"));
        }
        assert_eq!(
            minted_pair(401, Some(facts(Some(json!(FOREIGN))))).verdict,
            Verdict::Pass
        );
    }

    #[test]
    fn an_opaque_mint_accepted_is_unknown() {
        let o = minted_pair(200, Some(facts(None)));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        assert!(
            o.evidence.contains("opaque") && o.evidence.contains("the binding is unverified"),
            "{}",
            o.evidence
        );
        assert_eq!(minted_pair(401, Some(facts(None))).verdict, Verdict::Pass);
    }

    #[test]
    fn an_older_bundle_without_the_mint_facts_keeps_its_verdict_and_says_so() {
        let o = minted_pair(200, None);
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        assert!(
            o.evidence.contains(&format!(
                "the minted token's claims were not recorded by the collector that wrote this bundle \
                 (mcp-collect 0.0.0-test, build test: no minted_tokens entry for {})",
                leg::FOREIGN_MINT
            )),
            "{}",
            o.evidence
        );
        assert_eq!(o.details["minted_binding"], json!("not_recorded"));
        assert_eq!(minted_pair(401, None).verdict, Verdict::Pass);
    }

    #[test]
    fn missing_leg_is_error() {
        let o = graded(vec![]);
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(
            o.evidence.contains(leg::FOREIGN_TOKEN.as_str()),
            "{}",
            o.evidence
        );
    }
}
