//! Evidence wording shared by the rules that read server declarations
//! (`tool-schemas-validated`, `resource-templates-typed`, `prompt-arguments-validated`):
//! names quoted safely, JSON values shown short, lists capped, string fields read
//! strictly. Names and values come from the server, so they are escaped and truncated
//! before they reach a report (a hostile tool name must not be able to forge report lines
//! or flood them).

use mcp_probe_schema::tape::Json;
use serde_json::Value;

/// Separator between entries of a list inside one leg note (legs are joined by `; `).
pub const SEP: &str = " | ";
/// Names shown in full before "and N more".
pub const LIST_CAP: usize = 5;
/// Characters of a server-supplied name or value kept in evidence.
const SHOWN_CHARS: usize = 60;
/// Characters of a validator's reason kept in evidence.
const REASON_CHARS: usize = 160;

/// `s` cut to `max` characters, with `…` when something was cut.
pub fn truncate(s: &str, max: usize) -> String {
    // Where the character after the first `max` starts, if there is one: one scan, and
    // the kept part copied as it is.
    match s.char_indices().nth(max) {
        Some((at, _)) => {
            let mut out = String::with_capacity(at + '…'.len_utf8());
            out.push_str(&s[..at]);
            out.push('…');
            out
        }
        None => s.to_string(),
    }
}

/// A server-supplied name in backticks, control characters escaped, truncated: the
/// escaped name (a backtick with a backslash before it, a control character as
/// [`char::escape_default`] writes it)
/// cut to `SHOWN_CHARS` characters as [`truncate`] cuts it. Written into one string,
/// a character at a time.
pub fn quote(name: &str) -> String {
    let mut out = String::with_capacity(name.len().min(4 * SHOWN_CHARS) + 8);
    out.push('`');
    // Characters of the escaped name kept so far, and whether one was left out.
    let mut kept = 0;
    let mut cut = false;
    let mut keep = |out: &mut String, c: char| {
        if kept < SHOWN_CHARS {
            out.push(c);
            kept += 1;
            true
        } else {
            cut = true;
            false
        }
    };
    for c in name.chars() {
        let more = match c {
            '`' => keep(&mut out, '\\') && keep(&mut out, '`'),
            c if c.is_control() => c.escape_default().all(|e| keep(&mut out, e)),
            c => keep(&mut out, c),
        };
        if !more {
            break;
        }
    }
    if cut {
        out.push('…');
    }
    out.push('`');
    out
}

/// A JSON value as compact JSON text, truncated.
pub fn show(v: &Value) -> String {
    truncate(&v.to_string(), SHOWN_CHARS)
}

/// A validator's reason: its first line, truncated.
pub fn reason(s: &str) -> String {
    truncate(s.lines().next().unwrap_or("").trim(), REASON_CHARS)
}

/// A value of a list page shown short ([`show`]).
pub fn show_json(v: Json<'_>) -> String {
    show(&v.to_value())
}

/// What kind of JSON value `v` is, with its article.
pub fn kind(v: Json<'_>) -> &'static str {
    if v.is_null() {
        "null"
    } else if v.is_boolean() {
        "a boolean"
    } else if v.is_number() {
        "a number"
    } else if v.is_string() {
        "a string"
    } else if v.is_array() {
        "an array"
    } else {
        "an object"
    }
}

/// `1 tool`, `2 tools`.
pub fn count(n: usize, noun: &str) -> String {
    let mut s = String::with_capacity(noun.len() + 8);
    push_count(&mut s, n, noun);
    s
}

/// [`count`] written at the end of `out`.
pub fn push_count(out: &mut String, n: usize, noun: &str) {
    out.push_str(itoa::Buffer::new().format(n));
    out.push(' ');
    out.push_str(noun);
    if n != 1 {
        out.push('s');
    }
}

/// The first [`LIST_CAP`] entries joined with `sep`, then `and N more`.
pub fn capped(entries: &[String], sep: &str) -> String {
    let shown: Vec<&str> = entries.iter().take(LIST_CAP).map(String::as_str).collect();
    let mut out = shown.join(sep);
    if entries.len() > LIST_CAP {
        out.push_str(&crate::format_exact!(
            "{sep}and {} more",
            entries.len() - LIST_CAP
        ));
    }
    out
}

/// Why a declaration's string field is not a non-blank string ([`non_blank`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotNonBlank {
    /// The field is absent.
    #[error("declares no {key}")]
    Missing {
        /// The field.
        key: &'static str,
    },
    /// The field is a blank string (shown).
    #[error("{key} is blank ({value})")]
    Blank {
        /// The field.
        key: &'static str,
        /// The value as the evidence shows it.
        value: String,
    },
    /// The field is JSON null.
    #[error("{key} is null")]
    Null {
        /// The field.
        key: &'static str,
    },
    /// The field is another JSON type.
    #[error("{key} is {kind} ({value}), not a string")]
    NotAString {
        /// The field.
        key: &'static str,
        /// The JSON type it has.
        kind: &'static str,
        /// The value as the evidence shows it.
        value: String,
    },
}

/// A string field of a declaration, strictly: `Ok` when it is a non-blank string,
/// else why not (missing, null, another JSON type, blank).
pub fn non_blank<'a>(item: Json<'a>, key: &'static str) -> Result<&'a str, NotNonBlank> {
    let Some(v) = item.get(key) else {
        return Err(NotNonBlank::Missing { key });
    };
    match v.as_str() {
        Some(s) if s.trim().is_empty() => Err(NotNonBlank::Blank {
            key,
            value: show_json(v),
        }),
        Some(s) => Ok(s),
        None if v.is_null() => Err(NotNonBlank::Null { key }),
        None => Err(NotNonBlank::NotAString {
            key,
            kind: kind(v),
            value: show_json(v),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn count_is_written_as_formatted() {
        for n in [0, 1, 2, 10, usize::MAX] {
            for noun in ["tool", "page", ""] {
                let formatted = if n == 1 {
                    format!("1 {noun}")
                } else {
                    format!("{n} {noun}s")
                };
                assert_eq!(count(n, noun), formatted);
            }
        }
    }

    /// `quote` as it was first written: the escaped name as a string, then cut.
    fn quote_by_steps(name: &str) -> String {
        let escaped: String = name
            .chars()
            .flat_map(|c| -> Vec<char> {
                match c {
                    '`' => vec!['\\', '`'],
                    c if c.is_control() => c.escape_default().collect(),
                    c => vec![c],
                }
            })
            .collect();
        let mut cut: String = escaped.chars().take(SHOWN_CHARS).collect();
        if escaped.chars().nth(SHOWN_CHARS).is_some() {
            cut.push('…');
        }
        format!("`{cut}`")
    }

    #[test]
    fn names_are_quoted_and_cut_as_by_steps() {
        // Characters of every width and kind, escaped or not, at every length around the
        // cut: alone, repeated, and in pseudo-random mixtures (a fixed sequence).
        let special = [
            "a", "`", "\n", "\t", "\u{1}", "\u{7f}", "\u{9b}", "é", "😀", "\u{202e}", "\\", "…",
        ];
        for c in special {
            for n in 0..(SHOWN_CHARS + 4) {
                let name = c.repeat(n);
                assert_eq!(quote(&name), quote_by_steps(&name), "{name:?}");
                let name = format!("{}{c}", "x".repeat(n));
                assert_eq!(quote(&name), quote_by_steps(&name), "{name:?}");
                let cut = truncate(&name, n.min(SHOWN_CHARS));
                let by_steps: String = {
                    let mut t: String = name.chars().take(n.min(SHOWN_CHARS)).collect();
                    if name.chars().nth(n.min(SHOWN_CHARS)).is_some() {
                        t.push('…');
                    }
                    t
                };
                assert_eq!(cut, by_steps, "{name:?}");
            }
        }
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let name: String = (0..(x % 90))
                .map(|k| special[((x >> (k % 53)) as usize ^ k as usize) % special.len()])
                .collect();
            assert_eq!(quote(&name), quote_by_steps(&name), "{name:?}");
        }
    }

    #[test]
    fn names_are_escaped_and_cut() {
        assert_eq!(quote("add"), "`add`");
        assert_eq!(quote("a\nb`c"), "`a\\nb\\`c`");
        let long = "x".repeat(100);
        assert!(quote(&long).ends_with("…`"));
        assert_eq!(show(&json!("yes")), "\"yes\"");
    }

    #[test]
    fn lists_are_capped() {
        let v: Vec<String> = (0..8).map(|i| i.to_string()).collect();
        assert_eq!(capped(&v, ", "), "0, 1, 2, 3, 4, and 3 more");
        assert_eq!(capped(&v[..2], ", "), "0, 1");
        assert_eq!(count(1, "tool"), "1 tool");
        assert_eq!(count(0, "tool"), "0 tools");
    }

    #[test]
    fn non_blank_names_what_is_wrong() {
        let t = mcp_probe_schema::tape::Tape::from_value(
            &json!({"a": "  ", "b": null, "c": 7, "d": "x"}),
        );
        let v = t.root();
        assert_eq!(non_blank(v, "d"), Ok("x"));
        let why = |key| non_blank(v, key).expect_err("not a non-blank string");
        assert_eq!(why("z").to_string(), "declares no z");
        assert_eq!(why("a").to_string(), "a is blank (\"  \")");
        assert_eq!(why("b"), NotNonBlank::Null { key: "b" });
        assert_eq!(why("b").to_string(), "b is null");
        assert_eq!(why("c").to_string(), "c is a number (7), not a string");
    }
}
