//! A job's progress, drawn with indicatif on stderr when stderr is a terminal: one line
//! for the whole job, whatever it reads and on however many threads, shown only once the
//! job has lasted a second (quicker jobs never draw) and erased when it ends, so that the
//! terminal is left with the tool's output and notes alone. Nowhere else: in a pipe, a log
//! or with `-q` there is no progress at all, and none of its cost.
//!
//! The library reports through a [`Progress`] handed down with the [`Notes`](crate::Notes)
//! (as the source layer's readers do: bytes per chunk read, the file or member being read,
//! the phase of an SQLite export), never by looking at a terminal itself; commands make
//! the one that draws ([`Progress::on_stderr`]), everyone else gets [`Progress::none`].
//!
//! The line says, in few words: elapsed time, a bar of inputs done when the job reads
//! several (of bytes when it reads one file whose size is known), bytes read, and what is
//! being read now (`rank0.zip!dump/module_0040…`, `report.sqlite: sorting NVTX ranges`).

use indicatif::{HumanBytes, ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a job runs before its progress is drawn.
const DELAY: Duration = Duration::from_secs(1);

/// How often the line is redrawn once shown (the spinner and elapsed time move also while
/// nothing is counted: a long SQLite sort, an HLO dump being decoded).
const TICK: Duration = Duration::from_millis(100);

/// Where a job says how far it is. Cheap to clone and to call: every method does nothing
/// when there is no terminal to draw on, and counting is an atomic add.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<Shown>>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(stderr)"
        } else {
            "Progress(none)"
        })
    }
}

/// A progress line on stderr, hidden until [`DELAY`] has passed.
struct Shown {
    bar: ProgressBar,
    counts: Arc<Counts>,
    /// How the line is laid out ([`Mode`] as a number), once inputs or a sized stream say
    /// which: read without a lock, as it is on every chunk.
    mode: AtomicU8,
    /// What is being read or done now, whole: fitted to the terminal's width when set and
    /// when the layout changes ([`fit`]).
    message: Mutex<Message>,
    /// Set once the line is erased for good: later calls draw nothing.
    ended: AtomicBool,
    /// Tells the thread that shows the line after [`DELAY`] that the job ended first.
    ending: Arc<(Mutex<bool>, Condvar)>,
    shower: Mutex<Option<JoinHandle<()>>>,
}

/// What the line counts, besides what indicatif keeps (the bar's position and length).
#[derive(Default)]
struct Counts {
    /// Bytes read so far, all inputs and threads together.
    read: AtomicU64,
    /// Inputs read so far, each once however many passes read it (a job that reads its
    /// inputs twice, such as njx-timeline, counts each once: never `5/4`).
    inputs_done: Mutex<std::collections::HashSet<std::path::PathBuf>>,
}

impl Counts {
    /// Forgets the inputs read (a pass over other inputs starts).
    fn reset_inputs(&self) {
        self.inputs_done
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
    }

    /// Counts `input` as read; how many distinct inputs are.
    fn input_done(&self, input: &std::path::Path) -> usize {
        let mut done = self.inputs_done.lock().unwrap_or_else(|e| e.into_inner());
        if !done.contains(input) {
            done.insert(input.to_path_buf());
        }
        done.len()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Mode {
    /// Nothing known of the job's size: a spinner.
    Spinner = 0,
    /// Several inputs: a bar of inputs done.
    Inputs = 1,
    /// One input of known size: a bar of its bytes.
    Bytes = 2,
}

impl Progress {
    /// No progress: every call does nothing (pipes, logs, `-q`, tests, library callers).
    pub fn none() -> Progress {
        Progress(None)
    }

    /// Progress on stderr when it is a terminal (indicatif's test: a terminal, `TERM` set
    /// and not `dumb`), drawn from one second after this call until the last clone is
    /// dropped or [`Progress::finish`] is called; [`Progress::none`] otherwise.
    pub fn on_stderr() -> Progress {
        let target = ProgressDrawTarget::stderr();
        if target.is_hidden() {
            return Progress::none();
        }
        let counts = Arc::new(Counts::default());
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        bar.set_style(style(Mode::Spinner, &counts));
        let ending = Arc::new((Mutex::new(false), Condvar::new()));
        let shower = {
            let (bar, ending) = (bar.clone(), Arc::clone(&ending));
            std::thread::spawn(move || {
                let (ended, wake) = &*ending;
                let ended = ended.lock().unwrap_or_else(|e| e.into_inner());
                let (ended, _) = wake
                    .wait_timeout_while(ended, DELAY, |ended| !*ended)
                    .unwrap_or_else(|e| e.into_inner());
                if !*ended {
                    bar.set_draw_target(target);
                    bar.enable_steady_tick(TICK);
                }
            })
        };
        Progress(Some(Arc::new(Shown {
            bar,
            counts,
            mode: AtomicU8::new(Mode::Spinner as u8),
            message: Mutex::new(Message::default()),
            ended: AtomicBool::new(false),
            ending,
            shower: Mutex::new(Some(shower)),
        })))
    }

    /// Whether progress is drawn (or will be, once a second has passed).
    pub fn is_shown(&self) -> bool {
        self.live().is_some()
    }

    fn live(&self) -> Option<&Shown> {
        self.0
            .as_deref()
            .filter(|s| !s.ended.load(Ordering::Relaxed))
    }

    /// The job reads `n` inputs (again: a later pass over other inputs starts over): with
    /// several, the line is a bar of inputs done.
    pub fn inputs(&self, n: usize) {
        let Some(s) = self.live() else { return };
        s.counts.reset_inputs();
        if n > 1 {
            s.set_mode(Mode::Inputs);
            s.bar.set_length(n as u64);
            s.bar.set_position(0);
        }
    }

    /// Input `input` is read (counted once, however many passes read it).
    pub fn input_done(&self, input: &std::path::Path) {
        let Some(s) = self.live() else { return };
        let done = s.counts.input_done(input);
        if s.mode() == Mode::Inputs {
            s.bar.set_position(done as u64);
        }
    }

    /// `place` (a file, `archive.zip!member`) is read now: the line names it (without its
    /// folders). `size`, for an input file read from start to end whose size is known
    /// (not an archive's member: an archive is not read whole), makes the line of a job
    /// of one input a bar of its bytes.
    pub fn reading(&self, place: &str, size: Option<u64>) {
        let Some(s) = self.live() else { return };
        s.say(Message {
            place: Some(short(place).to_string()),
            what: None,
        });
        if let Some(size) = size.filter(|&n| n > 0)
            && s.mode() != Mode::Inputs
        {
            // Against everything read so far and this file: the bar ends with the file.
            let read = s.counts.read.load(Ordering::Relaxed);
            s.set_mode(Mode::Bytes);
            s.bar.set_length(read.saturating_add(size));
            s.bar.set_position(read);
        }
    }

    /// What the job is doing now with `place`, in a few words (`sorting NVTX ranges`).
    pub fn doing(&self, place: &str, what: &str) {
        let Some(s) = self.live() else { return };
        s.say(Message {
            place: Some(short(place).to_string()),
            what: Some(what.to_string()),
        });
    }

    /// What the job is doing now, in a few words, once its inputs are read (`writing
    /// records`).
    pub fn phase(&self, what: &str) {
        let Some(s) = self.live() else { return };
        s.say(Message {
            place: None,
            what: Some(what.to_string()),
        });
    }

    /// `n` more bytes were read: called per chunk (tens of kB), not per record.
    pub fn read(&self, n: u64) {
        let Some(s) = self.live() else { return };
        s.counts.read.fetch_add(n, Ordering::Relaxed);
        if s.mode() == Mode::Bytes {
            s.bar.inc(n);
        }
    }

    /// Runs `f` (which writes to the terminal) with the line erased, drawing it again
    /// after: how notes are said while progress is shown.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match self.live() {
            Some(s) => s.bar.suspend(f),
            None => f(),
        }
    }

    /// Erases the line for good (the output is about to be written to the same terminal,
    /// or the job is over); later calls draw nothing. Dropping the last clone does it too.
    pub fn finish(&self) {
        if let Some(s) = self.0.as_deref() {
            s.end();
        }
    }
}

impl Shown {
    fn mode(&self) -> Mode {
        match self.mode.load(Ordering::Relaxed) {
            1 => Mode::Inputs,
            2 => Mode::Bytes,
            _ => Mode::Spinner,
        }
    }

    fn set_mode(&self, mode: Mode) {
        if self.mode.swap(mode as u8, Ordering::Relaxed) != mode as u8 {
            self.bar.set_style(style(mode, &self.counts));
            // The room left for the message changed with the layout.
            let message = self
                .message
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            self.say(message);
        }
    }

    /// Shows `message`, shortened to the room the line leaves it on the terminal.
    fn say(&self, message: Message) {
        let room = console::Term::stderr()
            .size_checked()
            .map(|(_, columns)| usize::from(columns).saturating_sub(self.reserved()));
        let text = match room {
            Some(room) => fit(&message, room),
            None => message.whole(),
        };
        *self.message.lock().unwrap_or_else(|e| e.into_inner()) = message;
        self.bar.set_message(text);
    }

    /// The most columns the line takes besides the message in its layout ([`style`]):
    /// elapsed time up to 4 columns, byte counts up to 11 (`1023.99 MiB`), the bar 14, and
    /// a column to spare.
    fn reserved(&self) -> usize {
        const ELAPSED: usize = 4;
        const BYTES: usize = 11;
        const READ: usize = BYTES + " read  ".len();
        let digits = |n: u64| n.max(1).ilog10() as usize + 1;
        1 + match self.mode() {
            Mode::Spinner => 2 + ELAPSED + 2 + READ,
            Mode::Inputs => {
                let n = digits(self.bar.length().unwrap_or(0));
                ELAPSED + 16 + (2 * n + 1) + " inputs  ".len() + READ
            }
            Mode::Bytes => ELAPSED + 16 + 2 * BYTES + 1 + 2,
        }
    }

    fn end(&self) {
        if self.ended.swap(true, Ordering::Relaxed) {
            return;
        }
        let (ended, wake) = &*self.ending;
        *ended.lock().unwrap_or_else(|e| e.into_inner()) = true;
        wake.notify_all();
        if let Some(shower) = self.shower.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = shower.join();
        }
        self.bar.finish_and_clear();
        self.bar.set_draw_target(ProgressDrawTarget::hidden());
    }
}

impl Drop for Shown {
    fn drop(&mut self) {
        self.end();
    }
}

/// The layout of the line in `mode`: ` 3s [=====>      ] 2/4 inputs  12.40 MiB read  rank1.zip!dump/…`.
fn style(mode: Mode, counts: &Arc<Counts>) -> ProgressStyle {
    let template = match mode {
        Mode::Spinner => "{spinner} {elapsed:>3}  {read}{wide_msg}",
        Mode::Inputs => "{elapsed:>3} [{bar:12}] {pos}/{len} inputs  {read}{wide_msg}",
        Mode::Bytes => "{elapsed:>3} [{bar:12}] {bytes}/{total_bytes}  {wide_msg}",
    };
    let counts = Arc::clone(counts);
    ProgressStyle::with_template(template)
        .expect("the templates are valid")
        .progress_chars("=> ")
        .with_key(
            "read",
            // Nothing for inputs that tell no bytes (SQLite exports).
            move |_: &ProgressState, w: &mut dyn std::fmt::Write| {
                let read = counts.read.load(Ordering::Relaxed);
                if read > 0 {
                    let _ = write!(w, "{} read  ", HumanBytes(read));
                }
            },
        )
}

/// What the line says is being read or done: a place (`rank0.zip!dump/m.xz`), what is
/// done (`sorting NVTX ranges`), or both (`report.sqlite: sorting NVTX ranges`).
#[derive(Debug, Clone, Default)]
struct Message {
    place: Option<String>,
    what: Option<String>,
}

impl Message {
    fn whole(&self) -> String {
        match (&self.place, &self.what) {
            (Some(p), Some(w)) => format!("{p}: {w}"),
            (Some(p), None) => p.clone(),
            (None, Some(w)) => w.clone(),
            (None, None) => String::new(),
        }
    }
}

/// The fewest characters of a place kept when it is shortened for the words after it.
const PLACE_AT_LEAST: usize = 16;

/// `message` in at most `room` characters: whole when it fits; else the place shortened
/// first, to its start and `…` (the archive and member stay readable), then the words
/// cut after the last that fits, with `…`: never in the middle of a word (issue 32: the
/// line said `reading the HLO dumps' stack fram`).
fn fit(message: &Message, room: usize) -> String {
    let whole = message.whole();
    if width(&whole) <= room {
        return whole;
    }
    match (&message.place, &message.what) {
        (Some(place), Some(what)) => {
            // `place: what`, the place given what room the words leave it.
            let words = width(what) + 2;
            let keep = room
                .saturating_sub(words)
                .max(PLACE_AT_LEAST.min(width(place)));
            let place = shorten(place, keep.min(room));
            let left = room.saturating_sub(width(&place) + 2);
            match cut_words(what, left) {
                Some(what) => format!("{place}: {what}"),
                None => place,
            }
        }
        (Some(place), None) => shorten(place, room),
        (None, Some(what)) => cut_words(what, room).unwrap_or_default(),
        (None, None) => String::new(),
    }
}

/// Columns of `text` (one per character: places and phrases are mostly ASCII).
fn width(text: &str) -> usize {
    text.chars().count()
}

/// `text` in `room` characters: whole, or its start and `…`.
fn shorten(text: &str, room: usize) -> String {
    if width(text) <= room {
        return text.to_string();
    }
    match room {
        0 => String::new(),
        _ => text.chars().take(room - 1).chain(['…']).collect(),
    }
}

/// The words of `text` that fit in `room` characters with `…` after them, whole words
/// only; `…` alone when not even the first fits; none without room for that.
fn cut_words(text: &str, room: usize) -> Option<String> {
    if width(text) <= room {
        return Some(text.to_string());
    }
    if room == 0 {
        return None;
    }
    let mut kept = String::new();
    for word in text.split(' ') {
        let with = if kept.is_empty() {
            width(word)
        } else {
            width(&kept) + 1 + width(word)
        };
        if with + 1 > room {
            break;
        }
        if !kept.is_empty() {
            kept.push(' ');
        }
        kept.push_str(word);
    }
    // No word ends on punctuation before the ellipsis (`stack frames,…`).
    let kept = kept.trim_end_matches([',', ';', ':', ' ']);
    Some(format!("{kept}…"))
}

/// `place` without the folders of its file: `/data/rank0.zip!dump/m.xz` → `rank0.zip!dump/m.xz`;
/// `stdin` for `-`.
fn short(place: &str) -> &str {
    if place == "-" {
        return "stdin";
    }
    let (file, _) = place.split_once('!').unwrap_or((place, ""));
    match file.rfind('/') {
        Some(i) => &place[i + 1..],
        None => place,
    }
}

#[cfg(test)]
mod tests {
    use super::{Counts, Message, Progress, fit, short};
    use std::path::Path;

    fn message(place: Option<&str>, what: Option<&str>) -> Message {
        Message {
            place: place.map(str::to_string),
            what: what.map(str::to_string),
        }
    }

    // Issue 32: the line was cut mid-word (`reading the HLO dumps' stack fram`).
    #[test]
    fn a_shortened_line_ends_on_a_whole_word_or_a_shortened_place() {
        let what = "reading the HLO dumps' stack frames";
        let place =
            "rank0.zip!dump/module_0040.jit_train_step.sm_9.0_gpu_after_optimizations.hlo.pb.xz";
        // Fits: whole.
        assert_eq!(fit(&message(None, Some(what)), 80), what);
        assert_eq!(
            fit(&message(Some("a.zip"), Some(what)), 80),
            format!("a.zip: {what}")
        );
        // Words: whole ones, then `…`, in the room given.
        for room in 0..what.len() {
            let got = fit(&message(None, Some(what)), room);
            assert!(got.chars().count() <= room, "{room}: {got}");
            let kept = got.trim_end_matches('…');
            assert!(
                kept.is_empty() || what.starts_with(&format!("{kept} ")),
                "{room}: `{got}` cuts a word"
            );
        }
        assert_eq!(
            fit(&message(None, Some(what)), 33),
            "reading the HLO dumps' stack…"
        );
        // The place is shortened first, the words kept whole while they can be.
        let both = message(Some(place), Some(what));
        let got = fit(&both, 70);
        assert!(got.ends_with(&format!("…: {what}")), "{got}");
        assert!(got.starts_with("rank0.zip!dump/module_0040"), "{got}");
        assert_eq!(got.chars().count(), 70);
        // Then the words, the place kept to its start.
        for room in 0..70 {
            let got = fit(&both, room);
            assert!(got.chars().count() <= room, "{room}: {got}");
            if let Some((_, words)) = got.split_once(": ") {
                let kept = words.trim_end_matches('…');
                assert!(
                    kept.is_empty() || what == kept || what.starts_with(&format!("{kept} ")),
                    "{room}: `{got}` cuts a word"
                );
            }
        }
        assert_eq!(fit(&both, 30), "rank0.zip!dump/…: reading the…");
        // A place alone: its start and `…`.
        assert_eq!(fit(&message(Some(place), None), 20), "rank0.zip!dump/modu…");
    }

    #[test]
    fn places_lose_their_folders_not_their_members() {
        assert_eq!(short("/data/rank0.zip!dump/m.xz"), "rank0.zip!dump/m.xz");
        assert_eq!(short("rank0.zip"), "rank0.zip");
        assert_eq!(short("a/b/c.csv.xz"), "c.csv.xz");
        assert_eq!(short("-"), "stdin");
        assert_eq!(short("-!report.sqlite"), "-!report.sqlite");
    }

    // Issue 32: njx-timeline of four archives showed `5/4` … `8/4 inputs` (its two passes
    // each counted every input).
    #[test]
    fn an_input_read_by_several_passes_counts_once() {
        let c = Counts::default();
        for pass in 0..2 {
            for r in ["rank0.zip", "rank1.zip", "rank2.zip", "rank3.zip"] {
                let done = c.input_done(Path::new(r));
                assert!(done <= 4, "pass {pass}: {done}/4");
            }
        }
        assert_eq!(c.input_done(Path::new("rank3.zip")), 4);
        c.reset_inputs();
        assert_eq!(c.input_done(Path::new("other.zip")), 1);
    }

    #[test]
    fn no_progress_does_nothing() {
        let p = Progress::none();
        p.inputs(3);
        p.reading("x", Some(10));
        p.read(5);
        p.input_done(Path::new("x"));
        assert_eq!(p.suspend(|| 7), 7);
        p.finish();
        assert!(!p.is_shown());
    }
}
