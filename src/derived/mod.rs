//! What the analyses share, built from a profile's tables (and its HLO dumps) below every
//! analysis: range trees rebuilt from a record stream ([`trees`]), module and thunk
//! executions per device with warm-up and clock alignment ([`executions`]), and the
//! partial results of map/reduce runs ([`partial`]), and which programs an analysis answers
//! for (`--program`, `--exclude-program`: [`programs`]).

pub mod executions;
pub mod gpu_time;
pub mod partial;
pub mod programs;
pub mod ranks;
pub mod trees;
