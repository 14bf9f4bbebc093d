//! Numbers as njx-heap writes them: bytes for people, shares of a peak as percentages.

/// Bytes for people: `512 B`, `1.50 KiB`, `15.26 GiB`.
pub(super) fn mib(bytes: i64) -> String {
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

/// `part` as a percentage of `whole`, rounded to two decimals (0 where `whole` is 0).
pub(super) fn percent(part: i64, whole: i64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        (part as f64 * 10000.0 / whole as f64).round() / 100.0
    }
}
