//! Shared by evaluator/tests/docs_help.rs and collector/tests/docs_help.rs (included by
//! path): `--help` is the source, README.md and docs/*.md are held to it, and the man
//! pages (docs/man) and shell completions (docs/completions) are generated from the same
//! clap `Command` and must be up to date. `MCP_PROBE_REGEN=1` rewrites the generated
//! files instead of comparing them (scripts/gen-man.sh).

#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Long flags the docs name that belong to other tools (cargo, valgrind, the conformance
/// suite, criterion, the lab's servers, the credential-argument examples).
pub const FOREIGN: &[&str] = &[
    "release",
    // scripts/instructions.sh
    "compat",
    "no-build",
    // callgrind_annotate
    "inclusive",
    "bench",
    "bins",
    "api-key",
    "naive",
    "flag",
    "warm-up-time",
    "measurement-time",
    "save-exact",
    "tool",
    "suite",
    "scenario",
    "spec-version",
    "command",
    "stray-token",
    "no-sender",
    "log-to-stdout",
    "locked",
    "offline",
    // scripts/dist.sh and sha256sum (docs/install.md).
    "bins-only",
    "bins-and-image",
    "ignore-missing",
    "remap-path-prefix",
    // llvm-profdata merge, making the release's profile (scripts/pgo.sh, docs/performance.md).
    "sparse",
    // podman and kubectl, running the container image (docs/install.md, docs/fleet.md).
    "rm",
    "userns",
    "from-file",
];

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("crate dir has a parent")
        .to_path_buf()
}

/// README.md and every docs/*.md, by path relative to the repository.
pub fn doc_files() -> Vec<(String, String)> {
    let root = repo_root();
    let mut out = vec![(
        "README.md".to_string(),
        std::fs::read_to_string(root.join("README.md")).expect("README.md"),
    )];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    for p in docs {
        let rel = p
            .strip_prefix(&root)
            .expect("under root")
            .display()
            .to_string();
        out.push((rel, std::fs::read_to_string(&p).expect("doc")));
    }
    out
}

/// Every long flag of the command and its subcommands (hidden ones left out; `help`
/// and `version` included).
pub fn long_flags(cmd: &clap::Command) -> BTreeSet<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    let mut out = BTreeSet::new();
    collect(&cmd, &mut out);
    out
}

fn collect(cmd: &clap::Command, out: &mut BTreeSet<String>) {
    for a in cmd.get_arguments() {
        if a.is_hide_set() {
            continue;
        }
        if let Some(l) = a.get_long() {
            out.insert(l.to_string());
        }
    }
    for s in cmd.get_subcommands() {
        collect(s, out);
    }
}

/// `--xyz` tokens of a text, with their 1-based line.
pub fn flags_in(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let b = line.as_bytes();
        let mut i = 0;
        while i + 2 < b.len() {
            let before_ok = i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'-');
            if before_ok && b[i] == b'-' && b[i + 1] == b'-' && b[i + 2].is_ascii_lowercase() {
                let start = i + 2;
                let mut j = start;
                while j < b.len()
                    && (b[j].is_ascii_lowercase() || b[j].is_ascii_digit() || b[j] == b'-')
                {
                    j += 1;
                }
                out.push((n + 1, line[start..j].trim_end_matches('-').to_string()));
                i = j;
            } else {
                i += 1;
            }
        }
    }
    out
}

/// The values written after `--format` (`--format json`, `--format text\|json`), with
/// their line; placeholders (FORMAT, `{p}`) are left out.
pub fn format_values_in(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (at, _) in line.match_indices("--format") {
            let rest = &line[at + "--format".len()..];
            let Some(rest) = rest.strip_prefix(' ').or_else(|| rest.strip_prefix('=')) else {
                continue;
            };
            let value: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '|' || *c == '\\')
                .collect();
            for v in value.replace('\\', "").split('|') {
                if !v.is_empty() && v.chars().all(|c| c.is_ascii_lowercase()) {
                    out.push((n + 1, v.to_string()));
                }
            }
        }
    }
    out
}

/// Exit codes named in prose: `exit 2`, `exits 3`, `exit code 4`, `exit status 1`, `exit-3`.
pub fn exit_codes_in(text: &str) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let lower = line.to_ascii_lowercase();
        for (at, _) in lower.match_indices("exit") {
            if at > 0 && lower.as_bytes()[at - 1].is_ascii_alphanumeric() {
                continue;
            }
            let mut rest = &lower[at + 4..];
            for suffix in ["s ", " code ", " status ", " ", "-"] {
                if let Some(r) = rest.strip_prefix(suffix) {
                    rest = r;
                    break;
                }
            }
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            if let Ok(code) = digits.parse() {
                out.push((n + 1, code));
            }
        }
    }
    out
}

/// The codes of the first table whose header row is `header` (`| exit | meaning |`), in order.
pub fn exit_table(text: &str, header: &str) -> Option<Vec<u32>> {
    let want = header;
    let mut lines = text.lines().skip_while(|l| l.trim() != want);
    lines.next()?;
    lines.next()?; // |---|---|
    Some(
        lines
            .take_while(|l| l.starts_with('|'))
            .map(|l| {
                let cell = l.trim_start_matches('|').split('|').next().unwrap_or("");
                cell.trim()
                    .parse()
                    .unwrap_or_else(|_| panic!("exit table row {l:?}"))
            })
            .collect(),
    )
}

/// Every long flag named in the generated man pages of `bin` (docs/man/<bin>*.1): how one
/// crate's test learns the other binary's flags without depending on it.
pub fn man_flags(bin: &str) -> BTreeSet<String> {
    let dir = repo_root().join("docs/man");
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(&dir).expect("docs/man") {
        let p = e.expect("entry").path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with(bin) && name.ends_with(".1") {
            let roff = std::fs::read_to_string(&p).expect("man page");
            let plain = roff
                .replace("\\fB", " ")
                .replace("\\fI", " ")
                .replace("\\fR", " ")
                .replace("\\-", "-");
            for (_, f) in flags_in(&plain) {
                out.insert(f);
            }
        }
    }
    assert!(!out.is_empty(), "no flags in docs/man/{bin}*.1");
    out
}

/// The man pages (one per command and subcommand) and bash, zsh and fish completions of
/// `cmd`, by path relative to the repository.
pub fn generated(cmd: &clap::Command) -> BTreeMap<String, Vec<u8>> {
    // The pages name the package version only: `--version` also names the commit, target
    // and rustc, which would change the committed pages with every commit.
    let mut cmd = cmd.clone().version(env!("CARGO_PKG_VERSION"));
    cmd.build();
    let bin = cmd.get_name().to_string();
    let mut out = BTreeMap::new();
    let mut man = Vec::new();
    clap_mangen::Man::new(cmd.clone())
        .render(&mut man)
        .expect("render man");
    out.insert(format!("docs/man/{bin}.1"), man);
    for sub in cmd.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        // clap's names are &'static str (no `string` feature): leaked, in a test only.
        let name: &'static str = format!("{bin}-{}", sub.get_name()).leak();
        let mut man = Vec::new();
        clap_mangen::Man::new(sub.clone().name(name))
            .render(&mut man)
            .expect("render man");
        out.insert(format!("docs/man/{name}.1"), man);
    }
    use clap_complete::Shell;
    for (shell, file) in [
        (Shell::Bash, format!("{bin}.bash")),
        (Shell::Zsh, format!("_{bin}")),
        (Shell::Fish, format!("{bin}.fish")),
    ] {
        let mut buf = Vec::new();
        clap_complete::generate(shell, &mut cmd, &bin, &mut buf);
        if shell == Shell::Bash {
            buf = bash_case_labels_fixed(&bin, buf);
        }
        out.insert(format!("docs/completions/{file}"), buf);
    }
    out
}

/// clap_complete's bash script names a subcommand's state one way where it sets it
/// (`cmd="mcp__grade__subcmd__verify"`) and another in the `case` that completes it
/// (`mcp__subcmd__grade__subcmd__verify)`: the `-` of a hyphenated binary name becomes
/// `__` in one and `__subcmd__` in the other, so no subcommand's options were ever
/// completed. The labels are rewritten to the names the script sets, and every name
/// set must then have its label.
fn bash_case_labels_fixed(bin: &str, script: Vec<u8>) -> Vec<u8> {
    let script = String::from_utf8(script).expect("bash completion is UTF-8");
    let set = bin.replace('-', "__");
    let wrong = bin.replace('-', "__subcmd__");
    let fixed = script.replace(&format!("        {wrong}__"), &format!("        {set}__"));
    for line in fixed.lines() {
        if let Some(name) = line
            .trim()
            .strip_prefix("cmd=\"")
            .and_then(|r| r.strip_suffix('"'))
        {
            assert!(
                name.is_empty() || fixed.contains(&format!("\n        {name})\n")),
                "{bin}.bash sets cmd={name} but has no case for it"
            );
        }
    }
    fixed.into_bytes()
}

/// Compare the generated files with the committed ones, or write them under
/// `MCP_PROBE_REGEN=1`.
pub fn check_generated(files: &BTreeMap<String, Vec<u8>>) {
    let root = repo_root();
    let regen = std::env::var_os("MCP_PROBE_REGEN").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    for (rel, bytes) in files {
        let path = root.join(rel);
        if regen {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, bytes).expect("write generated file");
        } else if std::fs::read(&path).ok().as_deref() != Some(bytes.as_slice()) {
            stale.push(rel.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "out of date with the clap definitions: {stale:?}; run scripts/gen-man.sh"
    );
}

/// Fails with every message at once.
pub fn report(problems: &[String]) {
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

/// No `--flag` in README.md or docs/*.md that neither binary has (`bin`'s own flags from
/// `cmd`, the other's from its committed man page) nor another tool's ([`FOREIGN`]).
pub fn check_no_unknown_flag(cmd: &clap::Command, bin: &str, other: &str) {
    let own = long_flags(cmd);
    let theirs = man_flags(other);
    let mut problems = Vec::new();
    for (file, text) in doc_files() {
        for (line, flag) in flags_in(&text) {
            if !(own.contains(&flag) || theirs.contains(&flag) || FOREIGN.contains(&flag.as_str()))
            {
                problems.push(format!(
                    "{file}:{line}: --{flag} is not a flag of {bin} or {other}"
                ));
            }
        }
    }
    report(&problems);
}

/// Every long flag of `cmd` (but `--help` and `--version`) is named in README.md or
/// `own_page`.
pub fn check_every_flag_documented(cmd: &clap::Command, bin: &str, own_page: &str) {
    let named: BTreeSet<String> = doc_files()
        .iter()
        .filter(|(f, _)| f == "README.md" || f == own_page)
        .flat_map(|(_, t)| flags_in(t).into_iter().map(|(_, f)| f))
        .collect();
    let problems: Vec<String> = long_flags(cmd)
        .into_iter()
        .filter(|f| f != "help" && f != "version" && !named.contains(f))
        .map(|f| format!("--{f} of {bin} is in neither README.md nor {own_page}"))
        .collect();
    report(&problems);
}
