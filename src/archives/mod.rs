//! Writing archives: [`capture`] (profiling a program under nsys into an nsys-jax
//! archive), [`combine`] (several archives into one, as nsys-jax-combine), and
//! [`writer`], the archive writer and staging both use.

pub mod capture;
pub mod combine;
pub mod writer;
