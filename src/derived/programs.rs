//! Which programs an analysis answers for: `--program NAME` (repeatable: only these) and
//! `--exclude-program NAME` (repeatable: all but these), each NAME a module name
//! (`pjit__wrapped_step_fn`) or a program key (an HLO fingerprint, or whatever
//! `--program-key` keyed the records by). On the pax run a 4-byte barrier all-reduce
//! (`jit__psum`, `sync_global_devices`) is 84 % of module time and drives the hidden
//! share, wait and stragglers of the whole run; `--exclude-program jit__psum` or
//! `--program pjit__wrapped_step_fn` answers for the step.
//!
//! The filter is applied where each analysis decides what counts (with the warm-up rule),
//! never to what is read: the warm-up rule and partial results see every program, so a
//! filter changes no other program's figures, and partials of every program reduce under
//! any filter.

use crate::error::{Error, Result};
use std::collections::BTreeSet;

/// `--program` and `--exclude-program`: empty lists keep every program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProgramFilter {
    /// Only these (none: every program).
    pub only: Vec<String>,
    /// Never these.
    pub except: Vec<String>,
}

impl ProgramFilter {
    /// The filter of the two options' values.
    pub fn new(only: &[String], except: &[String]) -> ProgramFilter {
        ProgramFilter {
            only: only.to_vec(),
            except: except.to_vec(),
        }
    }

    /// Whether it keeps every program.
    pub fn is_all(&self) -> bool {
        self.only.is_empty() && self.except.is_empty()
    }

    /// Whether the program keyed `program`, of module `name`, counts.
    pub fn keeps(&self, program: &str, name: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|n| n == program || n == name);
        (self.only.is_empty() || named(&self.only)) && !named(&self.except)
    }

    /// Refuses (a usage error) a NAME that names none of the `programs` read (key, module
    /// name): a misspelt name would otherwise leave an empty or a whole answer without a
    /// word. Then says in one line what was left out, for `note`.
    pub fn check<'a>(
        &self,
        programs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Option<String>> {
        if self.is_all() {
            return Ok(None);
        }
        // Autotuning executions (program `unknown`) are no program a user names.
        let programs: BTreeSet<(&str, &str)> = programs
            .into_iter()
            .filter(|(k, _)| !crate::records::is_autotuning(k))
            .collect();
        // A program as people know it: its module name, else its key.
        let shown = |&(k, name): &(&'a str, &'a str)| if name.is_empty() { k } else { name };
        for (option, list) in [
            ("--program", &self.only),
            ("--exclude-program", &self.except),
        ] {
            if let Some(n) = list
                .iter()
                .find(|n| !programs.iter().any(|(k, name)| n == k || n == name))
            {
                let names: BTreeSet<&str> = programs.iter().map(shown).collect();
                let listed: Vec<&str> = names.iter().take(12).copied().collect();
                let more = names.len() - listed.len();
                return Err(Error::Usage(format!(
                    "{option} {n}: no program of that module name or key was read \
                     (programs: {}{})",
                    if listed.is_empty() {
                        "none".to_string()
                    } else {
                        listed.join(", ")
                    },
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                )));
            }
        }
        let (kept, left): (Vec<_>, Vec<_>) =
            programs.iter().partition(|(k, name)| self.keeps(k, name));
        if kept.is_empty() {
            return Err(Error::Usage(format!(
                "{} leaves none of the {} programs read: nothing to answer for",
                self.said(),
                programs.len()
            )));
        }
        let left: BTreeSet<&str> = left.into_iter().map(shown).collect();
        Ok(Some(format!(
            "{} of {} programs kept ({}); left out: {}",
            kept.len(),
            programs.len(),
            self.said(),
            if left.is_empty() {
                "none".to_string()
            } else {
                left.into_iter().collect::<Vec<_>>().join(", ")
            }
        )))
    }

    /// The options as given, for messages.
    fn said(&self) -> String {
        self.only
            .iter()
            .map(|n| format!("--program {n}"))
            .chain(self.except.iter().map(|n| format!("--exclude-program {n}")))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_keys_both_select() {
        let f = ProgramFilter::new(&["jit_step".into()], &[]);
        assert!(f.keeps("5d41", "jit_step"));
        assert!(!f.keeps("6f80", "jit__psum"));
        let f = ProgramFilter::new(&[], &["6f80".into()]);
        assert!(f.keeps("5d41", "jit_step"));
        assert!(!f.keeps("6f80", "jit__psum"));
        assert!(ProgramFilter::default().keeps("x", "y"));
        // Excluded wins over included.
        let f = ProgramFilter::new(&["jit_step".into()], &["jit_step".into()]);
        assert!(!f.keeps("5d41", "jit_step"));
    }

    #[test]
    fn an_unknown_name_is_refused_and_what_is_left_out_said() {
        let read = [("5d41", "jit_step"), ("6f80", "jit__psum")];
        let f = ProgramFilter::new(&[], &["jit__psun".into()]);
        let e = f.check(read).unwrap_err().to_string();
        assert!(
            e.contains("--exclude-program jit__psun") && e.contains("jit__psum"),
            "{e}"
        );
        let f = ProgramFilter::new(&[], &["jit__psum".into(), "jit_step".into()]);
        let e = f.check(read).unwrap_err().to_string();
        assert!(e.contains("leaves none of the 2 programs"), "{e}");
        let f = ProgramFilter::new(&[], &["jit__psum".into()]);
        let note = f.check(read).unwrap().unwrap();
        assert_eq!(
            note,
            "1 of 2 programs kept (--exclude-program jit__psum); left out: jit__psum"
        );
        assert_eq!(ProgramFilter::default().check(read).unwrap(), None);
    }
}
