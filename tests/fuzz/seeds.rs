//! The valid inputs the fuzzing starts from, all generated here: push/pop CSV (the test
//! suite's compilation profile and larger generated ones, plain, gzip and xz), record
//! streams and partial results written by the library itself, push/pop and GPU
//! projection Parquet tables in every form, thread metadata, HLO protos (xz and plain),
//! nsys SQLite exports, and nsys-jax, combine and njx-capture archives.

use crate::common::gpu_spans::*;
use crate::common::nsys_sqlite::{self, NsysDb, gpid, gtid};
use crate::common::{computation as comp, f32s, instruction as inst};
use crate::item::Item;
use crate::rng::Rng;
use crate::table::{self, Cells, Col, Table};
use crate::zipper::Member;
use njx::hlo::proto::{
    FrontendAttributes, HloModuleProto, HloProto, IotaReplicaGroupListProto, LayoutProto,
    OpMetadata, ReplicaGroup, ShapeProto, SourceTarget, StackFrameIndexProto,
    hlo_instruction_proto::ReplicaGroupList, stack_frame_index_proto,
};
use std::path::Path;

/// `fingerprint_before_lhs` of program 7 (`jit_step`).
pub const FP7: &str = "5d41402abc4b2a76b9719d911017c592";
/// `fingerprint_before_lhs` of program 3 (`jit_f`).
pub const FP3: &str = "feedc0de00000000feedc0de00000000";
pub const DUMP7: &str = "module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb";
pub const DUMP3: &str = "module_0003.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb";
pub const GPU_PROJ: &str = "nvtx_gpu_proj_trace/trace.parquet";
pub const THREADS: &str = "thread-metadata.parquet";
/// nsys-jax's table of nsys' `TARGET_INFO_GPU`.
pub const DEVICES: &str = "device-metadata.parquet";
pub const PUSHPOP_XZ: &str = "report_nvtx_pushpop_trace.csv.xz";
pub const PUSHPOP_PQ: &str = "report_nvtx_pushpop_trace.parquet";

// ---------------------------------------------------------------- push/pop CSV

pub const HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n";

struct Node {
    start: i64,
    end: i64,
    tid: i64,
    depth: u32,
    parent: Option<usize>,
    name: String,
}

/// Names by depth under an XLA compilation.
fn name_at(rng: &mut Rng, depth: u32, module: &str, id: u64) -> String {
    let m = format!("module={module},program_id={id}");
    match depth {
        0 => format!("TSL:XlaCompile:#{m}#"),
        1 => match rng.below(3) {
            0 => format!("TSL:XlaPassPipeline:#name=opt{},{m}#", rng.below(3)),
            _ => format!("TSL:XlaCompileBackend:#{m}#"),
        },
        _ => match rng.below(7) {
            0 => format!("TSL:XlaPass:#name=pass{},{m}#", rng.below(9)),
            1 => "TSL:XlaAutotunerCompilation".to_string(),
            2 => format!("TSL:XlaEmitLlvmIr:#module={module}#"),
            3 => "cuBLAS:cublasCreate_v2".to_string(),
            4 => format!(
                "TSL:XlaAutotunerMeasurement:#hlo_op=fusion.{}#",
                rng.below(9)
            ),
            5 => format!("TSL:XlaOptimizeLlvmIr:#module={module}#"),
            _ => format!(
                "TSL:XlaCompileBackend:#module=extracted,program_id={}#",
                90 + rng.below(9)
            ),
        },
    }
}

#[allow(clippy::too_many_arguments)]
fn children(
    rng: &mut Rng,
    nodes: &mut Vec<Node>,
    parent: usize,
    depth: u32,
    max_depth: u32,
    breadth: usize,
    module: &str,
    id: u64,
) {
    let (lo, hi, tid) = (nodes[parent].start, nodes[parent].end, nodes[parent].tid);
    if depth > max_depth || hi - lo < 16 {
        return;
    }
    let k = rng.range(1, breadth + 1);
    let step = (hi - lo) / k as i64;
    for j in 0..k {
        if rng.chance(0.2) {
            continue;
        }
        let s = lo + step * j as i64 + rng.below((step / 4).max(1) as usize) as i64;
        let e = (s + step / 2 + rng.below((step / 4).max(1) as usize) as i64).min(hi);
        nodes.push(Node {
            start: s,
            end: e,
            tid,
            depth,
            parent: Some(parent),
            name: name_at(rng, depth, module, id),
        });
        let me = nodes.len() - 1;
        children(rng, nodes, me, depth + 1, max_depth, breadth, module, id);
    }
}

/// A valid `nvtx_pushpop_trace` CSV: compilations of `modules` programs on thread 1,
/// each a tree `depth` deep and about `breadth` wide, with worker threads compiling in
/// parallel, and XlaModule executions after.
pub fn generated_csv(
    seed: u64,
    modules: usize,
    depth: u32,
    breadth: usize,
    workers: usize,
) -> String {
    let mut rng = Rng::new(seed);
    let mut nodes: Vec<Node> = Vec::new();
    let mut t = 1_000i64;
    for m in 0..modules {
        let module = format!("jit_g{m}");
        let id = 10 + m as u64;
        let dur = 10_000_000 + rng.below(10_000_000) as i64;
        nodes.push(Node {
            start: t,
            end: t + dur,
            tid: 1,
            depth: 0,
            parent: None,
            name: name_at(&mut rng, 0, &module, id),
        });
        let root = nodes.len() - 1;
        children(&mut rng, &mut nodes, root, 1, depth, breadth, &module, id);
        for w in 0..workers {
            let s = t + dur / 3 + w as i64 * 1000;
            nodes.push(Node {
                start: s,
                end: s + dur / 3,
                tid: 2 + w as i64,
                depth: 0,
                parent: None,
                name: format!("TSL:XlaCompileGpuAsm:#module={module}#"),
            });
            let wr = nodes.len() - 1;
            children(&mut rng, &mut nodes, wr, 1, depth / 2, 2, &module, id);
        }
        t += dur + 1_000_000;
        nodes.push(Node {
            start: t,
            end: t + 500_000,
            tid: 1,
            depth: 0,
            parent: None,
            name: format!("TSL:XlaModule:#hlo_module={module},program_id={id}#"),
        });
        t += 1_000_000;
    }
    pushpop_rows(&nodes, 7)
}

/// The CSV of `nodes`, ids given in start order (parents before children).
fn pushpop_rows(nodes: &[Node], pid: i64) -> String {
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by_key(|&i| (nodes[i].start, nodes[i].depth, i));
    let mut id_of = vec![0usize; nodes.len()];
    for (k, &i) in order.iter().enumerate() {
        id_of[i] = k + 1;
    }
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            kids[p].push(i);
        }
    }
    let mut out = String::from(HEADER);
    for &i in &order {
        let n = &nodes[i];
        let dur = n.end - n.start;
        let child: i64 = kids[i].iter().map(|&c| nodes[c].end - nodes[c].start).sum();
        let mut stack = vec![id_of[i]];
        let mut p = n.parent;
        while let Some(q) = p {
            stack.push(id_of[q]);
            p = nodes[q].parent;
        }
        stack.reverse();
        let stack: String = stack.iter().map(|x| format!(":{x}")).collect();
        let parent = n.parent.map(|q| id_of[q].to_string()).unwrap_or_default();
        let quoted = format!("\"{}\"", n.name.replace('"', "\"\""));
        let tree = format!(
            "\"{}{}\"",
            "--".repeat(n.depth as usize),
            n.name.replace('"', "\"\"")
        );
        out += &format!(
            "{},{},{dur},{child},{},{quoted},{pid},{},{},{},{},{parent},{stack},{tree}\n",
            n.start,
            n.end,
            dur - child,
            n.tid,
            n.depth,
            kids[i].len(),
            id_of[i],
        );
    }
    out
}

/// The push/pop table of one archive rank: program 7's compilation, with an autotuner
/// compilation of program 99 inside.
pub fn rank_pushpop_csv(rank: usize) -> String {
    let p = pid(rank);
    let o = rank as i64 * OFFSET;
    let mut csv = String::from(HEADER);
    let (s, e) = (o + 500_000, o + 2_500_000);
    csv += &format!(
        "{s},{e},2000000,1500000,500000,\"TSL:XlaCompile:#module=jit_step,program_id=7#\",{p},{p},0,1,1,,:1,\"TSL:XlaCompile:#module=jit_step,program_id=7#\"\n"
    );
    let (s, e) = (o + 600_000, o + 2_100_000);
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
    csv
}

/// The push/pop table as the newer archives store it (Parquet, as pandas writes it).
pub fn pushpop_table(csv_text: &str) -> Table {
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = rdr.headers().expect("CSV header").clone();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.expect("CSV row")).collect();
    let col = |name: &str| -> Vec<String> {
        let i = headers.iter().position(|h| h == name).expect("column");
        rows.iter().map(|r| r[i].to_string()).collect()
    };
    let ints =
        |name: &str| -> Vec<Option<i64>> { col(name).iter().map(|s| s.parse().ok()).collect() };
    let texts = |name: &str| -> Vec<Option<String>> { col(name).into_iter().map(Some).collect() };
    let mut cols: Vec<Col> = [
        "Start (ns)",
        "End (ns)",
        "Duration (ns)",
        "DurChild (ns)",
        "DurNonChild (ns)",
    ]
    .iter()
    .map(|n| table::int(n, ints(n)))
    .collect();
    cols.push(table::text("Name", texts("Name")));
    cols.push(table::int("TID", ints("TID")));
    cols.push(table::int("NumChild", ints("NumChild")));
    cols.push(table::double(
        "ParentId",
        col("ParentId").iter().map(|s| s.parse().ok()).collect(),
    ));
    cols.push(table::text("RangeStack", texts("RangeStack")));
    cols.push(table::int32(
        "RangeId",
        col("RangeId").iter().map(|s| s.parse().ok()).collect(),
    ));
    Table::new(cols)
}

// ---------------------------------------------------------------- GPU projection

fn stack_of(spans: &[Span], s: &Span) -> Vec<i64> {
    let mut ids = vec![s.id];
    let mut parent = s.parent;
    while let Some(p) = parent {
        ids.insert(0, p);
        parent = spans.iter().find(|x| x.id == p).and_then(|x| x.parent);
    }
    ids
}

/// The first form of the table (pandas): the row of work outside any range first.
pub fn gpu_first_form(rank: usize) -> Table {
    gpu_first_form_of(rank, spans(rank))
}

/// [`gpu_first_form`] in the layout of XLA since 2026 (NVIDIA/JAX-Toolbox PR #2296): thunk
/// names with `unique_hlo_op_id`; executions alternately with the all-reduce thunk at
/// the top level, without its NCCL range, and with only the NCCL range
/// (`NCCL:ncclGroupEnd`), no thunk range.
pub fn gpu_first_form_2026(rank: usize) -> Table {
    let mut out: Vec<Span> = Vec::new();
    let mut dropped = Vec::new();
    let mut k = 0usize;
    for (i, mut s) in spans(rank).into_iter().enumerate() {
        if s.name == "NCCL:ncclAllReduce" {
            k += 1;
            if k % 2 == 1 {
                dropped.push(s.id);
                continue;
            }
            s.name = "NCCL:ncclGroupEnd".into();
        } else if s.name.contains("all-reduce-start") {
            if k.is_multiple_of(2) {
                continue;
            }
            s.parent = None;
        }
        if let Some(body) = s
            .name
            .strip_suffix('#')
            .filter(|_| s.name.contains("Thunk:#"))
        {
            s.name = format!("{body},unique_hlo_op_id={}#", 1 + i as i64 * 4_294_967_296);
        }
        out.push(s);
    }
    debug_assert!(
        out.iter()
            .all(|s| s.parent.is_none_or(|p| !dropped.contains(&p)))
    );
    gpu_first_form_of(rank, out)
}

fn gpu_first_form_of(rank: usize, spans: Vec<Span>) -> Table {
    let n = spans.len() + 1;
    let ints = |outside: i64, f: &dyn Fn(&Span) -> i64| -> Vec<Option<i64>> {
        std::iter::once(Some(outside))
            .chain(spans.iter().map(|s| Some(f(s))))
            .collect()
    };
    let doubles = |f: &dyn Fn(&Span) -> Option<f64>| -> Vec<Option<f64>> {
        std::iter::once(None).chain(spans.iter().map(f)).collect()
    };
    let texts = |f: &dyn Fn(&Span) -> String| -> Vec<Option<String>> {
        std::iter::once(None)
            .chain(spans.iter().map(|s| Some(f(s))))
            .collect()
    };
    let stacks = texts(&|s| {
        stack_of(&spans, s)
            .iter()
            .map(|i| format!(":{i}"))
            .collect()
    });
    Table::new(vec![
        table::text("Name", texts(&|s| s.name.clone())),
        table::int("Projected Start", ints(rank as i64 * OFFSET, &|s| s.start)),
        table::int("Projected Duration", ints(30_000_000, &|s| s.dur)),
        table::double("Orig Start", doubles(&|s| Some((s.start - 400_000) as f64))),
        table::double("Orig Duration", doubles(&|s| Some((s.dur / 10) as f64))),
        table::text("Style", texts(&|_| "PushPop".to_string())),
        table::int("PID", vec![Some(pid(rank)); n]),
        table::int("TID", ints(pid(rank), &|s| s.tid)),
        table::int("NumGPUOps", ints(400, &|s| s.ops)),
        table::double(
            "Lvl",
            doubles(&|s| Some((stack_of(&spans, s).len() - 1) as f64)),
        ),
        table::int(
            "NumChild",
            ints(0, &|s| {
                spans.iter().filter(|c| c.parent == Some(s.id)).count() as i64
            }),
        ),
        table::double("RangeId", doubles(&|s| Some(s.id as f64))),
        table::double("ParentId", doubles(&|s| s.parent.map(|p| p as f64))),
        table::text("RangeStack", stacks),
        table::int("Rank", vec![Some(rank as i64); n]),
    ])
}

/// The recipe form (names without the domain unless `domain`), optionally per device and
/// stream, in row groups of `rows_per_group`.
pub fn gpu_recipe_form(
    rank: usize,
    domain: bool,
    per_stream: bool,
    rows_per_group: usize,
) -> Table {
    let spans = spans(rank);
    let ints =
        |f: &dyn Fn(&Span) -> Option<i64>| -> Vec<Option<i64>> { spans.iter().map(f).collect() };
    let mut cols = vec![
        table::text(
            "Text",
            spans
                .iter()
                .map(|s| {
                    let t = if domain {
                        s.name.split_once(':').map_or(s.name.as_str(), |x| x.1)
                    } else {
                        s.name.strip_prefix("TSL:").unwrap_or(&s.name)
                    };
                    Some(t.to_string())
                })
                .collect(),
        ),
        table::int("Start", ints(&|s| Some(s.start))),
        table::int("End", ints(&|s| Some(s.start + s.dur))),
        table::int("PID", ints(&|_| Some(pid(rank)))),
        table::int("TID", ints(&|s| Some(s.tid))),
        table::int(
            "Stack Level",
            ints(&|s| Some(stack_of(&spans, s).len() as i64 - 1)),
        ),
        table::int(
            "Children Count",
            ints(&|s| Some(spans.iter().filter(|c| c.parent == Some(s.id)).count() as i64)),
        ),
        table::int("Range ID", ints(&|s| Some(s.id))),
        table::int("Parent ID", ints(&|s| s.parent)),
        table::int_list(
            "Range Stack",
            spans.iter().map(|s| Some(stack_of(&spans, s))).collect(),
        ),
        table::int("Rank", ints(&|_| Some(rank as i64))),
    ];
    if domain {
        cols.insert(
            1,
            table::text(
                "Domain",
                spans
                    .iter()
                    .map(|s| s.name.split_once(':').map(|x| x.0.to_string()))
                    .collect(),
            ),
        );
    }
    if per_stream {
        cols.push(table::int("Device ID", ints(&|_| Some(rank as i64))));
        cols.push(table::int("Stream ID", ints(&|s| Some(7 + s.id % 2))));
    }
    let mut t = Table::new(cols);
    t.rows_per_group = rows_per_group;
    t
}

/// Thread names of one rank: the main thread, a compiler thread, the launcher thread
/// naming the device, another thread.
pub fn thread_metadata(rank: usize, slice: bool) -> Table {
    let p = pid(rank);
    let key = if slice { "slice" } else { "partition" };
    let launcher = format!("XlaLauncher:#global={rank},local=0,process={rank},{key}=0#");
    Table::new(vec![
        table::text(
            "Name",
            [
                "python3",
                "tf_XLAEigen",
                launcher.as_str(),
                "cuda-EvtHandlr",
            ]
            .iter()
            .map(|s| Some(s.to_string()))
            .collect(),
        ),
        table::int("PID", vec![Some(p); 4]),
        table::int("TID", vec![Some(p), Some(p + 1), Some(p + 2), Some(p + 3)]),
        table::int32("Priority", vec![Some(0), Some(0), Some(0), Some(-2)]),
    ])
}

/// Device metadata as nsys-jax writes it (pandas' tuple column names): `gpus` GPUs, the
/// memory as int64 or as double where `double`.
pub fn device_metadata(gpus: usize, double: bool) -> Table {
    let name = |n: &str| format!("('TARGET_INFO_GPU', '{n}')");
    let memory = if double {
        table::double(&name("totalMemory"), vec![Some(42_505_273_344.0); gpus])
    } else {
        table::int(&name("totalMemory"), vec![Some(85_899_345_920); gpus])
    };
    Table::new(vec![
        table::int(&name("id"), (0..gpus as i64).map(Some).collect()),
        table::text(
            &name("name"),
            (0..gpus)
                .map(|i| Some(format!("NVIDIA H100 80GB HBM3 #{i}")))
                .collect(),
        ),
        memory,
    ])
}

/// Thread metadata with many launchers and int32 ids.
pub fn thread_metadata_wide() -> Table {
    let n = 16;
    let names: Vec<Option<String>> = (0..n)
        .map(|i| {
            Some(if i % 2 == 0 {
                format!(
                    "XlaLauncher:#global={},local={},process=0,partition=0#",
                    i / 2,
                    i / 2
                )
            } else {
                format!("worker{i}")
            })
        })
        .collect();
    let mut t = Table::new(vec![
        table::text("Name", names),
        Col {
            name: "PID".into(),
            required: true,
            cells: Cells::I32(vec![Some(100); n]),
        },
        Col {
            name: "TID".into(),
            required: true,
            cells: Cells::I32((0..n).map(|i| Some(100 + i as i32)).collect()),
        },
    ]);
    t.props = 1;
    t.rows_per_group = 5;
    t
}

// ---------------------------------------------------------------- HLO

fn meta(op_name: &str, frame: i32) -> Option<OpMetadata> {
    Some(OpMetadata {
        op_name: op_name.into(),
        stack_frame_id: frame,
        ..Default::default()
    })
}

fn frames() -> StackFrameIndexProto {
    use stack_frame_index_proto::{FileLocation, StackFrame};
    let loc = |file, function, line, column| FileLocation {
        file_name_id: file,
        function_name_id: function,
        line,
        column,
    };
    StackFrameIndexProto {
        file_names: vec!["main.py".into(), "model.py".into()],
        function_names: vec!["<module>".into(), "f".into(), "g".into()],
        file_locations: vec![loc(1, 1, 10, 0), loc(2, 2, 5, 3), loc(2, 3, 7, 0)],
        stack_frames: vec![
            StackFrame {
                file_location_id: 1,
                parent_frame_id: 0,
            },
            StackFrame {
                file_location_id: 2,
                parent_frame_id: 1,
            },
            StackFrame {
                file_location_id: 3,
                parent_frame_id: 1,
            },
        ],
    }
}

/// Program 7 (`jit_step`): fusion.1, the all-reduce of its result over {0,1}, fusion.2,
/// and besides them every other kind of communication (an all-gather in an async
/// wrapper, a reduce-scatter with iota groups, a collective-permute, an all-to-all over
/// mesh axes, a host offload in a fusion), with stack frames.
pub fn hlo_step() -> HloProto {
    let add = comp(
        1,
        "add",
        vec![
            inst(1, "x", "parameter", f32s(&[]), &[], &[]),
            inst(2, "y", "parameter", f32s(&[]), &[], &[]),
            inst(3, "add.0", "add", f32s(&[]), &[1, 2], &[]),
        ],
    );
    let mut neg = inst(11, "negate.1", "negate", f32s(&[1024]), &[10], &[]);
    neg.metadata = meta("jit(step)/neg", 2);
    let fused1 = comp(
        2,
        "fused_computation.1",
        vec![
            inst(10, "param_0.1", "parameter", f32s(&[1024]), &[], &[]),
            neg,
        ],
    );
    let fused2 = comp(
        3,
        "fused_computation.2",
        vec![
            inst(20, "param_0.2", "parameter", f32s(&[1024]), &[], &[]),
            inst(
                21,
                "exponential.2",
                "exponential",
                f32s(&[1024]),
                &[20],
                &[],
            ),
        ],
    );
    let mut gather = inst(31, "all-gather.9", "all-gather", f32s(&[2048]), &[30], &[]);
    gather.replica_groups = vec![ReplicaGroup {
        replica_ids: vec![0, 1],
    }];
    let async_body = comp(
        4,
        "async_computation",
        vec![
            inst(30, "param_0.3", "parameter", f32s(&[1024]), &[], &[]),
            gather,
        ],
    );
    let host = ShapeProto {
        layout: Some(LayoutProto {
            memory_space: 5,
            ..Default::default()
        }),
        ..f32s(&[1024])
    };
    let offload = comp(
        5,
        "fused_offload",
        vec![
            inst(40, "param_0.4", "parameter", host.clone(), &[], &[]),
            inst(
                41,
                "c0",
                "constant",
                ShapeProto {
                    element_type: 4,
                    ..Default::default()
                },
                &[],
                &[],
            ),
            inst(
                42,
                "dynamic-slice.4",
                "dynamic-slice",
                f32s(&[1024]),
                &[40, 41],
                &[],
            ),
        ],
    );
    let mut all_reduce = inst(
        102,
        "all-reduce-start.1",
        "all-reduce-start",
        f32s(&[1024]),
        &[101],
        &[1],
    );
    all_reduce.replica_groups = vec![ReplicaGroup {
        replica_ids: vec![0, 1],
    }];
    all_reduce.metadata = meta("jit(step)/psum", 3);
    let mut rs = inst(
        107,
        "reduce-scatter.5",
        "reduce-scatter",
        f32s(&[512]),
        &[101],
        &[1],
    );
    rs.replica_group_list = Some(ReplicaGroupList::IotaCollectiveDeviceList(
        IotaReplicaGroupListProto {
            num_replica_groups: 1,
            num_devices_per_group: 2,
            iota_reshape_dims: vec![2],
            iota_transpose_perm: vec![0],
        },
    ));
    let mut permute = inst(
        108,
        "collective-permute-start.6",
        "collective-permute-start",
        f32s(&[1024]),
        &[101],
        &[],
    );
    permute.source_target_pairs = vec![
        SourceTarget {
            source: 0,
            target: 1,
        },
        SourceTarget {
            source: 1,
            target: 0,
        },
    ];
    let mut a2a = inst(
        109,
        "all-to-all.7",
        "all-to-all",
        f32s(&[1024]),
        &[101],
        &[],
    );
    a2a.replica_group_list = Some(ReplicaGroupList::CollectiveDeviceList(
        njx::hlo::proto::CollectiveDeviceListProto {
            replica_groups: vec![ReplicaGroup {
                replica_ids: vec![0, 1],
            }],
            iota_replica_group_list: None,
        },
    ));
    let mut fusion1 = inst(101, "fusion.1", "fusion", f32s(&[1024]), &[100], &[2]);
    fusion1.metadata = meta("jit(step)/neg", 2);
    let entry = comp(
        10,
        "main.10",
        vec![
            inst(100, "p0", "parameter", f32s(&[1024]), &[], &[]),
            fusion1,
            all_reduce,
            inst(
                103,
                "all-reduce-done.1",
                "all-reduce-done",
                f32s(&[1024]),
                &[102],
                &[],
            ),
            inst(104, "fusion.2", "fusion", f32s(&[1024]), &[103], &[3]),
            inst(
                105,
                "all-gather-start.8",
                "async-start",
                f32s(&[2048]),
                &[104],
                &[4],
            ),
            inst(106, "p_host", "parameter", host, &[], &[]),
            rs,
            permute,
            a2a,
            inst(110, "fusion.offload", "fusion", f32s(&[1024]), &[106], &[5]),
        ],
    );
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 7,
            name: "jit_step".into(),
            entry_computation_id: 10,
            entry_computation_name: "main.10".into(),
            frontend_attributes: Some(FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), FP7.to_string())].into(),
            }),
            // The entry's schedule: its instructions in order (what NCCL ranges outside
            // thunks are matched to).
            schedule: Some(njx::hlo::proto::HloScheduleProto {
                sequences: [(
                    10,
                    njx::hlo::proto::hlo_schedule_proto::InstructionSequence {
                        instruction_ids: entry.instructions.iter().map(|i| i.id).collect(),
                    },
                )]
                .into(),
            }),
            computations: vec![add, fused1, fused2, async_body, offload, entry],
            stack_frame_index: Some(frames()),
            ..Default::default()
        }),
        buffer_assignment: Some(njx::hlo::proto::BufferAssignmentProto {
            logical_buffers: vec![njx::hlo::proto::LogicalBufferProto {
                id: 1,
                size: 4096,
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

/// [`hlo_step`] with a buffer assignment as XLA writes one, for njx-heap: a logical
/// buffer per entry instruction (`all-reduce-done.1` sharing `all-reduce-start.1`'s),
/// allocations for the two parameters, the temp buffer and the outputs, and two heap
/// simulator traces: the whole module's over the temp buffer (a share, a buffer reusing a
/// freed one's offset, one whose shape index leads nowhere) and one whose allocation index
/// is past the allocations (stale, as older XLA writes them).
pub fn hlo_heap() -> HloProto {
    use crate::common::heap::{
        Kind::{self, Alloc, Free, ShareWith},
        allocation, assignment, buffer, event, trace,
    };
    use njx::hlo::proto::BufferAllocationProto;
    let mut p = hlo_step();
    // (buffer id, bytes, defining instruction)
    let buffers: [(i64, i64, i64); 11] = [
        (1, 4096, 100),
        (2, 4096, 101),
        (3, 4096, 102),
        (4, 4096, 103),
        (5, 4096, 104),
        (6, 8192, 105),
        (7, 4096, 106),
        (8, 2048, 107),
        (9, 4096, 108),
        (10, 4096, 109),
        (11, 4096, 110),
    ];
    let ev = |kind: Kind, id: i64, canonical: i64| {
        event(kind, id, canonical, "main.10", &format!("i{id}"))
    };
    let whole = vec![
        ev(Alloc, 1, 0),
        ev(Alloc, 7, 0),
        ev(Alloc, 2, 0),
        ev(Alloc, 3, 0),
        ev(ShareWith, 4, 3),
        ev(Free, 2, 0),
        ev(Alloc, 5, 0),
        ev(Alloc, 6, 0),
        ev(Free, 3, 0),
        ev(Free, 4, 0),
        ev(Alloc, 8, 0),
        ev(Alloc, 9, 0),
        ev(Alloc, 10, 0),
        ev(Free, 6, 0),
        ev(Free, 8, 0),
        ev(Free, 9, 0),
        ev(Free, 10, 0),
        ev(Alloc, 11, 0),
        ev(Free, 5, 0),
        ev(Free, 11, 0),
        ev(Free, 7, 0),
        ev(Free, 1, 0),
    ];
    p.buffer_assignment = Some(assignment(
        buffers
            .iter()
            .map(|&(id, size, inst)| buffer(id, size, inst, if id == 10 { &[0] } else { &[] }))
            .collect(),
        vec![
            BufferAllocationProto {
                is_entry_computation_parameter: true,
                ..allocation(0, 4096, &[(1, 0, 4096)])
            },
            BufferAllocationProto {
                is_entry_computation_parameter: true,
                parameter_number: 1,
                ..allocation(1, 4096, &[(7, 0, 4096)])
            },
            allocation(
                2,
                24576,
                &[
                    (2, 0, 4096),
                    (3, 4096, 4096),
                    (4, 4096, 4096),
                    (6, 8192, 8192),
                    (8, 0, 2048),
                    (9, 16384, 4096),
                    (10, 20480, 4096),
                ],
            ),
            BufferAllocationProto {
                maybe_live_out: true,
                ..allocation(3, 8192, &[(5, 0, 4096), (11, 4096, 4096)])
            },
        ],
        vec![
            trace(whole, true, 2),
            trace(
                vec![
                    ev(Alloc, 5, 0),
                    ev(Alloc, 11, 0),
                    ev(Free, 5, 0),
                    ev(Free, 11, 0),
                ],
                false,
                9,
            ),
        ],
    ));
    p
}

/// Program 3 (`jit_f`) of the SQLite export: its entry runs fusion.1 and fusion.2.
pub fn hlo_f() -> HloProto {
    let mut f1 = inst(2, "fusion.1", "fusion", f32s(&[16]), &[1], &[]);
    f1.metadata = meta("jit(f)/mul", 2);
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 3,
            name: "jit_f".into(),
            entry_computation_id: 1,
            entry_computation_name: "main.1".into(),
            computations: vec![comp(
                1,
                "main.1",
                vec![
                    inst(1, "p0", "parameter", f32s(&[16]), &[], &[]),
                    f1,
                    inst(3, "fusion.2", "fusion", f32s(&[16]), &[2], &[]),
                ],
            )],
            frontend_attributes: Some(FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), FP3.to_string())].into(),
            }),
            stack_frame_index: Some(frames()),
            ..Default::default()
        }),
        buffer_assignment: None,
    }
}

// ---------------------------------------------------------------- SQLite

/// An export of one process driving two GPUs (launcher threads 101 and 102, named when
/// `names`), program 3 compiled on thread 103 and run three times per device, each
/// execution two thunks, each one kernel; with `extras`, memory copies and sets, a
/// start/end range, marks and NVTXT events; with `graphs`, the kernel table of nsys 2026
/// (`graphId`) and the last execution's second thunk a CUDA graph launch (XLA's command
/// buffer): three kernels of graph 10 + device sharing the `cudaGraphLaunch` call's
/// correlation id, and on device 0 a copy node.
pub fn sqlite_xla(path: &Path, names: bool, extras: bool, graphs: bool) {
    use nsys_sqlite::{MARK, NVTXT_PUSH_POP, PUSH_POP, START_END};
    const PID: u64 = 100;
    let db = NsysDb::create(path);
    if graphs {
        db.kernels_2026();
    }
    // The API calls' names (`NsysDb::call`: string 1) and the graph kernels' (string 8).
    db.string(1, "cudaLaunchKernel_v7000");
    db.string(2, "cudaGraphLaunch_v10000");
    db.string(8, "graph_kernel");
    let pid = gpid(PID);
    db.domain(1, gtid(PID, 101), 1, "TSL");
    db.string(500, "XlaModule:#hlo_module=jit_f,program_id=3#");
    let text = |start: i64, end: i64, tid: u64, name: &str| {
        db.nvtx(
            PUSH_POP,
            start,
            Some(end),
            gtid(PID, tid),
            Some(name),
            None,
            1,
        );
    };
    text(
        1_000,
        50_000,
        103,
        "XlaCompileBackend:#module=jit_f,program_id=3#",
    );
    let mut corr = 0;
    for d in 0..2i64 {
        let tid = 101 + d as u64;
        if names {
            db.thread_name(
                gtid(PID, tid),
                1000 + d,
                &format!("XlaLauncher:#global={d},local={d},process=0,partition=0#"),
            );
        }
        for k in 0..3i64 {
            let b = 100_000 + k * 100_000 + d * 1_000;
            db.nvtx(
                PUSH_POP,
                b,
                Some(b + 60_000),
                gtid(PID, tid),
                None,
                Some(500),
                1,
            );
            for (name, at, kernel) in [
                ("fusion.1", 1_000, (20_000, 30_000)),
                ("fusion.2", 11_000, (30_000, 45_000)),
            ] {
                text(
                    b + at,
                    b + at + 9_000,
                    tid,
                    &format!("Thunk:#hlo_op={name}#"),
                );
                corr += 1;
                if graphs && k == 2 && name == "fusion.2" {
                    let call = b + at + 1_000;
                    db.call_named(call, call + 1_000, gtid(PID, tid), corr, 2);
                    let step = (kernel.1 - kernel.0) / 3;
                    for node in 0..3 {
                        let start = b + kernel.0 + node * step;
                        db.graph_kernel(
                            d,
                            start,
                            start + step,
                            pid,
                            corr,
                            Some(10 + d),
                            Some(node),
                        );
                    }
                    if d == 0 {
                        db.graph_memcpy(b + kernel.1, b + kernel.1 + 500, pid, corr, 3);
                    }
                    continue;
                }
                db.call(b + at + 1_000, b + at + 2_000, gtid(PID, tid), corr);
                db.kernel_on(d, b + kernel.0, b + kernel.1, pid, corr);
                if extras && k == 1 {
                    corr += 1;
                    db.call(b + at + 2_000, b + at + 3_000, gtid(PID, tid), corr);
                    db.memcpy(b + kernel.1, b + kernel.1 + 500, pid, corr);
                    corr += 1;
                    db.call(b + at + 3_000, b + at + 4_000, gtid(PID, tid), corr);
                    db.memset(b + kernel.1 + 600, b + kernel.1 + 700, pid, corr);
                }
            }
        }
    }
    if extras {
        db.nvtx(
            START_END,
            5_000,
            Some(900_000),
            gtid(PID, 103),
            Some("epoch"),
            None,
            0,
        );
        db.nvtx(MARK, 6_000, None, gtid(PID, 103), Some("mark"), None, 0);
        db.nvtx(
            NVTXT_PUSH_POP,
            7_000,
            Some(8_000),
            gtid(PID, 103),
            Some("nvtxt"),
            None,
            0,
        );
        // a kernel launched outside any range
        db.call(950_000, 950_100, gtid(PID, 104), 9999);
        db.kernel(960_000, 970_000, pid, 9999);
    }
}

/// The compilation profile of the test suite (COMPILE_CSV) as NVTX events.
pub fn sqlite_compile(path: &Path) {
    use nsys_sqlite::PUSH_POP;
    let db = NsysDb::create(path);
    db.domain(1, gtid(7, 1), 1, "TSL");
    db.domain(1, gtid(7, 1), 2, "cuBLAS");
    let mut rdr = csv::Reader::from_reader(crate::common::COMPILE_CSV.as_bytes());
    for (i, r) in rdr.records().enumerate() {
        let r = r.expect("CSV row");
        let (start, end): (i64, i64) = (r[0].parse().unwrap(), r[1].parse().unwrap());
        let tid: u64 = r[7].parse().unwrap();
        let name = &r[5];
        let (domain, text) = match name.split_once(':') {
            Some(("TSL", t)) => (1, t),
            Some(("cuBLAS", t)) => (2, t),
            _ => (0, name),
        };
        if i % 3 == 0 {
            let id = 100 + i as i64;
            db.string(id, text);
            db.nvtx(
                PUSH_POP,
                start,
                Some(end),
                gtid(7, tid),
                None,
                Some(id),
                domain,
            );
        } else {
            db.nvtx(
                PUSH_POP,
                start,
                Some(end),
                gtid(7, tid),
                Some(text),
                None,
                domain,
            );
        }
    }
}

// ---------------------------------------------------------------- archives

fn member(name: &str, item: Item, stored: bool) -> Member {
    Member {
        name: name.to_string(),
        item,
        stored,
    }
}

/// The members of the nsys-jax archive of `rank`: the GPU projection (first form),
/// thread metadata, the push/pop table (CSV xz or Parquet) and program 7's dump.
pub fn rank_members(rank: usize, parquet_pushpop: bool, stored: bool) -> Vec<Member> {
    let csv = rank_pushpop_csv(rank);
    let pushpop = if parquet_pushpop {
        member(PUSHPOP_PQ, Item::table(pushpop_table(&csv)), stored)
    } else {
        member(PUSHPOP_XZ, Item::xz(Item::text(csv)), true)
    };
    vec![
        member(GPU_PROJ, Item::table(gpu_first_form(rank)), stored),
        member(
            THREADS,
            Item::table(thread_metadata(rank, rank == 1)),
            stored,
        ),
        pushpop,
        member(
            &format!("dump/{DUMP7}.xz"),
            Item::xz(Item::proto(hlo_step())),
            true,
        ),
    ]
}

/// A combine archive of ranks 0 and 1: per-profile copies `path/<profile>`, one shared dump.
pub fn combine_members() -> Vec<Member> {
    let mut out = Vec::new();
    for rank in 0..2 {
        for m in rank_members(rank, false, false) {
            if m.name.starts_with("dump/") {
                if rank == 0 {
                    out.push(m);
                }
                continue;
            }
            out.push(Member {
                name: format!("{}/rank{rank}", m.name),
                ..m
            });
        }
    }
    out
}

/// An njx-capture archive: the SQLite export and program 3's dump.
pub fn capture_members(sqlite: &[u8]) -> Vec<Member> {
    vec![
        member("report.sqlite", Item::sqlite(sqlite.to_vec()), false),
        member(
            &format!("dump/{DUMP3}.xz"),
            Item::xz(Item::proto(hlo_f())),
            true,
        ),
        member("sources/main.py", Item::text("print(1)\n"), false),
    ]
}
