//! The HTML report (`--format html`): one self-contained file (styles and script inline,
//! no request to any network: a Content-Security-Policy `default-src 'none'` says so to
//! the browser), for people who read results in a browser and for auditors' archives.
//!
//! * The server x check matrix. Every cell shows a text mark (P, F, E, ?, –, R, w) as
//!   well as a colour, and the colours are the Okabe–Ito palette (distinguishable with
//!   the common colour-vision deficiencies), so nothing is carried by colour alone.
//! * Click a cell: its verdict, evidence, reduction, remediation and the transcript
//!   excerpt of the decisive records open below the matrix (`<details>` per result,
//!   opened by the script; without script every result is in the page, in order).
//! * Filters by verdict, level and server hide rows and columns (script only).
//! * Printable: a print style shows every result expanded and hides the filters.
//! * Provenance, last: the benchmark id, version and SHA-256 (and the tailoring file),
//!   the grader's version, commit, target and rustc, and the collector build of each
//!   server's bundle.
//!
//! Everything that came from a bundle is HTML-escaped; the only script is the report's
//! own, and it reads no data from the page beyond element attributes it wrote.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::ControlFlow;

use crate::benchmark::Source;
use crate::evidence::Bundle;
use crate::verdict::Verdict;

use super::{Report, Row, GRADER_VERSION};

/// The longest body text shown per record in an excerpt.
const BODY_CHARS: usize = 600;

/// `s` escaped for HTML text and attribute values: `&`, `<`, `>`, `"` and `'` as
/// entities, a control character other than a line break or tab as `\u{..}`. The
/// text between two of them is copied as one run.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 16);
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let entity = match c {
            '&' => "&amp;",
            '<' => "&lt;",
            '>' => "&gt;",
            '"' => "&quot;",
            '\'' => "&#39;",
            c if c.is_control() && c != '\n' && c != '\t' => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if entity.is_empty() {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push_str(entity);
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out
}

/// `s` cut to `n` characters, saying how many were left out.
fn cut(s: &str, n: usize) -> String {
    let more = s.chars().count().saturating_sub(n);
    if more == 0 {
        s.to_string()
    } else {
        format!("{} ({more} more characters)", crate::fmt::cut(s, n))
    }
}

/// A short transcript of record `seq` of `ev` (request line and body, status and body),
/// for the records that decided a verdict.
pub fn excerpt(ev: &Bundle, seq: u64) -> Option<String> {
    use mcp_probe_schema::model::{HttpOutcome, Observation};
    let r = ev.record(seq)?;
    let legs = r.legs.join(", ");
    Some(match &r.observation {
        Observation::Http(x) => {
            let mut s = format!(
                "#{seq} [{legs}]\n> {} {}\n",
                x.request.method, x.request.url
            );
            if !x.request.body.bytes.is_empty() {
                let _ = writeln!(
                    s,
                    "> {}",
                    cut(&String::from_utf8_lossy(&x.request.body.bytes), BODY_CHARS)
                );
            }
            match &x.outcome {
                HttpOutcome::Response(resp) => {
                    let _ = writeln!(s, "< HTTP {} {}", resp.status, resp.reason);
                    for h in &resp.headers {
                        let n = h.name.to_ascii_lowercase();
                        if matches!(
                            n.as_str(),
                            "content-type"
                                | "www-authenticate"
                                | "cache-control"
                                | "location"
                                | "mcp-session-id"
                        ) {
                            let _ = writeln!(s, "< {}: {}", h.name, h.value_str());
                        }
                    }
                    if !resp.body.bytes.is_empty() {
                        let _ = writeln!(
                            s,
                            "< {}",
                            cut(&String::from_utf8_lossy(&resp.body.bytes), BODY_CHARS)
                        );
                    }
                }
                HttpOutcome::Error(e) => {
                    let _ = writeln!(s, "< no response: {e:?}");
                }
            }
            s
        }
        Observation::Skipped { reason } => format!("#{seq} [{legs}] not sent: {reason}\n"),
        Observation::SseEvent(e) => match &e.error {
            Some(err) => format!("#{seq} [{legs}] stream #{} ended: {err}\n", e.stream),
            None => format!(
                "#{seq} [{legs}] stream #{} event {}\n< {}\n",
                e.stream,
                e.event.as_deref().unwrap_or("message"),
                cut(&e.data, BODY_CHARS)
            ),
        },
        other => format!(
            "#{seq} [{legs}] {}\n",
            cut(&format!("{other:?}"), BODY_CHARS)
        ),
    })
}

/// The excerpts of every record that decided a non-PASS verdict of `results`, by seq.
pub fn excerpts(ev: &Bundle, results: &[crate::benchmark::CheckResult]) -> BTreeMap<u64, String> {
    let mut out = BTreeMap::new();
    for o in results.iter().filter_map(|r| r.outcome.as_ref()) {
        if o.verdict == Verdict::Pass {
            continue;
        }
        for seq in &o.records {
            if !out.contains_key(seq) {
                if let Some(x) = excerpt(ev, *seq) {
                    out.insert(*seq, x);
                }
            }
        }
    }
    out
}

fn class(v: Verdict, waived: bool) -> (&'static str, &'static str) {
    if waived {
        return ("waived", "w");
    }
    match v {
        Verdict::Pass => ("pass", "P"),
        Verdict::Fail => ("fail", "F"),
        Verdict::Error => ("error", "E"),
        Verdict::Unknown => ("unknown", "?"),
        Verdict::NotApplicable => ("na", "–"),
        Verdict::NoRev => ("norev", "R"),
    }
}

const STYLE: &str = r#"
:root{--pass:#009E73;--fail:#D55E00;--error:#CC79A7;--unknown:#E69F00;--na:#BBBBBB;--norev:#56B4E9;--waived:#0072B2}
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111;background:#fff}
h1{font-size:1.4em;margin:0 0 .3em}h2{font-size:1.15em;margin:1.4em 0 .4em}
.meta{color:#444}
table.matrix{border-collapse:collapse;margin-top:.6em}
.matrix th,.matrix td{border:1px solid #ccc;padding:0;text-align:center}
.matrix th.check{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;font-size:12px;padding:4px 2px;white-space:nowrap}
.matrix tr.group th{text-align:left;padding:6px 8px 2px;font-weight:bold}
.matrix th.server{text-align:left;padding:2px 8px;font-weight:normal;white-space:nowrap;max-width:28em;overflow:hidden;text-overflow:ellipsis}
.matrix td button{width:1.9em;height:1.9em;border:0;font:bold 13px monospace;cursor:pointer;color:#000}
.matrix td button.pass{background:var(--pass);color:#fff}.matrix td button.fail{background:var(--fail);color:#fff}
.matrix td button.error{background:var(--error)}.matrix td button.unknown{background:var(--unknown)}
.matrix td button.na{background:#f2f2f2;color:#555}.matrix td button.norev{background:var(--norev)}
.matrix td button.waived{background:var(--waived);color:#fff}
.legend span{display:inline-block;margin-right:1em}.legend b{display:inline-block;width:1.6em;text-align:center;font-family:monospace}
.filters{margin:.8em 0;padding:.5em;border:1px solid #ddd;background:#fafafa}
.filters label{margin-right:.8em;white-space:nowrap}
details.result{border-left:4px solid #ccc;margin:.4em 0;padding:.2em .6em}
details.result.fail{border-color:var(--fail)}details.result.error{border-color:var(--error)}
details.result.unknown{border-color:var(--unknown)}details.result.waived{border-color:var(--waived)}
details.result summary{cursor:pointer}
pre{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:.5em;font-size:12px}
.hidden{display:none}
@media print{.filters,.matrix td button{cursor:default}.filters{display:none}details.result{break-inside:avoid}}
"#;

const SCRIPT: &str = r#"
(function(){
  function sel(q){return Array.prototype.slice.call(document.querySelectorAll(q));}
  sel('.matrix td button').forEach(function(b){
    b.addEventListener('click',function(){
      var d=document.getElementById(b.getAttribute('data-target'));
      if(!d)return; d.classList.remove('hidden'); d.open=true; d.scrollIntoView({block:'nearest'});
    });
  });
  function apply(){
    var verdicts=sel('.filters input[data-verdict]').filter(function(i){return i.checked;}).map(function(i){return i.getAttribute('data-verdict');});
    var levels=sel('.filters input[data-level]').filter(function(i){return i.checked;}).map(function(i){return i.getAttribute('data-level');});
    var servers=sel('.filters input[data-server]').filter(function(i){return i.checked;}).map(function(i){return i.getAttribute('data-server');});
    sel('[data-col-level]').forEach(function(c){c.classList.toggle('hidden',levels.indexOf(c.getAttribute('data-col-level'))<0);});
    sel('tr[data-row-server]').forEach(function(r){r.classList.toggle('hidden',servers.indexOf(r.getAttribute('data-row-server'))<0);});
    sel('details.result').forEach(function(d){
      var ok=verdicts.indexOf(d.getAttribute('data-verdict'))>=0&&levels.indexOf(d.getAttribute('data-level'))>=0&&servers.indexOf(d.getAttribute('data-server'))>=0;
      d.classList.toggle('hidden',!ok);
    });
  }
  sel('.filters input').forEach(function(i){i.addEventListener('change',apply);});
  window.addEventListener('beforeprint',function(){sel('details.result').forEach(function(d){d.open=true;});});
  apply();
})();
"#;

/// The whole HTML document: the bytes of [`write()`].
pub fn render(r: &Report) -> String {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read.
    let _ = write(r, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

/// Write the HTML document to `out` as it is made: one check's results at a time.
pub fn write(r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let mut s = String::new();
    let title = format!("{}: {} server(s)", r.benchmark.title(), r.servers.len());
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(&title)
    );
    let _ = writeln!(s, "<h1>{}</h1>", esc(&title));
    let _ = writeln!(
        s,
        "<p class=\"meta\">graded by mcp-grade {GRADER_VERSION}; this build grades {} of the {} checks; \
         {} FAIL, {} ERROR, {} UNKNOWN, {} PASS, {} N/A, {} NO-REV; runs fail on {}{}{}</p>",
        r.graded().count(),
        r.benchmark.checks.len(),
        r.total(Verdict::Fail),
        r.total(Verdict::Error),
        r.total(Verdict::Unknown),
        r.total(Verdict::Pass),
        r.total(Verdict::NotApplicable),
        r.total(Verdict::NoRev),
        r.fail_on.as_str(),
        r.policy
            .as_ref()
            .map(|p| format!("; policy {} (sha256 {})", esc(&p.file), p.sha256))
            .unwrap_or_default(),
        r.waivers
            .as_ref()
            .map(|w| format!(
                "; waivers {} (sha256 {}): {} waived, {} stale, {} expired",
                esc(&w.file),
                w.sha256,
                w.waived,
                w.stale.len(),
                w.expired.len()
            ))
            .unwrap_or_default()
    );
    if let Some(w) = &r.waivers {
        let notices = w.notices();
        if !notices.is_empty() {
            let _ = writeln!(s, "<p>Waivers {}:</p><ul>", esc(&w.file));
            for n in notices {
                let _ = writeln!(s, "<li>{}</li>", esc(&n));
            }
            let _ = writeln!(s, "</ul>");
        }
    }
    let _ = writeln!(s, "<ul class=\"coverage\">");
    for (sub, l) in super::coverage::lines(r) {
        let _ = writeln!(
            s,
            "<li{}>{}</li>",
            if sub { " class=\"sub\"" } else { "" },
            esc(&l)
        );
    }
    let _ = writeln!(s, "</ul>");
    filters(&mut s, r);
    matrix(&mut s, r, out)?;
    results(&mut s, r, out)?;
    let _ = writeln!(s, "<h2>Not reachable by any probe</h2><ul>");
    for u in r.benchmark.sections_unreached() {
        let _ = writeln!(
            s,
            "<li><b>Section {} ({})</b>: governs {}; {}.</li>",
            u.section,
            esc(u.title),
            esc(u.governs),
            esc(u.why)
        );
    }
    let _ = writeln!(s, "</ul>");
    provenance(&mut s, r, out)?;
    let _ = writeln!(s, "<script>{SCRIPT}</script></body></html>");
    out.write_all(s.as_bytes())
}

/// Write `s` to `out` and empty it.
fn flush(s: &mut String, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    out.write_all(s.as_bytes())?;
    s.clear();
    Ok(())
}

/// The benchmark, the grader and each server's collector.
fn provenance(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let b = &r.provenance.benchmark;
    let g = &r.provenance.grader;
    let _ = writeln!(s, "<h2>Provenance</h2><ul class=\"provenance\">");
    let _ = writeln!(
        s,
        "<li>benchmark: {} {}, id <code>{}</code>, sha256 <code>{}</code></li>",
        esc(&b.name),
        esc(&b.version),
        esc(&b.id),
        esc(&b.sha256)
    );
    if let Some(t) = &b.tailoring {
        let _ = writeln!(
            s,
            "<li>tailoring: <code>{}</code>, sha256 <code>{}</code></li>",
            esc(&t.file),
            esc(&t.sha256)
        );
    }
    if let Some(a) = &r.provenance.attestations {
        let _ = writeln!(
            s,
            "<li>attestations: <code>{}</code>, sha256 <code>{}</code></li>",
            esc(&a.file),
            esc(&a.sha256)
        );
    }
    let _ = writeln!(
        s,
        "<li>grader: {} {}, commit <code>{}</code>, {}, {}</li>",
        esc(&g.name),
        esc(&g.version),
        esc(&g.commit),
        esc(&g.target),
        esc(&g.rustc)
    );
    r.each_server(|i, srv| {
        if s.len() > 1 << 16 {
            flush(s, out)?;
        }
        let _ = writeln!(
            s,
            "<li>[{}] {}: bundle <code>{}</code> written by {}, build <code>{}</code></li>",
            i + 1,
            esc(&srv.endpoint),
            esc(&srv.bundle),
            esc(&srv.collector),
            esc(&srv.collector_build)
        );
        Ok(ControlFlow::Continue(()))
    })?;
    let _ = writeln!(s, "</ul>");
    Ok(())
}

/// One server's row of the matrix: its label and a cell per check.
fn matrix_row(s: &mut String, r: &Report, i: usize, srv: &super::Server) {
    let _ = write!(
        s,
        "<tr data-row-server=\"{i}\"><th class=\"server\" title=\"{}\">[{}] {} [{}]</th>",
        esc(&match srv.provenance() {
            Some(p) => format!("{} ({p})", srv.bundle),
            None => srv.bundle.clone(),
        }),
        i + 1,
        esc(&srv.endpoint),
        esc(srv.revision_label())
    );
    for row in &r.rows {
        let e = row.entry;
        match row.verdict(i) {
            Some(verdict) => {
                let (c, m) = class(verdict, row.waived(i));
                let _ = write!(
                        s,
                        "<td data-col-level=\"{}\"><button type=\"button\" class=\"{c}\" data-target=\"r-{}-{i}\" \
                         aria-label=\"{} on server {}: {}\" title=\"{} [{}]: {}\">{m}</button></td>",
                        e.level.as_str(),
                        e.id.as_str(),
                        e.id.as_str(),
                        i + 1,
                        verdict.mark(),
                        e.id.as_str(),
                        i + 1,
                        verdict.mark()
                    );
            }
            None => {
                let _ = write!(
                    s,
                    "<td data-col-level=\"{}\" title=\"not graded\"></td>",
                    e.level.as_str()
                );
            }
        }
    }
    let _ = writeln!(s, "</tr>");
}

fn filters(s: &mut String, r: &Report) {
    let _ = write!(
        s,
        "<form class=\"filters\" aria-label=\"filters\"><b>Show</b> "
    );
    for (v, word) in [
        ("fail", "FAIL"),
        ("error", "ERROR"),
        ("unknown", "UNKNOWN"),
        ("waived", "waived"),
        ("na", "N/A"),
        ("norev", "NO-REV"),
    ] {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" data-verdict=\"{v}\" checked> {word}</label>"
        );
    }
    let _ = write!(s, " &nbsp; <b>Level</b> ");
    for l in ["L1", "L2"] {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" data-level=\"{l}\" checked> {l}</label>"
        );
    }
    let _ = write!(s, " &nbsp; <b>Server</b> ");
    for i in 0..r.servers.len() {
        let _ = write!(
            s,
            "<label><input type=\"checkbox\" data-server=\"{i}\" checked> [{}]</label>",
            i + 1
        );
    }
    let _ = writeln!(s, "</form>");
}

fn matrix(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let _ = write!(
        s,
        "<table class=\"matrix\" aria-label=\"server by check matrix\"><thead><tr><th></th>"
    );
    for row in &r.rows {
        let e = row.entry;
        let _ = write!(
            s,
            "<th class=\"check\" data-col-level=\"{}\" title=\"{}\">{}</th>",
            e.level.as_str(),
            esc(&format!(
                "{} ({}) {}",
                e.id.as_str(),
                e.level.as_str(),
                e.title
            )),
            e.id.as_str()
        );
    }
    let _ = writeln!(s, "</tr></thead><tbody>");
    if r.group_by_source {
        for (source, ix) in r.source_groups() {
            let head = match source {
                Some(file) => format!("from {}", esc(file)),
                None => "given as targets".to_string(),
            };
            let _ = writeln!(
                s,
                "<tr class=\"group\"><th colspan=\"{}\">{head}</th></tr>",
                r.rows.len() + 1
            );
            for i in ix {
                if s.len() > 1 << 16 {
                    flush(s, out)?;
                }
                let srv = r.server(i).map_err(std::io::Error::other)?;
                matrix_row(s, r, i, &srv);
            }
        }
    } else {
        r.each_server(|i, srv| {
            if s.len() > 1 << 16 {
                flush(s, out)?;
            }
            matrix_row(s, r, i, srv);
            Ok(ControlFlow::Continue(()))
        })?;
    }
    let _ = writeln!(s, "</tbody></table>");
    let _ = write!(s, "<p class=\"legend\">");
    for (c, m, word) in [
        ("pass", "P", "PASS"),
        ("fail", "F", "FAIL"),
        ("error", "E", "ERROR"),
        ("unknown", "?", "UNKNOWN"),
        ("na", "–", "N/A"),
        ("norev", "R", "NO-REV (needs 2026-07-28)"),
        ("waived", "w", "waived FAIL/ERROR"),
    ] {
        let _ = write!(
            s,
            "<span><b class=\"{c}\" style=\"background:var(--{c})\">{m}</b> {word}</span>"
        );
    }
    let _ = writeln!(s, "</p>");
    Ok(())
}

fn results(s: &mut String, r: &Report, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let _ = writeln!(s, "<h2>Results</h2><p class=\"meta\">Every result but PASS, by check; click a cell above to open one.</p>");
    // One result at a time (never a whole check's, with its excerpts): a PASS is not
    // shown, so it is not read.
    for row in r.rows.iter() {
        flush(s, out)?;
        for i in 0..r.servers.len() {
            if row.verdict(i).is_none_or(|v| v == Verdict::Pass) {
                continue;
            }
            let Some((o, excerpts)) = r
                .outcome_and_excerpts(row, i)
                .map_err(std::io::Error::other)?
            else {
                continue;
            };
            detail(s, r, row, i, &o, excerpts.as_ref());
            if s.len() > 1 << 16 {
                flush(s, out)?;
            }
        }
    }
    Ok(())
}

fn detail(
    s: &mut String,
    r: &Report,
    row: &Row,
    i: usize,
    o: &crate::verdict::Outcome,
    spilled: Option<&BTreeMap<u64, String>>,
) {
    let e = row.entry;
    let srv = &r.servers[i];
    // A report that holds its servers holds their excerpts; a spilled one gave them.
    let held = spilled.is_none().then(|| r.server(i).ok()).flatten();
    let excerpts = spilled.or(held.as_ref().map(|h| &h.excerpts));
    let (c, m) = class(o.verdict, row.waived(i));
    let open = matches!(o.verdict, Verdict::Fail | Verdict::Error) && !row.waived(i);
    let _ = write!(
        s,
        "<details class=\"result {c}\" id=\"r-{}-{i}\" data-verdict=\"{c}\" data-level=\"{}\" data-server=\"{i}\"{}>\
         <summary><b>{m} {}</b> {} ({}) {} — [{}] {}</summary>",
        e.id.as_str(),
        e.level.as_str(),
        if open { " open" } else { "" },
        o.verdict.mark(),
        e.id.as_str(),
        e.level.as_str(),
        esc(e.title),
        i + 1,
        esc(&srv.endpoint)
    );
    if let Some(mk) = row.mark(i) {
        let _ = write!(
            s,
            "<p><b>{}</b> (waivers line {}, until {}): {}</p>",
            if mk.active {
                "Waived"
            } else {
                "Waiver expired"
            },
            mk.line,
            mk.expires,
            esc(&mk.reason)
        );
    }
    let _ = write!(s, "<p><b>Evidence</b>: {}</p>", esc(&o.evidence));
    if !o.reduction.is_empty() {
        let _ = write!(s, "<p><b>Not reachable</b>: {}</p>", esc(&o.reduction));
    }
    if e.source != Source::ReportedOnly {
        let _ = write!(s, "<p><b>Fix</b>: {}</p>", esc(e.remediation));
    }
    let shown: Vec<&String> = o
        .records
        .iter()
        .filter_map(|seq| excerpts.and_then(|e| e.get(seq)))
        .collect();
    if !shown.is_empty() {
        let _ = write!(
            s,
            "<p><b>Decisive records</b> (<code>mcp-grade show {}</code>):</p><pre>",
            esc(&srv.bundle)
        );
        for x in shown {
            s.push_str(&esc(x));
            s.push('\n');
        }
        s.push_str("</pre>");
    }
    let _ = writeln!(s, "</details>");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The escape copying runs writes what escaping one character at a time wrote.
    #[test]
    fn escape_in_runs_matches_one_character_at_a_time() {
        let old = |s: &str| {
            let mut out = String::new();
            for c in s.chars() {
                match c {
                    '&' => out.push_str("&amp;"),
                    '<' => out.push_str("&lt;"),
                    '>' => out.push_str("&gt;"),
                    '"' => out.push_str("&quot;"),
                    '\'' => out.push_str("&#39;"),
                    c if c.is_control() && c != '\n' && c != '\t' => {
                        let _ = write!(out, "\\u{{{:x}}}", c as u32);
                    }
                    c => out.push(c),
                }
            }
            out
        };
        for s in [
            "",
            "plain",
            "<a href=\"x\">it's & more</a>",
            "tab\there\nline\r\u{0}\u{1b}[0m\u{7f}\u{85}\u{9f} end",
            "µ ü 日本 <b>\u{200b}</b> '&'",
            "&&&<<<>>>\"\"\"'''",
        ] {
            assert_eq!(esc(s), old(s), "{s:?}");
        }
    }

    #[test]
    fn escaping_covers_markup_quotes_and_controls() {
        assert_eq!(
            esc("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
        assert_eq!(esc("\u{1b}[2J"), "\\u{1b}[2J");
        assert_eq!(esc("a\nb"), "a\nb");
    }
}
