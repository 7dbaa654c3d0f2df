//! Probe inputs are validated against docs/schemas/probe-inputs.schema.json before any
//! traffic: the real `mcp-collect` against a loopback listener that
//! must not see one connection when the inputs are bad.

mod support;

use std::io::ErrorKind;
use std::net::TcpListener;
use std::sync::Arc;

use serde_json::{json, Value};
use support::{collect, json_response, open, serve, Req};

/// A loopback listener nobody answers on, and its MCP URL.
fn silent_listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind");
    l.set_nonblocking(true).expect("nonblocking");
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        l.local_addr().expect("addr").port()
    );
    (l, url)
}

/// True when some client connected (a connection stays queued until accepted, even
/// after the client closed it).
fn connected(l: &TcpListener) -> bool {
    match l.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == ErrorKind::WouldBlock => false,
        Err(e) => panic!("accept: {e}"),
    }
}

fn write_inputs(dir: &tempfile::TempDir, doc: &Value) -> String {
    let p = dir.path().join("probe-inputs.json");
    std::fs::write(&p, serde_json::to_vec_pretty(doc).expect("json")).expect("write");
    p.display().to_string()
}

#[test]
fn bad_inputs_are_refused_before_any_connection() {
    let (l, url) = silent_listener();
    let cases: Vec<(Value, String)> = vec![
        (
            json!({&url: {"static_resouce_path": "/static/app.js"}}),
            format!("target \"{url}\": unknown key \"static_resouce_path\""),
        ),
        (
            json!({&url: {"max_request_bytes": "lots"}}),
            format!("target \"{url}\": key \"max_request_bytes\": \"lots\" is a string, not an integer"),
        ),
        (
            json!({&url: {"max_request_bytes": 20_000_000, "oversize_authorised": true}}),
            format!("target \"{url}\": key \"max_request_bytes\": 20000000 is above the maximum 10485760"),
        ),
        (
            json!({&url: {"max_request_bytes": 0}}),
            format!("target \"{url}\": key \"max_request_bytes\": 0 is below the minimum 1"),
        ),
        (
            json!({&url: {"oversize_authorised": "yes"}}),
            format!("target \"{url}\": key \"oversize_authorised\": \"yes\" is a string, not a boolean"),
        ),
        (
            json!({&url: {"scope_probe_arguments": "id=1"}}),
            format!("target \"{url}\": key \"scope_probe_arguments\""),
        ),
        (
            json!({&url: {"downstream_endpoints": ["https://api.example.com/me", 7]}}),
            format!("target \"{url}\": key \"downstream_endpoints\": item 1: 7 is an integer, not a string"),
        ),
        (
            json!({&url: {"allowed_origin": "https://app.example/login"}}),
            format!("target \"{url}\": key \"allowed_origin\": \"https://app.example/login\" does not have the form the schema describes"),
        ),
        (json!({&url: "static"}), format!("target \"{url}\": not a JSON object of inputs")),
        (json!([url.clone()]), "not a JSON object keyed by target".to_string()),
    ];
    for (doc, needle) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = write_inputs(&dir, &doc);
        let run = collect(&["--inputs", &file, &url], &[]);
        assert_eq!(run.code(), 2, "{doc}: {}", run.describe());
        let err = run.stderr();
        assert_eq!(err.trim().lines().count(), 1, "{doc}: one line: {err}");
        let line = err.trim();
        assert!(
            line.starts_with(&format!("mcp-collect: error: {file}: ")),
            "{doc}: the file is named first: {line}"
        );
        assert!(line.contains(&needle), "{doc}: {line}\nwanted: {needle}");
        assert!(
            run.stdout().is_empty(),
            "{doc}: no bundle: {}",
            run.stdout()
        );
        assert!(
            !connected(&l),
            "{doc}: the collector connected although the inputs were refused"
        );
        let out = run.dir.path().join("out");
        assert!(
            !out.exists() || std::fs::read_dir(&out).expect("out").next().is_none(),
            "{doc}: nothing written to the output directory"
        );
    }
}

#[test]
fn the_issue_example_message_is_exact() {
    let (l, url) = silent_listener();
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("probe-inputs.json"),
        format!(r#"{{"{url}": {{"static_resouce_path": "/app.js"}}}}"#),
    )
    .expect("write");
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
    c.current_dir(dir.path())
        .env("MCP_PROBE_HOME", dir.path().join("home"))
        .env_remove("HOME")
        .args(["-o", "out", "--inputs", "probe-inputs.json", &url]);
    let out = c.output().expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "mcp-collect: error: probe-inputs.json: target \"{url}\": unknown key \"static_resouce_path\" (see docs/schemas/probe-inputs.schema.json)\n"
        )
    );
    assert!(!connected(&l));
}

/// The default file (`$MCP_PROBE_HOME/probe-inputs.json`) is validated the same way.
#[test]
fn the_default_inputs_file_is_validated_too() {
    let (l, url) = silent_listener();
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let file = home.join("probe-inputs.json");
    std::fs::write(
        &file,
        json!({&url: {"max_request_bytes": true}}).to_string(),
    )
    .expect("write");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", &home)
        .env_remove("HOME")
        .arg("-o")
        .arg(dir.path().join("out"))
        .arg(&url)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains(&format!(
            "{}: target \"{url}\": key \"max_request_bytes\"",
            file.display()
        )),
        "{err}"
    );
    assert!(!connected(&l));
}

#[test]
fn valid_inputs_are_recorded_and_an_unmatched_target_is_only_warned_about() {
    let srv = discover_only();
    let mine = json!({
        "static_resource_path": "/static/app.js",
        "max_request_bytes": 4096,
        "scope_probe_tool": "delete_everything",
        "scope_probe_arguments": {"id": 1}
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_inputs(
        &dir,
        &json!({&srv.url: mine.clone(), "mcp.other.example": {"max_request_bytes": 1}}),
    );
    let run = collect(&["--info", "-q", "--inputs", &file, &srv.url], &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let err = run.stderr();
    assert!(
        err.contains(&format!(
            "mcp-collect: warning: {file}: target \"mcp.other.example\" matches no target of this run"
        )),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        !srv.requests.lock().expect("lock").is_empty(),
        "the run went ahead"
    );
    let bundles = run.bundles();
    assert_eq!(bundles.len(), 1, "{}", run.describe());
    let v = open(&bundles[0]);
    assert_eq!(v.evidence.run.inputs, Some(mine));
}

/// A server that answers `server/discover` (so the collector holds a 2026-07-28
/// session) and 404 to everything else.
fn discover_only() -> support::Scripted {
    serve(Arc::new(|r: &Req| {
        let id = r.rpc_id();
        match r.rpc_method().as_str() {
            "server/discover" => json_response(
                200,
                &[],
                &json!({"jsonrpc":"2.0","id":id,"result":{"supportedVersions":["2026-07-28"],"capabilities":{}}})
                    .to_string(),
            ),
            _ => json_response(404, &[], "{}"),
        }
    }))
}

/// After a target's connection result, and only where a session was held, one short
/// stderr line names the checks left undecided for want of a probe input; a given input
/// drops out of it, `--verbose` names the inputs and what they are, `-q` silences it, and
/// a closed port gets the error alone.
#[test]
fn the_notice_follows_the_connection_result_of_a_session_only() {
    let srv = discover_only();
    let url = srv.url.clone();
    let closed = "http://127.0.0.1:1/mcp";
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write_inputs(&dir, &json!({&url: {"static_resource_path": "/app.js"}}));
    let args = |extra: &[&'static str]| {
        let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
        a.extend(
            [
                "--inputs",
                &file,
                "--timeout",
                "2",
                "--target-timeout",
                "20",
            ]
            .map(String::from),
        );
        a
    };
    let mut plain = args(&[]);
    plain.push(url.clone());
    let run = collect(&plain.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(run.code(), 0, "{}", run.describe());
    let err = run.stderr();
    let lines: Vec<&str> = err.lines().collect();
    let at = |pat: &str| lines.iter().position(|l| l.contains(pat));
    let notice = at("notice:").unwrap_or_else(|| panic!("no notice: {err}"));
    let sealed = at(&format!("{url}: sealed ")).unwrap_or_else(|| panic!("no result: {err}"));
    assert!(
        sealed < notice,
        "the notice comes after the connection result: {err}"
    );
    assert_eq!(
        lines[notice],
        format!(
            "mcp-collect: notice: {url}: 1.3, 7.2.2, 3.3.4e, 5.1.1d, 5.4.1 undecided for want of probe inputs (--inputs FILE; --verbose names them)"
        ),
        "{err}"
    );
    assert_eq!(err.matches("notice:").count(), 1, "{err}");

    let mut verbose = args(&["--verbose"]);
    verbose.push(url.clone());
    let run = collect(&verbose.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    let err = run.stderr();
    let long = err
        .lines()
        .find(|l| l.contains("notice:"))
        .unwrap_or_else(|| panic!("no notice: {err}"));
    assert!(long.contains("3.3.4e (scope_probe_tool"), "{long}");
    assert!(!long.contains("10.1a"), "{long}");

    let mut quiet = args(&["-q"]);
    quiet.push(url.clone());
    let run = collect(&quiet.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert!(!run.stderr().contains("notice:"), "{}", run.stderr());

    let mut refused = args(&[]);
    refused.push(closed.to_string());
    let run = collect(&refused.iter().map(String::as_str).collect::<Vec<_>>(), &[]);
    assert_eq!(run.code(), 3, "{}", run.describe());
    let err = run.stderr();
    assert!(!err.contains("notice:"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with(&format!("mcp-collect: error: {closed}: no MCP endpoint"))),
        "{err}"
    );
}

/// A bad `--servers-file` line is one error line naming `FILE:LINE:`, the target and its
/// first problem; exit 2 and no traffic.
#[test]
fn servers_file_errors_name_the_file_and_the_line() {
    let (l, url) = silent_listener();
    let cases = [
        (
            "ftp://x.example/mcp two",
            "invalid target \"ftp://x.example/mcp two\": scheme \"ftp\" is not http or https",
        ),
        (
            "http://a.example/m cp",
            "invalid target \"http://a.example/m cp\": contains whitespace or control characters",
        ),
        (
            "http://:8080/mcp",
            "invalid target \"http://:8080/mcp\": empty host",
        ),
        (
            "http://a.example:99999/mcp",
            "invalid target \"http://a.example:99999/mcp\": invalid port number",
        ),
    ];
    for (bad, want) in cases {
        let dir = tempfile::tempdir().expect("tempdir");
        let list = dir.path().join("servers.txt");
        std::fs::write(&list, format!("# fleet\n{url}\n\n{bad}  # the bad one\n")).unwrap();
        let run = collect(&["--servers-file", list.to_str().unwrap()], &[]);
        assert_eq!(run.code(), 2, "{bad}: {}", run.describe());
        assert_eq!(
            run.stderr(),
            format!("mcp-collect: error: {}:4: {want}\n", list.display()),
            "{bad}"
        );
        assert!(run.stdout().is_empty());
    }
    assert!(
        !connected(&l),
        "no traffic before the servers file is valid"
    );
}
