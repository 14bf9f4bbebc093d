//! njx-ranges: property tests on generated trees (after any filter the output is a
//! consistent tree whose child times add up), the splice rule on a known profile, and
//! the CLI's error paths.

use crate::common::*;
use njx::derived::trees::{Filters, Matcher, TreeBuilder};
use njx::records::Range;
use proptest::prelude::*;
use regex::Regex;
use std::collections::HashMap;
use std::sync::Arc;

/// A tiny deterministic generator, so a failing case reproduces from its seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const NAMES: &[&str] = &[
    "TSL:XlaPass:#name=algsimp,module=m,program_id=1#",
    "TSL:XlaPassPipeline:#name=opt,module=m,program_id=1#",
    "TSL:XlaAutotunerCompilation",
    "TSL:XlaAutotunerMeasurement:#hlo_op=fusion.1#",
    "TSL:XlaEmitLlvmIr:#module=m#",
    "cuBLAS:cublasCreate_v2",
    "NCCL:ncclAllReduce",
];

/// Fills `[start, end)` on `tid` with disjoint child ranges, recursively.
fn fill(
    rng: &mut Rng,
    out: &mut Vec<(u64, i64, i64, String)>,
    tid: u64,
    start: i64,
    end: i64,
    depth: u32,
) {
    if depth > 4 || end - start < 4 {
        return;
    }
    let mut t = start + rng.below(3) as i64;
    let n = rng.below(4);
    for _ in 0..n {
        if end - t < 3 {
            break;
        }
        let s = t + rng.below(((end - t) / 3) as u64) as i64;
        let e = s + 1 + rng.below((end - s - 1) as u64) as i64;
        let name = NAMES[rng.below(NAMES.len() as u64) as usize].to_string();
        out.push((tid, s, e, name));
        fill(rng, out, tid, s, e, depth + 1);
        t = e;
    }
}

/// A generated profile: compilations on thread 1 with parallel worker threads 2–4, as
/// records carrying the fields nsys computes (parents on the same thread only).
fn generate(seed: u64) -> Vec<Range> {
    let mut rng = Rng(seed | 1);
    let mut spans: Vec<(u64, i64, i64, String)> = Vec::new();
    let mut t = 0i64;
    for c in 0..1 + rng.below(3) {
        let (s, e) = (t + 5, t + 200 + rng.below(200) as i64);
        spans.push((
            1,
            s,
            e,
            format!("TSL:XlaCompile:#module=m{c},program_id={c}#"),
        ));
        // One launcher with a parallel region, the rest ordinary children.
        let (ls, le) = (s + 10, s + 10 + (e - s - 20) / 2);
        spans.push((1, ls, le, "TSL:XlaCompileBackend:#module=m#".into()));
        fill(&mut rng, &mut spans, 1, le + 1, e - 1, 1);
        for w in 0..rng.below(4) {
            let ws = ls + 1 + rng.below(((le - ls) / 2) as u64) as i64;
            let we = ws + 1 + rng.below((le - ws - 2).max(1) as u64) as i64;
            if we >= le {
                continue;
            }
            let tid = 2 + w;
            spans.push((tid, ws, we, "TSL:XlaCompileGpuAsm:#module=m#".into()));
            fill(&mut rng, &mut spans, tid, ws, we, 1);
        }
        t = e + 1 + rng.below(20) as i64;
    }
    // Ranges outside any compilation.
    spans.push((1, t + 5, t + 50, "TSL:XlaModule:#module=m#".into()));
    fill(&mut rng, &mut spans, 1, t + 5, t + 50, 1);
    spans.sort_by_key(|&(_, s, e, _)| (s, -e));
    // nsys semantics: parent = innermost containing range on the same thread.
    let mut out: Vec<Range> = Vec::new();
    let mut stacks: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, (tid, s, e, name)) in spans.into_iter().enumerate() {
        let stack = stacks.entry(tid).or_default();
        while let Some(&top) = stack.last() {
            if out[top].end_ns >= e && out[top].start_ns <= s {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().copied();
        if let Some(p) = parent {
            out[p].children += 1;
            out[p].child_ns += e - s;
            out[p].self_ns -= e - s;
        }
        out.push(Range {
            profile: Arc::from("gen"),
            pid: Some(9),
            tid,
            id: i as u64 + 1,
            parent: parent.map(|p| out[p].id),
            depth: stack.len() as u32,
            start_ns: s,
            end_ns: e,
            dur_ns: e - s,
            child_ns: 0,
            self_ns: e - s,
            children: 0,
            name,
        });
        stack.push(i);
    }
    out
}

fn apply(filters: &Filters, input: &[Range]) -> Vec<Range> {
    let mut out = Vec::new();
    let mut builder = TreeBuilder::new(filters.clone());
    let mut sink = |forest: Vec<Range>| -> njx::Result<()> {
        out.extend(forest);
        Ok(())
    };
    for r in input {
        builder.push(r.clone(), &mut sink).unwrap();
    }
    builder.finish(&mut sink).unwrap();
    out
}

/// The tree invariants, checked by brute force (time unit by time unit).
fn check_tree(input: &[Range], out: &[Range]) -> Result<(), TestCaseError> {
    let ids: HashMap<u64, &Range> = input.iter().map(|r| (r.id, r)).collect();
    let mut seen: HashMap<u64, usize> = HashMap::new();
    for (i, r) in out.iter().enumerate() {
        prop_assert!(seen.insert(r.id, i).is_none(), "duplicate id {}", r.id);
        let orig = ids.get(&r.id).expect("output ids come from the input");
        prop_assert_eq!(
            (r.start_ns, r.end_ns, &r.name),
            (orig.start_ns, orig.end_ns, &orig.name)
        );
        match r.parent {
            None => prop_assert_eq!(r.depth, 0),
            Some(p) => {
                let &pi = seen.get(&p).expect("parent listed before its child");
                let parent = &out[pi];
                prop_assert_eq!(r.depth, parent.depth + 1);
                prop_assert!(parent.start_ns <= r.start_ns && r.end_ns <= parent.end_ns);
            }
        }
    }
    for r in out {
        let kids: Vec<&Range> = out.iter().filter(|k| k.parent == Some(r.id)).collect();
        prop_assert_eq!(r.children as usize, kids.len());
        let (mut lo, mut hi) = (i64::MAX, i64::MIN);
        for k in kids.iter().filter(|k| k.tid != r.tid) {
            lo = lo.min(k.start_ns);
            hi = hi.max(k.end_ns);
        }
        let covered = (r.start_ns..r.end_ns)
            .filter(|&t| {
                (lo <= t && t < hi)
                    || kids
                        .iter()
                        .any(|k| k.tid == r.tid && k.start_ns <= t && t < k.end_ns)
            })
            .count() as i64;
        prop_assert_eq!(r.child_ns, covered, "range {}", r.id);
        prop_assert_eq!(r.self_ns, r.dur_ns - r.child_ns);
        prop_assert!(r.self_ns >= 0);
    }
    Ok(())
}

fn filters_from(choice: u8) -> Filters {
    let re = |s: &str| Matcher::Regex(Regex::new(s).unwrap());
    let mut f = Filters {
        splice: choice & 1 != 0,
        ..Filters::default()
    };
    if choice & 2 != 0 {
        f.subtree.push(re("^TSL:XlaCompile:"));
    }
    if choice & 4 != 0 {
        f.select.push(re("^TSL:"));
    }
    if choice & 8 != 0 {
        f.fold.push(re("Pipeline|cuBLAS"));
    }
    if choice & 16 != 0 {
        f.collapse.push(re("Autotuner|EmitLlvmIr"));
    }
    if choice & 32 != 0 {
        f.add_xla_compile();
    }
    f
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn filters_keep_a_consistent_tree(seed in any::<u64>(), choice in 0u8..64) {
        let input = generate(seed);
        let filters = filters_from(choice);
        let out = apply(&filters, &input);
        check_tree(&input, &out)?;
        // Applying the same filters again changes nothing.
        let again = apply(&filters, &out);
        prop_assert_eq!(&again, &out);
    }

    #[test]
    fn no_filter_keeps_every_record_as_nsys_computed_it(seed in any::<u64>()) {
        let input = generate(seed);
        let mut out = apply(&Filters::default(), &input);
        out.sort_by_key(|r| r.id);
        prop_assert_eq!(out, input);
    }

    #[test]
    fn xla_compile_keeps_only_compilations_and_their_time(seed in any::<u64>()) {
        let input = generate(seed);
        let mut f = Filters::default();
        f.add_xla_compile();
        let out = apply(&f, &input);
        let compile_wall: i64 = input
            .iter()
            .filter(|r| r.name.starts_with("TSL:XlaCompile:"))
            .map(|r| r.dur_ns)
            .sum();
        let roots: Vec<&Range> = out.iter().filter(|r| r.parent.is_none()).collect();
        prop_assert!(roots.iter().all(|r| r.name.starts_with("TSL:XlaCompile:")));
        prop_assert!(out.iter().all(|r| r.name.starts_with("TSL:")));
        // Every worker range inside a compilation was spliced in.
        prop_assert!(out.iter().filter(|r| r.tid != 1).all(|r| r.parent.is_some()));
        prop_assert_eq!(roots.iter().map(|r| r.dur_ns).sum::<i64>(), compile_wall);
    }
}

#[test]
fn workers_splice_under_the_deepest_enclosing_compiling_range() {
    let dir = tempdir();
    let path = write(dir.path(), "t.csv", COMPILE_CSV.as_bytes());
    let out = json_lines(&ok("njx-ranges", &["--xla-compile", &path]));
    let by_id = |id: u64| out.iter().find(|r| r["id"] == id).unwrap();
    let ids: Vec<u64> = out.iter().map(|r| r["id"].as_u64().unwrap()).collect();
    // XlaCompile tree only, cuBLAS folded, autotuner detail (7) collapsed, pre-order.
    assert_eq!(ids, vec![2, 3, 4, 5, 6, 8, 10]);
    assert_eq!(by_id(8)["parent"], 5);
    assert_eq!(by_id(10)["parent"], 5);
    assert_eq!(by_id(8)["depth"], 2);
    // XlaCompileBackend: autotuner 80 ms plus the 400 ms parallel span.
    assert_eq!(by_id(5)["children"], 3);
    assert_eq!(by_id(5)["child_ns"], 480_000_000);
    assert_eq!(by_id(5)["self_ns"], 320_000_000);
    // The folded cuBLAS range's time is its parent's self time.
    assert_eq!(by_id(8)["children"], 0);
    assert_eq!(by_id(8)["self_ns"], 400_000_000);
    assert_eq!(by_id(6)["self_ns"], 80_000_000);
}

#[test]
fn select_subtree_collapse_and_fold_from_the_command_line() {
    let dir = tempdir();
    let path = write(dir.path(), "t.csv", COMPILE_CSV.as_bytes());
    let ids = |args: &[&str]| -> Vec<u64> {
        let mut a = args.to_vec();
        a.push(&path);
        json_lines(&ok("njx-ranges", &a))
            .iter()
            .map(|r| r["id"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(ids(&["--select", "Pass"]), vec![3, 4]);
    assert_eq!(ids(&["--subtree", "^TSL:XlaPassPipeline"]), vec![3, 4]);
    assert_eq!(
        ids(&["--collapse", "XlaCompile:", "--subtree", "XlaCompile:"]),
        vec![2]
    );
    assert_eq!(
        ids(&["--fold", "^TSL:XlaCompile:"]),
        vec![1, 3, 4, 5, 6, 7, 11, 8, 9, 10, 12]
    );
    let out = json_lines(&ok("njx-ranges", &["--fold", "^TSL:XlaCompile:", &path]));
    let pipeline = out.iter().find(|r| r["id"] == 3).unwrap();
    assert_eq!(pipeline["parent"], serde_json::Value::Null);
    assert_eq!(pipeline["depth"], 0);
}

#[test]
fn bad_patterns_and_unordered_input_are_refused() {
    let out = run("njx-ranges", &["--select", "("], b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--select"));
    // A child listed before its parent.
    let dir = tempdir();
    let path = write(dir.path(), "t.csv", COMPILE_CSV.as_bytes());
    let records = ok("njx-export", &[&path]);
    let mut lines: Vec<&str> = records.lines().collect();
    lines.swap(2, 3);
    let out = run("njx-ranges", &[], (lines.join("\n") + "\n").as_bytes());
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("range 4") && err.contains("parent 3"), "{err}");
    // A malformed record names its line.
    let out = run("njx-ranges", &[], b"{\"profile\":\"x\"}\n");
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-:1"));
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn xla_compile_on_the_real_profile_is_idempotent_and_consistent() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archive = dir.join("pax_fsdp4_4proc_proc0.zip");
    let once = ok("njx-ranges", &["--xla-compile", archive.to_str().unwrap()]);
    let twice = run("njx-ranges", &["--xla-compile"], once.as_bytes());
    assert!(twice.status.success());
    assert_eq!(String::from_utf8(twice.stdout).unwrap(), once);
    let recs = json_lines(&once);
    let roots: Vec<_> = recs.iter().filter(|r| r["parent"].is_null()).collect();
    assert_eq!(roots.len(), 17);
    let wall: i64 = roots.iter().map(|r| r["dur_ns"].as_i64().unwrap()).sum();
    assert_eq!(wall, 69_388_404_880);
    assert!(recs.iter().all(|r| r["self_ns"].as_i64().unwrap() >= 0));
}

#[test]
fn trees_nested_100000_deep_do_not_overflow_the_stack() {
    // One range inside the other, 100,000 deep: walked with a stack of its own.
    let n = 100_000i64;
    let mut csv = String::from(
        "Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree\n",
    );
    for i in 0..n {
        let (s, e) = (i, 2 * n - i);
        let last = i == n - 1;
        let child = if last { 0 } else { e - s - 2 };
        let parent = if i == 0 { String::new() } else { i.to_string() };
        csv += &format!(
            // No RangeStack: the real one would take O(depth²) bytes.
            "{s},{e},{},{child},{},r{i},1,1,{i},{},{},{parent},,r{i}\n",
            e - s,
            e - s - child,
            u8::from(!last),
            i + 1
        );
    }
    let dir = tempdir();
    let path = write(dir.path(), "deep.csv", csv.as_bytes());
    let out = run("njx-ranges", &["--fold", "^r5", &path], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let records = json_lines(&String::from_utf8_lossy(&out.stdout));
    // r5, r50..r59, r500..r599, … are folded into their parents.
    let folded = (0..n).filter(|i| i.to_string().starts_with('5')).count();
    assert_eq!(records.len(), n as usize - folded);
    let deepest = records.iter().map(|r| r["depth"].as_u64().unwrap()).max();
    assert_eq!(deepest, Some((n as usize - folded - 1) as u64));
    let out = run("njx-compile-summary", &[&path], b"");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// XLA since 2026 runs main-thread compilation passes that overlap the parallel workers'
/// compilation (NVIDIA/JAX-Toolbox PR #2296, where nsys-jax's splice failed on it): a
/// pass on the compiling thread, 300–890 ms, over both workers. Each worker goes under
/// the deepest main-thread range that strictly encloses it, no self time is negative, and
/// the compilation's categories still add up to its wall time.
#[test]
fn workers_overlapping_main_thread_passes_splice_without_losing_time() {
    let mut lines: Vec<String> = COMPILE_CSV.lines().map(str::to_string).collect();
    // XlaCompileBackend gains the pass as a third child.
    let backend = lines
        .iter()
        .position(|l| l.contains("\"TSL:XlaCompileBackend"))
        .unwrap();
    lines[backend] = lines[backend]
        .replace(
            "800000000,130000000,670000000,",
            "800000000,720000000,80000000,",
        )
        .replace(",7,1,1,2,5,2,:2:5,", ",7,1,1,3,5,2,:2:5,");
    let worker = lines
        .iter()
        .position(|l| l.starts_with("300000000,700000000"))
        .unwrap();
    lines.insert(
        worker,
        "300000000,890000000,590000000,0,590000000,\"TSL:XlaPass:#name=overlap,module=jit_f,\
         program_id=3#\",7,1,2,0,13,5,:2:5:13,\"----TSL:XlaPass:#name=overlap,module=jit_f,\
         program_id=3#\""
            .into(),
    );
    let dir = tempdir();
    let path = write(
        dir.path(),
        "overlap.csv",
        (lines.join("\n") + "\n").as_bytes(),
    );
    let out = json_lines(&ok("njx-ranges", &["--xla-compile", &path]));
    let by_id = |id: u64| out.iter().find(|r| r["id"] == id).unwrap();
    // The worker inside the pass goes under it; the one starting with it, beside it.
    assert_eq!(by_id(10)["parent"], 13);
    assert_eq!(by_id(8)["parent"], 5);
    assert!(out.iter().all(|r| r["self_ns"].as_i64().unwrap() >= 0));
    // The summary's categories add up to the compilation's wall time: the parallel span
    // is shared out, nothing counted twice or lost.
    let summary = json_lines(&ok("njx-compile-summary", &["--format", "json", &path]));
    let total: i64 = summary.iter().map(|r| r["self_ns"].as_i64().unwrap()).sum();
    assert_eq!(total, 1_000_000_000);
    assert!(summary.iter().all(|r| r["self_ns"].as_i64().unwrap() >= 0));
}
