//! The aggregate of thunk executions the views are made from ([`ThunkTime`]), of any
//! number of inputs, and the partial result of `njx-thunks --partial`.

use super::table::ThunkStats;
use crate::derived::executions::{Executions, Phase, Warmup};
use crate::derived::gpu_time::GpuTime;
use crate::derived::partial;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::records::{Module, Thunk};
use crate::source::records::RecordStream;
use serde::{Deserialize, Serialize};

/// Thunk executions aggregated for the three views, of any number of inputs, and the
/// partial result of `njx-thunks --partial` (kind [`PARTIAL`]): the flame graphs'
/// [`GpuTime`] and per (program, thunk, [`Phase`]) the execution statistics.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThunkTime {
    /// The ranks read into it: carried beside its data in partial results.
    #[serde(skip)]
    pub(crate) seen: crate::derived::ranks::Seen,

    pub(super) gpu: GpuTime,
    pub(super) stats: ThunkStats,
}

/// The kind of [`ThunkTime`]'s partial results.
pub const PARTIAL: &str = "thunks";

impl ThunkTime {
    /// An empty aggregate; with `collect_infos`, what the profiles' own dumps say of
    /// their thunks is taken as they are read.
    pub fn new(collect_infos: bool) -> ThunkTime {
        ThunkTime {
            gpu: GpuTime::new(false, collect_infos).without_thunk_time(),
            stats: ThunkStats::default(),
            seen: Default::default(),
        }
    }

    /// [`ThunkTime::new`] whose GPU time is kept per thunk too, so that the flame graphs
    /// fold from it ([`ThunkTime::gpu`]): what njx-report holds once for both.
    pub fn with_thunk_time(collect_infos: bool) -> ThunkTime {
        ThunkTime {
            gpu: GpuTime::new(false, collect_infos),
            stats: ThunkStats::default(),
            seen: Default::default(),
        }
    }

    /// The GPU time the views share with the flame graphs.
    pub fn gpu(&self) -> &GpuTime {
        &self.gpu
    }

    fn thunk(&mut self, t: &Thunk, phase: Phase) {
        self.stats.entry(&t.program, &t.name, phase).0.add(t);
    }

    /// Whether it holds what the HLO dumps say of its thunks (read with the profiles, or
    /// carried by partial results).
    pub fn has_infos(&self) -> bool {
        self.gpu.has_infos()
    }

    /// Why the views would be wrong, if they would: thunks that take more GPU time than
    /// their module executions (records of different runs, thunks outside modules), as
    /// njx-thunks refuses them.
    pub fn thunks_beyond_modules(&self) -> Option<String> {
        self.gpu.thunks_beyond_modules()
    }

    /// Adds a thunk record (its warm-up already decided).
    pub fn add_thunk_record(&mut self, t: &Thunk) {
        self.gpu.add_thunk(t);
        self.thunk(t, Phase::of_record(t.warmup));
    }

    /// Adds a module record (its warm-up already decided).
    pub fn add_module_record(&mut self, m: &Module) {
        self.gpu.add_module(m);
    }

    /// Takes what the HLO dumps of `sources` (archives, dump folders) say of every thunk
    /// aggregated, for a partial result: the reduce step need not have the dumps.
    pub fn attach_infos(&mut self, sources: &[std::path::PathBuf], notes: &Notes) -> Result<()> {
        if sources.is_empty() {
            return Ok(());
        }
        let thunks: std::collections::BTreeSet<(String, String)> = (0..self.stats.table.len()
            as u32)
            .map(|i| {
                let ((program, name, _), _) = self.stats.get(i);
                (program.to_string(), name.to_string())
            })
            .collect();
        self.gpu.attach_infos_of(&thunks, sources, notes)
    }
}

impl partial::Aggregate for ThunkTime {
    fn seen(&self) -> &crate::derived::ranks::Seen {
        &self.seen
    }

    fn seen_mut(&mut self) -> &mut crate::derived::ranks::Seen {
        &mut self.seen
    }

    const KIND: &'static str = PARTIAL;
    const TABLE: &'static str = "modules|thunks";

    // GPU time per program: no figure compares a program's devices.
    fn compares_devices(&self) -> bool {
        false
    }

    fn add_records(&mut self, mut s: RecordStream, _: &Notes) -> Result<()> {
        if s.first_line_has("thunk_execution")? {
            s.read(&mut |t: Thunk| {
                self.add_thunk_record(&t);
                Ok(())
            })
        } else {
            s.read(&mut |m: Module| {
                self.add_module_record(&m);
                Ok(())
            })
        }
        .map(drop)
    }

    fn add_profile(&mut self, part: &Executions, notes: &Notes) -> Result<()> {
        self.gpu.add_profile(part, notes)?;
        for t in &part.thunks {
            self.thunk(t, Phase::of_profile(t.execution));
        }
        Ok(())
    }

    fn wants_dumps(&self) -> bool {
        partial::Aggregate::wants_dumps(&self.gpu)
    }

    fn merge(&mut self, mut other: Self, notes: &Notes) -> Result<()> {
        self.gpu.merge(other.gpu, notes);
        // The smaller into the larger (the first input into the empty total: moved).
        if other.stats.table.len() > self.stats.table.len() {
            std::mem::swap(&mut self.stats, &mut other.stats);
        }
        for i in 0..other.stats.table.len() as u32 {
            let ((program, name, phase), s) = other.stats.get(i);
            self.stats.entry(program, name, phase).0.merge(s);
        }
        Ok(())
    }

    fn warmup(&self) -> &Warmup {
        partial::Aggregate::warmup(&self.gpu)
    }
}
