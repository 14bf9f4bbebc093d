//! Hangs: folders with link loops, FIFOs and sockets where tables and dumps are expected
//! (extracted archives, `--hlo` folders), SQLite "tables" that are endless recursive
//! views, HLO stack frames that form cycles, and whole file systems given as an
//! nsys-jax folder. Each must end within a short limit.

use super::fixtures::*;
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::write;
use njx::hlo::proto::HloProto;
use prost::Message;
use std::os::unix::fs::symlink;
use std::path::Path;

/// Hang cases end well within this (seconds).
const LIMIT: u64 = 15;
/// An endless SQLite view is refused within this (seconds).
const VIEW_LIMIT: u64 = 10;
/// The whole file system, given as an nsys-jax folder, is said not to be one within this
/// (seconds): walking all of it first takes longer (about 9 s here, debug build).
const FAST: u64 = 5;
/// Smaller system folders (/usr: 1–4.5 s to walk, debug build, loaded machine).
const SYSTEM: u64 = 10;

fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(ok.success());
}

fn socket(path: &Path) {
    let l = std::os::unix::net::UnixListener::bind(path).expect("bind socket");
    drop(l);
}

fn s(p: &Path) -> String {
    p.to_str().unwrap().to_string()
}

/// Module and thunk records and an XLA dump folder holding `proto`; returns the
/// arguments of `njx-flamefold --by BY`.
fn by_with_dump(d: &Path, by: &str, proto: &HloProto) -> Vec<String> {
    let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
    let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
    write(&d.join("xla_dump"), DUMP_FILE, &proto.encode_to_vec());
    args!["--by", by, m, t, "--hlo", s(&d.join("xla_dump"))]
}

/// An SQLite export whose `table` is replaced by an endless recursive view with the
/// table's columns.
fn endless_view(d: &Path, table: &str, cross: bool) -> String {
    let path = write_sqlite(d, "e.sqlite");
    let conn = rusqlite::Connection::open(&path).unwrap();
    let cols: Vec<String> = {
        let mut st = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
            .unwrap();
        st.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert!(!cols.is_empty(), "{table} has columns");
    let gtid = crate::common::nsys_sqlite::gtid(7, 2);
    let gpid = crate::common::nsys_sqlite::gpid(7);
    // A view has no rowid of its own: it gets a column of that name, as readers that
    // select the rowid of nsys' tables find it.
    let mut exprs: Vec<String> = vec!["n AS rowid".to_string()];
    let more: Vec<String> = cols
        .iter()
        .map(|c| {
            let e = match c.as_str() {
                "start" => "n".to_string(),
                "end" => "n + 10".to_string(),
                "eventType" => "59".to_string(),
                "text" | "value" | "name" | "label" => "'x' || n".to_string(),
                "id" | "correlationId" | "rangeId" => "n".to_string(),
                "globalTid" => gtid.to_string(),
                "globalPid" => gpid.to_string(),
                "domainId" | "deviceId" => "0".to_string(),
                _ => "1".to_string(),
            };
            format!("{e} AS \"{c}\"")
        })
        .collect();
    exprs.extend(more);
    let from = if cross {
        "WITH a(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM a LIMIT 1000000) \
         SELECT * FROM (SELECT x.n * 1000000 + y.n AS n FROM a AS x, a AS y)"
    } else {
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT * FROM r"
    };
    conn.execute_batch(&format!(
        "DROP TABLE {table}; CREATE VIEW {table} AS SELECT {} FROM ({from});",
        exprs.join(", ")
    ))
    .unwrap();
    drop(conn);
    path
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    let (ok, refused, survives) = (Expect::Accepted, Expect::Refused, Expect::Survives);

    // Link loops in an extracted archive: the walk must not follow them.
    type Links = fn(&Path);
    let loops: &[(&str, Links)] = &[
        ("a -> .", |r| symlink(".", r.join("a")).unwrap()),
        ("a -> ..", |r| symlink("..", r.join("a")).unwrap()),
        ("a -> /", |r| symlink("/", r.join("a")).unwrap()),
        ("loop -> loop", |r| symlink("loop", r.join("loop")).unwrap()),
        ("x -> y, y -> x", |r| {
            symlink("y", r.join("x")).unwrap();
            symlink("x", r.join("y")).unwrap();
        }),
        ("dump/up -> ..", |r| {
            symlink("..", r.join("dump/up")).unwrap()
        }),
        ("dump/self -> ../dump", |r| {
            symlink("../dump", r.join("dump/self")).unwrap()
        }),
        ("nvtx_gpu_proj_trace/deep -> ../nvtx_gpu_proj_trace", |r| {
            symlink("../nvtx_gpu_proj_trace", r.join("nvtx_gpu_proj_trace/deep")).unwrap()
        }),
    ];
    for &(label, make) in loops {
        for table in ["ranges", "thunks"] {
            v.push(Case::new(
                format!("extracted archive with {label}, --table {table}"),
                "njx-export",
                ok,
                move |d: &Path| {
                    let root = write_extracted(d, "rank0");
                    make(Path::new(&root));
                    Run::new(args!["--table", table, root]).timeout(LIMIT)
                },
            ));
        }
    }
    for tool in [
        "njx-modules",
        "njx-collectives",
        "njx-compile-summary",
        "njx-report",
    ] {
        v.push(Case::new(
            "extracted archive with a -> .",
            tool,
            ok,
            |d: &Path| {
                let root = write_extracted(d, "rank0");
                symlink(".", Path::new(&root).join("a")).unwrap();
                Run::new(args![root]).timeout(LIMIT)
            },
        ));
    }
    v.push(Case::new(
        "extracted archive with a -> ., --by source",
        "njx-flamefold",
        ok,
        |d: &Path| {
            let root = write_extracted(d, "rank0");
            symlink(".", Path::new(&root).join("a")).unwrap();
            Run::new(args!["--by", "source", root]).timeout(LIMIT)
        },
    ));
    v.push(Case::new(
        "extracted archive where dump is a link to .",
        "njx-export",
        survives,
        |d: &Path| {
            let root = write_extracted(d, "rank0");
            std::fs::remove_dir_all(Path::new(&root).join("dump")).unwrap();
            symlink(".", Path::new(&root).join("dump")).unwrap();
            Run::new(args!["--table", "thunks", root])
                .name("rank0")
                .timeout(LIMIT)
        },
    ));
    v.push(Case::new(
        "an input that is a link loop",
        "njx-export",
        refused,
        |d: &Path| {
            symlink("loop", d.join("loop")).unwrap();
            Run::new(args![s(&d.join("loop"))])
                .name("loop")
                .timeout(LIMIT)
        },
    ));

    // FIFOs and sockets where a table or a dump is expected.
    type Special = fn(&Path);
    let specials: &[(&str, &str, &str, Expect, Special)] = &[
        ("FIFO", PUSHPOP, "ranges", refused, mkfifo),
        ("FIFO", GPU_PROJ, "gpu-ranges", refused, mkfifo),
        ("FIFO", THREADS, "modules", survives, mkfifo),
        ("FIFO", DUMP, "thunks", survives, mkfifo),
        ("socket", PUSHPOP, "ranges", refused, socket),
        ("socket", GPU_PROJ, "thunks", refused, socket),
        ("link to a FIFO", PUSHPOP, "ranges", refused, |p| {
            let fifo = p.parent().unwrap().parent().unwrap().join("fifo");
            mkfifo(&fifo);
            symlink(&fifo, p).unwrap();
        }),
        ("link to a FIFO", DUMP, "thunks", survives, |p| {
            let fifo = p.parent().unwrap().join("fifo");
            mkfifo(&fifo);
            symlink(&fifo, p).unwrap();
        }),
    ];
    for &(label, member, table, expect, make) in specials {
        v.push(Case::new(
            format!("extracted archive, {member} is a {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let root = write_extracted(d, "rank0");
                let m = Path::new(&root).join(member);
                std::fs::remove_file(&m).unwrap();
                make(&m);
                Run::new(args!["--table", table, root])
                    .name("rank0")
                    .timeout(LIMIT)
            },
        ));
    }
    v.push(Case::new(
        "extracted archive with a FIFO beside the tables",
        "njx-export",
        ok,
        |d: &Path| {
            let root = write_extracted(d, "rank0");
            mkfifo(&Path::new(&root).join("report_nvtx_pushpop_trace.csv"));
            mkfifo(&Path::new(&root).join("dump/module_0009.x.hlo.pb.xz"));
            Run::new(args!["--table", "thunks", root]).timeout(LIMIT)
        },
    ));

    // --hlo folders.
    for (label, make) in [
        (
            "a -> .",
            (|h: &Path| symlink(".", h.join("a")).unwrap()) as Links,
        ),
        ("loop -> loop", |h| symlink("loop", h.join("loop")).unwrap()),
        ("a FIFO named like a dump", |h| {
            mkfifo(&h.join("module_0009.jit_g.sm_8.0_gpu_after_optimizations.hlo.pb"))
        }),
        ("a socket named like a dump", |h| {
            socket(&h.join("module_0009.jit_g.sm_8.0_gpu_after_optimizations.hlo.pb"))
        }),
        ("a link to a FIFO named like a dump", |h| {
            mkfifo(&h.join("fifo"));
            symlink(
                h.join("fifo"),
                h.join("module_0009.jit_g.sm_8.0_gpu_after_optimizations.hlo.pb"),
            )
            .unwrap();
        }),
    ] {
        v.push(Case::new(
            format!("--hlo folder with {label}"),
            "njx-flamefold",
            ok,
            move |d: &Path| {
                let a = by_with_dump(d, "source", &hlo_proto());
                make(&d.join("xla_dump"));
                Run::new(a).timeout(LIMIT)
            },
        ));
        v.push(Case::new(
            format!("--hlo folder with {label}, SQLite thunks"),
            "njx-export",
            ok,
            move |d: &Path| {
                let e = write_sqlite(d, "e.sqlite");
                let h = write_dump_dir(d, "xla_dump");
                make(Path::new(&h));
                Run::new(args!["--table", "thunks", e, "--hlo", h]).timeout(LIMIT)
            },
        ));
    }
    v.push(Case::new(
        "--hlo a link loop",
        "njx-flamefold",
        refused,
        |d: &Path| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            symlink("loop", d.join("loop")).unwrap();
            Run::new(args!["--by", "source", m, t, "--hlo", s(&d.join("loop"))])
                .name("loop")
                .timeout(LIMIT)
        },
    ));

    // SQLite tables that never end.
    // (A view of thread names joined with the strings may end by itself: there only
    // survival is asked.)
    let views: &[(&str, &str, &[&str], Expect)] = &[
        ("NVTX_EVENTS", "njx-export", &[], refused),
        ("NVTX_EVENTS", "njx-ranges", &[], refused),
        ("NVTX_EVENTS", "njx-modules", &[], refused),
        ("StringIds", "njx-export", &["--table", "thunks"], refused),
        (
            "ThreadNames",
            "njx-export",
            &["--table", "modules"],
            survives,
        ),
        (
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "njx-export",
            &["--table", "gpu-ranges"],
            refused,
        ),
        (
            "CUPTI_ACTIVITY_KIND_RUNTIME",
            "njx-collectives",
            &[],
            refused,
        ),
        ("ENUM_NSYS_EVENT_TYPE", "njx-export", &[], refused),
    ];
    for &(table, tool, extra, expect) in views {
        v.push(Case::new(
            format!(
                "SQLite {table} an endless recursive view {}",
                extra.join(" ")
            ),
            tool,
            expect,
            move |d: &Path| {
                let p = endless_view(d, table, false);
                let mut a: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
                a.push(p);
                Run::new(a).name("e.sqlite").timeout(VIEW_LIMIT)
            },
        ));
    }
    v.push(Case::new(
        "SQLite NVTX_EVENTS a view of 10^12 rows",
        "njx-export",
        refused,
        |d: &Path| {
            let p = endless_view(d, "NVTX_EVENTS", true);
            Run::new(args![p]).name("e.sqlite").timeout(VIEW_LIMIT)
        },
    ));

    // HLO stack frames and calls that form cycles.
    type Mutate = fn(&mut HloProto);
    let cycles: &[(&str, Mutate, Expect)] = &[
        (
            "stack frames 1 -> 2 -> 1",
            |p| {
                let idx = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                idx.stack_frames[0].parent_frame_id = 2;
            },
            refused,
        ),
        (
            "stack frame 2 its own parent",
            |p| {
                let idx = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                idx.stack_frames[1].parent_frame_id = 2;
            },
            refused,
        ),
        (
            "stack frames 100,000 deep",
            |p| {
                use njx::hlo::proto::stack_frame_index_proto::StackFrame;
                let idx = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .stack_frame_index
                    .as_mut()
                    .unwrap();
                idx.stack_frames = (0..100_000)
                    .map(|i| StackFrame {
                        file_location_id: 1 + (i % 2),
                        parent_frame_id: i,
                    })
                    .collect();
                // fusion.1 and fusion.2 at the deepest frame.
                let entry = p
                    .hlo_module
                    .as_mut()
                    .unwrap()
                    .computations
                    .last_mut()
                    .unwrap();
                for inst in &mut entry.instructions {
                    if let Some(m) = inst.metadata.as_mut() {
                        m.stack_frame_id = 100_000;
                    }
                }
            },
            survives,
        ),
        (
            "a fusion calling the entry computation",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.computations[1].instructions[1].called_computation_ids = vec![10];
            },
            survives,
        ),
        (
            "a computation calling itself",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                m.computations[1].instructions[1].called_computation_ids = vec![2];
            },
            survives,
        ),
        (
            "instructions that are their own operands",
            |p| {
                let m = p.hlo_module.as_mut().unwrap();
                for i in &mut m.computations.last_mut().unwrap().instructions {
                    i.operand_ids = vec![i.id];
                }
            },
            survives,
        ),
    ];
    for &(label, mutate, expect) in cycles {
        for by in ["source", "op-name"] {
            v.push(Case::new(
                format!("HLO dump with {label}, --by {by}"),
                "njx-flamefold",
                expect,
                move |d: &Path| {
                    let mut p = hlo_proto();
                    mutate(&mut p);
                    Run::new(by_with_dump(d, by, &p))
                        .name(DUMP_FILE)
                        .timeout(LIMIT)
                },
            ));
        }
    }

    // Whole file systems as an nsys-jax folder: not one, and said quickly.
    for root in ["/", "/usr", "/proc", "/sys", "/dev", "/etc"] {
        v.push(Case::new(
            format!("{root} as an extracted archive"),
            "njx-export",
            refused,
            move |_: &Path| {
                let limit = if root == "/" { FAST } else { SYSTEM };
                Run::new(args![root]).name(root).timeout(limit)
            },
        ));
    }
    v.push(Case::new(
        "/usr as an extracted archive",
        "njx-modules",
        refused,
        |_: &Path| Run::new(args!["/usr"]).name("/usr").timeout(SYSTEM),
    ));
    v.push(Case::new(
        "--hlo /usr",
        "njx-flamefold",
        survives,
        |d: &Path| {
            let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
            let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
            Run::new(args!["--by", "source", m, t, "--hlo", "/usr"])
                .name("/usr")
                .timeout(LIMIT)
        },
    ));
    v
}
