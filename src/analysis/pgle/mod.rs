//! Profiles for XLA's profile-guided latency estimator (`njx-pgle`): the
//! `ProfiledInstructionsProto` text files that the latency-hiding scheduler reads from
//! `--xla_gpu_pgle_profile_file_or_directory_path`, one `<fingerprint>.pbtxt` per program,
//! as nsys-jax's `nsys_jax/analyses/pgle_costs.py` writes them.
//!
//! The statistic is the peer's: over the steady-state executions of each thunk on every
//! device, its full GPU time (exposed plus hidden: `dur_ns + hidden_ns`), the slowest for
//! communication thunks and the fastest for compute thunks. Each instruction is written
//! under the name the scheduler knows it by, `OpMetadata.scheduling_name` from the
//! program's HLO dump; where the dump has none (XLA before the field, whose estimator
//! looked instructions up by their name, `instr->name()` in
//! `xla/service/profile_guided_latency_estimator.cc`) under its instruction name.
//!
//! Only aggregates are held ([`Costs`]): per (program, instruction, phase) the fastest
//! and slowest execution, per (program, phase) the module time that ranks programs, and
//! the scheduling names of the instructions that ran, taken from each archive's dumps as
//! they are decoded for the executions. Merges are exact (minima, maxima, sums, sets), so
//! the partial results of ranks reduce to the files of one process reading every rank.
//!
//! One file per job:
//!
//! - `costs.rs`: the aggregate ([`Costs`]) of the thunk and module executions and of the
//!   dumps' scheduling names, its merges and the partial result of `--partial` ([`read`]);
//! - `profiles.rs`: the profiles built from it ([`profiles`]): which executions count,
//!   the file each program gets, the names its instructions are written under;
//! - `pbtxt.rs`: writing them as `<fingerprint>.pbtxt` files ([`write_files`]);
//! - `summary.rs`: the rows said on stdout of the profiles written ([`write_summary`]);
//! - here: [`Options`] and [`run`].

mod costs;
mod pbtxt;
mod profiles;
mod summary;

pub use costs::{Costs, PARTIAL, read};
pub use pbtxt::{write_files, write_profile};
pub use profiles::{Entry, Profile, profiles};
pub use summary::{Row, rows, write_summary};

use crate::derived::partial;
use crate::error::{Error, Result};
use crate::output::Format;
use crate::output::notes::Notes;
use std::io::Write;
use std::path::PathBuf;

/// What `njx-pgle` reads.
#[derive(Debug, Clone)]
pub struct Options {
    /// Count initialisation executions too.
    pub include_warmup: bool,
    /// The folder the profiles are written into (one `<fingerprint>.pbtxt` per program);
    /// needed unless `partial`.
    pub dir: Option<PathBuf>,
    /// Write the aggregate as a partial result (kind [`PARTIAL`]) instead of the profiles.
    pub partial: bool,
    /// The summary's format (one row per profile written).
    pub format: Format,
}

impl Options {
    /// Refuses, before anything is read, options without a folder to write into (unless
    /// `partial`) and a folder that exists and is no folder.
    pub fn check(&self) -> Result<()> {
        match &self.dir {
            Some(dir) => match std::fs::metadata(dir) {
                Ok(m) if !m.is_dir() => Err(Error::Usage(format!(
                    "-o {}: not a folder (njx-pgle writes one file per program into it)",
                    dir.display()
                ))),
                _ => Ok(()),
            },
            None if !self.partial => Err(Error::Usage(
                "-o DIR is required: the folder to write the profiles into (or --partial)".into(),
            )),
            None => Ok(()),
        }
    }
}

/// Runs njx-pgle: reads `inputs`, then writes either the partial result to `out` or one
/// profile per program into `options.dir` and their summary to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    options.check()?;
    if options.partial {
        notes.writes_partial();
    }
    let costs = read(inputs, notes)?;
    if options.partial {
        return partial::write(out, &costs);
    }
    let dir = options
        .dir
        .as_deref()
        .expect("checked: a folder without --partial");
    let profiles = profiles(&costs, options, notes);
    write_files(dir, &profiles, inputs)?;
    write_summary(options.format, &rows(&profiles, dir), out)
}
