//! Derived executions parked on disk between the two passes of a streaming export: warm-up
//! and clock alignment depend on every profile, so each profile's records are written
//! here as they are derived (memory holds one profile per core) and read back, in the
//! same order, once the decisions are made.
//!
//! The encoding is private to one run: per block (one input path), a table of the
//! distinct strings, then the module and thunk records as fixed fields referring to it.

use super::Execution;
use crate::error::{Error, Result};
use crate::records::{Module, Reconstructed, Thunk};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::sync::Arc;

/// A temporary file of blocks of executions (deleted when dropped).
pub struct Spill {
    file: BufWriter<File>,
    blocks: usize,
}

fn io(e: std::io::Error) -> Error {
    Error::io("temporary file (TMPDIR)", e)
}

/// The strings of one block, each written once.
#[derive(Default)]
struct Strings<'a> {
    index: HashMap<&'a str, u32>,
    list: Vec<&'a str>,
}

impl<'a> Strings<'a> {
    fn id(&mut self, s: &'a str) -> u32 {
        *self.index.entry(s).or_insert_with(|| {
            self.list.push(s);
            (self.list.len() - 1) as u32
        })
    }
}

/// Little-endian fixed-width fields.
struct Out(Vec<u8>);

impl Out {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn opt_u64(&mut self, v: Option<u64>) {
        self.u8(u8::from(v.is_some()));
        self.u64(v.unwrap_or(0));
    }
}

struct In<'a>(&'a [u8]);

impl In<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        if self.0.len() < N {
            return Err(Error::data(
                "temporary file (TMPDIR)",
                "truncated: was it changed while njx ran?",
            ));
        }
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        Ok(head.try_into().expect("N bytes"))
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn i64(&mut self) -> Result<i64> {
        Ok(i64::from_le_bytes(self.take()?))
    }
    fn opt_u64(&mut self) -> Result<Option<u64>> {
        let some = self.u8()? != 0;
        let v = self.u64()?;
        Ok(some.then_some(v))
    }
}

impl Spill {
    /// A new temporary file in TMPDIR.
    pub fn new() -> Result<Spill> {
        Ok(Spill {
            file: BufWriter::with_capacity(1 << 20, tempfile::tempfile().map_err(io)?),
            blocks: 0,
        })
    }

    /// Appends one block: `modules` and `thunks` (either may be left empty).
    pub fn put(&mut self, modules: &[Module], thunks: &[Thunk]) -> Result<()> {
        let mut strings = Strings::default();
        let mut out = Out(Vec::with_capacity(64 * (modules.len() + thunks.len())));
        out.u32(modules.len() as u32);
        for m in modules {
            out.u32(strings.id(&m.profile));
            out.u32(strings.id(&m.program));
            out.opt_u64(m.program_id);
            out.u32(strings.id(&m.name));
            out.u32(m.execution);
            out.u32(m.device);
            out.i64(m.start_ns);
            out.i64(m.dur_ns);
            out.u32(m.thunks);
            out.u8(u8::from(m.warmup) | (u8::from(m.autotuning) << 1));
        }
        out.u32(thunks.len() as u32);
        for t in thunks {
            out.u32(strings.id(&t.profile));
            out.u32(strings.id(&t.program));
            out.opt_u64(t.program_id);
            out.u32(strings.id(&t.module));
            out.u32(t.execution);
            out.u32(t.device);
            out.u32(strings.id(&t.name));
            out.u32(t.thunk_execution);
            out.i64(t.start_ns);
            out.i64(t.dur_ns);
            out.i64(t.hidden_ns);
            let how = match t.reconstructed {
                None => 0,
                Some(Reconstructed::Module) => 1,
                Some(Reconstructed::Nccl) => 2,
            };
            out.u8(u8::from(t.comm)
                | (u8::from(t.warmup) << 1)
                | (how << 2)
                | (u8::from(t.autotuning) << 4));
            out.u32(t.collective.as_deref().map_or(u32::MAX, |c| strings.id(c)));
            out.opt_u64(t.group_size.map(u64::from));
            out.opt_u64(t.message_bytes);
        }
        let mut head = Out(Vec::new());
        head.u32(strings.list.len() as u32);
        for s in &strings.list {
            head.u32(s.len() as u32);
            head.0.extend_from_slice(s.as_bytes());
        }
        head.u64(out.0.len() as u64);
        self.file.write_all(&head.0).map_err(io)?;
        self.file.write_all(&out.0).map_err(io)?;
        self.blocks += 1;
        Ok(())
    }

    /// Reads the blocks back in order, handing each record to `f` (a block's modules
    /// before its thunks).
    pub fn read(self, f: &mut dyn FnMut(Execution) -> Result<()>) -> Result<()> {
        let mut file = self.file.into_inner().map_err(|e| io(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        let mut file = BufReader::with_capacity(1 << 20, file);
        let mut word = [0u8; 8];
        for _ in 0..self.blocks {
            file.read_exact(&mut word[..4]).map_err(io)?;
            let n = u32::from_le_bytes(word[..4].try_into().expect("4 bytes"));
            let mut strings: Vec<(String, Arc<str>)> = Vec::with_capacity(n as usize);
            for _ in 0..n {
                file.read_exact(&mut word[..4]).map_err(io)?;
                let len = u32::from_le_bytes(word[..4].try_into().expect("4 bytes"));
                let mut bytes = vec![0u8; len as usize];
                file.read_exact(&mut bytes).map_err(io)?;
                let s = String::from_utf8(bytes).map_err(|e| io(std::io::Error::other(e)))?;
                let arc = Arc::from(s.as_str());
                strings.push((s, arc));
            }
            file.read_exact(&mut word).map_err(io)?;
            let mut body = vec![0u8; u64::from_le_bytes(word) as usize];
            file.read_exact(&mut body).map_err(io)?;
            let mut r = In(&body);
            let s = |i: u32| -> Result<&(String, Arc<str>)> {
                strings
                    .get(i as usize)
                    .ok_or_else(|| Error::data("temporary file (TMPDIR)", "bad string index"))
            };
            for _ in 0..r.u32()? {
                let mut m = Module {
                    profile: s(r.u32()?)?.1.clone(),
                    program: s(r.u32()?)?.0.clone(),
                    program_id: r.opt_u64()?,
                    name: s(r.u32()?)?.0.clone(),
                    execution: r.u32()?,
                    device: r.u32()?,
                    start_ns: r.i64()?,
                    dur_ns: r.i64()?,
                    thunks: r.u32()?,
                    warmup: false,
                    autotuning: false,
                };
                let flags = r.u8()?;
                (m.warmup, m.autotuning) = (flags & 1 != 0, flags & 2 != 0);
                f(Execution::Module(m))?;
            }
            for _ in 0..r.u32()? {
                let profile = s(r.u32()?)?.1.clone();
                let program = s(r.u32()?)?.0.clone();
                let program_id = r.opt_u64()?;
                let module = s(r.u32()?)?.0.clone();
                let execution = r.u32()?;
                let device = r.u32()?;
                let name = s(r.u32()?)?.0.clone();
                let thunk_execution = r.u32()?;
                let (start_ns, dur_ns, hidden_ns) = (r.i64()?, r.i64()?, r.i64()?);
                let flags = r.u8()?;
                let collective = match r.u32()? {
                    u32::MAX => None,
                    i => Some(s(i)?.0.clone()),
                };
                f(Execution::Thunk(Thunk {
                    profile,
                    program,
                    program_id,
                    module,
                    execution,
                    device,
                    name,
                    thunk_execution,
                    start_ns,
                    dur_ns,
                    hidden_ns,
                    comm: flags & 1 != 0,
                    warmup: flags & 2 != 0,
                    collective,
                    group_size: r.opt_u64()?.map(|g| g as u32),
                    message_bytes: r.opt_u64()?,
                    reconstructed: match (flags >> 2) & 3 {
                        1 => Some(Reconstructed::Module),
                        2 => Some(Reconstructed::Nccl),
                        _ => None,
                    },
                    autotuning: flags & 16 != 0,
                }))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_as_they_went_in() {
        let profile: Arc<str> = Arc::from("p");
        let m = Module {
            profile: profile.clone(),
            program: "abc".into(),
            program_id: Some(7),
            name: "jit_f".into(),
            execution: 3,
            device: 5,
            start_ns: -4,
            dur_ns: 1 << 40,
            thunks: 2,
            warmup: true,
            autotuning: false,
        };
        let t = Thunk {
            profile,
            program: "abc".into(),
            program_id: None,
            module: "jit_f".into(),
            execution: 3,
            device: 5,
            name: "all-gather.1".into(),
            thunk_execution: 1,
            start_ns: i64::MIN,
            dur_ns: i64::MAX,
            hidden_ns: 9,
            comm: true,
            warmup: false,
            collective: Some("all-gather".into()),
            group_size: Some(4),
            message_bytes: Some(u64::MAX),
            reconstructed: Some(Reconstructed::Nccl),
            autotuning: true,
        };
        let plain = Thunk {
            collective: None,
            group_size: None,
            message_bytes: None,
            comm: false,
            warmup: true,
            reconstructed: None,
            autotuning: false,
            ..t.clone()
        };
        let tuning = Module {
            program: crate::records::AUTOTUNING_PROGRAM.into(),
            program_id: None,
            warmup: false,
            autotuning: true,
            ..m.clone()
        };
        let mut spill = Spill::new().unwrap();
        spill
            .put(std::slice::from_ref(&m), &[t.clone(), plain.clone()])
            .unwrap();
        spill.put(&[], &[]).unwrap();
        spill.put(&[m.clone(), tuning.clone()], &[]).unwrap();
        let (mut ms, mut ts) = (Vec::new(), Vec::new());
        spill
            .read(&mut |e| {
                match e {
                    Execution::Module(m) => ms.push(m),
                    Execution::Thunk(t) => ts.push(t),
                }
                Ok(())
            })
            .unwrap();
        assert_eq!(ms, vec![m.clone(), m, tuning]);
        assert_eq!(ts, vec![t, plain]);
    }
}
