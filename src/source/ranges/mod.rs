//! The ranges table: CPU-side NVTX push/pop ranges as [`Range`](crate::records::Range)
//! records with the semantics of nsys' `nvtx_pushpop_trace` report, from the report's CSV
//! or Parquet form ([`pushpop`]: standalone or in nsys-jax archives) or computed from an
//! SQLite export's `NVTX_EVENTS` ([`nvtx`]).

pub mod check;
pub mod nvtx;
pub mod pushpop;
