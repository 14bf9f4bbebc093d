//! `njx-capture`: the command line of [`crate::archives::capture`]: njx's own options, the `nsys
//! profile` options passed through, and the program to run, told apart as nsys-jax's
//! `main` in `nsys_jax/scripts/nsys_jax.py` does.

use crate::archives::capture::Options;
use crate::error::Result;
use crate::output::notes::Notes;
use clap::Parser;
use clap::error::ErrorKind;
use std::ffi::OsString;
use std::process::ExitCode;

/// Run a program under `nsys profile` with the settings that make JAX/XLA profiles
/// analysable, and write one archive that every njx tool reads.
#[derive(Debug, Parser)]
#[command(
    name = "njx-capture",
    version,
    long_version = super::LONG_VERSION,
    override_usage = "njx-capture [OPTIONS] [NSYS_OPTIONS]... -- PROGRAM [ARGS]...\n       \
                      njx-capture [OPTIONS] PROGRAM [ARGS]...",
    after_help = "Options that are not njx-capture's own go to `nsys profile` unchanged; then \
`--` is required before the program, and so it is when the program's arguments contain `--`. \
njx-capture adds the nsys options --cuda-graph-trace=node --cpuctxsw=none \
--python-sampling=true --trace=cublas,cuda,cudnn,cusolver,nvtx,osrt unless they are given, \
and runs the program with JAX_TRACEBACK_IN_LOCATIONS_LIMIT=-1 unless it is set, and XLA_FLAGS \
with --xla_dump_hlo_as_proto=true (unless set) and --xla_dump_to pointed at its own working \
folder; every other XLA flag is kept. JAX's compilation cache is left as it is (as nsys-jax \
does since JAX-Toolbox#1713): XLA since openxla/xla#28928 (August 2025; jaxlib 0.7.2 and \
later by release date) dumps executables loaded from the cache too; with an older JAX a \
cache hit leaves its program without a dump, which njx-capture reports afterwards (set \
JAX_ENABLE_COMPILATION_CACHE=false for such a JAX).

Afterwards it exports the report with `nsys export --type sqlite` and writes the archive: \
report.nsys-rep (for the nsys GUI), report.sqlite (what njx-export reads), \
dump/module_*.hlo.pb.xz (XLA's HLO dumps), sources/<path> (the Python files named in the \
dumps' stack frames) and analysis/<n>-<name>.txt (the output of each --analysis). The archive \
is written under a temporary name in its folder and renamed into place.

Exit status: the program's own; 128 + the signal with which nsys ends the program under \
--capture-range-end=stop-shutdown (the default) counts as success, as in nsys-jax. 1 when \
njx-capture itself fails (nsys missing, an archive that exists, post-processing), 2 for a bad \
command line.

Examples:
  njx-capture -o out/rank%q{SLURM_PROCID} --condition '$SLURM_LOCALID == 0' \\
    -- python train.py
  njx-capture -o run1 \\
    --analysis 'njx-export \"$1\" | njx-compile-summary --total' python train.py
  njx-capture -o run2 --capture-range=cudaProfilerApi \\
    -- python train.py --steps 10
  njx-export run1.zip | njx-ranges --xla-compile | njx-compile-summary --total"
)]
pub struct Args {
    /// Archive to write: NAME.zip, after removing a `.nsys-rep` or `.zip` suffix. `%q{VAR}`
    /// is the environment variable VAR (an error when it is not set), `%h` the host name,
    /// `%p` njx-capture's process id, `%%` a `%`. Missing folders are created. Without -o,
    /// a new njx-report-XXXXXXXX.zip in the working folder.
    #[arg(short, long, value_name = "NAME")]
    pub output: Option<String>,

    /// Overwrite the archive if it exists (without -f an existing archive is an error,
    /// found before the program runs).
    #[arg(short, long, visible_alias = "force")]
    pub force_overwrite: bool,

    /// Say nothing on stderr but errors (njx-capture's own notes; nsys and the program
    /// still write theirs).
    #[arg(short, long)]
    pub quiet: bool,

    /// Profile only when bash's `[[ EXPR ]]` is true; otherwise run the program as it is,
    /// without nsys, write nothing and exit with its status. `'$SLURM_LOCALID == 0'`
    /// profiles one process per node.
    #[arg(long, value_name = "EXPR", visible_alias = "nsys-jax-condition")]
    pub condition: Option<String>,

    /// After writing the archive, run PIPELINE with `bash -o pipefail -c` and store its
    /// standard output in the archive as analysis/<n>-<name>.txt, and the files it writes
    /// in its working folder (a fresh one) under analysis/<n>-<name>/. The archive's path
    /// is `$1` and `$NJX_ARCHIVE`; njx-capture's own folder comes first on PATH.
    /// `--analysis report` is `njx-report "$1"` (stored as analysis/<n>-report.txt).
    /// Repeatable.
    #[arg(long, value_name = "PIPELINE")]
    pub analysis: Vec<String>,

    /// The program to profile and its arguments.
    // `parse_from` always puts a `--` before the program, so clap takes it as it is.
    #[arg(value_name = "PROGRAM", required = true, num_args = 1..)]
    pub program: Vec<OsString>,

    /// The `nsys profile` options, in the order given.
    #[arg(skip)]
    pub nsys: Vec<String>,
}

impl Args {
    /// Parses a command line (the program's name first): njx-capture's options wherever
    /// they are before `--` (or before the program when there is no `--`), everything else
    /// before `--` for nsys, the rest for the program. Help, version and usage errors come
    /// back as clap errors, to be printed with `exit()`; `--completions` prints its script
    /// and exits (see [`super::try_parse_from`]).
    pub fn parse_from<I, T>(argv: I) -> Result<Args, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let mut argv = argv.into_iter().map(Into::into);
        let bin = argv.next().unwrap_or_else(|| "njx-capture".into());
        let rest: Vec<OsString> = argv.collect();
        let split = split(&rest)
            .map_err(|msg| super::command::<Args>().error(ErrorKind::UnknownArgument, msg))?;
        let mut clap_argv = vec![bin];
        clap_argv.extend(split.own);
        clap_argv.push("--".into());
        clap_argv.extend(split.program);
        let mut args: Args = super::try_parse_from(clap_argv)?;
        args.nsys = split.nsys;
        Ok(args)
    }

    /// The capture these options ask for.
    pub fn into_options(self) -> Options {
        Options {
            output: self.output,
            force_overwrite: self.force_overwrite,
            condition: self.condition,
            analysis: self.analysis,
            program: self.program,
            nsys: self.nsys,
        }
    }
}

/// Runs `njx-capture`: the exit status is the program's (see [`crate::archives::capture::run`]).
pub fn main() -> ExitCode {
    let args = Args::parse_from(std::env::args_os())
        .unwrap_or_else(|e| super::exit_with("njx-capture", e));
    let notes = Notes::for_tool("njx-capture", args.quiet);
    match crate::archives::capture::run(&args.into_options(), &notes) {
        Ok(status) => ExitCode::from(status),
        Err(e) => super::finish("njx-capture", Err(e)),
    }
}

/// A command line taken apart.
#[derive(Debug, Default, PartialEq)]
struct Split {
    own: Vec<OsString>,
    nsys: Vec<String>,
    program: Vec<OsString>,
}

/// One of njx-capture's own options: its names and whether it takes a value.
struct Own {
    /// The long name and its aliases.
    longs: Vec<String>,
    short: Option<char>,
    takes_value: bool,
}

/// njx-capture's options, from the clap definition as parsed (help, version and
/// completions included), so that the splitting below can never disagree with it.
fn own_options() -> Vec<Own> {
    let mut cmd = super::command::<Args>();
    cmd.build();
    cmd.get_arguments()
        .filter(|a| !a.is_positional())
        .map(|a| Own {
            longs: a
                .get_long()
                .into_iter()
                .chain(a.get_all_aliases().unwrap_or_default())
                .map(str::to_string)
                .collect(),
            short: a.get_short(),
            takes_value: a.get_action().takes_values(),
        })
        .collect()
}

/// Whether `arg` is one of our options: `None` if not, else whether the value is the
/// next argument. Short options may be grouped (`-fo NAME`, `-foNAME`).
fn classify(options: &[Own], arg: &str) -> Option<bool> {
    if let Some(body) = arg.strip_prefix("--") {
        let (name, value) = match body.split_once('=') {
            Some((name, _)) => (name, true),
            None => (body, false),
        };
        let o = options.iter().find(|o| o.longs.iter().any(|l| l == name))?;
        return match (o.takes_value, value) {
            (true, inline) => Some(!inline),
            (false, false) => Some(false),
            (false, true) => None,
        };
    }
    let body = arg.strip_prefix('-').filter(|b| !b.is_empty())?;
    for (i, c) in body.char_indices() {
        let o = options.iter().find(|o| o.short == Some(c))?;
        if o.takes_value {
            return Some(body[i + c.len_utf8()..].is_empty());
        }
    }
    Some(false)
}

/// Takes the arguments after the program's name apart (see [`Args::parse_from`]).
fn split(args: &[OsString]) -> std::result::Result<Split, String> {
    let options = own_options();
    let separator = args.iter().position(|a| a == "--");
    let end = separator.unwrap_or(args.len());
    let mut out = Split::default();
    let mut i = 0;
    while i < end {
        let arg = &args[i];
        let text = arg.to_str();
        match text.and_then(|t| classify(&options, t)) {
            Some(value_follows) => {
                out.own.push(arg.clone());
                if value_follows && i + 1 < end {
                    i += 1;
                    out.own.push(args[i].clone());
                }
            }
            None if separator.is_none() => {
                if text.is_some_and(|t| t.starts_with('-')) {
                    return Err(format!(
                        "`{}` is not an njx-capture option; nsys options need `--` before the \
                         program: njx-capture [OPTIONS] [NSYS_OPTIONS]... -- PROGRAM [ARGS]...",
                        arg.to_string_lossy()
                    ));
                }
                out.program = args[i..].to_vec();
                return Ok(out);
            }
            None => {
                let Some(text) = text else {
                    return Err(format!(
                        "nsys option `{}` is not valid UTF-8",
                        arg.to_string_lossy()
                    ));
                };
                if out.nsys.is_empty() && !text.starts_with('-') {
                    return Err(format!(
                        "`{text}` comes before `--` but is not an option: when the program's \
                         arguments contain `--`, put a `--` before the program too: \
                         njx-capture [OPTIONS] [NSYS_OPTIONS]... -- {text} [ARGS]..."
                    ));
                }
                out.nsys.push(text.to_string());
            }
        }
        i += 1;
    }
    if let Some(sep) = separator {
        out.program = args[sep + 1..].to_vec();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::parse_from(std::iter::once("njx-capture").chain(args.iter().copied()))
    }

    #[test]
    fn own_options_nsys_options_and_the_program_are_told_apart() {
        let a = parse(&[
            "-o",
            "out",
            "--trace=cuda",
            "--delay",
            "5",
            "-f",
            "--analysis=x",
            "--",
            "prog",
            "-o",
            "--",
            "y",
        ])
        .unwrap();
        assert_eq!(a.output.as_deref(), Some("out"));
        assert!(a.force_overwrite);
        assert_eq!(a.analysis, ["x"]);
        assert_eq!(a.nsys, ["--trace=cuda", "--delay", "5"]);
        assert_eq!(a.program, os(&["prog", "-o", "--", "y"]));

        let a = parse(&["-oout", "--condition", "1 == 1", "python", "t.py", "-f"]).unwrap();
        assert_eq!(a.output.as_deref(), Some("out"));
        assert!(!a.force_overwrite);
        assert_eq!(a.condition.as_deref(), Some("1 == 1"));
        assert!(a.nsys.is_empty());
        assert_eq!(a.program, os(&["python", "t.py", "-f"]));

        let a = parse(&["--nsys-jax-condition=1", "p"]).unwrap();
        assert_eq!(a.condition.as_deref(), Some("1"));

        let a = parse(&["-fo", "x", "-ft", "--", "p"]).unwrap();
        assert!(a.force_overwrite);
        assert_eq!(a.output.as_deref(), Some("x"));
        assert_eq!(a.nsys, ["-ft"]);
    }

    #[test]
    fn a_missing_separator_is_a_usage_error() {
        let e = parse(&["--trace=cuda", "python"]).unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(
            e.to_string()
                .contains("`--trace=cuda` is not an njx-capture option")
        );
        let e = parse(&["python", "t.py", "--", "x"]).unwrap_err();
        assert!(
            e.to_string().contains("put a `--` before the program"),
            "{e}"
        );
        assert_eq!(parse(&["-o", "x"]).unwrap_err().exit_code(), 2);
        assert_eq!(parse(&["--"]).unwrap_err().exit_code(), 2);
    }
}
