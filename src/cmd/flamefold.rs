//! `njx-flamefold`: the command line of [`crate::analysis::flamefold`].

use super::Files;
use crate::analysis::flamefold::{By, Options, SvgOptions, Unit, default_title};
use crate::error::{Error, Result};
use crate::output::open_output;
use clap::Parser;
use std::path::PathBuf;

/// Folded stacks for flame graphs: NVTX trees, and GPU time by Python source, op_name,
/// opcode, module or device.
#[derive(Debug, Parser)]
#[command(
    name = "njx-flamefold",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Writes folded stacks, `frame;frame;frame count` sorted by stack, the input of \
flamegraph.pl, inferno-flamegraph and speedscope, which all read every line in every unit: \
counts are whole numbers of --unit (speedscope reads no line with decimals, inferno truncates \
them), rounded so that they add up to the total time rounded to the unit, the largest \
remainders rounded up (a stack that rounds to 0 is left out: in ms, possibly one under a \
millisecond). `;` and line breaks inside names become `:` and spaces.

--by stack reads range records (or anything njx-export reads) in the order njx-export and \
njx-ranges write them and weights each name path by self time; worker threads spliced in by \
njx-ranges share the span they cover, so each tree adds up to its root's wall time. Within \
compilations names are njx-compile-summary's (`XlaPass:#name=priority-fusion#`, the root \
`XlaCompile:#module=…#`); --full-names keeps them whole. --by stack also reads folded stacks \
(this tool's output, filtered or not): whole counts are kept as read (counts with decimals are \
rounded as above), --unit names their unit.

--svg draws with colours by meaning (blue communication, and every frame under a \
communication frame, as the reduction of an all-reduce; green Python source, red to yellow \
compute and ranges, grey idle and markers), labels Python frames `run (pkg/main.py:12)` \
(--full-names: whole paths), and leaves the [GPU idle …] stacks out, saying how much in its \
subtitle, so that its width is the GPU's work; --idle draws them too. The folded output always \
has them, with whole names.

The GPU modes read thunk and module records (njx-export --table thunks|modules) or nsys-jax \
archives, as the nsys-jax Analysis notebook: steady-state executions of the programs covering \
--top-modules of module time; each thunk's GPU time under [GPU active], shared equally among the \
distinct Python stacks (or op_names) of its HLO instruction and the instructions it calls, \
[GPU active];[Unknown] without any; plus [GPU idle during module execution] and [GPU idle \
between module executions]. source, op-name and opcode need the HLO dumps: archives among the \
inputs are used, --hlo adds archives or XLA dump folders.

--diff writes `stack before after` lines (each side's counts whole, adding up to its total), \
the differential input of flamegraph.pl and inferno-flamegraph (speedscope draws no \
differential graphs).

Map/reduce over many ranks (GPU modes): `njx-flamefold --by source --partial rankN.zip > \
rankN.part` per rank, then `njx-flamefold --by source *.part` gives exactly the stacks of \
`njx-flamefold --by source rank*.zip` (the partials carry what the dumps say; --by stack output \
adds up as it is).

Examples:
  njx-export rank0.zip | njx-ranges --xla-compile \\
    | njx-flamefold --unit ms > compile.folded
  njx-flamefold --by source rank*.zip --svg source.svg
  grep -v Unknown source.folded | njx-flamefold --svg known.svg
  njx-export --table thunks rank*.zip \\
    | njx-flamefold --by op-name --hlo rank*.zip
  njx-flamefold --by op-name before.zip > before.folded
  njx-flamefold --by op-name after.zip > after.folded
  njx-flamefold --diff before.folded after.folded \\
    | inferno-flamegraph > diff.svg"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs and output (flattened: their own options).
    pub files: Files,

    /// What the stacks are made of.
    #[arg(long, value_enum, default_value = "stack")]
    pub by: By,

    /// An archive or XLA dump folder holding HLO dumps (source, op-name, opcode); one per
    /// --hlo, repeatable (--hlo a.zip --hlo b.zip).
    #[arg(long, value_name = "PATH")]
    pub hlo: Vec<PathBuf>,

    /// Unit of the counts: whole numbers adding up to the total time rounded to the unit.
    #[arg(long, value_enum, default_value = "ns")]
    pub unit: Unit,

    /// Keep the largest programs until they cover this fraction of module time.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.99)]
    pub top_modules: f64,

    /// Count initialisation executions (warm-up, autotuning) too.
    #[arg(long)]
    pub include_warmup: bool,

    /// Draw the flame graph to FILE as SVG (the folded lines go to -o only when named).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,

    /// Keep names whole: --by stack's names in compilations (`TSL:XlaPass:#name=…,
    /// module=…,program_id=…#`, not njx-compile-summary's), and Python frames in the SVG
    /// (`/opt/app/pkg/main.py:12[run]`, not `run (pkg/main.py:12)`).
    #[arg(long)]
    pub full_names: bool,

    /// Draw the GPU idle stacks in the SVG too (the folded output always has them).
    #[arg(long)]
    pub idle: bool,

    /// Title of the SVG.
    #[arg(long, value_name = "TEXT")]
    pub title: Option<String>,

    /// Width of the SVG in pixels.
    #[arg(long, value_name = "PIXELS", default_value_t = 1200,
          value_parser = clap::value_parser!(u32).range(100..=1_000_000))]
    pub width: u32,

    /// Pair two folded files as `stack before after` lines for a differential flame graph.
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"])]
    pub diff: Option<Vec<PathBuf>>,

    /// With --diff: scale BEFORE to the total of AFTER.
    #[arg(long, requires = "diff")]
    pub normalize: bool,

    /// GPU modes: write the partial result of these inputs instead of folded stacks, the
    /// map step of a map/reduce over ranks (one gzip-compressed JSON line with the GPU time and what the
    /// HLO dumps say of each thunk; give the partials of every rank to njx-flamefold with
    /// the same --by, or `cat` them into it, for the stacks of all, no dumps needed).
    #[arg(long, conflicts_with_all = ["svg", "diff"])]
    pub partial: bool,

    /// GPU modes: the programs folded.
    #[command(flatten)]
    pub programs: super::ProgramArgs,
}

impl Args {
    /// The folding these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            by: self.by,
            hlo: self.hlo.clone(),
            top_modules: self.top_modules,
            include_warmup: self.include_warmup,
            full_names: self.full_names,
            unit: self.unit,
            partial: self.partial,
            programs: self.programs.filter(),
            diff: self.diff.as_ref().map(|d| [d[0].clone(), d[1].clone()]),
            normalize: self.normalize,
        }
    }

    /// How the SVG is drawn.
    pub fn svg_options(&self) -> SvgOptions {
        SvgOptions {
            title: self
                .title
                .clone()
                .unwrap_or_else(|| default_title(self.by, self.diff.is_some()).to_string()),
            width: self.width as usize,
            count_name: self.unit.name().to_string(),
            idle: self.idle,
            diff: self.diff.is_some(),
            full_names: self.full_names,
        }
    }
}

/// Runs `njx-flamefold`.
pub fn run(args: &Args) -> Result<()> {
    let inputs = args.files.inputs_or_stdin();
    // Every file read, so that no output replaces one of them.
    let mut read: Vec<PathBuf> = inputs.clone();
    read.extend(args.hlo.iter().cloned());
    read.extend(args.diff.iter().flatten().cloned());
    // Outputs are opened (under temporary names) before the work, moved into place after.
    args.files
        .check_outputs(&[("--svg", args.svg.as_deref())])?;
    let mut svg_out = match &args.svg {
        Some(svg) => Some((svg, open_output(Some(svg), &read)?)),
        None => None,
    };
    let mut out = if args.svg.is_none() || args.files.output.is_some() || args.partial {
        Some(open_output(args.files.output.as_deref(), &read)?)
    } else {
        None
    };
    let notes = super::notes_and_progress("njx-flamefold", args.files.quiet, &inputs, out.as_mut());
    if args.diff.is_some() && !args.files.inputs.is_empty() {
        return Err(Error::Usage(
            "--diff takes exactly the two folded files, no other inputs".into(),
        ));
    }
    let options = args.into_options();
    let made = crate::analysis::flamefold::make(&options, &inputs, &notes)?;
    if let Some((svg, mut svg_out)) = svg_out.take() {
        made.write_svg(options.unit, &args.svg_options(), svg, &mut svg_out)?;
        svg_out.finish()?;
    }
    if let Some(mut out) = out {
        made.write(options.unit, &mut out)?;
        out.finish()?;
    }
    Ok(())
}
