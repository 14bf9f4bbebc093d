//! What the dumps say of the thunks a view shows (op_name and opcode), read where there
//! are dumps, and the notes on those they do not name.

use super::Rows;
use super::table::Run;
use crate::derived::gpu_time::{Selection, UNKNOWN};
use crate::error::Result;
use crate::hlo::thunk_info::{self, Infos};
use crate::output::notes::Notes;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

/// What the dumps say of the thunks of `runs`, where there are dumps: among `inputs`,
/// given with `--hlo` (`hlo`), or carried by the aggregate; notes for those they lack.
pub(super) fn dump_infos(
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
