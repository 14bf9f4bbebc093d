//! Progress on a terminal (issue 16): drawn on stderr for a job longer than a second,
//! erased when it ends (or when the output starts on the same terminal), notes and nsys'
//! messages said above it intact; never in a pipe, nor with `-q`, nor for a quick job,
//! nor by a tool reading a pipe on stdin (a later stage of a pipeline: the stage reading
//! the named inputs shows it).
//!
//! A terminal comes from `script` (util-linux), which runs a command on a pseudo-terminal
//! and copies what it wrote. A slow job, as slow in debug and release builds alike: an
//! `.nsys-rep` report exported by a stand-in `nsys` that pauses, or input written in two
//! parts with a pause between them.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// How long a slow job pauses: past the second after which progress is drawn.
const PAUSE: Duration = Duration::from_millis(2000);

/// What njx-ranges says when its filter keeps nothing (of the report's ranges).
const NOTHING_KEPT: &str = "njx-ranges: none of the 3 ranges read is left after the filters";

/// What the stand-in nsys says.
const NSYS_SAYS: &str = "Processing events...";

/// Makes in `dir` a report `run.nsys-rep` of three ranges and a stand-in `nsys` in
/// `dir/bin` that takes [`PAUSE`] to export it (and one that takes no time in
/// `dir/quick`); returns the `PATH`s that find the slow one and the quick one.
fn slow_report(dir: &Path) -> (String, String) {
    let fixture = dir.join("fixture.sqlite");
    let db = NsysDb::create(&fixture);
    db.range(0, 100, gtid(1, 1), "outer");
    db.range(10, 20, gtid(1, 1), "inner");
    db.range(200, 300, gtid(1, 1), "later");
    drop(db);
    write(
        dir,
        "run.nsys-rep",
        b"NVIDIA Tegra Profiler Report 2025@1@1@110",
    );
    let bin = dir.join("bin");
    fake_nsys(&bin, &fixture, 0, PAUSE.as_secs_f64());
    fake_nsys(&dir.join("quick"), &fixture, 0, 0.0);
    // The stand-in needs `cp` and `sleep` from the system's PATH.
    let system = std::env::var("PATH").unwrap_or_default();
    let path = |bin: &str| format!("{}:{system}", dir.join(bin).display());
    (path("bin"), path("quick"))
}

/// The example push/pop CSV in two parts: the header and the first rows, the rest.
fn halves() -> (&'static str, &'static str) {
    let at = COMPILE_CSV
        .find("\n300000000,")
        .expect("a row starting at 300 ms");
    COMPILE_CSV.split_at(at + 1)
}

/// What `command` (a shell command line run in `dir` with `PATH` set to `path`) writes
/// to its terminal, stdout and stderr together; `None` (said as skipped) where `script`
/// cannot give it one.
fn on_terminal(dir: &Path, path: &str, command: &str) -> Option<String> {
    let Ok(probe) = Command::new("script").arg("--version").output() else {
        eprintln!("SKIPPED: no `script` (util-linux) to run a tool on a terminal");
        return None;
    };
    if !probe.status.success() {
        eprintln!("SKIPPED: `script` does not run");
        return None;
    }
    let out = Command::new("script")
        .args(["-q", "-e", "-c", command, "/dev/null"])
        .current_dir(dir)
        .env("PATH", path)
        // indicatif draws on terminals it can clear lines of: `TERM` set and not `dumb`.
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .expect("run script");
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    Some(String::from_utf8(out.stdout).expect("UTF-8 terminal output"))
}

/// The lines a terminal shows once `raw` is written to it: a carriage return goes back to
/// the start of the line, `ESC [2K` clears it, text overwrites. Any other escape sequence
/// fails the test (the emulation would be wrong).
fn screen(raw: &str) -> Vec<String> {
    let mut lines: Vec<Vec<char>> = vec![Vec::new()];
    let mut col = 0;
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        let line = lines.last_mut().expect("a line");
        match c {
            '\r' => col = 0,
            '\n' => {
                lines.push(Vec::new());
                col = 0;
            }
            '\x1b' => {
                let seq: String = chars.by_ref().take(3).collect();
                assert_eq!(
                    seq, "[2K",
                    "an escape sequence other than clear-line: {raw:?}"
                );
                line.clear();
            }
            c => {
                if col < line.len() {
                    line[col] = c;
                } else {
                    line.resize(col, ' ');
                    line.push(c);
                }
                col += 1;
            }
        }
    }
    lines
        .into_iter()
        .map(|l| l.into_iter().collect::<String>().trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_long_job_shows_progress_on_a_terminal_and_leaves_only_its_notes() {
    let dir = tempdir();
    let (path, _) = slow_report(dir.path());
    let exe = exe("njx-ranges");
    let command = format!("{exe} --subtree '^nothing' -o out.jsonl run.nsys-rep");
    let Some(raw) = on_terminal(dir.path(), &path, &command) else {
        return;
    };
    // Drawn: a spinner saying what is being done.
    assert!(raw.contains("\x1b[2K"), "{raw:?}");
    assert!(raw.contains("run.nsys-rep: exporting with nsys"), "{raw:?}");
    // Erased at the end: what nsys said and the note said while the line was drawn are
    // whole, each on a line of its own.
    let shown = screen(&raw);
    assert_eq!(shown.len(), 2, "{shown:#?}\n{raw:?}");
    assert_eq!(shown[0], NSYS_SAYS);
    assert!(shown[1].starts_with(NOTHING_KEPT), "{shown:#?}");
    assert_eq!(std::fs::read(dir.path().join("out.jsonl")).unwrap(), b"");
}

#[test]
fn progress_is_erased_before_the_output_is_written_to_the_same_terminal() {
    let dir = tempdir();
    let (path, quick) = slow_report(dir.path());
    let exe = exe("njx-export");
    let Some(raw) = on_terminal(dir.path(), &path, &format!("{exe} run.nsys-rep")) else {
        return;
    };
    assert!(raw.contains("exporting with nsys"), "{raw:?}");
    // The records as in a pipe, after what nsys said; nothing else.
    let records = Command::new(exe)
        .arg("run.nsys-rep")
        .current_dir(dir.path())
        .env("PATH", &quick)
        .output()
        .unwrap();
    assert!(records.status.success(), "{}", stderr_of(&records));
    let mut want = vec![NSYS_SAYS.to_string()];
    want.extend(
        String::from_utf8(records.stdout)
            .unwrap()
            .lines()
            .map(str::to_string),
    );
    assert_eq!(want.len(), 4);
    assert_eq!(screen(&raw), want, "{raw:?}");
}

#[test]
fn quick_and_quiet_jobs_draw_nothing_on_a_terminal() {
    let dir = tempdir();
    let (path, _) = slow_report(dir.path());
    let exe = exe("njx-ranges");
    // Quick: done before a second has passed.
    let csv = write(dir.path(), "all.csv", COMPILE_CSV.as_bytes());
    let Some(quick) = on_terminal(
        dir.path(),
        &path,
        &format!("{exe} --subtree '^nothing' -o out.jsonl {csv}"),
    ) else {
        return;
    };
    assert!(!quick.contains('\x1b'), "{quick:?}");
    assert_eq!(
        screen(&quick),
        [
            "njx-ranges: none of the 12 ranges read is left after the filters (--subtree \
          '^nothing'): nothing written"
        ]
    );
    // Quiet: no notes and no progress however long; nsys' own words are not notes.
    let quiet = on_terminal(
        dir.path(),
        &path,
        &format!("{exe} -q --subtree '^nothing' -o out.jsonl run.nsys-rep"),
    )
    .expect("script ran above");
    assert!(!quiet.contains('\x1b'), "{quiet:?}");
    assert_eq!(screen(&quiet), [NSYS_SAYS]);
}

/// A tool waiting for what is typed at the terminal draws no progress over it: its hint
/// alone.
#[test]
fn a_tool_reading_the_terminal_draws_nothing_over_it() {
    let dir = tempdir();
    let pause = PAUSE.as_secs_f64();
    let exe = exe("njx-ranges");
    let path = std::env::var("PATH").unwrap_or_default();
    let Some(raw) = on_terminal(
        dir.path(),
        &path,
        &format!("{exe} -o out.jsonl < /dev/tty & sleep {pause}; kill $!; wait; true"),
    ) else {
        return;
    };
    assert!(!raw.contains('\x1b'), "{raw:?}");
    assert!(
        raw.starts_with("njx-ranges: no input files: reading stdin"),
        "{raw:?}"
    );
}

#[test]
fn a_tool_reading_a_pipe_leaves_progress_to_the_stage_before_it() {
    let dir = tempdir();
    let (head, rest) = halves();
    write(dir.path(), "head.csv", head.as_bytes());
    write(dir.path(), "rest.csv", rest.as_bytes());
    let pause = PAUSE.as_secs_f64();
    let exe = exe("njx-ranges");
    let path = std::env::var("PATH").unwrap_or_default();
    let Some(raw) = on_terminal(
        dir.path(),
        &path,
        &format!(
            "(cat head.csv; sleep {pause}; cat rest.csv) | {exe} --subtree '^nothing' -o out.jsonl"
        ),
    ) else {
        return;
    };
    assert!(!raw.contains('\x1b'), "{raw:?}");
    assert!(
        raw.starts_with("njx-ranges: none of the 12 ranges"),
        "{raw:?}"
    );
}

#[test]
fn a_long_job_in_a_pipe_says_its_notes_alone() {
    let dir = tempdir();
    let (path, _) = slow_report(dir.path());
    let out = Command::new(exe("njx-ranges"))
        .args(["--subtree", "^nothing", "run.nsys-rep"])
        .current_dir(dir.path())
        .env("PATH", &path)
        .env("TERM", "xterm")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains(['\x1b', '\r']), "{err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(lines[0], NSYS_SAYS);
    assert!(lines[1].starts_with(NOTHING_KEPT), "{err}");
}
