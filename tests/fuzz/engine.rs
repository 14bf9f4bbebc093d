//! The fuzzing loop of one worker process: mutate an input of a target, write it where
//! the readers find it, call one entry point inside `catch_unwind` and look at what
//! came back. Panics (on any thread: the hook records them) are crashes, saved with
//! their message, location and backtrace; an execution running past the hang limit is
//! saved by the watchdog, which then ends the process for the supervisor to restart.
//! Aborts (allocation failures, stack overflows) end the process too: the supervisor
//! saves the input from the `current` file this loop keeps up to date.

use crate::item::{self, Form, Item};
use crate::rng::{self, Rng};
use crate::targets::{self, Ctx, Input, Target};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Exit code of a worker that the watchdog ended on a hang.
pub const HANG_EXIT: i32 = 77;

/// A panic as the hook saw it.
#[derive(Debug, Clone)]
pub struct PanicRecord {
    pub message: String,
    pub location: String,
    pub thread: String,
    pub backtrace: String,
}

static PANICS: Mutex<Vec<PanicRecord>> = Mutex::new(Vec::new());
/// Backtraces taken per panic location (a few each: symbolising them is slow).
static TRACED: Mutex<Option<HashMap<String, u32>>> = Mutex::new(None);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Records every panic instead of printing it; `verbose` also prints it (replay).
pub fn install_hook(verbose: bool) {
    std::panic::set_hook(Box::new(move |info| {
        let message = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "(non-string panic payload)".to_string()
        };
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_default();
        let take = {
            let mut traced = lock(&TRACED);
            let n = traced
                .get_or_insert_with(HashMap::new)
                .entry(location.clone())
                .or_insert(0);
            *n += 1;
            verbose || *n <= 20
        };
        let backtrace = if take {
            std::backtrace::Backtrace::force_capture().to_string()
        } else {
            String::new()
        };
        let thread = std::thread::current()
            .name()
            .unwrap_or("(unnamed)")
            .to_string();
        if verbose {
            eprintln!("PANIC on thread {thread} at {location}: {message}\n{backtrace}");
        }
        lock(&PANICS).push(PanicRecord {
            message,
            location,
            thread,
            backtrace,
        });
    }));
}

/// The panics recorded since the last call.
pub fn take_panics() -> Vec<PanicRecord> {
    std::mem::take(&mut *lock(&PANICS))
}

/// The first frame of this crate's `src/` in a backtrace: where in njx the panic was.
pub fn src_frame(backtrace: &str) -> Option<String> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    backtrace.lines().find_map(|l| {
        let at = l.trim().strip_prefix("at ")?;
        // Backtraces print paths under the current folder (the repository) relative.
        let rel = at
            .strip_prefix(root)
            .or_else(|| at.strip_prefix("./"))
            .unwrap_or(at);
        rel.starts_with("src/").then(|| rel.to_string())
    })
}

/// A backtrace without the frames of the panic machinery (and of this hook) on top.
pub fn trim_backtrace(backtrace: &str) -> String {
    let lines: Vec<&str> = backtrace.lines().collect();
    let machinery = lines.iter().rposition(|l| {
        l.contains("core::panicking::")
            || l.contains("rust_begin_unwind")
            || l.contains("std::panicking::")
            || l.contains("core::option::unwrap_failed")
            || l.contains("core::result::unwrap_failed")
    });
    let from = machinery.map_or(0, |i| {
        // skip the frame's own `at` line
        if lines
            .get(i + 1)
            .is_some_and(|l| l.trim_start().starts_with("at "))
        {
            i + 2
        } else {
            i + 1
        }
    });
    lines[from.min(lines.len())..].join("\n")
}

/// A location relative to the repository when it is in it.
pub fn short(location: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/");
    location.strip_prefix(root).unwrap_or(location).to_string()
}

/// The key that deduplicates a panic: where it happened and where in njx that was.
pub fn panic_key(p: &PanicRecord, known: &mut HashMap<String, String>) -> String {
    let loc = short(&p.location);
    let frame = src_frame(&p.backtrace);
    match frame {
        Some(f) if !loc.starts_with("src/") => {
            let key = format!("{loc} via {f}");
            known.entry(loc).or_insert_with(|| key.clone());
            key
        }
        _ => known.get(&loc).cloned().unwrap_or(loc),
    }
}

/// How the worker runs.
pub struct Config {
    pub seconds: f64,
    /// Executions per target, when the run is counted rather than timed.
    pub quota: Option<HashMap<String, u64>>,
    pub seed: u64,
    pub work: PathBuf,
    pub crashes: PathBuf,
    pub hang_secs: f64,
    /// Only targets whose name contains this.
    pub only: Option<String>,
    /// Files shared with the supervisor.
    pub stats: PathBuf,
    pub findings: PathBuf,
    pub current: PathBuf,
}

/// What the watchdog needs to save a hanging input.
struct Running {
    since: Instant,
    target: String,
    entry: String,
    blob: PathBuf,
    dir: bool,
}

static RUNNING: Mutex<Option<Running>> = Mutex::new(None);

#[derive(Default, Clone)]
struct Counts {
    execs: u64,
    oks: u64,
    errs: u64,
    crashes: u64,
}

/// A finding written for the supervisor: one line, tab-separated.
pub fn finding_line(
    kind: &str,
    target: &str,
    entry: &str,
    key: &str,
    file: &Path,
    message: &str,
) -> String {
    let clean = |s: &str| s.replace(['\t', '\n', '\r'], " ");
    format!(
        "{kind}\t{target}\t{entry}\t{}\t{}\t{}\n",
        clean(key),
        file.display(),
        clean(message)
    )
}

/// The file name a saved input gets: `<target>.<entry>.<kind>.<hash>[.dir]`.
pub fn saved_name(target: &str, entry: &str, kind: &str, bytes: &[u8], dir: bool) -> String {
    format!(
        "{target}.{entry}.{kind}.{:016x}{}",
        rng::hash(bytes),
        if dir { ".dir" } else { "" }
    )
}

fn append(path: &Path, line: &str) {
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(line.as_bytes());
    }
}

struct State<'a> {
    cfg: &'a Config,
    ctx: Ctx,
    targets: Vec<Target>,
    counts: Vec<Vec<Counts>>,
    corpus: Vec<Vec<(Item, &'static str)>>,
    seen: Vec<HashSet<String>>,
    /// Finding key → occurrences.
    found: HashMap<String, u64>,
    known: HashMap<String, String>,
    mutator_failures: u64,
    current: File,
}

impl State<'_> {
    fn write_stats(&self) {
        let mut out = String::new();
        for (t, target) in self.targets.iter().enumerate() {
            for (e, entry) in target.entries.iter().enumerate() {
                let c = &self.counts[t][e];
                out += &format!(
                    "E\t{}\t{}\t{}\t{}\t{}\t{}\n",
                    target.name, entry.name, c.execs, c.oks, c.errs, c.crashes
                );
            }
            out += &format!("C\t{}\t{}\n", target.name, self.corpus[t].len());
        }
        for (k, n) in &self.found {
            out += &format!("F\t{}\t{n}\n", k.replace(['\t', '\n'], " "));
        }
        out += &format!("M\t{}\n", self.mutator_failures);
        let tmp = self.cfg.stats.with_extension("tmp");
        if std::fs::write(&tmp, out).is_ok() {
            let _ = std::fs::rename(&tmp, &self.cfg.stats);
        }
    }

    fn mark(&self, what: &str) {
        let mut line = what.as_bytes().to_vec();
        line.resize(1024, b' ');
        line.push(b'\n');
        let _ = self.current.write_at(&line, 0);
    }

    /// Saves a crashing input once per key and says so; later ones are counted.
    #[allow(clippy::too_many_arguments)]
    fn found(
        &mut self,
        kind: &str,
        target: &str,
        entry: &str,
        key: &str,
        bytes: &[u8],
        dir: bool,
        message: &str,
        detail: &str,
    ) {
        let n = self.found.entry(key.to_string()).or_insert(0);
        *n += 1;
        if *n > 1 {
            return;
        }
        let _ = std::fs::create_dir_all(&self.cfg.crashes);
        let file = self
            .cfg
            .crashes
            .join(saved_name(target, entry, kind, bytes, dir));
        let _ = std::fs::write(&file, bytes);
        let _ = std::fs::write(
            file.with_extension(format!(
                "{}.txt",
                file.extension().and_then(|e| e.to_str()).unwrap_or("")
            )),
            format!("{kind} in {target} / {entry}\nkey: {key}\nmessage: {message}\n\n{detail}\n"),
        );
        append(
            &self.cfg.findings,
            &finding_line(kind, target, entry, key, &file, message),
        );
    }

    fn exec(&mut self, rng: &mut Rng, t: usize) {
        let target = &self.targets[t];
        let tdir = self.cfg.work.join(target.name);
        // parent: a seed, or an input that did something new
        let (parent, tag) = if !self.corpus[t].is_empty() && rng.chance(0.4) {
            let (i, tag) = &self.corpus[t][rng.below(self.corpus[t].len())];
            (i.clone(), *tag)
        } else {
            let (i, tag) = &target.seeds[rng.below(target.seeds.len())];
            (i.clone(), *tag)
        };
        let others: Vec<&[u8]> = target
            .seeds
            .iter()
            .map(|(i, _)| i.bytes.as_slice())
            .collect();
        let _ = take_panics();
        let mutated = catch_unwind(AssertUnwindSafe(|| item::mutate(rng, &parent, &others, 3)));
        let _ = take_panics();
        let Ok(item) = mutated else {
            self.mutator_failures += 1;
            return;
        };
        // entry: one meant for the seed's kind, mostly
        let fitting: Vec<usize> = (0..target.entries.len())
            .filter(|&e| {
                let tags = target.entries[e].tags;
                tags.is_empty() || tags.contains(&tag)
            })
            .collect();
        let e = if !fitting.is_empty() && rng.chance(0.9) {
            fitting[rng.below(fitting.len())]
        } else {
            rng.below(target.entries.len())
        };
        let as_dir = target.folders && matches!(item.form, Form::Zip(_)) && rng.chance(0.15);
        let (path, blob) = if as_dir {
            let blob = tdir.join("blob.zip");
            let _ = std::fs::write(&blob, &item.bytes);
            let dir = tdir.join("rank0");
            let _ = crate::zipper::extract(&item.bytes, &dir);
            (dir, blob)
        } else {
            let path = tdir.join(target.file);
            let _ = std::fs::write(&path, &item.bytes);
            (path.clone(), path)
        };
        let input = Input {
            path: &path,
            bytes: &item.bytes,
            hash: rng::hash(&item.bytes),
            dir: &tdir,
        };
        let entry = &target.entries[e];
        self.mark(&format!(
            "{}\t{}\t{}\t{}",
            target.name,
            entry.name,
            blob.display(),
            u8::from(as_dir)
        ));
        *lock(&RUNNING) = Some(Running {
            since: Instant::now(),
            target: target.name.to_string(),
            entry: entry.name.to_string(),
            blob: blob.clone(),
            dir: as_dir,
        });
        let ctx = &self.ctx;
        let result = catch_unwind(AssertUnwindSafe(|| (entry.run)(ctx, &input)));
        *lock(&RUNNING) = None;
        self.mark("-");
        let panics = take_panics();
        let (tname, ename) = (target.name, entry.name);
        let c = &mut self.counts[t][e];
        c.execs += 1;
        if !panics.is_empty() || result.is_err() {
            c.crashes += 1;
            let first = panics.first().cloned().unwrap_or(PanicRecord {
                message: "panic without a record".into(),
                location: String::new(),
                thread: String::new(),
                backtrace: String::new(),
            });
            let key = panic_key(&first, &mut self.known);
            let detail: Vec<String> = panics
                .iter()
                .map(|p| {
                    format!(
                        "thread {} panicked at {}:\n{}\n{}",
                        p.thread,
                        p.location,
                        p.message,
                        trim_backtrace(&p.backtrace)
                    )
                })
                .collect();
            let message = format!(
                "{} (at {}{})",
                first.message,
                short(&first.location),
                src_frame(&first.backtrace)
                    .filter(|f| *f != short(&first.location))
                    .map(|f| format!(", from {f}"))
                    .unwrap_or_default()
            );
            let bytes = item.bytes.clone();
            self.found(
                "panic",
                tname,
                ename,
                &key,
                &bytes,
                as_dir,
                &message,
                &detail.join("\n"),
            );
            return;
        }
        let sig = match result {
            Ok(Ok(())) => {
                c.oks += 1;
                format!("{ename}:ok")
            }
            Ok(Err(err)) => {
                c.errs += 1;
                signature(ename, &err.to_string(), &tdir)
            }
            Err(_) => unreachable!("handled above"),
        };
        if self.seen[t].insert(sig) {
            let corpus = &mut self.corpus[t];
            if corpus.len() < 300 {
                corpus.push((item, tag));
            } else {
                let k = rng.below(corpus.len());
                corpus[k] = (item, tag);
            }
        }
    }
}

/// What an outcome says, without numbers and paths: new ones mark inputs worth keeping.
fn signature(entry: &str, msg: &str, dir: &Path) -> String {
    let msg = msg.replace(&dir.display().to_string(), "");
    let mut out = String::with_capacity(msg.len());
    let mut digit = false;
    for ch in msg.chars() {
        if ch.is_ascii_digit() {
            if !digit {
                out.push('#');
            }
            digit = true;
        } else {
            digit = false;
            out.push(ch);
        }
        if out.len() > 120 {
            break;
        }
    }
    format!("{entry}:{out}")
}

fn watchdog(cfg_hang: f64, crashes: PathBuf, findings: PathBuf) {
    std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(100));
                let hung = {
                    let r = lock(&RUNNING);
                    r.as_ref().and_then(|r| {
                        (r.since.elapsed().as_secs_f64() > cfg_hang).then(|| {
                            (
                                r.target.clone(),
                                r.entry.clone(),
                                r.blob.clone(),
                                r.dir,
                                r.since.elapsed(),
                            )
                        })
                    })
                };
                if let Some((target, entry, blob, dir, took)) = hung {
                    let bytes = std::fs::read(&blob).unwrap_or_default();
                    let _ = std::fs::create_dir_all(&crashes);
                    let file = crashes.join(saved_name(&target, &entry, "hang", &bytes, dir));
                    let _ = std::fs::write(&file, &bytes);
                    let msg = format!("still running after {:.1} s", took.as_secs_f64());
                    let _ = std::fs::write(
                        file.with_extension(format!(
                            "{}.txt",
                            file.extension().and_then(|e| e.to_str()).unwrap_or("")
                        )),
                        format!(
                            "hang in {target} / {entry}\nkey: hang in {target}/{entry}\nmessage: \
                             {msg}\n\nwhere it loops: replay it (`--replay FILE --hang-secs \
                             60`) and look at the main thread's stack with a debugger\n"
                        ),
                    );
                    append(
                        &findings,
                        &finding_line(
                            "hang",
                            &target,
                            &entry,
                            &format!("hang in {target}/{entry}"),
                            &file,
                            &msg,
                        ),
                    );
                    eprintln!(
                        "fuzz worker: hang in {target}/{entry}, input saved as {}",
                        file.display()
                    );
                    std::process::exit(HANG_EXIT);
                }
            }
        })
        .expect("watchdog thread");
}

/// Runs the worker: fuzzes every target until the time or the execution count is used up.
pub fn worker(cfg: &Config) -> i32 {
    install_hook(false);
    let scratch = cfg.work.join("scratch");
    let _ = std::fs::create_dir_all(&scratch);
    item::set_scratch(scratch);
    let (ctx, mut all) = targets::all(&cfg.work);
    if let Some(only) = &cfg.only {
        all.retain(|t| only.split(',').any(|o| t.name.contains(o)));
    }
    for t in &all {
        let _ = std::fs::create_dir_all(cfg.work.join(t.name));
    }
    let current = File::create(&cfg.current).expect("current file");
    let mut st = State {
        cfg,
        ctx,
        counts: all
            .iter()
            .map(|t| vec![Counts::default(); t.entries.len()])
            .collect(),
        corpus: all.iter().map(|_| Vec::new()).collect(),
        seen: all.iter().map(|_| HashSet::new()).collect(),
        targets: all,
        found: HashMap::new(),
        known: HashMap::new(),
        mutator_failures: 0,
        current,
    };
    watchdog(cfg.hang_secs, cfg.crashes.clone(), cfg.findings.clone());
    let mut rng = Rng::new(cfg.seed);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let mut last_stats = Instant::now();
    let n = st.targets.len();
    let slice = Duration::from_millis(250);
    'outer: loop {
        let mut all_done = true;
        for t in 0..n {
            let slice_end = Instant::now() + slice;
            let mut k = 0;
            let max = cfg
                .quota
                .as_ref()
                .map(|q| q.get(st.targets[t].name).copied().unwrap_or(0));
            loop {
                let done: u64 = st.counts[t].iter().map(|c| c.execs).sum::<u64>();
                if let Some(max) = max {
                    if done >= max || k >= 20 {
                        break;
                    }
                } else if Instant::now() >= slice_end {
                    break;
                }
                if Instant::now() >= deadline {
                    break 'outer;
                }
                st.exec(&mut rng, t);
                k += 1;
            }
            if let Some(max) = max {
                let done: u64 = st.counts[t].iter().map(|c| c.execs).sum::<u64>();
                if done < max {
                    all_done = false;
                }
            } else {
                all_done = false;
            }
            if last_stats.elapsed() > Duration::from_secs(2) {
                st.write_stats();
                last_stats = Instant::now();
            }
        }
        if all_done {
            break;
        }
    }
    st.write_stats();
    0
}

/// Runs `targets` entries on one saved input and says what each did; true when one
/// panicked.
pub fn replay(
    work: &Path,
    file: &Path,
    target: &str,
    entry: Option<&str>,
    dir: bool,
    hang_secs: f64,
) -> bool {
    install_hook(true);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(100));
            let hung = lock(&RUNNING).as_ref().and_then(|r| {
                (r.since.elapsed().as_secs_f64() > hang_secs)
                    .then(|| format!("{}/{}", r.target, r.entry))
            });
            if let Some(what) = hung {
                println!("{what}: HANG: still running after {hang_secs} s");
                std::process::exit(HANG_EXIT);
            }
        }
    });
    let scratch = work.join("scratch");
    let _ = std::fs::create_dir_all(&scratch);
    let (ctx, all) = targets::all(work);
    let Some(t) = all.iter().find(|t| t.name == target) else {
        eprintln!(
            "no target {target}; targets: {}",
            all.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
        );
        return true;
    };
    let bytes = std::fs::read(file).expect("read the input to replay");
    let tdir = work.join(t.name);
    std::fs::create_dir_all(&tdir).expect("target folder");
    let path = if dir {
        let d = tdir.join("rank0");
        crate::zipper::extract(&bytes, &d).expect("extract");
        d
    } else {
        let p = tdir.join(t.file);
        std::fs::write(&p, &bytes).expect("write input");
        p
    };
    let mut crashed = false;
    for e in &t.entries {
        if entry.is_some_and(|x| x != e.name) {
            continue;
        }
        let input = Input {
            path: &path,
            bytes: &bytes,
            hash: rng::hash(&bytes),
            dir: &tdir,
        };
        let started = Instant::now();
        *lock(&RUNNING) = Some(Running {
            since: started,
            target: t.name.to_string(),
            entry: e.name.to_string(),
            blob: file.to_path_buf(),
            dir,
        });
        let r = catch_unwind(AssertUnwindSafe(|| (e.run)(&ctx, &input)));
        *lock(&RUNNING) = None;
        let panics = take_panics();
        let took = started.elapsed().as_secs_f64();
        match r {
            _ if !panics.is_empty() => {
                crashed = true;
                println!(
                    "{}/{}: PANIC ({:.2} s): {} at {}",
                    t.name,
                    e.name,
                    took,
                    panics[0].message,
                    short(&panics[0].location)
                );
            }
            Err(_) => {
                crashed = true;
                println!("{}/{}: PANIC ({:.2} s)", t.name, e.name, took);
            }
            Ok(Ok(())) => println!("{}/{}: ok ({:.2} s)", t.name, e.name, took),
            Ok(Err(err)) => println!("{}/{}: error ({:.2} s): {err}", t.name, e.name, took),
        }
    }
    crashed
}

/// Runs every entry of every target on each seed, unchanged, and prints the outcomes:
/// the seeds should mostly read without errors.
pub fn check_seeds(work: &Path) -> bool {
    install_hook(true);
    let (ctx, all) = targets::all(work);
    let mut crashed = false;
    for t in &all {
        let tdir = work.join(t.name);
        std::fs::create_dir_all(&tdir).expect("target folder");
        for (s, (item, tag)) in t.seeds.iter().enumerate() {
            let path = tdir.join(t.file);
            std::fs::write(&path, &item.bytes).expect("write seed");
            for e in &t.entries {
                if !(e.tags.is_empty() || e.tags.contains(tag)) {
                    continue;
                }
                let input = Input {
                    path: &path,
                    bytes: &item.bytes,
                    hash: rng::hash(&item.bytes),
                    dir: &tdir,
                };
                let r = catch_unwind(AssertUnwindSafe(|| (e.run)(&ctx, &input)));
                let panics = take_panics();
                let what = match r {
                    _ if !panics.is_empty() => {
                        crashed = true;
                        format!("PANIC {}", panics[0].message)
                    }
                    Err(_) => {
                        crashed = true;
                        "PANIC".into()
                    }
                    Ok(Ok(())) => "ok".into(),
                    Ok(Err(err)) => format!("error: {err}"),
                };
                println!("{} seed {s} ({tag}) {}: {what}", t.name, e.name);
            }
        }
    }
    crashed
}
