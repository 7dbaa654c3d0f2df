//! References a rule writes into its text, rendered through the benchmark definition.
//!
//! A rule never knows the number its recommendation has in a definition: the same rule
//! grades 2.4 under one revision and 2.6 under the next, and one rule may grade two rows
//! with different parameters. So a rule names its sub-verdicts locally (`a`, `b`) and
//! other rules by their stable id, and writes a *reference* wherever a reader should see
//! a number:
//!
//! - [`here`] (or the [`here!`](crate::here) macro for constant text): a sub-verdict of
//!   the row being graded, rendered as the row's number and the sub-verdict's name
//!   (`2.4a`); `here("")` is the row's own number;
//! - [`rule`] (or [`rule_ref!`](crate::rule_ref)): another rule, or one of its
//!   sub-verdicts, rendered as the number of the first row the definition grades by that
//!   rule (`3.2.2`, `3.3.1b`), or, when the definition grades nothing by it, as the rule
//!   id in brackets (`[no-token-passthrough]`).
//!
//! A reference is a private-use character pair around `rule-id#sub`; it never reaches a
//! report: `benchmark::runner` renders every outcome (legs, notes, evidence, reduction,
//! string details; for a report, which prints no note, the notes are emptied instead)
//! before anything else sees it. Server-supplied text cannot forge one:
//! `fmt::escape_line` and the terminal escapes show these two characters escaped.

use std::borrow::Cow;

/// Opens a reference.
pub const OPEN: char = '\u{e000}';
/// Closes a reference.
pub const CLOSE: char = '\u{e001}';

/// A reference to sub-verdict `sub` of the row being graded (`sub` empty: the row
/// itself). Rendered as the row's number followed by `sub`.
pub fn here(sub: &str) -> String {
    let mut s = String::with_capacity(sub.len() + 7);
    push_here(&mut s, sub);
    s
}

/// [`here`] appended to `out` (no string of its own).
pub fn push_here(out: &mut String, sub: &str) {
    out.push(OPEN);
    out.push('#');
    out.push_str(sub);
    out.push(CLOSE);
}

/// A reference to rule `id` (`sub` empty) or to its sub-verdict `sub`. Rendered as the
/// number of the first row graded by `id`, followed by `sub`.
pub fn rule(id: &str, sub: &str) -> String {
    if sub.is_empty() {
        format!("{OPEN}{id}{CLOSE}")
    } else {
        format!("{OPEN}{id}#{sub}{CLOSE}")
    }
}

/// [`here`] as a string literal, for constant text built with `concat!`.
#[macro_export]
macro_rules! here {
    ($sub:literal) => {
        concat!("\u{e000}#", $sub, "\u{e001}")
    };
}

/// [`rule`] as a string literal, for constant text built with `concat!`.
#[macro_export]
macro_rules! rule_ref {
    ($id:literal) => {
        concat!("\u{e000}", $id, "\u{e001}")
    };
    ($id:literal, $sub:literal) => {
        concat!("\u{e000}", $id, "#", $sub, "\u{e001}")
    };
}

/// Whether `text` holds a reference (cheap: one scan for a byte, then, only where it
/// occurs, for the character).
pub fn has_refs(text: &str) -> bool {
    // OPEN (U+E000) is EE 80 80 in UTF-8. The byte EE starts only the characters
    // U+E000-U+EFFF, so text without it holds no OPEN; a byte search (memchr: many bytes
    // per instruction) is cheaper than searching for a character that is not ASCII, which
    // goes through a substring search.
    lead(text.as_bytes()).is_some() && text.contains(OPEN)
}

/// Text this long or shorter is searched a word at a time ([`lead`]).
const SHORT: usize = 32;

/// Where the byte EE (which starts OPEN and CLOSE) first occurs in `b`: memchr, which
/// searches many bytes per instruction, past a fixed cost that is most of the search of
/// a short text (a detail's value, a key), which is searched a word at a time instead
/// ([`short_lead`]).
#[inline]
fn lead(b: &[u8]) -> Option<usize> {
    if b.len() <= SHORT {
        short_lead(b)
    } else {
        memchr::memchr(0xee, b)
    }
}

/// [`lead`] of a short text: eight bytes at a time, the last few as the last eight bytes
/// of `b` (overlapping bytes already found to be other bytes), text shorter than eight
/// bytes a byte at a time.
#[inline]
fn short_lead(b: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // The high bit of each byte of the word at `at` that is EE, and possibly of bytes
    // after the first such byte (a borrow carries upwards), never of one before it: the
    // lowest bit set marks the first EE.
    let first = |at: usize| {
        let mut word = [0; 8];
        word.copy_from_slice(&b[at..at + 8]);
        let y = u64::from_le_bytes(word) ^ (ONES * 0xee);
        let f = y.wrapping_sub(ONES) & !y & HIGH;
        (f != 0).then(|| at + (f.trailing_zeros() / 8) as usize)
    };
    if b.len() < 8 {
        return b.iter().position(|&c| c == 0xee);
    }
    let mut at = 0;
    while at + 8 <= b.len() {
        if let Some(i) = first(at) {
            return Some(i);
        }
        at += 8;
    }
    if at == b.len() {
        None
    } else {
        first(b.len() - 8)
    }
}

/// How references are rendered: the number of the row being graded, and the number of
/// the first row a rule id grades.
pub trait Numbering {
    /// The number of the row being graded (`2.4`).
    fn here(&self) -> &str;
    /// The number of the first row graded by rule `id`, if the definition has one.
    fn number_of(&self, id: &str) -> Option<&str>;
}

/// `text` with every reference rendered by `n`. Text without references is borrowed.
/// A malformed reference (no closing character) is written as it stands.
pub fn render<'t>(text: &'t str, n: &dyn Numbering) -> Cow<'t, str> {
    let Some(first) = find(text, OPEN) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len());
    render_from(text, first, n, &mut out);
    Cow::Owned(out)
}

/// [`render`] of `text` into `text` itself: a reference is longer than most numbers it
/// renders to, so the rendering is written into a buffer kept by the thread and copied
/// back into the text's own buffer when it fits there (no allocation), into a string
/// of its length when it does not (a text that is one reference to a sub-verdict of
/// the row, a detail's key, is rendered in its own buffer directly). Text without
/// references is untouched: text without the byte EE is passed over where this is
/// called, most text a detail holds.
#[inline]
pub fn render_in_place(text: &mut String, n: &dyn Numbering) {
    if lead(text.as_bytes()).is_some() {
        render_found(text, n);
    }
}

/// [`render_in_place`] of text holding the byte EE.
#[inline(never)]
fn render_found(text: &mut String, n: &dyn Numbering) {
    /// A larger buffer is not kept for the next text.
    const KEEP: usize = 1 << 16;
    thread_local! {
        static SCRATCH: std::cell::Cell<String> = const { std::cell::Cell::new(String::new()) };
    }
    if let Some(sub) = lone_here(text) {
        // The text is one reference to a sub-verdict of the row (a detail's key, most
        // often): the row's number replaces what opens it, in the text's own buffer when
        // it fits there, with no buffer of the thread's.
        let here = n.here();
        let len = here.len() + sub.len();
        if len <= text.capacity() {
            text.truncate(sub.end);
            text.replace_range(..sub.start, here);
        } else {
            let mut out = String::with_capacity(len);
            out.push_str(here);
            out.push_str(&text[sub]);
            *text = out;
        }
        return;
    }
    let Some(first) = find(text, OPEN) else {
        return;
    };
    SCRATCH.with(|scratch| {
        let mut out = scratch.take();
        out.clear();
        render_from(text, first, n, &mut out);
        if out.len() <= text.capacity() {
            text.clear();
            text.push_str(&out);
        } else {
            *text = String::from(out.as_str());
        }
        if out.capacity() <= KEEP {
            scratch.set(out);
        }
    });
}

/// What opens a reference to a sub-verdict of the row being graded ([`push_here`]).
const HERE_OPEN: [u8; 4] = [0xee, 0x80, 0x80, b'#'];

/// Where the sub-verdict's name is in `text` when `text` is one reference to a
/// sub-verdict of the row ([`here`]) and nothing else, which renders as the row's number
/// followed by that name ([`render_from`] of it).
fn lone_here(text: &str) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let end = b.len().checked_sub(CLOSE_UTF8.len())?;
    let start = HERE_OPEN.len();
    (end >= start
        && b.starts_with(&HERE_OPEN)
        && b[end..] == CLOSE_UTF8
        && lead(&b[start..end]).is_none())
    .then_some(start..end)
}

/// `text`, whose first reference opens at byte `first`, rendered by `n` and appended to
/// `out`.
fn render_from(text: &str, first: usize, n: &dyn Numbering, out: &mut String) {
    let mut rest = text;
    let mut at = Some(first);
    while let Some(i) = at {
        out.push_str(&rest[..i]);
        let after = &rest[i + OPEN.len_utf8()..];
        let Some(j) = find(after, CLOSE) else {
            out.push_str(&rest[i..]);
            return;
        };
        write_ref(&after[..j], n, out);
        rest = &after[j + CLOSE.len_utf8()..];
        at = find(rest, OPEN);
    }
    out.push_str(rest);
}

/// Where `c` (OPEN or CLOSE, both `EE 80 8x` in UTF-8) first occurs in `text`: a search
/// for its first byte, EE, which starts only the characters U+E000-U+EFFF, then a
/// comparison of the bytes after it. `str::find` on a character that is not ASCII
/// searches for its last byte instead (80 or 81 here), a continuation byte that common
/// punctuation (`…`, `—`) holds too. [`lead`] searches a long text many bytes per
/// instruction where the standard library's byte search goes a word at a time.
fn find(text: &str, c: char) -> Option<usize> {
    debug_assert!(('\u{e000}'..='\u{efff}').contains(&c));
    // `c`'s three bytes in UTF-8, the first of them EE.
    let c = u32::from(c);
    let want = [
        0xee,
        0x80 | ((c >> 6) & 0x3f) as u8,
        0x80 | (c & 0x3f) as u8,
    ];
    let b = text.as_bytes();
    let mut from = 0;
    if want == CLOSE_UTF8 {
        // A reference closes a few bytes after it opens: the first bytes are searched a
        // word at a time ([`short_lead`]) before memchr searches the rest.
        let head = &b[..SHORT.min(b.len())];
        match short_lead(head) {
            Some(i) if b[i..].starts_with(&want) => return Some(i),
            Some(i) => from = i + 1,
            None => from = head.len(),
        }
    }
    while let Some(k) = lead(&b[from..]) {
        let i = from + k;
        if b[i..].starts_with(&want) {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// CLOSE in UTF-8.
const CLOSE_UTF8: [u8; 3] = [0xee, 0x80, 0x81];

fn write_ref(inner: &str, n: &dyn Numbering, out: &mut String) {
    // A reference is short: its `#` is found a byte at a time (as `split_once` would,
    // without its search's fixed cost).
    let (id, sub) = match inner.bytes().position(|c| c == b'#') {
        Some(k) => (&inner[..k], &inner[k + 1..]),
        None => (inner, ""),
    };
    if id.is_empty() {
        out.push_str(n.here());
    } else if let Some(num) = n.number_of(id) {
        out.push_str(num);
    } else {
        out.push('[');
        out.push_str(id);
        out.push(']');
        if !sub.is_empty() {
            out.push(' ');
        }
    }
    out.push_str(sub);
}

/// Rendering outside any definition (a rule's unit tests): the row is nameless, so
/// `here("a")` reads `a`, and another rule reads as its id in brackets.
pub struct Local;

impl Numbering for Local {
    fn here(&self) -> &str {
        ""
    }
    fn number_of(&self, _: &str) -> Option<&str> {
        None
    }
}

/// `text` rendered outside any definition ([`Local`]): what a rule's unit test reads.
pub fn local(text: &str) -> String {
    render(text, &Local).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`render_in_place`] writes what [`render`] does, in the text's own buffer when the
    /// rendering fits there, and in a string of its length when a number is longer than
    /// its reference; text without references and malformed references stay as they are.
    #[test]
    fn rendering_in_place_is_render() {
        struct Long;
        impl Numbering for Long {
            fn here(&self) -> &str {
                "a-row-named-at-length"
            }
            fn number_of(&self, id: &str) -> Option<&str> {
                (id == "known").then_some("another-row-named-at-length")
            }
        }
        let texts = [
            String::new(),
            "no reference at all, …".to_string(),
            format!("{}: missing", here("a")),
            format!(
                "see {} and {}; {}",
                rule("known", ""),
                rule("unknown", ""),
                here("")
            ),
            format!(
                "{} then {} {}",
                rule("known", "b"),
                here("c"),
                rule("x", "")
            ),
            format!("cut {}#a and more", OPEN),
            format!("{}{}{}", here("a"), here("b"), here("c")),
            here("a"),
            here(""),
            here("a#b"),
            here("a-longer-name"),
            format!("{}x", here("a")),
            format!("{}{OPEN}{}", here("a"), CLOSE),
            rule("known", "b"),
        ];
        let numberings: [&dyn Numbering; 3] = [&Local, &Long, &v1()];
        for n in numberings {
            for t in &texts {
                let want = render(t, n).into_owned();
                let mut got = t.clone();
                let (buffer, room) = (got.as_ptr(), got.capacity());
                render_in_place(&mut got, n);
                assert_eq!(got, want, "{t:?}");
                if want.len() <= room {
                    assert_eq!(got.as_ptr(), buffer, "{t:?} kept its buffer");
                } else {
                    assert_eq!(got.capacity(), want.len(), "{t:?}");
                }
            }
        }
    }

    /// Grading `metadata-headers` under the built-in definition, which also numbers
    /// `no-token-passthrough` (and nothing else).
    struct V1 {
        here: &'static str,
        other: &'static str,
    }
    impl Numbering for V1 {
        fn here(&self) -> &str {
            self.here
        }
        fn number_of(&self, id: &str) -> Option<&str> {
            (id == "no-token-passthrough").then_some(self.other)
        }
    }

    fn v1() -> V1 {
        let bm = crate::benchmark::Benchmark::builtin();
        let number = |rule| bm.number_of(rule).expect(rule).as_str();
        V1 {
            here: number("metadata-headers"),
            other: number("no-token-passthrough"),
        }
    }

    #[test]
    fn references_render_through_the_numbering() {
        let t = format!(
            "{}: missing; see {} and {}; {}",
            here("a"),
            rule("no-token-passthrough", ""),
            rule("no-token-passthrough", "b"),
            rule("size-limits", "a")
        );
        let V1 { here: row, other } = v1();
        assert_eq!(
            render(&t, &v1()),
            format!("{row}a: missing; see {other} and {other}b; [size-limits] a")
        );
        assert_eq!(
            local(&t),
            "a: missing; see [no-token-passthrough] and [no-token-passthrough] b; [size-limits] a"
        );
        assert_eq!(here!("b"), here("b"));
        assert_eq!(rule_ref!("x", "c"), rule("x", "c"));
        assert_eq!(rule_ref!("x"), rule("x", ""));
        assert!(matches!(render("plain", &v1()), Cow::Borrowed("plain")));
        let broken = format!("tail {OPEN}#a");
        assert_eq!(render(&broken, &v1()), broken);
    }

    /// The word-at-a-time search of a short text finds the first EE where a byte-at-a-time
    /// search does, at every length up to [`SHORT`] and every position, past bytes one
    /// away from EE and bytes that carry a borrow (00, ED, EF).
    #[test]
    fn short_lead_is_position() {
        for len in 0..=SHORT {
            for at in 0..=len {
                for fill in [0x00u8, 0x01, 0x7f, 0x80, 0xed, 0xef, 0xff] {
                    let mut b = vec![fill; len];
                    if at < len {
                        b[at] = 0xee;
                        if at + 1 < len {
                            b[at + 1] = 0xee;
                        }
                    }
                    let want = b.iter().position(|&c| c == 0xee);
                    assert_eq!(short_lead(&b), want, "{b:?}");
                    assert_eq!(lead(&b), want, "{b:?}");
                }
            }
        }
    }

    /// The search for a reference's characters finds what `str::find` finds, at every
    /// position, past text holding their continuation bytes; `has_refs` answers as
    /// `str::contains` does.
    #[test]
    fn find_is_str_find() {
        assert_eq!(CLOSE.to_string().as_bytes(), CLOSE_UTF8);
        let pieces = [
            "a", "…", "—", "\u{e002}", "\u{efff}", "xxxxxxx", "", "\u{3000}",
        ];
        for n in 0..40 {
            for p in pieces {
                for c in [OPEN, CLOSE] {
                    let t = format!("{}{p}{c}{}{OPEN}", "é…".repeat(n % 5), "b".repeat(n));
                    assert_eq!(find(&t, c), t.find(c), "{t:?}");
                    let none = format!("{}{p}", "—".repeat(n));
                    assert_eq!(find(&none, c), None, "{none:?}");
                    assert!(has_refs(&t), "{t:?}");
                    assert!(!has_refs(&none), "{none:?}");
                }
            }
        }
    }
}
