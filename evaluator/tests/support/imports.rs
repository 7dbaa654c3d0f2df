//! The import graph between the source files of one crate, read from the text of its
//! `src/`, and the import cycles in it. Shared by `schema/tests/cycles.rs`,
//! `collector/tests/cycles.rs` and `evaluator/tests/cycles.rs`.
//!
//! **The modules.** The tree is the one `rustc` builds: from `lib.rs`, each `mod x;` is
//! `x.rs` or `x/mod.rs` beside a `lib.rs`/`mod.rs`, and `foo/x.rs` or `foo/x/mod.rs` under
//! a `foo.rs`; `mod x { .. }` is a module inside its file.
//!
//! **An import.** File A imports file B when code of A names an item of a module of B:
//! a `use` (grouped trees, `self`, `as`, globs) or a path in the code (`crate::b::f()`,
//! `super::b::T`, `self::b::X`, a child module's name, a name a `use` bound). A path is
//! followed through every `use` it meets, so naming `crate::T` that `lib.rs` re-exports
//! from `model.rs` is an import of `model.rs`, not of `lib.rs`.
//!
//! **Not an import.**
//! * `mod x;` / `pub mod x;`: a parent declaring (and so exporting) its children.
//! * A path that ends at a module (`use crate::checks::common;`, `pub(in crate::a)`):
//!   naming a module uses nothing in its file; the paths through the name count.
//! * A re-export (`pub use`, `pub(crate) use`, any visibility) whose name the file's own
//!   code does not use (for a `pub use x::*`, none of the names of `x`): it only passes
//!   names through, and the files that use them are routed to where they are defined.
//! * Test code: an item under `#[cfg(test)]` or `#[test]` (so `#[cfg(test)] mod tests {
//!   .. }` and the files of `#[cfg(test)] mod tests;`), a file whose first attribute is
//!   `#![cfg(test)]`. Tests may import freely.
//! * Comments of every kind, so doc comments and their intra-doc links
//!   (`[`crate::grade`]`), and the text of string and character literals.
//!
//! Known blind spots, none of them present in this repository: a `#[path]` module outside
//! test code (refused with a panic), macros that build paths from pieces, and a function
//! named like a module of the same parent (`crate::grade(..)` is read as the module).
#![allow(dead_code, unreachable_pub)]

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    /// `::`
    Sep,
    Punct(char),
}

/// The tokens of `text` with their line numbers; comments, strings, characters, numbers
/// and lifetimes are dropped.
fn tokens(text: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident_char = |ch: char| ch.is_alphanumeric() || ch == '_';
    // Skips a string body from just after its opening `"`, with `hashes` closing `#`s.
    let skip_string = |i: &mut usize, line: &mut usize, raw: bool, hashes: usize| {
        while *i < c.len() {
            match c[*i] {
                '\\' if !raw => *i += 2,
                '"' if c[*i + 1..]
                    .iter()
                    .take(hashes)
                    .filter(|&&h| h == '#')
                    .count()
                    == hashes =>
                {
                    *i += 1 + hashes;
                    return;
                }
                ch => {
                    if ch == '\n' {
                        *line += 1;
                    }
                    *i += 1;
                }
            }
        }
    };
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            // Block comments nest in Rust.
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    if c[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
            }
        } else if ch == '"' {
            i += 1;
            skip_string(&mut i, &mut line, false, 0);
        } else if ch == '\'' {
            // A character literal ('x', '\n', '\u{..}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
            }
        } else if ch.is_ascii_digit() {
            while i < c.len()
                && (ident_char(c[i])
                    || (c[i] == '.' && c.get(i + 1).is_some_and(|d| d.is_ascii_digit())))
            {
                i += 1;
            }
        } else if ident_char(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            // String and byte prefixes: b"..", r"..", r#".."#, br"..", c"..", b'x'.
            let prefix = matches!(word.as_str(), "b" | "r" | "br" | "rb" | "c" | "cr");
            if prefix && c.get(i) == Some(&'\'') && word == "b" {
                i += 1;
                if c.get(i) == Some(&'\\') {
                    i += 1;
                }
                i += 1;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
                continue;
            }
            if prefix && matches!(c.get(i), Some('"') | Some('#')) {
                let raw = word.contains('r');
                let mut hashes = 0;
                while c.get(i + hashes) == Some(&'#') {
                    hashes += 1;
                }
                if c.get(i + hashes) == Some(&'"') && (raw || hashes == 0) {
                    i += hashes + 1;
                    skip_string(&mut i, &mut line, raw, hashes);
                    continue;
                }
            }
            if word == "r" && c.get(i) == Some(&'#') {
                // A raw identifier: r#type.
                i += 1;
                let start = i;
                while i < c.len() && ident_char(c[i]) {
                    i += 1;
                }
                out.push((Tok::Ident(c[start..i].iter().collect()), line));
                continue;
            }
            out.push((Tok::Ident(word), line));
        } else if ch == ':' && next == Some(':') {
            out.push((Tok::Sep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// One leaf of a `use` tree.
#[derive(Debug, Clone)]
struct UseLeaf {
    path: Vec<String>,
    /// The name it binds (`None` for a glob).
    binding: Option<String>,
    public: bool,
    line: usize,
}

#[derive(Debug, Default)]
struct Module {
    file: usize,
    parent: Option<usize>,
    children: BTreeMap<String, usize>,
    uses: Vec<UseLeaf>,
    items: BTreeSet<String>,
    /// Paths of two or more segments in the code (not in `use`), with their lines.
    paths: Vec<(Vec<String>, usize)>,
    /// Every identifier of the code outside `use` declarations.
    idents: BTreeSet<String>,
}

/// The file-level import graph of one crate.
pub struct Graph {
    /// Files relative to `src/`, `/`-separated.
    pub files: Vec<String>,
    /// `from -> to -> (line in from, the path that imports)`.
    pub edges: BTreeMap<usize, BTreeMap<usize, (usize, String)>>,
}

#[derive(Debug, Clone, Copy)]
enum Res {
    Module(usize),
    Item(usize),
}

struct Builder {
    src: PathBuf,
    files: Vec<String>,
    modules: Vec<Module>,
}

/// Skips a balanced group opening at `toks[i]` (`(`, `[` or `{`); returns the index after it.
fn skip_group(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0i32;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// Skips one item from `toks[i]`: up to a `;` outside any group, or through its first
/// `{ .. }` block.
fn skip_item(toks: &[(Tok, usize)], mut i: usize) -> usize {
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct(';') => return i + 1,
            Tok::Punct('{') => return skip_group(toks, i),
            Tok::Punct('(' | '[') => i = skip_group(toks, i),
            _ => i += 1,
        }
    }
    i
}

fn ident(t: Option<&(Tok, usize)>) -> Option<&str> {
    match t {
        Some((Tok::Ident(s), _)) => Some(s),
        _ => None,
    }
}

/// Parses a `use` tree from `toks[i]` under `prefix`; returns the index after it.
fn use_tree(
    toks: &[(Tok, usize)],
    mut i: usize,
    prefix: Vec<String>,
    public: bool,
    out: &mut Vec<UseLeaf>,
) -> usize {
    let line = toks.get(i).map_or(0, |t| t.1);
    let mut path = prefix;
    if toks.get(i).map(|t| &t.0) == Some(&Tok::Sep) {
        i += 1; // `use ::std::..`: an extern path; kept as it is.
    }
    loop {
        match toks.get(i).map(|t| &t.0) {
            Some(Tok::Punct('*')) => {
                out.push(UseLeaf {
                    path,
                    binding: None,
                    public,
                    line,
                });
                return i + 1;
            }
            Some(Tok::Punct('{')) => {
                i += 1;
                loop {
                    match toks.get(i).map(|t| &t.0) {
                        Some(Tok::Punct('}')) | None => return i + 1,
                        Some(Tok::Punct(',')) => i += 1,
                        _ => i = use_tree(toks, i, path.clone(), public, out),
                    }
                }
            }
            Some(Tok::Ident(s)) => {
                if s == "self" && !path.is_empty() {
                    // `a::{self}` binds `a`.
                } else {
                    path.push(s.clone());
                }
                i += 1;
                if toks.get(i).map(|t| &t.0) == Some(&Tok::Sep) {
                    i += 1;
                    continue;
                }
                let mut binding = path.last().cloned();
                if ident(toks.get(i)) == Some("as") {
                    binding = ident(toks.get(i + 1)).map(str::to_string);
                    i += 2;
                }
                out.push(UseLeaf {
                    path,
                    binding,
                    public,
                    line,
                });
                return i;
            }
            _ => return i,
        }
    }
}

const ITEM_KEYWORDS: &[&str] = &[
    "fn", "struct", "enum", "trait", "type", "const", "static", "union",
];

impl Builder {
    fn add_file(&mut self, path: &Path) -> usize {
        let rel = path
            .strip_prefix(&self.src)
            .expect("under src")
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        self.files.push(rel);
        self.files.len() - 1
    }

    /// Reads the module in `file` (a new module, child of `parent`), and its children.
    fn read(&mut self, file: &Path, parent: Option<usize>) -> usize {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let file_id = self.add_file(file);
        let root = self.modules.len();
        self.modules.push(Module {
            file: file_id,
            parent,
            ..Default::default()
        });
        let toks = tokens(&text);
        let name = file
            .file_stem()
            .expect("stem")
            .to_string_lossy()
            .into_owned();
        let dir = file.parent().expect("dir").to_path_buf();
        // Where `mod x;` of this file's top module looks for `x`.
        let child_dir = if matches!(name.as_str(), "lib" | "main" | "mod") {
            dir
        } else {
            dir.join(&name)
        };
        // `#![cfg(test)]` at the top: the whole file is test code.
        if toks.len() > 6
            && toks[0].0 == Tok::Punct('#')
            && toks[1].0 == Tok::Punct('!')
            && ident(toks.get(3)) == Some("cfg")
            && ident(toks.get(5)) == Some("test")
        {
            return root;
        }
        // Open modules: (module, its directory for `mod x;`, brace depth of its body).
        let mut stack: Vec<(usize, PathBuf, i32)> = vec![(root, child_dir, 0)];
        let mut depth = 0i32;
        let mut public = false;
        let mut i = 0;
        while i < toks.len() {
            let (module, mod_dir, body_depth) = stack.last().cloned().expect("a module");
            let at_module_level = depth == body_depth;
            match &toks[i].0 {
                Tok::Punct('#') => {
                    // A run of attributes: the item after it is test code when one of
                    // them is `#[cfg(test)]` or `#[test]`.
                    let (mut test, mut path) = (false, false);
                    while toks.get(i).map(|t| &t.0) == Some(&Tok::Punct('#')) {
                        let mut j = i + 1;
                        if toks.get(j).map(|t| &t.0) == Some(&Tok::Punct('!')) {
                            j += 1;
                        }
                        let end = skip_group(&toks, j);
                        let attr: Vec<&str> =
                            toks[j..end].iter().filter_map(|t| ident(Some(t))).collect();
                        test |= attr == ["cfg", "test"] || attr == ["test"];
                        path |= attr.first() == Some(&"path");
                        i = end;
                    }
                    if test {
                        i = skip_item(&toks, i);
                    } else if path {
                        panic!(
                            "{}:{}: a #[path] module outside test code: not read here",
                            file.display(),
                            toks[i.min(toks.len() - 1)].1
                        );
                    }
                    continue;
                }
                Tok::Punct('{') => depth += 1,
                Tok::Punct('}') => {
                    if depth == body_depth && stack.len() > 1 {
                        stack.pop();
                    }
                    depth -= 1;
                }
                Tok::Ident(w) if w == "pub" => {
                    public = true;
                    i += 1;
                    if toks.get(i).map(|t| &t.0) == Some(&Tok::Punct('(')) {
                        i = skip_group(&toks, i);
                    }
                    continue;
                }
                Tok::Ident(w) if w == "use" => {
                    let mut leaves = Vec::new();
                    let mut j = use_tree(&toks, i + 1, Vec::new(), public, &mut leaves);
                    while j < toks.len() && toks[j].0 != Tok::Punct(';') {
                        j += 1;
                    }
                    self.modules[module].uses.extend(leaves);
                    i = j + 1;
                    public = false;
                    continue;
                }
                Tok::Ident(w) if w == "mod" && at_module_level => {
                    let child = ident(toks.get(i + 1)).expect("mod name").to_string();
                    match toks.get(i + 2).map(|t| &t.0) {
                        Some(Tok::Punct(';')) => {
                            let flat = mod_dir.join(format!("{child}.rs"));
                            let nested = mod_dir.join(&child).join("mod.rs");
                            let path = if flat.exists() { flat } else { nested };
                            let id = self.read(&path, Some(module));
                            self.modules[module].children.insert(child, id);
                            i += 3;
                        }
                        Some(Tok::Punct('{')) => {
                            let id = self.modules.len();
                            self.modules.push(Module {
                                file: file_id,
                                parent: Some(module),
                                ..Default::default()
                            });
                            self.modules[module].children.insert(child.clone(), id);
                            depth += 1;
                            stack.push((id, mod_dir.join(child), depth));
                            i += 3;
                        }
                        _ => i += 2,
                    }
                    public = false;
                    continue;
                }
                Tok::Ident(w) if at_module_level && ITEM_KEYWORDS.contains(&w.as_str()) => {
                    if let Some(name) = ident(toks.get(i + 1)) {
                        self.modules[module].items.insert(name.to_string());
                    }
                }
                Tok::Ident(w) if w == "macro_rules" => {
                    if let Some(name) = ident(toks.get(i + 2)) {
                        self.modules[module].items.insert(name.to_string());
                    }
                }
                Tok::Ident(w) => {
                    self.modules[module].idents.insert(w.clone());
                    let starts = i == 0 || toks[i - 1].0 != Tok::Sep;
                    if starts && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Sep) {
                        let mut path = vec![w.clone()];
                        let mut j = i + 1;
                        while toks.get(j).map(|t| &t.0) == Some(&Tok::Sep) {
                            match ident(toks.get(j + 1)) {
                                Some(s) => path.push(s.to_string()),
                                None => break,
                            }
                            j += 2;
                        }
                        self.modules[module].paths.push((path, toks[i].1));
                    }
                }
                _ => {}
            }
            public = false;
            i += 1;
        }
        root
    }

    /// What `name` is inside `module`: a child module, a name a `use` bound, an item
    /// defined there, or a name a glob brings.
    fn step(&self, module: usize, name: &str, fuel: u32) -> Option<Res> {
        if fuel == 0 {
            return None;
        }
        let m = &self.modules[module];
        if let Some(&child) = m.children.get(name) {
            return Some(Res::Module(child));
        }
        for u in &m.uses {
            if u.binding.as_deref() == Some(name) {
                if let Some(r) = self.resolve(&u.path, module, fuel - 1) {
                    return Some(r);
                }
            }
        }
        if m.items.contains(name) {
            return Some(Res::Item(module));
        }
        for u in m.uses.iter().filter(|u| u.binding.is_none()) {
            if let Some(Res::Module(g)) = self.resolve(&u.path, module, fuel - 1) {
                if g != module {
                    if let Some(r) = self.step(g, name, fuel - 1) {
                        return Some(r);
                    }
                }
            }
        }
        None
    }

    /// Resolves a path seen in `ctx`; `None` for a path outside the crate (or unknown).
    fn resolve(&self, path: &[String], ctx: usize, fuel: u32) -> Option<Res> {
        if fuel == 0 || path.is_empty() {
            return None;
        }
        let mut rest = &path[1..];
        let mut res = match path[0].as_str() {
            "crate" => Res::Module(0),
            "self" => Res::Module(ctx),
            "super" => {
                let mut m = self.modules[ctx].parent?;
                while rest.first().map(String::as_str) == Some("super") {
                    m = self.modules[m].parent?;
                    rest = &rest[1..];
                }
                Res::Module(m)
            }
            name => self.step(ctx, name, fuel - 1)?,
        };
        for seg in rest {
            match res {
                Res::Item(_) => break,
                Res::Module(m) => match self.step(m, seg, fuel - 1) {
                    Some(r) => res = r,
                    // A name this reader does not see defined (a macro, say): in `m`.
                    None => {
                        res = Res::Item(m);
                        break;
                    }
                },
            }
        }
        Some(res)
    }
}

/// Builds the graph of the crate whose `src/` is `src` (from `lib.rs`, else `main.rs`).
pub fn graph(src: &Path) -> Graph {
    let lib = src.join("lib.rs");
    let root = if lib.exists() {
        lib
    } else {
        src.join("main.rs")
    };
    let mut b = Builder {
        src: src.to_path_buf(),
        files: Vec::new(),
        modules: Vec::new(),
    };
    b.read(&root, None);
    let mut edges: BTreeMap<usize, BTreeMap<usize, (usize, String)>> = BTreeMap::new();
    let mut add = |from: usize, to: usize, line: usize, path: &[String]| {
        if from != to {
            edges
                .entry(from)
                .or_default()
                .entry(to)
                .or_insert((line, path.join("::")));
        }
    };
    const FUEL: u32 = 24;
    for (id, m) in b.modules.iter().enumerate() {
        for u in &m.uses {
            let res = b.resolve(&u.path, id, FUEL);
            // A re-export counts only when this file's own code uses what it brings.
            let counts = !u.public
                || match (&u.binding, res) {
                    (Some(name), _) => m.idents.contains(name),
                    (None, Some(Res::Module(t))) => {
                        let t = &b.modules[t];
                        t.items
                            .iter()
                            .chain(t.children.keys())
                            .chain(t.uses.iter().filter_map(|u| u.binding.as_ref()))
                            .any(|n| m.idents.contains(n))
                    }
                    (None, _) => false,
                };
            match res {
                Some(Res::Item(t)) if counts => add(m.file, b.modules[t].file, u.line, &u.path),
                Some(Res::Module(t)) if u.binding.is_none() && counts => {
                    add(m.file, b.modules[t].file, u.line, &u.path)
                }
                _ => {}
            }
        }
        for (path, line) in &m.paths {
            if let Some(Res::Item(t)) = b.resolve(path, id, FUEL) {
                add(m.file, b.modules[t].file, *line, path);
            }
        }
    }
    Graph {
        files: b.files,
        edges,
    }
}

impl Graph {
    /// Every import that lies on a cycle, as the shortest cycle through it, written
    /// `a.rs -> b.rs -> a.rs` from its first file in sort order; sorted, without repeats.
    pub fn cycles(&self) -> Vec<String> {
        let succ = |u: usize| {
            self.edges
                .get(&u)
                .into_iter()
                .flat_map(|m| m.keys().copied())
        };
        let mut found = BTreeSet::new();
        for (&u, targets) in &self.edges {
            for &v in targets.keys() {
                // Shortest path v ~> u, breadth first; with u -> v it closes a cycle.
                let mut prev: BTreeMap<usize, usize> = BTreeMap::new();
                let mut queue = VecDeque::from([v]);
                let mut seen = BTreeSet::from([v]);
                while let Some(x) = queue.pop_front() {
                    if x == u {
                        break;
                    }
                    for y in succ(x) {
                        if seen.insert(y) {
                            prev.insert(y, x);
                            queue.push_back(y);
                        }
                    }
                }
                if !seen.contains(&u) {
                    continue;
                }
                let mut cycle = vec![u];
                let mut x = u;
                while x != v {
                    x = prev[&x];
                    cycle.push(x);
                }
                cycle.reverse(); // v .. u
                cycle.rotate_right(1); // u, v .. (u again at the end below)
                let min = (0..cycle.len())
                    .min_by_key(|&k| &self.files[cycle[k]])
                    .expect("non-empty");
                cycle.rotate_left(min);
                let mut names: Vec<&str> = cycle.iter().map(|&k| self.files[k].as_str()).collect();
                names.push(names[0]);
                found.insert(names.join(" -> "));
            }
        }
        found.into_iter().collect()
    }

    /// The import behind each step of `cycle` (as [`Graph::cycles`] writes it), one line each.
    pub fn explain(&self, cycle: &str) -> String {
        let id = |name: &str| self.files.iter().position(|f| f == name);
        let names: Vec<&str> = cycle.split(" -> ").collect();
        let mut out = String::new();
        for w in names.windows(2) {
            let why = id(w[0])
                .zip(id(w[1]))
                .and_then(|(a, b)| self.edges.get(&a)?.get(&b))
                .map_or("?".to_string(), |(line, path)| {
                    format!("line {line}: {path}")
                });
            out.push_str(&format!("    {} -> {}  ({why})\n", w[0], w[1]));
        }
        out
    }

    /// The files a file imports (names relative to `src/`).
    pub fn imports_of(&self, file: &str) -> Vec<&str> {
        let Some(id) = self.files.iter().position(|f| f == file) else {
            return Vec::new();
        };
        self.edges
            .get(&id)
            .into_iter()
            .flat_map(|m| m.keys().map(|&k| self.files[k].as_str()))
            .collect()
    }
}

/// The `src/` of a crate of this workspace, by folder name.
pub fn src_of(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(krate)
        .join("src")
}

/// Fails with every cycle of the crate and the imports that make it.
pub fn assert_no_cycle(krate: &str) {
    let g = graph(&src_of(krate));
    let cycles = g.cycles();
    assert!(
        cycles.is_empty(),
        "{krate}/src has import cycles between files:\n{}",
        cycles
            .iter()
            .map(|c| format!("  {c}\n{}", g.explain(c)))
            .collect::<String>()
    );
}
