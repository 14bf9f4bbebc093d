//! The after-optimizations HLO dumps of njx-heap's inputs (nsys-jax archives or XLA
//! dump folders), those of the program asked for, each read into its heap.

use super::Options;
use super::program::program_heap;
use super::records::ProgramHeap;
use crate::error::{Error, Result};
use crate::hlo::{Dumps, HloModule};
use crate::output::notes::Notes;
use crate::source;
use std::path::PathBuf;

/// The heaps of every after-optimizations dump in `inputs` (nsys-jax archives or XLA dump
/// folders), in input then member order, those of `options.program` only.
pub fn read(inputs: &[PathBuf], options: &Options, notes: &Notes) -> Result<Vec<ProgramHeap>> {
    let mut out = Vec::new();
    for path in inputs {
        if path.as_os_str() == "-" {
            return Err(Error::Usage(
                "njx-heap reads nsys-jax archives or folders of XLA dumps, not stdin: name them"
                    .into(),
            ));
        }
        let mut archive = source::open_dumps(path, notes.progress())?;
        let members: Vec<String> = Dumps::new(&archive)
            .after_optimizations()
            .into_iter()
            .map(str::to_string)
            .collect();
        if members.is_empty() {
            notes.note(format!(
                "{}: no after-optimizations HLO dumps",
                path.display()
            ));
        }
        // Each dump is used once: decoded, replayed and dropped (not cached in `Dumps`).
        for member in members {
            let hlo = HloModule::from_member(&mut archive, &member)?;
            if is_wanted(&hlo, options.program.as_deref()) {
                out.push(program_heap(&hlo, notes)?);
            }
        }
    }
    if out.is_empty()
        && let Some(p) = &options.program
    {
        return Err(Error::Usage(format!(
            "--program {p}: no after-optimizations dump of that program"
        )));
    }
    Ok(out)
}

/// Whether `hlo` is the program `wanted` names: its module name, program id or fingerprint.
fn is_wanted(hlo: &HloModule, wanted: Option<&str>) -> bool {
    wanted.is_none_or(|w| {
        hlo.name() == w || hlo.id().to_string() == w || hlo.fingerprint() == Some(w)
    })
}
