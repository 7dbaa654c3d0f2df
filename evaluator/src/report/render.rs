//! Picking the renderer of a `--format`: the model ([`super::Report`]) knows no
//! renderer, the renderers know the model, and this file knows both. It also says what
//! a renderer needs from each bundle beyond its results ([`extras`]): the commands know
//! no renderer either.

use super::{
    html, json, junit, markdown, oscal, sarif, summary, text, xccdf, Format, Report, Server,
    SpillForm,
};
use crate::benchmark::CheckResult;
use crate::evidence::Bundle;

/// Keep in `server` what the renderer of `format` reads from the bundle `ev` beside the
/// `results` graded from it, while the bundle is at hand: a report is written after its
/// bundles are dropped, and what is kept goes with the server's outcomes (to the spill
/// file and back). The HTML report keeps a transcript excerpt of each record that
/// decided a non-PASS verdict ([`Server::excerpts`], [`html::excerpts`]); the other
/// formats keep nothing.
pub fn extras(format: Format, ev: &Bundle, results: &[CheckResult], server: &mut Server) {
    match format {
        Format::Html => server.excerpts = html::excerpts(ev, results),
        Format::Text
        | Format::Json
        | Format::Sarif
        | Format::Junit
        | Format::Markdown
        | Format::Oscal
        | Format::Xccdf => {}
    }
}

/// What the spill file of a report in `format` keeps of each outcome, and how it is laid
/// out: for the JSON report, the bytes it writes of each result
/// ([`super::spill::Form::Json`]), made once on the grading worker and copied when the
/// report is written, never parsed back; for every other format the outcome itself,
/// which its renderer reads back. The renderers that read a check's outcomes on many
/// servers at a time (text, `--verbose`, SARIF, Markdown, OSCAL) have them in transposed
/// batches ([`super::spill::Form::OutcomesBatched`]), so that one check's outcomes on
/// servers graded one after the other are one read; JUnit and XCCDF, which read one
/// server's outcomes at a time, and HTML, which reads one outcome at a time, have them
/// server by server ([`super::spill::Form::Outcomes`]).
pub fn spill_form(format: Format) -> SpillForm {
    match format {
        Format::Json => SpillForm::Json(json::write_outcome),
        Format::Text | Format::Sarif | Format::Markdown | Format::Oscal => {
            SpillForm::OutcomesBatched
        }
        Format::Junit | Format::Html | Format::Xccdf => SpillForm::Outcomes,
    }
}

/// Write `report` in `format` to `out` as it is made, through a buffer: every renderer
/// reads one check's outcomes (JUnit: one server's) at a time
/// ([`super::Report::outcomes`], [`super::Report::server_outcomes`]) and writes what
/// it made of them before reading the next, so neither the outcomes nor the text of a
/// report over many bundles is held whole.
pub fn write(report: &Report, format: Format, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    match format {
        Format::Text if report.verbose => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            text::write(report, &mut w)?;
            std::io::Write::flush(&mut w)
        }
        Format::Text => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            summary::write(report, report.width, report.height, &mut w)?;
            std::io::Write::flush(&mut w)
        }
        Format::Json => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            json::to_writer(report, &mut w)?;
            std::io::Write::write_all(&mut w, b"\n")?;
            std::io::Write::flush(&mut w)
        }
        Format::Sarif => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            sarif::to_writer(report, &mut w)?;
            std::io::Write::write_all(&mut w, b"\n")?;
            std::io::Write::flush(&mut w)
        }
        Format::Junit => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            junit::to_writer(report, &mut w)?;
            std::io::Write::flush(&mut w)
        }
        Format::Oscal => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            oscal::write(report, &mut w)?;
            std::io::Write::flush(&mut w)
        }
        Format::Xccdf => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            xccdf::write(report, &mut w)?;
            std::io::Write::flush(&mut w)
        }
        Format::Markdown | Format::Html => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            match format {
                Format::Markdown => markdown::write(report, &mut w)?,
                _ => html::write(report, &mut w)?,
            }
            std::io::Write::flush(&mut w)
        }
    }
}

/// Render `report` in `format`: the bytes [`write()`] writes, in memory.
pub fn render(report: &Report, format: Format) -> Vec<u8> {
    let mut v = Vec::new();
    // Writing to memory fails only when a spill file cannot be read back.
    let _ = write(report, format, &mut v);
    v
}
