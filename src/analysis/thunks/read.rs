//! The inputs of njx-thunks read into their aggregate: record streams, partial results,
//! nsys-jax archives, nsys exports; and the options' numbers checked before.

use super::aggregate::ThunkTime;
use super::{Options, View};
use crate::derived::executions;
use crate::derived::partial;
use crate::error::{Error, Result};
use crate::hlo::thunk_info;
use crate::output::notes::Notes;
use std::path::PathBuf;

/// Reads module and thunk executions from every input: record streams (a file of module
/// records and one of thunk records, in any order), partial results, nsys-jax archives
/// and nsys SQLite exports or reports (one input path at a time, HLO dumps also from
/// `options.hlo`); an error where the view needs the dumps and none are given.
pub fn read(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<ThunkTime> {
    // Before reading: a wrong number is said at once, not after the inputs are read.
    check(options)?;
    let no_dumps = || {
        Error::Usage(
            "--view opcode needs the HLO dumps: pass the nsys-jax archives as inputs or with \
             --hlo"
                .to_string(),
        )
    };
    let no_sources =
        options.view == View::Opcode && thunk_info::dump_sources(inputs, &options.hlo).is_empty();
    if no_sources && !inputs.iter().any(|p| may_be_partial(p)) {
        return Err(no_dumps());
    }
    // Clock alignment shifts each device as a whole: no time here depends on it.
    let keyed = executions::Hlo {
        dumps: &options.hlo,
        key: executions::KeyBy::Fingerprint,
    };
    let time = partial::aggregate(inputs, keyed, notes, || ThunkTime::new(true))?;
    // Partial results may carry what the dumps say; those read did not.
    if no_sources && !time.gpu.has_infos() {
        return Err(no_dumps());
    }
    // A partial of module records alone is a part of a map/reduce, not an answer.
    if !options.partial {
        time.gpu.check_has_thunks(inputs)?;
    }
    time.gpu.check_within_modules(inputs)?;
    Ok(time)
}

/// Whether `path` may be a partial result, which can carry what the dumps say: stdin, an
/// input that does not open (its error is said when it is read), or text whose first line
/// names a partial result.
fn may_be_partial(path: &std::path::Path) -> bool {
    use std::io::BufRead;
    if path == std::path::Path::new("-") {
        return true;
    }
    let Ok(s) =
        crate::source::open_text(path, "records", &crate::output::progress::Progress::none())
    else {
        return true;
    };
    let mut head = Vec::new();
    if std::io::Read::take(s.reader, 1 << 16)
        .read_until(b'\n', &mut head)
        .is_err()
    {
        return true;
    }
    let field = format!("\"{}\"", partial::FIELD);
    memchr::memmem::find(&head, field.as_bytes()).is_some()
}

/// Refuses numbers out of range: `--top-modules` a fraction in (0, 1], `--min-cv` a
/// finite number ≥ 0 (NaN was taken as 0, keeping every thunk).
pub(super) fn check(options: &Options) -> Result<()> {
    crate::derived::gpu_time::check_top_modules(options.top_modules)?;
    if !(options.min_cv.is_finite() && options.min_cv >= 0.0) {
        return Err(Error::Usage(format!(
            "--min-cv {}: a coefficient of variation, a finite number from 0",
            options.min_cv
        )));
    }
    Ok(())
}

/// The partial result of `inputs` (`njx-thunks --partial`): their aggregate with what the
/// HLO dumps say of each thunk, so the reduce step needs neither archives nor dumps.
pub fn partial(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<ThunkTime> {
    let mut time = read(options, inputs, notes)?;
    time.attach_infos(&thunk_info::dump_sources(inputs, &options.hlo), notes)?;
    Ok(time)
}
