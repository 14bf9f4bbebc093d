//! Issue 44: what a new user tripped on, each with the run that showed it. The overwrite
//! rule's whole campaign (every output option of every tool against every kind of input)
//! is `hostile::overwrite`; here the shell's own glob and the rule's edges.

use crate::common::*;
use std::path::Path;
use std::process::Command;

/// The example run's archives, copied into `dir`: their paths, sorted as a glob is.
fn example_run(dir: &Path) -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/run");
    let mut out = Vec::new();
    for name in ["rank0.zip", "rank1.zip"] {
        let to = dir.join(name);
        std::fs::copy(src.join(name), &to).unwrap();
        out.push(to.to_str().unwrap().to_string());
    }
    out
}

/// `njx-report --html run/*.zip`, as bash expands it: the page's name left out, the first
/// archive became the page and the report covered the other rank, with exit 0.
#[test]
fn a_left_out_page_name_never_costs_the_first_archive() {
    if !has_bash() {
        eprintln!("SKIPPED: no bash to expand the glob");
        return;
    }
    let d = tempdir();
    let run = d.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let archives = example_run(&run);
    let before = std::fs::read(&archives[0]).unwrap();
    for line in [
        "njx-report --html run/*.zip",
        "njx-report -o run/*.zip",
        "njx-report --format json -o run/*.zip",
        "njx-modules -o run/*.zip",
        "njx-collectives --plot run/*.zip",
        "njx-collectives --wait-plot run/*.zip",
        "njx-flamefold --by op-name --svg run/*.zip",
        "njx-timeline -o run/*.zip",
        "njx-heap --svg run/*.zip",
        "njx-diff --svg run/*.zip --vs run/rank1.zip",
    ] {
        let (tool, rest) = line.split_once(' ').unwrap();
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("\"{}\" {rest}", exe(tool)))
            .current_dir(d.path())
            .output()
            .unwrap();
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(2), "{line}: {err}");
        let words: Vec<&str> = rest.split(' ').collect();
        let at = words.iter().position(|w| *w == "run/*.zip").unwrap();
        let option = words[at - 1];
        assert!(
            err.contains("run/rank0.zip") && err.contains(&format!("{option} would")),
            "{line}: the refusal names neither the file nor the option: {err}"
        );
        assert!(err.contains("-f (--force)"), "{line}: {err}");
        assert_eq!(std::fs::read(&archives[0]).unwrap(), before, "{line}");
        assert_eq!(entries(&run), ["rank0.zip", "rank1.zip"], "{line}");
    }
    // -f: the user means it.
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("\"{}\" -f --html run/*.zip", exe("njx-report")))
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr_of(&out));
    assert!(
        std::fs::read(&archives[0])
            .unwrap()
            .starts_with(b"<!DOCTYPE html")
    );
}

/// Outputs are written over as before where they are outputs: records, pages and
/// pictures; a partial result is an input, written over with -f only.
#[test]
fn outputs_are_written_over_and_partials_only_with_force() {
    let d = tempdir();
    let archives = example_run(d.path());
    let page = d.path().join("run.html");
    let records = d.path().join("modules.jsonl");
    let partial = d.path().join("rank1.part");
    for _ in 0..2 {
        let p = page.to_str().unwrap();
        ok("njx-report", &["-q", "--html", p, &archives[1]]);
        ok(
            "njx-modules",
            &[
                "-q",
                "--format",
                "json",
                "-o",
                records.to_str().unwrap(),
                &archives[1],
            ],
        );
    }
    let part = partial.to_str().unwrap();
    ok(
        "njx-modules",
        &["-q", "--partial", "-o", part, &archives[1]],
    );
    let again = run(
        "njx-modules",
        &["-q", "--partial", "-o", part, &archives[1]],
        b"",
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(
        stderr_of(&again).contains("a partial result"),
        "{}",
        stderr_of(&again)
    );
    ok(
        "njx-modules",
        &["-q", "--partial", "-f", "-o", part, &archives[1]],
    );
}

/// Item 4: nothing read is not success. An empty stdin (an empty glob in a batch job, a
/// failed export upstream) is refused with exit 1 saying what was expected, by every tool
/// that reads records or profiles; module records alone are no thunks.
#[test]
fn nothing_read_is_refused_not_an_empty_answer() {
    for tool in [
        "njx-report",
        "njx-modules",
        "njx-thunks",
        "njx-collectives",
        "njx-kernels",
        "njx-timeline",
        "njx-export",
        "njx-ranges",
        "njx-compile-summary",
        "njx-flamefold",
    ] {
        let out = run(tool, &[], b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
        assert!(err.contains("empty"), "{tool}: {err}");
        assert!(out.stdout.is_empty(), "{tool} wrote on a refusal");
    }
    let out = run("njx-pgle", &["-o", "unused-dir"], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    // Two empty files: both named.
    let d = tempdir();
    let a = write(d.path(), "a.jsonl", b"");
    let b = write(d.path(), "b.jsonl", b"");
    let out = run("njx-modules", &[&a, &b], b"");
    let err = stderr_of(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(err.contains("a.jsonl") && err.contains("b.jsonl"), "{err}");
    // An empty file beside a real one is refused: a map step that wrote nothing, its
    // rank missing without a word otherwise (issue 41). Empty stdin beside it is skipped.
    let archives = example_run(d.path());
    let out = run("njx-modules", &["-q", &a, &archives[0]], b"");
    assert_eq!(out.status.code(), Some(1), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("a.jsonl"), "{}", stderr_of(&out));
    ok("njx-modules", &["-q", "-", &archives[0]]);
    // Module records where thunks are read.
    let modules = ok("njx-export", &["-q", "--table", "modules", &archives[0]]);
    for tool in [vec!["njx-thunks"], vec!["njx-flamefold", "--by", "op-name"]] {
        let out = run(tool[0], &tool[1..], modules.as_bytes());
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{tool:?}: {err}");
        assert!(err.contains("no thunk executions"), "{tool:?}: {err}");
    }
    // With the thunk records beside them, as before.
    let thunks = ok("njx-export", &["-q", "--table", "thunks", &archives[0]]);
    let m = write(d.path(), "m.jsonl", modules.as_bytes());
    let t = write(d.path(), "t.jsonl", thunks.as_bytes());
    assert!(ok("njx-thunks", &["-q", &m, &t]).contains("fusion"));
}

/// Item 9: a licence, where employers look for it.
#[test]
fn the_licence_is_apache_2_and_declared_where_packages_say_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let licence = std::fs::read_to_string(root.join("LICENSE")).unwrap();
    assert!(licence.contains("Apache License") && licence.contains("Version 2.0"));
    assert!(licence.contains("TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION"));
    let cargo = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("\nlicense = \"Apache-2.0\"\n"), "Cargo.toml");
    let py = std::fs::read_to_string(root.join("pyproject.toml")).unwrap();
    assert!(
        py.contains("license = { text = \"Apache-2.0\" }"),
        "pyproject.toml"
    );
    assert!(py.contains("License :: OSI Approved :: Apache Software License"));
}

/// The `--options` a text mentions, each with the tool it belongs to: the nearest `njx-*`
/// named before it in the same clause (a clause ends at `;`, `)` or `.`), else `tool`,
/// the one that printed it. Options of other programs (`nsys …`, `XLA_FLAGS=--xla_…`)
/// are passed over.
fn options_mentioned(tool: &str, text: &str) -> Vec<(String, String)> {
    let tools: Vec<String> = njx::commands()
        .iter()
        .map(|c| c.get_name().to_string())
        .collect();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.strip_prefix(&format!("{tool}: ")).unwrap_or(line);
        let mut owner = Some(tool.to_string());
        for word in line.split_whitespace() {
            let bare = word.trim_matches(|c: char| "`'\"(),;:[]".contains(c));
            if tools.iter().any(|t| t == bare) {
                owner = Some(bare.to_string());
            } else if ["nsys", "nsys-jax", "python", "jax", "XLA_FLAGS"]
                .iter()
                .any(|p| bare == *p || bare.starts_with(&format!("{p}=")))
            {
                owner = None;
            } else if let Some(name) = bare.strip_prefix("--") {
                let name = name.split('=').next().unwrap();
                let plain = !name.is_empty()
                    && name.starts_with(|c: char| c.is_ascii_lowercase())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
                if let (true, Some(o)) = (plain, &owner) {
                    out.push((o.clone(), name.to_string()));
                }
            }
            if word.ends_with(';') || word.ends_with(')') || word.ends_with('.') {
                owner = Some(tool.to_string());
            }
        }
    }
    out
}

/// Whether `tool`'s own parser has the long option `name` (or it is one every tool has).
fn accepts(tool: &str, name: &str) -> bool {
    if ["help", "version", "completions"].contains(&name) {
        return true;
    }
    let cmd = njx::commands()
        .into_iter()
        .find(|c| c.get_name() == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"));
    cmd.get_arguments().any(|a| {
        a.get_long() == Some(name) || a.get_all_aliases().is_some_and(|v| v.contains(&name))
    })
}

/// Item 3: every option a note recommends exists on the tool it names (the one that
/// prints it unless it names another). njx-report suggested --top-modules and
/// --program-key and rejected both; njx-thunks suggested --program-key. Run on the real
/// profiles, where those notes come.
#[test]
fn every_option_a_note_recommends_is_accepted_by_its_tool() {
    let mut runs: Vec<(&str, Vec<String>)> = Vec::new();
    if let Some(pax) = shared_data("pax_fsdp4_4proc") {
        let all = pax_archives(&pax);
        let with = |first: &[&str]| {
            let mut v: Vec<String> = first.iter().map(|s| s.to_string()).collect();
            v.extend(all.iter().cloned());
            v
        };
        runs.push(("njx-report", with(&[])));
        runs.push(("njx-modules", with(&[])));
        runs.push(("njx-collectives", with(&[])));
        runs.push(("njx-thunks", with(&[])));
        runs.push(("njx-flamefold", with(&["--by", "op-name"])));
        runs.push((
            "njx-diff",
            vec![all[0].clone(), "--vs".into(), all[1].clone()],
        ));
    }
    if let Some(fuser) = shared_data("nvfuser_nsys_sqlite") {
        let db = fuser.join("report1_nsys2025.1.1.sqlite");
        let db = db.to_str().unwrap().to_string();
        runs.push(("njx-report", vec![db.clone()]));
        runs.push(("njx-kernels", vec![db.clone()]));
        runs.push(("njx-modules", vec![db]));
    }
    if runs.is_empty() {
        return;
    }
    let mut seen = Vec::new();
    let mut wrong = Vec::new();
    for (tool, args) in &runs {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(tool, &args, b"");
        // The report lists its notes in its header too; any text may name an option.
        let text = format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            stderr_of(&out)
        );
        for (owner, name) in options_mentioned(tool, &text) {
            if !accepts(&owner, &name) {
                wrong.push(format!(
                    "{tool} says --{name} of {owner}, which {owner} rejects"
                ));
            }
            seen.push(format!("{owner} --{name}"));
        }
    }
    seen.sort();
    seen.dedup();
    eprintln!("options named by the tools' notes: {seen:?}");
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The notes of the issue are among those checked.
    if shared_data("pax_fsdp4_4proc").is_some() {
        for want in ["njx-report --top-modules", "njx-modules --program-key"] {
            assert!(seen.iter().any(|s| s == want), "{want} not seen: {seen:?}");
        }
    }
}

#[test]
fn options_are_told_to_the_tool_named_before_them() {
    let found = options_mentioned(
        "njx-report",
        "njx-report: 3 of 7 shown (--top-modules); module x (njx-modules --program-key name \
         analyses them); give njx-export --table thunks output; XLA_FLAGS=--xla_dump_to=d \
         nsys profile --trace=cuda",
    );
    assert_eq!(
        found,
        [
            ("njx-report".to_string(), "top-modules".to_string()),
            ("njx-modules".to_string(), "program-key".to_string()),
            ("njx-export".to_string(), "table".to_string()),
        ]
    );
    assert!(accepts("njx-report", "top-modules"));
    assert!(!accepts("njx-report", "program-key"));
}

/// Item 10: a PyTorch run's ranges carry `, op_id = N` per call; `--by op` gives one row
/// per operator, with the same total as `--by range`.
#[test]
fn kernels_by_op_group_pytorch_calls_by_operator() {
    assert_eq!(
        njx::analysis::kernels::operator("aten::mm, op_id = 318133"),
        "aten::mm"
    );
    assert_eq!(
        njx::analysis::kernels::operator("aten::add, seq = 12, op_id = 40, sizes = [[2, 3]]"),
        "aten::add"
    );
    assert_eq!(njx::analysis::kernels::operator("a, b"), "a, b");
    let Some(dir) = shared_data("pytorch_nsys2026_sqlite") else {
        return;
    };
    let db = dir.join("h100_2gpu_1s.sqlite");
    let db = db.to_str().unwrap();
    let rows = |by: &str| {
        json_lines(&ok(
            "njx-kernels",
            &["-q", "--by", by, "--format", "json", db],
        ))
    };
    let (ranges, ops) = (rows("range"), rows("op"));
    let total = |rs: &[serde_json::Value]| -> i64 {
        rs.iter().map(|r| r["total_ns"].as_i64().unwrap()).sum()
    };
    assert_eq!(total(&ranges), total(&ops));
    assert!(
        ops.len() * 10 < ranges.len(),
        "{} ops, {} ranges",
        ops.len(),
        ranges.len()
    );
    let mm = ops
        .iter()
        .find(|r| r["name"] == "aten::mm")
        .expect("aten::mm");
    let calls = ranges
        .iter()
        .filter(|r| {
            r["name"]
                .as_str()
                .unwrap()
                .starts_with("aten::mm, op_id = ")
        })
        .map(|r| r["count"].as_i64().unwrap())
        .sum::<i64>();
    assert_eq!(mm["count"].as_i64().unwrap(), calls);
    assert!(
        !ops.iter()
            .any(|r| r["name"].as_str().unwrap().contains("op_id"))
    );
}

/// Item 10: njx-heap on two processes running the same programs tells them apart.
#[test]
fn heap_tables_name_the_profile_of_each_program() {
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    for view in ["peak", "buffers", "by-op-name"] {
        let two = ok("njx-heap", &["-q", "--view", view, &all[0], &all[1]]);
        let head = two.lines().next().unwrap();
        assert!(head.starts_with("profile "), "{view}: {head}");
        for p in ["pax_fsdp4_4proc_proc0 ", "pax_fsdp4_4proc_proc1 "] {
            assert!(
                two.lines()
                    .any(|l| l.starts_with(p) && l.contains("pjit__wrapped_step_fn")),
                "{view}: no row of {p}"
            );
        }
        // One profile: the table as it was, no column that says nothing.
        let one = ok("njx-heap", &["-q", "--view", view, &all[0]]);
        assert!(one.starts_with("program "), "{view}: {one}");
    }
}

/// Item 10: a JSON document that is not records (the peer's reference figures, a
/// report's JSON saved with an indent) is named for what it is.
#[test]
fn a_json_document_is_named_for_what_it_is() {
    let d = tempdir();
    let doc = write(
        d.path(),
        "reference-nsys-jax.json",
        b"{\n \"source\": \"nsys-jax\",\n \"proc0\": {\"ms\": 1.5}\n}\n",
    );
    for tool in ["njx-export", "njx-modules", "njx-report", "njx-ranges"] {
        let out = run(tool, &[&doc], b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{tool}: {err}");
        assert!(
            err.contains("reference-nsys-jax.json:1: a JSON document spread over several lines"),
            "{tool}: {err}"
        );
    }
}

/// Item 10 and 7: units and plurals as people read them; what njx-flamefold does not
/// draw is not warned about; njx-diff's refusal of a run without XLA names what works.
#[test]
fn units_plurals_and_notes_say_what_the_tool_does() {
    assert_eq!(njx::output::numbers::duration(15_300.0), "15.3 µs");
    let d = tempdir();
    let archives = example_run(d.path());
    let out = Command::new(exe("njx-combine"))
        .args(["-o", "one", &archives[0]])
        .current_dir(d.path())
        .output()
        .unwrap();
    let err = stderr_of(&out);
    assert!(err.contains(": 1 archive combined: "), "{err}");
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let mut args = vec!["--by", "op-name"];
    args.extend(all.iter().map(String::as_str));
    let out = run("njx-flamefold", &args, b"");
    let err = stderr_of(&out);
    assert!(
        err.contains("module pjit__wrapped_step_fn was compiled differently")
            && err.contains("each program's time is shown apart"),
        "{err}"
    );
    assert!(!err.contains("wait"), "{err}");
    let report = ok("njx-report", &["-q", &all[0], &all[1]]);
    let head: Vec<&str> = report.lines().take(3).collect();
    assert!(
        head[0].contains("programs that ran (distinct by HLO fingerprint)"),
        "{head:?}"
    );
    assert!(
        report.contains("(2 profiles, summed: not wall time)"),
        "{report}"
    );
    if let Some(fuser) = shared_data("nvfuser_nsys_sqlite") {
        let db = fuser.join("report1_nsys2025.1.1.sqlite");
        let db = db.to_str().unwrap();
        let out = run("njx-diff", &[db, "--vs", db], b"");
        assert_eq!(out.status.code(), Some(1));
        assert!(
            stderr_of(&out).contains("njx-diff --by kernel"),
            "{}",
            stderr_of(&out)
        );
    }
}

/// Item 2: users say which programs they mean. On the pax run the barrier all-reduce
/// `jit__psum` (4 bytes, `sync_global_devices`) drives the hidden share (0.65 % overall)
/// and makes device 0 the straggler by 112 ms; for the step program alone the hidden share
/// is 57.7 % and device 0's lateness 0.03 ms.
#[test]
fn program_and_exclude_program_answer_for_the_programs_meant() {
    let d = tempdir();
    let archives = example_run(d.path());
    // Every tool that answers per program takes both options; a name no program has is a
    // usage error naming it, a filter that leaves nothing too, and a partial holds every
    // program.
    for tool in [
        vec!["njx-report"],
        vec!["njx-collectives"],
        vec!["njx-thunks"],
        vec!["njx-flamefold", "--by", "op-name"],
    ] {
        let with = |extra: &[&str]| {
            let mut a: Vec<&str> = tool[1..].to_vec();
            a.extend_from_slice(extra);
            a.extend(archives.iter().map(String::as_str));
            run(tool[0], &a, b"")
        };
        let out = with(&["--program", "jit_stepp"]);
        assert_eq!(out.status.code(), Some(2), "{tool:?}");
        assert!(
            stderr_of(&out).contains("--program jit_stepp: no program"),
            "{tool:?}"
        );
        let out = with(&["--exclude-program", "jit_step"]);
        assert_eq!(out.status.code(), Some(2), "{tool:?}");
        assert!(
            stderr_of(&out).contains("leaves none"),
            "{tool:?}: {}",
            stderr_of(&out)
        );
        let out = with(&["--partial", "--program", "jit_step"]);
        assert_eq!(out.status.code(), Some(2), "{tool:?}");
        // By name or by fingerprint, the answer is the whole one (one program here).
        // The report lists the filter's note in its header; the rest is the same.
        let text = |o: &std::process::Output| -> String {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter(|l| !l.contains("programs kept (--program"))
                .collect::<Vec<_>>()
                .join("\n")
        };
        let all = with(&[]);
        for key in ["jit_step", "5d41402abc4b2a76b9719d911017c592"] {
            let one = with(&["--program", key]);
            assert!(one.status.success(), "{tool:?} {key}: {}", stderr_of(&one));
            assert!(
                text(&one) == text(&all),
                "{tool:?} {key}: the answer changed"
            );
            assert!(stderr_of(&one).contains("1 of 1 programs kept"), "{tool:?}");
        }
    }
    let out = run(
        "njx-diff",
        &[
            &archives[0],
            "--vs",
            &archives[1],
            "--by",
            "kernel",
            "--program",
            "x",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    let diff = |extra: &[&str]| {
        let mut a = vec!["-q", "--format", "json", &archives[0], "--vs", &archives[1]];
        a.extend_from_slice(extra);
        run("njx-diff", &a, b"")
    };
    assert_eq!(diff(&["--program", "jit_step"]).stdout, diff(&[]).stdout);
    assert_eq!(
        diff(&["--exclude-program", "jit_step"]).status.code(),
        Some(2)
    );
    assert_eq!(diff(&["--program", "jit_stepp"]).status.code(), Some(2));
    let Some(pax) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let all = pax_archives(&pax);
    let collectives = |extra: &[&str]| {
        let mut a = vec!["-q", "--format", "json"];
        a.extend_from_slice(extra);
        a.extend(all.iter().map(String::as_str));
        json_lines(&ok("njx-collectives", &a))
    };
    let overall = |rows: &[serde_json::Value]| {
        rows.iter()
            .find(|r| r["table"] == "hidden" && r["collective"] == "overall")
            .map(|r| r["hidden_ratio"].as_f64().unwrap())
            .unwrap()
    };
    let lateness0 = |rows: &[serde_json::Value]| {
        rows.iter()
            .find(|r| r["table"] == "stragglers" && r["device"] == 0)
            .map(|r| r["lateness_mean_ns"].as_f64().unwrap())
            .unwrap()
    };
    let whole = collectives(&[]);
    let step = collectives(&["--program", "pjit__wrapped_step_fn"]);
    let no_barrier = collectives(&["--exclude-program", "jit__psum"]);
    assert!(overall(&whole) < 0.01, "{}", overall(&whole));
    assert!((overall(&step) - 0.577).abs() < 0.001, "{}", overall(&step));
    assert!(lateness0(&whole) > 100e6, "{}", lateness0(&whole));
    assert!(lateness0(&step) < 0.1e6, "{}", lateness0(&step));
    // Without a filter, the per-program tables tell the barrier from the step
    // (programs keyed by name: the step's two compilations together).
    let by_name = collectives(&["--program-key", "name"]);
    let of = |table: &str, program: &str, pick: &dyn Fn(&serde_json::Value) -> bool| {
        by_name
            .iter()
            .find(|r| r["table"] == table && r["program"] == program && pick(r))
            .unwrap_or_else(|| panic!("{table} {program}"))
            .clone()
    };
    let step_hidden = of("hidden-by-program", "pjit__wrapped_step_fn", &|r| {
        r["collective"] == "overall"
    });
    assert!(
        (step_hidden["hidden_ratio"].as_f64().unwrap() - overall(&step)).abs() < 1e-12,
        "{step_hidden}"
    );
    let late = |program: &str| {
        of("stragglers-by-program", program, &|r| r["device"] == 0)["lateness_mean_ns"]
            .as_f64()
            .unwrap()
    };
    assert!(late("jit__psum") > 1000e6, "{}", late("jit__psum"));
    assert!(late("pjit__wrapped_step_fn") < 0.1e6);
    // Without the barrier, the step is nearly all that communicates.
    assert!((overall(&no_barrier) - overall(&step)).abs() < 0.01);
    assert!(
        !no_barrier
            .iter()
            .any(|r| r["table"] == "wait" && r["name"] == "jit__psum")
    );
    // The module table of the report keeps the same programs, their shares of those.
    let report = ok(
        "njx-report",
        &[
            "-q",
            "--format",
            "json",
            "--program",
            "pjit__wrapped_step_fn",
            &all[0],
            &all[1],
            &all[2],
            &all[3],
        ],
    );
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    let modules = report["sections"]["modules"]["rows"].as_array().unwrap();
    assert_eq!(modules.len(), 2, "{modules:?}");
    let shares: f64 = modules.iter().map(|m| m["percent"].as_f64().unwrap()).sum();
    assert!((shares - 100.0).abs() < 1e-6, "{shares}");
}

/// Item 6: text fits a terminal. On a terminal the wide text columns are cut with `…` to
/// its width (`script` gives the tool one, `stty` its size); `--wide`, a pipe or a file, and
/// `--format json` keep everything.
#[test]
fn tables_fit_the_terminal_and_wide_keeps_them_whole() {
    let have_script = Command::new("script").arg("--version").output().is_ok();
    if !have_script || !has_bash() {
        eprintln!("SKIPPED: no `script` (util-linux) to give the tools a terminal");
        return;
    }
    let d = tempdir();
    let archives = example_run(d.path());
    let on_terminal = |extra: &str| {
        let line = format!(
            "stty rows 40 cols 100; \"{}\" -q {extra} {} {}",
            exe("njx-thunks"),
            archives[0],
            archives[1]
        );
        let out = Command::new("script")
            .args(["-qec", &line, "/dev/null"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr_of(&out));
        String::from_utf8_lossy(&out.stdout).replace('\r', "")
    };
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap();
    let cut = on_terminal("");
    assert!(cut.contains("op_name") && cut.contains('…'), "{cut}");
    assert!(widest(&cut) <= 100, "{cut}");
    let whole = on_terminal("--wide");
    assert!(widest(&whole) > 100 && !whole.contains('…'), "{whole}");
    // Not a terminal: whole, as before.
    let piped = ok("njx-thunks", &["-q", &archives[0], &archives[1]]);
    assert_eq!(piped.trim_end(), whole.trim_end());
    // Records are never cut.
    let records = on_terminal("--format json");
    assert!(!records.contains('…'), "{records}");
}
