//! Rule `revisions-pinned`: served protocol revisions pinned; malformed version assertions
//! rejected. docs/checks.md states the rules under the row this rule grades.
//!
//! * a: the revisions the server serves. On 2026-07-28 the `supportedVersions` of the
//!   `server/discover` result that negotiated the session (leg `endpoint.detect`); on both
//!   eras the `initialize` sweep offering 2024-11-05 and 2025-03-26 (leg `1.1a.sweep`): a
//!   revision is served when the result echoes it.
//! * b-e: one complete request each that differs from a valid one only in the version
//!   assertion under test, graded by one mapping (`judge_version`) with per-leg
//!   overrides. d and e need the header + `_meta` pair only 2026-07-28 defines: on a
//!   legacy session they are `revision_unsupported` and excluded from aggregation.
//!
//! Answers are read with [`wire`], the reading `metadata-headers` and
//! `legacy-session-disabled` share: a JSON-RPC error (in a JSON body or an SSE event) is a
//! real answer, a result or an empty 2xx is an acceptance (an empty answer to a request
//! acknowledges it like a notification), and anything else is a bare status that a gateway
//! may have produced.

use mcp_probe_schema::vocab::{code, leg, method, LegId, REV_2025_06_18, REV_2026_07_28};
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs, ParamKind, ParamSpec, ParamValue};
use crate::checks::common::policy::{absent, approved, Approved};
use crate::checks::common::refusal::{self, Class, Strictness};
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::checks::common::wire::{self, read, skipped_leg, Answer, AnswerFacts, Reply};
use crate::evidence::{Bundle, Exchange};
use crate::fmt::{escape_line, escape_line_into};
use crate::verdict::{Outcome, SubOutcome, SubVerdict};
use mcp_probe_schema::model::Era;

/// Served protocol revisions pinned; malformed version assertions rejected.
#[derive(Debug)]
pub struct RevisionsPinned;

/// The oldest revision a server may serve (sub-verdict a), as the benchmark definition states it
/// (v1.0.0: 2025-06-18); stands in for the operator's allowlist.
pub const FLOOR: ParamSpec = ParamSpec {
    name: "revision_floor",
    kind: ParamKind::Revision,
    default: ParamValue::Text(REV_2025_06_18),
    doc: "the oldest protocol revision a server may serve when no policy lists the approved ones",
};

/// What a version-assertion refusal with an unexpected code that no override names is
/// (under the rule's default: PASS, the deviation named: a refusal is still a refusal).
const STRICTNESS: ParamSpec = refusal::param(Strictness::Pass);

/// What sub-verdict a holds the served revisions to: the operator policy's `approved_revisions`
/// when it states them, else the [`FLOOR`].
struct Pin<'a> {
    approved: Option<Approved<'a>>,
    floor: &'a str,
}

impl Pin<'_> {
    fn allows(&self, rev: &str) -> bool {
        match &self.approved {
            Some(a) => a.list.iter().any(|x| x == rev),
            None => rev >= self.floor,
        }
    }

    /// "earlier than the 2025-06-18 floor", or "not among the policy's approved_revisions (…)".
    fn fault(&self) -> String {
        match &self.approved {
            Some(a) => crate::format_exact!(
                "not among the policy's {} ({}: {})",
                a.key,
                crate::fmt::Line(a.file),
                crate::fmt::Line(&a.list.join(", "))
            ),
            None => crate::format_exact!("earlier than the {} floor", self.floor),
        }
    }

    /// The pass wording for a list: "none earlier than the … floor" or "all among …".
    fn clean(&self) -> String {
        match &self.approved {
            Some(_) => {
                crate::format_exact!("all {}", self.fault().replacen("not among", "among", 1))
            }
            None => crate::format_exact!("none earlier than the {} floor", self.floor),
        }
    }

    /// What the sweep looked for: "sub-floor" or "unapproved".
    fn word(&self) -> &'static str {
        if self.approved.is_some() {
            "unapproved"
        } else {
            "sub-floor"
        }
    }

    /// Said of a failing list when the allowlist is not known.
    fn unread(&self) -> &'static str {
        if self.approved.is_some() {
            ""
        } else {
            " (the allowlist itself is not read)"
        }
    }
}

/// The reduction when no policy states the approved revisions (`absent` says why).
fn reduction(absent: &str, floor: &str) -> String {
    crate::format_exact!(
        "{f} (the asserted version is logged per request) is not probed: it reads a deployment audit \
         log. No approved-revision allowlist is read ({absent}): the {floor} floor stands in for it, \
         so a narrower allowlist is not enforced here, and the initialize sweep offers only 2024-11-05 \
         and 2025-03-26. {d} and {e} need the header + _meta pair only 2026-07-28 defines and are \
         excluded below it.",
        f = crate::here!("f"),
        d = crate::here!("d"),
        e = crate::here!("e"),
    )
}

/// The reduction when the operator's policy states the approved revisions.
const REDUCTION_POLICY: &str = concat!(
    crate::here!("f"),
    " (the asserted version is logged per request) is not probed: it reads a \
     deployment audit log. The served set is held to the policy's approved_revisions: the revisions \
     server/discover lists (2026-07-28), the negotiated one, and the initialize sweep, which offers only \
     2024-11-05 and 2025-03-26. ",
    crate::here!("d"),
    " and ",
    crate::here!("e"),
    " need the header + _meta pair only 2026-07-28 defines and are \
     excluded below it."
);

/// One version-assertion probe (sub-verdicts b-e).
struct Probe {
    /// Sub-verdict id (local).
    id: &'static str,
    /// Collector leg.
    leg: LegId,
    /// What was sent on 2026-07-28.
    modern: &'static str,
    /// What was sent on a legacy session; `None`: not defined below 2026-07-28.
    legacy: Option<&'static str>,
    /// The code the spec requires (at HTTP 400).
    expected: i64,
    /// Other codes with a fixed outcome and reason.
    overrides: &'static [(i64, SubOutcome, &'static str)],
}

const PROBES: [Probe; 4] = [
    Probe {
        id: "b",
        leg: leg::V_BOGUS,
        modern: "tools/list asserting the never-published 2024-01-01 in the header and in _meta",
        legacy: Some(
            "tools/list asserting the never-published 2024-01-01 in the MCP-Protocol-Version header \
             (before 2026-07-28 there is no _meta version)",
        ),
        expected: code::UNSUPPORTED_PROTOCOL_VERSION,
        overrides: &[],
    },
    Probe {
        id: "c",
        leg: leg::V_NO_HEADER,
        modern: "tools/list without the MCP-Protocol-Version header (_meta still names 2026-07-28)",
        legacy: Some(
            "tools/list without the MCP-Protocol-Version header (before 2026-07-28 there is no _meta \
             version to compare)",
        ),
        expected: code::HEADER_MISMATCH,
        overrides: &[(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            SubOutcome::Pass,
            "UnsupportedProtocolVersion instead of HeaderMismatch: a known reference-SDK divergence, and \
             still a refusal of the request that names no version in its header",
        )],
    },
    Probe {
        id: "d",
        leg: leg::V_NO_META_VERSION,
        modern: "tools/list whose _meta lacks io.modelcontextprotocol/protocolVersion (header 2026-07-28)",
        legacy: None,
        expected: code::INVALID_PARAMS,
        overrides: &[
            (
                code::HEADER_MISMATCH,
                SubOutcome::Pass,
                "HeaderMismatch instead of Invalid params: the header was compared with the absent body \
                 version before the envelope was validated, still a refusal",
            ),
            (
                code::UNSUPPORTED_PROTOCOL_VERSION,
                SubOutcome::Pass,
                "UnsupportedProtocolVersion instead of Invalid params: the absent body version was read as \
                 unsupported, still a refusal",
            ),
        ],
    },
    Probe {
        id: "e",
        leg: leg::V_MISMATCH,
        modern: "tools/list with header 2025-03-26 and _meta 2026-07-28",
        legacy: None,
        expected: code::HEADER_MISMATCH,
        overrides: &[(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            SubOutcome::Fail,
            "UnsupportedProtocolVersion instead of HeaderMismatch: the body carries a supported version \
             (2026-07-28), so only HeaderMismatch is correct; the server took the header's version without \
             comparing it with the body",
        )],
    },
];

/// A required code and its name (`-32020 (HeaderMismatch)`), as a format argument: no
/// string of its own for text written into a note.
struct Expected(i64);

impl std::fmt::Display for Expected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.0, code_name(self.0))
    }
}

/// The name the spec gives a code, for evidence.
fn code_name(c: i64) -> &'static str {
    match c {
        code::HEADER_MISMATCH => "HeaderMismatch",
        code::UNSUPPORTED_PROTOCOL_VERSION => "UnsupportedProtocolVersion",
        code::INVALID_PARAMS => "Invalid params",
        code::INVALID_REQUEST => "Invalid Request",
        _ => "code",
    }
}

/// The one mapping of sub-verdicts b-e (docs/checks.md, under the rule's row): an empty 2xx
/// answer to a request is an acceptance.
/// The error's code is read by the one refusal classifier ([`refusal::Class::of_code`]);
/// the overrides are codes with a fixed meaning here, judged before the strictness, and
/// an error without an integer code is not attributed (ERROR) whatever the strictness.
fn judge_version(
    a: &Answer,
    p: &Probe,
    authenticated: bool,
    strictness: Strictness,
) -> (SubOutcome, String) {
    if let Some(refused) = wire::refused_at_authentication(
        a,
        authenticated,
        "so the request never reached version validation",
    ) {
        return refused;
    }
    let said = a.summary();
    let expected = Expected(p.expected);
    match &a.reply {
        Reply::Error(e) => match Class::of_code(e.code, &[p.expected]) {
            Class::Required(_) => {
                if a.status == Some(400) {
                    let supported = if e.data.as_ref().and_then(|d| d.get("supported")).is_some() {
                        ", naming the supported versions"
                    } else {
                        ""
                    };
                    (
                        SubOutcome::Pass,
                        crate::format_exact!("{said}: rejected with {expected} at HTTP 400, the required answer{supported}"),
                    )
                } else {
                    (
                        SubOutcome::Fail,
                        crate::format_exact!(
                            "{said}: the required code {expected} but at HTTP {}, where the spec requires 400 \
                             (clients and intermediaries act on the status)",
                            a.status.unwrap_or_default()
                        ),
                    )
                }
            }
            Class::OtherCode(Some(c)) => match p.overrides.iter().find(|(o, _, _)| *o == c) {
                Some((_, outcome, why)) => (*outcome, crate::format_exact!("{said}: {why}")),
                None => (
                    strictness.other_code(),
                    match strictness {
                        Strictness::Pass => crate::format_exact!(
                            "{said}: refused, with code {c} instead of {expected}; a refusal is still a refusal, \
                             but confirm the rejection is version enforcement"
                        ),
                        Strictness::Fail => crate::format_exact!(
                            "{said}: refused, but with code {c} instead of {expected}, the code the spec requires"
                        ),
                    },
                ),
            },
            _ => (
                SubOutcome::Error,
                crate::format_exact!(
                    "{said}: an error object without an integer code is not a JSON-RPC refusal that can be \
                     attributed"
                ),
            ),
        },
        Reply::Result(_) | Reply::Empty | Reply::StreamWithoutAnswer => {
            let how = match a.reply {
                Reply::Empty => {
                    ", acknowledged like a notification (an empty answer to a request is an acceptance)"
                }
                Reply::StreamWithoutAnswer => ", opened a response stream for it",
                _ => "",
            };
            (
                SubOutcome::Fail,
                crate::format_exact!("{said}: accepted{how} instead of refused with {expected}"),
            )
        }
        Reply::Bare(_) => (
            SubOutcome::Error,
            crate::format_exact!(
                "{said}: a bare status a gateway or proxy may have produced; neither a refusal nor an acceptance \
                 is attributed to the server (confirm the probe reaches the origin)"
            ),
        ),
        Reply::NoResponse(_) => (
            SubOutcome::Error,
            crate::format_exact!("{said}: the probe's answer was never observed"),
        ),
    }
}

/// The extra sentence an accepted sub-verdict c gets: why a fallback is still a failure here.
fn fallback_note(modern: bool) -> &'static str {
    if modern {
        "; MCP lets only a server that still serves pre-2025-06-18 clients treat a request without the header \
         as 2025-03-26, a revision below the floor"
    } else {
        "; the negotiated revision lets a server fall back to the session's revision (or 2025-03-26) without the \
         header, but the benchmark requires the refusal"
    }
}

/// Grade one of sub-verdicts b-e.
fn probe_leg(
    ev: &Bundle,
    p: &Probe,
    strictness: Strictness,
    seqs: &mut Vec<u64>,
    probes: &mut Keyed<String, AnswerFacts>,
) -> SubVerdict {
    let modern = ev.is_modern();
    // The negotiated revision as shown: only a legacy session's notes name it.
    let rev = if modern {
        String::new()
    } else {
        ev.revision()
            .map(escape_line)
            .unwrap_or_else(|| "no revision".into())
    };
    let sent = if modern {
        p.modern
    } else {
        match p.legacy {
            Some(s) => s,
            None => {
                seqs.extend(ev.seqs(p.leg));
                return SubVerdict::new(
                    p.id,
                    SubOutcome::REVISION_UNSUPPORTED,
                    crate::format_exact!(
                        "needs the MCP-Protocol-Version header + _meta version pair that only {REV_2026_07_28} \
                         defines; the server negotiated {rev}"
                    ),
                );
            }
        }
    };
    let (outcome, note) = match wire::last(ev, p.leg) {
        None => (
            SubOutcome::Error,
            crate::format_exact!(
                "{sent}: the leg's records hold neither an HTTP exchange nor a skip"
            ),
        ),
        Some(Err(reason)) => {
            seqs.extend(ev.seqs(p.leg));
            skipped_leg(sent, &reason)
        }
        Some(Ok(x)) => {
            seqs.push(x.seq());
            let a = read(&x);
            probes.push(crate::refs::here(p.id), a.facts());
            let (o, mut judged) = judge_version(&a, p, ev.authenticated(), strictness);
            if o == SubOutcome::Fail && p.id == "c" && !matches!(a.reply, Reply::Error(_)) {
                judged.push_str(fallback_note(modern));
            }
            let note = if !modern && !mcp_probe_schema::vocab::sends_version_header(&rev) {
                crate::format_exact!(
                    "{sent} (record #{}) (the negotiated {rev} predates the MCP-Protocol-Version header of \
                     {REV_2025_06_18}, so the header is foreign to this session): {judged}",
                    x.seq()
                )
            } else {
                crate::format_exact!("{sent} (record #{}): {judged}", x.seq())
            };
            (o, note)
        }
    };
    SubVerdict::new(p.id, outcome, note)
}

/// True for a `YYYY-MM-DD` shaped revision with a plausible month and day.
fn is_revision_date(v: &str) -> bool {
    let b = v.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(digits(0..4) && digits(5..7) && digits(8..10)) {
        return false;
    }
    let month: u8 = v[5..7].parse().unwrap_or(0);
    let day: u8 = v[8..10].parse().unwrap_or(0);
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// The `server/discover` exchange of endpoint detection: the record that negotiated the
/// session when it is one, else the first discover with a result, else the first.
fn discover_exchange(ev: &Bundle) -> Option<Exchange<'_>> {
    let discovers: Vec<Exchange<'_>> = ev
        .exchanges(leg::ENDPOINT_DETECT)
        .filter(|x| x.request_method().as_deref() == Some(method::DISCOVER))
        .collect();
    let negotiated = ev.session().and_then(|s| s.negotiated_in);
    discovers
        .iter()
        .find(|x| Some(x.seq()) == negotiated)
        .or_else(|| {
            discovers
                .iter()
                .find(|x| matches!(read(x).reply, Reply::Result(_)))
        })
        .or(discovers.first())
        .copied()
}

/// Sub-verdict a from `server/discover` (2026-07-28): outcome, note, the listed versions.
fn discover_part(
    ev: &Bundle,
    seqs: &mut Vec<u64>,
    pin: &Pin<'_>,
) -> (SubOutcome, String, Option<Vec<String>>) {
    let Some(x) = discover_exchange(ev) else {
        return (
            SubOutcome::Error,
            crate::format_exact!(
                "no server/discover exchange in {}, although the session negotiated {REV_2026_07_28}",
                leg::ENDPOINT_DETECT
            ),
            None,
        );
    };
    seqs.push(x.seq());
    let a = read(&x);
    let at = DiscoverAt(x.seq());
    let Reply::Result(result) = &a.reply else {
        return (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{at} answered {}: no result to read supportedVersions from",
                a.summary()
            ),
            None,
        );
    };
    let list: Option<Vec<String>> = result
        .supported_versions()
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
    let Some(list) = list else {
        return (
            SubOutcome::Unknown,
            crate::format_exact!(
                "{at} answered with a result that carries no well-formed supportedVersions (a non-empty array \
                 of strings), so the revisions it serves were not read from it"
            ),
            None,
        );
    };
    // The revisions listed, escaped and joined by `, ` in one string.
    let mut shown = String::with_capacity(list.iter().map(|v| v.len() + ", ".len()).sum());
    for (i, v) in list.iter().enumerate() {
        if i > 0 {
            shown.push_str(", ");
        }
        escape_line_into(&mut shown, v);
    }
    let malformed: Vec<String> = list
        .iter()
        .filter(|v| !is_revision_date(v))
        .map(|v| crate::format_exact!("\"{}\"", wire::short(v)))
        .collect();
    let old: Vec<String> = list
        .iter()
        .filter(|v| is_revision_date(v) && !pin.allows(v))
        .map(|v| escape_line(v))
        .collect();
    let mut faults = Vec::new();
    if !old.is_empty() {
        faults.push(crate::format_exact!("{} {}", old.join(", "), pin.fault()));
    }
    if !malformed.is_empty() {
        faults.push(crate::format_exact!(
            "{} not a YYYY-MM-DD revision",
            malformed.join(", ")
        ));
    }
    if faults.is_empty() {
        (
            SubOutcome::Pass,
            crate::format_exact!("{at} lists {shown}, {}", pin.clean()),
            Some(list),
        )
    } else {
        (
            SubOutcome::Fail,
            crate::format_exact!("{at} lists {shown}: {}{}", faults.join("; "), pin.unread()),
            Some(list),
        )
    }
}

/// Where the served revisions were read (`server/discover (record #n)`), as a format
/// argument: written into the sentence that names it, with no string of its own.
struct DiscoverAt(u64);

impl std::fmt::Display for DiscoverAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "server/discover (record #{})", self.0)
    }
}

/// How one sweep revision fared.
enum Swept {
    Served,
    NotServed(String),
    Unreached(String),
}

/// Sub-verdict a from the `initialize` sweep (both eras): outcome, note, per-revision facts.
fn sweep_part(
    ev: &Bundle,
    seqs: &mut Vec<u64>,
    pin: &Pin<'_>,
) -> (SubOutcome, String, Keyed<String, &'static str>) {
    let mut facts = Keyed::default();
    let mut rows: Vec<(String, Swept, u64)> = Vec::new();
    for r in ev.records_for(leg::V_SWEEP) {
        seqs.push(r.seq);
        match &r.observation {
            mcp_probe_schema::model::Observation::Skipped { reason } => rows.push((
                "(revision not recorded)".into(),
                Swept::Unreached(crate::format_exact!(
                    "not sent: {}",
                    crate::fmt::Line(reason)
                )),
                r.seq,
            )),
            mcp_probe_schema::model::Observation::Http(http) => {
                let x = ev.exchange_of(r).unwrap_or(Exchange::new(r, http));
                let requested = x
                    .request_params()
                    .and_then(|p| p.protocol_version.clone())
                    .unwrap_or_else(|| "(no protocolVersion offered)".into());
                let a = read(&x);
                let swept = match &a.reply {
                    Reply::NoResponse(e) => {
                        Swept::Unreached(crate::format_exact!("no response ({e})"))
                    }
                    Reply::Result(res) => match res.protocol_version().and_then(Value::as_str) {
                        Some(v) if v == requested => Swept::Served,
                        Some(v) => Swept::NotServed(crate::format_exact!(
                            "answered with {}",
                            crate::fmt::Line(v)
                        )),
                        None => Swept::NotServed(crate::format_exact!(
                            "{} naming no protocolVersion",
                            a.summary()
                        )),
                    },
                    Reply::Error(e) => Swept::NotServed(crate::format_exact!(
                        "refused: {}, {}",
                        a.status_label,
                        e.code.map_or_else(
                            || "no integer code".into(),
                            |c| crate::format_exact!("code {c}")
                        )
                    )),
                    _ => match a.status {
                        Some(401 | 403 | 408 | 429) | Some(300..=399) | Some(500..) => {
                            Swept::Unreached(crate::format_exact!(
                                "{}: not a version decision",
                                a.summary()
                            ))
                        }
                        _ => Swept::NotServed(crate::format_exact!("refused: {}", a.summary())),
                    },
                };
                rows.push((escape_line(&requested), swept, x.seq()));
            }
            _ => {}
        }
    }
    if rows.is_empty() {
        return (
            SubOutcome::Error,
            crate::format_exact!(
                "the {} leg holds neither an exchange nor a skip",
                leg::V_SWEEP
            ),
            facts,
        );
    }
    let mut served_low = Vec::new();
    let mut unreached = Vec::new();
    let mut others = Vec::new();
    for (rev, s, seq) in &rows {
        let word = match s {
            Swept::Served => {
                if !pin.allows(rev) {
                    served_low.push(crate::format_exact!("{rev} (record #{seq})"));
                } else {
                    others.push(crate::format_exact!("{rev} served (record #{seq})"));
                }
                "served"
            }
            Swept::NotServed(why) => {
                others.push(crate::format_exact!("{rev} {why} (record #{seq})"));
                "not_served"
            }
            Swept::Unreached(why) => {
                unreached.push(crate::format_exact!("{rev} {why} (record #{seq})"));
                "unreached"
            }
        };
        facts.push(rev.clone(), word);
    }
    if !served_low.is_empty() {
        let mut note = crate::format_exact!(
            "initialize serves {}, {} (each echoed as offered)",
            served_low.join(", "),
            pin.fault()
        );
        for extra in [&others, &unreached] {
            if !extra.is_empty() {
                note.push_str(&crate::format_exact!("; {}", extra.join("; ")));
            }
        }
        (SubOutcome::Fail, note, facts)
    } else if !unreached.is_empty() {
        let mut note = crate::format_exact!(
            "initialize sweep unreached for {} (an unreached revision might be the offending one)",
            unreached.join("; ")
        );
        if !others.is_empty() {
            note.push_str(&crate::format_exact!("; {}", others.join("; ")));
        }
        (SubOutcome::Unknown, note, facts)
    } else {
        (
            SubOutcome::Pass,
            crate::format_exact!(
                "initialize serves no {} revision offered: {}",
                pin.word(),
                others.join("; ")
            ),
            facts,
        )
    }
}

/// Sub-verdict a: discover (2026-07-28) and the initialize sweep (both eras), worst of the two;
/// with how each swept revision fared and the discover list (when read).
fn sub_a(
    ev: &Bundle,
    seqs: &mut Vec<u64>,
    pin: &Pin<'_>,
) -> (SubVerdict, Keyed<String, &'static str>, Option<Vec<String>>) {
    let (sweep_o, sweep_note, sweep) = sweep_part(ev, seqs, pin);
    if ev.is_modern() {
        let (d_o, d_note, list) = discover_part(ev, seqs, pin);
        let leg = SubVerdict::new(
            "a",
            wire::worst(d_o, sweep_o),
            crate::format_exact!("{d_note}; {sweep_note}"),
        );
        (leg, sweep, list)
    } else {
        let remark = discover_exchange(ev)
            .map(|x| {
                seqs.push(x.seq());
                let a = read(&x);
                crate::format_exact!(
                    "; server/discover (record #{}) answered {}, so the served set comes from initialize only",
                    x.seq(),
                    a.summary()
                )
            })
            .unwrap_or_default();
        let mut leg = SubVerdict::new("a", sweep_o, crate::format_exact!("{sweep_note}{remark}"));
        // The revision the session runs on is served too: under a policy it must be
        // approved (the floor case is the sweep's: every handshake revision this tool
        // negotiates below the floor is one the sweep offers).
        if let Some(rev) = ev
            .revision()
            .filter(|r| pin.approved.is_some() && !pin.allows(r))
        {
            leg.outcome = SubOutcome::Fail;
            leg.note = crate::format_exact!(
                "the negotiated revision {} is {}; {}",
                crate::fmt::Line(rev),
                pin.fault(),
                leg.note
            );
        }
        (leg, sweep, None)
    }
}

/// The details of `revisions-pinned`, in report order.
#[derive(Debug, Serialize)]
struct RevisionsPinnedFacts {
    /// Swept revision → `served`, `not_served` or `unreached`.
    sweep: Keyed<String, &'static str>,
    /// The discover result's `supportedVersions`, null when not read.
    supported_versions: Option<Vec<String>>,
    /// Leg id → outcome.
    legs: Keyed<String, SubOutcome>,
    /// How the version is asserted on the negotiated revision.
    mechanism: String,
    /// The oldest revision a server may serve.
    floor: String,
    /// Sub-verdicts b-e → status and code of the answer, for the probes answered.
    probes: Keyed<String, AnswerFacts>,
}

impl Check for RevisionsPinned {
    fn id(&self) -> &'static str {
        "revisions-pinned"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) each probe is a POST to the message URL the stream's endpoint \
             event named, answered on the stream; the transport has no MCP-Protocol-Version header",
        )
    }

    fn params(&self) -> &'static [ParamSpec] {
        &[FLOOR, STRICTNESS]
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::required(&[
            leg::ENDPOINT_DETECT,
            leg::V_SWEEP,
            leg::V_BOGUS,
            leg::V_NO_HEADER,
            leg::V_NO_META_VERSION,
            leg::V_MISMATCH,
        ])
    }

    fn grade(&self, ev: &Bundle, cx: &Context<'_>) -> Outcome {
        let mut seqs = Vec::new();
        let mut probes = Keyed::default();
        let pin = Pin {
            approved: approved(cx, "approved_revisions", |d| d.approved_revisions.as_ref()),
            floor: cx.text(&FLOOR),
        };
        let (a, sweep, supported_versions) = sub_a(ev, &mut seqs, &pin);
        let mut legs = vec![a];
        for p in &PROBES {
            legs.push(probe_leg(
                ev,
                p,
                Strictness::of(cx, &STRICTNESS),
                &mut seqs,
                &mut probes,
            ));
        }
        let mechanism = if ev.is_modern() {
            crate::format_exact!(
                "_meta io.modelcontextprotocol/protocolVersion with the MCP-Protocol-Version header ({REV_2026_07_28})"
            )
        } else {
            crate::format_exact!(
                "MCP-Protocol-Version header ({})",
                ev.revision().map(escape_line).unwrap_or_default()
            )
        };
        let facts = RevisionsPinnedFacts {
            sweep,
            supported_versions,
            legs: leg_outcomes(&legs),
            mechanism,
            floor: pin.floor.to_string(),
            probes,
        };
        let reduction = if pin.approved.is_some() {
            REDUCTION_POLICY.to_string()
        } else {
            reduction(&absent(cx, "approved_revisions"), pin.floor)
        };
        Outcome::from_subs(legs, reduction)
            .with_records(seqs)
            .with_facts(&facts)
    }
}

#[cfg(test)]
mod tests;
