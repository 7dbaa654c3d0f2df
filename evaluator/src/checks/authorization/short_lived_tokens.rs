//! Rule `short-lived-tokens`: OAuth 2.1 / OIDC or short-lived tokens for remote servers
//! (docs/checks.md, under the row this rule grades). Sub-verdict a: the unauthenticated request is refused with a 401 naming
//! `resource_metadata`; b: every token's issued lifetime is within
//! [`MAX_TOKEN_LIFETIME`]; c and d record authorization-server metadata and never move
//! the verdict. The challenge, discovery and tokens are read by `common::oauth`.

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::check::{Check, Context, Legs, Needs, ParamKind, ParamSpec, ParamValue};
use crate::checks::common::oauth::challenge::Unauth;
use crate::checks::common::oauth::facts::Facts;
use crate::checks::common::oauth::gate::{combine, json_excerpt, legs_map, DETECTION};
use crate::checks::common::oauth::tokens::{binding_note, claims, issued_lifetime, token_label};
use crate::checks::common::policy::absent;
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// The longest issued access-token lifetime sub-verdict b accepts, in seconds: the benchmark
/// definition's baseline for a "short-lived" token (v1.0.0: 3600 s). The operator's
/// policy (`max_token_lifetime_seconds`) replaces it, and the evidence names which limit
/// applied.
pub const MAX_TOKEN_LIFETIME: ParamSpec = ParamSpec {
    name: "max_token_lifetime_seconds",
    kind: ParamKind::Int {
        min: 1,
        max: 31_536_000,
    },
    default: ParamValue::Int(3600),
    doc: "the longest issued access-token lifetime, in seconds, that a token may have",
};

/// The lifetime limit sub-verdict b applies, and how the evidence names it.
struct Limit {
    seconds: i64,
    named: String,
    /// Read from the policy (else the benchmark's default).
    from_policy: bool,
}

impl Limit {
    fn of(cx: &Context<'_>) -> Limit {
        let from_policy = cx.policy.and_then(|p| {
            let secs = p.decisions.max_token_lifetime_seconds?;
            Some(Limit {
                seconds: i64::try_from(secs).unwrap_or(i64::MAX),
                named: crate::format_exact!(
                    "the policy's max_token_lifetime_seconds of {secs} s ({})",
                    crate::fmt::Line(&p.file)
                ),
                from_policy: true,
            })
        });
        let seconds = cx.int(&MAX_TOKEN_LIFETIME);
        from_policy.unwrap_or(Limit {
            seconds,
            named: crate::format_exact!("the benchmark baseline of {seconds} s"),
            from_policy: false,
        })
    }
}

/// OAuth 2.1 / OIDC or short-lived tokens for remote servers.
#[derive(Debug)]
pub struct ShortLivedTokens;

/// The reduction: where the lifetime limit came from (the policy's
/// max_token_lifetime_seconds, else the benchmark definition's baseline).
fn reduction(cx: &Context<'_>, limit: &Limit) -> String {
    let source = if limit.from_policy {
        crate::format_exact!("the lifetime limit is {}", limit.named)
    } else {
        crate::format_exact!(
            "the lifetime limit is the benchmark's baseline ({} s), not an \
             operator policy ({})",
            limit.seconds,
            absent(cx, "max_token_lifetime_seconds")
        )
    };
    crate::format_exact!(
        "{source}; the lifetime is the one issued (expires_in, else exp - iat), never the time left, \
         and an opaque token without a token response has none readable; revocation and refresh-token \
         lifetimes are not observed; {c} and d record authorization-server metadata (RFC 9207 iss \
         parameter, dynamic client registration, client authentication methods) and never move the \
         verdict; the authorization server's OAuth 2.1 / OIDC conformance is not tested beyond that \
         metadata",
        c = crate::here!("c"),
    )
}

/// What `short-lived-tokens` reports besides its legs, in report order.
#[derive(Serialize)]
struct ShortLivedTokensFacts<'a> {
    legs: Map<String, Value>,
    auth_required: bool,
    /// The leg whose record holds the unauthenticated challenge.
    challenge_source: Option<&'a str>,
    /// Every `WWW-Authenticate` field of that challenge.
    www_authenticate: Option<&'a [String]>,
    resource_metadata: Option<String>,
    /// Per token: its issued lifetime in seconds, or null when not readable.
    token_lifetimes_seconds: Vec<Value>,
    lifetime_limit_seconds: i64,
    /// The issuer whose metadata sub-verdicts c and d quote.
    authorization_server: Option<String>,
}

impl Check for ShortLivedTokens {
    fn id(&self) -> &'static str {
        "short-lived-tokens"
    }

    fn params(&self) -> &'static [ParamSpec] {
        &[MAX_TOKEN_LIFETIME]
    }

    fn legs(&self, era: Option<Era>) -> Legs {
        // Detection past the gate; the unauthenticated leg and discovery when present
        // (sub-verdicts c and d say when discovery is missing).
        DETECTION.legs(era)
    }

    fn needs(&self) -> Needs {
        // The challenge and the discovery precede any session: a 401-only bundle grades.
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let f = match DETECTION.prelude(ev) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let limit = Limit::of(cx);
        let a = sub_a(&f);
        let (b, lifetimes) = sub_b(&f, &limit);
        let (c, d, server) = legs_cd(&f);
        let legs = vec![a, b, c, d];
        let challenge = f.challenge();
        let facts = ShortLivedTokensFacts {
            legs: legs_map(&legs),
            auth_required: f.auth_required,
            challenge_source: challenge.map(|c| c.source.as_str()),
            www_authenticate: challenge.map(|c| c.fields.as_slice()),
            resource_metadata: challenge
                .and_then(|c| c.resource_metadata())
                .map(escape_line),
            token_lifetimes_seconds: lifetimes,
            lifetime_limit_seconds: limit.seconds,
            authorization_server: server,
        };
        Outcome::from_subs(legs, reduction(cx, &limit))
            .with_records(f.seqs())
            .with_facts(&facts)
    }
}

fn sub_a(f: &Facts<'_>) -> SubVerdict {
    const ID: &str = "a";
    match &f.unauth {
        Unauth::Reached { what, .. } => SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "authentication is not required: an unauthenticated request reached a response instead \
                 of a 401 challenge ({what})"
            ),
        ),
        Unauth::Challenged(c) => {
            let caveat = if c.status == 403 {
                " (403 where RFC 6750 expects 401 for a request without credentials; accepted as the \
                 refusal)"
            } else {
                ""
            };
            let syntax = if c.malformed {
                "; part of the field is not RFC 9110 syntax"
            } else {
                ""
            };
            if c.fields.is_empty() {
                return SubVerdict::new(
                    ID,
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{}{caveat} without WWW-Authenticate, so no resource_metadata is named (RFC 9728 \
                         §5.1; a client cannot discover the authorization server)",
                        c.refused()
                    ),
                );
            }
            match c.resource_metadata() {
                Some(rm) if !rm.trim().is_empty() && !c.resource_metadata_well_formed(rm) => {
                    SubVerdict::new(
                        ID,
                        SubOutcome::Fail,
                        crate::format_exact!(
                            "{}{caveat}; its WWW-Authenticate {} names resource_metadata=\"{}\" only \
                             outside RFC 9110 syntax (an unquoted URL is not a token), so a strict \
                             client finds no resource_metadata (RFC 9728 §5.1); the collector \
                             followed it{syntax}",
                            c.refused(),
                            c.quoted(),
                            crate::fmt::Line(rm)
                        ),
                    )
                }
                Some(rm) if !rm.trim().is_empty() => SubVerdict::new(
                    ID,
                    SubOutcome::Pass,
                    crate::format_exact!(
                        "{}{caveat}; its WWW-Authenticate names resource_metadata=\"{}\"",
                        c.refused(),
                        crate::fmt::Line(rm)
                    ),
                ),
                Some(_) => SubVerdict::new(
                    ID,
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{}{caveat}; its WWW-Authenticate {} names an empty resource_metadata{syntax}",
                        c.refused(),
                        c.quoted()
                    ),
                ),
                None => SubVerdict::new(
                    ID,
                    SubOutcome::Fail,
                    crate::format_exact!(
                        "{}{caveat}; its WWW-Authenticate {} names no resource_metadata (RFC 9728 \
                         §5.1){syntax}",
                        c.refused(),
                        c.quoted()
                    ),
                ),
            }
        }
        Unauth::Other { what, .. } => SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "{what}: neither a response nor a 401/403 challenge, so whether authentication is \
                 required is not decided (a refusal for another reason is not counted)"
            ),
        ),
        Unauth::NoResponse { seq, why } => SubVerdict::new(
            ID,
            SubOutcome::Error,
            crate::format_exact!(
                "the unauthenticated request (record #{seq}) drew no response ({why}): the observation \
                 was never made"
            ),
        ),
        Unauth::NotObserved(why) => SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!("no challenge observed: {why}"),
        ),
    }
}

/// The id of sub-verdict b (token lifetimes).
const SUB_B: &str = "b";

/// Sub-verdict b and the per-token lifetimes (null where unreadable).
fn sub_b(f: &Facts<'_>, limit: &Limit) -> (SubVerdict, Vec<Value>) {
    const ID: &str = SUB_B;
    let tokens = f.tokens();
    if tokens.is_empty() {
        return (
            SubVerdict::new(
                ID,
                SubOutcome::Unknown,
                "no access token is held, so no issued lifetime is readable",
            ),
            Vec::new(),
        );
    }
    let mut parts = Vec::new();
    let mut lifetimes = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        let label = crate::format_exact!(
            "{}{}",
            token_label(i, t, tokens.len()),
            binding_note(f.ev.session(), t)
        );
        match issued_lifetime(t) {
            None => {
                lifetimes.push(Value::Null);
                let why = if claims(t).is_some() {
                    "is a JWT without numeric exp and iat, and no token response (expires_in) was seen"
                } else {
                    "is opaque (not a JWT) and no token response (expires_in) was seen"
                };
                parts.push((
                    SubOutcome::Unknown,
                    crate::format_exact!("{label} {why}, so its issued lifetime is not readable"),
                ));
            }
            Some((secs, from)) if secs <= 0 => {
                lifetimes.push(json!(secs));
                parts.push((
                    SubOutcome::Unknown,
                    crate::format_exact!(
                        "{label} states a lifetime of {secs} s ({from}), which is not a lifetime"
                    ),
                ));
            }
            Some((secs, from)) => {
                lifetimes.push(json!(secs));
                let (o, verb) = if secs > limit.seconds {
                    (SubOutcome::Fail, "exceeds")
                } else {
                    (SubOutcome::Pass, "is within")
                };
                parts.push((
                    o,
                    crate::format_exact!(
                        "{label}: issued lifetime {secs} s ({from}) {verb} {}",
                        limit.named
                    ),
                ));
            }
        }
    }
    (combine(ID, parts), lifetimes)
}

/// Sub-verdicts c and d (observed only) and the issuer whose metadata they quote.
fn legs_cd(f: &Facts<'_>) -> (SubVerdict, SubVerdict, Option<String>) {
    let Some((s, d)) = f.resolved().next() else {
        let why = if !f.ev.has_leg(leg::PRM) {
            "discovery is not recorded in this bundle; the collector predates it".to_string()
        } else if f.selected().is_none() {
            "no protected-resource metadata document was parsed".to_string()
        } else if f.servers.is_empty() {
            "the protected-resource metadata advertises no authorization server".to_string()
        } else {
            crate::format_exact!(
                "none of the {} advertised authorization server(s) resolved",
                f.servers.len()
            )
        };
        let note = crate::format_exact!("no authorization-server metadata resolved: {why}");
        return (
            SubVerdict::new("c", SubOutcome::Observed, note.clone()),
            SubVerdict::new("d", SubOutcome::Observed, note),
            None,
        );
    };
    let who = crate::format_exact!("authorization server {}", crate::fmt::Line(&s.entry));
    let iss = match d.get("authorization_response_iss_parameter_supported") {
        Some(Value::Bool(true)) => {
            "authorization_response_iss_parameter_supported is true (RFC 9207: the authorization \
             response names its issuer)"
                .to_string()
        }
        Some(v) => crate::format_exact!(
            "authorization_response_iss_parameter_supported is {} (RFC 9207 iss not promised)",
            json_excerpt(v)
        ),
        None => {
            "authorization_response_iss_parameter_supported is absent (RFC 9207 iss not promised)"
                .to_string()
        }
    };
    let reg = match d.get("registration_endpoint") {
        Some(Value::String(u)) => crate::format_exact!(
            "registration_endpoint {} (dynamic client registration offered)",
            crate::fmt::Line(u)
        ),
        Some(v) => crate::format_exact!(
            "registration_endpoint {} (not a URL string)",
            json_excerpt(v)
        ),
        None => "no registration_endpoint (no dynamic client registration advertised)".to_string(),
    };
    let methods = match d.get("token_endpoint_auth_methods_supported") {
        Some(v) => {
            crate::format_exact!("token_endpoint_auth_methods_supported {}", json_excerpt(v))
        }
        None => {
            "token_endpoint_auth_methods_supported absent (RFC 8414 default: client_secret_basic)"
                .to_string()
        }
    };
    (
        SubVerdict::new(
            "c",
            SubOutcome::Observed,
            crate::format_exact!("{who}: {iss}"),
        ),
        SubVerdict::new(
            "d",
            SubOutcome::Observed,
            crate::format_exact!("{who}: {reg}; {methods}"),
        ),
        Some(s.entry.clone()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::checks::authorization::oauth_discovery_validated::OauthDiscoveryValidated;
    use crate::checks::common::oauth::testing::*;

    // ----- short-lived-tokens

    /// The `2.3.unauthenticated` tools/list and its answer.
    fn unauth_list(
        status: u16,
        content_type: &str,
        body: &str,
        headers: &[(&str, &str)],
    ) -> Record {
        exchange(&[leg::AUTH_NONE], LIST, status, content_type, body, headers)
    }

    #[test]
    fn fails_a_server_that_answers_without_credentials() {
        let o = grade(&ShortLivedTokens, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::Fail, "{o:#?}");
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Fail);
        assert!(a.note.contains("reached a response"), "{a:?}");
        assert!(a.note.contains("record #0"), "{a:?}");
        assert_eq!(o.details["auth_required"], false);
    }

    #[test]
    fn a_passes_a_401_naming_resource_metadata() {
        let o = grade(&ShortLivedTokens, &protected(lab_auth_records()));
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Pass, "{o:#?}");
        assert!(
            a.note
                .contains(&format!("resource_metadata=\"{PRM_PATH}\"")),
            "{a:?}"
        );
        // No token: b unknown, so the check is UNKNOWN; c and d observe the AS.
        assert_eq!(sub_of(&o, SUB_B).outcome, SubOutcome::Unknown);
        assert_eq!(o.verdict, Verdict::Unknown);
        let c = sub_of(&o, "c");
        assert_eq!(c.outcome, SubOutcome::Observed);
        assert!(c.note.contains("iss_parameter_supported is true"), "{c:?}");
        let d = sub_of(&o, "d");
        assert!(
            d.note
                .contains("registration_endpoint http://127.0.0.1:9000/reg"),
            "{d:?}"
        );
        assert!(d.note.contains("\"none\""), "{d:?}");
        assert_eq!(o.details["resource_metadata"], PRM_PATH);
        assert_eq!(o.details["authorization_server"], AS);
    }

    #[test]
    fn a_fails_a_401_without_resource_metadata() {
        let o = grade(&ShortLivedTokens, &protected(vec![detect_401(&[])]));
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Fail);
        assert!(a.note.contains("without WWW-Authenticate"), "{a:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        let o = grade(
            &ShortLivedTokens,
            &protected(vec![detect_401(&["Bearer realm=\"mcp\""])]),
        );
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Fail);
        assert!(a.note.contains("names no resource_metadata"), "{a:?}");
        assert!(a.note.contains(r#""Bearer realm="mcp"""#), "{a:?}");

        // Not RFC 9110 syntax: said so. The URL is the one the collector followed (the
        // lenient reading), but a strict client finds none, so the leg still fails.
        let o = grade(
            &ShortLivedTokens,
            &protected(vec![detect_401(&["Bearer resource_metadata=http://x/y"])]),
        );
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Fail);
        assert!(a.note.contains("not RFC 9110 syntax"), "{a:?}");
        assert!(
            a.note
                .contains(r#"names resource_metadata="http://x/y" only outside"#),
            "{a:?}"
        );
        assert_eq!(o.details["resource_metadata"], "http://x/y");

        // The same URL quoted: well formed, pass.
        let o = grade(
            &ShortLivedTokens,
            &protected(vec![detect_401(&[
                "Bearer resource_metadata=\"http://x/y\"",
            ])]),
        );
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Pass, "{a:?}");
        assert!(!a.note.contains("RFC 9110"), "{a:?}");
    }

    #[test]
    fn a_unknown_when_no_challenge_was_observed() {
        // Credential presented from the first request, and no 2.3.unauthenticated leg.
        let ev = credentialed(
            false,
            vec![detect_ok_with_credential()],
            vec![opaque(Some(600), None)],
        );
        let o = grade(&ShortLivedTokens, &ev);
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Unknown, "{o:#?}");
        assert!(a.note.contains("no challenge observed"), "{a:?}");
        assert_eq!(sub_of(&o, SUB_B).outcome, SubOutcome::Pass);
        assert_eq!(o.verdict, Verdict::Unknown);

        // The leg skipped: its reason is quoted.
        let ev = credentialed(
            false,
            vec![
                detect_ok_with_credential(),
                skipped(&[leg::AUTH_NONE, leg::AUTH_WITH], "not sent: --info"),
            ],
            vec![opaque(Some(600), None)],
        );
        let a = sub_of(&grade(&ShortLivedTokens, &ev), "a").clone();
        assert!(a.note.contains("not sent: --info"), "{a:?}");
    }

    #[test]
    fn a_reads_the_unauthenticated_leg_when_a_credential_was_presented() {
        let unauth = unauth_list(
            401,
            "application/json",
            "{}",
            &[("WWW-Authenticate", &challenge(PRM_PATH))],
        );
        let ev = credentialed(
            true,
            vec![detect_ok_with_credential(), unauth],
            vec![opaque(Some(3600), None)],
        );
        let o = grade(&ShortLivedTokens, &ev);
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Pass, "{o:#?}");
        assert!(a.note.contains(leg::AUTH_NONE.as_str()), "{a:?}");
        assert_eq!(
            o.verdict,
            Verdict::Pass,
            "3600 s is within the limit: {o:#?}"
        );

        // The unauthenticated tools/list answered: not required.
        let open = unauth_list(
            200,
            "application/json",
            r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#,
            &[],
        );
        let ev = credentialed(false, vec![detect_ok_with_credential(), open], vec![]);
        let a = sub_of(&grade(&ShortLivedTokens, &ev), "a").clone();
        assert_eq!(a.outcome, SubOutcome::Fail, "{a:?}");
        assert!(a.note.contains("reached a response"));

        // A 400 for another reason decides nothing.
        let other = unauth_list(400, "text/plain", "Bad Request", &[]);
        let ev = credentialed(false, vec![detect_ok_with_credential(), other], vec![]);
        let a = sub_of(&grade(&ShortLivedTokens, &ev), "a").clone();
        assert_eq!(a.outcome, SubOutcome::Unknown, "{a:?}");
        assert!(a.note.contains("HTTP 400"));
    }

    #[test]
    fn a_keeps_the_detection_401_when_a_login_followed() {
        // Detection without a credential (401), the login, a second detection with the
        // token (200), then the `auth-before-stream` pair: the first 401 is the challenge.
        let unauth = unauth_list(
            401,
            "application/json",
            "{}",
            &[("WWW-Authenticate", "Bearer realm=\"other\"")],
        );
        let mut records = lab_auth_records();
        records.insert(1, detect_ok_with_credential());
        records.push(unauth);
        let mut s = session(Some("2025-11-25"), json!({"tools": {}}), None);
        s.auth_required = true;
        s.authenticated = true;
        s.negotiated_in = Some(1);
        let mut ev = evidence(Some(s), records);
        ev.payload_mut().tokens = vec![jwt_token(lab_claims(), Some(600), None)];
        let o = grade(&ShortLivedTokens, &ev);
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Pass, "{o:#?}");
        assert!(
            a.note.contains("endpoint.detect request (record #0)"),
            "{a:?}"
        );
        assert_eq!(o.verdict, Verdict::Pass);
        assert_eq!(grade(&OauthDiscoveryValidated, &ev).subs.len(), 7);
    }

    #[test]
    fn b_grades_the_issued_lifetime() {
        let cases: &[(TokenFacts, SubOutcome, &str)] = &[
            (
                opaque(Some(600), None),
                SubOutcome::Pass,
                "600 s (expires_in",
            ),
            (
                opaque(Some(86_100), None),
                SubOutcome::Fail,
                "86100 s (expires_in",
            ),
            (
                jwt_token(json!({"iat": 1000, "exp": 8200, "aud": EP}), None, None),
                SubOutcome::Fail,
                "7200 s (exp - iat",
            ),
            (
                jwt_token(json!({"iat": 1000, "exp": 4600, "aud": EP}), None, None),
                SubOutcome::Pass,
                "3600 s (exp - iat",
            ),
            // expires_in wins over the claims.
            (
                jwt_token(json!({"iat": 0, "exp": 99_999}), Some(300), None),
                SubOutcome::Pass,
                "300 s (expires_in",
            ),
            (opaque(None, None), SubOutcome::Unknown, "is opaque"),
            (
                jwt_token(json!({"exp": 5000}), None, None),
                SubOutcome::Unknown,
                "without numeric exp and iat",
            ),
        ];
        for (t, want, words) in cases {
            let o = grade(&ShortLivedTokens, &lab_auth_with_token(t.clone()));
            let b = sub_of(&o, SUB_B);
            assert_eq!(b.outcome, *want, "{t:?}: {b:?}");
            assert!(b.note.contains(words), "{words}: {b:?}");
            if *want == SubOutcome::Fail {
                assert!(
                    b.note.contains("exceeds the benchmark baseline of 3600 s"),
                    "{b:?}"
                );
            }
        }
        let o = grade(
            &ShortLivedTokens,
            &lab_auth_with_token(jwt_token(lab_claims(), Some(600), None)),
        );
        assert_eq!(o.verdict, Verdict::Pass, "{o:#?}");
        assert_eq!(o.details["token_lifetimes_seconds"], json!([600]));
        assert_eq!(o.details["lifetime_limit_seconds"], 3600);
    }

    #[test]
    fn b_says_a_dpop_bound_token_is_sender_constrained_without_moving_the_verdict() {
        let mut t = opaque(Some(600), None);
        t.token_type = Some("DPoP".into());
        let plain = grade(&ShortLivedTokens, &lab_auth_with_token(t.clone()));
        assert!(!sub_of(&plain, SUB_B).note.contains("DPoP"), "{plain:?}");
        let mut ev = lab_auth_with_token(t);
        if let Some(s) = ev.payload_mut().session.as_mut() {
            s.dpop = Some(mcp_probe_schema::model::DpopFacts {
                used: true,
                jkt: Some("jkt-of-the-run".into()),
                ..Default::default()
            });
        }
        let bound = grade(&ShortLivedTokens, &ev);
        let b = sub_of(&bound, SUB_B);
        assert!(
            b.note
                .contains("DPoP-bound: sender-constrained by RFC 9449")
                && b.note.contains("jkt-of-the-run"),
            "{b:?}"
        );
        assert_eq!(b.outcome, sub_of(&plain, SUB_B).outcome);
        assert_eq!(bound.verdict, plain.verdict);
    }

    #[test]
    fn b_applies_the_policy_limit_and_names_it() {
        let ev = lab_auth_with_token(jwt_token(lab_claims(), Some(7200), None));
        assert_eq!(
            sub_of(&grade(&ShortLivedTokens, &ev), SUB_B).outcome,
            SubOutcome::Fail
        );
        let longer = applied(crate::policy::Decisions {
            max_token_lifetime_seconds: Some(86_400),
            ..Default::default()
        });
        let o = grade_with(&ShortLivedTokens, &ev, &longer);
        let b = sub_of(&o, SUB_B);
        assert_eq!(b.outcome, SubOutcome::Pass, "{b:?}");
        assert!(
            b.note.contains(
                "is within the policy's max_token_lifetime_seconds of 86400 s (policy.toml)"
            ),
            "{b:?}"
        );
        assert_eq!(o.details["lifetime_limit_seconds"], 86_400);
        let shorter = applied(crate::policy::Decisions {
            max_token_lifetime_seconds: Some(300),
            ..Default::default()
        });
        let ev = lab_auth_with_token(jwt_token(lab_claims(), Some(600), None));
        let b = sub_of(&grade_with(&ShortLivedTokens, &ev, &shorter), SUB_B).clone();
        assert_eq!(b.outcome, SubOutcome::Fail, "{b:?}");
        assert!(b.note.contains("exceeds the policy's"), "{b:?}");
        // A policy without the key leaves the default.
        let silent = applied(crate::policy::Decisions::default());
        let b = sub_of(&grade_with(&ShortLivedTokens, &ev, &silent), SUB_B).clone();
        assert!(b.note.contains("the benchmark baseline of 3600 s"), "{b:?}");
    }

    #[test]
    fn needs_an_endpoint_and_the_detection_leg() {
        let o = grade(&ShortLivedTokens, &evidence(None, vec![]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("no MCP endpoint"), "{o:?}");
        let o = grade(&ShortLivedTokens, &open_server(vec![]));
        assert_eq!(o.verdict, Verdict::Error);
        assert!(o.evidence.contains("endpoint.detect missing"), "{o:?}");
        // Without discovery sub-verdicts c and d say so, and the rule still decides.
        let o = grade(&ShortLivedTokens, &open_server(vec![detect_ok()]));
        assert_eq!(o.verdict, Verdict::Fail);
        assert!(
            sub_of(&o, "c").note.contains("collector predates it"),
            "{o:?}"
        );
    }
}
