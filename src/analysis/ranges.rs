//! `njx-ranges`: range trees rebuilt from any input ([`crate::derived::trees`]), reshaped by the
//! filters and written back as records.

use crate::derived::trees::TreeBuilder;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter};
use crate::records::Range;
use crate::source;
use std::io::Write;
use std::path::PathBuf;

pub use crate::derived::trees::{Filters, Matcher};

/// What `njx-ranges` does.
#[derive(Debug, Clone)]
pub struct Options {
    /// The reshaping.
    pub filters: Filters,
    /// JSON Lines or CSV.
    pub format: Format,
}

/// Reads the ranges of `inputs` (records, or anything the source layer reads), reshapes
/// each completed tree with `options.filters` and writes it to `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let mut writer = RecordWriter::new(out, options.format)?;
    let mut builder = TreeBuilder::new(options.filters.clone());
    let mut written = 0u64;
    let mut sink = |forest: Vec<Range>| -> Result<()> {
        written += forest.len() as u64;
        forest.iter().try_for_each(|r| writer.write(r))
    };
    let mut read = 0u64;
    for path in inputs {
        read += source::read_ranges(path, source::Options::default(), notes, &mut |r| {
            builder.push(r, &mut sink)
        })?;
        builder.next_input();
    }
    builder
        .finish(&mut sink)
        .map_err(source::at_end_of(inputs))?;
    if written == 0 && read > 0 {
        notes.note(format!(
            "none of the {read} ranges read is left after the filters ({}): nothing written",
            options.filters.describe()
        ));
    }
    writer.finish::<Range>()
}
