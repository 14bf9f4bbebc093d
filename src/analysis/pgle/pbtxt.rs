//! Writing the profiles: each as XLA's `ProfiledInstructionsProto` text format, one
//! `<fingerprint>.pbtxt` per program in the output folder.

use super::profiles::Profile;
use crate::error::{Error, Result};
use crate::output::numbers::us_exact;
use std::fmt::Write as _;
use std::io::Write;
use std::path::PathBuf;

/// A name as a text-format string literal: quotes, backslashes and bytes outside
/// printable ASCII escaped (octal, as protobuf's own text printer does).
fn quoted(name: &str) -> String {
    let mut s = String::with_capacity(name.len() + 2);
    s.push('"');
    for b in name.bytes() {
        match b {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            b'\r' => s.push_str("\\r"),
            b'\t' => s.push_str("\\t"),
            0x20..=0x7e => s.push(b as char),
            _ => {
                let _ = write!(s, "\\{b:03o}");
            }
        }
    }
    s.push('"');
    s
}

/// Writes a profile as XLA's `ProfiledInstructionsProto` text format: one
/// `costs { name: "…" cost_us: … }` line per instruction.
pub fn write_profile(profile: &Profile, out: &mut dyn Write) -> Result<()> {
    for e in &profile.entries {
        writeln!(
            out,
            "costs {{ name: {} cost_us: {} }}",
            quoted(&e.name),
            us_exact(e.cost_ns)
        )
        .map_err(Error::Output)?;
    }
    out.flush().map_err(Error::Output)
}

/// Writes each profile into `dir` as `<fingerprint>.pbtxt` (created if missing; each
/// file under a temporary name, then moved into place); nothing to write is an error
/// naming `inputs`.
pub fn write_files(dir: &std::path::Path, profiles: &[Profile], inputs: &[PathBuf]) -> Result<()> {
    if profiles.is_empty() {
        let place = inputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        return Err(Error::data(
            place,
            "no thunk executions of a program with a fingerprint: no profile to write",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir.display().to_string(), e))?;
    for p in profiles {
        let mut file = crate::output::open_output(Some(&dir.join(p.file_name())), inputs)?;
        write_profile(p, &mut file)?;
        file.finish()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_text_format() {
        assert_eq!(quoted("fusion.12"), "\"fusion.12\"");
        assert_eq!(quoted("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(quoted("é"), "\"\\303\\251\"");
    }
}
