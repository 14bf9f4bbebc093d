//! Profiles that are not of XLA programs (PyTorch, CUDA samples): the tools that read XLA
//! module and thunk executions refuse them in one line on stderr that says the input holds
//! no XLA module ranges and names the tools that do read it (exit 1: the input is of the
//! wrong kind for the tool, and an empty table would read as an answer), with no advice
//! about `--hlo` dumps and none of the notes of reading it; the generic tools read them as
//! before. Through the built binaries, on an export made here and on the real non-XLA
//! exports of `../shared/data`.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use std::path::{Path, PathBuf};

const PID: u64 = 40;

/// The line after `tool: PLACE: `.
const NO_XLA: &str = "holds no XLA module ranges (XlaModule NVTX ranges with GPU work), so \
     nothing for this tool; njx-report, njx-kernels, njx-diff --by kernel, njx-ranges, \
     njx-timeline, njx-flamefold --by stack and njx-export --table ranges|gpu-ranges|kernels|memops|payloads read it";

/// The commands that read XLA executions, each with its arguments before the input (`DIR`
/// stands for a folder of the test's own).
const XLA_COMMANDS: &[(&str, &[&str])] = &[
    ("njx-modules", &[]),
    ("njx-modules", &["--partial"]),
    ("njx-collectives", &[]),
    ("njx-collectives", &["--records"]),
    ("njx-collectives", &["--table", "lateness"]),
    ("njx-thunks", &[]),
    ("njx-thunks", &["--view", "opcode"]),
    ("njx-flamefold", &["--by", "source"]),
    ("njx-flamefold", &["--by", "op-name"]),
    ("njx-flamefold", &["--by", "opcode"]),
    ("njx-flamefold", &["--by", "module"]),
    ("njx-flamefold", &["--by", "device"]),
    ("njx-flamefold", &["--by", "module", "--partial"]),
    ("njx-pgle", &["-o", "DIR"]),
    ("njx-export", &["--table", "modules"]),
    ("njx-export", &["--table", "thunks"]),
];

/// The commands that read any profile, each with its arguments before the input.
const GENERIC_COMMANDS: &[(&str, &[&str])] = &[
    ("njx-report", &[]),
    ("njx-kernels", &[]),
    ("njx-kernels", &["--table", "memops"]),
    ("njx-ranges", &[]),
    ("njx-timeline", &[]),
    ("njx-flamefold", &[]),
    ("njx-export", &[]),
    ("njx-export", &["--table", "gpu-ranges"]),
    ("njx-export", &["--table", "kernels"]),
    ("njx-export", &["--table", "memops"]),
];

/// A PyTorch-like export: process 40, thread 1 runs `aten::linear` [0, 100 µs] with
/// `aten::mm` in it, which launches a kernel (corr 1) and a copy (corr 2); thread 2 runs
/// `nccl:all_reduce` [200, 300 µs] launching a kernel (corr 3) on device 1.
fn pytorch_like(path: &Path) {
    let db = NsysDb::create(path);
    let (t1, t2, p) = (gtid(PID, 1), gtid(PID, 2), gpid(PID));
    db.string(1, "sm80_xmma_gemm");
    db.range(0, 100_000, t1, "aten::linear");
    db.range(10_000, 50_000, t1, "aten::mm");
    db.call(20_000, 21_000, t1, 1);
    db.kernel(60_000, 70_000, p, 1);
    db.call(30_000, 31_000, t1, 2);
    db.memcpy(71_000, 72_000, p, 2);
    db.range(200_000, 300_000, t2, "nccl:all_reduce");
    db.call(210_000, 211_000, t2, 3);
    db.kernel_on(1, 220_000, 290_000, p, 3);
}

/// An XLA export: module `jit_f` (program 3) over [100, 160 µs] on a launcher thread, a
/// thunk in it launching one kernel.
fn xla(path: &Path) {
    let db = NsysDb::create(path);
    let (t, p) = (gtid(PID, 1), gpid(PID));
    db.thread_name(
        t,
        1000,
        "XlaLauncher:#global=0,local=0,process=0,partition=0#",
    );
    db.range(
        100_000,
        160_000,
        t,
        "XlaModule:#hlo_module=jit_f,program_id=3#",
    );
    db.range(101_000, 150_000, t, "Thunk:#hlo_op=fusion.1#");
    db.call(102_000, 103_000, t, 1);
    db.kernel(120_000, 130_000, p, 1);
}

/// Runs `tool args… input`, `DIR` in `args` replaced by a folder under `dir`.
fn run_on(tool: &str, args: &[&str], input: &Path, dir: &Path) -> std::process::Output {
    let out_dir = dir.join("pgle");
    let mut all: Vec<String> = args
        .iter()
        .map(|a| match *a {
            "DIR" => out_dir.display().to_string(),
            a => a.to_string(),
        })
        .collect();
    all.push(input.display().to_string());
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    run(tool, &all, b"")
}

/// Checks that every XLA command refuses `input` with the one line; the failures.
fn refusals(input: &Path, dir: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for &(tool, args) in XLA_COMMANDS {
        let out = run_on(tool, args, input, dir);
        let err = stderr_of(&out);
        let wanted = format!("{tool}: {}: {NO_XLA}\n", input.display());
        if out.status.code() != Some(1)
            || err != wanted
            || err.contains("--hlo")
            || !out.stdout.is_empty()
        {
            failures.push(format!(
                "{tool} {args:?}: exit {:?}, {} bytes out, stderr:\n{err}",
                out.status.code(),
                out.stdout.len()
            ));
        }
    }
    if dir.join("pgle").exists() {
        failures.push("njx-pgle created its output folder".to_string());
    }
    failures
}

#[test]
fn xla_tools_refuse_an_export_without_xla_module_ranges_in_one_line() {
    let dir = tempdir();
    let file = dir.path().join("torch.sqlite");
    pytorch_like(&file);
    let failures = refusals(&file, dir.path());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn generic_tools_read_an_export_without_xla_module_ranges() {
    let dir = tempdir();
    let file = dir.path().join("torch.sqlite");
    pytorch_like(&file);
    for &(tool, args) in GENERIC_COMMANDS {
        let out = run_on(tool, args, &file, dir.path());
        let err = stderr_of(&out);
        assert!(
            out.status.success() && !out.stdout.is_empty(),
            "{tool} {args:?}: {err}"
        );
        assert!(
            !err.contains("--hlo") && !err.contains("XLA"),
            "{tool}: {err}"
        );
    }
    let kernels = json_lines(&ok(
        "njx-export",
        &["--table", "kernels", file.to_str().unwrap()],
    ));
    let ranges: Vec<&str> = kernels
        .iter()
        .map(|k| k["range"].as_str().unwrap())
        .collect();
    assert_eq!(ranges, ["aten::mm", "nccl:all_reduce"]);
    // The timeline draws the ranges, as it does when told to leave executions out.
    let path = file.to_str().unwrap();
    assert_eq!(
        ok("njx-timeline", &[path]),
        ok("njx-timeline", &["--no-executions", path])
    );
}

/// An input of the wrong kind among XLA profiles is refused too, naming it (as an input
/// that is no profile at all is): the tool says which input to leave out.
#[test]
fn an_export_without_xla_module_ranges_among_xla_profiles_is_refused_naming_it() {
    let dir = tempdir();
    let (torch, jax) = (
        dir.path().join("torch.sqlite"),
        dir.path().join("jax.sqlite"),
    );
    pytorch_like(&torch);
    xla(&jax);
    let modules = json_lines(&ok(
        "njx-export",
        &["--table", "modules", jax.to_str().unwrap()],
    ));
    assert_eq!(modules.len(), 1);
    for order in [[&jax, &torch], [&torch, &jax]] {
        let out = run(
            "njx-modules",
            &[order[0].to_str().unwrap(), order[1].to_str().unwrap()],
            b"",
        );
        assert_eq!(out.status.code(), Some(1));
        // After the XLA export's own notes, when it is read first.
        let err = stderr_of(&out);
        assert!(
            err.ends_with(&format!("njx-modules: {}: {NO_XLA}\n", torch.display())),
            "{err}"
        );
    }
    // The timeline draws both: the XLA export's executions, the other's ranges.
    let out = ok(
        "njx-timeline",
        &[jax.to_str().unwrap(), torch.to_str().unwrap()],
    );
    assert!(out.contains("jit_f") && out.contains("aten::mm"), "{out}");
}

/// The real exports of `../shared/data` that hold no XLA: PyTorch on two H100s (nsys
/// 2026.2.1), a mock RTX 3080 run and a CUDA sample without NVTX (nsys 2026.1.1), nvFuser
/// runs (nsys 2024.6.2, 2025.1.1).
fn real_non_xla_exports() -> Option<Vec<PathBuf>> {
    let mut files = Vec::new();
    for (dir, names) in [
        (
            "pytorch_nsys2026_sqlite",
            &["h100_2gpu_1s.sqlite", "mock.sqlite"][..],
        ),
        (
            "testcuda_nsys2026_sqlite",
            &["report1_nsys2026.1.1.sqlite"][..],
        ),
        (
            "nvfuser_nsys_sqlite",
            &["report1_nsys2025.1.1.sqlite", "report2_nsys2024.6.2.sqlite"][..],
        ),
    ] {
        let dir = shared_data(dir)?;
        files.extend(names.iter().map(|n| dir.join(n)));
    }
    Some(files)
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_exports_without_xla_are_refused_in_one_line_by_every_xla_tool() {
    let Some(files) = real_non_xla_exports() else {
        return;
    };
    let dir = tempdir();
    let mut failures = Vec::new();
    for file in &files {
        failures.extend(
            refusals(file, dir.path())
                .into_iter()
                .map(|f| format!("{}: {f}", file.display())),
        );
        // njx-heap reads HLO dumps, which no SQLite export holds: one line, no `--hlo`.
        let out = run("njx-heap", &[file.to_str().unwrap()], b"");
        let err = stderr_of(&out);
        if out.status.code() != Some(1) || err.lines().count() != 1 || err.contains("--hlo") {
            failures.push(format!("{}: njx-heap: {err}", file.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_exports_without_xla_are_read_by_the_generic_tools() {
    let Some(files) = real_non_xla_exports() else {
        return;
    };
    let dir = tempdir();
    for file in &files {
        for &(tool, args) in GENERIC_COMMANDS {
            let out = run_on(tool, args, file, dir.path());
            let err = stderr_of(&out);
            assert!(
                out.status.success(),
                "{} {tool} {args:?}: {err}",
                file.display()
            );
            assert!(!err.contains("--hlo"), "{} {tool}: {err}", file.display());
        }
    }
}
