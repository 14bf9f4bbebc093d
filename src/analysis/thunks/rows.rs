//! The rows of one view of an aggregate ([`Rows`]): the executions that count, cut into
//! the runs of each (program, thunk), put in the view's order, with what the dumps say
//! of each thunk; each row is made as it is written.

use super::aggregate::ThunkTime;
use super::opcode::{OpcodeRow, opcode_rows};
use super::read::check;
use super::stats::Stats;
use super::table::Run;
use super::top::top_order;
use super::variability::variability_order;
use super::{Options, View};
use crate::derived::gpu_time::{Selection, UNKNOWN};
use crate::error::Result;
use crate::hlo::thunk_info::{self, Infos};
use crate::output::notes::Notes;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// The rows of one view of an aggregate, made one at a time as they are written.
pub struct Rows<'a> {
    pub(super) time: &'a ThunkTime,
    pub(super) selection: Selection<'a>,
    /// What the dumps say of the thunks, where there are dumps.
    pub(super) infos: Option<Infos>,
    /// The entries that count, in key order; the views' runs point into it.
    pub(super) order: Vec<u32>,
    pub(super) view: Chosen,
}

/// The rows of each view, in their order.
pub(super) enum Chosen {
    /// Largest total first, and the total of every thunk.
    Top(Vec<Run>, i128),
    Opcode(Vec<OpcodeRow>),
    /// Largest mean first.
    Variability(Vec<Run>),
}

impl Rows<'_> {
    /// How many rows.
    pub fn len(&self) -> usize {
        match &self.view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.len(),
            Chosen::Opcode(r) => r.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The (program, thunk) of a run and the statistics of its entries together.
    pub(super) fn merged(&self, run: Run) -> ((&str, &str), Stats) {
        let mut merged = Stats::default();
        let mut key = ("", "");
        for &i in &self.order[run.at as usize..(run.at + run.len) as usize] {
            let ((program, name, _), s) = self.time.stats.get(i);
            key = (program, name);
            merged.merge(s);
        }
        (key, merged)
    }

    /// What the dumps say of a thunk: (op_name, opcode).
    pub(super) fn info(&self, program: &str, name: &str) -> Option<(String, String)> {
        self.infos
            .as_ref()?
            .get(program)?
            .as_ref()?
            .get(name)?
            .as_ref()
            .map(|i| (i.op_name().to_string(), i.opcode().to_string()))
    }

    /// The names a row gives its thunk.
    pub(super) fn named(&self, program: &str, name: &str) -> Named {
        let info = self.info(program, name);
        Named {
            program: program.to_string(),
            module: self.selection.module_name(program).to_string(),
            thunk: name.to_string(),
            op_name: info.as_ref().map(|i| i.0.clone()),
            opcode: info.map(|i| i.1),
        }
    }
}

/// What the top and variability rows name a thunk by: its program (key and module name),
/// its instruction, and what the dumps say of it.
pub(super) struct Named {
    pub(super) program: String,
    pub(super) module: String,
    pub(super) thunk: String,
    pub(super) op_name: Option<String>,
    pub(super) opcode: Option<String>,
}

/// The rows of `options.view` of an aggregate; `inputs` are where it came from (their
/// archives, with `--hlo`, are the dumps read for op_names and opcodes).
pub fn rows<'a>(
    time: &'a ThunkTime,
    options: &Options,
    inputs: &[PathBuf],
    notes: &Notes,
) -> Result<Rows<'a>> {
    check(options)?;
    let selection = time
        .gpu
        .select(options.include_warmup, options.top_modules, notes);
    let variability = options.view == View::Variability;
    // Per (program, thunk): the executions that count.
    let order = time.stats.sorted(|(program, _, phase), s| {
        selection.thunk_counts(program, phase)
            && (variability || selection.is_chosen(program))
            && !(variability && s.comm)
    });
    let mut runs = time.stats.runs(&order);
    let mut rows = Rows {
        time,
        selection,
        infos: None,
        order,
        view: Chosen::Opcode(Vec::new()),
    };
    if variability {
        runs.retain(|&r| rows.merged(r).1.n >= 2);
    }
    rows.infos = dump_infos(&rows, &runs, inputs, &options.hlo, notes)?;
    let mut view = match options.view {
        View::Top => top_order(&rows, &runs),
        View::Opcode => Chosen::Opcode(opcode_rows(&rows, &runs)),
        View::Variability => variability_order(&rows, runs, options.min_cv),
    };
    if let Some(n) = options.top {
        match &mut view {
            Chosen::Top(r, _) | Chosen::Variability(r) => r.truncate(n),
            Chosen::Opcode(r) => r.truncate(n),
        }
    }
    rows.view = view;
    Ok(rows)
}

/// What the dumps say of the thunks of `runs`, where there are dumps: among `inputs`,
/// given with `--hlo` (`hlo`), or carried by the aggregate; notes for those they lack.
fn dump_infos(
    rows: &Rows<'_>,
    runs: &[Run],
    inputs: &[PathBuf],
    hlo: &[PathBuf],
    notes: &Notes,
) -> Result<Option<Infos>> {
    let time = rows.time;
    let sources = thunk_info::dump_sources(inputs, hlo);
    if sources.is_empty() && !time.gpu.has_infos() {
        return Ok(None);
    }
    let mut wanted: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for &run in runs {
        let ((program, name, _), _) = time.stats.get(rows.order[run.at as usize]);
        wanted.entry(program).or_default().insert(name);
    }
    let infos = time.gpu.infos(&wanted, &sources, notes)?;
    note_missing(&infos, &wanted, &rows.selection, notes);
    Ok(Some(infos))
}

/// Notes for the programs without a dump and the thunks their dump lacks.
fn note_missing(
    infos: &Infos,
    wanted: &BTreeMap<&str, BTreeSet<&str>>,
    selection: &Selection<'_>,
    notes: &Notes,
) {
    for (program, names) in wanted {
        let module = selection.module_name(program);
        match infos.get(*program).and_then(Option::as_ref) {
            None => notes.note(format!(
                "no HLO dump of program {program} ({module}): its thunks have no op_name \
                 or opcode ({UNKNOWN} by opcode)"
            )),
            Some(infos) => {
                for name in names {
                    if infos.get(*name).is_none_or(Option::is_none) {
                        notes.note(format!(
                            "program {program} ({module}): no instruction {name} in its HLO \
                             dump: no op_name or opcode ({UNKNOWN} by opcode)"
                        ));
                    }
                }
            }
        }
    }
}
