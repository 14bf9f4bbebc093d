//! Numbers as njx-thunks computes and writes them: shares as percentages, nanoseconds
//! held at the ends of i64, milliseconds and microseconds as text.

/// `part` as a percentage of `whole` (0 where `whole` is not positive).
pub(super) fn percent(part: i128, whole: i128) -> f64 {
    if whole > 0 {
        100.0 * part as f64 / whole as f64
    } else {
        0.0
    }
}

/// Held at the ends of i64: only made-up records reach them.
pub(super) fn clamp(ns: i128) -> i64 {
    ns.clamp(i64::MIN.into(), i64::MAX.into()) as i64
}

/// Nanoseconds as milliseconds, three decimals.
pub(super) fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// Nanoseconds as microseconds, one decimal.
pub(super) fn us(ns: f64) -> String {
    format!("{:.1}", ns / 1e3)
}
