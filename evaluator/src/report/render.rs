//! Picking the renderer of a `--format`: the model ([`super::Report`]) knows no
//! renderer, the renderers know the model, and this file knows both.

use super::{html, json, junit, markdown, sarif, summary, text, Format, Report};

/// Write `report` in `format` to `out`: the bytes of [`render`]. The JSON report and the
/// text summary are written as they are made (through a buffer), one check's outcomes
/// at a time ([`super::Report::outcomes`]), never held whole; the other formats are
/// rendered in memory first and need the outcomes in the rows
/// ([`Format::streams`]).
pub fn write(report: &Report, format: Format, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    match format {
        Format::Text if report.verbose => out.write_all(&render(report, format)),
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
        Format::Markdown | Format::Html => out.write_all(&render(report, format)),
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
