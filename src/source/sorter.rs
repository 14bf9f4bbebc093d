//! External sorting and spilling of fixed-size records, so that the SQLite readers hold a
//! bounded amount of memory whatever the size of the export.
//!
//! [`Sorter`] takes records one at a time into a buffer of [`chunk`] records; a full
//! buffer is sorted and written to a temporary file (`TMPDIR`) as a run; [`Sorter::finish`]
//! merges the runs (a heap of one buffered reader per run) into a [`Sorted`] stream. Input
//! that fits in one buffer never touches the disk. Memory: one buffer while records come
//! in, a read buffer per run while they go out.
//!
//! [`Patched`] is a sequence of records written in order whose tail can still be changed:
//! the latest [`chunk`] records are held, older ones are on disk and are patched in place.
//!
//! The encoding is private to one run of the program (little-endian fixed fields).

use crate::error::{Error, Result};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};

/// Bytes of the buffer of a [`Sorter`] or a [`Patched`].
const BUFFER_BYTES: usize = 16 << 20;

/// Bytes read at a time from each run while merging, at most.
const READ_BYTES: usize = 256 << 10;

/// A record of fixed size.
pub trait Fixed: Sized {
    /// Encoded size in bytes.
    const SIZE: usize;
    /// Writes exactly [`Fixed::SIZE`] bytes.
    fn put(&self, out: &mut Vec<u8>);
    /// Reads a record from [`Fixed::SIZE`] bytes.
    fn get(b: &[u8]) -> Self;
}

/// Little-endian field readers for [`Fixed::get`].
pub fn i64_at(b: &[u8], at: usize) -> i64 {
    i64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// See [`i64_at`].
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Records held in memory for records of `size` bytes: `BUFFER_BYTES` worth, or
/// `NJX_SORT_RECORDS` from the environment (a test hook: small values make small inputs
/// spill).
pub fn chunk(size: usize) -> usize {
    std::env::var("NJX_SORT_RECORDS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(BUFFER_BYTES / size)
}

fn io(e: std::io::Error) -> Error {
    Error::io("temporary file (TMPDIR)", e)
}

/// Writes `records` to `file` at its position, a megabyte of encoding at a time.
fn write_records<T: Fixed>(file: &mut File, records: &[T], bytes: &mut Vec<u8>) -> Result<()> {
    let per_write = (1 << 20) / T::SIZE + 1;
    for part in records.chunks(per_write) {
        bytes.clear();
        for t in part {
            t.put(bytes);
        }
        file.write_all(bytes).map_err(io)?;
    }
    Ok(())
}

fn truncated() -> Error {
    Error::data(
        "temporary file (TMPDIR)",
        "truncated: was it changed while njx ran?",
    )
}

/// Sorts records of any number in bounded memory.
pub struct Sorter<T: Fixed> {
    cmp: fn(&T, &T) -> Ordering,
    buf: Vec<T>,
    chunk: usize,
    file: Option<File>,
    /// (offset, records) of each run written.
    runs: Vec<(u64, u64)>,
    at: u64,
    bytes: Vec<u8>,
}

impl<T: Fixed> Sorter<T> {
    /// A sorter ordering records by `cmp`.
    pub fn new(cmp: fn(&T, &T) -> Ordering) -> Sorter<T> {
        Sorter {
            cmp,
            buf: Vec::new(),
            chunk: chunk(T::SIZE),
            file: None,
            runs: Vec::new(),
            at: 0,
            bytes: Vec::new(),
        }
    }

    /// Adds a record.
    pub fn push(&mut self, t: T) -> Result<()> {
        if self.buf.len() == self.chunk {
            self.spill()?;
        }
        self.buf.push(t);
        Ok(())
    }

    fn spill(&mut self) -> Result<()> {
        let cmp = self.cmp;
        self.buf.sort_unstable_by(cmp);
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile().map_err(io)?),
        };
        write_records(file, &self.buf, &mut self.bytes)?;
        self.runs.push((self.at, self.buf.len() as u64));
        self.at += (self.buf.len() * T::SIZE) as u64;
        self.buf.clear();
        Ok(())
    }

    /// The records in order.
    pub fn finish(mut self) -> Result<Sorted<T>> {
        if self.file.is_none() {
            let cmp = self.cmp;
            self.buf.sort_unstable_by(cmp);
            let mut buf = self.buf;
            buf.reverse();
            return Ok(Sorted {
                inner: Inner::Memory(buf),
            });
        }
        if !self.buf.is_empty() {
            self.spill()?;
        }
        drop(std::mem::take(&mut self.buf));
        let file = self.file.take().expect("spilled");
        let per_run = (READ_BYTES / T::SIZE)
            .min((4 * BUFFER_BYTES / self.runs.len().max(1)) / T::SIZE)
            .max(16);
        let mut runs: Vec<Run> = self
            .runs
            .iter()
            .map(|&(offset, left)| Run {
                offset,
                left,
                bytes: Vec::new(),
                pos: 0,
            })
            .collect();
        let mut heap = BinaryHeap::with_capacity(runs.len());
        let mut file = file;
        for (i, run) in runs.iter_mut().enumerate() {
            if let Some(item) = run.next::<T>(&mut file, per_run)? {
                heap.push(Head {
                    item,
                    run: i,
                    cmp: self.cmp,
                });
            }
        }
        Ok(Sorted {
            inner: Inner::Merge {
                file,
                runs,
                heap,
                per_run,
            },
        })
    }
}

/// Records on disk from `offset` on (a sorted run, or a [`Patched`] sequence), read a
/// block at a time.
struct Run {
    offset: u64,
    /// Records not yet read from disk.
    left: u64,
    bytes: Vec<u8>,
    pos: usize,
}

impl Run {
    fn next<T: Fixed>(&mut self, file: &mut File, per_run: usize) -> Result<Option<T>> {
        if self.pos == self.bytes.len() {
            if self.left == 0 {
                return Ok(None);
            }
            let n = (self.left as usize).min(per_run);
            self.bytes.resize(n * T::SIZE, 0);
            file.seek(SeekFrom::Start(self.offset)).map_err(io)?;
            file.read_exact(&mut self.bytes)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::UnexpectedEof => truncated(),
                    _ => io(e),
                })?;
            self.offset += self.bytes.len() as u64;
            self.left -= n as u64;
            self.pos = 0;
        }
        let t = T::get(&self.bytes[self.pos..self.pos + T::SIZE]);
        self.pos += T::SIZE;
        Ok(Some(t))
    }
}

/// The next record of a run, ordered for a min-heap.
struct Head<T> {
    item: T,
    run: usize,
    cmp: fn(&T, &T) -> Ordering,
}

impl<T> PartialEq for Head<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl<T> Eq for Head<T> {}
impl<T> PartialOrd for Head<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Head<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap. Equal records come from the earlier run first.
        (self.cmp)(&other.item, &self.item).then(other.run.cmp(&self.run))
    }
}

enum Inner<T> {
    /// Sorted, reversed: popped from the end.
    Memory(Vec<T>),
    Merge {
        file: File,
        runs: Vec<Run>,
        heap: BinaryHeap<Head<T>>,
        per_run: usize,
    },
}

/// Records in sorted order.
pub struct Sorted<T> {
    inner: Inner<T>,
}

impl<T: Fixed> Sorted<T> {
    /// The next record, or `None` at the end.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<T>> {
        match &mut self.inner {
            Inner::Memory(v) => Ok(v.pop()),
            Inner::Merge {
                file,
                runs,
                heap,
                per_run,
            } => {
                let Some(mut top) = heap.peek_mut() else {
                    // Done: the temporary file is closed (and its space freed) now.
                    self.inner = Inner::Memory(Vec::new());
                    return Ok(None);
                };
                match runs[top.run].next::<T>(file, *per_run)? {
                    Some(item) => Ok(Some(std::mem::replace(&mut top.item, item))),
                    None => Ok(Some(std::collections::binary_heap::PeekMut::pop(top).item)),
                }
            }
        }
    }
}

/// Records written in sequence whose fields can be changed later (see the module docs).
pub struct Patched<T: Fixed> {
    /// The records from `base` on.
    buf: Vec<T>,
    base: u64,
    chunk: usize,
    file: Option<File>,
    bytes: Vec<u8>,
}

impl<T: Fixed> Patched<T> {
    /// An empty sequence.
    pub fn new() -> Patched<T> {
        Patched {
            buf: Vec::new(),
            base: 0,
            chunk: chunk(T::SIZE),
            file: None,
            bytes: Vec::new(),
        }
    }

    /// Records so far.
    pub fn len(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Appends a record.
    pub fn push(&mut self, t: T) -> Result<()> {
        if self.buf.len() == self.chunk {
            self.flush()?;
        }
        self.buf.push(t);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let file = match &mut self.file {
            Some(f) => f,
            None => self.file.insert(tempfile::tempfile().map_err(io)?),
        };
        file.seek(SeekFrom::Start(self.base * T::SIZE as u64))
            .map_err(io)?;
        write_records(file, &self.buf, &mut self.bytes)?;
        self.base += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Changes record `seq`: `change` on it while it is held, else `bytes` (made by
    /// `encode`) written at byte `offset` of it on disk.
    pub fn patch(
        &mut self,
        seq: u64,
        change: impl FnOnce(&mut T),
        offset: usize,
        bytes: &[u8],
    ) -> Result<()> {
        if seq >= self.base {
            change(&mut self.buf[(seq - self.base) as usize]);
            return Ok(());
        }
        let file = self.file.as_mut().expect("records before base are on disk");
        file.seek(SeekFrom::Start(seq * T::SIZE as u64 + offset as u64))
            .map_err(io)?;
        file.write_all(bytes).map_err(io)
    }

    /// Reads the records back, in order.
    pub fn finish(mut self) -> Result<Replay<T>> {
        if self.file.is_none() {
            let mut held = std::mem::take(&mut self.buf);
            held.reverse();
            return Ok(Replay { held, disk: None });
        }
        // The tail is written too, so that one reader serves all.
        self.flush()?;
        drop(std::mem::take(&mut self.buf));
        let file = self.file.take().expect("written");
        let run = Run {
            offset: 0,
            left: self.base,
            bytes: Vec::new(),
            pos: 0,
        };
        Ok(Replay {
            held: Vec::new(),
            disk: Some((file, run)),
        })
    }
}

impl<T: Fixed> Default for Patched<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The records of a [`Patched`], in order.
pub struct Replay<T> {
    /// Records never written to disk, reversed.
    held: Vec<T>,
    /// Or all of them on disk.
    disk: Option<(File, Run)>,
}

impl<T: Fixed> Replay<T> {
    /// The next record, or `None` at the end.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<T>> {
        match &mut self.disk {
            None => Ok(self.held.pop()),
            Some((file, run)) => run.next(file, READ_BYTES / T::SIZE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq)]
    struct R(i64, u32);

    impl Fixed for R {
        const SIZE: usize = 12;
        fn put(&self, out: &mut Vec<u8>) {
            out.extend_from_slice(&self.0.to_le_bytes());
            out.extend_from_slice(&self.1.to_le_bytes());
        }
        fn get(b: &[u8]) -> Self {
            R(i64_at(b, 0), u32_at(b, 8))
        }
    }

    fn sort_with_chunk(v: &[R], chunk: usize) -> Vec<R> {
        let mut s = Sorter::new(|a: &R, b: &R| a.0.cmp(&b.0));
        s.chunk = chunk;
        for &r in v {
            s.push(r).unwrap();
        }
        let mut out = Vec::new();
        let mut sorted = s.finish().unwrap();
        while let Some(r) = sorted.next().unwrap() {
            out.push(r);
        }
        out
    }

    #[test]
    fn sorts_in_memory_and_through_runs_alike() {
        let v: Vec<R> = (0..1000u32)
            .map(|i| R(((i as i64) * 7919) % 101, i))
            .collect();
        let mut expected = v.clone();
        expected.sort_by_key(|r| r.0);
        for chunk in [1, 3, 16, 999, 1000, 5000] {
            let got = sort_with_chunk(&v, chunk);
            let keys: Vec<i64> = got.iter().map(|r| r.0).collect();
            let want: Vec<i64> = expected.iter().map(|r| r.0).collect();
            assert_eq!(keys, want, "chunk {chunk}");
            let mut ids: Vec<u32> = got.iter().map(|r| r.1).collect();
            ids.sort();
            assert_eq!(ids, (0..1000).collect::<Vec<u32>>());
        }
        assert!(sort_with_chunk(&[], 4).is_empty());
    }

    #[test]
    fn patches_reach_records_held_and_written() {
        for chunk in [1, 2, 7, 100] {
            let mut p: Patched<R> = Patched::new();
            p.chunk = chunk;
            for i in 0..50 {
                p.push(R(i, 0)).unwrap();
                if i % 3 == 2 {
                    let seq = (i - 2) as u64;
                    let v = 1000 + i as u32;
                    p.patch(seq, |r| r.1 = v, 8, &v.to_le_bytes()).unwrap();
                }
            }
            assert_eq!(p.len(), 50);
            let mut r = p.finish().unwrap();
            let mut got = Vec::new();
            while let Some(x) = r.next().unwrap() {
                got.push(x);
            }
            let want: Vec<R> = (0..50)
                .map(|i| {
                    R(
                        i,
                        if i % 3 == 0 && i + 2 < 50 {
                            1002 + i as u32
                        } else {
                            0
                        },
                    )
                })
                .collect();
            assert_eq!(got, want, "chunk {chunk}");
        }
    }
}
