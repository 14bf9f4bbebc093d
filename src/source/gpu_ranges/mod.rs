//! The GPU ranges table: NVTX ranges projected onto the GPU work they launched, as
//! [`GpuRange`](crate::records::GpuRange) records with the semantics of nsys'
//! `nvtx_gpu_proj_trace`, from the Parquet table nsys-jax archives hold ([`parquet`]) or
//! computed from an SQLite export's NVTX and CUDA activity tables ([`sqlite`]).

pub mod parquet;
pub mod sqlite;
