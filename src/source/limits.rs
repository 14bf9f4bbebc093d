//! What njx will hold or produce from one input, whatever the input claims about itself:
//! a line of text (a CSV row, a JSON record) is at most [`Limits::line`] bytes, and a
//! compressed stream or zip member may decompress to at most [`Limits::ratio`] times its
//! compressed size (beyond a first [`FLOOR`] bytes, always allowed). A file past either
//! limit is refused with a message naming it (and the line): a 1.5 GB line of a few MB of
//! gzip, or a zip member of zeros, would otherwise be held in memory until allocation
//! fails. Real profiles are far inside both: nsys-jax archives' xz members decompress
//! 1–31× (the four pax archives), their longest lines are a few kB.
//!
//! Both are set by environment variables, for the rare real input beyond them:
//! `NJX_MAX_LINE` (bytes, with an optional `K`, `M` or `G` suffix; default 64M) and
//! `NJX_MAX_RATIO` (default 200; 0 turns the check off).

use crate::error::{Error, Result};
use std::io::{self, BufRead, Read};
use std::sync::OnceLock;

/// Bytes a stream may always decompress to, whatever its compressed size.
pub const FLOOR: u64 = 64 << 20;

const DEFAULT_LINE: u64 = 64 << 20;
const DEFAULT_RATIO: u64 = 200;

/// The limits in force (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Longest line of text, bytes.
    pub line: u64,
    /// Largest decompressed ÷ compressed size beyond [`FLOOR`]; 0: unlimited.
    pub ratio: u64,
}

/// The limits set by the environment, read once; a malformed value is a usage error
/// naming the variable.
pub fn get() -> Result<Limits> {
    static LIMITS: OnceLock<std::result::Result<Limits, String>> = OnceLock::new();
    LIMITS
        .get_or_init(|| {
            Ok(Limits {
                line: from_env("NJX_MAX_LINE", DEFAULT_LINE)?,
                ratio: from_env("NJX_MAX_RATIO", DEFAULT_RATIO)?,
            })
        })
        .clone()
        .map_err(Error::Usage)
}

fn from_env(var: &str, default: u64) -> std::result::Result<u64, String> {
    match std::env::var(var) {
        Err(_) => Ok(default),
        Ok(text) => parse_size(&text).ok_or_else(|| {
            format!("{var}={text}: expected a number of bytes, optionally with K, M or G")
        }),
    }
}

/// `123`, `64K`, `64M`, `2G` (powers of 1024).
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, shift) = match text.as_bytes().last()? {
        b'K' | b'k' => (&text[..text.len() - 1], 10),
        b'M' | b'm' => (&text[..text.len() - 1], 20),
        b'G' | b'g' => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    let n: u64 = digits.parse().ok()?;
    n.checked_mul(1 << shift)
}

/// An I/O error that says which limit a stream went past (an `InvalidData` error, so it
/// reads as a fault of the input).
fn exceeded(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// Renders a byte count for messages.
fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 && n % (1 << 30) == 0 => format!("{} GiB", n >> 30),
        n if n >= 1 << 20 && n % (1 << 20) == 0 => format!("{} MiB", n >> 20),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / f64::from(1 << 20)),
        n => format!("{n} bytes"),
    }
}

/// A text stream whose lines may not exceed a length: fails, naming the line, as soon as
/// more than `max` bytes have been consumed without a line end.
pub struct LineCap<R> {
    inner: R,
    max: u64,
    /// Bytes consumed since the last line end.
    run: u64,
    /// Line ends consumed so far.
    lines: u64,
}

impl<R: BufRead> LineCap<R> {
    /// Caps the lines of `inner` at `max` bytes.
    pub fn new(inner: R, max: u64) -> Self {
        LineCap {
            inner,
            max,
            run: 0,
            lines: 0,
        }
    }
}

impl<R: BufRead> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for LineCap<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.run > self.max {
            return Err(exceeded(format!(
                "line {} is longer than {} (NJX_MAX_LINE sets the limit)",
                self.lines + 1,
                bytes(self.max)
            )));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            let used = &buf[..amt.min(buf.len())];
            match memchr::memrchr(b'\n', used) {
                Some(last) => {
                    self.lines += count_newlines(used);
                    self.run = (used.len() - last - 1) as u64;
                }
                None => self.run += used.len() as u64,
            }
        }
        self.inner.consume(amt);
    }
}

/// Line ends in `bytes`: byte-wide sums over blocks short enough not to overflow, which
/// the compiler turns into wide vector compares (a plain count added 20 % to a CSV
/// export's CPU time).
fn count_newlines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|block| u64::from(block.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>()))
        .sum()
}

/// A reader that counts the bytes consumed through it: the compressed side of a decoder.
pub struct Counted<R> {
    inner: R,
    /// Bytes consumed.
    pub count: u64,
}

impl<R> Counted<R> {
    /// Counts what is consumed of `inner`.
    pub fn new(inner: R) -> Self {
        Counted { inner, count: 0 }
    }
}

impl<R: BufRead> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.count += amt as u64;
        self.inner.consume(amt);
    }
}

/// A decompressed stream that may not grow past `ratio` times its compressed size (plus
/// [`FLOOR`]); `compressed` tells how much of the compressed side has been read.
pub struct Inflated<D> {
    inner: D,
    ratio: u64,
    out: u64,
    compressed: fn(&D) -> u64,
}

impl<D: Read> Inflated<D> {
    /// Bounds `inner`, whose compressed size so far `compressed` tells.
    pub fn new(inner: D, ratio: u64, compressed: fn(&D) -> u64) -> Self {
        Inflated {
            inner,
            ratio,
            out: 0,
            compressed,
        }
    }

    /// Bounds `inner` by a compressed size known in advance (a zip member's), and holds
    /// it to its declared decompressed size: a stream that ends short of it or runs past
    /// it is an error.
    pub fn sized(inner: D, ratio: u64, compressed: u64, declared: u64) -> Inflated<Known<D>> {
        let known = Known {
            inner,
            compressed,
            declared,
            seen: 0,
        };
        Inflated::new(known, ratio, |s| s.compressed)
    }
}

/// A decoder whose compressed and decompressed sizes are declared beforehand.
pub struct Known<D> {
    inner: D,
    compressed: u64,
    declared: u64,
    seen: u64,
}

impl<D: Read> Read for Known<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen += n as u64;
        if self.seen > self.declared || (n == 0 && !buf.is_empty() && self.seen < self.declared) {
            return Err(exceeded(format!(
                "decompresses to {} bytes where the archive declares {}",
                if n == 0 {
                    self.seen.to_string()
                } else {
                    format!("more than {}", self.declared)
                },
                self.declared
            )));
        }
        Ok(n)
    }
}

impl<D: Read> Read for Inflated<D> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        if self.ratio > 0 {
            let compressed = (self.compressed)(&self.inner);
            let allowed = compressed.saturating_mul(self.ratio).saturating_add(FLOOR);
            if self.out > allowed {
                return Err(exceeded(format!(
                    "decompresses to more than {} times its compressed size ({} from {}): \
                     refused as a decompression bomb (NJX_MAX_RATIO sets the limit)",
                    self.ratio,
                    bytes(self.out),
                    bytes(compressed)
                )));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_suffixes() {
        assert_eq!(parse_size("123"), Some(123));
        assert_eq!(parse_size("64K"), Some(64 << 10));
        assert_eq!(parse_size("64M"), Some(64 << 20));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("99999999999999999999G"), None);
    }

    #[test]
    fn newlines_are_counted_across_blocks() {
        let text: Vec<u8> = (0..10_000u32)
            .map(|i| if i % 7 == 0 { b'\n' } else { b'x' })
            .collect();
        let plain = text.iter().filter(|&&b| b == b'\n').count() as u64;
        assert_eq!(count_newlines(&text), plain);
        assert_eq!(count_newlines(&[b'\n'; 600]), 600);
    }

    #[test]
    fn a_long_line_is_refused_naming_it() {
        let text = format!("a\nbb\n{}\n", "c".repeat(100));
        let mut capped = LineCap::new(io::BufReader::with_capacity(8, text.as_bytes()), 50);
        let mut out = Vec::new();
        let err = capped.read_to_end(&mut out).unwrap_err();
        assert!(
            err.to_string().contains("line 3 is longer than 50 bytes"),
            "{err}"
        );
        // Short lines pass whole.
        let mut capped = LineCap::new(io::BufReader::with_capacity(8, text.as_bytes()), 200);
        let mut out = Vec::new();
        capped.read_to_end(&mut out).unwrap();
        assert_eq!(out, text.as_bytes());
    }

    #[test]
    fn a_bomb_is_refused_past_the_ratio() {
        let zeros = vec![0u8; 100 << 20];
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        io::Write::write_all(&mut enc, &zeros).unwrap();
        let gz = enc.finish().unwrap();
        let decoder = flate2::bufread::GzDecoder::new(Counted::new(&gz[..]));
        let mut bounded = Inflated::new(decoder, 10, |d| d.get_ref().count);
        let err = io::copy(&mut bounded, &mut io::sink()).unwrap_err();
        assert!(err.to_string().contains("decompression bomb"), "{err}");
        // Unlimited: it all comes out.
        let decoder = flate2::bufread::GzDecoder::new(Counted::new(&gz[..]));
        let mut bounded = Inflated::new(decoder, 0, |d| d.get_ref().count);
        assert_eq!(io::copy(&mut bounded, &mut io::sink()).unwrap(), 100 << 20);
    }
}
