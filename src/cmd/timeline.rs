//! `njx-timeline`: the command line of [`crate::analysis::timeline`].

use super::Files;
use crate::analysis::timeline::Options;
use crate::error::Result;
use crate::output::open_output;
use clap::Parser;

/// A timeline to open in Perfetto UI or chrome://tracing: devices' module and thunk
/// executions, threads' NVTX ranges, as Trace Event Format JSON.
#[derive(Debug, Parser)]
#[command(
    name = "njx-timeline",
    version,
    long_version = super::LONG_VERSION,
    after_help = "Input is range, module and thunk records (njx-export --table \
ranges|modules|thunks) as JSON Lines or CSV, or nsys-jax archives, nsys SQLite exports and \
.nsys-rep reports directly (their ranges, modules and thunks). Output is one JSON object, \
{\"traceEvents\":[...],\"displayTimeUnit\":\"ns\"}, written event by event: open it in \
https://ui.perfetto.dev or chrome://tracing.

Tracks: a process per profile and device, `device D (profile)`, with the lanes `modules` \
(module executions), `thunks` (compute thunks) and `communication` (communication thunks, \
category `communication`, drawn over their whole GPU time; args give exposed_ns and \
hidden_ns, the part overlapped by compute thunks, as njx-collectives counts it; coloured \
green when mostly hidden, red when mostly exposed in chrome://tracing). Thunks that overlap \
on a lane without nesting (several streams) go to a further lane (`thunks 2`, ...). A \
process per profile and OS process holds a thread per OS thread with its NVTX ranges, \
compilation ranges included. Times are microseconds, exact to the nanosecond; device \
clocks are aligned across profiles as njx-export aligns them (--no-align keeps them raw).

Examples:
  njx-timeline rank*.zip -o trace.json
  njx-export --table thunks rank0.zip | njx-timeline | gzip > trace.json.gz"
)]
pub struct Args {
    #[command(flatten)]
    /// Inputs and output (flattened: their own options).
    pub files: Files,

    /// Leave out the NVTX ranges of profiles (range records given are still drawn).
    #[arg(long)]
    pub no_ranges: bool,

    /// Leave out the module and thunk executions of profiles.
    #[arg(long)]
    pub no_executions: bool,

    /// Leave out initialisation executions (warm-up and autotuning, as njx-modules
    /// decides warm-up).
    #[arg(long)]
    pub steady: bool,

    /// Keep each device's own clock instead of aligning devices on their collectives.
    #[arg(long)]
    pub no_align: bool,

    /// How programs are keyed across profiles: `fingerprint` or `name` (as njx-modules).
    #[arg(long, value_enum, value_name = "KEY", default_value = "fingerprint")]
    pub program_key: crate::derived::executions::KeyBy,
}

impl Args {
    /// The timeline these options ask for.
    pub fn into_options(&self) -> Options {
        Options {
            no_ranges: self.no_ranges,
            no_executions: self.no_executions,
            steady: self.steady,
            align: !self.no_align,
            program_key: self.program_key,
        }
    }
}

/// Runs `njx-timeline`.
pub fn run(args: &Args) -> Result<()> {
    let options = args.into_options();
    let inputs = args.files.inputs_or_stdin();
    args.files.check_outputs(&[])?;
    let mut out = open_output(args.files.output.as_deref(), &inputs)?;
    let notes =
        super::notes_and_progress("njx-timeline", args.files.quiet, &inputs, Some(&mut out));
    crate::analysis::timeline::run(&options, &inputs, &mut out, &notes)?;
    out.finish()
}
