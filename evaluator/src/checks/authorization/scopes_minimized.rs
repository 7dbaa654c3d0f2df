//! Rule `scopes-minimized`: OAuth scopes minimized and elevated progressively
//! (docs/checks.md, under the row this rule grades). Sub-verdicts:
//! a, the granted scopes are readable; b, none is a wildcard or admin-tier scope; c, the
//! grant against the operator policy's `approved_scopes` when it states them, else against
//! a baseline bundle; d, the advertised `scopes_supported` likewise; e, the
//! operator's out-of-scope call is refused for its scope ([`scope_probe`]); f, scopes are
//! discoverable.

pub mod scope_probe;

use std::collections::BTreeSet;

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::leg;
use mcp_probe_schema::vocab::well_known::AS_LIST_CAP;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::check::{Check, Context, Legs, Needs};
use crate::checks::common::oauth::challenge::{Challenged, Unauth};
use crate::checks::common::oauth::facts::Facts;
use crate::checks::common::oauth::gate::{
    baseline_for, describe_baseline, json_list, legs_map, Gated,
};
use crate::checks::common::oauth::tokens::{admin_tier, dedup, wildcards};
use crate::checks::common::policy::{absent, approved, judge};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};

/// OAuth scopes minimized and elevated progressively.
#[derive(Debug)]
pub struct ScopesMinimized;

/// The reduction: what sub-verdict c held the grant to (the policy's approved_scopes,
/// else a self-recorded baseline).
fn reduction(cx: &Context<'_>) -> String {
    const KEY: &str = "approved_scopes";
    let against = match approved(cx, KEY, |d| d.approved_scopes.as_ref()) {
        Some(a) => crate::format_exact!(
            "reads the wire and the policy's {KEY} ({}): the operator's documented scope \
             justification is not readable, so a documented exception would change {b} and d; \
             {c} compares the grant with that approved scope set",
            crate::fmt::Line(a.file),
            b = crate::here!("b"),
            c = crate::here!("c"),
        ),
        None => crate::format_exact!(
            "reads the wire and a self-recorded baseline: the operator's documented scope \
             justification is not readable, so a documented exception would change {b} and d; \
             {c} compares against a self-recorded baseline, not an approved scope set ({})",
            absent(cx, KEY),
            b = crate::here!("b"),
            c = crate::here!("c"),
        ),
    };
    crate::format_exact!(
        "{against}; {e} needs the operator to name a tool outside the grant (scope_probe_tool) \
         and is decided only by an insufficient_scope refusal; step-up elevation is not tested",
        e = crate::here!("e"),
    )
}

/// Detection and protected-resource discovery past the gate; read when present: the
/// unauthenticated request (credential presented), authorization-server discovery
/// (advertised servers) and the `3.3.4e.call` leg (sent only when the operator named an
/// out-of-scope tool).
const LEGS: Gated = Gated {
    legs: &[
        leg::ENDPOINT_DETECT,
        leg::PRM,
        leg::AUTH_NONE,
        leg::AS_META,
        leg::SCOPE_PROBE_CALL,
    ],
    gated: 2,
};

/// What `scopes-minimized` reports besides its legs, in report order; a scope list is null when it
/// was not observed (distinct from observed empty).
#[derive(Serialize)]
struct ScopesMinimizedFacts<'a> {
    legs: Map<String, Value>,
    /// The `scope` of the unauthenticated challenge.
    challenge_scope: Option<&'a str>,
    /// The scopes the run's tokens were granted.
    granted_scopes: Option<&'a [String]>,
    /// The protected-resource metadata's `scopes_supported`.
    advertised_scopes: Option<&'a [String]>,
    /// The resolved authorization servers' `scopes_supported`.
    authorization_server_scopes: Option<&'a [String]>,
}

impl Check for ScopesMinimized {
    fn id(&self) -> &'static str {
        "scopes-minimized"
    }

    fn legs(&self, era: Option<Era>) -> Legs {
        LEGS.legs(era)
    }

    fn needs(&self) -> Needs {
        Needs::Nothing
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let f = match LEGS.prelude(ev) {
            Ok(f) => f,
            Err(o) => return *o,
        };
        let challenge_scope = f.challenge().and_then(Challenged::scope).map(escape_line);
        let granted = f.granted();
        let resource_scopes = f.resource_scopes();
        let as_scopes = f.as_scopes();
        let finish = |o: Outcome, legs: &[SubVerdict]| {
            o.with_records(f.seqs()).with_facts(&ScopesMinimizedFacts {
                legs: legs_map(legs),
                challenge_scope: challenge_scope.as_deref(),
                granted_scopes: granted.as_deref(),
                advertised_scopes: resource_scopes.as_deref(),
                authorization_server_scopes: as_scopes.as_deref(),
            })
        };
        if f.signals().is_empty() {
            let unread = f.prm_unread();
            let o = if unread.is_empty() {
                Outcome::single(
                    Verdict::NotApplicable,
                    crate::format_exact!(
                        "no OAuth is offered: {}; no scope is granted or advertised",
                        f.absence()
                    ),
                    reduction(cx),
                )
            } else {
                Outcome::single(
                    Verdict::Unknown,
                    crate::format_exact!(
                        "whether the server offers OAuth is undecided: no 401, no token, and \
                         protected-resource metadata discovery was not read ({})",
                        unread.join(", ")
                    ),
                    reduction(cx),
                )
            };
            return finish(o, &[]);
        }
        let legs = vec![
            sub_a(granted.as_deref()),
            sub_b(granted.as_deref()),
            sub_c(&f, cx, granted.as_deref()),
            sub_d(&f, resource_scopes.as_deref()),
            scope_probe::classify_scope_refusal(f.ev),
            sub_f(&f, resource_scopes.as_deref(), as_scopes.as_deref()),
        ];
        let o = Outcome::from_subs(legs.clone(), reduction(cx));
        finish(o, &legs)
    }
}

fn sub_a(granted: Option<&[String]>) -> SubVerdict {
    const ID: &str = "a";
    match granted {
        None => SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            "no granted scope is readable (no token, or neither a token-response scope nor a scope/scp \
             claim)",
        ),
        Some([]) => SubVerdict::new(ID, SubOutcome::Pass, "the granted scope is stated and empty"),
        Some(g) => SubVerdict::new(ID, SubOutcome::Pass, crate::format_exact!("granted scopes {}", json_list(g))),
    }
}

fn sub_b(granted: Option<&[String]>) -> SubVerdict {
    const ID: &str = "b";
    let Some(g) = granted else {
        return SubVerdict::new(ID, SubOutcome::Unknown, "no granted scope is readable");
    };
    let (w, a) = (wildcards(g), admin_tier(g));
    if w.is_empty() && a.is_empty() {
        let what = if g.is_empty() {
            "no scope is granted".to_string()
        } else {
            crate::format_exact!("no wildcard or admin-tier scope among {}", json_list(g))
        };
        return SubVerdict::new(ID, SubOutcome::Pass, what);
    }
    let mut found = Vec::new();
    if !w.is_empty() {
        found.push(crate::format_exact!("wildcard {}", json_list(&w)));
    }
    if !a.is_empty() {
        found.push(crate::format_exact!("admin-tier {}", json_list(&a)));
    }
    SubVerdict::new(
        ID,
        SubOutcome::Fail,
        crate::format_exact!(
            "granted {} (a documented exception, which the probe cannot read, would change this)",
            found.join(" and ")
        ),
    )
}

fn sub_c(f: &Facts<'_>, cx: &Context<'_>, granted: Option<&[String]>) -> SubVerdict {
    const ID: &str = "c";
    let now = granted.map_or_else(|| "no readable granted scope".to_string(), json_list);
    if let Some(a) = approved(cx, "approved_scopes", |d| d.approved_scopes.as_ref()) {
        return match granted {
            Some(g) => judge(ID, "granted scope(s)", g, a, |x, o| x == o),
            None => SubVerdict::new(
                ID,
                SubOutcome::Unknown,
                "this run read no granted scope, so it compared nothing with the policy's approved_scopes",
            ),
        };
    }
    let b = match baseline_for(f.ev, cx, ID, &now) {
        Ok(b) => b,
        Err(l) => return l,
    };
    let Some(g) = granted else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            "this run read no granted scope, so it compared nothing with the baseline",
        );
    };
    let then = Facts::new(b).and_then(|bf| bf.granted());
    let Some(then) = then else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "the {} holds no readable granted scope (no token, or none stated), so there is nothing \
                 to compare {} with",
                describe_baseline(b),
                json_list(g)
            ),
        );
    };
    let added: Vec<String> = g.iter().filter(|s| !then.contains(s)).cloned().collect();
    if added.is_empty() {
        SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "granted {} is within the {} ({})",
                json_list(g),
                describe_baseline(b),
                json_list(&then)
            ),
        )
    } else {
        SubVerdict::new(
            ID,
            SubOutcome::Fail,
            crate::format_exact!(
                "scope(s) {} granted now but not in the {} ({}); re-approve with --update-baseline if \
                 the elevation is intended",
                json_list(&added),
                describe_baseline(b),
                json_list(&then)
            ),
        )
    }
}

fn sub_d(f: &Facts<'_>, resource_scopes: Option<&[String]>) -> SubVerdict {
    const ID: &str = "d";
    let Some((a, _)) = f.selected() else {
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            "no protected-resource metadata document was parsed, so no advertised scope is readable",
        );
    };
    let s = match resource_scopes {
        Some(s) if !s.is_empty() => s,
        _ => {
            return SubVerdict::new(
                ID,
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the document at {} advertises no scopes_supported",
                    crate::fmt::Line(&a.url)
                ),
            )
        }
    };
    let (w, adm) = (wildcards(s), admin_tier(s));
    if w.is_empty() && adm.is_empty() {
        return SubVerdict::new(
            ID,
            SubOutcome::Pass,
            crate::format_exact!(
                "scopes_supported {} at {} holds no wildcard or admin-tier scope",
                json_list(s),
                crate::fmt::Line(&a.url)
            ),
        );
    }
    let flagged = dedup(w.into_iter().chain(adm));
    SubVerdict::new(
        ID,
        SubOutcome::Fail,
        crate::format_exact!(
            "scopes_supported at {} advertises wildcard or admin-tier scope(s) {} (a documented \
             exception, which the probe cannot read, would change this)",
            crate::fmt::Line(&a.url),
            json_list(&flagged)
        ),
    )
}

fn sub_f(
    f: &Facts<'_>,
    resource_scopes: Option<&[String]>,
    as_scopes: Option<&[String]>,
) -> SubVerdict {
    const ID: &str = "f";
    let challenge: Option<Vec<String>> = f
        .challenge()
        .and_then(Challenged::scope)
        .map(|s| dedup(s.split_whitespace().map(str::to_string)));
    let mut present = Vec::new();
    if let Some(c) = challenge.as_ref().filter(|c| !c.is_empty()) {
        present.push(crate::format_exact!("challenge scope {}", json_list(c)));
    }
    if let Some(r) = resource_scopes.filter(|r| !r.is_empty()) {
        present.push(crate::format_exact!(
            "protected-resource scopes_supported {}",
            json_list(r)
        ));
    }
    if let Some(a) = as_scopes.filter(|a| !a.is_empty()) {
        present.push(crate::format_exact!(
            "authorization-server scopes_supported {}",
            json_list(a)
        ));
    }
    if !present.is_empty() {
        let mut note = crate::format_exact!("scopes are discoverable: {}", present.join("; "));
        let advertised: BTreeSet<&String> = resource_scopes
            .unwrap_or_default()
            .iter()
            .chain(as_scopes.unwrap_or_default())
            .collect();
        if let Some(c) = challenge.as_ref().filter(|c| !c.is_empty()) {
            let cs: BTreeSet<&String> = c.iter().collect();
            if !advertised.is_empty() && cs != advertised {
                note.push_str(
                    "; the challenge's scope set differs from the advertised union (noted, not a \
                     failure)",
                );
            }
        }
        return SubVerdict::new(ID, SubOutcome::Pass, note);
    }
    let mut reasons = Vec::new();
    if let Unauth::NotObserved(why) = &f.unauth {
        reasons.push(crate::format_exact!(
            "the unauthenticated challenge was not observed ({why})"
        ));
    }
    if f.selected().is_none() {
        reasons.extend(f.prm_unread());
    }
    for s in f.servers.iter().filter(|s| s.resolved().is_none()) {
        reasons.push(crate::format_exact!(
            "authorization server {} not resolved ({})",
            crate::fmt::Line(&s.entry),
            s.unresolved_why()
        ));
    }
    if f.past_cap() > 0 {
        reasons.push(crate::format_exact!(
            "{} advertised authorization server(s) past the cap of {AS_LIST_CAP} were not resolved",
            f.past_cap()
        ));
    }
    if !reasons.is_empty() {
        let refused: Vec<String> = f
            .servers
            .iter()
            .flat_map(|s| s.attempts.iter())
            .filter(|a| a.guard_refused())
            .map(|a| escape_line(&a.url))
            .collect();
        let refused = if refused.is_empty() {
            String::new()
        } else {
            crate::format_exact!(
                "; guard-refused authorization-server URLs: {}",
                refused.join(", ")
            )
        };
        return SubVerdict::new(
            ID,
            SubOutcome::Unknown,
            crate::format_exact!(
                "no scope found in what was read, but not every source was read: {}{refused}",
                reasons.join("; ")
            ),
        );
    }
    SubVerdict::new(
        ID,
        SubOutcome::Fail,
        "no scope is discoverable: the challenge names none, the protected-resource metadata lists no \
         scopes_supported (or is observed absent), and no resolved authorization server lists any",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Context;

    use crate::checks::common::oauth::testing::*;

    // ----- scopes-minimized

    #[test]
    fn na_without_oauth_unknown_when_unread() {
        let o = grade(&ScopesMinimized, &open_server(no_oauth_records()));
        assert_eq!(o.verdict, Verdict::NotApplicable, "{o:#?}");
        assert_eq!(o.details["legs"], json!({}));
        let ev = open_server(vec![
            detect_ok(),
            failed(leg::PRM, PRM_PATH, ErrorKind::Timeout),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let o = grade(&ScopesMinimized, &ev);
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert!(o.evidence.contains("timeout"), "{o:?}");
    }

    #[test]
    fn lab_without_token() {
        let o = grade(&ScopesMinimized, &protected(lab_auth_records()));
        assert_eq!(o.verdict, Verdict::Unknown, "{o:#?}");
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown);
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Unknown);
        assert_eq!(sub_of(&o, "c").outcome, SubOutcome::Unknown);
        assert_eq!(sub_of(&o, "d").outcome, SubOutcome::Pass);
        let e = sub_of(&o, "e");
        assert_eq!(e.outcome, SubOutcome::Unknown);
        assert!(e.note.contains("no out-of-scope call made"), "{e:?}");
        let f = sub_of(&o, "f");
        assert_eq!(f.outcome, SubOutcome::Pass);
        assert!(f.note.contains("mcp:tools"), "{f:?}");
        assert!(o.details["granted_scopes"].is_null());
        assert_eq!(o.details["advertised_scopes"], json!(["mcp:tools"]));
    }

    #[test]
    fn granted_scopes_none_versus_empty() {
        let o = grade(
            &ScopesMinimized,
            &lab_auth_with_token(opaque(Some(600), Some(""))),
        );
        let a = sub_of(&o, "a");
        assert_eq!(a.outcome, SubOutcome::Pass, "{o:#?}");
        assert!(a.note.contains("stated and empty"), "{a:?}");
        assert_eq!(o.details["granted_scopes"], json!([]));

        let o = grade(
            &ScopesMinimized,
            &lab_auth_with_token(opaque(Some(600), None)),
        );
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Unknown);
        assert!(o.details["granted_scopes"].is_null());

        let t = jwt_token(json!({"scp": ["mcp:tools", "mcp:read"]}), None, None);
        let o = grade(&ScopesMinimized, &lab_auth_with_token(t));
        assert_eq!(sub_of(&o, "a").outcome, SubOutcome::Pass);
        assert_eq!(sub_of(&o, "b").outcome, SubOutcome::Pass);
        assert_eq!(
            o.details["granted_scopes"],
            json!(["mcp:tools", "mcp:read"])
        );
    }

    #[test]
    fn b_and_d_fail_on_wildcard_or_admin_tier() {
        let o = grade(
            &ScopesMinimized,
            &lab_auth_with_token(opaque(Some(600), Some("read *"))),
        );
        let b = sub_of(&o, "b");
        assert_eq!(b.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(b.note.contains("wildcard [\"*\"]"), "{b:?}");
        assert_eq!(o.verdict, Verdict::Fail);

        let mut r = lab_auth_records();
        r[1] = get(
            leg::PRM,
            PRM_PATH,
            200,
            &prm_doc(
                EP,
                json!([AS]),
                Some(json!(["mcp:tools", "admin:all", "files:*"])),
            ),
        );
        let o = grade(&ScopesMinimized, &protected(r));
        let d = sub_of(&o, "d");
        assert_eq!(d.outcome, SubOutcome::Fail, "{o:#?}");
        assert!(
            d.note.contains("admin:all") && d.note.contains("files:*"),
            "{d:?}"
        );

        let mut r = lab_auth_records();
        r[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None));
        let d = sub_of(&grade(&ScopesMinimized, &protected(r)), "d").clone();
        assert_eq!(d.outcome, SubOutcome::Unknown, "{d:?}");
    }

    #[test]
    fn c_compares_with_the_policy_before_any_baseline() {
        let ev = lab_auth_with_token(opaque(Some(600), Some("mcp:tools mcp:admin-ish")));
        let scopes = |v: &[&str]| {
            applied(crate::policy::Decisions {
                approved_scopes: Some(v.iter().map(|s| s.to_string()).collect()),
                ..Default::default()
            })
        };
        let c = sub_of(
            &grade_with(&ScopesMinimized, &ev, &scopes(&["mcp:tools"])),
            "c",
        )
        .clone();
        assert_eq!(c.outcome, SubOutcome::Fail, "{c:?}");
        assert!(
            c.note.contains("granted scope(s) mcp:admin-ish not among the policy's approved_scopes (policy.toml: mcp:tools)"),
            "{c:?}"
        );
        let ok = scopes(&["mcp:tools", "mcp:admin-ish", "mcp:read"]);
        let c = sub_of(&grade_with(&ScopesMinimized, &ev, &ok), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Pass, "{c:?}");
        let none = protected(lab_auth_records());
        let c = sub_of(&grade_with(&ScopesMinimized, &none, &ok), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Unknown, "{c:?}");
    }

    #[test]
    fn c_compares_with_the_baseline() {
        let base = lab_auth_with_token(opaque(Some(600), Some("mcp:tools")));
        let ev = lab_auth_with_token(opaque(Some(600), Some("mcp:tools mcp:admin-ish")));
        let c = sub_of(&run(&ScopesMinimized, &ev, &with_baseline(&base)), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Fail, "{c:?}");
        assert!(c.note.contains("mcp:admin-ish"), "{c:?}");

        let c = sub_of(&run(&ScopesMinimized, &base, &with_baseline(&ev)), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Pass, "{c:?}");

        let none = protected(lab_auth_records());
        let c = sub_of(&run(&ScopesMinimized, &ev, &with_baseline(&none)), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Unknown, "{c:?}");
        assert!(c.note.contains("holds no readable granted scope"), "{c:?}");

        let cx = Context {
            baseline: Some(&base),
            updating_baseline: true,
            ..Context::default()
        };
        let c = sub_of(&run(&ScopesMinimized, &ev, &cx), "c").clone();
        assert_eq!(c.outcome, SubOutcome::Unknown);
        assert!(c.note.contains("compares nothing"), "{c:?}");
    }

    #[test]
    fn e_never_guesses() {
        let mut ev = lab_auth_with_token(opaque(Some(600), Some("mcp:tools")));
        ev.payload_mut().run.inputs = Some(json!({"scope_probe_tool": "delete_everything"}));
        let e = sub_of(&grade(&ScopesMinimized, &ev), "e").clone();
        assert_eq!(e.outcome, SubOutcome::Unknown);
        assert!(e.note.contains("delete_everything"), "{e:?}");
        assert!(e.note.contains("no out-of-scope call"), "{e:?}");
    }

    #[test]
    fn f_sources() {
        // Nothing advertised anywhere, everything read: fail.
        let ev = protected(vec![
            detect_401(&["Bearer realm=\"mcp\""]),
            get(leg::PRM, PRM_PATH, 404, ""),
            get(leg::PRM, PRM_ROOT, 404, ""),
        ]);
        let f = sub_of(&grade(&ScopesMinimized, &ev), "f").clone();
        assert_eq!(f.outcome, SubOutcome::Fail, "{f:?}");
        assert!(f.note.contains("no scope is discoverable"), "{f:?}");

        // The challenge's scope alone suffices, and a difference from the advertised
        // union is only noted.
        let mut r = lab_auth_records();
        r[0] = detect_401(&[&format!(
            "Bearer scope=\"mcp:read\", resource_metadata=\"{PRM_PATH}\""
        )]);
        let o = grade(&ScopesMinimized, &protected(r));
        let f = sub_of(&o, "f");
        assert_eq!(f.outcome, SubOutcome::Pass, "{o:#?}");
        assert!(
            f.note.contains("differs from the advertised union"),
            "{f:?}"
        );
        assert_eq!(o.details["challenge_scope"], "mcp:read");

        // The advertised AS unresolved (guard) and no other source: unknown.
        let mut r = lab_auth_records();
        r[1] = get(leg::PRM, PRM_PATH, 200, &prm_doc(EP, json!([AS]), None));
        r[3] = failed(leg::AS_META, AS_FORM, ErrorKind::RefusedByGuard);
        let f = sub_of(&grade(&ScopesMinimized, &protected(r)), "f").clone();
        assert_eq!(f.outcome, SubOutcome::Unknown, "{f:?}");
        assert!(f.note.contains("guard-refused"), "{f:?}");
    }
}
