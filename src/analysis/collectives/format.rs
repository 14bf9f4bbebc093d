//! Number helpers of the report's tables: mean ± standard deviation, and numbers as the
//! cells for people (ms, significant digits, `-` for none) and the CSV cells (as the JSON
//! records write them) have them. Times (fields `…_ns`) are written in whole nanoseconds
//! in both, the nearest to the mean, quantile or difference computed ([`ns`]).

use crate::output::charts::significant;
use crate::output::numbers::whole_ns as ns;

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

/// [`ns`] as a CSV cell: empty where there is none, as the JSON records write null.
pub(super) fn ns_cell(v: f64) -> String {
    ns(v).map_or(String::new(), |n| n.to_string())
}

/// [`ns_cell`], empty where there is no value.
pub(super) fn ns_cell_opt(v: &Option<f64>) -> String {
    v.map_or(String::new(), ns_cell)
}
