//! The OSCAL report (`--format oscal`): NIST OSCAL 1.1.2 assessment results in JSON, for
//! the GRC tools assessors use (docs/report.md, "OSCAL assessment results").
//!
//! One `result` per run. In it an observation per graded check and server (and, for a
//! check graded on several eras whose outcome lists them, one more per era), methods
//! [`Method::Test`]; a finding only for PASS (`satisfied`) and FAIL (`not-satisfied`),
//! every other verdict staying an observation whose `remarks` give its reason;
//! `reviewed-controls` naming every recommendation of the definition by
//! [`control_id`]; each server an inventory item the observations name as subject.
//! Back-matter holds the assessment method (what `import-ap` points at), the definition
//! and one resource per bundle, named by the SHA-256 of its file, which every
//! observation's `relevant-evidence` points at with the record numbers.
//!
//! Deterministic: every UUID is a version 5 UUID under [`NAMESPACE`] of a name made of
//! input digests (the definition's and each bundle's SHA-256), and the only times are the bundles' collection times
//! (`start`, `end`, `collected`, `metadata.last-modified` = the newest seal time), so
//! the same bundles under the same definition and grader give the same bytes.
//!
//! Written as it goes: the skeleton by hand, each observation and finding one JSON
//! object on its own line, one check's outcomes at a time ([`Report::each_outcome`];
//! the findings' walk reads only the PASS and FAIL results). What they say of a
//! server beside its [`super::ServerKey`] (its bundle's name and collection time) is
//! gathered in one walk over the servers' summaries before, and held for every server:
//! no summary is read back per result.

use std::io::{self, Write};
use std::ops::ControlFlow;

use serde_json::{json, Value};

use super::{Report, Row, Server, ServerKey};
use crate::benchmark::{id_key, Entry, Source};
use crate::details::Detail;
use crate::fmt::escape_line;
use crate::verdict::{Outcome, Verdict};

/// The OSCAL version written (`metadata.oscal-version`), the version of the schema
/// vendored under docs/schemas/vendor/.
pub const OSCAL_VERSION: &str = "1.1.2";

/// The namespace of every UUID this report derives (UUID version 5, RFC 9562): a fixed,
/// randomly drawn UUID, never to change (documented in docs/report.md).
pub const NAMESPACE: [u8; 16] = [
    0xfd, 0x13, 0x13, 0x98, 0x79, 0x8a, 0x4a, 0xb8, 0xa1, 0x82, 0x2d, 0x8c, 0xd4, 0x88, 0x66, 0x54,
];

/// The `ns` of this report's own properties.
pub const NS: &str = "urn:mcp-probe:oscal";

/// How an observation was made (OSCAL `methods`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Decided by the grader from what the server answered on the wire (`TEST`).
    Test,
    /// An operator's attestation (`--attestations`): what the operator examined and
    /// vouches for (`EXAMINE`), written as an observation of its own (`attested` in this file),
    /// never as the method of an outcome decided from the wire.
    Examine,
}

impl Method {
    /// The OSCAL word.
    pub fn word(self) -> &'static str {
        match self {
            Method::Test => "TEST",
            Method::Examine => "EXAMINE",
        }
    }
}

/// The method of the observation of `_entry`'s outcome `_o`: every outcome is decided
/// from the bundle, so [`Method::Test`]. Attestations are observations of their own
/// (`attested` in this file, [`Method::Examine`]).
pub fn method(_entry: &Entry, _o: &Outcome) -> Method {
    Method::Test
}

/// The control id of recommendation `number` of definition `definition_id`:
/// `<definition id>-<number>` (`cis-mcp-server-1.0.0-2.4`), an OSCAL token. Also the
/// suffix of the XCCDF rule ids ([`super::xccdf`]).
pub fn control_id(definition_id: &str, number: &str) -> String {
    format!("{definition_id}-{number}")
}

/// A version 5 UUID (SHA-1) of `name` under [`NAMESPACE`], in its text form.
pub fn uuid_v5(name: &str) -> String {
    uuid_v5_in(&NAMESPACE, name.as_bytes())
}

/// A version 5 UUID of `name` under namespace `ns`.
fn uuid_v5_in(ns: &[u8; 16], name: &[u8]) -> String {
    uuid_text(&uuid_v5_bytes(ns, &[name]))
}

/// The 16 bytes of the version 5 UUID under namespace `ns` of the name made of `parts`,
/// one after the other (hashed as they are, never joined first).
fn uuid_v5_bytes(ns: &[u8; 16], parts: &[&[u8]]) -> [u8; 16] {
    let mut c = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    c.update(ns);
    for p in parts {
        c.update(p);
    }
    let d = c.finish();
    let mut b = [0u8; 16];
    b.copy_from_slice(&d.as_ref()[..16]);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    b
}

/// A UUID's text form: its bytes in lowercase hex, `-` after the 4th, 6th, 8th and
/// 10th.
fn uuid_text(b: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(36);
    for (k, x) in b.iter().enumerate() {
        if matches!(k, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(char::from(HEX[usize::from(x >> 4)]));
        s.push(char::from(HEX[usize::from(x & 0x0f)]));
    }
    s
}

/// A time in UTC microseconds as OSCAL writes it (RFC 3339, `Z`).
fn time(micros: i64) -> String {
    chrono::DateTime::from_timestamp_micros(micros)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

/// A one-line property value: escaped, trimmed, never empty (OSCAL strings may not
/// begin or end with white space).
fn value(s: &str) -> String {
    let e = escape_line(s);
    let t = e.trim();
    if t.is_empty() {
        "(none)".into()
    } else {
        t.to_string()
    }
}

/// One of this report's own properties (`ns` [`NS`]), as the document writes it.
#[derive(serde::Serialize)]
struct Prop<'a> {
    name: &'a str,
    ns: &'static str,
    value: String,
}

fn prop<'a>(name: &'a str, v: &str) -> Prop<'a> {
    Prop {
        name,
        ns: NS,
        value: value(v),
    }
}

/// What the document's UUIDs are derived from: the SHA-256 of the run's key, which
/// names the definition's SHA-256 (and the tailoring's and policy's, when given), and
/// each bundle's, in report order. The digest, not the key itself, goes into each UUID's
/// name: the key grows with the bundles (about 75 bytes each), and hashing all of it for
/// each of the document's UUIDs (a few per check and server) made the time grow with the
/// square of the bundles: 28 s of CPU for 700, 115 s for 1,400.
struct DocKey(String);

impl DocKey {
    fn of(r: &Report, bundles: &[String]) -> DocKey {
        let b = &r.provenance.benchmark;
        let mut k = format!("definition:{}", b.sha256);
        if let Some(t) = &b.tailoring {
            k.push_str(&format!("|tailoring:{}", t.sha256));
        }
        if let Some(p) = &r.policy {
            k.push_str(&format!("|policy:{}", p.sha256));
        }
        if let Some(w) = &r.waivers {
            k.push_str(&format!("|waivers:{}@{}", w.sha256, w.today));
        }
        for s in bundles {
            k.push_str("|bundle:");
            k.push_str(s);
        }
        DocKey(format!(
            "run:{}",
            hex::encode(ring::digest::digest(&ring::digest::SHA256, k.as_bytes()))
        ))
    }

    /// The UUID of what `what` names: [`uuid_v5`] of `what|<key>`.
    fn uuid(&self, what: &str) -> String {
        uuid_text(&self.uuid_bytes(what))
    }

    /// [`DocKey::uuid`]'s 16 bytes.
    fn uuid_bytes(&self, what: &str) -> [u8; 16] {
        uuid_v5_bytes(&NAMESPACE, &[what.as_bytes(), b"|", self.0.as_bytes()])
    }

    /// The UUIDs of server `i`'s inventory item and of its bundle's back-matter resource
    /// (the bundle named `bundle`, [`bundle_name`]), which every observation of its
    /// results names.
    fn server_ids(&self, i: usize, bundle: &str) -> ServerIds {
        ServerIds {
            item: self.uuid_bytes(&format!("server|{i}|{bundle}")),
            bundle: self.uuid_bytes(&format!("bundle|{i}|{bundle}")),
        }
    }
}

/// A server's bundle as the document names it: its SHA-256, or, when the run did not
/// take it, its run id and path.
fn bundle_name(s: &Server) -> String {
    match &s.sha256 {
        Some(h) => format!("sha256:{h}"),
        None => format!("run:{}|path:{}", s.run_id, s.bundle),
    }
}

/// Per-server facts gathered in one walk over the servers' summaries: all the walks
/// over the outcomes need of a server beside its [`ServerKey`] (held for every server,
/// about a hundred bytes and a `bundle_name` of 71 each).
struct Facts {
    /// [`bundle_name`] of each server, in report order.
    bundles: Vec<String>,
    /// [`Server::collected_at`] of each server, in report order.
    collected: Vec<i64>,
    start: Option<i64>,
    end: Option<i64>,
}

fn facts(r: &Report) -> io::Result<Facts> {
    let mut f = Facts {
        bundles: Vec::with_capacity(r.servers.len()),
        collected: Vec::with_capacity(r.servers.len()),
        start: None,
        end: None,
    };
    r.each_server(|_, s| {
        f.bundles.push(bundle_name(s));
        f.collected.push(s.collected_at);
        f.start = Some(
            f.start
                .map_or(s.collected_at, |t: i64| t.min(s.collected_at)),
        );
        let end = s.finished_at.max(s.collected_at);
        f.end = Some(f.end.map_or(end, |t: i64| t.max(end)));
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(f)
}

/// Every recommendation of the definition, by number, in number order: its checks,
/// the checks a tailoring deselected, and what no probe reaches.
pub fn recommendations(r: &Report) -> Vec<String> {
    let b = r.benchmark;
    let mut v: Vec<String> = b
        .checks
        .iter()
        .map(|e| e.id.as_str().to_string())
        .chain(r.provenance.benchmark.deselected.iter().cloned())
        .chain(b.unreached.iter().map(|u| u.section.to_string()))
        .collect();
    v.sort_by_key(|n| id_key(n));
    v.dedup();
    v
}

fn write_line(out: &mut dyn Write, indent: &str, v: &Value, comma: bool) -> io::Result<()> {
    out.write_all(indent.as_bytes())?;
    serde_json::to_writer(&mut *out, v)?;
    out.write_all(if comma { b",\n" } else { b"\n" })
}

/// The remark that says why a verdict other than PASS and FAIL is no finding.
fn no_finding(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass | Verdict::Fail => "",
        Verdict::Error => {
            "ERROR: the observation was never made or cannot be attributed to the server"
        }
        Verdict::Unknown => "UNKNOWN: this run's observations do not decide; a later run might",
        Verdict::NotApplicable => {
            "N/A: wholly operator-side, or the governed condition was observed absent"
        }
        Verdict::NoRev => {
            "NO-REV: the mechanism exists only in a later protocol revision than the one negotiated"
        }
    }
}

/// The observation of one operator attestation in force (`--attestations`): method
/// EXAMINE, no subject (an attestation names a recommendation, not a server), the
/// attested status, who and when, its evidence reference (an `href` when it is a web
/// address), and, beside a check decided from the wire, the conflict when it contradicts
/// the observation, which stands.
fn attested(r: &Report, key: &DocKey, file_sha: &str, a: &crate::attestations::Attested) -> Value {
    let b = &r.provenance.benchmark;
    let x = &a.attestation;
    let control = control_id(&b.id, x.recommendation);
    let mut props = vec![
        prop("recommendation", x.recommendation),
        prop("attested-status", x.status.as_str()),
        prop("attested-by", &x.by),
        prop("attestations-sha256", file_sha),
    ];
    if let Some(e) = x.expires {
        props.push(prop("expires", &e.to_string()));
    }
    let mut evidence =
        json!({"description": format!("operator's evidence: {}", value(&x.evidence))});
    if x.evidence.starts_with("https://") || x.evidence.starts_with("http://") {
        evidence["href"] = Value::String(x.evidence.clone());
    }
    let mut remarks = Vec::new();
    if let Some(c) = &x.comment {
        remarks.push(escape_line(c));
    }
    if let Some((verdict, servers)) = &a.conflict {
        let on: Vec<String> = servers.iter().map(|i| format!("[{}]", i + 1)).collect();
        remarks.push(format!(
            "CONFLICT: the wire says {} on {}; the observation from the wire stands",
            verdict.mark(),
            on.join(", ")
        ));
    } else if a.beside_wire {
        remarks.push("beside a check decided from the wire, whose observation stands".into());
    }
    let mut obs = json!({
        "uuid": key.uuid(&format!("attestation|{file_sha}|{control}|{}", x.line)),
        "title": format!("{} {}: operator attestation", x.recommendation, a.title),
        "description": format!("attested {}", escape_line(&x.words())),
        "props": props,
        "methods": [Method::Examine.word()],
        "relevant-evidence": [evidence],
        "collected": format!("{}T00:00:00Z", x.date),
    });
    if !remarks.is_empty() {
        obs["remarks"] = Value::String(remarks.join("\n\n"));
    }
    obs
}

/// The UUIDs of a server's inventory item and of its bundle's back-matter resource
/// ([`DocKey::server_ids`]), made once per server: 32 bytes a server, where making them
/// for every observation took two SHA-1 hashes of each.
#[derive(Debug, Clone, Copy)]
struct ServerIds {
    item: [u8; 16],
    bundle: [u8; 16],
}

/// What the observations and the finding of a result say of its server: its key, and
/// its bundle's name ([`bundle_name`]) and collection time from [`Facts`], gathered in
/// the one walk over the servers' summaries, so that the walks over the outcomes read
/// no summary back from a spill file, and its [`ServerIds`].
struct Subject<'a> {
    key: &'a ServerKey,
    /// [`bundle_name`] of the server's summary.
    bundle: &'a str,
    /// [`Server::collected_at`].
    collected_at: i64,
    ids: ServerIds,
}

impl Subject<'_> {
    /// [`Server::sha256`]: what [`bundle_name`] names the bundle by, when it was taken.
    fn sha256(&self) -> Option<&str> {
        self.bundle.strip_prefix("sha256:")
    }
}

/// What the observations and the finding of `row`'s outcome on server `i` share.
struct Made<'a> {
    row: &'a Row,
    s: &'a Subject<'a>,
    o: &'a Outcome,
    control: String,
    /// What every UUID of the result is named after, beside what the object is.
    base: String,
    obs_uuid: String,
    /// The endpoint as a title writes it ([`value`]).
    endpoint: String,
    /// The remark of a waiver in force that matched the result.
    waiver: Option<String>,
}

impl<'a> Made<'a> {
    fn new(
        r: &Report,
        key: &DocKey,
        row: &'a Row,
        i: usize,
        s: &'a Subject<'a>,
        o: &'a Outcome,
    ) -> Made<'a> {
        let control = control_id(&r.provenance.benchmark.id, row.entry.id.as_str());
        let base = format!("{control}|server:{i}|{}", s.bundle);
        let obs_uuid = key.uuid(&format!("observation|{base}"));
        let waiver = row.mark(i).filter(|m| m.active).map(|m| {
            format!(
                "{} waived until {} (waivers line {}): {}",
                o.verdict.mark(),
                m.expires,
                m.line,
                escape_line(&m.reason)
            )
        });
        Made {
            row,
            s,
            o,
            control,
            base,
            obs_uuid,
            endpoint: value(&s.key.endpoint),
            waiver,
        }
    }

    /// The eras the outcome lists, when it lists more than one: an observation more
    /// for each.
    fn eras(&self) -> Option<&'a Vec<Detail>> {
        let eras = self.o.details.get("eras").and_then(Detail::as_array);
        eras.filter(|x| x.len() > 1)
    }

    /// The UUID of the observation of era `rev`.
    fn era_uuid(&self, key: &DocKey, rev: &str) -> String {
        key.uuid(&format!("observation|{}|era:{rev}", self.base))
    }

    /// The revision of an era the outcome lists.
    fn era_revision(era: &Detail) -> &str {
        era.get("revision").and_then(Detail::as_str).unwrap_or("")
    }

    /// The observation of the outcome, and one more per era it lists.
    fn observations(&self, key: &DocKey) -> Vec<Observation<'a>> {
        let (e, s, o) = (self.row.entry, self.s, self.o);
        let endpoint = &self.endpoint;
        let records = crate::fmt::record_list(&o.records);
        let evidence_desc = format!(
            "{}; records {}",
            match s.sha256() {
                Some(h) => format!("bundle SHA-256 {h} ({})", value(&s.key.bundle)),
                None => format!("bundle {} (SHA-256 not taken)", value(&s.key.bundle)),
            },
            if records.is_empty() {
                "(none)"
            } else {
                &records
            }
        );
        let bundle_href = format!("#{}", uuid_text(&s.ids.bundle));
        let subject = uuid_text(&s.ids.item);
        let mut remarks = Vec::new();
        let why = no_finding(o.verdict);
        if !why.is_empty() {
            remarks.push(why.to_string());
        }
        if e.source == Source::ReportedOnly {
            remarks.push(format!(
                "reported only: {}",
                e.unreached
                    .unwrap_or("the recommendation is wholly operator-side")
            ));
        }
        if !o.reduction.is_empty() {
            remarks.push(format!(
                "what a probe cannot reach: {}",
                escape_line(&o.reduction)
            ));
        }
        if let Some(w) = &self.waiver {
            remarks.push(w.clone());
        }
        let mut props = vec![
            prop("check", e.id.as_str()),
            prop("verdict", o.verdict.mark()),
            prop("rule", e.rule),
            prop("verdict-source", e.source.key()),
            prop("level", e.level.as_str()),
            prop("endpoint", &s.key.endpoint),
            prop("revision", s.key.revision_label()),
        ];
        if self.waiver.is_some() {
            props.push(prop("waived", "true"));
        }
        let collected = time(s.collected_at);
        let method = method(e, o).word();
        let eras = self.eras();
        let mut observations = Vec::with_capacity(1 + eras.map_or(0, Vec::len));
        // A check graded on several eras: one observation more per era its outcome lists.
        for era in eras.into_iter().flatten() {
            let rev = Made::era_revision(era);
            let verdict = era.get("verdict").and_then(Detail::as_str).unwrap_or("");
            let applicable = era
                .get("applicable")
                .and_then(Detail::as_bool)
                .unwrap_or(true);
            let why = Verdict::ORDER
                .iter()
                .find(|v| v.mark() == verdict)
                .map_or("", |v| no_finding(*v));
            observations.push(Observation {
                uuid: self.era_uuid(key, rev),
                title: format!(
                    "{} {} on {endpoint}, era {}",
                    e.id.as_str(),
                    e.title,
                    value(rev)
                ),
                description: format!(
                    "{} on the {} era{}",
                    value(verdict),
                    value(rev),
                    if applicable {
                        ""
                    } else {
                        " (not applicable there: it does not count)"
                    }
                ),
                props: vec![
                    prop("check", e.id.as_str()),
                    prop("verdict", verdict),
                    prop("era", rev),
                    prop("endpoint", &s.key.endpoint),
                ],
                methods: [method],
                subjects: [SubjectRef::of(subject.clone())],
                relevant_evidence: [Evidence {
                    href: bundle_href.clone(),
                    description: format!(
                        "{evidence_desc} (the records of every era the check was graded on)"
                    ),
                }],
                collected: collected.clone(),
                remarks: (!why.is_empty()).then(|| why.to_string()),
            });
        }
        let obs = Observation {
            uuid: self.obs_uuid.clone(),
            title: format!("{} {} on {endpoint}", e.id.as_str(), e.title),
            description: format!("{}: {}", o.verdict.mark(), escape_line(&o.evidence)),
            props,
            methods: [method],
            subjects: [SubjectRef::of(subject)],
            relevant_evidence: [Evidence {
                href: bundle_href,
                description: evidence_desc,
            }],
            collected,
            remarks: (!remarks.is_empty()).then(|| remarks.join("\n\n")),
        };
        // The outcome's own observation first, then the eras'.
        observations.insert(0, obs);
        observations
    }

    /// The finding of a PASS or a FAIL (`None` for any other verdict), related to the
    /// observations [`Made::observations`] makes of the same outcome.
    fn finding(&self, key: &DocKey) -> Option<Finding<'a>> {
        let (e, o) = (self.row.entry, self.o);
        let (state, reason) = match o.verdict {
            Verdict::Pass => ("satisfied", "pass"),
            Verdict::Fail => ("not-satisfied", "fail"),
            _ => return None,
        };
        let endpoint = &self.endpoint;
        let mut related = vec![Related {
            uuid: self.obs_uuid.clone(),
        }];
        for era in self.eras().into_iter().flatten() {
            related.push(Related {
                uuid: self.era_uuid(key, Made::era_revision(era)),
            });
        }
        let mut remarks = Vec::new();
        if o.verdict == Verdict::Fail {
            remarks.push(format!("remediation: {}", e.remediation));
        }
        if let Some(w) = &self.waiver {
            remarks.push(w.clone());
        }
        Some(Finding {
            uuid: key.uuid(&format!("finding|{}", self.base)),
            title: format!(
                "{} {} on {endpoint}: {}",
                e.id.as_str(),
                e.title,
                o.verdict.mark()
            ),
            description: format!("{}: {}", o.verdict.mark(), escape_line(&o.evidence)),
            props: [
                prop("verdict", o.verdict.mark()),
                prop("endpoint", &self.s.key.endpoint),
            ],
            target: Target {
                kind: "objective-id",
                target_id: self.control.clone(),
                status: Status { state, reason },
            },
            related_observations: related,
            remarks: (!remarks.is_empty()).then(|| remarks.join("\n\n")),
        })
    }
}

/// An observation of a result, as the document writes it (its keys in this order).
#[derive(serde::Serialize)]
struct Observation<'a> {
    uuid: String,
    title: String,
    description: String,
    props: Vec<Prop<'a>>,
    methods: [&'static str; 1],
    subjects: [SubjectRef; 1],
    #[serde(rename = "relevant-evidence")]
    relevant_evidence: [Evidence; 1],
    collected: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    remarks: Option<String>,
}

/// An observation's subject: a server's inventory item.
#[derive(serde::Serialize)]
struct SubjectRef {
    #[serde(rename = "subject-uuid")]
    uuid: String,
    #[serde(rename = "type")]
    kind: &'static str,
}

impl SubjectRef {
    fn of(uuid: String) -> SubjectRef {
        SubjectRef {
            uuid,
            kind: "inventory-item",
        }
    }
}

/// An observation's relevant evidence: its bundle's back-matter resource.
#[derive(serde::Serialize)]
struct Evidence {
    href: String,
    description: String,
}

/// A finding of a PASS or a FAIL, as the document writes it (its keys in this order).
#[derive(serde::Serialize)]
struct Finding<'a> {
    uuid: String,
    title: String,
    description: String,
    props: [Prop<'a>; 2],
    target: Target,
    #[serde(rename = "related-observations")]
    related_observations: Vec<Related>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remarks: Option<String>,
}

#[derive(serde::Serialize)]
struct Target {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(rename = "target-id")]
    target_id: String,
    status: Status,
}

#[derive(serde::Serialize)]
struct Status {
    state: &'static str,
    reason: &'static str,
}

#[derive(serde::Serialize)]
struct Related {
    #[serde(rename = "observation-uuid")]
    uuid: String,
}

/// Call `f` with what each graded check's outcome on each server that `want` accepts
/// (by the verdict) makes, check by check (the outcomes of one check read a part at a
/// time, [`Report::each_outcome`], and only those wanted). What `f` needs of each
/// server is in `facts`: no summary is read.
fn each_made(
    r: &Report,
    key: &DocKey,
    facts: &Facts,
    ids: &[ServerIds],
    want: impl Fn(Verdict) -> bool,
    mut f: impl FnMut(&Made) -> io::Result<()>,
) -> io::Result<()> {
    for row in r.graded() {
        r.each_outcome(
            row,
            |i| row.verdict(i).is_some_and(&want),
            |i, o| {
                let (Some(k), Some(bundle), Some(&collected_at), Some(&ids)) = (
                    r.servers.get(i),
                    facts.bundles.get(i),
                    facts.collected.get(i),
                    ids.get(i),
                ) else {
                    return Err(io::Error::other(format!("the report has no server {i}")));
                };
                let s = Subject {
                    key: k,
                    bundle,
                    collected_at,
                    ids,
                };
                f(&Made::new(r, key, row, i, &s, o))?;
                Ok(ControlFlow::Continue(()))
            },
        )?;
    }
    Ok(())
}

/// Write the OSCAL assessment results of `r` to `out`.
pub fn write(r: &Report, out: &mut dyn Write) -> io::Result<()> {
    let facts = facts(r)?;
    let key = DocKey::of(r, &facts.bundles);
    let ids: Vec<ServerIds> = (facts.bundles.iter().enumerate())
        .map(|(i, b)| key.server_ids(i, b))
        .collect();
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let start = time(facts.start.unwrap_or(0));
    let end = time(facts.end.unwrap_or(0));
    let ap = key.uuid("assessment-method");
    let definition = key.uuid("definition");
    let mut meta_props = vec![
        prop("benchmark-id", &b.id),
        prop("benchmark-version", &b.version),
        prop("benchmark-sha256", &b.sha256),
        prop("grader", &g.name),
        prop("grader-version", &g.version),
        prop("grader-build", &g.commit),
        prop("grader-target", &g.target),
        prop("grader-rustc", &g.rustc),
    ];
    if let Some(t) = &b.tailoring {
        meta_props.push(prop("tailoring-sha256", &t.sha256));
    }
    if let Some(p) = &r.policy {
        meta_props.push(prop("policy-sha256", &p.sha256));
    }
    if let Some(w) = &r.waivers {
        meta_props.push(prop("waivers-sha256", &w.sha256));
        meta_props.push(prop("waivers-judged-on", &w.today.to_string()));
    }
    let metadata = json!({
        "title": format!("mcp-grade assessment results: {} {}", b.name, b.version),
        "last-modified": end,
        "version": g.version,
        "oscal-version": OSCAL_VERSION,
        "props": meta_props,
    });
    let import_ap = json!({
        "href": format!("#{ap}"),
        "remarks": "No OSCAL assessment plan exists for this run: import-ap points at the back-matter resource that describes the method.",
    });
    out.write_all(b"{\n  \"assessment-results\": {\n")?;
    write!(out, "    \"uuid\": ")?;
    serde_json::to_writer(&mut *out, &key.uuid("assessment-results"))?;
    out.write_all(b",\n    \"metadata\": ")?;
    serde_json::to_writer(&mut *out, &metadata)?;
    out.write_all(b",\n    \"import-ap\": ")?;
    serde_json::to_writer(&mut *out, &import_ap)?;
    out.write_all(b",\n    \"results\": [\n      {\n")?;
    let mut head = serde_json::Map::new();
    head.insert("uuid".into(), key.uuid("result").into());
    head.insert(
        "title".into(),
        format!(
            "{} {} over {} bundle(s)",
            b.name,
            b.version,
            r.servers.len()
        )
        .into(),
    );
    head.insert(
        "description".into(),
        format!(
            "Every check of {} graded by {} {} from signed evidence bundles, offline: an observation per check and server (and per era for checks graded on several), a finding for each PASS and FAIL.",
            b.id, g.name, g.version
        )
        .into(),
    );
    head.insert("start".into(), start.into());
    head.insert("end".into(), end.clone().into());
    for (k, v) in &head {
        write!(out, "        {}: ", Value::String(k.clone()))?;
        serde_json::to_writer(&mut *out, v)?;
        out.write_all(b",\n")?;
    }
    // Each server an inventory item.
    out.write_all(b"        \"local-definitions\": {\n          \"inventory-items\": [\n")?;
    let n = r.servers.len();
    r.each_server(|i, s| {
        let bundle = bundle_name(s);
        let mut props = vec![
            prop("endpoint", &s.endpoint),
            prop("revision", s.revision_label()),
            prop("transport", s.transport),
            prop("run-id", &s.run_id),
            prop("run-status", s.run_status),
            prop("collector", &s.collector),
            prop("collector-build", &s.collector_build),
        ];
        if let Some(h) = &s.sha256 {
            props.push(prop("bundle-sha256", h));
        }
        let item = json!({
            "uuid": key.uuid(&format!("server|{i}|{bundle}")),
            "description": format!("The MCP server at {} as bundle {} saw it", value(&s.endpoint), value(&s.bundle)),
            "props": props,
        });
        write_line(out, "            ", &item, i + 1 < n)?;
        Ok(ControlFlow::Continue(()))
    })?;
    out.write_all(b"          ]\n        },\n")?;
    let controls: Vec<Value> = recommendations(r)
        .iter()
        .map(|n| json!({"control-id": control_id(&b.id, n)}))
        .collect();
    let reviewed = json!({
        "description": format!("Every recommendation of {}: the checks graded (or deselected by a tailoring) and those no probe reaches.", b.id),
        "control-selections": [{"include-controls": controls}],
    });
    out.write_all(b"        \"reviewed-controls\": ")?;
    serde_json::to_writer(&mut *out, &reviewed)?;
    // Observations, then findings: two walks over the outcomes, neither held whole.
    let attestations = r.attestations.as_ref();
    let any_attested = attestations.is_some_and(|a| !a.list.is_empty());
    let any_obs = n > 0 && r.graded().next().is_some() || any_attested;
    let any_finding = r.total(Verdict::Pass) + r.total(Verdict::Fail) > 0;
    if any_obs {
        out.write_all(b",\n        \"observations\": [\n")?;
        let mut first = true;
        each_made(
            r,
            &key,
            &facts,
            &ids,
            |_| true,
            |m| {
                for o in m.observations(&key) {
                    if !first {
                        out.write_all(b",\n")?;
                    }
                    first = false;
                    out.write_all(b"          ")?;
                    serde_json::to_writer(&mut *out, &o)?;
                }
                Ok(())
            },
        )?;
        for a in attestations
            .iter()
            .flat_map(|x| x.list.iter().map(move |a| (x, a)))
        {
            if !first {
                out.write_all(b",\n")?;
            }
            first = false;
            out.write_all(b"          ")?;
            serde_json::to_writer(&mut *out, &attested(r, &key, &a.0.sha256, a.1))?;
        }
        out.write_all(b"\n        ]")?;
    }
    if any_finding {
        out.write_all(b",\n        \"findings\": [\n")?;
        let mut first = true;
        let decided = |v| matches!(v, Verdict::Pass | Verdict::Fail);
        each_made(r, &key, &facts, &ids, decided, |m| {
            if let Some(f) = &m.finding(&key) {
                if !first {
                    out.write_all(b",\n")?;
                }
                first = false;
                out.write_all(b"          ")?;
                serde_json::to_writer(&mut *out, f)?;
            }
            Ok(())
        })?;
        out.write_all(b"\n        ]")?;
    }
    out.write_all(b"\n      }\n    ],\n    \"back-matter\": {\n      \"resources\": [\n")?;
    let method_text = format!(
        "Black-box assessment of MCP servers against {} {}: mcp-collect connected to each server as any client would and recorded every exchange in a signed, hash-chained evidence bundle; {} {} verified each bundle and decided each check from its records alone, offline. Observations of checks decided from the wire have method TEST; an operator attestation given with --attestations is an observation of its own with method EXAMINE, and never changes an observation from the wire.",
        b.name, b.version, g.name, g.version
    );
    write_line(
        out,
        "        ",
        &json!({"uuid": ap, "title": "Assessment method: mcp-collect evidence graded by mcp-grade", "description": method_text}),
        true,
    )?;
    let mut def_props = vec![prop("sha256", &b.sha256), prop("benchmark-id", &b.id)];
    if let Some(t) = &b.tailoring {
        def_props.push(prop("tailoring-file", &t.file));
        def_props.push(prop("tailoring-sha256", &t.sha256));
    }
    write_line(
        out,
        "        ",
        &json!({
            "uuid": definition,
            "title": format!("Benchmark definition {}", b.id),
            "description": format!("The definition the checks were graded under: {} {} (SHA-256 {}).", b.name, b.version, b.sha256),
            "props": def_props,
        }),
        n > 0,
    )?;
    r.each_server(|i, s| {
        let bundle = bundle_name(s);
        let mut res = json!({
            "uuid": key.uuid(&format!("bundle|{i}|{bundle}")),
            "title": format!("Evidence bundle {}", value(&s.bundle)),
            "description": match &s.sha256 {
                Some(h) => format!("Signed evidence bundle of {} (SHA-256 {h}), run {}, signed by key {}.", value(&s.endpoint), value(&s.run_id), value(&s.signer)),
                None => format!("Signed evidence bundle of {}, run {}, signed by key {}.", value(&s.endpoint), value(&s.run_id), value(&s.signer)),
            },
            "props": [prop("run-id", &s.run_id), prop("signer", &s.signer)],
        });
        if let Some(h) = &s.sha256 {
            res["rlinks"] = json!([{
                "href": href(&s.bundle),
                "media-type": "application/cose",
                "hashes": [{"algorithm": "SHA-256", "value": h}],
            }]);
        }
        write_line(out, "        ", &res, i + 1 < n)?;
        Ok(ControlFlow::Continue(()))
    })?;
    out.write_all(b"      ]\n    }\n  }\n}\n")
}

/// A file path as a URI reference: every byte but the unreserved ones and `/`
/// percent-encoded.
fn href(path: &str) -> String {
    let mut s = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    if s.is_empty() {
        s.push('.');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_v5_is_rfc_9562() {
        // The DNS namespace and "python.org" give the RFC's (and Python's) known answer.
        let dns = [
            0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4,
            0x30, 0xc8,
        ];
        assert_eq!(
            uuid_v5_in(&dns, b"python.org"),
            "886313e1-3b8a-5372-9b90-0c9aee199e5d"
        );
        // The text form as the hex of the bytes, cut at the dashes.
        let b: [u8; 16] = std::array::from_fn(|k| (k as u8).wrapping_mul(37).wrapping_add(5));
        let h = hex::encode(b);
        assert_eq!(
            uuid_text(&b),
            format!(
                "{}-{}-{}-{}-{}",
                &h[..8],
                &h[8..12],
                &h[12..16],
                &h[16..20],
                &h[20..]
            )
        );
        let u = uuid_v5("x");
        assert_eq!(u, uuid_v5("x"));
        assert_ne!(u, uuid_v5("y"));
        assert_eq!(&u[14..15], "5");
    }

    #[test]
    fn the_uuids_name_every_bundle_by_a_key_whose_size_does_not_grow_with_them() {
        let bm = crate::benchmark::Benchmark::builtin();
        let r = crate::report::Builder::new(bm, None, None)
            .finish()
            .expect("an empty report");
        let bundles =
            |n: usize| -> Vec<String> { (0..n).map(|i| format!("sha256:{i:064x}")).collect() };
        let one = DocKey::of(&r, &bundles(1));
        let many = DocKey::of(&r, &bundles(2_000));
        assert_eq!(one.0.len(), many.0.len());
        // A UUID is the one of `what|<key>`, however it is hashed.
        assert_eq!(many.uuid("x|y"), uuid_v5(&format!("x|y|{}", many.0)));
        let ids = many.server_ids(3, "sha256:ab");
        assert_eq!(uuid_text(&ids.item), many.uuid("server|3|sha256:ab"));
        assert_eq!(uuid_text(&ids.bundle), many.uuid("bundle|3|sha256:ab"));
        assert_ne!(one.uuid("x"), many.uuid("x"));
        // Each bundle counts, and so does its place in the report's order.
        let mut swapped = bundles(2_000);
        swapped.swap(0, 1_999);
        assert_ne!(DocKey::of(&r, &swapped).uuid("x"), many.uuid("x"));
        let mut changed = bundles(2_000);
        changed[1_000].push('0');
        assert_ne!(DocKey::of(&r, &changed).uuid("x"), many.uuid("x"));
        assert_eq!(DocKey::of(&r, &bundles(2_000)).uuid("x"), many.uuid("x"));
    }

    /// `n` servers, every check graded on each, the outcomes held in memory or in a
    /// spill file: PASS, FAIL and UNKNOWN in turn, some checks listing two eras, some
    /// servers' bundles named by their SHA-256 and some not, two servers at one
    /// endpoint; one check's results waived on some servers.
    fn many(n: usize, spill: bool) -> Report {
        use crate::benchmark::CheckResult;
        use crate::verdict::{SubOutcome, SubVerdict};
        let ev = crate::fixture::evidence(
            Some(crate::fixture::session(
                Some("2025-11-25"),
                serde_json::json!({}),
                None,
            )),
            Vec::new(),
        );
        let bm = crate::benchmark::Benchmark::builtin();
        let spill = spill.then(|| {
            super::super::Spill::create(None, super::super::SpillForm::Outcomes)
                .expect("spill file")
        });
        let mut b = super::super::Builder::new(bm, None, spill);
        for i in 0..n {
            let results = bm
                .checks
                .iter()
                .enumerate()
                .map(|(k, e)| {
                    let sub =
                        [SubOutcome::Pass, SubOutcome::Fail, SubOutcome::Unknown][(i + k) % 3];
                    let mut o = Outcome::from_subs(
                        vec![SubVerdict::new(
                            "a",
                            sub,
                            format!("server {i} said \"{k}\""),
                        )],
                        if k % 2 == 0 { "one leg" } else { "" },
                    )
                    .with_records([i as u64, k as u64]);
                    if k % 5 == 0 {
                        let mark = o.verdict.mark();
                        o = o.with_detail(
                            "eras",
                            json!([
                                {"revision": "2025-11-25", "verdict": mark},
                                {"revision": "2025-06-18", "verdict": "N/A", "applicable": false},
                            ]),
                        );
                    }
                    CheckResult {
                        entry: e,
                        outcome: Some(o),
                    }
                })
                .collect();
            let mut server = Server::new(&ev, None);
            server.endpoint = format!("http://s{:03}.test/mcp", i.min(n - 2));
            server.bundle = format!("b{i}.mcpev");
            server.collected_at = 1_764_480_000_000_000 + i as i64 * 1_000_003;
            server.sha256 = (i % 3 != 1).then(|| format!("{i:064x}"));
            b.server(server, results).expect("server");
        }
        let mut r = b.finish().expect("report");
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("waivers.toml");
        let check = r.rows[1].entry.id.as_str();
        std::fs::write(
            &path,
            format!("[[waiver]]\ncheck = \"{check}\"\nendpoint = \"http://s00*\"\nreason = \"known\"\nexpires = 2099-01-01\n"),
        )
        .expect("waivers");
        let w = crate::waivers::Waivers::load(&path, bm).expect("waivers load");
        r.apply_waivers(
            &w,
            chrono::NaiveDate::from_ymd_opt(2026, 12, 4).expect("date"),
        );
        r
    }

    /// A report whose outcomes were spilled writes the document of the same outcomes
    /// held in memory, over more servers than a spill file reads back at a time; each
    /// finding names the observations made of its result, and only those.
    #[test]
    fn spilled_and_held_reports_give_the_same_document() {
        let n = super::super::WALK + 6;
        let (held, spilled) = (many(n, false), many(n, true));
        assert!(held.holds_outcomes() && !spilled.holds_outcomes());
        assert!(held
            .rows
            .iter()
            .any(|r| r.marks.iter().any(|(_, m)| m.active)));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write(&held, &mut a).expect("written");
        write(&spilled, &mut b).expect("written");
        assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
        let doc: Value = serde_json::from_slice(&a).expect("JSON");
        let result = &doc["assessment-results"]["results"][0];
        let observations = result["observations"].as_array().expect("observations");
        let findings = result["findings"].as_array().expect("findings");
        let graded = held.graded().count();
        assert!(
            observations.len() > graded * n,
            "an observation more per era"
        );
        let by_uuid: std::collections::BTreeMap<&str, &Value> = observations
            .iter()
            .map(|o| (o["uuid"].as_str().expect("uuid"), o))
            .collect();
        assert_eq!(by_uuid.len(), observations.len(), "every UUID its own");
        let decided = held.total(Verdict::Pass) + held.total(Verdict::Fail);
        assert_eq!(findings.len(), decided);
        let mut related = 0;
        for f in findings {
            let title = f["title"].as_str().expect("title");
            for x in f["related-observations"].as_array().expect("related") {
                let o = by_uuid[x["observation-uuid"].as_str().expect("uuid")];
                let on = o["title"].as_str().expect("title");
                assert!(
                    title.starts_with(on.split(", era ").next().expect("title")),
                    "{title} / {on}"
                );
                related += 1;
            }
        }
        assert!(
            related > findings.len(),
            "findings of checks graded on eras"
        );
        assert!(String::from_utf8_lossy(&a).contains("waived until 2099-01-01"));
    }

    #[test]
    fn href_encodes_what_a_uri_reference_cannot_hold() {
        assert_eq!(href("examples/py2.mcpev"), "examples/py2.mcpev");
        assert_eq!(href("a b/ü"), "a%20b/%C3%BC");
    }
}
