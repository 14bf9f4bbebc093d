//! Before/after pairs made from a real nsys-jax archive: a copy of it with known changes
//! planted in the GPU projection, so that a diff of the two runs has a known answer.
//!
//! The projection is the archive's `nvtx_gpu_proj_trace/trace.parquet` in the first form
//! of the table, as `../shared/data/README.md` lists it for the pax archives: `Name,
//! Projected Start, Projected Duration, Orig Start, Orig Duration, Style, PID, TID,
//! NumGPUOps, Lvl, NumChild, RangeId, ParentId, RangeStack, Rank`, one row per NVTX range
//! projected onto the GPU (its projected start and end: the first start and last end of
//! its GPU work). A plant multiplies the `Projected Duration` of the thunk ranges of one
//! HLO instruction, optionally only within one XLA module. A plain plant ([`Plant::new`])
//! leaves every other cell and row as it was (the start, the CPU-side `Orig` times, the
//! parents): the module ranges keep their length, so a lengthened thunk overlaps what
//! follows it and the module's GPU time (as njx measures it, the module range's projected
//! duration: its first thunk's start to its last thunk's end) does not change.
//!
//! A shifted plant ([`Plant::shifted`]) inserts the time instead, as a real slowdown
//! would. Where a changed row's projected duration grows by Δ (or shrinks, Δ < 0), Δ of
//! time is inserted on its thread (PID, TID) at its projected end before the change, `p`:
//! - every row of that thread whose projected start is at or after `p` starts Δ later:
//!   the rest of its module execution, and every later module execution on the thread
//!   too, so that none is overlapped (nsys-jax needs no gaps between executions, so the
//!   gaps are kept as they were);
//! - every ancestor of the changed row (along `ParentId`: its `XlaModule` range and any
//!   range above that) is Δ longer;
//! - every other row (other threads; rows of the thread that start before `p` and are not
//!   ancestors, such as an asynchronous collective in flight across `p`) is left as it
//!   was.
//!
//! Several insertions compose: each row's start moves by the sum of the Δ inserted at or
//! before it on its thread, each ancestor grows by the sum of its descendants' Δ, all
//! reckoned in the times before the change (as if the rows were processed in start order,
//! accumulating offsets). The CPU-side `Orig` times are never changed.
//!
//! The names are XLA's NVTX range names, as the pax archives (XLA of July 2024) have them:
//! a module execution `TSL:XlaModule:#hlo_module=NAME,program_id=N#`, a thunk
//! `TSL:Thunk:#hlo_op=INSTRUCTION#`; read here without njx's own parser
//! (`src/source/xla_names.rs`), so that the plants do not assume what the tools under test
//! do. A thunk's module is its nearest `XlaModule` ancestor along `ParentId`.
//!
//! Only the projection member is rewritten (as the archive wrote it: same row groups,
//! compression and pandas metadata, [`FlatTable::write_like`]); every other member is
//! copied raw, byte for byte, in the same order.
//!
//! A renaming ([`rename_archive`]) simulates what a recompilation that renumbers HLO
//! instructions (`fusion.123` becomes `fusion.131`) does to an archive: the module's
//! thunk rows of the projection and its after-optimizations dumps (the instruction, and
//! whatever refers to it by name: [`rename_hlo`]) take the new names; the times, the
//! other members and everything else in the dumps stay as they were.

use super::pq::{Cells, FlatTable, PqCol};
use super::relay::GPU_PROJ;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Cursor, Read, Write};
use std::path::Path;

/// A planted change: every thunk range of HLO instruction `thunk` (`fusion.123`, as the
/// tools name a thunk), within module `module` where given (the HLO module name,
/// `pjit__wrapped_step_fn`), has its projected duration multiplied by `factor`, rounded
/// to whole nanoseconds; with `shift`, the time it gains (or loses) is inserted on its
/// thread, as the module documentation says.
#[derive(Debug, Clone, PartialEq)]
pub struct Plant {
    pub module: Option<String>,
    pub thunk: String,
    pub factor: f64,
    /// Insert the change: move what follows on the thread and lengthen the ancestors.
    pub shift: bool,
}

impl Plant {
    /// `thunk` of `module` (any module for `None`) made `factor` times as long, nothing
    /// else changed.
    pub fn new(module: Option<&str>, thunk: &str, factor: f64) -> Plant {
        Plant {
            module: module.map(str::to_string),
            thunk: thunk.to_string(),
            factor,
            shift: false,
        }
    }

    /// `thunk` of `module` (any module for `None`) made `factor` times as long, the time
    /// inserted: what follows on its thread moves and its module range (and every other
    /// ancestor) grows by the same amount.
    pub fn shifted(module: Option<&str>, thunk: &str, factor: f64) -> Plant {
        Plant {
            shift: true,
            ..Plant::new(module, thunk, factor)
        }
    }

    fn matches(&self, module: Option<&str>, thunk: &str) -> bool {
        self.thunk == thunk && self.module.as_deref().is_none_or(|m| module == Some(m))
    }
}

/// The thunk ranges of one instruction in one module, as the projection has them (every
/// execution: warm-up ones too, and on every device of the archive).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThunkRows {
    /// The HLO module of the nearest `XlaModule` ancestor; `None` for a thunk outside
    /// every module range.
    pub module: Option<String>,
    /// The HLO instruction.
    pub thunk: String,
    /// Rows (thunk executions).
    pub count: usize,
    /// Their projected durations, summed, ns.
    pub total_ns: i64,
}

/// The HLO module a module range names: `[TSL:]XlaModule:#[prefix=…,]hlo_module=NAME[,…]#`.
pub fn module_name(range: &str) -> Option<&str> {
    let body = range
        .strip_prefix("TSL:")
        .unwrap_or(range)
        .strip_prefix("XlaModule:#")?
        .strip_suffix('#')?;
    let at = body.find("hlo_module=")?;
    let name = &body[at + "hlo_module=".len()..];
    Some(name.split(',').next().unwrap_or(name))
}

/// The HLO instruction a thunk range names: `[TSL:]Thunk:#[name=…,]hlo_op=NAME#` (and a
/// trailing `,unique_hlo_op_id=N`, XLA since 2026).
pub fn thunk_name(range: &str) -> Option<&str> {
    let body = range
        .strip_prefix("TSL:")
        .unwrap_or(range)
        .strip_prefix("Thunk:#")?
        .strip_suffix('#')?;
    let body = body
        .rsplit_once(",unique_hlo_op_id=")
        .map_or(body, |(rest, _)| rest);
    let op = match body.strip_prefix("hlo_op=") {
        Some(op) => op,
        None => &body[body.rfind(",hlo_op=")? + ",hlo_op=".len()..],
    };
    (!op.is_empty()).then_some(op)
}

/// The projection of archive `src`, read whole.
fn read_projection(src: &Path) -> (zip::ZipArchive<Cursor<Vec<u8>>>, FlatTable) {
    let (archive, table) = read_member(src, GPU_PROJ);
    let table =
        FlatTable::read(table, GPU_PROJ).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    (archive, table)
}

/// Archive `src`, read whole, and the bytes of its `member` as stored (still compressed
/// where its name says so). Panics where the archive has no such member.
fn read_member(src: &Path, member: &str) -> (zip::ZipArchive<Cursor<Vec<u8>>>, Vec<u8>) {
    let place = src.display();
    let bytes = std::fs::read(src).unwrap_or_else(|e| panic!("{place}: {e}"));
    let mut archive =
        zip::ZipArchive::new(Cursor::new(bytes)).unwrap_or_else(|e| panic!("{place}: {e}"));
    let mut out = Vec::new();
    archive
        .by_name(member)
        .unwrap_or_else(|e| panic!("{place}: {member}: {e}"))
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{place}: {member}: {e}"));
    (archive, out)
}

/// The cells of column `name`.
fn cells<'t>(table: &'t FlatTable, name: &str) -> &'t Cells {
    let i = table
        .column(name)
        .unwrap_or_else(|| panic!("{GPU_PROJ}: no column {name} (not the first form)"));
    &table.columns[i].cells
}

/// A numeric cell as a whole number (the first form stores `ParentId` as a double).
fn int(cells: &Cells, row: usize) -> Option<i64> {
    match cells {
        Cells::Int64(v) => v[row],
        Cells::Int32(v) => v[row].map(i64::from),
        Cells::Double(v) => v[row].map(|x| x as i64),
        _ => None,
    }
}

/// A thunk row of the projection: its row, its module's row and the names of both.
struct ThunkRow {
    row: usize,
    module_row: Option<usize>,
    module: Option<String>,
    thunk: String,
}

/// The parent row of each row of `table` (its `ParentId` as a `RangeId`), if any.
fn parents(table: &FlatTable) -> Vec<Option<usize>> {
    let (ids, parents) = (cells(table, "RangeId"), cells(table, "ParentId"));
    let n = durations(table).len();
    let row_of: HashMap<i64, usize> = (0..n)
        .filter_map(|r| int(ids, r).map(|id| (id, r)))
        .collect();
    (0..n)
        .map(|r| int(parents, r).and_then(|p| row_of.get(&p).copied()))
        .collect()
}

/// Each thunk row of `table`, in table order.
fn thunks(table: &FlatTable) -> Vec<ThunkRow> {
    let Cells::Text(names) = cells(table, "Name") else {
        panic!("{GPU_PROJ}: Name is not text");
    };
    let parent = parents(table);
    let name = |r: usize| names[r].as_deref().unwrap_or("");
    let module_of = |r: usize| {
        let mut up = parent[r];
        while let Some(u) = up {
            if let Some(m) = module_name(name(u)) {
                return Some((u, m.to_string()));
            }
            up = parent[u];
        }
        None
    };
    (0..names.len())
        .filter_map(|row| {
            let thunk = thunk_name(name(row))?.to_string();
            let (module_row, module) = module_of(row).unzip();
            Some(ThunkRow {
                row,
                module_row,
                module,
                thunk,
            })
        })
        .collect()
}

/// The projected durations, as whole nanoseconds.
fn durations(table: &FlatTable) -> Vec<Option<i64>> {
    column_ints(table, "Projected Duration")
}

/// The cells of numeric column `name`, as whole nanoseconds.
fn column_ints(table: &FlatTable, name: &str) -> Vec<Option<i64>> {
    let Cells::Text(names) = cells(table, "Name") else {
        panic!("{GPU_PROJ}: Name is not text");
    };
    let c = cells(table, name);
    (0..names.len()).map(|r| int(c, r)).collect()
}

/// The thunk ranges of archive `src` per (module, instruction), largest total projected
/// duration first: the candidates for [`Plant`]s.
pub fn thunk_rows(src: &Path) -> Vec<ThunkRows> {
    let (_, table) = read_projection(src);
    let dur = durations(&table);
    let mut by: BTreeMap<(Option<String>, String), (usize, i64)> = BTreeMap::new();
    for t in thunks(&table) {
        let e = by.entry((t.module, t.thunk)).or_default();
        e.0 += 1;
        e.1 += dur[t.row].unwrap_or(0);
    }
    let mut rows: Vec<ThunkRows> = by
        .into_iter()
        .map(|((module, thunk), (count, total_ns))| ThunkRows {
            module,
            thunk,
            count,
            total_ns,
        })
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.total_ns));
    rows
}

/// What the plants do to one row: the product of the factors of those that match it,
/// and whether any of them is shifted.
#[derive(Debug, Clone, Copy)]
struct Scale {
    factor: f64,
    shift: bool,
}

impl Scale {
    /// Projected duration `d` scaled, rounded to whole nanoseconds.
    fn apply(self, d: f64) -> f64 {
        (d * self.factor).round()
    }

    /// By how much projected duration `d` changes, ns.
    fn delta(self, d: i64) -> i64 {
        self.apply(d as f64) as i64 - d
    }
}

/// The [`Scale`] of each row that `plants` change; panics where a plant matches no row
/// with a projected duration.
fn factors(src: &Path, table: &FlatTable, plants: &[Plant]) -> HashMap<usize, Scale> {
    let mut factor: HashMap<usize, Scale> = HashMap::new();
    let mut matched = vec![0usize; plants.len()];
    let dur = durations(table);
    for t in thunks(table) {
        if dur[t.row].is_none() {
            continue;
        }
        for (p, plant) in plants.iter().enumerate() {
            if plant.matches(t.module.as_deref(), &t.thunk) {
                matched[p] += 1;
                let s = factor.entry(t.row).or_insert(Scale {
                    factor: 1.0,
                    shift: false,
                });
                s.factor *= plant.factor;
                s.shift |= plant.shift;
            }
        }
    }
    for (plant, n) in plants.iter().zip(&matched) {
        assert!(*n > 0, "{}: {plant:?} matches no thunk row", src.display());
    }
    factor
}

/// What the shifted rows of `scale` do to every row of `table` (the rule of the module
/// documentation): (how far its projected start moves, how much longer its projected
/// duration grows besides its own scaling), ns.
fn shifting(table: &FlatTable, scale: &HashMap<usize, Scale>) -> (Vec<i64>, Vec<i64>) {
    let dur = durations(table);
    let start = column_ints(table, "Projected Start");
    let (pids, tids) = (column_ints(table, "PID"), column_ints(table, "TID"));
    let parent = parents(table);
    let n = dur.len();
    /// A thread: (PID, TID).
    type Thread = (Option<i64>, Option<i64>);
    let thread = |r: usize| -> Thread { (pids[r], tids[r]) };
    // The insertions per thread: (where, before the change; how much).
    let mut inserted: HashMap<Thread, Vec<(i64, i64)>> = HashMap::new();
    let mut grow = vec![0i64; n];
    for (&r, s) in scale {
        let (true, Some(at), Some(d)) = (s.shift, start[r], dur[r]) else {
            continue;
        };
        let delta = s.delta(d);
        if delta == 0 {
            continue;
        }
        inserted.entry(thread(r)).or_default().push((at + d, delta));
        // The ancestors contain the row's GPU work, so start before its end: they grow
        // and do not move.
        let mut up = parent[r];
        while let Some(a) = up {
            grow[a] += delta;
            up = parent[a];
        }
    }
    // Per thread, the insertions in order and the running sum of their Δ.
    let inserted: HashMap<Thread, (Vec<i64>, Vec<i64>)> = inserted
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            let at = v.iter().map(|&(p, _)| p).collect();
            let sums = std::iter::once(0)
                .chain(v.iter().scan(0, |sum, &(_, d)| {
                    *sum += d;
                    Some(*sum)
                }))
                .collect();
            (k, (at, sums))
        })
        .collect();
    let offset = (0..n)
        .map(|r| {
            let (Some(s), Some((at, sums))) = (start[r], inserted.get(&thread(r))) else {
                return 0;
            };
            sums[at.partition_point(|&p| p <= s)]
        })
        .collect();
    (offset, grow)
}

/// What lengthening by `plants` does to the order of archive `src`'s thunks: how many
/// changed rows come to end after the start of the next thunk of their module execution
/// on their thread (by projected start), and after the projected end of that module
/// range, where they did not before. Plain plants change thunk rows only, so module
/// ranges keep their length and lengthened thunks may overlap or outlast them; shifted
/// ones make room, so their rows are counted as changed but never as overreaching (and
/// the others are judged in the times before the shifts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overreach {
    /// Rows changed.
    pub changed: usize,
    /// Changed rows that now end after the next thunk starts.
    pub into_next: usize,
    /// Changed rows that now end after their module range ends.
    pub past_module: usize,
}

/// The [`Overreach`] of `plants` on archive `src`.
pub fn overreach(src: &Path, plants: &[Plant]) -> Overreach {
    let (_, table) = read_projection(src);
    let factor = factors(src, &table, plants);
    let dur = durations(&table);
    let start_cells = cells(&table, "Projected Start");
    let tids = cells(&table, "TID");
    let start = |r: usize| int(start_cells, r);
    let end = |r: usize, f: f64| Some(start(r)? + (dur[r]? as f64 * f).round() as i64);
    // (projected start, row) of the thunks per (module execution row, thread).
    type Runs = BTreeMap<(Option<usize>, Option<i64>), Vec<(i64, usize)>>;
    let mut runs = Runs::new();
    for t in thunks(&table) {
        if let Some(s) = start(t.row) {
            runs.entry((t.module_row, int(tids, t.row)))
                .or_default()
                .push((s, t.row));
        }
    }
    let mut out = Overreach {
        changed: factor.len(),
        ..Overreach::default()
    };
    for ((module, _), mut rows) in runs {
        rows.sort_unstable();
        for (i, &(_, r)) in rows.iter().enumerate() {
            let Some(&Scale {
                factor: f,
                shift: false,
            }) = factor.get(&r)
            else {
                continue;
            };
            let (Some(before), Some(after)) = (end(r, 1.0), end(r, f)) else {
                continue;
            };
            if let Some(&(next, _)) = rows.get(i + 1)
                && before <= next
                && after > next
            {
                out.into_next += 1;
            }
            if let Some(m) = module.and_then(|m| end(m, 1.0))
                && before <= m
                && after > m
            {
                out.past_module += 1;
            }
        }
    }
    out
}

/// A thunk row that plants change, as archive `src` has it before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    /// The HLO module of its module range (`None` outside every module range).
    pub module: Option<String>,
    /// The projected start of its module range, before planting (as njx reports the
    /// module execution's `start_ns`).
    pub module_start: Option<i64>,
    /// Its thread's process (`PID`).
    pub pid: Option<i64>,
    /// Its thread (`TID`): the insertions of shifted rows move the rows of their thread.
    pub tid: Option<i64>,
    /// The HLO instruction.
    pub thunk: String,
    /// Its projected start before planting, ns.
    pub start: i64,
    /// Its projected duration before planting, ns; a shifted row inserts its Δ at
    /// `start + dur`.
    pub dur: i64,
    /// How much longer planting makes it (negative: shorter), ns.
    pub delta: i64,
    /// Whether the change is inserted (what follows moves, the ancestors grow).
    pub shift: bool,
}

/// The thunk rows of archive `src` that `plants` change, in projected start order.
/// Panics where a plant matches no row with a projected duration.
pub fn changes(src: &Path, plants: &[Plant]) -> Vec<Changed> {
    let (_, table) = read_projection(src);
    let scale = factors(src, &table, plants);
    let dur = durations(&table);
    let start = column_ints(&table, "Projected Start");
    let (pids, tids) = (column_ints(&table, "PID"), column_ints(&table, "TID"));
    let mut out: Vec<Changed> = thunks(&table)
        .into_iter()
        .filter_map(|t| {
            let s = scale.get(&t.row)?;
            let (at, d) = (start[t.row]?, dur[t.row]?);
            Some(Changed {
                module: t.module,
                module_start: t.module_row.and_then(|m| start[m]),
                pid: pids[t.row],
                tid: tids[t.row],
                thunk: t.thunk,
                start: at,
                dur: d,
                delta: s.delta(d),
                shift: s.shift,
            })
        })
        .collect();
    out.sort_by_key(|c| (c.start, c.pid, c.tid));
    out
}

/// Writes to `dst` archive `src` with `plants` applied to its GPU projection and returns
/// how many rows they changed (the rows that shifted plants move or lengthen besides are
/// not counted). A row several plants match takes the product of their factors, and is
/// shifted where any of them is. Panics where a plant matches no row with a projected
/// duration.
pub fn plant_archive(src: &Path, dst: &Path, plants: &[Plant]) -> usize {
    let (mut archive, table) = read_projection(src);
    let factor = factors(src, &table, plants);
    let (offset, grow) = if factor.values().any(|s| s.shift) {
        shifting(&table, &factor)
    } else {
        let none = vec![0; durations(&table).len()];
        (none.clone(), none)
    };
    // A column's new cells: each old one scaled where `scale` (the projected duration)
    // and plus `add`, whole numbers kept exact.
    let column = |c: &PqCol, add: &[i64], scale: bool| {
        let by = |r: usize| factor.get(&r).filter(|_| scale);
        match &c.cells {
            Cells::Int64(v) => Cells::Int64(
                (0..v.len())
                    .map(|r| v[r].map(|x| by(r).map_or(x, |s| s.apply(x as f64) as i64) + add[r]))
                    .collect(),
            ),
            Cells::Double(v) => Cells::Double(
                (0..v.len())
                    .map(|r| v[r].map(|x| by(r).map_or(x, |s| s.apply(x)) + add[r] as f64))
                    .collect(),
            ),
            _ => panic!("{GPU_PROJ}: {} not a number", c.name),
        }
    };
    let columns: Vec<PqCol> = table
        .columns
        .iter()
        .map(|c| PqCol {
            name: c.name,
            required: c.required,
            cells: match c.name {
                "Projected Duration" => column(c, &grow, true),
                "Projected Start" => column(c, &offset, false),
                _ => c.cells.copy(),
            },
        })
        .collect();
    let rewritten = table.write_like(&columns);
    let replaced = HashMap::from([(GPU_PROJ.to_string(), rewritten)]);
    write_members(&mut archive, dst, &replaced);
    factor.len()
}

/// Writes to `dst` every member of `archive` in its order: those named in `replaced`
/// with their new (uncompressed) contents, stored with the member's options (method,
/// time, permissions); every other member copied raw, byte for byte.
fn write_members(
    archive: &mut zip::ZipArchive<Cursor<Vec<u8>>>,
    dst: &Path,
    replaced: &HashMap<String, Vec<u8>>,
) {
    let place = dst.display();
    let file = std::fs::File::create(dst).unwrap_or_else(|e| panic!("{place}: {e}"));
    let mut w = zip::ZipWriter::new(std::io::BufWriter::new(file));
    for i in 0..archive.len() {
        let member = archive
            .by_index_raw(i)
            .unwrap_or_else(|e| panic!("{place}: {e}"));
        let name = member.name().ok().map(|n| n.to_string());
        match name.as_ref().and_then(|n| replaced.get(n).map(|b| (n, b))) {
            Some((name, bytes)) => {
                let options = member.options();
                drop(member);
                w.start_file(name, options)
                    .unwrap_or_else(|e| panic!("{place}: {e}"));
                w.write_all(bytes)
                    .unwrap_or_else(|e| panic!("{place}: {e}"));
            }
            None => w
                .raw_copy_file(member)
                .unwrap_or_else(|e| panic!("{place}: {e}")),
        }
    }
    w.finish()
        .unwrap_or_else(|e| panic!("{place}: {e}"))
        .flush()
        .unwrap_or_else(|e| panic!("{place}: {e}"));
}

/// An after-optimizations HLO dump of `module` in an nsys-jax archive:
/// `dump/module_NNNN.<module>.<stage>.hlo.pb.xz` with stage `after_optimizations` or
/// `sm_X.Y_gpu_after_optimizations` (read here without njx's own parser, as the range
/// names are).
pub fn is_after_optimizations_dump(member: &str, module: &str) -> bool {
    let Some(rest) = member
        .strip_prefix("dump/module_")
        .and_then(|r| r.strip_suffix(".hlo.pb.xz"))
    else {
        return false;
    };
    let Some((number, rest)) = rest.split_once('.') else {
        return false;
    };
    let Some(stage) = rest.strip_prefix(module).and_then(|r| r.strip_prefix('.')) else {
        return false;
    };
    !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && (stage == "after_optimizations"
            || stage.starts_with("sm_") && stage.ends_with("_gpu_after_optimizations"))
}

/// What [`rename_hlo`] renamed in one `HloProto`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HloRenamed {
    /// Instructions renamed (`HloInstructionProto.name`), per old name.
    pub defined: BTreeMap<String, usize>,
    /// References by name renamed, per field: `OpMetadata.deduplicated_name`,
    /// `OpMetadata.scheduling_name`, `ProgramShapeProto.parameter_names` (of a computation
    /// or the module's host program shape), `LogicalBufferProto.Location.instruction_name`,
    /// `HeapSimulatorTrace.Event.instruction_name`.
    pub referenced: BTreeMap<&'static str, usize>,
    /// Instructions whose name is the new name of another one and that no rename moves:
    /// renaming would make two instructions of one name.
    pub clashes: Vec<String>,
}

/// The messages of `HloProto` (XLA's `xla/service/hlo.proto`, `xla/xla_data.proto`) on
/// the way to a name of an instruction.
#[derive(Debug, Clone, Copy)]
enum HloMsg {
    Hlo,
    Module,
    Computation,
    Instruction,
    OpMetadata,
    ProgramShape,
    BufferAssignment,
    LogicalBuffer,
    BufferAlias,
    Location,
    HeapTrace,
    HeapEvent,
}

/// What a field of an [`HloMsg`] holds: a message that leads to names, the name an
/// instruction is defined by, or a reference to an instruction by name (the field's
/// name).
enum HloField {
    Msg(HloMsg),
    Definition,
    Reference(&'static str),
}

/// The fields that hold or lead to instruction names, by XLA's field numbers. Every other
/// reference to an instruction is by id (operands, control predecessors, called
/// computations, the schedule, `root_id`, `LogicalBufferProto.Location.instruction_id`).
fn hlo_field(msg: HloMsg, number: u64) -> Option<HloField> {
    use HloField::{Definition, Msg, Reference};
    use HloMsg::*;
    Some(match (msg, number) {
        (Hlo, 1) => Msg(Module),
        (Hlo, 3) => Msg(BufferAssignment),
        (Module, 3) => Msg(Computation),
        (Module, 4) => Msg(ProgramShape),
        (Computation, 2) => Msg(Instruction),
        (Computation, 4) => Msg(ProgramShape),
        (Instruction, 1) => Definition,
        (Instruction, 7) => Msg(OpMetadata),
        (OpMetadata, 12) => Reference("OpMetadata.deduplicated_name"),
        (OpMetadata, 16) => Reference("OpMetadata.scheduling_name"),
        (ProgramShape, 3) => Reference("ProgramShapeProto.parameter_names"),
        (BufferAssignment, 1) => Msg(LogicalBuffer),
        (BufferAssignment, 2) => Msg(BufferAlias),
        (BufferAssignment, 4) => Msg(HeapTrace),
        (LogicalBuffer, 3) | (BufferAlias, 2) => Msg(Location),
        (Location, 2) => Reference("LogicalBufferProto.Location.instruction_name"),
        (HeapTrace, 1) => Msg(HeapEvent),
        (HeapEvent, 4) => Reference("HeapSimulatorTrace.Event.instruction_name"),
        _ => return None,
    })
}

/// A protobuf varint at `at` of `bytes`: its value and the offset after it.
fn varint(bytes: &[u8], mut at: usize) -> (u64, usize) {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let b = *bytes.get(at).expect("HloProto: truncated varint");
        at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return (value, at);
        }
    }
    panic!("HloProto: varint longer than 10 bytes");
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// `bytes`, an encoded `msg`, with the names renamed, re-encoded at the protobuf wire
/// level: every field not on the way to a name is copied as it was (unknown fields too:
/// njx's schema in `protos/` is a subset of XLA's, so decoding and re-encoding with its
/// types would drop what it leaves out).
fn rename_fields(
    bytes: &[u8],
    msg: HloMsg,
    renames: &HashMap<&str, &str>,
    targets: &HashSet<&str>,
    out: &mut Vec<u8>,
    tally: &mut HloRenamed,
) {
    let mut at = 0;
    while at < bytes.len() {
        let start = at;
        let (key, after_key) = varint(bytes, at);
        let (number, wire) = (key >> 3, key & 7);
        at = match wire {
            0 => varint(bytes, after_key).1,
            1 => after_key + 8,
            5 => after_key + 4,
            2 => {
                let (len, body) = varint(bytes, after_key);
                let end = body + len as usize;
                assert!(end <= bytes.len(), "HloProto: truncated field {number}");
                if let Some(field) = hlo_field(msg, number) {
                    let value = &bytes[body..end];
                    out.extend_from_slice(&bytes[start..after_key]);
                    match field {
                        HloField::Msg(inner) => {
                            let mut sub = Vec::with_capacity(value.len());
                            rename_fields(value, inner, renames, targets, &mut sub, tally);
                            put_varint(out, sub.len() as u64);
                            out.extend_from_slice(&sub);
                        }
                        HloField::Definition | HloField::Reference(_) => {
                            let name = std::str::from_utf8(value).expect("HloProto: a name");
                            let new = renames.get(name).copied();
                            match (&field, new) {
                                (HloField::Definition, Some(_)) => {
                                    *tally.defined.entry(name.to_string()).or_default() += 1;
                                }
                                (HloField::Definition, None) if targets.contains(name) => {
                                    tally.clashes.push(name.to_string());
                                }
                                (HloField::Reference(what), Some(_)) => {
                                    *tally.referenced.entry(what).or_default() += 1;
                                }
                                _ => {}
                            }
                            let name = new.unwrap_or(name);
                            put_varint(out, name.len() as u64);
                            out.extend_from_slice(name.as_bytes());
                        }
                    }
                    at = end;
                    continue;
                }
                end
            }
            other => panic!("HloProto: wire type {other} (groups) in field {number}"),
        };
        assert!(at <= bytes.len(), "HloProto: truncated field {number}");
        out.extend_from_slice(&bytes[start..at]);
    }
}

/// `proto`, an encoded `xla.HloProto` (uncompressed), with instructions renamed
/// (`renames`: (from, to), all at once, so that a swap works): where each is defined
/// (`HloInstructionProto.name`, in whichever computation) and wherever the dump refers to
/// it by name ([`HloRenamed::referenced`]). Everything else is kept byte for byte, the
/// module's `fingerprint_before_lhs` too: XLA computes it from the canonical text of the
/// module (`HloPrintOptions::Canonical`, which prints no instruction names), so a
/// recompilation that only renumbers keeps it. With no renames the result is `proto`
/// itself (protobuf's encoding of a message is the same for the same fields).
pub fn rename_hlo(proto: &[u8], renames: &[(&str, &str)]) -> (Vec<u8>, HloRenamed) {
    let map: HashMap<&str, &str> = renames.iter().copied().collect();
    assert_eq!(
        map.len(),
        renames.len(),
        "a name renamed twice: {renames:?}"
    );
    let targets: HashSet<&str> = renames.iter().map(|&(_, to)| to).collect();
    assert_eq!(
        targets.len(),
        renames.len(),
        "two names renamed alike: {renames:?}"
    );
    let mut out = Vec::with_capacity(proto.len() + 64);
    let mut tally = HloRenamed::default();
    rename_fields(proto, HloMsg::Hlo, &map, &targets, &mut out, &mut tally);
    (out, tally)
}

/// Writes to `dst` archive `src` with HLO instructions of module `module`
/// (`pjit__wrapped_step_fn`) renamed, as a recompilation that renumbers them does
/// (`fusion.123` becomes `fusion.131`); `renames` are (from, to), applied all at once, so
/// a swap `[(a, b), (b, a)]` works. Renamed:
/// - the thunk rows of the GPU projection whose nearest `XlaModule` ancestor is `module`
///   and whose instruction (`hlo_op=`) is renamed: only the instruction in the range name
///   changes (a `name=` field before it and a `unique_hlo_op_id` after it stay);
/// - in every after-optimizations dump of `module` ([`is_after_optimizations_dump`]),
///   each instruction and the references to it by name ([`rename_hlo`]), re-compressed
///   with xz preset 6 (what Python's `lzma` and the archives' dumps use).
///
/// Every other member is copied raw, in the same order: the before-optimizations dumps
/// (XLA names thunks after the optimized module), and the push/pop table
/// (`report_nvtx_pushpop_trace.csv.xz`), whose CPU-side thunk ranges keep the old names.
/// Returns the number of projection rows renamed. Panics where a rename matches no thunk
/// row of `module` or is defined in no instruction of one of its dumps, where `module`
/// has no after-optimizations dump, or where a new name is already a thunk or an
/// instruction of `module` that no rename moves.
pub fn rename_archive(src: &Path, dst: &Path, module: &str, renames: &[(&str, &str)]) -> usize {
    let place = src.display();
    let (mut archive, table) = read_projection(src);
    let map: HashMap<&str, &str> = renames.iter().copied().collect();
    assert_eq!(
        map.len(),
        renames.len(),
        "a name renamed twice: {renames:?}"
    );

    // The projection: the Name cells of the module's renamed thunks.
    let Cells::Text(names) = cells(&table, "Name") else {
        panic!("{GPU_PROJ}: Name is not text");
    };
    let mut new_names = names.clone();
    let mut matched: BTreeMap<&str, usize> = BTreeMap::new();
    for t in thunks(&table) {
        if t.module.as_deref() != Some(module) {
            continue;
        }
        let Some((&from, &to)) = map.get_key_value(t.thunk.as_str()) else {
            assert!(
                !renames.iter().any(|&(_, to)| to == t.thunk),
                "{place}: {module}: {} is already a thunk, not renamed: renaming to it \
                 would merge two instructions",
                t.thunk
            );
            continue;
        };
        *matched.entry(from).or_default() += 1;
        let name = names[t.row].as_deref().expect("a thunk row has a name");
        let op = thunk_name(name).expect("a thunk name");
        let at = op.as_ptr() as usize - name.as_ptr() as usize;
        new_names[t.row] = Some(format!("{}{to}{}", &name[..at], &name[at + op.len()..]));
    }
    for &(from, to) in renames {
        assert!(
            matched.contains_key(from),
            "{place}: {module}: no thunk row of {from} (to be {to})"
        );
    }
    let columns: Vec<PqCol> = table
        .columns
        .iter()
        .map(|c| PqCol {
            name: c.name,
            required: c.required,
            cells: match c.name {
                "Name" => Cells::Text(new_names.clone()),
                _ => c.cells.copy(),
            },
        })
        .collect();
    let mut replaced = HashMap::from([(GPU_PROJ.to_string(), table.write_like(&columns))]);

    // The module's after-optimizations dumps.
    let dumps: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.to_string()))
        .filter(|n| is_after_optimizations_dump(n, module))
        .collect();
    assert!(
        !dumps.is_empty(),
        "{place}: no after-optimizations dump of {module}"
    );
    for dump in dumps {
        let mut xz = Vec::new();
        archive
            .by_name(&dump)
            .unwrap_or_else(|e| panic!("{place}: {dump}: {e}"))
            .read_to_end(&mut xz)
            .unwrap_or_else(|e| panic!("{place}: {dump}: {e}"));
        let mut proto = Vec::new();
        xz2::read::XzDecoder::new(xz.as_slice())
            .read_to_end(&mut proto)
            .unwrap_or_else(|e| panic!("{place}: {dump}: {e}"));
        let (renamed, tally) = rename_hlo(&proto, renames);
        assert!(
            tally.clashes.is_empty(),
            "{place}: {dump}: already instructions, not renamed: {:?}",
            tally.clashes
        );
        for &(from, _) in renames {
            assert_eq!(
                tally.defined.get(from),
                Some(&1),
                "{place}: {dump}: instructions named {from}"
            );
        }
        replaced.insert(dump, super::xz_preset(&renamed, 6));
    }
    write_members(&mut archive, dst, &replaced);
    matched.values().sum()
}

/// The push/pop table of an nsys-jax archive (the pax archives' name for it).
pub const PUSHPOP: &str = "report_nvtx_pushpop_trace.csv.xz";

/// Writes to `dst` archive `src` with `rows` (CSV rows of its push/pop table, in the
/// table's columns: `Start (ns),End (ns),Duration (ns),DurChild (ns),DurNonChild (ns),
/// Name,PID,TID,Lvl,NumChild,RangeId,ParentId,RangeStack,NameTree`, as nsys' `nvtx_pushpop_trace`
/// report writes them) added, each where its start puts it in the table's order by
/// start; every other member copied raw.
pub fn add_ranges(src: &Path, dst: &Path, rows: &[String]) {
    let place = src.display();
    let (mut archive, packed) = read_member(src, PUSHPOP);
    let mut text = String::new();
    xz2::read::XzDecoder::new(&packed[..])
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{place}: {PUSHPOP}: {e}"));
    let start = |row: &str| -> i64 {
        row.split(',')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{place}: {PUSHPOP}: a row without a start: {row}"))
    };
    let mut lines: Vec<&str> = text.lines().collect();
    for row in rows {
        let at = 1 + lines[1..].partition_point(|l| start(l) <= start(row));
        lines.insert(at, row);
    }
    let csv = lines.join("\n") + "\n";
    let replaced = HashMap::from([(PUSHPOP.to_string(), super::xz(csv.as_bytes()))]);
    write_members(&mut archive, dst, &replaced);
}

/// Writes to `dst` archive `src` with member `name` holding `bytes` (as they are stored:
/// compressed where the member's name says so), in its place; every other member copied
/// raw. Panics where the archive has no such member.
pub fn replace_member(src: &Path, dst: &Path, name: &str, bytes: Vec<u8>) {
    let (mut archive, _) = read_member(src, name);
    write_members(
        &mut archive,
        dst,
        &HashMap::from([(name.to_string(), bytes)]),
    );
}
