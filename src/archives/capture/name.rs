//! The archive name that `-o` gives (`%q{VAR}` expansion, suffixes), as nsys-jax's
//! `expand` in `nsys_jax/scripts/nsys_jax.py` handles it.

use crate::error::{Error, Result};
use std::path::PathBuf;

/// The archive that `-o NAME` names: `.nsys-rep` then `.zip` removed, `%` sequences
/// expanded (`var` looks environment variables up), `.zip` appended.
pub fn archive_path(name: &str, var: impl Fn(&str) -> Option<String>) -> Result<PathBuf> {
    let stem = name.strip_suffix(".nsys-rep").unwrap_or(name);
    let stem = stem.strip_suffix(".zip").unwrap_or(stem);
    let expanded = expand(stem, var)?;
    if expanded.is_empty() || expanded.ends_with('/') {
        return Err(Error::Usage(format!(
            "-o `{name}` names a folder, not an archive"
        )));
    }
    Ok(PathBuf::from(expanded + ".zip"))
}

/// Expands `%q{VAR}`, `%h`, `%p` and `%%` in an output name. nsys-jax expands `%q{VAR}`
/// only (leaving undefined variables as they are) and then turns every `%%` into `%`, also
/// inside the values; here a value is taken as it is, and anything else after a `%` is an
/// error, so that a name never means something other than what it says.
fn expand(name: &str, var: impl Fn(&str) -> Option<String>) -> Result<String> {
    let usage = |msg: String| Error::Usage(format!("-o `{name}`: {msg}"));
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (text, used) = match after.chars().next() {
            Some('%') => ("%".to_string(), 1),
            Some('h') => (host_name(), 1),
            Some('p') => (std::process::id().to_string(), 1),
            Some('q') => {
                let Some((var_name, _)) = after.strip_prefix("q{").and_then(|a| a.split_once('}'))
                else {
                    return Err(usage("`%q` must be followed by `{VARIABLE}`".into()));
                };
                let value = var(var_name).ok_or_else(|| {
                    usage(format!("environment variable `{var_name}` is not set"))
                })?;
                (value, var_name.len() + 3)
            }
            other => {
                let what = other.map_or("the end".to_string(), |c| format!("`%{c}`"));
                return Err(usage(format!(
                    "{what} is not one of %q{{VAR}}, %h, %p, %%; write `%%` for a `%`"
                )));
            }
        };
        out.push_str(&text);
        rest = &after[used..];
    }
    out.push_str(rest);
    Ok(out)
}

/// This machine's name, as nsys' `%h`.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_names_are_expanded_and_stripped() {
        let var = |v: &str| (v == "RANK").then(|| "3".to_string());
        let path = |n: &str| archive_path(n, var).map(|p| p.to_string_lossy().into_owned());
        assert_eq!(path("out/rank%q{RANK}").unwrap(), "out/rank3.zip");
        assert_eq!(path("r%q{RANK}.nsys-rep").unwrap(), "r3.zip");
        assert_eq!(path("r.zip").unwrap(), "r.zip");
        assert_eq!(path("r.zip.nsys-rep").unwrap(), "r.zip");
        assert_eq!(path("100%%q{RANK}").unwrap(), "100%q{RANK}.zip");
        assert_eq!(path("a%%%q{RANK}").unwrap(), "a%3.zip");
        assert_eq!(path("p%p").unwrap(), format!("p{}.zip", std::process::id()));
        for (bad, msg) in [
            ("r%q{NOPE}", "`NOPE` is not set"),
            ("r%q{RANK", "`%q` must be followed by `{VARIABLE}`"),
            ("50%x", "`%x` is not one of"),
            ("50%", "the end is not one of"),
            ("out/", "names a folder"),
        ] {
            let e = path(bad).unwrap_err();
            assert!(e.to_string().contains(msg), "{bad}: {e}");
            assert_eq!(e.exit_code(), 2);
        }
    }
}
