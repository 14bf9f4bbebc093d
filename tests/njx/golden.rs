//! Golden output tests: every tool's main outputs on fixtures made here, compared byte for
//! byte with the copies stored under `tests/golden/<tool>/<case>`.
//!
//! The other test modules check figures worked out by hand; these check everything else a
//! tool writes (column order, widths, rounding, notes, record fields), so that any change
//! of an output shows up in review as a diff of `tests/golden/`. A diff there is the
//! point: read it, and keep it only if the change is meant.
//!
//! - A missing golden file is written on the first run (the test says so on stderr).
//! - After a meant change, rewrite them all and review the diff:
//!   `NJX_BLESS=1 cargo test --test njx golden::`
//! - A mismatch fails with a line diff (`-` stored, `+` now) of each file that differs.
//!
//! Paths of temporary folders are written `<tmp>`. SVGs are kept small: charts without
//! their background grid ([`chart`]), flame graphs without inferno's script and styles
//! ([`flame_graph`]); njx-combine's archive is listed, member by member.
//!
//! The fixtures are the other modules' own, in small: two nsys-jax archives of one program
//! on two ranks (`modules_archive.rs`, with op_name and source metadata and a buffer
//! assignment added to its HLO dump), an nsys SQLite export with XLA ranges and kernels
//! (`kernels.rs`), [`COMPILE_CSV`] and `examples/data/compile_trace.csv.xz`. njx-capture
//! needs nsys and is left out.

use crate::common::golden::Golden;
use crate::common::gpu_spans::*;
use crate::common::heap::{Kind, allocation, assignment, buffer, event, trace};
use crate::common::nsys_sqlite::{NsysDb, gpid, gtid};
use crate::common::*;
use njx::hlo::proto::{
    BufferAllocationProto, OpMetadata, StackFrameIndexProto, stack_frame_index_proto,
};
use prost::Message;
use std::path::Path;
use std::process::Command;

// ---------------------------------------------------------------- running the tools

/// Runs `tool` on `args`, which must succeed; (stdout, stderr).
fn both(tool: &str, args: &[&str]) -> (String, String) {
    let out = run(tool, args, b"");
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        stderr_of(&out)
    );
    let err = stderr_of(&out);
    (String::from_utf8(out.stdout).expect("utf-8 output"), err)
}

/// A chart of plotters (`--plot`, `--svg` of njx-heap) with its background grid (the
/// light `<line>`s, each a copy of the next but for its place) counted instead of listed:
/// the data, axes, ticks and labels stay, line for line.
fn chart(svg: &str) -> String {
    let mesh = |l: &&str| l.starts_with("<line opacity=\"0.");
    let grid = svg.lines().filter(mesh).count();
    let mut out = String::new();
    for (i, line) in svg.lines().enumerate() {
        if i == 1 {
            out += &format!("<!-- golden: {grid} grid lines left out -->\n");
        }
        if !mesh(&line) {
            out += line;
            out.push('\n');
        }
    }
    out
}

/// An inferno flame graph without its constant preamble (styles and script): the root
/// element, then the titles and frames, one element a line.
fn flame_graph(svg: &str) -> String {
    let root = svg.find("<svg ").expect("an SVG root");
    let root = &svg[root..root + svg[root..].find('>').expect("its end") + 1];
    let body = svg.rsplit_once("</script>").expect("inferno's script").1;
    format!("{root}\n{}\n", body.replace("><", ">\n<"))
}

/// `args` followed by `paths`.
fn with<'a>(args: &[&'a str], paths: &'a [String]) -> Vec<&'a str> {
    let mut all = args.to_vec();
    all.extend(paths.iter().map(String::as_str));
    all
}

// ---------------------------------------------------------------- the archives

const GPU_PROJ: &str = "nvtx_gpu_proj_trace/trace.parquet";

/// The push/pop table of one rank: the compilation of jit_step (program 7); on rank 1 its
/// backend holds an autotuner compilation of the extracted module (program 99).
fn pushpop_csv(rank: usize) -> String {
    let p = pid(rank);
    let o = rank as i64 * OFFSET;
    let mut csv = String::from(
        "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n",
    );
    let (s, e) = (o + 500_000, o + 2_500_000);
    csv += &format!(
        "{s},{e},2000000,1500000,500000,\"TSL:XlaCompile:#module=jit_step,program_id=7#\",{p},{p},0,1,1,,:1,\"TSL:XlaCompile:#module=jit_step,program_id=7#\"\n"
    );
    let (s, e) = (o + 600_000, o + 2_100_000);
    if rank == 1 {
        csv += &format!(
            "{s},{e},1500000,800000,700000,\"TSL:XlaCompileBackend:#module=jit_step,program_id=7#\",{p},{p},1,1,2,1,:1:2,\"--TSL:XlaCompileBackend:#module=jit_step,program_id=7#\"\n"
        );
        let (s, e) = (o + 700_000, o + 1_500_000);
        csv += &format!(
            "{s},{e},800000,600000,200000,TSL:XlaAutotunerCompilation,{p},{p},2,1,3,2,:1:2:3,----TSL:XlaAutotunerCompilation\n"
        );
        let (s, e) = (o + 800_000, o + 1_400_000);
        csv += &format!(
            "{s},{e},600000,0,600000,\"TSL:XlaCompileBackend:#module=extracted,program_id=99#\",{p},{p},3,0,4,3,:1:2:3:4,\"------TSL:XlaCompileBackend:#module=extracted,program_id=99#\"\n"
        );
    } else {
        csv += &format!(
            "{s},{e},1500000,0,1500000,\"TSL:XlaCompileBackend:#module=jit_step,program_id=7#\",{p},{p},1,0,2,1,:1:2,\"--TSL:XlaCompileBackend:#module=jit_step,program_id=7#\"\n"
        );
    }
    csv
}

/// Metadata of an instruction: its op_name, stack frame and scheduling name.
fn meta(op_name: &str, frame: i32, scheduling: &str) -> Option<OpMetadata> {
    Some(OpMetadata {
        op_name: op_name.into(),
        stack_frame_id: frame,
        scheduling_name: scheduling.into(),
        ..Default::default()
    })
}

/// The after-optimizations HloProto of program 7 (`jit_step`) of `modules_archive.rs`,
/// with metadata: `fusion.1` (`jit(step)/neg`, model.py:12 `step`, scheduled as itself),
/// the all-reduce of its f32[1024] result over {0,1} (`jit(step)/psum`, model.py:20 `loss`,
/// no scheduling name) and `fusion.2` (`jit(step)/exp`, model.py:20, scheduled as
/// `fusion.7`); both called from train.py:30. Its buffer assignment: the parameter (4 KiB),
/// a temp allocation of 8 KiB (fusion.1's result, then the all-reduce's, which its done
/// shares) and the output (fusion.2's result); the heap trace peaks at 8 KiB.
fn hlo_proto() -> Vec<u8> {
    use stack_frame_index_proto::{FileLocation, StackFrame};
    let mut proto = step_hlo(true, Some(FP));
    let module = proto.hlo_module.as_mut().expect("a module");
    let entry = module
        .computations
        .last_mut()
        .expect("the entry computation");
    for i in &mut entry.instructions {
        match i.name.as_str() {
            "fusion.1" => i.metadata = meta("jit(step)/neg", 2, "fusion.1"),
            "all-reduce-start.1" => i.metadata = meta("jit(step)/psum", 3, ""),
            "fusion.2" => i.metadata = meta("jit(step)/exp", 3, "fusion.7"),
            _ => {}
        }
    }
    let location = |file, function, line| FileLocation {
        file_name_id: file,
        function_name_id: function,
        line,
        column: 0,
    };
    let frame = |file_location_id, parent_frame_id| StackFrame {
        file_location_id,
        parent_frame_id,
    };
    module.stack_frame_index = Some(StackFrameIndexProto {
        file_names: vec!["train.py".into(), "model.py".into()],
        function_names: vec!["<module>".into(), "step".into(), "loss".into()],
        file_locations: vec![location(1, 1, 30), location(2, 2, 12), location(2, 3, 20)],
        stack_frames: vec![frame(1, 0), frame(2, 1), frame(3, 2)],
    });
    let ev = |kind, id, canonical, at| event(kind, id, canonical, "main.10", at);
    proto.buffer_assignment = Some(assignment(
        vec![
            buffer(1, 4096, 100, &[]),
            buffer(2, 4096, 101, &[]),
            buffer(3, 4096, 102, &[]),
            buffer(4, 4096, 103, &[]),
            buffer(5, 4096, 104, &[]),
        ],
        vec![
            BufferAllocationProto {
                is_entry_computation_parameter: true,
                ..allocation(0, 4096, &[(1, 0, 4096)])
            },
            allocation(1, 8192, &[(2, 0, 4096), (3, 4096, 4096), (4, 4096, 4096)]),
            BufferAllocationProto {
                maybe_live_out: true,
                ..allocation(2, 4096, &[(5, 0, 4096)])
            },
        ],
        vec![trace(
            vec![
                ev(Kind::Alloc, 2, 0, "fusion.1"),
                ev(Kind::Alloc, 3, 0, "all-reduce-start.1"),
                ev(Kind::ShareWith, 4, 3, "all-reduce-done.1"),
                ev(Kind::Free, 2, 0, "all-reduce-done.1"),
                ev(Kind::Free, 4, 0, "fusion.2"),
                ev(Kind::Free, 3, 0, "fusion.2"),
            ],
            true,
            1,
        )],
    ));
    xz(&proto.encode_to_vec())
}

/// Writes `dir/rank<rank>.zip` and returns its path: the GPU projection, thread names,
/// push/pop table and HLO dump of one rank.
pub(crate) fn archive(dir: &Path, rank: usize) -> String {
    let trace = gpu_proj_trace(rank);
    let threads = thread_metadata(rank);
    let dump = hlo_proto();
    let pushpop = xz(pushpop_csv(rank).as_bytes());
    let members: Vec<(&str, &[u8])> = vec![
        (GPU_PROJ, &trace[..]),
        ("thread-metadata.parquet", &threads[..]),
        ("report_nvtx_pushpop_trace.csv.xz", &pushpop[..]),
        (DUMP, &dump[..]),
    ];
    write(dir, &format!("rank{rank}.zip"), &zip(&members, false))
}

/// rank0.zip and rank1.zip in a fresh folder, whose path outputs write as `<tmp>`.
fn archives(g: &mut Golden) -> (tempfile::TempDir, Vec<String>) {
    let dir = tempdir();
    g.path(dir.path(), "<tmp>");
    let paths = (0..2).map(|r| archive(dir.path(), r)).collect();
    (dir, paths)
}

// ---------------------------------------------------------------- the SQLite export

const PID: u64 = 100;
const LAUNCH: i64 = 1;
const K1: i64 = 2;
const K1_SHORT: i64 = 3;
const K2: i64 = 4;
const K2_SHORT: i64 = 5;
const MEMCPY: i64 = 6;
const MEMSET: i64 = 7;

/// `kernels.rs`' export with XLA's ranges, process 100: thread 1 pushes module
/// `jit_f` (program 7) [0, 1000] with thunks `fusion.1` [100, 300] (holding `inner`) and
/// `fusion.2` [550, 700], then a thunk outside modules [2000, 3000]; thread 2 pushes
/// `jit_g` (no program id) [0, 1000] holding thunk `outer.1` holding module `jit_h`
/// (program 2). Seven kernels on two devices (k1, and k2 for the third and seventh), two
/// memory copies and a memset.
fn sqlite_export(path: &Path) {
    let db = NsysDb::create(path);
    let t = |tid| gtid(PID, tid);
    let p = gpid(PID);
    db.string(LAUNCH, "cudaLaunchKernel_v7000");
    db.string(K1, "void k1<float>(int)");
    db.string(K1_SHORT, "k1");
    db.string(K2, "void k2()");
    db.string(K2_SHORT, "k2");
    db.string(MEMCPY, "cudaMemcpyAsync_v3020");
    db.string(MEMSET, "cudaMemsetAsync_v3020");
    db.range(
        0,
        1000,
        t(1),
        "TSL:XlaModule:#hlo_module=jit_f,program_id=7#",
    );
    db.range(100, 300, t(1), "TSL:Thunk:#hlo_op=fusion.1#");
    db.range(150, 250, t(1), "inner");
    db.range(550, 700, t(1), "Thunk:#hlo_op=fusion.2,unique_hlo_op_id=3#");
    db.range(2000, 3000, t(1), "TSL:Thunk:#hlo_op=stray.1#");
    db.range(0, 1000, t(2), "XlaModule:#hlo_module=jit_g#");
    db.range(0, 900, t(2), "TSL:Thunk:#hlo_op=outer.1#");
    db.range(
        100,
        800,
        t(2),
        "TSL:XlaModule:#hlo_module=jit_h,program_id=2#",
    );
    let launches = [
        (1, 160, 0, 10_000, 10_100, K1, K1_SHORT),
        (1, 400, 0, 10_200, 10_500, K1, K1_SHORT),
        (1, 600, 0, 10_800, 10_830, K2, K2_SHORT),
        (1, 2100, 0, 11_000, 11_050, K1, K1_SHORT),
        (1, 5000, 0, 11_100, 11_110, K1, K1_SHORT),
        (2, 200, 1, 9_000, 9_400, K1, K1_SHORT),
        (2, 850, 1, 9_500, 9_520, K2, K2_SHORT),
    ];
    for (i, (tid, call, dev, start, end, name, short)) in launches.into_iter().enumerate() {
        let corr = i as i64 + 1;
        db.call_named(call, call + 10, t(tid), corr, LAUNCH);
        db.kernel_named(dev, 7, start, end, p, corr, name, short, 1 + corr);
    }
    db.call_named(180, 190, t(1), 8, MEMCPY);
    db.call_named(5100, 5110, t(1), 9, MEMCPY);
    db.call_named(620, 630, t(1), 10, MEMSET);
    db.memcpy_of(12_000, 12_100, p, 8, 4096, 1);
    db.memcpy_of(12_200, 12_202, p, 9, 64, 2);
    db.memset(12_300, 12_340, p, 10);
}

/// `dir/x.sqlite`, written by [`sqlite_export`].
pub(crate) fn sqlite(dir: &Path) -> String {
    let path = dir.join("x.sqlite");
    sqlite_export(&path);
    path.to_str().expect("utf-8 path").to_string()
}

/// [`COMPILE_CSV`] as `dir/trace.csv`.
fn compile_csv(dir: &Path) -> String {
    write(dir, "trace.csv", COMPILE_CSV.as_bytes())
}

/// The example compilation profile shipped with the project.
fn example_trace() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/data/compile_trace.csv.xz")
        .to_str()
        .expect("utf-8 path")
        .to_string()
}

// ---------------------------------------------------------------- the tools

#[test]
fn export() {
    let mut g = Golden::new("njx-export");
    let (dir, ranks) = archives(&mut g);
    let csv = compile_csv(dir.path());
    g.check("compile_ranges.jsonl", &ok("njx-export", &[&csv]));
    g.check(
        "compile_ranges.csv",
        &ok("njx-export", &["--format", "csv", &csv]),
    );
    g.check(
        "archive_ranges.csv",
        &ok("njx-export", &with(&["--format", "csv"], &ranks)),
    );
    g.check(
        "archive_modules.jsonl",
        &ok("njx-export", &with(&["--table", "modules"], &ranks)),
    );
    g.check(
        "archive_modules_no_align.csv",
        &ok(
            "njx-export",
            &with(
                &["--table", "modules", "--no-align", "--format", "csv"],
                &ranks,
            ),
        ),
    );
    g.check(
        "archive_thunks.csv",
        &ok(
            "njx-export",
            &with(&["--table", "thunks", "--format", "csv"], &ranks),
        ),
    );
    g.check(
        "rank0_thunks.jsonl",
        &ok("njx-export", &["--table", "thunks", &ranks[0]]),
    );
    g.check(
        "rank0_gpu_ranges.csv",
        &ok(
            "njx-export",
            &["--table", "gpu-ranges", "--format", "csv", &ranks[0]],
        ),
    );
    let db = sqlite(dir.path());
    g.check("sqlite_ranges.jsonl", &ok("njx-export", &[&db]));
    g.check(
        "sqlite_kernels.jsonl",
        &ok("njx-export", &["--table", "kernels", &db]),
    );
    g.check(
        "sqlite_kernels.csv",
        &ok(
            "njx-export",
            &["--table", "kernels", "--format", "csv", &db],
        ),
    );
    g.check(
        "sqlite_memops.jsonl",
        &ok("njx-export", &["--table", "memops", &db]),
    );
    g.check(
        "sqlite_gpu_ranges.csv",
        &ok(
            "njx-export",
            &["--table", "gpu-ranges", "--format", "csv", &db],
        ),
    );
}

#[test]
fn ranges() {
    let mut g = Golden::new("njx-ranges");
    let dir = tempdir();
    g.path(dir.path(), "<tmp>");
    let csv = compile_csv(dir.path());
    g.check(
        "xla_compile.jsonl",
        &ok("njx-ranges", &["--xla-compile", &csv]),
    );
    g.check(
        "fold_compile.jsonl",
        &ok("njx-ranges", &["--fold", "^TSL:XlaCompile:", &csv]),
    );
    g.check(
        "select_backend.csv",
        &ok(
            "njx-ranges",
            &["--select", "XlaCompileBackend", "--format", "csv", &csv],
        ),
    );
    // From records on stdin.
    let records = ok("njx-export", &[&csv]);
    g.check(
        "xla_compile_stdin.csv",
        &ok_with(
            "njx-ranges",
            &["--xla-compile", "--format", "csv"],
            records.as_bytes(),
        ),
    );
}

#[test]
fn compile_summary() {
    let mut g = Golden::new("njx-compile-summary");
    let (dir, ranks) = archives(&mut g);
    let csv = compile_csv(dir.path());
    g.check("compile_csv.txt", &ok("njx-compile-summary", &[&csv]));
    g.check(
        "compile_csv_passes_by_name.txt",
        &ok("njx-compile-summary", &["--passes", "--by", "name", &csv]),
    );
    g.check(
        "compile_csv_total.csv",
        &ok("njx-compile-summary", &["--total", "--format", "csv", &csv]),
    );
    let example = example_trace();
    g.check(
        "example_total.txt",
        &ok("njx-compile-summary", &["--total", &example]),
    );
    g.check(
        "example_by_category_passes.jsonl",
        &ok(
            "njx-compile-summary",
            &[
                "--total", "--by", "category", "--passes", "--top", "12", "--format", "json",
                &example,
            ],
        ),
    );
    g.check(
        "archives.txt",
        &ok("njx-compile-summary", &with(&[], &ranks)),
    );
}

#[test]
fn modules() {
    let mut g = Golden::new("njx-modules");
    let (_dir, ranks) = archives(&mut g);
    g.check("table.txt", &ok("njx-modules", &with(&[], &ranks)));
    g.check(
        "summary.jsonl",
        &ok("njx-modules", &with(&["--format", "json"], &ranks)),
    );
    g.check(
        "warmup_autotuning.csv",
        &ok(
            "njx-modules",
            &with(
                &[
                    "--include-warmup",
                    "--include-autotuning",
                    "--format",
                    "csv",
                ],
                &ranks,
            ),
        ),
    );
    // From module records on stdin.
    let records = ok("njx-export", &with(&["--table", "modules"], &ranks));
    g.check(
        "records_stdin.txt",
        &ok_with("njx-modules", &[], records.as_bytes()),
    );
}

#[test]
fn collectives() {
    let mut g = Golden::new("njx-collectives");
    let (dir, ranks) = archives(&mut g);
    let svg = dir.path().join("busbw.svg");
    let svg = svg.to_str().unwrap();
    g.check(
        "report.txt",
        &ok("njx-collectives", &with(&["--plot", svg], &ranks)),
    );
    g.check(
        "busbw.svg",
        &chart(&std::fs::read_to_string(svg).expect("the plot")),
    );
    g.check(
        "report.csv",
        &ok("njx-collectives", &with(&["--format", "csv"], &ranks)),
    );
    g.check(
        "report_warmup.jsonl",
        &ok(
            "njx-collectives",
            &with(&["--format", "json", "--include-warmup"], &ranks),
        ),
    );
    g.check(
        "wait_quantiles.txt",
        &ok(
            "njx-collectives",
            &with(&["--table", "wait-quantiles"], &ranks),
        ),
    );
    g.check(
        "lateness.csv",
        &ok(
            "njx-collectives",
            &with(&["--table", "lateness", "--format", "csv"], &ranks),
        ),
    );
    g.check(
        "records.csv",
        &ok(
            "njx-collectives",
            &with(&["--records", "--format", "csv"], &ranks),
        ),
    );
}

#[test]
fn flamefold() {
    let mut g = Golden::new("njx-flamefold");
    let (dir, ranks) = archives(&mut g);
    for by in ["source", "op-name", "opcode", "module", "device"] {
        g.check(
            &format!("by_{by}.folded"),
            &ok("njx-flamefold", &with(&["--by", by], &ranks)),
        );
    }
    g.check(
        "by_source_warmup_us.folded",
        &ok(
            "njx-flamefold",
            &with(
                &["--by", "source", "--include-warmup", "--unit", "us"],
                &ranks,
            ),
        ),
    );
    // NVTX stacks of the compilation, raw and prepared.
    let csv = compile_csv(dir.path());
    g.check(
        "by_stack_raw.folded",
        &ok("njx-flamefold", &["--unit", "ms", &csv]),
    );
    let prepared = ok("njx-ranges", &["--xla-compile", &csv]);
    g.check(
        "by_stack_xla_compile.folded",
        &ok_with("njx-flamefold", &["--unit", "us"], prepared.as_bytes()),
    );
    // The flame graph's frames (the script and styles are inferno's).
    let svg = dir.path().join("source.svg");
    let svg = svg.to_str().unwrap();
    ok(
        "njx-flamefold",
        &with(&["--by", "source", "--svg", svg], &ranks),
    );
    g.check(
        "by_source.svg",
        &flame_graph(&std::fs::read_to_string(svg).expect("the SVG")),
    );
}

#[test]
fn kernels() {
    let mut g = Golden::new("njx-kernels");
    let dir = tempdir();
    g.path(dir.path(), "<tmp>");
    let db = sqlite(dir.path());
    g.check("by_name.txt", &ok("njx-kernels", &[&db]));
    for by in ["short-name", "range", "module", "thunk"] {
        g.check(
            &format!("by_{by}.txt"),
            &ok("njx-kernels", &["--by", by, &db]),
        );
    }
    g.check("by_name.csv", &ok("njx-kernels", &["--format", "csv", &db]));
    g.check(
        "memops.txt",
        &ok("njx-kernels", &["--table", "memops", &db]),
    );
    let memops = ok("njx-export", &["--table", "memops", &db]);
    g.check(
        "memops_records.jsonl",
        &ok_with("njx-kernels", &["--format", "json"], memops.as_bytes()),
    );
}

#[test]
fn thunks() {
    let mut g = Golden::new("njx-thunks");
    let (_dir, ranks) = archives(&mut g);
    g.check("top.txt", &ok("njx-thunks", &with(&[], &ranks)));
    g.check(
        "top.jsonl",
        &ok("njx-thunks", &with(&["--format", "json"], &ranks)),
    );
    g.check(
        "opcode.txt",
        &ok("njx-thunks", &with(&["--view", "opcode"], &ranks)),
    );
    g.check(
        "variability.txt",
        &ok(
            "njx-thunks",
            &with(&["--view", "variability", "--min-cv", "0"], &ranks),
        ),
    );
    // Records with the dump given apart.
    let records = ok("njx-export", &with(&["--table", "thunks"], &ranks));
    g.check(
        "records_opcode.csv",
        &ok_with(
            "njx-thunks",
            &["--view", "opcode", "--format", "csv", "--hlo", &ranks[0]],
            records.as_bytes(),
        ),
    );
}

#[test]
fn timeline() {
    let mut g = Golden::new("njx-timeline");
    let (dir, ranks) = archives(&mut g);
    let modules = ok("njx-export", &["--table", "modules", &ranks[0]]);
    let thunks = ok("njx-export", &["--table", "thunks", &ranks[0]]);
    let m = write(dir.path(), "modules.jsonl", modules.as_bytes());
    let t = write(dir.path(), "thunks.jsonl", thunks.as_bytes());
    g.check("rank0_modules_thunks.json", &ok("njx-timeline", &[&m, &t]));
    let db = sqlite(dir.path());
    let ranges = ok("njx-export", &[&db]);
    g.check(
        "sqlite_ranges.json",
        &ok_with("njx-timeline", &[], ranges.as_bytes()),
    );
}

#[test]
fn heap() {
    let mut g = Golden::new("njx-heap");
    let (dir, ranks) = archives(&mut g);
    let svg = dir.path().join("heap.svg");
    let svg = svg.to_str().unwrap();
    g.check("peak.txt", &ok("njx-heap", &["--svg", svg, &ranks[0]]));
    g.check(
        "heap.svg",
        &chart(&std::fs::read_to_string(svg).expect("the plot")),
    );
    g.check(
        "peak.jsonl",
        &ok("njx-heap", &["--format", "json", &ranks[0]]),
    );
    for view in ["buffers", "by-op-name", "by-source"] {
        g.check(
            &format!("{view}.txt"),
            &ok("njx-heap", &["--view", view, &ranks[0]]),
        );
    }
    g.check(
        "buffers.csv",
        &ok(
            "njx-heap",
            &["--view", "buffers", "--format", "csv", &ranks[0]],
        ),
    );
}

#[test]
fn pgle() {
    let mut g = Golden::new("njx-pgle");
    let (dir, ranks) = archives(&mut g);
    // Each profile written, then what the tool said.
    let profiles = |out: &Path| -> String {
        let mut text = String::new();
        for name in entries(out) {
            let body = std::fs::read_to_string(out.join(&name)).expect("a profile");
            text += &format!("== {name}\n{body}");
        }
        text
    };
    let out = dir.path().join("pgle");
    let (said, err) = both("njx-pgle", &with(&["-o", out.to_str().unwrap()], &ranks));
    g.check(
        "archives.txt",
        &format!("{}== stdout\n{said}== stderr\n{err}", profiles(&out)),
    );
    let records = ok("njx-export", &with(&["--table", "thunks"], &ranks));
    let out = dir.path().join("pgle_records");
    let got = run(
        "njx-pgle",
        &["-o", out.to_str().unwrap()],
        records.as_bytes(),
    );
    assert!(got.status.success(), "{}", stderr_of(&got));
    g.check(
        "records.txt",
        &format!(
            "{}== stdout\n{}== stderr\n{}",
            profiles(&out),
            String::from_utf8_lossy(&got.stdout),
            stderr_of(&got)
        ),
    );
}

#[test]
fn combine() {
    let mut g = Golden::new("njx-combine");
    let (dir, _ranks) = archives(&mut g);
    let out = Command::new(exe("njx-combine"))
        .args(["-o", "out/all", "rank0.zip", "rank1.zip"])
        .current_dir(dir.path())
        .output()
        .expect("run njx-combine");
    assert!(out.status.success(), "{}", stderr_of(&out));
    // Each member: its name, size and compression method, in the archive's order.
    let file = std::fs::File::open(dir.path().join("out/all.zip")).expect("the archive");
    let mut z = zip::ZipArchive::new(file).expect("a zip");
    let mut listing = String::new();
    for i in 0..z.len() {
        let m = z.by_index(i).unwrap();
        listing += &format!(
            "{}\t{}\t{:?}\n",
            m.name().unwrap(),
            m.size(),
            m.compression()
        );
    }
    g.check(
        "members.tsv",
        &format!(
            "{listing}== stdout\n{}== stderr\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr_of(&out)
        ),
    );
    // The combined archive analyses as the two did.
    let all = dir.path().join("out/all.zip");
    g.check(
        "modules_of_combined.txt",
        &ok("njx-modules", &[all.to_str().unwrap()]),
    );
}

/// The diff a mismatch shows: hunks with three lines of context and both line numbers, a
/// gap between far changes, the column where a changed line first differs.
#[test]
fn report() {
    let mut g = Golden::new("njx-report");
    let (dir, ranks) = archives(&mut g);
    let (text, notes) = both("njx-report", &with(&[], &ranks));
    g.check("text.txt", &text);
    g.check("notes.txt", &notes);
    g.check(
        "report.json",
        &ok(
            "njx-report",
            &with(&["--format", "json", "--rows", "2"], &ranks),
        ),
    );
    let db = sqlite(dir.path());
    g.check("sqlite.txt", &ok("njx-report", &["-q", "--rows", "3", &db]));
}

/// The example run shipped in `examples/data/run/` (the README's quick start reports on
/// it): this module's two archives, byte for byte. Missing ones are written, and
/// `NJX_BLESS=1` rewrites them.
#[test]
fn the_example_run_is_these_archives() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let dir = tempdir();
    for rank in 0..2 {
        let made = std::fs::read(archive(dir.path(), rank)).unwrap();
        let path = shipped.join(format!("rank{rank}.zip"));
        match std::fs::read(&path) {
            Ok(bytes) if !crate::common::golden::bless() => assert!(
                bytes == made,
                "{} is not what golden.rs' archive() writes: bless it with NJX_BLESS=1",
                path.display()
            ),
            _ => {
                std::fs::create_dir_all(&shipped).unwrap();
                std::fs::write(&path, &made).unwrap();
            }
        }
    }
}

#[test]
fn a_mismatch_shows_a_line_diff() {
    use crate::common::golden::diff;
    let old: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    let new = old
        .replace("line 2\n", "")
        .replace("line 11\n", "line eleven\n");
    let want = "      1     1 | line 1
-     2       | line 2
      3     2 | line 3
      4     3 | line 4
      5     4 | line 5
  ...
      8     7 | line 8
      9     8 | line 9
     10     9 | line 10
-    11       | line 11
+          10 | line eleven
                ^ column 6 differs: stored `line 11`, now `line eleven`
     12    11 | line 12
";
    assert_eq!(diff(&old, &new), want);
    assert!(diff("a\n", "a").contains("final newline"));
}
