//! `njx-kernels`' job: GPU time per kernel name (or memory-operation kind and direction),
//! as nsys' `cuda_gpu_kern_sum` and `cuda_gpu_mem_time_sum` reports give it: instances,
//! total, mean, median, minimum, maximum, sample standard deviation, share of the total.
//!
//! Input is kernel or memop records (`njx-export --table kernels|memops`, JSON Lines or
//! CSV, the kind told by the first line) or the profiles themselves (read as
//! [`Options::table`]). Held: the durations of each group (the median needs them all),
//! 8 bytes per operation; the records themselves are not kept.
//!
//! Rows add up the operations of every GPU (as nsys' reports), each saying the GPU
//! (`device`, `profile`) where its operations all ran on one; `--by device` gives one row
//! per GPU and `--per-device` one row per group and GPU. A GPU is a device of a profile:
//! the device ids of two processes' profiles may be the same.

use crate::derived::ranks::Seen;
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::output::numbers::serialize_ns;
use crate::output::{Format, or_dash, write_records, write_table};
use crate::records::{Kernel, Memop};
use crate::source::{self, gpu_ops};
use clap::ValueEnum;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;

/// What one summary row groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum By {
    /// The kernel's name (demangled where the export has it); a memory operation's kind
    /// and direction (`memcpy HtoD`, `memset`).
    Name,
    /// The kernel's base name (`shortName`); memory operations as for `name`.
    ShortName,
    /// The NVTX range that launched it (`(none)` outside every range).
    Range,
    /// The NVTX range that launched it without what PyTorch's `emit_nvtx` appends to an
    /// operator's name (`, seq = N`, `, op_id = N`, `, sizes = […]`, `, input_op_ids =
    /// […]`): one row per operator (`aten::mm`), not per call.
    Op,
    /// The XLA module (HLO module name) that launched it (`(none)` outside every module
    /// range).
    Module,
    /// The XLA thunk instruction (`hlo_op`) that launched it (`(none)` outside every
    /// thunk range within a module range).
    Thunk,
    /// The CUDA graph it ran in (`graph 7`; `(none)` for operations launched on their
    /// own; `(graph, id not recorded)` for those with a graph node but no graph id, as
    /// copies and sets are in exports up to nsys 2026.2).
    Graph,
    /// The GPU it ran on (`deviceId`): one row per GPU, `device N`, or `device N
    /// (profile)` when the inputs hold several profiles (a GPU is a device of a profile).
    Device,
}

/// Which table to read from profiles (record streams say what they are).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Table {
    /// CUDA kernels.
    Kernels,
    /// Memory copies and sets.
    Memops,
}

/// What to summarise and how to write it.
#[derive(Debug, Clone)]
pub struct Options {
    /// The grouping.
    pub by: By,
    /// Table for people, or JSON Lines / CSV rows.
    pub format: Format,
    /// What to read from profiles.
    pub table: Table,
    /// One row per group and GPU: each group's operations on each GPU apart (`--by device`
    /// rows are per GPU anyway).
    pub per_device: bool,
}

/// One row of the summary: the statistics of the durations of one group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The group: kernel name, `memcpy HtoD`, range name, module name, thunk instruction,
    /// `graph N`.
    pub name: String,
    /// Operations (nsys' "Instances").
    pub count: u64,
    /// Sum of durations, nanoseconds.
    pub total_ns: i64,
    /// Share of the total of all rows, percent.
    pub percent: f64,
    /// Mean duration, nanoseconds (written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub mean_ns: f64,
    /// The middle duration; for an even count the mean of the two middle ones (written to
    /// the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub median_ns: f64,
    /// Shortest duration, nanoseconds.
    pub min_ns: i64,
    /// Longest duration, nanoseconds.
    pub max_ns: i64,
    /// Sample standard deviation (divisor n − 1, as nsys' reports); 0 for one operation
    /// (written to the nearest nanosecond).
    #[serde(serialize_with = "serialize_ns")]
    pub std_ns: f64,
    /// Bytes moved or set, for memory operations; null for kernels.
    pub bytes: Option<u64>,
    /// The GPU (`deviceId`) the row's operations ran on: in every row of `--by device` and
    /// `--per-device`, and in any row whose operations all ran on one GPU; null for a row
    /// of operations on several GPUs.
    #[serde(default)]
    pub device: Option<u32>,
    /// The profile (input) of that GPU, with `device`.
    #[serde(default)]
    pub profile: Option<String>,
}

/// The group of operations without the range, module, thunk or graph grouped by.
const NONE: &str = "(none)";

/// The group of operations of a graph whose id the export does not give.
const GRAPH_UNKNOWN: &str = "(graph, id not recorded)";

/// The `--by graph` group of an operation with these graph and graph node ids.
fn graph_group(graph: Option<u64>, node: Option<u64>) -> String {
    match (graph, node) {
        (Some(g), _) => format!("graph {g}"),
        (None, Some(_)) => GRAPH_UNKNOWN.to_string(),
        (None, None) => NONE.to_string(),
    }
}

/// A GPU: a device of a profile (the device ids of two profiles may be the same).
type Gpu = (std::sync::Arc<str>, u32);

/// The GPUs a group's operations ran on, as far as a row says: none yet, one, several.
#[derive(Debug, Clone, Default, PartialEq)]
enum Gpus {
    #[default]
    None,
    One(Gpu),
    Several,
}

impl Gpus {
    fn add(&mut self, gpu: &Gpu) {
        match self {
            Gpus::None => *self = Gpus::One(gpu.clone()),
            Gpus::One(g) if g != gpu => *self = Gpus::Several,
            _ => {}
        }
    }
}

/// One group's durations, bytes and GPUs.
#[derive(Default)]
struct Group {
    durations: Vec<i64>,
    bytes: Option<u64>,
    gpus: Gpus,
}

/// The durations of each group (by name, and by GPU where rows are per GPU), and its bytes.
#[derive(Default)]
struct Groups {
    /// Rows per GPU: `--by device` (named by [`device_name`] at the end) or `--per-device`.
    per_device: bool,
    groups: HashMap<String, HashMap<Option<Gpu>, Group>>,
}

impl Groups {
    fn new(options: &Options) -> Groups {
        Groups {
            per_device: options.per_device || options.by == By::Device,
            ..Groups::default()
        }
    }

    fn add(&mut self, name: &str, gpu: Gpu, dur_ns: i64, bytes: Option<u64>) {
        // Looked up by name without allocating: most records join a group already there.
        let by_gpu = match self.groups.get_mut(name) {
            Some(g) => g,
            None => self.groups.entry(name.to_string()).or_default(),
        };
        let entry = by_gpu
            .entry(self.per_device.then(|| gpu.clone()))
            .or_default();
        entry.durations.push(dur_ns);
        entry.gpus.add(&gpu);
        if let Some(b) = bytes {
            entry.bytes = Some(entry.bytes.unwrap_or(0).saturating_add(b));
        }
    }

    fn kernel(&mut self, by: By, k: &Kernel) {
        let graph;
        let name = match by {
            By::Name => &k.name,
            By::ShortName => &k.short_name,
            By::Range => k.range.as_deref().unwrap_or(NONE),
            By::Op => k.range.as_deref().map_or(NONE, operator),
            By::Module => k.module.as_deref().unwrap_or(NONE),
            By::Thunk => k.thunk.as_deref().unwrap_or(NONE),
            By::Graph => {
                graph = graph_group(k.graph_id, k.graph_node_id);
                &graph
            }
            By::Device => "",
        };
        self.add(name, (k.profile.clone(), k.device), k.dur_ns, None);
    }

    fn memop(&mut self, by: By, m: &Memop) {
        let name = match (by, &m.direction) {
            (By::Range, _) => m.range.clone().unwrap_or_else(|| NONE.into()),
            (By::Op, _) => m.range.as_deref().map_or(NONE, operator).to_string(),
            (By::Module, _) => m.module.clone().unwrap_or_else(|| NONE.into()),
            (By::Thunk, _) => m.thunk.clone().unwrap_or_else(|| NONE.into()),
            (By::Graph, _) => graph_group(m.graph_id, m.graph_node_id),
            (By::Device, _) => String::new(),
            (_, Some(d)) => format!("{} {d}", m.kind),
            (_, None) => m.kind.clone(),
        };
        self.add(
            &name,
            (m.profile.clone(), m.device),
            m.dur_ns,
            Some(m.bytes),
        );
    }

    /// The rows, largest total first (then by name and GPU).
    fn rows(self, by: By) -> Vec<Row> {
        let grand: i128 = (self.groups.values())
            .flat_map(|g| g.values())
            .flat_map(|g| g.durations.iter())
            .map(|&d| i128::from(d))
            .sum();
        // Rows per GPU name their profile where there are several (`--by device`).
        let profiles: std::collections::HashSet<&str> = (self.groups.values())
            .flat_map(|g| g.values())
            .filter_map(|g| match &g.gpus {
                Gpus::One((p, _)) => Some(&**p),
                _ => None,
            })
            .collect();
        let several_profiles = profiles.len() > 1;
        let mut rows: Vec<Row> = (self.groups.into_iter())
            .flat_map(|(name, by_gpu)| by_gpu.into_values().map(move |g| (name.clone(), g)))
            .map(|(name, group)| {
                let Group {
                    durations: mut d,
                    bytes,
                    gpus,
                } = group;
                let gpu = match gpus {
                    Gpus::One(gpu) => Some(gpu),
                    _ => None,
                };
                let name = match (&gpu, by) {
                    (Some((profile, device)), By::Device) => {
                        device_name(*device, several_profiles.then_some(&**profile))
                    }
                    _ => name,
                };
                d.sort_unstable();
                let n = d.len();
                let total: i128 = d.iter().map(|&v| i128::from(v)).sum();
                let mean = total as f64 / n as f64;
                let median = if n % 2 == 1 {
                    d[n / 2] as f64
                } else {
                    (d[n / 2 - 1] as f64 + d[n / 2] as f64) / 2.0
                };
                let std = if n > 1 {
                    let ss: f64 = d.iter().map(|&v| (v as f64 - mean).powi(2)).sum();
                    (ss / (n - 1) as f64).sqrt()
                } else {
                    0.0
                };
                Row {
                    name,
                    count: n as u64,
                    total_ns: i64::try_from(total).unwrap_or(i64::MAX),
                    percent: if grand > 0 {
                        total as f64 * 100.0 / grand as f64
                    } else {
                        0.0
                    },
                    mean_ns: mean,
                    median_ns: median,
                    min_ns: d[0],
                    max_ns: d[n - 1],
                    std_ns: std,
                    bytes,
                    device: gpu.as_ref().map(|g| g.1),
                    profile: gpu.map(|g| g.0.to_string()),
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            b.total_ns
                .cmp(&a.total_ns)
                .then_with(|| a.name.cmp(&b.name))
                .then_with(|| (&a.profile, a.device).cmp(&(&b.profile, b.device)))
        });
        rows
    }
}

/// The `--by device` name of a GPU: `device 3`, with its profile where the inputs hold
/// several (`device 3 (rank1)`).
fn device_name(device: u32, profile: Option<&str>) -> String {
    match profile {
        Some(p) => format!("device {device} ({p})"),
        None => format!("device {device}"),
    }
}

/// What a record stream's order says: kernel and memop records come sorted by device,
/// then start and correlation id, within each profile (as njx-export writes them). A
/// record equal to the one before it on its device (same start, end, correlation id,
/// stream and name) is the same operation given twice: counted once. A record that starts
/// before the one before it on its device means records given twice or re-ordered: said,
/// since operations given twice would count twice.
/// Start, end, correlation id, stream and name of a device's last record.
type Last = (i64, i64, Option<u64>, Option<u64>, String);

#[derive(Default)]
struct Order {
    /// (profile, device) → (start, end, correlation id, stream, name) of the last record.
    last: HashMap<(std::sync::Arc<str>, u32), Last>,
    repeated: u64,
    back: u64,
    first_back: Option<(String, u32)>,
}

impl Order {
    /// Whether the record is new (to be counted), noting what its order says.
    #[allow(clippy::too_many_arguments)]
    fn check(
        &mut self,
        profile: &std::sync::Arc<str>,
        device: u32,
        start: i64,
        end: i64,
        corr: Option<u64>,
        stream: Option<u64>,
        name: &str,
    ) -> bool {
        let key = (profile.clone(), device);
        let now = (start, end, corr, stream);
        match self.last.get_mut(&key) {
            Some(last) => {
                if (last.0, last.1, last.2, last.3) == now && last.4 == name {
                    self.repeated += 1;
                    return false;
                }
                if (start, corr) < (last.0, last.2) {
                    self.back += 1;
                    self.first_back
                        .get_or_insert_with(|| (profile.to_string(), device));
                }
                (last.0, last.1, last.2, last.3) = now;
                // The name's buffer is reused: no allocation per record.
                last.4.clear();
                last.4.push_str(name);
            }
            None => {
                self.last
                    .insert(key, (start, end, corr, stream, name.to_string()));
            }
        }
        true
    }

    fn say(&self, notes: &Notes) {
        if self.repeated > 0 {
            notes.note(format!(
                "{} records repeat the record before them on their device (same start, end, \
                 correlation id, stream and name): each counted once",
                self.repeated
            ));
        }
        if let Some((profile, device)) = &self.first_back {
            notes.note(format!(
                "{} records start before the record before them on their device (first: \
                 profile {profile}, device {device}): records are not in njx-export's order \
                 (by device, then start); if some were given twice, they count twice",
                self.back
            ));
        }
    }
}

/// Reads `inputs` and returns the summary rows.
pub fn summarise(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Vec<Row>> {
    let mut groups = Groups::new(options);
    let mut order = Order::default();
    let by = options.by;
    let what = match options.table {
        Table::Kernels => "kernels",
        Table::Memops => "memops",
    };
    // Every profile counts once: known by each device's first operation of the table.
    let mut seen = Seen::known_by(match options.table {
        Table::Kernels => "kernel",
        Table::Memops => "memory operation",
    });
    let profiles = source::split_inputs(inputs, what, notes.progress(), &mut |mut stream| {
        let place = stream.place.clone();
        let firsts = stream.watch_ranks();
        if stream.first_line_has("direction")? && !stream.first_line_has("grid_x")? {
            stream.read::<Memop>(&mut |m| {
                let kind = m.direction.as_deref().unwrap_or(&m.kind);
                if order.check(
                    &m.profile,
                    m.device,
                    m.start_ns,
                    m.end_ns,
                    m.correlation_id,
                    m.stream,
                    kind,
                ) {
                    groups.memop(by, &m);
                }
                Ok(())
            })?;
        } else {
            stream.read::<Kernel>(&mut |k| {
                if order.check(
                    &k.profile,
                    k.device,
                    k.start_ns,
                    k.end_ns,
                    k.correlation_id,
                    k.stream,
                    &k.name,
                ) {
                    groups.kernel(by, &k);
                }
                Ok(())
            })?;
        }
        seen.add_firsts(source::records::firsts_by_device(&firsts), &place)
    })?;
    order.say(notes);
    let which = match options.table {
        Table::Kernels => gpu_ops::Which::Kernels,
        Table::Memops => gpu_ops::Which::Memops,
    };
    for path in profiles {
        let mut firsts = BTreeMap::new();
        source::read_gpu_ops(&path, which, notes, &mut |op| {
            let (device, start) = match &op {
                gpu_ops::GpuOp::Kernel(k) => (k.device, k.start_ns),
                gpu_ops::GpuOp::Memop(m) => (m.device, m.start_ns),
            };
            source::records::keep_first(&mut firsts, device, start);
            match op {
                gpu_ops::GpuOp::Kernel(k) => groups.kernel(by, &k),
                gpu_ops::GpuOp::Memop(m) => groups.memop(by, &m),
            }
            Ok(())
        })?;
        seen.add_firsts(firsts, &path.display().to_string())?;
    }
    Ok(groups.rows(by))
}

/// Writes the summary rows (grouped `by`) as a table or records. The table shows the GPU
/// of each row (`several` for a row over several) where the rows are of several GPUs and
/// the name does not say it already (`--by device`).
pub fn write(format: Format, by: By, rows: &[Row], out: &mut dyn Write) -> Result<()> {
    if format != Format::Table {
        return write_records(out, format, rows);
    }
    if rows.is_empty() {
        writeln!(out, "No kernels or memory operations in the input.").map_err(Error::Output)?;
        return out.flush().map_err(Error::Output);
    }
    let with_bytes = rows.iter().any(|r| r.bytes.is_some());
    let gpus: std::collections::HashSet<(Option<&str>, Option<u32>)> = rows
        .iter()
        .map(|r| (r.profile.as_deref(), r.device))
        .collect();
    let with_device = by != By::Device && (gpus.len() > 1 || gpus.contains(&(None, None)));
    let profiles: std::collections::HashSet<&str> =
        rows.iter().filter_map(|r| r.profile.as_deref()).collect();
    let mut table = vec![
        [
            "Time (%)",
            "Total Time (ns)",
            "Instances",
            "Avg (ns)",
            "Med (ns)",
            "Min (ns)",
            "Max (ns)",
            "StdDev (ns)",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect::<Vec<_>>(),
    ];
    if with_bytes {
        table[0].push("Total (B)".into());
    }
    if with_device {
        table[0].push("Device".into());
    }
    table[0].push("Name".into());
    for r in rows {
        let mut line = vec![
            format!("{:.1}", r.percent),
            r.total_ns.to_string(),
            r.count.to_string(),
            format!("{:.1}", r.mean_ns),
            format!("{:.1}", r.median_ns),
            r.min_ns.to_string(),
            r.max_ns.to_string(),
            format!("{:.1}", r.std_ns),
        ];
        if with_bytes {
            line.push(or_dash(r.bytes));
        }
        if with_device {
            line.push(match (r.device, &r.profile) {
                (Some(d), Some(p)) if profiles.len() > 1 => format!("{d} ({p})"),
                (Some(d), _) => d.to_string(),
                (None, _) => "several".into(),
            });
        }
        line.push(r.name.clone());
        table.push(line);
    }
    let right: Vec<usize> = (0..8 + usize::from(with_bytes) + usize::from(with_device)).collect();
    write_table(out, &table, &right)?;
    out.flush().map_err(Error::Output)
}

/// Summarises `inputs` into `out`.
pub fn run(
    options: &Options,
    inputs: &[PathBuf],
    out: &mut dyn Write,
    notes: &Notes,
) -> Result<()> {
    let rows = summarise(options, inputs, notes)?;
    write(options.format, options.by, &rows, out)
}

/// An operator's name from PyTorch's NVTX range name: what comes before the first of the
/// fields `emit_nvtx` appends (torch/csrc/profiler/util.cpp, `getNvtxStr`: `, seq = N`,
/// `, op_id = N`, `, sizes = [...]`, `, input_op_ids = [...]`); other names as they are.
pub fn operator(range: &str) -> &str {
    const FIELDS: [&str; 4] = [", seq = ", ", op_id = ", ", sizes = ", ", input_op_ids = "];
    FIELDS
        .iter()
        .filter_map(|f| range.find(f))
        .min()
        .map_or(range, |at| &range[..at])
}
