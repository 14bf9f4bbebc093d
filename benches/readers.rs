//! Throughput of each input reader, called in-process on inputs generated here (in a
//! temporary folder, never the profiles of `../shared/data`). Each reports records per
//! second and bytes of input per second:
//!
//! - `pushpop_csv`: an `nvtx_pushpop_trace` CSV of 32 MiB (`examples/gen/pushpop.rs`)
//!   through [`njx::source::read_ranges`], as a file on disk;
//! - `pushpop_csv_xz`: the same CSV xz-compressed (preset 1, as `xz -1`; preset 6 takes
//!   half a minute to make); the bytes counted are those of the CSV;
//! - `gpu_proj_parquet`: an `nvtx_gpu_proj_trace` table in the recipe form with `Domain`,
//!   snappy-compressed as pyarrow writes it, through
//!   [`njx::source::gpu_ranges::parquet::read_parquet`] from memory;
//! - `hlo_decode` and `hlo_xz`: a synthetic `HloProto` (every instruction with metadata and
//!   a Python stack) through [`HloModule::decode`], and through [`HloModule::read`] from an
//!   xz stream; the records are instructions, the bytes those of the proto;
//! - `sqlite_nvtx`: an nsys SQLite export (`examples/gen/sqlite.rs`) through
//!   [`njx::source::ranges::nvtx::read_ranges`], the database opened each time.
//!
//! ```text
//! cargo bench                   # all of them
//! cargo bench -- pushpop        # those whose name contains `pushpop`
//! ```

#[path = "../tests/njx/common/mod.rs"]
mod common;
// The example uses the rest (`Until::Compilations`).
#[allow(dead_code)]
#[path = "../examples/gen/pushpop.rs"]
mod pushpop;
#[path = "../examples/gen/sqlite.rs"]
mod sqlite;
use common::nsys_sqlite;

use common::{parquet_table_with, pq_int, pq_int_list, pq_text, xz_preset};
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput, measurement::WallTime};
use njx::Notes;
use njx::hlo::HloModule;
use njx::hlo::proto::{
    FrontendAttributes, HloComputationProto, HloInstructionProto, HloModuleProto, HloProto,
    LayoutProto, OpMetadata, PrimitiveType, ReplicaGroup, ShapeProto, StackFrameIndexProto,
    stack_frame_index_proto,
};
use njx::source::{self, Options};
use prost::Message;
use std::hint::black_box;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Size of the generated push/pop CSV (about 154,000 rows).
const PUSHPOP_BYTES: u64 = 32 << 20;
/// Rows of the GPU projection table.
const GPU_RANGES: usize = 200_000;
/// Fused computations of the HLO module, and instructions in each.
const HLO_FUSIONS: usize = 800;
const HLO_PER_FUSION: usize = 25;
/// NVTX ranges of the SQLite export (it has no kernels: the NVTX reader reads none).
const SQLITE_RANGES: u64 = 200_000;

/// A group for one reader: few samples of a whole read each (`Flat`: every sample runs
/// the same number of reads), so that the whole run stays short on a small machine.
fn group<'a>(c: &'a mut Criterion, name: &str, secs: u64) -> BenchmarkGroup<'a, WallTime> {
    let mut g = c.benchmark_group(name);
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(secs));
    g
}

/// Says on stderr what input a benchmark reads and how long making it took.
fn made(what: &str, detail: String, since: Instant) {
    eprintln!(
        "input {what}: {detail} (made in {:.1} s)",
        since.elapsed().as_secs_f64()
    );
}

/// Reads the ranges of `path` as the tools do; returns how many.
fn read_ranges(path: &Path) -> u64 {
    let notes = Notes::kept();
    source::read_ranges(path, Options::default(), &notes, &mut |r| {
        black_box(r);
        Ok(())
    })
    .expect("read ranges")
}

fn pushpop_csv(c: &mut Criterion) {
    let since = Instant::now();
    let dir = tempfile::tempdir().expect("temporary folder");
    let plain = dir.path().join("trace.csv");
    let file = std::fs::File::create(&plain).expect("create CSV");
    let bytes = pushpop::generate(
        BufWriter::with_capacity(1 << 20, file),
        pushpop::Until::Bytes(PUSHPOP_BYTES),
        1,
    )
    .expect("write CSV");
    let rows = read_ranges(&plain);
    made("pushpop_csv", format!("{bytes} bytes, {rows} rows"), since);
    let since = Instant::now();
    let compressed = dir.path().join("trace.csv.xz");
    let xz = xz_preset(&std::fs::read(&plain).expect("read CSV"), 1);
    std::fs::write(&compressed, &xz).expect("write CSV.xz");
    made("pushpop_csv_xz", format!("{} bytes", xz.len()), since);

    let mut g = group(c, "readers", 5);
    g.throughput(Throughput::ElementsAndBytes {
        elements: rows,
        bytes,
    });
    g.bench_function("pushpop_csv", |b| b.iter(|| read_ranges(&plain)));
    g.bench_function("pushpop_csv_xz", |b| b.iter(|| read_ranges(&compressed)));
    g.finish();
}

/// An `nvtx_gpu_proj_trace` table of `n` ranges in the recipe form with `Domain`: eight
/// threads of two processes run steps of a `train_step` root (no domain) holding 10
/// `XlaModule` ranges of 9 `Thunk`s each, as `examples/gen/sqlite.rs` does.
fn gpu_proj_table(n: usize) -> Vec<u8> {
    struct Row {
        text: String,
        domain: Option<&'static str>,
        start: i64,
        end: i64,
        pid: i64,
        tid: i64,
        level: i64,
        children: i64,
        id: i64,
        parent: Option<i64>,
        stack: Vec<i64>,
    }
    let mut rows: Vec<Row> = Vec::with_capacity(n);
    let mut step = 0i64;
    'steps: loop {
        for thread in 0..8i64 {
            let (pid, tid) = (1000 + thread / 4, 1000 + thread);
            let t0 = 1_000_000_000 + step * 1_000_000 + thread * 1_000;
            let push = |rows: &mut Vec<Row>, row: Row| {
                rows.push(row);
                rows.len() == n
            };
            let root = rows.len() as i64 + 1;
            let full = push(
                &mut rows,
                Row {
                    text: "train_step".to_string(),
                    domain: None,
                    start: t0 + 20_000,
                    end: t0 + 990_000,
                    pid,
                    tid,
                    level: 0,
                    children: 10,
                    id: root,
                    parent: None,
                    stack: vec![root],
                },
            );
            if full {
                break 'steps;
            }
            for m in 0..10i64 {
                let module = rows.len() as i64 + 1;
                let m_start = t0 + 21_000 + m * 98_000;
                let name = (step + m) % 12;
                let full = push(
                    &mut rows,
                    Row {
                        text: format!("XlaModule:#hlo_module=jit_step_{name},program_id={name}#"),
                        domain: Some("TSL"),
                        start: m_start,
                        end: m_start + 97_000,
                        pid,
                        tid,
                        level: 1,
                        children: 9,
                        id: module,
                        parent: Some(root),
                        stack: vec![root, module],
                    },
                );
                if full {
                    break 'steps;
                }
                for k in 0..9i64 {
                    let id = rows.len() as i64 + 1;
                    let k_start = m_start + 500 + k * 10_000;
                    let op = (step * 97 + m * 13 + k) % 1000;
                    let full = push(
                        &mut rows,
                        Row {
                            text: format!(
                                "Thunk:#name=jit(step)/jit(main)/op_{op},hlo_op=fusion.{op}#"
                            ),
                            domain: Some("TSL"),
                            start: k_start,
                            end: k_start + 9_000,
                            pid,
                            tid,
                            level: 2,
                            children: 0,
                            id,
                            parent: Some(module),
                            stack: vec![root, module, id],
                        },
                    );
                    if full {
                        break 'steps;
                    }
                }
            }
        }
        step += 1;
    }
    let ints =
        |f: &dyn Fn(&Row) -> i64| -> Vec<Option<i64>> { rows.iter().map(|r| Some(f(r))).collect() };
    let columns = [
        pq_text(
            "Text",
            &rows
                .iter()
                .map(|r| Some(r.text.as_str()))
                .collect::<Vec<_>>(),
        ),
        pq_text("Domain", &rows.iter().map(|r| r.domain).collect::<Vec<_>>()),
        pq_int("Start", &ints(&|r| r.start)),
        pq_int("End", &ints(&|r| r.end)),
        pq_int("PID", &ints(&|r| r.pid)),
        pq_int("TID", &ints(&|r| r.tid)),
        pq_int("Stack Level", &ints(&|r| r.level)),
        pq_int("Children Count", &ints(&|r| r.children)),
        pq_int("Range ID", &ints(&|r| r.id)),
        pq_int(
            "Parent ID",
            &rows.iter().map(|r| r.parent).collect::<Vec<_>>(),
        ),
        pq_int_list(
            "Range Stack",
            &rows.iter().map(|r| Some(&r.stack[..])).collect::<Vec<_>>(),
        ),
        pq_int("Rank", &ints(&|_| 0)),
    ];
    let properties = parquet::file::properties::WriterProperties::builder()
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    parquet_table_with(&columns, 1 << 16, properties)
}

fn gpu_proj_parquet(c: &mut Criterion) {
    let since = Instant::now();
    let table = bytes::Bytes::from(gpu_proj_table(GPU_RANGES));
    let profile: Arc<str> = "bench".into();
    let read = |table: &bytes::Bytes| {
        let mut emit = |r| {
            black_box(r);
            Ok(())
        };
        let place = "trace.parquet";
        source::gpu_ranges::parquet::read_parquet(place, &profile, table.clone(), &mut emit)
            .expect("read GPU ranges")
            .exported
    };
    assert_eq!(read(&table), GPU_RANGES as u64);
    let detail = format!("{} bytes, {GPU_RANGES} rows", table.len());
    made("gpu_proj_parquet", detail, since);
    let mut g = group(c, "readers", 3);
    g.throughput(Throughput::ElementsAndBytes {
        elements: GPU_RANGES as u64,
        bytes: table.len() as u64,
    });
    g.bench_function("gpu_proj_parquet", |b| b.iter(|| read(&table)));
    g.finish();
}

/// A module of `fusions` fused computations of `per_fusion` instructions, an entry
/// computation calling each (with an all-reduce every 25 fusions), every instruction with
/// metadata and one of 4,000 Python stacks of up to 16 frames. Returns it and its number
/// of instructions.
fn hlo_module(fusions: usize, per_fusion: usize) -> (HloProto, u64) {
    const FRAMES: i32 = 4_000;
    const LOCATIONS: i32 = 2_000;
    let shape = |ty: PrimitiveType, dims: &[i64]| ShapeProto {
        element_type: ty as i32,
        dimensions: dims.to_vec(),
        layout: Some(LayoutProto {
            minor_to_major: (0..dims.len() as i64).rev().collect(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut next_id = 0i64;
    let mut inst = |opcode: &str, ty: PrimitiveType, dims: &[i64], operands: &[i64]| {
        next_id += 1;
        let id = next_id;
        HloInstructionProto {
            id,
            name: format!("{opcode}.{id}"),
            opcode: opcode.to_string(),
            shape: Some(shape(ty, dims)),
            operand_ids: operands.to_vec(),
            metadata: Some(OpMetadata {
                op_type: opcode.to_string(),
                op_name: format!(
                    "jit(train_step)/jit(main)/transformer/layer_{}/mlp/{opcode}",
                    id % 48
                ),
                source_file: format!("/opt/model/layers_{}.py", id % 40),
                source_line: (id % 900) as i32 + 1,
                stack_frame_id: (id * 13 % i64::from(FRAMES)) as i32 + 1,
                ..Default::default()
            }),
            ..Default::default()
        }
    };
    let dims = [8i64, 2048, 1024];
    let mut computations = Vec::with_capacity(fusions + 2);
    let mut add = |id: i64, name: String, instructions: Vec<HloInstructionProto>| {
        computations.push(HloComputationProto {
            id,
            name,
            root_id: instructions.last().map_or(0, |i| i.id),
            instructions,
            ..Default::default()
        });
    };
    let mut reduction = vec![
        inst("parameter", PrimitiveType::F32, &[], &[]),
        inst("parameter", PrimitiveType::F32, &[], &[]),
    ];
    let (x, y) = (reduction[0].id, reduction[1].id);
    reduction.push(inst("add", PrimitiveType::F32, &[], &[x, y]));
    add(1, "add".to_string(), reduction);
    let ops = [
        "multiply",
        "add",
        "exponential",
        "convert",
        "broadcast",
        "select",
    ];
    for f in 0..fusions {
        let mut body = vec![
            inst("parameter", PrimitiveType::Bf16, &dims, &[]),
            inst("parameter", PrimitiveType::Bf16, &dims, &[]),
        ];
        for k in 2..per_fusion {
            let operands = [body[k - 1].id, body[k - 2].id];
            body.push(inst(
                ops[k % ops.len()],
                PrimitiveType::Bf16,
                &dims,
                &operands,
            ));
        }
        add(2 + f as i64, format!("fused_computation.{f}"), body);
    }
    let mut entry = vec![
        inst("parameter", PrimitiveType::Bf16, &dims, &[]),
        inst("parameter", PrimitiveType::Bf16, &dims, &[]),
    ];
    for f in 0..fusions {
        let operands = [entry[entry.len() - 1].id, entry[entry.len() - 2].id];
        let mut fusion = inst("fusion", PrimitiveType::Bf16, &dims, &operands);
        fusion.called_computation_ids = vec![2 + f as i64];
        entry.push(fusion);
        if f % 25 == 24 {
            let operand = entry[entry.len() - 1].id;
            let mut all_reduce = inst("all-reduce", PrimitiveType::Bf16, &dims, &[operand]);
            all_reduce.called_computation_ids = vec![1];
            all_reduce.replica_groups = vec![ReplicaGroup {
                replica_ids: (0..8).collect(),
            }];
            entry.push(all_reduce);
        }
    }
    let entry_id = 2 + fusions as i64;
    add(entry_id, "main".to_string(), entry);
    let instructions = computations
        .iter()
        .map(|c| c.instructions.len() as u64)
        .sum();
    let location = |i: i32| stack_frame_index_proto::FileLocation {
        file_name_id: i % 40 + 1,
        function_name_id: i % 300 + 1,
        line: i % 700 + 1,
        column: i % 30,
    };
    let module = HloModuleProto {
        id: 42,
        name: "jit_train_step".to_string(),
        entry_computation_id: entry_id,
        entry_computation_name: "main".to_string(),
        frontend_attributes: Some(FrontendAttributes {
            map: [(
                "fingerprint_before_lhs".to_string(),
                "0123456789abcdef".to_string(),
            )]
            .into(),
        }),
        computations,
        stack_frame_index: Some(StackFrameIndexProto {
            file_names: (0..40)
                .map(|i| format!("/opt/model/layers_{i}.py"))
                .collect(),
            function_names: (0..300).map(|i| format!("function_{i}")).collect(),
            file_locations: (0..LOCATIONS).map(location).collect(),
            // Chains of 16 frames: each frame's parent is the one before it.
            stack_frames: (1..=FRAMES)
                .map(|i| stack_frame_index_proto::StackFrame {
                    file_location_id: i * 7 % LOCATIONS + 1,
                    parent_frame_id: if i % 16 == 1 { 0 } else { i - 1 },
                })
                .collect(),
        }),
        ..Default::default()
    };
    let proto = HloProto {
        hlo_module: Some(module),
        buffer_assignment: None,
    };
    (proto, instructions)
}

fn hlo(c: &mut Criterion) {
    let since = Instant::now();
    let (proto, instructions) = hlo_module(HLO_FUSIONS, HLO_PER_FUSION);
    let bytes = proto.encode_to_vec();
    let compressed = xz_preset(&bytes, 6);
    let decoded = HloModule::decode("module.hlo.pb", &bytes).expect("decode HLO");
    assert_eq!(decoded.instructions().count() as u64, instructions);
    drop(decoded);
    let detail = format!(
        "{} bytes, {instructions} instructions; xz {} bytes",
        bytes.len(),
        compressed.len()
    );
    made("hlo", detail, since);
    let mut g = group(c, "readers", 3);
    g.throughput(Throughput::ElementsAndBytes {
        elements: instructions,
        bytes: bytes.len() as u64,
    });
    g.bench_function("hlo_decode", |b| {
        b.iter(|| HloModule::decode("module.hlo.pb", black_box(&bytes)).expect("decode HLO"))
    });
    g.bench_function("hlo_xz", |b| {
        b.iter(|| {
            let reader = njx::source::decompress("module.hlo.pb.xz", black_box(&compressed[..]))
                .expect("xz stream");
            HloModule::read("module.hlo.pb.xz", reader).expect("read HLO")
        })
    });
    g.finish();
}

fn sqlite_nvtx(c: &mut Criterion) {
    let since = Instant::now();
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("report.sqlite");
    let (ranges, _) = sqlite::generate(&path, SQLITE_RANGES, 0).expect("write SQLite export");
    let bytes = std::fs::metadata(&path).expect("SQLite export").len();
    let profile: Arc<str> = "report".into();
    let read = || {
        let db = source::sqlite::Db::open(&path, "report.sqlite").expect("open SQLite export");
        let notes = Notes::kept();
        source::ranges::nvtx::read_ranges(&db, &profile, Options::default(), &notes, &mut |r| {
            black_box(r);
            Ok(())
        })
        .expect("read NVTX ranges")
    };
    assert_eq!(read(), ranges);
    made(
        "sqlite_nvtx",
        format!("{bytes} bytes, {ranges} ranges"),
        since,
    );
    let mut g = group(c, "readers", 3);
    g.throughput(Throughput::ElementsAndBytes {
        elements: ranges,
        bytes,
    });
    g.bench_function("sqlite_nvtx", |b| b.iter(read));
    g.finish();
}

criterion::criterion_group!(benches, pushpop_csv, gpu_proj_parquet, hlo, sqlite_nvtx);
criterion::criterion_main!(benches);
