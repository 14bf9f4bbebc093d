//! `njx-ranges`: the command line of the range-tree filters ([`crate::analysis::ranges`]).

use super::IoArgs;
use crate::analysis::ranges::{Filters, Matcher, Options};
use crate::error::{Error, Result};
use crate::output::{Format, open_output};
use clap::Parser;
use regex::Regex;

/// Reshape NVTX range trees; the output is always a consistent tree.
#[derive(Debug, Parser)]
#[command(
    name = "njx-ranges",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Filters apply in this order: --splice-workers, --subtree, --select, --fold, \
--collapse. Patterns are regular expressions matched anywhere in the range name, domain \
prefix included (`TSL:XlaPass:#name=…#`); anchor them with ^ and $. After any change, parent, \
depth, children, child_ns and self_ns are recomputed: time of a removed range goes to its \
parent's self time. Children spliced from worker threads run in parallel and cover their \
parent from the first one's start to the last one's end.

Input is range records (JSON Lines or CSV) in start order, or anything njx-export reads.

Examples:
  njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
  njx-export trace.csv \\
    | njx-ranges --subtree '^TSL:XlaCompile' --collapse 'XlaAutotuner'
  njx-export trace.csv | njx-ranges --fold '^NCCL:' --format csv > ranges.csv"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs, output and format (flattened: their own options).
    pub io: IoArgs,

    /// Keep only ranges whose name matches (others are folded away, their children
    /// moving up). Repeatable: any pattern may match.
    #[arg(long, value_name = "REGEX")]
    pub select: Vec<String>,

    /// Keep whole subtrees under matching ranges, which become roots; drop the rest.
    #[arg(long, value_name = "REGEX")]
    pub subtree: Vec<String>,

    /// Collapse matching ranges: drop their descendants, whose time becomes their self time.
    #[arg(long, value_name = "REGEX")]
    pub collapse: Vec<String>,

    /// Fold matching ranges away: their children move up to their parent and their own
    /// time becomes the parent's self time.
    #[arg(long, value_name = "REGEX")]
    pub fold: Vec<String>,

    /// Splice top-level ranges of parallel-compilation worker threads under the deepest
    /// range of the compiling thread that encloses them, inside XlaCompile ranges.
    #[arg(long)]
    pub splice_workers: bool,

    /// The preparation nsys-jax applies to compilation ranges: XlaCompile subtrees with
    /// spliced workers, non-`TSL:` ranges (cuBLAS, NCCL, …) folded into their parents,
    /// XlaAutotunerMeasurement and XlaAutotunerCompilation detail collapsed.
    #[arg(long)]
    pub xla_compile: bool,
}

fn regexes(patterns: &[String], option: &str) -> Result<Vec<Matcher>> {
    patterns
        .iter()
        .map(|p| {
            Regex::new(p)
                .map(Matcher::Regex)
                .map_err(|e| Error::Usage(format!("--{option} {p:?}: {e}")))
        })
        .collect()
}

impl Args {
    /// The filters these options ask for.
    pub fn filters(&self) -> Result<Filters> {
        let mut filters = Filters {
            splice: self.splice_workers,
            subtree: regexes(&self.subtree, "subtree")?,
            select: regexes(&self.select, "select")?,
            fold: regexes(&self.fold, "fold")?,
            collapse: regexes(&self.collapse, "collapse")?,
        };
        if self.xla_compile {
            filters.add_xla_compile();
        }
        Ok(filters)
    }
}

/// Runs `njx-ranges`.
pub fn run(args: &Args) -> Result<()> {
    let options = Options {
        filters: args.filters()?,
        format: args.io.format.unwrap_or(Format::Json),
    };
    let inputs = args.io.inputs_or_stdin();
    args.io.check_outputs(&[])?;
    let mut out = open_output(args.io.output(), &inputs)?;
    let notes =
        super::notes_and_progress("njx-ranges", args.io.files.quiet, &inputs, Some(&mut out));
    crate::analysis::ranges::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
