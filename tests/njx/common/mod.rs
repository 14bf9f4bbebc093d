//! Shared test helpers: running the built binaries, the fixtures the tests make
//! themselves (CSV, gzip, xz, zip, Parquet), and the location of the real profiles.
#![allow(dead_code)]

pub mod golden;
pub mod gpu_spans;
pub mod heap;
pub mod nsys_sqlite;
pub mod payloads;
pub mod plant;
pub mod pq;
pub mod relay;

pub use pq::*;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of a built binary.
pub fn exe(tool: &str) -> &'static str {
    match tool {
        "njx-export" => env!("CARGO_BIN_EXE_njx-export"),
        "njx-ranges" => env!("CARGO_BIN_EXE_njx-ranges"),
        "njx-compile-summary" => env!("CARGO_BIN_EXE_njx-compile-summary"),
        "njx-modules" => env!("CARGO_BIN_EXE_njx-modules"),
        "njx-kernels" => env!("CARGO_BIN_EXE_njx-kernels"),
        "njx-thunks" => env!("CARGO_BIN_EXE_njx-thunks"),
        "njx-collectives" => env!("CARGO_BIN_EXE_njx-collectives"),
        "njx-flamefold" => env!("CARGO_BIN_EXE_njx-flamefold"),
        "njx-capture" => env!("CARGO_BIN_EXE_njx-capture"),
        "njx-combine" => env!("CARGO_BIN_EXE_njx-combine"),
        "njx-timeline" => env!("CARGO_BIN_EXE_njx-timeline"),
        "njx-heap" => env!("CARGO_BIN_EXE_njx-heap"),
        "njx-pgle" => env!("CARGO_BIN_EXE_njx-pgle"),
        "njx-report" => env!("CARGO_BIN_EXE_njx-report"),
        "njx-diff" => env!("CARGO_BIN_EXE_njx-diff"),
        "njx" => env!("CARGO_BIN_EXE_njx"),
        other => panic!("unknown tool {other}"),
    }
}

/// Runs a tool with `args`, feeding `stdin`.
pub fn run(tool: &str, args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(exe(tool))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn tool");
    let mut input = child.stdin.take().expect("stdin");
    let stdin = stdin.to_vec();
    // Feed stdin from another thread so that a large output cannot fill its pipe while
    // we are still writing; the tool may exit before reading everything (errors), so
    // EPIPE is ignored.
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&stdin);
    });
    let out = child.wait_with_output().expect("wait for tool");
    feeder.join().expect("stdin feeder");
    out
}

/// Runs `script` with `sh -c` in `dir`, the built tools first on `PATH`: a pipeline as a
/// user types it (`njx-export --table thunks a.zip | njx-collectives`).
pub fn shell(script: &str, dir: &Path) -> Output {
    let bin = Path::new(exe("njx-export"))
        .parent()
        .expect("the binaries' folder");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null())
        .output()
        .expect("run sh")
}

/// The stderr of a run, as text.
pub fn stderr_of(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a tool on files and returns stdout, failing the test with stderr on error.
pub fn ok(tool: &str, args: &[&str]) -> String {
    ok_with(tool, args, b"")
}

/// [`ok`] with `stdin` for its standard input. A partial result (written gzip-compressed)
/// comes back decompressed: the JSON line, which the tools read as well.
pub fn ok_with(tool: &str, args: &[&str], stdin: &[u8]) -> String {
    let out = run(tool, args, stdin);
    assert!(
        out.status.success(),
        "{tool} {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(gunzip(out.stdout)).expect("utf-8 output")
}

/// `bytes` decompressed where they are gzip data (every member), else as they are.
pub fn gunzip(bytes: Vec<u8>) -> Vec<u8> {
    if !bytes.starts_with(b"\x1f\x8b") {
        return bytes;
    }
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
        .expect("gzip output");
    out
}

/// Parses JSON Lines output.
pub fn json_lines(text: &str) -> Vec<serde_json::Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).expect("valid JSON line"))
        .collect()
}

/// The real profiles shipped beside the project, or `None` (with a message) when the
/// folder is absent.
pub fn shared_data(sub: &str) -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/data")
        .join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "SKIPPED: {} not found; conformance tests on real profiles need ../shared/data",
            dir.display()
        );
        None
    }
}

/// A small compilation profile in `nvtx_pushpop_trace` CSV form, with the fields nsys
/// computes. Process 7; thread 1 compiles `jit_f`; worker threads 2 and 3 run in
/// parallel under XlaCompileBackend; cuBLAS ranges on both kinds of thread; one range
/// before and one after the compilation. Times are milliseconds × 10⁶ (nanoseconds).
///
/// After the `--xla-compile` preparation the compilation's 1000 ms divide as:
/// XlaCompileBackend 320 (800 less the autotuner's 80 and the 400 ms parallel span),
/// XlaCompileGpuAsm 266.67 and XlaOptimizeLlvmIr 133.33 (the 400 ms span in proportion
/// 400:200 of their self times, the folded cuBLAS time included), XlaCompile 100,
/// XlaPassPipeline 50, XlaPass 50, XlaAutotunerCompilation 80 (its detail collapsed).
pub const COMPILE_CSV: &str = "\
Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree
0,50000000,50000000,0,50000000,\"TSL:XlaDumpHloModule:#module=jit_f,program_id=3#\",7,1,0,0,1,,:1,\"TSL:XlaDumpHloModule:#module=jit_f,program_id=3#\"
100000000,1100000000,1000000000,900000000,100000000,\"TSL:XlaCompile:#module=jit_f,program_id=3#\",7,1,0,2,2,,:2,\"TSL:XlaCompile:#module=jit_f,program_id=3#\"
100000000,200000000,100000000,50000000,50000000,\"TSL:XlaPassPipeline:#name=opt,module=jit_f,program_id=3#\",7,1,1,1,3,2,:2:3,\"--TSL:XlaPassPipeline:#name=opt,module=jit_f,program_id=3#\"
110000000,160000000,50000000,0,50000000,\"TSL:XlaPass:#name=algsimp,module=jit_f,program_id=3#\",7,1,2,0,4,3,:2:3:4,\"----TSL:XlaPass:#name=algsimp,module=jit_f,program_id=3#\"
200000000,1000000000,800000000,130000000,670000000,\"TSL:XlaCompileBackend:#module=jit_f,program_id=3#\",7,1,1,2,5,2,:2:5,\"--TSL:XlaCompileBackend:#module=jit_f,program_id=3#\"
210000000,290000000,80000000,60000000,20000000,TSL:XlaAutotunerCompilation,7,1,2,1,6,5,:2:5:6,----TSL:XlaAutotunerCompilation
220000000,280000000,60000000,0,60000000,TSL:XlaEmitLlvmIr:#module=jit_f_autotune#,7,1,3,0,7,6,:2:5:6:7,------TSL:XlaEmitLlvmIr:#module=jit_f_autotune#
300000000,700000000,400000000,50000000,350000000,TSL:XlaCompileGpuAsm:#module=jit_f#,7,2,0,1,8,,:8,TSL:XlaCompileGpuAsm:#module=jit_f#
350000000,400000000,50000000,0,50000000,cuBLAS:cublasCreate_v2,7,2,1,0,9,8,:8:9,--cuBLAS:cublasCreate_v2
400000000,600000000,200000000,0,200000000,TSL:XlaOptimizeLlvmIr:#module=jit_f#,7,3,0,0,10,,:10,TSL:XlaOptimizeLlvmIr:#module=jit_f#
900000000,950000000,50000000,0,50000000,cuBLAS:cublasCreate_v2,7,1,2,0,11,5,:2:5:11,----cuBLAS:cublasCreate_v2
1200000000,1300000000,100000000,0,100000000,TSL:XlaModule:#module=jit_f#,7,1,0,0,12,,:12,TSL:XlaModule:#module=jit_f#
";

/// Paths of the four pax archives in `dir` (`shared_data("pax_fsdp4_4proc")`), rank order.
pub fn pax_archives(dir: &Path) -> Vec<String> {
    (0..4)
        .map(|i| {
            dir.join(format!("pax_fsdp4_4proc_proc{i}.zip"))
                .to_str()
                .expect("utf-8 path")
                .to_string()
        })
        .collect()
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temporary directory")
}

/// Writes `bytes` to `dir/name` and returns the path as a string.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create fixture folder");
    }
    std::fs::write(&path, bytes).expect("write fixture");
    path.to_str().expect("utf-8 path").to_string()
}

/// gzip-compresses `bytes`.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// xz-compresses `bytes` (preset 1, fast).
pub fn xz(bytes: &[u8]) -> Vec<u8> {
    xz_preset(bytes, 1)
}

/// xz-compresses `bytes` with `preset` (0 to 9; Python's `lzma` writes 6).
pub fn xz_preset(bytes: &[u8], preset: u32) -> Vec<u8> {
    let mut enc = xz2::write::XzEncoder::new(Vec::new(), preset);
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

/// A zip archive of `(member, bytes)` pairs; members are deflated unless `stored`.
pub fn zip(members: &[(&str, &[u8])], stored: bool) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let method = if stored {
        zip::CompressionMethod::Stored
    } else {
        zip::CompressionMethod::Deflated
    };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, bytes) in members {
        w.start_file(*name, options).unwrap();
        w.write_all(bytes).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// The newer nsys-jax form of the table: `report_nvtx_pushpop_trace.parquet`, as pandas
/// writes it from the CSV without PID, Lvl and NameTree (ParentId becomes a nullable
/// double, RangeId the index column at the end).
pub fn pushpop_parquet(csv_text: &str) -> Vec<u8> {
    use parquet::basic::{ConvertedType, Repetition, Type as Physical};
    use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
    use parquet::file::writer::SerializedFileWriter;
    use parquet::schema::types::Type;
    use std::sync::Arc;

    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = rdr.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = rdr.records().map(|r| r.unwrap()).collect();
    let col = |name: &str| -> Vec<String> {
        let i = headers.iter().position(|h| h == name).unwrap();
        rows.iter().map(|r| r[i].to_string()).collect()
    };
    let ints = [
        "Start (ns)",
        "End (ns)",
        "Duration (ns)",
        "DurChild (ns)",
        "DurNonChild (ns)",
    ];
    let mut fields = Vec::new();
    let prim = |name: &str, t: Physical| {
        let mut b = Type::primitive_type_builder(name, t).with_repetition(Repetition::OPTIONAL);
        if t == Physical::BYTE_ARRAY {
            b = b.with_converted_type(ConvertedType::UTF8);
        }
        Arc::new(b.build().unwrap())
    };
    for n in ints {
        fields.push(prim(n, Physical::INT64));
    }
    fields.push(prim("Name", Physical::BYTE_ARRAY));
    fields.push(prim("TID", Physical::INT64));
    fields.push(prim("NumChild", Physical::INT64));
    fields.push(prim("ParentId", Physical::DOUBLE));
    fields.push(prim("RangeStack", Physical::BYTE_ARRAY));
    fields.push(prim("RangeId", Physical::INT32));
    let schema = Arc::new(
        Type::group_type_builder("schema")
            .with_fields(fields)
            .build()
            .unwrap(),
    );
    let mut buf = Vec::new();
    {
        let mut writer = SerializedFileWriter::new(&mut buf, schema, Default::default()).unwrap();
        let mut rg = writer.next_row_group().unwrap();
        let all = vec![1i16; rows.len()];
        macro_rules! put {
            ($t:ty, $vals:expr, $defs:expr) => {{
                let mut c = rg.next_column().unwrap().unwrap();
                c.typed::<$t>()
                    .write_batch(&$vals, Some(&$defs), None)
                    .unwrap();
                c.close().unwrap();
            }};
        }
        let int64 =
            |name: &str| -> Vec<i64> { col(name).iter().map(|s| s.parse().unwrap()).collect() };
        let strings = |name: &str| -> Vec<ByteArray> {
            col(name)
                .iter()
                .map(|s| ByteArray::from(s.as_str()))
                .collect()
        };
        for n in ints {
            put!(Int64Type, int64(n), all);
        }
        put!(ByteArrayType, strings("Name"), all);
        put!(Int64Type, int64("TID"), all);
        put!(Int64Type, int64("NumChild"), all);
        let parents = col("ParentId");
        let defs: Vec<i16> = parents.iter().map(|p| i16::from(!p.is_empty())).collect();
        let vals: Vec<f64> = parents
            .iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().unwrap())
            .collect();
        put!(DoubleType, vals, defs);
        put!(ByteArrayType, strings("RangeStack"), all);
        let ids: Vec<i32> = col("RangeId").iter().map(|s| s.parse().unwrap()).collect();
        put!(Int32Type, ids, all);
        rg.close().unwrap();
        writer.close().unwrap();
    }
    buf
}

/// An HLO instruction with a shape, operands and called computations.
pub fn instruction(
    id: i64,
    name: &str,
    opcode: &str,
    shape: njx::hlo::proto::ShapeProto,
    operands: &[i64],
    calls: &[i64],
) -> njx::hlo::proto::HloInstructionProto {
    njx::hlo::proto::HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(shape),
        operand_ids: operands.to_vec(),
        called_computation_ids: calls.to_vec(),
        ..Default::default()
    }
}

/// An HLO computation of `instructions`, the last one its root.
pub fn computation(
    id: i64,
    name: &str,
    instructions: Vec<njx::hlo::proto::HloInstructionProto>,
) -> njx::hlo::proto::HloComputationProto {
    njx::hlo::proto::HloComputationProto {
        id,
        name: name.into(),
        root_id: instructions.last().map_or(0, |i| i.id),
        instructions,
        ..Default::default()
    }
}

/// An `HloProto` of program `id` named `name` whose entry is the last of `computations`,
/// with `fingerprint_before_lhs` where given (as XLA dumps it after optimizations).
pub fn hlo_of(
    id: i64,
    name: &str,
    fingerprint: Option<&str>,
    computations: Vec<njx::hlo::proto::HloComputationProto>,
) -> njx::hlo::proto::HloProto {
    let entry = computations.last();
    njx::hlo::proto::HloProto {
        hlo_module: Some(njx::hlo::proto::HloModuleProto {
            id,
            name: name.into(),
            entry_computation_id: entry.map_or(0, |c| c.id),
            entry_computation_name: entry.map_or(String::new(), |c| c.name.clone()),
            frontend_attributes: fingerprint.map(|f| njx::hlo::proto::FrontendAttributes {
                map: [("fingerprint_before_lhs".to_string(), f.to_string())].into(),
            }),
            computations,
            ..Default::default()
        }),
        buffer_assignment: None,
    }
}

/// An f32 array shape of `dims`.
pub fn f32s(dims: &[i64]) -> njx::hlo::proto::ShapeProto {
    njx::hlo::proto::ShapeProto {
        element_type: njx::hlo::proto::PrimitiveType::F32 as i32,
        dimensions: dims.to_vec(),
        ..Default::default()
    }
}

/// The names in `dir`, sorted.
pub fn entries(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Writes a stand-in `nsys` into `bin` that logs its arguments to `bin/args`, prints a
/// line on stdout, pauses `pause` seconds (a slow export), copies `fixture` to the
/// `--output` path and exits with `status`.
pub fn fake_nsys(bin: &Path, fixture: &Path, status: i32, pause: f64) {
    std::fs::create_dir_all(bin).unwrap();
    let script = format!(
        "#!/bin/sh\n\
         echo \"$@\" > '{log}'\n\
         echo 'Processing events...'\n\
         sleep {pause}\n\
         out=''\n\
         while [ $# -gt 0 ]; do\n\
           if [ \"$1\" = --output ]; then out=\"$2\"; shift; fi\n\
           shift\n\
         done\n\
         [ {status} -eq 0 ] && cp '{fixture}' \"$out\"\n\
         exit {status}\n",
        log = bin.join("args").display(),
        fixture = fixture.display(),
    );
    self::script(&bin.join("nsys"), &script);
}

/// An executable script at `path`.
pub fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The texts of an SVG chart's `<text>` elements, whitespace trimmed, in order.
pub fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let body = &t[t.find('>')? + 1..];
            Some(body[..body.find("</text>")?].trim().to_string())
        })
        .collect()
}

/// `n` pseudo-random bytes (a xorshift sequence): they follow no format and do not
/// compress.
pub fn noise(n: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Whether bash runs here (the tests that need a shell's own expansion or completion say
/// they are skipped where it does not).
pub fn has_bash() -> bool {
    std::process::Command::new("bash")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// njx-report's JSON of module and thunk records (JSON lines), given as two files.
pub fn report_of_records(modules: &str, thunks: &str) -> serde_json::Value {
    let dir = tempdir();
    let m = write(dir.path(), "modules.jsonl", modules.as_bytes());
    let t = write(dir.path(), "thunks.jsonl", thunks.as_bytes());
    let out = ok("njx-report", &["-q", "--format", "json", &m, &t]);
    serde_json::from_str(&out).expect("njx-report writes one JSON object")
}

/// njx-report's JSON of `inputs` (`-q --format json`).
pub fn report_json(inputs: &[String]) -> serde_json::Value {
    let mut args = vec!["-q", "--format", "json"];
    args.extend(inputs.iter().map(String::as_str));
    serde_json::from_str(&ok("njx-report", &args)).expect("njx-report writes one JSON object")
}

/// The findings of `rule` in a report's JSON (`njx-report --format json`).
pub fn fired<'a>(rep: &'a serde_json::Value, rule: &str) -> Vec<&'a serde_json::Value> {
    rep["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}
