//! Structured NVTX payloads in an nsys SQLite export, as XLA and NCCL attach them. No
//! public export holds such rows (the nsys 2026.2.1 export in `../shared/data` has the
//! schema tables and no payload); the fixture is built from what the producers' code
//! registers and what nsys writes:
//!
//! - the tables `NVTX_PAYLOAD_SCHEMAS` and `NVTX_PAYLOAD_SCHEMA_ENTRIES` as nsys 2026.2.1
//!   creates them (`../shared/data/pytorch_nsys2026_sqlite/h100_2gpu_1s.sqlite`; the
//!   first entry's offset written null, each schema's rows once per process);
//! - XLA's four schemas, their field names, types and order from openxla/xla
//!   `xla/backends/gpu/runtime/annotation.cc` (PR #46486): `XlaModule`, `XlaInstruction`
//!   (level 0), `XlaInstructionDetailed` and `XlaCollectiveDetailed` (level 1), every text
//!   a registered-string handle, the ids `int32`/`int64`, the flags `uint8`. The offsets
//!   are those of the structs as a C++ compiler lays them out (handles and int64 8-aligned,
//!   the nested `Basic` and `Detailed` first); XLA registers them without a schema id,
//!   so nsys gives them dynamic ids from 2^32;
//! - NCCL's all-gather schema as the real export has it (id 16777220: communicator
//!   `uint64` at 0, message size `size` at 8; NVIDIA/nccl
//!   `src/include/nvtx_payload_schemas.h`);
//! - the blob of `NVTX_EVENTS.binaryData`: a 32-byte header (domain id u32, 4 reserved
//!   bytes, schema id u64, payload size u64, total size u64) and the payload, as
//!   GindaChen/nsys-ai's `nccl_payload_breakdown.py` reads nsys 2026 exports.

use super::nsys_sqlite::*;
use rusqlite::params;
use std::path::Path;

/// The payload tables as nsys 2026.2.1 creates them.
pub const TABLES: &str = "
CREATE TABLE NVTX_PAYLOAD_SCHEMAS (
    domainId INTEGER, schemaId INTEGER, name TEXT, type INTEGER, flags INTEGER,
    numEntries INTEGER, payloadSize INTEGER, alignTo INTEGER);
CREATE TABLE NVTX_PAYLOAD_SCHEMA_ENTRIES (
    domainId INTEGER NOT NULL, schemaId INTEGER NOT NULL, idx INTEGER NOT NULL,
    flags INTEGER, type INTEGER, name TEXT, description TEXT, arrayOrUnionDetail INTEGER,
    offset INTEGER);";

/// `NVTX_PAYLOAD_ENTRY_TYPE_*` of `nvToolsExtPayload.h`.
pub const INT: i64 = 5;
pub const UINT8: i64 = 12;
pub const INT32: i64 = 15;
pub const INT64: i64 = 17;
pub const UINT64: i64 = 18;
pub const SIZE: i64 = 22;
pub const HANDLE: i64 = 80;

/// The first dynamic schema id nsys gives.
pub const DYNAMIC: i64 = 1 << 32;
pub const XLA_MODULE: i64 = DYNAMIC;
pub const XLA_INSTRUCTION: i64 = DYNAMIC + 1;
pub const XLA_DETAILED: i64 = DYNAMIC + 2;
pub const XLA_COLLECTIVE: i64 = DYNAMIC + 3;
pub const NCCL_ALL_GATHER: i64 = 16_777_220;

/// A schema: domain, id, name, static size and entries (type, name, offset).
pub struct Schema {
    pub domain: i64,
    pub id: i64,
    pub name: Option<&'static str>,
    pub size: i64,
    pub entries: Vec<(i64, &'static str, i64)>,
}

/// `Basic`'s fields at `base`, in the schema's order: source locations, HLO, called HLO.
/// (In NVTX a zero offset after the first entry means "laid out after the previous
/// entry", so a schema's entries at offsets 0, 8, 16 must come in that order.)
fn basic(base: i64) -> Vec<(i64, &'static str, i64)> {
    vec![
        (HANDLE, "Source locations", base),
        (HANDLE, "HLO", base + 8),
        (HANDLE, "Called HLO", base + 16),
    ]
}

/// `Detailed` (80 bytes) at `base`: `Basic` then the HLO name, unique id, op type, op
/// name, source file, source line and output shape.
fn detailed(base: i64) -> Vec<(i64, &'static str, i64)> {
    let mut e = basic(base);
    e.extend([
        (HANDLE, "HLO name", base + 24),
        (INT64, "HLO unique ID", base + 32),
        (HANDLE, "Framework op type", base + 40),
        (HANDLE, "Framework op name", base + 48),
        (HANDLE, "Source file", base + 56),
        (INT32, "Source line", base + 64),
        (HANDLE, "Output shape", base + 72),
    ]);
    e
}

/// XLA's four schemas in `domain`.
pub fn xla_schemas(domain: i64) -> Vec<Schema> {
    let mut collective = detailed(0);
    collective.extend([
        (HANDLE, "Replica groups", 80),
        (UINT8, "Is pipelined", 88),
        (UINT8, "Is SPMD generated", 89),
        (HANDLE, "Collective group key", 96),
        (HANDLE, "Combiner key", 104),
        (HANDLE, "Scheduling group ID", 112),
        (HANDLE, "Stream annotation", 120),
    ]);
    vec![
        Schema {
            domain,
            id: XLA_MODULE,
            name: Some("XlaModule"),
            // ModuleAnnotation: its title strings first, then the payload's fields.
            size: 64,
            entries: vec![
                (HANDLE, "Name", 32),
                (INT32, "Unique ID", 40),
                (HANDLE, "Common source locations", 48),
            ],
        },
        Schema {
            domain,
            id: XLA_INSTRUCTION,
            name: Some("XlaInstruction"),
            size: 24,
            entries: basic(0),
        },
        Schema {
            domain,
            id: XLA_DETAILED,
            name: Some("XlaInstructionDetailed"),
            size: 80,
            entries: detailed(0),
        },
        Schema {
            domain,
            id: XLA_COLLECTIVE,
            name: Some("XlaCollectiveDetailed"),
            size: 128,
            entries: collective,
        },
    ]
}

/// NCCL's all-gather schema in `domain`, unnamed as NCCL registers it.
pub fn nccl_all_gather(domain: i64) -> Schema {
    Schema {
        domain,
        id: NCCL_ALL_GATHER,
        name: None,
        size: 16,
        entries: vec![
            (UINT64, "NCCL communicator ID", 0),
            (SIZE, "Message size [bytes]", 8),
        ],
    }
}

/// Creates the payload tables.
pub fn create_tables(db: &NsysDb) {
    db.conn.execute_batch(TABLES).unwrap();
}

/// Writes `schema` as nsys does (a 0 offset as null).
pub fn add_schema(db: &NsysDb, s: &Schema) {
    db.sql(
        "INSERT INTO NVTX_PAYLOAD_SCHEMAS (domainId, schemaId, name, type, numEntries, \
         payloadSize) VALUES (?1, ?2, ?3, 1, ?4, ?5)",
        params![s.domain, s.id, s.name, s.entries.len() as i64, s.size],
    );
    for (i, &(ty, name, offset)) in s.entries.iter().enumerate() {
        db.sql(
            "INSERT INTO NVTX_PAYLOAD_SCHEMA_ENTRIES (domainId, schemaId, idx, type, name, \
             offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                s.domain,
                s.id,
                i as i64,
                ty,
                name,
                (offset != 0).then_some(offset)
            ],
        );
    }
}

/// A payload of `size` bytes being filled.
pub struct Payload(pub Vec<u8>);

impl Payload {
    pub fn new(size: usize) -> Payload {
        Payload(vec![0; size])
    }
    pub fn u64(mut self, offset: usize, v: u64) -> Payload {
        self.0[offset..offset + 8].copy_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i32(mut self, offset: usize, v: i32) -> Payload {
        self.0[offset..offset + 4].copy_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u8(mut self, offset: usize, v: u8) -> Payload {
        self.0[offset] = v;
        self
    }
}

/// The `binaryData` of one payload: header and bytes.
pub fn blob(domain: u32, schema: u64, payload: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(32 + payload.len());
    b.extend_from_slice(&domain.to_le_bytes());
    b.extend_from_slice(&[0; 4]);
    b.extend_from_slice(&schema.to_le_bytes());
    b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    b.extend_from_slice(&(32 + payload.len() as u64).to_le_bytes());
    b.extend_from_slice(payload);
    b
}

/// Sets the `binaryData` of NVTX event `rowid`.
pub fn set_blob(db: &NsysDb, rowid: i64, blob: &[u8]) {
    db.sql(
        "UPDATE NVTX_EVENTS SET binaryData = ?1 WHERE rowid = ?2",
        params![blob, rowid],
    );
}

pub const PID: u64 = 300;
pub const TID: u64 = 301;
/// The registered-string handles of the fixture start here.
pub const HANDLES: u64 = 0x7f00_0000_1000;
pub const COMMUNICATOR: u64 = 0xabcd_ef01_2345_6789;
pub const FUSION2_ID: u64 = (1 << 32) + 2;
pub const ALL_GATHER_ID: u64 = (2 << 32) + 1;

/// Row ids of the fixture's events.
pub struct Rows {
    pub module: i64,
    pub fusion1: i64,
    pub fusion2: i64,
    pub all_gather: i64,
    pub nccl: i64,
    pub step: i64,
}

/// One execution of `jit_step` (program 5) whose ranges carry XLA's payloads at both
/// levels (`fusion.1` at level 0, `fusion.2` and `all-gather.1` at level 1), NCCL's
/// `ncclAllGather` range its all-gather payload, and a range `TrainStep` in the default
/// domain the classic one-value payload 3 (`uint64Value`). Every schema is written twice,
/// as nsys writes them once per process.
pub fn payload_export(path: &Path) -> (NsysDb, Rows) {
    let db = NsysDb::create(path);
    create_tables(&db);
    let tid = gtid(PID, TID);
    db.domain(1, tid, 1, "TSL");
    db.domain(2, tid, 2, "NCCL");
    for _ in 0..2 {
        for s in xla_schemas(1) {
            add_schema(&db, &s);
        }
        add_schema(&db, &nccl_all_gather(2));
    }
    let range = |start: i64, end: i64, domain: i64, name: &str| {
        db.nvtx(PUSH_POP, start, Some(end), tid, Some(name), None, domain)
    };
    let h = |k: u64| HANDLES + k;
    let step = range(900_000, 2_100_000, 0, "TrainStep");
    db.sql(
        "UPDATE NVTX_EVENTS SET uint64Value = 3 WHERE rowid = ?1",
        params![step],
    );
    let module = range(
        1_000_000,
        2_000_000,
        1,
        "XlaModule:#hlo_module=jit_step,program_id=5#",
    );
    let p = Payload::new(64).u64(32, h(1)).i32(40, 5).u64(48, h(2));
    set_blob(&db, module, &blob(1, XLA_MODULE as u64, &p.0));
    let fusion1 = range(
        1_100_000,
        1_200_000,
        1,
        "Thunk:#hlo_op=fusion.1,unique_hlo_op_id=4294967297#",
    );
    let p = Payload::new(24).u64(0, h(11)).u64(8, h(10)).u64(16, h(12));
    set_blob(&db, fusion1, &blob(1, XLA_INSTRUCTION as u64, &p.0));
    let fusion2 = range(
        1_300_000,
        1_400_000,
        1,
        &format!("Thunk:#name=jit(step)/mul,hlo_op=fusion.2,unique_hlo_op_id={FUSION2_ID}#"),
    );
    let detailed = |p: Payload, id: u64, line: i32| {
        p.u64(0, h(21))
            .u64(8, h(20))
            .u64(16, h(22))
            .u64(24, h(23))
            .u64(32, id)
            .u64(40, h(24))
            .u64(48, h(25))
            .u64(56, h(26))
            .i32(64, line)
            .u64(72, h(27))
    };
    let p = detailed(Payload::new(80), FUSION2_ID, 42);
    set_blob(&db, fusion2, &blob(1, XLA_DETAILED as u64, &p.0));
    let all_gather = range(
        1_500_000,
        1_800_000,
        1,
        &format!("Thunk:#hlo_op=all-gather.1,unique_hlo_op_id={ALL_GATHER_ID}#"),
    );
    let p = detailed(Payload::new(128), ALL_GATHER_ID, 7)
        .u64(80, h(30))
        .u8(88, 1)
        .u8(89, 0)
        .u64(96, h(31))
        .u64(104, h(32))
        .u64(112, h(33))
        .u64(120, h(34));
    set_blob(&db, all_gather, &blob(1, XLA_COLLECTIVE as u64, &p.0));
    let nccl = range(1_550_000, 1_750_000, 2, "ncclAllGather");
    let p = Payload::new(16).u64(0, COMMUNICATOR).u64(8, 1 << 20);
    set_blob(&db, nccl, &blob(2, NCCL_ALL_GATHER as u64, &p.0));
    (
        db,
        Rows {
            module,
            fusion1,
            fusion2,
            all_gather,
            nccl,
            step,
        },
    )
}
