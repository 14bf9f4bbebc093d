//! Re-lays a real nsys-jax archive of XLA 2024 into the NVTX layout of XLA since 2026, so
//! that the answers njx gives on the re-laid run can be checked against those on the
//! original (`tests/njx/relay2026.rs`; `examples/relay_2026.rs` writes re-laid archives
//! for people). No public profile of this layout exists; what it changes, and where it
//! is documented:
//!
//! - thunk names end in `,unique_hlo_op_id=N`, N the instruction's unique id, which the
//!   dump stores as `HloInstructionProto.id` (openxla/xla
//!   `xla/backends/gpu/runtime/annotation.cc`, `MakeInstructionTitle`; a thunk whose
//!   instruction is not in the module's annotation map keeps the old form, here those
//!   of programs without a dump);
//! - communication thunks become top-level ranges with no XlaModule parent, with or
//!   without a generic `async-start` thunk around them (NVIDIA/JAX-Toolbox PR #2296:
//!   "async thunks emitted as top-level ranges without an XlaModule parent"; openxla/xla
//!   9f86ee60df: collectives wrapped in `async-start`/`async-done`, whose thunk runs the
//!   nested collective's thunk on the same host thread);
//! - communication only, or partly, as the projected `NCCL:ncclGroupEnd` range (PR
//!   #2296): the thunk range is removed and its NCCL child hangs from the module;
//! - module executions without child thunk ranges (PR #2296).
//!
//! Only `nvtx_gpu_proj_trace/trace.parquet` is rewritten (its first form, as the pax
//! archives have it); `Lvl`, `NumChild` and `RangeStack` are recomputed from the new
//! parents (and checked to reproduce the original where nothing changed). Every other
//! member is copied raw. Uses only the `parquet`, `zip` and `xz2` crates and njx's HLO
//! decoder, so `examples/relay_2026.rs` can include it by `#[path]`.

use super::pq::{Cells, FlatTable, PqCol};
use std::collections::{HashMap, HashSet};
use std::io::{Cursor, Read, Write};
use std::path::Path;

/// The member rewritten.
pub const GPU_PROJ: &str = "nvtx_gpu_proj_trace/trace.parquet";

/// Which 2026 layout to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Thunk names with `unique_hlo_op_id` only.
    Ids,
    /// And every communication thunk at the top level.
    TopLevel,
    /// And every communication thunk at the top level inside an `async-start` thunk.
    Wrapped,
    /// And every communication thunk replaced by its NCCL range.
    Nccl,
    /// And every other communication thunk (in range order) replaced by its NCCL range.
    NcclPartial,
    /// And no thunk ranges in the executions of programs that do not communicate.
    Thunkless,
    /// All-gathers top-level, all-reduces as NCCL ranges, the rest wrapped; programs
    /// without communication without thunk ranges.
    Mixed,
}

impl Variant {
    pub const ALL: [Variant; 7] = [
        Variant::Ids,
        Variant::TopLevel,
        Variant::Wrapped,
        Variant::Nccl,
        Variant::NcclPartial,
        Variant::Thunkless,
        Variant::Mixed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Ids => "ids",
            Variant::TopLevel => "top-level",
            Variant::Wrapped => "wrapped",
            Variant::Nccl => "nccl",
            Variant::NcclPartial => "nccl-partial",
            Variant::Thunkless => "thunkless",
            Variant::Mixed => "mixed",
        }
    }

    pub fn from_name(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// What a re-lay changed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Thunk names given a unique id.
    pub ids: usize,
    /// Communication thunks moved to the top level (wrapped or not).
    pub top_level: usize,
    /// Communication thunks replaced by their NCCL range.
    pub nccl: usize,
    /// Thunk ranges removed from programs without communication.
    pub removed: usize,
    /// Module ranges left without thunk ranges.
    pub thunkless_modules: usize,
}

/// What becomes of one communication thunk.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Keep,
    TopLevel,
    Wrapped,
    Nccl,
}

/// One output row: the input row it copies, with its new name, id and parent.
struct Row {
    from: usize,
    name: String,
    id: i64,
    parent: Option<i64>,
}

type Result<T> = std::result::Result<T, String>;

/// Writes the re-laid copy of archive `input` to `output`.
pub fn relay(input: &Path, output: &Path, variant: Variant) -> Result<Summary> {
    let place = input.display().to_string();
    let bytes = std::fs::read(input).map_err(|e| format!("{place}: {e}"))?;
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| format!("{place}: {e}"))?;
    let ids = instruction_ids(&mut archive, &place)?;
    let mut table = Vec::new();
    archive
        .by_name(GPU_PROJ)
        .map_err(|e| format!("{place}: {GPU_PROJ}: {e}"))?
        .read_to_end(&mut table)
        .map_err(|e| format!("{place}: {GPU_PROJ}: {e}"))?;
    let table = FlatTable::read(table, GPU_PROJ)?;
    let (columns, summary) = rewrite(&table, &ids, variant)?;
    let rewritten = table.write_like(&columns);

    let file = std::fs::File::create(output).map_err(|e| format!("{}: {e}", output.display()))?;
    let mut w = zip::ZipWriter::new(std::io::BufWriter::new(file));
    let err = |e: zip::result::ZipError| format!("{}: {e}", output.display());
    for i in 0..archive.len() {
        let member = archive.by_index_raw(i).map_err(err)?;
        if member.name().map_err(err)? == GPU_PROJ {
            let options = member.options();
            drop(member);
            w.start_file(GPU_PROJ, options).map_err(err)?;
            w.write_all(&rewritten)
                .map_err(|e| format!("{}: {e}", output.display()))?;
        } else {
            w.raw_copy_file(member).map_err(err)?;
        }
    }
    w.finish()
        .map_err(err)?
        .flush()
        .map_err(|e| format!("{}: {e}", output.display()))?;
    Ok(summary)
}

/// Program id → instruction name → unique id, from the after-optimizations dumps.
fn instruction_ids(
    archive: &mut zip::ZipArchive<Cursor<Vec<u8>>>,
    place: &str,
) -> Result<HashMap<u64, HashMap<String, i64>>> {
    let mut out = HashMap::new();
    let names: Vec<String> = archive
        .file_names()
        .map(|n| n.map(|n| n.into_owned()))
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| format!("{place}: {e}"))?;
    for name in names {
        let Some(file) = name.strip_prefix("dump/") else {
            continue;
        };
        let Some((id, rest)) = njx::hlo::parse_dump_name(file) else {
            continue;
        };
        let Some(module) = rest.split('.').next() else {
            continue;
        };
        if !njx::hlo::is_after_optimizations_of(rest, module) || !file.ends_with(".xz") {
            continue;
        }
        let member = archive
            .by_name(&name)
            .map_err(|e| format!("{place}: {name}: {e}"))?;
        let hlo = njx::hlo::HloModule::read(name.clone(), xz2::read::XzDecoder::new(member))
            .map_err(|e| format!("{place}: {e}"))?;
        let by_name = hlo
            .instructions()
            .map(|i| (i.name().to_string(), i.id()))
            .collect();
        out.insert(id, by_name);
    }
    Ok(out)
}

/// A numeric cell as a whole number (the first form stores ids and levels as doubles).
fn int(cells: &Cells, row: usize) -> Option<i64> {
    match cells {
        Cells::Int64(v) => v[row],
        Cells::Int32(v) => v[row].map(i64::from),
        Cells::Double(v) => v[row].map(|x| x as i64),
        _ => None,
    }
}

/// `cells` with each output row's value from `value`, in the column's own type.
fn numbers(cells: &Cells, value: &dyn Fn(usize) -> Option<i64>, n: usize) -> Cells {
    match cells {
        Cells::Int64(_) => Cells::Int64((0..n).map(value).collect()),
        Cells::Int32(_) => Cells::Int32((0..n).map(|i| value(i).map(|v| v as i32)).collect()),
        Cells::Double(_) => Cells::Double((0..n).map(|i| value(i).map(|v| v as f64)).collect()),
        other => other.copy(),
    }
}

fn column<'t>(table: &'t FlatTable, name: &str) -> Result<&'t Cells> {
    table
        .column(name)
        .map(|i| &table.columns[i].cells)
        .ok_or_else(|| format!("{GPU_PROJ}: no column {name} (not the first form)"))
}

fn rewrite(
    table: &FlatTable,
    ids: &HashMap<u64, HashMap<String, i64>>,
    variant: Variant,
) -> Result<(Vec<PqCol>, Summary)> {
    let Cells::Text(names) = column(table, "Name")? else {
        return Err(format!("{GPU_PROJ}: Name is not text"));
    };
    let (range_ids, parents) = (column(table, "RangeId")?, column(table, "ParentId")?);
    let n = names.len();
    let id_of: Vec<Option<i64>> = (0..n).map(|r| int(range_ids, r)).collect();
    let parent_of: Vec<Option<i64>> = (0..n).map(|r| int(parents, r)).collect();
    let row_of: HashMap<i64, usize> = (0..n).filter_map(|r| id_of[r].map(|id| (id, r))).collect();
    let name = |r: usize| names[r].as_deref().unwrap_or("");
    let is_thunk = |r: usize| njx::source::xla_names::is_thunk(name(r));
    let is_nccl = |r: usize| name(r).starts_with("NCCL:");
    // Each row's module ancestor.
    let module_of = |r: usize| -> Option<usize> {
        let mut p = parent_of[r].and_then(|p| row_of.get(&p).copied());
        while let Some(pr) = p {
            if njx::source::xla_names::is_module(name(pr)) {
                return Some(pr);
            }
            p = parent_of[pr].and_then(|q| row_of.get(&q).copied());
        }
        None
    };
    let program_of = |m: usize| njx::source::xla_names::module(name(m)).and_then(|(_, id)| id);
    let mut children: HashMap<i64, Vec<usize>> = HashMap::new();
    for (r, parent) in parent_of.iter().enumerate() {
        if let Some(p) = parent {
            children.entry(*p).or_default().push(r);
        }
    }
    let nccl_child = |r: usize| -> Option<usize> {
        let id = id_of[r]?;
        children.get(&id)?.iter().copied().find(|&c| is_nccl(c))
    };
    // Programs with communication.
    let communicating: HashSet<u64> = (0..n)
        .filter(|&r| is_thunk(r) && nccl_child(r).is_some())
        .filter_map(|r| module_of(r).and_then(program_of))
        .collect();
    let thunkless = matches!(variant, Variant::Thunkless | Variant::Mixed);

    let mut summary = Summary::default();
    let mut removed: HashSet<usize> = HashSet::new();
    let mut modes: HashMap<usize, Mode> = HashMap::new();
    let mut comm_seen = 0usize;
    for r in 0..n {
        if !is_thunk(r) {
            continue;
        }
        let program = module_of(r).and_then(program_of);
        if thunkless && program.is_some_and(|p| !communicating.contains(&p)) {
            removed.insert(r);
            summary.removed += 1;
            continue;
        }
        if nccl_child(r).is_none() {
            continue;
        }
        let op = njx::source::xla_names::thunk_op(name(r)).unwrap_or("");
        let mode = match variant {
            Variant::Ids | Variant::Thunkless => Mode::Keep,
            Variant::TopLevel => Mode::TopLevel,
            Variant::Wrapped => Mode::Wrapped,
            Variant::Nccl => Mode::Nccl,
            Variant::NcclPartial => {
                comm_seen += 1;
                if comm_seen % 2 == 1 {
                    Mode::Nccl
                } else {
                    Mode::Keep
                }
            }
            Variant::Mixed if op.starts_with("all-gather") => Mode::TopLevel,
            Variant::Mixed if op.starts_with("all-reduce") => Mode::Nccl,
            Variant::Mixed => Mode::Wrapped,
        };
        modes.insert(r, mode);
    }
    // Modules left without thunks.
    let mut with_thunks: HashSet<usize> = HashSet::new();
    for r in 0..n {
        if is_thunk(r)
            && !removed.contains(&r)
            && modes.get(&r) != Some(&Mode::Nccl)
            && let Some(m) = module_of(r)
        {
            with_thunks.insert(m);
        }
    }
    summary.thunkless_modules = (0..n)
        .filter(|&r| njx::source::xla_names::is_module(name(r)) && !with_thunks.contains(&r))
        .count();

    let mut next_id = id_of.iter().flatten().max().copied().unwrap_or(0) + 1;
    let mut rows: Vec<Row> = Vec::with_capacity(n);
    for r in 0..n {
        // Rows below a removed thunk go with it.
        let mut up = Some(r);
        let mut gone = false;
        while let Some(u) = up {
            if removed.contains(&u) {
                gone = true;
                break;
            }
            up = parent_of[u].and_then(|p| row_of.get(&p).copied());
        }
        if gone {
            continue;
        }
        let Some(id) = id_of[r] else {
            // The row of GPU work outside any range.
            rows.push(Row {
                from: r,
                name: name(r).to_string(),
                id: -1,
                parent: None,
            });
            continue;
        };
        let mut row = Row {
            from: r,
            name: name(r).to_string(),
            id,
            parent: parent_of[r],
        };
        if is_thunk(r) {
            let op = njx::source::xla_names::thunk_op(name(r)).unwrap_or("");
            let unique = module_of(r)
                .and_then(program_of)
                .and_then(|p| ids.get(&p))
                .and_then(|by_name| by_name.get(op));
            if let (Some(unique), Some(body)) = (unique, row.name.strip_suffix('#')) {
                row.name = format!("{body},unique_hlo_op_id={unique}#");
                summary.ids += 1;
            }
        }
        // An NCCL range whose thunk is replaced hangs from the thunk's parent.
        if is_nccl(r)
            && let Some(t) = parent_of[r].and_then(|p| row_of.get(&p).copied())
            && modes.get(&t) == Some(&Mode::Nccl)
        {
            row.parent = parent_of[t];
        }
        match modes.get(&r) {
            Some(Mode::Nccl) => {
                summary.nccl += 1;
                continue;
            }
            Some(Mode::TopLevel) => {
                summary.top_level += 1;
                row.parent = None;
            }
            Some(Mode::Wrapped) => {
                summary.top_level += 1;
                let wrapper = next_id;
                next_id += 1;
                rows.push(Row {
                    from: r,
                    name: format!("TSL:Thunk:#hlo_op=async-start.{wrapper}#"),
                    id: wrapper,
                    parent: None,
                });
                row.parent = Some(wrapper);
            }
            Some(Mode::Keep) | None => {}
        }
        rows.push(row);
    }

    // Levels, child counts and stacks from the new parents.
    let index: HashMap<i64, usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.id >= 0)
        .map(|(i, r)| (r.id, i))
        .collect();
    let mut stack: Vec<Option<Vec<i64>>> = vec![None; rows.len()];
    for i in 0..rows.len() {
        if rows[i].id < 0 {
            continue;
        }
        let mut path = vec![rows[i].id];
        let mut p = rows[i].parent;
        while let Some(id) = p {
            path.push(id);
            p = index.get(&id).and_then(|&j| rows[j].parent);
        }
        path.reverse();
        stack[i] = Some(path);
    }
    let mut child_count: HashMap<i64, i64> = HashMap::new();
    for r in &rows {
        if let Some(p) = r.parent {
            *child_count.entry(p).or_default() += 1;
        }
    }
    let out_rows = rows.len();
    let mut columns = Vec::with_capacity(table.columns.len());
    for c in &table.columns {
        let keep = |i: usize| rows[i].from;
        let cells = match c.name {
            "Name" => Cells::Text(
                (0..out_rows)
                    .map(|i| names[keep(i)].as_ref().map(|_| rows[i].name.clone()))
                    .collect(),
            ),
            "RangeId" => numbers(
                &c.cells,
                &|i| (rows[i].id >= 0).then_some(rows[i].id),
                out_rows,
            ),
            "ParentId" => numbers(&c.cells, &|i| rows[i].parent, out_rows),
            "Lvl" => numbers(
                &c.cells,
                &|i| stack[i].as_ref().map(|s| s.len() as i64 - 1),
                out_rows,
            ),
            "NumChild" => numbers(
                &c.cells,
                &|i| {
                    (rows[i].id >= 0)
                        .then(|| child_count.get(&rows[i].id).copied().unwrap_or(0))
                        .or(int(&c.cells, keep(i)))
                },
                out_rows,
            ),
            "RangeStack" => Cells::Text(
                (0..out_rows)
                    .map(|i| {
                        stack[i]
                            .as_ref()
                            .map(|s| s.iter().map(|id| format!(":{id}")).collect::<String>())
                    })
                    .collect(),
            ),
            _ => match &c.cells {
                Cells::Text(v) => Cells::Text((0..out_rows).map(|i| v[keep(i)].clone()).collect()),
                Cells::Int64(v) => Cells::Int64((0..out_rows).map(|i| v[keep(i)]).collect()),
                Cells::Int32(v) => Cells::Int32((0..out_rows).map(|i| v[keep(i)]).collect()),
                Cells::Double(v) => Cells::Double((0..out_rows).map(|i| v[keep(i)]).collect()),
                Cells::Int64List(v) => {
                    Cells::Int64List((0..out_rows).map(|i| v[keep(i)].clone()).collect())
                }
            },
        };
        columns.push(PqCol {
            name: c.name,
            required: c.required,
            cells,
        });
    }
    // Where nothing moved, the recomputed columns must be the originals: the check that
    // the table was understood.
    if variant == Variant::Ids {
        for c in ["Lvl", "NumChild", "RangeStack", "ParentId"] {
            let (Some(a), Some(b)) = (table.column(c), columns.iter().position(|x| x.name == c))
            else {
                continue;
            };
            let same = match (&table.columns[a].cells, &columns[b].cells) {
                (Cells::Text(x), Cells::Text(y)) => x == y,
                (Cells::Double(x), Cells::Double(y)) => x == y,
                (Cells::Int64(x), Cells::Int64(y)) => x == y,
                (Cells::Int32(x), Cells::Int32(y)) => x == y,
                _ => false,
            };
            if !same {
                return Err(format!(
                    "{GPU_PROJ}: recomputed {c} differs from the original"
                ));
            }
        }
    }
    Ok((columns, summary))
}
