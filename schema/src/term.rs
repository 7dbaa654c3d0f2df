//! Making untrusted text safe to print on a terminal. Shared by both binaries: every
//! server-controlled string written to stderr or into a text report passes through
//! [`line()`] or [`block`], so a server cannot clear the screen, retitle the window or
//! reorder what a reader sees.

fn is_unsafe(c: char) -> bool {
    // C0, DEL and C1 controls (ESC starts terminal escape sequences), the bidi
    // overrides and isolates that reorder what a reader sees, and the two private-use
    // characters the grader brackets a reference to a check's number with (so quoted
    // server text can never forge one).
    c.is_control()
        || matches!(
            c,
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{e000}' | '\u{e001}'
        )
}

fn escape(c: char, out: &mut String) {
    match c {
        '\r' => out.push_str("\\r"),
        '\n' => out.push_str("\\n"),
        '\t' => out.push_str("\\t"),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// Untrusted text for one line of terminal output: every control character (line
/// breaks included) and bidi override is shown escaped (`\n`, `\u{1b}`).
pub fn line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_unsafe(c) {
            escape(c, &mut out);
        } else {
            out.push(c);
        }
    }
    out
}

/// Untrusted text for a block of terminal output: line breaks and tabs stay, every other
/// control character and bidi override is shown escaped. `\r\n` becomes `\n`.
pub fn block(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\t' => out.push(c),
            c if is_unsafe(c) => escape(c, &mut out),
            c => out.push(c),
        }
    }
    out
}

/// One diagnostic line of a binary on stderr: `<program>: [<kind>: ]<text>`, with the
/// text escaped by [`line()`]. Both binaries print every error, warning and note this way.
pub fn diagnostic(program: &str, kind: Option<&str>, text: &str) -> String {
    match kind {
        Some(k) => format!("{program}: {k}: {}", line(text)),
        None => format!("{program}: {}", line(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls() {
        assert_eq!(line("a\u{1b}[2Jb\nc"), "a\\u{1b}[2Jb\\nc");
        assert_eq!(line("\u{1b}]0;title\u{7}"), "\\u{1b}]0;title\\u{7}");
        assert_eq!(block("x\r\ny\u{9b}z\u{202e}"), "x\ny\\u{9b}z\\u{202e}");
    }

    #[test]
    fn diagnostics_name_the_program_and_escape_the_text() {
        assert_eq!(
            diagnostic("mcp-grade", Some("warning"), "a\nb"),
            "mcp-grade: warning: a\\nb"
        );
        assert_eq!(diagnostic("mcp-collect", None, "x"), "mcp-collect: x");
    }
}
