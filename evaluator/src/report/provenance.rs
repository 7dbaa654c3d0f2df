//! What produced a report: the benchmark definition graded under (id, version, SHA-256,
//! and the tailoring file when one was used) and the grader (name, version, git commit,
//! target triple and compiler).
//! Every format states it (docs/report.md); each server's collector build comes from its
//! bundle ([`super::Server::collector_build`]).
//!
//! Nothing here changes between two runs of one grader build over the same definition:
//! no time, no host, so reports stay reproducible.

use crate::benchmark::Benchmark;

/// The grader's version, printed in every report.
pub const GRADER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The grader's build: the git commit `mcp-grade` was built from (40 hex digits,
/// `-dirty` when its sources differed from that commit), `MCP_PROBE_BUILD` as set at
/// build time, or `unknown (built without git)` (evaluator/build.rs).
pub const GRADER_BUILD: &str = env!("MCP_PROBE_BUILD_ID");

/// The target triple the grader was built for (`x86_64-unknown-linux-gnu`).
pub const GRADER_TARGET: &str = env!("MCP_PROBE_TARGET");

/// The compiler the grader was built with (`rustc 1.95.0`).
pub const GRADER_RUSTC: &str = env!("MCP_PROBE_RUSTC");

/// What `mcp-grade --version` prints after the name: version, commit, target, rustc.
pub const LONG_VERSION: &str = env!("MCP_PROBE_LONG_VERSION");

/// The provenance of one report.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Provenance {
    /// The benchmark definition the checks were graded under.
    pub benchmark: BenchmarkRef,
    /// The program that graded them.
    pub grader: Tool,
    /// The `--attestations` file the report was graded with, if any (absent when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attestations: Option<FileRef>,
}

/// A benchmark definition, as a report names it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct BenchmarkRef {
    /// Stable id of the definition (`cis-mcp-server-1.0.0`).
    pub id: String,
    /// Its name (`CIS MCP Server Benchmark`).
    pub name: String,
    /// Its version (`1.0.0`).
    pub version: String,
    /// SHA-256 of the definition's bytes, hex.
    pub sha256: String,
    /// The tailoring file applied to it, if any (`null` when none).
    pub tailoring: Option<FileRef>,
    /// The checks of the definition a tailoring deselected (empty when none): named in
    /// the report, never dropped silently.
    pub deselected: Vec<String>,
}

/// A file the report depends on, by name and content.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct FileRef {
    /// The tailoring's own id, when the file is a tailoring.
    pub id: Option<String>,
    /// The file as given.
    pub file: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
}

/// A program, by name, version, the git commit it was built from, the target it was
/// built for and the compiler.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Tool {
    /// Program name (`mcp-grade`).
    pub name: String,
    /// Package version.
    pub version: String,
    /// The build: a git commit (40 hex digits, `-dirty` when built from changed sources),
    /// an identifier set at build time, or `unknown (built without git)`.
    pub commit: String,
    /// The target triple it was built for (`x86_64-unknown-linux-gnu`). Added in 0.2.0.
    pub target: String,
    /// The compiler it was built with (`rustc 1.95.0`). Added in 0.2.0.
    pub rustc: String,
}

impl Tool {
    /// This grader.
    pub fn grader() -> Tool {
        Tool {
            name: "mcp-grade".into(),
            version: GRADER_VERSION.into(),
            commit: GRADER_BUILD.into(),
            target: GRADER_TARGET.into(),
            rustc: GRADER_RUSTC.into(),
        }
    }
}

impl Provenance {
    /// The definition `b` and this grader.
    pub fn of(b: &Benchmark) -> Provenance {
        Provenance {
            benchmark: BenchmarkRef {
                id: b.id.into(),
                name: b.name.into(),
                version: b.version.into(),
                sha256: b.sha256.clone(),
                tailoring: b.tailoring.as_ref().map(|t| FileRef {
                    id: Some(t.id.clone()),
                    file: t.file.clone(),
                    sha256: t.sha256.clone(),
                }),
                deselected: b
                    .tailoring
                    .as_ref()
                    .map(|t| t.deselected.iter().map(|d| d.to_string()).collect())
                    .unwrap_or_default(),
            },
            grader: Tool::grader(),
            attestations: None,
        }
    }

    /// One line for people: `NAME VERSION (id ID, sha256 H), graded by mcp-grade V
    /// (commit C, TARGET, RUSTC)` (the words of `mcp-grade --version`), with `; tailored by FILE (sha256 H)` inside the parentheses when a
    /// tailoring file was used. `full` writes hashes and the commit whole; else cut to 12
    /// digits (the JSON report has them whole). Escaped for one line.
    pub fn line(&self, full: bool) -> String {
        let b = &self.benchmark;
        let h = |s: &str| -> String {
            if full {
                s.to_string()
            } else {
                s.get(..12).unwrap_or(s).to_string()
            }
        };
        let tailoring = b
            .tailoring
            .as_ref()
            .map(|t| {
                let deselected = if b.deselected.is_empty() {
                    String::new()
                } else {
                    format!(", deselecting {}", b.deselected.join(" "))
                };
                match &t.id {
                    Some(id) => format!(
                        "; tailored by {id} ({}, sha256 {}{deselected})",
                        t.file,
                        h(&t.sha256)
                    ),
                    None => format!(
                        "; tailored by {} (sha256 {}{deselected})",
                        t.file,
                        h(&t.sha256)
                    ),
                }
            })
            .unwrap_or_default();
        let g = &self.grader;
        let commit = if full {
            g.commit.clone()
        } else {
            short_build(&g.commit)
        };
        let attestations = self
            .attestations
            .as_ref()
            .map(|a| format!("; attestations {} (sha256 {})", a.file, h(&a.sha256)))
            .unwrap_or_default();
        crate::fmt::escape_line(&format!(
            "{} {} (id {}, sha256 {}{tailoring}), graded by {} {} ({}, {}, {}){attestations}",
            b.name,
            b.version,
            b.id,
            h(&b.sha256),
            g.name,
            g.version,
            build_words(&commit),
            g.target,
            g.rustc
        ))
    }
}

/// A build identifier cut for people: a commit (40 or 64 hex digits, `-dirty` kept) to
/// its first 12 digits; anything else as it is.
pub fn short_build(build: &str) -> String {
    let (hash, dirty) = match build.strip_suffix("-dirty") {
        Some(h) => (h, "-dirty"),
        None => (build, ""),
    };
    if matches!(hash.len(), 40 | 64) && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!("{}{dirty}", &hash[..12])
    } else {
        build.to_string()
    }
}

/// `commit C` for a commit, `build B` for anything else (`build unknown` in bundles
/// of collectors built before builds named their commit).
pub fn build_words(build: &str) -> String {
    let hash = build.strip_suffix("-dirty").unwrap_or(build);
    if hash.len() >= 12 && hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        format!("commit {build}")
    } else {
        format!("build {build}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::benchmark::CheckResult;
    use crate::report::{render, Format, Report, Server};
    use crate::verdict::{Outcome, Verdict};

    const GRADER: &str = "0123456789abcdef0123456789abcdef01234567";
    const COLLECTOR: &str = "fedcba9876543210fedcba9876543210fedcba98-dirty";
    const TARGET: &str = "aarch64-unknown-linux-musl";
    const RUSTC: &str = "rustc 1.99.1";

    /// One server whose bundle was written by collector build [`COLLECTOR`], graded
    /// under a tailored definition by grader build [`GRADER`] (for [`TARGET`], by
    /// [`RUSTC`]).
    fn report() -> Report {
        let mut ev = crate::fixture::evidence(
            Some(crate::fixture::session(
                Some("2025-11-25"),
                serde_json::json!({}),
                None,
            )),
            Vec::new(),
        );
        ev.payload_mut().collector.build = COLLECTOR.into();
        let results = crate::benchmark::Benchmark::builtin()
            .checks
            .iter()
            .map(|e| CheckResult {
                entry: e,
                outcome: (e.rule == "revisions-pinned")
                    .then(|| Outcome::single(Verdict::Fail, "why", "")),
            })
            .collect();
        let mut r = Report::new(
            crate::benchmark::Benchmark::builtin(),
            None,
            vec![(Server::new(&ev, None), results)],
        );
        r.provenance.grader.commit = GRADER.into();
        r.provenance.grader.target = TARGET.into();
        r.provenance.grader.rustc = RUSTC.into();
        r.provenance.benchmark.tailoring = Some(FileRef {
            id: None,
            file: "org-profile.toml".into(),
            sha256: "ab".repeat(32),
        });
        r
    }

    fn text(r: &Report, f: Format) -> String {
        String::from_utf8(render(r, f)).expect("utf-8")
    }

    #[test]
    fn the_server_takes_the_collector_build_from_its_bundle() {
        let r = report();
        assert_eq!(r.server(0).expect("server").collector_build, COLLECTOR);
        assert_eq!(
            r.server(0).expect("server").collector_line(false),
            "mcp-collect 0.0.0-test (commit fedcba987654-dirty)"
        );
    }

    #[test]
    fn json_and_sarif_carry_the_provenance_whole() {
        let r = report();
        let want = serde_json::json!({
            "benchmark": {
                "id": "cis-mcp-server-1.0.0",
                "name": "CIS MCP Server Benchmark",
                "version": Benchmark::builtin().version,
                "sha256": r.provenance.benchmark.sha256,
                "tailoring": {"id": null, "file": "org-profile.toml", "sha256": "ab".repeat(32)},
                "deselected": [],
            },
            "grader": {
                "name": "mcp-grade",
                "version": super::super::GRADER_VERSION,
                "commit": GRADER,
                "target": TARGET,
                "rustc": RUSTC,
            },
        });
        let j: serde_json::Value = serde_json::from_str(&text(&r, Format::Json)).expect("json");
        assert_eq!(j["provenance"], want);
        assert_eq!(j["servers"][0]["collector_build"], COLLECTOR);

        let sarif: serde_json::Value =
            serde_json::from_str(&text(&r, Format::Sarif)).expect("sarif");
        let run = &sarif["runs"][0];
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["version"], super::super::GRADER_VERSION);
        assert_eq!(
            driver["semanticVersion"],
            format!("{}+0123456789ab", super::super::GRADER_VERSION)
        );
        assert_eq!(driver["properties"]["commit"], GRADER);
        assert_eq!(driver["properties"]["target"], TARGET);
        assert_eq!(driver["properties"]["rustc"], RUSTC);
        assert_eq!(run["properties"]["provenance"], want);
        assert_eq!(run["properties"]["servers"][0]["collectorBuild"], COLLECTOR);
    }

    #[test]
    fn junit_suites_carry_the_provenance_as_properties() {
        let x = text(&report(), Format::Junit);
        for (k, v) in [
            ("benchmark.id", "cis-mcp-server-1.0.0"),
            ("benchmark.version", Benchmark::builtin().version),
            (
                "benchmark.sha256",
                &Provenance::of(Benchmark::builtin()).benchmark.sha256,
            ),
            ("benchmark.tailoring.file", "org-profile.toml"),
            ("benchmark.tailoring.sha256", &"ab".repeat(32)),
            ("grader.name", "mcp-grade"),
            ("grader.version", super::super::GRADER_VERSION),
            ("grader.commit", GRADER),
            ("grader.target", TARGET),
            ("grader.rustc", RUSTC),
            ("collector.build", COLLECTOR),
        ] {
            let prop = format!("<property name=\"{k}\" value=\"{v}\"/>");
            assert!(x.contains(&prop), "{prop} missing:\n{x}");
        }
        // The server's suite and the not-reachable suite both carry the grader.
        assert_eq!(x.matches("name=\"grader.commit\"").count(), 2, "{x}");
    }

    #[test]
    fn people_formats_state_benchmark_grader_and_collector_build() {
        let r = report();
        let sha = Provenance::of(Benchmark::builtin()).benchmark.sha256;
        let tailoring = "ab".repeat(32);
        let summary = text(&r, Format::Text);
        // The header follows the first screen (matrix and totals) and wraps at 80
        // columns: compare words, not lines.
        let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
        let head = summary
            .lines()
            .skip_while(|l| !l.starts_with("totals: "))
            .skip_while(|l| !l.starts_with("CIS MCP Server Benchmark"))
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        let head = words(&head);
        for want in [
            "id cis-mcp-server-1.0.0",
            &format!("sha256 {}", &sha[..12]),
            &format!("tailored by org-profile.toml (sha256 {})", &tailoring[..12]),
            &format!(
                "mcp-grade {} (commit 0123456789ab, {TARGET}, {RUSTC})",
                super::super::GRADER_VERSION
            ),
        ] {
            assert!(head.contains(want), "{want} not in the header:\n{summary}");
        }
        assert!(
            words(&summary).contains("by mcp-collect 0.0.0-test (commit fedcba987654-dirty)"),
            "the server line names the collector build:\n{summary}"
        );

        let mut verbose = r.clone();
        verbose.verbose = true;
        let t = text(&verbose, Format::Text);
        for want in [&sha, &tailoring, GRADER, TARGET, RUSTC, COLLECTOR] {
            assert!(t.contains(want), "{want} not in the text report:\n{t}");
        }

        for f in [Format::Markdown, Format::Html] {
            let t = text(&r, f);
            for want in [
                "cis-mcp-server-1.0.0",
                Benchmark::builtin().version,
                sha.as_str(),
                "org-profile.toml",
                &tailoring,
                GRADER,
                TARGET,
                RUSTC,
                COLLECTOR,
            ] {
                assert!(t.contains(want), "{f:?}: {want} missing:\n{t}");
            }
        }
    }

    #[test]
    fn builds_are_cut_only_when_they_are_commits() {
        let c = "0123456789abcdef0123456789abcdef01234567";
        assert_eq!(short_build(c), "0123456789ab");
        assert_eq!(short_build(&format!("{c}-dirty")), "0123456789ab-dirty");
        assert_eq!(short_build("unknown"), "unknown");
        assert_eq!(
            short_build("unknown (built without git)"),
            "unknown (built without git)"
        );
        assert_eq!(
            build_words("0123456789ab-dirty"),
            "commit 0123456789ab-dirty"
        );
        assert_eq!(build_words("unknown"), "build unknown");
        assert_eq!(build_words("release-7"), "build release-7");
    }

    #[test]
    fn the_line_names_benchmark_tailoring_and_grader() {
        let mut p = Provenance::of(Benchmark::builtin());
        p.grader.commit = "0123456789abcdef0123456789abcdef01234567".into();
        p.grader.target = TARGET.into();
        p.grader.rustc = RUSTC.into();
        let sha = crate::benchmark::Benchmark::builtin().sha256.clone();
        assert_eq!(
            p.line(false),
            format!(
                "CIS MCP Server Benchmark 1.0.0 (id cis-mcp-server-1.0.0, sha256 {}), graded by mcp-grade {} (commit 0123456789ab, {TARGET}, {RUSTC})",
                &sha[..12],
                super::super::GRADER_VERSION
            )
        );
        p.benchmark.tailoring = Some(FileRef {
            id: None,
            file: "org\nprofile.toml".into(),
            sha256: "ab".repeat(32),
        });
        let full = p.line(true);
        assert!(
            full.contains(&format!(
                "sha256 {}; tailored by org\\nprofile.toml (sha256 {})",
                p.benchmark.sha256,
                "ab".repeat(32)
            )),
            "{full}"
        );
        assert!(
            full.ends_with(&format!(
                "(commit 0123456789abcdef0123456789abcdef01234567, {TARGET}, {RUSTC})"
            )),
            "{full}"
        );
    }
}
