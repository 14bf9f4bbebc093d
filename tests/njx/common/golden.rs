//! Golden files: a tool's output compared with the copy stored under `tests/golden/`
//! (`tests/njx/golden.rs` says what they cover and how to bless them).
//!
//! A missing golden file is written (and the test says so on stderr); with `NJX_BLESS=1`
//! every one is rewritten. A mismatch fails the test with a line diff of each file that
//! differs, after every check of the test has run.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The folder of the stored outputs.
pub fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Whether every golden file is to be rewritten (`NJX_BLESS=1`).
pub fn bless() -> bool {
    std::env::var_os("NJX_BLESS").is_some_and(|v| v == "1")
}

/// The checks of one tool's outputs against `tests/golden/<tool>/`; a mismatch fails the
/// test when this is dropped (so that one run shows every file that differs).
pub struct Golden {
    tool: &'static str,
    /// Temporary folders whose paths outputs may hold, each written as its placeholder.
    paths: Vec<(String, String)>,
    failures: Vec<String>,
}

impl Golden {
    pub fn new(tool: &'static str) -> Golden {
        Golden {
            tool,
            paths: Vec::new(),
            failures: Vec::new(),
        }
    }

    /// Outputs will write `dir` (and its canonical form) as `placeholder`.
    pub fn path(&mut self, dir: &Path, placeholder: &str) -> &mut Golden {
        let mut forms = vec![dir.to_string_lossy().into_owned()];
        if let Ok(canonical) = dir.canonicalize() {
            forms.push(canonical.to_string_lossy().into_owned());
        }
        for form in forms {
            if !self.paths.iter().any(|(p, _)| *p == form) {
                self.paths.push((form, placeholder.to_string()));
            }
        }
        // Longest first: a folder inside another is replaced before its parent.
        self.paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        self
    }

    /// `text` with the registered paths replaced by their placeholders.
    pub fn normalise(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (path, placeholder) in &self.paths {
            out = out.replace(path.as_str(), placeholder);
        }
        out
    }

    /// Compares `actual` (normalised) with `tests/golden/<tool>/<case>`.
    pub fn check(&mut self, case: &str, actual: &str) {
        let actual = self.normalise(actual);
        let rel = format!("{}/{case}", self.tool);
        let path = golden_dir().join(&rel);
        let stored = std::fs::read_to_string(&path);
        let blessing = bless();
        match stored {
            Ok(expected) if !blessing => {
                if expected != actual {
                    self.failures.push(format!(
                        "tests/golden/{rel} differs from the output (- stored, + now):\n{}",
                        diff(&expected, &actual)
                    ));
                }
            }
            stored => {
                if stored.as_deref().ok() == Some(actual.as_str()) {
                    return;
                }
                std::fs::create_dir_all(path.parent().unwrap()).expect("create golden folder");
                std::fs::write(&path, &actual).expect("write golden file");
                // Past the test harness' capture, so that it shows on a passing run.
                let _ = writeln!(std::io::stderr(), "golden: wrote tests/golden/{rel}");
            }
        }
    }
}

impl Drop for Golden {
    fn drop(&mut self) {
        if !self.failures.is_empty() && !std::thread::panicking() {
            panic!(
                "{} golden file(s) of {} differ; if the change is meant, bless them with \
                 NJX_BLESS=1 cargo test --test njx golden:: and review the diff\n\n{}",
                self.failures.len(),
                self.tool,
                self.failures.join("\n")
            );
        }
    }
}

/// Lines of context around each change.
const CONTEXT: usize = 3;
/// Changed lines shown at most, the rest counted.
const MAX_SHOWN: usize = 60;
/// Above this many line pairs, the diff is one hunk from the first to the last change.
const MAX_CELLS: usize = 4_000_000;

/// A line diff of `old` and `new`: hunks with `CONTEXT` lines of context, each line with
/// its numbers in the old and new text.
pub fn diff(old: &str, new: &str) -> String {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    if a == b {
        return format!(
            "  (the lines are the same; the texts differ in line endings or the final \
             newline: stored {} bytes, now {})\n",
            old.len(),
            new.len()
        );
    }
    let ops = edit_script(&a, &b);
    // Which ops to show: changes and CONTEXT lines around them.
    let mut show = vec![false; ops.len()];
    for (i, op) in ops.iter().enumerate() {
        if !matches!(op, Op::Same(..)) {
            let lo = i.saturating_sub(CONTEXT);
            let hi = (i + CONTEXT + 1).min(ops.len());
            show[lo..hi].iter_mut().for_each(|s| *s = true);
        }
    }
    // A run of deleted lines followed by a run of added ones: the k-th added line is a
    // change of the k-th deleted one, whose first differing column is pointed at.
    let mut replaces: Vec<Option<usize>> = vec![None; ops.len()];
    let mut k = 0;
    while k < ops.len() {
        let dels: Vec<usize> = ops[k..]
            .iter()
            .map_while(|op| match op {
                Op::Del(i) => Some(*i),
                _ => None,
            })
            .collect();
        let adds = ops[k + dels.len()..]
            .iter()
            .take_while(|op| matches!(op, Op::Add(_)))
            .count();
        for (n, del) in dels.iter().take(adds).enumerate() {
            replaces[k + dels.len() + n] = Some(*del);
        }
        k += (dels.len() + adds).max(1);
    }
    let mut out = String::new();
    let mut changes = 0;
    let mut hidden = 0;
    let mut gap = false;
    for (n_op, (op, shown)) in ops.iter().zip(&show).enumerate() {
        if !shown {
            gap = true;
            continue;
        }
        let changed = !matches!(op, Op::Same(..));
        if changed {
            changes += 1;
            if changes > MAX_SHOWN {
                hidden += 1;
                continue;
            }
        } else if changes > MAX_SHOWN {
            continue;
        }
        if gap && !out.is_empty() {
            out.push_str("  ...\n");
        }
        gap = false;
        let line = match *op {
            Op::Same(i, j) => format!("  {:>5} {:>5} | {}", i + 1, j + 1, a[i]),
            Op::Del(i) => format!("- {:>5}       | {}", i + 1, a[i]),
            Op::Add(j) => format!("+       {:>5} | {}", j + 1, b[j]),
        };
        out.push_str(&line);
        out.push('\n');
        if let (Op::Add(j), Some(i)) = (op, replaces[n_op]) {
            out.push_str(&column_note(a[i], b[*j]));
        }
    }
    if hidden > 0 {
        out.push_str(&format!("  ... and {hidden} more changed lines\n"));
    }
    out
}

/// Where a changed line first differs from the line it replaces: its column (in
/// characters) and each line's text around it.
fn column_note(old: &str, new: &str) -> String {
    let at = old
        .chars()
        .zip(new.chars())
        .take_while(|(x, y)| x == y)
        .count();
    let start = at.saturating_sub(12);
    let around = |s: &str| -> String {
        let len = s.chars().count();
        let text: String = s.chars().skip(start).take(40).collect();
        let before = if start > 0 { "…" } else { "" };
        let after = if len > start + 40 { "…" } else { "" };
        format!("{before}{text}{after}")
    };
    format!(
        "                ^ column {} differs: stored `{}`, now `{}`\n",
        at + 1,
        around(old),
        around(new)
    )
}

enum Op {
    /// Line i of old equals line j of new.
    Same(usize, usize),
    Del(usize),
    Add(usize),
}

/// The shortest edit script from `a` to `b` (longest common subsequence of the lines
/// between their common prefix and suffix); past `MAX_CELLS`, that middle is deleted and
/// added whole.
fn edit_script(a: &[&str], b: &[&str]) -> Vec<Op> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..]
        .iter()
        .rev()
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (ma, mb) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op> = (0..prefix).map(|i| Op::Same(i, i)).collect();
    let (n, m) = (ma.len(), mb.len());
    if n.saturating_mul(m) > MAX_CELLS {
        ops.extend((0..n).map(|i| Op::Del(prefix + i)));
        ops.extend((0..m).map(|j| Op::Add(prefix + j)));
    } else {
        // lcs[i][j]: the common subsequence of ma[i..] and mb[j..].
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if ma[i] == mb[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && ma[i] == mb[j] {
                ops.push(Op::Same(prefix + i, prefix + j));
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
                ops.push(Op::Del(prefix + i));
                i += 1;
            } else {
                ops.push(Op::Add(prefix + j));
                j += 1;
            }
        }
    }
    let (ea, eb) = (a.len() - suffix, b.len() - suffix);
    ops.extend((0..suffix).map(|k| Op::Same(ea + k, eb + k)));
    ops
}
