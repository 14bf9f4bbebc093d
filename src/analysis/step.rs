//! The step (issue 40): where a training step's time goes, per device and over devices.
//!
//! The main program is the module with the most compute (non-communication) thunk time in
//! steady state, by module name (so that a module compiled differently on some devices is
//! still one step). A step on a device runs from the start of one steady execution of the
//! main module to the start of the next. Its parts, per step, from the module executions
//! (of every program) that start inside it:
//!
//! - GPU idle between module executions = the step − the union of those executions' spans
//!   (clipped to the step);
//! - exposed communication = the communication thunks' exposed time (their `dur_ns`),
//!   at most the modules' span;
//! - compute = the compute thunks' time, at most what the modules' span leaves: thunks
//!   that overlap on several streams are counted once, by capping at the span;
//! - GPU idle inside module executions = the modules' span − exposed − compute.
//!
//! So the four add up to the step, to the nanosecond. The aggregate, [`Executed`], is one
//! entry per module execution and device, packed per device (mergeable: partial results
//! carry it).

use crate::derived::executions::{Executions, Phase, Warmup};
use crate::records::{Module, Thunk};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

/// One module execution on one device: its span, and the time of its thunks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// The execution's phase, as read.
    pub phase: Phase,
    /// Its module range (start, end), where a module record gave it.
    pub module: Option<(i64, i64)>,
    /// Its thunks' first start and last end (communication's hidden part included).
    pub thunks: Option<(i64, i64)>,
    /// Σ compute thunk time.
    pub compute: i64,
    /// Σ exposed communication time.
    pub exposed: i64,
}

impl Span {
    fn new(phase: Phase) -> Span {
        Span {
            phase,
            module: None,
            thunks: None,
            compute: 0,
            exposed: 0,
        }
    }

    /// Its span: the module's range, else its thunks'.
    fn range(&self) -> Option<(i64, i64)> {
        self.module.or(self.thunks)
    }

    fn merge(&mut self, o: &Span) {
        let widen = |a: Option<(i64, i64)>, b: Option<(i64, i64)>| match (a, b) {
            (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
            (x, y) => x.or(y),
        };
        self.module = widen(self.module, o.module);
        self.thunks = widen(self.thunks, o.thunks);
        self.compute = self.compute.saturating_add(o.compute);
        self.exposed = self.exposed.saturating_add(o.exposed);
    }
}

/// The module executions of everything read, per (program, execution, device), with the
/// module name of each program: what the step is made of.
///
/// Its size follows the module executions × devices, so each input's executions are
/// packed per device once the input is read ([`Packed`]: about 25 bytes an execution,
/// against 220 in a map), and the step is worked out one device at a time.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Executed {
    /// The executions of the input being read, by (program's number, execution, device).
    open: BTreeMap<(u32, u32, u32), Span>,
    /// The executions of the inputs read, per device.
    devices: BTreeMap<u32, Packed>,
    /// The program keys the executions refer to by number, each once.
    programs: Vec<Arc<str>>,
    numbers: HashMap<Arc<str>, u32>,
    names: BTreeMap<String, String>,
}

/// One execution as unpacked: its program's number in [`Executed::programs`].
type Entry = (u32, u32, Span);

/// One device's executions, ordered by (program key, execution), packed: per execution
/// the program's number and the execution (LEB128), a byte of phase and which ranges are
/// known, then the ranges and times as zigzag LEB128 differences (the module's start from
/// the previous execution's start, each end from its start). Exact for any i64.
#[derive(Debug, Default, Clone, PartialEq)]
struct Packed {
    bytes: Vec<u8>,
}

fn put(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn put_i(out: &mut Vec<u8>, v: i64) {
    put(out, ((v << 1) ^ (v >> 63)) as u64);
}

fn get(bytes: &[u8], at: &mut usize) -> u64 {
    let (mut v, mut shift) = (0u64, 0);
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn get_i(bytes: &[u8], at: &mut usize) -> i64 {
    let v = get(bytes, at);
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

const PHASES: [Phase; 4] = [Phase::Steady, Phase::Warmup, Phase::First, Phase::Second];

impl Packed {
    fn of(entries: &[Entry]) -> Packed {
        let mut bytes = Vec::with_capacity(entries.len() * 24);
        let mut anchor = 0i64;
        for (program, execution, s) in entries {
            put(&mut bytes, u64::from(*program));
            put(&mut bytes, u64::from(*execution));
            let phase = PHASES.iter().position(|p| p == &s.phase).unwrap_or(0) as u8;
            bytes.push(
                phase | u8::from(s.module.is_some()) << 2 | u8::from(s.thunks.is_some()) << 3,
            );
            for (a, b) in [s.module, s.thunks].into_iter().flatten() {
                put_i(&mut bytes, a.wrapping_sub(anchor));
                put_i(&mut bytes, b.wrapping_sub(a));
                anchor = a;
            }
            put_i(&mut bytes, s.compute);
            put_i(&mut bytes, s.exposed);
        }
        bytes.shrink_to_fit();
        Packed { bytes }
    }

    fn entries(&self) -> Vec<Entry> {
        let (bytes, mut at, mut anchor) = (&self.bytes[..], 0usize, 0i64);
        let mut out = Vec::new();
        while at < bytes.len() {
            let program = get(bytes, &mut at) as u32;
            let execution = get(bytes, &mut at) as u32;
            let tag = bytes[at];
            at += 1;
            let mut range = |known: bool| {
                known.then(|| {
                    let a = anchor.wrapping_add(get_i(bytes, &mut at));
                    anchor = a;
                    (a, a.wrapping_add(get_i(bytes, &mut at)))
                })
            };
            let module = range(tag & 4 != 0);
            let thunks = range(tag & 8 != 0);
            let compute = get_i(bytes, &mut at);
            let exposed = get_i(bytes, &mut at);
            out.push((
                program,
                execution,
                Span {
                    phase: PHASES[usize::from(tag & 3)],
                    module,
                    thunks,
                    compute,
                    exposed,
                },
            ));
        }
        out
    }
}

impl Executed {
    fn entry(&mut self, program: &str, execution: u32, device: u32, phase: Phase) -> &mut Span {
        let program = self.number(program);
        self.open
            .entry((program, execution, device))
            .or_insert_with(|| Span::new(phase))
    }

    fn name(&mut self, program: &str, name: &str) {
        match self.names.get_mut(program) {
            Some(n) if name < n.as_str() => *n = name.to_string(),
            Some(_) => {}
            None => {
                self.names.insert(program.to_string(), name.to_string());
            }
        }
    }

    fn number(&mut self, program: &str) -> u32 {
        if let Some(n) = self.numbers.get(program) {
            return *n;
        }
        let n = u32::try_from(self.programs.len()).expect("fewer than 2^32 programs");
        let key: Arc<str> = Arc::from(program);
        self.programs.push(Arc::clone(&key));
        self.numbers.insert(key, n);
        n
    }

    /// Adds a module execution in `phase`.
    pub fn add_module(&mut self, m: &Module, phase: Phase) {
        self.name(&m.program, &m.name);
        let range = (m.start_ns, m.start_ns.saturating_add(m.dur_ns));
        let s = self.entry(&m.program, m.execution, m.device, phase);
        s.merge(&Span {
            module: Some(range),
            ..Span::new(phase)
        });
    }

    /// Adds a thunk execution in `phase`.
    pub fn add_thunk(&mut self, t: &Thunk, phase: Phase) {
        self.name(&t.program, &t.module);
        let end = t
            .start_ns
            .saturating_add(t.dur_ns)
            .saturating_add(t.hidden_ns);
        let (compute, exposed) = if t.comm { (0, t.dur_ns) } else { (t.dur_ns, 0) };
        let s = self.entry(&t.program, t.execution, t.device, phase);
        s.merge(&Span {
            thunks: Some((t.start_ns, end)),
            compute,
            exposed,
            ..Span::new(phase)
        });
    }

    /// Adds the executions of a profile, and packs them.
    pub fn add_profile(&mut self, part: &Executions) {
        for m in &part.modules {
            self.add_module(m, Phase::of_profile(m.execution));
        }
        for t in &part.thunks {
            self.add_thunk(t, Phase::of_profile(t.execution));
        }
        self.pack();
    }

    /// Packs the executions of the input read ([`Executed::add_module`],
    /// [`Executed::add_thunk`]) per device: called once an input is read whole.
    pub fn pack(&mut self) {
        let mut by_device: BTreeMap<u32, Vec<Entry>> = BTreeMap::new();
        for ((program, execution, device), s) in std::mem::take(&mut self.open) {
            by_device
                .entry(device)
                .or_default()
                .push((program, execution, s));
        }
        for (device, mut entries) in by_device {
            // Packed in the order of the program keys, as the step breaks ties by it.
            let programs = &self.programs;
            entries.sort_by(|a, b| {
                (&programs[a.0 as usize], a.1).cmp(&(&programs[b.0 as usize], b.1))
            });
            self.add_packed(device, entries);
        }
    }

    /// Adds `entries` of `device` (ordered by program key, then execution), merging those
    /// of an execution already read.
    fn add_packed(&mut self, device: u32, entries: Vec<Entry>) {
        let Some(mine) = self.devices.get(&device) else {
            self.devices.insert(device, Packed::of(&entries));
            return;
        };
        let programs = &self.programs;
        let key = |e: &Entry| (&*programs[e.0 as usize], e.1);
        let mut merged: Vec<Entry> = Vec::new();
        let (mut a, mut b) = (
            mine.entries().into_iter().peekable(),
            entries.into_iter().peekable(),
        );
        loop {
            let next = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => match key(x).cmp(&key(y)) {
                    std::cmp::Ordering::Less => a.next(),
                    std::cmp::Ordering::Greater => b.next(),
                    std::cmp::Ordering::Equal => {
                        let (mut x, y) = (a.next().unwrap(), b.next().unwrap());
                        x.2.merge(&y.2);
                        Some(x)
                    }
                },
                (Some(_), None) => a.next(),
                (None, _) => b.next(),
            };
            match next {
                Some(e) => merged.push(e),
                None => break,
            }
        }
        self.devices.insert(device, Packed::of(&merged));
    }

    /// Merges another aggregate into this one.
    pub fn merge(&mut self, mut other: Executed) {
        other.pack();
        for (device, packed) in std::mem::take(&mut other.devices) {
            let entries: Vec<Entry> = packed
                .entries()
                .into_iter()
                .map(|(p, e, s)| (self.number(&other.programs[p as usize]), e, s))
                .collect();
            self.add_packed(device, entries);
        }
        for (program, name) in other.names {
            self.name(&program, &name);
        }
    }

    /// Every execution, per device: (device, its executions by program key then
    /// execution), one device unpacked at a time.
    fn each_device(&self) -> impl Iterator<Item = (u32, Vec<(&str, u32, Span)>)> + '_ {
        self.devices.iter().map(|(device, packed)| {
            let entries = packed
                .entries()
                .into_iter()
                .map(|(p, e, s)| (&*self.programs[p as usize], e, s))
                .collect();
            (*device, entries)
        })
    }

    /// Whether `program` names a program that ran: its module name or its key.
    pub fn knows(&self, program: &str) -> bool {
        self.names.contains_key(program) || self.names.values().any(|n| n == program)
    }

    /// The module names of the programs that ran, each once.
    pub fn modules(&self) -> std::collections::BTreeSet<&str> {
        self.names.values().map(String::as_str).collect()
    }

    /// The step of the module `main` (a module name or a program key; by default the
    /// module with the most steady compute time), or why there is none.
    pub fn step(&self, warmup: &Warmup, main: Option<&str>) -> Result<Step, String> {
        if !self.open.is_empty() {
            let mut packed = self.clone();
            packed.pack();
            return packed.step(warmup, main);
        }
        let rule = warmup.rule();
        let steady = |program: &str, s: &Span| !rule.module_is_warmup(program, s.phase);
        let module = match main {
            // A program key (fingerprint) stands for its module.
            Some(m) => self.names.get(m).map_or(m, String::as_str).to_string(),
            None => {
                let mut compute: BTreeMap<&str, i64> = BTreeMap::new();
                for (_, entries) in self.each_device() {
                    for (program, _, s) in entries {
                        if steady(program, &s) && program != "unknown" {
                            let c = compute.entry(name_in(&self.names, program)).or_default();
                            *c = c.saturating_add(s.compute);
                        }
                    }
                }
                let best = compute
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)));
                match best {
                    Some((name, c)) if c > 0 => name.to_string(),
                    _ => return Err("no compute thunk in steady state".to_string()),
                }
            }
        };
        // Per device: every execution's span, and the starts of the main module's steady
        // executions.
        let mut programs: BTreeMap<&str, i64> = BTreeMap::new();
        let mut without_thunks = (0, 0);
        let mut devices = Vec::new();
        for (device, entries) in self.each_device() {
            let mut execs: Vec<Exec> = Vec::new();
            let mut starts: Vec<(i64, u32)> = Vec::new();
            for (program, execution, s) in &entries {
                let Some(range) = s.range() else { continue };
                execs.push((program, range, s));
                if name_in(&self.names, program) == module && steady(program, s) {
                    starts.push((range.0, *execution));
                    without_thunks.0 += usize::from(s.thunks.is_none());
                    without_thunks.1 += 1;
                    *programs.entry(program).or_default() += s.compute;
                }
            }
            if starts.is_empty() {
                continue;
            }
            starts.sort_unstable();
            starts.dedup_by_key(|x| x.0);
            execs.sort_by_key(|e| e.1.0);
            let steps: Vec<Parts> = starts
                .windows(2)
                .map(|w| Parts {
                    start: w[0].0,
                    execution: w[0].1,
                    ..parts(w[0].0, w[1].0, &execs, &module, &self.names)
                })
                .collect();
            if !steps.is_empty() {
                devices.push((device, steps));
            }
        }
        let program = programs
            .into_iter()
            .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))
            .map(|(p, _)| p.to_string())
            .ok_or_else(|| format!("no steady execution of module {module}"))?;
        if devices.is_empty() {
            return Err(format!(
                "fewer than two steady executions of module {module} on every device: no \
                 whole step (njx-modules gives its executions)"
            ));
        }
        Ok(Step {
            without_thunks,
            ..Step::of(program, module, devices)
        })
    }
}

/// As partial results carry it: (program, execution, device) → span, the executions of
/// each device in turn, and the module name of each program.
#[derive(Serialize, Deserialize)]
struct Wire<S> {
    spans: Vec<((String, u32, u32), S)>,
    names: BTreeMap<String, String>,
}

impl Serialize for Executed {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut packed = std::borrow::Cow::Borrowed(self);
        if !self.open.is_empty() {
            packed.to_mut().pack();
        }
        let mut spans = Vec::new();
        for (device, entries) in packed.each_device() {
            for (program, execution, span) in entries {
                spans.push(((program.to_string(), execution, device), span));
            }
        }
        Wire {
            spans,
            names: packed.names.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Executed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Executed, D::Error> {
        let wire = Wire::<Span>::deserialize(d)?;
        let mut out = Executed {
            names: wire.names,
            ..Executed::default()
        };
        let n = wire.spans.len();
        for ((program, execution, device), s) in wire.spans {
            let program = out.number(&program);
            out.open.insert((program, execution, device), s);
        }
        if out.open.len() != n {
            return Err(serde::de::Error::custom("a key is given twice"));
        }
        out.pack();
        Ok(out)
    }
}

/// One execution on a device: its program, its span, its times.
type Exec<'a> = (&'a str, (i64, i64), &'a Span);

/// The parts of one step, in ns.
#[derive(Debug, Default, Clone)]
struct Parts {
    /// Where it starts, and the main module's execution that starts it.
    start: i64,
    execution: u32,
    step: i64,
    compute: i64,
    exposed: i64,
    idle_in: i64,
    idle_between: i64,
    /// Module name → time of its executions in the step (their spans, clipped).
    others: BTreeMap<String, i64>,
}

/// The module name of `program` (empty where none was read).
fn name_in<'a>(names: &'a BTreeMap<String, String>, program: &str) -> &'a str {
    names.get(program).map_or("", String::as_str)
}

/// The parts of the step from `a` to `b` on a device whose executions are `execs` (by
/// start), their module names in `names`.
fn parts(a: i64, b: i64, execs: &[Exec], module: &str, names: &BTreeMap<String, String>) -> Parts {
    let mut p = Parts {
        step: b - a,
        ..Parts::default()
    };
    let (mut in_modules, mut covered_to) = (0i64, a);
    let (mut compute, mut exposed) = (0i64, 0i64);
    let from = execs.partition_point(|e| e.1.0 < a);
    for (program, (start, end), s) in execs[from..].iter().take_while(|e| e.1.0 < b) {
        let (lo, hi) = ((*start).max(covered_to), (*end).min(b));
        if hi > lo {
            in_modules += hi - lo;
            covered_to = hi;
        }
        compute = compute.saturating_add(s.compute);
        exposed = exposed.saturating_add(s.exposed);
        let name = name_in(names, program);
        if name != module {
            *p.others.entry(name.to_string()).or_default() += (*end).min(b) - start;
        }
    }
    p.exposed = exposed.clamp(0, in_modules);
    p.compute = compute.clamp(0, in_modules - p.exposed);
    p.idle_in = in_modules - p.exposed - p.compute;
    p.idle_between = p.step - in_modules;
    p
}

/// Another program's time in the step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Other {
    /// Its module name.
    pub name: String,
    /// Its executions' time per step (their spans inside the step), ns.
    pub ns: i64,
}

/// The step of one device, or over devices: means per step in whole ns (the four parts
/// rounded so that they add up to `step_ns`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// Steps counted.
    pub steps: usize,
    /// Step time.
    pub step_ns: i64,
    /// Compute thunks' time.
    pub compute_ns: i64,
    /// Communication thunks' exposed time.
    pub exposed_communication_ns: i64,
    /// GPU idle inside module executions.
    pub idle_in_modules_ns: i64,
    /// GPU idle between module executions.
    pub idle_between_modules_ns: i64,
    /// The shortest step.
    pub step_min_ns: i64,
    /// The longest step.
    pub step_max_ns: i64,
    /// Other programs' time in the step, the most first.
    pub other_programs: Vec<Other>,
}

/// A device's step.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceStep {
    /// The device.
    pub device: u32,
    /// Its step's figures.
    #[serde(flatten)]
    pub figures: Figures,
}

/// The step record (`step` in njx-report's JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// The main program's key (of its executions, the one with most compute).
    pub program: String,
    /// Its module name.
    pub module: String,
    /// Over every device's steps.
    #[serde(flatten)]
    pub figures: Figures,
    /// The device of the shortest step.
    pub step_min_device: u32,
    /// The device of the longest step.
    pub step_max_device: u32,
    /// Each device's step.
    pub per_device: Vec<DeviceStep>,
    /// Every step on every device, by device then start (not in the record: the rules'
    /// input, as many as the steps).
    #[serde(skip)]
    pub each: Vec<OneStep>,
    /// The main module's steady executions with no thunk recorded (their thunks run in
    /// command buffers / CUDA graphs, where XLA pushes no range per thunk), and all of
    /// them, over devices.
    #[serde(skip)]
    pub without_thunks: (usize, usize),
}

/// One step on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OneStep {
    /// The device.
    pub device: u32,
    /// The main module's execution (as numbered on its device) that starts it.
    pub execution: u32,
    /// Its start, ns (the device's clock as read).
    pub start_ns: i64,
    /// Its length, ns.
    pub step_ns: i64,
}

impl Step {
    /// The main module's steady executions over devices: one more per device than its
    /// steps (what a per-step figure divides an amount over every execution by).
    pub fn executions(&self) -> usize {
        self.per_device.iter().map(|d| d.figures.steps + 1).sum()
    }

    fn of(program: String, module: String, devices: Vec<(u32, Vec<Parts>)>) -> Step {
        let all: Vec<&Parts> = devices.iter().flat_map(|(_, s)| s).collect();
        let pick = |f: &dyn Fn(&Parts) -> i64| {
            let mut v: Vec<(i64, u32)> = devices
                .iter()
                .flat_map(|(d, s)| s.iter().map(move |p| (f(p), *d)))
                .collect();
            v.sort_unstable();
            (v[0], v[v.len() - 1])
        };
        let ((_, min_device), (_, max_device)) = pick(&|p| p.step);
        Step {
            program,
            module,
            figures: figures(&all),
            step_min_device: min_device,
            step_max_device: max_device,
            per_device: devices
                .iter()
                .map(|(device, steps)| DeviceStep {
                    device: *device,
                    figures: figures(&steps.iter().collect::<Vec<_>>()),
                })
                .collect(),
            each: devices
                .iter()
                .flat_map(|(device, steps)| {
                    steps.iter().map(|p| OneStep {
                        device: *device,
                        execution: p.execution,
                        start_ns: p.start,
                        step_ns: p.step,
                    })
                })
                .collect(),
            without_thunks: (0, 0),
        }
    }
}

/// The means per step of `steps` (at least one), whole ns: the step's mean rounded, and
/// its four parts rounded by largest remainder so that they add up to it.
fn figures(steps: &[&Parts]) -> Figures {
    let n = steps.len() as i128;
    let sum = |f: &dyn Fn(&Parts) -> i64| steps.iter().map(|p| i128::from(f(p))).sum::<i128>();
    let step_total = sum(&|p| p.step);
    let step = div_round(step_total, n);
    let totals = [
        sum(&|p| p.compute),
        sum(&|p| p.exposed),
        sum(&|p| p.idle_in),
        sum(&|p| p.idle_between),
    ];
    let parts = apportion(&totals, n, step);
    let mut others: BTreeMap<&str, i128> = BTreeMap::new();
    for p in steps {
        for (name, ns) in &p.others {
            *others.entry(name).or_default() += i128::from(*ns);
        }
    }
    let mut other_programs: Vec<Other> = others
        .into_iter()
        .map(|(name, t)| Other {
            name: name.to_string(),
            ns: div_round(t, n),
        })
        .collect();
    other_programs.sort_by(|a, b| b.ns.cmp(&a.ns).then(a.name.cmp(&b.name)));
    Figures {
        steps: steps.len(),
        step_ns: step,
        compute_ns: parts[0],
        exposed_communication_ns: parts[1],
        idle_in_modules_ns: parts[2],
        idle_between_modules_ns: parts[3],
        step_min_ns: steps.iter().map(|p| p.step).min().unwrap_or(0),
        step_max_ns: steps.iter().map(|p| p.step).max().unwrap_or(0),
        other_programs,
    }
}

/// `a / n` to the nearest whole number, halves away from zero.
fn div_round(a: i128, n: i128) -> i64 {
    let q = (2 * a + n.signum() * a.signum() * n.abs()) / (2 * n);
    i64::try_from(q).unwrap_or(if q < 0 { i64::MIN } else { i64::MAX })
}

/// The means `totals[i] / n` as whole numbers that add up to `whole` (the rounded mean of
/// their sum): each rounded down, then one more to those with the largest remainders.
fn apportion(totals: &[i128; 4], n: i128, whole: i64) -> [i64; 4] {
    let mut out = [0i64; 4];
    let mut rest: Vec<(i128, usize)> = Vec::new();
    for (i, t) in totals.iter().enumerate() {
        out[i] = i64::try_from(t.div_euclid(n)).unwrap_or(i64::MAX);
        rest.push((t.rem_euclid(n), i));
    }
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut short = i128::from(whole) - out.iter().map(|v| i128::from(*v)).sum::<i128>();
    for (_, i) in rest.iter().cycle() {
        if short <= 0 {
            break;
        }
        out[*i] += 1;
        short -= 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_executions_read_back_exactly() {
        let span = |phase, module, thunks, compute, exposed| Span {
            phase,
            module,
            thunks,
            compute,
            exposed,
        };
        let entries: Vec<Entry> = vec![
            (0, 0, span(Phase::First, Some((5, 9)), None, 0, 0)),
            (
                0,
                7,
                span(
                    Phase::Steady,
                    Some((i64::MIN, i64::MAX)),
                    Some((i64::MAX, i64::MIN)),
                    i64::MAX,
                    i64::MIN,
                ),
            ),
            (
                3,
                u32::MAX,
                span(Phase::Second, None, Some((-4, 1 << 40)), -1, 1),
            ),
            (u32::MAX, 1, span(Phase::Warmup, None, None, 0, -7)),
        ];
        assert_eq!(Packed::of(&entries).entries(), entries);
        assert!(Packed::of(&[]).entries().is_empty());
    }

    fn module(program: &str, execution: u32, device: u32, start_ns: i64, dur_ns: i64) -> Module {
        Module {
            program: program.to_string(),
            name: format!("m_{program}"),
            execution,
            device,
            start_ns,
            dur_ns,
            ..Module::default()
        }
    }

    fn thunk(program: &str, execution: u32, device: u32, start_ns: i64, dur_ns: i64) -> Thunk {
        Thunk {
            program: program.to_string(),
            module: format!("m_{program}"),
            execution,
            device,
            start_ns,
            dur_ns,
            ..Thunk::default()
        }
    }

    #[test]
    fn packing_and_merging_keep_every_execution_as_one_map_would() {
        // Read whole, in one aggregate.
        let mut one = Executed::default();
        // The same executions split over three inputs, one of them (c) carrying the thunks
        // of executions whose modules came in another: they merge into one span.
        let (mut a, mut b, mut c) = (
            Executed::default(),
            Executed::default(),
            Executed::default(),
        );
        for e in 0..6u32 {
            for d in 0..3u32 {
                let at = i64::from(e) * 100 + i64::from(d);
                let part = if d == 2 { &mut b } else { &mut a };
                for agg in [&mut one, part] {
                    agg.add_module(&module("p", e, d, at, 60), Phase::Steady);
                    agg.add_module(&module("q", e, d, at + 70, 20), Phase::Steady);
                }
                one.add_thunk(&thunk("p", e, d, at + 5, 40), Phase::Steady);
                c.add_thunk(&thunk("p", e, d, at + 5, 40), Phase::Steady);
            }
        }
        a.pack();
        b.pack();
        let mut merged = Executed::default();
        merged.merge(c);
        merged.merge(a);
        merged.merge(b);
        one.pack();
        type Listed = Vec<(u32, Vec<(String, u32, Span)>)>;
        let all = |x: &Executed| -> Listed {
            x.each_device()
                .map(|(d, v)| {
                    (
                        d,
                        v.into_iter()
                            .map(|(p, e, s)| (p.to_string(), e, s))
                            .collect(),
                    )
                })
                .collect()
        };
        assert_eq!(all(&merged), all(&one));
        assert_eq!(all(&one).len(), 3);
        assert_eq!(all(&one)[0].1.len(), 12);
        let warmup = Warmup::default();
        let (x, y) = (
            merged.step(&warmup, None).unwrap(),
            one.step(&warmup, None).unwrap(),
        );
        assert_eq!(x, y);
        assert_eq!(
            (x.figures.steps, x.figures.step_ns, x.figures.compute_ns),
            (15, 100, 40)
        );
        // Through a partial result and back.
        let text = serde_json::to_string(&merged).unwrap();
        let back: Executed = serde_json::from_str(&text).unwrap();
        assert_eq!(all(&back), all(&one));
    }

    #[test]
    fn rounded_parts_add_up_to_the_rounded_step() {
        // Three steps of 10, 10, 11 ns: mean 10.33 → 10; parts 3.33, 3.33, 3.33, 0.33.
        let totals = [10, 10, 10, 1];
        let parts = apportion(&totals, 3, div_round(31, 3));
        assert_eq!(parts.iter().sum::<i64>(), 10);
        assert_eq!(div_round(5, 2), 3);
        assert_eq!(div_round(-5, 2), -3);
        assert_eq!(div_round(7, 2), 4);
    }
}
