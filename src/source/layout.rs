//! Every member name of the archives njx reads and writes, in one place: nsys-jax's
//! (the push/pop and GPU projection tables, the thread names, the HLO dumps) and
//! njx-capture's (the report, its SQLite export, the Python sources, the `--analysis`
//! outputs). njx-capture writes by these names, njx-combine copies by them, and the
//! readers find tables by them (docs/formats.md, "njx-capture archives").

/// Member names of the push/pop table in nsys-jax archives, newest form first.
pub const PUSHPOP_MEMBERS: &[&str] = &[
    "report_nvtx_pushpop_trace.parquet",
    "report_nvtx_pushpop_trace.csv.xz",
    "report_nvtx_pushpop_trace.csv.gz",
    "report_nvtx_pushpop_trace.csv",
];

/// Member name of the GPU projection table in nsys-jax archives.
pub const GPU_PROJ_MEMBER: &str = "nvtx_gpu_proj_trace/trace.parquet";

/// Member name of the thread names in nsys-jax archives.
pub const THREADS_MEMBER: &str = "thread-metadata.parquet";

/// The member of an archive (as `njx-capture` writes them) that holds the SQLite export.
pub const SQLITE_MEMBER: &str = "report.sqlite";

/// The member of an njx-capture archive that holds the nsys report.
pub const REPORT_MEMBER: &str = "report.nsys-rep";

/// The folder of the HLO dumps inside an archive (nsys-jax's name, which njx-capture
/// writes and [`crate::hlo`] reads).
pub const DUMP_DIR: &str = "dump/";

/// The folder of the Python sources the HLO dumps' stack frames name (njx-capture).
pub const SOURCES_DIR: &str = "sources/";

/// The folder of the `--analysis` pipelines' outputs (njx-capture, njx-combine).
pub const ANALYSIS_DIR: &str = "analysis/";
