//! Synthetic nsys SQLite exports for the tests and `examples/gen/sqlite.rs`: the real
//! schema (the `CREATE TABLE` statements below are copied from an nsys 2025.1.1 export,
//! schema 3.17.1) and helpers to fill it. `examples/gen_sqlite.rs` includes it by
//! `#[path]`, so it uses only `rusqlite`.
#![allow(dead_code)]

use rusqlite::{Connection, params};
use std::path::Path;

/// The tables used, as nsys 2025.1.1 creates them.
pub const SCHEMA: &[(&str, &str)] = &[
    (
        "META_DATA_EXPORT",
        r#"CREATE TABLE META_DATA_EXPORT (
    -- information about nsys export process

    name                        TEXT      NOT NULL,                    -- Name of meta-data record
    value                       TEXT                                   -- Value of meta-data record
)"#,
    ),
    (
        "StringIds",
        r#"CREATE TABLE StringIds (
    -- Consolidation of repetitive string values.

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- ID reference value.
    value                       TEXT      NOT NULL                     -- String value.
)"#,
    ),
    (
        "ENUM_NSYS_EVENT_TYPE",
        r#"CREATE TABLE ENUM_NSYS_EVENT_TYPE (
    -- Nsys event type labels

    id                          INTEGER   NOT NULL   PRIMARY KEY,      -- Enum numerical value.
    name                        TEXT,                                  -- Enum symbol name.
    label                       TEXT                                   -- Enum human name.
)"#,
    ),
    (
        "NVTX_EVENTS",
        r#"CREATE TABLE NVTX_EVENTS (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER,                               -- Event end timestamp (ns).
    eventType                   INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_TYPE(id)
    rangeId                     INTEGER,                               -- Correlation ID returned from a nvtxRangeStart call.
    category                    INTEGER,                               -- User-controlled ID that can be used to group events.
    color                       INTEGER,                               -- Encoded ARGB color value.
    text                        TEXT,                                  -- Explicit name/text (non-registered string)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    endGlobalTid                INTEGER,                               -- Serialized GlobalId.
    textId                      INTEGER,                               -- REFERENCES StringIds(id) -- Registered NVTX domain/string
    domainId                    INTEGER,                               -- User-controlled ID that can be used to group events.
    uint64Value                 INTEGER,                               -- One of possible payload value union members.
    int64Value                  INTEGER,                               -- One of possible payload value union members.
    doubleValue                 REAL,                                  -- One of possible payload value union members.
    uint32Value                 INTEGER,                               -- One of possible payload value union members.
    int32Value                  INTEGER,                               -- One of possible payload value union members.
    floatValue                  REAL,                                  -- One of possible payload value union members.
    jsonTextId                  INTEGER,                               -- One of possible payload value union members.
    jsonText                    TEXT,                                  -- One of possible payload value union members.
    binaryData                  TEXT                                   -- Binary payload. See docs for format.
)"#,
    ),
    (
        "CUPTI_ACTIVITY_KIND_RUNTIME",
        r#"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    eventClass                  INTEGER   NOT NULL,                    -- REFERENCES ENUM_NSYS_EVENT_CLASS(id)
    globalTid                   INTEGER,                               -- Serialized GlobalId.
    correlationId               INTEGER,                               -- ID used to identify events that this function call has triggered.
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Function name
    returnValue                 INTEGER   NOT NULL,                    -- Return value of the function call.
    callchainId                 INTEGER                                -- REFERENCES CUDA_CALLCHAINS(id)
)"#,
    ),
    (
        "CUPTI_ACTIVITY_KIND_KERNEL",
        r#"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER                                -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
)"#,
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMCPY",
        r#"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes transferred (B).
    copyKind                    INTEGER   NOT NULL,                    -- REFERENCES ENUM_CUDA_MEMCPY_OPER(id)
    deprecatedSrcId             INTEGER,                               -- Deprecated, use srcDeviceId instead.
    srcKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    dstKind                     INTEGER,                               -- REFERENCES ENUM_CUDA_MEM_KIND(id)
    srcDeviceId                 INTEGER,                               -- Source device ID.
    srcContextId                INTEGER,                               -- Source context ID.
    dstDeviceId                 INTEGER,                               -- Destination device ID.
    dstContextId                INTEGER,                               -- Destination context ID.
    migrationCause              INTEGER,                               -- REFERENCES ENUM_CUDA_UNIF_MEM_MIGRATION(id)
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    virtualAddress              INTEGER                                -- Virtual base address of the page/s being transferred.
)"#,
    ),
    (
        "CUPTI_ACTIVITY_KIND_MEMSET",
        r#"CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    value                       INTEGER   NOT NULL,                    -- Value assigned to memory.
    bytes                       INTEGER   NOT NULL,                    -- Number of bytes set (B).
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    memKind                     INTEGER                                -- REFERENCES ENUM_CUDA_MEM_KIND(id)
)"#,
    ),
    (
        "ThreadNames",
        r#"CREATE TABLE ThreadNames (
    nameId                      INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Thread name
    priority                    INTEGER,                               -- Priority of the thread.
    globalTid                   INTEGER                                -- Serialized GlobalId.
)"#,
    ),
];

/// `CUPTI_ACTIVITY_KIND_KERNEL` as nsys 2026.2.1 creates it (export schema 3.25.0, copied
/// from `../shared/data/pytorch_nsys2026_sqlite/h100_2gpu_1s.sqlite`; nsys 2026.1.1, schema
/// 3.24.14, has the same columns but the last): the 2025.1 columns, then the `qmd*`
/// times, `graphId` (the CUDA graph a kernel ran in, beside the `graphNodeId` 2025.1
/// already has), the cluster columns and `tensorSizeMinusOneElements` (`[]` in every row
/// of that export). Its copy and set tables add no graph column: they keep `graphNodeId`
/// alone. [`NsysDb::kernels_2026`] puts it in place of [`SCHEMA`]'s.
pub const KERNEL_2026: &str = r#"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (
    start                       INTEGER   NOT NULL,                    -- Event start timestamp (ns).
    end                         INTEGER   NOT NULL,                    -- Event end timestamp (ns).
    deviceId                    INTEGER   NOT NULL,                    -- Device ID.
    contextId                   INTEGER   NOT NULL,                    -- Context ID.
    greenContextId              INTEGER,                               -- Green context ID.
    streamId                    INTEGER   NOT NULL,                    -- Stream ID.
    correlationId               INTEGER,                               -- REFERENCES CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)
    globalPid                   INTEGER,                               -- Serialized GlobalId.
    demangledName               INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Kernel function name w/ templates
    shortName                   INTEGER   NOT NULL,                    -- REFERENCES StringIds(id) -- Base kernel function name
    mangledName                 INTEGER,                               -- REFERENCES StringIds(id) -- Raw C++ mangled kernel function name
    launchType                  INTEGER,                               -- REFERENCES ENUM_CUDA_KERNEL_LAUNCH_TYPE(id)
    cacheConfig                 INTEGER,                               -- REFERENCES ENUM_CUDA_FUNC_CACHE_CONFIG(id)
    registersPerThread          INTEGER   NOT NULL,                    -- Number of registers required for each thread executing the kernel.
    gridX                       INTEGER   NOT NULL,                    -- X-dimension grid size.
    gridY                       INTEGER   NOT NULL,                    -- Y-dimension grid size.
    gridZ                       INTEGER   NOT NULL,                    -- Z-dimension grid size.
    blockX                      INTEGER   NOT NULL,                    -- X-dimension block size.
    blockY                      INTEGER   NOT NULL,                    -- Y-dimension block size.
    blockZ                      INTEGER   NOT NULL,                    -- Z-dimension block size.
    staticSharedMemory          INTEGER   NOT NULL,                    -- Static shared memory allocated for the kernel (B).
    dynamicSharedMemory         INTEGER   NOT NULL,                    -- Dynamic shared memory reserved for the kernel (B).
    localMemoryPerThread        INTEGER   NOT NULL,                    -- Amount of local memory reserved for each thread (B).
    localMemoryTotal            INTEGER   NOT NULL,                    -- Total amount of local memory reserved for the kernel (B).
    gridId                      INTEGER   NOT NULL,                    -- Unique grid ID of the kernel assigned at runtime.
    sharedMemoryExecuted        INTEGER,                               -- Shared memory size set by the driver.
    graphNodeId                 INTEGER,                               -- REFERENCES CUDA_GRAPH_NODE_EVENTS(graphNodeId)
    sharedMemoryLimitConfig     INTEGER,                               -- REFERENCES ENUM_CUDA_SHARED_MEM_LIMIT_CONFIG(id)
    qmdBulkReleaseDone          INTEGER,                               -- QMD bulk release done timestamp from CWD events.
    qmdPreexitDone              INTEGER,                               -- QMD pre-exit done timestamp from CWD events.
    qmdLastCtaDone              INTEGER,                               -- QMD last CTA done timestamp from CWD events.
    graphId                     INTEGER,                               -- Kernel graph ID.
    clusterX                    INTEGER,                               -- Cluster X dimension.
    clusterY                    INTEGER,                               -- Cluster Y dimension.
    clusterZ                    INTEGER,                               -- Cluster Z dimension.
    clusterSchedulingPolicy     INTEGER,                               -- Cluster scheduling policy.
    maxPotentialClusterSize     INTEGER,                               -- Maximum potential cluster size.
    maxActiveClusters           INTEGER,                               -- Maximum active clusters.
    sharedMemoryRequestedPercentage   INTEGER,                         -- Shared memory requested percentage.
    tensorSizeMinusOneElements   TEXT      NOT NULL                    -- TMA descriptor tensor size minus one elements array.
)"#;

/// The NVTX rows of `ENUM_NSYS_EVENT_TYPE` (id, name).
pub const NVTX_EVENT_TYPES: &[(i64, &str)] = &[
    (32, "NvtxEvents"),
    (33, "NvtxCategory"),
    (34, "NvtxMark"),
    (35, "NvtxPushRange"),
    (36, "NvtxPopRange"),
    (37, "NvtxStartRange"),
    (38, "NvtxEndRange"),
    (39, "NvtxThread"),
    (59, "NvtxPushPopRange"),
    (60, "NvtxStartEndRange"),
    (64, "NvtxtCategory"),
    (65, "NvtxtMark"),
    (66, "NvtxtPushRange"),
    (67, "NvtxtPopRange"),
    (68, "NvtxtStartRange"),
    (69, "NvtxtEndRange"),
    (70, "NvtxtPushPopRange"),
    (71, "NvtxtStartEndRange"),
    (72, "NvtxtMetaThread"),
    (73, "NvtxtMetaProcess"),
    (74, "NvtxtMetaFileDisplay"),
    (75, "NvtxDomainCreate"),
    (76, "NvtxDomainDestroy"),
    (97, "NvtxNameCudaDevice"),
    (98, "NvtxNameCudaContext"),
    (99, "NvtxNameCudaStream"),
];

/// Event types of `NVTX_EVENTS`.
pub const PUSH_POP: i64 = 59;
pub const START_END: i64 = 60;
pub const NVTXT_PUSH_POP: i64 = 70;
pub const NVTXT_START_END: i64 = 71;
pub const DOMAIN_CREATE: i64 = 75;
pub const MARK: i64 = 34;

/// A global thread id as nsys encodes it (`0xHHVVPPPPPPTTTTTT`), with hardware id 1 as in
/// real exports.
pub fn gtid(pid: u64, tid: u64) -> i64 {
    ((1u64 << 56) | (pid << 24) | tid) as i64
}

/// The global process id of `pid` (thread bits zero), as in the GPU activity tables.
pub fn gpid(pid: u64) -> i64 {
    gtid(pid, 0)
}

/// An export being written.
pub struct NsysDb {
    pub conn: Connection,
}

impl NsysDb {
    /// A new export at `path` with every table of [`SCHEMA`] and the metadata rows.
    pub fn create(path: &Path) -> NsysDb {
        let all: Vec<&str> = SCHEMA.iter().map(|t| t.0).collect();
        NsysDb::with_tables(path, &all)
    }

    /// A new export at `path` with only `tables` of [`SCHEMA`].
    pub fn with_tables(path: &Path, tables: &[&str]) -> NsysDb {
        let _ = std::fs::remove_file(path);
        let conn = Connection::open(path).expect("create SQLite file");
        for (name, sql) in SCHEMA {
            if tables.contains(name) {
                conn.execute_batch(sql).expect("create table");
            }
        }
        let db = NsysDb { conn };
        if tables.contains(&"META_DATA_EXPORT") {
            for (name, value) in [
                ("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
                ("EXPORT_PRODUCT_VERSION", "2025.1.1.110"),
                ("EXPORT_SCHEMA_VERSION", "3.17.1"),
            ] {
                db.sql(
                    "INSERT INTO META_DATA_EXPORT (name, value) VALUES (?1, ?2)",
                    params![name, value],
                );
            }
        }
        if tables.contains(&"ENUM_NSYS_EVENT_TYPE") {
            for (id, name) in NVTX_EVENT_TYPES {
                db.sql(
                    "INSERT INTO ENUM_NSYS_EVENT_TYPE (id, name, label) VALUES (?1, ?2, ?2)",
                    params![id, name],
                );
            }
        }
        db
    }

    /// Replaces the kernel table by nsys 2026.2's ([`KERNEL_2026`]), keeping its rows and
    /// their rowids (`tensorSizeMinusOneElements` `[]`, the new columns null). The kernel
    /// helpers below write to either.
    pub fn kernels_2026(&self) {
        const OLD: &str = "CUPTI_ACTIVITY_KIND_KERNEL_2025";
        let cols: Vec<String> = SCHEMA
            .iter()
            .find(|t| t.0 == "CUPTI_ACTIVITY_KIND_KERNEL")
            .expect("kernel table")
            .1
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .filter(|c| *c != ")")
            .map(|c| format!("\"{c}\""))
            .collect();
        let cols = cols.join(", ");
        self.conn
            .execute_batch(&format!(
                "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME TO {OLD}; {KERNEL_2026}; \
                 INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (rowid, {cols}, \
                 tensorSizeMinusOneElements) SELECT rowid, {cols}, '[]' FROM {OLD}; \
                 DROP TABLE {OLD};"
            ))
            .expect("kernel table of nsys 2026.2");
    }

    /// The column, and its value, that nsys 2026.2's kernel table needs beyond 2025.1's.
    fn kernel_2026_cells(&self) -> (&'static str, &'static str) {
        let has: bool = self
            .conn
            .query_row(
                "SELECT COUNT(*) > 0 FROM pragma_table_info('CUPTI_ACTIVITY_KIND_KERNEL') \
                 WHERE name = 'tensorSizeMinusOneElements'",
                [],
                |r| r.get(0),
            )
            .expect("kernel columns");
        if has {
            (", tensorSizeMinusOneElements", ", '[]'")
        } else {
            ("", "")
        }
    }

    /// Adds kernel `node` of CUDA graph `graph` (`graphId`, `graphNodeId`; either null)
    /// on `device`, launched by the call with `corr`, named by string 8 (which this does
    /// not add): a table of nsys 2026 is needed ([`NsysDb::kernels_2026`]) for `graphId`.
    #[allow(clippy::too_many_arguments)]
    pub fn graph_kernel(
        &self,
        device: i64,
        start: i64,
        end: i64,
        gpid: i64,
        corr: i64,
        graph: Option<i64>,
        node: Option<i64>,
    ) {
        let (col, val) = self.kernel_2026_cells();
        self.sql(
            &format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, \
                 streamId, correlationId, globalPid, demangledName, shortName, \
                 registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
                 staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, \
                 localMemoryTotal, gridId, graphId, graphNodeId{col}) \
                 VALUES (?1, ?2, ?7, 1, 7, ?3, ?4, 8, 8, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, \
                 ?3, ?5, ?6{val})"
            ),
            params![start, end, corr, gpid, graph, node, device],
        );
    }

    /// Adds a memory copy of 4096 B that ran as node `node` of a CUDA graph.
    pub fn graph_memcpy(&self, start: i64, end: i64, gpid: i64, corr: i64, node: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, bytes, copyKind, graphNodeId) \
             VALUES (?1, ?2, 0, 1, 7, ?3, ?4, 4096, 8, ?5)",
            params![start, end, corr, gpid, node],
        );
    }

    /// Runs one statement.
    pub fn sql(&self, sql: &str, params: impl rusqlite::Params) {
        self.conn
            .execute(sql, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// Adds an NVTX event; returns its rowid (the range id).
    #[allow(clippy::too_many_arguments)]
    pub fn nvtx(
        &self,
        event_type: i64,
        start: i64,
        end: Option<i64>,
        gtid: i64,
        text: Option<&str>,
        text_id: Option<i64>,
        domain: i64,
    ) -> i64 {
        self.sql(
            "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId, domainId) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![start, end, event_type, text, gtid, text_id, domain],
        );
        self.conn.last_insert_rowid()
    }

    /// Adds a push/pop range with a literal name in the default domain.
    pub fn range(&self, start: i64, end: i64, gtid: i64, text: &str) -> i64 {
        self.nvtx(PUSH_POP, start, Some(end), gtid, Some(text), None, 0)
    }

    /// Creates NVTX domain `id` named `name` on thread `gtid`.
    pub fn domain(&self, start: i64, gtid: i64, id: i64, name: &str) {
        self.nvtx(DOMAIN_CREATE, start, None, gtid, Some(name), None, id);
    }

    /// Adds a registered string.
    pub fn string(&self, id: i64, value: &str) {
        self.sql(
            "INSERT INTO StringIds (id, value) VALUES (?1, ?2)",
            params![id, value],
        );
    }

    /// Names thread `gtid` (its name a registered string `name_id`, which this adds).
    pub fn thread_name(&self, gtid: i64, name_id: i64, name: &str) {
        self.string(name_id, name);
        self.sql(
            "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?1, 0, ?2)",
            params![name_id, gtid],
        );
    }

    /// Adds a CUDA API call (name: string id 1, which tests need not define).
    pub fn call(&self, start: i64, end: i64, gtid: i64, corr: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME \
             (start, end, eventClass, globalTid, correlationId, nameId, returnValue) \
             VALUES (?1, ?2, 0, ?3, ?4, 1, 0)",
            params![start, end, gtid, corr],
        );
    }

    /// Adds a kernel launched in process `gpid` by the call with `corr`, on device 0.
    pub fn kernel(&self, start: i64, end: i64, gpid: i64, corr: i64) {
        self.kernel_on(0, start, end, gpid, corr);
    }

    /// Adds a kernel on device `device`.
    pub fn kernel_on(&self, device: i64, start: i64, end: i64, gpid: i64, corr: i64) {
        let (col, val) = self.kernel_2026_cells();
        self.sql(
            &format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, \
                 streamId, correlationId, globalPid, demangledName, shortName, \
                 registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
                 staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, \
                 localMemoryTotal, gridId{col}) \
                 VALUES (?1, ?2, ?5, 1, 7, ?3, ?4, 1, 1, 32, 1, 1, 1, 128, 1, 1, 0, 0, 0, 0, \
                 ?3{val})"
            ),
            params![start, end, corr, gpid, device],
        );
    }

    /// Adds a memory copy.
    pub fn memcpy(&self, start: i64, end: i64, gpid: i64, corr: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, bytes, copyKind) \
             VALUES (?1, ?2, 0, 1, 7, ?3, ?4, 4096, 1)",
            params![start, end, corr, gpid],
        );
    }

    /// Adds a memory set.
    pub fn memset(&self, start: i64, end: i64, gpid: i64, corr: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, value, bytes) \
             VALUES (?1, ?2, 0, 1, 7, ?3, ?4, 0, 4096)",
            params![start, end, corr, gpid],
        );
    }

    /// Adds a CUDA API call named by string `name_id` (which this does not add).
    pub fn call_named(&self, start: i64, end: i64, gtid: i64, corr: i64, name_id: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME \
             (start, end, eventClass, globalTid, correlationId, nameId, returnValue) \
             VALUES (?1, ?2, 0, ?3, ?4, ?5, 0)",
            params![start, end, gtid, corr, name_id],
        );
    }

    /// Adds a kernel on `device` and `stream` named by strings `demangled` and `short`,
    /// with grid (g, 2, 1), block (128, 1, 1), 40 registers, 256 B static and 1024 B
    /// dynamic shared memory.
    #[allow(clippy::too_many_arguments)]
    pub fn kernel_named(
        &self,
        device: i64,
        stream: i64,
        start: i64,
        end: i64,
        gpid: i64,
        corr: i64,
        demangled: i64,
        short: i64,
        g: i64,
    ) {
        let (col, val) = self.kernel_2026_cells();
        self.sql(
            &format!(
                "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, \
                 streamId, correlationId, globalPid, demangledName, shortName, \
                 registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, \
                 staticSharedMemory, dynamicSharedMemory, localMemoryPerThread, \
                 localMemoryTotal, gridId{col}) \
                 VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, 40, ?9, 2, 1, 128, 1, 1, 256, \
                 1024, 0, 0, ?5{val})"
            ),
            params![start, end, device, stream, corr, gpid, demangled, short, g],
        );
    }

    /// Adds a memory copy of `bytes` with `copyKind` `kind`, from pinned (1) to device
    /// (2) memory.
    pub fn memcpy_of(&self, start: i64, end: i64, gpid: i64, corr: i64, bytes: i64, kind: i64) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) \
             VALUES (?1, ?2, 0, 1, 7, ?3, ?4, ?5, ?6, 1, 2)",
            params![start, end, corr, gpid, bytes, kind],
        );
    }

    /// Adds a memory copy on `device` of `bytes` with `copyKind` `kind` (1 HtoD, 2 DtoH)
    /// from memory kind `src` to `dst` (0 pageable, 1 pinned, 2 device).
    #[allow(clippy::too_many_arguments)]
    pub fn memcpy_kinds(
        &self,
        device: i64,
        start: i64,
        end: i64,
        gpid: i64,
        corr: i64,
        bytes: i64,
        kind: i64,
        src: i64,
        dst: i64,
    ) {
        self.sql(
            "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, \
             streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) \
             VALUES (?1, ?2, ?3, 1, 7, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![start, end, device, corr, gpid, bytes, kind, src, dst],
        );
    }

    /// Adds a kernel on `device` and `stream`, named by string 1.
    pub fn kernel_stream(
        &self,
        device: i64,
        stream: i64,
        start: i64,
        end: i64,
        gpid: i64,
        corr: i64,
    ) {
        self.kernel_named(device, stream, start, end, gpid, corr, 1, 1, 1);
    }
}
