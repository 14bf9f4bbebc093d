//! The walks over input paths: each path read on a core of its own ([`each`],
//! [`each_mapped`]), its executions handed over in input order; [`visit`] and [`load`]
//! with warm-up marked and clocks aligned; [`read_records`] and [`each_thunk`] for tools
//! that take records or profiles.

use super::input::load_path;
use super::processes::Processes;
use super::spill;
use super::{Alignment, Executions, Kept, KeyBy, Phase, Warmup};
use crate::derived::ranks::{self, Seen};
use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::{Module, Thunk};
use crate::source;
use crate::util::parallel::{parallel_map, workers};
use serde::de::DeserializeOwned;
use std::path::PathBuf;

/// Where the HLO dumps of programs come from besides each archive's own (`--hlo`:
/// archives or XLA dump folders), and how programs are keyed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hlo<'a> {
    /// Archives or XLA dump folders.
    pub dumps: &'a [PathBuf],
    /// How programs are keyed.
    pub key: KeyBy,
}

/// What is said, after its place, of an input without XLA module ranges: one line, the
/// error of every tool that reads executions ([`WithoutXla::Refuse`]).
pub const NO_XLA: &str = "holds no XLA module ranges (XlaModule NVTX ranges with GPU work), \
     so nothing for this tool; njx-report, njx-kernels, njx-diff --by kernel, njx-ranges, \
     njx-timeline, njx-flamefold --by stack and njx-export --table \
     ranges|gpu-ranges|kernels|memops|payloads read it";

/// What becomes of an input path whose profiles hold no XLA module range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WithoutXla {
    /// Refused ([`NO_XLA`], exit 1): executions are all the tool reads, and an empty
    /// table would read as an answer (no time in XLA programs) where there is none.
    Refuse,
    /// Passed over without a note: the tool draws the other things the input holds.
    Skip,
}

/// Reads module and thunk executions from nsys-jax archives (every profile of each),
/// archives njx-capture wrote, nsys SQLite exports and `.nsys-rep` reports, aligning
/// device clocks across them when `align` is set. HLO dumps come from each archive
/// itself and from `hlo` (archives or XLA dump folders), the only source for SQLite
/// exports. What was left out or corrected goes to `notes`.
pub fn load(paths: &[PathBuf], hlo: Hlo<'_>, align: bool, notes: &Notes) -> Result<Executions> {
    let mut all = Executions::default();
    visit(paths, hlo, align, Want::Both, notes, &mut |e| {
        match e {
            Execution::Module(m) => all.modules.push(m),
            Execution::Thunk(t) => all.thunks.push(t),
        }
        Ok(())
    })?;
    Ok(all)
}

/// One execution record.
#[derive(Debug, Clone, PartialEq)]
pub enum Execution {
    /// A module execution.
    Module(Module),
    /// A thunk execution.
    Thunk(Thunk),
}

/// Which records [`visit`] hands over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// Module executions.
    Modules,
    /// Thunk executions.
    Thunks,
    /// Both, every module's before every thunk's of the same input path.
    Both,
}

/// Hands every execution of `paths` to `f`, as [`load`] would hold them (warm-up marked,
/// clocks aligned when `align`), in the same order, without holding them: a first pass
/// derives each input path's executions ([`each`]), keeps what the warm-up rule and the
/// alignment need (programs, and the end times of the collectives over every device) and
/// parks the records in a temporary file (TMPDIR); the second reads them back with the
/// decisions applied. Memory holds one input path per core and the collectives' end
/// times, not every rank.
pub fn visit(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    align: bool,
    want: Want,
    notes: &Notes,
    f: &mut dyn FnMut(Execution) -> Result<()>,
) -> Result<()> {
    visit_with(paths, hlo, align, want, WithoutXla::Refuse, notes, f)
}

/// [`visit`], with inputs without XLA module ranges refused or passed over as `without`
/// says.
pub fn visit_with(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    align: bool,
    want: Want,
    without: WithoutXla,
    notes: &Notes,
    f: &mut dyn FnMut(Execution) -> Result<()>,
) -> Result<()> {
    let mut warmup = Warmup::default();
    let mut alignment = Alignment::default();
    let mut parked = spill::Spill::new()?;
    each_with(paths, hlo, Kept::NOTHING, without, notes, |part| {
        // nsys-jax decides warm-up over everything it analyses at once: a program
        // compiled in one profile, or communication in any, counts for all of them.
        warmup.add(&part);
        if align {
            alignment.add(&part.thunks);
        }
        parked.put(
            if want == Want::Thunks {
                &[]
            } else {
                &part.modules
            },
            if want == Want::Modules {
                &[]
            } else {
                &part.thunks
            },
        )
    })?;
    let rule = warmup.rule();
    if let Some(n) = rule.note() {
        notes.on_answer(n);
    }
    for n in warmup.variants.notes() {
        notes.on_answer(n);
    }
    let corrections = if align { alignment.corrections() } else { None };
    for (device, ns) in corrections.iter().flatten() {
        notes.note(format!(
            "clock alignment: device {device} corrected by {:+.6} ms",
            -ns / 1e6 + 0.0
        ));
    }
    let shift = |device: u32| {
        corrections
            .as_ref()
            .and_then(|c| c.get(&device))
            .map_or(0, |c| c.round() as i64)
    };
    notes.progress().phase("writing records");
    parked.read(&mut |e| {
        f(match e {
            Execution::Module(mut m) => {
                m.warmup = rule.module_is_warmup(&m.program, Phase::of_profile(m.execution));
                m.start_ns -= shift(m.device);
                Execution::Module(m)
            }
            Execution::Thunk(mut t) => {
                t.warmup = rule.thunk_is_warmup(&t.program, Phase::of_profile(t.execution));
                t.start_ns -= shift(t.device);
                Execution::Thunk(t)
            }
        })
    })
}

/// Hands the executions of each input path (every profile of it) to `f`, in input order,
/// warm-up not yet marked and clocks not aligned. Paths are read as many at a time as
/// there are cores (decoding the xz-compressed tables and HLO dumps is most of the
/// work), each handed over and dropped before the next are read.
pub fn each(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    keep: Kept,
    notes: &Notes,
    f: impl FnMut(Executions) -> Result<()>,
) -> Result<()> {
    each_with(paths, hlo, keep, WithoutXla::Refuse, notes, f)
}

/// [`each`], with inputs without XLA module ranges refused or passed over as `without`
/// says.
fn each_with(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    keep: Kept,
    without: WithoutXla,
    notes: &Notes,
    f: impl FnMut(Executions) -> Result<()>,
) -> Result<()> {
    let mut seen = Seen::default();
    each_path(
        paths,
        hlo,
        keep,
        without,
        notes,
        &mut seen,
        &|part, _| Ok(part),
        f,
    )
}

/// [`each`], with `map` applied to each input path's executions on the thread that read
/// them (what an analysis makes of one input path, such as its partial aggregate), and
/// its results handed to `f` in input order; inputs without XLA module ranges refused or
/// passed over (mapped as they are: no records, what was kept) as `without` says. The
/// ranks of each input path are added to `seen`: a rank read before is refused.
#[allow(clippy::too_many_arguments)]
pub fn each_mapped<T: Send>(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    keep: Kept,
    without: WithoutXla,
    notes: &Notes,
    seen: &mut Seen,
    map: &(dyn Fn(Executions, &Notes) -> Result<T> + Sync),
    f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    each_path(paths, hlo, keep, without, notes, seen, map, f)
}

/// [`each_mapped`]: every input path's ranks checked against `seen` (a profile counts
/// once) before its executions are handed on.
#[allow(clippy::too_many_arguments)]
fn each_path<T: Send>(
    paths: &[PathBuf],
    hlo: Hlo<'_>,
    keep: Kept,
    without: WithoutXla,
    notes: &Notes,
    seen: &mut Seen,
    map: &(dyn Fn(Executions, &Notes) -> Result<T> + Sync),
    mut f: impl FnMut(T) -> Result<()>,
) -> Result<()> {
    let processes = Processes::new(paths);
    let inputs: Vec<(usize, &PathBuf)> = paths.iter().enumerate().collect();
    for chunk in inputs.chunks(workers()) {
        for (result, kept, p) in parallel_map(chunk, |&(k, p)| {
            let kept = notes.apart();
            let mapped = load_path(p, k, &processes, hlo, keep, without, &kept).and_then(|part| {
                let ranks = ranks::of(&part);
                map(part, &kept).map(|m| (m, ranks))
            });
            notes.progress().input_done(p);
            (mapped, kept, p)
        }) {
            let (part, ranks) = result?;
            let place = p.display().to_string();
            seen.add(
                ranks.into_iter().map(|r| (r, place.clone())),
                &place,
                &place,
            )?;
            notes.forward(kept);
            f(part)?;
        }
    }
    Ok(())
}

/// Execution records (`table`: `modules` or `thunks`) from every input: record streams
/// (JSON Lines or CSV) as they are, profiles through [`load`] (clocks aligned when
/// `align`) and `pick`.
pub fn read_records<T: DeserializeOwned + crate::records::Check>(
    paths: &[PathBuf],
    table: &str,
    key: KeyBy,
    align: bool,
    notes: &Notes,
    pick: impl FnOnce(Executions) -> Vec<T>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let profiles = source::split_inputs(paths, table, notes.progress(), &mut |s| {
        s.read(&mut |r: T| {
            out.push(r);
            Ok(())
        })
        .map(drop)
    })?;
    if !profiles.is_empty() {
        out.extend(pick(load(
            &profiles,
            Hlo { dumps: &[], key },
            align,
            notes,
        )?));
    }
    Ok(out)
}

/// Hands every thunk execution of `paths` to `f` without holding them: thunk records as
/// they are read (in input order), then the profiles through [`visit`] (warm-up marked,
/// clocks aligned when `align`).
pub fn each_thunk(
    paths: &[PathBuf],
    key: KeyBy,
    align: bool,
    notes: &Notes,
    f: &mut dyn FnMut(Thunk) -> Result<()>,
) -> Result<()> {
    let profiles = source::split_inputs(paths, "thunks", notes.progress(), &mut |s| {
        s.read(&mut |t: Thunk| f(t)).map(drop)
    })?;
    if profiles.is_empty() {
        return Ok(());
    }
    let hlo = Hlo { dumps: &[], key };
    visit(
        &profiles,
        hlo,
        align,
        Want::Thunks,
        notes,
        &mut |e| match e {
            Execution::Thunk(t) => f(t),
            Execution::Module(_) => Ok(()),
        },
    )
}
