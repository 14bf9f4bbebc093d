//! njx: Unix filters for Nsight Systems profiles of JAX/XLA programs.
//!
//! Data flows one way, **source → records → analyses → outputs**, and the modules say so:
//!
//! - [`source`] is the only code that knows kinds of input: nsys `nvtx_pushpop_trace`
//!   CSV, nsys-jax archives (zip, folder, combine), nsys SQLite exports and `.nsys-rep`
//!   reports, record streams. Each container yields the same tables: ranges, GPU ranges,
//!   launcher threads, compiled programs, HLO dumps;
//! - [`record`] defines the records the tools exchange (JSON Lines or CSV);
//! - [`hlo`] reads XLA's HLO dumps: program keys stable across ranks, instructions,
//!   communication and message sizes, Python stack frames; it alone finds a program's dump;
//! - [`executions`] derives module and thunk execution records per device from a
//!   profile's tables and dumps (warm-up, clock alignment);
//! - the analyses, each an options struct, inputs, a [`std::io::Write`] and [`Notes`]:
//!   [`export`] (records), [`ranges`] (tree reshaping), [`compile`] (compilation time),
//!   [`modules`] (module summary), [`collectives`] (bandwidth, hidden time, wait,
//!   stragglers; [`plot`] draws its SVG), [`flamefold`] (folded stacks and flame graphs),
//!   [`thunks`] (the notebook's thunk tables: top thunks, opcodes, variability; exact
//!   running statistics in [`stats`]), [`timeline`] (Trace Event JSON for Perfetto UI and
//!   chrome://tracing), [`heap`] (heap memory per program from the dumps' buffer
//!   assignment: peak, live buffers, breakdowns), [`pgle`] (profiles for XLA's
//!   profile-guided latency estimator), [`capture`] (profiling a program under
//!   nsys into an archive), [`combine`] (several archives into one, as nsys-jax-combine;
//!   [`archive_out`] writes the archives of both);
//! - [`output`] writes records and tables, [`notes`] carries what tools say on stderr
//!   and [`progress`] how far they are (on a terminal), [`error`] is the one error type
//!   with exit codes;
//! - [`cmd`] holds each tool's command line (`src/bin/njx-*.rs` only call it).
//!
//! ```sh
//! njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
//! ```
//!
//! The same in-process:
//!
//! ```no_run
//! use njx::{compile, notes::Notes, output::Format};
//! # fn main() -> njx::Result<()> {
//! let options = compile::Options {
//!     total: true,
//!     passes: false,
//!     by: None,
//!     top: None,
//!     threshold: None,
//!     format: Format::Table,
//! };
//! let notes = Notes::kept();
//! let mut out = Vec::new();
//! compile::run(&options, &["rank0.zip".into()], &mut out, &notes)?;
//! # Ok(())
//! # }
//! ```

pub mod archive_out;
pub mod capture;
pub mod cleanup;
pub mod cmd;
pub mod collectives;
pub mod combine;
pub mod compact;
pub mod compile;
pub mod error;
pub mod executions;
pub mod export;
pub mod flamefold;
pub mod heap;
pub mod hlo;
pub mod kernels;
pub mod modules;
pub mod notes;
pub mod output;
pub mod parallel;
pub mod partial;
pub mod pgle;
pub mod plot;
pub mod progress;
pub mod ranges;
pub mod record;
pub mod source;
pub mod stats;
pub mod thunks;
pub mod timeline;
pub mod trees;

pub use cmd::commands;
pub use error::{Error, Result};
pub use notes::Notes;
