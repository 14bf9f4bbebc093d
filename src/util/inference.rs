//! Statistical inference for comparing two runs: Student's t distribution (its CDF through
//! the regularised incomplete beta function, its quantiles by bisection), Welch's interval
//! for the ratio of two means or totals, and the Benjamini–Hochberg false-discovery rule.
//!
//! The formulas are the textbook ones: the incomplete beta function by its continued
//! fraction (Lentz's method) and ln Γ by Lanczos' series (g = 7, n = 9), as in Press et al.,
//! "Numerical Recipes", §6.1 and §6.4; Welch's test with the Welch–Satterthwaite degrees of
//! freedom (Welch 1947); the interval of a ratio on the log scale by the delta method
//! (var ln x̄ ≈ s² / (n x̄²)); the step-up adjusted p-values of Benjamini & Hochberg (1995).
//! The unit tests check them against SciPy's `stats.t`, `ttest_ind(equal_var=False)` and
//! `false_discovery_control`.

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9; about 15 significant digits).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const C: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 − x) = π / sin(πx).
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = C[0];
    let t = x + G + 0.5;
    for (i, c) in C.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function I_x(a, b), for a, b > 0 and 0 ≤ x ≤ 1.
pub fn incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    // The continued fraction converges fast below (a + 1) / (a + b + 2); above, by symmetry.
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

/// The continued fraction of the incomplete beta function (modified Lentz).
fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Degrees of freedom beyond which Student's t is taken as its limit at this many: the
/// quantiles differ from the normal's by less than 1e-5.
const DF_MAX: f64 = 1e6;

/// P(T > t) for Student's t with `df` degrees of freedom (df > 0).
pub fn t_sf(t: f64, df: f64) -> f64 {
    let df = df.min(DF_MAX);
    let tail = 0.5 * incomplete_beta(df / (df + t * t), df / 2.0, 0.5);
    if t >= 0.0 { tail } else { 1.0 - tail }
}

/// The `p` quantile of Student's t with `df` degrees of freedom (0 < p < 1).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // P(T > t) = 1 − p, decreasing in t: bisection on a bracket that holds it.
    let target = 1.0 - p;
    let mut hi = 1.0;
    while t_sf(hi, df) > target && hi < 1e12 {
        hi *= 2.0;
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_sf(mid, df) > target {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-12 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// What is known of one side's samples of a quantity: how many, their mean and sample
/// standard deviation, and the factor the compared value is of the mean (1 for a mean;
/// the count for a total, the count being exact).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Side {
    /// Samples.
    pub n: u64,
    /// Their mean.
    pub mean: f64,
    /// Their sample standard deviation; `None` for fewer than two.
    pub sd: Option<f64>,
    /// The compared value is `scale × mean`.
    pub scale: f64,
}

impl Side {
    /// The compared value.
    pub fn value(&self) -> f64 {
        self.scale * self.mean
    }

    /// The variance of ln(value) by the delta method: s² / (n x̄²); `None` without a
    /// standard deviation or a positive mean.
    fn log_variance(&self) -> Option<f64> {
        let sd = self.sd?;
        (self.mean > 0.0 && self.n >= 2).then(|| sd * sd / (self.n as f64 * self.mean * self.mean))
    }
}

/// Welch's comparison of `after` with `before`: the relative change of the value and its
/// interval at `level` (0.95), with the two-sided p-value of no change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// after / before − 1.
    pub change: f64,
    /// The lower end of the interval of the relative change.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
    /// The two-sided p-value of "no change".
    pub p: f64,
    /// Welch–Satterthwaite degrees of freedom (infinite where both sides vary not at all).
    pub df: f64,
}

/// Welch's t on ln(after / before), the variance of each log-mean by the delta method and
/// the degrees of freedom by Welch–Satterthwaite; the interval is turned back into a
/// relative change. `None` (no interval, no test) when a side has fewer than `min_n`
/// samples (at least 2) or no positive mean. Where neither side varies, the change is
/// exact: p = 1 for none, 0 otherwise.
pub fn welch_ratio(before: &Side, after: &Side, level: f64, min_n: u64) -> Option<Comparison> {
    let min_n = min_n.max(2);
    if before.n < min_n || after.n < min_n {
        return None;
    }
    let (va, vb) = (before.log_variance()?, after.log_variance()?);
    if before.value() <= 0.0 || after.value() <= 0.0 {
        return None;
    }
    let d = (after.value() / before.value()).ln();
    compared(d, &[(va, before.n), (vb, after.n)], level)
}

/// The comparison of a log ratio `d` whose variance is the sum of `parts` (component,
/// samples): `None` where either is not finite; exact where neither side varies (p = 1
/// for no change, 0 otherwise).
fn compared(d: f64, parts: &[(f64, u64)], level: f64) -> Option<Comparison> {
    let se2: f64 = parts.iter().map(|p| p.0).sum();
    if !se2.is_finite() || !d.is_finite() {
        return None;
    }
    if se2 == 0.0 {
        let change = d.exp_m1();
        return Some(Comparison {
            change,
            low: change,
            high: change,
            p: if d == 0.0 { 1.0 } else { 0.0 },
            df: f64::INFINITY,
        });
    }
    Some(interval(d, se2, satterthwaite(parts), level))
}

/// The comparison of a log ratio `d` with variance `se2` and `df` degrees of freedom.
fn interval(d: f64, se2: f64, df: f64, level: f64) -> Comparison {
    let se = se2.sqrt();
    let q = t_quantile(0.5 + level / 2.0, df);
    let t = d / se;
    Comparison {
        change: d.exp_m1(),
        low: (d - q * se).exp_m1(),
        high: (d + q * se).exp_m1(),
        p: (2.0 * t_sf(t.abs(), df)).min(1.0),
        df,
    }
}

/// Welch–Satterthwaite degrees of freedom of a sum of variance components, each
/// (component, samples).
fn satterthwaite(parts: &[(f64, u64)]) -> f64 {
    let sum: f64 = parts.iter().map(|p| p.0).sum();
    let den: f64 = parts
        .iter()
        .filter(|p| p.1 >= 2)
        .map(|&(v, n)| v * v / (n as f64 - 1.0))
        .sum();
    if den > 0.0 {
        sum * sum / den
    } else {
        f64::INFINITY
    }
}

/// The comparison of the sums of the values of several quantities (the whole step): each
/// side a list of [`Side`]s (the quantities present on it); the variance of each sum is the
/// sum of its parts' (scale² s² / n), independent, and turned into that of the log of the
/// sum by the delta method. Parts with fewer than `min_n` samples (or no standard
/// deviation) add their value only, as long as they are under 1 % of their side's sum;
/// beyond, nothing is known of the sum's spread: `None`. `None` too when a sum is not
/// positive and finite.
pub fn welch_ratio_of_sums(
    before: &[Side],
    after: &[Side],
    level: f64,
    min_n: u64,
) -> Option<Comparison> {
    let total = |s: &[Side]| s.iter().map(Side::value).sum::<f64>();
    let (ta, tb) = (total(before), total(after));
    let usable = |t: f64| t > 0.0 && t.is_finite();
    if !usable(ta) || !usable(tb) {
        return None;
    }
    let unknown = |s: &[Side]| -> f64 {
        s.iter()
            .filter(|x| x.n < min_n.max(2) || x.sd.is_none())
            .map(Side::value)
            .sum()
    };
    if unknown(before) > 0.01 * ta || unknown(after) > 0.01 * tb {
        return None;
    }
    let parts = |s: &[Side], t: f64| -> Vec<(f64, u64)> {
        s.iter()
            .filter(|x| x.n >= min_n.max(2))
            .filter_map(|x| {
                let sd = x.sd?;
                Some((x.scale * x.scale * sd * sd / x.n as f64 / (t * t), x.n))
            })
            .collect()
    };
    let mut all = parts(before, ta);
    all.extend(parts(after, tb));
    let d = (tb / ta).ln();
    compared(d, &all, level)
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the order of `p`: a hypothesis is
/// rejected at false-discovery rate α when its q-value is at most α.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[a].total_cmp(&p[b]));
    let mut q = vec![0.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(p[i] * m as f64 / (rank + 1) as f64);
        q[i] = running.min(1.0);
    }
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side of `n` samples of mean `mean` and deviation `sd`, its value `scale` means.
    fn side(n: u64, mean: f64, sd: Option<f64>, scale: f64) -> Side {
        Side { n, mean, sd, scale }
    }

    fn close(a: f64, b: f64, rel: f64) {
        assert!(
            (a - b).abs() <= rel * b.abs().max(1e-300),
            "{a} is not {b} (to {rel})"
        );
    }

    #[test]
    fn ln_gamma_of_known_values() {
        assert!(ln_gamma(1.0).abs() < 1e-14);
        close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-13);
        close(ln_gamma(10.0), 362_880.0_f64.ln(), 1e-13);
        close(ln_gamma(100.5), 361.435_540_467_777_57, 1e-13);
    }

    // SciPy 1.x: stats.t.sf(t, df).
    #[test]
    fn t_tails_as_scipy() {
        close(t_sf(2.0, 3.0), 0.069_662_984_279_421_52, 1e-10);
        close(t_sf(0.5, 10.0), 0.313_946_802_871_486_5, 1e-10);
        close(t_sf(3.3, 25.5), 0.001_427_868_411_710_338_2, 1e-9);
        close(t_sf(1.96, 1e6), 0.024_998_033_792_634_926, 1e-6);
        close(t_sf(-1.2, 7.0), 0.865_414_031_586_386_3, 1e-10);
    }

    // SciPy: stats.t.ppf(p, df).
    #[test]
    fn t_quantiles_as_scipy() {
        close(t_quantile(0.975, 1.0), 12.706_204_736_174_694, 1e-9);
        close(t_quantile(0.975, 2.0), 4.302_652_729_749_462, 1e-9);
        close(t_quantile(0.975, 5.0), 2.570_581_835_636_314_6, 1e-9);
        close(t_quantile(0.975, 30.0), 2.042_272_456_301_237_8, 1e-9);
        close(t_quantile(0.975, 1000.0), 1.962_339_080_826_408_3, 1e-9);
        close(t_quantile(0.995, 12.3), 3.041_029_570_943_523_6, 1e-9);
        close(t_quantile(0.025, 5.0), -2.570_581_835_636_314_6, 1e-9);
    }

    // SciPy: stats.ttest_ind(b, a, equal_var=False) = (6.23471230810926,
    // 0.0002497875714015232, df 8.000229842459916).
    #[test]
    fn welch_test_as_scipy() {
        let a = [10.1, 9.8, 10.4, 10.0, 9.9, 10.3];
        let b = [11.0, 10.7, 11.4, 10.9, 11.2];
        let (ma, sa) = crate::util::stats::mean_std(&a);
        let (mb, sb) = crate::util::stats::mean_std(&b);
        let va = sa.unwrap().powi(2) / a.len() as f64;
        let vb = sb.unwrap().powi(2) / b.len() as f64;
        let df = satterthwaite(&[(va, 6), (vb, 5)]);
        close(df, 8.000_229_842_459_916, 1e-10);
        let t = (mb - ma) / (va + vb).sqrt();
        close(t, 6.234_712_308_109_26, 1e-10);
        close(2.0 * t_sf(t, df), 0.000_249_787_571_401_523_2, 1e-8);
    }

    #[test]
    fn ratio_interval_covers_the_change_and_is_exact_without_spread() {
        let before = side(50, 100.0, Some(5.0), 1.0);
        let after = side(50, 110.0, Some(5.0), 1.0);
        let c = welch_ratio(&before, &after, 0.95, 2).unwrap();
        close(c.change, 0.1, 1e-12);
        assert!(c.low < 0.1 && c.high > 0.1 && c.low > 0.05, "{c:?}");
        assert!(c.p < 1e-10);
        // Itself: no change, p = 1.
        let same = welch_ratio(&before, &before, 0.95, 2).unwrap();
        assert_eq!((same.change, same.p), (0.0, 1.0));
        // Totals: counts are exact, so twice the instances of identical durations are
        // exactly twice the time.
        let one = side(4, 7.0, Some(0.0), 4.0);
        let two = side(8, 7.0, Some(0.0), 8.0);
        let c = welch_ratio(&one, &two, 0.95, 2).unwrap();
        assert_eq!((c.change, c.low, c.high, c.p), (1.0, 1.0, 1.0, 0.0));
        // Too few samples: no interval.
        let few = side(1, 7.0, None, 1.0);
        assert_eq!(welch_ratio(&few, &two, 0.95, 2), None);
        assert_eq!(welch_ratio(&one, &two, 0.95, 5), None);
    }

    #[test]
    fn a_sum_with_a_large_part_of_too_few_samples_is_not_tested() {
        let many = side(50, 100.0, Some(5.0), 1.0);
        let one = side(1, 100.0, None, 1.0);
        let tiny = side(1, 0.5, None, 1.0);
        assert!(welch_ratio_of_sums(&[many, one], &[many, one], 0.95, 3).is_none());
        // Under 1 % of the sum: its value only.
        let c = welch_ratio_of_sums(&[many, tiny], &[many, tiny], 0.95, 3).unwrap();
        assert_eq!((c.change, c.p), (0.0, 1.0));
        assert!(
            welch_ratio_of_sums(
                &[many],
                &[Side {
                    mean: f64::NAN,
                    ..many
                }],
                0.95,
                3
            )
            .is_none()
        );
    }

    // SciPy: stats.false_discovery_control([0.01, 0.04, 0.03, 0.005, 0.2, 0.5]).
    #[test]
    fn benjamini_hochberg_as_scipy() {
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.005, 0.2, 0.5]);
        let want = [0.03, 0.06, 0.06, 0.03, 0.24, 0.5];
        for (q, w) in q.iter().zip(want) {
            close(*q, w, 1e-12);
        }
    }
}
