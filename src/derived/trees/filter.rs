//! What the range-tree filters match on, and the set of reshaping steps to apply.

use super::XLA_COMPILE_PREFIX;
use regex::Regex;

/// A test on a range name.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// The name matches a regular expression (unanchored, as with grep).
    Regex(Regex),
    /// The name starts with this text.
    Prefix(&'static str),
    /// The name does not start with this text.
    NotPrefix(&'static str),
}

impl Matcher {
    /// Whether `name` matches.
    pub fn is_match(&self, name: &str) -> bool {
        match self {
            Matcher::Regex(re) => re.is_match(name),
            Matcher::Prefix(p) => name.starts_with(p),
            Matcher::NotPrefix(p) => !name.starts_with(p),
        }
    }
}

/// The reshaping steps, applied in this order to every completed tree:
/// splice workers (while the tree is built), keep subtrees, select, fold, collapse.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    /// Splice top-level ranges of parallel-compilation worker threads under the
    /// compiling thread's ranges.
    pub splice: bool,
    /// Keep only matching ranges and their descendants; the rest is dropped.
    pub subtree: Vec<Matcher>,
    /// Keep only matching ranges; the others are folded away.
    pub select: Vec<Matcher>,
    /// Fold matching ranges away: their children move up to their parent, their own
    /// time becomes the parent's self time.
    pub fold: Vec<Matcher>,
    /// Drop the descendants of matching ranges; their time becomes the range's self time.
    pub collapse: Vec<Matcher>,
}

impl Matcher {
    /// The matcher as the command line gives it.
    fn describe(&self) -> String {
        match self {
            Matcher::Regex(re) => format!("'{}'", re.as_str()),
            Matcher::Prefix(p) => format!("'^{p}'"),
            Matcher::NotPrefix(p) => format!("not '^{p}'"),
        }
    }
}

impl Filters {
    /// The filters that drop ranges, as the command line gives them (for messages).
    pub fn describe(&self) -> String {
        let list = |flag: &str, ms: &[Matcher]| {
            ms.iter()
                .map(|m| format!("{flag} {}", m.describe()))
                .collect::<Vec<_>>()
        };
        let mut parts = list("--subtree", &self.subtree);
        parts.extend(list("--select", &self.select));
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" ")
        }
    }

    /// The preparation nsys-jax applies to compilation ranges before analysing them
    /// (`_load_nvtx_pushpop_trace` and `remove_autotuning_detail`): XlaCompile subtrees
    /// with their worker threads spliced in, ranges of other domains (cuBLAS, NCCL, …)
    /// folded into their XLA parents, and the detail inside autotuner measurement and
    /// autotuner compilation collapsed. Applying it twice changes nothing more.
    pub fn add_xla_compile(&mut self) {
        self.splice = true;
        self.subtree.push(Matcher::Prefix(XLA_COMPILE_PREFIX));
        self.fold.push(Matcher::NotPrefix("TSL:"));
        self.collapse
            .push(Matcher::Prefix("TSL:XlaAutotunerMeasurement"));
        self.collapse
            .push(Matcher::Prefix("TSL:XlaAutotunerCompilation"));
    }
}
