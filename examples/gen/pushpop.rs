//! The generator behind `examples/gen_pushpop.rs`, shared by `#[path]` inclusion with
//! `benches/readers.rs`: large, realistic synthetic `nsys stats --report
//! nvtx_pushpop_trace` CSVs of JAX/XLA programs.
//!
//! The trace has one main thread (PID = TID = 1000) compiling XLA modules one after the
//! other. Each compilation is a `TSL:XlaCompile` root holding `XlaPassPipeline`s of
//! (sometimes nested) `XlaPass`es, then an `XlaCompileBackend` with autotuning
//! (`XlaAutotunerCompilation` / `XlaAutotunerMeasurement`), memory scheduling, buffer
//! assignment and a parallel-compilation region: a main-thread `XlaEmitLlvmIr` range with
//! no children during which worker threads 1001..=1008 run top-level `XlaOptimizeLlvmIr`,
//! `XlaEmitGpuAsm` and `XlaCompileGpuAsm` ranges. Between compilations the main thread
//! runs `XlaModule` ranges with `Thunk` children (all-reduce thunks call NCCL) and
//! creates cuBLAS handles.
//!
//! The table follows nsys semantics: rows sorted by start (ties: longer first), a range's
//! parent is the innermost range of the same thread containing it, `DurChild` is the sum
//! of the direct children's durations, `RangeId`s are given in row order, `RangeStack` is
//! `:root:…:self` and `NameTree` is the name behind `--` per level.

use std::io::{self, Write};

const PID: u64 = 1000;
const MAIN_TID: u64 = 1000;
const FIRST_WORKER_TID: u64 = 1001;
const WORKERS: u64 = 8;

const HEADER: &str = "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,\
PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n";

const MODULES: &[&str] = &[
    "jit_train_step",
    "jit_eval_step",
    "jit_step",
    "jit_init",
    "pjit_loss_fn",
    "jit__multi_slice",
    "jit_convert_element_type",
    "jit_broadcast_in_dim",
    "jit__where",
    "jit_concatenate",
    "jit_apply_updates",
    "jit_clip_by_global_norm",
];

const PIPELINES: &[&str] = &[
    "optimization",
    "simplification",
    "spmd-partitioner",
    "spmd-simplify",
    "collective-optimizations",
    "layout assignment",
    "post-layout_assignment",
    "fusion",
    "horizontal fusion",
    "post-fusion optimization",
    "remat-pipeline",
    "async-wrapper",
];

const PASSES: &[&str] = &[
    "algsimp",
    "dce",
    "cse",
    "simplify-conditional",
    "call-inliner",
    "tuple-simplifier",
    "reshape-mover",
    "constant_folding",
    "while-loop-simplifier",
    "while-loop-invariant-code-motion",
    "sharding-propagation",
    "layout-assignment",
    "priority-fusion",
    "multi_output_fusion",
    "gemm-rewriter",
    "gemm-fusion",
    "cudnn-fused-convolution-rewriter",
    "sort-simplifier",
    "transpose-folding",
    "dot_decomposer",
    "all-reduce-combiner",
    "all-gather-combiner",
    "reduce-scatter-creator",
    "copy-insertion",
    "loop-schedule-linearizer",
    "flatten-call-graph",
    "hlo-verifier",
    "zero_sized_hlo_elimination",
    "batchnorm_expander",
    "scatter_simplifier",
];

const THUNK_OPS: &[&str] = &[
    "fusion",
    "loop_fusion",
    "input_fusion",
    "gemm_fusion_dot",
    "cublas-gemm",
    "copy",
    "dynamic-update-slice",
];

/// xorshift64*: tiny, fast and deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        // splitmix64 of the seed, so that small seeds give unrelated streams; never 0.
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng(if z == 0 { 1 } else { z })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True with probability `per_mille / 1000`.
    fn chance(&mut self, per_mille: u64) -> bool {
        self.next() % 1000 < per_mille
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }

    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Log-uniform duration in `lo..hi` nanoseconds: many short ranges, a few long ones.
    fn dur(&mut self, lo: i64, hi: i64) -> i64 {
        let (l, h) = ((lo as f64).ln(), (hi as f64).ln());
        ((l + (h - l) * self.unit()).exp() as i64).max(1)
    }
}

struct Node {
    start: i64,
    end: i64,
    name: String,
    tid: u64,
    parent: Option<u32>,
    depth: u32,
    child_ns: i64,
    children: u32,
    id: u64,
}

/// The ranges of one stretch of the trace, built push/pop style on the main thread
/// (worker ranges are added whole), then sorted and written out.
struct Block {
    nodes: Vec<Node>,
    stack: Vec<u32>,
    t: i64,
}

impl Block {
    fn new(t: i64) -> Block {
        Block {
            nodes: Vec::new(),
            stack: Vec::new(),
            t,
        }
    }

    /// A short gap, so that children lie strictly inside their parents and siblings
    /// never touch.
    fn gap(&mut self, rng: &mut Rng) {
        self.t += rng.range(150, 4_000) as i64;
    }

    fn work(&mut self, rng: &mut Rng, lo: i64, hi: i64) {
        self.t += rng.dur(lo, hi);
    }

    fn open(&mut self, rng: &mut Rng, name: String) {
        self.gap(rng);
        let idx = self.nodes.len() as u32;
        self.nodes.push(Node {
            start: self.t,
            end: 0,
            name,
            tid: MAIN_TID,
            parent: self.stack.last().copied(),
            depth: self.stack.len() as u32,
            child_ns: 0,
            children: 0,
            id: 0,
        });
        self.stack.push(idx);
    }

    fn close(&mut self, rng: &mut Rng) {
        self.gap(rng);
        let idx = self.stack.pop().expect("close matches an open");
        self.nodes[idx as usize].end = self.t;
    }

    fn leaf(&mut self, rng: &mut Rng, name: String, lo: i64, hi: i64) {
        self.open(rng, name);
        self.work(rng, lo, hi);
        self.close(rng);
    }

    /// A top-level range of a worker thread.
    fn worker(&mut self, tid: u64, start: i64, end: i64, name: String) {
        self.nodes.push(Node {
            start,
            end,
            name,
            tid,
            parent: None,
            depth: 0,
            child_ns: 0,
            children: 0,
            id: 0,
        });
    }

    /// Sorts the ranges, numbers them from `next_id` and writes them; returns the bytes
    /// written.
    fn write<W: Write>(
        mut self,
        next_id: &mut u64,
        out: &mut W,
        line: &mut Vec<u8>,
    ) -> io::Result<u64> {
        assert!(self.stack.is_empty(), "block written with open ranges");
        for i in 0..self.nodes.len() {
            if let Some(p) = self.nodes[i].parent {
                let dur = self.nodes[i].end - self.nodes[i].start;
                let p = &mut self.nodes[p as usize];
                p.child_ns += dur;
                p.children += 1;
            }
        }
        let mut order: Vec<u32> = (0..self.nodes.len() as u32).collect();
        order.sort_by_key(|&i| {
            let n = &self.nodes[i as usize];
            (n.start, std::cmp::Reverse(n.end - n.start), n.tid, i)
        });
        for &i in &order {
            self.nodes[i as usize].id = *next_id;
            *next_id += 1;
        }
        let mut written = 0u64;
        let mut stack: Vec<u64> = Vec::new();
        for &i in &order {
            let n = &self.nodes[i as usize];
            line.clear();
            let dur = n.end - n.start;
            push_int(line, n.start);
            line.push(b',');
            push_int(line, n.end);
            line.push(b',');
            push_int(line, dur);
            line.push(b',');
            push_int(line, n.child_ns);
            line.push(b',');
            push_int(line, dur - n.child_ns);
            line.push(b',');
            push_csv(line, "", &n.name);
            line.push(b',');
            push_int(line, PID as i64);
            line.push(b',');
            push_int(line, n.tid as i64);
            line.push(b',');
            push_int(line, i64::from(n.depth));
            line.push(b',');
            push_int(line, i64::from(n.children));
            line.push(b',');
            push_int(line, n.id as i64);
            line.push(b',');
            if let Some(p) = n.parent {
                push_int(line, self.nodes[p as usize].id as i64);
            }
            line.push(b',');
            stack.clear();
            let mut at = Some(i);
            while let Some(a) = at {
                stack.push(self.nodes[a as usize].id);
                at = self.nodes[a as usize].parent;
            }
            for &id in stack.iter().rev() {
                line.push(b':');
                push_int(line, id as i64);
            }
            line.push(b',');
            push_csv(line, &"--".repeat(n.depth as usize), &n.name);
            line.push(b'\n');
            out.write_all(line)?;
            written += line.len() as u64;
        }
        Ok(written)
    }
}

fn push_int(buf: &mut Vec<u8>, v: i64) {
    if v < 0 {
        buf.push(b'-');
    }
    let mut v = v.unsigned_abs();
    let mut digits = [0u8; 20];
    let mut n = 0;
    loop {
        digits[n] = b'0' + (v % 10) as u8;
        n += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend(digits[..n].iter().rev());
}

/// Writes `prefix` + `text` as one CSV field, quoted when it needs to be.
fn push_csv(buf: &mut Vec<u8>, prefix: &str, text: &str) {
    let needs = |s: &str| s.bytes().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'));
    if needs(prefix) || needs(text) {
        buf.push(b'"');
        for b in prefix.bytes().chain(text.bytes()) {
            if b == b'"' {
                buf.push(b'"');
            }
            buf.push(b);
        }
        buf.push(b'"');
    } else {
        buf.extend_from_slice(prefix.as_bytes());
        buf.extend_from_slice(text.as_bytes());
    }
}

/// An `XlaPassPipeline` with its passes and sub-pipelines.
fn pipeline(b: &mut Block, rng: &mut Rng, attrs: &str, depth: u32, size: u64) {
    let name = rng.pick(PIPELINES);
    b.open(rng, format!("TSL:XlaPassPipeline:#name={name},{attrs}#"));
    let n = rng.range(2, 2 + size);
    for _ in 0..n {
        if depth < 2 && rng.chance(120) {
            pipeline(b, rng, attrs, depth + 1, (size / 2).max(2));
            continue;
        }
        let pass = rng.pick(PASSES);
        b.open(rng, format!("TSL:XlaPass:#name={pass},{attrs}#"));
        b.work(rng, 2_000, 400_000);
        if depth < 2 && rng.chance(60) {
            // A fixed-point pass running its own sub-passes.
            for _ in 0..rng.range(1, 3) {
                let sub = rng.pick(PASSES);
                b.leaf(
                    rng,
                    format!("TSL:XlaPass:#name={sub},{attrs}#"),
                    2_000,
                    3_000_000,
                );
            }
        }
        b.work(rng, 1_000, 8_000_000);
        b.close(rng);
    }
    b.close(rng);
}

/// One XLA compilation, `program_id` `program`, of a size class picked at random.
fn compilation(b: &mut Block, rng: &mut Rng, module: &str, program: u64) {
    let size = match rng.range(0, 99) {
        0..=59 => 4,
        60..=89 => 20,
        _ => 80,
    };
    let attrs = format!("module={module},program_id={program}");
    b.open(rng, format!("TSL:XlaCompile:#{attrs}#"));
    b.work(rng, 10_000, 2_000_000);
    for _ in 0..rng.range(2, 5) {
        pipeline(b, rng, &attrs, 0, size);
    }

    b.open(rng, format!("TSL:XlaCompileBackend:#{attrs}#"));
    if rng.chance(400) {
        pipeline(b, rng, &attrs, 1, size / 2);
    }
    // Autotuning of the GEMM fusions: a few candidate configurations compiled each, then
    // measured.
    for _ in 0..rng.range(0, size / 4) {
        let op = format!("gemm_fusion_dot.{}", rng.range(1, 999));
        for _ in 0..rng.range(1, 4) {
            b.open(rng, "TSL:XlaAutotunerCompilation".to_string());
            b.work(rng, 5_000, 500_000);
            for _ in 0..rng.range(1, 2) {
                b.leaf(
                    rng,
                    format!("TSL:XlaEmitLlvmIr:#module={op}#"),
                    50_000,
                    5_000_000,
                );
            }
            b.work(rng, 50_000, 20_000_000);
            b.close(rng);
        }
        b.leaf(
            rng,
            format!("TSL:XlaAutotunerMeasurement:#hlo_op={op}#"),
            100_000,
            30_000_000,
        );
    }
    b.leaf(
        rng,
        format!("TSL:XlaMemoryScheduler:#module={module}#"),
        50_000,
        50_000_000,
    );
    b.leaf(
        rng,
        format!("TSL:XlaBufferAssignment:#module={module}#"),
        20_000,
        20_000_000,
    );

    // Parallel compilation: the main thread waits in XlaEmitLlvmIr while the workers
    // optimise the LLVM IR of each split module and compile it to a GPU binary.
    b.open(rng, format!("TSL:XlaEmitLlvmIr:#module={module}#"));
    let t0 = b.t;
    let mut t_end = t0 + 1;
    let workers = rng.range(2, WORKERS);
    for w in 0..workers {
        let tid = FIRST_WORKER_TID + w;
        let mut t = t0 + rng.range(1_000, 60_000) as i64;
        for _ in 0..rng.range(1, 1 + size / 4) {
            for (kind, lo, hi) in [
                ("XlaOptimizeLlvmIr", 100_000, 80_000_000),
                ("XlaEmitGpuAsm", 100_000, 40_000_000),
                ("XlaCompileGpuAsm", 200_000, 200_000_000),
            ] {
                t += rng.range(500, 20_000) as i64;
                let start = t;
                t += rng.dur(lo, hi);
                b.worker(tid, start, t, format!("TSL:{kind}:#module={module}#"));
            }
        }
        t_end = t_end.max(t);
    }
    b.t = t_end;
    b.close(rng);
    b.work(rng, 5_000, 1_000_000);
    b.close(rng); // XlaCompileBackend

    b.work(rng, 5_000, 500_000);
    b.close(rng); // XlaCompile
}

/// What runs between compilations: executions of compiled modules (thunks, NCCL
/// collectives) and cuBLAS handle creation.
fn between(b: &mut Block, rng: &mut Rng, compiled: &[(String, u64)]) {
    for _ in 0..rng.range(0, 3) {
        b.t += rng.dur(10_000, 5_000_000);
        if rng.chance(150) {
            b.leaf(rng, "cuBLAS:cublasCreate_v2".to_string(), 50_000, 3_000_000);
        }
        if rng.chance(100) {
            b.leaf(rng, "NCCL:ncclAllReduce".to_string(), 5_000, 500_000);
        }
        let (module, program) = &compiled[rng.range(0, compiled.len() as u64 - 1) as usize];
        b.open(
            rng,
            format!("TSL:XlaModule:#hlo_module={module},program_id={program}#"),
        );
        for _ in 0..rng.range(3, 60) {
            if rng.chance(80) {
                let op = format!("all-reduce.{}", rng.range(1, 99));
                b.open(rng, format!("TSL:Thunk:#hlo_op={op}#"));
                b.leaf(rng, "NCCL:ncclAllReduce".to_string(), 5_000, 2_000_000);
                b.close(rng);
            } else {
                let op = rng.pick(THUNK_OPS);
                let n = rng.range(1, 400);
                b.leaf(rng, format!("TSL:Thunk:#hlo_op={op}.{n}#"), 2_000, 300_000);
            }
        }
        b.close(rng);
    }
}

/// When to stop writing.
pub enum Until {
    /// After this many compilations.
    Compilations(u64),
    /// After the compilation that brings the output to at least this many bytes.
    Bytes(u64),
}

/// Writes the CSV to `out` (buffer it: rows are written one at a time); the same
/// arguments always give the same bytes. Returns the bytes written.
pub fn generate<W: Write>(mut out: W, until: Until, seed: u64) -> io::Result<u64> {
    let mut rng = Rng::new(seed);
    out.write_all(HEADER.as_bytes())?;
    let mut written = HEADER.len() as u64;
    let mut line = Vec::with_capacity(512);
    let mut next_id = 1u64;
    let mut t: i64 = 1_000_000_000 + rng.range(0, 999_999_999) as i64;
    let mut compiled: Vec<(String, u64)> = Vec::new();
    let mut count = 0u64;
    loop {
        match until {
            Until::Compilations(n) if count >= n => break,
            Until::Bytes(n) if written >= n => break,
            _ => {}
        }
        let mut b = Block::new(t);
        if count == 0 {
            b.leaf(
                &mut rng,
                "cuBLAS:cublasCreate_v2".to_string(),
                100_000,
                5_000_000,
            );
        }
        let module = rng.pick(MODULES);
        let program = count + 1;
        compilation(&mut b, &mut rng, module, program);
        compiled.push((module.to_string(), program));
        between(&mut b, &mut rng, &compiled);
        t = b.t + rng.dur(1_000, 2_000_000);
        written += b.write(&mut next_id, &mut out, &mut line)?;
        count += 1;
    }
    out.flush()?;
    Ok(written)
}
