//! The records of attributed operations: kernels and memory operations, with their
//! strings, names and enums looked up once.

use super::names::{Enums, Strings};
use super::op::{
    API, CORR, Counts, DEVICE, END, GPID, GTID, MODULE_NAME, Op, RANGE_NAME, RANGE_ROW, ROW, START,
    STREAM, TABLE, THUNK_NAME,
};
use super::sql::{table_of, tables};
use crate::error::Result;
use crate::records::{Kernel, Memop};
use crate::source::gpu_ops::{GpuOp, Which};
use crate::source::ranges::nvtx;
use crate::source::sqlite::{Db, pid_of, tid_of};
use crate::source::xla_names;
use std::collections::HashMap;
use std::sync::Arc;

/// Makes records of attributed operations: strings, names and enums looked up once.
pub(super) struct Records<'a> {
    which: Which,
    profile: &'a Arc<str>,
    nvtx: Option<&'a nvtx::Nvtx>,
    db: &'a Db,
    strings: Strings<'a>,
    enums: Option<Enums>,
    /// The module (name, program id) and thunk of each distinct range name, parsed once.
    modules: HashMap<i64, (String, Option<u64>)>,
    thunks: HashMap<i64, String>,
}

/// What kernel and memory operation records have alike.
struct Common {
    device: u32,
    pid: Option<u64>,
    tid: Option<u64>,
    api: Option<String>,
    range: Option<String>,
    range_id: Option<u64>,
    module: Option<String>,
    program_id: Option<u64>,
    thunk: Option<String>,
    graph_id: Option<u64>,
    graph_node_id: Option<u64>,
}

fn unsigned(v: Option<i64>) -> Option<u64> {
    v.and_then(|v| u64::try_from(v).ok())
}

fn small(v: Option<i64>) -> Option<u32> {
    v.and_then(|v| u32::try_from(v).ok())
}

impl<'a> Records<'a> {
    pub(super) fn new(
        db: &'a Db,
        which: Which,
        profile: &'a Arc<str>,
        nvtx: Option<&'a nvtx::Nvtx>,
    ) -> Result<Records<'a>> {
        let enums = match which {
            Which::Memops => Some(Enums::read(db)?),
            Which::Kernels => None,
        };
        if db.has("StringIds") {
            db.columns("StringIds")?;
        }
        Ok(Records {
            which,
            profile,
            nvtx,
            db,
            strings: Strings::new(db),
            enums,
            modules: HashMap::new(),
            thunks: HashMap::new(),
        })
    }

    /// The record of `op`; negative graph ids counted in `counts`.
    pub(super) fn of(&mut self, op: &Op, counts: &mut Counts) -> Result<GpuOp> {
        let common = self.common(op, counts)?;
        Ok(match self.which {
            Which::Kernels => GpuOp::Kernel(self.kernel(op, common)?),
            Which::Memops => GpuOp::Memop(self.memop(op, common)),
        })
    }

    fn common(&mut self, op: &Op, counts: &mut Counts) -> Result<Common> {
        let tables = tables(self.which);
        let table = table_of(tables, op.c[TABLE]);
        let device = u32::try_from(op.c[DEVICE]).map_err(|_| {
            self.db.row_error(
                table,
                op.c[ROW],
                format!("deviceId {} is no device", op.c[DEVICE]),
            )
        })?;
        let api = match op.get(API) {
            Some(id) => Some(self.strings.get(id)?.to_string()),
            None => None,
        };
        let (range, range_id) = match (op.get(RANGE_ROW), op.get(RANGE_NAME), self.nvtx) {
            (Some(r), Some(name), Some(n)) => {
                (Some(n.name(name as u32).to_string()), Some(r as u64))
            }
            _ => (None, None),
        };
        let (module, program_id) = match (op.get(MODULE_NAME), self.nvtx) {
            (Some(id), Some(n)) => {
                let (module, program_id) = self.modules.entry(id).or_insert_with(|| {
                    let name = n.name(id as u32);
                    match xla_names::module(name) {
                        Some((module, program_id)) => (module.to_string(), program_id),
                        None => (name.to_string(), None),
                    }
                });
                (Some(module.clone()), *program_id)
            }
            _ => (None, None),
        };
        let thunk = match (op.get(THUNK_NAME), self.nvtx) {
            (Some(id), Some(n)) => Some(
                self.thunks
                    .entry(id)
                    .or_insert_with(|| {
                        let name = n.name(id as u32);
                        xla_names::thunk_op(name).unwrap_or(name).to_string()
                    })
                    .clone(),
            ),
            _ => None,
        };
        let (graph_id, graph_node_id) = counts.graph_ids(op, tables[op.c[TABLE] as usize].1, table);
        Ok(Common {
            device,
            pid: op.get(GPID).map(pid_of),
            tid: op.get(GTID).map(tid_of),
            api,
            range,
            range_id,
            module,
            program_id,
            thunk,
            graph_id,
            graph_node_id,
        })
    }

    fn kernel(&mut self, op: &Op, c: Common) -> Result<Kernel> {
        let short_name = match op.val(1) {
            Some(id) => self.strings.get(id)?.to_string(),
            None => String::new(),
        };
        let name = match op.val(0) {
            Some(id) => self.strings.get(id)?.to_string(),
            None => short_name.clone(),
        };
        Ok(Kernel {
            profile: self.profile.clone(),
            device: c.device,
            stream: unsigned(op.get(STREAM)),
            correlation_id: unsigned(op.get(CORR)),
            start_ns: op.c[START],
            end_ns: op.c[END],
            dur_ns: op.c[END] - op.c[START],
            name,
            short_name,
            grid_x: small(op.val(2)),
            grid_y: small(op.val(3)),
            grid_z: small(op.val(4)),
            block_x: small(op.val(5)),
            block_y: small(op.val(6)),
            block_z: small(op.val(7)),
            registers_per_thread: small(op.val(8)),
            static_shared_bytes: unsigned(op.val(9)),
            dynamic_shared_bytes: unsigned(op.val(10)),
            pid: c.pid,
            tid: c.tid,
            api: c.api,
            range: c.range,
            range_id: c.range_id,
            module: c.module,
            program_id: c.program_id,
            thunk: c.thunk,
            graph_id: c.graph_id,
            graph_node_id: c.graph_node_id,
        })
    }

    fn memop(&self, op: &Op, c: Common) -> Memop {
        let enums = self.enums.as_ref().expect("read for memops");
        let memset = op.c[TABLE] == 1;
        Memop {
            profile: self.profile.clone(),
            device: c.device,
            stream: unsigned(op.get(STREAM)),
            correlation_id: unsigned(op.get(CORR)),
            start_ns: op.c[START],
            end_ns: op.c[END],
            dur_ns: op.c[END] - op.c[START],
            kind: if memset { "memset" } else { "memcpy" }.to_string(),
            bytes: unsigned(op.val(0)).unwrap_or(0),
            direction: op.val(1).map(|v| enums.copy(v)),
            src_kind: op.val(2).map(|v| enums.mem(v)),
            dst_kind: op.val(3).map(|v| enums.mem(v)),
            src_device: small(op.val(4)),
            dst_device: small(op.val(5)),
            value: op.val(6),
            pid: c.pid,
            tid: c.tid,
            api: c.api,
            range: c.range,
            range_id: c.range_id,
            module: c.module,
            program_id: c.program_id,
            thunk: c.thunk,
            graph_id: c.graph_id,
            graph_node_id: c.graph_node_id,
        }
    }
}
