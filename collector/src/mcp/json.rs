//! The bytes of a JSON-RPC body: exactly what `serde_json::to_vec` writes for the same
//! value (compact, object keys in insertion order, the same escapes), written faster.
//!
//! Why not `serde_json::to_vec`: it looks at every byte of a string through its escape
//! table, and grows its buffer by doubling. The 10.2a padded request (`legs/c10_limits.rs`)
//! carries a string of `max_request_bytes` (1 MiB by default) in every target's run, so
//! that cost, and the page faults of the buffers it outgrows, were a large share of the
//! collector's own CPU per target (docs/performance.md, "A fleet of 1,000 endpoints").
//! Here a string is checked 32 bytes at a time and copied in runs, into a buffer reserved
//! for it. Numbers are still written by serde_json, so they are the same digits.

use serde_json::Value;

/// `v` as compact JSON, byte for byte `serde_json::to_vec(v)`.
pub(crate) fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    write_value(&mut out, v, None);
    out
}

/// The byte a pad is made of ([`to_vec_padded`]): one JSON writes as it is.
pub(crate) const PAD_BYTE: u8 = b'X';

/// A string of `len` [`PAD_BYTE`]s.
pub(crate) fn pad(len: usize) -> String {
    String::from(char::from(PAD_BYTE)).repeat(len)
}

/// `v` as compact JSON with the value at `slot` (a value inside `v`, by address) written
/// as the string [`pad`]`(len)`: byte for byte `serde_json::to_vec` of `v` with that
/// string in the slot, without the string being built first (the 10.2a padded request,
/// 1 MiB by default, is then written once, not built, scanned and copied).
pub(crate) fn to_vec_padded(v: &Value, slot: &Value, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + len);
    write_value(&mut out, v, Some((slot, len)));
    out
}

fn write_value(out: &mut Vec<u8>, v: &Value, pad: Option<(&Value, usize)>) {
    if let Some((slot, len)) = pad {
        if std::ptr::eq(v, slot) {
            out.push(b'"');
            out.resize(out.len() + len, PAD_BYTE);
            out.push(b'"');
            return;
        }
    }
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        // Writing into a Vec cannot fail.
        Value::Number(n) => {
            let _ = serde_json::to_writer(&mut *out, n);
        }
        Value::String(s) => write_str(out, s),
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, x, pad);
            }
            out.push(b']');
        }
        Value::Object(m) => {
            out.push(b'{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, k);
                out.push(b':');
                write_value(out, x, pad);
            }
            out.push(b'}');
        }
    }
}

/// True for the bytes JSON must escape in a string (serde_json escapes exactly these).
fn escaped(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// Bytes checked at once for an escape (a loop the compiler vectorises).
const BLOCK: usize = 32;

fn write_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut run = 0; // start of the bytes not written yet
    let mut i = 0;
    while i < b.len() {
        if i + BLOCK <= b.len() && !b[i..i + BLOCK].iter().fold(false, |a, c| a | escaped(*c)) {
            i += BLOCK;
            continue;
        }
        if escaped(b[i]) {
            out.extend_from_slice(&b[run..i]);
            escape(out, b[i]);
            run = i + 1;
        }
        i += 1;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// serde_json's escape of `b`: the short forms, else `\u00XX` in lower-case hex.
fn escape(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match b {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0c => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(b >> 4)],
            HEX[usize::from(b & 0xf)],
        ]),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn same(v: &Value) {
        assert_eq!(
            String::from_utf8_lossy(&to_vec(v)),
            String::from_utf8_lossy(&serde_json::to_vec(v).unwrap()),
        );
    }

    #[test]
    fn every_escape_is_the_one_serde_json_writes() {
        // Every byte below 0x80 alone, and at each position of a block and across the
        // edge between two blocks.
        for c in 0u8..0x80 {
            let ch = char::from(c);
            same(&json!(ch.to_string()));
            for at in [0, 1, 30, 31, 32, 33, 63, 64, 65] {
                let mut s = "x".repeat(70);
                s.insert(at, ch);
                same(&json!(s));
                same(&json!({ s.clone(): s }));
            }
        }
        same(&json!("é ü \u{2028} \u{7f} 😀 \"\\/"));
        same(&json!("a\u{0}b\u{1f}c\u{1b}[31m"));
    }

    #[test]
    fn values_of_every_kind_are_written_as_serde_json_writes_them() {
        same(&json!(null));
        same(&json!({}));
        same(&json!([]));
        same(
            &json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {
            "_meta": {"progressToken": -1}, "cursor": null, "ok": true, "no": false,
            "n": [0, -0.0, 1.5, -2.25e-10, 1e300, u64::MAX, i64::MIN, 0.1],
            "nested": [[{"a": [{}]}], [], "s"]}}),
        );
        // Keys keep their insertion order (serde_json's preserve_order).
        let mut m = serde_json::Map::new();
        for k in ["z", "a", "m", "\"q\"", "é"] {
            m.insert(k.into(), json!(k));
        }
        same(&Value::Object(m));
    }

    #[test]
    fn a_pad_is_written_as_the_string_in_its_place() {
        assert!(!escaped(PAD_BYTE) && PAD_BYTE.is_ascii());
        for len in [0, 1, 31, 32, 33, (1 << 20) + 1] {
            for meta in [false, true] {
                let mut v =
                    json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {}});
                if meta {
                    v["params"]["_meta"] = json!({"progressToken": "p\"1"});
                }
                v["params"]["pad"] = Value::String(String::new());
                let padded = to_vec_padded(&v, &v["params"]["pad"], len);
                v["params"]["pad"] = Value::String(pad(len));
                assert_eq!(padded, serde_json::to_vec(&v).unwrap(), "{len} {meta}");
            }
        }
        // An equal value elsewhere is not the slot.
        let v = json!({"a": "", "b": ""});
        assert_eq!(to_vec_padded(&v, &v["b"], 2), br#"{"a":"","b":"XX"}"#);
    }

    #[test]
    fn a_long_string_is_written_whole() {
        let pad = "X".repeat((1 << 20) + 1);
        let v = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"pad": pad}});
        same(&v);
        let mut mixed = "ab\"c\\d\n".repeat(40_000);
        mixed.push_str(&"y".repeat(100));
        same(&json!(mixed));
    }
}
