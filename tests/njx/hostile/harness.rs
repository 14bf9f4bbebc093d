//! Running one hostile case: the tool in a fresh folder, under `ulimit -v` and a
//! wall-clock limit, with the invariants every case must keep checked after it, and the
//! failures of a whole class gathered into one report.

use crate::common::exe;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Command-line arguments of any mix of `&str` and `String`.
#[macro_export]
macro_rules! args {
    ($($a:expr),* $(,)?) => { vec![$(($a).to_string()),*] };
}

/// The address-space limit every tool runs under (`ulimit -v`, KiB): 1 GiB.
pub const MEMORY_LIMIT_KIB: u64 = 1 << 20;

/// The wall-clock limit of a case unless it sets its own.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// What stderr must never say, whatever the input.
const FORBIDDEN: &[&str] = &[
    "panicked",
    "memory allocation of",
    "RUST_BACKTRACE",
    "stack overflow",
];

/// The expected outcome of a case, on top of the invariants every case keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Exit 1, stderr naming every string of [`Run::names`].
    Refused,
    /// Exit 2 (bad usage), stderr naming every string of [`Run::names`].
    Usage,
    /// Exit 1 naming the names, or exit 0 with a note on stderr naming them (an
    /// inconsistency nsys may really write, where a documented repair is allowed).
    RefusedOrNoted,
    /// Any of 0, 1, 2 (with the invariants); a refusal (1) still names the names.
    Survives,
    /// Exit 0: the input is valid (however deep, however odd its folder).
    Accepted,
}

/// Where the tool's stdin comes from.
pub enum Stdin {
    Null,
    Bytes(Vec<u8>),
    File(PathBuf),
}

/// A check of its own that a case runs after the tool: `Err` says what is wrong.
pub type Check = Box<dyn FnOnce(&Path, &Outcome) -> Result<(), String>>;

/// One run of a tool, as a case's builder sets it up in the case's folder.
pub struct Run {
    pub args: Vec<String>,
    pub stdin: Stdin,
    /// What a refusal (or a note) must name: file names, `archive.zip!member`, `file:line`.
    pub names: Vec<String>,
    /// Output paths (`-o`, `--svg`, `--plot`): they may change only when the tool succeeds.
    pub outputs: Vec<PathBuf>,
    /// Outputs that may change whatever the exit status (njx-capture's archive, kept by
    /// design when an analysis fails): a check of the case's own says what they must hold.
    pub loose: Vec<PathBuf>,
    /// Inputs outside the case's folder (shared fixtures) that must not change.
    pub watch: Vec<PathBuf>,
    pub env: Vec<(String, String)>,
    pub timeout: Duration,
    pub check: Option<Check>,
}

impl Run {
    pub fn new(args: Vec<String>) -> Run {
        Run {
            args,
            stdin: Stdin::Null,
            names: Vec::new(),
            outputs: Vec::new(),
            loose: Vec::new(),
            watch: Vec::new(),
            env: Vec::new(),
            timeout: TIMEOUT,
            check: None,
        }
    }

    /// A refusal must name `s` (a file name, `archive.zip!member`, `file:line`).
    pub fn name(mut self, s: impl Into<String>) -> Run {
        self.names.push(s.into());
        self
    }

    pub fn output(mut self, p: impl Into<PathBuf>) -> Run {
        self.outputs.push(p.into());
        self
    }

    pub fn loose(mut self, p: impl Into<PathBuf>) -> Run {
        self.loose.push(p.into());
        self
    }

    pub fn stdin(mut self, bytes: Vec<u8>) -> Run {
        self.stdin = Stdin::Bytes(bytes);
        self
    }

    pub fn stdin_file(mut self, p: impl Into<PathBuf>) -> Run {
        self.stdin = Stdin::File(p.into());
        self
    }

    pub fn watch(mut self, p: impl Into<PathBuf>) -> Run {
        self.watch.push(p.into());
        self
    }

    pub fn env(mut self, k: &str, v: impl Into<String>) -> Run {
        self.env.push((k.to_string(), v.into()));
        self
    }

    pub fn timeout(mut self, secs: u64) -> Run {
        self.timeout = Duration::from_secs(secs);
        self
    }

    pub fn check(mut self, f: impl FnOnce(&Path, &Outcome) -> Result<(), String> + 'static) -> Run {
        self.check = Some(Box::new(f));
        self
    }
}

/// A case: its name, the tool, what is expected, and the builder that writes its
/// fixtures into a fresh folder and says how to run the tool there.
pub struct Case {
    pub name: String,
    pub tool: &'static str,
    pub expect: Expect,
    pub build: Box<dyn FnOnce(&Path) -> Run + Send>,
}

impl Case {
    pub fn new(
        name: impl Into<String>,
        tool: &'static str,
        expect: Expect,
        build: impl FnOnce(&Path) -> Run + Send + 'static,
    ) -> Case {
        Case {
            name: name.into(),
            tool,
            expect,
            build: Box::new(build),
        }
    }
}

/// What a run gave.
pub struct Outcome {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub stderr: String,
    pub stdout_len: u64,
    pub elapsed: Duration,
}

/// A file system entry as the snapshot records it.
#[derive(PartialEq, Eq, Debug)]
enum Entry {
    Dir,
    /// A regular file's bytes (files up to [`KEEP`]).
    File(Vec<u8>),
    /// A large regular file: its length, modification time and inode.
    Big(u64, i64, i64, u64),
    Link(PathBuf),
    Other(&'static str),
}

/// Files up to this size are compared byte for byte.
const KEEP: u64 = 64 << 20;

fn entry_of(path: &Path) -> Option<Entry> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let kind = meta.file_type();
    Some(if kind.is_symlink() {
        Entry::Link(std::fs::read_link(path).unwrap_or_default())
    } else if kind.is_dir() {
        Entry::Dir
    } else if kind.is_file() {
        if meta.len() <= KEEP {
            Entry::File(std::fs::read(path).unwrap_or_default())
        } else {
            Entry::Big(meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ino())
        }
    } else if kind.is_fifo() {
        Entry::Other("fifo")
    } else if kind.is_socket() {
        Entry::Other("socket")
    } else {
        Entry::Other("device")
    })
}

/// Every entry under `dir` (not following links), by path relative to it.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            let Some(entry) = entry_of(&path) else {
                continue;
            };
            if entry == Entry::Dir {
                todo.push(path.clone());
            }
            let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            out.insert(rel, entry);
        }
    }
    out
}

fn describe(e: Option<&Entry>) -> String {
    match e {
        None => "absent".into(),
        Some(Entry::Dir) => "a folder".into(),
        Some(Entry::File(b)) => format!("a file of {} bytes", b.len()),
        Some(Entry::Big(n, ..)) => format!("a file of {n} bytes"),
        Some(Entry::Link(t)) => format!("a link to {}", t.display()),
        Some(Entry::Other(k)) => format!("a {k}"),
    }
}

/// Reads `r` to its end, keeping the first `head` and the last `tail` bytes.
fn drain(mut r: impl Read, head: usize, tail: usize) -> (u64, Vec<u8>, Vec<u8>) {
    let mut total = 0u64;
    let mut first = Vec::new();
    let mut last: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match r.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        total += n as u64;
        let mut chunk = &buf[..n];
        if first.len() < head {
            let take = chunk.len().min(head - first.len());
            first.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        last.extend_from_slice(chunk);
        if last.len() > 2 * tail.max(1) {
            last.drain(..last.len() - tail);
        }
    }
    if last.len() > tail {
        last.drain(..last.len() - tail);
    }
    (total, first, last)
}

/// Runs `tool` with the run's arguments in `dir` under the memory and time limits.
fn execute(tool: &str, dir: &Path, tmp: &Path, run: &mut Run) -> Outcome {
    let script = format!("ulimit -v {MEMORY_LIMIT_KIB}; exec \"$0\" \"$@\"");
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(script)
        .arg(exe(tool))
        .args(&run.args)
        .current_dir(dir)
        .env("TMPDIR", tmp)
        // Short panic messages (the report shows stderr's last lines).
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    for (k, v) in &run.env {
        cmd.env(k, v);
    }
    let mut feed = None;
    match std::mem::replace(&mut run.stdin, Stdin::Null) {
        Stdin::Null => {
            cmd.stdin(Stdio::null());
        }
        Stdin::File(p) => {
            let f = std::fs::File::open(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            cmd.stdin(Stdio::from(f));
        }
        Stdin::Bytes(b) => {
            cmd.stdin(Stdio::piped());
            feed = Some(b);
        }
    }
    let started = Instant::now();
    let mut child = cmd.spawn().expect("spawn sh");
    let feeder = feed.map(|bytes| {
        let mut input = child.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            let _ = input.write_all(&bytes);
        })
    });
    let out = child.stdout.take().expect("stdout");
    let err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || drain(out, 0, 0));
    let err_reader = std::thread::spawn(move || drain(err, 16 << 10, 16 << 10));
    let mut timed_out = false;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if started.elapsed() > run.timeout {
            timed_out = true;
            // The tool and anything it started (its process group).
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            break child.wait().expect("wait after kill");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    if let Some(f) = feeder {
        let _ = f.join();
    }
    let (stdout_len, _, _) = out_reader.join().expect("stdout reader");
    let (_, err_head, err_tail) = err_reader.join().expect("stderr reader");
    let mut stderr = String::from_utf8_lossy(&err_head).into_owned();
    if !err_tail.is_empty() {
        stderr.push_str("\n[…]\n");
        stderr.push_str(&String::from_utf8_lossy(&err_tail));
    }
    Outcome {
        code: status.code(),
        signal: status.signal(),
        timed_out,
        stderr,
        stdout_len,
        elapsed,
    }
}

/// The shared fixtures' folder (generated once per test process).
pub fn shared_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("njx-hostile")
}

/// An argument as the report shows it: the case's folder as `$DIR`.
fn show(arg: &str, dir: &Path) -> String {
    let shared = shared_dir();
    let a = arg.replace(dir.to_str().unwrap_or("\u{0}"), "$DIR");
    let a = a.replace(shared.to_str().unwrap_or("\u{0}"), "$SHARED");
    if a.contains(' ') || a.is_empty() {
        format!("'{a}'")
    } else {
        a
    }
}

fn tail_lines(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    let from = lines.len().saturating_sub(n);
    let mut t = lines[from..].join("\n    ");
    if t.len() > 1500 {
        let mut cut = t.len() - 1500;
        while !t.is_char_boundary(cut) {
            cut += 1;
        }
        t = format!("…{}", &t[cut..]);
    }
    t
}

/// Runs one case; `Err` lists what went wrong.
pub fn run_case(case: Case) -> Result<Duration, String> {
    let root = tempfile::tempdir().expect("temporary directory");
    let dir = root.path().join("case");
    let tmp = root.path().join("tmp");
    std::fs::create_dir(&dir).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    let mut run = (case.build)(&dir);
    let before = snapshot(&dir);
    let watched: Vec<(PathBuf, Option<Entry>)> =
        run.watch.iter().map(|p| (p.clone(), entry_of(p))).collect();
    let outcome = execute(case.tool, &dir, &tmp, &mut run);
    let mut problems: Vec<String> = Vec::new();
    let err = &outcome.stderr;
    if outcome.timed_out {
        problems.push(format!(
            "did not finish within {} s (killed)",
            run.timeout.as_secs()
        ));
    } else if let Some(sig) = outcome.signal {
        let what = match sig {
            6 => " (SIGABRT: abort)",
            9 => " (SIGKILL)",
            11 => " (SIGSEGV)",
            _ => "",
        };
        problems.push(format!("killed by signal {sig}{what}"));
    }
    let code = outcome.code;
    if let Some(c) = code
        && !(0..=2).contains(&c)
    {
        problems.push(format!("exit code {c}"));
    }
    for f in FORBIDDEN {
        if err.contains(f) {
            problems.push(format!("stderr says `{f}`"));
        }
    }
    let names_missing: Vec<&String> = run
        .names
        .iter()
        .filter(|n| !err.contains(n.as_str()))
        .collect();
    let named = names_missing.is_empty();
    let missing = || {
        names_missing
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !outcome.timed_out && outcome.signal.is_none() {
        match case.expect {
            Expect::Refused => {
                if code != Some(1) {
                    problems.push(format!("expected a refusal (exit 1), got exit {code:?}"));
                } else if !named {
                    problems.push(format!("the refusal does not name {}", missing()));
                }
            }
            Expect::Usage => {
                if code != Some(2) {
                    problems.push(format!(
                        "expected a usage error (exit 2), got exit {code:?}"
                    ));
                } else if !named {
                    problems.push(format!("the usage error does not name {}", missing()));
                }
            }
            Expect::RefusedOrNoted => match code {
                Some(1) if !named => {
                    problems.push(format!("the refusal does not name {}", missing()))
                }
                Some(1) => {}
                Some(0) if !named => problems.push(format!(
                    "accepted without a note naming {} (silent acceptance)",
                    missing()
                )),
                Some(0) => {}
                other => problems.push(format!(
                    "expected a refusal (exit 1) or a note (exit 0), got exit {other:?}"
                )),
            },
            Expect::Survives => {
                if code == Some(1) && !named {
                    problems.push(format!("the refusal does not name {}", missing()));
                }
            }
            Expect::Accepted => {
                if code != Some(0) {
                    problems.push(format!("expected success (exit 0), got exit {code:?}"));
                }
            }
        }
    }
    // The case's folder: inputs unchanged, outputs changed only on success, nothing new.
    let after = snapshot(&dir);
    let success = code == Some(0);
    let is_output = |rel: &Path| run.outputs.iter().any(|o| o == &dir.join(rel) || o == rel);
    let is_loose = |rel: &Path| run.loose.iter().any(|o| o == &dir.join(rel) || o == rel);
    let mut keys: Vec<&PathBuf> = before.keys().chain(after.keys()).collect();
    keys.sort();
    keys.dedup();
    for rel in keys {
        let (b, a) = (before.get(rel), after.get(rel));
        if b == a || is_loose(rel) {
            continue;
        }
        let name = rel.display().to_string();
        if name.ends_with(".njx-partial") {
            problems.push(format!("temporary file {name} left behind"));
        } else if is_output(rel) {
            if !success {
                problems.push(format!(
                    "output {name} changed although the tool failed: was {}, now {}",
                    describe(b),
                    describe(a)
                ));
            }
        } else if b.is_none() {
            problems.push(format!("{name} appeared ({})", describe(a)));
        } else {
            problems.push(format!(
                "{name} changed: was {}, now {}",
                describe(b),
                describe(a)
            ));
        }
    }
    for (p, b) in watched {
        let a = entry_of(&p);
        if a != b {
            problems.push(format!(
                "input {} changed: was {}, now {}",
                p.display(),
                describe(b.as_ref()),
                describe(a.as_ref())
            ));
        }
    }
    if !outcome.timed_out && outcome.signal.is_none() {
        let left: Vec<String> = std::fs::read_dir(&tmp)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !left.is_empty() {
            problems.push(format!("left temporary files in $TMPDIR: {left:?}"));
        }
    }
    if std::env::var_os("NJX_HOSTILE_VERBOSE").is_some() {
        eprintln!(
            "[{}] {} → {:?}/{:?} {:.1} s, {} bytes out: {}",
            case.name,
            case.tool,
            code,
            outcome.signal,
            outcome.elapsed.as_secs_f64(),
            outcome.stdout_len,
            tail_lines(err, 2)
        );
    }
    if problems.is_empty()
        && let Some(check) = run.check.take()
        && let Err(e) = check(&dir, &outcome)
    {
        problems.push(e);
    }
    if problems.is_empty() {
        return Ok(outcome.elapsed);
    }
    let args: Vec<String> = run.args.iter().map(|a| show(a, &dir)).collect();
    Err(format!(
        "[{}] {} {} → exit {}, {:.1} s: {}\n    stderr: {}",
        case.name,
        case.tool,
        args.join(" "),
        code.map_or_else(
            || format!("signal {}", outcome.signal.unwrap_or(0)),
            |c| c.to_string()
        ),
        outcome.elapsed.as_secs_f64(),
        problems.join("; "),
        tail_lines(err, 4),
    ))
}

/// Runs every case of a class, then fails with all failures at once.
pub fn run_class(class: &str, cases: Vec<Case>) {
    let started = Instant::now();
    let total = cases.len();
    let mut failures = Vec::new();
    let mut known = Vec::new();
    let mut passing_known = Vec::new();
    let mut slowest: Vec<(Duration, String)> = Vec::new();
    for case in cases {
        let name = case.name.clone();
        let is_known = super::known::KNOWN
            .iter()
            .any(|(n, tool, _)| *n == name && *tool == case.tool);
        let name = format!("{name} ({})", case.tool);
        match run_case(case) {
            Ok(_) if is_known => passing_known.push(name),
            Ok(t) => slowest.push((t, name)),
            Err(e) if is_known => known.push(e),
            Err(e) => failures.push(e),
        }
    }
    if !known.is_empty() {
        // Visible with `--nocapture`, and counted in the line below.
        eprintln!(
            "hostile::{class}: KNOWN GAPS (issue 15 still open, tests/njx/hostile/known.rs):\n{}",
            known.join("\n")
        );
    }
    passing_known.sort();
    passing_known.dedup();
    assert!(
        passing_known.is_empty(),
        "hostile::{class}: cases listed in known.rs now pass — take them off the list: {passing_known:?}"
    );
    slowest.sort();
    let slow: Vec<String> = slowest
        .iter()
        .rev()
        .take(3)
        .map(|(t, n)| format!("{n} {:.1} s", t.as_secs_f64()))
        .collect();
    eprintln!(
        "hostile::{class}: {total} cases, {} failing, {} known gaps, {:.1} s (slowest passing: {})",
        failures.len(),
        known.len(),
        started.elapsed().as_secs_f64(),
        slow.join(", ")
    );
    assert!(
        failures.is_empty(),
        "hostile::{class}: {} of {total} cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// A path under `dir` as a string.
pub fn at(dir: &Path, name: &str) -> String {
    dir.join(name).to_str().expect("utf-8 path").to_string()
}

/// A fixture shared by several cases (large ones: generated once per test process, in
/// [`shared_dir`]): `make` writes it at the path it is given. Cases name it with
/// [`Run::watch`] so that a change is caught.
pub fn shared(name: &str, make: impl FnOnce(&Path)) -> String {
    static DONE: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = shared_dir();
    let path = dir.join(name);
    if !done.iter().any(|n| n == name) {
        std::fs::create_dir_all(&dir).unwrap();
        let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        make(&tmp);
        std::fs::rename(&tmp, &path).unwrap();
        done.push(name.to_string());
    }
    path.to_str().unwrap().to_string()
}

/// [`shared`] for a fixture that is just bytes.
pub fn shared_bytes(name: &str, make: impl FnOnce() -> Vec<u8>) -> String {
    shared(name, |p| std::fs::write(p, make()).unwrap())
}
