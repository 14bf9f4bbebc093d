//! njx-report (issue 30): every section holds exactly the records its tool writes for the
//! same input (`--format json` of the command the section names), on the golden tests'
//! two-rank archives and SQLite export, and on the real profiles of `../shared/data` where
//! they are (skipped, saying so, where not); partial results of each rank merge into the
//! report of all; the text report shows each table's first rows, the command of the whole,
//! and says in one line why a section does not apply.

use crate::common::*;
use crate::golden::{archive, sqlite};
use serde_json::Value;
use std::path::Path;

/// The report of `inputs` as JSON.
fn report(args: &[&str]) -> Value {
    let mut all = vec!["-q", "--format", "json"];
    all.extend_from_slice(args);
    serde_json::from_str(&ok("njx-report", &all)).expect("one JSON object")
}

/// Checks every section of the report of `inputs` against its tool's JSON output: the
/// command the section names, with `INPUTS` replaced by the inputs. Returns how many
/// sections had rows.
fn sections_equal_the_tools(inputs: &[&str]) -> usize {
    let rep = report(inputs);
    let order = rep["order"].as_array().unwrap();
    assert_eq!(
        order.len(),
        njx::report::SECTIONS.len(),
        "every section is in the report"
    );
    let mut with_rows = 0;
    for id in order {
        let s = &rep["sections"][id.as_str().unwrap()];
        let command = s["command"].as_str().unwrap();
        let mut words = command.split(' ');
        let tool = words.next().unwrap();
        let mut args: Vec<&str> = vec!["-q", "--format", "json"];
        for w in words {
            if w == "INPUTS" {
                args.extend_from_slice(inputs);
            } else {
                args.push(w);
            }
        }
        let out = run(tool, &args, b"");
        let rows = s["rows"].as_array().unwrap();
        if s["absent"].is_string() {
            assert!(rows.is_empty(), "{id}: absent with rows");
            // The tool has nothing to show either (or refuses the input).
            if out.status.success() {
                assert_eq!(
                    json_lines(&String::from_utf8_lossy(&out.stdout)),
                    Vec::<Value>::new()
                );
            }
            continue;
        }
        assert!(out.status.success(), "{command}: {}", stderr_of(&out));
        let tool_rows = json_lines(&String::from_utf8(out.stdout).unwrap());
        if id == "heap" {
            // The programs that ran, of every program njx-heap finds in the dumps.
            for r in rows {
                assert!(tool_rows.contains(r), "heap row {r} is not njx-heap's");
            }
        } else {
            assert_eq!(rows, &tool_rows, "section {id} differs from `{command}`");
        }
        with_rows += 1;
    }
    with_rows
}

#[test]
fn every_section_holds_its_tools_records_on_archives() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let inputs: Vec<&str> = ranks.iter().map(String::as_str).collect();
    // Compile time, modules, the six collectives tables, the top and opcode views (no
    // thunk varies by more than njx-thunks' 10 %), the heap.
    assert_eq!(sections_equal_the_tools(&inputs), 12);
    let rep = report(&inputs);
    assert_eq!(rep["read"]["profiles"].as_array().unwrap().len(), 2);
    assert_eq!(rep["read"]["xla_paths"], 2);
    assert!(
        rep["sections"]["kernels"]["absent"]
            .as_str()
            .unwrap()
            .contains("nsys-jax archives keep none")
    );
}

#[test]
fn every_section_holds_its_tools_records_on_an_export() {
    let dir = tempdir();
    let db = sqlite(dir.path());
    // Its thunks run outside their modules: the thunk views say why njx-thunks refuses
    // it, and the rest stands.
    sections_equal_the_tools(&[&db]);
    let rep = report(&[&db]);
    assert!(rep["sections"]["kernels"]["rows"].as_array().unwrap().len() >= 2);
    assert!(
        !rep["sections"]["modules"]["rows"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    for view in ["thunks", "opcodes", "variability"] {
        let why = rep["sections"][view]["absent"].as_str().unwrap();
        assert!(
            why.contains("njx-thunks refuses the input")
                && why.contains("more than its module executions"),
            "{why}"
        );
    }
}

#[test]
fn partial_results_merge_into_the_report_of_all() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let parts: Vec<String> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            write(
                dir.path(),
                &format!("r{i}.part"),
                ok("njx-report", &["-q", "--partial", r]).as_bytes(),
            )
        })
        .collect();
    let whole = report(&[&ranks[0], &ranks[1]]);
    let merged = report(&[&parts[0], &parts[1]]);
    // Kernels aside: partials do not carry them, and the section says so.
    let mut sections = whole["sections"].clone();
    for id in ["kernels", "memops"] {
        let why = merged["sections"][id]["absent"].as_str().unwrap();
        assert!(why.contains("not from records or partial results"), "{why}");
        sections[id] = merged["sections"][id].clone();
    }
    assert_eq!(sections, merged["sections"]);
    assert_eq!(whole["read"], merged["read"]);
    // A partial and the other rank's archive, in either order.
    let mixed = report(&[&parts[1], &ranks[0]]);
    assert_eq!(whole["sections"], mixed["sections"]);
    // cat'ed into stdin.
    let both = format!(
        "{}{}",
        std::fs::read_to_string(&parts[0]).unwrap(),
        std::fs::read_to_string(&parts[1]).unwrap()
    );
    let piped: Value = serde_json::from_str(&ok_with(
        "njx-report",
        &["-q", "--format", "json"],
        both.as_bytes(),
    ))
    .unwrap();
    assert_eq!(sections, piped["sections"]);
}

#[test]
fn the_text_report_cuts_each_table_and_names_its_command() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let text = ok("njx-report", &["-q", "--rows", "1", &ranks[0], &ranks[1]]);
    let rep = report(&[&ranks[0], &ranks[1]]);
    for (id, title, command) in njx::report::SECTIONS {
        assert!(text.contains(title), "{title} missing:\n{text}");
        if rep["sections"][id]["absent"].is_null() {
            assert!(text.contains(command), "{command} missing:\n{text}");
        }
    }
    // One row of the modules table: its header and the largest program.
    let modules = text
        .split("== Module executions (steady state) ==\n")
        .nth(1)
        .unwrap();
    let lines: Vec<&str> = modules.lines().take(3).collect();
    assert!(lines[0].starts_with("program"), "{lines:?}");
    assert!(
        lines[2].starts_with("… ") || lines[2].starts_with("(all of it: "),
        "{lines:?}"
    );
    assert!(
        text.starts_with("Read: 2 inputs, 2 profiles with XLA programs, devices 0-1"),
        "{text}"
    );
    assert!(
        text.contains("Does not apply: no CUDA activity tables"),
        "{text}"
    );
}

/// An nsys SQLite export of one 500 ns kernel (`gemm`) and its launch: no XLA.
fn cuda_sqlite(dir: &Path) -> std::path::PathBuf {
    let db = dir.join("cuda.sqlite");
    use crate::common::nsys_sqlite::*;
    let n = NsysDb::create(&db);
    n.string(1, "cudaLaunchKernel_v7000");
    n.string(2, "void gemm()");
    n.string(3, "gemm");
    n.call_named(100, 110, gtid(9, 1), 1, 1);
    n.kernel_named(0, 7, 1000, 1500, gpid(9), 1, 2, 3, 2);
    db
}

#[test]
fn a_profile_without_xla_says_so_once_and_shows_its_kernels() {
    let dir = tempdir();
    let db = cuda_sqlite(dir.path());
    let db = db.to_str().unwrap();
    let text = ok("njx-report", &["-q", db]);
    assert_eq!(text.matches("not an XLA profile").count(), 1, "{text}");
    assert!(text.contains("gemm"), "{text}");
    let rep = report(&[db]);
    assert_eq!(rep["sections"]["kernels"]["rows"][0]["total_ns"], 500);
}

/// The real profiles of `../shared/data`: every input kind, every section equal to its
/// tool's output.
#[test]
fn conformance_every_section_equals_its_tool_on_real_profiles() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    if !data.is_dir() {
        eprintln!("SKIPPED: ../shared/data is not there (njx-report conformance)");
        return;
    }
    let pax: Vec<String> = (0..4)
        .map(|i| {
            data.join(format!("pax_fsdp4_4proc/pax_fsdp4_4proc_proc{i}.zip"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let pax: Vec<&str> = pax.iter().map(String::as_str).collect();
    assert_eq!(sections_equal_the_tools(&pax), 13);
    // The heap of the program that ran longest: both of its compilations (device 3's apart).
    let heap = report(&pax)["sections"]["heap"]["rows"].clone();
    let step: Vec<&Value> = heap
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["program"] == "pjit__wrapped_step_fn")
        .collect();
    assert_eq!(step.len(), 2, "{heap}");
    let rep = report(&pax);
    let compile = &rep["sections"]["compile"]["rows"];
    // nsys-jax's compile time of the four processes: 263.5 s.
    let wall = compile[0]["wall_ns"].as_i64().unwrap();
    assert!((263.4e9..263.6e9).contains(&(wall as f64)), "{wall}");
    for export in [
        "nvfuser_nsys_sqlite/report1_nsys2025.1.1.sqlite",
        "nvfuser_nsys_sqlite/report2_nsys2024.6.2.sqlite",
        "pytorch_nsys2026_sqlite/h100_2gpu_1s.sqlite",
        "pytorch_nsys2026_sqlite/mock.sqlite",
        "testcuda_nsys2026_sqlite/report1_nsys2026.1.1.sqlite",
    ] {
        let path = data.join(export);
        let path = path.to_str().unwrap();
        let n = sections_equal_the_tools(&[path]);
        assert!(
            (1..=2).contains(&n),
            "{export}: kernels and memory operations only, not {n}"
        );
    }
    // The top cuBLAS kernel of the PyTorch run (sqlite3 on CUPTI_ACTIVITY_KIND_KERNEL).
    let rep = report(&[data
        .join("pytorch_nsys2026_sqlite/h100_2gpu_1s.sqlite")
        .to_str()
        .unwrap()]);
    let top = &rep["sections"]["kernels"]["rows"][0];
    assert_eq!(
        (top["count"].as_i64(), top["total_ns"].as_i64()),
        (Some(248), Some(31_121_662))
    );
}

/// `njx-combine --analysis report` stores the report of the combined archive in it, under
/// `analysis/1-report.txt`: the same sections as njx-report on the combined archive.
#[test]
fn combine_stores_the_report_of_its_archive() {
    use std::io::Read;
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let all = dir.path().join("all.zip");
    let all = all.to_str().unwrap();
    let out = run(
        "njx-combine",
        &[
            "-q",
            "--analysis",
            "report",
            "-o",
            all,
            &ranks[0],
            &ranks[1],
        ],
        b"",
    );
    assert!(out.status.success(), "{}", stderr_of(&out));
    let mut z = zip::ZipArchive::new(std::fs::File::open(all).unwrap()).unwrap();
    let mut stored = String::new();
    z.by_name("analysis/1-report.txt")
        .expect("the report is stored")
        .read_to_string(&mut stored)
        .unwrap();
    let direct = ok("njx-report", &["-q", all]);
    // The sections, from the first heading on (the header names the archive's own path).
    let sections = |t: &str| t[t.find("\n== ").expect("sections")..].to_string();
    assert_eq!(sections(&stored), sections(&direct));
    assert!(
        stored.contains("== Module executions (steady state) =="),
        "{stored}"
    );
}

/// `--html FILE`: one page with every section and picture, sortable tables, and nothing
/// loaded from elsewhere (no `src`, `href` or `@import` leaving the page; the flame graphs'
/// scripts in frames of their own).
#[test]
fn the_page_holds_every_section_and_loads_nothing_from_elsewhere() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let page = dir.path().join("run.html");
    let text = ok(
        "njx-report",
        &["-q", "--html", page.to_str().unwrap(), &ranks[0], &ranks[1]],
    );
    // stdout is the text report still.
    assert!(text.starts_with("Read: 2 inputs"), "{text}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for (id, title, _) in njx::report::SECTIONS {
        assert!(
            html.contains(&format!(
                "<section id=\"{id}\"><h2>{}",
                title.replace('\'', "&#39;")
            )),
            "{id}"
        );
        assert!(
            html.contains(&format!("<a href=\"#{id}\">")),
            "{id} not in the contents"
        );
    }
    for id in [
        "bandwidth-chart",
        "heap-chart",
        "flame-source",
        "flame-op-name",
    ] {
        assert!(html.contains(&format!("<section id=\"{id}\">")), "{id}");
    }
    // Two flame graphs, each the document of a sandboxed frame; the chart inline.
    assert_eq!(html.matches("<iframe ").count(), 2);
    assert_eq!(
        html.matches("sandbox=\"allow-scripts\" srcdoc=\"").count(),
        2
    );
    assert!(
        html.contains("<figure><svg"),
        "the bandwidth chart is inline"
    );
    // Outside the frames' documents (attribute values, escaped), nothing points away.
    let outside: String = html
        .split("srcdoc=\"")
        .enumerate()
        .map(|(i, part)| {
            if i == 0 {
                part
            } else {
                part.split_once('"').map_or("", |p| p.1)
            }
        })
        .collect();
    // Namespaces name, they do not load.
    let outside = outside
        .replace("xmlns=\"http://www.w3.org/2000/svg\"", "")
        .replace("xmlns:xlink=\"http://www.w3.org/1999/xlink\"", "");
    for bad in ["src=", "<link", "@import", "http://", "https://", "url("] {
        assert!(!outside.contains(bad), "{bad} in the page");
    }
    // Tables are sortable, with the records' exact values to sort by.
    assert!(html.contains("<table class=\"sortable\">"));
    assert!(html.contains("data-v=\""));
    // The same figures as the text: the module table's program.
    assert!(html.contains("5d41402abc4b2a76b9719d911017c592"));
}

/// `--html` wants a file of its own.
#[test]
fn the_page_is_not_stdout_nor_the_output() {
    let dir = tempdir();
    let rank = archive(dir.path(), 0);
    for args in [
        vec!["--html", "-"],
        vec!["--html", "x.html", "-o", "x.html"],
    ] {
        let mut all = args.clone();
        all.push(&rank);
        let out = run("njx-report", &all, b"");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr_of(&out).contains("the page needs a file of its own"),
            "{}",
            stderr_of(&out)
        );
    }
}

/// The page's wait and lateness pictures are njx-collectives' own, byte for byte, though
/// the report reads each archive once (its clocks aligned after the reading); from partial
/// results they are not drawn, and the page says why.
#[test]
fn the_wait_and_lateness_pictures_are_the_collectives_own() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (page, wait, late) = (at("run.html"), at("wait.svg"), at("late.svg"));
    ok("njx-report", &["-q", "--html", &page, &ranks[0], &ranks[1]]);
    ok(
        "njx-collectives",
        &[
            "-q",
            "--wait-plot",
            &wait,
            "--lateness-plot",
            &late,
            &ranks[0],
            &ranks[1],
        ],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    for (id, svg) in [("wait-chart", &wait), ("lateness-chart", &late)] {
        let start = html.find(&format!("<section id=\"{id}\">")).expect(id);
        let figure = &html[start..];
        let figure =
            &figure[figure.find("<figure>").unwrap() + 8..figure.find("</figure>").unwrap()];
        let tool = std::fs::read_to_string(svg).unwrap();
        assert_eq!(
            figure.trim(),
            tool[tool.find("<svg").unwrap()..].trim(),
            "{id}"
        );
    }
    // From partial results: not drawn, and why.
    let part = write(
        dir.path(),
        "r0.part",
        ok("njx-report", &["-q", "--partial", &ranks[0]]).as_bytes(),
    );
    ok("njx-report", &["-q", "--html", &page, &part, &ranks[1]]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        html.matches("Not drawn: these pictures compare the clocks of different devices")
            .count(),
        2
    );
}

/// The page explains itself (issue 44, item 5): the text report's labels and units, its
/// captions and footnotes, a glossary, the wait picture's legend; the flame graphs drawn
/// whole when the page opens (so they print), scaled to the page.
#[test]
fn the_page_explains_its_columns_terms_and_marks() {
    let dir = tempdir();
    let ranks: Vec<String> = (0..2).map(|r| archive(dir.path(), r)).collect();
    let page = dir.path().join("run.html");
    ok(
        "njx-report",
        &["-q", "--html", page.to_str().unwrap(), &ranks[0], &ranks[1]],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let section = |id: &str| {
        let at = html.find(&format!("<section id=\"{id}\">")).unwrap();
        let end = html[at..].find("</section>").unwrap();
        html[at..at + end].to_string()
    };
    // Labels and units as the text report has them; the record's field on hover.
    let hidden = section("hidden");
    assert!(
        hidden.contains("<th class=\"num\" title=\"hidden_ratio\">hidden %</th>"),
        "{hidden}"
    );
    assert!(
        hidden.contains(">43.48</td>"),
        "a fraction in percent: {hidden}"
    );
    assert!(!hidden.contains(">0.4348</td>"), "{hidden}");
    let heap = section("heap");
    assert!(
        heap.contains(">peak</th>") && heap.contains(">8.00 KiB</td>"),
        "{heap}"
    );
    assert!(section("modules").contains(">dur mean ms</th>"));
    // Captions from the text report: the table's title lines and footnote.
    let wait = section("wait");
    assert!(
        wait.contains("<p class=\"caption\">Wait time per module execution (longest − shortest"),
        "{wait}"
    );
    assert!(
        wait.contains("<p class=\"footnote\">wait % = wait ms / module ms"),
        "{wait}"
    );
    assert!(section("compile").contains("<p class=\"caption\">Compilation time: "));
    // The glossary, in the contents too.
    let glossary = section("glossary");
    for term in [
        "hidden",
        "exposed",
        "wait",
        "busbw",
        "lateness",
        "warm-up",
        "autotuning",
        "[inconsistent metadata]",
    ] {
        assert!(
            glossary.contains(&format!("<dt>{term}</dt>")),
            "{term} not in the glossary"
        );
    }
    assert!(glossary.contains("× 2(n−1)/n"), "busbw's formula");
    assert!(html.contains("<a href=\"#glossary\">Glossary</a>"));
    // The wait picture's ▲ is explained under its heading and in the picture.
    let chart = section("wait-chart");
    assert!(chart.contains("▲ marks the mean"), "{chart}");
    assert!(
        chart.contains("▲: mean"),
        "the picture's own legend: {chart}"
    );
    // The flame graphs: drawn when the page opens, in frames of the picture's
    // proportions, the picture scaled to the frame.
    assert!(!html.contains("loading=\"lazy\""));
    for id in ["flame-source", "flame-op-name"] {
        let f = section(id);
        let svg = f.split("srcdoc=\"").nth(1).unwrap();
        let size = |name: &str| {
            svg.split(&format!(" {name}=&quot;"))
                .nth(1)
                .and_then(|v| v.split("&quot;").next())
                .unwrap()
                .to_string()
        };
        assert!(
            f.contains(&format!(
                "style=\"aspect-ratio: {} / {}\"",
                size("width"),
                size("height")
            )),
            "{id}"
        );
        assert!(svg.starts_with("&lt;style&gt;"), "{id}");
        assert!(svg.contains("width: 100%"), "{id}");
    }
}

/// A profile that is not XLA's: the page opens on the sections that apply (its kernels);
/// the contents mark the others.
#[test]
fn a_page_of_a_profile_without_xla_opens_on_what_applies() {
    let dir = tempdir();
    let db = cuda_sqlite(dir.path());
    let page = dir.path().join("cuda.html");
    ok(
        "njx-report",
        &["-q", "--html", page.to_str().unwrap(), db.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let first = html.find("<section id=\"kernels\">").unwrap();
    for id in ["compile", "modules", "wait", "thunks", "heap"] {
        let at = html.find(&format!("<section id=\"{id}\">")).unwrap();
        assert!(at > first, "{id} before the kernels");
        assert!(
            html.contains(&format!("<li class=\"na\"><a href=\"#{id}\">")),
            "{id} not marked in the contents"
        );
    }
    assert!(html.contains("<li><a href=\"#kernels\">"));
    assert!(html.contains("No step: no XLA module executions"));
}
