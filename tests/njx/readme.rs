//! The README and `docs/` against what the tools do.
//!
//! - Every command in the README's `sh` blocks is run, as a user would paste it: the
//!   pipelines with the built tools first on `PATH`, in a folder holding what they name
//!   (`examples/` of the repository, an SQLite export as `report.sqlite`, two runs as
//!   `base/` and `pr/`, a program and stand-ins for `python` and `nsys` for
//!   `njx-capture`); the install commands (`pip`, `cargo install`, `scripts/demo.sh`) in
//!   the repository, into throwaway places. A command of another kind fails the test: a
//!   README command no test runs is a defect. `cargo test` is the suite itself.
//! - Every `njx-*` command written in the README and `docs/` (code blocks and inline code)
//!   is parsed by the tool's own command-line definition, so a renamed option or value
//!   fails here, as `man.rs` keeps the man pages in step with `--help`.
//! - Every long option of every tool is named somewhere in the README, `docs/` or the
//!   tool's `--help` prose and examples, so `docs/` says what each one is for.

use crate::common::{exe, script, tempdir, write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The markdown files of the documentation: the README, then `docs/*.md` by name.
fn documents() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(repo().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    docs.insert(0, repo().join("README.md"));
    docs
}

/// The commands of a markdown text's `sh` code blocks: continuation lines joined, comment
/// lines and comments after a command dropped.
fn block_commands(markdown: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut in_sh = false;
    let mut in_block = false;
    let mut pending = String::new();
    for line in markdown.lines() {
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if in_block {
                in_block = false;
                in_sh = false;
            } else {
                in_block = true;
                in_sh = matches!(info.trim(), "sh" | "bash" | "shell");
            }
            continue;
        }
        if !in_sh {
            continue;
        }
        let line = strip_comment(line);
        let line = line.trim_end();
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        let command = std::mem::take(&mut pending);
        let command = command.trim();
        if !command.is_empty() {
            commands.push(command.to_string());
        }
    }
    commands
}

/// The line without a shell comment: from an unquoted `#` at its start or after a blank.
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && prev.is_whitespace() => return &line[..i],
            _ => {}
        }
        prev = c;
    }
    line
}

/// The inline code spans of a markdown text outside code blocks.
fn inline_code(markdown: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut in_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            continue;
        }
        let mut parts = line.split('`');
        parts.next();
        while let (Some(code), Some(_)) = (parts.next(), parts.next()) {
            spans.push(code.to_string());
        }
    }
    spans
}

/// A shell command's words, quotes removed; operators (`|`, `||`, `&&`, `;`, `(`, `)`)
/// and redirections (`>`, `>>`, `<`, `2>`, with their file) become `None`, ending the
/// invocation before them.
fn words(command: &str) -> Vec<Option<String>> {
    let mut out: Vec<Option<String>> = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut chars = command.chars().peekable();
    let mut redirect = false;
    let end_word = |word: &mut String, quoted: &mut bool, out: &mut Vec<Option<String>>| {
        if !word.is_empty() || *quoted {
            out.push(Some(std::mem::take(word)));
        }
        *quoted = false;
    };
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                quoted = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                quoted = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        c => word.push(c),
                    }
                }
            }
            c if c.is_whitespace() => {
                end_word(&mut word, &mut quoted, &mut out);
                if redirect {
                    // The redirection's file, once written, is not an argument.
                    if matches!(out.last(), Some(Some(_))) {
                        out.pop();
                        out.push(None);
                        redirect = false;
                    }
                }
            }
            '|' | '&' | ';' | '(' | ')' => {
                end_word(&mut word, &mut quoted, &mut out);
                out.push(None);
            }
            '>' | '<' => {
                // `2>` and `>>`: the digit before belongs to the operator.
                if word.chars().all(|c| c.is_ascii_digit()) {
                    word.clear();
                }
                end_word(&mut word, &mut quoted, &mut out);
                out.push(None);
                while chars.peek().is_some_and(|&c| c == '>' || c == '&') {
                    chars.next();
                }
                redirect = true;
            }
            '$' if chars.peek() == Some(&'(') => {
                end_word(&mut word, &mut quoted, &mut out);
                chars.next();
                out.push(None);
            }
            c => word.push(c),
        }
    }
    end_word(&mut word, &mut quoted, &mut out);
    if redirect && matches!(out.last(), Some(Some(_))) {
        out.pop();
    }
    out
}

/// The invocations of njx tools in a command: each tool's name and the words after it up
/// to the next operator.
fn invocations(command: &str, tools: &[String]) -> Vec<Vec<String>> {
    let words = words(command);
    let mut found = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match &words[i] {
            Some(w) if tools.contains(w) => {
                let args: Vec<String> = words[i..].iter().map_while(|w| w.clone()).collect();
                i += args.len();
                found.push(args);
            }
            _ => i += 1,
        }
    }
    found
}

#[test]
fn the_command_line_reader_splits_as_the_shell_does() {
    let tools = vec!["njx-a".to_string(), "njx-b".to_string()];
    assert_eq!(
        invocations(
            r#"X=1 njx-a --by 'x y' "a\"b" f.zip 2>err | njx-b -o out > x.txt && echo"#,
            &tools
        ),
        vec![
            vec!["njx-a", "--by", "x y", "a\"b", "f.zip"],
            vec!["njx-b", "-o", "out"],
        ]
    );
    assert_eq!(
        invocations("njx-b --table kernels|memops", &tools),
        vec![vec!["njx-b", "--table", "kernels"]]
    );
    assert_eq!(
        block_commands("```sh\nnjx-a x \\\n  y   # note\n# only a comment\n```\nnjx-b\n"),
        vec!["njx-a x    y"]
    );
    assert_eq!(strip_comment("echo '#' x # y"), "echo '#' x ");
}

#[test]
fn every_njx_command_in_the_docs_is_one_its_tool_accepts() {
    let commands: Vec<clap::Command> = njx::commands();
    let tools: Vec<String> = commands.iter().map(|c| c.get_name().to_string()).collect();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for doc in documents() {
        let text = read(&doc);
        let name = doc.strip_prefix(repo()).unwrap().display().to_string();
        let blocks = block_commands(&text).into_iter().map(|l| (l, false));
        let spans = inline_code(&text).into_iter().map(|l| (l, true));
        for (line, inline) in blocks.chain(spans) {
            for args in invocations(&line, &tools) {
                let cmd = commands
                    .iter()
                    .find(|c| c.get_name() == args[0])
                    .unwrap()
                    .clone();
                checked += 1;
                if let Err(e) = cmd.try_get_matches_from(&args) {
                    use clap::error::ErrorKind;
                    // Help and version are what they ask for; a missing input, or an
                    // option without its value in prose (`njx-heap --svg`), is a fragment
                    // of a command; njx-capture passes options it does not know to
                    // `nsys profile`.
                    let fragment = e.kind() == ErrorKind::MissingRequiredArgument
                        || inline && e.to_string().contains("a value is required");
                    let nsys = args[0] == "njx-capture" && e.kind() == ErrorKind::UnknownArgument;
                    if !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion)
                        && !fragment
                        && !nsys
                    {
                        let first = e.to_string();
                        let first = first.lines().next().unwrap_or_default().to_string();
                        wrong.push(format!("{name}: `{}`: {first}", args.join(" ")));
                    }
                }
            }
        }
    }
    assert!(
        checked > 150,
        "only {checked} njx commands found in the docs"
    );
    assert!(
        wrong.is_empty(),
        "commands in the docs that their tool refuses:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_option_of_every_tool_is_documented() {
    let mut text = String::new();
    for doc in documents() {
        text.push_str(&read(&doc));
    }
    let mut missing = Vec::new();
    for mut cmd in njx::commands() {
        cmd.build();
        let help = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            if matches!(long, "help" | "version") {
                continue;
            }
            let option = format!("--{long}");
            let named = |t: &str| {
                t.match_indices(&option).any(|(i, _)| {
                    let after = t[i + option.len()..].chars().next();
                    !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
                })
            };
            if !named(&text) && !named(&help) {
                missing.push(format!("{} {option}", cmd.get_name()));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "options named nowhere in README.md, docs/ or the tool's --help examples:\n{}",
        missing.join("\n")
    );
}

/// How a README command is run.
#[derive(Debug, PartialEq)]
enum Kind {
    /// A pipeline of njx tools, run in the staged folder.
    Pipeline,
    /// An install or build command, run in the repository.
    Install,
    /// `cargo test`: the suite this test is part of.
    Suite,
}

fn kind(command: &str) -> Option<Kind> {
    let first = command.split_whitespace().next()?;
    if first.starts_with("njx-") {
        Some(Kind::Pipeline)
    } else if command.starts_with("cargo test") {
        Some(Kind::Suite)
    } else if first == "pip" || first == "scripts/demo.sh" || command.starts_with("cargo install") {
        Some(Kind::Install)
    } else {
        None
    }
}

fn readme_commands(of: Kind) -> Vec<String> {
    let commands = block_commands(&read(&repo().join("README.md")));
    let unknown: Vec<&String> = commands.iter().filter(|c| kind(c).is_none()).collect();
    assert!(
        unknown.is_empty(),
        "README commands that no test runs (teach tests/njx/readme.rs how): {unknown:?}"
    );
    commands
        .into_iter()
        .filter(|c| {
            kind(c) == Some(Kind::Pipeline) && of == Kind::Pipeline
                || kind(c) == Some(Kind::Install) && of == Kind::Install
        })
        .collect()
}

fn bash(command: &str, dir: &Path, path: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("bash");
    cmd.args(["-o", "pipefail", "-c", command])
        .current_dir(dir)
        .env("PATH", path)
        .stdin(Stdio::null());
    for var in ["XLA_FLAGS", "VIRTUAL_ENV", "PYTHONHOME"] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run bash")
}

fn assert_ran(command: &str, out: &Output) {
    assert!(
        out.status.success(),
        "README command failed ({}): {command}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The folder the README's pipelines run in: `examples/` (a link to the repository's),
/// `report.sqlite` (an XLA export with kernels, memory copies and NVTX ranges), `base/`
/// and `pr/` (the example run twice), `train.py`, and `bin/` with stand-ins for `python`
/// (a JAX program: writes the example run's HLO dump where XLA_FLAGS says) and `nsys`
/// (`profile` runs the program and writes a report; `export` copies `report.sqlite`).
fn stage(dir: &Path) {
    let examples = repo().join("examples");
    std::os::unix::fs::symlink(&examples, dir.join("examples")).unwrap();
    crate::kernels::xla_export(&dir.join("report.sqlite"));
    let run = examples.join("data/run");
    for side in ["base", "pr"] {
        for rank in ["rank0.zip", "rank1.zip"] {
            std::fs::create_dir_all(dir.join(side)).unwrap();
            std::fs::copy(run.join(rank), dir.join(side).join(rank)).unwrap();
        }
    }
    write(dir, "train.py", b"import jax\n");
    // The example run's dump, as XLA writes it (uncompressed).
    let archive = std::fs::File::open(run.join("rank0.zip")).unwrap();
    let mut zip = zip::ZipArchive::new(archive).unwrap();
    let name = (0..zip.len())
        .map(|i| zip.by_index(i).unwrap().name().unwrap().to_string())
        .find(|n| n.starts_with("dump/"))
        .expect("a dump in the example run");
    let mut xz = Vec::new();
    std::io::Read::read_to_end(&mut zip.by_name(&name).unwrap(), &mut xz).unwrap();
    let mut dump = Vec::new();
    std::io::Read::read_to_end(&mut xz2::read::XzDecoder::new(&xz[..]), &mut dump).unwrap();
    let dump_name = name
        .trim_start_matches("dump/")
        .trim_end_matches(".xz")
        .to_string();
    write(dir, "fixture.hlo.pb", &dump);
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    script(
        &dir.join("bin/python"),
        &format!(
            "#!/bin/sh\n# A stand-in for a JAX program: its HLO dump where XLA_FLAGS says.\n\
             for flag in $XLA_FLAGS; do\n\
               case \"$flag\" in --xla_dump_to=*) dump=\"${{flag#--xla_dump_to=}}\";; esac\n\
             done\n\
             mkdir -p \"$dump\" && cp '{}' \"$dump/{dump_name}\"\n",
            dir.join("fixture.hlo.pb").display()
        ),
    );
    script(
        &dir.join("bin/nsys"),
        &format!(
            "#!/bin/sh\n# A stand-in for nsys: `profile` runs the program and writes a report,\n\
             # `export` copies the staged SQLite export to --output.\n\
             cmd=\"$1\"; shift\n\
             case \"$cmd\" in\n\
             profile)\n\
               while [ $# -gt 0 ]; do\n\
                 if [ \"$1\" = --output ]; then out=\"$2\"; shift 2; break; fi\n\
                 shift\n\
               done\n\
               \"$@\"; status=$?\n\
               printf 'report' > \"$out.nsys-rep\"; exit $status;;\n\
             export)\n\
               while [ $# -gt 1 ]; do\n\
                 if [ \"$1\" = --output ]; then out=\"$2\"; fi\n\
                 shift\n\
               done\n\
               cp '{}' \"$out\";;\n\
             esac\n",
            dir.join("report.sqlite").display()
        ),
    );
}

/// A [`stage`]d folder, and the `PATH` its commands run with: the built tools, then the
/// stand-ins of `bin/`, then the system's.
fn staged() -> (tempfile::TempDir, String) {
    let dir = tempdir();
    stage(dir.path());
    let tools = Path::new(exe("njx-export")).parent().unwrap();
    let path = format!(
        "{}:{}:{}",
        tools.display(),
        dir.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (dir, path)
}

#[test]
fn every_pipeline_in_the_readme_runs() {
    let commands = readme_commands(Kind::Pipeline);
    assert!(commands.len() >= 20, "{commands:?}");
    let (dir, path) = staged();
    let dir = dir.path();
    std::fs::create_dir_all(dir.join("tmp")).unwrap();
    let tmp = dir.join("tmp");
    for command in &commands {
        let out = bash(
            command,
            dir,
            &path,
            &[("SLURM_PROCID", "0"), ("TMPDIR", tmp.to_str().unwrap())],
        );
        assert_ran(command, &out);
        // What is not written to a file is shown: more than a header.
        let to_file = [">", " -o ", "--html", "--svg"];
        if !to_file.iter().any(|f| command.contains(f)) {
            let lines = String::from_utf8_lossy(&out.stdout).lines().count();
            let least = if command.contains("--version") { 1 } else { 2 };
            assert!(lines >= least, "{command}: {lines} lines of output");
        }
    }
    // What the pipelines wrote is there and not empty.
    for file in [
        "run.html",
        "run.json",
        "busbw.svg",
        "late.csv",
        "coll.csv",
        "source.svg",
        "op_name.folded",
        "compile.svg",
        "trace.json",
        "out/rank0.zip",
        "out/all.zip",
    ] {
        let len = std::fs::metadata(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e}"))
            .len();
        assert!(len > 0, "{file} is empty");
    }
    assert!(std::fs::read_dir(dir.join("pgle")).unwrap().count() > 0);
}

/// The install commands: `pip` into a fresh venv (its `bin/` first on `PATH`; the wheel's
/// install from a `PATH` without cargo or rustc), `cargo install` into a throwaway root,
/// `scripts/demo.sh`. pip's commands are skipped, saying so, where PyPI cannot be reached
/// for the build backend.
#[test]
fn every_install_command_in_the_readme_runs() {
    let commands = readme_commands(Kind::Install);
    let repo = repo();
    let dir = tempdir();
    let dir = dir.path();
    let system = std::env::var("PATH").unwrap_or_default();
    let venv = dir.join("venv");
    let pip_ok = pip_reaches_pypi(dir);
    let install_root = dir.join("cargo");
    let (mut ran, mut skipped) = (0, 0);
    for command in &commands {
        if command.starts_with("pip ") {
            let Some(python) = &pip_ok else {
                skipped += 1;
                continue;
            };
            // Each pip command in a fresh venv; the wheel's install from a PATH with no
            // Rust toolchain on it.
            let _ = std::fs::remove_dir_all(&venv);
            let made = Command::new(python)
                .args(["-m", "venv"])
                .arg(&venv)
                .output()
                .unwrap();
            assert!(made.status.success(), "{made:?}");
            let no_rust = command.contains(".whl");
            let path = if no_rust {
                format!("{}:/usr/bin:/bin", venv.join("bin").display())
            } else {
                format!("{}:{system}", venv.join("bin").display())
            };
            if command.starts_with("pip wheel") {
                for old in std::fs::read_dir(repo.join("dist")).into_iter().flatten() {
                    let old = old.unwrap().path();
                    if old.to_string_lossy().ends_with(".whl") {
                        std::fs::remove_file(old).unwrap();
                    }
                }
            }
            let venv_str = venv.to_str().unwrap();
            assert_ran(
                command,
                &bash(command, &repo, &path, &[("VIRTUAL_ENV", venv_str)]),
            );
            if no_rust || command.starts_with("pip install") {
                let check = bash(
                    "command -v cargo rustc; njx-report --version && njx-diff --version && njx",
                    dir,
                    &path,
                    &[],
                );
                let text = String::from_utf8_lossy(&check.stdout).to_string();
                assert!(
                    check.status.success() && text.contains("njx-report "),
                    "{command}: the tools are not on the venv's PATH: {text}"
                );
                // `njx` lists the tools, and the man pages are where `man` looks from the
                // venv's bin on PATH.
                assert!(text.contains("  njx-heap "), "{command}: njx lists: {text}");
                let pages = venv.join("share/man/man1");
                for tool in njx::commands() {
                    let page = pages.join(format!("{}.1", tool.get_name()));
                    assert!(page.is_file(), "{command}: no {}", page.display());
                }
                assert!(pages.join("njx.1").is_file(), "{command}: no njx.1");
                if no_rust && text.contains("/cargo") {
                    // A distribution's Rust in /usr/bin: the install ran, but not where no
                    // Rust is.
                    use std::io::Write;
                    let _ = writeln!(
                        std::io::stderr(),
                        "SKIPPED: `{command}` without Rust on PATH: this machine has Rust in \
                         /usr/bin ({text})"
                    );
                }
            }
        } else if command.starts_with("cargo install") {
            let path = format!("{}:{system}", install_root.join("bin").display());
            let out = bash(
                command,
                &repo,
                &path,
                &[("CARGO_INSTALL_ROOT", install_root.to_str().unwrap())],
            );
            assert_ran(command, &out);
            for tool in njx::commands() {
                assert!(
                    install_root.join("bin").join(tool.get_name()).exists(),
                    "cargo install put no {}",
                    tool.get_name()
                );
            }
        } else {
            assert_ran(command, &bash(command, &repo, &system, &[]));
        }
        ran += 1;
    }
    assert_eq!(ran + skipped, commands.len(), "{commands:?}");
    assert!(ran >= 2, "{ran} install commands run of {commands:?}");
}

/// The python that makes the venvs, where pip can fetch the build backend from PyPI;
/// `None`, said on stderr, where it cannot.
fn pip_reaches_pypi(dir: &Path) -> Option<String> {
    let python = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())?;
    let probe = dir.join("probe");
    let ok = Command::new(python)
        .args(["-m", "venv"])
        .arg(&probe)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(probe.join("bin/pip"))
            .args([
                "download",
                "-q",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
            ])
            .arg(dir.join("probe-dl"))
            .arg("maturin>=1.9,<2")
            .status()
            .is_ok_and(|s| s.success());
    if !ok {
        // Past the test harness' capture of eprintln!: a skip is said, pass or fail.
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED: the README's pip commands: no venv, or PyPI not reachable for the build \
             backend (maturin)"
        );
        return None;
    }
    Some(python.to_string())
}

/// The field index of `docs/formats.md` ("Every record's fields"): a table of record kind,
/// the command that writes it as CSV (run in the README's staged folder) and its fields in
/// order. Each command's header line must be those fields, exactly: a field added, removed,
/// renamed or moved in the code and not in the contract fails here.
/// The rows of the field index: (command, fields).
fn field_index() -> Vec<(String, String)> {
    let text = read(&repo().join("docs/formats.md"));
    let index = text
        .split("## Every record's fields")
        .nth(1)
        .expect("docs/formats.md has the field index");
    let lines = index.lines().filter(|l| l.starts_with("| ")).count() - 1;
    let rows: Vec<(String, String)> = index
        .lines()
        .filter(|l| l.starts_with("| "))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split(" | ").collect();
            let code = |c: &str| {
                let c = c.trim().trim_end_matches('|').trim();
                c.strip_prefix('`')?.strip_suffix('`').map(str::to_string)
            };
            Some((code(cells.get(1)?)?, code(cells.get(2)?)?))
        })
        .collect();
    assert!(rows.len() >= 20, "the field index has {} rows", rows.len());
    assert_eq!(
        rows.len(),
        lines,
        "rows of the field index that were not read"
    );
    rows
}

#[test]
fn every_record_kind_has_the_fields_the_contract_lists() {
    let rows = field_index();
    let (dir, path) = staged();
    let dir = dir.path();
    let mut wrong = Vec::new();
    for (command, fields) in rows {
        let out = bash(&command, dir, &path, &[]);
        assert_ran(&command, &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let header = stdout.lines().next().unwrap_or_default().replace(',', ", ");
        if header != fields {
            wrong.push(format!("`{command}`\n  docs: {fields}\n  tool: {header}"));
        }
        // The JSON records: the same fields in the same order (a null field included).
        let json = command.replace("--format csv", "--format json");
        let out = bash(&json, dir, &path, &[]);
        assert_ran(&json, &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        if let Some(first) = stdout.lines().next() {
            let record: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(first).unwrap_or_else(|e| panic!("{json}: {e}: {first}"));
            let keys: Vec<&str> = record.keys().map(String::as_str).collect();
            let keys = keys.join(", ");
            // A table of several tables writes each record with its own table's fields.
            if keys != fields && !fields.starts_with("table, ") {
                wrong.push(format!("`{json}`\n  docs: {fields}\n  tool: {keys}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/formats.md lists other fields than the tools write:\n{}",
        wrong.join("\n")
    );
}

/// `scripts/demo.sh` finds the tools where cargo's settings put them (`CARGO_TARGET_DIR`,
/// `build.target-dir` in a config file), not in `target/`: run from a copy of the
/// repository's scripts beside its examples, with a stand-in `cargo` whose builds land in
/// another folder and whose `cargo metadata` says so, as a user's config makes it.
#[test]
fn the_demo_finds_the_tools_where_cargo_puts_them() {
    let dir = tempdir();
    let dir = dir.path();
    let copy = dir.join("repo");
    std::fs::create_dir_all(copy.join("scripts")).unwrap();
    std::fs::copy(repo().join("scripts/demo.sh"), copy.join("scripts/demo.sh")).unwrap();
    std::os::unix::fs::symlink(repo().join("examples"), copy.join("examples")).unwrap();
    let elsewhere = dir.join("elsewhere");
    let tools = Path::new(exe("njx-export")).parent().unwrap();
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    script(
        &dir.join("bin/cargo"),
        &format!(
            "#!/bin/sh\n# A stand-in for cargo with build.target-dir set to {target}.\n\
             case \"$1\" in\n\
             build) mkdir -p '{target}/release' && for t in '{tools}'/njx-*; do \
                    ln -sf \"$t\" '{target}/release/'; done;;\n\
             metadata) printf '{{\"packages\":[],\"target_directory\":\"%s\",\"version\":1}}\\n' \
                       '{target}';;\n\
             *) exit 101;;\n\
             esac\n",
            target = elsewhere.display(),
            tools = tools.display()
        ),
    );
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let command = copy.join("scripts/demo.sh");
    let out = bash(&format!("'{}'", command.display()), dir, &path, &[]);
    assert_ran("scripts/demo.sh", &out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("$ njx-report") && text.contains("Compilation time"),
        "{text}"
    );
}

/// Counts written in prose drift from what they count (the README once said 23
/// conformance tests where there were 28): the README states none.
#[test]
fn the_readme_counts_nothing_that_drifts() {
    let text = read(&repo().join("README.md"));
    let counted = regex::Regex::new(
        r"(?i)\b(\d+|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|twenty)\s+(conformance\s+|integration\s+|unit\s+)?(tests|tools|binaries|commands|test cases)\b",
    )
    .unwrap();
    let found: Vec<&str> = counted.find_iter(&text).map(|m| m.as_str()).collect();
    assert!(found.is_empty(), "counts in the README: {found:?}");
}

/// GitHub's anchor of a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces made `-`.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every relative link of the README and `docs/` names a file of the repository, and a
/// heading of it where the link has an anchor: the reference moved into `docs/` and must
/// stay reachable from the guide.
#[test]
fn every_link_in_the_docs_leads_somewhere() {
    let link = regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut docs = documents();
    docs.extend(["ARCHITECTURE.md", "scripts/README.md"].map(|f| repo().join(f)));
    for doc in docs {
        let text = read(&doc);
        let here = doc.parent().unwrap();
        for m in link.captures_iter(&text) {
            let target = &m[1];
            if target.starts_with("http://") || target.starts_with("https://") {
                continue;
            }
            let (file, anchor) = match target.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (target, None),
            };
            let path = if file.is_empty() {
                doc.clone()
            } else {
                here.join(file)
            };
            let name = doc.strip_prefix(repo()).unwrap().display().to_string();
            if !path.exists() {
                broken.push(format!("{name}: {target}: no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                let mut in_block = false;
                let headings: Vec<String> = read(&path)
                    .lines()
                    .filter(|l| {
                        if l.trim_start().starts_with("```") {
                            in_block = !in_block;
                        }
                        !in_block
                    })
                    .filter_map(|l| l.strip_prefix('#'))
                    .map(|l| slug(l.trim_start_matches('#')))
                    .collect();
                if !headings.iter().any(|h| h == anchor) {
                    broken.push(format!("{name}: {target}: no such heading"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `pip install .` where no cargo is (a cluster node, offline): refused before pip fetches
/// anything, saying what to do (packaging/njx_build.py), not a failure to find a package.
#[test]
fn pip_install_without_rust_says_what_to_do() {
    let Some(python) = ["python3", "python"]
        .into_iter()
        .find(|p| Command::new(p).arg("--version").output().is_ok())
    else {
        eprintln!("SKIPPED: no python3 here (pip install . without Rust)");
        return;
    };
    let dir = tempdir();
    let venv = dir.path().join("venv");
    let made = Command::new(python)
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    if !made.status.success() {
        eprintln!("SKIPPED: python3 -m venv fails here (pip install . without Rust)");
        return;
    }
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    if bash("command -v cargo", dir.path(), &path, &[])
        .status
        .success()
    {
        eprintln!("SKIPPED: cargo is in /usr/bin or /bin here (pip install . without Rust)");
        return;
    }
    // Offline: no index, and no cargo on PATH.
    let out = bash(
        "pip install --no-index --disable-pip-version-check .",
        &repo(),
        &path,
        &[("HOME", dir.path().to_str().unwrap())],
    );
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    for said in [
        "there is no",
        "`cargo` on PATH",
        "https://rustup.rs",
        "pip install njx-*.whl",
    ] {
        assert!(text.contains(said), "{said:?} not in:\n{text}");
    }
    assert!(
        !text.contains("puccinialin") && !text.contains("Could not find a version"),
        "{text}"
    );
}

/// `--format parquet -o FILE` of every record kind of the field index: the columns are the
/// CSV header's, typed as `docs/formats.md` says ("Parquet"), and every row holds the JSON
/// record's values and nulls, exactly (njx-pgle, whose table goes to stdout, refuses it).
#[test]
fn every_record_kind_reads_back_from_parquet_as_its_json_records() {
    use njx::output::parquet::{Kind, column_kind};
    use parquet::basic::Type as Physical;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let (dir, path) = staged();
    let dir = dir.path();
    let mut checked = 0;
    for (command, fields) in field_index() {
        let pq = dir.join("out.parquet");
        let parquet = command.replace(
            "--format csv",
            &format!("--format parquet -f -o {}", pq.display()),
        );
        if command.starts_with("njx-pgle") {
            let parquet = command.replace("--format csv", "--format parquet");
            let out = bash(&parquet, dir, &path, &[]);
            assert!(
                !out.status.success(),
                "{parquet}: njx-pgle has no file for it"
            );
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("--format parquet needs a file"),
                "{parquet}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            continue;
        }
        let out = bash(&parquet, dir, &path, &[]);
        assert_ran(&parquet, &out);
        let json = command.replace("--format csv", "--format json");
        let out = bash(&json, dir, &path, &[]);
        assert_ran(&json, &out);
        let records: Vec<serde_json::Map<String, serde_json::Value>> =
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        let reader = SerializedFileReader::new(std::fs::File::open(&pq).unwrap())
            .unwrap_or_else(|e| panic!("{parquet}: {e}"));
        let schema = reader.metadata().file_metadata().schema_descr_ptr();
        let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
        assert_eq!(names.join(", "), fields, "{parquet}: the columns");
        for c in schema.columns() {
            let physical = match c.physical_type() {
                Physical::INT64 => Kind::Int,
                Physical::DOUBLE => Kind::Float,
                Physical::BOOLEAN => Kind::Bool,
                Physical::BYTE_ARRAY => Kind::Text,
                t => panic!("{parquet}: column {} is {t}", c.name()),
            };
            // Text columns that hold any value are text all the same.
            let listed = column_kind("PayloadField", c.name())
                .filter(|_| command.contains("--table payloads"))
                .or_else(|| column_kind("", c.name()))
                .map(|k| if k == Kind::AnyAsText { Kind::Text } else { k });
            assert_eq!(Some(physical), listed, "{parquet}: column {}", c.name());
            assert!(
                c.self_type().is_optional(),
                "{parquet}: {} not nullable",
                c.name()
            );
        }
        let rows: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                r.unwrap()
                    .get_column_iter()
                    .map(|(n, f)| (n.clone(), f.clone()))
                    .collect()
            })
            .collect();
        assert_eq!(rows.len(), records.len(), "{parquet}: rows");
        for (i, (row, json)) in rows.iter().zip(&records).enumerate() {
            for (name, field) in row {
                let want = json.get(name).unwrap_or(&serde_json::Value::Null);
                let same = match (field, want) {
                    (Field::Null, serde_json::Value::Null) => true,
                    (Field::Bool(a), serde_json::Value::Bool(b)) => a == b,
                    (Field::Long(a), serde_json::Value::Number(b)) => b.as_i64() == Some(*a),
                    (Field::Double(a), serde_json::Value::Number(b)) => b.as_f64() == Some(*a),
                    (Field::Str(a), serde_json::Value::String(b)) => a == b,
                    // A payload value of any type, as text.
                    (Field::Str(a), serde_json::Value::Number(b)) => *a == b.to_string(),
                    _ => false,
                };
                assert!(
                    same,
                    "{parquet}: row {i}, {name}: parquet {field:?}, json {want}"
                );
            }
            // No JSON field without its column.
            for key in json.keys() {
                assert!(
                    row.iter().any(|(n, _)| n == key),
                    "{parquet}: row {i}: {key}"
                );
            }
        }
        checked += 1;
    }
    assert!(checked >= 25, "{checked} record kinds checked");
}

/// The "Parquet" section of `docs/formats.md` lists every field's type as the writer has
/// it (`njx::output::parquet::FIELDS`), and `--format parquet` without `-o` is refused.
#[test]
fn the_contract_lists_the_parquet_types_the_writer_has() {
    use njx::output::parquet::{BY_RECORD, FIELDS, Kind};
    let text = read(&repo().join("docs/formats.md"));
    let mut want = String::new();
    for kind in [Kind::Int, Kind::Float, Kind::Bool, Kind::Text] {
        let names: Vec<String> = FIELDS
            .iter()
            .filter(|(_, k)| *k == kind)
            .map(|(n, _)| format!("`{n}`"))
            .collect();
        want.push_str(&format!("- {}: {}\n", kind.name(), names.join(", ")));
    }
    for (record, field, kind) in BY_RECORD {
        want.push_str(&format!("- {}: `{field}` of {record}\n", kind.name()));
    }
    assert!(
        text.contains(&want),
        "docs/formats.md (\"Parquet\") should list the types as:\n{want}"
    );
    let out = Command::new(exe("njx-export"))
        .args(["--format", "parquet"])
        .arg(repo().join("examples/data/run/rank0.zip"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("name it with -o FILE"));
}
