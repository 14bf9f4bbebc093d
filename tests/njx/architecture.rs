//! The crate's layering, checked on its source (ARCHITECTURE.md, "Invariants"):
//!
//! - `src/` holds the layers as folders and nothing else flat (`lib.rs`, `error.rs`, `bin/`
//!   aside), and each layer imports only itself and the layers below it ([`LAYERS`], lowest
//!   first): source → records → analyses → outputs, never back;
//! - no analysis imports another (nor one archive job another): what two of them share
//!   lives in a lower layer;
//! - a command (`cmd/<tool>.rs`) is one tool's front: it calls one analysis (or archive
//!   job), its own;
//! - only `source/` opens inputs: zip archives, SQLite files, Parquet files and compressed
//!   streams are read nowhere else ([`INPUT_READERS`]);
//! - nothing of clap is used outside `cmd/` but `ValueEnum`, derived by the enums whose
//!   values are command-line values where they are defined;
//! - no cycle among modules (a module = a file; a folder's `mod.rs` and the modules inside
//!   it may use each other, as Rust's declarations and `super::` do).
//!
//! The imports are read from the source text: every `crate::a::b…` path (`use` lines,
//! grouped `crate::{…}` imports and paths in code alike) and every `super::…` path, comments
//! left out, resolved to the deepest module file they name.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The layers, lowest first, with what each holds: a module may import its own layer and
/// those before it.
const LAYERS: &[(&str, &str)] = &[
    ("error", "the one error type"),
    ("util", "helpers that know nothing of profiles"),
    ("output", "formats, tables, charts, notes, progress"),
    ("records", "the record types"),
    ("source", "every kind of input"),
    ("hlo", "XLA's HLO dumps"),
    ("derived", "trees, executions, GPU time, partial results"),
    ("analysis", "one module per analysis"),
    (
        "report",
        "every analysis of one reading, composed (njx-report)",
    ),
    (
        "diff",
        "two runs compared, each side read into the analyses' samples (njx-diff)",
    ),
    ("archives", "capture, combine and their writer"),
    ("cmd", "each tool's command line"),
];

/// The layers whose children are jobs that must not import each other, and the children
/// that are shared by the jobs instead.
const JOBS: &[(&str, &[&str])] = &[("analysis", &[]), ("archives", &["writer"])];

/// What reads an input's container: used only in `src/source/`, so that every tool reads
/// every kind of input the same way.
const INPUT_READERS: &[&str] = &[
    "ZipArchive::new",
    "Connection::open",
    "SerializedFileReader",
    "ParquetRecordBatchReader",
    "XzDecoder",
    "GzDecoder",
];

type ModPath = Vec<String>;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every module file under `src/` (binaries and `lib.rs` aside) by module path.
fn modules() -> BTreeMap<ModPath, String> {
    fn walk(dir: &Path, prefix: &[String], out: &mut BTreeMap<ModPath, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            if path.is_dir() {
                if prefix.is_empty() && name == "bin" {
                    continue;
                }
                let mut p = prefix.to_vec();
                p.push(name);
                walk(&path, &p, out);
            } else if let Some(stem) = name.strip_suffix(".rs") {
                if prefix.is_empty() && stem == "lib" {
                    continue;
                }
                let mut p = prefix.to_vec();
                if stem != "mod" {
                    p.push(stem.to_string());
                }
                out.insert(p, fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&src(), &[], &mut out);
    out
}

/// The text without comments (line and block), so doc links do not count as imports.
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_str = false;
    while i < b.len() {
        if in_str {
            if b[i] == b'\\' {
                out.push_str("  ");
                i += 2;
                continue;
            }
            if b[i] == b'"' {
                in_str = false;
                out.push('"');
            } else {
                // Paths inside strings are not imports.
                out.push(if b[i] == b'\n' { '\n' } else { ' ' });
            }
            i += 1;
        } else if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else {
            if b[i] == b'"' && (i == 0 || b[i - 1] != b'\'') {
                in_str = true;
            }
            // Non-ASCII bytes only occur in strings and comments; keep the text ASCII.
            out.push(if b[i].is_ascii() { b[i] as char } else { ' ' });
            i += 1;
        }
    }
    out
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The paths after `at` in `code`: `a::b::c`, and for `a::{b, c::{d}}` each of `a::b`,
/// `a::c::d`.
fn paths_at(code: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut segs = prefix;
    loop {
        while at < code.len() && code[at] == b' ' {
            at += 1;
        }
        if at < code.len() && code[at] == b'{' {
            // A group: each comma-separated item at depth 1.
            let mut depth = 0;
            let mut start = at + 1;
            let mut i = at;
            while i < code.len() {
                match code[i] {
                    b'{' => depth += 1,
                    b'}' | b',' if depth == 1 => {
                        paths_at(code, start, segs.clone(), out);
                        start = i + 1;
                        if code[i] == b'}' {
                            return;
                        }
                    }
                    b'}' => depth -= 1,
                    _ => {}
                }
                i += 1;
            }
            return;
        }
        let s = at;
        while at < code.len() && is_ident(code[at]) {
            at += 1;
        }
        if s == at {
            break;
        }
        segs.push(String::from_utf8_lossy(&code[s..at]).into_owned());
        if code[at..].starts_with(b"::") {
            at += 2;
        } else {
            break;
        }
    }
    if !segs.is_empty() {
        out.push(segs);
    }
}

/// The module paths `module`'s code names, `crate::` and `super::` paths alike, as
/// absolute paths (not yet resolved to module files).
fn referenced(module: &ModPath, code: &str) -> Vec<Vec<String>> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b':') {
            continue;
        }
        paths_at(b, at + "crate::".len(), Vec::new(), &mut out);
    }
    for (at, _) in code.match_indices("super::") {
        if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b':') {
            continue;
        }
        // `super` of a file module is its folder's module; of a folder's `mod.rs`, the
        // folder's parent.
        let mut base: ModPath = module.clone();
        let mut rest = at;
        while code[rest..].starts_with("super::") {
            base.pop();
            rest += "super::".len();
        }
        paths_at(b, rest, base, &mut out);
    }
    out
}

/// The module graph: module → modules it imports (resolved to the deepest module file).
fn graph(mods: &BTreeMap<ModPath, String>) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let resolve = |path: &[String]| -> Option<ModPath> {
        (1..=path.len())
            .rev()
            .map(|n| path[..n].to_vec())
            .find(|p| mods.contains_key(p))
    };
    let mut g = BTreeMap::new();
    for (m, text) in mods {
        let code = code_of(text);
        let mut deps = BTreeSet::new();
        for path in referenced(m, &code) {
            if let Some(to) = resolve(&path).filter(|to| to != m) {
                deps.insert(to);
            }
        }
        g.insert(m.clone(), deps);
    }
    g
}

fn show(p: &[String]) -> String {
    if p.is_empty() {
        "crate".to_string()
    } else {
        p.join("::")
    }
}

fn layer_of(p: &[String]) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(name, _)| p.first().map(String::as_str) == Some(*name))
}

fn is_ancestor(a: &[String], b: &[String]) -> bool {
    a.len() < b.len() && b[..a.len()] == *a
}

#[test]
fn src_holds_the_layers_as_folders() {
    let mut flat: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let stem = n.strip_suffix(".rs").unwrap_or(n);
            !matches!(n.as_str(), "lib.rs" | "bin") && !LAYERS.iter().any(|(l, _)| *l == stem)
        })
        .collect();
    flat.sort();
    assert!(
        flat.is_empty(),
        "src/ has entries that are not a layer ({}): move them into the layer that owns \
         them, or add a layer to LAYERS in tests/njx/architecture.rs and ARCHITECTURE.md",
        flat.join(", ")
    );
}

#[test]
fn each_layer_imports_only_the_layers_below_it() {
    let mods = modules();
    let g = graph(&mods);
    let mut bad = Vec::new();
    for (from, deps) in &g {
        let Some(lf) = layer_of(from) else { continue };
        for to in deps {
            if let Some(lt) = layer_of(to).filter(|&lt| lt > lf) {
                bad.push(format!(
                    "{} ({}) imports {} ({})",
                    show(from),
                    LAYERS[lf].0,
                    show(to),
                    LAYERS[lt].0
                ));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layering:\n{}",
        bad.join("\n")
    );
}

/// The analysis (or archive job) a module belongs to: (layer, job), `None` for the rest.
fn job(p: &[String]) -> Option<(String, String)> {
    let (layer, shared) = JOBS
        .iter()
        .find(|(l, _)| p.first().map(String::as_str) == Some(*l))?;
    let child = p.get(1)?;
    (!shared.contains(&child.as_str())).then(|| (layer.to_string(), child.clone()))
}

#[test]
fn each_command_calls_one_analysis() {
    let g = graph(&modules());
    let mut bad = Vec::new();
    let mut commands = 0;
    for (from, deps) in &g {
        if from.first().map(String::as_str) != Some("cmd") || from.len() < 2 {
            continue;
        }
        commands += 1;
        let jobs: BTreeSet<(String, String)> = deps.iter().filter_map(|d| job(d)).collect();
        if jobs.len() > 1 {
            let names: Vec<String> = jobs.iter().map(|(l, j)| format!("{l}::{j}")).collect();
            bad.push(format!("{} calls {}", show(from), names.join(", ")));
        }
    }
    assert!(
        commands >= 13,
        "only {commands} command modules found under src/cmd/"
    );
    assert!(
        bad.is_empty(),
        "a command calls several analyses; what they share belongs below them:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_analysis_imports_another() {
    let mods = modules();
    let g = graph(&mods);
    let job = |p: &[String]| -> Option<(String, String)> {
        let (layer, shared) = JOBS
            .iter()
            .find(|(l, _)| p.first().map(String::as_str) == Some(*l))?;
        let child = p.get(1)?;
        (!shared.contains(&child.as_str())).then(|| (layer.to_string(), child.clone()))
    };
    let mut bad = Vec::new();
    for (from, deps) in &g {
        let Some(a) = job(from) else { continue };
        for to in deps {
            if job(to).is_some_and(|b| a != b) {
                bad.push(format!("{} imports {}", show(from), show(to)));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "an analysis (or archive job) imports another; move what they share below them:\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_the_source_layer_opens_inputs() {
    let mut bad = Vec::new();
    for (m, text) in modules() {
        if m.first().map(String::as_str) == Some("source") {
            continue;
        }
        let code = code_of(&text);
        for reader in INPUT_READERS {
            if code.contains(reader) {
                bad.push(format!("{} uses {reader}", show(&m)));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "inputs read outside src/source/ (add a function there instead):\n{}",
        bad.join("\n")
    );
    // The check looks for names that are there.
    let sources: String = modules()
        .into_iter()
        .filter(|(m, _)| m.first().map(String::as_str) == Some("source"))
        .map(|(_, t)| code_of(&t))
        .collect();
    for reader in [
        "ZipArchive::new",
        "Connection::open",
        "XzDecoder",
        "GzDecoder",
    ] {
        assert!(
            sources.contains(reader),
            "{reader} is not used in src/source/ any more"
        );
    }
}

#[test]
fn only_commands_use_clap_beyond_value_enums() {
    let mut bad = Vec::new();
    let mut value_enums = 0;
    for (m, text) in modules() {
        if m.first().map(String::as_str) == Some("cmd") {
            continue;
        }
        let code = code_of(&text);
        let b = code.as_bytes();
        for (at, _) in code.match_indices("clap::") {
            if at > 0 && (is_ident(b[at - 1]) || b[at - 1] == b':') {
                continue;
            }
            let mut found = Vec::new();
            paths_at(b, at + "clap::".len(), Vec::new(), &mut found);
            for path in found {
                if path.first().map(String::as_str) == Some("ValueEnum") {
                    value_enums += 1;
                } else {
                    bad.push(format!("{} uses clap::{}", show(&m), path.join("::")));
                }
            }
        }
    }
    assert!(
        value_enums >= 10,
        "only {value_enums} uses of clap::ValueEnum found outside cmd/"
    );
    assert!(
        bad.is_empty(),
        "clap used outside src/cmd/ (command lines are the commands' job):\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_module_cycle() {
    let mods = modules();
    let g = graph(&mods);
    // Edges between a folder's module and the modules inside it are Rust's own
    // declarations and `super::` uses: left out.
    let edges: BTreeMap<&ModPath, Vec<&ModPath>> = g
        .iter()
        .map(|(a, bs)| {
            let to = bs
                .iter()
                .filter(|b| !is_ancestor(a, b) && !is_ancestor(b, a))
                .collect();
            (a, to)
        })
        .collect();
    // Depth-first search; a back edge is a cycle, shown as the path around it.
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        Open,
        Done,
    }
    let mut state: BTreeMap<&ModPath, State> = edges.keys().map(|k| (*k, State::New)).collect();
    let mut cycles = Vec::new();
    for &start in edges.keys() {
        if state[start] != State::New {
            continue;
        }
        let mut stack: Vec<(&ModPath, usize)> = vec![(start, 0)];
        state.insert(start, State::Open);
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            let out = &edges[node];
            if *next < out.len() {
                let to = out[*next];
                *next += 1;
                match state.get(to).copied().unwrap_or(State::Done) {
                    State::New => {
                        state.insert(to, State::Open);
                        stack.push((to, 0));
                    }
                    State::Open => {
                        let from = stack.iter().position(|(n, _)| *n == to).unwrap();
                        let mut path: Vec<String> =
                            stack[from..].iter().map(|(n, _)| show(n)).collect();
                        path.push(show(to));
                        cycles.push(path.join(" -> "));
                    }
                    State::Done => {}
                }
            } else {
                state.insert(node, State::Done);
                stack.pop();
            }
        }
    }
    assert!(cycles.is_empty(), "module cycles:\n{}", cycles.join("\n"));
}

/// The checks above read imports from the text: they must find the ones that are there,
/// or every check would pass on a graph without edges.
#[test]
fn the_import_reader_finds_imports() {
    let m = |s: &str| s.split("::").map(str::to_string).collect::<ModPath>();
    let code = code_of(
        "// crate::a::b in a comment\nuse crate::x::{y::{self, Z}, w};\nfn f() { super::v::g(); let _ = \"crate::s\"; }",
    );
    let found = referenced(&m("p::q"), &code);
    assert_eq!(
        found,
        vec![m("x::y::self"), m("x::y::Z"), m("x::w"), m("p::v::g")]
    );
    let g = graph(&modules());
    let has = |a: &str, b: &str| g.get(&m(a)).is_some_and(|d| d.contains(&m(b)));
    assert!(has("analysis::thunks", "derived::gpu_time"));
    assert!(has("analysis::flamefold::gpu", "analysis::flamefold"));
    assert!(has("derived::executions::derive", "source::xla_names"));
    assert!(g.values().map(BTreeSet::len).sum::<usize>() > 200);
}
