//! The generator behind `examples/gen_sqlite.rs`, shared by `#[path]` inclusion with
//! `benches/readers.rs`: a large synthetic nsys SQLite export (`nsys export --type
//! sqlite`) of a JAX/XLA-like program, with the tables and columns of an nsys 2025.1
//! export (`tests/njx/common/nsys_sqlite.rs`).
//!
//! Two processes of four threads each run training steps: a `train_step` root (literal
//! text, default domain) holding 10 `TSL:XlaModule:#…#` ranges, each with 9
//! `TSL:Thunk:#…#` children (registered strings: 12 module and 1,000 thunk names). The
//! kernels are launched by `cudaLaunchKernel` calls inside thunks, spread evenly; every
//! 50th launch is a CUDA graph of 4 kernels sharing one correlation id, every 20th launch
//! also copies memory. Rows are inserted in start order, as nsys writes them. The same
//! arguments always give the same file.

// The includer declares the fixture writer (`tests/njx/common/nsys_sqlite.rs`) at its
// crate root, once.
use crate::nsys_sqlite::{NsysDb, PUSH_POP, gpid, gtid};
use rusqlite::params;
use std::path::Path;

const PROCESSES: u64 = 2;
const THREADS: u64 = 4;
const MODULES: u64 = 10;
const THUNKS: u64 = 9;
const PER_STEP: u64 = 1 + MODULES * (1 + THUNKS);
const MODULE_NAMES: i64 = 12;
const THUNK_NAMES: i64 = 1000;
/// Registered strings: the domain name, then module names, then thunk names.
const TSL_ID: i64 = 1;
const FIRST_MODULE_ID: i64 = 100;
const FIRST_THUNK_ID: i64 = 1000;
const CUDA_LAUNCH_ID: i64 = 50;
const CUDA_MEMCPY_ID: i64 = 51;

/// Writes the export; returns the numbers of ranges and kernels written.
pub fn generate(path: &Path, ranges: u64, kernels: u64) -> rusqlite::Result<(u64, u64)> {
    let mut db = NsysDb::create(path);
    db.conn
        .execute_batch("PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;")?;
    let tx = db.conn.transaction()?;
    tx.execute(
        "INSERT INTO StringIds (id, value) VALUES (?1, 'TSL'), (?2, 'cudaLaunchKernel_v7000'), \
         (?3, 'cudaMemcpyAsync_v3020')",
        params![TSL_ID, CUDA_LAUNCH_ID, CUDA_MEMCPY_ID],
    )?;
    for m in 0..MODULE_NAMES {
        tx.execute(
            "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
            params![
                FIRST_MODULE_ID + m,
                format!("XlaModule:#hlo_module=jit_step_{m},program_id={m}#")
            ],
        )?;
    }
    for t in 0..THUNK_NAMES {
        tx.execute(
            "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
            params![
                FIRST_THUNK_ID + t,
                format!("Thunk:#name=jit(step)/jit(main)/op_{t},hlo_op=fusion.{t}#")
            ],
        )?;
    }
    {
        let mut nvtx = tx.prepare(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        let mut call = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME \
             (start, end, eventClass, globalTid, correlationId, nameId, returnValue) \
             VALUES (?1, ?2, 0, ?3, ?4, ?5, 0)",
        )?;
        let mut kernel = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, demangledName, shortName, \
             registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
             staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, \
             localMemoryTotal, gridId) \
             VALUES (?1, ?2, ?3, 1, 7, ?4, ?5, 1, 1, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, ?4)",
        )?;
        let mut memcpy = tx.prepare(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, bytes, copyKind) \
             VALUES (?1, ?2, ?3, 1, 7, ?4, ?5, 65536, 1)",
        )?;
        // Domain TSL, id 1, in each process.
        for p in 0..PROCESSES {
            nvtx.execute(params![
                0,
                None::<i64>,
                75,
                None::<String>,
                gtid(1000 + p, 1000 + p),
                TSL_ID,
                1
            ])?;
        }
        let threads = PROCESSES * THREADS;
        let steps = ranges.div_ceil(PER_STEP * threads).max(1);
        let thunks_total = steps * threads * MODULES * THUNKS;
        // Launches: one per thunk at most; graphs take 4 kernels.
        let mut kernels_left = kernels;
        let mut launches_done: u64 = 0;
        let mut thunk_seq: u64 = 0;
        let mut written = 0u64;
        let mut corr: i64 = 0;
        // Each thread's time advances 1 ms per step; threads start 1 µs apart.
        for s in 0..steps {
            for t in 0..threads {
                if written >= ranges {
                    break;
                }
                let (p, thread) = (t / THREADS, t % THREADS);
                let g = gtid(1000 + p, 1000 + p + thread);
                let gp = gpid(1000 + p);
                let device = t as i64;
                let step_start = 1_000_000_000 + s as i64 * 1_000_000 + t as i64 * 1_000;
                nvtx.execute(params![
                    step_start,
                    step_start + 990_000,
                    PUSH_POP,
                    "train_step",
                    g,
                    None::<i64>,
                    0
                ])?;
                written += 1;
                for m in 0..MODULES as i64 {
                    if written >= ranges {
                        break;
                    }
                    let m_start = step_start + 1_000 + m * 98_000;
                    let name = FIRST_MODULE_ID + (s as i64 + m) % MODULE_NAMES;
                    nvtx.execute(params![
                        m_start,
                        m_start + 97_000,
                        PUSH_POP,
                        None::<String>,
                        g,
                        name,
                        1
                    ])?;
                    written += 1;
                    for k in 0..THUNKS as i64 {
                        if written >= ranges {
                            break;
                        }
                        let k_start = m_start + 500 + k * 10_000;
                        let name =
                            FIRST_THUNK_ID + ((s as i64 * 97 + m * 13 + k) % THUNK_NAMES).abs();
                        nvtx.execute(params![
                            k_start,
                            k_start + 9_000,
                            PUSH_POP,
                            None::<String>,
                            g,
                            name,
                            1
                        ])?;
                        written += 1;
                        thunk_seq += 1;
                        // Launch when this thunk's share of the kernels says so.
                        let due =
                            (thunk_seq as u128 * kernels as u128 / thunks_total as u128) as u64;
                        if launches_done < due && kernels_left > 0 {
                            launches_done += 1;
                            corr += 1;
                            let c_start = k_start + 1_000;
                            call.execute(params![
                                c_start,
                                c_start + 3_000,
                                g,
                                corr,
                                CUDA_LAUNCH_ID
                            ])?;
                            let n = if launches_done.is_multiple_of(50) {
                                4
                            } else {
                                1
                            }
                            .min(kernels_left);
                            for i in 0..n as i64 {
                                let gs = c_start + 20_000 + i * 2_000;
                                kernel.execute(params![gs, gs + 1_800, device, corr, gp])?;
                            }
                            kernels_left -= n;
                            if launches_done.is_multiple_of(20) {
                                corr += 1;
                                let c = c_start + 4_000;
                                call.execute(params![c, c + 2_000, g, corr, CUDA_MEMCPY_ID])?;
                                memcpy.execute(params![
                                    c + 30_000,
                                    c + 31_000,
                                    device,
                                    corr,
                                    gp
                                ])?;
                            }
                        }
                    }
                }
            }
        }
    }
    tx.commit()?;
    let count = |sql: &str| -> rusqlite::Result<u64> {
        db.conn
            .query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    Ok((
        count("SELECT count(*) FROM NVTX_EVENTS WHERE eventType = 59")?,
        count("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")?,
    ))
}
