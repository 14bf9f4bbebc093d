//! njx-capture through the built binary, with a stand-in `nsys` first on PATH: a shell
//! script that records its arguments, runs the program for `nsys profile` and writes a
//! report, and copies a fixture SQLite export for `nsys export`. The program is a shell
//! script that records its arguments and environment, writes an HLO dump where XLA_FLAGS
//! says, and exits with the status it is told. Checked: the environment, the nsys
//! options, output names, --condition, exit statuses, overwrite rules, unique names, the
//! archive's layout and content, --analysis, and njx-export reading the archive.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::hlo::proto::{HloModuleProto, HloProto, StackFrameIndexProto};
use prost::Message;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The dump the program writes, under the name XLA gives it.
const DUMP: &str = "module_0040.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb";

/// A capture setting: a temporary folder with `bin/nsys`, the program, the fixtures, a
/// working folder (the capture's current folder), a TMPDIR and a log folder.
struct Setup {
    dir: tempfile::TempDir,
    /// The Python source named in the dump.
    source: PathBuf,
    /// The HLO dump's bytes.
    dump: Vec<u8>,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempdir();
        let root = dir.path();
        for sub in ["bin", "work", "tmp", "log"] {
            std::fs::create_dir(root.join(sub)).unwrap();
        }
        let source = PathBuf::from(write(root, "src/train.py", b"import jax\nprint(1)\n"));
        let dump = hlo_dump(&[
            source.to_str().unwrap(),
            "<string>",
            "/nonexistent/njx-capture-test/gone.py",
        ]);
        write(root, "fixture.hlo.pb", &dump);
        let db = NsysDb::create(&root.join("fixture.sqlite"));
        let t = gtid(7, 1);
        db.range(100, 1000, t, "outer");
        db.range(200, 300, t, "inner");
        drop(db);
        let log = root.join("log");
        script(
            &root.join("bin/nsys"),
            &format!(
                r#"#!/bin/sh
# A stand-in for nsys: `profile` logs, runs the program, writes OUT.nsys-rep and exits with
# the program's status; `export` copies the fixture export to --output.
log='{log}'
cmd="$1"; shift
printf '%s\n' "$@" > "$log/$cmd-args"
case "$cmd" in
profile)
  while [ $# -gt 0 ]; do
    if [ "$1" = --output ]; then out="$2"; shift 2; break; fi
    shift
  done
  "$@"
  status=$?
  [ -n "$FAKE_NSYS_NO_REPORT" ] || printf 'fake report' > "$out.nsys-rep"
  exit $status;;
export)
  while [ $# -gt 1 ]; do
    if [ "$1" = --output ]; then out="$2"; fi
    shift
  done
  cp '{fixture}' "$out";;
esac
"#,
                log = log.display(),
                fixture = root.join("fixture.sqlite").display(),
            ),
        );
        script(
            &root.join("program"),
            &format!(
                r#"#!/bin/sh
# A stand-in for a JAX program: logs, dumps HLO where XLA_FLAGS says, exits as told.
log='{log}'
env > "$log/program-env"
printf '%s\n' "$@" > "$log/program-args"
for flag in $XLA_FLAGS; do
  case "$flag" in --xla_dump_to=*) dump="${{flag#--xla_dump_to=}}";; esac
done
if [ -n "$dump" ]; then
  mkdir -p "$dump"
  cp '{fixture}' "$dump/{DUMP}"
  echo 'not a dump' > "$dump/{DUMP}.txt"
  echo 'not a dump' > "$dump/autotune_results.pb"
fi
# Its process id, for a test that waits for the sleep below to start.
echo $$ > "$log/program-pid"
[ -z "$PROGRAM_SLEEP" ] || sleep "$PROGRAM_SLEEP"
[ -z "$PROGRAM_SIGNAL" ] || kill -"$PROGRAM_SIGNAL" $$
exit "${{PROGRAM_STATUS:-0}}"
"#,
                log = log.display(),
                fixture = root.join("fixture.hlo.pb").display(),
            ),
        );
        Setup { dir, source, dump }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn program(&self) -> String {
        self.path("program").to_str().unwrap().to_string()
    }

    /// Runs njx-capture in the working folder, with `bin` first on PATH, the test's TMPDIR
    /// and `env` set (an empty value removes the variable).
    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let system = std::env::var("PATH").unwrap_or_default();
        self.run_with_path(
            args,
            env,
            &format!("{}:{system}", self.path("bin").display()),
        )
    }

    fn run_with_path(&self, args: &[&str], env: &[(&str, &str)], path: &str) -> Output {
        let mut cmd = Command::new(exe("njx-capture"));
        cmd.args(args)
            .current_dir(self.path("work"))
            .env("PATH", path)
            .env("TMPDIR", self.path("tmp"))
            .stdin(Stdio::null());
        for var in [
            "XLA_FLAGS",
            "JAX_TRACEBACK_IN_LOCATIONS_LIMIT",
            "JAX_ENABLE_COMPILATION_CACHE",
        ] {
            cmd.env_remove(var);
        }
        for (k, v) in env {
            if v.is_empty() {
                cmd.env_remove(k);
            } else {
                cmd.env(k, v);
            }
        }
        cmd.output().expect("run njx-capture")
    }

    /// A file the stand-ins wrote into the log folder, if they did.
    fn log(&self, name: &str) -> Option<String> {
        std::fs::read_to_string(self.path("log").join(name)).ok()
    }

    /// The program's environment, as `NAME -> value`.
    fn program_env(&self) -> BTreeMap<String, String> {
        let text = self.log("program-env").expect("the program ran");
        text.lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn archive(&self, name: &str) -> PathBuf {
        self.path("work").join(name)
    }
}

/// An HloProto whose stack frame index names `files`.
fn hlo_dump(files: &[&str]) -> Vec<u8> {
    HloProto {
        hlo_module: Some(HloModuleProto {
            name: "jit_f".into(),
            id: 40,
            stack_frame_index: Some(StackFrameIndexProto {
                file_names: files.iter().map(|f| f.to_string()).collect(),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

fn assert_ok(out: &Output) {
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(out));
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Every member of a zip archive with its bytes and whether it is deflated.
fn members(archive: &Path) -> BTreeMap<String, (Vec<u8>, bool)> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(archive).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        let deflated = f.compression() == zip::CompressionMethod::Deflated;
        out.insert(f.name().unwrap().to_string(), (bytes, deflated));
    }
    out
}

fn unxz(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    xz2::read::XzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

#[test]
fn the_archive_holds_the_report_its_export_the_dumps_and_the_sources() {
    let s = Setup::new();
    let out = s.run(
        &["-o", "out/rank%q{RANK}.nsys-rep", &s.program(), "a", "b"],
        &[("RANK", "3")],
    );
    assert_ok(&out);
    let archive = s.archive("out/rank3.zip");
    let got = members(&archive);
    let source_member = format!("sources{}", s.source.display());
    let names: Vec<&str> = got.keys().map(String::as_str).collect();
    let dump_member = format!("dump/{DUMP}.xz");
    let mut want = vec![
        dump_member.as_str(),
        "report.nsys-rep",
        "report.sqlite",
        source_member.as_str(),
    ];
    want.sort();
    assert_eq!(names, want);

    // The report and the export as nsys wrote them, deflated; each dump xz-compressed and
    // stored; the sources deflated.
    assert_eq!(got["report.nsys-rep"], (b"fake report".to_vec(), true));
    let fixture = std::fs::read(s.path("fixture.sqlite")).unwrap();
    assert_eq!(got["report.sqlite"], (fixture, true));
    let (xz, deflated) = &got[&dump_member];
    assert!(!deflated);
    assert_eq!(unxz(xz), s.dump);
    assert_eq!(
        got[&source_member],
        (std::fs::read(&s.source).unwrap(), true)
    );

    // The program got its arguments; nsys exported the report it wrote.
    assert_eq!(s.log("program-args").unwrap(), "a\nb\n");
    let export = s.log("export-args").unwrap();
    let export: Vec<&str> = export.lines().collect();
    assert_eq!(export[..3], ["--type", "sqlite", "--output"]);
    assert!(export[3].ends_with("/report.sqlite") && export[4].ends_with("/report.nsys-rep"));

    // Progress for each step, the missing source in a warning, nothing left behind: no
    // staging folder beside the archive, no working folder in TMPDIR.
    let err = stderr_of(&out);
    for step in [
        "out/rank3.zip: profiling",
        "exporting the report to SQLite",
        "compressing 1 HLO dumps",
        "writing the archive (1 dumps, 1 sources)",
        "out/rank3.zip: done",
        "/nonexistent/njx-capture-test/gone.py",
    ] {
        assert!(err.contains(step), "{step}: {err}");
    }
    assert!(!err.contains("<string>"), "{err}");
    assert_eq!(entries(&s.path("work/out")), ["rank3.zip"]);
    assert!(entries(&s.path("tmp")).is_empty());

    // Every njx tool reads the archive without nsys (PATH here has no nsys).
    let records = json_lines(&ok("njx-export", &[path_str(&archive)]));
    let ranges: Vec<(&str, &str)> = records
        .iter()
        .map(|r| (r["profile"].as_str().unwrap(), r["name"].as_str().unwrap()))
        .collect();
    assert_eq!(ranges, [("rank3", "outer"), ("rank3", "inner")]);
    assert_eq!(records[1]["parent"], records[0]["id"]);
    assert_eq!(
        ok("njx-flamefold", &[path_str(&archive)]),
        "outer 800\nouter;inner 100\n"
    );
}

#[test]
fn the_program_runs_with_the_jax_settings_and_merged_xla_flags() {
    let s = Setup::new();
    assert_ok(&s.run(&["-o", "a", &s.program()], &[]));
    let env = s.program_env();
    assert_eq!(env["JAX_TRACEBACK_IN_LOCATIONS_LIMIT"], "-1");
    // The compilation cache is the user's, as in nsys-jax since JAX-Toolbox#1713.
    assert!(!env.contains_key("JAX_ENABLE_COMPILATION_CACHE"));
    let flags = &env["XLA_FLAGS"];
    let dump_to = flags
        .strip_prefix("--xla_dump_hlo_as_proto=true --xla_dump_to=")
        .unwrap_or_else(|| panic!("{flags}"));
    // The dumps go to a working folder under TMPDIR, removed afterwards.
    let tmp = std::fs::canonicalize(s.path("tmp")).unwrap();
    assert!(
        Path::new(dump_to).starts_with(&tmp) && dump_to.ends_with("/dump"),
        "{dump_to}"
    );
    assert!(!Path::new(dump_to).exists());

    // The user's settings are kept, except where the dumps go (said on stderr).
    let out = s.run(
        &["-o", "b", &s.program()],
        &[
            ("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "5"),
            ("JAX_ENABLE_COMPILATION_CACHE", "true"),
            (
                "XLA_FLAGS",
                "--xla_gpu_enable_command_buffer= --xla_dump_to=/mine \
                 --xla_dump_hlo_pass_re=.* --xla_dump_hlo_as_text",
            ),
        ],
    );
    assert_ok(&out);
    let env = s.program_env();
    assert_eq!(env["JAX_TRACEBACK_IN_LOCATIONS_LIMIT"], "5");
    assert_eq!(env["JAX_ENABLE_COMPILATION_CACHE"], "true");
    let flags = &env["XLA_FLAGS"];
    let dump_to = flags.split(' ').nth(1).unwrap();
    assert!(dump_to.starts_with("--xla_dump_to=/") && dump_to != "--xla_dump_to=/mine");
    assert_eq!(
        flags.replace(dump_to, "DUMP"),
        "--xla_gpu_enable_command_buffer= DUMP --xla_dump_hlo_pass_re=.* \
         --xla_dump_hlo_as_text --xla_dump_hlo_as_proto=true"
    );
    let err = stderr_of(&out);
    assert!(
        err.contains("warning: XLA_FLAGS: --xla_dump_to=/mine replaced"),
        "{err}"
    );
    assert!(members(&s.archive("b.zip")).contains_key(&format!("dump/{DUMP}.xz")));

    // Dumps switched off: the user's choice stands, the archive has no dumps or sources.
    let out = s.run(
        &["-o", "c", &s.program()],
        &[("XLA_FLAGS", "--xla_dump_hlo_as_proto=false")],
    );
    assert_ok(&out);
    assert_eq!(
        s.program_env()["XLA_FLAGS"],
        "--xla_dump_hlo_as_proto=false"
    );
    assert!(stderr_of(&out).contains("no HLO dumps"));
    let names: Vec<String> = members(&s.archive("c.zip")).into_keys().collect();
    assert_eq!(names, ["report.nsys-rep", "report.sqlite"]);

    // XLA_FLAGS that XLA could not read either: a usage error before anything runs.
    std::fs::remove_file(s.path("log/program-env")).unwrap();
    let out = s.run(&["-o", "d", &s.program()], &[("XLA_FLAGS", "--a=1 b")]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("XLA_FLAGS: `b` is not a flag"));
    assert!(s.log("program-env").is_none());
}

#[test]
fn nsys_gets_the_defaults_and_the_users_options() {
    let s = Setup::new();
    let program = s.program();
    let out = s.run(
        &[
            "--trace=cuda,nvtx",
            "-o",
            "a",
            "--delay",
            "5",
            "--",
            &program,
            "--",
            "-o",
            "x",
        ],
        &[],
    );
    assert_ok(&out);
    let args = s.log("profile-args").unwrap();
    let args: Vec<&str> = args.lines().collect();
    let tmp = std::fs::canonicalize(s.path("tmp")).unwrap();
    assert_eq!(
        args[..8],
        [
            "--trace=cuda,nvtx",
            "--delay",
            "5",
            "--cuda-graph-trace=node",
            "--cpuctxsw=none",
            "--python-sampling=true",
            "--output",
            args[7],
        ]
    );
    assert!(Path::new(args[7]).starts_with(&tmp) && args[7].ends_with("/report"));
    assert_eq!(args[8..], [program.as_str(), "--", "-o", "x"]);
    assert_eq!(s.log("program-args").unwrap(), "--\n-o\nx\n");

    // Without options of the user's, all four defaults.
    assert_ok(&s.run(&["-fo", "a", &program], &[]));
    let args = s.log("profile-args").unwrap();
    assert!(args.starts_with(
        "--cuda-graph-trace=node\n--cpuctxsw=none\n--python-sampling=true\n\
         --trace=cublas,cuda,cudnn,cusolver,nvtx,osrt\n--output\n"
    ));
}

#[test]
fn bad_command_lines_are_usage_errors_before_anything_runs() {
    let s = Setup::new();
    let program = s.program();
    for (args, msg) in [
        (
            vec!["--trace=cuda", program.as_str()],
            "nsys options need `--`",
        ),
        (
            vec![program.as_str(), "x", "--", "y"],
            "put a `--` before the program",
        ),
        (vec!["-o", "a"], "<PROGRAM>"),
        (
            vec!["-o", "r%q{NJX_NOT_SET}", program.as_str()],
            "`NJX_NOT_SET` is not set",
        ),
        (vec!["-o", "50%x", program.as_str()], "write `%%` for a `%`"),
        (
            vec!["--condition", "1 ==", program.as_str()],
            "bash could not evaluate",
        ),
    ] {
        let out = s.run(&args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
        assert!(
            stderr_of(&out).contains(msg),
            "{args:?}: {}",
            stderr_of(&out)
        );
    }
    let out = s.run(&["no-such-program-njx"], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("no-such-program-njx: no such program"));
    assert!(s.log("program-args").is_none() && s.log("profile-args").is_none());
    assert!(entries(&s.path("work")).is_empty());
}

#[test]
fn output_names_lose_their_suffix_and_expand_variables() {
    let s = Setup::new();
    let program = s.program();
    for (name, env, archive) in [
        ("run.nsys-rep", vec![], "run.zip"),
        ("run2.zip", vec![], "run2.zip"),
        (
            "n%q{NODE}/r%q{RANK}-100%%",
            vec![("NODE", "x1"), ("RANK", "0")],
            "nx1/r0-100%.zip",
        ),
    ] {
        assert_ok(&s.run(&["-o", name, &program], &env));
        assert!(s.archive(archive).is_file(), "{name} → {archive}");
    }
}

#[test]
fn the_condition_decides_whether_to_profile() {
    let s = Setup::new();
    let program = s.program();
    let cond = "$SLURM_LOCALID == 0";
    assert_ok(&s.run(
        &["-o", "r", "--condition", cond, &program],
        &[("SLURM_LOCALID", "0")],
    ));
    assert!(s.archive("r.zip").is_file());

    // False: the program runs as it is, without nsys, nothing is written, and its status
    // is njx-capture's.
    std::fs::remove_file(s.path("log/profile-args")).unwrap();
    let out = s.run(
        &["-o", "q", "--condition", cond, "--", &program, "z"],
        &[("SLURM_LOCALID", "1"), ("PROGRAM_STATUS", "3")],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert_eq!(s.log("program-args").unwrap(), "z\n");
    assert!(s.log("profile-args").is_none());
    let env = s.program_env();
    assert!(
        !env.contains_key("XLA_FLAGS") && !env.contains_key("JAX_TRACEBACK_IN_LOCATIONS_LIMIT")
    );
    assert_eq!(entries(&s.path("work")), ["r.zip"]);
    assert!(entries(&s.path("tmp")).is_empty());

    // Not profiling does not need nsys.
    let system = std::env::var("PATH").unwrap_or_default();
    let out = s.run_with_path(&["--condition", "1 == 2", &program], &[], &system);
    assert_ok(&out);
}

#[test]
fn the_exit_status_is_the_programs_and_nsys_shutdown_counts_as_success() {
    let s = Setup::new();
    let program = s.program();
    // A failing program: its status, and the archive all the same.
    let out = s.run(&["-o", "a", &program], &[("PROGRAM_STATUS", "3")]);
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr_of(&out).contains("exited with status 3"));
    assert!(s.archive("a.zip").is_file());

    // Ended by SIGTERM, as nsys ends it under --capture-range-end=stop-shutdown: success.
    let out = s.run(&["-o", "b", &program], &[("PROGRAM_SIGNAL", "TERM")]);
    assert_ok(&out);
    assert!(s.archive("b.zip").is_file());
    // ... also with --kill sigkill and SIGKILL; not when nsys does not kill it.
    let out = s.run(
        &["-o", "c", "--kill", "sigkill", "--", &program],
        &[("PROGRAM_SIGNAL", "KILL")],
    );
    assert_ok(&out);
    for options in [["--kill", "none"], ["--capture-range-end", "stop"]] {
        let mut args = vec!["-fo", "d"];
        args.extend(options);
        args.extend(["--", &program]);
        let out = s.run(&args, &[("PROGRAM_SIGNAL", "TERM")]);
        assert_eq!(out.status.code(), Some(143), "{options:?}");
    }

    // nsys wrote no report: an error, and the program's status wins over it.
    let out = s.run(&["-o", "e", &program], &[("FAKE_NSYS_NO_REPORT", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("nsys profile wrote no report"));
    let out = s.run(
        &["-o", "e", &program],
        &[("FAKE_NSYS_NO_REPORT", "1"), ("PROGRAM_STATUS", "4")],
    );
    assert_eq!(out.status.code(), Some(4));
    assert!(!s.archive("e.zip").exists());
}

#[test]
fn an_existing_archive_is_replaced_only_with_force() {
    let s = Setup::new();
    let program = s.program();
    let existing = write(&s.path("work"), "r.zip", b"precious");
    let out = s.run(&["-o", "r", &program], &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("r.zip: exists; pass -f"),
        "{}",
        stderr_of(&out)
    );
    assert_eq!(std::fs::read(&existing).unwrap(), b"precious");
    assert!(s.log("program-args").is_none(), "the program must not run");

    assert_ok(&s.run(&["-f", "-o", "r.zip", &program], &[]));
    assert!(members(Path::new(&existing)).contains_key("report.sqlite"));
    assert_ok(&s.run(&["--force-overwrite", "--output=r", &program], &[]));
}

#[test]
fn without_output_each_capture_gets_a_new_unique_name() {
    let s = Setup::new();
    let program = s.program();
    // Several ranks at once.
    let outs: Vec<Output> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| s.run(&[&program], &[])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    outs.iter().for_each(assert_ok);
    let names = entries(&s.path("work"));
    assert_eq!(names.len(), 4, "{names:?}");
    for name in &names {
        assert!(
            name.starts_with("njx-report-") && name.ends_with(".zip"),
            "{name}"
        );
        assert!(members(&s.archive(name)).contains_key("report.nsys-rep"));
    }
    // A capture that fails leaves no empty claim behind.
    let out = s.run(&[&program], &[("FAKE_NSYS_NO_REPORT", "1")]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(entries(&s.path("work")), names);
}

#[test]
fn without_nsys_nothing_runs() {
    let s = Setup::new();
    let empty = s.path("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = s.run_with_path(&["-o", "a", &s.program()], &[], path_str(&empty));
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(err.contains("nsys: not found on PATH"), "{err}");
    assert!(s.log("program-args").is_none());
    assert!(entries(&s.path("work")).is_empty());
}

#[test]
fn analyses_run_on_the_fresh_archive_and_their_outputs_are_stored() {
    let s = Setup::new();
    let out = s.run(
        &[
            "-o",
            "out/rank0",
            "--analysis",
            "njx-export \"$1\" | wc -l",
            "--analysis=basename \"$NJX_ARCHIVE\"; echo svg > flame.svg",
            &s.program(),
        ],
        &[],
    );
    assert_ok(&out);
    let got = members(&s.archive("out/rank0.zip"));
    let text = |m: &str| String::from_utf8(got[m].0.clone()).unwrap();
    // The njx tools are found beside njx-capture; the archive had its final name.
    assert_eq!(text("analysis/1-njx-export-1-wc-l.txt").trim(), "2");
    assert_eq!(
        text("analysis/2-basename-NJX_ARCHIVE-echo-svg-flame.svg.txt"),
        "rank0.zip\n"
    );
    assert_eq!(
        text("analysis/2-basename-NJX_ARCHIVE-echo-svg-flame.svg/flame.svg"),
        "svg\n"
    );
    assert!(stderr_of(&out).contains("analysis 1: njx-export"));

    // A failing analysis: its output is stored all the same, and the status is 1.
    let out = s.run(
        &[
            "-o",
            "b",
            "--analysis",
            "echo partial; false | cat",
            &s.program(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("analysis 1 (`echo partial; false | cat`) failed"));
    let got = members(&s.archive("b.zip"));
    assert_eq!(got["analysis/1-echo-partial-false-cat.txt"].0, b"partial\n");
}

#[test]
fn programs_that_ran_without_a_dump_are_reported() {
    let s = Setup::new();
    // The default fixture runs no XLA program: nothing to say.
    let out = s.run(&["-o", "plain", &s.program()], &[]);
    assert_ok(&out);
    assert!(
        !stderr_of(&out).contains("without an HLO dump"),
        "{}",
        stderr_of(&out)
    );
    // Programs 40 (the program dumps it) and 41 (loaded from the compilation cache by an
    // XLA that did not dump it) ran.
    let fixture = s.path("fixture.sqlite");
    std::fs::remove_file(&fixture).unwrap();
    let db = NsysDb::create(&fixture);
    let t = gtid(7, 1);
    db.range(100, 1000, t, "XlaModule:#hlo_module=jit_f,program_id=40#");
    db.range(2000, 3000, t, "XlaModule:#hlo_module=jit_g,program_id=41#");
    db.range(4000, 5000, t, "XlaModule:#hlo_module=gemm_fusion_dot.1#");
    drop(db);
    let out = s.run(&["-o", "cached", &s.program()], &[]);
    assert_ok(&out);
    let err = stderr_of(&out);
    assert!(
        err.contains("warning: 1 program ran without an HLO dump (program_id 41)"),
        "{err}"
    );
    assert!(err.contains("JAX_ENABLE_COMPILATION_CACHE=false"), "{err}");
}

#[test]
fn analyses_that_misbehave_never_cost_the_archive() {
    let s = Setup::new();
    // An analysis that removes its own working folder, one that leaves a link loop, a
    // link out of the folder and a FIFO, and a good one after them.
    let out = s.run(
        &[
            "-o",
            "kept",
            "--analysis",
            "rm -rf \"$PWD\"",
            "--analysis",
            "ln -s . loop; ln -s / root; mkfifo pipe; echo x > f",
            "--analysis",
            "echo fine",
            &s.program(),
        ],
        &[],
    );
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("warning: analysis 1 failed"), "{err}");
    let got = members(&s.archive("kept.zip"));
    assert!(got.contains_key("report.sqlite"), "{:?}", got.keys());
    // The second analysis's regular file is stored; the links to folders and the FIFO
    // are not followed or opened.
    let second: Vec<&String> = got
        .keys()
        .filter(|k| k.starts_with("analysis/2-"))
        .collect();
    assert!(second.iter().any(|k| k.ends_with("/f")), "{second:?}");
    assert!(
        !second
            .iter()
            .any(|k| k.contains("/loop") || k.contains("/root") || k.contains("/pipe")),
        "{second:?}"
    );
    assert_eq!(
        String::from_utf8(got["analysis/3-echo-fine.txt"].0.clone()).unwrap(),
        "fine\n"
    );
}

/// Interrupted while the program runs (Ctrl-C to the whole process group, or SIGTERM to
/// njx-capture alone, passed on to nsys): njx-capture waits for nsys to end, then writes no
/// archive and leaves nothing behind — no working folder in TMPDIR, no placeholder — and
/// exits 128 + the signal.
#[test]
fn an_interrupted_capture_leaves_nothing_behind() {
    use std::os::unix::process::CommandExt;
    for (signal, code, group) in [("INT", 130, true), ("TERM", 143, false)] {
        let s = Setup::new();
        let system = std::env::var("PATH").unwrap_or_default();
        let mut child = Command::new(exe("njx-capture"))
            .arg(s.program())
            .current_dir(s.path("work"))
            .env("PATH", format!("{}:{system}", s.path("bin").display()))
            .env("TMPDIR", s.path("tmp"))
            .env("PROGRAM_SLEEP", "30")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        // Signalled once the program sleeps, its dump written: a shell signalled while it
        // starts a command may lose the signal (dash catches SIGINT, and a child signalled
        // between fork and exec drops it), and after SIGTERM the program outlives the
        // stand-in nsys (real nsys passes the signal on; the stand-in dies of it), so it
        // must have nothing more to write.
        let sleeper = loop {
            let pid: Option<u32> = s.log("program-pid").and_then(|p| p.trim().parse().ok());
            if let Some(found) = pid.and_then(|p| Some((p, child_named(p, "sleep")?))) {
                break found;
            }
            assert!(start.elapsed().as_secs() < 20, "the program never slept");
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let pid = child.id().to_string();
        let target = if group { format!("-{pid}") } else { pid };
        let killed = Command::new("kill")
            .args([&format!("-{signal}"), "--", &target])
            .status()
            .unwrap();
        assert!(killed.success());
        // Polled with a deadline: a regression fails the test instead of hanging the run.
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed().as_secs() > 60 {
                let _ = child.kill();
                panic!("SIG{signal}: njx-capture did not end");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(code), "SIG{signal}");
        assert!(
            start.elapsed().as_secs() < 25,
            "SIG{signal}: waited for the program"
        );
        let left = |sub: &str| -> Vec<String> {
            std::fs::read_dir(s.path(sub))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        };
        // The stand-in program, if the signal left it sleeping, ends now (checked again
        // first: a process id is reused once its process has ended).
        if child_named(sleeper.0, "sleep") == Some(sleeper.1) {
            let _ = Command::new("kill")
                .args(["-KILL", &sleeper.1.to_string()])
                .status();
        }
        assert!(left("tmp").is_empty(), "SIG{signal}: {:?}", left("tmp"));
        assert!(left("work").is_empty(), "SIG{signal}: {:?}", left("work"));
    }
}

/// The process id of a child of `parent` running the program `name` (its exec done).
fn child_named(parent: u32, name: &str) -> Option<u32> {
    std::fs::read_dir("/proc").ok()?.find_map(|e| {
        let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // `pid (comm) state ppid …`; comm may hold spaces and parentheses.
        let (head, rest) = stat.rsplit_once(") ")?;
        let comm = head.split_once(" (")?.1;
        let ppid: u32 = rest.split(' ').nth(1)?.parse().ok()?;
        (ppid == parent && comm == name).then_some(pid)
    })
}
