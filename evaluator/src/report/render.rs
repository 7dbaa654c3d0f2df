//! Picking the renderer of a `--format`: the model ([`super::Report`]) knows no
//! renderer, the renderers know the model, and this file knows both.

use super::{html, json, junit, markdown, sarif, summary, text, Format, Report};

/// Write `report` in `format` to `out`: the bytes of [`render`], without holding the
/// JSON document in memory (it is serialised straight to `out`, through a buffer).
pub fn write(report: &Report, format: Format, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    match format {
        Format::Text => out.write_all(&render(report, format)),
        Format::Json => {
            let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
            json::to_writer(report, &mut w)?;
            std::io::Write::write_all(&mut w, b"\n")?;
            std::io::Write::flush(&mut w)
        }
        Format::Sarif | Format::Junit | Format::Markdown | Format::Html => {
            out.write_all(&render(report, format))
        }
    }
}

/// Render `report` in `format`.
pub fn render(report: &Report, format: Format) -> Vec<u8> {
    match format {
        Format::Text if report.verbose => text::render(report).into_bytes(),
        Format::Text => summary::render(report, report.width, report.height).into_bytes(),
        Format::Json => {
            let mut v = json::to_string(report).into_bytes();
            v.push(b'\n');
            v
        }
        Format::Sarif => {
            let mut v = sarif::to_string(report).into_bytes();
            v.push(b'\n');
            v
        }
        Format::Markdown => markdown::render(report).into_bytes(),
        Format::Html => html::render(report).into_bytes(),
        Format::Junit => {
            let mut v = junit::to_string(report).into_bytes();
            if !v.ends_with(b"\n") {
                v.push(b'\n');
            }
            v
        }
    }
}
