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

#[cfg(test)]
mod tests {
    use super::*;

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
