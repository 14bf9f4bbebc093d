//! The thresholds of the findings' rules, each a default that `njx-report --threshold
//! NAME=VALUE` changes (as `nsys analyze -r gpu_gaps:gap=1` changes its rules' arguments).

use crate::error::{Error, Result};

/// Every threshold the rules judge by.
#[derive(Debug, Clone, PartialEq)]
pub struct Thresholds {
    /// The share of the step from which a finding fires (`moderate`), percent.
    pub moderate_pct: f64,
    /// The share of the step from which a finding is `high`, percent (xprof's tiers).
    pub high_pct: f64,
    /// `barrier`: the largest message of a barrier's collectives, bytes.
    pub barrier_bytes: f64,
    /// `barrier`: the share of its module time a barrier's communication takes, percent.
    pub barrier_comm_pct: f64,
    /// `straggler`: how many times its fair share (1 / devices) of last arrivals.
    pub straggler_share: f64,
    /// `straggler`: the share of the step its lateness alone makes a straggler, percent.
    pub straggler_late_pct: f64,
    /// `small-collectives`: the largest message of a small collective, bytes.
    pub small_bytes: f64,
    /// `small-collectives`: the share of the kind's best bus bandwidth under which a small
    /// collective is slow, percent.
    pub small_busbw_pct: f64,
    /// `variability`: the coefficient of variation from which a compute thunk varies.
    pub variability_cv: f64,
    /// `compile-time`: the share of the profiled span compilation takes from which it is
    /// said, percent.
    pub compile_pct: f64,
    /// `irregular-steps`: how many times the median makes a step or execution irregular.
    pub irregular_factor: f64,
    /// `low-bus-bandwidth`: the smallest message judged, bytes.
    pub low_busbw_bytes: f64,
    /// `low-bus-bandwidth`: the share of the link's per-direction peak under which a
    /// message size is slow, percent.
    pub low_busbw_pct: f64,
    /// `low-bus-bandwidth`: the link's per-direction peak, GB/s (0: from the GPU's name).
    pub peak_gbps: f64,
    /// `gemm-efficiency`: the share of the dtype's peak under which a GEMM is slow, percent.
    pub gemm_pct: f64,
    /// `gemm-efficiency`: the share of the step a GEMM must take to be judged, percent.
    pub gemm_step_pct: f64,
    /// `gpu-idle`: the shortest gap counted, ms (nsys's `gpu_gaps` uses 500).
    pub gap_ms: f64,
    /// `short-kernels`: kernels shorter than this are short, µs.
    pub short_kernel_us: f64,
    /// `profile-trust`: the fewest steady steps per device the figures are trusted on.
    pub min_steps: f64,
    /// `memory`: the share of the device's memory a program's allocations take from
    /// which it is said, percent.
    pub memory_pct: f64,
}

impl Default for Thresholds {
    fn default() -> Thresholds {
        Thresholds {
            moderate_pct: 3.0,
            high_pct: 15.0,
            barrier_bytes: 64.0,
            barrier_comm_pct: 50.0,
            straggler_share: 2.0,
            straggler_late_pct: 5.0,
            small_bytes: 1048576.0,
            small_busbw_pct: 10.0,
            variability_cv: 0.2,
            compile_pct: 10.0,
            irregular_factor: 1.5,
            low_busbw_bytes: 16.0 * 1048576.0,
            low_busbw_pct: 50.0,
            peak_gbps: 0.0,
            gemm_pct: 40.0,
            gemm_step_pct: 5.0,
            gap_ms: 1.0,
            short_kernel_us: 10.0,
            min_steps: 3.0,
            memory_pct: 90.0,
        }
    }
}

type Field = fn(&mut Thresholds) -> &mut f64;

/// Each threshold's name (as `--threshold` takes it), what it is, and where it is.
pub const NAMES: [(&str, &str, Field); 20] = [
    (
        "moderate-pct",
        "share of the step from which a finding fires, %",
        |t| &mut t.moderate_pct,
    ),
    (
        "high-pct",
        "share of the step from which a finding is high, %",
        |t| &mut t.high_pct,
    ),
    (
        "barrier.bytes",
        "largest message of a barrier, bytes",
        |t| &mut t.barrier_bytes,
    ),
    (
        "barrier.comm-pct",
        "share of its module time a barrier communicates, %",
        |t| &mut t.barrier_comm_pct,
    ),
    (
        "straggler.share",
        "times its fair share of last arrivals",
        |t| &mut t.straggler_share,
    ),
    (
        "straggler.late-pct",
        "lateness per step, % of the step",
        |t| &mut t.straggler_late_pct,
    ),
    (
        "small-collectives.bytes",
        "largest message of a small collective, bytes",
        |t| &mut t.small_bytes,
    ),
    (
        "small-collectives.busbw-pct",
        "% of the kind's best bus bandwidth",
        |t| &mut t.small_busbw_pct,
    ),
    (
        "variability.cv",
        "coefficient of variation of a compute thunk",
        |t| &mut t.variability_cv,
    ),
    (
        "compile-time.pct",
        "compilation's share of the profiled span, %",
        |t| &mut t.compile_pct,
    ),
    (
        "irregular-steps.factor",
        "times the median step or execution",
        |t| &mut t.irregular_factor,
    ),
    (
        "low-bus-bandwidth.bytes",
        "smallest message judged, bytes",
        |t| &mut t.low_busbw_bytes,
    ),
    (
        "low-bus-bandwidth.pct",
        "% of the link's per-direction peak",
        |t| &mut t.low_busbw_pct,
    ),
    (
        "low-bus-bandwidth.peak-gbps",
        "the link's per-direction peak, GB/s (0: by GPU name)",
        |t| &mut t.peak_gbps,
    ),
    (
        "gemm-efficiency.pct",
        "% of the dtype's peak FLOP rate",
        |t| &mut t.gemm_pct,
    ),
    (
        "gemm-efficiency.step-pct",
        "share of the step a GEMM takes to be judged, %",
        |t| &mut t.gemm_step_pct,
    ),
    ("gpu-idle.gap-ms", "shortest GPU gap counted, ms", |t| {
        &mut t.gap_ms
    }),
    ("short-kernels.us", "kernels shorter than this, µs", |t| {
        &mut t.short_kernel_us
    }),
    (
        "profile-trust.min-steps",
        "fewest steady steps per device trusted",
        |t| &mut t.min_steps,
    ),
    (
        "memory.pct",
        "share of the device's memory a program takes, %",
        |t| &mut t.memory_pct,
    ),
];

impl Thresholds {
    /// The defaults with each `NAME=VALUE` of `settings` applied; an unknown name or a
    /// value that is not a finite number ≥ 0 is a usage error naming the known ones.
    pub fn parse(settings: &[String]) -> Result<Thresholds> {
        let mut t = Thresholds::default();
        for s in settings {
            let known = || {
                NAMES
                    .iter()
                    .map(|(n, what, _)| format!("  {n}: {what}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let Some((name, value)) = s.split_once('=') else {
                return Err(Error::Usage(format!(
                    "--threshold {s}: NAME=VALUE expected; the names:\n{}",
                    known()
                )));
            };
            let Some((_, _, field)) = NAMES.iter().find(|(n, _, _)| *n == name.trim()) else {
                return Err(Error::Usage(format!(
                    "--threshold {s}: no threshold is called {name}; the names:\n{}",
                    known()
                )));
            };
            match value.trim().parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => *field(&mut t) = v,
                _ => {
                    return Err(Error::Usage(format!(
                        "--threshold {s}: {value} is not a number ≥ 0"
                    )));
                }
            }
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_sets_its_own_field() {
        for (i, (name, _, _)) in NAMES.iter().enumerate() {
            let t = Thresholds::parse(&[format!("{name}=1234.5")]).unwrap();
            // Exactly one field changed, and only this name's.
            for (j, (_, _, field)) in NAMES.iter().enumerate() {
                let (mut a, mut b) = (t.clone(), Thresholds::default());
                assert_eq!(*field(&mut a) == 1234.5, i == j, "{name}");
                if i != j {
                    assert_eq!(field(&mut a), field(&mut b), "{name}");
                }
            }
        }
    }

    #[test]
    fn bad_settings_are_refused_with_the_names() {
        for bad in [
            "gap=1",
            "gpu-idle.gap-ms",
            "gpu-idle.gap-ms=-1",
            "gpu-idle.gap-ms=x",
        ] {
            let e = Thresholds::parse(&[bad.to_string()])
                .unwrap_err()
                .to_string();
            assert!(e.contains(bad), "{e}");
        }
        let e = Thresholds::parse(&["gap=1".to_string()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("gpu-idle.gap-ms"), "{e}");
    }
}
