//! The JSON report, schema `mcp-grade-report/1` (documented field by field in
//! `docs/report.md`).
//!
//! Stability: within `mcp-grade-report/1` changes are additive only: new keys may
//! appear (consumers must ignore keys they do not know), no key is removed, renamed or
//! changes type or meaning. Anything else bumps the schema id. Keys are written in a
//! fixed order, and every key is always present (`null` when it has no value), so the
//! shape of one report is the shape of all of them.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::ops::ControlFlow;

use crate::details::{Detail, Details};
use crate::fmt::utc;
use crate::verdict::{Outcome, SubVerdict, Verdict};

use super::{BaselineInfo, Report, Row, Server, GRADER_VERSION};

/// The schema id written at the top of every report.
pub const SCHEMA: &str = "mcp-grade-report/1";

// The document is serialised straight from borrowed views of the report (no
// intermediate `Value` tree, no copies of evidence strings): the field order of each
// struct is the key order of the report.

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Doc<'a> {
    schema: &'static str,
    benchmark: Bench,
    grader_version: &'static str,
    /// The benchmark definition (id, version, SHA-256, tailoring) and the grader (name,
    /// version, git commit, target, rustc) that made this report.
    provenance: &'a super::provenance::Provenance,
    level: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy: Option<&'a super::PolicyInfo>,
    fail_on: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    waivers: Option<WaiversJ<'a>>,
    /// The `--attestations` file: the attestations in force (each with its conflict with
    /// the wire, if any) and the expired ones.
    #[serde(skip_serializing_if = "Option::is_none")]
    attestations: Option<serde_json::Value>,
    /// How the benchmark's recommendations are accounted for (absent when the definition
    /// does not state how many it has).
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<super::coverage::CoverageJ>,
    /// PASS / (PASS + FAIL) over the results that can pass or fail, overall and per
    /// server (`servers` order): the score as CIS-CAT states it.
    score: super::coverage::ScoreJ,
    /// The recommendations a tailoring names (`number`, `title`, `level`, `source`:
    /// `attested` or `not reachable from outside`; absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    recommendations: Option<Vec<serde_json::Value>>,
    graded: Graded,
    /// Verdict counts over every check and server, keyed by verdict.
    #[schemars(with = "std::collections::BTreeMap<String, usize>")]
    totals: Summary,
    servers: Vec<ServerJ<'a>>,
    #[schemars(with = "Vec<CheckJ<'a>>")]
    checks: ChecksJ<'a>,
    not_reachable: Vec<UnreachableJ>,
}

/// Every check, each one's outcomes read (from the rows or the spill file) only while it
/// is written, so a report over many bundles holds one check's results at a time.
/// `None`: an empty array (the frame [`to_writer`] writes the checks into).
struct ChecksJ<'a>(Option<&'a Report>);

impl Serialize for ChecksJ<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let Some(r) = self.0 else {
            return s.serialize_seq(Some(0))?.end();
        };
        let mut seq = s.serialize_seq(Some(r.rows.len()))?;
        for row in &r.rows {
            let outcomes = r.outcomes(row).map_err(S::Error::custom)?;
            seq.serialize_element(&check(r, row, outcomes.as_deref()))?;
        }
        seq.end()
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct UnreachableJ {
    section: &'static str,
    title: &'static str,
    governs: &'static str,
    why: &'static str,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct WaiversJ<'a> {
    file: &'a str,
    sha256: &'a str,
    date: String,
    waived: usize,
    stale: Vec<WaiverJ<'a>>,
    expired: Vec<WaiverJ<'a>>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct WaiverJ<'a> {
    line: usize,
    check: &'static str,
    endpoint: &'a str,
    reason: &'a str,
    expires: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    why: Option<&'a str>,
}

fn waiver_j<'a>(w: &'a crate::waivers::Waiver, why: Option<&'a str>) -> WaiverJ<'a> {
    WaiverJ {
        line: w.line,
        check: w.check,
        endpoint: &w.endpoint,
        reason: &w.reason,
        expires: w.expires.to_string(),
        why,
    }
}

/// What a waiver did to one result.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct MarkJ<'a> {
    state: &'static str,
    reason: &'a str,
    expires: String,
    line: usize,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Bench {
    name: &'static str,
    version: &'static str,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Graded {
    count: usize,
    in_scope: usize,
    total: usize,
}

/// Verdict counts, keyed by mark, in report order.
struct Summary([usize; 6]);

impl Summary {
    fn new(count: impl Fn(Verdict) -> usize) -> Summary {
        let mut n = [0; 6];
        for (i, v) in Verdict::ORDER.iter().enumerate() {
            n[i] = count(*v);
        }
        Summary(n)
    }
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(6))?;
        for (v, n) in Verdict::ORDER.iter().zip(self.0) {
            m.serialize_entry(v.mark(), &n)?;
        }
        m.end()
    }
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ServerJ<'a> {
    index: usize,
    endpoint: &'a str,
    target: &'a str,
    negotiated_revision: &'a Option<String>,
    other_eras_probed: &'a [String],
    /// `streamable-http`, `http+sse` or `stdio`.
    transport: &'static str,
    /// The bundle's RFC 3161 timestamp (as in `mcp-grade verify --json`).
    timestamp: crate::commands::TimestampJson,
    server_info: &'a Option<Value>,
    auth_required: Option<bool>,
    authenticated: Option<bool>,
    run_status: &'static str,
    failure: &'a Option<String>,
    bundle_id: &'a str,
    bundle: &'a str,
    signer: &'a str,
    collector: &'a str,
    /// `collector.build` of the bundle: the git commit of the collector that wrote it.
    collector_build: &'a str,
    collected_at: String,
    baseline: Option<BaselineJ<'a>>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct BaselineJ<'a> {
    mode: &'static str,
    path: &'a str,
    used: bool,
    bundle_id: &'a Option<String>,
    collected_at: Option<String>,
    signer: &'a Option<String>,
    stored: Option<bool>,
    problem: &'a Option<String>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct CheckJ<'a> {
    id: &'static str,
    /// The rule that graded it (stable across benchmark revisions and renumbering).
    rule: &'static str,
    /// The rule's parameter values under the benchmark definition graded.
    #[schemars(with = "std::collections::BTreeMap<String, Value>")]
    params: &'a crate::check::Params,
    level: u8,
    title: &'static str,
    section: &'static str,
    source: &'static str,
    graded: bool,
    #[schemars(with = "std::collections::BTreeMap<String, usize>")]
    summary: Summary,
    results: Vec<ResultJ<'a>>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct ResultJ<'a> {
    server: usize,
    endpoint: &'a str,
    verdict: &'static str,
    evidence: &'a str,
    reduction: &'a str,
    #[schemars(with = "std::collections::BTreeMap<String, String>")]
    legs: LegsJ<'a>,
    records: &'a [u64],
    #[schemars(with = "serde_json::Map<String, Value>")]
    details: &'a Details,
    #[serde(skip_serializing_if = "Option::is_none")]
    waiver: Option<MarkJ<'a>>,
}

/// Leg id to outcome word, in leg order.
struct LegsJ<'a>(&'a [SubVerdict]);

impl Serialize for LegsJ<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for l in self.0 {
            m.serialize_entry(&l.id, &l.outcome)?;
        }
        m.end()
    }
}

/// The document with an empty `servers` array ([`to_writer`]'s frame; [`document`] and
/// [`write_servers`] fill it).
fn doc(r: &Report) -> Doc<'_> {
    Doc {
        schema: SCHEMA,
        benchmark: Bench {
            name: r.benchmark.name,
            version: r.benchmark.version,
        },
        grader_version: GRADER_VERSION,
        provenance: &r.provenance,
        level: r.level,
        policy: r.policy.as_ref(),
        fail_on: r.fail_on.as_str(),
        waivers: r.waivers.as_ref().map(|a| WaiversJ {
            file: &a.file,
            sha256: &a.sha256,
            date: a.today.to_string(),
            waived: a.waived,
            stale: a
                .stale
                .iter()
                .map(|s| waiver_j(&s.waiver, Some(&s.why)))
                .collect(),
            expired: a.expired.iter().map(|w| waiver_j(w, None)).collect(),
        }),
        attestations: super::coverage::attestations_json(r),
        coverage: super::coverage::coverage_json(r),
        score: super::coverage::score_json(r),
        recommendations: super::coverage::named_json(r),
        graded: Graded {
            count: r.graded().count(),
            in_scope: r.rows.len(),
            total: r.benchmark.checks.len(),
        },
        totals: Summary::new(|v| r.total(v)),
        servers: Vec::new(),
        checks: ChecksJ(Some(r)),
        not_reachable: r
            .benchmark
            .sections_unreached()
            .map(|u| UnreachableJ {
                section: u.section,
                title: u.title,
                governs: u.governs,
                why: u.why,
            })
            .collect(),
    }
}

/// The report as a JSON value.
/// `Value::Null` when a spilled report's servers cannot be read back.
pub fn document(r: &Report) -> Value {
    let mut v = serde_json::to_value(doc(r)).unwrap_or(Value::Null);
    let mut servers = Vec::with_capacity(r.servers.len());
    let read = r.each_server(|i, s| {
        servers.push(serde_json::to_value(server(i, s)).map_err(std::io::Error::other)?);
        Ok(ControlFlow::Continue(()))
    });
    match (read, v.get_mut("servers")) {
        (Ok(()), Some(slot)) => *slot = Value::Array(servers),
        _ => return Value::Null,
    }
    v
}

/// The report as pretty-printed JSON text written to `w` (the bytes of [`to_string`]).
///
/// Written as it is made: the document without its servers and checks, pretty-printed,
/// with the servers (one at a time) and the checks written into its empty `servers` and
/// `checks` arrays. The checks' results are rendered in
/// pieces (one check's results on up to [`PIECE`] servers) on [`Report::jobs`] threads
/// and written in order, each piece pretty-printed alone and indented to its depth: the
/// bytes `serde_json` writes for the whole document, whatever the number of threads, and
/// never more than a window of pieces held at once.
pub fn to_writer(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    // The frame holds each server's score (about 80 bytes each, pretty-printed): made
    // with room for them, it is not grown by doubling and copying, which over 10,000
    // servers held about three times its size at once.
    let mut frame = Vec::with_capacity(FRAME_ROOM + FRAME_ROOM_PER_SERVER * r.servers.len());
    serde_json::to_writer_pretty(
        &mut frame,
        &Doc {
            checks: ChecksJ(None),
            ..doc(r)
        },
    )
    .map_err(std::io::Error::from)?;
    let frame = String::from_utf8(frame).map_err(std::io::Error::other)?;
    // The top-level keys: at two spaces after a line break, which no value nested in the
    // frame (and no string: a pretty-printed string holds no line break) can be. Each
    // split is just before the key's `[]`.
    let split = |key: &str| {
        frame
            .find(key)
            .map(|at| at + key.len() - 2)
            .ok_or_else(|| std::io::Error::other(format!("no {key:?} in the JSON frame")))
    };
    let servers = split("\n  \"servers\": []")?;
    let checks = split("\n  \"checks\": []")?;
    if servers > checks {
        return Err(std::io::Error::other(
            "the JSON frame has its checks before its servers",
        ));
    }
    w.write_all(&frame.as_bytes()[..servers])?;
    write_servers(r, w)?;
    w.write_all(&frame.as_bytes()[servers + 2..checks])?;
    write_checks(r, w)?;
    w.write_all(&frame.as_bytes()[checks + 2..])
}

/// The room made for the JSON report's frame ([`to_writer`]): a fixed part, and a part
/// per server (its score).
const FRAME_ROOM: usize = 1 << 14;
const FRAME_ROOM_PER_SERVER: usize = 96;

/// The `servers` array, one server at a time (each pretty-printed at its depth), so
/// that the frame of a report over many bundles holds none of them.
fn write_servers(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    if r.servers.is_empty() {
        return w.write_all(b"[]");
    }
    let mut out = Vec::new();
    r.each_server(|i, s| {
        out.clear();
        out.extend_from_slice(if i == 0 { b"[\n" } else { b",\n" });
        out.extend_from_slice(CHECK_PAD);
        nested(&mut out, CHECK_DEPTH, &server(i, s))?;
        w.write_all(&out)?;
        Ok(ControlFlow::Continue(()))
    })?;
    w.write_all(b"\n  ]")
}

/// How many servers' results of one check are rendered as one piece.
pub const PIECE: usize = 32;

/// A piece of the `checks` array: a check without its results (row index), or its
/// results on a range of servers.
enum Piece {
    Head(usize),
    Results(usize, std::ops::Range<usize>),
}

/// What a piece renders to: a check's head (up to and including `"results": `), or
/// results (how many, each one after `,` and a line break, indented).
enum Rendered {
    Head(Vec<u8>),
    Results(usize, Vec<u8>),
}

// Depths (two spaces each) in the pretty-printed document: a check in `checks`, a
// result in its `results`, and their indentation.
const CHECK_DEPTH: usize = 2;
const RESULT_DEPTH: usize = 4;
const CHECK_PAD: &[u8] = b"    ";
const RESULT_PAD: &[u8] = b"        ";

fn write_checks(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    if r.rows.is_empty() {
        return w.write_all(b"[]");
    }
    let servers = r.servers.len();
    let mut pieces = Vec::new();
    for (k, row) in r.rows.iter().enumerate() {
        pieces.push(Piece::Head(k));
        if row.verdicts.is_some() {
            let mut start = 0;
            while start < servers {
                let end = (start + PIECE).min(servers);
                pieces.push(Piece::Results(k, start..end));
                start = end;
            }
        }
    }
    // Whether the check being written has a result yet (`None`: no check begun).
    let mut open: Option<bool> = None;
    let close = |w: &mut dyn std::io::Write, open: Option<bool>| -> std::io::Result<()> {
        match open {
            None => Ok(()),
            Some(false) => w.write_all(b"[]\n    }"),
            Some(true) => w.write_all(b"\n      ]\n    }"),
        }
    };
    // The buffers pieces are rendered into, handed back once written: with several
    // jobs a piece is rendered on one thread and written (and would be freed) on
    // another, and the allocator keeps what one thread frees of another's memory for a
    // while, which over a report of 10,000 servers added about 4 MiB to the peak. At
    // most the pipeline's window of buffers is ever out at once.
    let pool = Pool::default();
    crate::pipeline::for_each_in_order(
        &pieces,
        r.jobs,
        |_, piece| render_piece(r, piece, &pool),
        |_, rendered| -> std::io::Result<()> {
            match rendered? {
                Rendered::Head(bytes) => {
                    close(w, open)?;
                    w.write_all(if open.is_none() { b"[\n" } else { b",\n" })?;
                    w.write_all(CHECK_PAD)?;
                    w.write_all(&bytes)?;
                    open = Some(false);
                    pool.put(bytes);
                }
                Rendered::Results(0, bytes) => pool.put(bytes),
                Rendered::Results(_, bytes) => {
                    // Each result comes after `,`: the check's first opens the array.
                    if open == Some(true) {
                        w.write_all(&bytes)?;
                    } else {
                        w.write_all(b"[")?;
                        w.write_all(bytes.get(1..).unwrap_or_default())?;
                    }
                    open = Some(true);
                    pool.put(bytes);
                }
            }
            Ok(())
        },
    )?;
    close(w, open)?;
    w.write_all(b"\n  ]")
}

/// Byte buffers to render into, taken and given back ([`write_checks`]).
#[derive(Default)]
struct Pool(std::sync::Mutex<Vec<Vec<u8>>>);

impl Pool {
    /// An empty buffer: one given back, with its room, or a new one.
    fn take(&self) -> Vec<u8> {
        self.0
            .lock()
            .map_or(None, |mut held| held.pop())
            .unwrap_or_default()
    }

    /// Give `buf` back, emptied, for the next piece.
    fn put(&self, mut buf: Vec<u8>) {
        buf.clear();
        if let Ok(mut held) = self.0.lock() {
            held.push(buf);
        }
    }
}

fn render_piece(r: &Report, piece: &Piece, pool: &Pool) -> std::io::Result<Rendered> {
    match piece {
        Piece::Head(k) => {
            let row = &r.rows[*k];
            let mut out = pool.take();
            nested(&mut out, CHECK_DEPTH, &check(r, row, None))?;
            // `"results": []` and the closing brace are written around the results.
            const END: &[u8] = b"[]\n    }";
            if !out.ends_with(END) {
                return Err(std::io::Error::other(
                    "a check's JSON did not end in its results",
                ));
            }
            out.truncate(out.len() - END.len());
            Ok(Rendered::Head(out))
        }
        Piece::Results(k, servers) => {
            let row = &r.rows[*k];
            let mut made = pool.take();
            if let Some(read) = r
                .json_results(row, servers.clone(), &mut made)
                .map_err(std::io::Error::other)?
            {
                // In `made`, or in the check's results read whole.
                let bytes = read.bytes(&made);
                // Each part is put back together from the pieces the spill file gives
                // (its reduction may be kept once for the check, apart from the parts).
                let kept = r.json_kept(row);
                let (mut whole, mut extra) = (0, 0);
                for p in read.at.iter().flatten() {
                    whole += p.len();
                    extra += kept.pieces(&bytes[p.clone()])?[1].len();
                }
                // As below, each result numbered among those there are. Its size is
                // about known: the parts, and each result's frame around its part.
                let frames: usize = servers
                    .clone()
                    .filter_map(|i| r.servers.get(i))
                    .map(|s| 96 + s.endpoint.len())
                    .sum();
                let mut out = pool.take();
                out.reserve(whole + extra + frames);
                let mut n = 0;
                for (j, part) in read.at.iter().flatten().enumerate() {
                    let i = servers.start + j;
                    out.extend_from_slice(b",\n");
                    out.extend_from_slice(RESULT_PAD);
                    write_result_made(
                        &mut out,
                        i,
                        &r.servers[i].endpoint,
                        kept.pieces(&bytes[part.clone()])?,
                        mark(row.mark(i)).as_ref(),
                    )?;
                    n += 1;
                }
                pool.put(made);
                return Ok(Rendered::Results(n, out));
            }
            pool.put(made);
            let outcomes = r
                .outcomes_range(row, servers.clone())
                .map_err(std::io::Error::other)?;
            // Room for about what the results take (their text, a frame, and so much a
            // leg, record and detail), so the buffer is not grown by doubling, copying
            // what is written at each step; a guess short of it only grows it again.
            let room: usize = outcomes
                .iter()
                .flat_map(|o| o.iter())
                .zip(servers.clone())
                .map(|(o, i)| {
                    let text = o.evidence.len() + o.reduction.len();
                    384 + r.servers.get(i).map_or(0, |s| s.endpoint.len())
                        + text
                        + text / 4
                        + 24 * o.records.len()
                        + 48 * o.subs.len()
                        + 96 * o.details.len()
                })
                .sum();
            let mut out = pool.take();
            out.reserve(room);
            let mut n = 0;
            let mut last = Default::default();
            for (j, o) in outcomes.iter().flat_map(|o| o.iter()).enumerate() {
                let i = servers.start + j;
                out.extend_from_slice(b",\n");
                out.extend_from_slice(RESULT_PAD);
                write_result(
                    &mut out,
                    RESULT_DEPTH,
                    &result(i, &r.servers[i].endpoint, o, row.mark(i)),
                    &mut last,
                )?;
                n += 1;
            }
            Ok(Rendered::Results(n, out))
        }
    }
}

/// `serde_json`'s pretty-printer (two spaces a level) starting at a depth: a value
/// written with it is the value as pretty-printed at that depth of a document. The same
/// calls as `serde_json::ser::PrettyFormatter`, whose depth cannot be set; the test
/// `written_in_pieces_it_is_the_whole_document_serde_json_writes` holds them equal.
struct Nested {
    depth: usize,
    has_value: bool,
}

impl Nested {
    fn at(depth: usize) -> Nested {
        Nested {
            depth,
            has_value: false,
        }
    }

    fn line<W: ?Sized + std::io::Write>(&self, w: &mut W, first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }

    fn indent<W: ?Sized + std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        for _ in 0..self.depth {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    fn open<W: ?Sized + std::io::Write>(&mut self, w: &mut W, start: &[u8]) -> std::io::Result<()> {
        self.depth += 1;
        self.has_value = false;
        w.write_all(start)
    }

    fn close<W: ?Sized + std::io::Write>(&mut self, w: &mut W, end: &[u8]) -> std::io::Result<()> {
        self.depth -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(end)
    }
}

impl serde_json::ser::Formatter for Nested {
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }

    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.line(w, first)
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, _: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Write `value` pretty-printed at `depth` (two spaces a level) to `out`.
fn nested<T: Serialize>(out: &mut Vec<u8>, depth: usize, value: &T) -> std::io::Result<()> {
    value
        .serialize(&mut serde_json::Serializer::with_formatter(
            out,
            Nested::at(depth),
        ))
        .map_err(std::io::Error::from)
}

/// One result pretty-printed at `depth`: the bytes [`nested`] writes for it, with its
/// strings (evidence, reduction, the details, the legs) escaped by [`write_str`] rather
/// than `serde_json`'s byte-at-a-time loop, most of the text of a report. The records and
/// waiver mark, short, are written by [`nested`]. `last` holds where the evidence and
/// reduction of the result written before this one into `out` are: text equal to it is
/// copied from there (the results of one check on many servers often share their
/// reduction, sometimes their evidence), not escaped again.
fn write_result<'a>(
    out: &mut Vec<u8>,
    depth: usize,
    r: &ResultJ<'a>,
    last: &mut [Escaped<'a>; 2],
) -> std::io::Result<()> {
    write_result_start(out, depth, r.server, r.endpoint);
    write_part(out, depth + 1, r, last)?;
    write_result_end(out, depth, r.waiver.as_ref())
}

/// A result's opening brace, `"server"` and `"endpoint"` at `depth`: what comes before
/// its outcome's part ([`write_part`]).
fn write_result_start(out: &mut Vec<u8>, depth: usize, server: usize, endpoint: &str) {
    let d = depth + 1;
    out.push(b'{');
    plain_key(out, d, b"\"server\": ", true);
    write_decimal(out, server as u64);
    plain_key(out, d, b"\"endpoint\": ", false);
    write_str(out, endpoint);
}

/// A result's waiver mark, if any, and its closing brace at `depth`: what comes after
/// its outcome's part ([`write_part`]).
fn write_result_end(
    out: &mut Vec<u8>,
    depth: usize,
    waiver: Option<&MarkJ<'_>>,
) -> std::io::Result<()> {
    if let Some(w) = waiver {
        plain_key(out, depth + 1, b"\"waiver\": ", false);
        nested(out, depth + 1, w)?;
    }
    newline(out, depth);
    out.push(b'}');
    Ok(())
}

/// The part of a result that depends on its outcome alone, its keys at depth `d`: from
/// the `,` before `"verdict"` through the value of `"details"` (the result's `server`,
/// `endpoint` and `waiver` are not read).
fn write_part<'a>(
    out: &mut Vec<u8>,
    d: usize,
    r: &ResultJ<'a>,
    last: &mut [Escaped<'a>; 2],
) -> std::io::Result<()> {
    plain_key(out, d, b"\"verdict\": ", false);
    write_plain(out, r.verdict);
    plain_key(out, d, b"\"evidence\": ", false);
    last[0].write(out, r.evidence);
    plain_key(out, d, b"\"reduction\": ", false);
    last[1].write(out, r.reduction);
    plain_key(out, d, b"\"legs\": ", false);
    write_legs(out, d, r.legs.0);
    plain_key(out, d, b"\"records\": ", false);
    write_records(out, d, r.records);
    plain_key(out, d, b"\"details\": ", false);
    write_map(out, d, r.details)
}

/// The JSON report's part of a result of `o` (the bytes [`write_result`] writes for it
/// between the result's `"endpoint"` and its waiver mark, at the depth of a result in
/// the report), appended to `out`: what a spill file of
/// [`super::spill::Form::Json`] keeps of each outcome, made once when the server is
/// graded and copied into the report by [`write_checks`]. Returns where the escaped
/// reduction is in `out`, so that the spill file keeps each distinct one once per check.
pub(super) fn write_outcome(
    out: &mut Vec<u8>,
    o: &Outcome,
) -> std::io::Result<Option<std::ops::Range<usize>>> {
    let r = result(0, "", o, None);
    // Nothing written before: the reduction is escaped here, and `at` is where.
    let mut last: [Escaped<'_>; 2] = Default::default();
    write_part(out, RESULT_DEPTH + 1, &r, &mut last)?;
    Ok(Some(std::mem::take(&mut last[1].at)))
}

/// One result whose outcome's part ([`write_outcome`]) was made before, in the pieces
/// the spill file gives back (its reduction may be kept apart,
/// [`super::spill::KeptRow::pieces`]): the bytes [`write_result`] writes for the
/// result of server `server` with that outcome.
fn write_result_made(
    out: &mut Vec<u8>,
    server: usize,
    endpoint: &str,
    part: [&[u8]; 3],
    waiver: Option<&MarkJ<'_>>,
) -> std::io::Result<()> {
    write_result_start(out, RESULT_DEPTH, server, endpoint);
    let [before, kept, after] = part;
    out.extend_from_slice(before);
    // Most parts are whole: nothing kept apart, nothing after it.
    if !kept.is_empty() {
        out.extend_from_slice(kept);
        out.extend_from_slice(after);
    }
    write_result_end(out, RESULT_DEPTH, waiver)
}

/// A string [`write_str`] wrote into a piece, and where its escaped bytes are there.
#[derive(Default)]
struct Escaped<'a> {
    text: &'a str,
    at: std::ops::Range<usize>,
}

impl<'a> Escaped<'a> {
    /// `s` escaped into `out`: copied from where it was written last when it is the same
    /// text, else escaped and remembered.
    fn write(&mut self, out: &mut Vec<u8>, s: &'a str) {
        if !self.at.is_empty() && self.text == s {
            out.extend_from_within(self.at.clone());
        } else {
            let start = out.len();
            write_str(out, s);
            *self = Escaped {
                text: s,
                at: start..out.len(),
            };
        }
    }
}

/// A result's legs (leg id to outcome word, in leg order) pretty-printed at `depth`, as
/// [`nested`] writes [`LegsJ`].
fn write_legs(out: &mut Vec<u8>, depth: usize, legs: &[SubVerdict]) {
    if legs.is_empty() {
        out.extend_from_slice(b"{}");
        return;
    }
    out.push(b'{');
    for (i, l) in legs.iter().enumerate() {
        key(out, depth + 1, &l.id, i == 0);
        write_plain(out, l.outcome.word());
    }
    newline(out, depth);
    out.push(b'}');
}

/// A result's records (seqs) pretty-printed at `depth`, as [`nested`] writes them.
fn write_records(out: &mut Vec<u8>, depth: usize, records: &[u64]) {
    if records.is_empty() {
        out.extend_from_slice(b"[]");
        return;
    }
    out.push(b'[');
    for (i, r) in records.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        newline(out, depth + 1);
        write_decimal(out, *r);
    }
    newline(out, depth);
    out.push(b']');
}

/// `n` in decimal, as `serde_json` writes an unsigned integer (with the same `itoa`).
fn write_decimal(out: &mut Vec<u8>, n: u64) {
    // Most counts in details are one digit: written without a formatter.
    if n < 10 {
        out.push(b'0' + n as u8);
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
    }
}

/// `,` and a line break followed by the indentation of the deepest line [`line()`] writes
/// from it (two spaces a level): a line's start is one copy of a piece of it.
const LINE: &[u8; 2 + 2 * LINE_DEPTHS] = &{
    let mut b = [b' '; 2 + 2 * LINE_DEPTHS];
    b[0] = b',';
    b[1] = b'\n';
    b
};
/// How deep [`LINE`] reaches; a deeper line is written in two steps.
const LINE_DEPTHS: usize = 48;

/// A line break and `depth` levels of indentation (two spaces each), after `,` unless
/// `first`.
fn line(out: &mut Vec<u8>, depth: usize, first: bool) {
    let from = usize::from(first);
    match LINE.get(from..2 + 2 * depth) {
        Some(piece) => out.extend_from_slice(piece),
        None => {
            out.extend_from_slice(&LINE[from..2]);
            out.resize(out.len() + 2 * depth, b' ');
        }
    }
}

/// A line break and `depth` levels of indentation (two spaces each).
fn newline(out: &mut Vec<u8>, depth: usize) {
    line(out, depth, true);
}

/// An object's key at `depth` (after `,` unless it is the first) and the `: ` after it.
#[inline]
fn key(out: &mut Vec<u8>, depth: usize, k: &str, first: bool) {
    let b = k.as_bytes();
    match (LINE.get(usize::from(first)..2 + 2 * depth), to_escape(b)) {
        // Most keys: the line's start, the key as it is and `": `, with room made once.
        (Some(start), None) => {
            out.reserve(start.len() + b.len() + 4);
            out.extend_from_slice(start);
            out.push(b'"');
            out.extend_from_slice(b);
            out.extend_from_slice(b"\": ");
        }
        _ => {
            line(out, depth, first);
            write_str(out, k);
            out.extend_from_slice(b": ");
        }
    }
}

/// [`key`] for a key that needs no escaping (one of a result's own), given with its
/// quotes and the `: ` after it (`"\"verdict\": "`), written as it is.
#[inline]
fn plain_key(out: &mut Vec<u8>, depth: usize, quoted: &[u8], first: bool) {
    debug_assert!(quoted.starts_with(b"\"") && quoted.ends_with(b"\": "));
    debug_assert!(!quoted[1..quoted.len() - 3]
        .iter()
        .any(|&c| c < 0x20 || c == b'"' || c == b'\\'));
    line(out, depth, first);
    out.extend_from_slice(quoted);
}

/// An object of the details pretty-printed at `depth`, in order, as `serde_json` writes
/// the same object with [`Nested`].
fn write_map(out: &mut Vec<u8>, depth: usize, m: &Details) -> std::io::Result<()> {
    if m.is_empty() {
        out.extend_from_slice(b"{}");
        return Ok(());
    }
    out.push(b'{');
    for (i, (k, v)) in m.iter().enumerate() {
        key(out, depth + 1, k, i == 0);
        write_value(out, depth + 1, v)?;
    }
    newline(out, depth);
    out.push(b'}');
    Ok(())
}

/// A value of the details pretty-printed at `depth`, as `serde_json` writes the same
/// value with [`Nested`] (integers in decimal, other numbers by `serde_json` itself).
fn write_value(out: &mut Vec<u8>, depth: usize, v: &Detail) -> std::io::Result<()> {
    match v {
        Detail::Null => out.extend_from_slice(b"null"),
        Detail::Bool(true) => out.extend_from_slice(b"true"),
        Detail::Bool(false) => out.extend_from_slice(b"false"),
        Detail::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => write_decimal(out, u),
            (None, Some(i)) => {
                out.push(b'-');
                write_decimal(out, i.unsigned_abs());
            }
            _ => serde_json::to_writer(&mut *out, n).map_err(std::io::Error::from)?,
        },
        Detail::String(t) => write_str(out, t),
        Detail::Array(a) if a.is_empty() => out.extend_from_slice(b"[]"),
        Detail::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                newline(out, depth + 1);
                write_value(out, depth + 1, x)?;
            }
            newline(out, depth);
            out.push(b']');
        }
        Detail::Object(m) => write_map(out, depth, m)?,
    }
    Ok(())
}

/// A word of this program's own (a verdict's mark, a leg's outcome) as a JSON string:
/// it holds nothing to escape, so it is written as it is.
fn write_plain(out: &mut Vec<u8>, word: &str) {
    debug_assert!(to_escape(word.as_bytes()).is_none(), "{word:?}");
    out.reserve(word.len() + 2);
    out.push(b'"');
    out.extend_from_slice(word.as_bytes());
    out.push(b'"');
}

/// `s` as a JSON string, escaped exactly as `serde_json` escapes it: `"` and `\\` with
/// a backslash, the control characters U+0000-U+001F as `\b`, `\t`, `\n`, `\f`, `\r` or
/// `\u00xx` (lower-case hex), everything else as it is. Text without any byte to escape
/// is copied in runs found by [`to_escape`].
#[inline]
fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    match to_escape(b) {
        // Most text has nothing to escape: one copy, small enough to be inlined.
        None => {
            out.reserve(b.len() + 2);
            out.push(b'"');
            out.extend_from_slice(b);
            out.push(b'"');
        }
        Some(k) => write_escaped(out, b, k),
    }
}

/// [`write_str`] of `b`, whose first byte to escape is at `k`.
#[inline(never)]
fn write_escaped(out: &mut Vec<u8>, b: &[u8], mut k: usize) {
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = start + k;
        let c = b[i];
        let esc: &[u8] = match c {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            0x08 => b"\\b",
            0x09 => b"\\t",
            0x0a => b"\\n",
            0x0c => b"\\f",
            0x0d => b"\\r",
            _ => b"",
        };
        out.extend_from_slice(&b[start..i]);
        if esc.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(c >> 4)]);
            out.push(HEX[usize::from(c & 0xf)]);
        } else {
            out.extend_from_slice(esc);
        }
        start = i + 1;
        match to_escape(&b[start..]) {
            Some(next) => k = next,
            None => break,
        }
    }
    out.extend_from_slice(&b[start..]);
    out.push(b'"');
}

/// The position of the first byte of `b` that a JSON string escapes (below 0x20, `"`,
/// `\\`), sixteen bytes at a time, the last few as one or two words of eight.
#[inline]
fn to_escape(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of a word that is below 0x20, `"` or `\\`, and possibly
    // of bytes after the first such byte (a borrow carries upwards), never of one before
    // it: the lowest bit set marks the first byte to escape.
    let flagged = |w: &[u8]| {
        let mut word = [0; 8];
        word.copy_from_slice(w);
        let x = u64::from_le_bytes(word);
        let zero = |y: u64| y.wrapping_sub(ONES) & !y;
        ((x.wrapping_sub(ONES * 0x20) & !x)
            | zero(x ^ (ONES * u64::from(b'"')))
            | zero(x ^ (ONES * u64::from(b'\\'))))
            & HIGH
    };
    let first = |pair: &[u8]| {
        let (lo, hi) = (flagged(&pair[..8]), flagged(&pair[8..]));
        if lo != 0 {
            Some((lo.trailing_zeros() / 8) as usize)
        } else if hi != 0 {
            Some(8 + (hi.trailing_zeros() / 8) as usize)
        } else {
            None
        }
    };
    let mut pairs = b.chunks_exact(16);
    let mut at = 0;
    for pair in &mut pairs {
        if let Some(k) = first(pair) {
            return Some(at + k);
        }
        at += 16;
    }
    // The last 0-15 bytes: a word of eight, then the last eight bytes of `b` as a word
    // (overlapping bytes already found plain, which are never flagged, so its lowest
    // flag is still the first byte to escape); text shorter than eight bytes (most keys
    // and short values) is one word padded with spaces, which are never escaped.
    let rest = pairs.remainder();
    let found = |f: u64, from: usize| (f != 0).then(|| from + (f.trailing_zeros() / 8) as usize);
    if rest.len() >= 8 {
        let f = flagged(&rest[..8]);
        if f != 0 || rest.len() == 8 {
            return found(f, at);
        }
        let from = b.len() - 8;
        found(flagged(&b[from..]), from)
    } else if b.len() >= 8 {
        if rest.is_empty() {
            return None;
        }
        let from = b.len() - 8;
        found(flagged(&b[from..]), from)
    } else {
        let mut word = [b' '; 8];
        word[..rest.len()].copy_from_slice(rest);
        found(flagged(&word), at)
    }
}

/// The report as pretty-printed JSON text (no trailing newline): the bytes of
/// [`to_writer`].
pub fn to_string(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = to_writer(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

fn server(index: usize, s: &Server) -> ServerJ<'_> {
    ServerJ {
        index,
        endpoint: &s.endpoint,
        target: &s.target,
        negotiated_revision: &s.revision,
        other_eras_probed: &s.other_eras,
        transport: s.transport,
        timestamp: crate::commands::TimestampJson::of(&s.timestamp),
        server_info: &s.server_info,
        auth_required: s.auth_required,
        authenticated: s.authenticated,
        run_status: s.run_status,
        failure: &s.failure,
        bundle_id: &s.run_id,
        bundle: &s.bundle,
        signer: &s.signer,
        collector: &s.collector,
        collector_build: &s.collector_build,
        collected_at: utc(s.collected_at),
        baseline: s.baseline.as_ref().map(baseline),
    }
}

fn baseline(b: &BaselineInfo) -> BaselineJ<'_> {
    BaselineJ {
        mode: b.mode.as_str(),
        path: &b.path,
        used: b.used,
        bundle_id: &b.run_id,
        collected_at: b.collected_at.map(utc),
        signer: &b.signer,
        stored: b.stored,
        problem: &b.problem,
    }
}

fn check<'a>(r: &'a Report, row: &'a Row, outcomes: Option<&'a [Outcome]>) -> CheckJ<'a> {
    let e = row.entry;
    CheckJ {
        id: e.id.as_str(),
        rule: e.rule,
        params: &e.params,
        level: e.level.number(),
        title: e.title,
        section: e.section(),
        source: e.source.as_str(),
        graded: row.verdicts.is_some(),
        summary: Summary::new(|v| row.count(v)),
        results: outcomes
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, o)| result(i, &r.servers[i].endpoint, o, row.mark(i)))
            .collect(),
    }
}

fn result<'a>(
    index: usize,
    endpoint: &'a str,
    o: &'a Outcome,
    mark: Option<&'a crate::waivers::Mark>,
) -> ResultJ<'a> {
    ResultJ {
        server: index,
        endpoint,
        verdict: o.verdict.mark(),
        evidence: &o.evidence,
        reduction: &o.reduction,
        legs: LegsJ(&o.subs),
        records: &o.records,
        details: &o.details,
        waiver: self::mark(mark),
    }
}

/// What a waiver did to a result, as the report writes it.
fn mark(mark: Option<&crate::waivers::Mark>) -> Option<MarkJ<'_>> {
    mark.map(|m| MarkJ {
        state: if m.active { "waived" } else { "expired" },
        reason: &m.reason,
        expires: m.expires.to_string(),
        line: m.line,
    })
}

/// The JSON Schema of the report (`mcp-grade-report/1`), generated from the types that
/// write it (docs/schemas/report.schema.json holds this text).
pub fn schema() -> Value {
    let mut s = schemars::schema_for!(Doc<'static>).to_value();
    s["title"] = Value::String("mcp-grade report (mcp-grade-report/1)".into());
    s
}

#[cfg(test)]
mod tests {
    use super::super::spill::Form;
    use super::*;
    use crate::benchmark::CheckResult;
    use crate::verdict::{SubOutcome, SubVerdict};
    use serde_json::json;

    /// `n` servers, each check graded but every seventh, each server's outcomes its own
    /// (verdict, text with quotes and a line break, records, details), the outcomes held
    /// in memory or in a spill file.
    fn many(n: usize, spill: bool) -> Report {
        many_in(n, spill.then_some(Form::Outcomes))
    }

    /// A bundle with a session of 2025-11-25 and no records: the server of these tests'
    /// reports, whose results they give themselves.
    fn bare_evidence() -> crate::evidence::Bundle {
        crate::fixture::evidence(
            Some(crate::fixture::session(Some("2025-11-25"), json!({}), None)),
            Vec::new(),
        )
    }

    /// [`many`], the outcomes held in memory (`None`) or in a spill file of the form
    /// given, each server at its own endpoint (`http://sNNN.test/mcp`).
    fn many_in(n: usize, spill: Option<Form>) -> Report {
        report_of(n, spill, |i, k, e| {
            (k % 7 != 6).then(|| {
                let o = if (i + k) % 3 == 0 {
                    SubOutcome::Fail
                } else {
                    SubOutcome::Pass
                };
                Outcome::from_subs(
                    vec![SubVerdict::new(
                        &format!("{}a", e.id.as_str()),
                        o,
                        // Pairs of servers with the same evidence, every server
                        // with the same reduction: copied, not escaped again.
                        format!("server {} said \"{k}\"\nand more", i / 2),
                    )],
                    "one leg",
                )
                .with_records([i as u64, k as u64])
                .with_detail("n", i)
                .with_detail("nested", json!({"k": [k, {"s": "x\ny"}]}))
            })
        })
    }

    /// A report over `n` servers, each at its own endpoint (`http://sNNN.test/mcp`), the
    /// outcome of check `k` (entry `e`) on server `i` given by `outcome(i, k, e)`, held in
    /// memory (`None`) or in a spill file of the form given.
    fn report_of(
        n: usize,
        spill: Option<Form>,
        outcome: impl Fn(usize, usize, &'static crate::benchmark::Entry) -> Option<Outcome>,
    ) -> Report {
        let ev = bare_evidence();
        let bm = crate::benchmark::Benchmark::builtin();
        let spill = spill.map(|f| super::super::Spill::create(None, f).expect("spill file"));
        let mut b = super::super::Builder::new(bm, None, spill);
        for i in 0..n {
            let results = bm
                .checks
                .iter()
                .enumerate()
                .map(|(k, e)| CheckResult {
                    entry: e,
                    outcome: outcome(i, k, e),
                })
                .collect();
            let mut server = Server::new(&ev, None);
            server.endpoint = format!("http://s{i:03}.test/mcp");
            b.server(server, results).expect("server");
        }
        b.finish().expect("report")
    }

    /// A waivers file, loaded: one waiver in force for check `live` on the servers
    /// `http://s00*` (the first ten), one expired for check `old` on every server.
    fn waivers_of(dir: &std::path::Path, live: &str, old: &str) -> crate::waivers::Waivers {
        let path = dir.join("waivers.toml");
        std::fs::write(
            &path,
            format!(
                "[[waiver]]\ncheck = \"{live}\"\nendpoint = \"http://s00*\"\nreason = \"a \\\"known\\\" gap\"\nexpires = 2099-01-01\n\n\
                 [[waiver]]\ncheck = \"{old}\"\nendpoint = \"*\"\nreason = \"was tracked\"\nexpires = 2001-01-01\n"
            ),
        )
        .expect("waivers");
        crate::waivers::Waivers::load(&path, crate::benchmark::Benchmark::builtin())
            .expect("waivers load")
    }

    /// A report whose outcomes went to a spill file as JSON results is, byte for byte,
    /// the report of the same outcomes held in memory (and of them spilled as outcomes):
    /// over more servers than a piece, with some results waived and some marked with an
    /// expired waiver, on any number of threads.
    #[test]
    fn spilled_as_json_results_it_is_the_report_held_in_memory() {
        let dir = tempfile::tempdir().expect("dir");
        let bm = crate::benchmark::Benchmark::builtin();
        let w = waivers_of(
            dir.path(),
            bm.checks[0].id.as_str(),
            bm.checks[1].id.as_str(),
        );
        for n in [0, 1, 70, 4 * PIECE + 3] {
            let mut held = many_in(n, None);
            let mut as_outcomes = many_in(n, Some(Form::Outcomes));
            let mut as_json = many_in(n, Some(Form::Json(write_outcome)));
            assert!(as_json.spill_path().is_some() && !as_json.holds_outcomes());
            for r in [&mut held, &mut as_outcomes, &mut as_json] {
                r.apply_waivers(&w, crate::waivers::today());
            }
            let want = to_string(&held);
            if n == 70 {
                assert!(want.contains("\"state\": \"waived\""), "a result is waived");
                assert!(
                    want.contains("\"state\": \"expired\""),
                    "a mark has expired"
                );
                let live = held
                    .rows
                    .iter()
                    .find(|x| x.entry.id == bm.checks[0].id)
                    .expect("the waived check");
                let waived = (0..n).filter(|i| live.waived(*i)).count();
                let failed = live.count(Verdict::Fail);
                assert!(
                    waived > 0 && waived < failed,
                    "some failures waived, not all"
                );
            }
            for jobs in [1, 2, 3] {
                as_json.jobs = jobs;
                as_outcomes.jobs = jobs;
                assert_eq!(to_string(&as_json), want, "{n} servers, {jobs} jobs");
                assert_eq!(to_string(&as_outcomes), want, "{n} servers, {jobs} jobs");
            }
        }
    }

    /// A report over servers whose results of a check share their reduction, or two, or
    /// each have their own (more than a spill file keeps for a check), or an empty one,
    /// spilled as JSON results (each distinct reduction of a check kept once), is byte
    /// for byte the report held in memory, on any number of threads.
    #[test]
    fn spilled_with_its_reductions_kept_once_it_is_the_report_held_in_memory() {
        let n = 2 * PIECE + 5;
        let make = |spill: Option<Form>| {
            report_of(n, spill, |i, k, _| {
                let reduction = match k % 4 {
                    0 => "what a \"black-box\" probe\ncannot reach".to_string(),
                    1 if i % 5 == 0 => "only the operator can tell".to_string(),
                    1 => "the operator's configuration".to_string(),
                    2 => format!("server {i} alone"),
                    _ => String::new(),
                };
                // A check is graded when every server has an outcome.
                (k % 11 != 4).then(|| {
                    Outcome::single(
                        Verdict::ORDER[(i + k) % 6],
                        format!("server {i} on {k}"),
                        reduction,
                    )
                    .with_records([i as u64])
                })
            })
        };
        let want = to_string(&make(None));
        assert!(
            want.matches("black-box").count() > n,
            "results with the shared reduction"
        );
        let mut got = make(Some(Form::Json(write_outcome)));
        assert!(got.spill_path().is_some() && !got.holds_outcomes());
        for jobs in [1, 2] {
            got.jobs = jobs;
            assert_eq!(to_string(&got), want, "{jobs} jobs");
        }
    }

    /// A spill file of JSON results is not read back as outcomes: every other renderer
    /// fails on it with an error naming what it holds, and a server prepared for a spill
    /// file of the other form is not added to it.
    #[test]
    fn a_spill_of_json_results_is_not_read_as_outcomes() {
        use super::super::Format;
        let mut r = many_in(70, Some(Form::Json(write_outcome)));
        for (format, verbose) in [
            (Format::Text, false),
            (Format::Text, true),
            (Format::Sarif, false),
            (Format::Junit, false),
            (Format::Markdown, false),
            (Format::Html, false),
            (Format::Oscal, false),
            (Format::Xccdf, false),
        ] {
            r.verbose = verbose;
            let e = super::super::write(&r, format, &mut Vec::new())
                .expect_err("JSON results are not outcomes");
            assert!(
                e.to_string()
                    .contains("it holds JSON results, not outcomes"),
                "{format:?}: {e}"
            );
        }
        let graded = r
            .rows
            .iter()
            .find(|x| x.verdicts.is_some())
            .expect("graded");
        assert!(r.outcomes(graded).is_err());
        assert!(r.server_outcomes(0).is_err());
        assert!(r.outcome_and_excerpts(graded, 0).is_err());
        // And the other way: the JSON renderer of a report spilled as outcomes renders
        // them itself.
        let o = many_in(3, Some(Form::Outcomes));
        let graded = o
            .rows
            .iter()
            .find(|x| x.verdicts.is_some())
            .expect("graded");
        assert!(o
            .json_results(graded, 0..3, &mut Vec::new())
            .expect("no error")
            .is_none());

        let bm = crate::benchmark::Benchmark::builtin();
        let spill = |f| Some(super::super::Spill::create(None, f).expect("spill file"));
        let ev = bare_evidence();
        let results = || {
            bm.checks
                .iter()
                .map(|e| CheckResult {
                    entry: e,
                    outcome: Some(Outcome::single(Verdict::Pass, "why", "")),
                })
                .collect::<Vec<_>>()
        };
        let json = Form::Json(write_outcome);
        for (mine, other) in [(json, Form::Outcomes), (Form::Outcomes, json)] {
            let mut b = super::super::Builder::new(bm, None, spill(mine));
            let foreign = super::super::Builder::new(bm, None, spill(other)).preparer();
            let e = b
                .add(foreign.prepare(Server::new(&ev, None), results()))
                .expect_err("another form");
            assert!(
                e.to_string().contains("cannot be written to a file of"),
                "{e}"
            );
            let own = b.preparer();
            b.add(own.prepare(Server::new(&ev, None), results()))
                .expect("its own form");
        }
    }

    #[test]
    fn a_buffer_given_back_is_taken_again_empty_with_its_room() {
        let pool = Pool::default();
        let mut a = pool.take();
        assert_eq!(a.capacity(), 0);
        a.extend_from_slice(&[7; 5000]);
        let room = a.capacity();
        pool.put(a);
        let b = pool.take();
        assert!(b.is_empty());
        assert_eq!(b.capacity(), room);
        // None is left: the next one is new.
        assert_eq!(pool.take().capacity(), 0);
    }

    #[test]
    fn written_in_pieces_it_is_the_whole_document_serde_json_writes() {
        let dir = tempfile::tempdir().expect("dir");
        let waivers = dir.path().join("waivers.toml");
        let pinned = crate::benchmark::Benchmark::builtin()
            .first_row_of("revisions-pinned")
            .expect("revisions-pinned")
            .id;
        std::fs::write(
            &waivers,
            format!("[[waiver]]\ncheck = \"{pinned}\"\nendpoint = \"*\"\nreason = \"a \\\"known\\\" gap\"\nexpires = 2099-01-01\n"),
        )
        .expect("waivers");
        let w = crate::waivers::Waivers::load(&waivers, crate::benchmark::Benchmark::builtin())
            .expect("waivers load");
        for spill in [false, true] {
            for n in [0, 1, PIECE - 1, PIECE, PIECE + 1, 2 * PIECE + 5] {
                for waived in [false, true] {
                    let mut r = many(n, spill);
                    if waived {
                        r.apply_waivers(&w, crate::waivers::today());
                    }
                    let want = serde_json::to_string_pretty(&document(&r)).expect("whole");
                    for jobs in [1, 2, 3] {
                        r.jobs = jobs;
                        assert_eq!(
                            to_string(&r),
                            want,
                            "{n} servers, spill {spill}, waivers {waived}, {jobs} jobs"
                        );
                    }
                    if n == PIECE + 1 && waived {
                        assert!(want.contains("\"state\": \"waived\""), "a result is waived");
                    }
                }
            }
        }
        let mut none = many(2, false);
        none.rows.clear();
        assert_eq!(
            to_string(&none),
            serde_json::to_string_pretty(&document(&none)).expect("whole")
        );
    }

    /// serde_json's own writing of `v` at `depth` with [`Nested`]: what the hand-written
    /// writers must produce.
    fn by_serde<T: Serialize>(depth: usize, v: &T) -> String {
        let mut out = Vec::new();
        nested(&mut out, depth, v).expect("serialise");
        String::from_utf8(out).expect("utf-8")
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        // Every ASCII byte and a few others, alone and at every offset of the sixteen-byte
        // pairs of words, among clean text of every length up to 40.
        let mut special: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        special.extend(["é", "\u{9b}", "\u{202e}", "\u{e000}", "😀", "\u{7f}"].map(String::from));
        for c in &special {
            for len in 0..40 {
                for at in 0..=len {
                    let text: String =
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN"[..len].to_string();
                    let s = format!("{}{c}{}", &text[..at], &text[at..]);
                    let mut out = Vec::new();
                    write_str(&mut out, &s);
                    assert_eq!(
                        String::from_utf8(out).expect("utf-8"),
                        serde_json::to_string(&s).expect("json"),
                        "{s:?}"
                    );
                }
            }
        }
        // Pseudo-random mixtures (a fixed sequence).
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..2000 {
            let mut s = String::new();
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            for k in 0..(x % 64) {
                let pick = (x >> (k % 50)) as usize ^ (k as usize * 7);
                s.push_str(&special[pick % special.len()]);
            }
            let mut out = Vec::new();
            write_str(&mut out, &s);
            assert_eq!(
                String::from_utf8(out).expect("utf-8"),
                serde_json::to_string(&s).expect("json")
            );
        }
    }

    #[test]
    fn values_are_pretty_printed_as_serde_json_prints_them() {
        let values = [
            json!(null),
            json!({}),
            json!([]),
            json!({"a": {}, "b": [], "c": [[]], "d": [{}]}),
            json!({"n": 1, "neg": -7, "big": u64::MAX, "f": 1.5, "e": 1e300, "tiny": 5e-324, "z": -0.0}),
            json!({"s": "line\nbreak \"q\" \\ \u{1} é", "t": true, "f": false, "x": null}),
            json!([1, [2, [3, {"k": ["v", {"deep": [null]}]}]], "end"]),
            json!({"key \"quoted\"\n": {"\u{7}": [1.0, 2, "three"]}}),
            // Nested past the indentation `line` copies in one piece.
            (0..LINE_DEPTHS + 4).fold(json!({"leaf": [1, "x"]}), |v, k| {
                if k % 2 == 0 {
                    json!([v])
                } else {
                    json!({ "k": v })
                }
            }),
        ];
        for v in &values {
            for depth in [0, 1, 4, 5, LINE_DEPTHS - 1, LINE_DEPTHS, LINE_DEPTHS + 1] {
                let mut out = Vec::new();
                write_value(&mut out, depth, &Detail::from(v.clone())).expect("write");
                assert_eq!(
                    String::from_utf8(out).expect("utf-8"),
                    by_serde(depth, v),
                    "{v}"
                );
                if let Detail::Object(d) = Detail::from(v.clone()) {
                    let Value::Object(m) = v else { unreachable!() };
                    let mut out = Vec::new();
                    write_map(&mut out, depth, &d).expect("write");
                    assert_eq!(String::from_utf8(out).expect("utf-8"), by_serde(depth, m));
                }
            }
        }
    }

    #[test]
    fn integers_and_records_are_written_as_serde_json_writes_them() {
        // Every power of ten and its neighbours, both signs, and the ends of the types.
        let mut unsigned = vec![0, 1, u64::MAX, u64::MAX - 1, i64::MAX as u64];
        let mut p: u64 = 1;
        while let Some(q) = p.checked_mul(10) {
            unsigned.extend([q - 1, q, q + 1]);
            p = q;
        }
        let mut signed: Vec<i64> = vec![i64::MIN, i64::MIN + 1, -1];
        signed.extend(
            unsigned
                .iter()
                .filter_map(|u| i64::try_from(*u).ok())
                .map(|i| -i),
        );
        for u in &unsigned {
            let mut out = Vec::new();
            write_value(&mut out, 0, &Detail::from(*u)).expect("write");
            assert_eq!(String::from_utf8(out).expect("utf-8"), u.to_string());
        }
        for i in &signed {
            let mut out = Vec::new();
            write_value(&mut out, 0, &Detail::from(*i)).expect("write");
            assert_eq!(String::from_utf8(out).expect("utf-8"), i.to_string());
        }
        for records in [&[][..], &[7], &unsigned[..]] {
            for depth in [0, 1, 5] {
                let mut out = Vec::new();
                write_records(&mut out, depth, records);
                assert_eq!(
                    String::from_utf8(out).expect("utf-8"),
                    by_serde(depth, &records)
                );
            }
        }
    }

    #[test]
    fn shape() {
        let ev = bare_evidence();
        let bm = crate::benchmark::Benchmark::builtin();
        let results = bm
            .checks
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: (e.rule == "revisions-pinned").then(|| {
                    let raw = Outcome::from_subs(
                        vec![
                            SubVerdict::new("a", SubOutcome::Pass, "ok"),
                            SubVerdict::new("d", SubOutcome::REVISION_UNSUPPORTED, "old"),
                        ],
                        "r",
                    )
                    .with_records([2])
                    .with_detail("n", 1);
                    crate::benchmark::runner::render_through(bm, e, raw)
                }),
            })
            .collect();
        let number = |rule: &str| bm.first_row_of(rule).expect(rule).id.as_str();
        let pinned = number("revisions-pinned");
        let rep = Report::new(
            crate::benchmark::Benchmark::builtin(),
            None,
            vec![(Server::new(&ev, None), results)],
        );
        let v = document(&rep);
        assert_eq!(v["schema"], SCHEMA);
        assert_eq!(
            v["graded"],
            json!({"count": 1, "in_scope": 36, "total": 36})
        );
        assert_eq!(v["totals"]["PASS"], 1);
        assert_eq!(v["level"], Value::Null);
        let c = &v["checks"][0];
        assert_eq!(c["id"], pinned);
        assert_eq!(c["graded"], true);
        assert_eq!(
            c["summary"],
            json!({"PASS": 1, "FAIL": 0, "NO-REV": 0, "UNKNOWN": 0, "N/A": 0, "ERROR": 0})
        );
        let res = &c["results"][0];
        assert_eq!(
            res["legs"],
            json!({format!("{pinned}a"): "pass", format!("{pinned}d"): "revision_unsupported"})
        );
        assert_eq!(res["records"], json!([2]));
        assert_eq!(res["details"], json!({"n": 1}));
        assert_eq!(res["server"], 0);
        let ng = v["checks"]
            .as_array()
            .expect("checks")
            .iter()
            .find(|c| c["id"] == number("size-limits"))
            .expect("size-limits");
        assert_eq!(ng["graded"], false);
        assert_eq!(ng["results"], json!([]));
        assert_eq!(v["servers"][0]["negotiated_revision"], "2025-11-25");
        assert_eq!(v["servers"][0]["collected_at"], "2025-11-30T05:20:00Z");
        assert_eq!(v["servers"][0]["baseline"], Value::Null);
        assert_eq!(v["servers"][0]["collector_build"], "test");
        let p = &v["provenance"];
        assert_eq!(p["benchmark"]["id"], "cis-mcp-server-1.0.0");
        assert_eq!(p["benchmark"]["version"], bm.version);
        assert_eq!(p["benchmark"]["sha256"], rep.provenance.benchmark.sha256);
        assert_eq!(p["benchmark"]["tailoring"], Value::Null);
        assert_eq!(
            p["grader"],
            json!({
                "name": "mcp-grade",
                "version": GRADER_VERSION,
                "commit": super::super::provenance::GRADER_BUILD,
                "target": super::super::provenance::GRADER_TARGET,
                "rustc": super::super::provenance::GRADER_RUSTC,
            })
        );
    }
}
