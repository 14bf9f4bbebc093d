//! `njx-capture`: runs a program under `nsys profile` the way NVIDIA JAX-Toolbox's
//! `nsys-jax` does, then post-processes the report into one archive that every njx tool
//! reads without nsys.
//!
//! - [`Options`] holds njx-capture's options, the `nsys profile` options (passed
//!   through) and the program (`crate::cmd::capture` takes the command line apart);
//!   [`archive_path`] turns `-o` into the archive's name;
//! - [`program_env`] sets the JAX variables and merges `XLA_FLAGS` ([`XlaFlags`]) so that
//!   XLA dumps its HLO protobufs into the capture's working folder;
//! - `nsys` adds nsys-jax's `nsys profile` defaults and knows which exit statuses are
//!   nsys ending the program on purpose;
//! - `archive` writes the archive: the report, its SQLite export, the dumps, the Python
//!   sources and the `--analysis` outputs (the layout is in its documentation and
//!   docs/formats.md).
//!
//! Where njx-capture differs from nsys-jax: the archive holds the SQLite export instead of
//! the `nsys stats`/`nsys recipe` tables (one `nsys export`, then njx reads it); `-o` names
//! with an undefined `%q{VAR}` are an error, not left unexpanded; an existing archive is
//! found before the program runs, not after; when `--condition` is false the program gets
//! the environment unchanged and njx-capture exits with its status (nsys-jax exits 0);
//! `--analysis` takes a shell pipeline rather than a Python script.

mod env;
mod name;
mod nsys;
mod postprocess;

pub use crate::source::layout::{ANALYSIS_DIR, DUMP_DIR, SOURCES_DIR};
use crate::source::layout::{REPORT_MEMBER, SQLITE_MEMBER};
pub use env::{JAX_DEFAULTS, ProgramEnv, XlaFlags, program_env};
pub use name::archive_path;

use crate::archives::writer::{self, ArchiveWriter, Stage, folder_of, note};
use crate::error::{Error, Result};
use crate::output::notes::Notes;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What to capture, and how.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Archive name (`-o`), before expansion; `None` for a new unique name.
    pub output: Option<String>,
    /// Overwrite an existing archive.
    pub force_overwrite: bool,
    /// Profile only when bash's `[[ EXPR ]]` is true.
    pub condition: Option<String>,
    /// Pipelines to run on the finished archive.
    pub analysis: Vec<String>,
    /// The program and its arguments.
    pub program: Vec<OsString>,
    /// `nsys profile` options, in order.
    pub nsys: Vec<String>,
}

impl Options {
    /// The program's name for messages.
    pub fn program_name(&self) -> String {
        self.program
            .first()
            .map_or_else(String::new, |p| p.to_string_lossy().into_owned())
    }
}

/// Runs the capture and returns the exit status njx-capture should end with: the
/// program's, 0 for nsys' shutdown signal, 1 when post-processing or an analysis failed
/// after a successful run. Errors before the program runs (and post-processing errors
/// when the program succeeded) come back as `Err`.
pub fn run(args: &Options, notes: &Notes) -> Result<u8> {
    let program = args.program_name();
    if nsys::which(&args.program[0]).is_none() {
        return Err(Error::data(program, "no such program (not found on PATH)"));
    }
    if let Some(expr) = &args.condition
        && !condition(expr)?
    {
        let status = Command::new(&args.program[0])
            .args(&args.program[1..])
            .status()
            .map_err(|e| Error::io(format!("running {program}"), e))?;
        return Ok(exit_byte(nsys::status_code(status)));
    }
    let nsys = nsys::which(OsStr::new("nsys")).ok_or_else(|| {
        Error::data(
            "nsys",
            "not found on PATH; njx-capture runs the program under `nsys profile` \
             (Nsight Systems)",
        )
    })?;
    // Ctrl-C, SIGTERM and SIGHUP: once nsys has ended, the working folder, a placeholder
    // and a staged archive are removed (src/util/cleanup.rs).
    crate::util::cleanup::on_signals();
    crate::util::cleanup::arm();
    // The working folder, for the dumps and the report, under $TMPDIR: local and fast.
    let work = tempfile::Builder::new()
        .prefix("njx-capture-")
        .tempdir()
        .map_err(|e| Error::io("creating a temporary folder", e))?;
    let _work_staged = crate::util::cleanup::stage(work.path());
    let env = program_env(|v| std::env::var(v).ok(), &work.path().join("dump"))?;
    let target = Target::new(args)?;
    let result = capture(args, &nsys, &target, work.path(), &env, notes);
    // An empty placeholder means that no archive took its place.
    if target.placeholder && std::fs::metadata(&target.path).is_ok_and(|m| m.len() == 0) {
        let _ = std::fs::remove_file(&target.path);
    }
    result
}

/// Evaluates `--condition` as bash's `[[ EXPR ]]`. bash ends with status 0 when it
/// cannot parse a conditional expression, so the outcome is told by statuses of our own.
fn condition(expr: &str) -> Result<bool> {
    let status = Command::new("bash")
        .arg("-c")
        .arg(format!("[[ {expr} ]] && exit 10 || exit 11"))
        .stdin(Stdio::null())
        .status()
        .map_err(|e| Error::io("--condition: running bash", e))?;
    match status.code() {
        Some(10) => Ok(true),
        Some(11) => Ok(false),
        _ => Err(Error::Usage(format!(
            "--condition `{expr}`: bash could not evaluate `[[ {expr} ]]` (its message is above)"
        ))),
    }
}

/// An exit status as a process exit code (statuses are 0–255 on Unix).
fn exit_byte(status: i32) -> u8 {
    u8::try_from(status).unwrap_or(1)
}

/// Where the archive goes.
struct Target {
    path: PathBuf,
    /// Whether an existing file may be replaced: `-f`, or our own placeholder.
    overwrite: bool,
    /// Whether `path` is an empty file we created to claim a unique name.
    placeholder: bool,
    /// The placeholder, removed if a signal ends the capture while it is empty.
    _staged: Option<crate::util::cleanup::Staged>,
}

impl Target {
    fn new(args: &Options) -> Result<Target> {
        let Some(name) = &args.output else {
            // Many ranks may start at once: claim a unique name by creating the file
            // exclusively (as nsys-jax does with mkstemp), and fill it at the end.
            let (_, path) = tempfile::Builder::new()
                .prefix("njx-report-")
                .suffix(".zip")
                .rand_bytes(8)
                .tempfile_in(".")
                .and_then(|f| f.keep().map_err(|e| e.error))
                .map_err(|e| Error::io("creating njx-report-*.zip in the working folder", e))?;
            // Named relative to the working folder, as the user sees it.
            let path = path.file_name().map_or(path.clone(), PathBuf::from);
            let staged = crate::util::cleanup::stage_placeholder(&path);
            return Ok(Target {
                path,
                overwrite: true,
                placeholder: true,
                _staged: Some(staged),
            });
        };
        let path = archive_path(name, |v| std::env::var(v).ok())?;
        if !args.force_overwrite && path.symlink_metadata().is_ok() {
            return Err(writer::exists(&path));
        }
        // Checked before the program runs: -f replaces a file, never a folder, so a
        // finished capture would have nowhere to go.
        if path.is_dir() {
            return Err(Error::data(
                path.display().to_string(),
                "is a folder: the archive cannot take its place (-f overwrites files only); \
                 choose another -o",
            ));
        }
        let folder = folder_of(&path);
        std::fs::create_dir_all(folder).map_err(|e| Error::io(folder.display().to_string(), e))?;
        Ok(Target {
            path,
            overwrite: args.force_overwrite,
            placeholder: false,
            _staged: None,
        })
    }
}

/// Profiles the program and post-processes; see [`run`] for the status.
fn capture(
    args: &Options,
    nsys: &Path,
    target: &Target,
    work: &Path,
    env: &ProgramEnv,
    notes: &Notes,
) -> Result<u8> {
    for w in &env.warnings {
        note(notes, &target.path, format!("warning: {w}"));
    }
    let program = args.program_name();
    note(
        notes,
        &target.path,
        format!("profiling {program} with nsys…"),
    );
    // Interrupted: no archive (as nsys-jax), and nothing left behind.
    let status = crate::util::cleanup::run_child(
        Command::new(nsys)
            .args(nsys::profile_args(&args.nsys, &work.join("report")))
            .args(&args.program)
            .envs(env.vars.iter().map(|(k, v)| (k, v))),
    )
    .map_err(|e| Error::io("running nsys profile", e))?;
    let status = nsys::status_code(status);
    let mut exit = 0;
    if !nsys::expected_statuses(&args.nsys).contains(&status) {
        note(
            notes,
            &target.path,
            format!("{program} exited with status {status}"),
        );
        exit = exit_byte(status);
    }
    match post_process(args, nsys, target, work, env, notes) {
        Ok(true) => Ok(exit),
        Ok(false) => Ok(exit.max(1)),
        Err(e) if exit == 0 => Err(e),
        Err(e) => {
            notes.note(e.to_string());
            Ok(exit)
        }
    }
}

/// Turns the report in `work` into the archive; false when an analysis failed.
fn post_process(
    args: &Options,
    nsys: &Path,
    target: &Target,
    work: &Path,
    env: &ProgramEnv,
    notes: &Notes,
) -> Result<bool> {
    let dest = &target.path;
    let report = work.join(REPORT_MEMBER);
    if !report.is_file() {
        return Err(Error::data(
            dest.display().to_string(),
            "nsys profile wrote no report, so there is nothing to archive",
        ));
    }
    note(notes, dest, "exporting the report to SQLite…");
    let sqlite = work.join(SQLITE_MEMBER);
    nsys::export_sqlite(nsys, &report, &sqlite)?;
    let dumps = match &env.dump_dir {
        Some(dir) => postprocess::compress_dumps(notes, dest, dir, &work.join("xz"))?,
        None => postprocess::Dumps::default(),
    };
    if env.dump_dir.is_some() {
        let undumped = postprocess::undumped_programs(&sqlite, &dumps.files)?;
        if !undumped.is_empty() {
            let ids: Vec<String> = undumped.iter().map(u64::to_string).collect();
            note(
                notes,
                dest,
                format!(
                    "warning: {} program{} ran without an HLO dump (program_id {}): an XLA \
                     older than openxla/xla#28928 (August 2025) dumps no executable loaded \
                     from JAX's compilation cache, so njx keys {} by program id and cannot \
                     tell {} communication; profile with JAX_ENABLE_COMPILATION_CACHE=false \
                     (or a newer JAX) to dump every program",
                    undumped.len(),
                    if undumped.len() == 1 { "" } else { "s" },
                    ids.join(", "),
                    if undumped.len() == 1 { "it" } else { "them" },
                    if undumped.len() == 1 { "its" } else { "their" },
                ),
            );
        }
    }
    let sources = postprocess::sources(notes, dest, &dumps.sources);
    if !dumps.files.is_empty() && dumps.sources.iter().all(|s| s.starts_with('<')) {
        note(
            notes,
            dest,
            "warning: the HLO dumps name no Python source files (is \
             JAX_TRACEBACK_IN_LOCATIONS_LIMIT set to 0?)",
        );
    }

    // Staged beside the destination, under the destination's own file name (so that
    // analyses see the right profile name), then renamed into place.
    let stage = Stage::new("njx-capture", dest)?;
    let staged = stage.path();
    note(
        notes,
        dest,
        format!(
            "writing the archive ({} dumps, {} sources)…",
            dumps.files.len(),
            sources.len()
        ),
    );
    let mut zip = ArchiveWriter::create(staged, dest)?;
    zip.add(REPORT_MEMBER, &report, true)?;
    zip.add(SQLITE_MEMBER, &sqlite, true)?;
    for (member, file) in &dumps.files {
        zip.add(member, file, false)?;
    }
    for (member, file) in &sources {
        zip.add(member, file, true)?;
    }
    zip.finish()?;
    let all_ok = writer::analyse(
        "njx-capture",
        notes,
        dest,
        &stage,
        &work.join("analysis"),
        &args.analysis,
    )?;
    // Kept rather than lost with the staging folder when it cannot be placed.
    stage.place(dest, target.overwrite, true)?;
    let size = std::fs::metadata(dest).map_or(0, |m| m.len());
    note(notes, dest, format!("done ({:.1} MB)", size as f64 / 1e6));
    Ok(all_ok)
}
