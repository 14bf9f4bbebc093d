//! njx-diff (issue 31): a run compared with itself shows no change; changes planted in the
//! GPU projection of the real pax archives (`common/plant.rs`, the plants of
//! `plant_check::pax_plants`) are found with the right sign and size, their intervals
//! covering the truth, and nothing else is significant; kernels of the newest real export
//! diffed against a copy with kernels removed or stretched give exact totals; partial
//! results of each rank give the comparison of the archives; the gate's exit status; the
//! folded stacks carry the table's values; bad command lines and inputs.

use crate::common::plant::{Plant, plant_archive, rename_archive};
use crate::common::*;
use crate::plant_check::{COLLECTIVE, FREQUENT, LONGER, MODULE, SHORTER, pax_plants};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `njx-diff -q --format json ARGS`: the records by key.
fn diff(args: &[&str]) -> BTreeMap<String, Value> {
    let mut all = vec!["-q", "--format", "json"];
    all.extend_from_slice(args);
    json_lines(&ok("njx-diff", &all))
        .into_iter()
        .map(|r| (r["key"].as_str().expect("key").to_string(), r))
        .collect()
}

/// The arguments `BEFORE... --vs AFTER...`.
fn sides<'a>(before: &'a [String], after: &'a [String]) -> Vec<&'a str> {
    let mut v: Vec<&str> = before.iter().map(String::as_str).collect();
    v.push("--vs");
    v.extend(after.iter().map(String::as_str));
    v
}

/// The significant keys of a comparison.
fn significant(rows: &BTreeMap<String, Value>) -> Vec<&str> {
    rows.iter()
        .filter(|(_, r)| r["significant"] == true)
        .map(|(k, _)| k.as_str())
        .collect()
}

/// Asserts that `key` changed significantly by `pct` (within `tol` points), its interval
/// covering `pct`.
fn found(rows: &BTreeMap<String, Value>, key: &str, pct: f64, tol: f64) {
    let r = rows.get(key).unwrap_or_else(|| panic!("no row {key}"));
    let change = r["change_pct"].as_f64().expect("change_pct");
    let (lo, hi) = (
        r["ci_low_pct"].as_f64().unwrap(),
        r["ci_high_pct"].as_f64().unwrap(),
    );
    assert!(
        (change - pct).abs() <= tol,
        "{key}: {change}% is not {pct}%: {r}"
    );
    assert!(
        lo <= pct && pct <= hi,
        "{key}: {lo}..{hi} misses {pct}: {r}"
    );
    assert_eq!(r["significant"], true, "{key}: {r}");
    let status = if pct > 0.0 { "slower" } else { "faster" };
    assert_eq!(r["status"], status, "{key}: {r}");
}

/// The four pax archives, each with the plants of `plants`, in `dir`.
fn planted(pax: &[String], dir: &Path, plants: &[Plant]) -> Vec<String> {
    pax.iter()
        .enumerate()
        .map(|(i, src)| {
            let dst = dir.join(format!("planted{i}.zip"));
            plant_archive(Path::new(src), &dst, plants);
            dst.to_str().unwrap().to_string()
        })
        .collect()
}

#[test]
fn a_run_against_itself_shows_no_change() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    for by in ["program", "instruction", "collective", "compile-pass"] {
        let mut args = vec!["--by", by];
        args.extend(sides(&pax, &pax));
        let rows = diff(&args);
        assert!(rows.len() > 5, "{by}: {} keys", rows.len());
        for (k, r) in &rows {
            assert_eq!(r["status"], "same", "{by} {k}: {r}");
            assert_eq!(r["change_ns"], 0.0, "{by} {k}: {r}");
            assert_eq!(r["significant"], false, "{by} {k}: {r}");
            assert_eq!(r["matched_by"], "name", "{by} {k}: {r}");
            if !r["p_value"].is_null() {
                assert_eq!(r["p_value"], 1.0, "{by} {k}: {r}");
            }
        }
    }
}

/// The plants of `plant_check::pax_plants`, the collective three times as long.
fn plants() -> Vec<Plant> {
    let mut p = pax_plants();
    for x in &mut p {
        if x.thunk == COLLECTIVE {
            x.factor = 3.0;
        }
    }
    p
}

#[test]
fn changes_planted_in_the_gpu_projection_are_found_and_nothing_else() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    let after = planted(&pax, tmp.path(), &plants());
    let mut args = vec!["--by", "instruction"];
    args.extend(sides(&pax, &after));
    let rows = diff(&args);
    let key = |t: &str| format!("{MODULE}/{t}");
    found(&rows, &key(LONGER), 50.0, 0.1);
    found(&rows, &key(FREQUENT), 50.0, 0.1);
    found(&rows, &key(SHORTER), -20.0, 0.1);
    // The collective's exposed time (the thunk time njx-thunks counts) grows by less than
    // its whole time (more of it is hidden behind compute now) and varies across ranks as
    // waits do: larger, not necessarily significant by instruction; by collective below,
    // its whole time is.
    let ag = &rows[&key(COLLECTIVE)];
    assert!(ag["change_pct"].as_f64().unwrap() > 50.0, "{ag}");
    assert_ne!(ag["status"], "faster", "{ag}");
    let sig = significant(&rows);
    let want = [key(LONGER), key(FREQUENT), key(SHORTER)];
    // Nothing else but the collective and what the planted thunks overlap now (a
    // communication thunk whose exposed time changed because a lengthened thunk runs into
    // it is a real change of the pair).
    for k in &sig {
        assert!(
            want.iter().any(|w| w == k) || k.contains("-start"),
            "{k} is significant but nothing was planted in it: {}",
            rows[*k]
        );
    }
    for w in &want {
        assert!(sig.contains(&w.as_str()), "{w} is not significant");
    }

    // By collective: the all-gather of this size is exactly three times as long, at a
    // third of the bus bandwidth; no other collective changes. (Twice as long is not
    // significant here: its time varies across ranks by half its mean, and with 12
    // samples a side and 19 collectives compared its q-value is 0.052.)
    let mut args = vec!["--by", "collective"];
    args.extend(sides(&pax, &after));
    let rows = diff(&args);
    let (k, r) = rows
        .iter()
        .find(|(_, r)| r["significant"] == true)
        .expect("a significant collective");
    assert!(k.starts_with("all-gather "), "{k}");
    found(&rows, k, 200.0, 0.01);
    let bw = r["after_busbw_gbps"].as_f64().unwrap() / r["before_busbw_gbps"].as_f64().unwrap();
    assert!((bw - 1.0 / 3.0).abs() < 1e-3, "{r}");
    assert_eq!(significant(&rows), vec![k.as_str()]);
}

#[test]
fn a_step_made_longer_is_found_by_program_with_its_size() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    // The GEMM three times as long, the time inserted: every later thunk of the step moves.
    let after = planted(
        &pax,
        tmp.path(),
        &[Plant::shifted(Some(MODULE), SHORTER, 3.0)],
    );
    let mean = |inputs: &[String]| -> f64 {
        // Keyed by name as njx-diff keys programs (device 3 ran the step as another
        // fingerprint).
        let mut args = vec!["-q", "--format", "json", "--program-key", "name"];
        args.extend(inputs.iter().map(String::as_str));
        json_lines(&ok("njx-modules", &args))
            .into_iter()
            .find(|r| r["name"] == MODULE)
            .and_then(|r| r["dur_mean_ns"].as_f64())
            .expect("the step")
    };
    let (b, a) = (mean(&pax), mean(&after));
    let truth = 100.0 * (a / b - 1.0);
    assert!(truth > 1.0, "{truth}");
    // njx-modules writes each mean to the nearest nanosecond, njx-diff's change is of the
    // means computed: they agree to what half a nanosecond on each side moves the ratio.
    let tol = 100.0 * 0.5 * (1.0 + a / b) / (b - 0.5) + 1e-9;
    let rows = diff(&sides(&pax, &after));
    found(&rows, MODULE, truth, tol);
    assert_eq!(significant(&rows), vec![MODULE]);
    // The gate: beyond 3%, not beyond 5%.
    for (gate, code) in [("3", 3), ("5", 0)] {
        let mut args = vec!["-q", "--fail-if-slower", gate];
        args.extend(sides(&pax, &after));
        let out = run("njx-diff", &args, b"");
        assert_eq!(out.status.code(), Some(code), "{gate}: {}", stderr_of(&out));
    }
}

#[test]
fn instructions_renamed_by_a_recompilation_are_matched_by_what_the_dumps_say() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    // One instruction renumbered, two GEMMs swapping names: each name on both sides is
    // another instruction now, as XLA's renumbering does (common/plant.rs renames them in
    // the GPU projection and the after-optimizations dumps alike).
    let renames = [
        ("loop_convert_fusion.20", "loop_convert_fusion.999"),
        ("custom-call.219.0", "custom-call.345.0"),
        ("custom-call.345.0", "custom-call.219.0"),
    ];
    let after: Vec<String> = pax
        .iter()
        .enumerate()
        .map(|(i, src)| {
            let dst = tmp.path().join(format!("renamed{i}.zip"));
            rename_archive(Path::new(src), &dst, MODULE, &renames);
            dst.to_str().unwrap().to_string()
        })
        .collect();
    let mut args = vec!["--by", "instruction"];
    args.extend(sides(&pax, &after));
    let out = run(
        "njx-diff",
        &[&["--format", "json"], &args[..]].concat(),
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains(" 3 by what the dumps say, 0 new, 0 gone"),
        "{}",
        stderr_of(&out)
    );
    let rows: BTreeMap<String, Value> = json_lines(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| (r["key"].as_str().unwrap().to_string(), r))
        .collect();
    for (from, to) in renames {
        let r = &rows[&format!("{MODULE}/{to}")];
        assert_eq!(r["before_key"], format!("{MODULE}/{from}"), "{r}");
        assert_eq!(r["matched_by"], "dumps", "{r}");
        assert_eq!(r["change_ns"], 0.0, "{r}");
        assert_eq!(r["status"], "same", "{r}");
    }
    assert!(significant(&rows).is_empty());
    assert!(rows.values().all(|r| r["status"] == "same"));
}

#[test]
fn partial_results_of_each_rank_compare_as_the_archives() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    let after = planted(&pax, tmp.path(), &pax_plants());
    for by in ["program", "instruction", "collective", "compile-pass"] {
        let part = |side: &[String], name: &str| -> Vec<String> {
            side.iter()
                .enumerate()
                .map(|(i, p)| {
                    let text = ok("njx-diff", &["-q", "--by", by, "--partial", p]);
                    write(tmp.path(), &format!("{name}{i}.{by}.part"), text.as_bytes())
                })
                .collect()
        };
        let (pb, pa) = (part(&pax, "before"), part(&after, "after"));
        let mut whole = vec!["--by", by];
        whole.extend(sides(&pax, &after));
        let mut reduced = vec!["--by", by];
        reduced.extend(sides(&pb, &pa));
        assert_eq!(diff(&whole), diff(&reduced), "--by {by}");
    }
}

#[test]
fn the_gate_exits_3_after_writing_the_comparison() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    let after = planted(&pax, tmp.path(), &plants());
    let run_gate = |gate: &str| {
        let mut args = vec![
            "-q",
            "--by",
            "instruction",
            "--format",
            "json",
            "--fail-if-slower",
            gate,
        ];
        args.extend(sides(&pax, &after));
        run("njx-diff", &args, b"")
    };
    let out = run_gate("10");
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(json_lines(&String::from_utf8_lossy(&out.stdout)).len() > 1000);
    let err = stderr_of(&out);
    assert!(
        err.contains(LONGER) && err.contains("--fail-if-slower 10%"),
        "{err}"
    );
    // The all-gather's exposed time nearly doubles: beyond 60%, under 150%.
    let out = run_gate("150");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // The whole step: the planted thunks are a few percent of it.
    let out = run_gate("total:50");
    assert_eq!(out.status.code(), Some(0), "{}", stderr_of(&out));
    // Against itself nothing fails however tight the gate.
    let mut args = vec!["-q", "--fail-if-slower", "0", "--fail-if-slower", "total:0"];
    args.extend(sides(&pax, &pax));
    assert_eq!(run("njx-diff", &args, b"").status.code(), Some(0));
}

#[test]
fn the_folded_stacks_and_the_picture_carry_the_table_values() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let pax = pax_archives(&dir);
    let tmp = tempdir();
    let after = planted(&pax[..1], tmp.path(), &pax_plants());
    let folded = tmp.path().join("d.folded");
    let svg = tmp.path().join("d.svg");
    let mut args = vec![
        "--by",
        "instruction",
        "--folded",
        folded.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ];
    args.extend(sides(&pax[..1], &after));
    let rows = diff(&args);
    let text = std::fs::read_to_string(&folded).unwrap();
    let (mut before_sum, mut after_sum) = (0u64, 0u64);
    let (mut before_exact, mut after_exact) = (0.0f64, 0.0f64);
    let mut n = 0;
    for line in text.lines() {
        let mut parts = line.rsplitn(3, ' ');
        let a: u64 = parts.next().unwrap().parse().unwrap();
        let b: u64 = parts.next().unwrap().parse().unwrap();
        let stack = parts.next().unwrap();
        let frames: Vec<&str> = stack.split(';').collect();
        let key = format!("{}/{}", frames[0], frames[frames.len() - 1]);
        let r = &rows[&key];
        // The table's values, each the nearest whole nanosecond to the exact one; the
        // folded lines round each side's exact values so that they add up to its exact
        // total (issue 32): a line and its row are at most a nanosecond apart.
        let ns = |v: &Value| v.as_f64().unwrap_or(0.0).max(0.0);
        let (tb, ta) = (ns(&r["before_ns"]), ns(&r["after_ns"]));
        assert!(
            (b as f64 - tb).abs() <= 1.0 && (a as f64 - ta).abs() <= 1.0,
            "{line}: the table has {tb} {ta}"
        );
        before_sum += b;
        after_sum += a;
        before_exact += tb;
        after_exact += ta;
        n += 1;
    }
    assert_eq!(n, rows.len());
    // Each side's lines add up to its exact total, which the rows' rounded values miss by
    // at most half a nanosecond each.
    let slack = n as f64 / 2.0;
    assert!(
        (before_sum as f64 - before_exact).abs() <= slack,
        "{before_sum} {before_exact}"
    );
    assert!(
        (after_sum as f64 - after_exact).abs() <= slack,
        "{after_sum} {after_exact}"
    );
    assert!(before_sum > 100_000_000, "{before_sum}");
    let picture = std::fs::read_to_string(&svg).unwrap();
    assert!(
        picture.contains("<svg") && picture.contains(LONGER),
        "an SVG naming the thunks"
    );
    // Colour is for significant changes only (issue 44): each change within the noise is
    // drawn neutral under a last frame `[noise]`; the folded lines carry the values alone.
    let noise = rows.values().filter(|r| r["significant"] == false).count();
    let significant = rows.len() - noise;
    assert!(noise > 0 && significant > 0, "{noise} {significant}");
    // (frames narrower than inferno's least width are not drawn)
    let drawn = picture.matches("<title>[noise] (").count();
    assert!(drawn > 0 && drawn <= noise, "{drawn} of {noise}");
    assert!(!text.contains("[noise]"));
}

#[test]
fn kernel_totals_are_exact_against_a_copy_with_kernels_removed_or_stretched() {
    let Some(dir) = shared_data("pytorch_nsys2026_sqlite") else {
        return;
    };
    let src = dir.join("h100_2gpu_1s.sqlite");
    let tmp = tempdir();
    let copy = tmp.path().join("after.sqlite");
    std::fs::copy(&src, &copy).unwrap();
    let db = rusqlite::Connection::open(&copy).unwrap();
    let short = |name: &str| -> i64 {
        db.query_row(
            "SELECT k.shortName FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s \
             ON s.id = k.shortName WHERE s.value = ?1 LIMIT 1",
            [name],
            |r| r.get(0),
        )
        .unwrap()
    };
    let totals = |db: &rusqlite::Connection| -> BTreeMap<String, (i64, i64)> {
        let mut q = db
            .prepare(
                "SELECT s.value, SUM(k.end - k.start), COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL \
                 k JOIN StringIds s ON s.id = k.shortName GROUP BY s.value",
            )
            .unwrap();
        q.query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let before = totals(&db);
    let (gone, stretched) = ("CatArrayBatchedCopy_vectorized", "elementwise_kernel");
    assert!(before.contains_key(gone) && before.contains_key(stretched));
    db.execute(
        "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE shortName = ?1",
        [short(gone)],
    )
    .unwrap();
    db.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + 2 * (end - start) WHERE shortName \
         = ?1",
        [short(stretched)],
    )
    .unwrap();
    let after = totals(&db);
    drop(db);
    let rows = diff(&[
        "--by",
        "kernel",
        src.to_str().unwrap(),
        "--vs",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(rows.len(), before.len());
    for (name, (total, count)) in &before {
        let r = &rows[name];
        assert_eq!(r["before_ns"].as_f64(), Some(*total as f64), "{name}");
        assert_eq!(r["before_count"].as_i64(), Some(*count), "{name}");
        match after.get(name) {
            Some((t, c)) => {
                assert_eq!(r["after_ns"].as_f64(), Some(*t as f64), "{name}");
                assert_eq!(r["after_count"].as_i64(), Some(*c), "{name}");
            }
            None => assert_eq!(r["status"], "gone", "{name}"),
        }
    }
    assert_eq!(rows[gone]["status"], "gone");
    found(&rows, stretched, 100.0, 1e-9);
    assert_eq!(significant(&rows), vec![stretched]);
    // The whole: every kernel's total summed, the one removed included.
    let (sum_b, sum_a): (i64, i64) = (
        before.values().map(|v| v.0).sum(),
        after.values().map(|v| v.0).sum(),
    );
    let table = ok(
        "njx-diff",
        &[
            "-q",
            "--by",
            "kernel",
            src.to_str().unwrap(),
            "--vs",
            copy.to_str().unwrap(),
        ],
    );
    let pct = 100.0 * (sum_a as f64 / sum_b as f64 - 1.0);
    assert!(table.contains(&format!("{pct:+.1}%")), "{pct}: {table}");
    // +2.3% of the whole is within what the kernels' durations vary by: the gate passes.
    let gate = |after: &Path| {
        let args = ["-q", "--by", "kernel", "--fail-if-slower", "total:0"];
        let mut args: Vec<&str> = args.to_vec();
        args.extend([src.to_str().unwrap(), "--vs", after.to_str().unwrap()]);
        run("njx-diff", &args, b"")
    };
    assert_eq!(gate(&copy).status.code(), Some(0), "{pct}");
    // Every kernel a tenth longer is beyond it.
    let slower = tmp.path().join("slower.sqlite");
    std::fs::copy(&src, &slower).unwrap();
    let db = rusqlite::Connection::open(&slower).unwrap();
    db.execute(
        "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start + (11 * (end - start)) / 10",
        [],
    )
    .unwrap();
    drop(db);
    let out = gate(&slower);
    assert_eq!(out.status.code(), Some(3), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("whole step"),
        "{}",
        stderr_of(&out)
    );
}

/// Module records of one program: one per duration, steady state.
fn module_records(durations: &[i64]) -> String {
    durations
        .iter()
        .enumerate()
        .map(|(i, d)| {
            format!(
                "{{\"profile\":\"r\",\"program\":\"fp\",\"program_id\":1,\"name\":\"jit_step\",\
                 \"execution\":{i},\"device\":0,\"start_ns\":{},\"dur_ns\":{d},\"thunks\":3,\
                 \"warmup\":false}}\n",
                i as i64 * 1_000_000
            )
        })
        .collect()
}

#[test]
fn a_known_change_of_module_records_has_its_interval() {
    let tmp = tempdir();
    let before = write(
        tmp.path(),
        "b.jsonl",
        module_records(&[1000, 1010, 990, 1000, 1005, 995]).as_bytes(),
    );
    let after = write(
        tmp.path(),
        "a.jsonl",
        module_records(&[1100, 1111, 1089, 1100, 1105, 1095]).as_bytes(),
    );
    let rows = diff(&[&before, "--vs", &after]);
    let r = &rows["jit_step"];
    assert_eq!(r["before_ns"], 1000.0);
    assert_eq!(r["after_ns"], 1100.0);
    assert_eq!(r["change_ns"], 100.0);
    assert!(
        (r["change_pct"].as_f64().unwrap() - 10.0).abs() < 1e-9,
        "{r}"
    );
    let (lo, hi) = (
        r["ci_low_pct"].as_f64().unwrap(),
        r["ci_high_pct"].as_f64().unwrap(),
    );
    assert!(lo > 8.5 && lo < 10.0 && hi > 10.0 && hi < 11.5, "{r}");
    assert_eq!(r["status"], "slower");
    assert_eq!(
        (r["before_count"].as_u64(), r["after_count"].as_u64()),
        (Some(6), Some(6))
    );
    // Too few samples for an interval: none, and never significant.
    let few = write(
        tmp.path(),
        "f.jsonl",
        module_records(&[1100, 1110]).as_bytes(),
    );
    let rows = diff(&[&before, "--vs", &few]);
    let r = &rows["jit_step"];
    assert!(r["ci_low_pct"].is_null() && r["p_value"].is_null(), "{r}");
    assert_eq!(r["status"], "same");
    // A program on one side only.
    let other = module_records(&[500, 510]).replace("jit_step", "jit_eval");
    let both = write(
        tmp.path(),
        "o.jsonl",
        format!("{}{other}", module_records(&[1000, 1001, 999])).as_bytes(),
    );
    let rows = diff(&[&before, "--vs", &both]);
    assert_eq!(rows["jit_eval"]["status"], "new");
    assert!(rows["jit_eval"]["before_ns"].is_null());
    assert_eq!(rows["jit_eval"]["after_count"], 2);
}

#[test]
fn the_example_run_against_itself_and_its_other_rank() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let (r0, r1) = (root.join("rank0.zip"), root.join("rank1.zip"));
    let (r0, r1) = (r0.to_str().unwrap(), r1.to_str().unwrap());
    for by in ["program", "instruction", "collective"] {
        let rows = diff(&["--by", by, r0, r1, "--vs", r0, r1]);
        assert!(!rows.is_empty(), "{by}");
        assert!(significant(&rows).is_empty(), "{by}: {rows:?}");
    }
    let table = ok("njx-diff", &["-q", r0, "--vs", r1]);
    assert!(
        table.contains("status") && table.contains("total"),
        "{table}"
    );
}

#[test]
fn bad_command_lines_and_inputs() {
    let tmp = tempdir();
    let good = write(
        tmp.path(),
        "b.jsonl",
        module_records(&[1000, 1010, 990]).as_bytes(),
    );
    for args in [
        vec![good.as_str()],
        vec![good.as_str(), "--vs"],
        vec!["--alpha", "2", good.as_str(), "--vs", good.as_str()],
        vec![
            "--fail-if-slower",
            "fast",
            good.as_str(),
            "--vs",
            good.as_str(),
        ],
        vec![
            "--fail-if-slower",
            "1",
            "--fail-if-slower",
            "2",
            good.as_str(),
            "--vs",
            good.as_str(),
        ],
        vec!["--partial", good.as_str(), "--vs", good.as_str()],
        vec!["--folded", "-", good.as_str(), "--vs", good.as_str()],
    ] {
        let out = run("njx-diff", &args, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr_of(&out));
    }
    let bad = write(
        tmp.path(),
        "bad.jsonl",
        b"{\"profile\":\"r\",\"program\":1}\n",
    );
    let out = run("njx-diff", &[&good, "--vs", &bad], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr_of(&out).contains("bad.jsonl:1"),
        "{}",
        stderr_of(&out)
    );
    // One side with nothing to compare (thunk records where programs are compared) is
    // not a pass: the gate would let a broken run through.
    let thunks = write(
        tmp.path(),
        "t.jsonl",
        ok(
            "njx-export",
            &[
                "-q",
                "--table",
                "thunks",
                &crate::golden::archive(tmp.path(), 0),
            ],
        )
        .as_bytes(),
    );
    let out = run(
        "njx-diff",
        &["--fail-if-slower", "5", &good, "--vs", &thunks],
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(
        stderr_of(&out).contains("t.jsonl") && stderr_of(&out).contains("after side"),
        "{}",
        stderr_of(&out)
    );
    // A partial result of another --by is refused by kind.
    let part = ok("njx-modules", &["--partial", &good]);
    let p = write(tmp.path(), "m.part", part.as_bytes());
    let out = run("njx-diff", &[&p, "--vs", &good], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr_of(&out).contains("m.part:1"), "{}", stderr_of(&out));
}

#[test]
fn every_input_kind_compares_and_a_combined_archive_is_its_ranks() {
    use crate::golden::{archive, sqlite};
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let all = dir.path().join("all.zip");
    ok(
        "njx-combine",
        &["-q", "-o", all.to_str().unwrap(), &ranks[0], &ranks[1]],
    );
    let all = vec![all.to_str().unwrap().to_string()];
    let db = vec![sqlite(dir.path())];
    let records = vec![write(
        dir.path(),
        "t.jsonl",
        ok(
            "njx-export",
            &["-q", "--table", "thunks", &ranks[0], &ranks[1]],
        )
        .as_bytes(),
    )];
    for by in ["program", "instruction", "collective"] {
        // The combined archive against its ranks: the same samples, no change.
        let mut args = vec!["--by", by];
        args.extend(sides(&all, &ranks));
        let rows = diff(&args);
        assert!(!rows.is_empty(), "{by}");
        for (k, r) in &rows {
            assert_eq!(
                (r["change_ns"].as_f64(), &r["status"]),
                (Some(0.0), &Value::from("same")),
                "{by} {k}"
            );
        }
        // Thunk records against the archives they were exported from: the same values
        // (for instructions, per module execution, the executions counted from the
        // thunk records themselves).
        if by != "program" {
            let mut args = vec!["--by", by];
            args.extend(sides(&records, &ranks));
            let from_records = diff(&args);
            assert_eq!(from_records.len(), rows.len(), "{by}");
            for (k, r) in &from_records {
                assert_eq!(r["change_ns"], 0.0, "{by} {k}: {r}");
                assert_eq!(r["before_ns"], rows[k]["before_ns"], "{by} {k}");
            }
        }
    }
    for by in ["kernel", "program", "compile-pass"] {
        let mut args = vec!["--by", by];
        args.extend(sides(&db, &db));
        let out = run(
            "njx-diff",
            &[&["-q", "--format", "json"], &args[..]].concat(),
            b"",
        );
        if by == "program" {
            // Its thunks run outside their modules, as njx-thunks says; its modules are
            // compared.
            assert!(out.status.success(), "{}", stderr_of(&out));
        }
        if out.status.success() {
            for r in json_lines(&String::from_utf8_lossy(&out.stdout)) {
                assert_eq!(r["status"], "same", "{by}: {r}");
            }
        }
    }
    let kernels = diff(&["--by", "kernel", &db[0], "--vs", &db[0]]);
    assert!(kernels.len() >= 2, "{kernels:?}");
}
