//! Numbers as the tools write them for people: durations in milliseconds and
//! microseconds, shares as percentages, bytes in binary units. One place, so that two
//! tables never format the same quantity two ways by accident; where two ways are
//! wanted, each has its own name. And the one rule for a time the records write (a field
//! `…_ns`) from a mean, quantile or difference: whole nanoseconds ([`whole_ns`]).

/// Nanoseconds as milliseconds, three decimals.
pub fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// Milliseconds with six decimals: every nanosecond of `ns`.
pub fn ms_exact(ns: f64) -> String {
    format!("{:.6}", ns / 1e6)
}

/// A duration for people, its unit by its size: `812 ns`, `15.3 µs`, `2.481 ms`, `1.204 s`
/// (`µs` as every table's heading spells it).
pub fn duration(ns: f64) -> String {
    let a = ns.abs();
    if a < 1e3 {
        format!("{ns:.0} ns")
    } else if a < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if a < 1e9 {
        format!("{:.3} ms", ns / 1e6)
    } else {
        format!("{:.3} s", ns / 1e9)
    }
}

/// Nanoseconds as microseconds, one decimal.
pub fn us_tenths(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}

/// Microseconds from nanoseconds, exactly: `1234567` → `1234.567`.
pub fn us_exact(ns: i64) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// `part` as a percentage of `whole` (0 where `whole` is not positive).
pub fn percent_i128(part: i128, whole: i128) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// `part` as a percentage of `whole`, rounded to two decimals (0 where `whole` is 0).
pub fn percent_rounded(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}

/// Bytes for people: `512 B`, `1.50 KiB`, `15.26 GiB`.
pub fn mib(bytes: i64) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes.unsigned_abs() < 1024 {
        return format!("{bytes} B");
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v.abs() >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}", UNITS[unit])
}

/// A time in nanoseconds as the records write it (their fields `…_ns`, integer
/// nanoseconds by the records' contract): the nearest whole number of nanoseconds (halves
/// away from zero) to a mean, quantile or difference computed, none where there is no
/// number (NaN). The tables for people format the value computed, not this one.
pub fn whole_ns(v: f64) -> Option<i64> {
    // `as` saturates: a time past 292 years exists only in made-up records.
    v.is_finite().then(|| v.round() as i64)
}

/// Serialises a time in nanoseconds as [`whole_ns`] writes it, in JSON and CSV alike
/// (`#[serde(serialize_with = "crate::output::numbers::serialize_ns")]`): a record holds
/// the value computed, its readers see whole nanoseconds.
pub fn serialize_ns<S: serde::Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&whole_ns(*v), s)
}

/// [`serialize_ns`] of an optional time: null (an empty CSV cell) where there is none.
pub fn serialize_ns_opt<S: serde::Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    serde::Serialize::serialize(&v.and_then(whole_ns), s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_are_exact() {
        assert_eq!(us_exact(0), "0.000");
        assert_eq!(us_exact(1), "0.001");
        assert_eq!(us_exact(1_234_567), "1234.567");
        assert_eq!(us_exact(1_000), "1.000");
        assert_eq!(us_exact(-1_500), "-1.500");
        assert_eq!(us_exact(i64::MIN), "-9223372036854775.808");
    }
}
