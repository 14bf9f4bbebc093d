//! Crashes: inputs that make a careless reader panic, overflow its stack or abort — trees
//! nested 100,000 deep in every input kind and tool, sizes a zip claims for its members,
//! absurd counts and lengths in Parquet footers, files truncated at many offsets, and
//! bit flips.

use super::fixtures::*;
use super::formats::*;
use super::harness::{Case, Expect, Run, shared, shared_bytes};
use crate::args;
use crate::common::{gzip, pushpop_parquet, write, xz};
use std::path::Path;

pub fn cases() -> Vec<Case> {
    let mut v = deep();
    v.extend(zip_sizes());
    v.extend(parquet_footers());
    v.extend(truncations());
    v.extend(bit_flips());
    v.extend(deep_json());
    v
}

/// JSON nested 100,000 deep inside a record or partial-result line.
fn deep_json() -> Vec<Case> {
    let nested =
        |open: &str, close: &str| format!("{}{}", open.repeat(100_000), close.repeat(100_000));
    let lines: Vec<(&str, &'static str, String)> = vec![
        (
            "range record",
            "njx-ranges",
            format!("{{\"profile\":{}}}\n", nested("[", "]")),
        ),
        (
            "range record",
            "njx-flamefold",
            format!("{{\"name\":{}}}\n", nested("{\"a\":", "}")),
        ),
        (
            "thunk record",
            "njx-collectives",
            format!("{{\"profile\":{}}}\n", nested("[", "]")),
        ),
        (
            "partial result",
            "njx-modules",
            format!(
                "{{\"njx_partial\":\"modules\",\"version\":3,\"data\":{}}}\n",
                nested("[", "]")
            ),
        ),
        (
            "partial result",
            "njx-collectives",
            format!(
                "{{\"njx_partial\":\"collectives\",\"version\":3,\"data\":{}}}\n",
                nested("{\"a\":", "}")
            ),
        ),
    ];
    lines
        .into_iter()
        .map(|(label, tool, line)| {
            Case::new(
                format!("{label} with JSON nested 100,000 deep"),
                tool,
                Expect::Refused,
                move |d: &Path| {
                    Run::new(args![write(d, "deep.jsonl", line.as_bytes())]).name("deep.jsonl:1")
                },
            )
        })
        .collect()
}

// ---------------------------------------------------------------- deep nesting

const DEEP: i64 = 100_000;

fn deep_csv_file() -> String {
    shared_bytes("deep100k.csv", || deep_csv(DEEP, false).into_bytes())
}

fn deep_compile_file() -> String {
    shared_bytes("deep100k-compile.csv", || deep_csv(DEEP, true).into_bytes())
}

fn deep_jsonl_file() -> String {
    shared_bytes("deep100k.jsonl", || deep_jsonl(DEEP).into_bytes())
}

fn deep_sqlite_file() -> String {
    shared("deep100k.sqlite", |p| deep_sqlite(p, DEEP))
}

fn deep_zip_file() -> String {
    shared_bytes("deep100k.zip", || {
        zip_raw(
            &[ZipEntry::stored(
                PUSHPOP,
                &xz(deep_csv(DEEP, false).as_bytes()),
            )],
            None,
        )
    })
}

/// 100,000-deep trees: valid, so every tool must take them (exit 0), except the folded
/// stacks of `njx-flamefold --by stack`, whose output grows with the square of the depth:
/// there only survival (a refusal naming the file, or bounded work) is asked.
fn deep() -> Vec<Case> {
    type Source = fn() -> String;
    let sources: &[(&str, Source, &str)] = &[
        ("csv", deep_csv_file, "deep100k.csv"),
        ("compile csv", deep_compile_file, "deep100k-compile.csv"),
        ("jsonl", deep_jsonl_file, "deep100k.jsonl"),
        ("sqlite", deep_sqlite_file, "deep100k.sqlite"),
        ("zip", deep_zip_file, "deep100k.zip"),
    ];
    let runs: &[(&str, &str, &[&str], &[&str])] = &[
        // (tool, label, extra args, sources by label)
        // Not the Parquet form: it has no `Lvl`, so its depth is read from `RangeStack`,
        // whose paths would hold O(depth²) bytes; the fixture's stub `:1` is (rightly)
        // refused as a depth that disagrees with the nesting.
        ("njx-export", "", &[], &["csv", "sqlite"]),
        (
            "njx-export",
            "gpu-ranges",
            &["--table", "gpu-ranges"],
            &["sqlite"],
        ),
        ("njx-ranges", "", &[], &["csv", "jsonl", "sqlite"]),
        (
            "njx-ranges",
            "--xla-compile",
            &["--xla-compile"],
            &["compile csv"],
        ),
        ("njx-ranges", "--fold", &["--fold", "^r5"], &["jsonl"]),
        (
            "njx-ranges",
            "--collapse --splice-workers",
            &["--collapse", "^r1", "--splice-workers"],
            &["csv"],
        ),
        (
            "njx-compile-summary",
            "",
            &[],
            &["compile csv", "jsonl", "zip"],
        ),
        (
            "njx-compile-summary",
            "--total --passes --by name",
            &["--total", "--passes", "--by", "name"],
            &["compile csv", "sqlite"],
        ),
    ];
    let mut v = Vec::new();
    for &(tool, label, extra, which) in runs {
        for &(source, make, file) in sources {
            if !which.contains(&source) {
                continue;
            }
            let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
            v.push(Case::new(
                format!("100,000 deep {source} {label}"),
                tool,
                Expect::Accepted,
                move |_: &Path| {
                    let path = make();
                    let mut a = extra;
                    a.push(path.clone());
                    Run::new(a).watch(path).name(file)
                },
            ));
        }
    }
    v.push(Case::new(
        "100,000 deep csv folded",
        "njx-flamefold",
        Expect::Survives,
        |_: &Path| {
            let path = deep_csv_file();
            Run::new(args![path])
                .watch(path)
                .name("deep100k.csv")
                .timeout(30)
        },
    ));
    v
}

// ---------------------------------------------------------------- zip sizes

/// Which size field of a member's headers is patched.
#[derive(Clone, Copy, Debug)]
enum Field {
    Size,
    CSize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Where {
    Local,
    Central,
    Both,
}

/// The table each member feeds, and so the export that reads it.
fn table_of(member: &str) -> &'static str {
    match member {
        GPU_PROJ => "gpu-ranges",
        THREADS => "modules",
        DUMP => "thunks",
        _ => "ranges",
    }
}

fn patched_archive(member: &str, field: Field, place: Where, value: u64, flip: bool) -> Vec<u8> {
    let mut entries = archive_entries(&[]);
    if flip {
        // The other storage: the xz members deflated, the Parquet members stored.
        entries = archive_members()
            .iter()
            .map(|(n, b)| {
                if n.ends_with(".xz") {
                    ZipEntry::deflated(n, b)
                } else {
                    ZipEntry::stored(n, b)
                }
            })
            .collect();
    }
    let e = entries.iter_mut().find(|e| e.name == member).unwrap();
    let local = matches!(place, Where::Local | Where::Both);
    let central = matches!(place, Where::Central | Where::Both);
    match field {
        Field::Size => {
            if local {
                e.local_size = Some(value);
            }
            if central {
                e.central_size = Some(value);
            }
        }
        Field::CSize => {
            if local {
                e.local_csize = Some(value);
            }
            if central {
                e.central_csize = Some(value);
            }
        }
    }
    zip_raw(&entries, None)
}

/// A member's declared size patched in its local header, in the central directory or in
/// both, to 2^32, 2^64−1 and other lies. A local header alone disagreeing with a sound
/// central directory may be ignored (many readers do), so there only survival is asked;
/// a central directory that lies must be refused, naming the archive.
fn zip_sizes() -> Vec<Case> {
    let mut v = Vec::new();
    let members = [PUSHPOP, DUMP, GPU_PROJ, THREADS];
    for member in members {
        for field in [Field::Size, Field::CSize] {
            for place in [Where::Local, Where::Central, Where::Both] {
                let mut values = vec![1u64 << 32, u64::MAX, 1];
                if place == Where::Central {
                    values.push(0xFFFF_FFFE);
                }
                for value in values {
                    let expect = if place == Where::Local {
                        Expect::Survives
                    } else {
                        Expect::Refused
                    };
                    v.push(Case::new(
                        format!("zip {member} {field:?} {place:?} = {value}"),
                        "njx-export",
                        expect,
                        move |d: &Path| {
                            let p = write(
                                d,
                                "rank0.zip",
                                &patched_archive(member, field, place, value, false),
                            );
                            Run::new(args!["--table", table_of(member), p]).name("rank0.zip")
                        },
                    ));
                }
            }
        }
    }
    // The other storage of each member.
    for member in members {
        for field in [Field::Size, Field::CSize] {
            for value in [1u64 << 32, u64::MAX] {
                v.push(Case::new(
                    format!("zip (other storage) {member} {field:?} Central = {value}"),
                    "njx-export",
                    Expect::Refused,
                    move |d: &Path| {
                        let p = write(
                            d,
                            "rank0.zip",
                            &patched_archive(member, field, Where::Central, value, true),
                        );
                        Run::new(args!["--table", table_of(member), p]).name("rank0.zip")
                    },
                ));
            }
        }
    }
    // Offsets and counts.
    type Patch = fn(&mut Vec<ZipEntry>) -> Option<u16>;
    let others: &[(&str, Patch)] = &[
        ("member offset 2^32", |e| {
            e[2].central_offset = Some(1 << 32);
            None
        }),
        ("member offset 2^64-1", |e| {
            e[2].central_offset = Some(u64::MAX);
            None
        }),
        ("member offset past the end", |e| {
            e[2].central_offset = Some(10_000_000);
            None
        }),
        ("member offset inside another member", |e| {
            e[2].central_offset = Some(7);
            None
        }),
        ("two members at one offset", |e| {
            e[3].central_offset = Some(0);
            None
        }),
        ("65535 entries declared", |_| Some(u16::MAX)),
        ("0 entries declared", |_| Some(0)),
        ("one entry fewer declared", |e| Some(e.len() as u16 - 1)),
    ];
    for &(label, patch) in others {
        v.push(Case::new(
            format!("zip {label}"),
            "njx-export",
            Expect::Refused,
            move |d: &Path| {
                let mut entries = archive_entries(&[]);
                let declared = patch(&mut entries);
                let p = write(d, "rank0.zip", &zip_raw(&entries, declared));
                Run::new(args!["--table", "thunks", p]).name("rank0.zip")
            },
        ));
    }
    // The end record's own fields.
    type Raw = fn(&mut Vec<u8>);
    let raw: &[(&str, Raw)] = &[
        ("central directory offset 0xFFFFFFFF", |z| {
            let n = z.len();
            z[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
        }),
        ("central directory size 0xFFFFFFFF", |z| {
            let n = z.len();
            z[n - 10..n - 6].copy_from_slice(&u32::MAX.to_le_bytes());
        }),
        ("central directory offset 0", |z| {
            let n = z.len();
            z[n - 6..n - 2].copy_from_slice(&0u32.to_le_bytes());
        }),
        ("comment length 65535", |z| {
            let n = z.len();
            z[n - 2..].copy_from_slice(&u16::MAX.to_le_bytes());
        }),
        ("zip64 end locator pointing at itself", |z| {
            // A Zip64 end-of-central-directory locator before the end record, whose
            // record offset points at the locator itself.
            let n = z.len();
            let eocd = z.split_off(n - 22);
            let at = z.len() as u64;
            z.extend_from_slice(&0x0706_4b50u32.to_le_bytes());
            z.extend_from_slice(&0u32.to_le_bytes());
            z.extend_from_slice(&at.to_le_bytes());
            z.extend_from_slice(&1u32.to_le_bytes());
            z.extend_from_slice(&eocd);
            let n = z.len();
            z[n - 12..n - 10].copy_from_slice(&u16::MAX.to_le_bytes());
            z[n - 6..n - 2].copy_from_slice(&u32::MAX.to_le_bytes());
        }),
    ];
    for &(label, patch) in raw {
        // The end record's size of the directory is not needed to read it: a lie there
        // may be ignored.
        let expect = if label.contains("size") {
            Expect::Survives
        } else {
            Expect::Refused
        };
        v.push(Case::new(
            format!("zip {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let mut z = archive();
                patch(&mut z);
                let p = write(d, "rank0.zip", &z);
                Run::new(args!["--table", "thunks", p]).name("rank0.zip")
            },
        ));
    }
    v
}

// ---------------------------------------------------------------- Parquet footers

/// A schema element's fields: 1 type, 2 type_length, 3 repetition, 4 name,
/// 5 num_children, 6 converted_type. FileMetaData: 2 schema, 3 num_rows, 4 row groups.
/// RowGroup: 1 columns, 3 num_rows. ColumnMetaData: 3 path_in_schema, 5 num_values,
/// 6 total_uncompressed_size, 7 total_compressed_size, 9 data_page_offset,
/// 11 dictionary_page_offset.
type Mutation = fn(&mut Parquet) -> Vec<u8>;

fn schema_item(p: &mut Parquet, i: usize) -> &mut T {
    &mut p.schema().items()[i]
}

/// Raw footer bytes with `field` (already encoded: header and value) inserted before the
/// footer's final STOP.
fn with_raw_field(p: &Parquet, field: &[u8]) -> Vec<u8> {
    let mut f = p.footer.encode();
    let stop = f.pop();
    assert_eq!(stop, Some(0));
    f.extend_from_slice(field);
    f.push(0);
    p.with_footer_bytes(&f, None)
}

fn mutations() -> Vec<(&'static str, Mutation, Expect)> {
    use Expect::{Refused, Survives};
    vec![
        (
            "root num_children i32::MAX",
            |p| {
                schema_item(p, 0).set(5, T::I32(i32::MAX.into()));
                p.bytes()
            },
            Refused,
        ),
        (
            "root num_children -1",
            |p| {
                schema_item(p, 0).set(5, T::I32(-1));
                p.bytes()
            },
            Refused,
        ),
        (
            "root num_children 0",
            |p| {
                schema_item(p, 0).set(5, T::I32(0));
                p.bytes()
            },
            Refused,
        ),
        (
            "root num_children one more than listed",
            |p| {
                let n = p.schema().items().len() as i64;
                schema_item(p, 0).set(5, T::I32(n));
                p.bytes()
            },
            Refused,
        ),
        (
            "leaf num_children 1,000,000",
            |p| {
                schema_item(p, 1).set(5, T::I32(1_000_000));
                p.bytes()
            },
            Refused,
        ),
        (
            "schema list declares i32::MAX elements",
            |p| {
                p.schema().declare(i32::MAX as u64);
                p.bytes()
            },
            Refused,
        ),
        (
            "schema list declares 2^40 elements",
            |p| {
                p.schema().declare(1 << 40);
                p.bytes()
            },
            Refused,
        ),
        (
            "schema list empty",
            |p| {
                p.schema().items().clear();
                p.bytes()
            },
            Refused,
        ),
        (
            "file num_rows i64::MAX",
            |p| {
                p.footer.set(3, T::I64(i64::MAX));
                p.bytes()
            },
            Survives,
        ),
        (
            "file num_rows -1",
            |p| {
                p.footer.set(3, T::I64(-1));
                p.bytes()
            },
            Survives,
        ),
        (
            "row group num_rows i64::MAX",
            |p| {
                p.row_group().set(3, T::I64(i64::MAX));
                p.bytes()
            },
            Refused,
        ),
        (
            "row group num_rows -5",
            |p| {
                p.row_group().set(3, T::I64(-5));
                p.bytes()
            },
            Refused,
        ),
        (
            "row group num_rows 2^31",
            |p| {
                p.row_group().set(3, T::I64(1 << 31));
                p.bytes()
            },
            Refused,
        ),
        (
            "column num_values i64::MAX",
            |p| {
                p.column_meta(0).set(5, T::I64(i64::MAX));
                p.bytes()
            },
            Refused,
        ),
        (
            "column num_values -1",
            |p| {
                p.column_meta(0).set(5, T::I64(-1));
                p.bytes()
            },
            Refused,
        ),
        (
            "total_uncompressed_size i64::MAX",
            |p| {
                p.column_meta(0).set(6, T::I64(i64::MAX));
                p.bytes()
            },
            Survives,
        ),
        (
            "total_compressed_size i64::MAX",
            |p| {
                p.column_meta(0).set(7, T::I64(i64::MAX));
                p.bytes()
            },
            Refused,
        ),
        (
            "total_compressed_size -1",
            |p| {
                p.column_meta(0).set(7, T::I64(-1));
                p.bytes()
            },
            Refused,
        ),
        (
            "total_compressed_size 2^32",
            |p| {
                p.column_meta(0).set(7, T::I64(1 << 32));
                p.bytes()
            },
            Refused,
        ),
        (
            "data_page_offset i64::MAX",
            |p| {
                p.column_meta(0).set(9, T::I64(i64::MAX));
                p.column_meta(0).set(11, T::I64(i64::MAX));
                p.bytes()
            },
            Refused,
        ),
        (
            "data_page_offset -1",
            |p| {
                p.column_meta(0).set(9, T::I64(-1));
                p.column_meta(0).set(11, T::I64(-1));
                p.bytes()
            },
            Refused,
        ),
        (
            "data_page_offset 0 (the magic)",
            |p| {
                p.column_meta(0).set(9, T::I64(0));
                p.column_meta(0).set(11, T::I64(0));
                p.bytes()
            },
            Refused,
        ),
        (
            "data_page_offset at the footer",
            |p| {
                let at = p.data.len() as i64;
                p.column_meta(0).set(9, T::I64(at));
                p.column_meta(0).set(11, T::I64(at));
                p.bytes()
            },
            Refused,
        ),
        (
            "dictionary_page_offset i64::MAX",
            |p| {
                p.column_meta(0).set(11, T::I64(i64::MAX));
                p.bytes()
            },
            Refused,
        ),
        (
            "type_length i32::MAX",
            |p| {
                schema_item(p, 1).set(2, T::I32(i32::MAX.into()));
                p.bytes()
            },
            Survives,
        ),
        (
            "physical type 99",
            |p| {
                schema_item(p, 1).set(1, T::I32(99));
                p.bytes()
            },
            Refused,
        ),
        (
            "repetition 7",
            |p| {
                schema_item(p, 1).set(3, T::I32(7));
                p.bytes()
            },
            Refused,
        ),
        (
            "converted type 99",
            |p| {
                schema_item(p, 1).set(6, T::I32(99));
                p.bytes()
            },
            Survives,
        ),
        (
            "row group list declares i32::MAX",
            |p| {
                p.footer.field(4).unwrap().declare(i32::MAX as u64);
                p.bytes()
            },
            Refused,
        ),
        (
            "column chunk list empty",
            |p| {
                p.row_group().field(1).unwrap().items().clear();
                p.bytes()
            },
            Refused,
        ),
        (
            "column chunk list declares 2^31",
            |p| {
                p.row_group().field(1).unwrap().declare(1 << 31);
                p.bytes()
            },
            Refused,
        ),
        (
            "path_in_schema declares 2^31",
            |p| {
                p.column_meta(0).field(3).unwrap().declare(1 << 31);
                p.bytes()
            },
            Refused,
        ),
        (
            "schema 100,000 groups deep",
            |p| {
                // root → g → g → … → one leaf; the row groups no longer match.
                let leaf = p.schema().items()[1].clone();
                let group = |children: i64| {
                    T::Struct(vec![
                        (3, T::I32(0)),
                        (4, T::Bin(b"g".to_vec())),
                        (5, T::I32(children)),
                    ])
                };
                let items = p.schema().items();
                items.clear();
                items.push(T::Struct(vec![
                    (4, T::Bin(b"schema".to_vec())),
                    (5, T::I32(1)),
                ]));
                for _ in 0..100_000 {
                    items.push(group(1));
                }
                items.push(leaf);
                p.bytes()
            },
            Refused,
        ),
        (
            "unknown footer field nested 100,000 structs deep",
            |p| {
                let mut f = vec![0x0c, 0xc6, 0x01]; // field 99, a struct
                f.extend(std::iter::repeat_n(0x1c, 100_000)); // field 1, a struct, …
                f.extend(std::iter::repeat_n(0x00, 100_001));
                with_raw_field(p, &f)
            },
            Refused,
        ),
        (
            "unknown footer field nested 100,000 lists deep",
            |p| {
                let mut f = vec![0x09, 0xc6, 0x01]; // field 99, a list
                f.extend(std::iter::repeat_n(0x19, 100_000)); // one element, a list, …
                f.push(0x05); // an empty list of i32
                with_raw_field(p, &f)
            },
            Refused,
        ),
        (
            "unknown footer field: a list declaring 2^40 i64",
            |p| {
                let mut f = vec![0x09, 0xc6, 0x01, 0xf6];
                let mut n = 1u64 << 40;
                while n >= 0x80 {
                    f.push((n as u8) | 0x80);
                    n >>= 7;
                }
                f.push(n as u8);
                with_raw_field(p, &f)
            },
            Refused,
        ),
        (
            "footer length 0xFFFFFFFF",
            |p| p.with_footer_bytes(&p.footer.encode(), Some(u32::MAX)),
            Refused,
        ),
        (
            "footer length past the start of the file",
            |p| {
                let f = p.footer.encode();
                let len = (p.data.len() + f.len() + 1) as u32;
                p.with_footer_bytes(&f, Some(len))
            },
            Refused,
        ),
        (
            "footer length 0",
            |p| p.with_footer_bytes(&p.footer.encode(), Some(0)),
            Refused,
        ),
        (
            "footer length 1",
            |p| p.with_footer_bytes(&p.footer.encode(), Some(1)),
            Refused,
        ),
        (
            "footer cut in half",
            |p| {
                let f = p.footer.encode();
                p.with_footer_bytes(&f[..f.len() / 2], None)
            },
            Refused,
        ),
    ]
}

/// Each footer mutation on the GPU projection table and the Parquet push/pop table on
/// their own, and on the thread metadata inside an archive.
fn parquet_footers() -> Vec<Case> {
    let mut v = Vec::new();
    for (label, mutate, expect) in mutations() {
        v.push(Case::new(
            format!("gpu trace.parquet: {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let bytes = mutate(&mut Parquet::parse(&gpu_proj_trace()));
                let p = write(d, "trace.parquet", &bytes);
                Run::new(args!["--table", "gpu-ranges", p]).name("trace.parquet")
            },
        ));
        v.push(Case::new(
            format!("push/pop t.parquet: {label}"),
            "njx-export",
            expect,
            move |d: &Path| {
                let bytes = mutate(&mut Parquet::parse(&pushpop_parquet(&tree().csv())));
                let p = write(d, "t.parquet", &bytes);
                Run::new(args![p]).name("t.parquet")
            },
        ));
        if expect == Expect::Refused {
            v.push(Case::new(
                format!("archive thread-metadata.parquet: {label}"),
                "njx-export",
                expect,
                move |d: &Path| {
                    let bytes = mutate(&mut Parquet::parse(&thread_metadata()));
                    let p = write(
                        d,
                        "rank0.zip",
                        &zip_raw(&archive_entries(&[(THREADS, bytes)]), None),
                    );
                    Run::new(args!["--table", "modules", p])
                        .name("rank0.zip!thread-metadata.parquet")
                },
            ));
            // The GPUs' table (njx-report's findings read it): refused, named.
            v.push(Case::new(
                format!("archive device-metadata.parquet: {label}"),
                "njx-report",
                expect,
                move |d: &Path| {
                    let bytes = mutate(&mut Parquet::parse(&device_metadata()));
                    let mut entries = archive_entries(&[]);
                    entries.push(ZipEntry::deflated("device-metadata.parquet", &bytes));
                    let p = write(d, "rank0.zip", &zip_raw(&entries, None));
                    Run::new(args![p]).name("rank0.zip!device-metadata.parquet")
                },
            ));
        }
    }
    v
}

// ---------------------------------------------------------------- truncation

/// A kind of file to cut: its name, how to make it, the arguments around it, and what a
/// refusal must name (`{}` stands for the file's name).
#[derive(Clone, Copy)]
struct Kind {
    label: &'static str,
    file: &'static str,
    make: fn() -> Vec<u8>,
    /// Writes the cut bytes where they belong and returns the arguments.
    place: fn(&Path, &[u8]) -> (Vec<String>, String),
}

fn plain(
    file: &'static str,
    before: &'static [&'static str],
) -> impl Fn(&Path, &[u8]) -> (Vec<String>, String) {
    move |d, bytes| {
        let p = write(d, file, bytes);
        let mut a: Vec<String> = before.iter().map(|s| s.to_string()).collect();
        a.push(p);
        (a, file.to_string())
    }
}

fn kinds() -> Vec<Kind> {
    vec![
        Kind {
            label: "gzip csv",
            file: "t.csv.gz",
            make: || gzip(tree().csv().as_bytes()),
            place: |d, b| plain("t.csv.gz", &[])(d, b),
        },
        Kind {
            label: "xz csv",
            file: "t.csv.xz",
            make: || xz(tree().csv().as_bytes()),
            place: |d, b| plain("t.csv.xz", &[])(d, b),
        },
        Kind {
            label: "gzip records",
            file: "r.jsonl.gz",
            make: || gzip(jsonl(&tree().records("t")).as_bytes()),
            place: |d, b| plain("r.jsonl.gz", &["--xla-compile"])(d, b),
        },
        Kind {
            label: "zip archive",
            file: "rank0.zip",
            make: archive,
            place: |d, b| plain("rank0.zip", &["--table", "thunks"])(d, b),
        },
        Kind {
            label: "push/pop parquet",
            file: "t.parquet",
            make: || pushpop_parquet(&tree().csv()),
            place: |d, b| plain("t.parquet", &[])(d, b),
        },
        Kind {
            label: "gpu parquet",
            file: "trace.parquet",
            make: gpu_proj_trace,
            place: |d, b| plain("trace.parquet", &["--table", "gpu-ranges"])(d, b),
        },
        Kind {
            label: "sqlite",
            file: "e.sqlite",
            make: || {
                let dir = tempfile::tempdir().unwrap();
                let p = write_sqlite(dir.path(), "e.sqlite");
                std::fs::read(p).unwrap()
            },
            place: |d, b| plain("e.sqlite", &["--table", "gpu-ranges"])(d, b),
        },
        Kind {
            label: "xz member",
            file: PUSHPOP,
            make: || xz(archive_pushpop().as_bytes()),
            place: |d, b| {
                let p = write(
                    d,
                    "rank0.zip",
                    &zip_raw(&archive_entries(&[(PUSHPOP, b.to_vec())]), None),
                );
                (args![p], format!("rank0.zip!{PUSHPOP}"))
            },
        },
        Kind {
            label: "HLO dump member",
            file: DUMP,
            make: hlo_dump,
            place: |d, b| {
                let p = write(
                    d,
                    "rank0.zip",
                    &zip_raw(&archive_entries(&[(DUMP, xz(b))]), None),
                );
                (args!["--table", "thunks", p], format!("rank0.zip!{DUMP}"))
            },
        },
        Kind {
            label: "HLO dump in --hlo folder",
            file: DUMP_FILE,
            make: hlo_dump,
            place: |d, b| {
                let m = write(d, "m.jsonl", jsonl(&module_records()).as_bytes());
                let t = write(d, "t.jsonl", jsonl(&thunk_records()).as_bytes());
                write(&d.join("xla_dump"), DUMP_FILE, b);
                let h = d.join("xla_dump").to_str().unwrap().to_string();
                (
                    args!["--by", "source", m, t, "--hlo", h],
                    DUMP_FILE.to_string(),
                )
            },
        },
    ]
}

fn tool_of(label: &str) -> &'static str {
    match label {
        "gzip records" => "njx-ranges",
        "HLO dump in --hlo folder" => "njx-flamefold",
        _ => "njx-export",
    }
}

/// Every kind cut at the first bytes, at fractions and just before the end.
fn truncations() -> Vec<Case> {
    let mut v = Vec::new();
    for kind in kinds() {
        let len = (kind.make)().len();
        for cut in cut_points(len) {
            let Kind {
                label,
                make,
                place,
                file,
                ..
            } = kind;
            v.push(Case::new(
                format!("{label} ({file}, {len} bytes) cut to {cut}"),
                tool_of(label),
                Expect::Refused,
                move |d: &Path| {
                    let (a, name) = place(d, &truncated(&make(), cut));
                    Run::new(a).name(name)
                },
            ));
        }
    }
    v
}

/// Six single-bit flips per kind, at places drawn from a fixed seed.
fn bit_flips() -> Vec<Case> {
    let mut v = Vec::new();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    for kind in kinds() {
        let len = (kind.make)().len() as u64;
        for _ in 0..6 {
            let at = rng.below(len) as usize;
            let mask = 1u8 << rng.below(8);
            let Kind {
                label,
                make,
                place,
                file,
                ..
            } = kind;
            v.push(Case::new(
                format!("{label} ({file}) bit flip {mask:#04x} at byte {at}"),
                tool_of(label),
                Expect::Survives,
                move |d: &Path| {
                    let (a, name) = place(d, &flipped(&make(), at, mask));
                    Run::new(a).name(name)
                },
            ));
        }
    }
    v
}
