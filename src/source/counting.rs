//! The readers' side of the job's [`Progress`]: the raw bytes of inputs (files, zip
//! archives, members as stored, stdin) counted as they are read, chunk by chunk (each read
//! call below the 8–64 kB buffers, each byte range Parquet asks for), never per record.

use crate::output::progress::Progress;
use parquet::file::reader::{ChunkReader, Length};
use std::io::{self, Read, Seek, SeekFrom};

/// A reader whose bytes count as read.
pub struct Reading<R> {
    inner: R,
    progress: Progress,
}

impl<R> Reading<R> {
    /// `inner`, its bytes counted in `progress`.
    pub fn new(inner: R, progress: &Progress) -> Reading<R> {
        Reading {
            inner,
            progress: progress.clone(),
        }
    }
}

impl<R: Read> Read for Reading<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.read(n as u64);
        Ok(n)
    }
}

// A zip archive is read through one: seeking passes through.
impl<R: Seek> Seek for Reading<R> {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// A Parquet file (or stored member) whose byte ranges count as read when the Parquet
/// reader fetches them.
pub struct Counting<C> {
    inner: C,
    progress: Progress,
}

impl<C> Counting<C> {
    /// `inner`, the ranges read of it counted in `progress`.
    pub fn new(inner: C, progress: &Progress) -> Counting<C> {
        Counting {
            inner,
            progress: progress.clone(),
        }
    }
}

impl<C: Length> Length for Counting<C> {
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

impl<C: ChunkReader> ChunkReader for Counting<C> {
    type T = Reading<C::T>;

    fn get_read(&self, start: u64) -> parquet::errors::Result<Self::T> {
        Ok(Reading::new(self.inner.get_read(start)?, &self.progress))
    }

    fn get_bytes(&self, start: u64, length: usize) -> parquet::errors::Result<bytes::Bytes> {
        let bytes = self.inner.get_bytes(start, length)?;
        self.progress.read(bytes.len() as u64);
        Ok(bytes)
    }
}
