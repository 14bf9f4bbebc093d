//! njx-pgle's writer: the inputs that decide which files it writes, mutated — the HLO
//! dumps it takes `fingerprint_before_lhs` and scheduling names from (alone, inside
//! rank 0's archive, or the whole archive) and the streams it reduces (`--partial`
//! results and thunk records). Each execution reads the inputs as the tool does, writes
//! the profiles into a fresh folder of the target's own, and checks what a profile
//! folder may hold: whatever the input, every file written lies in the output folder and
//! is named `<hex fingerprint>.pbtxt` (the rule of [`njx::analysis::pgle`]; `../x` or `/abs/x` would
//! write elsewhere), every line is a `costs { … }` entry, and nothing outside the folder
//! changes. A violation panics, which the engine records as a crash; a refusal is an
//! njx error, returned.

use crate::item::Item;
use crate::seeds;
use crate::targets::{Ctx, Input};
use njx::analysis::pgle;
use njx::hlo::proto::HloProto;
use njx::output::Format;
use njx::output::notes::Notes;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Fingerprints that must never name a file: each would write outside the output folder
/// or a file of another form.
pub const HOSTILE_FINGERPRINTS: &[&str] = &[
    "../x",
    "../../../../x",
    "/abs/x",
    "a/b",
    "..",
    ".",
    "",
    "5d41402abc4b2a76b9719d911017c592/..",
    "5d41402abc4b2a76b9719d911017c592\n",
    "x.pbtxt",
];

/// Program 7's dump (the fuzz seeds' own), with a scheduling name on every instruction,
/// as XLA since `OpMetadata.scheduling_name` writes them.
pub fn hlo_step_scheduled() -> HloProto {
    let mut h = seeds::hlo_step();
    if let Some(m) = h.hlo_module.as_mut() {
        for c in &mut m.computations {
            for i in &mut c.instructions {
                let md = i.metadata.get_or_insert_with(Default::default);
                md.scheduling_name = format!("{}.sched", i.name);
            }
        }
    }
    h
}

/// `proto` with its `fingerprint_before_lhs` replaced by `fingerprint`.
pub fn with_fingerprint(mut proto: HloProto, fingerprint: &str) -> HloProto {
    if let Some(m) = proto.hlo_module.as_mut() {
        m.frontend_attributes
            .get_or_insert_with(Default::default)
            .map
            .insert("fingerprint_before_lhs".into(), fingerprint.into());
    }
    proto
}

/// njx-pgle's partial result of `inputs`, as `njx-pgle --partial` writes it.
pub fn partial_of(inputs: &[PathBuf]) -> Vec<u8> {
    let costs = pgle::read(inputs, &Notes::kept()).expect("seed archives read by njx-pgle");
    let mut out = Vec::new();
    njx::derived::partial::write(&mut out, &costs).expect("partial to memory");
    // Written gzip-compressed: the JSON line it holds, which the tools read as well.
    let mut json = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&out[..]), &mut json)
        .expect("a gzip partial");
    json
}

/// A partial result with every dump's fingerprint replaced by `fingerprint` (a valid
/// stream but for that).
pub fn partial_with_fingerprint(partial: &[u8], fingerprint: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for line in partial.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let mut v: serde_json::Value = serde_json::from_slice(line).expect("a partial line");
        if let Some(dumps) = v
            .pointer_mut("/data/dumps")
            .and_then(serde_json::Value::as_object_mut)
        {
            for d in dumps.values_mut() {
                d["fingerprint"] = fingerprint.into();
            }
        }
        out.extend_from_slice(v.to_string().as_bytes());
        out.push(b'\n');
    }
    out
}

/// Seeds of the dumps target: program 7's dump (plain, xz, with scheduling names, with
/// hostile fingerprints) and rank 0's archive whole.
pub fn dump_seeds() -> Vec<(Item, &'static str)> {
    let mut s = vec![
        (Item::proto(seeds::hlo_step()), "dump"),
        (Item::xz(Item::proto(seeds::hlo_step())), "dump"),
        (Item::xz(Item::proto(hlo_step_scheduled())), "dump"),
        (Item::zip(seeds::rank_members(0, false, false)), "archive"),
        (Item::zip(seeds::rank_members(0, true, true)), "archive"),
    ];
    for f in HOSTILE_FINGERPRINTS.iter().take(4) {
        s.push((
            Item::xz(Item::proto(with_fingerprint(seeds::hlo_step(), f))),
            "dump",
        ));
    }
    s
}

/// Every file and folder under `root` (not following links, `skip` left out): relative
/// path → (kind and size, modification time).
fn snapshot(root: &Path, skip: &Path) -> BTreeMap<PathBuf, (String, Option<SystemTime>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let path = e.path();
            if path == skip {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            let kind = if meta.is_dir() {
                stack.push(path.clone());
                "dir".to_string()
            } else if meta.is_file() {
                format!("file {}", meta.len())
            } else {
                "other".to_string()
            };
            let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
            out.insert(rel, (kind, meta.modified().ok()));
        }
    }
    out
}

/// Whether `name` is a profile file's name: `<1 to 128 hex digits>.pbtxt`.
fn profile_file_name(name: &str) -> bool {
    name.strip_suffix(".pbtxt")
        .is_some_and(|f| (1..=128).contains(&f.len()) && f.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Reads `inputs` as njx-pgle does, writes the profiles into a fresh folder under the
/// target's own and checks the folder and everything around it.
pub fn run(ctx: &Ctx, input: &Input, inputs: &[PathBuf]) -> njx::Result<()> {
    // The output folder, three levels into a sandbox: `../x` and `../../x` land in the
    // sandbox (seen), `../../../../x` in the target's folder (seen by the snapshot).
    let sandbox = input.dir.join("pgle-sandbox");
    let _ = std::fs::remove_dir_all(&sandbox);
    let out = sandbox.join("a").join("b").join("pgle");
    if input.bit(11) {
        // an output folder that exists already (njx-pgle makes a missing one)
        std::fs::create_dir_all(&out).expect("output folder");
    } else {
        std::fs::create_dir_all(sandbox.join("a").join("b")).expect("sandbox");
    }
    let setup = ctx.rank1.parent().expect("the setup folder").to_path_buf();
    let before = (snapshot(input.dir, &sandbox), snapshot(&setup, &sandbox));

    let result = write_profiles(input, inputs, &out);

    // Nothing but the output folder in the sandbox, nothing but profiles in it.
    let mut stray = Vec::new();
    for (rel, (kind, _)) in snapshot(&sandbox, &out) {
        let expected = [Path::new("a"), Path::new("a/b")];
        if !(expected.contains(&rel.as_path()) && kind == "dir") {
            stray.push(rel.display().to_string());
        }
    }
    assert!(
        stray.is_empty(),
        "njx-pgle wrote outside its output folder: {stray:?} ({result:?})"
    );
    if let Ok(entries) = std::fs::read_dir(&out) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let file = e.file_type().is_ok_and(|t| t.is_file());
            assert!(
                file && profile_file_name(&name),
                "njx-pgle left {name:?} in its output folder, which is not a \
                 <hex fingerprint>.pbtxt file ({result:?})"
            );
        }
    }
    let after = (snapshot(input.dir, &sandbox), snapshot(&setup, &sandbox));
    assert!(
        before == after,
        "njx-pgle changed files outside its output folder: before {before:?}, after {after:?}"
    );
    result
}

/// What the tool does, in-process: read, (sometimes) the partial result round-tripped,
/// the profiles checked before they are written, written, the summary.
fn write_profiles(input: &Input, inputs: &[PathBuf], out: &Path) -> njx::Result<()> {
    let notes = Notes::kept();
    let options = pgle::Options {
        include_warmup: input.bit(12),
        dir: None,
        partial: false,
        format: njx::output::Format::Table,
    };
    let costs = pgle::read(inputs, &notes)?;
    let profiles = pgle::profiles(&costs, &options, &notes);
    for p in &profiles {
        assert!(
            profile_file_name(&p.file_name()),
            "njx-pgle would write the profile {:?} ({} bytes), which is not a \
             <hex fingerprint>.pbtxt",
            p.file_name().chars().take(80).collect::<String>(),
            p.file_name().len()
        );
    }
    if input.bit(13) {
        // The partial result of these inputs reads back to the same profiles.
        let mut partial = Vec::new();
        njx::derived::partial::write(&mut partial, &costs)?;
        let file = input.dir.join("pgle-roundtrip.jsonl");
        std::fs::write(&file, &partial).expect("write the partial");
        let again = pgle::read(std::slice::from_ref(&file), &Notes::kept());
        let _ = std::fs::remove_file(&file);
        let again = again
            .unwrap_or_else(|e| panic!("njx-pgle cannot read back its own partial result: {e}"));
        assert_eq!(
            pgle::profiles(&again, &options, &Notes::kept()),
            profiles,
            "a partial result read back gives other profiles"
        );
    }
    pgle::write_files(out, &profiles, inputs)?;
    // What was written is what was asked for, in XLA's text format.
    let mut names: Vec<String> = std::fs::read_dir(out)
        .expect("the output folder")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut wanted: Vec<String> = profiles.iter().map(pgle::Profile::file_name).collect();
    wanted.sort();
    assert_eq!(
        names, wanted,
        "njx-pgle wrote other files than its profiles"
    );
    for p in &profiles {
        let text = std::fs::read_to_string(out.join(p.file_name())).expect("a profile");
        assert_eq!(text.lines().count(), p.entries.len());
        for line in text.lines() {
            assert!(
                line.starts_with("costs { name: \"") && line.ends_with(" }"),
                "not a ProfiledInstructionsProto entry: {line:?}"
            );
        }
    }
    let rows = pgle::rows(&profiles, out);
    let format = match input.pick(14, 3) {
        0 => Format::Json,
        1 => Format::Csv,
        _ => Format::Table,
    };
    pgle::write_summary(format, &rows, &mut std::io::sink())?;
    let _ = notes.take();
    Ok(())
}

/// `path`, and now and then rank 1's archive before or after it (ranks reduced).
pub fn with_rank1(ctx: &Ctx, input: &Input, path: PathBuf) -> Vec<PathBuf> {
    match input.pick(15, 3) {
        0 => vec![path, ctx.rank1.clone()],
        1 => vec![ctx.rank1.clone(), path],
        _ => vec![path],
    }
}
