//! The before/after pair of `common/plant.rs` checked through the built tools: on proc0 of
//! the pax archives (`../shared/data/pax_fsdp4_4proc`, one A100, `pjit__wrapped_step_fn`
//! executed 5 times, the last 3 the steady state), the planted thunks' mean times change
//! by their factors and every other thunk's stays as it was. The plants
//! ([`pax_plants`]) are the known answer for the diff tests; the test prints their
//! execution counts and means before and after (`--nocapture`).
//!
//! A shifted plant ([`Plant::shifted`], [`SHIFTED`]) inserts its time instead: the step's
//! module time grows by exactly what it inserts, later executions move rather than being
//! overlapped, and no other thunk's time changes; several shifted plants, lengthening and
//! shortening, compose.
//!
//! A renaming ([`plant::rename_archive`]) gives instructions of the step other names, as a
//! recompilation that renumbers them does: [`RENAMED`] a new name, the two GEMMs of
//! [`SWAPPED`] each other's. Their thunks keep their times, their dump says of each new
//! name what it said of the old one, and the tools find every thunk in the dump.

use crate::common::plant::{self, Changed, Plant, changes, overreach, plant_archive, thunk_rows};
use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// The largest module: the training step, 2,576 of the 2,725 (module, thunk) pairs of
/// proc0's projection.
pub const MODULE: &str = "pjit__wrapped_step_fn";
/// A fusion of the step, once per execution, ~886 µs, made 1.5 times as long; its 11
/// siblings `loop_convert_fusion.{2,4,…,24}` (one per layer, as long) are left alone.
pub const LONGER: &str = "loop_convert_fusion.20";
/// The step's most frequent thunk, 8 executions per module execution (~2 µs each),
/// made 1.5 times as long: its `thunk_execution` runs from 0 to 7.
pub const FREQUENT: &str = "copy_fusion";
/// The step's largest compute thunk, a cuBLAS GEMM (~2.46 ms), made 0.8 times as long.
pub const SHORTER: &str = "custom-call.219.0";
/// An asynchronous all-gather of the step (~1.85 ms), twice as long in every module.
pub const COLLECTIVE: &str = "all-gather-start.2";
/// A sibling of [`LONGER`], as long and as often, left as it was.
pub const UNTOUCHED: &str = "loop_convert_fusion.14";
/// The factor of the shifted plant: [`SHORTER`] made 1.5 times as long, the time
/// inserted.
pub const SHIFTED: f64 = 1.5;

/// The plants of the pair: (thunk, factor) with [`MODULE`] given, except the collective's.
pub fn pax_plants() -> Vec<Plant> {
    vec![
        Plant::new(Some(MODULE), LONGER, 1.5),
        Plant::new(Some(MODULE), FREQUENT, 1.5),
        Plant::new(Some(MODULE), SHORTER, 0.8),
        Plant::new(None, COLLECTIVE, 2.0),
    ]
}

/// `njx-thunks --view variability --min-cv 0` on `archive`: (module, thunk) → row, and
/// the notes on stderr. `--min-cv 0` keeps every compute thunk executed twice or more
/// (the default 0.1 keeps only the variable ones: the step's thunks vary by under 1%).
fn variability(archive: &str) -> (BTreeMap<(String, String), Value>, String) {
    let args = [
        "--view",
        "variability",
        "--min-cv",
        "0",
        "--format",
        "json",
        archive,
    ];
    let out = run("njx-thunks", &args, b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| {
            let key = (
                r["module"].as_str().expect("module").to_string(),
                r["thunk"].as_str().expect("thunk").to_string(),
            );
            (key, r)
        })
        .collect();
    (rows, stderr_of(&out))
}

/// `njx-export --table thunks` on `archive`: the records of `thunk`, keyed by (device,
/// module execution, thunk execution), and the notes on stderr.
fn records(archive: &str, thunk: &str) -> (BTreeMap<(u64, u64, u64), Value>, String) {
    let out = run("njx-export", &["--table", "thunks", archive], b"");
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .filter(|r| r["name"] == thunk)
        .map(|r| {
            let n = |f: &str| r[f].as_u64().expect(f);
            ((n("device"), n("execution"), n("thunk_execution")), r)
        })
        .collect();
    (rows, stderr_of(&out))
}

/// Archives `a` and `b` have the same members in the same order, each stored the same
/// (raw bytes, method) except the projection, whose bytes differ.
fn same_members_but_the_projection(a: &Path, b: &Path) {
    use std::io::Read;
    let open = |p: &Path| zip::ZipArchive::new(std::fs::File::open(p).expect("open")).expect("zip");
    let (mut za, mut zb) = (open(a), open(b));
    assert_eq!(za.len(), zb.len());
    for i in 0..za.len() {
        let raw = |z: &mut zip::ZipArchive<std::fs::File>| {
            let mut m = z.by_index_raw(i).expect("member");
            let mut bytes = Vec::new();
            m.read_to_end(&mut bytes).expect("read member");
            (m.name().expect("name").to_string(), m.compression(), bytes)
        };
        let (ma, mb) = (raw(&mut za), raw(&mut zb));
        assert_eq!(ma.0, mb.0, "member {i}");
        assert_eq!(ma.1, mb.1, "{}", ma.0);
        assert_eq!(ma.2 == mb.2, ma.0 != relay::GPU_PROJ, "{}", ma.0);
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (n, sum) = values.fold((0.0, 0.0), |(n, s), v| (n + 1.0, s + v));
    sum / n
}

fn num(v: &Value) -> f64 {
    v.as_f64().expect("a number")
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn planted_thunks_change_by_their_factors_and_no_other() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        eprintln!("skipped: ../shared/data/pax_fsdp4_4proc absent");
        return;
    };
    let original = pax_archives(&dir).swap_remove(0);
    let tmp = tempdir();
    let planted = tmp.path().join("pax_fsdp4_4proc_proc0.zip");
    let plants = pax_plants();

    // The projection's rows of each plant, before.
    let rows = thunk_rows(Path::new(&original));
    let largest = rows
        .iter()
        .fold(BTreeMap::<Option<&str>, i64>::new(), |mut by, r| {
            *by.entry(r.module.as_deref()).or_default() += r.total_ns;
            by
        });
    let largest = largest.iter().max_by_key(|(_, t)| **t).expect("modules").0;
    assert_eq!(*largest, Some(MODULE), "the module with most thunk time");
    for p in &plants {
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| {
                r.thunk == p.thunk
                    && p.module
                        .as_ref()
                        .is_none_or(|m| r.module.as_ref() == Some(m))
            })
            .collect();
        for r in &mine {
            eprintln!(
                "plant ×{}: {:?} {}: {} rows, {} ns in all",
                p.factor, r.module, r.thunk, r.count, r.total_ns
            );
        }
    }
    let frequent = rows
        .iter()
        .filter(|r| r.module.as_deref() == Some(MODULE))
        .max_by_key(|r| r.count)
        .expect("thunks of the step");
    assert_eq!(frequent.thunk, FREQUENT, "the step's most frequent thunk");

    let changed = plant_archive(Path::new(&original), &planted, &plants);
    let reach = overreach(Path::new(&original), &plants);
    eprintln!("{changed} rows changed; {reach:?}");
    assert_eq!(reach.changed, changed);
    // 5 executions of the step: 5 rows each, 40 of copy_fusion.
    assert_eq!(changed, 5 + 40 + 5 + 5);
    same_members_but_the_projection(Path::new(&original), &planted);
    let planted = planted.to_str().expect("utf-8 path").to_string();

    // Compute thunks: the variability view's means.
    let (before, notes_before) = variability(&original);
    let (after, notes_after) = variability(&planted);
    eprintln!("notes, original:\n{notes_before}notes, planted:\n{notes_after}");
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>()
    );
    let factor_of = |module: &str, thunk: &str| {
        plants
            .iter()
            .filter(|p| p.thunk == thunk && p.module.as_deref().is_none_or(|m| m == module))
            .map(|p| p.factor)
            .product::<f64>()
    };
    for (key, b) in &before {
        let a = &after[key];
        let f = factor_of(&key.0, &key.1);
        assert_eq!(a["executions"], b["executions"], "{key:?}");
        let (mb, ma) = (num(&b["mean_ns"]), num(&a["mean_ns"]));
        if f == 1.0 {
            assert_eq!(ma, mb, "{key:?} untouched");
            assert_eq!(a["std_ns"], b["std_ns"], "{key:?} untouched");
        } else {
            assert!(
                (ma / mb / f - 1.0).abs() < 0.01,
                "{key:?}: {mb} → {ma}, ×{f}"
            );
        }
    }
    for thunk in [LONGER, FREQUENT, SHORTER, UNTOUCHED] {
        let key = (MODULE.to_string(), thunk.to_string());
        let (b, a) = (&before[&key], &after[&key]);
        eprintln!(
            "{MODULE} {thunk}: {} steady executions, mean {} ns → {} ns (×{:.6})",
            b["executions"],
            b["mean_ns"],
            a["mean_ns"],
            num(&a["mean_ns"]) / num(&b["mean_ns"])
        );
    }
    assert!(!before.contains_key(&(MODULE.to_string(), COLLECTIVE.to_string())));

    // The collective: its whole time, exposed and hidden behind compute, per execution.
    let (cb, _) = records(&original, COLLECTIVE);
    let (ca, _) = records(&planted, COLLECTIVE);
    assert_eq!(cb.keys().collect::<Vec<_>>(), ca.keys().collect::<Vec<_>>());
    assert!(!cb.is_empty());
    let whole = |r: &Value| num(&r["dur_ns"]) + num(&r["hidden_ns"]);
    for (key, b) in &cb {
        let a = &ca[key];
        assert!(
            (whole(a) / whole(b) / 2.0 - 1.0).abs() < 0.01,
            "{key:?}: {b} → {a}"
        );
    }
    let steady = |rs: &BTreeMap<(u64, u64, u64), Value>, f: &dyn Fn(&Value) -> f64| {
        mean(rs.values().filter(|r| r["warmup"] == false).map(f))
    };
    let n = cb.values().filter(|r| r["warmup"] == false).count();
    let (wb, wa) = (steady(&cb, &whole), steady(&ca, &whole));
    let exposed = |r: &Value| num(&r["dur_ns"]);
    let (eb, ea) = (steady(&cb, &exposed), steady(&ca, &exposed));
    eprintln!(
        "{COLLECTIVE}: {} executions ({n} steady), mean {wb} ns → {wa} ns (×{:.6}); exposed {eb} ns → {ea} ns",
        cb.len(),
        wa / wb
    );
    assert!((wa / wb / 2.0 - 1.0).abs() < 0.01);
}

/// `njx-export --table modules` on `archive`: every module execution, in the tool's order.
fn module_records(archive: &str) -> Vec<Value> {
    json_lines(&ok("njx-export", &["--table", "modules", archive]))
}

/// `njx-export --table thunks` on `archive`: every thunk execution, in the tool's order.
fn thunk_records(archive: &str) -> Vec<Value> {
    json_lines(&ok("njx-export", &["--table", "thunks", archive]))
}

/// `njx-modules --format json` on `archive`: the summary row of [`MODULE`].
fn program_row(archive: &str) -> Value {
    let rows = json_lines(&ok("njx-modules", &["--format", "json", archive]));
    let mut mine = rows.into_iter().filter(|r| r["name"] == MODULE);
    let row = mine.next().expect("a row of the step");
    assert!(mine.next().is_none(), "one program named {MODULE}");
    row
}

/// `njx-thunks --view top --format json` on `archive`: (module, thunk) → row.
fn top(archive: &str) -> BTreeMap<(String, String), Value> {
    let args = ["--view", "top", "--format", "json", archive];
    json_lines(&ok("njx-thunks", &args))
        .into_iter()
        .map(|r| {
            let key = (
                r["module"].as_str().expect("module").to_string(),
                r["thunk"].as_str().expect("thunk").to_string(),
            );
            (key, r)
        })
        .collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().expect("a whole number")
}

/// `original` planted with the shifted `plants` into `dir`: the rows changed and the
/// planted archive's path. Checks that each changed row is one of the step's thunks on one
/// thread, its Δ its duration scaled and rounded, and that only the projection differs.
fn shift_plant(original: &str, dir: &Path, plants: &[Plant]) -> (Vec<Changed>, String) {
    let planted = dir.join("pax_fsdp4_4proc_proc0.zip");
    let changed = changes(Path::new(original), plants);
    assert_eq!(
        plant_archive(Path::new(original), &planted, plants),
        changed.len()
    );
    same_members_but_the_projection(Path::new(original), &planted);
    for c in &changed {
        let f: f64 = plants
            .iter()
            .filter(|p| p.thunk == c.thunk)
            .map(|p| p.factor)
            .product();
        assert!(c.shift && c.module.as_deref() == Some(MODULE), "{c:?}");
        assert_eq!(c.delta, (c.dur as f64 * f).round() as i64 - c.dur, "{c:?}");
        assert_eq!((c.pid, c.tid), (changed[0].pid, changed[0].tid), "{c:?}");
    }
    let planted = planted.to_str().expect("utf-8 path").to_string();
    (changed, planted)
}

/// The time `changed` insert before time `t` (before planting): the Δ of the rows that
/// end by then.
fn inserted_by(changed: &[Changed], t: i64) -> i64 {
    changed
        .iter()
        .filter(|c| c.start + c.dur <= t)
        .map(|c| c.delta)
        .sum()
}

/// What each execution of the step gains from `changed`, by its start before planting.
fn gains(changed: &[Changed]) -> BTreeMap<i64, i64> {
    let mut gains: BTreeMap<i64, i64> = BTreeMap::new();
    for c in changed {
        *gains
            .entry(c.module_start.expect("in a module"))
            .or_default() += c.delta;
    }
    gains
}

/// The module executions of `original` and `planted` (every program; one thread launches
/// them all on proc0): each execution of the step is longer by what `changed` insert in
/// it, each one starts later by what they insert before it, and none overlaps the next on
/// its device where it did not before. Returns the records, before and after.
fn modules_moved(original: &str, planted: &str, changed: &[Changed]) -> (Vec<Value>, Vec<Value>) {
    let gains = gains(changed);
    let (mb, ma) = (module_records(original), module_records(planted));
    assert_eq!(mb.len(), ma.len());
    for (b, a) in mb.iter().zip(&ma) {
        for f in ["program", "name", "execution", "device", "thunks", "warmup"] {
            assert_eq!(a[f], b[f], "{f} of {b}");
        }
        let start = int(&b["start_ns"]);
        let gain = match b["name"] == MODULE {
            true => gains.get(&start).copied().unwrap_or(0),
            false => 0,
        };
        assert_eq!(int(&a["dur_ns"]) - int(&b["dur_ns"]), gain, "{b} → {a}");
        let moved = inserted_by(changed, start);
        assert_eq!(int(&a["start_ns"]) - start, moved, "{b} → {a}");
    }
    let step_starts: Vec<i64> = mb
        .iter()
        .filter(|b| b["name"] == MODULE)
        .map(|b| int(&b["start_ns"]))
        .collect();
    assert_eq!(
        gains.keys().copied().collect::<Vec<_>>(),
        step_starts,
        "the changed rows' module ranges are the step's executions"
    );
    let spans = |rs: &[Value]| {
        let mut by: BTreeMap<u64, Vec<(i64, i64)>> = BTreeMap::new();
        for r in rs {
            let (s, d) = (int(&r["start_ns"]), int(&r["dur_ns"]));
            by.entry(r["device"].as_u64().expect("device"))
                .or_default()
                .push((s, s + d));
        }
        by
    };
    let (sb, sa) = (spans(&mb), spans(&ma));
    for (device, b) in &sb {
        let a = &sa[device];
        for i in 1..b.len() {
            if b[i - 1].1 <= b[i].0 {
                let (x, y) = (a[i - 1], a[i]);
                assert!(x.1 <= y.0, "device {device}: {x:?} overlaps {y:?}");
            }
        }
    }
    (mb, ma)
}

/// The thunk executions of `original` and `planted`: each starts later by what `changed`
/// insert before it and keeps its whole time (exposed and hidden), but for the changed
/// ones, longer by their Δ. Returns how many thunk executions moved.
fn thunks_moved(original: &str, planted: &str, changed: &[Changed]) -> usize {
    let own: BTreeMap<(&str, i64), i64> = changed
        .iter()
        .map(|c| ((c.thunk.as_str(), c.start), c.delta))
        .collect();
    let (tb, ta) = (thunk_records(original), thunk_records(planted));
    assert_eq!(tb.len(), ta.len());
    let whole = |r: &Value| int(&r["dur_ns"]) + int(&r["hidden_ns"]);
    let mut moved = 0;
    for (b, a) in tb.iter().zip(&ta) {
        for f in ["module", "execution", "device", "name", "thunk_execution"] {
            assert_eq!(a[f], b[f], "{f} of {b}");
        }
        let start = int(&b["start_ns"]);
        let by = inserted_by(changed, start);
        moved += usize::from(by != 0);
        assert_eq!(int(&a["start_ns"]) - start, by, "{b} → {a}");
        let name = b["name"].as_str().expect("name");
        let delta = own.get(&(name, start)).copied().unwrap_or(0);
        assert_eq!(whole(a) - whole(b), delta, "{b} → {a}");
    }
    moved
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn shifted_plant_lengthens_its_module_by_what_it_inserts() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        eprintln!("skipped: ../shared/data/pax_fsdp4_4proc absent");
        return;
    };
    let original = pax_archives(&dir).swap_remove(0);
    let tmp = tempdir();
    let plants = [Plant::shifted(Some(MODULE), SHORTER, SHIFTED)];
    let (changed, planted) = shift_plant(&original, tmp.path(), &plants);
    for c in &changed {
        eprintln!(
            "shift ×{SHIFTED}: {} at {} (module from {:?}, thread {:?}/{:?}): {} ns, Δ {} ns",
            c.thunk, c.start, c.module_start, c.pid, c.tid, c.dur, c.delta
        );
    }
    // One row per execution of the step, each longer.
    assert_eq!(changed.len(), 5);
    assert!(changed.iter().all(|c| c.delta > 0));
    let (mb, _) = modules_moved(&original, &planted, &changed);
    let moved = thunks_moved(&original, &planted, &changed);
    eprintln!("{moved} thunk executions moved");

    // The step's steady-state time: longer by the mean Δ of its steady executions.
    let gains = gains(&changed);
    let steady: Vec<i64> = mb
        .iter()
        .filter(|b| b["name"] == MODULE && b["warmup"] == false)
        .map(|b| gains[&int(&b["start_ns"])])
        .collect();
    let (pb, pa) = (program_row(&original), program_row(&planted));
    let n = steady.len() as u64;
    assert_eq!(pb["executions"].as_u64(), Some(n));
    assert_eq!(pa["executions"].as_u64(), Some(n));
    let sum: i64 = steady.iter().sum();
    let expected = sum as f64 / n as f64;
    let (before, after) = (num(&pb["dur_mean_ns"]), num(&pa["dur_mean_ns"]));
    eprintln!(
        "{MODULE}: {n} steady executions, Δ {steady:?} ns; dur_mean_ns {before} → {after} \
         (+{}), expected +{expected}; dur_sum_ns {} → {}",
        after - before,
        pb["dur_sum_ns"],
        pa["dur_sum_ns"]
    );
    assert!(
        (after - before - expected).abs() < 1.0,
        "{before} → {after}: +{}, not +{expected}",
        after - before
    );
    assert_eq!(int(&pa["dur_sum_ns"]) - int(&pb["dur_sum_ns"]), sum);

    // Every other thunk's total time is as it was; the planted one's is longer by the
    // steady Δ.
    let (tb, ta) = (top(&original), top(&planted));
    assert_eq!(tb.keys().collect::<Vec<_>>(), ta.keys().collect::<Vec<_>>());
    let mut untouched = 0;
    for (key, b) in &tb {
        let a = &ta[key];
        assert_eq!(a["executions"], b["executions"], "{key:?}");
        if key.1 == SHORTER {
            assert_eq!(int(&a["total_ns"]) - int(&b["total_ns"]), sum, "{key:?}");
            eprintln!(
                "{} {}: total {} ns → {} ns",
                key.0, key.1, b["total_ns"], a["total_ns"]
            );
        } else {
            assert_eq!(a["total_ns"], b["total_ns"], "{key:?} untouched");
            untouched += 1;
        }
    }
    eprintln!("{untouched} other thunks of the top view: totals unchanged");
    assert!(untouched > 0);
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn shifted_plants_compose() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        eprintln!("skipped: ../shared/data/pax_fsdp4_4proc absent");
        return;
    };
    let original = pax_archives(&dir).swap_remove(0);
    let tmp = tempdir();
    // Longer and shorter, once and 8 times per execution, and an asynchronous collective
    // in flight across other changed rows.
    let plants = [
        Plant::shifted(Some(MODULE), SHORTER, SHIFTED),
        Plant::shifted(Some(MODULE), LONGER, 0.5),
        Plant::shifted(Some(MODULE), FREQUENT, 2.0),
        Plant::shifted(None, COLLECTIVE, 2.0),
    ];
    let (changed, planted) = shift_plant(&original, tmp.path(), &plants);
    assert_eq!(changed.len(), 5 + 5 + 40 + 5);
    let gains = gains(&changed);
    eprintln!(
        "{} rows changed; the step's executions gain {gains:?} ns",
        changed.len()
    );
    modules_moved(&original, &planted, &changed);
    let moved = thunks_moved(&original, &planted, &changed);
    eprintln!("{moved} thunk executions moved");
}

/// A fusion of the step renamed to a name the module does not have, as a recompilation
/// renumbers it: [`LONGER`], one of 12 siblings `loop_convert_fusion.{2,4,…,24}` whose
/// dumps differ in op_name only (the layer).
pub const RENAMED: (&str, &str) = ("loop_convert_fusion.20", "loop_convert_fusion.999");
/// Two cuBLAS GEMMs of the step that swap names: [`SHORTER`], the logits' forward
/// `dot_general` (`softmax.get_logits/logits_ffn`, ~2.46 ms), and the embedding lookup's
/// forward `dot_general` (`softmax.emb_lookup`, ~2.22 ms). Same opcode and target, other
/// op_names and shapes.
pub const SWAPPED: (&str, &str) = ("custom-call.219.0", "custom-call.345.0");

/// The after-optimizations dump of [`MODULE`] in `archive`: its member name and the
/// decompressed `HloProto`.
fn step_dump(archive: &Path) -> (String, Vec<u8>) {
    use std::io::Read;
    let mut zip = zip::ZipArchive::new(std::fs::File::open(archive).expect("open")).expect("zip");
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.to_string()))
        .filter(|n| plant::is_after_optimizations_dump(n, MODULE))
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let mut xz = Vec::new();
    zip.by_name(&names[0])
        .expect("dump")
        .read_to_end(&mut xz)
        .expect("read dump");
    let mut proto = Vec::new();
    xz2::read::XzDecoder::new(xz.as_slice())
        .read_to_end(&mut proto)
        .expect("xz");
    (names[0].clone(), proto)
}

/// A shape as XLA prints it (`bf16[2048,768]`, tuples in parentheses).
fn shape_text(shape: &njx::hlo::proto::ShapeProto) -> String {
    if !shape.tuple_shapes.is_empty() {
        let parts: Vec<String> = shape.tuple_shapes.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let ty = njx::hlo::proto::PrimitiveType::try_from(shape.element_type).map_or_else(
        |_| format!("type{}", shape.element_type),
        |t| t.as_str_name().to_ascii_lowercase(),
    );
    let dims: Vec<String> = shape.dimensions.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}

/// What the dump says of instruction `name`: (id, opcode, op_name, shape).
fn what_the_dump_says(hlo: &njx::hlo::HloModule, name: &str) -> (i64, String, String, String) {
    let i = hlo
        .instruction(name)
        .unwrap_or_else(|| panic!("{name}: not in {}", hlo.place()));
    let shape = i.shape().expect("shape").expect("a shape");
    (
        i.id(),
        i.opcode().to_string(),
        i.op_name().to_string(),
        shape_text(&shape),
    )
}

/// `njx-thunks --view top --format json` on `archive`: (module, thunk) → row, and the
/// notes.
fn top_and_notes(archive: &str) -> (BTreeMap<(String, String), Value>, String) {
    let out = run(
        "njx-thunks",
        &["--view", "top", "--format", "json", archive],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let rows = json_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| {
            let key = (
                r["module"].as_str().expect("module").to_string(),
                r["thunk"].as_str().expect("thunk").to_string(),
            );
            (key, r)
        })
        .collect();
    (rows, stderr_of(&out))
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn renamed_instructions_keep_their_times_and_what_their_dump_says() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        eprintln!("skipped: ../shared/data/pax_fsdp4_4proc absent");
        return;
    };
    let original = pax_archives(&dir).swap_remove(0);
    let tmp = tempdir();
    let renamed = tmp.path().join("pax_fsdp4_4proc_proc0.zip");
    let (a, b) = SWAPPED;
    let renames = [RENAMED, (a, b), (b, a)];
    let new_name = |module: &str, thunk: &str| -> String {
        let to = renames.iter().find(|(from, _)| *from == thunk);
        match to {
            Some((_, to)) if module == MODULE => to.to_string(),
            _ => thunk.to_string(),
        }
    };

    // The dump before: what tells the instructions apart.
    let (member, proto) = step_dump(Path::new(&original));
    let before = njx::hlo::HloModule::decode(&member, &proto).expect("the step's dump");
    for name in [RENAMED.0, a, b] {
        let (id, opcode, op_name, shape) = what_the_dump_says(&before, name);
        eprintln!("{name}: id {id}, {opcode} {shape}, op_name {op_name}");
    }
    assert!(
        before.instruction(RENAMED.1).is_none(),
        "{} is new",
        RENAMED.1
    );
    let (sa, sb) = (
        what_the_dump_says(&before, a),
        what_the_dump_says(&before, b),
    );
    assert_eq!(sa.1, sb.1, "the swapped pair: one opcode");
    assert_ne!(sa.2, sb.2, "the swapped pair: other op_names");
    // The rewriter keeps every byte where it renames nothing.
    assert!(plant::rename_hlo(&proto, &[]).0 == proto);

    // The rows to be renamed, and the archive renamed.
    let rows = thunk_rows(Path::new(&original));
    let expected: usize = rows
        .iter()
        .filter(|r| r.module.as_deref() == Some(MODULE) && renames.iter().any(|x| x.0 == r.thunk))
        .map(|r| r.count)
        .sum();
    let n = plant::rename_archive(Path::new(&original), &renamed, MODULE, &renames);
    eprintln!("{n} projection rows renamed");
    assert_eq!(n, expected);
    assert_eq!(n, 3 * 5, "each once per execution of the step");

    // Only the projection and the step's dump differ.
    {
        use std::io::Read;
        let open =
            |p: &Path| zip::ZipArchive::new(std::fs::File::open(p).expect("open")).expect("zip");
        let (mut za, mut zb) = (open(Path::new(&original)), open(&renamed));
        assert_eq!(za.len(), zb.len());
        for i in 0..za.len() {
            let raw = |z: &mut zip::ZipArchive<std::fs::File>| {
                let mut m = z.by_index_raw(i).expect("member");
                let mut bytes = Vec::new();
                m.read_to_end(&mut bytes).expect("read member");
                (m.name().expect("name").to_string(), m.compression(), bytes)
            };
            let (ma, mb) = (raw(&mut za), raw(&mut zb));
            assert_eq!(ma.0, mb.0, "member {i}");
            assert_eq!(ma.1, mb.1, "{}", ma.0);
            let rewritten = ma.0 == relay::GPU_PROJ || ma.0 == member;
            assert_eq!(ma.2 == mb.2, !rewritten, "{}", ma.0);
        }
    }

    // The dump after: each new name has what the old one had, and nothing else moved.
    let (_, renamed_proto) = step_dump(&renamed);
    let (_, tally) = plant::rename_hlo(&proto, &renames);
    eprintln!("in the dump: {tally:?}");
    let after = njx::hlo::HloModule::decode(&member, &renamed_proto).expect("the renamed dump");
    for (from, to) in renames {
        assert_eq!(
            what_the_dump_says(&after, to),
            what_the_dump_says(&before, from),
            "{from} → {to}"
        );
    }
    assert!(after.instruction(RENAMED.0).is_none());
    assert_eq!(after.fingerprint(), before.fingerprint());
    assert_eq!(after.instructions().count(), before.instructions().count());
    for i in before.instructions() {
        let to = new_name(MODULE, i.name());
        assert_eq!(after.instruction(&to).map(|j| j.id()), Some(i.id()), "{to}");
    }

    // Through the tools: the new names with the old totals and what the dump says, and
    // no instruction missing from its dump.
    let (tb, notes_before) = top_and_notes(&original);
    let (ta, notes_after) = top_and_notes(renamed.to_str().expect("utf-8 path"));
    eprintln!("notes, original:\n{notes_before}notes, renamed:\n{notes_after}");
    for notes in [&notes_before, &notes_after] {
        assert!(!notes.contains("no instruction"), "{notes}");
        assert!(!notes.contains("no HLO dump"), "{notes}");
    }
    assert_eq!(ta.len(), tb.len());
    for ((module, thunk), b) in &tb {
        let key = (module.clone(), new_name(module, thunk));
        let a = ta
            .get(&key)
            .unwrap_or_else(|| panic!("{key:?} (was {thunk}) not in the renamed top view"));
        for f in ["program", "executions", "total_ns", "op_name", "opcode"] {
            assert_eq!(a[f], b[f], "{f} of {key:?} (was {thunk})");
        }
        if key.1 != *thunk {
            eprintln!(
                "{module} {thunk} → {}: {} executions, total {} ns, {} {}",
                key.1, a["executions"], a["total_ns"], a["opcode"], a["op_name"]
            );
        }
    }
    assert!(!ta.contains_key(&(MODULE.to_string(), RENAMED.0.to_string())));

    // The buffer assignment follows too (its heap simulator events name instructions):
    // the buffers live at each peak are the same, the swapped GEMMs' under their new
    // names, with what the dump says of them.
    let heap = |archive: &str| {
        let args = ["--view", "buffers", "--format", "json", archive];
        json_lines(&ok("njx-heap", &args))
    };
    let (hb, ha) = (heap(&original), heap(renamed.to_str().expect("utf-8 path")));
    assert_eq!(ha.len(), hb.len());
    let mut moved = 0;
    for (b, a) in hb.iter().zip(&ha) {
        let mut expected = b.clone();
        let (program, name) = (
            b["program"].as_str().expect("program"),
            b["instruction"].as_str().expect("instruction"),
        );
        let to = new_name(program, name);
        moved += usize::from(to != name);
        expected["instruction"] = Value::from(to);
        assert_eq!(*a, expected);
    }
    eprintln!("{moved} of {} buffers live at a peak renamed", hb.len());
    assert_eq!(
        moved, 2,
        "the swapped GEMMs' outputs are live at the step's peak"
    );
}
