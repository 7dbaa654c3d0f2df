//! The module layers of the collector, checked on the source text: a module imports only
//! from its own layer or a lower one, and no two modules of a folder import each other
//! (directly or round a cycle).
//!
//! Layers, lowest first: `journal`, `keys`, `printer` (base) <- `transport` <- `mcp` <-
//! `oauth` <- `legs` <- `run`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layer of a top-level module.
fn rank(top: &str) -> Option<u8> {
    Some(match top {
        "journal" | "keys" | "printer" => 0,
        "transport" => 1,
        "mcp" => 2,
        "oauth" => 3,
        "legs" => 4,
        "run" => 5,
        _ => return None,
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("src dir") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `(folder, module)` of a file: `oauth/login.rs` is `("oauth", "login")`, a folder's
/// `mod.rs` is `(folder, "mod")`, a top-level file `(name, "mod")`.
fn module_of(src: &Path, file: &Path) -> Option<(String, String)> {
    let rel = file.strip_prefix(src).ok()?;
    let parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    match parts.as_slice() {
        [top] if top == "lib" || top == "main" => None,
        [top] => Some((top.clone(), "mod".into())),
        [folder, module] => Some((folder.clone(), module.clone())),
        _ => panic!("unexpected nesting: {}", rel.display()),
    }
}

/// Every `crate::a::b` and `super::b` path in `text`, resolved to `(top, next)`.
fn references(text: &str, folder: &str, in_folder: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    for (i, _) in text.match_indices("crate::") {
        let rest = &text[i + "crate::".len()..];
        let top = ident(rest);
        let next = rest[top.len()..]
            .strip_prefix("::")
            .map(ident)
            .unwrap_or_default();
        out.push((top, next));
    }
    if in_folder {
        for (i, _) in text.match_indices("super::") {
            // `super::super` and `super::*` in a test module do not leave the file.
            if text[..i].ends_with("::") {
                continue;
            }
            let next = ident(&text[i + "super::".len()..]);
            out.push((folder.to_string(), next));
        }
    }
    out
}

#[test]
fn modules_import_only_their_own_layer_or_a_lower_one_and_no_folder_has_a_cycle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<(String, String)> =
        files.iter().filter_map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for f in &files {
        let Some((folder, module)) = module_of(&src, f) else {
            continue;
        };
        let text = std::fs::read_to_string(f).expect("read");
        // Unit tests may reach anywhere in the crate; the layers are about the code.
        let code = text.split("#[cfg(test)]\nmod ").next().unwrap_or(&text);
        let in_folder = f.parent() != Some(src.as_path());
        let from = rank(&folder).unwrap_or_else(|| panic!("{folder}: no layer"));
        for (top, next) in references(code, &folder, in_folder) {
            let to = rank(&top).unwrap_or_else(|| panic!("{}: crate::{top}", f.display()));
            if to > from {
                wrong.push(format!("{}: imports {top}::{next}", f.display()));
            }
            let sibling = (folder.clone(), next.clone());
            if top == folder && module != "mod" && sibling.1 != module {
                let target = if modules.contains(&sibling) {
                    next
                } else {
                    "mod".to_string()
                };
                edges
                    .entry((folder.clone(), module.clone()))
                    .or_default()
                    .insert(target);
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports from a higher layer:\n{}",
        wrong.join("\n")
    );

    // No cycle among the modules of a folder (depth-first, three colours).
    fn visit(
        node: &(String, String),
        edges: &BTreeMap<(String, String), BTreeSet<String>>,
        state: &mut BTreeMap<(String, String), u8>,
        path: &mut Vec<String>,
    ) {
        match state.get(node) {
            Some(2) => return,
            Some(1) => panic!(
                "import cycle in {}: {} -> {}",
                node.0,
                path.join(" -> "),
                node.1
            ),
            _ => {}
        }
        state.insert(node.clone(), 1);
        path.push(node.1.clone());
        for next in edges.get(node).into_iter().flatten() {
            visit(&(node.0.clone(), next.clone()), edges, state, path);
        }
        path.pop();
        state.insert(node.clone(), 2);
    }
    let mut state = BTreeMap::new();
    for node in &modules {
        visit(node, &edges, &mut state, &mut Vec::new());
    }
}
