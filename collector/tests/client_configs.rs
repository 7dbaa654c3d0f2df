//! `mcp-collect --list-config`: every client configuration format it reads, written as
//! fixtures into a temp dir; the table and the JSON output; secrets only as fingerprints
//! (never on stdout or stderr); one line for each bad file or entry; `auto` over a
//! temporary `HOME` and working directory.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcp_probe_schema::bundle::fingerprint;
use serde_json::Value;

/// Every secret a fixture holds: none may appear on stdout or stderr.
const SECRETS: &[&str] = &[
    "SECRET-desktop-env",
    "SECRET-claude-user-header",
    "SECRET-cursor-api-key",
    "SECRET-kiro-password",
    "SECRET-vscode-settings-env",
    "SECRET-opencode-env",
    "SECRET-opencode-header",
    "SECRET-gemini-token",
    "SECRET-bearer-arg",
    "SECRET-url-query",
    "SECRET-key-eq",
    "ghp_SECRETbareGitHubToken0123",
];

fn fp(s: &str) -> String {
    fingerprint(s.as_bytes())
}

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
    path.to_path_buf()
}

/// The fixtures: `(relative path under the temp dir, contents)`. `home/` is the user's
/// home directory, `proj/` the project.
fn fixtures() -> Vec<(&'static str, &'static str)> {
    vec![
        (
            "home/.config/Claude/claude_desktop_config.json",
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp", "ghp_SECRETbareGitHubToken0123"],
                       "env": {"API_TOKEN": "SECRET-desktop-env"}}
            }}"#,
        ),
        (
            "home/.claude.json",
            r#"{"numStartups": 3,
                "mcpServers": {
                  "linear": {"type": "http", "url": "https://mcp.linear.app/mcp",
                             "headers": {"Authorization": "Bearer SECRET-claude-user-header"}}
                },
                "projects": {
                  "/src/app": {"mcpServers": {
                    "legacy": {"type": "sse", "url": "https://legacy.example.com/sse"}
                  }},
                  "/src/other": {"allowedTools": []}
                }}"#,
        ),
        (
            "proj/.mcp.json",
            r#"{"mcpServers": {
                "db": {"command": "db-mcp", "args": ["--dsn", "${DB_DSN}"], "env": {"DB_PASSWORD": "${DB_PASSWORD}"}}
            }}"#,
        ),
        (
            "home/.cursor/mcp.json",
            r#"{
  // Cursor writes JSONC
  "mcpServers": {
    /* a block comment */
    "search": {
      "command": "search-mcp",
      "args": ["--api-key", "SECRET-cursor-api-key", "--url", "https://x.example/?api_key=SECRET-url-query&v=1",],
    },
    "remote": {"url": "https://cursor-remote.example.com/mcp"},
    "empty": {"env": {"A": "b"}},
  },
}"#,
        ),
        (
            "home/.codeium/windsurf/mcp_config.json",
            r#"{"mcpServers": {"wind": {"serverUrl": "https://windsurf.example.com/mcp"}}}"#,
        ),
        (
            "home/.kiro/settings/mcp.json",
            r#"{"mcpServers": {"kiro-db": {"command": "uvx", "args": ["kiro-db", "--password", "SECRET-kiro-password", "Bearer SECRET-bearer-arg", "key=SECRET-key-eq"], "disabled": true}}}"#,
        ),
        (
            "proj/.vscode/mcp.json",
            r#"{
  "inputs": [{"type": "promptString", "id": "api-key", "password": true}],
  "servers": {
    "gh": {"type": "http", "url": "https://api.githubcopilot.com/mcp/",
           "headers": {"Authorization": "Bearer ${input:api-key}"}},
    "local": {"type": "stdio", "command": "node", "args": ["server.js"], "env": {"TOKEN": "${env:GH_TOKEN}"}},
    "weird": {"type": "carrier-pigeon", "url": "https://x.example"}
  }
}"#,
        ),
        (
            "home/.config/Code/User/settings.json",
            r#"{
  "editor.fontSize": 14, // JSONC
  "mcp": {"servers": {
    "settings-server": {"command": "python", "args": ["-m", "srv"], "env": {"SERVICE_KEY": "SECRET-vscode-settings-env"},},
  }},
}"#,
        ),
        (
            "home/.config/opencode/opencode.json",
            r#"{"$schema": "https://opencode.ai/config.json",
                "mcp": {
                  "oc-local": {"type": "local", "command": ["bun", "x", "oc-mcp"], "environment": {"OC_SECRET": "SECRET-opencode-env"}, "enabled": true},
                  "oc-remote": {"type": "remote", "url": "https://oc.example.com/mcp", "headers": {"X-Api-Key": "SECRET-opencode-header"}}
                }}"#,
        ),
        (
            "home/.gemini/settings.json",
            r#"{"theme": "dark", "mcpServers": {
                "g-http": {"httpUrl": "https://gemini-http.example.com/mcp", "headers": {"Authorization": "Bearer SECRET-gemini-token"}},
                "g-sse": {"url": "https://gemini-sse.example.com/sse"},
                "g-stdio": {"command": "gemini-mcp", "cwd": "/tmp"}
            }}"#,
        ),
    ]
}

struct Lab {
    dir: tempfile::TempDir,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::tempdir().expect("tempdir");
        for (rel, text) in fixtures() {
            write(&dir.path().join(rel), text);
        }
        Lab { dir }
    }
    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
    fn run(&self, args: &[&str]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mcp-collect"));
        c.env("MCP_PROBE_HOME", self.path("state"))
            .env("HOME", self.path("home"))
            .env_remove("XDG_CONFIG_HOME")
            .current_dir(self.path("proj"))
            .args(args);
        c.output().expect("run mcp-collect")
    }
    /// `--list-config ARG --format json`: exit code, entries, stderr; no secret leaks.
    fn json(&self, arg: &str) -> (i32, Vec<Value>, String) {
        let out = self.run(&["--list-config", arg, "--format", "json"]);
        let (stdout, stderr) = texts(&out);
        no_secret(&stdout, &stderr);
        let entries = if stdout.trim().is_empty() {
            Vec::new()
        } else {
            match serde_json::from_str::<Value>(&stdout).expect("stdout is JSON") {
                Value::Array(a) => a,
                other => panic!("not an array: {other}"),
            }
        };
        (out.status.code().unwrap_or(-1), entries, stderr)
    }
}

fn texts(out: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn no_secret(stdout: &str, stderr: &str) {
    for s in SECRETS {
        assert!(!stdout.contains(s), "{s} on stdout:\n{stdout}");
        assert!(!stderr.contains(s), "{s} on stderr:\n{stderr}");
    }
}

fn entry<'a>(entries: &'a [Value], name: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["name"] == name)
        .unwrap_or_else(|| panic!("no entry {name} in {entries:#?}"))
}

fn named<'a>(e: &'a Value, field: &str, name: &str) -> &'a Value {
    e[field]
        .as_array()
        .expect("array")
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no {field} {name} in {e:#}"))
}

#[test]
fn claude_desktop_and_claude_code_files() {
    let lab = Lab::new();
    let (code, e, _) = lab.json(
        lab.path("home/.config/Claude/claude_desktop_config.json")
            .to_str()
            .expect("utf-8"),
    );
    assert_eq!(code, 0);
    assert_eq!(e.len(), 1);
    let fs = entry(&e, "fs");
    assert_eq!(fs["client"], "claude-desktop");
    assert_eq!(fs["scope"], "user");
    assert_eq!(fs["transport"], "stdio");
    assert_eq!(fs["command"], "npx");
    assert_eq!(fs["args"][2], "/tmp");
    // A bare argument of a well-known token shape.
    assert_eq!(fs["args"][3], fp("ghp_SECRETbareGitHubToken0123"));
    let env = named(fs, "env", "API_TOKEN");
    assert_eq!(env["value"], fp("SECRET-desktop-env"));
    assert_eq!(env["reference"], false);

    let (code, e, _) = lab.json(lab.path("home/.claude.json").to_str().expect("utf-8"));
    assert_eq!(code, 0);
    assert_eq!(e.len(), 2, "{e:#?}");
    let linear = entry(&e, "linear");
    assert_eq!(linear["client"], "claude-code");
    assert_eq!(linear["scope"], "user");
    assert_eq!(linear["transport"], "streamable-http");
    assert_eq!(linear["url"], "https://mcp.linear.app/mcp");
    assert_eq!(
        named(linear, "headers", "Authorization")["value"],
        fp("Bearer SECRET-claude-user-header")
    );
    let legacy = entry(&e, "legacy");
    assert_eq!(legacy["scope"], "local");
    assert_eq!(legacy["project"], "/src/app");
    assert_eq!(legacy["transport"], "sse");

    let (code, e, _) = lab.json(lab.path("proj/.mcp.json").to_str().expect("utf-8"));
    assert_eq!(code, 0);
    let db = entry(&e, "db");
    assert_eq!(
        (db["client"].as_str(), db["scope"].as_str()),
        (Some("claude-code"), Some("project"))
    );
    assert_eq!(db["args"], serde_json::json!(["--dsn", "${DB_DSN}"]));
    let pw = named(db, "env", "DB_PASSWORD");
    assert_eq!(
        (pw["value"].as_str(), &pw["reference"]),
        (Some("${DB_PASSWORD}"), &Value::Bool(true))
    );
}

#[test]
fn cursor_jsonc_with_secret_arguments_and_an_entry_without_url_or_command() {
    let lab = Lab::new();
    let file = lab.path("home/.cursor/mcp.json");
    let (code, e, stderr) = lab.json(file.to_str().expect("utf-8"));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(e.len(), 2, "{e:#?}");
    let search = entry(&e, "search");
    assert_eq!(search["client"], "cursor");
    assert_eq!(search["scope"], "user");
    assert_eq!(search["transport"], "stdio");
    assert_eq!(search["args"][1], fp("SECRET-cursor-api-key"));
    assert_eq!(
        search["args"][3],
        format!("https://x.example/?api_key={}&v=1", fp("SECRET-url-query"))
    );
    let remote = entry(&e, "remote");
    assert_eq!(remote["transport"], "streamable-http");
    assert_eq!(remote["url"], "https://cursor-remote.example.com/mcp");
    let bad: Vec<&str> = stderr.lines().filter(|l| l.contains("\"empty\"")).collect();
    assert_eq!(bad.len(), 1, "{stderr}");
    assert!(bad[0].contains(&file.display().to_string()), "{stderr}");
    assert!(bad[0].contains("neither a url nor a command"), "{stderr}");
}

#[test]
fn windsurf_kiro_and_gemini_files() {
    let lab = Lab::new();
    let (_, e, _) = lab.json(
        lab.path("home/.codeium/windsurf/mcp_config.json")
            .to_str()
            .expect("utf-8"),
    );
    let wind = entry(&e, "wind");
    assert_eq!(wind["client"], "windsurf");
    assert_eq!(wind["transport"], "streamable-http");
    assert_eq!(wind["url"], "https://windsurf.example.com/mcp");

    let (_, e, _) = lab.json(
        lab.path("home/.kiro/settings/mcp.json")
            .to_str()
            .expect("utf-8"),
    );
    let k = entry(&e, "kiro-db");
    assert_eq!(
        (k["client"].as_str(), k["scope"].as_str()),
        (Some("kiro"), Some("user"))
    );
    assert_eq!(k["disabled"], true);
    assert_eq!(
        k["args"],
        serde_json::json!([
            "kiro-db",
            "--password",
            fp("SECRET-kiro-password"),
            format!("Bearer {}", fp("SECRET-bearer-arg")),
            format!("key={}", fp("SECRET-key-eq")),
        ])
    );

    let (_, e, _) = lab.json(
        lab.path("home/.gemini/settings.json")
            .to_str()
            .expect("utf-8"),
    );
    assert_eq!(e.len(), 3);
    assert_eq!(entry(&e, "g-http")["transport"], "streamable-http");
    assert_eq!(
        entry(&e, "g-http")["url"],
        "https://gemini-http.example.com/mcp"
    );
    assert_eq!(
        named(entry(&e, "g-http"), "headers", "Authorization")["value"],
        fp("Bearer SECRET-gemini-token")
    );
    assert_eq!(entry(&e, "g-sse")["transport"], "sse");
    assert_eq!(entry(&e, "g-stdio")["transport"], "stdio");
    assert_eq!(entry(&e, "g-stdio")["client"], "gemini");
}

#[test]
fn vscode_and_opencode_files() {
    let lab = Lab::new();
    let file = lab.path("proj/.vscode/mcp.json");
    let (code, e, stderr) = lab.json(file.to_str().expect("utf-8"));
    assert_eq!(code, 0);
    assert_eq!(e.len(), 2, "{e:#?}");
    let gh = entry(&e, "gh");
    assert_eq!(
        (gh["client"].as_str(), gh["scope"].as_str()),
        (Some("vscode"), Some("project"))
    );
    assert_eq!(gh["transport"], "streamable-http");
    let auth = named(gh, "headers", "Authorization");
    assert_eq!(auth["value"], "Bearer ${input:api-key}");
    assert_eq!(auth["reference"], true);
    assert_eq!(
        named(entry(&e, "local"), "env", "TOKEN")["value"],
        "${env:GH_TOKEN}"
    );
    let weird: Vec<&str> = stderr.lines().filter(|l| l.contains("\"weird\"")).collect();
    assert_eq!(weird.len(), 1, "{stderr}");
    assert!(
        weird[0].contains("unknown type \"carrier-pigeon\""),
        "{stderr}"
    );

    let (_, e, _) = lab.json(
        lab.path("home/.config/Code/User/settings.json")
            .to_str()
            .expect("utf-8"),
    );
    let s = entry(&e, "settings-server");
    assert_eq!(
        (s["client"].as_str(), s["scope"].as_str()),
        (Some("vscode"), Some("user"))
    );
    assert_eq!(
        named(s, "env", "SERVICE_KEY")["value"],
        fp("SECRET-vscode-settings-env")
    );

    let (_, e, _) = lab.json(
        lab.path("home/.config/opencode/opencode.json")
            .to_str()
            .expect("utf-8"),
    );
    let local = entry(&e, "oc-local");
    assert_eq!(local["client"], "opencode");
    assert_eq!(local["transport"], "stdio");
    assert_eq!(local["command"], "bun");
    assert_eq!(local["args"], serde_json::json!(["x", "oc-mcp"]));
    assert_eq!(
        named(local, "env", "OC_SECRET")["value"],
        fp("SECRET-opencode-env")
    );
    let remote = entry(&e, "oc-remote");
    assert_eq!(remote["transport"], "streamable-http");
    assert_eq!(remote["url"], "https://oc.example.com/mcp");
    assert_eq!(
        named(remote, "headers", "X-Api-Key")["value"],
        fp("SECRET-opencode-header")
    );
}

#[test]
fn auto_reads_the_users_and_the_projects_files_and_goes_on_past_a_malformed_one() {
    let lab = Lab::new();
    // A malformed file among the user's: one line naming it, the others go on.
    let broken = write(
        &lab.path("home/.gemini/settings.json"),
        "{\"mcpServers\": {\"x\": ",
    );
    let (code, e, stderr) = lab.json("auto");
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<&str> = e.iter().filter_map(|x| x["name"].as_str()).collect();
    for n in [
        "fs",
        "linear",
        "legacy",
        "db",
        "search",
        "remote",
        "wind",
        "kiro-db",
        "gh",
        "local",
        "settings-server",
        "oc-local",
        "oc-remote",
    ] {
        assert!(names.contains(&n), "{n} missing from {names:?}\n{stderr}");
    }
    assert!(!names.contains(&"g-http"), "{names:?}");
    let about_broken: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(&broken.display().to_string()))
        .collect();
    assert_eq!(about_broken.len(), 1, "{stderr}");
    assert!(about_broken[0].contains("not JSON"), "{stderr}");
    // 10 fixture files, the Gemini one unparsable.
    assert!(
        stderr.contains("read 9 client configuration file(s)"),
        "{stderr}"
    );

    // The default output is the table; --list-config alone means auto.
    let out = lab.run(&["--list-config"]);
    let (stdout, stderr) = texts(&out);
    no_secret(&stdout, &stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("CLIENT"), "{stdout}");
    for h in ["SCOPE", "ENTRY", "TRANSPORT", "TARGET", "FILE"] {
        assert!(lines[0].contains(h), "{stdout}");
    }
    assert_eq!(lines.len(), 1 + e.len(), "{stdout}");
    let linear = lines
        .iter()
        .find(|l| l.contains(" linear "))
        .expect("linear row");
    for part in [
        "claude-code",
        "user",
        "streamable-http",
        "https://mcp.linear.app/mcp",
        ".claude.json",
    ] {
        assert!(linear.contains(part), "{linear}");
    }
    let search = lines
        .iter()
        .find(|l| l.contains(" search "))
        .expect("search row");
    assert!(
        search.contains(&format!(
            "search-mcp --api-key {}",
            fp("SECRET-cursor-api-key")
        )),
        "{search}"
    );
    let legacy = lines
        .iter()
        .find(|l| l.contains(" legacy "))
        .expect("legacy row");
    assert!(
        legacy.contains("local") && legacy.contains("(project /src/app)"),
        "{legacy}"
    );
}

#[test]
fn an_empty_home_lists_nothing_and_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("home")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("proj")).expect("mkdir");
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", dir.path().join("state"))
        .env("HOME", dir.path().join("home"))
        .env_remove("XDG_CONFIG_HOME")
        .current_dir(dir.path().join("proj"))
        .args(["--list-config", "auto", "--format", "json"])
        .output()
        .expect("run");
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(stdout.trim(), "[]");
    assert!(
        stderr.contains("read 0 client configuration file(s)"),
        "{stderr}"
    );
}

#[test]
fn a_missing_or_malformed_file_named_explicitly_is_a_usage_error() {
    let lab = Lab::new();
    let missing = lab.path("nowhere/mcp.json");
    let out = lab.run(&["--list-config", missing.to_str().expect("utf-8")]);
    let (stdout, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stdout.is_empty());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");

    let bad = write(&lab.path("bad/.mcp.json"), "{ not json");
    let out = lab.run(&["--list-config", bad.to_str().expect("utf-8")]);
    let (_, stderr) = texts(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(&bad.display().to_string()), "{stderr}");
}

#[test]
fn list_config_takes_no_targets_or_other_sources() {
    let lab = Lab::new();
    for extra in [
        vec!["https://mcp.example.com/mcp"],
        vec!["--servers-file", "servers.txt"],
        vec!["--recover", "x.journal"],
        vec!["--stdio", "--", "true"],
        vec!["--public-key"],
    ] {
        let mut args = vec!["--list-config", "auto"];
        args.extend(extra.iter().copied());
        let out = lab.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", texts(&out).1);
    }
}

#[test]
fn format_needs_list_config() {
    let lab = Lab::new();
    for args in [
        vec!["--format", "json"],
        vec!["--format", "json", "--public-key"],
        // Refused before any traffic (the name does not resolve anyway).
        vec!["--format", "json", "https://mcp.invalid/mcp"],
    ] {
        let out = lab.run(&args);
        let (stdout, stderr) = texts(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
    }
}

#[test]
fn auto_follows_xdg_config_home() {
    let lab = Lab::new();
    let xdg = lab.path("xdg");
    write(
        &xdg.join("Claude/claude_desktop_config.json"),
        r#"{"mcpServers": {"from-xdg": {"url": "https://xdg.example.com/mcp"}}}"#,
    );
    write(
        &xdg.join("opencode/opencode.json"),
        r#"{"mcp": {"oc-xdg": {"type": "local", "command": ["oc-xdg"]}}}"#,
    );
    let out = Command::new(env!("CARGO_BIN_EXE_mcp-collect"))
        .env("MCP_PROBE_HOME", lab.path("state"))
        .env("HOME", lab.path("home"))
        .env("XDG_CONFIG_HOME", &xdg)
        .current_dir(lab.path("proj"))
        .args(["--list-config", "--format", "json"])
        .output()
        .expect("run");
    let (stdout, stderr) = texts(&out);
    no_secret(&stdout, &stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let e: Vec<Value> = serde_json::from_str(&stdout).expect("JSON");
    let names: Vec<&str> = e.iter().filter_map(|x| x["name"].as_str()).collect();
    assert!(
        names.contains(&"from-xdg") && names.contains(&"oc-xdg"),
        "{names:?}"
    );
    assert_eq!(entry(&e, "from-xdg")["client"], "claude-desktop");
    // Under XDG_CONFIG_HOME, ~/.config is not read.
    assert!(
        !names.contains(&"fs") && !names.contains(&"oc-local"),
        "{names:?}"
    );
}
