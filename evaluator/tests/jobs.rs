//! `--jobs`: grading and verification on several threads write the same bytes as one
//! thread (stdout, stderr and exit status), in every report format, with failures and
//! stored baselines in the mix. The real binary, each test in its own directory.

mod support;

use support::examples;
use support::grade_run;

use std::path::Path;

use grade_run::{mcp_grade, Run};

/// Every example bundle copied `copies` times into `dir`, interleaved (a, b, c, …, a, b,
/// c, …) so that no two neighbours share an endpoint and later inputs are often graded
/// before earlier ones on several threads. Returns the names in argument order.
fn interleaved(dir: &Path, copies: usize) -> Vec<String> {
    let bundles = examples::examples();
    let mut out = Vec::new();
    for c in 0..copies {
        for b in &bundles {
            let n = b.file_name().expect("a file").to_string_lossy();
            let to = format!("c{c}-{n}");
            std::fs::copy(b, dir.join(&to)).expect("copy");
            out.push(to);
        }
    }
    out
}

fn run(dir: &Path, home: &Path, args: &[String]) -> Run {
    mcp_grade(dir, Some(home), args)
}

/// `args` with `--jobs N` in front.
fn with_jobs(jobs: usize, args: &[String]) -> Vec<String> {
    let mut v = vec!["--jobs".to_string(), jobs.to_string()];
    v.extend(args.iter().cloned());
    v
}

fn assert_same(one: &Run, many: &Run, what: &str) {
    assert_eq!(one.code, many.code, "{what}: exit status\n{many:?}");
    assert!(one.stdout == many.stdout, "{what}: stdout differs");
    assert_eq!(one.stderr, many.stderr, "{what}: stderr");
}

#[test]
fn grading_on_several_threads_writes_the_bytes_of_one_thread_in_every_format() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, home) = (tmp.path(), tmp.path().join("home"));
    let bundles = interleaved(dir, 2);
    for format in ["text", "json", "sarif", "junit", "markdown", "html"] {
        let mut args = vec!["--format".to_string(), format.to_string()];
        if format == "text" {
            args.push("--verbose".into());
        }
        args.extend(bundles.iter().cloned());
        let one = run(dir, &home, &with_jobs(1, &args));
        assert!(matches!(one.code, 0 | 1 | 4), "{format}: {one:?}");
        assert!(one.stdout.len() > 1000, "{format}: a report: {one:?}");
        for jobs in [2, 3, 8] {
            let many = run(dir, &home, &with_jobs(jobs, &args));
            assert_same(&one, &many, &format!("{format}, --jobs {jobs}"));
        }
    }
}

#[test]
fn stored_baselines_and_their_warnings_are_the_same_on_several_threads() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, home) = (tmp.path(), tmp.path().join("home"));
    let bundles = interleaved(dir, 3);
    // Store a baseline per endpoint, then damage one so that it is rejected with a
    // warning, once, at its endpoint's first bundle.
    let mut update = vec![
        "--update-baseline".to_string(),
        "--format".into(),
        "json".into(),
    ];
    update.extend(bundles.iter().cloned());
    let stored = run(dir, &home, &with_jobs(1, &update));
    assert!(matches!(stored.code, 0 | 1 | 4), "{stored:?}");
    let store = home.join("baselines");
    let mut files: Vec<_> = walk(&store);
    files.sort();
    assert!(files.len() > 3, "baselines stored: {files:?}");
    let victim = &files[1];
    let mut bytes = std::fs::read(victim).expect("baseline");
    let at = bytes.len() / 2;
    bytes[at] ^= 0x55;
    std::fs::write(victim, bytes).expect("damage");

    let mut args = vec!["--format".to_string(), "json".into()];
    args.extend(bundles.iter().cloned());
    let one = run(dir, &home, &with_jobs(1, &args));
    assert_eq!(
        one.stderr.matches("warning: stored baseline").count(),
        1,
        "{one:?}"
    );
    assert!(one.stdout.contains("\"baseline\""), "{one:?}");
    for jobs in [2, 5] {
        let many = run(dir, &home, &with_jobs(jobs, &args));
        assert_same(&one, &many, &format!("stored baselines, --jobs {jobs}"));
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).expect("dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn verification_on_several_threads_prints_the_lines_and_status_of_one_thread() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let (dir, home) = (tmp.path(), tmp.path().join("home"));
    let mut bundles = interleaved(dir, 2);
    // A tampered bundle, a truncated one and a file that cannot be read, among the good.
    let good = std::fs::read(dir.join(&bundles[0])).expect("bundle");
    let mut tampered = good.clone();
    let at = tampered.len() - 200;
    tampered[at] ^= 1;
    std::fs::write(dir.join("tampered.mcpev"), tampered).expect("write");
    std::fs::write(dir.join("cut.mcpev"), &good[..good.len() / 3]).expect("write");
    bundles.insert(3, "tampered.mcpev".into());
    bundles.insert(9, "missing.mcpev".into());
    bundles.insert(15, "cut.mcpev".into());
    for json in [false, true] {
        let mut args = vec!["verify".to_string()];
        if json {
            args.push("--json".into());
        }
        args.extend(bundles.iter().cloned());
        let one = run(dir, &home, &with_jobs_after_verb(1, &args));
        assert_eq!(one.code, 2, "unreadable input: {one:?}");
        assert_eq!(
            one.stdout.lines().count(),
            bundles.len() - usize::from(!json)
        );
        assert!(one.stdout.contains("signature invalid"), "{one:?}");
        for jobs in [2, 4] {
            let many = run(dir, &home, &with_jobs_after_verb(jobs, &args));
            assert_same(&one, &many, &format!("verify json={json}, --jobs {jobs}"));
        }
    }
    // Grading the same inputs grades nothing, whatever the jobs.
    let graded: Vec<String> = bundles
        .iter()
        .filter(|b| *b != "missing.mcpev")
        .cloned()
        .collect();
    let one = run(dir, &home, &with_jobs(1, &graded));
    assert_eq!(one.code, 3, "{one:?}");
    assert!(one.stdout.is_empty(), "{one:?}");
    let many = run(dir, &home, &with_jobs(2, &graded));
    assert_same(&one, &many, "grade with invalid inputs, --jobs 2");
}

/// `verify --jobs N ARGS…` (the flag after the subcommand name).
fn with_jobs_after_verb(jobs: usize, args: &[String]) -> Vec<String> {
    let mut v = vec![args[0].clone(), "--jobs".into(), jobs.to_string()];
    v.extend(args[1..].iter().cloned());
    v
}

#[test]
fn jobs_must_be_a_positive_number() {
    let tmp = tempfile::tempdir().expect("tempdir");
    for bad in ["0", "-1", "many"] {
        let r = mcp_grade(tmp.path(), None, ["--jobs", bad, "x.mcpev"]);
        assert_eq!(r.code, 2, "--jobs {bad}: {r:?}");
        // clap reads `-1` as an unknown flag, not as the value of --jobs.
        assert!(r.stderr.contains("--jobs") || bad == "-1", "{r:?}");
    }
}
