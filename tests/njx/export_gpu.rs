//! `njx-export --table gpu-ranges` through the built binary: every known form of the
//! `nvtx_gpu_proj_trace` table gives the records it should, field by field; an unknown
//! form is refused naming its columns; the real pax archive agrees with its own table.

use crate::common::*;
use serde_json::{Value, json};

/// One projected range of the fixtures: pid 7; a module on thread 1 with two thunks, one
/// of which launched an NCCL call; a second module on thread 2.
struct R {
    tid: i64,
    id: i64,
    parent: Option<i64>,
    depth: i64,
    children: i64,
    domain: &'static str,
    text: &'static str,
    start: i64,
    dur: i64,
    cpu_start: i64,
    cpu_dur: i64,
    ops: i64,
}

const RANGES: &[R] = &[
    R {
        tid: 1,
        id: 10,
        parent: None,
        depth: 0,
        children: 2,
        domain: "TSL",
        text: "XlaModule:#hlo_module=jit_f,program_id=3#",
        start: 1_000_000,
        dur: 500_000,
        cpu_start: 100_000,
        cpu_dur: 900_000,
        ops: 3,
    },
    R {
        tid: 1,
        id: 11,
        parent: Some(10),
        depth: 1,
        children: 0,
        domain: "TSL",
        text: "Thunk:#hlo_op=fusion.1#",
        start: 1_000_000,
        dur: 200_000,
        cpu_start: 150_000,
        cpu_dur: 50_000,
        ops: 1,
    },
    R {
        tid: 1,
        id: 12,
        parent: Some(10),
        depth: 1,
        children: 1,
        domain: "TSL",
        text: "Thunk:#hlo_op=all-reduce-start#",
        start: 1_300_000,
        dur: 200_000,
        cpu_start: 250_000,
        cpu_dur: 100_000,
        ops: 2,
    },
    R {
        tid: 1,
        id: 13,
        parent: Some(12),
        depth: 2,
        children: 0,
        domain: "NCCL",
        text: "ncclGroupEnd",
        start: 1_300_000,
        dur: 200_000,
        cpu_start: 260_000,
        cpu_dur: 80_000,
        ops: 1,
    },
    R {
        tid: 2,
        id: 20,
        parent: None,
        depth: 0,
        children: 0,
        domain: "TSL",
        text: "XlaModule:#hlo_module=jit_g#",
        start: 2_000_000,
        dur: 50_000,
        cpu_start: 1_900_000,
        cpu_dur: 120_000,
        ops: 1,
    },
];

const MEMBER: &str = "nvtx_gpu_proj_trace/trace.parquet";

fn full_name(r: &R) -> String {
    format!("{}:{}", r.domain, r.text)
}

fn stack(r: &R) -> Vec<i64> {
    let mut ids = vec![r.id];
    let mut parent = r.parent;
    while let Some(p) = parent {
        ids.insert(0, p);
        parent = RANGES.iter().find(|q| q.id == p).unwrap().parent;
    }
    ids
}

/// The first form, as pandas wrote it: the row of GPU work outside any range first (no
/// Name, RangeId, Lvl or Orig times), the columns with missing values as doubles. One
/// root's ParentId is a stored NaN rather than a null.
fn first_form() -> Vec<u8> {
    let n = RANGES.len() + 1;
    let cells = |f: &dyn Fn(&R) -> Option<i64>, outside: Option<i64>| -> Vec<Option<i64>> {
        std::iter::once(outside)
            .chain(RANGES.iter().map(f))
            .collect()
    };
    let doubles = |f: &dyn Fn(&R) -> Option<f64>| -> Vec<Option<f64>> {
        std::iter::once(None).chain(RANGES.iter().map(f)).collect()
    };
    let names: Vec<String> = RANGES.iter().map(full_name).collect();
    let stacks: Vec<String> = RANGES
        .iter()
        .map(|r| stack(r).iter().map(|i| format!(":{i}")).collect())
        .collect();
    fn texts(v: &[String]) -> Vec<Option<&str>> {
        std::iter::once(None)
            .chain(v.iter().map(|s| Some(s.as_str())))
            .collect()
    }
    let parents: Vec<Option<f64>> = std::iter::once(None)
        .chain(RANGES.iter().map(|r| match (r.id, r.parent) {
            (20, _) => Some(f64::NAN),
            (_, p) => p.map(|p| p as f64),
        }))
        .collect();
    parquet_table(
        &[
            pq_text("Name", &texts(&names)),
            pq_int("Projected Start", &cells(&|r| Some(r.start), Some(900_000))),
            pq_int(
                "Projected Duration",
                &cells(&|r| Some(r.dur), Some(5_000_000)),
            ),
            pq_double("Orig Start", &doubles(&|r| Some(r.cpu_start as f64))),
            pq_double("Orig Duration", &doubles(&|r| Some(r.cpu_dur as f64))),
            pq_text(
                "Style",
                &std::iter::once(None)
                    .chain(RANGES.iter().map(|_| Some("PushPop")))
                    .collect::<Vec<_>>(),
            ),
            pq_int("PID", &vec![Some(7); n]),
            pq_int("TID", &cells(&|r| Some(r.tid), Some(3))),
            pq_int("NumGPUOps", &cells(&|r| Some(r.ops), Some(383))),
            pq_double("Lvl", &doubles(&|r| Some(r.depth as f64))),
            pq_int("NumChild", &cells(&|r| Some(r.children), Some(0))),
            pq_double("RangeId", &doubles(&|r| Some(r.id as f64))),
            pq_double("ParentId", &parents),
            pq_text("RangeStack", &texts(&stacks)),
            pq_int("Rank", &vec![Some(0); n]),
        ],
        1 << 20,
    )
}

/// Which recipe form to write.
#[derive(Clone, Copy)]
struct Recipe {
    domain: bool,
    device_stream: bool,
}

/// A recipe form: `Range Stack` a list, `Parent ID` a nullable integer, `Text` without
/// the domain. With `device_stream`, `Range ID` is a required int32 column (no
/// definition levels), and device = 100 + tid, stream = 10 × tid.
fn recipe_form(form: Recipe) -> Vec<u8> {
    let ints =
        |f: &dyn Fn(&R) -> i64| -> Vec<Option<i64>> { RANGES.iter().map(|r| Some(f(r))).collect() };
    let stacks: Vec<Vec<i64>> = RANGES.iter().map(stack).collect();
    let mut cols = vec![
        pq_text(
            "Text",
            &RANGES.iter().map(|r| Some(r.text)).collect::<Vec<_>>(),
        ),
        pq_int("Start", &ints(&|r| r.start)),
        pq_int("End", &ints(&|r| r.start + r.dur)),
        pq_int("PID", &ints(&|_| 7)),
        pq_int("TID", &ints(&|r| r.tid)),
        pq_int("Stack Level", &ints(&|r| r.depth)),
        pq_int("Children Count", &ints(&|r| r.children)),
        if form.device_stream {
            pq_int32(
                "Range ID",
                &RANGES.iter().map(|r| Some(r.id as i32)).collect::<Vec<_>>(),
            )
            .required()
        } else {
            pq_int("Range ID", &ints(&|r| r.id))
        },
        pq_int(
            "Parent ID",
            &RANGES.iter().map(|r| r.parent).collect::<Vec<_>>(),
        ),
        pq_int_list(
            "Range Stack",
            &stacks.iter().map(|s| Some(&s[..])).collect::<Vec<_>>(),
        ),
        pq_int("Rank", &ints(&|_| 0)),
    ];
    if form.domain {
        // The second module's domain is null: its name is the text alone.
        let domains: Vec<Option<&str>> = RANGES
            .iter()
            .map(|r| (r.id != 20).then_some(r.domain))
            .collect();
        cols.insert(0, pq_text("Domain", &domains));
    }
    if form.device_stream {
        cols.push(pq_int("Device ID", &ints(&|r| 100 + r.tid)));
        cols.push(pq_int("Stream ID", &ints(&|r| 10 * r.tid)));
    }
    parquet_table(&cols, 2)
}

/// The record a range should give: `name` as the form yields it, `cpu` with the CPU-side
/// fields, `device_stream` with device 100 + tid and stream 10 × tid.
fn expected(profile: &str, r: &R, name: &str, cpu: bool, device_stream: bool) -> Value {
    let opt = |on: bool, v: i64| if on { Value::from(v) } else { Value::Null };
    json!({
        "profile": profile,
        "pid": 7,
        "tid": r.tid,
        "id": r.id,
        "parent": r.parent,
        "depth": r.depth,
        "children": r.children,
        "name": name,
        "start_ns": r.start,
        "dur_ns": r.dur,
        "cpu_start_ns": opt(cpu, r.cpu_start),
        "cpu_dur_ns": opt(cpu, r.cpu_dur),
        "gpu_ops": opt(cpu, r.ops),
        "device": opt(device_stream, 100 + r.tid),
        "stream": opt(device_stream, 10 * r.tid),
    })
}

/// Runs `njx-export --table gpu-ranges` on `paths`: (records, stderr).
fn export(paths: &[&str]) -> (Vec<Value>, String) {
    let mut args = vec!["--table", "gpu-ranges"];
    args.extend_from_slice(paths);
    let out = run("njx-export", &args, b"");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "njx-export failed: {stderr}");
    (json_lines(&String::from_utf8(out.stdout).unwrap()), stderr)
}

/// Runs it on an archive holding `table` and expects exit 1 with every needle in stderr.
fn refused(table: &[u8], needles: &[&str]) {
    let dir = tempdir();
    let a = write(dir.path(), "bad.zip", &zip(&[(MEMBER, table)], false));
    let out = run("njx-export", &["--table", "gpu-ranges", &a], b"");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
}

#[test]
fn first_form_keeps_names_and_cpu_times_and_reports_the_row_outside_any_range() {
    let dir = tempdir();
    let a = write(
        dir.path(),
        "rank0.zip",
        &zip(&[(MEMBER, &first_form())], false),
    );
    let (got, err) = export(&[&a]);
    let want: Vec<Value> = RANGES
        .iter()
        .map(|r| expected("rank0", r, &full_name(r), true, false))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[3]["name"], "NCCL:ncclGroupEnd");
    assert_eq!(got[0]["cpu_dur_ns"], 900_000);
    // The stored NaN ParentId is a null parent, like the real nulls.
    assert_eq!(got[4]["parent"], Value::Null);
    assert_eq!(
        err.trim_end(),
        format!(
            "njx-export: {a}!{MEMBER}: 1 rows of GPU work outside any NVTX range (no RangeId) \
             not exported"
        )
    );
}

#[test]
fn recipe_form_names_lack_the_domain_and_cpu_fields_are_null() {
    let dir = tempdir();
    let form = Recipe {
        domain: false,
        device_stream: false,
    };
    let a = write(
        dir.path(),
        "r.zip",
        &zip(&[(MEMBER, &recipe_form(form))], true),
    );
    let (got, err) = export(&[&a]);
    let want: Vec<Value> = RANGES
        .iter()
        .map(|r| expected("r", r, r.text, false, false))
        .collect();
    assert_eq!(got, want);
    assert_eq!(got[3]["name"], "ncclGroupEnd");
    assert_eq!(got[3]["dur_ns"], 200_000);
    assert_eq!(err, "", "nothing is skipped in this form");
}

#[test]
fn recipe_form_with_domain_prefixes_names_like_the_push_pop_table() {
    let dir = tempdir();
    let form = Recipe {
        domain: true,
        device_stream: false,
    };
    let a = write(
        dir.path(),
        "d.zip",
        &zip(&[(MEMBER, &recipe_form(form))], false),
    );
    let (got, _) = export(&[&a]);
    let want: Vec<Value> = RANGES
        .iter()
        .map(|r| {
            let name = if r.id == 20 {
                r.text.to_string()
            } else {
                full_name(r)
            };
            expected("d", r, &name, false, false)
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        got[0]["name"],
        "TSL:XlaModule:#hlo_module=jit_f,program_id=3#"
    );
    assert_eq!(got[3]["name"], "NCCL:ncclGroupEnd");
    assert_eq!(got[4]["name"], "XlaModule:#hlo_module=jit_g#");
}

#[test]
fn per_gpu_and_per_stream_tables_fill_device_and_stream() {
    let dir = tempdir();
    for domain in [false, true] {
        let form = Recipe {
            domain,
            device_stream: true,
        };
        let p = write(dir.path(), "trace.parquet", &recipe_form(form));
        let (got, _) = export(&[&p]);
        let want: Vec<Value> = RANGES
            .iter()
            .map(|r| {
                let name = if domain && r.id != 20 {
                    full_name(r)
                } else {
                    r.text.to_string()
                };
                expected("trace", r, &name, false, true)
            })
            .collect();
        assert_eq!(got, want);
        assert_eq!(got[4]["device"], 102);
        assert_eq!(got[4]["stream"], 20);
    }
}

#[test]
fn archives_extracted_combined_on_stdin_and_standalone_name_their_profiles() {
    let dir = tempdir();
    let first = first_form();
    let recipe = recipe_form(Recipe {
        domain: true,
        device_stream: false,
    });
    // A combine archive: one member per profile, each in its own form.
    let combined = zip(
        &[
            (&format!("{MEMBER}/rank0"), &first),
            (&format!("{MEMBER}/rank1"), &recipe),
            ("thread-metadata.parquet", b"shared"),
        ],
        true,
    );
    let c = write(dir.path(), "all.zip", &combined);
    let (got, err) = export(&[&c]);
    assert_eq!(got.len(), 2 * RANGES.len());
    assert!(got[..5].iter().all(|r| r["profile"] == "rank0"));
    assert!(got[5..].iter().all(|r| r["profile"] == "rank1"));
    assert!(
        err.contains(&format!("{c}!{MEMBER}/rank0: 1 rows")),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // Extracted: the archive's folder name is the profile.
    let x = dir.path().join("rank7");
    write(&x, MEMBER, &first);
    let (got, _) = export(&[x.to_str().unwrap()]);
    assert_eq!(got.len(), RANGES.len());
    assert_eq!(got[0]["profile"], "rank7");

    // A zip on stdin.
    let out = run(
        "njx-export",
        &["--table", "gpu-ranges"],
        &zip(&[(MEMBER, &recipe)], false),
    );
    assert!(out.status.success());
    let got = json_lines(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(got.len(), RANGES.len());
    assert_eq!(got[0]["profile"], "stdin");

    // Several inputs: records of each carry its own profile, in order.
    let p = write(dir.path(), "trace.parquet", &recipe);
    let (got, _) = export(&[&p, &c]);
    assert_eq!(got.len(), 3 * RANGES.len());
    assert_eq!(got[0]["profile"], "trace");
    assert_eq!(got[5]["profile"], "rank0");
}

#[test]
fn csv_output_has_every_field_with_empty_nulls() {
    let dir = tempdir();
    let a = write(
        dir.path(),
        "rank0.zip",
        &zip(&[(MEMBER, &first_form())], false),
    );
    let text = ok(
        "njx-export",
        &["--table", "gpu-ranges", "--format", "csv", &a],
    );
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some(
            "profile,pid,tid,id,parent,depth,children,name,start_ns,dur_ns,cpu_start_ns,\
             cpu_dur_ns,gpu_ops,device,stream"
        )
    );
    assert_eq!(
        lines.next(),
        Some(
            "rank0,7,1,10,,0,2,\"TSL:XlaModule:#hlo_module=jit_f,program_id=3#\",1000000,\
             500000,100000,900000,3,,"
        )
    );
    assert_eq!(lines.count(), RANGES.len() - 1);
}

#[test]
fn large_tables_stream_across_row_groups_and_batches() {
    // 12,000 ranges in row groups of 5,000: batches end inside and at row-group ends.
    let n = 12_000i64;
    let ints = |f: &dyn Fn(i64) -> Option<i64>| -> Vec<Option<i64>> { (0..n).map(f).collect() };
    let names: Vec<String> = (0..n)
        .map(|i| format!("TSL:Thunk:#hlo_op=f.{i}#"))
        .collect();
    let stacks: Vec<Vec<i64>> = (0..n)
        .map(|i| if i == 0 { vec![0] } else { vec![0, i] })
        .collect();
    let table = parquet_table(
        &[
            pq_text(
                "Text",
                &names.iter().map(|s| Some(s.as_str())).collect::<Vec<_>>(),
            ),
            pq_int("Start", &ints(&|i| Some(10 * i))),
            pq_int("End", &ints(&|i| Some(10 * i + i % 7))),
            pq_int("PID", &ints(&|_| Some(7))),
            pq_int("TID", &ints(&|i| Some(1 + i % 3))),
            pq_int("Stack Level", &ints(&|i| Some(i64::from(i > 0)))),
            pq_int(
                "Children Count",
                &ints(&|i| Some(if i == 0 { n - 1 } else { 0 })),
            ),
            pq_int("Range ID", &ints(&Some)),
            pq_int("Parent ID", &ints(&|i| (i > 0).then_some(0))),
            pq_int_list(
                "Range Stack",
                &stacks.iter().map(|s| Some(&s[..])).collect::<Vec<_>>(),
            ),
        ],
        5_000,
    );
    let dir = tempdir();
    let p = write(dir.path(), "big.parquet", &table);
    let (got, _) = export(&[&p]);
    assert_eq!(got.len(), n as usize);
    for (i, r) in got.iter().enumerate() {
        let i = i as i64;
        assert_eq!(r["id"], i);
        assert_eq!(r["name"], names[i as usize]);
        assert_eq!(r["start_ns"], 10 * i);
        assert_eq!(r["dur_ns"], i % 7);
        assert_eq!(r["tid"], 1 + i % 3);
        assert_eq!(r["depth"], i64::from(i > 0));
        assert_eq!(r["parent"], if i == 0 { Value::Null } else { 0.into() });
    }
}

#[test]
fn an_unknown_form_is_refused_naming_the_member_and_its_columns() {
    // A recipe-like table whose depth column has another name.
    let table = parquet_table(
        &[
            pq_text("Text", &[Some("a")]),
            pq_int("Start", &[Some(1)]),
            pq_int("End", &[Some(2)]),
            pq_int("TID", &[Some(1)]),
            pq_int("Level", &[Some(0)]),
            pq_int("Children Count", &[Some(0)]),
            pq_int("Range ID", &[Some(1)]),
            pq_int("Parent ID", &[None]),
        ],
        10,
    );
    refused(
        &table,
        &[
            &format!("bad.zip!{MEMBER}: unknown nvtx_gpu_proj_trace table layout"),
            "missing Stack Level",
            "unexpected Level",
            "columns found: Text, Start, End, TID, Level, Children Count, Range ID, Parent ID",
        ],
    );
    // The recipe's table from an unpatched nsys 2024.5/2024.6: no thread ids.
    let table = parquet_table(
        &[
            pq_text("Text", &[Some("a")]),
            pq_int("Start", &[Some(1)]),
            pq_int("End", &[Some(2)]),
            pq_int("PID", &[Some(1)]),
            pq_int("Stack Level", &[Some(0)]),
            pq_int("Children Count", &[Some(0)]),
            pq_int("Range ID", &[Some(1)]),
            pq_int("Parent ID", &[None]),
            pq_int_list("Range Stack", &[Some(&[1][..])]),
            pq_int("Rank", &[Some(0)]),
        ],
        10,
    );
    refused(
        &table,
        &[
            "missing TID",
            "nsys 2024.5 or 2024.6 without nsys-jax's patch",
            "nsys export --type sqlite",
        ],
    );
    // Neither form's marker: a push/pop table where the projection should be.
    refused(
        &pushpop_parquet(COMPILE_CSV),
        &[
            "neither a `Projected Start` nor a `Text` column",
            "columns found: Start (ns), End (ns), Duration (ns)",
        ],
    );
    // A column of the right name and the wrong kind.
    let table = parquet_table(
        &[
            pq_int("Text", &[Some(1)]),
            pq_int("Start", &[Some(1)]),
            pq_int("End", &[Some(2)]),
            pq_int("TID", &[Some(1)]),
            pq_int("Stack Level", &[Some(0)]),
            pq_int("Children Count", &[Some(0)]),
            pq_int("Range ID", &[Some(1)]),
            pq_int("Parent ID", &[None]),
        ],
        10,
    );
    refused(&table, &["column `Text` should be text, found INT64"]);
    // A list where a number belongs.
    let table = parquet_table(
        &[
            pq_text("Text", &[Some("a")]),
            pq_int("Start", &[Some(1)]),
            pq_int("End", &[Some(2)]),
            pq_int("TID", &[Some(1)]),
            pq_int_list("Stack Level", &[Some(&[0][..])]),
            pq_int("Children Count", &[Some(0)]),
            pq_int("Range ID", &[Some(1)]),
            pq_int("Parent ID", &[None]),
        ],
        10,
    );
    refused(
        &table,
        &["column `Stack Level` should be a number, found a nested column"],
    );
}

#[test]
fn bad_rows_are_refused_with_their_row_number() {
    let row = |end: i64, level: f64| {
        parquet_table(
            &[
                pq_text("Name", &[Some("a"), Some("b")]),
                pq_int("Projected Start", &[Some(5), Some(10)]),
                pq_int("Projected Duration", &[Some(1), Some(end - 10)]),
                pq_int("TID", &[Some(1), Some(1)]),
                pq_double("Lvl", &[Some(0.0), Some(level)]),
                pq_int("NumChild", &[Some(0), Some(0)]),
                pq_double("RangeId", &[Some(1.0), Some(2.0)]),
                pq_double("ParentId", &[None, None]),
            ],
            10,
        )
    };
    refused(
        &row(3, 0.0),
        &[
            &format!("bad.zip!{MEMBER}: row 2:"),
            "range ends (3) before it starts (10)",
        ],
    );
    refused(
        &row(12, 1.5),
        &["row 2: column `Lvl`: 1.5 is not an integer"],
    );
    refused(
        &b"PAR1 not really"[..],
        &["bad Parquet footer: the file does not end with PAR1"],
    );
}

#[test]
fn inputs_without_the_table_are_refused() {
    let dir = tempdir();
    let a = write(
        dir.path(),
        "ranges.zip",
        &zip(
            &[(
                "report_nvtx_pushpop_trace.csv.xz",
                &xz(COMPILE_CSV.as_bytes()),
            )],
            false,
        ),
    );
    let out = run("njx-export", &["--table", "gpu-ranges", &a], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("archive has no GPU projection table"), "{err}");
    assert!(err.contains(MEMBER), "{err}");

    let csv = write(dir.path(), "t.csv", COMPILE_CSV.as_bytes());
    let out = run("njx-export", &["--table", "gpu-ranges", &csv], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("t.csv: --table gpu-ranges reads"), "{err}");
}

/// An integer cell of the real table read with the parquet crate's row API, whatever its
/// type (pandas stored some integer columns as doubles; NaN and null are `None`).
fn int_of(row: &parquet::record::Row, name: &str) -> Option<i64> {
    use parquet::record::Field;
    let (_, field) = row.get_column_iter().find(|(n, _)| *n == name).unwrap();
    match field {
        Field::Null => None,
        Field::Long(v) => Some(*v),
        Field::Int(v) => Some(i64::from(*v)),
        Field::Double(v) if v.is_nan() => None,
        Field::Double(v) => {
            assert_eq!(v.fract(), 0.0, "{name}");
            Some(*v as i64)
        }
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_archive_gives_one_record_per_range_row_field_by_field() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use std::io::Read;

    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let archive = dir.join("pax_fsdp4_4proc_proc0.zip");
    let (got, err) = export(&[archive.to_str().unwrap()]);

    // The table itself, read independently through the parquet crate's row API.
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&archive).unwrap()).unwrap();
    let mut bytes = Vec::new();
    zip.by_name(MEMBER)
        .unwrap()
        .read_to_end(&mut bytes)
        .unwrap();
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).unwrap();
    let rows: Vec<parquet::record::Row> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let ranges: Vec<&parquet::record::Row> = rows
        .iter()
        .filter(|r| int_of(r, "RangeId").is_some())
        .collect();
    assert_eq!(rows.len(), 14_305);
    assert_eq!(ranges.len(), 14_304);
    assert_eq!(got.len(), ranges.len());
    assert!(
        err.contains("proc0.zip!nvtx_gpu_proj_trace/trace.parquet: 1 rows of GPU work outside"),
        "{err}"
    );

    for (i, (g, row)) in got.iter().zip(&ranges).enumerate() {
        let name = row
            .get_column_iter()
            .find(|(n, _)| *n == "Name")
            .map(|(_, f)| match f {
                parquet::record::Field::Str(s) => s.clone(),
                other => panic!("Name: {other:?}"),
            })
            .unwrap();
        let want = json!({
            "profile": "pax_fsdp4_4proc_proc0",
            "pid": int_of(row, "PID"),
            "tid": int_of(row, "TID"),
            "id": int_of(row, "RangeId"),
            "parent": int_of(row, "ParentId"),
            "depth": int_of(row, "Lvl"),
            "children": int_of(row, "NumChild"),
            "name": name,
            "start_ns": int_of(row, "Projected Start"),
            "dur_ns": int_of(row, "Projected Duration"),
            "cpu_start_ns": int_of(row, "Orig Start"),
            "cpu_dur_ns": int_of(row, "Orig Duration"),
            "gpu_ops": int_of(row, "NumGPUOps"),
            "device": null,
            "stream": null,
        });
        assert_eq!(g, &want, "record {i}");
    }

    // Spot checks against values read off the table by hand.
    assert_eq!(
        got[0]["name"],
        "TSL:XlaCompile:#module=jit__psum,program_id=1#"
    );
    assert_eq!(got[0]["id"], 25205);
    assert_eq!(got[0]["start_ns"], 26_969_429_472i64);
    assert_eq!(got[0]["dur_ns"], 3168);
    assert_eq!(got[0]["cpu_start_ns"], 26_940_828_778i64);
    assert_eq!(got[0]["cpu_dur_ns"], 83_320_285);
    assert_eq!(got[4]["name"], "NCCL:ncclGroupEnd");
    assert_eq!(got[4]["parent"], 28079);
    assert_eq!(got[4]["depth"], 2);
    let roots = got.iter().filter(|r| r["parent"].is_null()).count();
    assert_eq!(
        roots, 35,
        "36 null ParentIds less the row outside any range"
    );
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn all_four_real_archives_export_with_their_profiles() {
    let Some(dir) = shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let paths: Vec<String> = pax_archives(&dir);
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let (got, err) = export(&args);
    for i in 0..4 {
        let profile = format!("pax_fsdp4_4proc_proc{i}");
        assert!(got.iter().any(|r| r["profile"] == profile.as_str()));
    }
    assert_eq!(err.lines().count(), 4, "{err}");
    // Every record's parent is a record of the same profile.
    let ids: std::collections::HashSet<(String, i64)> = got
        .iter()
        .map(|r| {
            (
                r["profile"].as_str().unwrap().to_string(),
                r["id"].as_i64().unwrap(),
            )
        })
        .collect();
    for r in &got {
        if let Some(p) = r["parent"].as_i64() {
            assert!(ids.contains(&(r["profile"].as_str().unwrap().to_string(), p)));
        }
    }
}
