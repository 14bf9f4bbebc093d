//! The integration tests, as one crate: a module per tool (named after it, without the
//! `njx-` prefix), `common/` for the shared helpers and fixtures, `tests/data/` for the
//! reference figures. One crate links the library and the dev-dependencies once, where a
//! crate per tool linked them once per tool.
//!
//! The tests run as threads of one process, so none may change process-wide state (the
//! environment, the current folder): the tools are run as child processes, with their
//! environment and folder set on the `Command`.
//!
//! Run one tool's tests with `cargo test --test njx flamefold::`.

mod common;

mod architecture;
mod capture;
mod collectives;
mod combine;
mod compile_summary;
mod devices;
mod diff;
mod export;
mod export_gpu;
mod export_sqlite;
mod findings;
mod findings_nsys;
mod flamefold;
mod golden;
mod heap;
mod hlo;
mod hostile;
mod kernels;
mod launcher;
mod library;
mod man;
mod modules;
mod modules_archive;
mod modules_sqlite;
mod not_xla;
mod outputs;
mod parquet_writer;
mod partials;
mod payloads;
mod pgle;
mod plant_check;
mod progress;
mod python;
mod ranges;
mod readme;
mod relay2026;
mod report;
mod schema;
mod sqlite_2026;
mod step;
mod thunks;
mod timeline;
mod trees;
mod trips;
mod ux;
