//! The environment of the profiled program: the JAX settings nsys-jax sets unless the user
//! did, and `XLA_FLAGS` with the HLO protobuf dumps switched on and sent to the capture's
//! working folder (nsys-jax's `main` in `nsys_jax/scripts/nsys_jax.py`).

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// JAX variables set for the program unless they are set already: full Python tracebacks
/// in the HLO metadata (the source of `njx-flamefold --by source`). The compilation cache
/// is left as the user set it, as nsys-jax does since JAX-Toolbox#1713: XLA dumps
/// executables loaded from the cache since openxla/xla#28928 (August 2025); with an older
/// XLA a cache hit leaves its program without a dump, which the capture says afterwards
/// ([`super::postprocess::undumped_programs`]).
pub const JAX_DEFAULTS: [(&str, &str); 1] = [("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "-1")];

/// What changes in the program's environment.
#[derive(Debug, PartialEq)]
pub struct ProgramEnv {
    /// Variables to set.
    pub vars: Vec<(String, String)>,
    /// Where XLA writes the HLO dumps; `None` when the user switched them off.
    pub dump_dir: Option<PathBuf>,
    /// What the user should know (flags overridden, dumps switched off).
    pub warnings: Vec<String>,
}

/// The environment for the program, given a lookup of the current one and the folder for
/// the dumps.
pub fn program_env(var: impl Fn(&str) -> Option<String>, dump_dir: &Path) -> Result<ProgramEnv> {
    let mut vars = Vec::new();
    for (name, value) in JAX_DEFAULTS {
        if var(name).is_none() {
            vars.push((name.to_string(), value.to_string()));
        }
    }
    let mut warnings = Vec::new();
    let mut flags = XlaFlags::parse(&var("XLA_FLAGS").unwrap_or_default(), &mut warnings)?;
    let as_proto = match flags.get("xla_dump_hlo_as_proto") {
        None => {
            flags.set("xla_dump_hlo_as_proto", Some("true"));
            true
        }
        Some(value) => xla_bool(value).ok_or_else(|| {
            Error::Usage(format!(
                "XLA_FLAGS: --xla_dump_hlo_as_proto={}: not a boolean",
                value.unwrap_or_default()
            ))
        })?,
    };
    let dump_dir = if as_proto {
        if let Some(old) = flags.get("xla_dump_to") {
            warnings.push(format!(
                "XLA_FLAGS: --xla_dump_to={} replaced: the dumps go to njx-capture's working \
                 folder and into the archive",
                old.unwrap_or_default()
            ));
        }
        flags.set("xla_dump_to", Some(&dump_dir.to_string_lossy()));
        Some(dump_dir.to_path_buf())
    } else {
        warnings.push(
            "XLA_FLAGS: --xla_dump_hlo_as_proto is false: the archive will have no HLO dumps \
             and no sources, so module and thunk records lack program keys and communication"
                .to_string(),
        );
        None
    };
    vars.push(("XLA_FLAGS".to_string(), flags.to_string()));
    Ok(ProgramEnv {
        vars,
        dump_dir,
        warnings,
    })
}

/// A boolean flag value as XLA reads it: a bare flag is true.
fn xla_bool(value: Option<&str>) -> Option<bool> {
    match value.map(str::to_ascii_lowercase).as_deref() {
        None | Some("true" | "1") => Some(true),
        Some("false" | "0") => Some(false),
        Some(_) => None,
    }
}

/// `XLA_FLAGS` parsed into `(name, value)` pairs in order of first appearance; a flag
/// given twice keeps its first place and its last value, as XLA applies them.
#[derive(Debug, Default, PartialEq)]
pub struct XlaFlags(Vec<(String, Option<String>)>);

impl XlaFlags {
    /// Parses `XLA_FLAGS` the way XLA does (`ParseArgvFromString` in
    /// `xla/parse_flags_from_env.cc`): flags separated by white space, each `--name`,
    /// `--name=value` or `--name="quoted value"` (single or double quotes; a backslash
    /// escapes in double quotes). Repeated flags are reported in `warnings`.
    pub fn parse(text: &str, warnings: &mut Vec<String>) -> Result<XlaFlags> {
        let mut flags = XlaFlags::default();
        let mut chars = text.chars().peekable();
        loop {
            while chars.next_if(|c| c.is_whitespace()).is_some() {}
            let Some(&first) = chars.peek() else { break };
            let mut token = String::new();
            while let Some(c) = chars.next_if(|c| !c.is_whitespace() && *c != '=') {
                token.push(c);
            }
            let name = token.trim_start_matches('-');
            if first != '-' || name.is_empty() {
                let rest: String = chars.take_while(|c| !c.is_whitespace()).collect();
                return Err(Error::Usage(format!(
                    "XLA_FLAGS: `{token}{rest}` is not a flag (--name or --name=value)"
                )));
            }
            let value = if chars.next_if_eq(&'=').is_some() {
                Some(match chars.next_if(|c| *c == '"' || *c == '\'') {
                    Some(quote) => {
                        let mut value = String::new();
                        while let Some(c) = chars.next() {
                            match c {
                                c if c == quote => break,
                                '\\' if quote == '"' => value.extend(chars.next()),
                                c => value.push(c),
                            }
                        }
                        value
                    }
                    None => {
                        let mut value = String::new();
                        while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                            value.push(c);
                        }
                        value
                    }
                })
            } else {
                None
            };
            if let Some(old) = flags.get(name) {
                warnings.push(format!(
                    "XLA_FLAGS: {} overridden by {}",
                    format_flag(name, old),
                    format_flag(name, value.as_deref())
                ));
            }
            flags.set(name, value.as_deref());
        }
        Ok(flags)
    }

    /// The value of a flag: `None` when absent, `Some(None)` for a bare `--name`.
    pub fn get(&self, name: &str) -> Option<Option<&str>> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_deref())
    }

    /// Sets a flag, in its old place if it was there.
    pub fn set(&mut self, name: &str, value: Option<&str>) {
        let value = value.map(str::to_string);
        match self.0.iter_mut().find(|(n, _)| n == name) {
            Some(slot) => slot.1 = value,
            None => self.0.push((name.to_string(), value)),
        }
    }
}

impl std::fmt::Display for XlaFlags {
    /// The flags as XLA reads them back, separated by spaces.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let text: Vec<String> = self
            .0
            .iter()
            .map(|(n, v)| format_flag(n, v.as_deref()))
            .collect();
        f.write_str(&text.join(" "))
    }
}

/// `--name` or `--name=value`, the value double-quoted when XLA would otherwise split it.
fn format_flag(name: &str, value: Option<&str>) -> String {
    match value {
        None => format!("--{name}"),
        Some(v) if v.contains(char::is_whitespace) || v.starts_with(['"', '\'']) => {
            let escaped = v.replace('\\', "\\\\").replace('"', "\\\"");
            format!("--{name}=\"{escaped}\"")
        }
        Some(v) => format!("--{name}={v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(vars: &[(&str, &str)]) -> ProgramEnv {
        let lookup = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        program_env(lookup, Path::new("work/dump")).unwrap()
    }

    fn var<'e>(env: &'e ProgramEnv, name: &str) -> Option<&'e str> {
        env.vars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn jax_defaults_apply_unless_set() {
        let env = env_with(&[]);
        assert_eq!(var(&env, "JAX_TRACEBACK_IN_LOCATIONS_LIMIT"), Some("-1"));
        // The compilation cache is the user's (nsys-jax since JAX-Toolbox#1713).
        assert_eq!(var(&env, "JAX_ENABLE_COMPILATION_CACHE"), None);
        assert_eq!(
            var(&env, "XLA_FLAGS"),
            Some("--xla_dump_hlo_as_proto=true --xla_dump_to=work/dump")
        );
        assert!(env.warnings.is_empty());
        let env = env_with(&[("JAX_TRACEBACK_IN_LOCATIONS_LIMIT", "3")]);
        assert_eq!(var(&env, "JAX_TRACEBACK_IN_LOCATIONS_LIMIT"), None);
    }

    #[test]
    fn xla_flags_are_merged() {
        let env = env_with(&[(
            "XLA_FLAGS",
            " --xla_gpu_enable_latency_hiding_scheduler=true --xla_dump_to=/mine \
             --xla_dump_hlo_pass_re=.* --xla_x='a b' --xla_y=\"c \\\" d\" --xla_bare \
             --xla_gpu_enable_latency_hiding_scheduler=false ",
        )]);
        assert_eq!(
            var(&env, "XLA_FLAGS"),
            Some(
                "--xla_gpu_enable_latency_hiding_scheduler=false --xla_dump_to=work/dump \
                 --xla_dump_hlo_pass_re=.* --xla_x=\"a b\" --xla_y=\"c \\\" d\" --xla_bare \
                 --xla_dump_hlo_as_proto=true"
            )
        );
        assert_eq!(env.warnings.len(), 2, "{:?}", env.warnings);
        assert!(env.warnings[0].contains("overridden by"));
        assert!(env.warnings[1].contains("--xla_dump_to=/mine replaced"));
        // What we write parses back to the same flags.
        let mut w = Vec::new();
        let flags = XlaFlags::parse(var(&env, "XLA_FLAGS").unwrap(), &mut w).unwrap();
        assert_eq!(flags.get("xla_y"), Some(Some("c \" d")));
        assert_eq!(flags.get("xla_bare"), Some(None));
        assert!(w.is_empty());
    }

    #[test]
    fn dumps_switched_off_are_respected_with_a_warning() {
        let env = env_with(&[("XLA_FLAGS", "--xla_dump_hlo_as_proto=FALSE")]);
        assert_eq!(env.dump_dir, None);
        assert_eq!(
            var(&env, "XLA_FLAGS"),
            Some("--xla_dump_hlo_as_proto=FALSE")
        );
        assert!(env.warnings[0].contains("no HLO dumps"));
        let env = env_with(&[("XLA_FLAGS", "--xla_dump_hlo_as_proto")]);
        assert!(env.dump_dir.is_some());
    }

    #[test]
    fn bad_xla_flags_are_usage_errors() {
        let lookup = |v: &str| (v == "XLA_FLAGS").then(|| "--a=1 junk".to_string());
        let e = program_env(lookup, Path::new("/d")).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("`junk` is not a flag"), "{e}");
        let lookup = |v: &str| (v == "XLA_FLAGS").then(|| "--xla_dump_hlo_as_proto=yes".into());
        let e = program_env(lookup, Path::new("/d")).unwrap_err();
        assert!(e.to_string().contains("not a boolean"), "{e}");
    }
}
