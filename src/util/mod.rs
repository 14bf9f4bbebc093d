//! Helpers below every layer, knowing nothing of profiles: running independent inputs on
//! every core ([`parallel`]), exact running statistics ([`stats`]), compact tables of
//! interned names ([`compact`]), inference for comparing runs ([`inference`]), and removing staged outputs when a signal ends the
//! process ([`cleanup`]).

pub mod cleanup;
pub mod compact;
pub mod inference;
pub mod parallel;
pub mod stats;
