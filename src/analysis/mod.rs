//! The analyses, one module each: an `Options` struct, inputs (paths), a
//! [`std::io::Write`] and [`crate::output::notes::Notes`], with `run`. None imports
//! another; what two of them share lives below them, in [`crate::records`], [`crate::hlo`]
//! or [`crate::output`].

pub mod collectives;
pub mod compile;
pub mod export;
pub mod flamefold;
pub mod gemm;
pub mod heap;
pub mod kernels;
pub mod modules;
pub mod pgle;
pub mod ranges;
pub mod step;
pub mod thunks;
pub mod timeline;
