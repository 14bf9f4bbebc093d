//! Devices of processes driving several GPUs, with and without XLA's launcher thread
//! names, in nsys-jax archives and nsys SQLite exports, through the built binaries.
//!
//! The fixture: P processes × G GPUs. Process p (pid 1000·(p+1)) runs `jit_init`
//! (program 3, one device, no communication) once on its main thread (tid = pid), an
//! autotuning execution (`extracted`, no program id) on a compiler thread (pid + 50), and
//! three executions of `jit_step` (program 7, an all-reduce over all P·G devices) on each
//! of its launcher threads pid + 1 + l, l = 0..G, named
//! `XlaLauncher:#global=p·G+l,local=l,process=p,slice=0#` where the profile has names.
//! Thread ids grow with the local device, as XLA starts the threads, so the inferred
//! mapping (thread order) must give exactly the named one: global device p·G + l.
//!
//! Archives are nsys-jax archives of mid-2024 (first-form GPU projection table, dumps),
//! one per process, with or without `thread-metadata.parquet`. SQLite exports hold the
//! same ranges as NVTX push/pop ranges whose CUDA calls launch one kernel each on the
//! thread's device (`deviceId` counts from 0 in every process), one file per process or
//! one file of all processes, with or without `ThreadNames`.
//!
//! Also here, as generations of the input (docs/inputs.md, "Every nsys-jax and XLA generation"): the GPU projection
//! in its three forms, launcher names with `slice=` and `partition=`, thread metadata
//! without launcher names, repeated range ids (unpatched nsys 2024.5/2024.6 with CUDA
//! graphs), programs compiled differently by one process and `--program-key name`.

use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::hlo::proto::{HloComputationProto, HloInstructionProto, HloProto, ReplicaGroup};
use prost::Message;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

const FP_STEP: &str = "57e9000000000000000000000000beef";
const FP_INIT: &str = "1417000000000000000000000000beef";
const STEP_EXECS: i64 = 3;

fn pid(p: usize) -> u64 {
    1000 * (p as u64 + 1)
}

/// One range: name, thread, GPU start and end, parent (index), whether it is a thunk
/// (which launches one kernel).
struct Span {
    name: String,
    tid: u64,
    start: i64,
    end: i64,
    parent: Option<usize>,
    thunk: bool,
}

/// The ranges of process `p` of a run of `g` GPUs per process, `total` devices in all, in
/// time order (parents before children).
fn spans(p: usize, g: usize) -> Vec<Span> {
    let pid = pid(p);
    let mut out = Vec::new();
    let module =
        |out: &mut Vec<Span>, name: &str, tid: u64, start: i64, thunks: &[(&str, i64, i64)]| {
            let end = start + thunks.iter().map(|t| t.2).max().unwrap_or(0) + 100;
            let m = out.len();
            out.push(Span {
                name: name.into(),
                tid,
                start,
                end,
                parent: None,
                thunk: false,
            });
            for &(op, s, e) in thunks {
                out.push(Span {
                    name: format!("TSL:Thunk:#hlo_op={op}#"),
                    tid,
                    start: start + s,
                    end: start + e,
                    parent: Some(m),
                    thunk: true,
                });
            }
        };
    module(
        &mut out,
        "TSL:XlaModule:#hlo_module=jit_init,program_id=3#",
        pid,
        1_000,
        &[("fusion.0", 100, 400)],
    );
    module(
        &mut out,
        "TSL:XlaModule:#hlo_module=extracted#",
        pid + 50,
        3_000,
        &[("fusion.99", 50, 250)],
    );
    for k in 0..STEP_EXECS {
        for l in 0..g {
            // Devices finish the all-reduce at slightly different times.
            let skew = (l as i64 * 7 + p as i64 * 13 + k * 3) % 20;
            module(
                &mut out,
                "TSL:XlaModule:#hlo_module=jit_step,program_id=7#",
                pid + 1 + l as u64,
                10_000 + k * 10_000 + l as i64 * 100,
                &[
                    ("fusion.1", 100, 2_000),
                    ("all-reduce-start.1", 1_500, 4_000 + skew),
                    ("fusion.2", 4_100, 5_000),
                ],
            );
        }
    }
    out
}

fn borrow(v: &[Option<String>]) -> Vec<Option<&str>> {
    v.iter().map(Option::as_deref).collect()
}

/// The first form of `nvtx_gpu_proj_trace/trace.parquet` (nsys 2024.4 and before).
fn gpu_proj_trace(p: usize, g: usize) -> Vec<u8> {
    gpu_proj_trace_of(p, &spans(p, g))
}

/// A column of `f` of every range (and its index).
fn column<T>(spans: &[Span], f: &dyn Fn(usize, &Span) -> T) -> Vec<Option<T>> {
    spans
        .iter()
        .enumerate()
        .map(|(i, s)| Some(f(i, s)))
        .collect()
}

/// [`gpu_proj_trace`] of the ranges `spans` of process `p`.
fn gpu_proj_trace_of(p: usize, spans: &[Span]) -> Vec<u8> {
    let stack = |i: usize| -> Vec<usize> {
        let mut ids = vec![i];
        while let Some(q) = spans[*ids.first().unwrap()].parent {
            ids.insert(0, q);
        }
        ids
    };
    let int = |f: &dyn Fn(usize, &Span) -> i64| column(spans, f);
    let dbl = |f: &dyn Fn(usize, &Span) -> Option<f64>| -> Vec<Option<f64>> {
        spans.iter().enumerate().map(|(i, s)| f(i, s)).collect()
    };
    let text = |f: &dyn Fn(usize, &Span) -> String| column(spans, f);
    let names = text(&|_, s| s.name.clone());
    let styles = text(&|_, _| "PushPop".into());
    let stacks = text(&|i, _| stack(i).iter().map(|j| format!(":{}", j + 1)).collect());
    let children = |i: usize| spans.iter().filter(|c| c.parent == Some(i)).count() as i64;
    parquet_table(
        &[
            pq_text("Name", &borrow(&names)),
            pq_int("Projected Start", &int(&|_, s| s.start)),
            pq_int("Projected Duration", &int(&|_, s| s.end - s.start)),
            pq_double("Orig Start", &dbl(&|_, s| Some((s.start - 50) as f64))),
            pq_double(
                "Orig Duration",
                &dbl(&|_, s| Some((s.end - s.start) as f64)),
            ),
            pq_text("Style", &borrow(&styles)),
            pq_int("PID", &int(&|_, _| pid(p) as i64)),
            pq_int("TID", &int(&|_, s| s.tid as i64)),
            pq_int(
                "NumGPUOps",
                &int(&|i, s| if s.thunk { 1 } else { children(i) }),
            ),
            pq_double("Lvl", &dbl(&|i, _| Some((stack(i).len() - 1) as f64))),
            pq_int("NumChild", &int(&|i, _| children(i))),
            pq_double("RangeId", &dbl(&|i, _| Some((i + 1) as f64))),
            pq_double("ParentId", &dbl(&|_, s| s.parent.map(|q| (q + 1) as f64))),
            pq_text("RangeStack", &borrow(&stacks)),
            pq_int("Rank", &int(&|_, _| 0)),
        ],
        1 << 20,
    )
}

/// Which recipe form of the GPU projection table (nsys 2024.5 and later).
#[derive(Clone, Copy, PartialEq)]
enum Recipe {
    /// `Text` without the domain prefix (nsys 2024.5–2025.x).
    Plain,
    /// With a `Domain` column (nsys 2026.1).
    Domain,
}

/// `nvtx_gpu_proj_trace/trace.parquet` in a recipe form: `Text`/`Start`/`End`, list-typed
/// `Range Stack`, no `NumGPUOps` or CPU times; `nccl` ranges where `Plain`.
fn gpu_proj_recipe_of(p: usize, spans: &[Span], form: Recipe) -> Vec<u8> {
    let stack = |i: usize| -> Vec<i64> {
        let mut ids = vec![i];
        while let Some(q) = spans[*ids.first().unwrap()].parent {
            ids.insert(0, q);
        }
        ids.iter().map(|j| *j as i64 + 1).collect()
    };
    let stacks: Vec<Vec<i64>> = (0..spans.len()).map(stack).collect();
    let int = |f: &dyn Fn(usize, &Span) -> i64| column(spans, f);
    let (domains, texts): (Vec<Option<String>>, Vec<Option<String>>) = spans
        .iter()
        .map(|s| {
            let (domain, text) = s
                .name
                .split_once(':')
                .filter(|(d, _)| *d == "TSL" || *d == "NCCL")
                .unwrap_or(("", &s.name));
            match form {
                Recipe::Plain if domain == "NCCL" => (
                    None,
                    Some(format!("nccl{}", text.trim_start_matches("nccl"))),
                ),
                Recipe::Plain => (None, Some(text.to_string())),
                Recipe::Domain => (Some(domain.to_string()), Some(text.to_string())),
            }
        })
        .unzip();
    let children = |i: usize| spans.iter().filter(|c| c.parent == Some(i)).count() as i64;
    let mut cols = vec![
        pq_text("Text", &borrow(&texts)),
        pq_int("Start", &int(&|_, s| s.start)),
        pq_int("End", &int(&|_, s| s.end)),
        pq_int("PID", &int(&|_, _| pid(p) as i64)),
        pq_int("TID", &int(&|_, s| s.tid as i64)),
        pq_int("Stack Level", &int(&|i, _| stacks[i].len() as i64 - 1)),
        pq_int("Children Count", &int(&|i, _| children(i))),
        pq_int("Range ID", &int(&|i, _| i as i64 + 1)),
        pq_int(
            "Parent ID",
            &spans
                .iter()
                .map(|s| s.parent.map(|q| q as i64 + 1))
                .collect::<Vec<_>>(),
        ),
        pq_int_list(
            "Range Stack",
            &stacks.iter().map(|s| Some(&s[..])).collect::<Vec<_>>(),
        ),
        pq_int("Rank", &int(&|_, _| 0)),
    ];
    if form == Recipe::Domain {
        cols.insert(0, pq_text("Domain", &borrow(&domains)));
    }
    parquet_table(&cols, 1 << 20)
}

/// The ranges of process `p` with each all-reduce thunk wrapped in an NCCL range (which
/// the derivation drops, re-parenting the thunk to its module).
fn spans_with_nccl(p: usize, g: usize) -> Vec<Span> {
    let mut out: Vec<Span> = Vec::new();
    let mut map = Vec::new();
    for s in spans(p, g) {
        let parent = s.parent.map(|q| map[q]);
        if s.name.contains("all-reduce-start") {
            out.push(Span {
                name: "NCCL:ncclAllReduce".into(),
                tid: s.tid,
                start: s.start,
                end: s.end,
                parent,
                thunk: false,
            });
            let wrapper = out.len() - 1;
            map.push(out.len());
            out.push(Span {
                parent: Some(wrapper),
                ..s
            });
        } else {
            map.push(out.len());
            out.push(Span { parent, ..s });
        }
    }
    out
}

/// Writes `dir/<name>.zip`: process `p` of P × `g` with thread metadata, its GPU
/// projection `trace`.
fn archive_of(
    dir: &Path,
    name: &str,
    p: usize,
    processes: usize,
    g: usize,
    trace: &[u8],
) -> String {
    let threads = thread_metadata(p, g);
    let dumps: Vec<(String, Vec<u8>)> = dump_members(processes * g, FP_STEP);
    let mut members: Vec<(&str, &[u8])> = vec![
        ("nvtx_gpu_proj_trace/trace.parquet", trace),
        ("thread-metadata.parquet", &threads),
    ];
    members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
    write(dir, &format!("{name}.zip"), &zip(&members, false))
}

/// `thread-metadata.parquet`: main, compiler and launcher threads of process `p`.
fn thread_metadata(p: usize, g: usize) -> Vec<u8> {
    thread_metadata_with(p, g, Some("slice"))
}

/// [`thread_metadata`] with the launchers' last field named `field` (`slice` before
/// xla#29725, `partition` since), or without launcher names at all (`None`: XLA before
/// xla#14092 named no threads).
fn thread_metadata_with(p: usize, g: usize, field: Option<&str>) -> Vec<u8> {
    let pid = pid(p);
    let mut names = vec![Some("python3".to_string()), Some("tf_XLAEigen".to_string())];
    let mut tids = vec![Some(pid as i64), Some(pid as i64 + 50)];
    for l in 0..g {
        names.push(Some(match field {
            Some(f) => format!(
                "XlaLauncher:#global={},local={l},process={p},{f}=0#",
                p * g + l
            ),
            None => format!("pt_thread_{l}"),
        }));
        tids.push(Some((pid + 1 + l as u64) as i64));
    }
    let n = names.len();
    parquet_table(
        &[
            pq_text("Name", &borrow(&names)),
            pq_int("PID", &vec![Some(pid as i64); n]),
            pq_int("TID", &tids),
            pq_int32("Priority", &vec![Some(0); n]),
        ],
        1 << 20,
    )
}

fn inst(id: i64, name: &str, opcode: &str, operands: &[i64], calls: &[i64]) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(f32s(&[1024])),
        operand_ids: operands.to_vec(),
        called_computation_ids: calls.to_vec(),
        ..Default::default()
    }
}

fn module_proto(id: i64, name: &str, fp: &str, computations: Vec<HloComputationProto>) -> Vec<u8> {
    hlo_of(id, name, Some(fp), computations).encode_to_vec()
}

/// The after-optimizations dumps: (file name, HloProto bytes).
fn dumps(total: usize) -> Vec<(&'static str, Vec<u8>)> {
    dumps_with(total, FP_STEP)
}

/// A fingerprint of jit_step whose all-reduce runs in groups of two devices: its
/// collective sequence differs.
const FP_PAIRS: &str = "31de0000000000000000000000000beef";

/// [`dumps`], jit_step with fingerprint `fp_step` (the all-reduce over pairs of devices
/// for [`FP_PAIRS`], over all otherwise).
fn dumps_with(total: usize, fp_step: &str) -> Vec<(&'static str, Vec<u8>)> {
    let add = computation(
        1,
        "add",
        vec![
            inst(1, "x", "parameter", &[], &[]),
            inst(2, "y", "parameter", &[], &[]),
            inst(3, "add.0", "add", &[1, 2], &[]),
        ],
    );
    let mut all_reduce = inst(102, "all-reduce-start.1", "all-reduce-start", &[101], &[1]);
    let group = if fp_step == FP_PAIRS { 2 } else { total as i64 };
    all_reduce.replica_groups = (0..total as i64)
        .collect::<Vec<_>>()
        .chunks(group as usize)
        .map(|ids| ReplicaGroup {
            replica_ids: ids.to_vec(),
        })
        .collect();
    let step = computation(
        10,
        "main.10",
        vec![
            inst(100, "p0", "parameter", &[], &[]),
            inst(101, "fusion.1", "fusion", &[100], &[]),
            all_reduce,
            inst(103, "all-reduce-done.1", "all-reduce-done", &[102], &[]),
            inst(104, "fusion.2", "fusion", &[103], &[]),
        ],
    );
    let init = computation(
        20,
        "main.20",
        vec![
            inst(200, "p0", "parameter", &[], &[]),
            inst(201, "fusion.0", "fusion", &[200], &[]),
        ],
    );
    vec![
        (
            "module_0007.jit_step.sm_9.0_gpu_after_optimizations.hlo.pb",
            module_proto(7, "jit_step", fp_step, vec![add, step]),
        ),
        (
            "module_0003.jit_init.sm_9.0_gpu_after_optimizations.hlo.pb",
            module_proto(3, "jit_init", FP_INIT, vec![init]),
        ),
    ]
}

/// The dumps as archive members: `dump/<name>.xz`.
fn dump_members(total: usize, fp_step: &str) -> Vec<(String, Vec<u8>)> {
    dumps_with(total, fp_step)
        .into_iter()
        .map(|(name, bytes)| (format!("dump/{name}.xz"), xz(&bytes)))
        .collect()
}

/// Writes `dir/rank<p>.zip`: process `p` of P × `g`, with thread metadata or not.
fn archive(dir: &Path, p: usize, processes: usize, g: usize, metadata: bool) -> String {
    archive_with(dir, p, processes, g, metadata, FP_STEP)
}

/// [`archive`], jit_step compiled to fingerprint `fp_step`.
fn archive_with(
    dir: &Path,
    p: usize,
    processes: usize,
    g: usize,
    metadata: bool,
    fp_step: &str,
) -> String {
    let trace = gpu_proj_trace(p, g);
    let threads = thread_metadata(p, g);
    let dumps: Vec<(String, Vec<u8>)> = dump_members(processes * g, fp_step);
    let mut members: Vec<(&str, &[u8])> = vec![("nvtx_gpu_proj_trace/trace.parquet", &trace)];
    if metadata {
        members.push(("thread-metadata.parquet", &threads));
    }
    members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
    write(dir, &format!("rank{p}.zip"), &zip(&members, false))
}

/// Writes the NVTX ranges, CUDA calls and kernels of process `p` into `db`; `corr` numbers
/// the calls.
fn export_process(db: &NsysDb, p: usize, g: usize, names: bool, corr: &mut i64) {
    let pid = pid(p);
    db.domain(1, gtid(pid, pid), 1, "TSL");
    if names {
        for l in 0..g {
            let tid = pid + 1 + l as u64;
            db.thread_name(
                gtid(pid, tid),
                10_000 + (p * g + l) as i64,
                &format!(
                    "XlaLauncher:#global={},local={l},process={p},slice=0#",
                    p * g + l
                ),
            );
        }
    }
    for s in spans(p, g) {
        let name = s.name.strip_prefix("TSL:").unwrap();
        db.nvtx(
            PUSH_POP,
            s.start,
            Some(s.end),
            gtid(pid, s.tid),
            Some(name),
            None,
            1,
        );
        if s.thunk {
            // The launching thread's device: launcher l drives local device l; the main
            // and compiler threads the process's first device.
            let local = s
                .tid
                .checked_sub(pid + 1)
                .filter(|&l| l < g as u64)
                .unwrap_or(0);
            *corr += 1;
            db.call(s.start, s.start + 10, gtid(pid, s.tid), *corr);
            db.kernel_on(local as i64, s.start, s.end, gpid(pid), *corr);
        }
    }
}

/// Writes `dir/<name>.sqlite` holding `processes` (indices into the run of P × `g`).
fn export(dir: &Path, name: &str, processes: &[usize], g: usize, names: bool) -> String {
    let path = dir.join(format!("{name}.sqlite"));
    let db = NsysDb::create(&path);
    let mut corr = 0;
    for &p in processes {
        export_process(&db, p, g, names, &mut corr);
    }
    path.to_str().unwrap().to_string()
}

/// An XLA dump folder `dir/xla_dump` for SQLite exports.
fn dump_folder(dir: &Path, total: usize) -> String {
    let folder = dir.join("xla_dump");
    for (name, bytes) in dumps(total) {
        write(&folder, name, &bytes);
    }
    folder.to_str().unwrap().to_string()
}

fn records(tool: &str, args: &[&str]) -> (Vec<Value>, String) {
    let out = run(tool, args, b"");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{tool} {args:?}: {err}");
    (json_lines(&String::from_utf8_lossy(&out.stdout)), err)
}

/// Executions per (device, program name), from module records.
fn executions(modules: &[Value]) -> BTreeMap<(u64, String), usize> {
    let mut out = BTreeMap::new();
    for m in modules {
        let key = (
            m["device"].as_u64().unwrap(),
            m["name"].as_str().unwrap().to_string(),
        );
        *out.entry(key).or_default() += 1;
    }
    out
}

/// What every layout of P × G must give: on device p·G + l, three `jit_step` executions;
/// on each process's first device one `jit_init` and one autotuning execution.
fn expected_executions(processes: usize, g: usize) -> BTreeMap<(u64, String), usize> {
    let mut out = BTreeMap::new();
    for p in 0..processes {
        for l in 0..g {
            let d = (p * g + l) as u64;
            out.insert((d, "jit_step".to_string()), STEP_EXECS as usize);
            if l == 0 {
                out.insert((d, "jit_init".to_string()), 1);
                out.insert((d, "extracted".to_string()), 1);
            }
        }
    }
    out
}

/// The thunk records' devices: each all-reduce names the full group.
fn check_thunks(thunks: &[Value], processes: usize, g: usize) {
    let total = (processes * g) as u64;
    let devices: std::collections::BTreeSet<u64> = thunks
        .iter()
        .map(|t| t["device"].as_u64().unwrap())
        .collect();
    assert_eq!(devices, (0..total).collect());
    let reduces: Vec<&Value> = thunks.iter().filter(|t| t["comm"] == true).collect();
    assert_eq!(reduces.len() as u64, total * STEP_EXECS as u64);
    assert!(reduces.iter().all(|t| t["group_size"] == total));
}

const TABLES: [&str; 2] = ["modules", "thunks"];

/// Checks the records of `table` against the layout of P × G: executions per device and
/// program for modules, devices and all-reduce groups for thunks.
fn check_layout(table: &str, records: &[Value], processes: usize, g: usize) {
    if table == "modules" {
        assert_eq!(executions(records), expected_executions(processes, g));
    } else {
        check_thunks(records, processes, g);
    }
}

#[test]
fn one_process_four_gpus_archive_inferred_equals_named() {
    let dir = tempdir();
    let named_dir = dir.path().join("named");
    let bare_dir = dir.path().join("bare");
    let named = archive(&named_dir, 0, 1, 4, true);
    let bare = archive(&bare_dir, 0, 1, 4, false);
    for table in TABLES {
        let (a, a_err) = records("njx-export", &["--table", table, &named]);
        let (b, b_err) = records("njx-export", &["--table", table, &bare]);
        assert_eq!(a, b, "{table}: inferred devices differ from named ones");
        assert!(!a_err.contains("inferred"), "{a_err}");
        assert_eq!(
            b_err.matches("devices inferred from thread order").count(),
            1,
            "said once: {b_err}"
        );
        check_layout(table, &a, 1, 4);
    }
    // The flame graphs per device and by op_name agree too, with all four devices.
    for by in ["device", "op-name"] {
        let a = ok("njx-flamefold", &["--by", by, &named]);
        let b = ok("njx-flamefold", &["--by", by, &bare]);
        assert_eq!(a, b, "--by {by}");
        if by == "device" {
            for d in 0..4 {
                assert!(
                    a.lines().any(|l| l.starts_with(&format!("device {d};"))),
                    "{a}"
                );
            }
        }
    }
}

#[test]
fn two_processes_two_gpus_archives_inferred_equals_named() {
    let dir = tempdir();
    let (nd, bd) = (dir.path().join("named"), dir.path().join("bare"));
    let named: Vec<String> = (0..2).map(|p| archive(&nd, p, 2, 2, true)).collect();
    let bare: Vec<String> = (0..2).map(|p| archive(&bd, p, 2, 2, false)).collect();
    let args = |table: &'static str, files: &[String]| -> Vec<String> {
        let mut v = vec!["--table".to_string(), table.to_string()];
        v.extend(files.iter().cloned());
        v
    };
    for table in TABLES {
        let a_args = args(table, &named);
        let b_args = args(table, &bare);
        let (a, _) = records(
            "njx-export",
            &a_args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        let (b, b_err) = records(
            "njx-export",
            &b_args.iter().map(String::as_str).collect::<Vec<_>>(),
        );
        assert_eq!(a, b, "{table}: inferred devices differ from named ones");
        assert_eq!(b_err.matches("devices inferred").count(), 1, "{b_err}");
        check_layout(table, &a, 2, 2);
    }
    // The analyses see every device alike: the collectives report of both forms agrees.
    let mut a = vec!["--format", "json"];
    a.extend(named.iter().map(String::as_str));
    let mut b = vec!["--format", "json"];
    b.extend(bare.iter().map(String::as_str));
    let (ca, _) = records("njx-collectives", &a);
    let (cb, _) = records("njx-collectives", &b);
    assert_eq!(ca, cb);
    assert!(!ca.is_empty());
}

#[test]
fn sqlite_exports_number_kernel_devices_per_process() {
    let dir = tempdir();
    let dump = dump_folder(dir.path(), 4);
    // The run as one export of both processes and as one export per process, with and
    // without launcher names.
    let both_named = export(dir.path(), "both_named", &[0, 1], 2, true);
    let both_bare = export(dir.path(), "both_bare", &[0, 1], 2, false);
    let p0 = export(dir.path(), "p0", &[0], 2, false);
    let p1 = export(dir.path(), "p1", &[1], 2, false);
    for table in TABLES {
        let (named, _) = records(
            "njx-export",
            &["--table", table, &both_named, "--hlo", &dump],
        );
        let (bare, err) = records(
            "njx-export",
            &["--table", table, &both_bare, "--hlo", &dump],
        );
        assert!(err.contains("numbered per process"), "{err}");
        let strip = |v: Vec<Value>| -> Vec<Value> {
            v.into_iter()
                .map(|mut r| {
                    r["profile"] = Value::Null;
                    r
                })
                .collect()
        };
        assert_eq!(
            strip(named.clone()),
            strip(bare),
            "{table}: one export, no names"
        );
        let (apart, _) = records("njx-export", &["--table", table, &p0, &p1, "--hlo", &dump]);
        let mut apart = strip(apart);
        let mut named = strip(named);
        let key = |r: &Value| {
            (
                r["device"].as_u64(),
                r["start_ns"].as_i64(),
                r["name"].to_string(),
            )
        };
        apart.sort_by_key(key);
        named.sort_by_key(key);
        assert_eq!(named, apart, "{table}: one export per process, no names");
        check_layout(table, &named, 2, 2);
    }
}

#[test]
fn sqlite_one_process_four_gpus_with_and_without_names() {
    let dir = tempdir();
    let dump = dump_folder(dir.path(), 4);
    let named = export(dir.path(), "named", &[0], 4, true);
    let bare = export(dir.path(), "bare", &[0], 4, false);
    let (a, _) = records(
        "njx-export",
        &["--table", "modules", &named, "--hlo", &dump],
    );
    let (b, _) = records("njx-export", &["--table", "modules", &bare, "--hlo", &dump]);
    assert_eq!(executions(&a), expected_executions(1, 4));
    assert_eq!(executions(&b), expected_executions(1, 4));
}

#[test]
fn threads_that_swap_devices_between_programs_are_an_error() {
    // Program 3 runs on the launcher threads of devices 1 and 2 of a four-GPU process
    // without names: sorted by thread id they are its devices 0 and 1, but jit_step
    // made them 1 and 2.
    let dir = tempdir();
    let p = 0;
    let mut s = spans(p, 4);
    // jit_init (range 0, its thunk range 1) on device 1's launcher thread.
    s[0].tid = pid(p) + 2;
    s[1].tid = pid(p) + 2;
    let extra_start = 100_000;
    s.push(Span {
        name: "TSL:XlaModule:#hlo_module=jit_init,program_id=3#".into(),
        tid: pid(p) + 3,
        start: extra_start,
        end: extra_start + 500,
        parent: None,
        thunk: false,
    });
    let m = s.len() - 1;
    s.push(Span {
        name: "TSL:Thunk:#hlo_op=fusion.0#".into(),
        tid: pid(p) + 3,
        start: extra_start + 100,
        end: extra_start + 400,
        parent: Some(m),
        thunk: true,
    });
    // Write the table from the modified spans through the same writer.
    let bytes = gpu_proj_trace_of(p, &s);
    let dumps: Vec<(String, Vec<u8>)> = dump_members(4, FP_STEP);
    let mut members: Vec<(&str, &[u8])> = vec![("nvtx_gpu_proj_trace/trace.parquet", &bytes)];
    members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
    let path = write(dir.path(), "swapped.zip", &zip(&members, false));
    let out = run("njx-export", &["--table", "modules", &path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("swapped.zip"), "{err}");
    assert!(
        err.contains("cannot be inferred from thread order"),
        "{err}"
    );
}

#[test]
fn a_program_compiled_differently_by_one_process_is_reported() {
    const OTHER: &str = "0dd0000000000000000000000000beef";
    let dir = tempdir();
    let same: Vec<String> = (0..2)
        .map(|p| archive(&dir.path().join("same"), p, 2, 2, true))
        .collect();
    let differ: Vec<String> = (0..2)
        .map(|p| {
            let fp = if p == 1 { OTHER } else { FP_STEP };
            archive_with(&dir.path().join("differ"), p, 2, 2, true, fp)
        })
        .collect();
    for tool in ["njx-modules", "njx-collectives", "njx-flamefold"] {
        let args = |files: &[String]| -> Vec<String> {
            let mut v: Vec<String> = if tool == "njx-flamefold" {
                vec!["--by".into(), "op-name".into()]
            } else {
                Vec::new()
            };
            v.extend(files.iter().cloned());
            v
        };
        let a = args(&same);
        let out = run(tool, &a.iter().map(String::as_str).collect::<Vec<_>>(), b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{tool}: {err}");
        assert!(!err.contains("compiled differently"), "{tool}: {err}");
        let b = args(&differ);
        let out = run(tool, &b.iter().map(String::as_str).collect::<Vec<_>>(), b"");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{tool}: {err}");
        let want = format!(
            "module jit_step was compiled differently across devices: 2 programs ({OTHER} on \
             devices 2-3, {FP_STEP} on devices 0-1)"
        );
        assert_eq!(err.matches(&want).count(), 1, "{tool}: {err}");
    }
    // The same through records, and through partial results.
    let mut export = vec!["--table", "thunks"];
    export.extend(differ.iter().map(String::as_str));
    let thunks = run("njx-export", &export, b"");
    assert!(thunks.status.success());
    assert!(String::from_utf8_lossy(&thunks.stderr).contains("compiled differently"));
    // Records of one stream: said by njx-export, which wrote them, not again.
    let out = run("njx-collectives", &[], &thunks.stdout);
    assert!(out.status.success());
    assert!(!String::from_utf8_lossy(&out.stderr).contains("compiled differently"));
    let parts: Vec<Vec<u8>> = differ
        .iter()
        .map(|f| {
            let out = run("njx-modules", &["--partial", f], b"");
            assert!(out.status.success());
            out.stdout
        })
        .collect();
    let out = run("njx-modules", &[], &parts.concat());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("compiled differently across devices: 2 programs"),
        "{err}"
    );
}

#[test]
fn a_pipeline_says_once_that_a_program_was_compiled_differently() {
    // Process 1 compiled jit_step differently: the note is the answer's, said once by
    // whichever tool of a pipeline first sees both programs together.
    const OTHER: &str = "0dd0000000000000000000000000beef";
    let dir = tempdir();
    for p in 0..2 {
        let fp = if p == 1 { OTHER } else { FP_STEP };
        archive_with(dir.path(), p, 2, 2, true, fp);
    }
    // A script's messages, once it succeeded.
    let stderr_ok = |script: &str| {
        let out = shell(script, dir.path());
        let err = stderr_of(&out);
        assert!(out.status.success(), "{script}: {err}");
        err
    };
    let said = |script: &str| {
        let err = stderr_ok(script);
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("compiled differently"))
            .collect();
        assert_eq!(lines.len(), 1, "{script}: {err}");
        lines[0].to_string()
    };
    for script in [
        // One reads the profiles and says it; the next reads its records.
        "njx-export --table modules rank0.zip rank1.zip | njx-modules",
        "njx-export --table thunks rank0.zip rank1.zip | njx-collectives",
        "njx-export --table thunks rank0.zip rank1.zip | njx-collectives --table lateness",
        "njx-export --table thunks rank0.zip rank1.zip | njx-flamefold --by module",
        "njx-export --table thunks rank0.zip rank1.zip | njx-flamefold --by op-name --hlo rank0.zip \
         --hlo rank1.zip",
        "njx-export --table thunks rank0.zip rank1.zip | njx-thunks",
        "njx-export --table thunks rank0.zip rank1.zip | njx-pgle -o pgle",
        "njx-export --table thunks rank0.zip rank1.zip > t.jsonl && njx-collectives t.jsonl",
        // A partial result leaves it to the tool reading the partials.
        "njx-modules --partial rank0.zip rank1.zip | njx-modules",
        "njx-collectives --partial rank0.zip rank1.zip | njx-collectives",
        "njx-modules --partial rank0.zip > 0.part && njx-modules --partial rank1.zip > 1.part \
         && cat 0.part 1.part | njx-modules",
        // Records of one process each: no export saw both, the reader says it.
        "njx-export --table thunks rank0.zip > 0.jsonl && njx-export --table thunks rank1.zip \
         > 1.jsonl && njx-collectives 0.jsonl 1.jsonl",
    ] {
        let line = said(script);
        assert!(
            line.contains(&format!("{OTHER} on devices 2-3, {FP_STEP} on devices 0-1")),
            "{script}: {line}"
        );
    }
    // Never left out: where the records show it by themselves, the reader says it again in
    // one short line, which is all there is when the export was silenced or the stream is
    // two exports joined (neither saw both programs).
    for script in [
        "njx-export --table thunks rank0.zip rank1.zip | njx-collectives",
        "njx-export -q --table thunks rank0.zip rank1.zip | njx-collectives",
        "njx-export --table thunks rank0.zip > 0.jsonl && njx-export --table thunks rank1.zip \
         > 1.jsonl && cat 0.jsonl 1.jsonl | njx-collectives",
    ] {
        let err = stderr_ok(script);
        assert!(
            err.contains(
                "njx-collectives: module jit_step ran as 2 programs, each on devices of its own"
            ),
            "{script}: {err}"
        );
    }
}

#[test]
fn autotuning_executions_are_marked_in_the_records() {
    let dir = tempdir();
    let zip = archive(dir.path(), 0, 1, 2, true);
    let mut modules = Vec::new();
    for table in TABLES {
        let (rows, _) = records("njx-export", &["--table", table, &zip]);
        let name = if table == "modules" { "name" } else { "module" };
        let tuning: Vec<&Value> = rows.iter().filter(|r| r[name] == "extracted").collect();
        assert!(!tuning.is_empty(), "{table}");
        for r in &rows {
            let is = r[name] == "extracted";
            assert_eq!(r["autotuning"], is, "{table}: {r}");
            assert_eq!(r["program"] == "unknown", is, "{table}: {r}");
        }
        // Steady state without autotuning is `not warmup and not autotuning`.
        let steady: Vec<&Value> = rows
            .iter()
            .filter(|r| r["warmup"] == false && r["autotuning"] == false)
            .collect();
        assert!(steady.iter().all(|r| r[name] == "jit_step"), "{table}");
        // CSV: the field added last, the columns before it where they were.
        let csv = ok("njx-export", &["--table", table, "--format", "csv", &zip]);
        let head = csv.lines().next().unwrap();
        assert!(head.ends_with(",autotuning"), "{head}");
        assert!(head.starts_with("profile,program,program_id,"), "{head}");
        if table == "modules" {
            modules = rows;
        }
    }
    // njx-modules counts them as before, from the archive and from the records, whether
    // the records carry the field or not (records written before it).
    assert!(!modules.is_empty());
    let old: String = modules
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m.as_object_mut().unwrap().remove("autotuning");
            m.to_string() + "\n"
        })
        .collect();
    let new: String = modules.iter().map(|m| m.to_string() + "\n").collect();
    for args in [&[][..], &["--include-warmup", "--include-autotuning"][..]] {
        let mut a = vec!["--format", "json"];
        a.extend_from_slice(args);
        let from_archive = ok("njx-modules", &[&a[..], &[zip.as_str()]].concat());
        assert_eq!(ok_with("njx-modules", &a, new.as_bytes()), from_archive);
        assert_eq!(ok_with("njx-modules", &a, old.as_bytes()), from_archive);
        let programs: Vec<Value> = json_lines(&from_archive);
        let unknown = programs.iter().any(|p| p["program"] == "unknown");
        assert_eq!(unknown, !args.is_empty(), "{args:?}: {programs:?}");
    }
}

#[test]
fn a_combine_archive_and_an_archive_after_it_number_their_processes_in_order() {
    // Processes 0 and 1 in an nsys-jax-combine archive (the GPU projections differ, so
    // each is stored as `nvtx_gpu_proj_trace/trace.parquet/<profile>`; the dumps are the
    // same, stored once), process 2 in an archive of its own; none names its threads.
    let dir = tempdir();
    let (processes, g) = (3, 2);
    let dumps: Vec<(String, Vec<u8>)> = dump_members(processes * g, FP_STEP);
    let traces: Vec<(String, Vec<u8>)> = (0..2)
        .map(|p| {
            (
                format!("nvtx_gpu_proj_trace/trace.parquet/rank{p}"),
                gpu_proj_trace(p, g),
            )
        })
        .collect();
    let mut members: Vec<(&str, &[u8])> =
        traces.iter().map(|(n, b)| (n.as_str(), &b[..])).collect();
    members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
    let combined = write(dir.path(), "combined.zip", &zip(&members, false));
    let rank2 = archive(&dir.path().join("bare"), 2, processes, g, false);
    let named: Vec<String> = (0..processes)
        .map(|p| archive(&dir.path().join("named"), p, processes, g, true))
        .collect();
    for table in TABLES {
        let (bare, err) = records("njx-export", &["--table", table, &combined, &rank2]);
        assert_eq!(err.matches("devices inferred").count(), 1, "{err}");
        let mut args = vec!["--table", table];
        args.extend(named.iter().map(String::as_str));
        let (want, _) = records("njx-export", &args);
        assert_eq!(bare, want, "{table}");
        check_layout(table, &bare, processes, g);
    }
}

#[test]
fn keyed_by_name_programs_compiled_differently_are_analysed_together() {
    const OTHER: &str = "0dd0000000000000000000000000beef";
    let dir = tempdir();
    let set = |sub: &str, fp1: &str| -> Vec<String> {
        (0..2)
            .map(|p| {
                let fp = if p == 1 { fp1 } else { FP_STEP };
                archive_with(&dir.path().join(sub), p, 2, 2, true, fp)
            })
            .collect()
    };
    let (same, differ, wider) = (
        set("same", FP_STEP),
        set("differ", OTHER),
        set("wider", FP_PAIRS),
    );
    let report = |files: &[String], key: &str| -> (String, String) {
        let mut args = vec!["--program-key", key, "--format", "json"];
        args.extend(files.iter().map(String::as_str));
        let out = run("njx-collectives", &args, b"");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    // Keyed by name, the differently compiled run reports as the uniform one.
    let (uniform, _) = report(&same, "name");
    let (together, err) = report(&differ, "name");
    assert_eq!(together, uniform);
    assert!(
        err.contains(&format!(
            "module jit_step ran as 2 programs ({OTHER} on devices 2-3, {FP_STEP} on devices \
             0-1), analysed together by module name: their collective sequences are \
             identical"
        )),
        "{err}"
    );
    let stragglers = json_lines(&together)
        .into_iter()
        .filter(|r| r["table"] == "stragglers")
        .count();
    assert_eq!(stragglers, 4);
    // Keyed by fingerprint, they are apart (and the note says how to join them).
    let (apart, err) = report(&differ, "fingerprint");
    assert_ne!(apart, uniform);
    assert!(
        err.contains("(njx-modules --program-key name analyses them together"),
        "{err}"
    );
    // Different collective sequences are said.
    let (_, err) = report(&wider, "name");
    assert!(err.contains("their collective sequences differ"), "{err}");
    // The records keyed by name carry the name and executions counted per name.
    let mut args = vec!["--table", "modules", "--program-key", "name"];
    args.extend(differ.iter().map(String::as_str));
    let (modules, _) = records("njx-export", &args);
    let step: Vec<&Value> = modules.iter().filter(|m| m["name"] == "jit_step").collect();
    assert!(step.iter().all(|m| m["program"] == "jit_step"));
    assert_eq!(executions(&modules), expected_executions(2, 2));
}

#[test]
fn every_form_of_the_gpu_projection_gives_the_same_records() {
    // nsys 2024.4 and before (first form, `TSL:`/`NCCL:` prefixes), 2024.5–2025.x (recipe
    // form, no prefixes, `nccl…`), 2026.1 (recipe form with `Domain`), each with NCCL
    // ranges around the all-reduce thunks.
    let dir = tempdir();
    let (processes, g) = (2, 2);
    let mut runs: Vec<Vec<String>> = Vec::new();
    for (form, label) in [
        (None, "first"),
        (Some(Recipe::Plain), "recipe"),
        (Some(Recipe::Domain), "domain"),
    ] {
        let folder = dir.path().join(label);
        runs.push(
            (0..processes)
                .map(|p| {
                    let s = spans_with_nccl(p, g);
                    let trace = match form {
                        None => gpu_proj_trace_of(p, &s),
                        Some(f) => gpu_proj_recipe_of(p, &s, f),
                    };
                    archive_of(&folder, &format!("rank{p}"), p, processes, g, &trace)
                })
                .collect(),
        );
    }
    for table in TABLES {
        let outs: Vec<Vec<Value>> = runs
            .iter()
            .map(|files| {
                let mut args = vec!["--table", table];
                args.extend(files.iter().map(String::as_str));
                records("njx-export", &args).0
            })
            .collect();
        assert_eq!(outs[0], outs[1], "{table}: recipe form");
        assert_eq!(outs[0], outs[2], "{table}: recipe form with Domain");
        check_layout(table, &outs[0], processes, g);
    }
}

#[test]
fn repeated_range_ids_are_an_error_with_nsys_jaxs_advice() {
    // Unpatched nsys 2024.5/2024.6 with CUDA graphs: two rows share a Range ID.
    let dir = tempdir();
    let s = spans(0, 2);
    let mut ids: Vec<Option<i64>> = (0..s.len()).map(|i| Some(i as i64 + 1)).collect();
    ids[3] = ids[2];
    let texts: Vec<Option<&str>> = s
        .iter()
        .map(|x| Some(x.name.trim_start_matches("TSL:")))
        .collect();
    let ints =
        |f: &dyn Fn(&Span) -> i64| -> Vec<Option<i64>> { s.iter().map(|x| Some(f(x))).collect() };
    let table = parquet_table(
        &[
            pq_text("Text", &texts),
            pq_int("Start", &ints(&|x| x.start)),
            pq_int("End", &ints(&|x| x.end)),
            pq_int("PID", &ints(&|_| pid(0) as i64)),
            pq_int("TID", &ints(&|x| x.tid as i64)),
            pq_int("Stack Level", &ints(&|x| i64::from(x.parent.is_some()))),
            pq_int("Children Count", &ints(&|_| 0)),
            pq_int("Range ID", &ids),
            pq_int(
                "Parent ID",
                &s.iter()
                    .map(|x| x.parent.map(|q| q as i64 + 1))
                    .collect::<Vec<_>>(),
            ),
            pq_int_list(
                "Range Stack",
                &s.iter().map(|_| Some(&[1i64][..])).collect::<Vec<_>>(),
            ),
            pq_int("Rank", &ints(&|_| 0)),
        ],
        1 << 20,
    );
    let path = archive_of(dir.path(), "graphs", 0, 1, 2, &table);
    let out = run("njx-export", &["--table", "modules", &path], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("graphs.zip"), "{err}");
    assert!(err.contains("range id 3 appears on several rows"), "{err}");
    assert!(err.contains("--xla_gpu_enable_command_buffer="), "{err}");
}

#[test]
fn launcher_names_with_partition_and_thread_metadata_without_them() {
    let dir = tempdir();
    let build = |sub: &str, field: Option<&str>| -> Vec<String> {
        (0..2)
            .map(|p| {
                let threads = thread_metadata_with(p, 2, field);
                let trace = gpu_proj_trace(p, 2);
                let dumps: Vec<(String, Vec<u8>)> = dump_members(4, FP_STEP);
                let mut members: Vec<(&str, &[u8])> = vec![
                    ("nvtx_gpu_proj_trace/trace.parquet", &trace),
                    ("thread-metadata.parquet", &threads),
                ];
                members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
                write(
                    &dir.path().join(sub),
                    &format!("rank{p}.zip"),
                    &zip(&members, false),
                )
            })
            .collect()
    };
    let runs = [
        build("slice", Some("slice")),
        build("partition", Some("partition")),
        build("unnamed", None),
    ];
    for table in TABLES {
        let outs: Vec<(Vec<Value>, String)> = runs
            .iter()
            .map(|files| {
                let mut args = vec!["--table", table];
                args.extend(files.iter().map(String::as_str));
                records("njx-export", &args)
            })
            .collect();
        assert_eq!(outs[0].0, outs[1].0, "{table}: partition=");
        assert_eq!(outs[0].0, outs[2].0, "{table}: no launcher names");
        assert!(!outs[1].1.contains("inferred"), "{}", outs[1].1);
        assert_eq!(
            outs[2].1.matches("devices inferred").count(),
            1,
            "{}",
            outs[2].1
        );
    }
}

#[test]
fn one_fingerprint_under_different_program_ids_is_one_program() {
    // Process 1 numbered jit_step 8 where process 0 numbered it 7 (non-SPMD code before
    // it, as nsys-jax's multi-process test has): the same fingerprint, one program.
    let dir = tempdir();
    let (processes, g) = (2, 2);
    let renumbered = |p: usize| -> String {
        let mut s = spans(p, g);
        if p == 1 {
            for x in &mut s {
                x.name = x.name.replace("program_id=7", "program_id=8");
            }
        }
        let trace = gpu_proj_trace_of(p, &s);
        let threads = thread_metadata(p, g);
        let dumps: Vec<(String, Vec<u8>)> = dumps(processes * g)
            .into_iter()
            .map(|(name, bytes)| {
                if p == 1 && name.starts_with("module_0007") {
                    let mut proto = HloProto::decode(&bytes[..]).unwrap();
                    proto.hlo_module.as_mut().unwrap().id = 8;
                    let name = name.replace("module_0007", "module_0008");
                    (format!("dump/{name}.xz"), xz(&proto.encode_to_vec()))
                } else {
                    (format!("dump/{name}.xz"), xz(&bytes))
                }
            })
            .collect();
        let mut members: Vec<(&str, &[u8])> = vec![
            ("nvtx_gpu_proj_trace/trace.parquet", &trace),
            ("thread-metadata.parquet", &threads),
        ];
        members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
        write(
            &dir.path().join("ids"),
            &format!("rank{p}.zip"),
            &zip(&members, false),
        )
    };
    let ids: Vec<String> = (0..processes).map(renumbered).collect();
    let same: Vec<String> = (0..processes)
        .map(|p| archive(&dir.path().join("same"), p, processes, g, true))
        .collect();
    let mut args = vec!["--table", "modules"];
    args.extend(ids.iter().map(String::as_str));
    let (modules, _) = records("njx-export", &args);
    check_layout("modules", &modules, processes, g);
    for m in modules.iter().filter(|m| m["name"] == "jit_step") {
        let want = if m["device"].as_u64().unwrap() < 2 {
            7
        } else {
            8
        };
        assert_eq!(
            (m["program"].as_str(), m["program_id"].as_u64()),
            (Some(FP_STEP), Some(want))
        );
    }
    let report = |files: &[String]| -> (String, String) {
        let mut args = vec!["--format", "json"];
        args.extend(files.iter().map(String::as_str));
        let out = run("njx-collectives", &args, b"");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{err}");
        (String::from_utf8_lossy(&out.stdout).into_owned(), err)
    };
    let (a, err) = report(&ids);
    let (b, _) = report(&same);
    assert_eq!(a, b);
    assert!(!err.contains("compiled differently"), "{err}");
}

#[test]
fn a_combine_archive_with_thread_metadata_per_profile() {
    // nsys-jax-combine of two named processes: the GPU projections and thread metadata
    // differ, so both are stored per profile; the dumps are shared.
    let dir = tempdir();
    let (processes, g) = (2, 2);
    let dumps = dump_members(processes * g, FP_STEP);
    let per_profile: Vec<(String, Vec<u8>)> = (0..processes)
        .flat_map(|p| {
            [
                (
                    format!("nvtx_gpu_proj_trace/trace.parquet/rank{p}"),
                    gpu_proj_trace(p, g),
                ),
                (
                    format!("thread-metadata.parquet/rank{p}"),
                    thread_metadata(p, g),
                ),
            ]
        })
        .collect();
    let mut members: Vec<(&str, &[u8])> = per_profile
        .iter()
        .map(|(n, b)| (n.as_str(), &b[..]))
        .collect();
    members.extend(dumps.iter().map(|(n, b)| (n.as_str(), &b[..])));
    let combined = write(dir.path(), "combined.zip", &zip(&members, false));
    let apart: Vec<String> = (0..processes)
        .map(|p| archive(&dir.path().join("apart"), p, processes, g, true))
        .collect();
    for table in TABLES {
        let (got, err) = records("njx-export", &["--table", table, &combined]);
        assert!(!err.contains("inferred"), "{err}");
        let mut args = vec!["--table", table];
        args.extend(apart.iter().map(String::as_str));
        let (want, _) = records("njx-export", &args);
        assert_eq!(got, want, "{table}");
        check_layout(table, &got, processes, g);
    }
}

#[test]
fn processes_driving_different_numbers_of_gpus_are_said_to_overlap() {
    // Without launcher names, a 4-GPU process then a 2-GPU one: thread order numbers the
    // second's devices 2-3 (process 1 × 2), which the first's 0-3 already hold.
    let dir = tempdir();
    let four = archive(&dir.path().join("a"), 0, 1, 4, false);
    let two = archive(&dir.path().join("b"), 1, 2, 2, false);
    let (_, err) = records("njx-export", &["--table", "modules", &four, &two]);
    // Whichever profile is derived first (they are read in parallel), the other is said.
    let said = err
        .lines()
        .find(|l| l.contains("device numbers of the two overlap"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        said.contains("with 2 per process, but") && said.contains("with 4: device numbers")
            || said.contains("with 4 per process, but") && said.contains("with 2: device numbers"),
        "{said}"
    );
    // As many GPUs each: nothing to say.
    let a = archive(&dir.path().join("c"), 0, 2, 2, false);
    let (_, err) = records("njx-export", &["--table", "modules", &a, &two]);
    assert!(!err.contains("overlap"), "{err}");
}
