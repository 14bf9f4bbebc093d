//! njx: Unix filters for Nsight Systems profiles of JAX/XLA programs.
//!
//! Data flows one way, **source → records → analyses → outputs**, and the folders say so
//! (ARCHITECTURE.md has what each owns and never does, and the test that checks it):
//!
//! - [`source`] is the only code that knows kinds of input: nsys `nvtx_pushpop_trace`
//!   CSV, nsys-jax archives (zip, folder, combine), nsys SQLite exports and `.nsys-rep`
//!   reports, record streams. Each container yields the same tables: ranges, GPU ranges,
//!   launcher threads, compiled programs, HLO dumps;
//! - [`hlo`] reads XLA's HLO dumps: program keys stable across ranks, instructions,
//!   communication and message sizes, Python stack frames; it alone finds a program's dump;
//! - [`records`] defines the records the tools exchange (JSON Lines or CSV);
//! - [`derived`] is what the analyses share, built from the tables: range trees
//!   ([`derived::trees`]), module and thunk executions per device
//!   ([`derived::executions`]: warm-up, clock alignment), partial results
//!   ([`derived::partial`]);
//! - [`analysis`]: one module per analysis, each an options struct, inputs, a
//!   [`std::io::Write`] and [`Notes`]; none imports another;
//! - [`archives`] writes archives: [`archives::capture`] (profiling a program under nsys)
//!   and [`archives::combine`] (several archives into one);
//! - [`output`] writes records, tables and charts; [`output::notes`] carries what tools
//!   say on stderr and [`output::progress`] how far they are (on a terminal);
//! - [`util`] holds what knows nothing of profiles (threads, statistics, signals), and
//!   [`error`] the one error type with exit codes;
//! - [`cmd`] holds each tool's command line (`src/bin/njx-*.rs` only call it).
//!
//! ```sh
//! njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
//! ```
//!
//! The same in-process:
//!
//! ```no_run
//! use njx::{analysis::compile, output::Format, Notes};
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

#![warn(missing_docs)]

pub mod analysis;
pub mod archives;
pub mod cmd;
pub mod derived;
pub mod diff;
pub mod error;
pub mod hlo;
pub mod output;
pub mod records;
pub mod report;
pub mod source;
pub mod util;

pub use cmd::commands;
pub use error::{Error, Result};
pub use output::notes::Notes;
