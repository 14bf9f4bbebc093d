//! Valid inputs of every kind, small, made here: the hostile cases start from these and
//! break one thing. `baseline` (in mod.rs) checks that each is accepted as it is, so a
//! refusal of a mutated copy is about the mutation.

use super::formats::{ZipEntry, zip_raw};
use crate::common::nsys_sqlite::*;
use crate::common::*;
use njx::hlo::proto::{
    FrontendAttributes, HloInstructionProto, HloModuleProto, HloProto, OpMetadata, ReplicaGroup,
    StackFrameIndexProto, stack_frame_index_proto,
};
use prost::Message;
use serde_json::{Value, json};
use std::path::Path;

pub const PID: i64 = 4100;
/// `fingerprint_before_lhs` of program 7 (`jit_step`).
pub const FP: &str = "5d41402abc4b2a76b9719d911017c592";
pub const STEP: &str = "TSL:XlaModule:#hlo_module=jit_step,program_id=7#";
pub const DUMP: &str = "dump/module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb.xz";
/// The dump's file name in an XLA dump folder (`--hlo DIR`).
pub const DUMP_FILE: &str = "module_0007.jit_step.sm_8.0_gpu_after_optimizations.hlo.pb";
pub const GPU_PROJ: &str = "nvtx_gpu_proj_trace/trace.parquet";
pub const PUSHPOP: &str = "report_nvtx_pushpop_trace.csv.xz";
pub const PUSHPOP_PQ: &str = "report_nvtx_pushpop_trace.parquet";
pub const THREADS: &str = "thread-metadata.parquet";

pub const HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree";

// ---------------------------------------------------------------- push/pop tables

/// An `nvtx_pushpop_trace` table held as text cells, to break one cell at a time.
#[derive(Clone)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn parse(text: &str) -> Table {
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header = r.headers().unwrap().iter().map(str::to_string).collect();
        let rows = r
            .records()
            .map(|x| x.unwrap().iter().map(str::to_string).collect())
            .collect();
        Table { header, rows }
    }

    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    }

    pub fn get(&self, row: usize, col: &str) -> &str {
        &self.rows[row][self.col(col)]
    }

    pub fn set(&mut self, row: usize, col: &str, v: impl ToString) -> &mut Table {
        let c = self.col(col);
        self.rows[row][c] = v.to_string();
        self
    }

    pub fn csv(&self) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.header).unwrap();
        for r in &self.rows {
            w.write_record(r).unwrap();
        }
        String::from_utf8(w.into_inner().unwrap()).unwrap()
    }

    /// Range records as njx-export writes them from this table (the table's own fields).
    pub fn records(&self, profile: &str) -> Vec<Value> {
        let int = |r: usize, c: &str| -> Value {
            let s = self.get(r, c);
            s.parse::<i64>().map_or(Value::Null, Value::from)
        };
        (0..self.rows.len())
            .map(|r| {
                json!({
                    "profile": profile, "pid": int(r, "PID"), "tid": int(r, "TID"),
                    "id": int(r, "RangeId"), "parent": int(r, "ParentId"),
                    "depth": int(r, "Lvl"), "start_ns": int(r, "Start (ns)"),
                    "end_ns": int(r, "End (ns)"), "dur_ns": int(r, "Duration (ns)"),
                    "child_ns": int(r, "DurChild (ns)"), "self_ns": int(r, "DurNonChild (ns)"),
                    "children": int(r, "NumChild"), "name": self.get(r, "Name"),
                })
            })
            .collect()
    }
}

/// A small compilation tree on thread 1 of process 7, with the fields nsys computes:
///
/// ```text
/// row 0  id 1  XlaCompile          0–1000  children 2, 4
/// row 1  id 2  XlaPassPipeline   100–400   child 3
/// row 2  id 3  XlaPass           150–350
/// row 3  id 4  XlaCompileBackend 500–900   child 5
/// row 4  id 5  XlaEmitLlvmIr     600–700
/// row 5  id 6  XlaModule        2000–2100
/// ```
///
/// Row `r` is line `r + 2` of the CSV.
pub fn tree() -> Table {
    /// (start, end, DurChild, name, Lvl, NumChild, RangeId, ParentId, RangeStack)
    type Row<'a> = (i64, i64, i64, &'a str, u32, u32, u32, Option<u32>, &'a str);
    let rows: &[Row] = &[
        (
            0,
            1000,
            700,
            "TSL:XlaCompile:#module=m,program_id=1#",
            0,
            2,
            1,
            None,
            ":1",
        ),
        (
            100,
            400,
            200,
            "TSL:XlaPassPipeline:#name=opt,module=m,program_id=1#",
            1,
            1,
            2,
            Some(1),
            ":1:2",
        ),
        (
            150,
            350,
            0,
            "TSL:XlaPass:#name=algsimp,module=m,program_id=1#",
            2,
            0,
            3,
            Some(2),
            ":1:2:3",
        ),
        (
            500,
            900,
            100,
            "TSL:XlaCompileBackend:#module=m,program_id=1#",
            1,
            1,
            4,
            Some(1),
            ":1:4",
        ),
        (
            600,
            700,
            0,
            "TSL:XlaEmitLlvmIr:#module=m#",
            2,
            0,
            5,
            Some(4),
            ":1:4:5",
        ),
        (
            2000,
            2100,
            0,
            "TSL:XlaModule:#module=m#",
            0,
            0,
            6,
            None,
            ":6",
        ),
    ];
    let mut text = format!("{HEADER}\n");
    for &(s, e, child, name, lvl, kids, id, parent, stack) in rows {
        let p = parent.map_or(String::new(), |p| p.to_string());
        let indent = "-".repeat(2 * lvl as usize);
        text += &format!(
            "{s},{e},{},{child},{},\"{name}\",7,1,{lvl},{kids},{id},{p},{stack},\"{indent}{name}\"\n",
            e - s,
            e - s - child
        );
    }
    Table::parse(&text)
}

/// JSON Lines of `records`.
pub fn jsonl(records: &[Value]) -> String {
    records.iter().map(|r| r.to_string() + "\n").collect()
}

/// Range records in CSV form (`--format csv`).
pub fn records_csv(records: &[Value]) -> String {
    let fields = [
        "profile", "pid", "tid", "id", "parent", "depth", "start_ns", "end_ns", "dur_ns",
        "child_ns", "self_ns", "children", "name",
    ];
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(fields).unwrap();
    for r in records {
        let row: Vec<String> = fields
            .iter()
            .map(|f| match &r[*f] {
                Value::Null => String::new(),
                Value::String(s) => s.clone(),
                v => v.to_string(),
            })
            .collect();
        w.write_record(&row).unwrap();
    }
    String::from_utf8(w.into_inner().unwrap()).unwrap()
}

/// A push/pop table nested `n` deep: range i (id i+1) inside range i−1, on one thread.
/// With `compile`, the root is an XlaCompile range and the others XlaPass ranges.
pub fn deep_csv(n: i64, compile: bool) -> String {
    let mut csv = String::with_capacity(n as usize * 80);
    csv += HEADER;
    csv.push('\n');
    for i in 0..n {
        let (s, e) = (i, 2 * n - i);
        let last = i == n - 1;
        let child = if last { 0 } else { e - s - 2 };
        let parent = if i == 0 { String::new() } else { i.to_string() };
        let name = match (compile, i) {
            (true, 0) => "\"TSL:XlaCompile:#module=m,program_id=1#\"".to_string(),
            (true, _) => format!("\"TSL:XlaPass:#name=p{i},module=m,program_id=1#\""),
            (false, _) => format!("r{i}"),
        };
        csv += &format!(
            // No RangeStack: the real one (`:1:2:…`) would take O(depth²) bytes.
            "{s},{e},{},{child},{},{name},1,1,{i},{},{},{parent},,r\n",
            e - s,
            e - s - child,
            u8::from(!last),
            i + 1
        );
    }
    csv
}

/// The range records of [`deep_csv`] (JSON Lines).
pub fn deep_jsonl(n: i64) -> String {
    let mut out = String::with_capacity(n as usize * 200);
    for i in 0..n {
        let (s, e) = (i, 2 * n - i);
        let last = i == n - 1;
        let child = if last { 0 } else { e - s - 2 };
        let parent = if i == 0 {
            "null".to_string()
        } else {
            i.to_string()
        };
        out += &format!(
            "{{\"profile\":\"deep\",\"pid\":1,\"tid\":1,\"id\":{},\"parent\":{parent},\"depth\":{i},\"start_ns\":{s},\"end_ns\":{e},\"dur_ns\":{},\"child_ns\":{child},\"self_ns\":{},\"children\":{},\"name\":\"r{i}\"}}\n",
            i + 1,
            e - s,
            e - s - child,
            u8::from(!last)
        );
    }
    out
}

/// An nsys SQLite export of `n` push/pop ranges nested in one another on one thread.
pub fn deep_sqlite(path: &Path, n: i64) {
    let db = NsysDb::create(path);
    db.conn.execute_batch("BEGIN").unwrap();
    let t = gtid(7, 1);
    for i in 0..n {
        db.range(i, 2 * n - i, t, &format!("r{i}"));
    }
    db.conn.execute_batch("COMMIT").unwrap();
}

// ---------------------------------------------------------------- archives

/// One projected range of the archive's GPU table.
struct Span {
    id: i64,
    parent: Option<i64>,
    name: String,
    start: i64,
    dur: i64,
    ops: i64,
}

/// Four executions of jit_step on the main thread, each with `fusion.1`,
/// `all-reduce-start.1` and `fusion.2`.
fn spans() -> Vec<Span> {
    let mut v: Vec<Span> = Vec::new();
    for k in 0..4i64 {
        let b = 10_000_000 + 2_000_000 * k;
        let m = v.len() as i64 + 1;
        v.push(Span {
            id: m,
            parent: None,
            name: STEP.into(),
            start: b,
            dur: 1_000_000,
            ops: 3,
        });
        for (op, s, d) in [
            ("fusion.1", 100_000, 300_000),
            ("all-reduce-start.1", 300_000, 200_000),
            ("fusion.2", 700_000, 150_000),
        ] {
            v.push(Span {
                id: v.len() as i64 + 1,
                parent: Some(m),
                name: format!("TSL:Thunk:#hlo_op={op}#"),
                start: b + s,
                dur: d,
                ops: 1,
            });
        }
    }
    v
}

fn borrow(v: &[Option<String>]) -> Vec<Option<&str>> {
    v.iter().map(Option::as_deref).collect()
}

/// The first form of `nvtx_gpu_proj_trace/trace.parquet`.
pub fn gpu_proj_trace() -> Vec<u8> {
    gpu_proj_trace_of(spans())
}

/// [`gpu_proj_trace`] in the layout of XLA since 2026 (NVIDIA/JAX-Toolbox PR #2296): the
/// all-reduce only as an `NCCL:ncclGroupEnd` range below the module, `fusion.2` at the
/// top level with its `unique_hlo_op_id`, and a top-level thunk that no module holds.
pub fn gpu_proj_trace_2026() -> Vec<u8> {
    let mut v = spans();
    for s in &mut v {
        if s.name.contains("all-reduce-start.1") {
            s.name = "NCCL:ncclGroupEnd".into();
        } else if s.name.contains("fusion.2") {
            s.name = "TSL:Thunk:#hlo_op=fusion.2,unique_hlo_op_id=30#".into();
            s.parent = None;
        }
    }
    v.push(Span {
        id: v.len() as i64 + 1,
        parent: None,
        name: "TSL:Thunk:#hlo_op=fusion.1,unique_hlo_op_id=21#".into(),
        start: 90_000_000,
        dur: 1_000,
        ops: 1,
    });
    gpu_proj_trace_of(v)
}

fn gpu_proj_trace_of(spans: Vec<Span>) -> Vec<u8> {
    let n = spans.len();
    let ints = |f: &dyn Fn(&Span) -> i64| -> Vec<Option<i64>> {
        spans.iter().map(|s| Some(f(s))).collect()
    };
    let dbl =
        |f: &dyn Fn(&Span) -> Option<f64>| -> Vec<Option<f64>> { spans.iter().map(f).collect() };
    let names: Vec<Option<String>> = spans.iter().map(|s| Some(s.name.clone())).collect();
    let styles = vec![Some("PushPop".to_string()); n];
    let stacks: Vec<Option<String>> = spans
        .iter()
        .map(|s| {
            Some(match s.parent {
                Some(p) => format!(":{p}:{}", s.id),
                None => format!(":{}", s.id),
            })
        })
        .collect();
    parquet_table(
        &[
            pq_text("Name", &borrow(&names)),
            pq_int("Projected Start", &ints(&|s| s.start)),
            pq_int("Projected Duration", &ints(&|s| s.dur)),
            pq_double("Orig Start", &dbl(&|s| Some((s.start - 400_000) as f64))),
            pq_double("Orig Duration", &dbl(&|s| Some((s.dur / 10) as f64))),
            pq_text("Style", &borrow(&styles)),
            pq_int("PID", &vec![Some(PID); n]),
            pq_int("TID", &vec![Some(PID); n]),
            pq_int("NumGPUOps", &ints(&|s| s.ops)),
            pq_double(
                "Lvl",
                &dbl(&|s| Some(if s.parent.is_some() { 1.0 } else { 0.0 })),
            ),
            pq_int(
                "NumChild",
                &ints(&|s| spans.iter().filter(|c| c.parent == Some(s.id)).count() as i64),
            ),
            pq_double("RangeId", &dbl(&|s| Some(s.id as f64))),
            pq_double("ParentId", &dbl(&|s| s.parent.map(|p| p as f64))),
            pq_text("RangeStack", &borrow(&stacks)),
            pq_int("Rank", &vec![Some(0); n]),
        ],
        1 << 20,
    )
}

/// `thread-metadata.parquet`: the main thread, a compiler thread, the launcher thread
/// naming device 0.
pub fn thread_metadata() -> Vec<u8> {
    let names = [
        "python3",
        "tf_XLAEigen",
        "XlaLauncher:#global=0,local=0,process=0,slice=0#",
    ];
    parquet_table(
        &[
            pq_text("Name", &names.map(Some)),
            pq_int("PID", &[Some(PID); 3]),
            pq_int("TID", &[Some(PID), Some(PID + 1), Some(PID + 2)]),
            pq_int32("Priority", &[Some(0), Some(0), Some(0)]),
        ],
        1 << 20,
    )
}

/// `device-metadata.parquet` as nsys-jax writes it (pandas names the columns of nsys'
/// `TARGET_INFO_GPU` by tuples, as in the pax archives): one A100 of 40 GB.
pub fn device_metadata() -> Vec<u8> {
    parquet_table(
        &[
            pq_int("('TARGET_INFO_GPU', 'id')", &[Some(0)]),
            pq_text(
                "('TARGET_INFO_GPU', 'name')",
                &[Some("NVIDIA A100-SXM4-40GB")],
            ),
            pq_int(
                "('TARGET_INFO_GPU', 'totalMemory')",
                &[Some(42_505_273_344)],
            ),
        ],
        1 << 20,
    )
}

/// The archive's push/pop table: program 7's compilation.
pub fn archive_pushpop() -> String {
    let p = PID;
    format!(
        "{HEADER}\n\
         500000,2500000,2000000,1500000,500000,\"TSL:XlaCompile:#module=jit_step,program_id=7#\",{p},{p},0,1,1,,:1,\"TSL:XlaCompile:#module=jit_step,program_id=7#\"\n\
         600000,2100000,1500000,0,1500000,\"TSL:XlaCompileBackend:#module=jit_step,program_id=7#\",{p},{p},1,0,2,1,:1:2,\"--TSL:XlaCompileBackend:#module=jit_step,program_id=7#\"\n"
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

/// The after-optimizations HloProto of program 7, fingerprint [`FP`]: `fusion.1`, an
/// all-reduce over {0,1} and `fusion.2`, with op_names and Python stack frames.
pub fn hlo_proto() -> HloProto {
    use stack_frame_index_proto::{FileLocation, StackFrame};
    let meta = |op: &str, frame: i32| {
        Some(OpMetadata {
            op_name: op.into(),
            stack_frame_id: frame,
            ..Default::default()
        })
    };
    let add = computation(
        1,
        "add",
        vec![
            inst(1, "x", "parameter", &[], &[]),
            inst(2, "y", "parameter", &[], &[]),
            inst(3, "add.0", "add", &[1, 2], &[]),
        ],
    );
    let fused1 = computation(
        2,
        "fused_computation.1",
        vec![
            inst(10, "param_0.1", "parameter", &[], &[]),
            inst(11, "negate.1", "negate", &[10], &[]),
        ],
    );
    let fused2 = computation(
        3,
        "fused_computation.2",
        vec![
            inst(20, "param_0.2", "parameter", &[], &[]),
            inst(21, "exponential.2", "exponential", &[20], &[]),
        ],
    );
    let mut f1 = inst(101, "fusion.1", "fusion", &[100], &[2]);
    f1.metadata = meta("jit(step)/neg", 2);
    let mut ar = inst(102, "all-reduce-start.1", "all-reduce-start", &[101], &[1]);
    ar.replica_groups = vec![ReplicaGroup {
        replica_ids: vec![0, 1],
    }];
    ar.metadata = meta("jit(step)/psum", 1);
    let mut f2 = inst(104, "fusion.2", "fusion", &[103], &[3]);
    f2.metadata = meta("jit(step)/exp", 2);
    let entry = computation(
        10,
        "main.10",
        vec![
            inst(100, "p0", "parameter", &[], &[]),
            f1,
            ar,
            inst(103, "all-reduce-done.1", "all-reduce-done", &[102], &[]),
            f2,
        ],
    );
    let loc = |file, function, line| FileLocation {
        file_name_id: file,
        function_name_id: function,
        line,
        column: 0,
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 7,
            name: "jit_step".into(),
            entry_computation_id: 10,
            entry_computation_name: "main.10".into(),
            frontend_attributes: Some(FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), FP.to_string())].into(),
            }),
            computations: vec![add, fused1, fused2, entry],
            stack_frame_index: Some(StackFrameIndexProto {
                file_names: vec!["train.py".into(), "model.py".into()],
                function_names: vec!["<module>".into(), "step".into()],
                file_locations: vec![loc(1, 1, 10), loc(2, 2, 5)],
                stack_frames: vec![
                    StackFrame {
                        file_location_id: 1,
                        parent_frame_id: 0,
                    },
                    StackFrame {
                        file_location_id: 2,
                        parent_frame_id: 1,
                    },
                ],
            }),
            ..Default::default()
        }),
        buffer_assignment: None,
    }
}

/// [`hlo_proto`], encoded.
pub fn hlo_dump() -> Vec<u8> {
    hlo_proto().encode_to_vec()
}

/// The members of a valid nsys-jax archive (as name, bytes), in the order written.
pub fn archive_members() -> Vec<(String, Vec<u8>)> {
    vec![
        (GPU_PROJ.into(), gpu_proj_trace()),
        (THREADS.into(), thread_metadata()),
        (PUSHPOP.into(), xz(archive_pushpop().as_bytes())),
        (DUMP.into(), xz(&hlo_dump())),
    ]
}

/// The zip entries of a valid archive: `.xz` members stored (as nsys-jax stores them),
/// the others deflated; with `replace`, the named members' bytes replaced.
pub fn archive_entries(replace: &[(&str, Vec<u8>)]) -> Vec<ZipEntry> {
    archive_members()
        .into_iter()
        .map(|(name, bytes)| {
            let bytes = replace
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(bytes, |(_, b)| b.clone());
            if name.ends_with(".xz") {
                ZipEntry::stored(&name, &bytes)
            } else {
                ZipEntry::deflated(&name, &bytes)
            }
        })
        .collect()
}

/// A valid archive whose `member` is garbage of its kind (xz of noise, or `PAR1` then
/// noise for a Parquet table).
pub fn archive_with_garbage(member: &str) -> Vec<u8> {
    let bytes = if member.ends_with(".xz") {
        xz(b"\x00\x01 not what it should be \xff")
    } else {
        b"PAR1 not parquet".to_vec()
    };
    zip_raw(&archive_entries(&[(member, bytes)]), None)
}

/// A valid archive whose `member` is cut to its first half.
pub fn archive_with_cut(member: &str) -> Vec<u8> {
    let good = archive_members()
        .into_iter()
        .find(|(n, _)| n == member)
        .expect("a member of the archive")
        .1;
    let cut = good[..good.len() / 2].to_vec();
    zip_raw(&archive_entries(&[(member, cut)]), None)
}

/// A valid archive's bytes.
pub fn archive() -> Vec<u8> {
    zip_raw(&archive_entries(&[]), None)
}

/// Writes a valid archive to `dir/rank0.zip`.
pub fn write_archive(dir: &Path) -> String {
    write(dir, "rank0.zip", &archive())
}

/// Writes the archive extracted into `dir/name/`.
pub fn write_extracted(dir: &Path, name: &str) -> String {
    let root = dir.join(name);
    for (member, bytes) in archive_members() {
        write(&root, &member, &bytes);
    }
    root.to_str().unwrap().to_string()
}

// ---------------------------------------------------------------- SQLite exports

/// A small nsys SQLite export: a compilation on thread 1; on the launcher thread 2
/// (named for device 0) three executions of jit_step, each with thunks `fusion.1` and
/// `fusion.2`, each thunk one CUDA call launching one kernel.
pub fn sqlite_export(path: &Path) -> NsysDb {
    let db = NsysDb::create(path);
    db.domain(1, gtid(7, 1), 1, "TSL");
    let text = |start: i64, end: i64, tid: u64, name: &str| {
        db.nvtx(
            PUSH_POP,
            start,
            Some(end),
            gtid(7, tid),
            Some(name),
            None,
            1,
        )
    };
    text(
        1_000,
        50_000,
        1,
        "XlaCompile:#module=jit_step,program_id=7#",
    );
    text(
        2_000,
        40_000,
        1,
        "XlaCompileBackend:#module=jit_step,program_id=7#",
    );
    text(
        3_000,
        4_000,
        1,
        "XlaPass:#name=algsimp,module=jit_step,program_id=7#",
    );
    db.thread_name(
        gtid(7, 2),
        1000,
        "XlaLauncher:#global=0,local=0,process=0,partition=0#",
    );
    let mut corr = 0;
    for k in 0..3 {
        let b = 100_000 + 100_000 * k;
        text(
            b,
            b + 60_000,
            2,
            "XlaModule:#hlo_module=jit_step,program_id=7#",
        );
        for (name, at, kernel) in [
            ("fusion.1", 1_000, (20_000, 30_000)),
            ("fusion.2", 11_000, (30_000, 45_000)),
        ] {
            text(b + at, b + at + 9_000, 2, &format!("Thunk:#hlo_op={name}#"));
            corr += 1;
            db.call(b + at + 1_000, b + at + 2_000, gtid(7, 2), corr);
            db.kernel(b + kernel.0, b + kernel.1, gpid(7), corr);
        }
    }
    db
}

/// Writes [`sqlite_export`] to `dir/name` and returns its path.
pub fn write_sqlite(dir: &Path, name: &str) -> String {
    let path = dir.join(name);
    drop(sqlite_export(&path));
    path.to_str().unwrap().to_string()
}

/// Writes an XLA dump folder `dir/name` holding the dump of program 7.
pub fn write_dump_dir(dir: &Path, name: &str) -> String {
    let root = dir.join(name);
    write(&root, DUMP_FILE, &hlo_dump());
    root.to_str().unwrap().to_string()
}

// ---------------------------------------------------------------- records

/// One thunk record of program 7.
#[allow(clippy::too_many_arguments)]
pub fn thunk(device: u32, exec: u32, name: &str, start: i64, dur: i64, comm: bool) -> Value {
    json!({
        "profile": format!("rank{device}"), "program": FP, "program_id": 7,
        "module": "jit_step", "execution": exec, "device": device, "name": name,
        "thunk_execution": 0, "start_ns": start, "dur_ns": dur,
        "hidden_ns": if comm { 200 } else { 0 }, "comm": comm, "warmup": exec == 0,
        "collective": if comm { json!("all-reduce") } else { Value::Null },
        "group_size": if comm { json!(2) } else { Value::Null },
        "message_bytes": if comm { json!(1_000_000) } else { Value::Null },
    })
}

/// Thunk records: two devices, executions 0 (warm-up) to 3, each `fusion.1`, an
/// all-reduce and `fusion.2`; device 1 arrives late.
pub fn thunk_records() -> Vec<Value> {
    let mut v = Vec::new();
    for (exec, late) in [(0u32, 0i64), (1, 300), (2, 500), (3, 100)] {
        let base = 10_000 * i64::from(exec);
        for device in 0..2u32 {
            v.push(thunk(device, exec, "fusion.1", base, 1000, false));
            let exposed = 1000 + if device == 0 { late } else { 0 };
            v.push(thunk(
                device,
                exec,
                "all-reduce-start.1",
                base + 1000,
                exposed,
                true,
            ));
            v.push(thunk(device, exec, "fusion.2", base + 2600, 500, false));
        }
    }
    v
}

/// Module records matching [`thunk_records`].
pub fn module_records() -> Vec<Value> {
    let mut v = Vec::new();
    for exec in 0..4u32 {
        for device in 0..2u32 {
            v.push(json!({
                "profile": format!("rank{device}"), "program": FP, "program_id": 7,
                "name": "jit_step", "execution": exec, "device": device,
                "start_ns": 10_000 * i64::from(exec), "dur_ns": 4000, "thunks": 3,
                "warmup": exec == 0,
            }));
        }
    }
    v
}

/// Two folded files for `--diff`.
pub const FOLDED_A: &str = "a;b 10\na;c 20\nd 5\n";
pub const FOLDED_B: &str = "a;b 15\nd 5\ne;f 7\n";
