//! Folded stacks drawn as an interactive SVG flame graph with the inferno crate: colours
//! by what a frame is, and GPU idle time left out unless asked for, so that the width is
//! the program's GPU work.
//!
//! inferno's own name-hash palette weighs the first characters of a name most (as
//! flamegraph.pl does), so names sharing a prefix (`TSL:Xla…`, `/opt/…`) all come out one
//! orange; here every frame's colour is chosen from its meaning (its family of hues) and
//! a hash of its whole name (the hue and lightness within the family), and handed to
//! inferno as a palette map.

use crate::error::{Error, Result};
use inferno::flamegraph::color::{BackgroundColor, Color, PaletteMap};
use regex::Regex;
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::sync::LazyLock;

/// How the SVG is drawn.
#[derive(Debug, Clone)]
pub struct SvgOptions {
    /// Title at the top.
    pub title: String,
    /// Width in pixels.
    pub width: usize,
    /// What the counts are (`ns`).
    pub count_name: String,
    /// Draw the `[GPU idle …]` stacks too (left out by default, and said in the subtitle).
    pub idle: bool,
    /// The lines are `stack before after` (coloured by the change, red for more time).
    pub diff: bool,
    /// Label Python frames with their whole path (`/opt/app/pkg/main.py:12[run]`) instead
    /// of `run (pkg/main.py:12)`.
    pub full_names: bool,
}

/// Start of the frames of GPU idle time (`[GPU idle between module executions]`,
/// `[GPU idle during module execution]`), at the root or under a device.
const IDLE: &str = "[GPU idle";

/// Draws folded lines (`stack count`, or `stack before after` for a differential graph)
/// as an interactive flame graph SVG.
pub fn render_svg<W: Write>(lines: &[String], options: &SvgOptions, out: W) -> Result<()> {
    let mut drawn: Vec<&str> = Vec::with_capacity(lines.len());
    // The counts left out (the last count of a line: after, in a diff), and of all.
    let (mut idle, mut total) = (None, 0.0);
    // inferno adds the counts of each column and subtracts a diff's two counts as
    // machine integers: past 2⁶² they would overflow, so they are refused here.
    const LIMIT: f64 = 4_611_686_018_427_387_904.0;
    let mut sums = [0.0f64; 2];
    for line in lines {
        let counts = line[stack_of(line).len()..].split_whitespace();
        for (sum, c) in sums.iter_mut().zip(counts) {
            *sum += c.parse::<f64>().unwrap_or(0.0).abs();
        }
        if sums.iter().any(|s| *s >= LIMIT) {
            return Err(Error::data(
                "flame graph",
                format!("the counts add up past 2^62 (at `{line}`): too large to draw"),
            ));
        }
        let count = last_count(line);
        total += count;
        // At the root, or under a device (--by device).
        if !options.idle && stack_of(line).split(';').any(|f| f.starts_with(IDLE)) {
            *idle.get_or_insert(0.0) += count;
        } else {
            drawn.push(line);
        }
    }
    if drawn.is_empty() && idle.is_some() {
        return Err(Error::data(
            "flame graph",
            "the stacks are all GPU idle time, left out of the drawing: --idle draws them",
        ));
    }
    // Python frames relabelled, the colour chosen from each frame's whole name.
    let mut palette = PaletteMap::default();
    // The root, all stacks together (an empty name to inferno).
    palette.insert("", colour("[all]"));
    let mut labelled = Vec::with_capacity(drawn.len());
    // Each distinct frame labelled and coloured once (deep stacks repeat their frames),
    // apart as it is reached under communication or not.
    let mut labels: HashMap<(&str, bool), Cow<'_, str>> = HashMap::new();
    for line in &drawn {
        let stack = stack_of(line);
        let mut out = String::with_capacity(line.len());
        // Whether a frame above is communication: what runs under it is (the reduction
        // of an all-reduce, `jit(_psum);reduce_sum`), whatever its own name says.
        let mut under_communication = false;
        for (i, frame) in stack.split(';').enumerate() {
            let own = meaning(frame);
            let inherited = under_communication && own == Meaning::Compute;
            under_communication |= own == Meaning::Communication;
            let label = labels.entry((frame, inherited)).or_insert_with(|| {
                let label = if options.full_names {
                    frame.into()
                } else {
                    python_label(frame)
                };
                // inferno colours by name: a frame reached both ways needs two names. It
                // shows `name_[k]` as `name` (flamegraph.pl's annotation suffix), so the
                // one under communication is told apart without a visible change.
                let (label, colour) = if inherited {
                    let label = format!("{label}{UNDER_COMMUNICATION}");
                    let colour = colour_as(frame, Meaning::Communication);
                    (Cow::Owned(label), colour)
                } else {
                    (label, colour(frame))
                };
                if palette.get(&label).is_none() {
                    palette.insert(&label, colour);
                }
                label
            });
            if i > 0 {
                out.push(';');
            }
            out.push_str(label);
        }
        out.push_str(&line[stack.len()..]);
        labelled.push(out);
    }
    let mut opts = inferno::flamegraph::Options::default();
    opts.title = options.title.clone();
    opts.image_width = Some(options.width);
    opts.count_name = options.count_name.clone();
    opts.subtitle = Some(subtitle(idle, total, options.diff));
    opts.palette_map = Some(&mut palette);
    opts.bgcolors = Some(BackgroundColor::Grey);
    inferno::flamegraph::from_lines(&mut opts, labelled.iter().map(String::as_str), out).map_err(
        |e| match e.kind() {
            std::io::ErrorKind::InvalidData => Error::data("flame graph", e.to_string()),
            _ => Error::Output(e),
        },
    )
}

/// The stack of a line, without its count (`stack count`) or counts (`stack before
/// after`, where the word before the last is a number too).
fn stack_of(line: &str) -> &str {
    fn counted(s: &str) -> Option<(&str, &str)> {
        s.rsplit_once(' ').filter(|(_, c)| c.parse::<f64>().is_ok())
    }
    let Some((stack, _)) = counted(line) else {
        return line;
    };
    counted(stack).map_or(stack, |(stack, _)| stack)
}

/// The last count of a line (0 where there is none: inferno says what is wrong with it).
fn last_count(line: &str) -> f64 {
    line.rsplit(' ')
        .next()
        .and_then(|c| c.parse().ok())
        .unwrap_or(0.0)
}

/// The line under the title: the idle time left out, and what each colour means.
fn subtitle(idle: Option<f64>, total: f64, diff: bool) -> String {
    let legend = if diff {
        "widths: after; red: more time after than before, blue: less"
    } else {
        "blue: communication, green: Python, red to yellow: compute and ranges, grey: markers"
    };
    let Some(left) = idle else {
        return legend.to_string();
    };
    format!(
        "GPU idle left out: {:.1}% of all time (--idle draws it). {legend}",
        100.0 * left / total.max(f64::MIN_POSITIVE)
    )
}

/// A Python frame `/opt/app/pkg/main.py:12[run]` labelled as profilers of Python do,
/// function first and the path's last two parts: `run (pkg/main.py:12)`; other frames as
/// they are.
fn python_label(frame: &str) -> Cow<'_, str> {
    let Some(found) = PYTHON_FRAME.captures(frame) else {
        return frame.into();
    };
    let path = &found["path"];
    let short = path
        .rmatch_indices('/')
        .nth(1)
        .map_or(path, |(at, _)| &path[at + 1..]);
    format!("{} ({short}:{})", &found["function"], &found["line"]).into()
}

static PYTHON_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?<path>[^\[\]]*\.py):(?<line>\d+(:\d+)?)\[(?<function>.*)\]$")
        .expect("a valid pattern")
});

/// What a frame is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meaning {
    /// GPU idle time.
    Idle,
    /// Bracketed frames njx adds (`[GPU active]`, `[Unknown]`, `[inconsistent metadata]`)
    /// and devices.
    Marker,
    /// A Python source line (`file.py:123[function]`).
    Python,
    /// Collectives and point-to-point communication (HLO opcodes, JAX primitives, NCCL).
    Communication,
    /// Everything else: XLA ops and thunks, op_name parts, NVTX ranges.
    Compute,
}

static PYTHON: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\.py:\d+").expect("a valid pattern"));
static COMMUNICATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)all[-_]?reduce|all[-_]?gather|reduce[-_]scatter|collective[-_]permute|all[-_]to[-_]all|collective[-_]broadcast|psum|pmean|ppermute|nccl|^(send|recv)(-start|-done)?(\.\d+)?$",
    )
    .expect("a valid pattern")
});

fn meaning(frame: &str) -> Meaning {
    if frame.starts_with(IDLE) {
        Meaning::Idle
    } else if (frame.starts_with('[') && frame.ends_with(']')) || frame.starts_with("device ") {
        Meaning::Marker
    } else if PYTHON.is_match(frame) {
        Meaning::Python
    } else if COMMUNICATION.is_match(frame) {
        Meaning::Communication
    } else {
        Meaning::Compute
    }
}

/// The suffix of a frame's name under communication whose own name says compute
/// (`reduce_sum_[k]`): a name of its own in inferno's palette, shown without the suffix
/// (inferno, as flamegraph.pl, strips the annotations `_[k]`, `_[w]`, `_[i]`, `_[j]`).
const UNDER_COMMUNICATION: &str = "_[k]";

/// A frame's colour: its meaning's family of hues, and within it a hue and lightness
/// from a hash of the whole name, so that neighbouring frames differ.
fn colour(frame: &str) -> Color {
    colour_as(frame, meaning(frame))
}

/// The colour of `frame` taken to mean `meaning`.
fn colour_as(frame: &str, meaning: Meaning) -> Color {
    // FNV-1a: stable across builds and platforms, so a profile always draws alike.
    let hash = frame.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let a = (hash & 0xffff) as f64 / 65535.0;
    let b = ((hash >> 16) & 0xffff) as f64 / 65535.0;
    let (hue, sat, light) = match meaning {
        Meaning::Idle => (0.0, 0.0, 0.62 + 0.1 * b),
        Meaning::Marker => (215.0, 0.15, 0.74 + 0.1 * b),
        Meaning::Python => (80.0 + 70.0 * a, 0.5, 0.52 + 0.14 * b),
        Meaning::Communication => (190.0 + 40.0 * a, 0.7, 0.56 + 0.14 * b),
        Meaning::Compute => (2.0 + 46.0 * a, 0.85, 0.55 + 0.13 * b),
    };
    hsl(hue, sat, light)
}

/// HSL (hue in degrees, saturation and lightness in 0..=1) to RGB.
fn hsl(hue: f64, sat: f64, light: f64) -> Color {
    let c = (1.0 - (2.0 * light - 1.0).abs()) * sat;
    let h = hue / 60.0;
    let x = c * (1.0 - (h % 2.0 - 1.0).abs());
    let (r, g, b) = match h as u32 {
        0 => (c, x, 0.0),
        1 => (x, c, 0.0),
        2 => (0.0, c, x),
        3 => (0.0, x, c),
        4 => (x, 0.0, c),
        _ => (c, 0.0, x),
    };
    let m = light - c / 2.0;
    let byte = |v: f64| ((v + m) * 255.0).round().clamp(0.0, 255.0) as u8;
    Color {
        r: byte(r),
        g: byte(g),
        b: byte(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_are_coloured_by_meaning() {
        assert_eq!(
            meaning("[GPU idle between module executions]"),
            Meaning::Idle
        );
        assert_eq!(meaning("[GPU active]"), Meaning::Marker);
        assert_eq!(meaning("device 3"), Meaning::Marker);
        assert_eq!(
            meaning("/opt/paxml/paxml/main.py:585[<module>]"),
            Meaning::Python
        );
        assert_eq!(meaning("all-reduce-start"), Meaning::Communication);
        assert_eq!(
            meaning("jit(_psum)/jit(main)/reduce_sum[axes=(0,)]"),
            Meaning::Communication
        );
        assert_eq!(meaning("recv-done.2"), Meaning::Communication);
        assert_eq!(meaning("receiver"), Meaning::Compute);
        assert_eq!(meaning("fusion.12"), Meaning::Compute);
        assert_eq!(meaning("XlaPass:#name=priority-fusion#"), Meaning::Compute);
        // Neighbours with a common prefix differ.
        assert_ne!(
            colour("TSL:XlaPass:#name=a#"),
            colour("TSL:XlaPass:#name=b#")
        );
        let Color { r, g, b } = colour("[GPU idle during module execution]");
        assert!(r == g && g == b, "idle is grey");
    }

    #[test]
    fn hsl_corners() {
        assert_eq!(hsl(0.0, 1.0, 0.5), Color { r: 255, g: 0, b: 0 });
        assert_eq!(hsl(120.0, 1.0, 0.5), Color { r: 0, g: 255, b: 0 });
        assert_eq!(hsl(240.0, 1.0, 0.5), Color { r: 0, g: 0, b: 255 });
        assert_eq!(
            hsl(0.0, 0.0, 1.0),
            Color {
                r: 255,
                g: 255,
                b: 255
            }
        );
    }

    #[test]
    fn idle_is_left_out_and_said() {
        let lines = [
            "[GPU active];fusion 30",
            "[GPU idle between module executions] 70",
        ]
        .map(String::from);
        let opts = SvgOptions {
            title: "t".into(),
            width: 400,
            count_name: "ns".into(),
            idle: false,
            diff: false,
            full_names: false,
        };
        let mut svg = Vec::new();
        render_svg(&lines, &opts, &mut svg).unwrap();
        let svg = String::from_utf8(svg).unwrap();
        assert!(svg.contains("GPU idle left out: 70.0% of all time"));
        assert!(!svg.contains("<title>[GPU idle"));
        assert!(svg.contains("<title>fusion"));
        assert!(!svg.contains("<title>device 0"));
        let only_idle = [lines[1].clone()];
        assert!(render_svg(&only_idle, &opts, &mut Vec::new()).is_err());
        let all = SvgOptions { idle: true, ..opts };
        let mut svg = Vec::new();
        render_svg(&lines, &all, &mut svg).unwrap();
        assert!(
            String::from_utf8(svg)
                .unwrap()
                .contains("<title>[GPU idle between")
        );
    }

    #[test]
    fn python_frames_are_labelled_function_first() {
        assert_eq!(
            python_label("/opt/paxml/paxml/main.py:585[<module>]"),
            "<module> (paxml/main.py:585)"
        );
        assert_eq!(python_label("main.py:3[f]"), "f (main.py:3)");
        assert_eq!(python_label("a/b/c.py:5:3[g]"), "g (b/c.py:5:3)");
        assert_eq!(python_label("fusion.1"), "fusion.1");
    }
}
