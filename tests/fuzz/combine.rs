//! njx-combine's member handling (issue 28): the input archive, mutated by members (names
//! among them: `../x`, `/x`, `C:/x`, backslashes, `a//b`, control characters, the empty
//! name) and by headers (sizes, counts, Unix file types: links, FIFOs, devices), combined
//! with a valid archive of rank 1 into a fresh folder of the target's own. Whatever the
//! input, a combined archive holds only plain names and files (the rule of
//! [`njx::archives::writer`]), and nothing else is left in the folder: a violation panics,
//! which the engine records as a crash.

use crate::item::Item;
use crate::targets::{Ctx, Input};
use crate::zipper::Member;
use njx::archives::combine::{KeepNsysRep, Options};
use njx::archives::writer::{member_name_fault, special_entry};
use njx::output::notes::Notes;

/// Seeds beyond the plain archives: one with a report, sources and a folder entry.
pub fn with_report(mut members: Vec<Member>) -> Vec<Member> {
    for (name, text) in [
        ("rank0.nsys-rep", "report"),
        ("sources/train.py", "print(1)\n"),
        ("sources/", ""),
    ] {
        members.push(Member {
            name: name.into(),
            item: Item::text(text),
            stored: name.ends_with(".nsys-rep"),
        });
    }
    members
}

/// Combines the input with rank 1's archive (order, reports kept and `-f` picked by the
/// input's hash) into `combined/all.zip` under the target's folder, then checks the
/// output.
pub fn run(ctx: &Ctx, input: &Input) -> njx::Result<()> {
    let folder = input.dir.join("combined");
    let _ = std::fs::remove_dir_all(&folder);
    let output = folder.join("all.zip");
    let keep_nsys_rep = match input.hash % 3 {
        0 => KeepNsysRep::All,
        1 => KeepNsysRep::First,
        _ => KeepNsysRep::None,
    };
    let options = Options {
        output: output.clone(),
        force_overwrite: (input.hash >> 2) & 1 == 1,
        keep_nsys_rep,
        analysis: Vec::new(),
    };
    let mut inputs = vec![input.path.to_path_buf(), ctx.rank1.clone()];
    if (input.hash >> 3) & 1 == 1 {
        inputs.reverse();
    }
    let result = njx::archives::combine::run(&options, &inputs, &Notes::kept());
    let left: Vec<String> = std::fs::read_dir(&folder)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    match &result {
        Ok(_) => {
            assert_eq!(
                left,
                ["all.zip"],
                "njx-combine left behind more than its output"
            );
            check_output(&output);
        }
        Err(_) => assert!(left.is_empty(), "njx-combine failed and left {left:?}"),
    }
    result.map(|_| ())
}

/// Panics unless every member of the archive at `path` has a plain name and is a file.
fn check_output(path: &std::path::Path) {
    let file = std::fs::File::open(path).expect("the combined archive opens");
    let mut zip = zip::ZipArchive::new(file).expect("the combined archive is a zip");
    for i in 0..zip.len() {
        let entry = zip
            .by_index_raw(i)
            .expect("a member of the combined archive");
        let name = String::from_utf8_lossy(entry.name_raw()).into_owned();
        if let Some(fault) = member_name_fault(&name) {
            panic!("njx-combine wrote the member {name:?}: {fault}");
        }
        if let Some(kind) = special_entry(entry.unix_mode()) {
            panic!("njx-combine wrote the member {name:?}, {kind}");
        }
    }
}
