//! One inventory list (`tools/list`, `resources/templates/list`, `prompts/list`) read
//! across every page, the inventory state that tells "the server has none" from "this
//! run saw nothing", and the outcome shapes of the rules graded from it
//! (`tool-schemas-validated`, `resource-templates-typed`, `prompt-arguments-validated`).
//!
//! The walk mirrors [`mcp_probe_schema::derive::inventory`] (same answer matching by
//! request id, same page counting) and keeps two things that derivation drops: the page
//! each item came from, so evidence can say where a bad declaration sits, and how the
//! first page failed, because "refused", "unparsable" and "never sent" are different
//! facts and the evidence must say which.
//!
//! Every page is read, so there is no page-one caveat; a list cut short (page bound,
//! failed or truncated page, repeated cursor, bundle bound) says which pages went
//! unexamined, and never passes: "nothing bad among the items read" is UNKNOWN naming
//! the cut, while a FAIL among them stands.

use mcp_probe_schema::derive;
use mcp_probe_schema::model::{HttpOutcome, Observation};
use mcp_probe_schema::tape::{self, Json, Messages, Place};
use serde::Serialize;
use serde_json::Value;
use std::sync::Arc;

use super::text::{push_count, quote, show};
use crate::evidence::Bundle;
use crate::verdict::{Outcome, SubOutcome, SubVerdict, Verdict};

/// The lists the inventory checks read (the table both binaries use).
pub use mcp_probe_schema::vocab::inventory::{List, PROMPTS, TEMPLATES, TOOLS};

/// One listed item, raw, with where it was found.
#[derive(Debug, Clone)]
pub struct Item {
    /// The messages of its page, read into tapes: the bundle's memo's, shared (a page
    /// too long for the memo is read for this walk alone).
    msgs: Arc<Messages>,
    /// Where the item is in them.
    place: Place,
    /// 1-based page.
    pub page: u32,
    /// 1-based position across all pages.
    pub position: usize,
}

impl Item {
    /// The item exactly as the server sent it (never a lenient model).
    pub fn value(&self) -> Json<'_> {
        self.msgs.at(self.place)
    }
}

/// Why the list never produced a page.
#[derive(Debug, Clone)]
enum NoPage {
    /// Recorded as skipped (not requested, or stopped before the first page).
    Skipped(String),
    /// A JSON-RPC error answered the request.
    Refused(String),
    /// A response arrived that carries no JSON-RPC answer to the request.
    Unparsable(String),
    /// No response arrived.
    Transport(String),
}

/// Every page of one list as recorded.
#[derive(Debug, Clone)]
pub struct Read {
    /// The list.
    pub list: List,
    /// Items of every page, in order.
    pub items: Vec<Item>,
    /// Pages that answered with a result.
    pub pages: u32,
    /// The last page read carried no `nextCursor` and nothing failed after it.
    pub complete: bool,
    /// Why reading stopped before the end, when it did.
    stopped: Option<String>,
    /// How the first request failed, when no page arrived.
    first: Option<NoPage>,
    /// Pages whose result carried no item array.
    shapeless: Vec<u32>,
    /// Seqs of every record of the leg.
    pub seqs: Vec<u64>,
}

impl Read {
    /// Walk the records of `list`'s leg.
    pub fn of(ev: &Bundle, list: List) -> Read {
        let mut read = Read {
            list,
            items: Vec::new(),
            pages: 0,
            complete: false,
            stopped: None,
            first: None,
            shapeless: Vec::new(),
            seqs: Vec::new(),
        };
        for r in ev.records_for(list.leg) {
            read.seqs.push(r.seq);
            let failure = match &r.observation {
                Observation::Skipped { reason } => NoPage::Skipped(reason.clone()),
                // A stdio exchange is read as an exchange too (`Bundle::exchange_of`).
                Observation::Http(_) | Observation::Stdio(_) => {
                    let Some(xc) = ev.exchange_of(r) else {
                        continue;
                    };
                    let x = xc.http;
                    let stdio = xc.is_stdio();
                    match &x.outcome {
                        HttpOutcome::Error(e) => NoPage::Transport(e.to_string()),
                        HttpOutcome::Response(resp) => {
                            // A page whose body did not end whole, or that the bundle bound
                            // stored as length and hash only, is not an answer: the list is
                            // cut there, and the evidence names the record.
                            let cut = ev
                                .exchange_of(r)
                                .and_then(|x| x.unreadable(ev.payload.run.bundle_capped_from));
                            if let Some(cut) = cut {
                                NoPage::Unparsable(crate::format_exact!(
                                    "answered HTTP {} but {cut}",
                                    resp.status
                                ))
                            } else {
                                // The exchange's messages: its body's, and on HTTP+SSE
                                // those the event stream carried for it.
                                // The request as the bundle's memo parsed it (the
                                // inventory read it before any check).
                                let id = xc.request_id();
                                // Items stay in the page's tapes, shared with the memo (a
                                // page too long for the memo is read here).
                                let msgs = xc.tapes();
                                let no_page = match answer(&msgs, &id, resp, stdio) {
                                    Ok(result) => {
                                        read.page(&msgs, result);
                                        None
                                    }
                                    Err(n) => Some(n),
                                };
                                match no_page {
                                    Some(n) => n,
                                    None => continue,
                                }
                            }
                        }
                    }
                }
                _ => continue,
            };
            read.complete = false;
            read.stopped = Some(match &failure {
                NoPage::Skipped(reason) => reason.clone(),
                NoPage::Refused(w) => {
                    crate::format_exact!("page {} was refused: {w}", read.pages + 1)
                }
                NoPage::Unparsable(w) => crate::format_exact!("page {} {w}", read.pages + 1),
                NoPage::Transport(w) => crate::format_exact!("page {} failed: {w}", read.pages + 1),
            });
            if read.pages == 0 && read.first.is_none() {
                read.first = Some(failure);
            }
        }
        read
    }

    /// One page's `result`, one of `msgs`: its items.
    fn page(&mut self, msgs: &Arc<Messages>, result: Json<'_>) {
        self.pages += 1;
        match result.get(self.list.key).filter(|a| a.is_array()) {
            Some(items) => {
                self.items.reserve(items.len());
                for place in msgs.item_places(items) {
                    let position = self.items.len() + 1;
                    self.items.push(Item {
                        msgs: Arc::clone(msgs),
                        place,
                        page: self.pages,
                        position,
                    });
                }
            }
            None => self.shapeless.push(self.pages),
        }
        self.complete = !result.get("nextCursor").is_some_and(Json::is_string);
    }

    /// Why the items read are not the whole list, when they are not (page bound,
    /// repeated cursor, a failed or unreadable page, the bundle bound): then "nothing
    /// bad among the items read" cannot PASS, since a bad item may sit past the cut.
    pub fn cut(&self) -> Option<String> {
        if self.complete {
            return None;
        }
        let why = self.stopped.clone().unwrap_or_else(|| {
            "the last page read carried a nextCursor that was not followed".into()
        });
        Some(crate::format_exact!(
            "{} was cut after page {} ({why}), so items past it were not examined",
            self.list.method,
            self.pages
        ))
    }

    /// True when items were read from more than one page.
    pub fn multi_page(&self) -> bool {
        self.pages > 1
    }

    /// How an item is named in evidence: its `key` string quoted, else its position;
    /// the page is named when the list had several.
    pub fn label(&self, item: &Item, key: &str) -> String {
        let name = match item.value().get(key).and_then(Json::as_str) {
            Some(s) if !s.trim().is_empty() => quote(s),
            _ => crate::format_exact!("{} #{}", self.list.noun, item.position),
        };
        if self.multi_page() {
            crate::format_exact!("{name} (page {})", item.page)
        } else {
            name
        }
    }

    /// What was read, for the evidence: `tools/list read completely: 2 tools on 1 page`
    /// or, when cut short, which pages went unexamined and why.
    pub fn coverage(&self) -> String {
        let mut s = String::with_capacity(96);
        self.push_coverage(&mut s);
        s
    }

    /// [`Read::coverage`], appended to `out` (no string of its own).
    fn push_coverage(&self, out: &mut String) {
        push_coverage(
            out,
            &self.list,
            self.items.len(),
            self.pages,
            self.complete,
            self.stopped.as_deref(),
            &self.shapeless,
        )
    }

    /// The inventory gate: `Ok` when there are items to judge; otherwise the leg
    /// outcome and the reason nothing was decided. Unobserved (capability not declared,
    /// never requested, no answer) and observed-empty stay distinct in the wording.
    pub fn gate(&self, ev: &Bundle) -> Result<(), (SubOutcome, String)> {
        let method = self.list.method;
        if !self.items.is_empty() {
            return Ok(());
        }
        if self.pages > 0 {
            let what = if self.shapeless.len() as u32 == self.pages {
                crate::format_exact!(
                    "the {method} result carries no `{}` array, so no {} was read",
                    self.list.key,
                    self.list.noun
                )
            } else {
                crate::format_exact!(
                    "the server declares the {:?} capability and {method} lists no {}s: nothing to judge",
                    self.list.capability, self.list.noun
                )
            };
            return Err((
                SubOutcome::Unknown,
                crate::format_exact!("{what} ({})", self.coverage()),
            ));
        }
        let declared = ev
            .capabilities()
            .and_then(|c| c.get(self.list.capability))
            .is_some_and(|v| !v.is_null());
        if !declared {
            let caps = match ev.capabilities() {
                None => "no capabilities object was recorded".to_string(),
                Some(_) => crate::format_exact!(
                    "the server does not declare the {:?} capability",
                    self.list.capability
                ),
            };
            let skip = match &self.first {
                Some(NoPage::Skipped(r)) => crate::format_exact!("; the collector recorded: {r}"),
                _ => String::new(),
            };
            return Err((
                SubOutcome::Unknown,
                crate::format_exact!(
                    "{caps}, so {method} was not requested and no {} was observed{skip}",
                    self.list.noun
                ),
            ));
        }
        Err(match &self.first {
            None => (
                SubOutcome::Error,
                crate::format_exact!("the {:?} capability is declared but no {method} record is in the bundle", self.list.capability),
            ),
            Some(NoPage::Skipped(r)) => (
                SubOutcome::Unknown,
                crate::format_exact!("{method} was not sent ({r}); no {} was observed", self.list.noun),
            ),
            Some(NoPage::Refused(w)) => (
                SubOutcome::Unknown,
                crate::format_exact!(
                    "the server declares the {:?} capability but refused {method}: {w}; no {} was observed",
                    self.list.capability, self.list.noun
                ),
            ),
            Some(NoPage::Unparsable(w)) => (
                SubOutcome::Unknown,
                crate::format_exact!("{method} could not be read: {w}; no {} was observed", self.list.noun),
            ),
            Some(NoPage::Transport(w)) => (
                SubOutcome::Error,
                crate::format_exact!("{method} got no response ({w}): the observation was never made"),
            ),
        })
    }
}

/// The `result` answering request `id` among a page's messages, else why the page
/// produced none.
fn answer<'m>(
    msgs: &'m Messages,
    id: &Value,
    resp: &mcp_probe_schema::model::HttpResponse,
    stdio: bool,
) -> Result<Json<'m>, NoPage> {
    match msgs.iter().find(|m| tape::answers(*m, id)) {
        Some(m) => match m.get("result") {
            Some(result) => Ok(result),
            None => {
                // Named only when refused: `stdio` for a stdio exchange, else the status.
                let status_label = if stdio {
                    "stdio".to_string()
                } else {
                    crate::format_exact!("HTTP {}", resp.status)
                };
                let error = m.get("error").map(Json::to_value);
                Err(NoPage::Refused(refusal(&status_label, error.as_ref())))
            }
        },
        None => Err(NoPage::Unparsable(unparsable(resp, id, msgs.is_empty()))),
    }
}

/// A JSON-RPC error answer, quoted.
fn refusal(status_label: &str, error: Option<&Value>) -> String {
    let code = error
        .and_then(|e| e.get("code"))
        .map(show)
        .unwrap_or_else(|| "without a code".into());
    let message = error
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map(|m| crate::format_exact!(" {}", show(&Value::String(m.to_string()))))
        .unwrap_or_default();
    crate::format_exact!("{status_label}, JSON-RPC error {code}{message}")
}

/// A response that carries no JSON-RPC answer to the request, described.
fn unparsable(
    resp: &mcp_probe_schema::model::HttpResponse,
    id: &Value,
    no_messages: bool,
) -> String {
    let ctype = derive::media_type(&resp.headers).unwrap_or_else(|| "no Content-Type".into());
    let mut s = if no_messages {
        crate::format_exact!(
            "answered HTTP {} ({ctype}) with no JSON-RPC message",
            resp.status
        )
    } else {
        crate::format_exact!(
            "answered HTTP {} ({ctype}) with no JSON-RPC result or error for request id {}",
            resp.status,
            show(id)
        )
    };
    let stored = resp.body.bytes.len() as u64;
    if resp.body.length > stored {
        s.push_str(&crate::format_exact!(
            " (body stored up to {stored} of {} bytes)",
            resp.body.length
        ));
    }
    s
}

/// Legs and evidence for an inventory that produced nothing to judge: every graded leg
/// carries the gate's outcome, the evidence states the reason once.
pub fn gated(
    graded: &[&str],
    observed: Option<&str>,
    (outcome, why): (SubOutcome, String),
    read: &Read,
    reduction: &'static str,
) -> Outcome {
    let mut legs: Vec<SubVerdict> = graded
        .iter()
        .map(|id| SubVerdict::new(id, outcome, why.clone()))
        .collect();
    if let Some(id) = observed {
        legs.push(SubVerdict::new(id, SubOutcome::Observed, "nothing read"));
    }
    let mut out = Outcome::from_subs(legs, reduction)
        .with_records(read.seqs.iter().copied())
        .with_detail(read.list.key, 0)
        .with_detail("pages", read.pages);
    out.evidence = why;
    out
}

/// Legs graded from items: evidence is the legs' notes, then what was read. A list cut
/// short (page bound, repeated cursor, failed or unreadable page, bundle bound) never
/// passes: a leg that found nothing wrong among the items read is UNKNOWN naming the
/// cut; a FAIL found among them stands. The check's `facts` follow the inventory's in
/// the details.
pub fn decided<T: Serialize>(
    legs: Vec<SubVerdict>,
    read: &Read,
    reduction: &'static str,
    facts: &T,
) -> Outcome {
    let legs = match read.cut() {
        None => legs,
        Some(cut) => legs
            .into_iter()
            .map(|l| match l.outcome {
                SubOutcome::Pass => SubVerdict::new(
                    &l.id,
                    SubOutcome::Unknown,
                    crate::format_exact!("{}, but {cut}", l.note),
                ),
                _ => l,
            })
            .collect(),
    };
    let mut out = Outcome::from_subs(legs, reduction).with_records(read.seqs.iter().copied());
    // The three inventory details, then the check's facts, in a list made once with room
    // for all of them.
    let facts = crate::details::Details::from_facts(facts).unwrap_or_default();
    out.details = crate::details::Details::with_capacity(3 + facts.len());
    out.details
        .insert(read.list.key.into(), read.items.len().into());
    out.details.insert("pages".into(), read.pages.into());
    out.details
        .insert("inventory_complete".into(), read.complete.into());
    out.details.extend(facts);
    out.evidence.reserve_exact("; ".len() + 96);
    out.evidence.push_str("; ");
    read.push_coverage(&mut out.evidence);
    out
}

/// What was read ([`Read::coverage`]) of a list read with `items` items on `pages`
/// pages, appended to `s`: every inventory check's evidence ends with it.
fn push_coverage(
    s: &mut String,
    list: &List,
    items: usize,
    pages: u32,
    complete: bool,
    stopped: Option<&str>,
    shapeless: &[u32],
) {
    s.push_str(list.method);
    s.push_str(if complete { " read completely: " } else { ": " });
    push_count(s, items, list.noun);
    s.push_str(" on ");
    push_count(s, pages as usize, "page");
    if !complete {
        s.push_str("; pages after ");
        s.push_str(itoa::Buffer::new().format(pages));
        s.push_str(" unexamined (");
        s.push_str(
            stopped.unwrap_or("the last page read carried a nextCursor that was not followed"),
        );
        s.push(')');
    }
    if !shapeless.is_empty() {
        s.push_str("; the result of page ");
        for (i, p) in shapeless.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            s.push_str(itoa::Buffer::new().format(*p));
        }
        s.push_str(" carries no `");
        s.push_str(list.key);
        s.push_str("` array");
    }
}

/// Without a negotiated session the runner already answers; this keeps `grade` total.
pub fn no_session(reduction: &'static str) -> Outcome {
    Outcome::single(
        Verdict::Error,
        "no MCP session was established, so no inventory was read",
        reduction,
    )
}

/// Bundles for the inventory checks' tests: a session on 2025-11-25 declaring tools,
/// resources and prompts, and list pages.
#[cfg(test)]
pub mod fixture {
    use mcp_probe_schema::model::{ErrorKind, HttpOutcome, Observation, Record, TransportError};
    use mcp_probe_schema::vocab::{leg, LegId};
    use serde_json::{json, Value};

    use super::List;
    use crate::check::{Check, Context};
    use crate::fixture::{evidence, exchange, list_page, session, skipped};
    use crate::preconditions::run_rule;
    use crate::verdict::Outcome;

    /// The negotiated revision.
    pub const REV: &str = "2025-11-25";

    /// Capabilities declaring every list.
    pub fn caps() -> Value {
        json!({"tools": {}, "resources": {}, "prompts": {}})
    }

    /// The live legs of `tool-schemas-validated`, `resource-templates-typed` and
    /// `prompt-arguments-validated` (not what the declaration tests judge).
    pub const LIVE_LEGS: &[LegId] = &[
        leg::SCHEMA_CALL,
        leg::TEMPLATE_CONTROL,
        leg::TEMPLATE_MISSING,
        leg::PROMPT_CONTROL,
        leg::PROMPT_MISSING_ARG,
        leg::PROMPT_NAME_CONTROL,
        leg::PROMPT_UNKNOWN,
    ];

    /// `check` through the runner, on a session with `capabilities` and `records`; a
    /// live leg the records lack is recorded as skipped (the declaration tests judge the
    /// declaration legs: see [`declared`]).
    pub fn grade(check: &dyn Check, capabilities: Value, records: Vec<Record>) -> Outcome {
        grade_with(check, capabilities, records, &Context::default())
    }

    /// [`grade`] in the context `cx` (a definition's parameter values).
    pub fn grade_with(
        check: &dyn Check,
        capabilities: Value,
        mut records: Vec<Record>,
        cx: &Context<'_>,
    ) -> Outcome {
        let absent: Vec<LegId> = LIVE_LEGS
            .iter()
            .copied()
            .filter(|l| !records.iter().any(|r| r.legs.iter().any(|x| x == l)))
            .collect();
        if !absent.is_empty() {
            records.push(skipped(&absent, "not sent: not part of this test"));
        }
        let ev = evidence(Some(session(Some(REV), capabilities, None)), records);
        run_rule(check, &ev, cx)
    }

    /// The verdict of the declaration legs alone (every leg but the `live` ones, by
    /// local name).
    pub fn declared(o: &Outcome, live: &[&str]) -> crate::verdict::Verdict {
        let legs: Vec<crate::verdict::SubVerdict> = o
            .subs
            .iter()
            .filter(|l| !live.contains(&l.id.as_str()))
            .cloned()
            .collect();
        crate::verdict::aggregate(&legs)
    }

    /// One page of `list` answering request `id`, with a `nextCursor` when given.
    pub fn page(list: List, id: i64, items: Vec<Value>, cursor: Option<&str>) -> Record {
        let mut result = json!({ list.key: items });
        if let Some(c) = cursor {
            result["nextCursor"] = json!(c);
        }
        list_page(list.leg, list.method, id, result)
    }

    /// A list request on `legs` that got no response (timeout).
    pub fn transport_error(legs: &[LegId]) -> Record {
        let mut r = exchange(
            legs,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            200,
            "application/json",
            "",
            &[],
        );
        if let Observation::Http(x) = &mut r.observation {
            x.outcome = HttpOutcome::Error(TransportError {
                kind: ErrorKind::Timeout,
                message: "no response within 30 s".into(),
            });
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::common::text::count;

    /// `coverage` as it was written with `format!`, the reference the pieces pushed in
    /// place must equal.
    fn coverage_formatted(
        list: &List,
        items: usize,
        pages: u32,
        complete: bool,
        stopped: Option<&str>,
        shapeless: &[u32],
    ) -> String {
        let what = format!(
            "{} on {}",
            count(items, list.noun),
            count(pages as usize, "page")
        );
        let mut s = if complete {
            format!("{} read completely: {what}", list.method)
        } else {
            let why = stopped.map(str::to_string).unwrap_or_else(|| {
                "the last page read carried a nextCursor that was not followed".into()
            });
            format!(
                "{}: {what}; pages after {} unexamined ({why})",
                list.method, pages
            )
        };
        if !shapeless.is_empty() {
            let pages: Vec<String> = shapeless.iter().map(u32::to_string).collect();
            s.push_str(&format!(
                "; the result of page {} carries no `{}` array",
                pages.join(", "),
                list.key
            ));
        }
        s
    }

    #[test]
    fn the_coverage_is_written_as_formatted() {
        for list in [TOOLS, PROMPTS, TEMPLATES] {
            for items in [0, 1, 2, 1000] {
                for pages in [0, 1, 7, u32::MAX] {
                    for complete in [true, false] {
                        for stopped in [None, Some("page 2 answered HTTP 500")] {
                            for shapeless in [&[][..], &[1], &[2, 30, 4]] {
                                let mut written = String::new();
                                push_coverage(
                                    &mut written,
                                    &list,
                                    items,
                                    pages,
                                    complete,
                                    stopped,
                                    shapeless,
                                );
                                assert_eq!(
                                    written,
                                    coverage_formatted(
                                        &list, items, pages, complete, stopped, shapeless
                                    )
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
