//! Helpers below every layer, knowing nothing of profiles: running independent inputs on
//! every core ([`parallel`]), exact running statistics ([`stats`]), compact tables of
//! interned names ([`compact`]), and removing staged outputs when a signal ends the
//! process ([`cleanup`]).

pub mod cleanup;
pub mod compact;
pub mod parallel;
pub mod stats;
