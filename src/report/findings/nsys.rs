//! The findings of nsys's expert system (`nsys analyze`), over the CUDA activity tables of
//! the inputs that hold them (nsys SQLite exports, `.nsys-rep` reports, njx-capture
//! archives), XLA or not:
//!
//! - `gpu-idle`: nsys's `gpu_gaps` ("GPU Starvation"): per GPU, its idle time in its
//!   profiled span (first GPU operation's start → last one's end; kernels, copies and
//!   sets of every stream, overlapping ones counted once) and its gaps of at least
//!   [`Thresholds::gap_ms`] (nsys: 500 ms, `-r gpu_gaps:gap=N`). nsys examines each
//!   process × GPU; njx each GPU of a profile (its `deviceId`), all processes together;
//! - `short-kernels`: kernels shorter than [`Thresholds::short_kernel_us`] (no nsys rule;
//!   the launch-bound pattern its `gpu_time_util` and xprof's kernel-launch share see);
//! - `sync-memcpy`: nsys's `cuda_memcpy_sync` ("CUDA Synchronous Memcpy"): copies issued
//!   by a synchronous memcpy API (`cudaMemcpy…` without `Async`), not counting host to
//!   device copies of 64 KB or less, which return once staged (nsys's rule text: "This
//!   does not include host to device transfers of a memory block of 64 KB or less");
//! - `pageable-memcpy`: nsys's `cuda_memcpy_async` ("CUDA Async Memcpy with Pageable
//!   Memory"): copies issued by `cudaMemcpy%Async%` whose source or destination memory
//!   kind is pageable (`srcKind == 0 OR dstKind == 0` in its query);
//! - `sync-api`: nsys's `cuda_api_sync` ("CUDA Synchronization APIs"): calls whose name
//!   starts with `cudaDeviceSynchronize` or `cudaStreamSynchronize` (its query's
//!   `StringIds.value LIKE` patterns; it lists no other API).
//!
//! Where njx differs from nsys: the driver API's equivalents count too (`cuMemcpy…`,
//! `cuCtxSynchronize`, `cuStreamSynchronize`: XLA calls the driver API), names are
//! matched without case as SQLite's `LIKE` matches them, and a rule fires from
//! [`Thresholds::moderate_pct`] of the span (or of the step) rather than on any
//! occurrence: below it the rule passes, saying how many occurrences it saw and their
//! time. The memcpy rules and `sync-api` say the host time of the calls (counted once per
//! thread where calls nest), as nsys does, but cost what the waits can have cost the GPU:
//! its idle time from each call's start to its next operation after the call (a host
//! blocked while its GPU works costs nothing).
//!
//! Without an XLA step a saving is the total over the profile and its share is of the
//! GPU's profiled span (`"of": "span"`); with one it is that total divided by the
//! device's steady-state steps (`"of": "step"`): an upper bound per step, since the total
//! also holds the warm-up and what ran outside the steps.

use super::{Finding, Findings, Thresholds, ms, pct, severity};
use crate::analysis::step::Step;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::{ApiCall, Memop};
use crate::source::gpu_ops::GpuOp;
use crate::source::gpu_ops::sqlite::calls::CudaTables;
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

/// The rules of this file, in the order they run.
pub const RULES: [&str; 5] = [
    "gpu-idle",
    "short-kernels",
    "sync-memcpy",
    "pageable-memcpy",
    "sync-api",
];

/// Host to device copies of at most this many bytes are not synchronous (nsys's
/// `cuda_memcpy_sync` leaves them out).
const STAGED_BYTES: u64 = 64 * 1024;

/// Whether `name` is a memcpy API (runtime or driver), and whether an asynchronous one.
fn memcpy_api(name: &str) -> Option<bool> {
    let lower = name.to_ascii_lowercase();
    (lower.starts_with("cudamemcpy") || lower.starts_with("cumemcpy"))
        .then(|| lower.contains("async"))
}

/// Whether `name` is a synchronisation API of nsys's `cuda_api_sync` (or the driver's
/// equivalent); its name without the version suffix (`_v3020`) where it is.
fn sync_api(name: &str) -> Option<&str> {
    const NAMES: [&str; 4] = [
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cuCtxSynchronize",
        "cuStreamSynchronize",
    ];
    let lower = name.to_ascii_lowercase();
    NAMES
        .iter()
        .find(|n| lower.starts_with(&n.to_ascii_lowercase()))
        .copied()
}

/// What the rules need of one GPU of a profile.
#[derive(Default)]
struct Gpu {
    /// Every GPU operation's (start, end), until [`Gpu::merge`] makes them `busy`.
    ops: Vec<(i64, i64)>,
    /// The operations merged: when the GPU was busy, in order, none overlapping.
    busy: Vec<(i64, i64)>,
    kernels: u64,
    kernel_ns: i64,
    short: u64,
    short_ns: i64,
}

impl Gpu {
    /// Merges the operations into `busy` (overlapping ones counted once; a zero-length one
    /// stays an instant of its own).
    fn merge(&mut self) {
        let mut ops = std::mem::take(&mut self.ops);
        ops.sort_unstable();
        for (s, e) in ops {
            match self.busy.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => self.busy.push((s, e)),
            }
        }
    }

    /// (first start, last end) of its operations.
    fn span(&self) -> Option<(i64, i64)> {
        Some((self.busy.first()?.0, self.busy.last()?.1))
    }

    /// Where a host call from `from` to `to` can leave this GPU waiting: from `from` to
    /// the start of its next operation after `to` (to `to` itself where an operation runs
    /// on at `to`), within the GPU's span.
    fn window(&self, from: i64, to: i64) -> Option<(i64, i64)> {
        let (first, last) = self.span()?;
        let i = self.busy.partition_point(|b| b.1 <= to);
        let end = match self.busy.get(i) {
            Some(&(s, _)) => s.max(to),
            None => to,
        };
        let (a, b) = (from.max(first), end.min(last));
        (a < b).then_some((a, b))
    }

    /// The GPU's idle time inside `windows` (merged first: overlapping ones count once).
    fn idle_in(&self, mut windows: Vec<(i64, i64)>) -> i64 {
        windows.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::new();
        for (s, e) in windows {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        let mut idle = 0;
        for (a, b) in merged {
            let mut busy = 0;
            let from = self.busy.partition_point(|x| x.1 <= a);
            for &(s, e) in self.busy[from..].iter().take_while(|x| x.0 < b) {
                busy += e.min(b) - s.max(a);
            }
            idle += b - a - busy;
        }
        idle
    }
}

/// What the rules need of one profile.
struct Profile {
    name: Arc<str>,
    tables: CudaTables,
    gpus: BTreeMap<u32, Gpu>,
    memcpys: Vec<Memop>,
    calls: Vec<ApiCall>,
}

impl Profile {
    fn gpu_span(&self, device: u32) -> i64 {
        self.gpus
            .get(&device)
            .and_then(Gpu::span)
            .map_or(0, |(a, b)| b - a)
    }
}

/// Reads what the rules need of `path`.
fn read(path: &std::path::Path, short_ns: i64) -> Result<Profile> {
    let quiet = Notes::kept();
    let mut calls = Vec::new();
    let keep = |name: &str| memcpy_api(name).is_some() || sync_api(name).is_some();
    let mut gpus: BTreeMap<u32, Gpu> = BTreeMap::new();
    let mut memcpys = Vec::new();
    let mut op = |op: GpuOp| {
        match op {
            GpuOp::Kernel(k) => {
                let gpu = gpus.entry(k.device).or_default();
                let dur = (k.end_ns - k.start_ns).max(0);
                gpu.ops.push((k.start_ns, k.start_ns + dur));
                gpu.kernels += 1;
                gpu.kernel_ns += dur;
                if dur < short_ns {
                    gpu.short += 1;
                    gpu.short_ns += dur;
                }
            }
            GpuOp::Memop(m) => {
                let dur = (m.end_ns - m.start_ns).max(0);
                let gpu = gpus.entry(m.device).or_default();
                gpu.ops.push((m.start_ns, m.start_ns + dur));
                if m.kind == "memcpy" && m.api.as_deref().and_then(memcpy_api).is_some() {
                    memcpys.push(m);
                }
            }
        }
        Ok(())
    };
    let tables = crate::source::read_cuda_activity(path, &keep, &quiet, &mut op, &mut |c| {
        calls.push(c);
        Ok(())
    })?;
    gpus.values_mut().for_each(Gpu::merge);
    Ok(Profile {
        name: crate::source::profile_name(path).into(),
        tables,
        gpus,
        memcpys,
        calls,
    })
}

/// The saving and share of `total` ns: per step with a step (the total over the device's
/// steady-state steps, rounded up), else the total and its share of `span`; and
/// `"step"` or `"span"`.
fn scaled(
    total: i64,
    span: i64,
    device: Option<u32>,
    step: Option<&Step>,
) -> (i64, f64, &'static str) {
    if let Some(step) = step {
        let steps = device
            .and_then(|d| step.per_device.iter().find(|s| s.device == d))
            .map_or(step.figures.steps, |s| s.figures.steps) as i64;
        if steps > 0 && step.figures.step_ns > 0 {
            let per = (total + steps - 1) / steps;
            return (per, pct(per, step.figures.step_ns), "step");
        }
    }
    (total, pct(total, span), "span")
}

/// The five rules over the CUDA activity tables of those `inputs` that hold them
/// ([`crate::source::holds_gpu_ops`]); without any, each is undecided, saying why. The
/// readers' own notes are said by the report's kernel sections; a failure to read an
/// input is said to `notes` and leaves the five undecided.
pub fn rules(
    inputs: &[PathBuf],
    step: Option<&Step>,
    t: &Thresholds,
    notes: &Notes,
    out: &mut Findings,
) -> Result<()> {
    let with: Vec<&PathBuf> = inputs
        .iter()
        .filter(|p| crate::source::holds_gpu_ops(p))
        .collect();
    if with.is_empty() {
        for rule in RULES {
            out.undecided(
                rule,
                "no CUDA activity tables in the inputs: records, partial results and nsys-jax \
                 archives keep none; they are in nsys SQLite exports, reports and njx-capture \
                 archives",
            );
        }
        return Ok(());
    }
    let short_ns = (t.short_kernel_us * 1e3).round() as i64;
    let mut profiles = Vec::new();
    for path in with {
        match read(path, short_ns) {
            Ok(p) => profiles.push(p),
            Err(e) => {
                let why = format!("the CUDA activity tables could not be read: {e}");
                notes.note(format!("findings: {why}"));
                for rule in RULES {
                    out.undecided(rule, &why);
                }
                return Ok(());
            }
        }
    }
    gpu_idle(&profiles, step, t, out);
    short_kernels(&profiles, step, t, out);
    memcpys(&profiles, step, t, out);
    sync_apis(&profiles, step, t, out);
    Ok(())
}

/// Busy time, idle time and gaps of at least `gap` ns of one GPU: (busy, idle, gaps:
/// (start, length)).
fn idle_of(gpu: &Gpu, gap: i64) -> (i64, i64, Vec<(i64, i64)>) {
    let busy: i64 = gpu.busy.iter().map(|b| b.1 - b.0).sum();
    let mut idle = 0;
    let mut gaps = Vec::new();
    for w in gpu.busy.windows(2) {
        let (at, len) = (w[0].1, w[1].0 - w[0].1);
        idle += len;
        if len >= gap {
            gaps.push((at, len));
        }
    }
    (busy, idle, gaps)
}

fn gpu_idle(profiles: &[Profile], step: Option<&Step>, t: &Thresholds, out: &mut Findings) {
    const RULE: &str = "gpu-idle";
    if !profiles
        .iter()
        .any(|p| p.tables.kernels || p.tables.memcpy || p.tables.memset)
    {
        out.undecided(RULE, "no CUDA kernel, memcpy or memset table in the inputs");
        return;
    }
    let gap = (t.gap_ms * 1e6).round() as i64;
    let mut worst: Option<(f64, String)> = None;
    let mut fired = false;
    let mut any = false;
    for p in profiles {
        for (&device, gpu) in &p.gpus {
            let Some((first, last)) = gpu.span() else {
                continue;
            };
            any = true;
            let span = last - first;
            let (busy, idle, gaps) = idle_of(gpu, gap);
            let total: i64 = gaps.iter().map(|g| g.1).sum();
            let largest = gaps
                .iter()
                .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
                .copied();
            let (saving, share, of) = scaled(total, span, Some(device), step);
            let idle_pct = pct(idle, span);
            let said = format!(
                "device {device} of {} idle {} of its {} span ({idle_pct:.1} %), {} in {} \
                 gaps of {} ms or more",
                p.name,
                ms(idle),
                ms(span),
                ms(total),
                gaps.len(),
                t.gap_ms
            );
            if share < t.moderate_pct {
                if worst.as_ref().is_none_or(|w| share > w.0) {
                    worst = Some((share, said));
                }
                continue;
            }
            fired = true;
            let (at, len) = largest.unwrap_or((0, 0));
            out.findings.push(Finding {
                rule: RULE,
                severity: severity(t, share),
                title: format!(
                    "{said}; the largest {} at {} ns ({} after the GPU's first operation)",
                    ms(len),
                    at,
                    ms(at - first)
                ),
                program: None,
                key: Some(p.name.to_string()),
                device: Some(device),
                saving_ns: saving,
                share_pct: share,
                evidence: json!({
                    "of": of, "profile": &*p.name, "first_ns": first, "last_ns": last,
                    "span_ns": span, "busy_ns": busy, "idle_ns": idle, "idle_pct": idle_pct,
                    "gaps": gaps.len(), "gaps_ns": total, "largest_gap_ns": len,
                    "largest_gap_start_ns": at, "threshold_gap_ms": t.gap_ms,
                    "threshold_pct": t.moderate_pct,
                }),
                advice: "The GPU waits for the host: see what the host does in the gaps \
                         (data loading, host-side computation, synchronisation, logging) on \
                         the timeline, overlap it with GPU work (prefetch the next batch, \
                         pinned host memory and asynchronous copies), or keep the GPU busy \
                         with more work per launch"
                    .to_string(),
                command: "njx-timeline -o timeline.json INPUTS".to_string(),
            });
        }
    }
    if !any {
        out.undecided(RULE, "no GPU operations in the CUDA activity tables");
    } else if !fired {
        let (_, said) = worst.unwrap_or_default();
        out.pass(RULE, format!("{said} (fires from {} %)", t.moderate_pct));
    }
}

fn short_kernels(profiles: &[Profile], step: Option<&Step>, t: &Thresholds, out: &mut Findings) {
    const RULE: &str = "short-kernels";
    if !profiles.iter().any(|p| p.tables.kernels) {
        out.undecided(
            RULE,
            "no CUDA kernel table (CUPTI_ACTIVITY_KIND_KERNEL) in the inputs",
        );
        return;
    }
    let mut worst: Option<(f64, String)> = None;
    let mut fired = false;
    for p in profiles {
        for (&device, gpu) in &p.gpus {
            if gpu.kernels == 0 {
                continue;
            }
            let span = p.gpu_span(device);
            let (saving, share, of) = scaled(gpu.short_ns, span, Some(device), step);
            let of_kernels = pct(gpu.short_ns, gpu.kernel_ns);
            let said = format!(
                "device {device} of {} ran {} of its {} kernels in under {} µs, {} ({of_kernels:.1} % \
                 of its kernel time)",
                p.name,
                gpu.short,
                gpu.kernels,
                t.short_kernel_us,
                ms(gpu.short_ns)
            );
            if below(t, &mut worst, share, &said, of) {
                continue;
            }
            fired = true;
            out.findings.push(Finding {
                rule: RULE,
                severity: severity(t, share),
                title: format!("{said}: launch-bound work"),
                program: None,
                key: Some(p.name.to_string()),
                device: Some(device),
                saving_ns: saving,
                share_pct: share,
                evidence: json!({
                    "of": of, "profile": &*p.name, "short_kernels": gpu.short,
                    "short_ns": gpu.short_ns, "kernels": gpu.kernels, "kernel_ns": gpu.kernel_ns,
                    "short_pct_of_kernel_time": of_kernels, "span_ns": span,
                    "threshold_us": t.short_kernel_us, "threshold_pct": t.moderate_pct,
                }),
                advice: "Each short kernel costs a launch of a few µs on the host: launch them \
                         as CUDA graphs (PyTorch torch.cuda.graphs / torch.compile \
                         mode=\"reduce-overhead\"; XLA records thunks into command buffers, \
                         XLA_FLAGS=--xla_gpu_enable_command_buffer with more command types), or \
                         fuse them into fewer, larger kernels; the shortest and most frequent \
                         are at the top of the command's table"
                    .to_string(),
                command: "njx-kernels --per-device INPUTS".to_string(),
            });
        }
    }
    if !fired {
        match worst {
            Some((_, said)) => out.pass(RULE, format!("{said} (fires from {} %)", t.moderate_pct)),
            None => out.pass(RULE, "no kernels in the CUDA kernel table".to_string()),
        }
    }
}

/// The host time of calls, per thread counted once where they nest or overlap:
/// (time, outermost calls, the longest call (start, length)).
fn host_time<'a>(calls: impl Iterator<Item = &'a ApiCall>) -> (i64, u64, (i64, i64)) {
    let mut by_thread: HashMap<(u64, u64), Vec<(i64, i64)>> = HashMap::new();
    let mut longest = (0, 0);
    for c in calls {
        let end = c.end_ns.max(c.start_ns);
        if end - c.start_ns > longest.1 || (longest == (0, 0)) {
            longest = (c.start_ns, end - c.start_ns);
        }
        by_thread
            .entry((c.pid, c.tid))
            .or_default()
            .push((c.start_ns, end));
    }
    let (mut total, mut count) = (0, 0);
    for spans in by_thread.values_mut() {
        // Longest first among equal starts, so that a call inside another is not counted.
        spans.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let mut open: Option<(i64, i64)> = None;
        for &(s, e) in spans.iter() {
            match open {
                Some((a, b)) if s < b || (s == b && e == s) => open = Some((a, b.max(e))),
                _ => {
                    if let Some((a, b)) = open {
                        total += b - a;
                    }
                    count += 1;
                    open = Some((s, e));
                }
            }
        }
        if let Some((a, b)) = open {
            total += b - a;
        }
    }
    (total, count, longest)
}

/// `sync-memcpy` and `pageable-memcpy`: per GPU of a profile, the copies of each kind and
/// the host time of the calls that issued them.
fn memcpys(profiles: &[Profile], step: Option<&Step>, t: &Thresholds, out: &mut Findings) {
    let rules: [(&str, bool); 2] = [("sync-memcpy", false), ("pageable-memcpy", true)];
    for (rule, pageable) in rules {
        let no_memcpy = !profiles.iter().any(|p| p.tables.memcpy);
        let no_calls = !profiles.iter().any(|p| p.tables.memcpy && p.tables.calls);
        let no_kinds = pageable
            && !profiles
                .iter()
                .any(|p| p.tables.memcpy && p.tables.calls && p.tables.memcpy_kinds);
        if no_memcpy {
            out.undecided(
                rule,
                "no CUDA memcpy table (CUPTI_ACTIVITY_KIND_MEMCPY) in the inputs",
            );
            continue;
        }
        if no_calls {
            out.undecided(
                rule,
                "no CUDA runtime API table in the inputs: which API issued each copy is unknown",
            );
            continue;
        }
        if no_kinds {
            out.undecided(
                rule,
                "the CUDA memcpy table has no srcKind and dstKind columns: whether host memory \
                 was pageable is unknown",
            );
            continue;
        }
        let mut fired = false;
        let mut worst: Option<(f64, String)> = None;
        for p in profiles {
            if !p.tables.calls || (pageable && !p.tables.memcpy_kinds) {
                continue;
            }
            let calls: HashMap<(u64, u64), &ApiCall> = p
                .calls
                .iter()
                .filter(|c| memcpy_api(&c.name).is_some())
                .filter_map(|c| Some(((c.pid, c.correlation_id?), c)))
                .collect();
            let mut by_device: BTreeMap<u32, Vec<&Memop>> = BTreeMap::new();
            for m in &p.memcpys {
                let Some(is_async) = m.api.as_deref().and_then(memcpy_api) else {
                    continue;
                };
                let hit = if pageable {
                    is_async
                        && (m.src_kind.as_deref() == Some("pageable")
                            || m.dst_kind.as_deref() == Some("pageable"))
                } else {
                    let staged = m.direction.as_deref() == Some("HtoD") && m.bytes <= STAGED_BYTES;
                    !is_async && !staged
                };
                if hit {
                    by_device.entry(m.device).or_default().push(m);
                }
            }
            for (device, copies) in by_device {
                let issued: Vec<&ApiCall> = copies
                    .iter()
                    .filter_map(|m| calls.get(&(m.pid?, m.correlation_id?)).copied())
                    .collect();
                let (host, _, (at, longest)) = host_time(issued.iter().copied());
                let gpu_ns: i64 = copies.iter().map(|m| (m.end_ns - m.start_ns).max(0)).sum();
                let bytes: u64 = copies.iter().map(|m| m.bytes).sum();
                let span = p.gpu_span(device);
                // What the waits cost the GPU: its idle time from each call's start to
                // its next operation after the call.
                let idle = p.gpus.get(&device).map_or(0, |gpu| {
                    gpu.idle_in(
                        issued
                            .iter()
                            .filter_map(|c| gpu.window(c.start_ns, c.end_ns))
                            .collect(),
                    )
                });
                let (saving, share, of) = scaled(idle, span, Some(device), step);
                let mut apis: Vec<&str> = copies.iter().filter_map(|m| m.api.as_deref()).collect();
                apis.sort_unstable();
                apis.dedup();
                let what = if pageable {
                    "asynchronous copies to or from pageable memory (synchronous in effect)"
                } else {
                    "synchronous copies"
                };
                let said = format!(
                    "device {device} of {}: {} {what} ({}, {bytes} B, {} on the GPU) blocked \
                     the host {}, the GPU idle {} from their calls to its next work",
                    p.name,
                    copies.len(),
                    apis.join(", "),
                    ms(gpu_ns),
                    ms(host),
                    ms(idle)
                );
                if below(t, &mut worst, share, &said, of) {
                    continue;
                }
                fired = true;
                let (advice, command) = if pageable {
                    (
                        "Copies from or to pageable host memory are staged through a pinned \
                         buffer and block the host even when issued with cudaMemcpyAsync: \
                         allocate the host buffers pinned (cudaHostAlloc / cudaMallocHost, or \
                         cudaHostRegister an existing one; PyTorch: pin_memory=True in the \
                         DataLoader, tensor.pin_memory()), then the copy overlaps with the host",
                        "njx-kernels --table memops --by range INPUTS",
                    )
                } else {
                    (
                        "A synchronous copy blocks the host until the GPU has done it and all \
                         work before it: issue it with cudaMemcpyAsync on a stream from pinned \
                         memory (cudaHostAlloc), and wait where the result is needed with \
                         cudaStreamWaitEvent or cudaEventSynchronize; PyTorch: \
                         tensor.to(device, non_blocking=True) from pinned memory, no .item() or \
                         .cpu() inside the step",
                        "njx-kernels --table memops --by range INPUTS",
                    )
                };
                out.findings.push(Finding {
                    rule,
                    severity: severity(t, share),
                    title: format!("{said}; the longest call {} at {at} ns", ms(longest)),
                    program: None,
                    key: Some(p.name.to_string()),
                    device: Some(device),
                    saving_ns: saving,
                    share_pct: share,
                    evidence: json!({
                        "of": of, "profile": &*p.name, "copies": copies.len(),
                        "calls_found": issued.len(), "host_ns": host, "gpu_ns": gpu_ns,
                        "gpu_idle_ns": idle,
                        "bytes": bytes, "apis": apis, "longest_call_ns": longest,
                        "longest_call_start_ns": at, "span_ns": span,
                        "staged_bytes_left_out": if pageable { None } else { Some(STAGED_BYTES) },
                        "threshold_pct": t.moderate_pct,
                    }),
                    advice: advice.to_string(),
                    command: command.to_string(),
                });
            }
        }
        if !fired {
            match worst {
                Some((_, said)) => {
                    out.pass(rule, format!("{said} (fires from {} %)", t.moderate_pct))
                }
                None => out.pass(
                    rule,
                    format!(
                        "no {}",
                        if pageable {
                            "asynchronous copy to or from pageable memory"
                        } else {
                            "synchronous copy (host to device ones of 64 KB or less left out)"
                        }
                    ),
                ),
            }
        }
    }
}

/// `sync-api`: per profile and synchronisation API, the host time its calls took.
fn sync_apis(profiles: &[Profile], step: Option<&Step>, t: &Thresholds, out: &mut Findings) {
    const RULE: &str = "sync-api";
    if !profiles.iter().any(|p| p.tables.calls) {
        out.undecided(RULE, "no CUDA runtime API table in the inputs");
        return;
    }
    let mut fired = false;
    let mut worst: Option<(f64, String)> = None;
    for p in profiles.iter().filter(|p| p.tables.calls) {
        let mut by_api: BTreeMap<&str, Vec<&ApiCall>> = BTreeMap::new();
        for c in &p.calls {
            if let Some(api) = sync_api(&c.name) {
                by_api.entry(api).or_default().push(c);
            }
        }
        for (api, calls) in by_api {
            let (host, count, (at, longest)) = host_time(calls.iter().copied());
            let threads = calls
                .iter()
                .map(|c| (c.pid, c.tid))
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            // What the waits cost each GPU of the profile: its idle time from each call's
            // start to its next operation after the call; the GPU that waited most.
            let idle: BTreeMap<u32, i64> = p
                .gpus
                .iter()
                .map(|(&d, gpu)| {
                    let windows = calls
                        .iter()
                        .filter_map(|c| gpu.window(c.start_ns, c.end_ns))
                        .collect();
                    (d, gpu.idle_in(windows))
                })
                .collect();
            let (device, most) = idle
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map_or((None, 0), |(&d, &n)| (Some(d), n));
            let span = device.map_or(0, |d| p.gpu_span(d));
            let (saving, share, of) = scaled(most, span, device, step);
            let said = format!(
                "{api} blocked the host of {} {count} times for {} ({threads} thread{}), {}",
                p.name,
                ms(host),
                if threads == 1 { "" } else { "s" },
                match device {
                    Some(d) => format!(
                        "device {d} idle {} from the calls to its next work",
                        ms(most)
                    ),
                    None => "with no GPU work in the profile".to_string(),
                }
            );
            if below(t, &mut worst, share, &said, of) {
                continue;
            }
            fired = true;
            out.findings.push(Finding {
                rule: RULE,
                severity: severity(t, share),
                title: format!("{said}; the longest {} at {at} ns", ms(longest)),
                program: None,
                key: Some(api.to_string()),
                device,
                saving_ns: saving,
                share_pct: share,
                evidence: json!({
                    "of": of, "profile": &*p.name, "api": api, "calls": count,
                    "host_ns": host, "threads": threads, "longest_call_ns": longest,
                    "longest_call_start_ns": at, "span_ns": span, "gpu_idle_ns": idle,
                    "threshold_pct": t.moderate_pct,
                }),
                advice: "Each call blocks the host until the GPU has finished the work before \
                         it, and the GPU then waits for the host's next launch: synchronise \
                         only where a result is needed on the host, wait on events instead \
                         (cudaEventRecord then cudaStreamWaitEvent between streams, \
                         cudaEventSynchronize on the one event needed) rather than \
                         cudaDeviceSynchronize; PyTorch: avoid .item(), .cpu() and \
                         torch.cuda.synchronize() in the step; JAX: no block_until_ready or \
                         host reads of device values in the step"
                    .to_string(),
                command: "njx-timeline -o timeline.json INPUTS".to_string(),
            });
        }
    }
    if !fired {
        match worst {
            Some((_, said)) => out.pass(RULE, format!("{said} (fires from {} %)", t.moderate_pct)),
            None => out.pass(
                RULE,
                "no call of cudaDeviceSynchronize, cudaStreamSynchronize, cuCtxSynchronize or \
                 cuStreamSynchronize"
                    .to_string(),
            ),
        }
    }
}

/// Whether a figure is under the firing threshold; if so, kept as the rule's `worst` (what
/// its pass line names) where it is the largest so far.
fn below(
    t: &Thresholds,
    worst: &mut Option<(f64, String)>,
    share: f64,
    said: &str,
    of: &str,
) -> bool {
    if share >= t.moderate_pct {
        return false;
    }
    if worst.as_ref().is_none_or(|w| share > w.0) {
        *worst = Some((share, format!("{said}, {share:.1} % of the {of}")));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_matched_as_nsys_matches_them() {
        assert_eq!(memcpy_api("cudaMemcpy_v3020"), Some(false));
        assert_eq!(memcpy_api("cudaMemcpyAsync_v3020"), Some(true));
        assert_eq!(memcpy_api("cudaMemcpy2DAsync_v3020"), Some(true));
        assert_eq!(memcpy_api("cuMemcpyDtoHAsync_v2"), Some(true));
        assert_eq!(memcpy_api("cuMemcpyHtoD_v2"), Some(false));
        assert_eq!(memcpy_api("cudaMemset_v3020"), None);
        assert_eq!(
            sync_api("cudaStreamSynchronize_v3020"),
            Some("cudaStreamSynchronize")
        );
        assert_eq!(sync_api("cudaEventSynchronize_v3020"), None);
        assert_eq!(sync_api("cuCtxSynchronize"), Some("cuCtxSynchronize"));
    }

    #[test]
    fn overlapping_operations_count_once_and_gaps_are_exact() {
        let mut gpu = Gpu {
            ops: vec![(0, 10), (5, 20), (20, 20), (30, 40), (1040, 1050)],
            ..Gpu::default()
        };
        gpu.merge();
        let (busy, idle, gaps) = idle_of(&gpu, 1000);
        assert_eq!((busy, idle), (40, 1010));
        assert_eq!(gaps, vec![(40, 1000)]);
        // A call from 15 to 25: the GPU runs until 20, then waits for its next work at 30.
        assert_eq!(gpu.window(15, 25), Some((15, 30)));
        // A call ending while the GPU works: no wait after it, nor in it.
        assert_eq!(gpu.window(32, 35), Some((32, 35)));
        assert_eq!(gpu.idle_in(vec![(32, 35)]), 0);
        // After the last operation: nothing within the span.
        assert_eq!(gpu.window(1050, 2000), None);
        assert_eq!(gpu.idle_in(vec![(15, 30), (25, 35), (45, 1045)]), 10 + 995);
    }

    #[test]
    fn nested_calls_on_a_thread_count_once() {
        let call = |tid, s, e| ApiCall {
            tid,
            start_ns: s,
            end_ns: e,
            ..ApiCall::default()
        };
        let calls = [
            call(1, 0, 100),
            call(1, 10, 20),
            call(2, 50, 60),
            call(1, 200, 210),
        ];
        let (host, count, longest) = host_time(calls.iter());
        assert_eq!((host, count, longest), (120, 3, (0, 100)));
    }
}
