//! The tape is held to `serde_json::Value`: the same documents accepted and refused, the
//! same values read back, the same answers to every read, and the same messages and list
//! pages as the `Value` readings in `derive`.

use proptest::prelude::*;
use serde_json::{json, Value};

use super::*;
use crate::derive;

/// JSON text, with what a `Value` settles: names repeated in an object (some spelled with
/// an escape), numbers of every kind serde_json reads differently (negative zero,
/// exponents, integers past 64 bits, one past `f64`'s range), escapes and
/// non-ASCII text.
fn text() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| serde_json::to_string(&f).unwrap()),
        prop_oneof![
            Just("-0"),
            Just("-0.0"),
            Just("1e400"),
            Just("0.1e-3"),
            Just("1E2"),
            Just("12345678901234567890123"),
            Just("-9223372036854775809"),
            Just("2.5"),
        ]
        .prop_map(String::from),
        "[a-z\\\\\"\u{e9}\u{1F600} ]{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#""\ud83d\ude00 \u00e9 \n \/""#.to_string()),
    ];
    let key = prop_oneof![
        4 => "[abc]{1,2}".prop_map(|k| format!("\"{k}\"")),
        1 => Just("\"\\u0061\"".to_string()),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((key.clone(), inner), 0..7).prop_map(|m| {
                let members: Vec<String> = m.iter().map(|(k, v)| format!("{k} : {v}")).collect();
                format!("{{ {} }}", members.join(",\n"))
            }),
        ]
    })
}

/// `doc` read both ways: the tape's value, and serde_json's.
fn both(doc: &[u8]) -> (Option<Value>, Option<Value>) {
    (
        Tape::parse(doc).ok().map(|t| t.root().to_value()),
        serde_json::from_slice::<Value>(doc).ok(),
    )
}

/// Every read of `j` answers as the same read of `v` does, all the way down.
fn same_reads(j: Json<'_>, v: &Value) {
    assert_eq!(j.is_null(), v.is_null());
    assert_eq!(j.is_boolean(), v.is_boolean());
    assert_eq!(j.is_number(), v.is_number());
    assert_eq!(j.is_string(), v.is_string());
    assert_eq!(j.is_array(), v.is_array());
    assert_eq!(j.is_object(), v.is_object());
    assert_eq!(j.as_bool(), v.as_bool());
    assert_eq!(j.as_str(), v.as_str());
    assert_eq!(j.as_u64(), v.as_u64());
    assert_eq!(j.as_i64(), v.as_i64());
    assert_eq!(
        j.as_f64().map(f64::to_bits),
        v.as_f64().map(f64::to_bits),
        "{v}"
    );
    assert!(j.eq_value(v), "{v}");
    match v {
        Value::Array(xs) => {
            assert_eq!(j.len(), xs.len());
            assert_eq!(j.items().len(), xs.len());
            for (a, b) in j.items().zip(xs) {
                same_reads(a, b);
            }
        }
        Value::Object(m) => {
            assert_eq!(j.len(), m.len());
            let names: Vec<&str> = j.members().map(|(k, _)| k).collect();
            let expected: Vec<&str> = m.keys().map(String::as_str).collect();
            assert_eq!(names, expected, "members in a Value's order");
            for (k, b) in m {
                same_reads(j.get(k).expect("every member is found"), b);
            }
            assert!(j.get("no such member").is_none());
        }
        _ => {
            assert_eq!(j.len(), 0);
            assert!(j.get("a").is_none());
            assert_eq!(j.items().count(), 0);
            assert_eq!(j.members().count(), 0);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_tape_reads_what_serde_json_reads(doc in text()) {
        let (tape, value) = both(doc.as_bytes());
        prop_assert_eq!(&tape, &value);
        // A number past `f64`'s range makes the document one serde_json refuses.
        let Some(value) = value else { return Ok(()) };
        let t = Tape::parse(doc.as_bytes()).unwrap();
        same_reads(t.root(), &value);
        // Its value's tape reads the same again.
        let again = Tape::from_value(&value);
        same_reads(again.root(), &value);
        prop_assert_eq!(again.root().to_value(), value);
    }

    #[test]
    fn a_cut_or_padded_document_is_refused_as_serde_json_refuses_it(
        doc in text(),
        cut in any::<prop::sample::Index>(),
        tail in prop_oneof![Just(""), Just(" "), Just("x"), Just(" ]"), Just("\u{0}"), Just("\n{}")],
    ) {
        let mut b = doc.into_bytes();
        b.truncate(cut.index(b.len() + 1));
        b.extend_from_slice(tail.as_bytes());
        let (tape, value) = both(&b);
        prop_assert_eq!(tape, value);
    }

    #[test]
    fn random_bytes_are_read_as_serde_json_reads_them(b in prop::collection::vec(any::<u8>(), 0..24)) {
        let (tape, value) = both(&b);
        prop_assert_eq!(tape, value);
    }

    #[test]
    fn the_messages_of_a_body_are_derives(
        docs in prop::collection::vec(text(), 1..4),
        batch in any::<bool>(),
    ) {
        let objects: Vec<String> = docs.iter().map(|d| format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{d}}}")).collect();
        let mut all = objects.clone();
        all.extend(docs.iter().cloned());
        let json = if batch { format!("[{}]", all.join(",")) } else { objects[0].clone() };
        let got = messages_in(None, json.as_bytes()).to_values();
        prop_assert_eq!(got, derive::messages_in(None, json.as_bytes()));
        let sse: String = all.iter().map(|d| format!("event: message\ndata: {}\n\n", d.replace('\n', " "))).collect();
        let got = messages_in(Some("text/event-stream"), sse.as_bytes()).to_values();
        prop_assert_eq!(got, derive::messages_in(Some("text/event-stream"), sse.as_bytes()));
    }
}

/// JSON-RPC messages of every shape a head reads: ids of each kind, results (null,
/// objects with arrays, `isError`, versions, `_meta` naming a server or not), errors
/// (objects or not, with or without their members), repeated members.
fn message() -> impl Strategy<Value = String> {
    let any = || text();
    let result = prop_oneof![
        Just("null".to_string()),
        any(),
        (any(), any(), any(), prop::sample::select(vec!["true", "false", "1", "null"])).prop_map(
            |(a, v, p, e)| format!(
                r#"{{"tools": {a}, "isError": {e}, "protocolVersion": {p}, "supportedVersions": [{v}], "x": [], "_meta": {{"io.modelcontextprotocol/serverInfo": {v}}}, "tools": [{a}, 1]}}"#
            )
        ),
    ];
    let error = prop_oneof![
        any(),
        (any(), any()).prop_map(|(m, d)| format!(
            r#"{{"code": -32601, "message": {m}, "data": {d}, "code": {d}}}"#
        )),
    ];
    (any(), result, error, 0u8..4).prop_map(|(id, r, e, shape)| match shape {
        0 => format!(r#"{{"jsonrpc": "2.0", "id": {id}, "result": {r}}}"#),
        1 => format!(r#"{{"jsonrpc": "2.0", "id": {id}, "error": {e}}}"#),
        2 => format!(r#"{{"id": {id}, "result": {r}, "error": {e}, "id": 3}}"#),
        _ => format!(r#"{{"method": "notifications/message", "params": {r}}}"#),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_head_of_a_message_is_derives(doc in message()) {
        let Ok(t) = Tape::parse(doc.as_bytes()) else { return Ok(()) };
        let v: Value = serde_json::from_str(&doc).expect("the tape and serde_json agree");
        prop_assert_eq!(head_of(t.root()), derive::MessageHead::of(&v));
    }
}

#[test]
fn a_repeated_name_keeps_its_first_place_and_its_last_value() {
    let doc = br#"{"b": 1, "a": 2, "b": {"x": [3]}, "c": null, "a": "last"}"#;
    let t = Tape::parse(doc).unwrap();
    let v: Value = serde_json::from_slice(doc).unwrap();
    let names: Vec<&str> = t.root().members().map(|(k, _)| k).collect();
    assert_eq!(names, ["b", "a", "c"]);
    assert_eq!(t.root().get("a").and_then(Json::as_str), Some("last"));
    assert_eq!(t.root().get("b").unwrap().to_value(), json!({"x": [3]}));
    assert_eq!(t.root().len(), 3);
    assert_eq!(t.root().to_value(), v);
    same_reads(t.root(), &v);
    // Nested objects that repeat names settle each on its own.
    let doc = br#"[{"k": 1, "k": 2}, {"k": {"j": 1, "j": 2, "i": 0}, "k": {"j": 3, "j": 4}}]"#;
    let t = Tape::parse(doc).unwrap();
    let v: Value = serde_json::from_slice(doc).unwrap();
    same_reads(t.root(), &v);
    // Many names (the sorted search) with one repeated at the end.
    let mut members: Vec<String> = (0..40).map(|i| format!("\"n{i}\": {i}")).collect();
    members.push("\"n3\": \"again\"".into());
    let doc = format!("{{{}}}", members.join(","));
    let t = Tape::parse(doc.as_bytes()).unwrap();
    let v: Value = serde_json::from_str(&doc).unwrap();
    same_reads(t.root(), &v);
    assert_eq!(t.root().get("n3").and_then(Json::as_str), Some("again"));
}

#[test]
fn nesting_is_refused_where_serde_json_refuses_it() {
    for depth in [1, 64, 126, 127, 128, 129, 300] {
        for (open, close) in [("[", "]"), ("{\"a\":", "}")] {
            let doc = format!("{}1{}", open.repeat(depth), close.repeat(depth));
            let (tape, value) = both(doc.as_bytes());
            assert_eq!(tape, value, "depth {depth} of {open}");
        }
    }
}

#[test]
fn hostile_strings_and_numbers_are_read_as_serde_json_reads_them() {
    for doc in [
        r#""\ud800""#,
        r#""\udc00\ud800""#,
        r#""\ud83d\ude00""#,
        r#""\u0000""#,
        "\"\u{7f}\"",
        "\"a\tb\"",
        r#""\x""#,
        "1e400",
        "-1e400",
        "-0",
        "1.7976931348623157e308",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775808",
        "01",
        "1.",
        ".5",
        "NaN",
        "[1,]",
        "{\"a\":1,}",
        "{\"a\" 1}",
        "",
        "   ",
        "\u{feff}{}",
    ] {
        let (tape, value) = both(doc.as_bytes());
        assert_eq!(tape, value, "{doc:?}");
    }
    let (tape, value) = both(b"\"\xff\"");
    assert_eq!(tape, value);
    assert!(tape.is_none());
}

#[test]
fn a_list_page_is_read_as_derive_reads_it() {
    let page =
        |id: &str, result: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    let cases = [
        (page("1", r#"{"tools":[{"name":"a"}]}"#), json!(1)),
        (page("1", r#"{"tools":[],"nextCursor":"c"}"#), json!(1)),
        (page("1", r#"{"tools":[],"nextCursor":7}"#), json!(1)),
        (page("\"x\"", r#"{"tools":[]}"#), json!("x")),
        (page("1", r#"{"tools":[]}"#), json!(2)),
        (page("1.0", r#"{"tools":[]}"#), json!(1)),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601}}"#.to_string(),
            json!(1),
        ),
        (
            format!(
                "[{},{}]",
                r#"{"jsonrpc":"2.0","method":"notifications/message"}"#,
                page("3", r#"{"tools":[{"name":"b"}],"nextCursor":"n"}"#)
            ),
            json!(3),
        ),
        (r#"{"id":1,"result":{},"id":2}"#.to_string(), json!(2)),
        (r#"{"id":1,"result":{},"id":2}"#.to_string(), json!(1)),
        (
            r#"{"id":{"a":1,"b":2},"result":{}}"#.to_string(),
            json!({"b":2,"a":1}),
        ),
    ];
    for (body, id) in cases {
        let msgs = messages_in(None, body.as_bytes());
        let values = derive::messages_in(None, body.as_bytes());
        assert_eq!(
            list_page(&msgs, &id),
            derive::list_page(&values, &id),
            "{body} for {id}"
        );
        assert_eq!(
            msgs.iter().position(|m| answers(m, &id)),
            values
                .iter()
                .position(|m| derive::response_to(&values, &id) == Some(m)),
            "{body}"
        );
    }
}

#[test]
fn the_answer_messages_of_a_response_are_derives() {
    use crate::derive::StreamAnswer;
    use crate::model::{Body, BodyEnd, Header, HttpResponse};
    let page = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}"#;
    let note = r#"{"jsonrpc":"2.0","method":"notifications/message","params":{}}"#;
    let response = |media: &'static str, body: String, end: BodyEnd| HttpResponse {
        version: "HTTP/1.1".into(),
        status: 200,
        reason: "OK".into(),
        headers: vec![Header {
            name: "Content-Type".into(),
            value: media.as_bytes().into(),
        }],
        body: Body {
            length: body.len() as u64,
            bytes: body.into_bytes(),
            sha256: Vec::new(),
            end,
        },
        interim: 0,
    };
    let sse = format!("event: message\ndata: {note}\n\nevent: message\ndata: {page}\n\n");
    let stream = StreamAnswer {
        messages: vec![serde_json::from_str(page).unwrap(), json!(7)],
        ..StreamAnswer::default()
    };
    for resp in [
        response("application/json", page.to_string(), BodyEnd::Complete),
        response(
            "application/json; charset=utf-8",
            format!("[{note},{page}]"),
            BodyEnd::Complete,
        ),
        response(
            "Text/Event-Stream",
            sse.clone(),
            BodyEnd::StoppedAfterResponse,
        ),
        response("text/event-stream", sse, BodyEnd::LimitReached),
        response("application/json", page.to_string(), BodyEnd::HeadOnly),
    ] {
        for s in [None, Some(&stream)] {
            assert_eq!(
                answer_messages(&resp, s).to_values(),
                derive::answer_messages(&resp, s),
                "{:?} {:?}",
                resp.headers[0].value,
                resp.body.end
            );
        }
    }
}
