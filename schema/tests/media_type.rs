//! `derive::media_type_is` answers as comparing `derive::media_type` with the essence did.

use mcp_probe_schema::derive::{media_type, media_type_is};
use mcp_probe_schema::model::Header;

#[test]
fn media_type_is_compares_as_the_built_string_did() {
    let values: &[&[u8]] = &[
        b"text/event-stream",
        b"Text/Event-Stream; charset=utf-8",
        b"  text/event-stream  ;x=y",
        b"\xc2\xa0text/event-stream",
        b"text/event-stream\xff",
        b"\xfftext/event-stream",
        b"application/json",
        b"APPLICATION/JSON",
        b"",
        b";text/event-stream",
        b"text/event-streams",
        b"text/event-stream\t",
        b"\x0btext/event-stream\x0c\r\n",
        b"\x1ftext/event-stream",
        b"text/event-stream\x85",
        "text/event-stream\u{85}".as_bytes(),
        "TEXT/EVENT-STREAM\u{3000}".as_bytes(),
    ];
    let essences = ["text/event-stream", "application/json", ""];
    for v in values {
        for name in ["Content-Type", "content-type", "X-Other"] {
            let headers = vec![
                Header {
                    name: "X-First".into(),
                    value: b"text/plain".to_vec().into(),
                },
                Header {
                    name: name.into(),
                    value: v.to_vec().into(),
                },
            ];
            for e in essences {
                assert_eq!(
                    media_type_is(&headers, e),
                    media_type(&headers).as_deref() == Some(e),
                    "{name}: {:?} against {e:?}",
                    String::from_utf8_lossy(v)
                );
            }
        }
    }
    assert!(!media_type_is(&[], "text/event-stream"));
}
