//! Reading an operator's TOML file (`--waivers`, `--attestations`, `--trust-list`): the
//! text as UTF-8, the document, and errors as `(line, message)` so each input's error
//! names the line.

use serde::de::DeserializeOwned;

/// The line (1-based) of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// `bytes` as UTF-8 text and the TOML document `T` it holds; an error is the line it is
/// on and toml's message on one line.
pub fn read<T: DeserializeOwned>(bytes: &[u8]) -> Result<(&str, T), (usize, String)> {
    let text = std::str::from_utf8(bytes).map_err(|e| (1, format!("not UTF-8: {e}")))?;
    let doc = toml::from_str(text).map_err(|e| {
        let line = e.span().map_or(1, |s| line_of(text, s.start));
        (
            line,
            e.message()
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" "),
        )
    })?;
    Ok((text, doc))
}
