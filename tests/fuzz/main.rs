//! A fuzzing harness on stable Rust, in-process, over every reader of njx: push/pop CSV
//! (plain, gzip, xz), record streams and partial results, Parquet tables (push/pop, GPU
//! projection), thread metadata, HLO protos (and njx-heap's buffer assignments and heap
//! simulator traces), nsys SQLite exports, zip containers (nsys-jax, combine and
//! njx-capture archives, also extracted as folders), njx-combine's member handling (names
//! and file types it must never write), njx-pgle's writer (HLO dumps and partial results
//! whose fingerprints name the files it writes: `pgle-dumps`, `pgle-partials`), folded
//! stacks, the overwrite rule's judgement of an existing output (`output-guard`) and the
//! program `njx TOOL` runs (`launcher`). It
//! mutates valid fixtures generated here (`seeds.rs`) in ways that know each format
//! (`item.rs`) and calls the library's readers and whole analyses on them (`targets.rs`).
//!
//! `cargo test` runs a short, deterministic run (a fixed number of executions per
//! target, seed 1) and fails on any crash. `scripts/fuzz.sh [SECONDS] [SEED]` runs it
//! for a given time. The supervisor (this process) runs the fuzzing in a worker process
//! under a memory limit and restarts it after an abort (allocation failure, stack
//! overflow) or a hang, saving the input that caused it; panics are caught in the
//! worker. Crashing inputs go to `target/fuzz-crashes/<target>.<entry>.<kind>.<hash>`,
//! with a `.txt` beside each (message, backtrace); replay one with
//! `cargo test --test fuzz -- --replay FILE` (target and entry are read from the name).
//!
//! Options (after `--`): `--seconds N` (timed run), `--execs N` (per target), `--seed S`,
//! `--targets a,b`, `--memory-mb M` (0: no limit), `--hang-secs H`, `--crashes DIR`,
//! `--replay FILE [--reader TARGET] [--entry ENTRY] [--dir]`, `--check-seeds`.

// The test suite's fixture builders, shared read-only.
#[allow(unused_imports)]
#[path = "../njx/common/mod.rs"]
mod common;

mod bytes;
mod combine;
mod engine;
mod hloproto;
mod item;
mod pgle;
mod rng;
mod seeds;
mod sql;
mod table;
mod targets;
mod text;
mod zipper;

use std::collections::{BTreeMap, HashMap};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Executions per target of the run `cargo test` makes.
const SHORT_EXECS: u64 = 300;

struct Args {
    seconds: Option<f64>,
    execs: Option<u64>,
    seed: u64,
    targets: Option<String>,
    memory_mb: u64,
    hang_secs: f64,
    crashes: PathBuf,
    replay: Option<PathBuf>,
    reader: Option<String>,
    entry: Option<String>,
    dir: bool,
    check_seeds: bool,
    worker: bool,
    work: Option<PathBuf>,
    stats: Option<PathBuf>,
    findings: Option<PathBuf>,
    current: Option<PathBuf>,
    quota: Option<String>,
    filters: Vec<String>,
    list: bool,
    ignored: bool,
}

fn default_crashes() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .map_or_else(|| PathBuf::from("fuzz-crashes"), |t| t.join("fuzz-crashes"))
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seconds: None,
        execs: None,
        seed: 1,
        targets: None,
        memory_mb: 2048,
        hang_secs: 10.0,
        crashes: default_crashes(),
        replay: None,
        reader: None,
        entry: None,
        dir: false,
        check_seeds: false,
        worker: false,
        work: None,
        stats: None,
        findings: None,
        current: None,
        quota: None,
        filters: Vec::new(),
        list: false,
        ignored: false,
    };
    let mut it = std::env::args().skip(1);
    let num = |v: Option<String>, name: &str| -> Result<String, String> {
        v.ok_or_else(|| format!("{name} needs a value"))
    };
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--seconds" => {
                a.seconds = Some(
                    num(it.next(), &arg)?
                        .parse()
                        .map_err(|e| format!("{arg}: {e}"))?,
                )
            }
            "--execs" => {
                a.execs = Some(
                    num(it.next(), &arg)?
                        .parse()
                        .map_err(|e| format!("{arg}: {e}"))?,
                )
            }
            "--seed" => {
                a.seed = num(it.next(), &arg)?
                    .parse()
                    .map_err(|e| format!("{arg}: {e}"))?
            }
            "--targets" => a.targets = Some(num(it.next(), &arg)?),
            "--memory-mb" => {
                a.memory_mb = num(it.next(), &arg)?
                    .parse()
                    .map_err(|e| format!("{arg}: {e}"))?
            }
            "--hang-secs" => {
                a.hang_secs = num(it.next(), &arg)?
                    .parse()
                    .map_err(|e| format!("{arg}: {e}"))?
            }
            "--crashes" => a.crashes = PathBuf::from(num(it.next(), &arg)?),
            "--replay" => a.replay = Some(PathBuf::from(num(it.next(), &arg)?)),
            "--reader" => a.reader = Some(num(it.next(), &arg)?),
            "--entry" => a.entry = Some(num(it.next(), &arg)?),
            "--dir" => a.dir = true,
            "--check-seeds" => a.check_seeds = true,
            "--worker" => a.worker = true,
            "--work" => a.work = Some(PathBuf::from(num(it.next(), &arg)?)),
            "--stats" => a.stats = Some(PathBuf::from(num(it.next(), &arg)?)),
            "--findings" => a.findings = Some(PathBuf::from(num(it.next(), &arg)?)),
            "--current" => a.current = Some(PathBuf::from(num(it.next(), &arg)?)),
            "--quota" => a.quota = Some(num(it.next(), &arg)?),
            // libtest's options, which `cargo test` passes to every test target
            "--list" => a.list = true,
            "--ignored" => a.ignored = true,
            "--nocapture"
            | "--show-output"
            | "--quiet"
            | "-q"
            | "--include-ignored"
            | "--exact"
            | "--no-capture"
            | "--force-run-in-process"
            | "--bench"
            | "--test" => {}
            "--test-threads" | "--format" | "--color" | "-Z" | "--skip" | "--logfile"
            | "--shuffle-seed" | "--report-time" => {
                let _ = it.next();
            }
            s if s.starts_with("--") && s.contains('=') => {}
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            s => a.filters.push(s.to_string()),
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if args.list {
        println!("fuzz: test");
        return ExitCode::SUCCESS;
    }
    if args.ignored
        || (!args.filters.is_empty() && !args.filters.iter().any(|f| "fuzz".contains(f.as_str())))
    {
        println!("running 0 tests (the fuzzing run is named `fuzz`)");
        return ExitCode::SUCCESS;
    }
    if args.worker {
        return worker(&args);
    }
    if let Some(file) = &args.replay {
        return replay(&args, file);
    }
    if args.check_seeds {
        let work = tempfile::tempdir().expect("work folder");
        let crashed = engine::check_seeds(work.path());
        return if crashed {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        };
    }
    supervise(&args)
}

fn worker(args: &Args) -> ExitCode {
    let work = args.work.clone().expect("--work");
    let quota = args.quota.as_ref().map(|q| {
        q.split(',')
            .filter_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                Some((k.to_string(), v.parse().ok()?))
            })
            .collect::<HashMap<String, u64>>()
    });
    let cfg = engine::Config {
        seconds: args.seconds.unwrap_or(1e9),
        quota,
        seed: args.seed,
        crashes: args.crashes.clone(),
        hang_secs: args.hang_secs,
        only: args.targets.clone(),
        stats: args.stats.clone().unwrap_or_else(|| work.join("stats")),
        findings: args
            .findings
            .clone()
            .unwrap_or_else(|| work.join("findings")),
        current: args.current.clone().unwrap_or_else(|| work.join("current")),
        work,
    };
    ExitCode::from(engine::worker(&cfg) as u8)
}

/// Replays under the memory limit (in a child process, so that an abort is seen).
fn replay(args: &Args, file: &Path) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    if args.memory_mb == 0 || std::env::var_os("NJX_FUZZ_LIMITED").is_some() {
        return replay_here(args, file);
    }
    let exe = std::env::current_exe().expect("own path");
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg("ulimit -v \"$1\" || exit 97; shift; exec \"$@\"")
        .arg("sh")
        .arg((args.memory_mb * 1024).to_string())
        .arg(&exe)
        .args(std::env::args_os().skip(1))
        .env("NJX_FUZZ_LIMITED", "1")
        .env("MALLOC_ARENA_MAX", "2")
        .env("RUST_BACKTRACE", "1")
        .status();
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => {
            if let Some(sig) = s.signal() {
                println!(
                    "replay: aborted by signal {sig} under the {} MiB memory limit",
                    args.memory_mb
                );
            }
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("fuzz: cannot run the replay: {e}");
            ExitCode::from(2)
        }
    }
}

fn replay_here(args: &Args, file: &Path) -> ExitCode {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parts: Vec<&str> = name.split('.').collect();
    let target = args
        .reader
        .clone()
        .or_else(|| parts.first().map(|s| s.to_string()));
    let entry = args
        .entry
        .clone()
        .or_else(|| parts.get(1).map(|s| s.to_string()));
    let dir = args.dir || name.ends_with(".dir");
    let Some(target) = target else {
        eprintln!("fuzz: --replay needs --reader TARGET");
        return ExitCode::from(2);
    };
    let work = tempfile::tempdir().expect("work folder");
    let crashed = engine::replay(
        work.path(),
        file,
        &target,
        entry.as_deref(),
        dir,
        args.hang_secs,
    );
    if crashed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Everything the workers reported, summed.
#[derive(Default)]
struct Totals {
    /// (target, entry) → (execs, oks, errs, crashes).
    execs: BTreeMap<(String, String), [u64; 4]>,
    corpus: BTreeMap<String, u64>,
    /// Finding key → occurrences.
    occurrences: HashMap<String, u64>,
    mutator_failures: u64,
}

impl Totals {
    fn add_stats(&mut self, path: &Path) {
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        for line in text.lines() {
            let f: Vec<&str> = line.split('\t').collect();
            match f.as_slice() {
                ["E", t, e, rest @ ..] if rest.len() == 4 => {
                    let slot = self
                        .execs
                        .entry((t.to_string(), e.to_string()))
                        .or_default();
                    for (k, v) in rest.iter().enumerate() {
                        slot[k] += v.parse::<u64>().unwrap_or(0);
                    }
                }
                ["C", t, n] => {
                    let n = n.parse().unwrap_or(0);
                    let c = self.corpus.entry(t.to_string()).or_default();
                    *c = (*c).max(n);
                }
                ["F", key, n] => {
                    *self.occurrences.entry(key.to_string()).or_default() +=
                        n.parse::<u64>().unwrap_or(0)
                }
                ["M", n] => self.mutator_failures += n.parse::<u64>().unwrap_or(0),
                _ => {}
            }
        }
    }

    fn done(&self, target: &str) -> u64 {
        self.execs
            .iter()
            .filter(|((t, _), _)| t == target)
            .map(|(_, c)| c[0])
            .sum()
    }
}

/// One finding as reported.
struct Finding {
    kind: String,
    target: String,
    entry: String,
    key: String,
    file: String,
    message: String,
}

fn read_findings(path: &Path) -> Vec<Finding> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.splitn(6, '\t').collect();
            (f.len() == 6).then(|| Finding {
                kind: f[0].into(),
                target: f[1].into(),
                entry: f[2].into(),
                key: f[3].into(),
                file: f[4].into(),
                message: f[5].into(),
            })
        })
        .collect()
}

fn supervise(args: &Args) -> ExitCode {
    let exe = std::env::current_exe().expect("own path");
    let work = tempfile::Builder::new()
        .prefix("njx-fuzz-")
        .tempdir()
        .expect("work folder");
    let started = Instant::now();
    // A timed run, or a counted one (the short run of `cargo test`).
    let timed = args.seconds.is_some();
    let execs = args.execs.unwrap_or(SHORT_EXECS);
    let seconds = args.seconds.unwrap_or(0.0);
    let cap = if timed { seconds } else { 600.0 };
    let deadline = started + Duration::from_secs_f64(cap);
    let names: Vec<&str> = vec![
        "pushpop-csv",
        "records",
        "pushpop-parquet",
        "gpu-parquet",
        "thread-metadata",
        "device-metadata",
        "hlo",
        "heap",
        "sqlite",
        "zip",
        "combine",
        "pgle-dumps",
        "pgle-partials",
        "folded",
        "output-guard",
        "launcher",
    ];
    let names: Vec<&str> = match &args.targets {
        Some(only) => names
            .into_iter()
            .filter(|n| only.split(',').any(|o| n.contains(o)))
            .collect(),
        None => names,
    };
    let findings_path = work.path().join("findings");
    let mut totals = Totals::default();
    let mut aborts: Vec<Finding> = Vec::new();
    let mut workers = 0u64;
    let mut harness_failures = 0u64;
    println!(
        "njx fuzz: seed {}, {}, memory limit {}, hang limit {} s, crashes saved in {}",
        args.seed,
        if timed {
            format!("{seconds} s")
        } else {
            format!("{execs} executions per target")
        },
        if args.memory_mb > 0 {
            format!("{} MiB", args.memory_mb)
        } else {
            "none".into()
        },
        args.hang_secs,
        args.crashes.display()
    );
    loop {
        let now = Instant::now();
        if now + Duration::from_millis(500) >= deadline {
            break;
        }
        let remaining = (deadline - now).as_secs_f64();
        let mut quota = String::new();
        if !timed {
            let parts: Vec<String> = names
                .iter()
                .filter_map(|n| {
                    let left = execs.saturating_sub(totals.done(n));
                    (left > 0).then(|| format!("{n}={left}"))
                })
                .collect();
            if parts.is_empty() {
                break;
            }
            quota = parts.join(",");
        }
        let k = workers;
        workers += 1;
        if workers > 500 {
            eprintln!("fuzz: too many worker restarts; stopping");
            break;
        }
        let stats = work.path().join(format!("stats.{k}"));
        let current = work.path().join(format!("current.{k}"));
        let seed = args
            .seed
            .wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let mut wargs: Vec<String> = vec![
            "--worker".into(),
            "--work".into(),
            work.path().join("w").display().to_string(),
            "--stats".into(),
            stats.display().to_string(),
            "--findings".into(),
            findings_path.display().to_string(),
            "--current".into(),
            current.display().to_string(),
            "--seed".into(),
            seed.to_string(),
            "--hang-secs".into(),
            args.hang_secs.to_string(),
            "--crashes".into(),
            args.crashes.display().to_string(),
            "--seconds".into(),
            remaining.to_string(),
        ];
        if !timed {
            wargs.push("--quota".into());
            wargs.push(quota);
        }
        if let Some(t) = &args.targets {
            wargs.push("--targets".into());
            wargs.push(t.clone());
        }
        let mut cmd = if args.memory_mb > 0 {
            let mut c = Command::new("/bin/sh");
            c.arg("-c")
                .arg("ulimit -v \"$1\" || exit 97; shift; exec \"$@\"")
                .arg("sh")
                .arg((args.memory_mb * 1024).to_string())
                .arg(&exe);
            c
        } else {
            Command::new(&exe)
        };
        cmd.args(&wargs)
            .env("MALLOC_ARENA_MAX", "2")
            // an abort then prints where it happened
            .env("RUST_BACKTRACE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::inherit())
            .stderr(Stdio::piped());
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("fuzz: cannot start a worker: {e}");
                return ExitCode::from(2);
            }
        };
        // The worker's stderr: its last lines say why it aborted.
        let tail: Arc<Mutex<Vec<String>>> = Arc::default();
        let reader = {
            let tail = Arc::clone(&tail);
            let stderr = child.stderr.take().expect("piped stderr");
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    let mut t = tail
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    // the first lines say what happened, the last ones where
                    let mut line = line;
                    line.truncate(2000);
                    t.push(line);
                    if t.len() > 400 {
                        t.remove(200);
                    }
                }
            })
        };
        // Setup, the run, and the hang limit of its last execution.
        let limit = Instant::now() + Duration::from_secs_f64(remaining + args.hang_secs + 120.0);
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break Some(s),
                Ok(None) if Instant::now() > limit => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(50)),
                Err(_) => break None,
            }
        };
        let _ = reader.join();
        totals.add_stats(&stats);
        let code = status.and_then(|s| s.code());
        match code {
            // timed: the worker used the time; counted: the quotas say whether another
            // worker is needed
            Some(0) if timed => break,
            Some(0) => continue,
            Some(engine::HANG_EXIT) => continue,
            _ => {
                // an abort: the input is the one `current` names
                let tail = tail.lock().map(|t| t.clone()).unwrap_or_default();
                let why = describe_exit(status, &tail);
                let cur = std::fs::read_to_string(&current).unwrap_or_default();
                let fields: Vec<&str> = cur.trim().split('\t').collect();
                if let [target, entry, blob, dir] = fields.as_slice() {
                    let bytes = std::fs::read(blob).unwrap_or_default();
                    let dir = *dir == "1";
                    let _ = std::fs::create_dir_all(&args.crashes);
                    let file = args
                        .crashes
                        .join(engine::saved_name(target, entry, "abort", &bytes, dir));
                    let _ = std::fs::write(&file, &bytes);
                    let _ = std::fs::write(
                        file.with_extension(format!(
                            "{}.txt",
                            file.extension().and_then(|e| e.to_str()).unwrap_or("")
                        )),
                        format!(
                            "abort in {target} / {entry}\n{why}\n\nworker stderr:\n{}\n",
                            tail.join("\n")
                        ),
                    );
                    let frame = tail.iter().find_map(|l| engine::src_frame(l));
                    let key = format!(
                        "abort: {}{}",
                        normalize(why.split_once(": ").map_or(why.as_str(), |w| w.1)),
                        frame
                            .as_ref()
                            .map(|f| format!(" via {f}"))
                            .unwrap_or_default()
                    );
                    let why = match frame {
                        Some(f) => format!("{why} (from {f})"),
                        None => why,
                    };
                    *totals.occurrences.entry(key.clone()).or_default() += 1;
                    if !aborts.iter().any(|a| a.key == key) {
                        aborts.push(Finding {
                            kind: "abort".into(),
                            target: target.to_string(),
                            entry: entry.to_string(),
                            key,
                            file: file.display().to_string(),
                            message: why,
                        });
                    }
                    // the run goes on in a new worker
                } else if stats.exists() {
                    // between executions: while mutating (the harness's own failing)
                    eprintln!(
                        "fuzz: the worker failed between executions ({why}); its stderr:\n{}",
                        tail.join("\n")
                    );
                    harness_failures += 1;
                } else {
                    eprintln!(
                        "fuzz: the worker failed before fuzzing ({why}); its stderr:\n{}",
                        tail.join("\n")
                    );
                    return ExitCode::from(2);
                }
            }
        }
    }
    if harness_failures > 0 {
        eprintln!("fuzz: {harness_failures} workers failed between executions (see above)");
    }
    report(
        &totals,
        &read_findings(&findings_path),
        &aborts,
        workers,
        started.elapsed(),
    )
}

fn normalize(s: &str) -> String {
    let mut out = String::new();
    let mut digit = false;
    for ch in s.chars() {
        if ch.is_ascii_digit() {
            if !digit {
                out.push('#');
            }
            digit = true;
        } else {
            digit = false;
            out.push(ch);
        }
    }
    out
}

fn describe_exit(status: Option<std::process::ExitStatus>, tail: &[String]) -> String {
    use std::os::unix::process::ExitStatusExt;
    let how = match status {
        None => "the worker stopped responding and was killed".to_string(),
        Some(s) => match (s.code(), s.signal()) {
            (_, Some(sig)) => format!("killed by signal {sig}"),
            (Some(c), _) => format!("exit code {c}"),
            _ => "ended".to_string(),
        },
    };
    let last = tail
        .iter()
        .find(|l| {
            l.contains("memory allocation")
                || l.contains("overflowed its stack")
                || l.contains("fatal runtime error")
                || l.contains("panicked")
                || l.contains("abort")
        })
        .or_else(|| tail.iter().rev().find(|l| !l.trim().is_empty()))
        .cloned()
        .unwrap_or_default();
    format!("{how}: {last}")
}

fn report(
    totals: &Totals,
    findings: &[Finding],
    aborts: &[Finding],
    workers: u64,
    took: Duration,
) -> ExitCode {
    println!();
    println!(
        "{:<16} {:<22} {:>10} {:>9} {:>9} {:>7}",
        "target", "entry", "execs", "ok", "error", "crash"
    );
    let mut per_target: BTreeMap<&str, u64> = BTreeMap::new();
    let mut total = 0u64;
    for ((t, e), c) in &totals.execs {
        println!(
            "{t:<16} {e:<22} {:>10} {:>9} {:>9} {:>7}",
            c[0], c[1], c[2], c[3]
        );
        *per_target.entry(t.as_str()).or_default() += c[0];
        total += c[0];
    }
    println!();
    for (t, n) in &per_target {
        println!(
            "{t:<16} {n:>10} executions, largest corpus {}",
            totals.corpus.get(*t).copied().unwrap_or(0)
        );
    }
    println!(
        "total: {total} executions in {:.1} s ({:.0}/s), {workers} worker process{}, {} mutations refused by the writers",
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64().max(1e-9),
        if workers == 1 { "" } else { "es" },
        totals.mutator_failures
    );
    // deduplicate across workers by key
    let mut seen: Vec<&Finding> = Vec::new();
    for f in findings.iter().chain(aborts) {
        if !seen.iter().any(|s| s.key == f.key) {
            seen.push(f);
        }
    }
    if seen.is_empty() {
        println!("no crashes, hangs or aborts");
        return ExitCode::SUCCESS;
    }
    println!(
        "\n{} distinct finding{}:",
        seen.len(),
        if seen.len() == 1 { "" } else { "s" }
    );
    for f in &seen {
        let n = totals.occurrences.get(&f.key).copied().unwrap_or(1).max(1);
        println!(
            "- {} in {}/{} ({n}×): {}\n    key: {}\n    input: {}",
            f.kind, f.target, f.entry, f.message, f.key, f.file
        );
    }
    ExitCode::FAILURE
}
