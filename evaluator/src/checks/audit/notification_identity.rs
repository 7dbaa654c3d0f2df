//! Rule `notification-identity`: cancellation and progress signals monitored, in part:
//! what the wire shows of the notifications a server sends while the probe's tool calls
//! run.
//!
//! The notifications read are those the bundle holds on the tool-call legs: the
//! response streams of the consented calls (`new-tools-gated`'s control and staged
//! calls, this rule's progress call), `scopes-minimized` e's call, and the session's
//! standalone GET stream read beside the progress call (legacy revisions), or on
//! 2026-07-28 the `subscriptions/listen` stream opened beside it (collector leg
//! [`leg::NOTIFY_LISTEN`]; its acknowledgement is itself a notification). Sub-verdict f: every
//! notification names its sender in `params._meta["io.modelcontextprotocol/serverInfo"]`,
//! a key 2026-07-28 defines (earlier revisions have none: NO-REV there, never FAIL). Leg
//! a: every `notifications/progress` token is one a request of the bundle sent.
//! docs/checks.md states the rules under the row this rule grades.

use std::collections::{BTreeMap, BTreeSet};

use mcp_probe_schema::model::Era;
use mcp_probe_schema::vocab::{leg, LegId, REV_2026_07_28};
use serde::Serialize;
use serde_json::Value;

use crate::check::{Check, Context, Legs};
use crate::checks::common::values::{leg_outcomes, Keyed};
use crate::evidence::Bundle;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, SubOutcome, SubVerdict};

/// Cancellation/progress signals monitored.
#[derive(Debug)]
pub struct NotificationIdentity;
/// Every notification names its sender.
const SUB_F: &str = "f";
/// Every progress token is one the bundle sent.
const SUB_A: &str = "a";

/// The `_meta` key naming the sender (2026-07-28).
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// The progress notification's method.
pub const PROGRESS: &str = "notifications/progress";

/// The legs whose exchanges may carry notifications or progress tokens.
const READ: [LegId; 6] = [
    leg::STAGED_CONTROL,
    leg::STAGED_CALL,
    leg::SCOPE_PROBE_CALL,
    leg::NOTIFY_PROGRESS_CALL,
    leg::NOTIFY_CHANNEL,
    leg::NOTIFY_LISTEN,
];

/// What this rule cannot reach.
const REDUCTION: &str = concat!(
    "only notifications that arrive while the probe's own tool calls run \
     are seen (one progress call, the consented ",
    crate::rule_ref!("new-tools-gated"),
    " calls, ",
    crate::rule_ref!("scopes-minimized", "e"),
    "'s call, and on the legacy \
     revisions the standalone GET stream meanwhile, on 2026-07-28 a subscriptions/listen stream \
     when the server advertises one); not covered: ",
    crate::here!("b"),
    " cancellation requestId \
     mapping (on HTTP a cancellation is a closed stream, not a message), ",
    crate::here!("c"),
    " stream close and \
     abort events on the server or gateway side, ",
    crate::here!("d"),
    " task lifecycle by taskId, ",
    crate::here!("e"),
    " \
     per-server baselines and alert rules"
);

/// One notification the bundle holds.
struct Seen {
    method: String,
    meta_ok: bool,
    token: Option<String>,
    seq: u64,
}

/// A progress token as text (a string as is, a number as written).
fn token_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// True when `meta[SERVER_INFO]` is present and not empty.
fn names_sender(params: Option<&Value>) -> bool {
    match params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(SERVER_INFO))
    {
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::String(s)) => !s.trim().is_empty(),
        _ => false,
    }
}

struct Observed {
    seen: Vec<Seen>,
    sent: BTreeSet<String>,
    /// The channel: `None` not attempted, `Some(true)` an event stream opened.
    channel: Option<bool>,
    channel_note: String,
    /// Why the progress call was not made, when it was skipped.
    call_skipped: Option<String>,
}

fn observe(ev: &Bundle) -> Observed {
    let mut seen = Vec::new();
    let mut sent = BTreeSet::new();
    for l in READ {
        for x in ev.exchanges(l) {
            if let Some(t) = x.with_request(|r| {
                r.and_then(|r| r.get("params"))
                    .and_then(|p| p.get("_meta"))
                    .and_then(|m| m.get("progressToken"))
                    .and_then(token_text)
            }) {
                sent.insert(t);
            }
            x.with_messages(|msgs| {
                for m in msgs {
                    let Some(method) = m.get("method").and_then(Value::as_str) else {
                        continue;
                    };
                    if m.get("id").is_some() {
                        continue;
                    }
                    let params = m.get("params");
                    seen.push(Seen {
                        method: method.to_string(),
                        meta_ok: names_sender(params),
                        token: params
                            .and_then(|p| p.get("progressToken"))
                            .and_then(token_text),
                        seq: x.seq(),
                    });
                }
            });
        }
    }
    // On 2026-07-28 the channel is the listen stream when one was opened (a bundle
    // collected before the leg existed has none: the GET leg's skip speaks, as before).
    let listen = ev.exchanges(leg::NOTIFY_LISTEN).last();
    let (channel, channel_note) = match listen.or_else(|| ev.exchanges(leg::NOTIFY_CHANNEL).last())
    {
        Some(x) => {
            let sse = x
                .header("content-type")
                .is_some_and(|c| c.to_ascii_lowercase().starts_with("text/event-stream"));
            match x.status() {
                Some(200) if sse => (
                    Some(true),
                    crate::format_exact!(
                        "{}open (record #{})",
                        if listen.is_some() {
                            "subscriptions/listen "
                        } else {
                            ""
                        },
                        x.seq()
                    ),
                ),
                Some(s) => (
                    Some(false),
                    crate::format_exact!("refused with HTTP {s} (record #{})", x.seq()),
                ),
                None => (
                    Some(false),
                    crate::format_exact!("not opened (record #{})", x.seq()),
                ),
            }
        }
        None => (
            None,
            ev.skipped(leg::NOTIFY_LISTEN)
                .filter(|_| ev.is_modern())
                .or_else(|| ev.skipped(leg::NOTIFY_CHANNEL))
                .map(|r| crate::format_exact!("not opened: {}", crate::fmt::Line(r)))
                .unwrap_or_else(|| "not opened".into()),
        ),
    };
    Observed {
        seen,
        sent,
        channel,
        channel_note,
        call_skipped: ev.skipped(leg::NOTIFY_PROGRESS_CALL).map(escape_line),
    }
}

fn methods(seen: &[&Seen]) -> String {
    let mut count: BTreeMap<&str, usize> = BTreeMap::new();
    for s in seen {
        *count.entry(s.method.as_str()).or_default() += 1;
    }
    count
        .iter()
        .map(|(m, n)| crate::format_exact!("{} ×{n}", crate::fmt::Line(m)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn none_arrived(o: &Observed, calls: usize) -> String {
    let call = match &o.call_skipped {
        Some(why) => crate::format_exact!("; the progress call was not made: {why}"),
        None => String::new(),
    };
    crate::format_exact!(
        "no notification arrived during the {calls} tool call(s) recorded (notification channel: {}){call}",
        o.channel_note
    )
}

fn sub_f(ev: &Bundle, o: &Observed, calls: usize) -> SubVerdict {
    if o.seen.is_empty() {
        return SubVerdict::new(SUB_F, SubOutcome::Unknown, none_arrived(o, calls));
    }
    let missing: Vec<&Seen> = o.seen.iter().filter(|s| !s.meta_ok).collect();
    if missing.is_empty() {
        return SubVerdict::new(
            SUB_F,
            SubOutcome::Pass,
            crate::format_exact!(
                "all {} notification(s) name their sender in _meta {SERVER_INFO} ({})",
                o.seen.len(),
                methods(&o.seen.iter().collect::<Vec<_>>())
            ),
        );
    }
    let at = missing
        .iter()
        .map(|s| crate::format_exact!("#{}", s.seq))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    if !ev.is_modern() {
        return SubVerdict::new(
            SUB_F,
            SubOutcome::REVISION_UNSUPPORTED,
            crate::format_exact!(
                "{} of {} notification(s) carry no _meta {SERVER_INFO} ({}; records {at}), a key only \
                 {REV_2026_07_28} defines; the session negotiated {}, whose sender is named once, by \
                 initialize",
                missing.len(),
                o.seen.len(),
                methods(&missing),
                ev.revision_label()
            ),
        );
    }
    SubVerdict::new(
        SUB_F,
        SubOutcome::Fail,
        crate::format_exact!(
            "{} of {} notification(s) do not name their sender in _meta {SERVER_INFO} ({}; records \
             {at})",
            missing.len(),
            o.seen.len(),
            methods(&missing)
        ),
    )
}

fn sub_a(o: &Observed, calls: usize) -> SubVerdict {
    let progress: Vec<&Seen> = o.seen.iter().filter(|s| s.method == PROGRESS).collect();
    if progress.is_empty() {
        let why = if o.seen.is_empty() {
            none_arrived(o, calls)
        } else if o.sent.is_empty() {
            "no request of the bundle carried a progressToken, and no progress notification arrived"
                .to_string()
        } else {
            crate::format_exact!(
                "no {PROGRESS} arrived for the {} progressToken(s) sent",
                o.sent.len()
            )
        };
        return SubVerdict::new(SUB_A, SubOutcome::Unknown, why);
    }
    let foreign: Vec<&&Seen> = progress
        .iter()
        .filter(|s| s.token.as_ref().is_none_or(|t| !o.sent.contains(t)))
        .collect();
    if !foreign.is_empty() {
        let shown: Vec<String> = foreign
            .iter()
            .map(|s| {
                crate::format_exact!(
                    "{} (record #{})",
                    s.token
                        .as_deref()
                        .map(escape_line)
                        .unwrap_or_else(|| "no token".into()),
                    s.seq
                )
            })
            .collect();
        return SubVerdict::new(
            SUB_A,
            SubOutcome::Fail,
            crate::format_exact!(
                "{} of {} progress notification(s) carry a token no request sent: {}; sent: {}",
                foreign.len(),
                progress.len(),
                shown.join(", "),
                o.sent
                    .iter()
                    .map(|t| escape_line(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        );
    }
    SubVerdict::new(
        SUB_A,
        SubOutcome::Pass,
        crate::format_exact!(
            "all {} progress notification(s) carry a token a request sent ({})",
            progress.len(),
            o.sent
                .iter()
                .map(|t| escape_line(t))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
}

impl Check for NotificationIdentity {
    fn id(&self) -> &'static str {
        "notification-identity"
    }

    fn on_http_sse(&self) -> Option<&'static str> {
        Some(
            "on HTTP+SSE (2024-11-05) notifications arrive on the session's one event stream: those \
             read while a call's answer was awaited are counted as that call's",
        )
    }

    fn legs(&self, _era: Option<Era>) -> Legs {
        Legs::with_optional(
            &[leg::NOTIFY_CHANNEL, leg::NOTIFY_PROGRESS_CALL],
            &[
                leg::STAGED_CONTROL,
                leg::STAGED_CALL,
                leg::SCOPE_PROBE_CALL,
                leg::NOTIFY_LISTEN,
            ],
        )
    }

    fn grade(&self, ev: &Bundle, _cx: &Context<'_>) -> Outcome {
        let o = observe(ev);
        let calls = [
            leg::STAGED_CONTROL,
            leg::STAGED_CALL,
            leg::SCOPE_PROBE_CALL,
            leg::NOTIFY_PROGRESS_CALL,
        ]
        .iter()
        .map(|l| ev.exchanges(*l).count())
        .sum::<usize>();
        let f = sub_f(ev, &o, calls);
        let a = sub_a(&o, calls);
        let facts = NotificationIdentityFacts {
            legs: leg_outcomes([&f, &a]),
            notification_channel: o.channel,
            notifications_seen: o.seen.len(),
            notification_methods: o
                .seen
                .iter()
                .map(|s| s.method.clone())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            progress_tokens_sent: o.sent.iter().cloned().collect(),
        };
        let seqs: Vec<u64> = READ
            .iter()
            .flat_map(|l| ev.records_for(*l).map(|r| r.seq))
            .collect();
        Outcome::from_subs(vec![f, a], REDUCTION)
            .with_records(seqs)
            .with_facts(&facts)
    }
}

/// The details of this rule, in report order.
#[derive(Debug, Serialize)]
struct NotificationIdentityFacts {
    /// Leg id → outcome.
    legs: Keyed<String, SubOutcome>,
    /// Whether the notification channel opened: the standalone GET stream, or on
    /// 2026-07-28 the `subscriptions/listen` stream (null: not attempted).
    notification_channel: Option<bool>,
    /// How many notifications the tool-call legs hold.
    notifications_seen: usize,
    /// Their methods.
    notification_methods: Vec<String>,
    /// Every progressToken a request of the bundle sent.
    progress_tokens_sent: Vec<String>,
}

#[cfg(test)]
mod tests;
