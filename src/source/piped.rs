//! Decompression on a thread of its own: a compressed stream is decoded by a producer
//! thread into chunks that the reading thread parses, so decoding and parsing overlap
//! (with two cores, a job reads an xz stream about as fast as C `xz -dc` decodes it,
//! instead of at the sum of both costs).
//!
//! Memory: at most [`CHUNKS`] chunks of [`CHUNK`] bytes in flight. Errors of the decoder
//! arrive in order, after the data decoded before them. When the reader is dropped early
//! (`| head`), the producer stops at its next chunk.

use std::io::{self, BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Bytes per chunk.
pub const CHUNK: usize = 1 << 18;
/// Chunks decoded ahead of the reader.
pub const CHUNKS: usize = 4;

/// The reading end: a `BufRead` over the chunks the producer decodes.
pub struct Piped {
    chunks: Receiver<io::Result<Vec<u8>>>,
    /// Used chunks go back to the producer to be filled again.
    spare: SyncSender<Vec<u8>>,
    buf: Vec<u8>,
    pos: usize,
    done: bool,
}

/// Reads `decoder` to its end on a new thread.
pub fn spawn(mut decoder: impl Read + Send + 'static) -> Piped {
    let (tx, chunks) = sync_channel::<io::Result<Vec<u8>>>(CHUNKS);
    let (spare, spares) = sync_channel::<Vec<u8>>(CHUNKS + 2);
    std::thread::spawn(move || {
        loop {
            let mut chunk = spares.try_recv().unwrap_or_default();
            chunk.resize(CHUNK, 0);
            let mut n = 0;
            let failed = loop {
                if n == CHUNK {
                    break None;
                }
                match decoder.read(&mut chunk[n..]) {
                    Ok(0) => break None,
                    Ok(k) => n += k,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break Some(e),
                }
            };
            chunk.truncate(n);
            let last = n < CHUNK || failed.is_some();
            if n > 0 && tx.send(Ok(chunk)).is_err() {
                return;
            }
            if let Some(e) = failed {
                let _ = tx.send(Err(e));
                return;
            }
            if last {
                return;
            }
        }
    });
    Piped {
        chunks,
        spare,
        buf: Vec::new(),
        pos: 0,
        done: false,
    }
}

impl BufRead for Piped {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos >= self.buf.len() && !self.done {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    let used = std::mem::replace(&mut self.buf, chunk);
                    self.pos = 0;
                    let _ = self.spare.try_send(used);
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                // The producer finished.
                Err(_) => self.done = true,
            }
        }
        Ok(&self.buf[self.pos.min(self.buf.len())..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos += amt;
    }
}

impl Read for Piped {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives `data`, then fails with `error` if any.
    struct Source {
        data: io::Cursor<Vec<u8>>,
        error: Option<io::ErrorKind>,
    }

    impl Read for Source {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            // Short reads, to exercise the chunk filling.
            let k = buf.len().min(1000);
            match self.data.read(&mut buf[..k])? {
                0 => match self.error.take() {
                    Some(kind) => Err(io::Error::new(kind, "broken")),
                    None => Ok(0),
                },
                n => Ok(n),
            }
        }
    }

    #[test]
    fn every_byte_arrives_in_order_then_the_error() {
        let data: Vec<u8> = (0..3 * CHUNK + 12345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut all = Vec::new();
        let mut piped = spawn(Source {
            data: io::Cursor::new(data.clone()),
            error: None,
        });
        piped.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);

        let mut piped = spawn(Source {
            data: io::Cursor::new(data.clone()),
            error: Some(io::ErrorKind::InvalidData),
        });
        let mut got = Vec::new();
        let err = piped.read_to_end(&mut got).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert_eq!(got, data);
        // Exactly one chunk's worth of data and then nothing: no empty chunk is needed.
        let exact: Vec<u8> = vec![1; CHUNK];
        let mut piped = spawn(io::Cursor::new(exact.clone()));
        let mut got = Vec::new();
        piped.read_to_end(&mut got).unwrap();
        assert_eq!(got, exact);
    }
}
