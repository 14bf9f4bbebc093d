//! The man pages in `man/` are generated from the clap definitions; this test fails when
//! they drift. Regenerate with `scripts/update-man.sh`
//! (`NJX_UPDATE_MAN=1 cargo test --test njx man::`).

use std::path::Path;

#[test]
fn man_pages_match_the_command_line_definitions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("man");
    let update = std::env::var_os("NJX_UPDATE_MAN").is_some();
    let mut stale = Vec::new();
    for cmd in njx::commands() {
        let name = cmd.get_name().to_string();
        let mut page = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut page).unwrap();
        let path = dir.join(format!("{name}.1"));
        if update {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &page).unwrap();
        } else if std::fs::read(&path).ok().as_deref() != Some(&page[..]) {
            stale.push(name);
        }
    }
    assert!(
        stale.is_empty(),
        "man pages out of date: {stale:?}; run scripts/update-man.sh"
    );
}

#[test]
fn every_binary_has_a_man_page_and_a_pipeline_example() {
    let bins = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/bin");
    let mut names: Vec<String> = std::fs::read_dir(bins)
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    names.sort();
    let mut documented: Vec<String> = njx::commands()
        .iter()
        .map(|c| c.get_name().to_string())
        .collect();
    documented.sort();
    assert_eq!(names, documented);
    for cmd in njx::commands() {
        let help = cmd
            .get_after_help()
            .map(|h| h.to_string())
            .unwrap_or_default();
        assert!(
            help.contains(" | "),
            "{} --help lacks a pipeline example",
            cmd.get_name()
        );
    }
}
