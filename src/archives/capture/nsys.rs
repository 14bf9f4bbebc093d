//! The `nsys` command lines njx-capture runs, and what it reads from the user's `nsys
//! profile` options: the defaults it adds unless given, and the exit status with which
//! nsys ends the program (nsys-jax's `override_nsys_default`, `nsys_arg_value` and
//! expected return codes in `nsys_jax/scripts/nsys_jax.py`).

use crate::error::{Error, Result};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// `nsys profile` options added unless given: `(long name, short name, value)`.
pub const DEFAULTS: [(&str, Option<char>, &str); 4] = [
    ("cuda-graph-trace", None, "node"),
    ("cpuctxsw", None, "none"),
    ("python-sampling", None, "true"),
    ("trace", Some('t'), "cublas,cuda,cudnn,cusolver,nvtx,osrt"),
];

/// Where an option appears in `flags`: `--long`, `--long=…`, `-s` or `-s…`.
fn positions<'f>(
    flags: &'f [String],
    long: &'f str,
    short: Option<char>,
) -> impl Iterator<Item = usize> + 'f {
    flags.iter().enumerate().filter_map(move |(i, f)| {
        let is_long = f
            .strip_prefix("--")
            .and_then(|f| f.strip_prefix(long))
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('='));
        let is_short = short.is_some_and(|s| {
            !f.starts_with("--") && f.strip_prefix('-').is_some_and(|f| f.starts_with(s))
        });
        (is_long || is_short).then_some(i)
    })
}

/// The value of the last `--long VALUE` or `--long=VALUE` in `flags`.
pub fn option_value<'f>(flags: &'f [String], long: &str) -> Option<&'f str> {
    let i = positions(flags, long, None).last()?;
    match flags[i].split_once('=') {
        Some((_, value)) => Some(value),
        None => flags.get(i + 1).map(String::as_str),
    }
}

/// The arguments of `nsys profile`: the user's options, the defaults not among them, and
/// the report to write.
pub fn profile_args(user: &[String], report: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["profile".into()];
    args.extend(user.iter().map(OsString::from));
    for (long, short, value) in DEFAULTS {
        if positions(user, long, short).next().is_none() {
            args.push(format!("--{long}={value}").into());
        }
    }
    args.push("--output".into());
    args.push(report.into());
    args
}

/// The exit statuses that mean success: 0, and 128 + the signal nsys sends the program
/// when it ends the capture with `--capture-range-end=stop-shutdown` (nsys' default) or
/// `repeat-shutdown:N`; `--kill` names the signal (sigterm by default, `none` for none).
pub fn expected_statuses(flags: &[String]) -> Vec<i32> {
    let mut ok = vec![0];
    let end = option_value(flags, "capture-range-end").unwrap_or("stop-shutdown");
    if end == "stop-shutdown" || end.starts_with("repeat-shutdown:") {
        let signal = match option_value(flags, "kill").map(str::to_ascii_lowercase) {
            None => Some(15),
            Some(s) => match s.as_str() {
                "none" => None,
                "sigterm" => Some(15),
                "sigkill" => Some(9),
                n => n.parse().ok(),
            },
        };
        ok.extend(signal.map(|s: i32| 128 + s));
    }
    ok
}

/// The exit status of a finished process as a shell gives it: the code, or 128 + the
/// signal that ended it.
pub fn status_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1)
}

/// Finds a program as the shell would: a name with a `/` as it is, others in `PATH`.
pub fn which(program: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.as_encoded_bytes().contains(&b'/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// Runs `nsys export --type sqlite --output SQLITE REPORT`, nsys' messages on stderr.
pub fn export_sqlite(nsys: &Path, report: &Path, sqlite: &Path) -> Result<()> {
    let place = report.display().to_string();
    // A signal meanwhile waits for nsys export to end (it writes in the working folder).
    let status = crate::util::cleanup::run_child(
        Command::new(nsys)
            .args(["export", "--type", "sqlite", "--output"])
            .arg(sqlite)
            .arg(report)
            .stdin(Stdio::null())
            .stdout(std::io::stderr()),
    )
    .map_err(|e| Error::io(format!("{place}: running nsys export"), e))?;
    if !status.success() {
        return Err(Error::data(
            place,
            format!("`nsys export --type sqlite` failed ({status}); its messages are above"),
        ));
    }
    if !sqlite.is_file() {
        return Err(Error::data(
            place,
            "`nsys export --type sqlite` succeeded but wrote no SQLite file",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_are_added_unless_given() {
        let args = profile_args(
            &strings(&["-t", "cuda", "--cpuctxsw", "process-tree", "--delay=3"]),
            Path::new("/w/report.nsys-rep"),
        );
        let args: Vec<_> = args.iter().map(|a| a.to_str().unwrap()).collect();
        assert_eq!(
            args,
            [
                "profile",
                "-t",
                "cuda",
                "--cpuctxsw",
                "process-tree",
                "--delay=3",
                "--cuda-graph-trace=node",
                "--python-sampling=true",
                "--output",
                "/w/report.nsys-rep"
            ]
        );
    }

    #[test]
    fn the_shutdown_signal_counts_as_success() {
        let ok = |v: &[&str]| expected_statuses(&strings(v));
        assert_eq!(ok(&[]), [0, 143]);
        assert_eq!(ok(&["--kill", "sigkill"]), [0, 137]);
        assert_eq!(ok(&["--kill=SIGKILL", "--kill=2"]), [0, 130]);
        assert_eq!(ok(&["--kill=none"]), [0]);
        assert_eq!(ok(&["--capture-range-end", "stop"]), [0]);
        assert_eq!(ok(&["--capture-range-end=repeat-shutdown:3"]), [0, 143]);
        assert_eq!(ok(&["--capture-range-end=repeat:3"]), [0]);
    }
}
