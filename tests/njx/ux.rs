//! What a user sees first (issue 16): records of the wrong kind named for what they are,
//! CSV headers on empty outputs, `-q`, `--version`, the stdin hint at a terminal, decimal
//! folded counts.

use crate::common::*;
use crate::flamefold::folded;
use std::process::Command;

/// Range records of the example compilation.
fn range_records() -> String {
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    ok("njx-export", &[&csv])
}

#[test]
fn records_of_another_table_say_what_they_are_and_what_to_run() {
    let ranges = range_records();
    for tool in ["njx-modules", "njx-collectives"] {
        let out = run(tool, &[], ranges.as_bytes());
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("-:1: these are ranges records (njx-export --table ranges output)"),
            "{err}"
        );
        let want = if tool == "njx-modules" {
            "modules"
        } else {
            "thunks"
        };
        assert!(
            err.contains(&format!("`njx-export --table {want}`")),
            "{err}"
        );
    }
    // The same from CSV records: the header tells.
    let dir = tempdir();
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let ranges_csv = ok("njx-export", &["--format", "csv", &csv]);
    let out = run("njx-modules", &[], ranges_csv.as_bytes());
    assert!(
        stderr_of(&out).contains("these are ranges records"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn an_empty_csv_still_has_its_header_and_an_empty_filter_says_so() {
    let ranges = range_records();
    let out = run(
        "njx-ranges",
        &["--subtree", "^nothing-matches", "--format", "csv"],
        ranges.as_bytes(),
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert_eq!(
        String::from_utf8(out.stdout.clone()).unwrap(),
        "profile,pid,tid,id,parent,depth,start_ns,end_ns,dur_ns,child_ns,self_ns,children,name\n"
    );
    let err = stderr_of(&out);
    assert!(
        err.contains(
            "none of the 12 ranges read is left after the filters (--subtree '^nothing-matches')"
        ),
        "{err}"
    );
    // The header is the one records get.
    let some = run("njx-ranges", &["--format", "csv"], ranges.as_bytes());
    let text = String::from_utf8(some.stdout).unwrap();
    assert!(text.starts_with("profile,pid,tid,id,parent,depth,start_ns,end_ns,dur_ns,child_ns,self_ns,children,name\n"), "{text}");
}

#[test]
fn quiet_silences_notes_but_not_errors() {
    let ranges = range_records();
    let args = ["--subtree", "^nothing-matches"];
    let loud = run("njx-ranges", &args, ranges.as_bytes());
    assert!(!stderr_of(&loud).is_empty());
    let quiet = run("njx-ranges", &["-q", args[0], args[1]], ranges.as_bytes());
    assert!(quiet.status.success());
    assert_eq!(stderr_of(&quiet), "");
    let failed = run("njx-modules", &["-q"], ranges.as_bytes());
    assert_eq!(failed.status.code(), Some(1));
    assert!(stderr_of(&failed).contains("these are ranges records"));
}

#[test]
fn version_says_the_build() {
    for tool in ["njx-export", "njx-flamefold", "njx-capture"] {
        let long = ok(tool, &["--version"]);
        let short = ok(tool, &["-V"]);
        let version = env!("CARGO_PKG_VERSION");
        assert_eq!(short, format!("{tool} {version}\n"));
        assert!(
            long.starts_with(&format!("{tool} {version} (")) && long.contains("rustc "),
            "{long}"
        );
    }
}

#[test]
fn a_tool_waiting_on_a_terminal_says_so() {
    // `script` gives the tool a terminal for stdin; nothing is typed, so the tool waits
    // until `timeout` ends it, having said why it waits.
    let Ok(probe) = Command::new("script").arg("--version").output() else {
        eprintln!("SKIPPED: no `script` (util-linux) to run a tool on a terminal");
        return;
    };
    if !probe.status.success() {
        eprintln!("SKIPPED: `script` does not run");
        return;
    }
    let exe = env!("CARGO_BIN_EXE_njx-modules");
    // `timeout` runs the tool as a background job of the terminal: its read stops it
    // (SIGTTIN) until `timeout` sends SIGTERM and SIGCONT, which must end it. (`-k` only
    // keeps a regression from hanging the test run.)
    let on_terminal = |command: &str| -> String {
        let out = Command::new("script")
            .args(["-q", "-c", command, "/dev/null"])
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = on_terminal(&format!("timeout -k 5 2 {exe}; echo status=$?"));
    assert!(
        text.contains("njx-modules: no input files: reading stdin"),
        "{text}"
    );
    assert!(text.contains("status=124"), "not ended by SIGTERM: {text}");
    // The same with an output staged, so that the signals are handled: it still ends,
    // and leaves nothing behind.
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("table.txt");
    let text = on_terminal(&format!(
        "timeout -k 5 2 {exe} -o {}; echo status=$?",
        target.display()
    ));
    assert!(text.contains("status=124"), "not ended by SIGTERM: {text}");
    assert!(!text.contains("Input/output error"), "{text}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // In a pipe nothing is said.
    let piped = run("njx-modules", &[], b"");
    assert!(!stderr_of(&piped).contains("reading stdin"));
}

/// Issue 32: `--unit ms` wrote counts with decimals, which speedscope's folded importer
/// (`^(.*) (\d+)$`) reads no line of and inferno-flamegraph truncates (69,121 ms drawn of
/// 69,388). Every line is whole in every unit, read by flamegraph.pl, inferno and speedscope
/// alike, and the counts add up to the total time rounded to the unit: no time is lost, in
/// the lines or in the SVG drawn from them.
#[test]
fn folded_counts_in_ms_lose_no_time() {
    let ranges = range_records();
    let prepared = ok_with("njx-ranges", &["--xla-compile"], ranges.as_bytes());
    // `folded` checks every line is whole: speedscope's pattern, and what inferno reads
    // without truncating.
    let total = |args: &[&str]| -> u64 {
        folded(&ok_with("njx-flamefold", args, prepared.as_bytes()))
            .values()
            .sum()
    };
    let ns = total(&[]);
    assert!(ns > 10_000_000, "{ns} ns: enough for whole milliseconds");
    for (unit, per) in [("us", 1e3), ("ms", 1e6)] {
        assert_eq!(
            total(&["--unit", unit]),
            (ns as f64 / per).round() as u64,
            "{unit}: the counts add up to the total, {ns} ns"
        );
    }
    // The SVG (drawn by the inferno crate) is as wide as the total.
    let dir = tempdir();
    let svg = dir.path().join("ms.svg");
    ok_with(
        "njx-flamefold",
        &["--unit", "ms", "--svg", svg.to_str().unwrap()],
        prepared.as_bytes(),
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let ms = (ns as f64 / 1e6).round() as u64;
    let all = format!("all ({} ms, 100%)", thousands(ms));
    assert!(text.contains(&all), "{all} not in the SVG");
}

/// `n` with `,` between thousands, as inferno writes counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn cover_is_named_for_what_it_does_and_threshold_still_works() {
    let ranges = range_records();
    let cover = run(
        "njx-compile-summary",
        &["--total", "--cover", "55", "--format", "json"],
        ranges.as_bytes(),
    );
    let threshold = run(
        "njx-compile-summary",
        &["--total", "--threshold", "55", "--format", "json"],
        ranges.as_bytes(),
    );
    assert!(cover.status.success(), "{}", stderr_of(&cover));
    assert_eq!(cover.stdout, threshold.stdout);
    assert!(!cover.stdout.is_empty());
}

#[test]
fn a_number_past_64_bits_is_out_of_range_not_a_non_integer() {
    let dir = tempdir();
    let mut lines: Vec<String> = COMPILE_CSV.lines().map(str::to_string).collect();
    // A number of row 2 (split naively: a column after the quoted name) past i64.
    let mut cells: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    cells[10] = "99999999999999999999".into();
    lines[1] = cells.join(",");
    let csv = write(dir.path(), "big.csv", (lines.join("\n") + "\n").as_bytes());
    let out = run("njx-export", &[&csv], b"");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("big.csv:2: column `")
            && err.contains("`99999999999999999999` is out of range (past 64-bit integers)"),
        "{err}"
    );
}

/// `--help` of `tool` as printed for a terminal `columns` wide.
fn help_at(tool: &str, columns: &str) -> String {
    let out = Command::new(exe(tool))
        .arg("--help")
        .env("COLUMNS", columns)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn help_examples_fit_80_columns_and_come_out_line_for_line() {
    for cmd in njx::commands() {
        let tool = cmd.get_name().to_string();
        let after = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        let (_, examples) = crate::man::split_examples(&after);
        assert!(!examples.is_empty(), "{tool}: no Examples: block");
        for line in &examples {
            assert!(
                line.chars().count() + 2 <= 80,
                "{tool}: example line past 80 columns once indented: {line:?}"
            );
        }
        let help = help_at(&tool, "80");
        let (_, printed) = help
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{tool} --help: no examples\n{help}"));
        let printed: Vec<&str> = printed.lines().collect();
        for line in &printed {
            assert!(
                line.chars().count() <= 80,
                "{tool} --help: example line past 80 columns: {line:?}"
            );
        }
        // Not re-wrapped: the lines written in the after-help, as they are.
        let want: Vec<String> = examples.iter().map(|l| format!("  {l}")).collect();
        assert_eq!(printed, want, "{tool} --help: examples re-wrapped");
        // A `\` continuation is followed by an indented line.
        for pair in printed.windows(2) {
            if pair[0].ends_with('\\') {
                assert!(pair[1].starts_with("    "), "{tool}: {pair:?}");
            }
        }
    }
}

#[test]
fn help_is_no_wider_than_100_columns_on_a_wide_terminal() {
    for tool in ["njx-export", "njx-flamefold", "njx-capture"] {
        let help = help_at(tool, "200");
        let widest = help.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= 100, "{tool} --help: {widest} columns");
        assert!(widest > 80, "{tool} --help: {widest} columns");
    }
}

/// The long options of a tool (`--format`, …, `--completions`, `--help`).
fn long_options(cmd: &clap::Command) -> Vec<String> {
    let mut cmd = cmd.clone();
    cmd.build();
    cmd.get_arguments()
        .filter_map(|a| a.get_long())
        .map(|l| format!("--{l}"))
        .collect()
}

#[test]
fn every_tool_prints_its_completion_scripts() {
    let bash = has_bash();
    if !bash {
        eprintln!("SKIPPED: no bash to parse the bash completion scripts");
    }
    for cmd in njx::commands() {
        let tool = cmd.get_name().to_string();
        let longs = long_options(&cmd);
        assert!(longs.contains(&"--completions".to_string()));
        for shell in ["bash", "zsh", "fish"] {
            // Alone, without the inputs or program the tool otherwise takes.
            let script = ok(&tool, &["--completions", shell]);
            // The script registers itself for the tool's name.
            let registers = match shell {
                "bash" => script.lines().any(|l| {
                    l.trim_start().starts_with("complete -F ") && l.ends_with(&format!(" {tool}"))
                }),
                "zsh" => script.starts_with(&format!("#compdef {tool}\n")),
                _ => script.contains(&format!("complete -c {tool} ")),
            };
            assert!(registers, "{tool} {shell}:\n{script}");
            for long in &longs {
                let named = match shell {
                    "fish" => script.contains(&format!("-l {}", &long[2..])),
                    _ => script.contains(long.as_str()),
                };
                assert!(named, "{tool} --completions {shell} lacks {long}");
            }
            if tool == "njx-flamefold" {
                for by in ["stack", "source", "op-name", "opcode", "module", "device"] {
                    assert!(script.contains(by), "{shell}: --by {by}");
                }
            }
            if bash && shell == "bash" {
                let dir = tempdir();
                let path = write(dir.path(), "script.bash", script.as_bytes());
                let check = Command::new("bash").args(["-n", &path]).output().unwrap();
                assert!(check.status.success(), "{tool}: {}", stderr_of(&check));
            }
        }
    }
}

#[test]
fn bash_completes_options_and_their_values() {
    if !has_bash() {
        eprintln!("SKIPPED: no bash");
        return;
    }
    // Sources the script and asks its completion function what follows `words`.
    let complete = |tool: &str, words: &str| -> Vec<String> {
        let dir = tempdir();
        let script = ok(tool, &["--completions", "bash"]);
        let path = write(dir.path(), "script.bash", script.as_bytes());
        let program = format!(
            "source {path}; words=({tool} {words}); \
             f=$(complete -p {tool} | sed -E 's/.* -F ([^ ]+) .*/\\1/'); \
             COMP_WORDS=(\"${{words[@]}}\"); COMP_CWORD=$(( ${{#words[@]}} - 1 )); \
             $f {tool} \"${{words[-1]}}\" \"${{words[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        );
        let out = Command::new("bash")
            .args(["-c", &program])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let values = complete("njx-flamefold", "--by ''");
    assert_eq!(
        values,
        ["stack", "source", "op-name", "opcode", "module", "device"]
    );
    let formats = complete("njx-export", "--format ''");
    assert_eq!(formats, ["table", "json", "csv", "parquet"]);
    let options = complete("njx-capture", "--");
    for want in ["--output", "--condition", "--analysis", "--completions"] {
        assert!(options.iter().any(|o| o == want), "{options:?}");
    }
}

#[test]
fn completions_want_a_known_shell_and_no_other_arguments() {
    let out = run("njx-export", &["--completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_of(&out).contains("[possible values: bash,"),
        "{}",
        stderr_of(&out)
    );
    for (tool, args) in [
        ("njx-export", &["--completions", "bash", "x.csv"][..]),
        (
            "njx-capture",
            &["--completions", "bash", "--", "python"][..],
        ),
        (
            "njx-flamefold",
            &["--by", "source", "--completions", "fish"][..],
        ),
    ] {
        let out = run(tool, args, b"");
        assert_eq!(out.status.code(), Some(2), "{tool} {args:?}");
        assert!(
            stderr_of(&out).contains("cannot be used with"),
            "{}",
            stderr_of(&out)
        );
        assert!(out.stdout.is_empty());
    }
}

/// A stderr that cannot be written (full, closed) never turns a run into a crash: every
/// tool exits with the status of its run (issue 28: 101, a panic, on the first note).
#[test]
fn an_unwritable_stderr_changes_no_exit_status() {
    if !std::path::Path::new("/dev/full").exists() {
        eprintln!("skipped: no /dev/full on this machine");
        return;
    }
    let tools = [
        "njx-export",
        "njx-ranges",
        "njx-compile-summary",
        "njx-modules",
        "njx-kernels",
        "njx-thunks",
        "njx-collectives",
        "njx-flamefold",
        "njx-capture",
        "njx-combine",
        "njx-timeline",
        "njx-heap",
        "njx-pgle",
    ];
    let dir = tempdir();
    for tool in tools {
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap();
        let out = Command::new(exe(tool))
            .arg("/missing/input.zip")
            .current_dir(dir.path())
            .stdin(std::process::Stdio::null())
            .stderr(full)
            .output()
            .unwrap();
        let code = out.status.code();
        assert!(matches!(code, Some(1 | 2)), "{tool}: {code:?}");
    }
    // A run that succeeds with a note still succeeds.
    let csv = write(dir.path(), "trace.csv", COMPILE_CSV.as_bytes());
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let out = Command::new(exe("njx-ranges"))
        .args([&csv, "--select", "no-such-range"])
        .stderr(full)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// Text read from an input reaches the terminal with its control characters escaped: a
/// file holding a terminal's escape sequences cannot change its colours or title.
#[test]
fn control_characters_from_inputs_are_escaped_in_messages() {
    let dir = tempdir();
    let csv = write(
        dir.path(),
        "esc.csv",
        b"Start,\x1b]0;pwned\x07\x1b[31mred\x9b\n1,2\n",
    );
    let out = run("njx-ranges", &[&csv], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err:?}");
    assert!(err.contains("\\x1b]0;pwned\\x07\\x1b[31mred"), "{err}");
}

/// An option that takes a path takes one per occurrence: the inputs after it stay inputs
/// (issue 28: `--hlo DIR report.sqlite` read report.sqlite as a dump and stdin as input).
#[test]
fn hlo_takes_one_path_per_occurrence() {
    let dir = tempdir();
    let empty = dir.path().join("dumps");
    std::fs::create_dir(&empty).unwrap();
    let records = write(dir.path(), "ranges.jsonl", b"");
    for (tool, first) in [
        ("njx-export", vec!["--table", "thunks"]),
        ("njx-thunks", vec!["--view", "opcode"]),
        ("njx-flamefold", vec!["--by", "op-name"]),
    ] {
        let mut args = first.clone();
        args.extend(["--hlo", empty.to_str().unwrap(), "/missing/report.sqlite"]);
        let out = run(tool, &args, b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
        // The input is read as an input (and is missing), not taken as a dump folder.
        assert!(err.contains("/missing/report.sqlite"), "{tool}: {err}");
        assert!(!err.contains("reading stdin"), "{tool}: {err}");
        // Repeated, both are dump paths.
        let mut args = first;
        args.extend([
            "--hlo",
            empty.to_str().unwrap(),
            "--hlo",
            empty.to_str().unwrap(),
            &records,
        ]);
        let out = run(tool, &args, b"");
        assert_ne!(out.status.code(), Some(2), "{tool}: {}", stderr_of(&out));
    }
}

/// Records of two tables in one stream are named for what they are, not as a missing field
/// (issue 28: `cat modules.jsonl thunks.jsonl | njx-modules` said "missing field `thunks`").
#[test]
fn records_of_two_tables_in_one_stream_are_named() {
    let dir = tempdir();
    let module = r#"{"profile":"p","program":"f","program_id":1,"name":"jit_f","execution":0,"device":0,"start_ns":0,"dur_ns":10,"thunks":1,"warmup":false}"#;
    let thunk = r#"{"profile":"p","program":"f","program_id":1,"module":"jit_f","execution":0,"device":0,"name":"fusion.1","thunk_execution":0,"start_ns":0,"dur_ns":10,"hidden_ns":0,"comm":false,"warmup":false,"collective":null,"group_size":null,"message_bytes":null}"#;
    let mixed = write(
        dir.path(),
        "mixed.jsonl",
        format!("{module}\n{thunk}\n").as_bytes(),
    );
    let out = run("njx-modules", &[&mixed], b"");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("mixed.jsonl:2: a thunks record after 1 modules records"),
        "{err}"
    );
    let mixed = write(
        dir.path(),
        "mixed2.jsonl",
        format!("{thunk}\n{module}\n").as_bytes(),
    );
    let out = run("njx-collectives", &[&mixed], b"");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("mixed2.jsonl:2: a modules record after 1 thunks records"),
        "{err}"
    );
}

/// An export whose write-ahead log still holds rows is refused, naming it: read
/// `immutable`, it would be read without them (issue 28).
#[test]
fn an_export_with_rows_in_its_write_ahead_log_is_refused() {
    use crate::common::nsys_sqlite::*;
    let dir = tempdir();
    let path = dir.path().join("live.sqlite");
    let db = NsysDb::create(&path);
    db.range(1_000, 2_000, gtid(1, 1), "step");
    drop(db);
    // A writer in WAL mode that has not checkpointed yet: its rows are in live.sqlite-wal.
    let writer = rusqlite::Connection::open(&path).unwrap();
    writer
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get::<_, String>(0))
        .unwrap();
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint=0; INSERT INTO StringIds (id, value) VALUES (99, 'x');",
        )
        .unwrap();
    let wal = dir.path().join("live.sqlite-wal");
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let out = run("njx-export", &[path.to_str().unwrap()], b"");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("live.sqlite: a write-ahead log beside it"),
        "{err}"
    );
    drop(writer);
    // Checkpointed and closed: read as before.
    assert!(!wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0);
    let out = run("njx-export", &[path.to_str().unwrap()], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
}

/// The refusal of a binary input by a record-reading tool: exit 1, the file named (with
/// the line where the tool names one), the bytes in hex and nothing raw on stderr.
fn refused_as_binary(tool: &str, path: &str, at: &str) -> String {
    let out = run(tool, &[path], b"");
    let err = String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8");
    assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
    assert!(
        err.contains(&format!("{path}{at}: not ")),
        "{tool} does not name {path}{at}: {err}"
    );
    assert!(
        err.contains("this is a binary file, not text"),
        "{tool}: {err}"
    );
    assert!(!err.contains("text that is not records"), "{tool}: {err}");
    assert!(
        !err.contains('\u{fffd}')
            && err
                .chars()
                .all(|c| c == '\n' || (!c.is_control() && (c.is_ascii() || c == '—'))),
        "{tool} printed bytes of the input raw: {err:?}"
    );
    err
}

#[test]
fn a_binary_input_is_named_binary_with_its_format_and_first_bytes_in_hex() {
    let dir = tempdir();
    let png = write(
        dir.path(),
        "x.png",
        b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x10\x08\x06",
    );
    for (tool, at) in [
        ("njx-modules", ""),
        ("njx-collectives", ""),
        ("njx-export", ":1"),
    ] {
        let err = refused_as_binary(tool, &png, at);
        assert!(
            err.contains(
                "a PNG image (first bytes 89 50 4e 47 0d 0a 1a 0a 00 00 00 0d 49 48 44 52)"
            ),
            "{tool}: {err}"
        );
    }
    // Decompressed to noise: binary, of no known format.
    let noisy = write(dir.path(), "noise.gz", &gzip(&noise(4096)));
    let shown: Vec<String> = noise(16).iter().map(|b| format!("{b:02x}")).collect();
    for (tool, at) in [("njx-modules", ""), ("njx-export", ":1"), ("njx-pgle", "")] {
        let err = if tool == "njx-pgle" {
            let out = run(tool, &["--partial", &noisy], b"");
            assert_eq!(out.status.code(), Some(1));
            String::from_utf8(out.stderr).unwrap()
        } else {
            refused_as_binary(tool, &noisy, at)
        };
        assert!(
            err.contains(&format!(
                "a binary file, not text: of no format njx knows (first bytes {})",
                shown.join(" ")
            )),
            "{tool}: {err}"
        );
    }
    // Text with NUL bytes, or mostly control bytes or bytes that are not UTF-8, is binary
    // too; text that is not records, a Latin-1 name in it, is still named text.
    let nul = write(dir.path(), "nul.txt", b"ab\0cd\nef\n");
    refused_as_binary("njx-modules", &nul, "");
    let control = write(dir.path(), "control.txt", b"\x01\x02\x03\x04a\x05\x06\n");
    refused_as_binary("njx-modules", &control, "");
    let latin1 = write(dir.path(), "latin1.txt", b"\xe9\xe8\xea\xff\xfe\xe0ab\n");
    refused_as_binary("njx-modules", &latin1, "");
    let text = write(dir.path(), "notes.txt", b"some notes on caf\xe9 time\n");
    let out = run("njx-modules", &[&text], b"");
    assert!(
        stderr_of(&out).contains("this is text that is not records"),
        "{}",
        stderr_of(&out)
    );
}

#[test]
fn an_archive_or_export_compressed_again_says_to_give_it_as_it_is() {
    let dir = tempdir();
    let sqlite = write(
        dir.path(),
        "report.sqlite.gz",
        &gzip(b"SQLite format 3\0\x10\0\x01\x01\0@  \0\0\0\x01"),
    );
    let err = refused_as_binary("njx-modules", &sqlite, "");
    assert!(
        err.contains(
            "an SQLite database (first bytes 53 51 4c 69 74 65 20 66 6f 72 6d 61 74 20 33 00) \
             — compressed again? give the .sqlite file itself"
        ),
        "{err}"
    );
    assert!(err.contains("njx-export"), "{err}");
    let zip = write(
        dir.path(),
        "rank0.zip.xz",
        &xz(b"PK\x03\x04\x14\0\0\0\x08\0\0\0\0\0\0\0\0\0"),
    );
    let err = refused_as_binary("njx-export", &zip, ":1");
    assert!(
        err.contains("a zip archive (first bytes 50 4b 03 04 14 00 00 00 08 00 00 00 00 00 00 00) — compressed again? give the archive itself"),
        "{err}"
    );
    // Compressions njx does not read are named, with what to run.
    for (name, bytes, says) in [
        (
            "t.zst",
            &b"\x28\xb5\x2f\xfd\x04\x58\x81\0\0"[..],
            "zstd data (first bytes 28 b5 2f fd 04 58 81 00 00) — njx does not decompress zstd",
        ),
        (
            "t.bz2",
            &b"BZh91AY&SY\x01\x02\x03"[..],
            "bzip2 data (first bytes 42 5a 68 39 31 41 59 26 53 59 01 02 03) — njx does not decompress bzip2",
        ),
        (
            "t.elf",
            &b"\x7fELF\x02\x01\x01\0\0\0"[..],
            "an ELF executable or library",
        ),
        (
            "t.jpg",
            &b"\xff\xd8\xff\xe0\0\x10JFIF\0"[..],
            "a JPEG image",
        ),
        (
            "t.pdf",
            &b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"[..],
            "a PDF document",
        ),
    ] {
        let path = write(dir.path(), name, bytes);
        let err = refused_as_binary("njx-modules", &path, "");
        assert!(err.contains(says), "{name}: {err}");
    }
}

/// Usage errors start with the tool's name, as every other message of the tool does
/// (issue 32: clap's own `error: …` did not), and still exit 2 with clap's explanation.
#[test]
fn usage_errors_start_with_the_tools_name() {
    for cmd in njx::commands() {
        let tool = cmd.get_name().to_string();
        let out = Command::new(exe(&tool))
            .arg("--no-such-option")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{tool}");
        let err = stderr_of(&out);
        assert!(
            err.starts_with(&format!("{tool}: ")) && !err.starts_with(&format!("{tool}: {tool}")),
            "{tool}: {err}"
        );
        assert!(
            err.lines().next().unwrap().contains("--no-such-option"),
            "{tool}: {err}"
        );
        assert!(err.contains("--help"), "{tool}: {err}");
    }
    // Help and version are not errors: stdout, exit 0, as before.
    let out = Command::new(exe("njx-diff"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("njx-diff "));
}

/// A tool's summary piped where records are read says which tool wrote it and which
/// records to give instead (issue 32: `njx-compile-summary --format json | njx-flamefold`
/// said "missing field `tid`").
#[test]
fn a_summary_piped_where_records_are_read_names_its_tool() {
    let dir = tempdir();
    let compile = ok(
        "njx-compile-summary",
        &[
            "-q",
            "--format",
            "json",
            &write(dir.path(), "c.csv", COMPILE_CSV.as_bytes()),
        ],
    );
    let archive = crate::golden::archive(dir.path(), 0);
    let modules = ok("njx-modules", &["-q", "--format", "json", &archive]);
    let thunks = ok("njx-thunks", &["-q", "--format", "json", &archive]);
    for (summary, tool, reader) in [
        (&compile, "njx-compile-summary", "njx-flamefold"),
        (&modules, "njx-modules", "njx-timeline"),
        (&thunks, "njx-thunks", "njx-modules"),
    ] {
        let out = run(reader, &[], summary.as_bytes());
        assert_eq!(out.status.code(), Some(1), "{reader}");
        let err = stderr_of(&out);
        assert!(
            err.contains(&format!("this is {tool} output")) && err.contains("njx-export --table"),
            "{reader} given {tool} output: {err}"
        );
    }
}
