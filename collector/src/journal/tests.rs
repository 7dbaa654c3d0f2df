//! Unit tests of the journal: redaction at the boundary, the file format, recovery.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use mcp_probe_schema::testkit;

fn options() -> Options {
    testkit::evidence("https://mcp.example/mcp", Vec::new())
        .run
        .options
}

fn target() -> Target {
    testkit::evidence("https://mcp.example/mcp", Vec::new()).target
}

fn page(n: usize) -> Observation {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"tools":[],"pad":"{}"}}}}"#,
        "x".repeat(n)
    );
    testkit::http_record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        "https://mcp.example/mcp",
        "{}",
        200,
        body.as_bytes(),
    )
    .observation
}

#[test]
fn records_stream_to_the_file_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    for _ in 0..5 {
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            2,
            page(100),
        );
    }
    j.skip(&[LegId::new("x")], "not sent");
    assert_eq!(j.len(), 6);
    let recs = j.records();
    assert_eq!(recs.len(), 6);
    assert_eq!(recs[5].seq, 5);
    assert!(j.find_record(|r| r.legs == ["x"]).is_some());
    let size = std::fs::metadata(j.journal_path()).unwrap().len();
    assert!(size > 5 * 100, "{size}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(j.journal_path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let key = SecretKey::from_seed([1; 32]);
    let p = j.seal(RunStatus::Complete, &key).unwrap();
    let v = mcp_probe_schema::open(&std::fs::read(p).unwrap(), &[key.public()]).unwrap();
    assert_eq!(v.records.len(), 6);
    assert_eq!(v.evidence.run.options.bundle_cap, Some(DEFAULT_BUNDLE_CAP));
    assert!(!j.journal_path().exists());
}

const SECRET: &str = "tok-0123456789abcdef0123456789";

#[test]
fn a_record_that_still_leaks_is_withheld_not_signed() {
    let mut red = Redactor::new();
    red.add_secret(SECRET.as_bytes(), "bearer-token");
    let mut rec = Record {
        seq: 3,
        legs: vec!["inventory.tools".into()],
        started_at: 1,
        duration_us: 2,
        prev: vec![0; 32],
        observation: Observation::Skipped {
            reason: format!("cursor {SECRET} repeated"),
        },
        redactions: Vec::new(),
    };
    // Unredacted on purpose: the backstop must catch what redaction missed.
    let bytes = fail_closed(&red, &mut rec);
    assert!(!String::from_utf8_lossy(&bytes).contains(SECRET));
    assert!(!red.leaks(&bytes));
    let back = mcp_probe_schema::bundle::decode_record(&bytes).unwrap();
    assert_eq!(
        (back.seq, back.legs.clone()),
        (3, vec!["inventory.tools".to_string()])
    );
    let Observation::Skipped { reason } = back.observation else {
        panic!("{back:?}")
    };
    assert!(reason.starts_with("withheld:"), "{reason}");
    // A clean record passes unchanged.
    let mut clean = rec.clone();
    clean.observation = Observation::Skipped {
        reason: "fine".into(),
    };
    let b = fail_closed(&red, &mut clean);
    assert_eq!(b, encode_record(&clean));
}

#[test]
fn leaking_leaves_of_the_run_header_are_withheld() {
    let mut red = Redactor::new();
    red.add_secret(SECRET.as_bytes(), "bearer-token");
    let mut ev = testkit::evidence("https://mcp.example/mcp", Vec::new());
    ev.run.failure = Some(format!("error: {SECRET}"));
    ev.run.inputs = Some(serde_json::json!({"k": SECRET, "n": 3}));
    let out = red.withhold_serde(&ev, WITHHELD).unwrap();
    assert_eq!(out.run.failure.as_deref(), Some(WITHHELD));
    assert_eq!(
        out.run.inputs,
        Some(serde_json::json!({"k": WITHHELD, "n": 3}))
    );
    assert_eq!(out.target, ev.target);
    assert!(!red.leaks(&encode(&out)));
}

#[test]
fn past_the_bundle_cap_bodies_are_length_and_hash_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = options();
    o.bundle_cap = Some(10_000);
    let mut j = Journal::create(dir.path(), "t", target(), o, Redactor::new()).unwrap();
    for _ in 0..20 {
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            2,
            page(1000),
        );
    }
    let from = j.bundle_capped_from().expect("capped");
    assert!((5..15).contains(&from), "{from}");
    let key = SecretKey::from_seed([1; 32]);
    let p = j.seal(RunStatus::Complete, &key).unwrap();
    let bytes = std::fs::read(p).unwrap();
    assert!(bytes.len() < 20_000, "{}", bytes.len());
    let v = mcp_probe_schema::open(&bytes, &[key.public()]).unwrap();
    assert_eq!(v.evidence.run.bundle_capped_from, Some(from));
    for r in &v.records {
        let Observation::Http(x) = &r.observation else {
            panic!()
        };
        let HttpOutcome::Response(resp) = &x.outcome else {
            panic!()
        };
        assert_eq!(
            resp.body.bytes.is_empty(),
            r.seq >= from,
            "record {}",
            r.seq
        );
        assert!(resp.body.length > 1000);
        assert_eq!(resp.body.sha256.len(), 32);
    }
}

/// The label `client-secret` a record's redactions carry is a suffix of the
/// secret `test-client-secret`; the record is kept, not withheld.
#[test]
fn a_label_sharing_a_piece_with_the_secret_does_not_withhold_the_record() {
    let secret = "test-client-secret";
    let mut red = Redactor::new();
    red.add_public(b"test-client-id");
    red.add_secret(secret.as_bytes(), "client-secret");
    let mut rec = Record {
        seq: 1,
        legs: vec!["oauth.register".into()],
        started_at: 1,
        duration_us: 2,
        prev: vec![0; 32],
        observation: Observation::Skipped {
            reason: format!("registered test-client-id with {secret}"),
        },
        redactions: Vec::new(),
    };
    red.redact_and_learn(&mut rec);
    assert!(rec.redactions.iter().any(|r| r.what == "client-secret"));
    let bytes = fail_closed(&red, &mut rec);
    let back = mcp_probe_schema::bundle::decode_record(&bytes).unwrap();
    let Observation::Skipped { reason } = back.observation else {
        panic!("{back:?}")
    };
    assert!(
        reason.starts_with("registered test-client-id with redacted:sha256:"),
        "{reason}"
    );
}

/// The sync marks of a journal file: (records covered, byte offset just past the mark).
fn sync_marks(path: &Path) -> Vec<(u64, u64)> {
    let mut r = Counting {
        inner: BufReader::new(std::fs::File::open(path).unwrap()),
        pos: 0,
    };
    let mut marks = Vec::new();
    while let Ok(Some(item)) = read_item(&mut r) {
        if let Item::Meta(b) = item {
            if let Ok(Update::Synced(n)) = ciborium::from_reader::<Update, _>(b.as_slice()) {
                marks.push((n, r.pos));
            }
        }
    }
    marks
}

#[test]
fn a_sync_is_marked_every_64_records_and_every_256_kib() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    for _ in 0..200 {
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            2,
            page(100),
        );
    }
    let counts: Vec<u64> = sync_marks(j.journal_path()).iter().map(|m| m.0).collect();
    assert_eq!(counts, [64, 128, 192]);
    // Large records reach the byte bound first: 100,000-byte bodies, a mark every third.
    let mut j = Journal::create(dir.path(), "u", target(), options(), Redactor::new()).unwrap();
    for _ in 0..7 {
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            2,
            page(100_000),
        );
    }
    let counts: Vec<u64> = sync_marks(j.journal_path()).iter().map(|m| m.0).collect();
    assert_eq!(counts, [3, 6]);
}

#[test]
fn after_a_power_loss_the_records_up_to_the_last_sync_are_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    j.set_failure("still running");
    for _ in 0..150 {
        j.record(
            &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
            1,
            2,
            page(500),
        );
    }
    let path = j.journal_path().to_path_buf();
    let marks = sync_marks(&path);
    assert_eq!(marks.iter().map(|m| m.0).collect::<Vec<_>>(), [64, 128]);
    let (_, end) = marks[1];
    // Killed: never sealed. What a power loss leaves: the file as of the last sync, then
    // part of the next record (the page cache wrote some of it back, not all).
    drop(j);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..end as usize + 40]).unwrap();
    let key = SecretKey::from_seed([1; 32]);
    let r = recover(&path, &key).unwrap();
    assert_eq!((r.records, r.dropped, r.synced), (128, 1, Some(128)));
    assert_eq!(r.torn_at, Some(end));
    let v = mcp_probe_schema::open(&std::fs::read(&r.bundle).unwrap(), &[key.public()]).unwrap();
    assert_eq!(v.evidence.run.status, RunStatus::Recovered);
    assert_eq!(v.records.len(), 128);
    let failure = v.evidence.run.failure.unwrap_or_default();
    assert!(
        failure.contains(&format!(
            "128 record(s) kept; 1 record(s) dropped past a torn or damaged write at byte {end}"
        )) && failure.ends_with("the journal's last sync mark covers 128 record(s)"),
        "{failure}"
    );
}

#[test]
fn a_write_is_synced_within_the_interval_without_a_mark() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    j.record(
        &[mcp_probe_schema::vocab::leg::INVENTORY_TOOLS],
        1,
        2,
        page(100),
    );
    let state = j.file.clone().unwrap();
    let deadline = std::time::Instant::now() + SYNC_INTERVAL * 5;
    while !state.is_synced() {
        assert!(std::time::Instant::now() < deadline, "not synced in time");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(sync_marks(j.journal_path()).is_empty());
}

#[test]
fn layout_2_and_3_journals_are_still_recovered() {
    for older in [2u8, 3] {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
        let path = j.journal_path().to_path_buf();
        drop(j);
        let mut bytes = std::fs::read(&path).unwrap();
        // The header is the first item; its `journal` field is the map's first entry.
        let current = [b"journal".as_slice(), &[JOURNAL_VERSION as u8]].concat();
        let at = bytes
            .windows(8)
            .position(|w| w == current.as_slice())
            .expect("the version in the header");
        bytes[at + 7] = older;
        std::fs::write(&path, &bytes).unwrap();
        let r = recover(&path, &SecretKey::from_seed([1; 32])).unwrap();
        assert_eq!((r.records, r.synced), (0, None), "layout {older}");
    }
}

#[test]
fn minted_token_facts_are_recovered_from_the_journal() {
    use mcp_probe_schema::model::{MintedToken, TokenFacts};
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    j.add_secret(b"minted-token-0123456789", "access-token");
    let facts = MintedToken {
        leg: mcp_probe_schema::vocab::leg::FOREIGN_MINT.to_string(),
        seq: Some(0),
        requested_resource: Some("https://cis-probe.invalid/wrong-audience".into()),
        login_resource: Some("http://127.0.0.1:1/mcp".into()),
        token: TokenFacts {
            source: "oauth-grant".into(),
            fingerprint: mcp_probe_schema::bundle::fingerprint(b"minted-token-0123456789"),
            jwt_header: None,
            jwt_claims: None,
            expires_in: Some(600),
            scope: None,
            token_type: Some("Bearer".into()),
        },
    };
    j.push_minted(facts.clone());
    let path = j.journal_path().to_path_buf();
    drop(j);
    let r = recover(&path, &SecretKey::from_seed([1; 32])).unwrap();
    let v = mcp_probe_schema::open(&std::fs::read(&r.bundle).unwrap(), &[]).unwrap();
    assert_eq!(v.evidence.minted_tokens, vec![facts]);
    assert!(v.evidence.tokens.is_empty());
}

#[test]
fn records_are_filtered_by_their_legs_without_decoding_the_others() {
    use mcp_probe_schema::vocab::leg;
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::create(dir.path(), "t", target(), options(), Redactor::new()).unwrap();
    j.record(&[leg::INVENTORY_TOOLS], 1, 2, page(10));
    j.skip(&[leg::PADDED, leg::INVENTORY_PROMPTS], "not sent: a reason");
    j.record(&[leg::INVENTORY_TOOLS], 3, 4, page(300));
    // The legs read from the bytes are the legs decoded, for every record.
    j.file_records()
        .each(&mut |b| {
            let decoded = mcp_probe_schema::bundle::decode_record(b).unwrap();
            assert_eq!(peek_legs(b).unwrap(), decoded.legs);
            Ok(())
        })
        .unwrap();
    let (mut asked, mut got) = (0, Vec::new());
    j.for_each_record_of(
        |legs| {
            asked += 1;
            legs.contains(&leg::INVENTORY_TOOLS.as_str())
        },
        |r| {
            got.push(r.seq);
            true
        },
    );
    assert_eq!((asked, got), (3, vec![0, 2]));
    // Stopping early.
    let mut first = Vec::new();
    j.for_each_record_of(
        |legs| {
            legs.contains(&leg::PADDED.as_str()) || legs.contains(&leg::INVENTORY_TOOLS.as_str())
        },
        |r| {
            first.push(r.seq);
            false
        },
    );
    assert_eq!(first, vec![0]);
    // Bytes that do not start like a record are not peeked (the record is decoded).
    assert_eq!(peek_legs(b""), None);
    assert_eq!(peek_legs(&[0xa7, 0x63, b's', b'e', b'x']), None);
    assert_eq!(
        peek_legs(&[0xa7, 0x63, b's', b'e', b'q', 0x01, 0x64, b'l', b'e', b'g', b's', 0x82, 0x61]),
        None
    );
}
