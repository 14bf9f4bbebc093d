//! Progress on stderr while a large input file is read, shown only when stderr is a
//! terminal so that pipes and logs stay clean.

use std::io::{self, IsTerminal, Read, Write};
use std::time::{Duration, Instant};

/// Inputs smaller than this finish too fast to need progress.
const MIN_SIZE: u64 = 64 << 20;

/// A reader that reports how much of a file has been read, at most twice a second.
pub struct Progress<R> {
    inner: R,
    place: String,
    total: u64,
    done: u64,
    next_check: u64,
    last: Instant,
    shown: bool,
}

impl<R: Read> Progress<R> {
    /// Wraps `inner` when stderr is a terminal and the file is large; gives it back otherwise.
    pub fn wrap(inner: R, place: &str, total: u64) -> Result<Progress<R>, R> {
        if total < MIN_SIZE || !io::stderr().is_terminal() {
            return Err(inner);
        }
        Ok(Progress {
            inner,
            place: place.to_string(),
            total,
            done: 0,
            next_check: 1 << 20,
            last: Instant::now(),
            shown: false,
        })
    }
}

impl<R: Read> Read for Progress<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.done += n as u64;
        if self.done >= self.next_check || n == 0 {
            self.next_check = self.done + (1 << 20);
            let mut err = io::stderr().lock();
            if n == 0 {
                if self.shown {
                    let _ = write!(err, "\r\x1b[K");
                    self.shown = false;
                }
            } else if self.last.elapsed() >= Duration::from_millis(500) {
                self.last = Instant::now();
                self.shown = true;
                let _ = write!(
                    err,
                    "\r\x1b[K{}: {} of {} MB ({:.0}%)",
                    self.place,
                    self.done >> 20,
                    self.total >> 20,
                    100.0 * self.done as f64 / self.total as f64
                );
            }
        }
        Ok(n)
    }
}
