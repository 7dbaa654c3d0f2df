//! No import cycle between the source files of `evaluator/src` (the rules import the kit,
//! never the registry `rules.rs` nor `benchmark/`, which sit on top of them); and the
//! tests of the reader that finds cycles (evaluator/tests/support/imports.rs, shared with
//! `schema/tests/cycles.rs` and `collector/tests/cycles.rs`).

mod support;

use support::imports;

#[test]
fn no_import_cycle_between_source_files() {
    let g = imports::graph(&imports::src_of("evaluator"));
    let found: Vec<String> = g
        .cycles()
        .into_iter()
        .map(|c| {
            let why = g.explain(&c);
            format!("  {c}\n{why}")
        })
        .collect();
    assert!(
        found.is_empty(),
        "evaluator/src has import cycles between files:\n{}",
        found.concat()
    );
}

#[test]
fn no_rule_imports_the_registry_or_the_benchmark_definitions() {
    let src = imports::src_of("evaluator");
    let g = imports::graph(&src);
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).expect("read_dir").flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut files = Vec::new();
    walk(&src.join("checks"), &mut files);
    assert!(files.len() > 30, "the rules under checks/");
    let mut bad = Vec::new();
    for f in &files {
        let name = f
            .strip_prefix(&src)
            .expect("under src")
            .to_string_lossy()
            .replace('\\', "/");
        for to in g.imports_of(&name) {
            if to == "rules.rs" || to.starts_with("benchmark/") {
                bad.push(format!("{name} -> {to}"));
            }
        }
    }
    assert!(bad.is_empty(), "rules import the registry: {bad:#?}");
}

/// The cycles of a crate made of `files` (paths under `src/`, and their text).
fn cycles_of(files: &[(&str, &str)]) -> Vec<String> {
    let dir = tempfile::tempdir().expect("tempdir");
    for (path, text) in files {
        let p = dir.path().join("src").join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    imports::graph(&dir.path().join("src")).cycles()
}

#[test]
fn the_reader_reports_each_cycle_from_its_first_file() {
    let c = cycles_of(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "pub fn f() { crate::b::g() }\n"),
        ("b.rs", "use crate::c::h;\npub fn g() { h() }\n"),
        ("c.rs", "pub fn h() { crate::a::f() }\n"),
    ]);
    assert_eq!(c, ["a.rs -> b.rs -> c.rs -> a.rs"]);
}

#[test]
fn super_self_grouped_uses_and_both_folder_layouts_are_imports() {
    // `x/mod.rs` with children; `y.rs` with `y/` children; `super::`, `self::`, a
    // grouped `use crate::{..}` and a path through a bound module name.
    let c = cycles_of(&[
        ("lib.rs", "pub mod x;\npub mod y;\npub mod z;\n"),
        (
            "x/mod.rs",
            "pub mod p;\npub mod q;\npub struct Top;\npub fn f() { self::q::g() }\n",
        ),
        ("x/p.rs", "use super::Top;\npub fn p(_: Top) {}\n"),
        (
            "x/q.rs",
            "pub fn g() {}\npub fn r() { super::p::p(super::Top) }\n",
        ),
        ("y.rs", "pub mod w;\npub struct Y;\n"),
        (
            "y/w.rs",
            "use crate::{x::q, z::Z};\npub fn w() -> Z { q::g(); Z }\n",
        ),
        (
            "z.rs",
            "use crate::y;\npub struct Z;\npub fn z() { y::w::w(); }\n",
        ),
    ]);
    assert_eq!(
        c,
        [
            "x/mod.rs -> x/q.rs -> x/mod.rs",
            "x/mod.rs -> x/q.rs -> x/p.rs -> x/mod.rs",
            "y/w.rs -> z.rs -> y/w.rs",
        ]
    );
}

#[test]
fn declarations_reexports_test_code_comments_and_strings_are_not_imports() {
    let c = cycles_of(&[
        // lib.rs declares and re-exports: no import, so no lib.rs -> a.rs -> lib.rs.
        ("lib.rs", "pub mod a;\npub mod b;\npub use b::B;\npub struct Root;\n"),
        (
            "a.rs",
            "//! Uses [`crate::b::B`] in its docs only.\n\
             /* crate::b::f() */\n\
             pub const S: &str = \"crate::b::f()\";\n\
             pub fn a(_: crate::Root) -> &'static str { S }\n\
             #[cfg(test)]\nmod tests {\n    use crate::b::B;\n    #[test] fn t() { let _ = B; }\n}\n\
             #[cfg(test)]\nmod more;\n",
        ),
        ("a/more.rs", "use crate::b::f;\n"),
        // b.rs names crate::B, which lib.rs re-exports from b.rs itself: no b -> lib.
        ("b.rs", "pub struct B;\npub fn f() -> crate::B { crate::a::a(crate::Root); B }\n"),
    ]);
    assert!(c.is_empty(), "{c:?}");
}

#[test]
fn a_path_through_a_reexport_is_an_import_of_the_defining_file() {
    let c = cycles_of(&[
        ("lib.rs", "pub mod m;\npub mod r;\npub use m::*;\n"),
        ("m/mod.rs", "mod inner;\npub use inner::Thing;\n"),
        (
            "m/inner.rs",
            "pub struct Thing;\npub fn f() { crate::r::g() }\n",
        ),
        ("r.rs", "pub fn g() { let _ = crate::Thing; }\n"),
    ]);
    assert_eq!(c, ["m/inner.rs -> r.rs -> m/inner.rs"]);
}
