//! No import circle larger than a pair inside any crate (issue #53).
//!
//! For every member of the workspace (read from the root `Cargo.toml`) this test builds the
//! module graph of its `src/` from the source text, one tree per crate root (`lib.rs`,
//! `main.rs`, `bin/*.rs`):
//! - the files are found from the `mod` declarations (`foo.rs`, `foo/mod.rs`, `#[path]`),
//!   inline `mod x { … }` blocks included; `#[cfg(test)]` items (unit tests, which may
//!   import upward) are left out;
//! - a file names a module by `use crate::…` / `use super::…` (grouped imports
//!   `{a, b::C}`, nested groups and `self` included) and by paths in its code
//!   (`crate::x::y`, `super::super::z`, `$crate::…`); comments, doc comments and string
//!   literals do not count, nor do visibilities (`pub(in crate::x)`);
//! - an edge runs from that file to the file that defines the longest existing module
//!   prefix of the path (`crate::error::Error` -> `error.rs`; `crate::Error` -> `lib.rs`).
//!
//! Tarjan's algorithm finds the strongly connected components; any larger than 2 is a
//! circle, reported with its files. Crates that still hold one are listed in
//! [`KNOWN_CIRCLES`] with the size of their largest circle: an unlisted crate fails on any
//! circle, a listed crate fails when a circle grows beyond its recorded size, and a listed
//! crate that became clean fails until its line is removed, so the list only shrinks.

#![allow(clippy::expect_used, reason = "test")]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates (workspace member folders) that still hold an import circle larger than a
/// pair, each with the size of its largest circle as measured when it was recorded. Lower a
/// number when a circle shrinks; remove a line when its crate is clean (the test asks for it).
const KNOWN_CIRCLES: &[(&str, usize)] = &[];

// ---------------------------------------------------------------------------------------
// Tokens: identifiers, `::` and punctuation, with comments, strings and chars dropped.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    /// A string literal's text (kept for `#[path = "…"]`, never scanned for paths).
    Str(String),
    PathSep,
    Punct(char),
}

fn lex(text: &str) -> Vec<Tok> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let ch = c[i];
        if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0usize;
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
                    i += 1;
                }
            }
        } else if ch == '"' {
            let (s, next) = quoted(&c, i + 1);
            out.push(Tok::Str(s));
            i = next;
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if c.get(i + 1) == Some(&'\\') {
                // Past the backslash and the escaped character (which may be a quote).
                i += 3;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            let next = c.get(i).copied();
            match (word.as_str(), next) {
                ("r" | "br" | "cr", Some('#' | '"')) if raw_string_starts(&c, i) => {
                    let mut hashes = 0;
                    while c.get(i) == Some(&'#') {
                        hashes += 1;
                        i += 1;
                    }
                    i += 1; // the opening quote
                    let start = i;
                    while i < c.len() {
                        if c[i] == '"' && (1..=hashes).all(|k| c.get(i + k) == Some(&'#')) {
                            break;
                        }
                        i += 1;
                    }
                    out.push(Tok::Str(c[start..i.min(c.len())].iter().collect()));
                    i += 1 + hashes;
                }
                ("r", Some('#')) => {
                    // A raw identifier: r#type.
                    let start = i + 1;
                    i += 1;
                    while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                        i += 1;
                    }
                    out.push(Tok::Ident(c[start..i].iter().collect()));
                }
                ("b" | "c", Some('"')) => {
                    let (s, next) = quoted(&c, i + 1);
                    out.push(Tok::Str(s));
                    i = next;
                }
                ("b", Some('\'')) => {
                    i += 1;
                    if c.get(i + 1) == Some(&'\\') {
                        i += 3;
                    } else {
                        i += 1;
                    }
                    while i < c.len() && c[i] != '\'' {
                        i += 1;
                    }
                    i += 1;
                }
                _ => out.push(Tok::Ident(word)),
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(Tok::Punct(ch));
            i += 1;
        }
    }
    out
}

/// Whether `r`/`br`/`cr` followed by `c[i..]` starts a raw string (`#`s then a quote).
fn raw_string_starts(c: &[char], mut i: usize) -> bool {
    while c.get(i) == Some(&'#') {
        i += 1;
    }
    c.get(i) == Some(&'"')
}

/// The text of a string whose opening quote is just before `i`, and the index after it.
fn quoted(c: &[char], mut i: usize) -> (String, usize) {
    let mut s = String::new();
    while i < c.len() && c[i] != '"' {
        if c[i] == '\\' {
            i += 1;
        }
        if let Some(&ch) = c.get(i) {
            s.push(ch);
        }
        i += 1;
    }
    (s, i + 1)
}

// ---------------------------------------------------------------------------------------
// One file: its `mod` declarations and the module paths it names.

/// A `mod` declaration: inside which inline modules of the file, its name, and how it is found.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ModDecl {
    scope: Vec<String>,
    name: String,
    /// `mod x { … }`: defined in this file.
    inline: bool,
    path_attr: Option<String>,
}

/// A path that starts with `crate` or `super`, written inside the inline modules `scope`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Named {
    scope: Vec<String>,
    path: Vec<String>,
}

#[derive(Debug, Default)]
struct Parsed {
    mods: Vec<ModDecl>,
    names: Vec<Named>,
}

fn is_ident(t: Option<&Tok>, word: &str) -> bool {
    matches!(t, Some(Tok::Ident(w)) if w == word)
}

fn is_punct(t: Option<&Tok>, ch: char) -> bool {
    t == Some(&Tok::Punct(ch))
}

/// The index after the group that opens at `i` (`(`, `[` or `{`), nested groups included.
fn skip_group(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < t.len() {
        match &t[i] {
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

/// The index after the item (or field, or statement) that starts at `i`: up to a `;` or `,`
/// outside any group and generics, or a `{ … }` block, and never past an unmatched closer.
fn skip_item(t: &[Tok], mut i: usize) -> usize {
    let mut depth = 0usize;
    let mut angles = 0usize;
    while i < t.len() {
        match &t[i] {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(close @ (')' | ']' | '}')) => {
                if depth == 0 {
                    return i;
                }
                depth -= 1;
                if depth == 0 && *close == '}' {
                    return i + 1;
                }
            }
            Tok::Punct('<') if depth == 0 => angles += 1,
            Tok::Punct('>') if depth == 0 => angles = angles.saturating_sub(1),
            Tok::Punct(';') if depth == 0 => return i + 1,
            Tok::Punct(',') if depth == 0 && angles == 0 => return i + 1,
            _ => {}
        }
        i += 1;
    }
    i
}

/// Reads the tree of a `use` from `i` (after `use`), adding each imported path under
/// `prefix` to `out`; returns the index after the tree.
fn use_tree(t: &[Tok], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    if is_punct(t.get(i), '{') {
        i += 1;
        while i < t.len() && !is_punct(t.get(i), '}') {
            i = use_tree(t, i, prefix, out);
            if is_punct(t.get(i), ',') {
                i += 1;
            }
        }
        return i + 1;
    }
    let mut path = prefix.to_vec();
    if t.get(i) == Some(&Tok::PathSep) {
        // `::name`: an external crate.
        path.push(String::from("::"));
        i += 1;
    }
    loop {
        if is_punct(t.get(i), '$') {
            i += 1;
        }
        match t.get(i) {
            Some(Tok::Punct('*')) => {
                out.push(path);
                return i + 1;
            }
            Some(Tok::Punct('{')) => return use_tree(t, i, &path, out),
            Some(Tok::Ident(word)) => {
                if word != "self" || path.is_empty() {
                    path.push(word.clone());
                }
                i += 1;
            }
            _ => {
                out.push(path);
                return i;
            }
        }
        if t.get(i) == Some(&Tok::PathSep) {
            i += 1;
            continue;
        }
        if is_ident(t.get(i), "as") {
            i += 2;
        }
        out.push(path);
        return i;
    }
}

/// Whether the attribute's tokens are `cfg(…)` with `test` in them and no `not`.
fn is_cfg_test(attr: &[Tok]) -> bool {
    is_ident(attr.first(), "cfg")
        && attr.iter().any(|t| is_ident(Some(t), "test"))
        && !attr.iter().any(|t| is_ident(Some(t), "not"))
}

fn parse(text: &str) -> Parsed {
    let t = lex(text);
    let mut parsed = Parsed::default();
    // The inline modules we are in, each with the brace depth inside its block.
    let mut scope: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut path_attr: Option<String> = None;
    let names = |scope: &[(String, usize)]| scope.iter().map(|(n, _)| n.clone()).collect();
    let mut i = 0;
    while i < t.len() {
        match &t[i] {
            Tok::Punct('#') => {
                let inner = is_punct(t.get(i + 1), '!');
                let open = if inner { i + 2 } else { i + 1 };
                if !is_punct(t.get(open), '[') {
                    i += 1;
                    continue;
                }
                let end = skip_group(&t, open);
                let attr = &t[open + 1..end.saturating_sub(1)];
                i = end;
                if is_cfg_test(attr) {
                    if inner {
                        if scope.is_empty() && depth == 0 {
                            // `#![cfg(test)]`: the whole file is a test.
                            return Parsed::default();
                        }
                    } else {
                        // Skip the further attributes, then the item.
                        while is_punct(t.get(i), '#') && is_punct(t.get(i + 1), '[') {
                            i = skip_group(&t, i + 1);
                        }
                        i = skip_item(&t, i);
                        path_attr = None;
                    }
                } else if is_ident(attr.first(), "path")
                    && is_punct(attr.get(1), '=')
                    && let Some(Tok::Str(p)) = attr.get(2)
                {
                    path_attr = Some(p.clone());
                }
            }
            Tok::Ident(w) if w == "pub" && is_punct(t.get(i + 1), '(') => {
                // `pub(crate)`, `pub(in crate::x)`: a visibility names no dependency.
                i = skip_group(&t, i + 1);
            }
            Tok::Ident(w) if w == "mod" => {
                let Some(Tok::Ident(name)) = t.get(i + 1) else {
                    i += 1;
                    continue;
                };
                let inline = is_punct(t.get(i + 2), '{');
                parsed.mods.push(ModDecl {
                    scope: names(&scope),
                    name: name.clone(),
                    inline,
                    path_attr: path_attr.take(),
                });
                if inline {
                    depth += 1;
                    scope.push((name.clone(), depth));
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Tok::Ident(w) if w == "use" => {
                let mut paths = Vec::new();
                i = use_tree(&t, i + 1, &[], &mut paths);
                for path in paths {
                    if matches!(path.first().map(String::as_str), Some("crate" | "super")) {
                        parsed.names.push(Named {
                            scope: names(&scope),
                            path,
                        });
                    }
                }
            }
            Tok::Ident(w)
                if (w == "crate" || w == "super") && t.get(i + 1) == Some(&Tok::PathSep) =>
            {
                let mut path = vec![w.clone()];
                i += 2;
                while let Some(Tok::Ident(seg)) = t.get(i) {
                    path.push(seg.clone());
                    i += 1;
                    if t.get(i) == Some(&Tok::PathSep)
                        && matches!(t.get(i + 1), Some(Tok::Ident(_)))
                    {
                        i += 1;
                    } else {
                        break;
                    }
                }
                parsed.names.push(Named {
                    scope: names(&scope),
                    path,
                });
            }
            Tok::Punct('{') => {
                depth += 1;
                i += 1;
            }
            Tok::Punct('}') => {
                if scope.last().is_some_and(|(_, d)| *d == depth) {
                    scope.pop();
                }
                depth = depth.saturating_sub(1);
                i += 1;
            }
            Tok::Punct(';') => {
                path_attr = None;
                i += 1;
            }
            _ => i += 1,
        }
    }
    parsed
}

// ---------------------------------------------------------------------------------------
// One crate root: its files, its module map and its graph.

/// The module graph of one crate root: file -> files it names (paths relative to `base`).
#[derive(Debug, Default)]
struct Graph {
    edges: BTreeMap<String, BTreeSet<String>>,
    /// `mod` declarations whose file was not found.
    missing: Vec<String>,
}

fn rel(base: &Path, path: &Path) -> String {
    path.strip_prefix(base)
        .unwrap_or(path)
        .to_string_lossy()
        .into_owned()
}

/// Builds the graph of the crate whose root file is `root`, naming files relative to `base`.
fn crate_graph(base: &Path, root: &Path) -> Graph {
    struct File {
        path: PathBuf,
        module: Vec<String>,
        parsed: Parsed,
    }
    let mut graph = Graph::default();
    let mut modules: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    let mut files: Vec<File> = Vec::new();
    // (file, its module path, the folder of its child modules)
    let root_dir = root.parent().unwrap_or(Path::new("")).to_path_buf();
    let mut todo = vec![(root.to_path_buf(), Vec::<String>::new(), root_dir)];
    while let Some((path, module, child_dir)) = todo.pop() {
        let text = std::fs::read_to_string(&path).expect("source file readable");
        let parsed = parse(&text);
        let name = rel(base, &path);
        modules
            .entry(module.clone())
            .or_default()
            .push(name.clone());
        graph.edges.entry(name.clone()).or_default();
        for decl in &parsed.mods {
            let mut full = module.clone();
            full.extend(decl.scope.iter().cloned());
            full.push(decl.name.clone());
            if decl.inline {
                modules.entry(full).or_default().push(name.clone());
                continue;
            }
            let mut dir = child_dir.clone();
            dir.extend(decl.scope.iter());
            let found = match &decl.path_attr {
                Some(p) if decl.scope.is_empty() => {
                    let own = path.parent().unwrap_or(Path::new("")).join(p);
                    own.is_file()
                        .then(|| (own.clone(), own.parent().map(Path::to_path_buf)))
                }
                Some(p) => {
                    let own = dir.join(p);
                    own.is_file()
                        .then(|| (own.clone(), own.parent().map(Path::to_path_buf)))
                }
                None => {
                    let flat = dir.join(format!("{}.rs", decl.name));
                    let folder = dir.join(&decl.name).join("mod.rs");
                    if flat.is_file() {
                        Some((flat, Some(dir.join(&decl.name))))
                    } else if folder.is_file() {
                        Some((folder, Some(dir.join(&decl.name))))
                    } else {
                        None
                    }
                }
            };
            match found {
                Some((file, Some(children))) => todo.push((file, full, children)),
                _ => graph
                    .missing
                    .push(format!("{name}: mod {} (no file found)", decl.name)),
            }
        }
        files.push(File {
            path,
            module,
            parsed,
        });
    }
    for file in &files {
        let from = rel(base, &file.path);
        for named in &file.parsed.names {
            let mut here = file.module.clone();
            here.extend(named.scope.iter().cloned());
            let mut segs = named.path.iter().peekable();
            let mut abs = if segs.peek().is_some_and(|s| *s == "crate") {
                segs.next();
                Vec::new()
            } else {
                let mut cur = here;
                let mut ok = true;
                while segs.peek().is_some_and(|s| *s == "super") {
                    segs.next();
                    ok &= cur.pop().is_some();
                }
                if !ok {
                    continue;
                }
                cur
            };
            abs.extend(segs.cloned());
            let target = (0..=abs.len())
                .rev()
                .find_map(|n| modules.get(&abs[..n]))
                .cloned()
                .unwrap_or_default();
            for to in target {
                if to != from {
                    graph.edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
    }
    graph
}

/// The strongly connected components of the graph (Tarjan), each sorted.
fn components(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        let edges = s.edges;
        for w in edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).expect("visited");
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut comp = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            comp.sort();
            s.out.push(comp);
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out
}

// ---------------------------------------------------------------------------------------
// The workspace.

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace-tests sits in the workspace")
        .to_path_buf()
}

/// The member folders listed in the root `Cargo.toml`.
fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let list = manifest
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the root Cargo.toml lists [workspace] members");
    list.lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .flat_map(|l| l.split(','))
        .map(|m| m.trim().trim_matches('"').to_string())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The crate roots of a member: `src/lib.rs`, `src/main.rs`, `src/bin/*.rs`, `src/bin/*/main.rs`.
fn crate_roots(member: &Path) -> Vec<PathBuf> {
    let src = member.join("src");
    let mut roots: Vec<PathBuf> = ["lib.rs", "main.rs"]
        .iter()
        .map(|f| src.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Ok(bins) = std::fs::read_dir(src.join("bin")) {
        let mut bins: Vec<PathBuf> = bins
            .map(|e| e.expect("bin entry").path())
            .filter_map(|p| {
                if p.is_dir() {
                    Some(p.join("main.rs")).filter(|m| m.is_file())
                } else {
                    p.extension().is_some_and(|e| e == "rs").then_some(p)
                }
            })
            .collect();
        bins.sort();
        roots.extend(bins);
    }
    roots
}

/// A circle larger than a pair: its files (sorted) and its edges, `a -> b, c` per file.
#[derive(Debug)]
struct Circle {
    files: Vec<String>,
    ties: Vec<String>,
}

impl Circle {
    fn describe(&self) -> String {
        format!(
            "{}\n    {}",
            self.files.join(", "),
            self.ties.join("\n    ")
        )
    }
}

/// A member's circles larger than a pair, largest first, and its unfound `mod` files.
fn circles(base: &Path, member: &str) -> (Vec<Circle>, Vec<String>) {
    let mut big = Vec::new();
    let mut missing = Vec::new();
    for root in crate_roots(&base.join(member)) {
        let graph = crate_graph(base, &root);
        missing.extend(graph.missing.iter().cloned());
        for files in components(&graph.edges) {
            if files.len() <= 2 {
                continue;
            }
            let ties = files
                .iter()
                .map(|f| {
                    let to: Vec<&str> = graph.edges[f]
                        .iter()
                        .filter(|t| files.contains(t))
                        .map(String::as_str)
                        .collect();
                    format!("{f} -> {}", to.join(", "))
                })
                .collect();
            big.push(Circle { files, ties });
        }
    }
    big.sort_by_key(|c| std::cmp::Reverse(c.files.len()));
    (big, missing)
}

/// What is wrong with a member's circles, given the size [`KNOWN_CIRCLES`] records for it.
fn verdict(member: &str, big: &[Circle], known: Option<usize>) -> Vec<String> {
    let largest = big.first().map_or(0, |c| c.files.len());
    match known {
        None => big
            .iter()
            .map(|c| {
                format!(
                    "{member}: an import circle of {} files: {}",
                    c.files.len(),
                    c.describe()
                )
            })
            .collect(),
        Some(size) if largest > size => big
            .iter()
            .filter(|c| c.files.len() > size)
            .map(|c| {
                format!(
                    "{member}: an import circle of {} files, more than the {size} recorded in \
                     KNOWN_CIRCLES: {}",
                    c.files.len(),
                    c.describe()
                )
            })
            .collect(),
        Some(_) if largest == 0 => vec![format!(
            "{member} holds no import circle larger than a pair any more: remove its line from \
             KNOWN_CIRCLES"
        )],
        Some(_) => Vec::new(),
    }
}

#[test]
fn no_crate_holds_an_import_circle_larger_than_a_pair() {
    let base = workspace_root();
    let members = members(&base);
    let mut failures = Vec::new();
    for (listed, _) in KNOWN_CIRCLES {
        if !members.iter().any(|m| m == listed) {
            failures.push(format!(
                "KNOWN_CIRCLES lists `{listed}`, which is not a workspace member: remove its line"
            ));
        }
    }
    for member in &members {
        let (big, missing) = circles(&base, member);
        for m in missing {
            failures.push(format!("{member}: {m}"));
        }
        let known = KNOWN_CIRCLES
            .iter()
            .find(|(name, _)| name == member)
            .map(|(_, size)| *size);
        failures.extend(verdict(member, &big, known));
    }
    assert!(failures.is_empty(), "\n{}\n", failures.join("\n"));
}

#[test]
fn the_known_circles_only_shrink() {
    let circle = |n: usize| Circle {
        files: (0..n).map(|i| format!("f{i}.rs")).collect(),
        ties: Vec::new(),
    };
    // (a) an unlisted crate fails on any circle larger than a pair, naming its files.
    let unlisted = verdict("k", &[circle(3)], None);
    assert_eq!(unlisted.len(), 1);
    assert!(unlisted[0].starts_with("k: an import circle of 3 files: f0.rs, f1.rs, f2.rs"));
    assert!(verdict("k", &[], None).is_empty());
    // (b) a listed crate fails when a circle grows beyond the recorded size, not before.
    assert!(verdict("k", &[circle(5), circle(3)], Some(5)).is_empty());
    assert!(verdict("k", &[circle(4)], Some(5)).is_empty());
    let grown = verdict("k", &[circle(6), circle(3)], Some(5));
    assert_eq!(grown.len(), 1);
    assert!(grown[0].contains("6 files, more than the 5 recorded"));
    // (c) a listed crate that became clean fails until its line is removed.
    assert_eq!(
        verdict("k", &[], Some(5)),
        [
            "k holds no import circle larger than a pair any more: remove its line from \
          KNOWN_CIRCLES"
        ]
    );
}

// ---------------------------------------------------------------------------------------
// The parser on small examples.

fn named(text: &str) -> Vec<String> {
    named_of(&parse(text))
}

#[test]
fn grouped_and_nested_imports_name_each_leaf() {
    assert_eq!(
        named("use crate::a::{b, c::D};"),
        ["crate::a::b", "crate::a::c::D"]
    );
    assert_eq!(
        named("pub(crate) use crate::{a::{self, B}, c::{d::{E, F as G}, *}};"),
        [
            "crate::a",
            "crate::a::B",
            "crate::c::d::E",
            "crate::c::d::F",
            "crate::c"
        ]
    );
    assert_eq!(
        named("use {std::fmt, super::x::Y, ::tokio::io};"),
        ["super::x::Y"]
    );
    assert_eq!(named("use super::super::x::Y;"), ["super::super::x::Y"]);
    assert_eq!(named("use super::*;"), ["super"]);
    assert_eq!(
        named("use self::child::X; use std::io;"),
        Vec::<String>::new()
    );
}

#[test]
fn paths_in_code_are_named() {
    assert_eq!(
        named("fn f<'a>(x: &'a str) -> crate::g::H { let c = 'c'; super::super::k::run::<u8>(x) }"),
        ["crate::g::H", "super::super::k::run"]
    );
    assert_eq!(
        named("macro_rules! m { () => { $crate::e::KeyError } }"),
        ["crate::e::KeyError"]
    );
    assert_eq!(named("pub(in crate::a) fn f() {}"), Vec::<String>::new());
}

#[test]
fn comments_and_strings_name_nothing() {
    let text = r####"
        // crate::a::b
        /* crate::c /* nested crate::d */ still crate::e */
        /// [`crate::f`]
        //! super::g
        const S: &str = "crate::h \" crate::i";
        const R: &str = r#"crate::j " crate::k"#;
        const B: &[u8] = b"crate::l";
        const C: char = '"';
        const Q: [char; 2] = ['\'','"']; const BQ: u8 = b'\''; const BR: &[u8] = br#"crate::o"#;
        fn real() -> crate::m::N { todo() }
    "####;
    assert_eq!(named(text), ["crate::m::N"]);
}

#[test]
fn test_only_items_are_left_out() {
    let text = "
        use crate::kept;
        #[cfg(test)]
        mod tests { use crate::up::Top; fn t() { crate::up::call(); } }
        #[cfg(test)]
        #[allow(dead_code)]
        use crate::test_only;
        #[cfg(test)]
        fn helper<A, B>() -> crate::h::H {}
        struct S { #[cfg(test)] a: crate::f::F, b: crate::g::G }
        #[cfg(not(test))]
        use crate::not_test;
        #[cfg(test)]
        mod file_tests;
    ";
    assert_eq!(
        named(text),
        ["crate::kept", "crate::g::G", "crate::not_test"]
    );
    assert!(parse(text).mods.is_empty());
}

#[test]
fn mod_declarations_are_read_with_their_scope_and_path() {
    let parsed = parse(
        r#"
        mod a;
        pub(crate) mod b;
        #[cfg(feature = "x")]
        #[path = "c_impl.rs"]
        mod c;
        mod d { mod e; fn f() -> super::a::A {} }
        use crate::after;
        "#,
    );
    let mods: Vec<_> = parsed
        .mods
        .iter()
        .map(|m| {
            (
                m.scope.join("::"),
                m.name.as_str(),
                m.inline,
                m.path_attr.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        mods,
        [
            (String::new(), "a", false, None),
            (String::new(), "b", false, None),
            (String::new(), "c", false, Some("c_impl.rs")),
            (String::new(), "d", true, None),
            (String::from("d"), "e", false, None),
        ]
    );
    assert_eq!(named_of(&parsed), ["d | super::a::A", "crate::after"]);
}

fn named_of(parsed: &Parsed) -> Vec<String> {
    parsed
        .names
        .iter()
        .map(|n| {
            let path = n.path.join("::");
            if n.scope.is_empty() {
                path
            } else {
                format!("{} | {path}", n.scope.join("::"))
            }
        })
        .collect()
}

#[test]
fn a_circle_of_three_files_is_found_and_a_pair_is_not() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = dir.path().join("krate/src");
    std::fs::create_dir_all(src.join("b")).expect("folders");
    let write = |path: &str, text: &str| std::fs::write(src.join(path), text).expect("write");
    write("lib.rs", "mod a; mod b; mod c; mod p; mod q; pub use a::A;");
    // a -> b/mod.rs (via b::x's longest module prefix) -> b/inner.rs -> c -> a.
    write("a.rs", "pub struct A; fn f() { crate::b::x(); }");
    write(
        "b/mod.rs",
        "mod inner; pub fn x() { inner::y() }\nuse self::inner::Y; use crate::b::inner::Z;",
    );
    write(
        "b/inner.rs",
        "use super::super::c::C; // crate::p::P\npub struct Z;",
    );
    write("c.rs", "pub struct C(crate::A2); use crate::a::{A as A2};");
    // p <-> q: a pair, allowed.
    write("p.rs", "use crate::q::Q; pub struct P;");
    write(
        "q.rs",
        "use crate::p::P; pub struct Q; #[cfg(test)] mod tests { use crate::a::A; }",
    );
    let (big, missing) = circles(dir.path(), "krate");
    assert!(missing.is_empty(), "{missing:?}");
    let found: Vec<_> = big.iter().map(|c| c.files.clone()).collect();
    assert_eq!(
        found,
        [[
            "krate/src/a.rs",
            "krate/src/b/inner.rs",
            "krate/src/b/mod.rs",
            "krate/src/c.rs"
        ]]
    );
    assert_eq!(
        big[0].ties,
        [
            "krate/src/a.rs -> krate/src/b/mod.rs",
            "krate/src/b/inner.rs -> krate/src/c.rs",
            "krate/src/b/mod.rs -> krate/src/b/inner.rs",
            "krate/src/c.rs -> krate/src/a.rs"
        ]
    );
}
