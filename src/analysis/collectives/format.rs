//! Number helpers of the report's tables: mean ± standard deviation, and numbers as the
//! cells for people (ms, significant digits, `-` for none) and the CSV cells (as the JSON
//! records write them) have them. Times (fields `…_ns`) are written in whole nanoseconds
//! in both, the nearest to the mean, quantile or difference computed ([`ns`]).

use crate::output::charts::significant;
use serde::{Serialize, Serializer};

/// `v / scale` to `digits` decimals, `-` where there is no value.
pub(super) fn fmt_opt(v: Option<f64>, scale: f64, digits: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{:.*}", digits, x / scale))
}

/// To 4 significant digits, `-` where there is no value.
pub(super) fn significant_or_dash(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |v| significant(v, 4))
}

/// A number as serde_json writes it (`5.0`; NaN as null, so empty), as the JSON records.
pub(super) fn json_number(v: f64) -> String {
    serde_json::Number::from_f64(v).map_or(String::new(), |n| n.to_string())
}

/// [`json_number`], empty where there is no value.
pub(super) fn json_number_opt(v: &Option<f64>) -> String {
    v.map_or(String::new(), json_number)
}

/// A time in nanoseconds as the records write it: the nearest whole number of
/// nanoseconds (halves away from zero), none where there is no number (NaN).
pub(super) fn ns(v: f64) -> Option<i64> {
    // `as` saturates: a time past 292 years exists only in made-up records.
    v.is_finite().then(|| v.round() as i64)
}

/// [`ns`] as a CSV cell: empty where there is none, as the JSON records write null.
pub(super) fn ns_cell(v: f64) -> String {
    ns(v).map_or(String::new(), |n| n.to_string())
}

/// [`ns_cell`], empty where there is no value.
pub(super) fn ns_cell_opt(v: &Option<f64>) -> String {
    v.map_or(String::new(), ns_cell)
}

/// Serialises a time in nanoseconds as [`ns`] writes it (`#[serde(serialize_with)]`).
pub(super) fn serialize_ns<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    ns(*v).serialize(s)
}

/// [`serialize_ns`] of an optional time.
pub(super) fn serialize_ns_opt<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    v.and_then(ns).serialize(s)
}
