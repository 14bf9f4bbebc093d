//! What is fuzzed: each target is one kind of input (the list of readers), its
//! seeds, and the library entry points that read it — the source layer's readers and
//! whole analyses as the tools run them, in-process, output to a sink and notes kept.
//! Options that vary (formats, filters, modes) are picked from the input's hash, so a
//! saved input replays exactly.

use crate::item::Item;
use crate::seeds::{self, DEVICES, DUMP3, DUMP7, GPU_PROJ, PUSHPOP_PQ, THREADS};
use crate::zipper::Member;
use njx::Result;
use njx::analysis::{collectives, compile, export, flamefold, heap, modules, ranges};
use njx::derived::executions::KeyBy;
use njx::hlo::{Dumps, HloModule, ProgramKey};
use njx::output::Format;
use njx::output::notes::Notes;
use njx::output::progress::Progress;
use njx::records::{Module, Thunk};
use njx::source;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};

/// Valid files the entries read beside the input.
pub struct Ctx {
    /// A folder of XLA dumps: programs 7 and 3.
    pub hlo_dir: PathBuf,
    /// A valid archive of rank 1, read with the input for clock alignment.
    pub rank1: PathBuf,
    /// Valid thunk records of ranks 0 and 1.
    pub thunks: PathBuf,
    /// Valid folded stacks.
    pub folded: PathBuf,
    /// The members of rank 0's archive, which `in-archive` entries replace one of.
    pub base: Vec<Member>,
    /// A valid SQLite export of program 3, for the capture archive entries.
    pub sqlite: Vec<u8>,
}

/// The input of one execution.
pub struct Input<'a> {
    /// The file (or folder) to read.
    pub path: &'a Path,
    /// Its bytes (for a folder, the archive it was extracted from).
    pub bytes: &'a [u8],
    /// Picks options.
    pub hash: u64,
    /// The target's own folder, for files built from the input.
    pub dir: &'a Path,
}

impl Input<'_> {
    /// Bit `k` of the hash.
    pub fn bit(&self, k: u32) -> bool {
        (self.hash >> k) & 1 == 1
    }
    /// A number in `0..n` from bits `k`.. of the hash.
    pub fn pick(&self, k: u32, n: u64) -> u64 {
        (self.hash >> k) % n
    }
}

pub type Run = fn(&Ctx, &Input) -> Result<()>;

/// An entry point: its name, the seed tags it is meant for (empty: any), the call.
pub struct Entry {
    pub name: &'static str,
    pub tags: &'static [&'static str],
    pub run: Run,
}

/// A kind of input.
pub struct Target {
    pub name: &'static str,
    /// File name the input is written as.
    pub file: &'static str,
    /// Seeds, each with a tag saying what it is.
    pub seeds: Vec<(Item, &'static str)>,
    pub entries: Vec<Entry>,
    /// Whether archives of this target are sometimes read as extracted folders.
    pub folders: bool,
}

fn entry(name: &'static str, tags: &'static [&'static str], run: Run) -> Entry {
    Entry { name, tags, run }
}

// ---------------------------------------------------------------- helpers

/// An output that counts what it is given and keeps nothing.
struct Sink(u64);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn format(input: &Input, k: u32, table: bool) -> Format {
    match input.pick(k, if table { 4 } else { 3 }) {
        0 => Format::Json,
        1 => Format::Csv,
        2 => Format::Parquet,
        _ => Format::Table,
    }
}

fn key(input: &Input, k: u32) -> KeyBy {
    if input.bit(k) {
        KeyBy::Name
    } else {
        KeyBy::Fingerprint
    }
}

fn done(notes: Notes) {
    // Notes are read as a caller would, then dropped.
    let _ = notes.take();
}

fn read_ranges(paths: &[PathBuf], input: &Input) -> Result<()> {
    let notes = Notes::kept();
    let options = source::Options {
        start_end: input.bit(1),
    };
    let mut n = 0u64;
    for p in paths {
        source::read_ranges(p, options, &notes, &mut |r| {
            n += u64::from(r.children) + r.dur_ns.unsigned_abs() % 2;
            Ok(())
        })?;
    }
    done(notes);
    Ok(())
}

fn read_gpu_ranges(paths: &[PathBuf], input: &Input) -> Result<()> {
    let notes = Notes::kept();
    let options = source::Options {
        start_end: input.bit(1),
    };
    for p in paths {
        source::read_gpu_ranges(p, options, &notes, &mut |_| Ok(()))?;
    }
    done(notes);
    Ok(())
}

fn export(paths: &[PathBuf], input: &Input, table: export::Table, hlo: Vec<PathBuf>) -> Result<()> {
    let notes = Notes::kept();
    let options = export::Options {
        table,
        format: format(input, 2, false),
        align: input.bit(4),
        hlo,
        program_key: key(input, 5),
        source: source::Options {
            start_end: input.bit(1),
        },
    };
    export::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn ranges_run(paths: &[PathBuf], input: &Input) -> Result<()> {
    use ranges::{Filters, Matcher};
    let notes = Notes::kept();
    let mut filters = Filters::default();
    match input.pick(6, 4) {
        0 => filters.add_xla_compile(),
        1 => {
            filters.splice = true;
            filters
                .subtree
                .push(Matcher::Regex(regex::Regex::new("^TSL:Xla").unwrap()));
            filters
                .fold
                .push(Matcher::Regex(regex::Regex::new("Pass").unwrap()));
        }
        2 => {
            filters
                .select
                .push(Matcher::Regex(regex::Regex::new("Compile").unwrap()));
            filters
                .collapse
                .push(Matcher::Prefix("TSL:XlaCompileBackend"));
        }
        _ => {}
    }
    let options = ranges::Options {
        filters,
        format: format(input, 2, false),
    };
    ranges::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn compile_run(paths: &[PathBuf], input: &Input) -> Result<()> {
    let notes = Notes::kept();
    let options = compile::Options {
        total: input.bit(1),
        passes: input.bit(2),
        by: match input.pick(3, 3) {
            0 => None,
            1 => Some(compile::Group::Category),
            _ => Some(compile::Group::Name),
        },
        top: input.bit(5).then_some(3),
        threshold: input.bit(6).then_some(90.0),
        format: format(input, 7, true),
    };
    compile::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn modules_run(paths: &[PathBuf], input: &Input) -> Result<()> {
    let notes = Notes::kept();
    let options = modules::Options {
        include_warmup: input.bit(1),
        include_autotuning: input.bit(2),
        format: format(input, 3, true),
        program_key: key(input, 5),
        partial: input.bit(6),
    };
    modules::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn collectives_run(paths: &[PathBuf], input: &Input, records: bool) -> Result<()> {
    let notes = Notes::kept();
    let options = collectives::Options {
        records,
        include_warmup: input.bit(1),
        plot: input.bit(2).then(|| input.dir.join("plot.svg")),
        format: format(input, 3, !records),
        program_key: key(input, 5),
        // The aligned-clock tables and pictures: one of them, or none.
        table: match (input.bit(6), input.bit(7)) {
            (true, true) => Some(collectives::Part::Lateness),
            (true, false) => Some(collectives::Part::WaitHistogram),
            (false, true) => Some(collectives::Part::Instances),
            (false, false) => None,
        },
        wait_plot: input.bit(6).then(|| input.dir.join("wait.svg")),
        lateness_plot: input.bit(7).then(|| input.dir.join("late.svg")),
        partial: input.bit(8),
        programs: if input.bit(10) {
            njx::derived::programs::ProgramFilter::new(&[], &["jit_f".into()])
        } else {
            Default::default()
        },
    };
    collectives::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn report_run(paths: &[PathBuf], input: &Input, hlo: Vec<PathBuf>) -> Result<()> {
    let notes = Notes::kept();
    let options = njx::report::Options {
        style: if input.bit(1) {
            njx::report::Style::Json
        } else {
            njx::report::Style::Text
        },
        rows: input.pick(2, 4) as usize,
        hlo,
        partial: input.bit(3),
        top_modules: if input.bit(6) { 0.5 } else { 0.99 },
        each_note: input.bit(5),
        programs: Default::default(),
        // Every threshold at 0 makes every rule fire on what it sees.
        thresholds: if input.bit(7) {
            let zero: Vec<String> = (njx::report::findings::thresholds::NAMES.iter())
                .map(|(n, _, _)| format!("{n}=0"))
                .collect();
            njx::report::findings::Thresholds::parse(&zero).unwrap()
        } else {
            Default::default()
        },
        step_program: None,
    };
    let mut page = Sink(0);
    let page = input.bit(4).then_some(&mut page as &mut dyn std::io::Write);
    njx::report::run(&options, paths, &mut Sink(0), page, &notes)?;
    done(notes);
    Ok(())
}

/// njx-diff of `before` against `after`, by what `input` picks; or one side's partial.
fn diff_run(before: &[PathBuf], after: &[PathBuf], input: &Input, hlo: Vec<PathBuf>) -> Result<()> {
    use njx::diff::{By, Gate, Options, Rules};
    let notes = Notes::kept();
    let by = [
        By::Program,
        By::Instruction,
        By::Collective,
        By::Kernel,
        By::CompilePass,
    ][input.pick(1, 5) as usize];
    let options = Options {
        by,
        format: [Format::Table, Format::Json, Format::Csv, Format::Parquet]
            [input.pick(4, 4) as usize],
        rules: Rules {
            alpha: 0.05,
            min_change: if input.bit(6) { 0.0 } else { 1.0 },
            min_samples: 2 + input.pick(7, 3),
        },
        gates: if input.bit(8) {
            vec![Gate::Key(1.0), Gate::Total(0.0)]
        } else {
            Vec::new()
        },
        top: input.bit(9).then_some(3),
        title: "fuzz".into(),
        hlo,
        partial: input.bit(3),
        programs: Default::default(),
    };
    if options.partial {
        njx::diff::partial(&options, before, &mut Sink(0), &notes)?;
    } else {
        let mut folded = Sink(0);
        let mut svg = Sink(0);
        let f = input
            .bit(5)
            .then_some(&mut folded as &mut dyn std::io::Write);
        let s = input.bit(11).then_some(&mut svg as &mut dyn std::io::Write);
        njx::diff::run(&options, before, after, &mut Sink(0), f, s, &notes)?;
    }
    done(notes);
    Ok(())
}

fn kernels_run(paths: &[PathBuf], input: &Input) -> Result<()> {
    use njx::analysis::kernels::{By, Options, Table};
    let notes = Notes::kept();
    let options = Options {
        by: [
            By::Name,
            By::ShortName,
            By::Range,
            By::Module,
            By::Thunk,
            By::Graph,
            By::Device,
        ][input.pick(3, 7) as usize],
        format: format(input, 6, true),
        table: if input.bit(7) {
            Table::Memops
        } else {
            Table::Kernels
        },
        per_device: input.bit(12),
    };
    njx::analysis::kernels::run(&options, paths, &mut Sink(0), &notes)?;
    done(notes);
    Ok(())
}

fn flamefold_run(
    paths: &[PathBuf],
    input: &Input,
    by: flamefold::By,
    hlo: Vec<PathBuf>,
) -> Result<()> {
    let notes = Notes::kept();
    let options = flamefold::Options {
        by,
        hlo,
        top_modules: if input.bit(1) { 0.99 } else { 1.0 },
        include_warmup: input.bit(2),
        full_names: input.bit(6),
        unit: flamefold::Unit::Ns,
        partial: false,
        diff: None,
        normalize: false,
        programs: Default::default(),
    };
    let folded = flamefold::fold(&options, paths, &notes)?;
    let unit = *[
        flamefold::Unit::Ns,
        flamefold::Unit::Us,
        flamefold::Unit::Ms,
    ]
    .get(input.pick(3, 3) as usize)
    .unwrap_or(&flamefold::Unit::Ns);
    let lines = folded.lines(unit);
    let _ = folded.total_ns();
    if !lines.is_empty() && input.bit(5) {
        svg(&lines)?;
    }
    done(notes);
    Ok(())
}

fn gpu_by(input: &Input, k: u32) -> flamefold::By {
    use flamefold::By;
    *[By::Source, By::OpName, By::Opcode, By::Module, By::Device]
        .get(input.pick(k, 5) as usize)
        .unwrap_or(&By::Module)
}

fn svg(lines: &[String]) -> Result<()> {
    let options = flamefold::SvgOptions {
        title: "fuzz".into(),
        width: 1200,
        count_name: "ns".into(),
        idle: false,
        diff: false,
        full_names: false,
    };
    flamefold::render_svg(lines, &options, Sink(0))
}

fn profiles(path: &Path) -> Result<()> {
    let notes = Notes::kept();
    let mut p = source::Profiles::open(path, &Progress::none())?;
    let _ = p.is_empty();
    let _ = p.processes_known();
    p.processes()?;
    for i in 0..p.len() {
        let t = p.tables(i, &notes)?;
        let _ = (t.gpu_ranges.len(), t.compiled.len());
    }
    if let Some(archive) = p.archive() {
        let dumps = Dumps::new(archive);
        let _ = dumps.is_empty();
    }
    done(notes);
    Ok(())
}

/// Every query of a decoded module that the tools make; the first error is returned
/// after every instruction was tried.
pub fn walk(m: &HloModule) -> Result<()> {
    let mut first: Option<njx::Error> = None;
    let mut keep = |r: Result<()>| {
        if let Err(e) = r {
            first.get_or_insert(e);
        }
    };
    let _ = (m.name(), m.id(), m.fingerprint(), m.entry_id(), m.place());
    let _ = m.entry().map(|c| c.name.len());
    keep(m.buffer_assignment().map(|_| ()));
    for c in m.computations() {
        let _ = m.computation(c.id);
        let _ = m.computation_instructions(c.id).map(Iterator::count);
    }
    for inst in m.instructions() {
        let _ = (
            inst.name(),
            inst.opcode(),
            inst.op_name(),
            inst.stack_frame_id(),
        );
        let _ = inst.computation().name.len();
        let _ = inst.module().name();
        let _ = m.instruction(inst.name());
        keep(inst.proto().map(|_| ()));
        keep(inst.on_host().map(|_| ()));
        keep(inst.operands().map(|_| ()));
        keep(inst.called_instructions().map(|_| ()));
        keep(inst.is_communication().map(|_| ()));
        keep(inst.collective().map(|c| {
            if let Some(c) = c {
                let _ = (
                    c.bandwidth_factors(),
                    c.kind.as_str(),
                    c.group_size,
                    c.message_bytes,
                );
            }
        }));
        keep(inst.stack_frames().map(|frames| {
            for f in frames {
                let _ = f.to_string();
            }
        }));
        if let Ok(Some(shape)) = inst.shape() {
            let _ = njx::hlo::byte_size(&shape);
        }
    }
    keep(m.collective_order().map(|order| {
        if let njx::hlo::CollectiveOrder::Known(insts) = order {
            let _ = insts.iter().map(|i| i.name().len()).sum::<usize>();
        }
    }));
    let _ = ProgramKey::of(m, m.id().unsigned_abs()).record();
    match first {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Reads every HLO dump of an archive or dump folder, as the tools find them.
fn dumps(path: &Path) -> Result<()> {
    let mut archive = source::open_dumps(path, &Progress::none())?;
    let _ = source::is_archive(path);
    let mut dumps = Dumps::new(&archive);
    let stem = source::profile_name(path);
    let mut last = Ok(());
    for (id, name) in [(7u64, "jit_step"), (3, "jit_f")] {
        let _ = dumps.copies(id, name).count();
        match dumps.program_key(&mut archive, &stem, Some(id), name) {
            Ok(k) => {
                let _ = k.record();
            }
            Err(e) => last = Err(e),
        }
        match dumps.load(&mut archive, &stem, id, name) {
            Ok(Some(m)) => {
                if let Err(e) = walk(&m) {
                    last = Err(e);
                }
            }
            Ok(None) => {}
            Err(e) => last = Err(e),
        }
    }
    let members: Vec<String> = archive.members().to_vec();
    for member in members {
        let file = member.rsplit('/').next().unwrap_or(&member);
        if njx::hlo::parse_dump_name(file).is_some() {
            match dumps.read(&mut archive, &member) {
                Ok(m) => {
                    let _ = walk(&m);
                }
                Err(e) => last = Err(e),
            }
        }
    }
    let _ = dumps.take_loaded();
    last
}

/// njx-heap's options, picked from the input's hash: every view, every format, a
/// program filter now and then.
fn heap_options(input: &Input) -> heap::Options {
    heap::Options {
        view: match input.pick(2, 4) {
            0 => heap::View::Peak,
            1 => heap::View::Buffers,
            2 => heap::View::ByOpName,
            _ => heap::View::BySource,
        },
        format: format(input, 4, true),
        program: match input.pick(6, 8) {
            0 => Some("jit_step".into()),
            1 => Some("7".into()),
            _ => None,
        },
        svg: None,
    }
}

/// Writes the heaps as njx-heap does (the view and format asked for, the curves' SVG text).
fn heap_write(heaps: &[heap::ProgramHeap], options: &heap::Options, input: &Input) -> Result<()> {
    heap::write(options, heaps, &mut Sink(0))?;
    let curves = heap::curves(heaps);
    if input.bit(9) && !curves.is_empty() {
        let _ = njx::output::charts::heap_svg_text(&curves)?;
    }
    Ok(())
}

/// njx-heap on the dumps of `path` (an archive or a dump folder), in-process.
fn heap_run(path: &Path, input: &Input) -> Result<()> {
    let notes = Notes::kept();
    let options = heap_options(input);
    let heaps = heap::read(&p(path), &options, &notes);
    // No dump of the program asked for is bad usage, not a finding.
    let heaps = match heaps {
        Err(njx::Error::Usage(_)) if options.program.is_some() => return Ok(()),
        h => h?,
    };
    heap_write(&heaps, &options, input)?;
    done(notes);
    Ok(())
}

/// The replay alone on every trace of the input's buffer assignment, buffers counted at
/// their logical sizes (whatever they are: the replay's own checks are what is fuzzed).
fn heap_replay(input: &Input) -> Result<()> {
    let file = std::fs::File::open(input.path).map_err(|e| njx::Error::io("input", e))?;
    let m = HloModule::read("input", source::decompress("input", BufReader::new(file))?)?;
    let Some(ba) = m.buffer_assignment()? else {
        return Ok(());
    };
    let sizes: std::collections::HashMap<i64, i64> =
        ba.logical_buffers.iter().map(|b| (b.id, b.size)).collect();
    let mut last = Ok(());
    for trace in &ba.heap_simulator_traces {
        match heap::replay(&trace.events, |id| sizes.get(&id).copied()) {
            Ok(r) => {
                let counted: i64 = r.live.iter().map(|(_, b)| *b).sum();
                assert_eq!(counted, r.peak, "the live set at the peak adds up to it");
                assert_eq!(r.totals.len(), trace.events.len());
                assert_eq!(
                    r.peak_event.map(|e| r.totals[e]),
                    (r.peak > 0).then_some(r.peak)
                );
            }
            Err(e) => last = Err(njx::Error::data("input", e)),
        }
    }
    last
}

/// An archive built from rank 0's members with `name` replaced by (or added as) the input.
pub fn in_archive(ctx: &Ctx, input: &Input, name: &str) -> PathBuf {
    let mut members: Vec<Member> = ctx
        .base
        .iter()
        .filter(|m| m.name != name)
        .cloned()
        .collect();
    members.push(Member {
        name: name.to_string(),
        item: Item::raw(input.bytes.to_vec()),
        stored: input.bit(9),
    });
    let bytes = crate::zipper::build(&members).expect("archive of valid names");
    let path = input.dir.join("rank0.zip");
    std::fs::write(&path, bytes).expect("write archive");
    path
}

fn p(path: &Path) -> Vec<PathBuf> {
    vec![path.to_path_buf()]
}

/// What every archive-level entry runs, on the archive at `path`.
fn archive_analysis(ctx: &Ctx, path: &Path, input: &Input) -> Result<()> {
    match input.pick(10, 8) {
        0 => export(&p(path), input, export::Table::Modules, Vec::new()),
        1 => export(&p(path), input, export::Table::Thunks, Vec::new()),
        2 => export(
            &[path.to_path_buf(), ctx.rank1.clone()],
            input,
            export::Table::Thunks,
            Vec::new(),
        ),
        3 => collectives_run(
            &[path.to_path_buf(), ctx.rank1.clone()],
            input,
            input.bit(13),
        ),
        4 => modules_run(&[path.to_path_buf(), ctx.rank1.clone()], input),
        5 => report_run(&[path.to_path_buf(), ctx.rank1.clone()], input, Vec::new()),
        6 => diff_run(
            &p(path),
            std::slice::from_ref(&ctx.rank1),
            input,
            Vec::new(),
        ),
        _ => flamefold_run(&p(path), input, gpu_by(input, 13), Vec::new()),
    }
}

// ---------------------------------------------------------------- targets

/// Every target, with its seeds made in `dir`, and the companion files.
pub fn all(dir: &Path) -> (Ctx, Vec<Target>) {
    let setup = dir.join("setup");
    std::fs::create_dir_all(&setup).expect("setup folder");
    let write = |name: &str, bytes: &[u8]| -> PathBuf {
        let path = setup.join(name);
        std::fs::write(&path, bytes).expect("write seed");
        path
    };
    // Valid companions.
    let hlo_dir = setup.join("xla_dump");
    std::fs::create_dir_all(&hlo_dir).expect("dump folder");
    std::fs::write(
        hlo_dir.join(DUMP7),
        prost::Message::encode_to_vec(&seeds::hlo_step()),
    )
    .unwrap();
    std::fs::write(
        hlo_dir.join(DUMP3),
        prost::Message::encode_to_vec(&seeds::hlo_f()),
    )
    .unwrap();
    let base = seeds::rank_members(0, false, false);
    let rank0 = write("rank0.zip", &crate::zipper::build(&base).unwrap());
    let rank1 = write(
        "rank1.zip",
        &crate::zipper::build(&seeds::rank_members(1, false, false)).unwrap(),
    );
    let sqlite_path = setup.join("xla.sqlite");
    seeds::sqlite_xla(&sqlite_path, true, false, true);
    let sqlite = std::fs::read(&sqlite_path).unwrap();
    let sqlite2_path = setup.join("xla2.sqlite");
    seeds::sqlite_xla(&sqlite2_path, false, true, false);
    let sqlite2 = std::fs::read(&sqlite2_path).unwrap();
    let compile_path = setup.join("compile.sqlite");
    seeds::sqlite_compile(&compile_path);
    let sqlite_compile = std::fs::read(&compile_path).unwrap();
    let payloads_path = setup.join("payloads.sqlite");
    drop(crate::common::payloads::payload_export(&payloads_path));
    let sqlite_payloads = std::fs::read(&payloads_path).unwrap();
    let bare_path = setup.join("bare.sqlite");
    drop(crate::common::nsys_sqlite::NsysDb::with_tables(
        &bare_path,
        &[
            "META_DATA_EXPORT",
            "CUPTI_ACTIVITY_KIND_KERNEL",
            "StringIds",
        ],
    ));
    let bare = std::fs::read(&bare_path).unwrap();

    // Records, written by the library itself.
    let compile_csv = crate::common::COMPILE_CSV.to_string();
    let generated = seeds::generated_csv(1, 3, 6, 3, 2);
    let deep = seeds::generated_csv(2, 1, 14, 2, 1);
    let wide = seeds::generated_csv(3, 2, 4, 6, 3);
    let csv_path = write("compile.csv", compile_csv.as_bytes());
    let gen_path = write("generated.csv", generated.as_bytes());
    let archives = vec![rank0.clone(), rank1.clone()];
    let records = |paths: &[PathBuf], table: export::Table, format: Format| -> Vec<u8> {
        let options = export::Options {
            table,
            format,
            align: true,
            hlo: Vec::new(),
            program_key: KeyBy::Fingerprint,
            source: source::Options::default(),
        };
        let mut out = Vec::new();
        export::run(&options, paths, &mut out, &Notes::kept()).expect("seed records export");
        out
    };
    let ranges_json = records(
        std::slice::from_ref(&csv_path),
        export::Table::Ranges,
        Format::Json,
    );
    let ranges_csv = records(
        std::slice::from_ref(&gen_path),
        export::Table::Ranges,
        Format::Csv,
    );
    let ranges_gen = records(&[gen_path], export::Table::Ranges, Format::Json);
    let modules_json = records(&archives, export::Table::Modules, Format::Json);
    let modules_csv = records(&archives, export::Table::Modules, Format::Csv);
    let thunks_json = records(&archives, export::Table::Thunks, Format::Json);
    let thunks_csv = records(&archives, export::Table::Thunks, Format::Csv);
    let thunks = write("thunks.jsonl", &thunks_json);
    let partial = |kind: &str| -> Vec<u8> {
        let notes = Notes::kept();
        let mut out = Vec::new();
        match kind {
            "modules" => {
                let acc = modules::read(&archives, KeyBy::Fingerprint, &notes).expect("partial");
                njx::derived::partial::write(&mut out, &acc).unwrap();
            }
            "collectives" => {
                let acc =
                    collectives::aggregate(&archives, KeyBy::Fingerprint, &notes).expect("partial");
                njx::derived::partial::write(&mut out, &acc).unwrap();
            }
            "report" => {
                let options = njx::report::Options {
                    style: njx::report::Style::Text,
                    rows: 5,
                    hlo: Vec::new(),
                    partial: true,
                    top_modules: 0.99,
                    each_note: true,
                    programs: Default::default(),
                    thresholds: Default::default(),
                    step_program: None,
                };
                njx::report::run(&options, &archives, &mut out, None, &notes).expect("partial");
            }
            _ => {
                let options = flamefold::Options {
                    by: flamefold::By::Source,
                    hlo: Vec::new(),
                    top_modules: 0.99,
                    include_warmup: false,
                    full_names: false,
                    unit: flamefold::Unit::Ns,
                    partial: false,
                    diff: None,
                    normalize: false,
                    programs: Default::default(),
                };
                let time = flamefold::partial(&options, &archives, &notes).expect("partial");
                njx::derived::partial::write(&mut out, &time).unwrap();
            }
        }
        // Written gzip-compressed; mutated as the JSON line they hold (read as well),
        // where a change is not all caught by the CRC.
        let mut json = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&out[..]), &mut json)
            .expect("a gzip partial");
        json
    };
    let folded_lines = |paths: &[PathBuf], by: flamefold::By| -> Vec<u8> {
        let options = flamefold::Options {
            by,
            hlo: Vec::new(),
            top_modules: 0.99,
            include_warmup: false,
            full_names: false,
            unit: flamefold::Unit::Ns,
            partial: false,
            diff: None,
            normalize: false,
            programs: Default::default(),
        };
        let f = flamefold::fold(&options, paths, &Notes::kept()).expect("seed fold");
        let mut out = f.lines(flamefold::Unit::Ns).join("\n");
        out.push('\n');
        out.into_bytes()
    };
    let folded_stack = folded_lines(std::slice::from_ref(&csv_path), flamefold::By::Stack);
    let folded_module = folded_lines(std::slice::from_ref(&thunks), flamefold::By::Module);
    let folded = write("stacks.folded", &folded_stack);

    let ctx = Ctx {
        hlo_dir: hlo_dir.clone(),
        rank1,
        thunks,
        folded,
        base: base.clone(),
        sqlite: sqlite.clone(),
    };

    let text = |b: &[u8]| Item::text(b.to_vec());
    let mut targets = Vec::new();

    targets.push(Target {
        name: "pushpop-csv",
        file: "trace.csv",
        seeds: vec![
            (Item::text(compile_csv.clone()), "range"),
            (Item::text(generated.clone()), "range"),
            (Item::text(deep.clone()), "range"),
            (Item::gzip(Item::text(compile_csv.clone())), "range"),
            (Item::xz(Item::text(wide.clone())), "range"),
            (Item::text(seeds::rank_pushpop_csv(0)), "range"),
        ],
        entries: vec![
            entry("read-ranges", &[], |_, i| read_ranges(&p(i.path), i)),
            entry("export-ranges", &[], |_, i| {
                export(&p(i.path), i, export::Table::Ranges, Vec::new())
            }),
            entry("ranges", &[], |_, i| ranges_run(&p(i.path), i)),
            entry("compile-summary", &[], |_, i| compile_run(&p(i.path), i)),
            entry("flamefold-stack", &[], |_, i| {
                flamefold_run(&p(i.path), i, flamefold::By::Stack, Vec::new())
            }),
            entry("in-archive", &[], |c, i| {
                let path = in_archive(c, i, seeds::PUSHPOP_XZ);
                match i.pick(20, 3) {
                    0 => read_ranges(&p(&path), i),
                    1 => compile_run(&p(&path), i),
                    _ => archive_analysis(c, &path, i),
                }
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "records",
        file: "records.jsonl",
        seeds: vec![
            (text(&ranges_json), "range"),
            (text(&ranges_csv), "range"),
            (Item::xz(text(&ranges_gen)), "range"),
            (text(&modules_json), "module"),
            (text(&modules_csv), "module"),
            (Item::gzip(text(&modules_json)), "module"),
            (text(&thunks_json), "thunk"),
            (text(&thunks_csv), "thunk"),
            (text(&partial("modules")), "partial-modules"),
            (text(&partial("collectives")), "partial-collectives"),
            (text(&partial("gpu-time")), "partial-gpu"),
            (text(&partial("report")), "partial-report"),
            (Item::gzip(text(&partial("modules"))), "partial-modules"),
        ],
        entries: vec![
            entry("read-ranges", &["range"], |_, i| read_ranges(&p(i.path), i)),
            entry("ranges", &["range"], |_, i| ranges_run(&p(i.path), i)),
            entry("compile-summary", &["range"], |_, i| {
                compile_run(&p(i.path), i)
            }),
            entry("flamefold-stack", &["range"], |_, i| {
                flamefold_run(&p(i.path), i, flamefold::By::Stack, Vec::new())
            }),
            entry("modules", &["module", "partial-modules"], |_, i| {
                modules_run(&p(i.path), i)
            }),
            entry("collectives", &["thunk", "partial-collectives"], |_, i| {
                collectives_run(&p(i.path), i, false)
            }),
            entry("collectives-records", &["thunk"], |_, i| {
                collectives_run(&p(i.path), i, true)
            }),
            entry("flamefold-gpu", &["thunk", "partial-gpu"], |c, i| {
                flamefold_run(&p(i.path), i, gpu_by(i, 6), vec![c.hlo_dir.clone()])
            }),
            entry("report", &["module", "thunk", "partial-report"], |c, i| {
                report_run(&p(i.path), i, vec![c.hlo_dir.clone()])
            }),
            entry("diff", &["module", "thunk", "range"], |c, i| {
                diff_run(
                    &p(i.path),
                    std::slice::from_ref(&c.thunks),
                    i,
                    vec![c.hlo_dir.clone()],
                )
            }),
            // records and partial results merged with a profile's executions
            entry(
                "report-with-archive",
                &["module", "thunk", "partial-report"],
                |c, i| report_run(&[i.path.to_path_buf(), c.rank1.clone()], i, Vec::new()),
            ),
            entry(
                "modules-with-archive",
                &["module", "partial-modules"],
                |c, i| modules_run(&[i.path.to_path_buf(), c.rank1.clone()], i),
            ),
            entry(
                "collectives-with-archive",
                &["thunk", "partial-collectives"],
                |c, i| collectives_run(&[i.path.to_path_buf(), c.rank1.clone()], i, false),
            ),
            entry(
                "flamefold-with-archive",
                &["thunk", "partial-gpu"],
                |c, i| {
                    let by = if i.bit(8) {
                        flamefold::By::Source
                    } else {
                        gpu_by(i, 9)
                    };
                    flamefold_run(&[i.path.to_path_buf(), c.rank1.clone()], i, by, Vec::new())
                },
            ),
            entry("split-inputs", &["module", "thunk"], |_, i| {
                let thunks = !i.bytes.windows(8).any(|w| w == b"\"thunks\"")
                    && !i.bytes.windows(7).any(|w| w == b",thunks");
                let mut n = 0u64;
                source::split_inputs(&p(i.path), "thunks", &Progress::none(), &mut |s| {
                    if thunks {
                        s.read::<Thunk>(&mut |_| {
                            n += 1;
                            Ok(())
                        })?;
                    } else {
                        s.read::<Module>(&mut |_| {
                            n += 1;
                            Ok(())
                        })?;
                    }
                    Ok(())
                })?;
                Ok(())
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "pushpop-parquet",
        file: PUSHPOP_PQ,
        seeds: vec![
            (Item::table(seeds::pushpop_table(&compile_csv)), "range"),
            (Item::table(seeds::pushpop_table(&generated)), "range"),
            (
                Item::table({
                    let mut t = seeds::pushpop_table(&seeds::rank_pushpop_csv(0));
                    t.props = 1;
                    t.rows_per_group = 2;
                    t
                }),
                "range",
            ),
        ],
        entries: vec![
            entry("read-ranges", &[], |_, i| read_ranges(&p(i.path), i)),
            entry("compile-summary", &[], |_, i| compile_run(&p(i.path), i)),
            entry("ranges", &[], |_, i| ranges_run(&p(i.path), i)),
            entry("in-archive", &[], |c, i| {
                let path = in_archive(c, i, PUSHPOP_PQ);
                if i.bit(20) {
                    read_ranges(&p(&path), i)
                } else {
                    archive_analysis(c, &path, i)
                }
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "gpu-parquet",
        file: "trace.parquet",
        seeds: vec![
            (Item::table(seeds::gpu_first_form(0)), "gpu"),
            (Item::table(seeds::gpu_first_form(1)), "gpu"),
            (Item::table(seeds::gpu_first_form_2026(0)), "gpu"),
            (
                Item::table(seeds::gpu_recipe_form(0, false, false, 1 << 20)),
                "gpu",
            ),
            (Item::table(seeds::gpu_recipe_form(0, true, true, 3)), "gpu"),
            (
                Item::table({
                    let mut t = seeds::gpu_first_form(0);
                    t.props = 1;
                    t
                }),
                "gpu",
            ),
        ],
        entries: vec![
            entry("read-gpu-ranges", &[], |_, i| {
                read_gpu_ranges(&p(i.path), i)
            }),
            entry("export-gpu-ranges", &[], |_, i| {
                export(&p(i.path), i, export::Table::GpuRanges, Vec::new())
            }),
            entry("in-archive", &[], |c, i| {
                let path = in_archive(c, i, GPU_PROJ);
                archive_analysis(c, &path, i)
            }),
            entry("in-archive-profiles", &[], |c, i| {
                profiles(&in_archive(c, i, GPU_PROJ))
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "device-metadata",
        file: DEVICES,
        seeds: vec![
            (Item::table(seeds::device_metadata(1, false)), "devices"),
            (Item::table(seeds::device_metadata(8, true)), "devices"),
        ],
        entries: vec![
            entry("read-gpus", &[], |_, i| {
                let file = std::fs::File::open(i.path).map_err(|e| njx::Error::io("input", e))?;
                let _ = source::devices::gpus::from_parquet("input", file)?;
                Ok(())
            }),
            entry("in-archive-report", &[], |c, i| {
                let path = in_archive(c, i, DEVICES);
                report_run(&[path, c.rank1.clone()], i, Vec::new())
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "thread-metadata",
        file: THREADS,
        seeds: vec![
            (Item::table(seeds::thread_metadata(0, false)), "threads"),
            (Item::table(seeds::thread_metadata(1, true)), "threads"),
            (Item::table(seeds::thread_metadata_wide()), "threads"),
        ],
        entries: vec![
            entry("read-launchers", &[], |_, i| {
                let file = std::fs::File::open(i.path).map_err(|e| njx::Error::io("input", e))?;
                let launchers = source::devices::parquet::read_launchers("input", file)?;
                let _ = source::devices::Launchers::named(launchers);
                Ok(())
            }),
            entry("in-archive", &[], |c, i| {
                let path = in_archive(c, i, THREADS);
                archive_analysis(c, &path, i)
            }),
            entry("in-archive-profiles", &[], |c, i| {
                profiles(&in_archive(c, i, THREADS))
            }),
        ],
        folders: false,
    });

    // The overwrite rule (issue 44) judges an existing output by its first bytes: any
    // bytes give a verdict, never a panic, and the file is only read.
    targets.push(Target {
        name: "output-guard",
        file: "out.html",
        seeds: vec![
            (Item::proto(seeds::hlo_step()), "dump"),
            (Item::xz(Item::proto(seeds::hlo_f())), "dump"),
            (Item::zip(seeds::rank_members(0, false, false)), "archive"),
            (
                Item::text("{\"njx_partial\":\"modules\",\"version\":3,\"data\":{}}\n"),
                "partial",
            ),
            (Item::text("<!DOCTYPE html>\n<title>page</title>\n"), "page"),
        ],
        entries: vec![entry("check", &[], |_, i| {
            let before = std::fs::read(i.path).map_err(|e| njx::Error::io("input", e))?;
            let verdict = njx::output::guard::check("-o", i.path, false);
            let after = std::fs::read(i.path).map_err(|e| njx::Error::io("input", e))?;
            assert_eq!(before, after, "the guard changed the file it judged");
            match verdict {
                Ok(()) | Err(njx::Error::Usage(_)) => Ok(()),
                Err(e) => panic!("the guard failed otherwise than by refusing: {e}"),
            }
        })],
        folders: false,
    });

    // `njx TOOL` (issue 44): whatever the name, the program run is one of the tools, by
    // its own name, beside njx or on PATH; never a path the name makes up.
    targets.push(Target {
        name: "launcher",
        file: "tool-name",
        seeds: vec![
            (Item::text("report"), "short"),
            (Item::text("njx-compile-summary"), "full"),
            (Item::text("../bin/njx-report"), "path"),
        ],
        entries: vec![entry("program-of", &[], |_, i| {
            let bytes = std::fs::read(i.path).map_err(|e| njx::Error::io("input", e))?;
            let name = String::from_utf8_lossy(&bytes);
            let beside = i.path.parent();
            if let Some(program) = njx::cmd::launcher::program_of(&name, beside) {
                let file = program.file_name().unwrap().to_string_lossy().to_string();
                assert!(
                    njx::cmd::launcher::tools().iter().any(|(t, _)| *t == file),
                    "{name:?} ran {}",
                    program.display()
                );
                assert!(
                    program == std::path::Path::new(&file) || program.parent() == beside,
                    "{name:?} ran {}",
                    program.display()
                );
            }
            Ok(())
        })],
        folders: false,
    });

    targets.push(Target {
        name: "hlo",
        file: DUMP7,
        seeds: vec![
            (Item::proto(seeds::hlo_step()), "step"),
            (Item::xz(Item::proto(seeds::hlo_step())), "step"),
            (Item::proto(seeds::hlo_f()), "f"),
            (Item::xz(Item::proto(seeds::hlo_f())), "f"),
        ],
        entries: vec![
            entry("decode-walk", &[], |_, i| {
                let file = std::fs::File::open(i.path).map_err(|e| njx::Error::io("input", e))?;
                let reader = source::decompress("input", BufReader::new(file))?;
                let m = HloModule::read("input", reader)?;
                walk(&m)
            }),
            entry("dump-folder", &[], |_, i| {
                let dir = i.dir.join("xla_dump");
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                // under the name of program 7 or of program 3: one of them is the dump's
                let name = if i.bit(1) { DUMP7 } else { DUMP3 };
                std::fs::write(dir.join(name), i.bytes).unwrap();
                dumps(&dir)
            }),
            entry("flamefold-hlo", &[], |c, i| {
                let dir = i.dir.join("xla_dump");
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(DUMP7), i.bytes).unwrap();
                flamefold_run(&p(&c.thunks), i, gpu_by(i, 6), vec![dir])
            }),
            entry("in-archive", &["step"], |c, i| {
                let path = in_archive(c, i, &format!("dump/{DUMP7}.xz"));
                if i.bit(20) {
                    dumps(&path)
                } else {
                    archive_analysis(c, &path, i)
                }
            }),
            entry("in-capture-archive", &["f"], |c, i| {
                let members = vec![
                    Member {
                        name: "report.sqlite".into(),
                        item: Item::raw(c.sqlite.clone()),
                        stored: false,
                    },
                    Member {
                        name: format!("dump/{DUMP3}.xz"),
                        item: Item::raw(i.bytes.to_vec()),
                        stored: true,
                    },
                ];
                let path = i.dir.join("capture.zip");
                std::fs::write(&path, crate::zipper::build(&members).unwrap()).unwrap();
                match i.pick(10, 3) {
                    0 => export(&p(&path), i, export::Table::Thunks, Vec::new()),
                    1 => collectives_run(&p(&path), i, i.bit(13)),
                    _ => flamefold_run(&p(&path), i, gpu_by(i, 13), Vec::new()),
                }
            }),
        ],
        folders: false,
    });

    // njx-heap: XLA's buffer assignment and heap simulator traces replayed (the
    // assignment's own checks, the replay, the live buffers' rows, every view).
    targets.push(Target {
        name: "heap",
        file: DUMP7,
        seeds: vec![
            (Item::proto(seeds::hlo_heap()), "heap"),
            (Item::xz(Item::proto(seeds::hlo_heap())), "heap-xz"),
        ],
        entries: vec![
            entry("program-heap", &[], |_, i| {
                let file = std::fs::File::open(i.path).map_err(|e| njx::Error::io("input", e))?;
                let reader = source::decompress("input", BufReader::new(file))?;
                let m = HloModule::read("input", reader)?;
                let notes = Notes::kept();
                let h = heap::program_heap(&m, &notes)?;
                heap_write(&[h], &heap_options(i), i)?;
                done(notes);
                Ok(())
            }),
            entry("replay", &[], |_, i| heap_replay(i)),
            entry("dump-folder", &[], |_, i| {
                let dir = i.dir.join("xla_dump");
                let _ = std::fs::remove_dir_all(&dir);
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(dir.join(DUMP7), i.bytes).unwrap();
                heap_run(&dir, i)
            }),
            entry("in-archive", &["heap-xz"], |c, i| {
                heap_run(&in_archive(c, i, &format!("dump/{DUMP7}.xz")), i)
            }),
        ],
        folders: false,
    });

    targets.push(Target {
        name: "sqlite",
        file: "report.sqlite",
        seeds: vec![
            (Item::sqlite(sqlite.clone()), "xla"),
            (Item::sqlite(sqlite2.clone()), "xla"),
            (Item::sqlite(sqlite_compile.clone()), "compile"),
            (Item::sqlite(bare), "bare"),
            (Item::sqlite(sqlite_payloads), "payloads"),
        ],
        entries: vec![
            entry("read-ranges", &[], |_, i| read_ranges(&p(i.path), i)),
            entry("read-gpu-ranges", &[], |_, i| {
                read_gpu_ranges(&p(i.path), i)
            }),
            entry("profiles", &[], |_, i| profiles(i.path)),
            // NVTX payloads: XLA's and NCCL's schemas and blobs (and none, in the others).
            entry("export-payloads", &[], |_, i| {
                export(&p(i.path), i, export::Table::Payloads, Vec::new())
            }),
            entry("export-modules", &["xla"], |c, i| {
                export(
                    &p(i.path),
                    i,
                    export::Table::Modules,
                    vec![c.hlo_dir.clone()],
                )
            }),
            entry("export-thunks", &["xla"], |c, i| {
                export(
                    &p(i.path),
                    i,
                    export::Table::Thunks,
                    vec![c.hlo_dir.clone()],
                )
            }),
            entry("modules", &["xla"], |_, i| modules_run(&p(i.path), i)),
            entry("report", &[], |c, i| {
                report_run(&p(i.path), i, vec![c.hlo_dir.clone()])
            }),
            entry("collectives", &["xla"], |_, i| {
                collectives_run(&p(i.path), i, i.bit(7))
            }),
            // Kernels and memory operations with their launching call, NVTX range and
            // XLA module and thunk (the seed launches them inside module and thunk ranges).
            entry("export-kernels", &["xla"], |_, i| {
                let table = if i.bit(7) {
                    export::Table::Memops
                } else {
                    export::Table::Kernels
                };
                export(&p(i.path), i, table, Vec::new())
            }),
            entry("kernels", &["xla"], |_, i| kernels_run(&p(i.path), i)),
            entry("diff", &["xla", "compile"], |_, i| {
                diff_run(&p(i.path), &p(i.path), i, Vec::new())
            }),
            entry("compile-summary", &["compile"], |_, i| {
                compile_run(&p(i.path), i)
            }),
            entry("ranges", &["compile"], |_, i| ranges_run(&p(i.path), i)),
            entry("flamefold", &[], |c, i| {
                let by = if i.bit(7) {
                    flamefold::By::Stack
                } else {
                    gpu_by(i, 8)
                };
                flamefold_run(&p(i.path), i, by, vec![c.hlo_dir.clone()])
            }),
            entry("in-capture-archive", &["xla"], |_, i| {
                let members = vec![
                    Member {
                        name: "report.sqlite".into(),
                        item: Item::raw(i.bytes.to_vec()),
                        stored: i.bit(9),
                    },
                    Member {
                        name: format!("dump/{DUMP3}.xz"),
                        item: Item::xz(Item::proto(seeds::hlo_f())),
                        stored: true,
                    },
                ];
                let path = i.dir.join("capture.zip");
                std::fs::write(&path, crate::zipper::build(&members).unwrap()).unwrap();
                match i.pick(10, 3) {
                    0 => read_ranges(&p(&path), i),
                    1 => export(&p(&path), i, export::Table::Thunks, Vec::new()),
                    _ => profiles(&path),
                }
            }),
        ],
        folders: false,
    });

    let zip_seed = |members: Vec<Member>| Item::zip(members);
    let mut no_gpu = seeds::rank_members(0, false, false);
    no_gpu.retain(|m| m.name != GPU_PROJ);
    targets.push(Target {
        name: "zip",
        file: "rank0.zip",
        seeds: vec![
            (zip_seed(seeds::rank_members(0, false, false)), "archive"),
            (zip_seed(seeds::rank_members(0, true, true)), "archive"),
            (zip_seed(seeds::combine_members()), "archive"),
            (zip_seed(seeds::capture_members(&sqlite)), "archive"),
            (zip_seed(no_gpu), "archive"),
            (zip_seed(Vec::new()), "archive"),
        ],
        entries: vec![
            entry("read-ranges", &[], |_, i| read_ranges(&p(i.path), i)),
            entry("read-gpu-ranges", &[], |_, i| {
                read_gpu_ranges(&p(i.path), i)
            }),
            entry("profiles", &[], |_, i| profiles(i.path)),
            entry("dumps", &[], |_, i| dumps(i.path)),
            entry("export-modules", &[], |_, i| {
                export(&p(i.path), i, export::Table::Modules, Vec::new())
            }),
            entry("export-thunks-2ranks", &[], |c, i| {
                export(
                    &[i.path.to_path_buf(), c.rank1.clone()],
                    i,
                    export::Table::Thunks,
                    Vec::new(),
                )
            }),
            entry("modules", &[], |_, i| modules_run(&p(i.path), i)),
            entry("report", &[], |c, i| {
                report_run(&[i.path.to_path_buf(), c.rank1.clone()], i, Vec::new())
            }),
            entry("collectives", &[], |c, i| {
                collectives_run(&[i.path.to_path_buf(), c.rank1.clone()], i, i.bit(7))
            }),
            entry("flamefold", &[], |_, i| {
                flamefold_run(&p(i.path), i, gpu_by(i, 7), Vec::new())
            }),
            entry("hlo-of-records", &[], |c, i| {
                flamefold_run(&p(&c.thunks), i, gpu_by(i, 7), vec![i.path.to_path_buf()])
            }),
            entry("compile-summary", &[], |_, i| compile_run(&p(i.path), i)),
            entry("split-inputs", &[], |_, i| {
                source::split_inputs(&p(i.path), "modules", &Progress::none(), &mut |_| Ok(()))
                    .map(|_| ())
            }),
            entry("from-spool", &[], |_, i| {
                let spool = std::fs::File::open(i.path).map_err(|e| njx::Error::io("spool", e))?;
                let mut archive =
                    source::Archive::from_spool("stdin".into(), "stdin", spool, &Progress::none())?;
                let members: Vec<String> = archive.members().to_vec();
                let _ = archive.find(GPU_PROJ);
                let _ = archive.member_for(THREADS, "stdin");
                for m in members {
                    let mut r = archive.open_member(&m)?;
                    io::copy(&mut r, &mut Sink(0)).map_err(|e| njx::Error::io(m.clone(), e))?;
                }
                Ok(())
            }),
        ],
        folders: true,
    });

    // njx-combine's member handling: mutated names and file types must never be written.
    targets.push(Target {
        name: "combine",
        file: "rank0.zip",
        seeds: vec![
            (zip_seed(seeds::rank_members(0, false, false)), "archive"),
            (zip_seed(seeds::rank_members(0, true, true)), "archive"),
            (zip_seed(seeds::capture_members(&sqlite)), "archive"),
            (
                zip_seed(crate::combine::with_report(base.clone())),
                "archive",
            ),
        ],
        entries: vec![entry("combine", &[], crate::combine::run)],
        folders: false,
    });

    targets.push(Target {
        name: "folded",
        file: "stacks.folded",
        seeds: vec![
            (text(&folded_stack), "folded"),
            (text(&folded_module), "folded"),
        ],
        entries: vec![
            entry("read-folded", &[], |_, i| {
                let stacks = flamefold::read_folded(i.path)?;
                let lines: Vec<String> = stacks.iter().map(|(s, c)| format!("{s} {c}")).collect();
                if !lines.is_empty() && i.bit(1) {
                    svg(&lines)?;
                }
                Ok(())
            }),
            entry("diff", &[], |c, i| {
                let (a, b) = if i.bit(1) {
                    (i.path, c.folded.as_path())
                } else {
                    (c.folded.as_path(), i.path)
                };
                let lines: Vec<String> = flamefold::diff(a, b, i.bit(2))?
                    .into_iter()
                    .map(|(s, x, y)| format!("{s} {x} {y}"))
                    .collect();
                if !lines.is_empty() {
                    svg(&lines)?;
                }
                Ok(())
            }),
        ],
        folders: false,
    });

    // njx-pgle's writer: the dumps that name its files and the streams it reduces,
    // checked for what lands in (and around) its output folder.
    targets.push(Target {
        name: "pgle-dumps",
        file: "rank0.zip",
        seeds: crate::pgle::dump_seeds(),
        entries: vec![
            entry("in-archive", &["dump"], |c, i| {
                let path = in_archive(c, i, &format!("dump/{DUMP7}.xz"));
                crate::pgle::run(c, i, &crate::pgle::with_rank1(c, i, path))
            }),
            entry("archive", &["archive"], |c, i| {
                crate::pgle::run(c, i, &crate::pgle::with_rank1(c, i, i.path.to_path_buf()))
            }),
        ],
        folders: true,
    });
    let sched = {
        let mut members = base.clone();
        for m in &mut members {
            if m.name == format!("dump/{DUMP7}.xz") {
                m.item = Item::xz(Item::proto(crate::pgle::hlo_step_scheduled()));
            }
        }
        write("rank0-sched.zip", &crate::zipper::build(&members).unwrap())
    };
    let pgle_partial = crate::pgle::partial_of(&archives);
    let mut partial_seeds = vec![
        (text(&pgle_partial), "partial"),
        (
            text(&crate::pgle::partial_of(std::slice::from_ref(&rank0))),
            "partial",
        ),
        (text(&crate::pgle::partial_of(&[sched])), "partial"),
        (text(&thunks_json), "records"),
        (text(&thunks_csv), "records"),
        (text(&modules_json), "records"),
    ];
    for f in crate::pgle::HOSTILE_FINGERPRINTS.iter().skip(4) {
        partial_seeds.push((
            text(&crate::pgle::partial_with_fingerprint(&pgle_partial, f)),
            "partial",
        ));
    }
    targets.push(Target {
        name: "pgle-partials",
        file: "pgle.jsonl",
        seeds: partial_seeds,
        entries: vec![
            entry("pgle", &[], |c, i| {
                crate::pgle::run(c, i, &[i.path.to_path_buf()])
            }),
            entry("with-archive", &[], |c, i| {
                crate::pgle::run(c, i, &crate::pgle::with_rank1(c, i, i.path.to_path_buf()))
            }),
            entry("twice", &["partial"], |c, i| {
                crate::pgle::run(c, i, &[i.path.to_path_buf(), i.path.to_path_buf()])
            }),
        ],
        folders: false,
    });

    let _ = rank0;
    (ctx, targets)
}
