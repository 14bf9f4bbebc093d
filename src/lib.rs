//! njx: Unix filters for Nsight Systems profiles of JAX/XLA programs.
//!
//! Data flows input → records → transform → report:
//!
//! - [`input`] opens what users have (nsys `nvtx_pushpop_trace` CSV, nsys-jax archives,
//!   record streams), sniffing compression and archive layout in one place;
//! - [`sqlite`] reads nsys SQLite exports (and `.nsys-rep` reports through `nsys export`)
//!   natively: the NVTX range tree and its projection onto the GPU;
//! - [`record`] defines the records the tools exchange (JSON Lines or CSV);
//! - [`export`] (`njx-export`) turns inputs into records;
//! - [`hlo`] reads the XLA HLO dumps in archives: program keys stable across ranks,
//!   instructions, communication and message sizes, Python stack frames;
//! - [`ranges`] (`njx-ranges`) rebuilds and reshapes NVTX range trees;
//! - [`compile`] (`njx-compile-summary`) reports where XLA compilation time goes;
//! - [`modules`] (`njx-export --table modules|thunks`, `njx-modules`) derives XLA module
//!   and thunk executions per device and summarises them;
//! - [`collectives`] (`njx-collectives`) reports collective bandwidth, hidden
//!   communication, wait time and stragglers; [`plot`] draws its SVG;
//! - [`flamefold`] (`njx-flamefold`) folds NVTX trees and GPU time (by Python source,
//!   op_name, opcode, module, device) into stacks for flame graphs, and draws them;
//! - [`capture`] (`njx-capture`) runs a program under `nsys profile` with the JAX/XLA
//!   settings that make profiles analysable and writes the archive the tools above read;
//! - [`output`], [`cli`] and [`error`] are shared by every tool: output formats, common
//!   options, one error type with exit codes.
//!
//! ```sh
//! njx-export rank*.zip | njx-ranges --xla-compile | njx-compile-summary --total
//! ```

pub mod capture;
pub mod cli;
pub mod collectives;
pub mod compile;
pub mod error;
pub mod export;
pub mod flamefold;
pub mod hlo;
pub mod input;
pub mod modules;
pub mod output;
pub mod plot;
pub mod ranges;
pub mod record;
pub mod sqlite;

pub use error::{Error, Result};

/// The command-line definitions of every tool, for generated documentation (man pages).
pub fn commands() -> Vec<clap::Command> {
    use clap::CommandFactory;
    vec![
        capture::Args::command(),
        export::Args::command(),
        ranges::tool::Args::command(),
        compile::Args::command(),
        modules::tool::Args::command(),
        collectives::Args::command(),
        flamefold::tool::Args::command(),
    ]
}
