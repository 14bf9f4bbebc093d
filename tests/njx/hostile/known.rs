//! Cases of the campaign that still fail: the gaps of issue 15 left open, each with why
//! (none now). A listed case that starts passing fails the run, so the list only shrinks.

/// (case name, tool, why it still fails).
pub const KNOWN: &[(&str, &str, &str)] = &[];
