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

/// The first character of `s` that [`is_unsafe`], and where it starts. Runs of
/// printable ASCII (most of any text) are passed over eight bytes at a time
/// ([`plain_word`]); other ASCII is tested a byte at a time (its only unsafe characters
/// are C0 and DEL); a character is decoded only where a byte is not ASCII.
fn next_unsafe(s: &str) -> Option<(usize, char)> {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        while let Some(w) = b.get(i..i + 8) {
            let mut word = [0; 8];
            word.copy_from_slice(w);
            if !plain_word(u64::from_le_bytes(word)) {
                break;
            }
            i += 8;
        }
        let &x = b.get(i)?;
        if x.is_ascii() {
            if x < 0x20 || x == 0x7f {
                return Some((i, char::from(x)));
            }
            i += 1;
        } else {
            // `i` is at a character boundary: every step is a whole character.
            let c = s.get(i..).and_then(|t| t.chars().next())?;
            if is_unsafe(c) {
                return Some((i, c));
            }
            i += c.len_utf8();
        }
    }
}

/// True when each of the eight bytes of `x` is printable ASCII (0x20 to 0x7E): none has
/// its high bit set, none is below 0x20, none is DEL. Each test tells whether some byte
/// is one (not which), which is all a skip over the word needs.
fn plain_word(x: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below_space = x.wrapping_sub(ONES * 0x20) & !x & HIGH;
    let y = x ^ (ONES * 0x7f);
    let del = y.wrapping_sub(ONES) & !y & HIGH;
    (x & HIGH) | below_space | del == 0
}

/// Untrusted text for one line of terminal output: every control character (line
/// breaks included) and bidi override is shown escaped (`\n`, `\u{1b}`).
pub fn line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    line_into(&mut out, s);
    out
}

/// [`line()`], appended to `out`: for text that is written into a longer line, without a
/// string of its own.
pub fn line_into(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some((i, c)) = next_unsafe(rest) {
        out.push_str(&rest[..i]);
        escape(c, out);
        rest = &rest[i + c.len_utf8()..];
    }
    out.push_str(rest);
}

/// [`line()`], written to `out` a piece at a time: for text formatted into a longer one
/// (a `Display` argument), without a string of its own. Only an escaped character is
/// written through a small string.
pub fn write_line<W: std::fmt::Write + ?Sized>(out: &mut W, s: &str) -> std::fmt::Result {
    let mut rest = s;
    let mut escaped = String::new();
    while let Some((i, c)) = next_unsafe(rest) {
        out.write_str(&rest[..i])?;
        escaped.clear();
        escape(c, &mut escaped);
        out.write_str(&escaped)?;
        rest = &rest[i + c.len_utf8()..];
    }
    out.write_str(rest)
}

/// Untrusted text for a block of terminal output: line breaks and tabs stay, every other
/// control character and bidi override is shown escaped. `\r\n` becomes `\n`.
pub fn block(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some((i, c)) = next_unsafe(rest) {
        out.push_str(&rest[..i]);
        let after = &rest[i + c.len_utf8()..];
        match c {
            '\r' if after.starts_with('\n') => {}
            '\n' | '\t' => out.push(c),
            c => escape(c, &mut out),
        }
        rest = after;
    }
    out.push_str(rest);
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

    /// [`line`] and [`block`] as first written, a character at a time: the definition
    /// the faster scans are held to.
    fn line_by_chars(s: &str) -> String {
        let mut out = String::new();
        for c in s.chars() {
            if is_unsafe(c) {
                escape(c, &mut out);
            } else {
                out.push(c);
            }
        }
        out
    }

    fn block_by_chars(s: &str) -> String {
        let mut out = String::new();
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

    proptest::proptest! {
        #[test]
        fn the_scans_escape_what_the_character_loop_does(
            s in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}\\u{e000}\\u{e001}]|\\r\\n){0,40}"
        ) {
            proptest::prop_assert_eq!(line(&s), line_by_chars(&s));
            let mut appended = String::from("head ");
            line_into(&mut appended, &s);
            proptest::prop_assert_eq!(appended, format!("head {}", line_by_chars(&s)));
            let mut written = String::from("head ");
            proptest::prop_assert!(write_line(&mut written, &s).is_ok());
            proptest::prop_assert_eq!(written, format!("head {}", line_by_chars(&s)));
            proptest::prop_assert_eq!(block(&s), block_by_chars(&s));
        }
    }

    /// Every byte value, alone and as a character, at every place in and around the
    /// eight-byte words of long printable runs: the word skip stops where the character
    /// loop does.
    #[test]
    fn the_word_skip_stops_at_every_unsafe_character() {
        let mut specials: Vec<String> = (0u8..0x80).map(|b| char::from(b).to_string()).collect();
        specials.extend(
            [
                "\u{80}", "\u{9f}", "é", "…", "\u{202e}", "\u{2069}", "\u{e000}", "\u{e001}", "😀",
            ]
            .map(str::to_string),
        );
        for n in 0..20 {
            for sp in &specials {
                for tail in [0, 1, 7, 8, 9] {
                    let s = format!(
                        "{}{sp}{}",
                        "a~ Z".repeat(n).get(..n * 3).unwrap_or(""),
                        "x".repeat(tail)
                    );
                    assert_eq!(line(&s), line_by_chars(&s), "{s:?}");
                    assert_eq!(block(&s), block_by_chars(&s), "{s:?}");
                }
            }
        }
        for v in 0..=u8::MAX {
            for at in 0..8 {
                let mut word = *b"a~ Zb}!q";
                word[at] = v;
                assert_eq!(
                    plain_word(u64::from_le_bytes(word)),
                    (0x20..0x7f).contains(&v),
                    "{v:#x} at {at}"
                );
            }
        }
        for x in [0u64, u64::MAX, 0x2020_2020_2020_2020, 0x7e7e_7e7e_7e7e_7e7e] {
            assert_eq!(
                plain_word(x),
                x.to_le_bytes().iter().all(|b| (0x20..0x7f).contains(b))
            );
        }
    }

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
