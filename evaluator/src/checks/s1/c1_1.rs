//! Section 1 check 1.1: served protocol revisions pinned; malformed version assertions
//! rejected (spec/checks.md §11.1 with the §17 items 3 and 4 corrections).
//!
//! * 1.1a: the revisions the server serves. On 2026-07-28 the `supportedVersions` of the
//!   `server/discover` result that negotiated the session (leg `endpoint.detect`); on both
//!   eras the `initialize` sweep offering 2024-11-05 and 2025-03-26 (leg `1.1a.sweep`): a
//!   revision is served when the result echoes it.
//! * 1.1b-e: one complete request each that differs from a valid one only in the version
//!   assertion under test, graded by one mapping ([`judge_version`]) with per-leg
//!   overrides. 1.1d and 1.1e need the header + `_meta` pair only 2026-07-28 defines: on a
//!   legacy session they are `revision_unsupported` and excluded from aggregation.
//!
//! The module also holds [`wire`], the one reading of a recorded answer that 2.4
//! (`s2_headers`) and 5.2.3 (`s5_session`) share: a JSON-RPC error (in a JSON body or an
//! SSE event) is a real answer, a result or an empty 2xx is an acceptance (§17 item 4),
//! and anything else is a bare status that a gateway may have produced (§15).

use mcp_probe_schema::vocab::{code, leg, method, LegId, REV_2025_06_18, REV_2026_07_28};
use serde_json::{json, Map, Value};

use crate::check::{Check, Context, Legs};
use crate::checks::common::wire::{self, read, skipped_leg, Answer, Reply};
use crate::evidence::{Evidence, Exchange};
use crate::fmt::line;
use crate::verdict::{Leg, LegOutcome, Outcome};
use mcp_probe_schema::model::Era;

/// 1.1: served protocol revisions pinned; malformed version assertions rejected.
#[derive(Debug)]
pub struct Check1_1;
/// The 1.1 check.
pub static C1_1: Check1_1 = Check1_1;

/// The oldest revision a server may serve (1.1a); stands in for the operator's allowlist.
pub const FLOOR: &str = REV_2025_06_18;

const REDUCTION_1_1: &str = "1.1f (the asserted version is logged per request) is not probed: it reads a \
     deployment audit log. The operator's approved-revision allowlist is not read: the 2025-06-18 floor stands in \
     for it, so a narrower allowlist is not enforced here, and the initialize sweep offers only 2024-11-05 and \
     2025-03-26. 1.1d and 1.1e need the header + _meta pair only 2026-07-28 defines and are excluded below it.";

/// One version-assertion probe (1.1b-e).
struct Probe {
    /// Spec leg id.
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
    overrides: &'static [(i64, LegOutcome, &'static str)],
}

const PROBES: [Probe; 4] = [
    Probe {
        id: "1.1b",
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
        id: "1.1c",
        leg: leg::V_NO_HEADER,
        modern: "tools/list without the MCP-Protocol-Version header (_meta still names 2026-07-28)",
        legacy: Some(
            "tools/list without the MCP-Protocol-Version header (before 2026-07-28 there is no _meta \
             version to compare)",
        ),
        expected: code::HEADER_MISMATCH,
        overrides: &[(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            LegOutcome::Pass,
            "UnsupportedProtocolVersion instead of HeaderMismatch: a known reference-SDK divergence, and \
             still a refusal of the request that names no version in its header",
        )],
    },
    Probe {
        id: "1.1d",
        leg: leg::V_NO_META_VERSION,
        modern: "tools/list whose _meta lacks io.modelcontextprotocol/protocolVersion (header 2026-07-28)",
        legacy: None,
        expected: code::INVALID_PARAMS,
        overrides: &[
            (
                code::HEADER_MISMATCH,
                LegOutcome::Pass,
                "HeaderMismatch instead of Invalid params: the header was compared with the absent body \
                 version before the envelope was validated, still a refusal",
            ),
            (
                code::UNSUPPORTED_PROTOCOL_VERSION,
                LegOutcome::Pass,
                "UnsupportedProtocolVersion instead of Invalid params: the absent body version was read as \
                 unsupported, still a refusal",
            ),
        ],
    },
    Probe {
        id: "1.1e",
        leg: leg::V_MISMATCH,
        modern: "tools/list with header 2025-03-26 and _meta 2026-07-28",
        legacy: None,
        expected: code::HEADER_MISMATCH,
        overrides: &[(
            code::UNSUPPORTED_PROTOCOL_VERSION,
            LegOutcome::Fail,
            "UnsupportedProtocolVersion instead of HeaderMismatch: the body carries a supported version \
             (2026-07-28), so only HeaderMismatch is correct; the server took the header's version without \
             comparing it with the body",
        )],
    },
];

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

/// The shared mapping of 1.1b-e (spec/checks.md §11.1, "1.1b-e shared mapping", with
/// §17 item 4: an empty 2xx answer to a request is an acceptance).
fn judge_version(a: &Answer, p: &Probe, authenticated: bool) -> (LegOutcome, String) {
    let said = a.summary();
    if matches!(a.status, Some(401 | 403)) {
        let held = if authenticated {
            "although it carried the run's credential"
        } else {
            "and the run held no credential"
        };
        return (
            LegOutcome::Unknown,
            format!("{said}: refused at authentication {held}, so the request never reached version validation"),
        );
    }
    let expected = format!("{} ({})", p.expected, code_name(p.expected));
    match &a.reply {
        Reply::Error(e) => match e.code {
            Some(c) if c == p.expected => {
                if a.status == Some(400) {
                    let supported = if e.data.as_ref().and_then(|d| d.get("supported")).is_some() {
                        ", naming the supported versions"
                    } else {
                        ""
                    };
                    (
                        LegOutcome::Pass,
                        format!("{said}: rejected with {expected} at HTTP 400, the required answer{supported}"),
                    )
                } else {
                    (
                        LegOutcome::Fail,
                        format!(
                            "{said}: the required code {expected} but at HTTP {}, where the spec requires 400 \
                             (clients and intermediaries act on the status)",
                            a.status.unwrap_or_default()
                        ),
                    )
                }
            }
            Some(c) => match p.overrides.iter().find(|(o, _, _)| *o == c) {
                Some((_, outcome, why)) => (*outcome, format!("{said}: {why}")),
                None => (
                    LegOutcome::Pass,
                    format!(
                        "{said}: refused, with code {c} instead of {expected}; a refusal is still a refusal, but \
                         confirm the rejection is version enforcement"
                    ),
                ),
            },
            None => (
                LegOutcome::Error,
                format!(
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
                LegOutcome::Fail,
                format!("{said}: accepted{how} instead of refused with {expected}"),
            )
        }
        Reply::Bare(_) => (
            LegOutcome::Error,
            format!(
                "{said}: a bare status a gateway or proxy may have produced; neither a refusal nor an acceptance \
                 is attributed to the server (confirm the probe reaches the origin)"
            ),
        ),
        Reply::NoResponse(_) => (
            LegOutcome::Error,
            format!("{said}: the probe's answer was never observed"),
        ),
    }
}

/// The extra sentence an accepted 1.1c gets: why a fallback is still a failure here.
fn fallback_note(modern: bool) -> &'static str {
    if modern {
        "; MCP lets only a server that still serves pre-2025-06-18 clients treat a request without the header \
         as 2025-03-26, a revision below the floor"
    } else {
        "; the negotiated revision lets a server fall back to the session's revision (or 2025-03-26) without the \
         header, but the benchmark requires the refusal"
    }
}

/// Grade one of 1.1b-e.
fn probe_leg(ev: &Evidence, p: &Probe, seqs: &mut Vec<u64>, facts: &mut Map<String, Value>) -> Leg {
    let modern = ev.is_modern();
    let rev = ev
        .revision()
        .map(line)
        .unwrap_or_else(|| "no revision".into());
    let sent = if modern {
        p.modern
    } else {
        match p.legacy {
            Some(s) => s,
            None => {
                seqs.extend(ev.seqs(p.leg));
                return Leg::new(
                    p.id,
                    LegOutcome::RevisionUnsupported,
                    format!(
                        "needs the MCP-Protocol-Version header + _meta version pair that only {REV_2026_07_28} \
                         defines; the server negotiated {rev}"
                    ),
                );
            }
        }
    };
    let (outcome, note) = match wire::last(ev, p.leg) {
        None => (
            LegOutcome::Error,
            format!("{sent}: the leg's records hold neither an HTTP exchange nor a skip"),
        ),
        Some(Err(reason)) => {
            seqs.extend(ev.seqs(p.leg));
            skipped_leg(sent, &reason)
        }
        Some(Ok(x)) => {
            seqs.push(x.seq());
            let a = read(&x);
            facts.insert(
                p.id.to_string(),
                json!({"http_status": a.status, "code": a.code()}),
            );
            let (o, mut judged) = judge_version(&a, p, ev.authenticated());
            if o == LegOutcome::Fail && p.id == "1.1c" && !matches!(a.reply, Reply::Error(_)) {
                judged.push_str(fallback_note(modern));
            }
            let early = if !modern && !mcp_probe_schema::vocab::sends_version_header(&rev) {
                format!(
                    " (the negotiated {rev} predates the MCP-Protocol-Version header of {REV_2025_06_18}, so \
                     the header is foreign to this session)"
                )
            } else {
                String::new()
            };
            (o, format!("{sent} (record #{}){early}: {judged}", x.seq()))
        }
    };
    Leg::new(p.id, outcome, note)
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
fn discover_exchange(ev: &Evidence) -> Option<Exchange<'_>> {
    let discovers: Vec<Exchange<'_>> = ev
        .exchanges(leg::ENDPOINT_DETECT)
        .filter(|x| {
            x.request_json()
                .and_then(|r| r.get("method").and_then(Value::as_str).map(str::to_string))
                .as_deref()
                == Some(method::DISCOVER)
        })
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

/// 1.1a from `server/discover` (2026-07-28): outcome, note, the listed versions.
fn discover_part(ev: &Evidence, seqs: &mut Vec<u64>) -> (LegOutcome, String, Option<Vec<String>>) {
    let Some(x) = discover_exchange(ev) else {
        return (
            LegOutcome::Error,
            format!(
                "no server/discover exchange in {}, although the session negotiated {REV_2026_07_28}",
                leg::ENDPOINT_DETECT
            ),
            None,
        );
    };
    seqs.push(x.seq());
    let a = read(&x);
    let at = format!("server/discover (record #{})", x.seq());
    let Reply::Result(result) = &a.reply else {
        return (
            LegOutcome::Unknown,
            format!(
                "{at} answered {}: no result to read supportedVersions from",
                a.summary()
            ),
            None,
        );
    };
    let list: Option<Vec<String>> = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .filter(|a| !a.is_empty())
        .and_then(|a| a.iter().map(|v| v.as_str().map(str::to_string)).collect());
    let Some(list) = list else {
        return (
            LegOutcome::Unknown,
            format!(
                "{at} answered with a result that carries no well-formed supportedVersions (a non-empty array \
                 of strings), so the revisions it serves were not read from it"
            ),
            None,
        );
    };
    let shown: Vec<String> = list.iter().map(|v| line(v)).collect();
    let malformed: Vec<String> = list
        .iter()
        .filter(|v| !is_revision_date(v))
        .map(|v| format!("\"{}\"", wire::short(v)))
        .collect();
    let old: Vec<String> = list
        .iter()
        .filter(|v| is_revision_date(v) && v.as_str() < FLOOR)
        .map(|v| line(v))
        .collect();
    let mut faults = Vec::new();
    if !old.is_empty() {
        faults.push(format!("{} earlier than the {FLOOR} floor", old.join(", ")));
    }
    if !malformed.is_empty() {
        faults.push(format!(
            "{} not a YYYY-MM-DD revision",
            malformed.join(", ")
        ));
    }
    if faults.is_empty() {
        (
            LegOutcome::Pass,
            format!(
                "{at} lists {}, none earlier than the {FLOOR} floor",
                shown.join(", ")
            ),
            Some(list),
        )
    } else {
        (
            LegOutcome::Fail,
            format!(
                "{at} lists {}: {} (the allowlist itself is not read)",
                shown.join(", "),
                faults.join("; ")
            ),
            Some(list),
        )
    }
}

/// How one sweep revision fared.
enum Swept {
    Served,
    NotServed(String),
    Unreached(String),
}

/// 1.1a from the `initialize` sweep (both eras): outcome, note, per-revision facts.
fn sweep_part(ev: &Evidence, seqs: &mut Vec<u64>) -> (LegOutcome, String, Map<String, Value>) {
    let mut facts = Map::new();
    let mut rows: Vec<(String, Swept, u64)> = Vec::new();
    for r in ev.records_for(leg::V_SWEEP) {
        seqs.push(r.seq);
        match &r.observation {
            mcp_probe_schema::model::Observation::Skipped { reason } => rows.push((
                "(revision not recorded)".into(),
                Swept::Unreached(format!("not sent: {}", line(reason))),
                r.seq,
            )),
            mcp_probe_schema::model::Observation::Http(http) => {
                let x = ev.exchange_of(r).unwrap_or(Exchange::new(r, http));
                let requested = x
                    .request_json()
                    .and_then(|j| {
                        j.pointer("/params/protocolVersion")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                    })
                    .unwrap_or_else(|| "(no protocolVersion offered)".into());
                let a = read(&x);
                let swept = match &a.reply {
                    Reply::NoResponse(e) => Swept::Unreached(format!("no response ({e})")),
                    Reply::Result(res) => {
                        match res.get("protocolVersion").and_then(Value::as_str) {
                            Some(v) if v == requested => Swept::Served,
                            Some(v) => Swept::NotServed(format!("answered with {}", line(v))),
                            None => Swept::NotServed(format!(
                                "{} naming no protocolVersion",
                                a.summary()
                            )),
                        }
                    }
                    Reply::Error(e) => Swept::NotServed(format!(
                        "refused: {}, {}",
                        a.shown,
                        e.code
                            .map_or_else(|| "no integer code".into(), |c| format!("code {c}"))
                    )),
                    _ => match a.status {
                        Some(401 | 403 | 408 | 429) | Some(300..=399) | Some(500..) => {
                            Swept::Unreached(format!("{}: not a version decision", a.summary()))
                        }
                        _ => Swept::NotServed(format!("refused: {}", a.summary())),
                    },
                };
                rows.push((line(&requested), swept, x.seq()));
            }
            _ => {}
        }
    }
    if rows.is_empty() {
        return (
            LegOutcome::Error,
            format!(
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
                if rev.as_str() < FLOOR {
                    served_low.push(format!("{rev} (record #{seq})"));
                } else {
                    others.push(format!("{rev} served (record #{seq})"));
                }
                "served"
            }
            Swept::NotServed(why) => {
                others.push(format!("{rev} {why} (record #{seq})"));
                "not_served"
            }
            Swept::Unreached(why) => {
                unreached.push(format!("{rev} {why} (record #{seq})"));
                "unreached"
            }
        };
        facts.insert(rev.clone(), Value::from(word));
    }
    if !served_low.is_empty() {
        let mut note = format!(
            "initialize serves {}, earlier than the {FLOOR} floor (each echoed as offered)",
            served_low.join(", ")
        );
        for extra in [&others, &unreached] {
            if !extra.is_empty() {
                note.push_str(&format!("; {}", extra.join("; ")));
            }
        }
        (LegOutcome::Fail, note, facts)
    } else if !unreached.is_empty() {
        let mut note = format!(
            "initialize sweep unreached for {} (an unreached revision might be the offending one)",
            unreached.join("; ")
        );
        if !others.is_empty() {
            note.push_str(&format!("; {}", others.join("; ")));
        }
        (LegOutcome::Unknown, note, facts)
    } else {
        (
            LegOutcome::Pass,
            format!(
                "initialize serves no sub-floor revision offered: {}",
                others.join("; ")
            ),
            facts,
        )
    }
}

/// Leg 1.1a: discover (2026-07-28) and the initialize sweep (both eras), worst of the two.
fn leg_a(ev: &Evidence, seqs: &mut Vec<u64>, details: &mut Map<String, Value>) -> Leg {
    let (sweep_o, sweep_note, sweep_facts) = sweep_part(ev, seqs);
    details.insert("sweep".into(), Value::Object(sweep_facts));
    if ev.is_modern() {
        let (d_o, d_note, list) = discover_part(ev, seqs);
        details.insert(
            "supported_versions".into(),
            list.map_or(Value::Null, |l| json!(l)),
        );
        Leg::new(
            "1.1a",
            wire::worst(d_o, sweep_o),
            format!("{d_note}; {sweep_note}"),
        )
    } else {
        details.insert("supported_versions".into(), Value::Null);
        let remark = discover_exchange(ev)
            .map(|x| {
                seqs.push(x.seq());
                let a = read(&x);
                format!(
                    "; server/discover (record #{}) answered {}, so the served set comes from initialize only",
                    x.seq(),
                    a.summary()
                )
            })
            .unwrap_or_default();
        Leg::new("1.1a", sweep_o, format!("{sweep_note}{remark}"))
    }
}

impl Check for Check1_1 {
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

    fn grade(&self, ev: &Evidence, _cx: &Context<'_>) -> Outcome {
        let mut seqs = Vec::new();
        let mut details = Map::new();
        let mut probes = Map::new();
        let mut legs = vec![leg_a(ev, &mut seqs, &mut details)];
        for p in &PROBES {
            legs.push(probe_leg(ev, p, &mut seqs, &mut probes));
        }
        let words: Map<String, Value> = legs
            .iter()
            .map(|l| (l.id.clone(), wire::word(l.outcome)))
            .collect();
        let mechanism = if ev.is_modern() {
            format!(
                "_meta io.modelcontextprotocol/protocolVersion with the MCP-Protocol-Version header ({REV_2026_07_28})"
            )
        } else {
            format!(
                "MCP-Protocol-Version header ({})",
                ev.revision().map(line).unwrap_or_default()
            )
        };
        let mut out = Outcome::from_legs(legs, REDUCTION_1_1).with_records(seqs);
        out.details = details;
        out.with_detail("legs", Value::Object(words))
            .with_detail("mechanism", mechanism)
            .with_detail("floor", FLOOR)
            .with_detail("probes", Value::Object(probes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture::assert_leg as has;
    use crate::fixture::{evidence, exchange, session, skipped};
    use crate::grade::run;
    use crate::verdict::Verdict;
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};

    const JSON: &str = "application/json";
    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

    fn discover(result: Value) -> Record {
        let req =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#);
        let body = json!({"jsonrpc": "2.0", "id": 1, "result": result}).to_string();
        exchange(&[leg::ENDPOINT_DETECT], &req, 200, JSON, &body, &[])
    }

    fn sweep(rev: &str, status: u16, body: &str) -> Record {
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": rev, "capabilities": {},
                       "clientInfo": {"name": "cis-benchmark-audit", "version": "1.0"}}})
        .to_string();
        exchange(&[leg::V_SWEEP], &req, status, JSON, body, &[])
    }

    fn echo(rev: &str) -> Record {
        let body = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": rev,
            "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}})
        .to_string();
        sweep(rev, 200, &body)
    }

    fn refused(rev: &str) -> Record {
        sweep(
            rev,
            400,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"]}}}"#,
        )
    }

    fn probe(l: LegId, status: u16, ct: &str, body: &str) -> Record {
        let req =
            format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{{{META}}}}}"#);
        exchange(&[l], &req, status, ct, body, &[])
    }

    fn err(code: i64, message: &str) -> String {
        json!({"jsonrpc": "2.0", "id": 5, "error": {"code": code, "message": message}}).to_string()
    }

    fn rejects(l: LegId, code: i64) -> Record {
        probe(l, 400, JSON, &err(code, "refused"))
    }

    fn failed(l: LegId) -> Record {
        let mut r = probe(l, 200, JSON, "");
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Reset,
                message: "connection reset by peer".into(),
            });
        }
        r
    }

    const TOOLS: &str = r#"{"jsonrpc":"2.0","id":5,"result":{"tools":[{"name":"add"}]}}"#;

    /// A bundle of one session: endpoint detection, the sweep, then 1.1b-e.
    struct B {
        rev: &'static str,
        detect: Vec<Record>,
        sweep: Vec<Record>,
        b: Record,
        c: Record,
        d: Record,
        e: Record,
    }

    impl B {
        /// 2026-07-28, every leg answered as the spec requires (ts2 reject, lab.md §4.4-§5).
        fn modern() -> B {
            B {
                rev: REV_2026_07_28,
                detect: vec![discover(
                    json!({"supportedVersions": ["2026-07-28"], "capabilities": {}}),
                )],
                sweep: vec![refused("2024-11-05"), refused("2025-03-26")],
                b: rejects(leg::V_BOGUS, -32022),
                c: rejects(leg::V_NO_HEADER, -32020),
                d: rejects(leg::V_NO_META_VERSION, -32602),
                e: rejects(leg::V_MISMATCH, -32020),
            }
        }

        /// A legacy session whose b and c refuse as required; d and e skipped by the
        /// collector.
        fn legacy(rev: &'static str) -> B {
            B {
                rev,
                detect: vec![{
                    let req = format!(
                        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{META}}}}}"#
                    );
                    exchange(
                        &[leg::ENDPOINT_DETECT],
                        &req,
                        400,
                        JSON,
                        r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#,
                        &[],
                    )
                }],
                sweep: vec![refused("2024-11-05"), refused("2025-03-26")],
                b: rejects(leg::V_BOGUS, -32022),
                c: rejects(leg::V_NO_HEADER, -32020),
                d: skipped(
                    &[leg::V_NO_META_VERSION],
                    "not sent: 2026-07-28 only (negotiated 2025-11-25)",
                ),
                e: skipped(
                    &[leg::V_MISMATCH],
                    "not sent: 2026-07-28 only (negotiated 2025-11-25)",
                ),
            }
        }

        fn grade(self) -> Outcome {
            let mut records = self.detect;
            records.extend(self.sweep);
            records.extend([self.b, self.c, self.d, self.e]);
            let ev = evidence(
                Some(session(Some(self.rev), json!({"tools": {}}), None)),
                records,
            );
            run(&C1_1, &ev, &Context::default())
        }
    }

    #[test]
    fn modern_compliant_passes() {
        let o = B::modern().grade();
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Pass,
            &[
                "server/discover (record #0) lists 2026-07-28",
                "no sub-floor",
            ],
        );
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &["-32022", "the required answer"],
        );
        has(
            &o,
            "1.1c",
            LegOutcome::Pass,
            &["-32020 (HeaderMismatch) at HTTP 400"],
        );
        has(&o, "1.1d", LegOutcome::Pass, &["-32602 (Invalid params)"]);
        has(&o, "1.1e", LegOutcome::Pass, &["-32020"]);
        assert_eq!(o.details["floor"], "2025-06-18");
        assert!(o.details["mechanism"].as_str().unwrap().contains("_meta"));
        assert_eq!(o.details["legs"]["1.1d"], "pass");
        assert_eq!(o.details["supported_versions"], json!(["2026-07-28"]));
        assert_eq!(o.details["sweep"]["2024-11-05"], "not_served");
        assert_eq!(o.details["probes"]["1.1b"]["code"], -32022);
        assert_eq!(o.records, vec![0, 1, 2, 3, 4, 5, 6]);
        assert!(o.reduction.contains("1.1f") && o.reduction.contains("allowlist"));
    }

    #[test]
    fn discover_listing_old_or_malformed_revisions_fails() {
        let mut b = B::modern();
        b.detect = vec![discover(
            json!({"supportedVersions": ["2026-07-28", "2025-03-26", "latest"]}),
        )];
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Fail,
            &[
                "2025-03-26 earlier than the 2025-06-18 floor",
                "\"latest\" not a YYYY-MM-DD revision",
                "allowlist",
            ],
        );
    }

    #[test]
    fn discover_without_supported_versions_is_unknown() {
        let mut b = B::modern();
        b.detect = vec![discover(json!({"capabilities": {}}))];
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Unknown,
            &["no well-formed supportedVersions"],
        );
        assert!(o.details["supported_versions"].is_null());
    }

    /// py2, fastmcp, ts2 (lab.md §4.5): initialize echoes both sub-floor revisions.
    #[test]
    fn sweep_serving_sub_floor_revisions_fails() {
        let mut b = B::modern();
        b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Fail,
            &[
                "lists 2026-07-28",
                "initialize serves 2024-11-05 (record #1), 2025-03-26 (record #2)",
                "floor",
            ],
        );
        assert_eq!(o.details["sweep"]["2025-03-26"], "served");
    }

    #[test]
    fn sweep_counter_offer_is_not_served() {
        let mut b = B::modern();
        let body = json!({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}})
            .to_string();
        b.sweep = vec![sweep("2024-11-05", 200, &body), refused("2025-03-26")];
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Pass,
            &["2024-11-05 answered with 2025-11-25", "2025-03-26 refused"],
        );
    }

    #[test]
    fn sweep_unreached_is_unknown_unless_something_failed() {
        let mut b = B::modern();
        let mut gone = refused("2024-11-05");
        if let Observation::Http(x) = &mut gone.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Connect,
                message: "connection refused".into(),
            });
        }
        b.sweep = vec![gone.clone(), refused("2025-03-26")];
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Unknown,
            &["unreached for 2024-11-05 no response (connect", "might be"],
        );
        assert_eq!(o.details["sweep"]["2024-11-05"], "unreached");
        let mut b = B::modern();
        b.sweep = vec![gone, echo("2025-03-26")];
        let o = b.grade();
        has(
            &o,
            "1.1a",
            LegOutcome::Fail,
            &["serves 2025-03-26", "2024-11-05 no response"],
        );
        let mut b = B::modern();
        b.sweep = vec![
            sweep("2024-11-05", 502, "<html>Bad Gateway</html>"),
            refused("2025-03-26"),
        ];
        has(
            &b.grade(),
            "1.1a",
            LegOutcome::Unknown,
            &["HTTP 502", "not a version decision"],
        );
        let mut b = B::modern();
        b.sweep = vec![skipped(&[leg::V_SWEEP], "not sent: --info run")];
        has(
            &b.grade(),
            "1.1a",
            LegOutcome::Unknown,
            &["not sent: --info run"],
        );
    }

    #[test]
    fn right_code_at_wrong_status_fails() {
        let mut b = B::modern();
        b.b = probe(
            leg::V_BOGUS,
            200,
            JSON,
            &err(-32022, "Unsupported protocol version"),
        );
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(&o, "1.1b", LegOutcome::Fail, &["HTTP 200", "requires 400"]);
    }

    #[test]
    fn acceptance_fails_and_empty_2xx_is_an_acceptance() {
        let mut b = B::modern();
        b.b = probe(leg::V_BOGUS, 200, JSON, TOOLS);
        has(
            &b.grade(),
            "1.1b",
            LegOutcome::Fail,
            &[
                "result listing 1 tool",
                "accepted instead of refused with -32022",
            ],
        );
        let mut b = B::modern();
        b.b = probe(leg::V_BOGUS, 202, JSON, "");
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1b",
            LegOutcome::Fail,
            &["HTTP 202", "empty body", "acknowledged like a notification"],
        );
        let mut b = B::modern();
        b.b = probe(leg::V_BOGUS, 200, "text/event-stream", ": ping\n\n");
        has(
            &b.grade(),
            "1.1b",
            LegOutcome::Fail,
            &["event stream", "response stream"],
        );
    }

    #[test]
    fn bare_statuses_and_transport_failures_are_errors() {
        for (status, ct, body, word) in [
            (400, JSON, "", "empty body"),
            (
                502,
                "text/html",
                "<html><body>Bad Gateway</body></html>",
                "Bad Gateway",
            ),
            (200, "text/html", "<html>login</html>", "no JSON-RPC answer"),
        ] {
            let mut b = B::modern();
            b.b = probe(leg::V_BOGUS, status, ct, body);
            let o = b.grade();
            assert_eq!(o.verdict, Verdict::Error, "{o:?}");
            has(
                &o,
                "1.1b",
                LegOutcome::Error,
                &[&format!("HTTP {status}"), word, "gateway"],
            );
        }
        let mut b = B::modern();
        b.c = failed(leg::V_NO_HEADER);
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        has(
            &o,
            "1.1c",
            LegOutcome::Error,
            &["no response (reset", "never observed"],
        );
        let mut b = B::modern();
        b.b = probe(
            leg::V_BOGUS,
            400,
            JSON,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":"x","message":"m"}}"#,
        );
        has(
            &b.grade(),
            "1.1b",
            LegOutcome::Error,
            &["without an integer code"],
        );
    }

    #[test]
    fn authentication_refusal_is_unknown() {
        let mut b = B::modern();
        b.d = probe(
            leg::V_NO_META_VERSION,
            401,
            JSON,
            &err(-32001, "token expired"),
        );
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "1.1d",
            LegOutcome::Unknown,
            &[
                "HTTP 401",
                "never reached version validation",
                "held no credential",
            ],
        );
    }

    #[test]
    fn unexpected_code_passes_asking_for_confirmation() {
        let mut b = B::modern();
        b.b = rejects(leg::V_BOGUS, -32600);
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &[
                "code -32600 instead of -32022",
                "confirm the rejection is version enforcement",
            ],
        );
    }

    #[test]
    fn overrides() {
        let mut b = B::modern();
        b.c = rejects(leg::V_NO_HEADER, -32022);
        has(
            &b.grade(),
            "1.1c",
            LegOutcome::Pass,
            &["reference-SDK divergence"],
        );
        for c in [-32020, -32022] {
            let mut b = B::modern();
            b.d = rejects(leg::V_NO_META_VERSION, c);
            has(&b.grade(), "1.1d", LegOutcome::Pass, &["still a refusal"]);
        }
        let mut b = B::modern();
        b.e = rejects(leg::V_MISMATCH, -32022);
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1e",
            LegOutcome::Fail,
            &["only HeaderMismatch is correct"],
        );
    }

    #[test]
    fn error_inside_an_event_stream_is_an_answer() {
        let mut b = B::modern();
        let body = format!(
            "event: message\ndata: {}\n\n",
            err(-32022, "Unsupported protocol version")
        );
        b.b = probe(leg::V_BOGUS, 400, "text/event-stream", &body);
        has(
            &b.grade(),
            "1.1b",
            LegOutcome::Pass,
            &["HTTP 400 (text/event-stream)", "-32022"],
        );
    }

    /// py2 SL+J (lab.md §4.1, §4.5): a request without the header, or with a handshake
    /// revision in it, takes the legacy stateless path and is served.
    #[test]
    fn modern_header_fallback_is_served_and_fails() {
        let mut b = B::modern();
        b.c = probe(leg::V_NO_HEADER, 200, JSON, TOOLS);
        b.e = probe(leg::V_MISMATCH, 200, JSON, TOOLS);
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1c",
            LegOutcome::Fail,
            &["accepted", "pre-2025-06-18 clients", "below the floor"],
        );
        has(
            &o,
            "1.1e",
            LegOutcome::Fail,
            &["accepted instead of refused with -32020"],
        );
    }

    #[test]
    fn skipped_modern_probe() {
        let mut b = B::modern();
        b.d = skipped(
            &[leg::V_NO_META_VERSION],
            "not sent: --info run (connect and enumerate only)",
        );
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Unknown, "{o:?}");
        has(
            &o,
            "1.1d",
            LegOutcome::Unknown,
            &["--info", "a full run decides"],
        );
        let mut b = B::modern();
        b.e = skipped(&[leg::V_MISMATCH], "not sent: the run was interrupted");
        has(&b.grade(), "1.1e", LegOutcome::Error, &["never made"]);
    }

    #[test]
    fn legacy_compliant_passes_with_d_and_e_excluded() {
        let o = B::legacy("2025-11-25").grade();
        assert_eq!(o.verdict, Verdict::Pass, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Pass,
            &[
                "server/discover (record #0) answered HTTP 400",
                "initialize only",
            ],
        );
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &["MCP-Protocol-Version header", "no _meta version"],
        );
        has(
            &o,
            "1.1c",
            LegOutcome::Pass,
            &[
                "without the MCP-Protocol-Version header",
                "no _meta version to compare",
            ],
        );
        has(
            &o,
            "1.1d",
            LegOutcome::RevisionUnsupported,
            &["only 2026-07-28", "negotiated 2025-11-25"],
        );
        has(
            &o,
            "1.1e",
            LegOutcome::RevisionUnsupported,
            &["negotiated 2025-11-25"],
        );
        assert_eq!(o.details["legs"]["1.1e"], "revision_unsupported");
        assert_eq!(
            o.details["mechanism"],
            "MCP-Protocol-Version header (2025-11-25)"
        );
        assert!(o.details["supported_versions"].is_null());
    }

    /// py1 (lab.md §4.2, §6, §7): initialize echoes both sub-floor revisions; the bogus
    /// header draws 400 -32600 "Unsupported protocol version" with id "server-error"; a
    /// request without the header is served on the session.
    #[test]
    fn lab_py1_legacy_fails() {
        let mut b = B::legacy("2025-11-25");
        b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
        b.b = probe(
            leg::V_BOGUS,
            400,
            JSON,
            r#"{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Bad Request: Unsupported protocol version: 2024-01-01. Supported versions: 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"}}"#,
        );
        b.c = probe(
            leg::V_NO_HEADER,
            200,
            "text/event-stream",
            &format!("event: message\ndata: {TOOLS}\n\n"),
        );
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Fail,
            &["initialize serves 2024-11-05", "2025-03-26"],
        );
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &[
                "code -32600 instead of -32022",
                "confirm",
                "(id \"server-error\", not the request's)",
                "Unsupported protocol version: 2024-01-01",
            ],
        );
        has(
            &o,
            "1.1c",
            LegOutcome::Fail,
            &["accepted", "benchmark requires the refusal"],
        );
        has(&o, "1.1d", LegOutcome::RevisionUnsupported, &[]);
    }

    /// py2 / fastmcp stateful (lab.md §4.1, §5; mcp 2.3.0 routes a request without the
    /// header or with a handshake revision to the legacy session path, which answers 400
    /// -32600 "Missing session ID"): 1.1c and 1.1e pass only as refusals to confirm, and
    /// the check fails on 1.1a.
    #[test]
    fn lab_py2_stateful_modern_fails_on_the_sweep() {
        let missing = r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Bad Request: Missing session ID"}}"#;
        let mut b = B::modern();
        b.sweep = vec![echo("2024-11-05"), echo("2025-03-26")];
        b.b = probe(
            leg::V_BOGUS,
            400,
            JSON,
            r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2024-01-01"}}}"#,
        );
        b.c = probe(leg::V_NO_HEADER, 400, JSON, missing);
        b.d = probe(
            leg::V_NO_META_VERSION,
            400,
            JSON,
            &err(-32602, "params._meta is missing the required envelope key(s): io.modelcontextprotocol/protocolVersion"),
        );
        b.e = probe(leg::V_MISMATCH, 400, JSON, missing);
        let o = b.grade();
        assert_eq!(o.verdict, Verdict::Fail, "{o:?}");
        has(
            &o,
            "1.1a",
            LegOutcome::Fail,
            &["lists 2026-07-28", "initialize serves 2024-11-05"],
        );
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &[
                "data.supported: 2026-07-28",
                "naming the supported versions",
            ],
        );
        has(
            &o,
            "1.1c",
            LegOutcome::Pass,
            &["Missing session ID", "confirm"],
        );
        has(&o, "1.1d", LegOutcome::Pass, &["the required answer"]);
        has(
            &o,
            "1.1e",
            LegOutcome::Pass,
            &["Missing session ID", "confirm"],
        );
    }

    #[test]
    fn legacy_before_the_header_says_so() {
        let mut b = B::legacy("2025-03-26");
        b.d = skipped(&[leg::V_NO_META_VERSION], "not sent: 2026-07-28 only");
        let o = b.grade();
        has(
            &o,
            "1.1b",
            LegOutcome::Pass,
            &["predates the MCP-Protocol-Version header"],
        );
        has(
            &o,
            "1.1d",
            LegOutcome::RevisionUnsupported,
            &["negotiated 2025-03-26"],
        );
    }

    #[test]
    fn missing_leg_is_error_naming_it() {
        let ev = evidence(
            Some(session(Some(REV_2026_07_28), json!({}), None)),
            vec![discover(json!({"supportedVersions": ["2026-07-28"]}))],
        );
        let o = run(&C1_1, &ev, &Context::default());
        assert_eq!(o.verdict, Verdict::Error, "{o:?}");
        assert!(
            o.evidence.contains(leg::V_SWEEP.as_str()) && o.evidence.contains("missing"),
            "{o:?}"
        );
    }

    #[test]
    fn revision_dates() {
        assert!(is_revision_date("2025-06-18"));
        for bad in [
            "2025-6-18",
            "latest",
            "2025-13-01",
            "2025-06-00",
            "2025_06_18",
            "２０２５-06-18",
        ] {
            assert!(!is_revision_date(bad), "{bad}");
        }
    }
}
