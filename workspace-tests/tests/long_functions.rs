//! No production function longer than 100 lines (issue #53).
//!
//! For every member of the workspace (read from the root `Cargo.toml`) this test reads
//! each `.rs` file under its `src/` (tests, benches and examples live outside it and are
//! not read) and measures every `fn` with a body, from the line of its `fn` keyword to the
//! line of the brace that closes its body. The scanner matches braces on a token stream
//! in which comments, strings (raw and byte strings included), chars and lifetimes are
//! dropped, so a `{` in a string or a `'}'` does not count.
//!
//! Unit tests are left out: a `#[test]` function (`#[tokio::test]` and other `…::test`
//! attributes too), any item under `#[cfg(test)]`, and the file of a `#[cfg(test)] mod x;`.
//!
//! A function over [`MAX_LINES`] fails the test with `file:line: fn name (N lines)`,
//! unless [`ALLOWED`] names it with a reason. An allowed function that is no longer over
//! the limit (or gone) fails too, until its line is removed, so the list only shrinks.

#![allow(clippy::expect_used, reason = "test")]

use std::path::{Path, PathBuf};

/// The longest a production function may be, in lines.
const MAX_LINES: usize = 100;

/// Functions left longer than [`MAX_LINES`] on purpose: `(file from the workspace root,
/// function name, why it stays long)`.
const ALLOWED: &[(&str, &str, &str)] = &[
    (
        "mcp-connections/src/error.rs",
        "fmt",
        "a flat match, one sentence per variant of the crate's error; the parts with logic are \
         small Display types beside it, and a derive cannot say NotReady's source (the failure \
         inside its state)",
    ),
    (
        "mcp-testkit/src/behavior.rs",
        "call",
        "a flat match from each fake tool behaviour to the code that plays it, one short arm each",
    ),
    (
        "mcp-bench/src/main.rs",
        "run",
        "a flat list of the benchmark's rows, one measure! line each, then the report; the report \
         could be a function of its own (not this change's file)",
    ),
    (
        "mcp-catalog/src/formats/toml_parse.rs",
        "parse_in",
        "a configuration's top-level keys in one match, in the order they are read; grew past \
         100 with the catalog-wide defaults, whose change owns the file now",
    ),
    (
        "mcp-client/src/transport/http.rs",
        "handshake",
        "builds the HTTP client of a connection and shakes hands over it; mcp-client's transport \
         folder is being reworked by another change, which owns the split",
    ),
    (
        "mcp-client/src/skills/read.rs",
        "read_verified",
        "reads one skill file, takes its one content, verifies it and checks the frontmatter: four \
         steps that would read better split, by the skills change that owns the file",
    ),
];

// ---------------------------------------------------------------------------------------
// Tokens: identifiers and punctuation with their line, comments and literals dropped.

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    /// An identifier, keyword or number.
    Word(String),
    /// One punctuation character.
    Punct(char),
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Tok {
    kind: Kind,
    /// 1-based line of the token's first character.
    line: usize,
}

impl Tok {
    fn is_punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(&self.kind, Kind::Word(x) if x == w)
    }

    fn word(&self) -> Option<&str> {
        match &self.kind {
            Kind::Word(w) => Some(w),
            Kind::Punct(_) => None,
        }
    }
}

/// A cursor over the characters of a file that counts lines as it moves.
struct Chars {
    c: Vec<char>,
    i: usize,
    line: usize,
}

impl Chars {
    fn at(&self, k: usize) -> Option<char> {
        self.c.get(self.i + k).copied()
    }

    fn bump(&mut self) {
        if self.at(0) == Some('\n') {
            self.line += 1;
        }
        self.i += 1;
    }

    fn bump_n(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    /// Past a `/* … */` comment (nested ones included), at its `/*`.
    fn skip_block_comment(&mut self) {
        let mut depth = 0usize;
        while let Some(ch) = self.at(0) {
            if ch == '/' && self.at(1) == Some('*') {
                depth += 1;
                self.bump_n(2);
            } else if ch == '*' && self.at(1) == Some('/') {
                depth -= 1;
                self.bump_n(2);
                if depth == 0 {
                    return;
                }
            } else {
                self.bump();
            }
        }
    }

    /// Past a `"…"` string with escapes, at its opening quote.
    fn skip_string(&mut self) {
        self.bump();
        while let Some(ch) = self.at(0) {
            match ch {
                '\\' => self.bump_n(2),
                '"' => {
                    self.bump();
                    return;
                }
                _ => self.bump(),
            }
        }
    }

    /// Past a raw string `#…#"…"#…#`, at its first `#` or quote (after the `r`).
    fn skip_raw_string(&mut self) {
        let mut hashes = 0;
        while self.at(0) == Some('#') {
            hashes += 1;
            self.bump();
        }
        self.bump(); // the opening quote
        while let Some(ch) = self.at(0) {
            self.bump();
            if ch == '"' && (0..hashes).all(|k| self.at(k) == Some('#')) {
                self.bump_n(hashes);
                return;
            }
        }
    }

    /// Past a char literal (`'x'`, `'\n'`, `'\u{7d}'`) or a lifetime (`'a`), at its quote.
    fn skip_quote(&mut self) {
        if self.at(1) == Some('\\') {
            self.bump_n(3); // the quote, the backslash and the escaped character
            while self.at(0).is_some_and(|ch| ch != '\'') {
                self.bump();
            }
            self.bump();
        } else if self.at(2) == Some('\'') {
            self.bump_n(3);
        } else {
            self.bump();
            while self.at(0).is_some_and(is_word_char) {
                self.bump();
            }
        }
    }
}

fn is_word_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

fn lex(text: &str) -> Vec<Tok> {
    let mut s = Chars {
        c: text.chars().collect(),
        i: 0,
        line: 1,
    };
    let mut out = Vec::new();
    while let Some(ch) = s.at(0) {
        if ch.is_whitespace() {
            s.bump();
        } else if ch == '/' && s.at(1) == Some('/') {
            while s.at(0).is_some_and(|c| c != '\n') {
                s.bump();
            }
        } else if ch == '/' && s.at(1) == Some('*') {
            s.skip_block_comment();
        } else if ch == '"' {
            s.skip_string();
        } else if ch == '\'' {
            s.skip_quote();
        } else if is_word_char(ch) {
            let line = s.line;
            let start = s.i;
            while s.at(0).is_some_and(is_word_char) {
                s.bump();
            }
            let word: String = s.c[start..s.i].iter().collect();
            let next = s.at(0);
            let raw_prefix = matches!(word.as_str(), "r" | "br" | "cr");
            if raw_prefix && (next == Some('"') || (next == Some('#') && raw_follows(&s))) {
                s.skip_raw_string();
            } else if matches!(word.as_str(), "b" | "c") && next == Some('"') {
                s.skip_string();
            } else if word == "b" && next == Some('\'') {
                s.skip_quote();
            } else {
                out.push(Tok {
                    kind: Kind::Word(word),
                    line,
                });
            }
        } else {
            out.push(Tok {
                kind: Kind::Punct(ch),
                line: s.line,
            });
            s.bump();
        }
    }
    out
}

/// Whether the `#`s at the cursor open a raw string (`r#"`), not a raw identifier (`r#fn`).
fn raw_follows(s: &Chars) -> bool {
    let mut k = 0;
    while s.at(k) == Some('#') {
        k += 1;
    }
    s.at(k) == Some('"')
}

// ---------------------------------------------------------------------------------------
// Functions and their lengths.

/// A function with a body, as found in one file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Function {
    name: String,
    /// Line of its `fn` keyword.
    line: usize,
    /// Lines from the `fn` keyword to the closing brace, both included.
    lines: usize,
}

/// What one file holds: its functions outside unit tests, and the modules it declares as
/// test-only (`#[cfg(test)] mod x;`).
#[derive(Debug, Default)]
struct Scan {
    functions: Vec<Function>,
    test_modules: Vec<String>,
}

/// The index just past the group that opens at `open` (`{`, `(` or `[`), matched among all
/// three kinds of brackets.
fn group_end(toks: &[Tok], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Punct('{' | '(' | '[') => depth += 1,
            Kind::Punct('}' | ')' | ']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    toks.len()
}

/// The index just past the item that starts at `start`: its first `;` or `{…}` group at
/// bracket depth 0 (attributes before it are skipped as groups).
fn item_end(toks: &[Tok], start: usize) -> usize {
    let mut k = start;
    while k < toks.len() {
        match toks[k].kind {
            Kind::Punct(';') => return k + 1,
            Kind::Punct('{') => return group_end(toks, k),
            Kind::Punct('(' | '[') => k = group_end(toks, k),
            _ => k += 1,
        }
    }
    toks.len()
}

/// Whether an attribute's tokens (inside `#[…]`) mark a unit test: `test`, `…::test`, or a
/// `cfg` that names `test` and no `not`.
fn is_test_attribute(attr: &[Tok]) -> bool {
    let words: Vec<&str> = attr.iter().filter_map(Tok::word).collect();
    match words.first() {
        Some(&"cfg") => words.contains(&"test") && !words.contains(&"not"),
        Some(_) => {
            let path_end = attr
                .iter()
                .position(|t| t.is_punct('('))
                .unwrap_or(attr.len());
            attr[..path_end].last().is_some_and(|t| t.is_word("test"))
        }
        None => false,
    }
}

fn scan(text: &str) -> Scan {
    let toks = lex(text);
    let mut out = Scan::default();
    let mut k = 0;
    // Set by a test attribute: the next item (after its other attributes) is skipped.
    let mut test_item = false;
    while k < toks.len() {
        let t = &toks[k];
        if t.is_punct('#') && toks.get(k + 1).is_some_and(|n| n.is_punct('!')) {
            // An inner attribute: `#![cfg(test)]` makes the whole file a test module.
            let end = group_end(&toks, k + 2);
            if is_test_attribute(&toks[(k + 3).min(end)..end.saturating_sub(1)]) {
                return Scan::default();
            }
            k = end;
        } else if t.is_punct('#') && toks.get(k + 1).is_some_and(|n| n.is_punct('[')) {
            let end = group_end(&toks, k + 1);
            test_item |= is_test_attribute(&toks[k + 2..end.saturating_sub(1)]);
            k = end;
        } else if test_item {
            let end = item_end(&toks, k);
            let item = &toks[k..end];
            if let Some(m) = item.iter().position(|t| t.is_word("mod"))
                && item.last().is_some_and(|t| t.is_punct(';'))
                && let Some(name) = item.get(m + 1).and_then(Tok::word)
            {
                out.test_modules.push(name.to_owned());
            }
            test_item = false;
            k = end;
        } else if t.is_word("fn")
            && let Some(name) = toks.get(k + 1).and_then(Tok::word)
        {
            // The body is the first `{` at depth 0 after the signature; a `;` first means
            // a declaration without one (in a trait or an `extern` block).
            let mut b = k + 2;
            while b < toks.len() && !toks[b].is_punct('{') && !toks[b].is_punct(';') {
                b = match toks[b].kind {
                    Kind::Punct('(' | '[') => group_end(&toks, b),
                    _ => b + 1,
                };
            }
            if toks.get(b).is_some_and(|t| t.is_punct('{')) {
                let close = group_end(&toks, b) - 1;
                out.functions.push(Function {
                    name: name.to_owned(),
                    line: t.line,
                    lines: toks[close].line - t.line + 1,
                });
            }
            // Into the body: functions nested in it are measured too.
            k = b + 1;
        } else {
            k += 1;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// The workspace.

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace-tests sits in the workspace root")
        .to_path_buf()
}

fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("root Cargo.toml");
    let (_, rest) = manifest
        .split_once("members = [")
        .expect("the root Cargo.toml lists [workspace] members");
    let (list, _) = rest.split_once(']').expect("the members list ends");
    list.split([',', '\n'])
        .map(|m| {
            m.split('#')
                .next()
                .unwrap_or_default()
                .trim()
                .trim_matches('"')
        })
        .filter(|m| !m.is_empty())
        .map(str::to_owned)
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Where a `mod name;` in `file` loads from: `name.rs`, and the folder `name/` that holds
/// `name/mod.rs` or the module's own children. Both sit in the folder of the file's
/// children: its own folder for `lib.rs`, `main.rs` and `mod.rs`, else the folder named
/// like the file.
fn module_paths(file: &Path, name: &str) -> (PathBuf, PathBuf) {
    let dir = file.parent().expect("a file has a folder");
    let stem = file
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("a file name");
    let children = if matches!(stem, "lib" | "main" | "mod") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    (children.join(format!("{name}.rs")), children.join(name))
}

/// Every production function over [`MAX_LINES`] in the workspace, as `(file from the
/// root, function)`, sorted.
fn long_functions(root: &Path) -> Vec<(String, Function)> {
    let mut files = Vec::new();
    for member in members(root) {
        rust_files(&root.join(member).join("src"), &mut files);
    }
    files.sort();
    let scans: Vec<(PathBuf, Scan)> = files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).expect("a readable source file");
            let scan = scan(&text);
            (f, scan)
        })
        .collect();
    // The file of a test-only module, and every file in its folder, is test code.
    let test_modules: Vec<(PathBuf, PathBuf)> = scans
        .iter()
        .flat_map(|(f, s)| s.test_modules.iter().map(|m| module_paths(f, m)))
        .collect();
    let is_test = |f: &Path| {
        test_modules
            .iter()
            .any(|(file, dir)| f == file || f.starts_with(dir))
    };
    let mut long = Vec::new();
    for (file, scan) in &scans {
        if is_test(file) {
            continue;
        }
        let rel = file
            .strip_prefix(root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        for function in &scan.functions {
            if function.lines > MAX_LINES {
                long.push((rel.clone(), function.clone()));
            }
        }
    }
    long
}

#[test]
fn no_production_function_is_over_100_lines() {
    let long = long_functions(&workspace_root());
    let allowed = |file: &str, name: &str| ALLOWED.iter().any(|(f, n, _)| *f == file && *n == name);
    let failures: Vec<String> = long
        .iter()
        .filter(|(file, f)| !allowed(file, &f.name))
        .map(|(file, f)| format!("{file}:{}: fn {} ({} lines)", f.line, f.name, f.lines))
        .collect();
    assert!(
        failures.is_empty(),
        "functions over {MAX_LINES} lines (split them into named steps, or list one in ALLOWED \
         with the reason it reads better whole):\n{}",
        failures.join("\n")
    );
    let stale: Vec<String> = ALLOWED
        .iter()
        .filter(|(file, name, _)| !long.iter().any(|(f, l)| f == file && &l.name == name))
        .map(|(file, name, _)| format!("{file}: fn {name}"))
        .collect();
    assert!(
        stale.is_empty(),
        "listed in ALLOWED but no longer over {MAX_LINES} lines (remove the line):\n{}",
        stale.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// The scanner itself.

/// A function named `name` whose body has `body_lines` lines of statements: it is
/// `body_lines + 3` lines long (its `fn` line, the statements, its `0` and its `}`).
fn synthetic(name: &str, body_lines: usize) -> String {
    let mut text = format!("pub fn {name}(x: [u8; 2]) -> usize {{\n");
    for i in 0..body_lines {
        text.push_str(&format!("    let _v{i} = x.len();\n"));
    }
    text.push_str("    0\n}\n");
    text
}

fn lengths(text: &str) -> Vec<(String, usize)> {
    scan(text)
        .functions
        .into_iter()
        .map(|f| (f.name, f.lines))
        .collect()
}

#[test]
fn a_function_is_measured_from_its_fn_line_to_its_closing_brace() {
    let text = format!(
        "use x;\n\n{}{}",
        synthetic("short", 97),
        synthetic("long", 98)
    );
    let scanned = scan(&text);
    assert_eq!(
        scanned.functions,
        vec![
            Function {
                name: "short".to_owned(),
                line: 3,
                lines: 100,
            },
            Function {
                name: "long".to_owned(),
                line: 103,
                lines: 101,
            },
        ]
    );
    let over: Vec<&str> = scanned
        .functions
        .iter()
        .filter(|f| f.lines > MAX_LINES)
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(
        over,
        ["long"],
        "a 101-line function is over the limit, 100 is not"
    );
}

#[test]
fn braces_in_strings_chars_and_comments_do_not_count() {
    let text = r####"
fn a() {
    let s = "}}} \" }";
    let r = r#"}" }"#;
    let b = b'}';
    let c = '}';
    let e = '\'';
    let u = '\u{7d}';
    let bs = br##"}"##;
    // }
    /* } /* nested } */ } */
    let l: &'static str = "";
}
fn b<'a>(x: &'a str) -> &'a str {
    x
}
"####;
    assert_eq!(lengths(text), [("a".to_owned(), 12), ("b".to_owned(), 3)]);
}

#[test]
fn declarations_without_a_body_and_nested_functions() {
    let text = "trait T {\n    fn f(&self) -> [u8; 2];\n    fn g(&self) {\n        fn inner() {}\n    }\n}\nfn pointer(f: fn(u8) -> u8) -> u8 { f(1) }\n";
    assert_eq!(
        lengths(text),
        [
            ("g".to_owned(), 3),
            ("inner".to_owned(), 1),
            ("pointer".to_owned(), 1)
        ]
    );
}

#[test]
fn unit_tests_are_left_out() {
    let text = format!(
        "#[cfg(test)]\nmod tests {{\n{}}}\n#[cfg(test)]\nmod more_tests;\n#[tokio::test(flavor = \"multi_thread\")]\n{}#[test]\n#[allow(clippy::x)]\n{}#[cfg(not(test))]\n{}",
        synthetic("in_module", 120),
        synthetic("tokio_test", 120),
        synthetic("plain_test", 120),
        synthetic("production", 1),
    );
    let scanned = scan(&text);
    assert_eq!(lengths(&text), [("production".to_owned(), 4)]);
    assert_eq!(scanned.test_modules, ["more_tests"]);
    assert!(
        scan(&format!("#![cfg(test)]\n{}", synthetic("t", 1)))
            .functions
            .is_empty()
    );
}

#[test]
fn a_test_module_sits_where_its_mod_line_says() {
    assert_eq!(
        module_paths(Path::new("/w/c/src/lib.rs"), "tests"),
        (
            PathBuf::from("/w/c/src/tests.rs"),
            PathBuf::from("/w/c/src/tests")
        )
    );
    assert_eq!(
        module_paths(Path::new("/w/c/src/set/mod.rs"), "tests"),
        (
            PathBuf::from("/w/c/src/set/tests.rs"),
            PathBuf::from("/w/c/src/set/tests")
        )
    );
    assert_eq!(
        module_paths(Path::new("/w/c/src/error.rs"), "message_tests"),
        (
            PathBuf::from("/w/c/src/error/message_tests.rs"),
            PathBuf::from("/w/c/src/error/message_tests")
        )
    );
}
