//! Partial results: the map step of a map/reduce over ranks. An analysis that only
//! aggregates (the module summary, the collectives report, the GPU flame graphs) can
//! write its aggregate of some inputs instead of its answer (`--partial`), and reads such
//! partial results back as inputs, merging them with each other and with records or
//! profiles. Merges are exact and independent of order (sums of integers, minima,
//! maxima, sets), so reducing the partials of every rank, in any grouping, gives the
//! answer of one process reading every rank.
//!
//! A partial result is one JSON line, `{"njx_partial": KIND, "version": 2, "writer":
//! "njx-report 0.1.0", "ranks": [[device, first_ns, path]…], "data": …}`, written
//! gzip-compressed (`zcat FILE | head -c 300` shows its head; every njx tool reads gzip as
//! it is): `ranks` are the ranks it holds, each with the path it was read from, so that a
//! rank counts once at every level of a reduce ([`crate::derived::ranks`]). A file may
//! hold several (`cat` concatenates partials, and gzip streams too). `data` is the
//! analysis' own aggregate, with what is the same across ranks (the HLO dumps' op_names
//! and stacks) written once per program and interned; it may change between njx versions,
//! which the version says: partials are for one run of the tools, not for keeping.

use crate::derived::executions::{self, Executions, Kept, Warmup, WithoutXla};
use crate::derived::ranks::{Rank, Seen};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use crate::source;
use crate::source::records::{RecordStream, TextKind};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;

/// The field naming a line as a partial result, and its kind.
pub const FIELD: &str = "njx_partial";
/// The version of the partial-result layout this njx writes and reads: 2 since the ranks
/// and the writer are carried and the HLO facts interned; 3 since the collectives' module
/// spans are folded per (program, phase) and the step's executions are written per
/// device, packed (issue 41).
pub const VERSION: u32 = 3;

#[derive(Serialize)]
struct Out<'a, T> {
    njx_partial: &'a str,
    version: u32,
    writer: String,
    ranks: Vec<(u32, i64, String)>,
    data: &'a T,
}

#[derive(Deserialize)]
struct In {
    njx_partial: String,
    version: u32,
    #[serde(default)]
    writer: Option<String>,
    #[serde(default)]
    ranks: Vec<(u32, i64, String)>,
    data: Box<serde_json::value::RawValue>,
}

// Its data is checked as the aggregate that reads it.
impl crate::records::Check for In {}

/// The tool and build writing: `njx-report 0.1.0 (git 37d87270918c, rustc 1.95.0 …)`, as
/// its `--version` says.
fn writer() -> String {
    format!(
        "{} {}",
        crate::output::program_name(),
        crate::output::LONG_VERSION
    )
}

/// Writes `data` as one partial result (gzip-compressed), with the ranks it holds.
pub fn write<A: Aggregate + Serialize>(out: &mut dyn Write, data: &A) -> Result<()> {
    let mut gz = flate2::GzBuilder::new()
        .filename(crate::output::guard::PARTIAL_GZIP_NAME)
        .write(&mut *out, flate2::Compression::fast());
    serde_json::to_writer(
        &mut gz,
        &Out {
            njx_partial: A::KIND,
            version: VERSION,
            writer: writer(),
            ranks: data.seen().listed(),
            data,
        },
    )
    .map_err(|e| Error::Output(e.into()))?;
    gz.write_all(b"\n").map_err(Error::Output)?;
    gz.finish().map_err(Error::Output)?;
    out.flush().map_err(Error::Output)
}

/// An analysis' aggregate of any number of inputs: what it needs to answer, built from
/// records, profiles' executions and other aggregates, merged exactly in any order.
pub trait Aggregate: Sized + DeserializeOwned {
    /// The kind of its partial results.
    const KIND: &'static str;
    /// The records it reads (`njx-export --table …`), for messages.
    const TABLE: &'static str;
    /// Adds the records of one stream (records, not partial results).
    fn add_records(&mut self, s: RecordStream, notes: &Notes) -> Result<()>;
    /// Adds the executions of one input path.
    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()>;
    /// Merges another aggregate in.
    fn merge(&mut self, other: Self, notes: &Notes) -> Result<()>;
    /// What it knows for the warm-up rule.
    fn warmup(&self) -> &Warmup;
    /// The ranks read into it, carried by its partial results.
    fn seen(&self) -> &Seen;
    /// [`Aggregate::seen`], to add to.
    fn seen_mut(&mut self) -> &mut Seen;
    /// Whether it reads the HLO dumps of the profiles ([`Executions::dumps`]).
    fn wants_dumps(&self) -> bool {
        false
    }
    /// Whether it reads the push/pop ranges of the profiles ([`Executions::ranges`]).
    fn wants_ranges(&self) -> bool {
        false
    }
    /// Whether its figures compare a program's devices (wait, stragglers, alignment): the
    /// note on a module compiled differently across devices says what that leaves out;
    /// an aggregate of GPU time (flame graphs, thunk tables, PGLE costs) says only that
    /// the programs are apart.
    fn compares_devices(&self) -> bool {
        true
    }
    /// What becomes of an input path without XLA module ranges: refused (the tools that
    /// read executions only), or aggregated as it is (no records, what was kept).
    fn without_xla(&self) -> WithoutXla {
        WithoutXla::Refuse
    }
}

/// The aggregate of `inputs`: record streams (records, or partial results of `A::KIND`),
/// then profiles read one input path per core at a time ([`executions::each_mapped`], HLO
/// dumps also from `hlo`), each aggregated on the thread that read it and merged in input
/// order. `empty` makes an empty aggregate. The notes on the answer (the warm-up warning,
/// modules compiled differently across devices) go to `notes` ([`Notes::on_answer`]); that
/// a module was compiled differently is said in one short line where one stream of records
/// showed it alone: the tool that wrote the stream read the profiles and said it in full.
pub fn aggregate<A: Aggregate + Send>(
    inputs: &[PathBuf],
    hlo: executions::Hlo<'_>,
    notes: &Notes,
    empty: impl Fn() -> A + Sync,
) -> Result<A> {
    aggregate_and_profiles(inputs, hlo, notes, empty).map(|(acc, _)| acc)
}

/// [`aggregate`], with the inputs that were read as profiles (not as records or partial
/// results), in input order.
pub fn aggregate_and_profiles<A: Aggregate + Send>(
    inputs: &[PathBuf],
    hlo: executions::Hlo<'_>,
    notes: &Notes,
    empty: impl Fn() -> A + Sync,
) -> Result<(A, Vec<PathBuf>)> {
    let (mut acc, mut records, mut parts) = (empty(), empty(), empty());
    let mut seen = Seen::default();
    // Thunk records read without their modules: their ranks known by the first thunk.
    let mut thunk_seen = Seen::known_by("thunk");
    // The modules a stream of records showed compiled differently on its own: the tool
    // that wrote it (njx-export, reading the profiles) said so in full; said short here.
    let mut said = BTreeSet::new();
    let keep = Kept {
        dumps: acc.wants_dumps(),
        ranges: acc.wants_ranges(),
    };
    let profiles = source::split_inputs(inputs, A::TABLE, notes.progress(), &mut |mut s| {
        if s.kind == TextKind::JsonLines && s.first_line_has(&format!("\"{FIELD}\""))? {
            // Merged as they are read: memory holds one partial result at a time.
            read_partials(s, A::KIND, &mut seen, &mut |p: A| parts.merge(p, notes))
        } else {
            // Module records are a rank's executions too: counted once, as its profile.
            let place = s.place.clone();
            let firsts = s.watch_ranks();
            let mut one = empty();
            one.add_records(s, notes)?;
            let firsts = crate::source::records::take_firsts(&firsts);
            let (modules, thunks): (Vec<_>, Vec<_>) = firsts
                .into_iter()
                .partition(|((kind, _), _)| *kind != "thunks");
            for (firsts, seen) in [(modules, &mut seen), (thunks, &mut thunk_seen)] {
                let firsts = firsts.into_iter().map(|((_, d), f)| (d, f)).collect();
                seen.add_firsts(firsts, &place)?;
            }
            said.extend(one.warmup().variants.compiled_differently());
            records.merge(one, notes)
        }
    })?;
    let without = acc.without_xla();
    executions::each_mapped(
        &profiles,
        hlo,
        keep,
        without,
        notes,
        &mut seen,
        &|part, notes| {
            let mut one = empty();
            one.add_profile(&part, notes)?;
            Ok(one)
        },
        |one| acc.merge(one, notes),
    )?;
    acc.merge(records, notes)?;
    acc.merge(parts, notes)?;
    *acc.seen_mut() = seen;
    if let Some(n) = acc.warmup().rule().note() {
        notes.on_answer(n);
    }
    for n in acc
        .warmup()
        .variants
        .notes_except(&said, acc.compares_devices())
    {
        notes.on_answer(n);
    }
    Ok((acc, profiles))
}

/// Reads the partial results of `kind` in `s`, handing each to `partial`; the ranks
/// each holds are added to `seen` first (a rank read before is refused, naming both).
/// An input without any partial result (an empty file) is an error: a map step that
/// wrote nothing.
pub fn read_partials<P: DeserializeOwned>(
    s: RecordStream,
    kind: &str,
    seen: &mut Seen,
    partial: &mut dyn FnMut(P) -> Result<()>,
) -> Result<()> {
    let place = s.place.clone();
    let mut line = 0u64;
    s.read(&mut |p: In| {
        line += 1;
        let at = format!("{place}:{line}");
        if p.njx_partial != kind {
            return Err(Error::data(
                at,
                format!(
                    "a partial result of kind `{}`, not `{kind}`: partials are read by the tool \
                     that wrote them",
                    p.njx_partial
                ),
            ));
        }
        if p.version != VERSION {
            let by = p.writer.unwrap_or_else(|| "an older njx".to_string());
            return Err(Error::data(
                at,
                format!(
                    "partial result version {} written by {by}; this njx ({}) reads version \
                     {VERSION}: write the partials and reduce them with the same njx",
                    p.version,
                    writer()
                ),
            ));
        }
        let ranks = p
            .ranks
            .into_iter()
            .map(|(device, first_ns, origin)| (Rank { device, first_ns }, origin));
        seen.add(ranks, &place, &at)?;
        let data = serde_json::from_str(p.data.get()).map_err(|e| {
            Error::data(
                at.clone(),
                format!("bad partial result of kind `{kind}`: {e}"),
            )
        })?;
        partial(data)
    })?;
    Ok(())
}

/// (De)serialises a map as a list of `[key, value]` pairs: JSON object keys must be
/// strings, and aggregates are keyed by tuples.
pub mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    /// Writes the pairs in key order.
    pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    /// Reads the pairs back; a key given twice is an error.
    pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        let pairs = Vec::<(K, V)>::deserialize(d)?;
        let n = pairs.len();
        let map: BTreeMap<K, V> = pairs.into_iter().collect();
        if map.len() != n {
            return Err(serde::de::Error::custom("a key is given twice"));
        }
        Ok(map)
    }
}
