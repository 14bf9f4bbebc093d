//! Module and thunk executions: the derivation rules on hand-made projected ranges (in
//! process), and the peer's published figures on the real pax profiles (through the
//! built binaries).

use crate::common::*;
use njx::derived::executions::derive::{
    self, CollectiveSchedule, Comm, ProgramInfo, mark_warmup, split_hidden,
};
use njx::derived::executions::{Executions, align_clocks};
use njx::records::{GpuRange, Reconstructed, Thunk};
use njx::source::devices::{Launcher, Launchers};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Program 7 (`jit_step`) has fingerprint `f7`; its `all-reduce.1` is communication.
struct Fake;
impl ProgramInfo for Fake {
    fn program_key(&mut self, program_id: Option<u64>, _name: &str) -> njx::Result<String> {
        Ok(program_id.map_or("unknown".into(), |id| format!("f{id}")))
    }
    fn communication(&mut self, _: u64, _: &str, instruction: &str) -> njx::Result<Option<Comm>> {
        Ok(instruction.starts_with("all-reduce").then(|| Comm {
            collective: "all-reduce".into(),
            group_size: 2,
            message_bytes: 4096,
        }))
    }
    fn instruction_id(
        &mut self,
        _: u64,
        _: &str,
        instruction: &str,
    ) -> njx::Result<Option<Option<i64>>> {
        // Every instruction `NAME.N` has unique id N.
        Ok(Some(
            instruction
                .rsplit_once('.')
                .and_then(|(_, n)| n.parse().ok()),
        ))
    }
    fn collective_schedule(&mut self, _: u64, _: &str) -> njx::Result<CollectiveSchedule> {
        Ok(CollectiveSchedule::Known(vec![
            (
                "all-reduce.1".into(),
                Fake.communication(7, "", "all-reduce.1")?.unwrap(),
            ),
            (
                "all-reduce.2".into(),
                Fake.communication(7, "", "all-reduce.2")?.unwrap(),
            ),
        ]))
    }
}

fn gr(
    id: u64,
    parent: Option<u64>,
    tid: u64,
    name: &str,
    start: i64,
    dur: i64,
    ops: u64,
) -> GpuRange {
    GpuRange {
        profile: Arc::from("p"),
        pid: Some(1),
        tid,
        id,
        parent,
        depth: 0,
        children: 0,
        name: name.to_string(),
        start_ns: start,
        dur_ns: dur,
        cpu_start_ns: None,
        cpu_dur_ns: None,
        gpu_ops: Some(ops),
        device: None,
        stream: None,
    }
}

const STEP: &str = "TSL:XlaModule:#hlo_module=jit_step,program_id=7#";

/// Three executions of jit_step on the main thread (1) and a cut-short fourth; an
/// early thunk; NCCL between a module and its thunk; a thunk with a thunk inside.
fn profile() -> Vec<GpuRange> {
    let mut r = vec![gr(1, None, 1, "TSL:Thunk:#hlo_op=early.1#", 0, 5, 1)];
    let mut id = 10;
    for e in 0..4i64 {
        let t0 = 100 + e * 1000;
        let m = id;
        let ops = if e == 3 { 1 } else { 10 + e as u64 };
        r.push(gr(m, None, 1, STEP, t0, 500, ops));
        r.push(gr(
            m + 1,
            Some(m),
            1,
            "TSL:Thunk:#hlo_op=fusion.1#",
            t0,
            200,
            1,
        ));
        r.push(gr(
            m + 2,
            Some(m),
            1,
            "NCCL:ncclAllReduce",
            t0 + 100,
            300,
            1,
        ));
        r.push(gr(
            m + 3,
            Some(m + 2),
            1,
            "TSL:Thunk:#hlo_op=all-reduce.1#",
            t0 + 150,
            150,
            1,
        ));
        r.push(gr(
            m + 4,
            Some(m),
            1,
            "TSL:Thunk:#name=cb,hlo_op=command_buffer#",
            t0 + 320,
            100,
            1,
        ));
        r.push(gr(
            m + 5,
            Some(m + 4),
            1,
            "TSL:Thunk:#hlo_op=fusion.2#",
            t0 + 330,
            80,
            1,
        ));
        id += 10;
    }
    r
}

#[test]
fn derivation_follows_nsys_jax() {
    let launchers = Launchers::Named(vec![Launcher {
        pid: 1,
        tid: 99,
        device: 3,
    }]);
    let d = derive::derive(
        &Arc::from("p"),
        "p",
        &profile(),
        &launchers,
        &mut || Ok(0),
        &mut Fake,
    )
    .unwrap();
    // The cut-short fourth execution and the early thunk are gone, and said so.
    assert_eq!(d.modules.len(), 3);
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("ignored 1 thunks that start before"))
    );
    assert!(
        d.notes
            .iter()
            .any(|n| n.contains("dropped the last execution"))
    );
    for (e, m) in d.modules.iter().enumerate() {
        assert_eq!(
            (m.program.as_str(), m.program_id, m.name.as_str()),
            ("f7", Some(7), "jit_step")
        );
        // The main thread of a one-device process runs on the first launcher's device.
        assert_eq!((m.execution, m.device, m.thunks), (e as u32, 3, 3));
    }
    let names: Vec<&str> = d.thunks[..3].iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["fusion.1", "all-reduce.1", "fusion.2"]);
    let ar = &d.thunks[1];
    // all-reduce [t0+150, t0+300) overlaps fusion.1 [t0, t0+200) by 50.
    assert!(ar.comm);
    assert_eq!((ar.hidden_ns, ar.dur_ns), (50, 100));
    assert_eq!(
        (ar.collective.as_deref(), ar.group_size, ar.message_bytes),
        (Some("all-reduce"), Some(2), Some(4096))
    );
    assert_eq!(d.thunks.iter().filter(|t| t.execution == 2).count(), 3);
}

#[test]
fn warmup_marks_compiled_programs_and_one_more_with_communication() {
    // No launcher names: the one thread is the first device of process 2.
    let d = derive::derive(
        &Arc::from("p"),
        "p",
        &profile(),
        &Launchers::None,
        &mut || Ok(2),
        &mut Fake,
    )
    .unwrap();
    assert!(
        d.once
            .iter()
            .any(|n| n.contains("inferred from thread order"))
    );
    assert!(d.modules.iter().all(|m| m.device == 2));
    let warm = |compiled: bool, comm: bool| -> Vec<bool> {
        let (mut m, mut t) = (d.modules.clone(), d.thunks.clone());
        let set: HashSet<String> = if compiled {
            HashSet::from(["f7".to_string()])
        } else {
            HashSet::new()
        };
        mark_warmup(&mut m, &mut t, &set, comm, &mut Vec::new());
        assert!(t.iter().all(|t| t.warmup == m[t.execution as usize].warmup));
        m.iter().map(|m| m.warmup).collect()
    };
    assert_eq!(warm(false, false), [false, false, false]);
    assert_eq!(warm(true, false), [true, false, false]);
    assert_eq!(warm(true, true), [true, true, false]);
    assert_eq!(warm(false, true), [true, false, false]);
    // When every execution falls under the threshold, all count as steady state.
    let (mut m, mut t) = (d.modules.clone(), d.thunks.clone());
    let mut notes = Vec::new();
    let set = HashSet::from(["f7".to_string()]);
    m.iter_mut().for_each(|m| m.execution = 0);
    t.iter_mut().for_each(|t| t.execution = 0);
    mark_warmup(&mut m, &mut t, &set, true, &mut notes);
    assert!(m.iter().all(|m| !m.warmup) && notes.len() == 1);
}

fn thunk(device: u32, name: &str, start: i64, dur: i64, comm: bool) -> Thunk {
    Thunk {
        profile: Arc::from("p"),
        program: "f7".into(),
        program_id: Some(7),
        module: "jit_step".into(),
        execution: 0,
        device,
        name: name.into(),
        thunk_execution: 0,
        start_ns: start,
        dur_ns: dur,
        hidden_ns: 0,
        comm,
        warmup: false,
        collective: comm.then(|| "all-reduce".into()),
        group_size: comm.then_some(2),
        message_bytes: comm.then_some(8),
        reconstructed: None,
        autotuning: false,
    }
}

#[test]
fn hidden_time_sums_the_overlaps_with_compute_on_the_same_device() {
    let mut t = vec![
        thunk(0, "ar", 100, 100, true),
        thunk(0, "f1", 50, 80, false),   // overlaps 30
        thunk(0, "f2", 150, 20, false),  // overlaps 20
        thunk(0, "f3", 190, 100, false), // overlaps 10
        thunk(0, "ag", 120, 10, true),   // communication does not hide communication
        thunk(1, "f4", 100, 100, false), // another device
    ];
    split_hidden(&mut t);
    assert_eq!((t[0].hidden_ns, t[0].dur_ns), (60, 40));
    assert_eq!((t[4].hidden_ns, t[4].dur_ns), (10, 0));
    assert_eq!(t[1].hidden_ns, 0);
}

#[test]
fn clocks_align_on_the_median_end_time_skew() {
    let mut all = Executions::default();
    // Device 1 ends each collective 30 ns after device 0 but one outlier: median skew
    // is +15 for device 1 and -15 for device 0.
    for (k, extra) in [0i64, 0, 1000].iter().enumerate() {
        let base = 1000 * k as i64;
        let mut a = thunk(0, "ar", base, 100, true);
        let mut b = thunk(1, "ar", base + 30 + extra, 100, true);
        a.thunk_execution = k as u32;
        b.thunk_execution = k as u32;
        all.thunks.push(a);
        all.thunks.push(b);
    }
    let c = align_clocks(&mut all).unwrap();
    assert_eq!(c[&0], -15.0);
    assert_eq!(c[&1], 15.0);
    assert_eq!(all.thunks[0].start_ns, 15);
    assert_eq!(all.thunks[1].start_ns, 15);
    // One device only: nothing to align.
    let mut one = Executions::default();
    one.thunks.push(thunk(0, "ar", 0, 10, true));
    assert!(align_clocks(&mut one).is_none());
}

#[test]
fn njx_modules_summarises_module_records() {
    let rec = |exec: u32, dur: i64, warmup: bool, program: &str| {
        serde_json::json!({"profile":"p","program":program,"program_id":7,"name":"jit_step",
            "execution":exec,"device":0,"start_ns":0,"dur_ns":dur,"thunks":3,"warmup":warmup})
        .to_string()
    };
    let input = [
        rec(0, 1000, true, "f7"),
        rec(1, 10, false, "f7"),
        rec(2, 20, false, "f7"),
        rec(0, 5, false, "unknown"),
    ]
    .join("\n");
    let out = run("njx-modules", &["--format", "json"], input.as_bytes());
    assert!(out.status.success());
    let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["executions"], 2);
    assert_eq!(rows[0]["dur_mean_ns"], 15);
    // sqrt(50) = 7.07, to the nearest nanosecond.
    assert_eq!(rows[0]["dur_std_ns"], 7);
    assert_eq!(rows[0]["percent"], 100.0);
    let out = run(
        "njx-modules",
        &[
            "--format",
            "json",
            "--include-warmup",
            "--include-autotuning",
        ],
        input.as_bytes(),
    );
    let rows = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["executions"], 3);
    let out = run("njx-modules", &[], b"not records\n");
    assert_eq!(out.status.code(), Some(1));
}

fn pax() -> Option<(Vec<String>, Value)> {
    let dir = shared_data("pax_fsdp4_4proc")?;
    let paths = pax_archives(&dir);
    let text = std::fs::read_to_string(dir.join("reference-nsys-jax.json")).unwrap();
    Some((paths, serde_json::from_str(&text).unwrap()))
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-12)
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn four_processes_match_the_peers_raw_counts_and_times() {
    let Some((paths, reference)) = pax() else {
        return;
    };
    let mut args = vec!["--table", "thunks"];
    args.extend(paths.iter().map(String::as_str));
    let out = run("njx-export", &args, b"");
    assert!(out.status.success());
    let thunks = json_lines(&String::from_utf8(out.stdout).unwrap());
    let reference = &reference["combined_4proc"];
    let raw = &reference["raw_thunks"];
    assert_eq!(thunks.len() as u64, raw["count"].as_u64().unwrap());
    let comm = thunks.iter().filter(|t| t["comm"] == true).count() as u64;
    assert_eq!(
        comm,
        reference["raw_counts"]["communication"].as_u64().unwrap()
    );
    let sum: i64 = thunks.iter().map(|t| t["dur_ns"].as_i64().unwrap()).sum();
    let hidden: i64 = thunks
        .iter()
        .map(|t| t["hidden_ns"].as_i64().unwrap())
        .sum();
    assert!(close(
        sum as f64 / 1e6,
        raw["sum_ms"].as_f64().unwrap(),
        1e-6
    ));
    assert!(close(
        hidden as f64 / 1e6,
        raw["hidden_sum_ms"].as_f64().unwrap(),
        1e-6
    ));
    // Clock alignment: the peer's corrections, in ms, device by device.
    let err = String::from_utf8(out.stderr).unwrap();
    for (device, ms) in reference["alignment_ms"].as_object().unwrap() {
        let line = err
            .lines()
            .find(|l| l.contains(&format!("device {device} corrected by")))
            .unwrap_or_else(|| panic!("no correction for device {device}: {err}"));
        let got: f64 = line
            .rsplit(" by ")
            .next()
            .unwrap()
            .trim_end_matches(" ms")
            .parse()
            .unwrap();
        let want = -ms.as_f64().unwrap();
        assert!(
            (got - want).abs() < 1e-5,
            "device {device}: {got} vs {want}"
        );
    }
    let mut args = vec!["--table", "modules"];
    args.extend(paths.iter().map(String::as_str));
    let modules = json_lines(&ok("njx-export", &args));
    assert_eq!(
        modules.len() as u64,
        reference["raw_counts"]["module"].as_u64().unwrap()
    );
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn steady_state_summary_matches_the_peer() {
    let Some((paths, reference)) = pax() else {
        return;
    };
    let mut args = vec!["--format", "json"];
    args.extend(paths.iter().map(String::as_str));
    let rows = json_lines(&ok("njx-modules", &args));
    let steady = reference["combined_4proc"]["steady_modules"]
        .as_object()
        .unwrap();
    assert_eq!(rows.len(), steady.len());
    for r in &rows {
        let want = &steady[r["program"].as_str().unwrap()];
        assert_eq!(r["executions"], want["count"]);
        assert_eq!(r["name"], want["name"]);
        // The records write the nearest nanosecond.
        let ns = |ms: f64| Value::from((ms * 1e6).round() as i64);
        let mean = want["dur_mean_ms"].as_f64().unwrap();
        assert_eq!(r["dur_mean_ns"], ns(mean), "{r}");
        match want["dur_std_ms"].as_f64() {
            Some(s) => assert_eq!(r["dur_std_ns"], ns(s), "{r}"),
            None => assert!(r["dur_std_ns"].is_null()),
        }
        assert_eq!(r["thunks_mean"].as_f64(), want["thunks_mean"].as_f64());
    }
    // The shares of reference-summary.txt.
    let table = ok(
        "njx-modules",
        &paths.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for (program, pct) in [
        ("6f8097e2", "84.046"),
        ("25fa0b3e", "11.951"),
        ("04555b14", "4.003"),
    ] {
        let line = table.lines().find(|l| l.starts_with(program)).unwrap();
        assert!(line.trim_end().ends_with(pct), "{line}");
    }
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn the_step_function_rank_3_compiled_differently_is_reported() {
    let Some((paths, _)) = pax() else {
        return;
    };
    for tool in ["njx-modules", "njx-collectives"] {
        let out = run(
            tool,
            &paths.iter().map(String::as_str).collect::<Vec<_>>(),
            b"",
        );
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        let said: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("compiled differently"))
            .collect();
        assert_eq!(said.len(), 1, "{tool}: {err}");
        assert!(
            said[0].contains(
                "module pjit__wrapped_step_fn was compiled differently across devices: 2 \
                 programs (04555b1419fd4e5b8933dc47fbf80dbb on device 3, \
                 25fa0b3e673a92036f22550cd7bcb068 on devices 0-2)"
            ),
            "{tool}: {}",
            said[0]
        );
    }
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn keyed_by_name_all_four_devices_enter_the_wait_and_straggler_tables() {
    let Some((paths, _)) = pax() else {
        return;
    };
    let mut args = vec!["--program-key", "name", "--format", "json"];
    args.extend(paths.iter().map(String::as_str));
    let out = run("njx-collectives", &args, b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains(
            "module pjit__wrapped_step_fn ran as 2 programs \
             (04555b1419fd4e5b8933dc47fbf80dbb on device 3, \
             25fa0b3e673a92036f22550cd7bcb068 on devices 0-2), analysed together by \
             module name: their collective sequences are identical"
        ),
        "{err}"
    );
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout));
    let stragglers: Vec<&Value> = rows.iter().filter(|r| r["table"] == "stragglers").collect();
    assert_eq!(stragglers.len(), 4);
    assert!(
        stragglers.iter().all(|r| r["instances"] == 72),
        "{stragglers:?}"
    );
    let step: Vec<&Value> = rows
        .iter()
        .filter(|r| r["table"] == "wait" && r["name"] == "pjit__wrapped_step_fn")
        .collect();
    assert_eq!(step.len(), 1);
    assert_eq!(step[0]["program"], "pjit__wrapped_step_fn");
    // Keyed by fingerprint, device 3 runs a program of its own: 3 of its instances.
    let mut args = vec!["--format", "json"];
    args.extend(paths.iter().map(String::as_str));
    let rows = json_lines(&ok("njx-collectives", &args));
    let last: Vec<u64> = rows
        .iter()
        .filter(|r| r["table"] == "stragglers")
        .map(|r| r["instances"].as_u64().unwrap())
        .collect();
    assert_eq!(last, [72, 72, 72, 3]);
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn proc0_alone_matches_the_peers_raw_modules() {
    let Some((paths, reference)) = pax() else {
        return;
    };
    let rows = json_lines(&ok(
        "njx-modules",
        &[
            "--format",
            "json",
            "--include-warmup",
            "--include-autotuning",
            &paths[0],
        ],
    ));
    let raw = reference["proc0"]["raw_modules"].as_object().unwrap();
    let got: HashMap<&str, &Value> = rows
        .iter()
        .map(|r| (r["program"].as_str().unwrap(), r))
        .collect();
    assert_eq!(got.len(), raw.len());
    for (program, want) in raw {
        let r = got[program.as_str()];
        assert_eq!(r["executions"], want["count"], "{program}");
        assert_eq!(r["name"], want["name"], "{program}");
        let n = r["executions"].as_f64().unwrap();
        assert!(close(
            r["dur_sum_ns"].as_f64().unwrap() / 1e6,
            want["sum_ms"].as_f64().unwrap(),
            1e-6
        ));
        assert_eq!(
            (r["thunks_mean"].as_f64().unwrap() * n).round(),
            want["thunks_sum"].as_f64().unwrap()
        );
    }
}

// ------------------------------------------------- the layout of XLA since 2026

/// `gr` with its CPU start.
fn gr_cpu(mut r: GpuRange, cpu_start: i64) -> GpuRange {
    r.cpu_start_ns = Some(cpu_start);
    r
}

/// jit_step (program 7) three times on thread 1 in the 2026 layout, and jit_other
/// (program 8) once with no thunk ranges:
/// - execution 0: `all-reduce.1` at the top level (unique id 1, as the dump says), and
///   `fusion.3` at the top level on thread 2, where no module runs;
/// - execution 1: `all-reduce.1` inside a top-level `async-start` wrapper;
/// - execution 2: no collective thunks, two NCCL ranges, one below the module and one at
///   the top level, launched in the other order than their GPU work starts;
/// - a top-level thunk that no module holds, and one on thread 2 whose unique id is not
///   its instruction's.
fn profile_2026() -> Vec<GpuRange> {
    let mut r = Vec::new();
    for e in 0..3i64 {
        let t0 = 100 + e * 1000;
        let m = 10 + e as u64 * 10;
        r.push(gr(m, None, 1, STEP, t0, 500, 10));
        r.push(gr(
            m + 1,
            Some(m),
            1,
            "TSL:Thunk:#hlo_op=fusion.1,unique_hlo_op_id=1#",
            t0,
            200,
            1,
        ));
        let ar = "TSL:Thunk:#hlo_op=all-reduce.1,unique_hlo_op_id=1#";
        match e {
            0 => {
                r.push(gr(m + 2, None, 1, ar, t0 + 150, 150, 1));
                r.push(gr(
                    m + 3,
                    None,
                    2,
                    "TSL:Thunk:#hlo_op=fusion.3,unique_hlo_op_id=3#",
                    t0 + 310,
                    50,
                    1,
                ));
            }
            1 => {
                r.push(gr(
                    m + 2,
                    None,
                    1,
                    "TSL:Thunk:#hlo_op=async-start.9#",
                    t0 + 150,
                    150,
                    1,
                ));
                r.push(gr(m + 3, Some(m + 2), 1, ar, t0 + 150, 150, 1));
            }
            _ => {
                let nccl = "NCCL:ncclGroupEnd";
                r.push(gr_cpu(gr(m + 2, Some(m), 1, nccl, t0 + 150, 100, 1), 50));
                r.push(gr_cpu(gr(m + 3, None, 1, nccl, t0 + 350, 100, 1), 40));
            }
        }
    }
    r.push(gr(
        40,
        None,
        1,
        "TSL:XlaModule:#hlo_module=jit_other,program_id=8#",
        4000,
        100,
        1,
    ));
    r.push(gr(41, None, 1, "TSL:Thunk:#hlo_op=fusion.5#", 9000, 10, 1));
    r.push(gr(
        42,
        None,
        2,
        "TSL:Thunk:#hlo_op=fusion.7,unique_hlo_op_id=99#",
        150,
        10,
        1,
    ));
    r
}

fn derive_2026(ranges: &[GpuRange]) -> derive::Derived {
    let launchers = Launchers::Named(vec![Launcher {
        pid: 1,
        tid: 99,
        device: 3,
    }]);
    derive::derive(
        &Arc::from("p"),
        "p",
        ranges,
        &launchers,
        &mut || Ok(0),
        &mut Fake,
    )
    .unwrap()
}

#[test]
fn the_2026_layout_is_read_whole() {
    let d = derive_2026(&profile_2026());
    let modules: Vec<(&str, u32, u32)> = d
        .modules
        .iter()
        .map(|m| (m.name.as_str(), m.execution, m.thunks))
        .collect();
    assert_eq!(
        modules,
        [
            ("jit_step", 0, 3),
            ("jit_step", 1, 2),
            ("jit_step", 2, 3),
            ("jit_other", 0, 0)
        ]
    );
    let thunks: Vec<(u32, &str, i64, Option<Reconstructed>)> = d
        .thunks
        .iter()
        .map(|t| (t.execution, t.name.as_str(), t.start_ns, t.reconstructed))
        .collect();
    use Reconstructed::{Module, Nccl};
    assert_eq!(
        thunks,
        [
            (0, "fusion.1", 100, None),
            (0, "all-reduce.1", 250, Some(Module)),
            (0, "fusion.3", 410, Some(Module)),
            (1, "fusion.1", 1100, None),
            (1, "all-reduce.1", 1250, Some(Module)),
            (2, "fusion.1", 2100, None),
            // Launched first, though its GPU work starts later: the first collective.
            (2, "all-reduce.2", 2250, Some(Nccl)),
            (2, "all-reduce.1", 2450, Some(Nccl)),
        ]
    );
    // Reconstructed collectives carry what the dump says, and their hidden time.
    let ar = &d.thunks[6];
    assert!(ar.comm);
    assert_eq!(
        (ar.collective.as_deref(), ar.group_size, ar.message_bytes),
        (Some("all-reduce"), Some(2), Some(4096))
    );
    assert_eq!((ar.hidden_ns, ar.dur_ns), (50, 50));
    let notes = d.notes.join("\n");
    for said in [
        "3 thunks had no XlaModule range around them",
        "2 collectives had no thunk range, only an NCCL range",
        "left out 2 thunks outside any XlaModule range",
        "`TSL:Thunk:#hlo_op=fusion.5#`",
        "`TSL:Thunk:#hlo_op=fusion.7,unique_hlo_op_id=99#`",
    ] {
        assert!(notes.contains(said), "{said:?} in {notes}");
    }
}

#[test]
fn nccl_ranges_that_do_not_match_the_schedule_are_left_out_and_said() {
    // Execution 2 with one NCCL range where the schedule has two collectives.
    let ranges: Vec<GpuRange> = profile_2026().into_iter().filter(|r| r.id != 33).collect();
    let d = derive_2026(&ranges);
    assert!(
        d.thunks
            .iter()
            .all(|t| t.reconstructed != Some(Reconstructed::Nccl))
    );
    assert_eq!(d.modules[2].thunks, 1);
    let notes = d.notes.join("\n");
    assert!(
        notes.contains(
            "left out 1 NCCL ranges outside thunks in executions of jit_step: they cannot be \
             matched to its collectives, an execution has 1 NCCL ranges outside thunks where \
             its HLO schedule has 2 collectives without a thunk range"
        ),
        "{notes}"
    );
}
