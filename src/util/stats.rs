//! Exact running statistics of integer quantities (durations, counts), shared by the
//! analyses that summarise executions; merged exactly in any order, as partial results are.

use serde::{Deserialize, Serialize};

/// Sums of an integer quantity and of its squares: mean and variance computed from them
/// are exact up to the final rounding, and merge exactly in any order.
#[derive(Debug, Default, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sums {
    sum: i128,
    squares: i128,
}

impl Sums {
    /// Adds one value.
    pub fn add(&mut self, x: i64) {
        let x = i128::from(x);
        self.sum = self.sum.saturating_add(x);
        self.squares = self.squares.saturating_add(x * x);
    }

    /// Adds the values of another.
    pub fn merge(&mut self, o: Sums) {
        self.sum = self.sum.saturating_add(o.sum);
        self.squares = self.squares.saturating_add(o.squares);
    }

    /// The sum of the values added.
    pub fn sum(&self) -> i128 {
        self.sum
    }

    /// The mean of the `n` values added.
    pub fn mean(&self, n: u64) -> f64 {
        self.sum as f64 / n as f64
    }

    /// Sample standard deviation of the `n` values added, null for one value.
    pub fn std(&self, n: u64) -> Option<f64> {
        if n < 2 {
            return None;
        }
        let n128 = i128::from(n);
        // n·Σx² − (Σx)², over n(n−1); in floating point only where it would overflow.
        let exact = n128
            .checked_mul(self.squares)
            .zip(self.sum.checked_mul(self.sum))
            .map(|(a, b)| (a - b).max(0) as f64);
        let nf = n as f64;
        let num = exact
            .unwrap_or_else(|| (nf * self.squares as f64 - (self.sum as f64).powi(2)).max(0.0));
        Some((num / (nf * (nf - 1.0))).sqrt())
    }
}

/// Mean, sample standard deviation (None for one value).
pub fn mean_std(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let std = (v.len() > 1)
        .then(|| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    (mean, std)
}

/// The `p` quantile of sorted `v` (not empty), interpolated linearly between order
/// statistics (numpy's default).
pub fn quantile(v: &[f64], p: f64) -> f64 {
    let at = p * (v.len() - 1) as f64;
    let lo = at.floor() as usize;
    let hi = at.ceil() as usize;
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

/// `values` (non-negative; NaN and negatives count as 0) in whole units of `per`, each
/// rounded down or up so that they add up to exactly their total rounded to the unit
/// (largest-remainder rounding): the values with the largest fractions get the units their
/// fractions add up to, ties to the earlier value. Rounding each value to the nearest unit
/// on its own would gain or lose up to half a unit per value, which a reader that sums
/// them (a flame graph's width) shows as time that was never there or is missing.
pub fn round_keeping_total(values: &[f64], per: f64) -> Vec<u64> {
    let scaled: Vec<f64> = values
        .iter()
        .map(|&v| if v > 0.0 { v / per } else { 0.0 })
        .collect();
    // Neumaier's compensated sum: the total's rounding must not depend on the order.
    let (mut sum, mut carry) = (0.0f64, 0.0f64);
    for &x in &scaled {
        let t = sum + x;
        carry += if sum.abs() >= x.abs() {
            (sum - t) + x
        } else {
            (x - t) + sum
        };
        sum = t;
    }
    let total = (sum + carry).round();
    let mut out: Vec<u64> = scaled.iter().map(|x| x.floor() as u64).collect();
    let floors: f64 = out.iter().map(|&c| c as f64).sum();
    let missing = ((total - floors).max(0.0) as usize).min(out.len());
    if missing > 0 {
        let mut order: Vec<usize> = (0..out.len()).collect();
        let fraction = |i: usize| scaled[i] - scaled[i].floor();
        order.sort_by(|&a, &b| fraction(b).total_cmp(&fraction(a)).then(a.cmp(&b)));
        for &i in &order[..missing] {
            out[i] += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_the_total() {
        // Each to the nearest: 0 + 0 + 0 = 0 of 1.2; 3 × 333 = 999 of 1000.
        assert_eq!(round_keeping_total(&[0.4, 0.4, 0.4], 1.0), vec![1, 0, 0]);
        assert_eq!(
            round_keeping_total(&[1000.0 / 3.0; 3], 1.0),
            vec![334, 333, 333]
        );
        // The largest fractions get the units: 2.6 ms, 0.3 ms, 1.45 ms → 4 ms in all.
        let ms = round_keeping_total(&[2.6e6, 0.3e6, 1.45e6], 1e6);
        assert_eq!(ms, vec![3, 0, 1]);
        assert_eq!(ms.iter().sum::<u64>(), (4.35f64).round() as u64);
        // Whole values stay as they are; NaN and negatives are 0.
        assert_eq!(round_keeping_total(&[7.0, 0.0, 3.0], 1.0), vec![7, 0, 3]);
        assert_eq!(
            round_keeping_total(&[f64::NAN, -2.0, 1.5], 1.0),
            vec![0, 0, 2]
        );
        assert!(round_keeping_total(&[], 1e3).is_empty());
    }

    #[test]
    fn quantiles_interpolate_as_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
    }
}
