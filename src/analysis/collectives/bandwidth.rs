//! One communication thunk execution's bandwidths (the formulas: [`super`]'s docs and
//! [`Collective::bandwidth_factors`]), and the executions that take no time, which have
//! none and are left out of the bandwidths.

use crate::hlo::{Collective, CollectiveKind};
use crate::output::notes::Notes;
use crate::records::Thunk;

/// Bandwidths of one communication thunk, `None` for compute thunks or missing fields.
pub fn bandwidth(t: &Thunk) -> Option<(f64, f64)> {
    let kind = CollectiveKind::from_name(t.collective.as_deref()?)?;
    let c = Collective {
        kind,
        group_size: u64::from(t.group_size?),
        message_bytes: t.message_bytes?,
    };
    let (alg, bus) = c.bandwidth_factors();
    let full = (t.dur_ns + t.hidden_ns) as f64;
    if full <= 0.0 {
        return None;
    }
    let algbw = alg * c.message_bytes as f64 / full;
    Some((algbw, algbw * bus))
}

/// A communication thunk execution that took no time at all: it has no bandwidth.
pub fn of_no_time(t: &Thunk) -> bool {
    t.comm && t.dur_ns == 0 && t.hidden_ns == 0
}

/// Says how many communication thunk executions of `place` took no time (left out of
/// the bandwidths, counted everywhere else).
pub fn say_no_time(place: &str, n: u64, notes: &Notes) {
    if n > 0 {
        notes.note(format!(
            "{place}: {n} communication thunk execution{} no time at all (dur_ns + hidden_ns \
             = 0): left out of the bandwidths",
            if n == 1 { " takes" } else { "s take" }
        ));
    }
}
