//! Byte-level mutations, blind to the format: bit and byte flips, random runs, truncation,
//! chunk duplication, deletion and swapping, splicing with another input, and interesting
//! integers written over random offsets.

use crate::rng::Rng;

/// Largest input the mutators let grow (bigger ones are cut).
pub const MAX_LEN: usize = 4 << 20;

/// Integers that sit on boundaries: written as u8/u16/u32/u64, little or big endian.
pub const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    7,
    8,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    u64::MAX,
    u64::MAX - 1,
    (-2i64) as u64,
    (-128i64) as u64,
    1_000_000_000,
];

/// Applies 1 to `rounds` stacked byte mutations to `data`; `others` are inputs of the
/// same target to splice from.
pub fn havoc(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]], rounds: usize) {
    let n = rng.small(rounds);
    // Held to MAX_LEN after every round: stacked duplications would otherwise grow an
    // input exponentially (a worker died allocating 486 MB between executions).
    for _ in 0..n {
        one(rng, data, others);
        data.truncate(MAX_LEN);
    }
}

/// One byte mutation.
pub fn one(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]]) {
    if data.is_empty() {
        let k = rng.range(1, 64);
        data.extend((0..k).map(|_| rng.next() as u8));
        return;
    }
    let len = data.len();
    match rng.below(16) {
        0 => {
            // flip one bit
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 => {
            // a random byte
            let i = rng.below(len);
            data[i] = rng.next() as u8;
        }
        2 => {
            // add or subtract a little
            let i = rng.below(len);
            let d = rng.range(1, 36) as u8;
            data[i] = if rng.chance(0.5) {
                data[i].wrapping_add(d)
            } else {
                data[i].wrapping_sub(d)
            };
        }
        3 => {
            // an interesting integer at a random offset
            let v = *rng.pick(INTERESTING);
            let width = *rng.pick(&[1usize, 2, 4, 8]);
            let be = rng.chance(0.5);
            let bytes: Vec<u8> = if be {
                v.to_be_bytes()[8 - width..].to_vec()
            } else {
                v.to_le_bytes()[..width].to_vec()
            };
            let i = rng.below(len);
            for (k, b) in bytes.into_iter().enumerate() {
                if let Some(slot) = data.get_mut(i + k) {
                    *slot = b;
                }
            }
        }
        4 => {
            // truncate
            let at = rng.below(len);
            data.truncate(at);
        }
        5 => {
            // delete a chunk
            let (a, b) = chunk(rng, len);
            data.drain(a..b);
        }
        6 => {
            // duplicate a chunk in place
            let (a, b) = chunk(rng, len);
            let piece = data[a..b].to_vec();
            let at = rng.below(len + 1);
            data.splice(at..at, piece);
        }
        7 => {
            // swap two chunks of the same length
            let (a, b) = chunk(rng, len);
            let n = b - a;
            if n > 0 && len > n {
                let c = rng.below(len - n + 1);
                if c + n <= a || c >= b {
                    for k in 0..n {
                        data.swap(a + k, c + k);
                    }
                }
            }
        }
        8 => {
            // a run of random bytes
            let k = rng.range(1, 64);
            let at = rng.below(len + 1);
            let run: Vec<u8> = (0..k).map(|_| rng.next() as u8).collect();
            data.splice(at..at, run);
        }
        9 => {
            // a run of one byte, sometimes long
            let k = if rng.chance(0.1) {
                rng.range(256, 65_536)
            } else {
                rng.range(1, 128)
            };
            let any = rng.next() as u8;
            let b = *rng.pick(&[0u8, 0xff, b'0', b'9', b',', b'\n', b'"', any]);
            let at = rng.below(len + 1);
            data.splice(at..at, std::iter::repeat_n(b, k));
        }
        10 => {
            // overwrite a chunk with random bytes
            let (a, b) = chunk(rng, len);
            for x in &mut data[a..b] {
                *x = rng.next() as u8;
            }
        }
        11 | 12 => {
            // splice: our head, another input's tail
            if let Some(other) = pick_other(rng, others) {
                let at = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                data.truncate(at);
                data.extend_from_slice(&other[from..]);
            } else {
                data.reverse();
            }
        }
        13 => {
            // insert a chunk of another input
            if let Some(other) = pick_other(rng, others) {
                let (a, b) = chunk(rng, other.len());
                let at = rng.below(len + 1);
                data.splice(at..at, other[a..b].iter().copied());
            }
        }
        14 => {
            // zero a chunk
            let (a, b) = chunk(rng, len);
            for x in &mut data[a..b] {
                *x = 0;
            }
        }
        _ => {
            // flip many bits at once
            for _ in 0..rng.range(2, 16) {
                let i = rng.below(len);
                data[i] ^= 1 << rng.below(8);
            }
        }
    }
}

/// A chunk `a..b` of a buffer of `len` bytes, mostly short.
pub fn chunk(rng: &mut Rng, len: usize) -> (usize, usize) {
    if len == 0 {
        return (0, 0);
    }
    let a = rng.below(len);
    let max = if rng.chance(0.8) {
        64.min(len - a)
    } else {
        len - a
    };
    let b = a + rng.range(1, max + 1).min(len - a);
    (a, b)
}

fn pick_other<'a>(rng: &mut Rng, others: &[&'a [u8]]) -> Option<&'a [u8]> {
    if others.is_empty() {
        return None;
    }
    let o = others[rng.below(others.len())];
    (!o.is_empty()).then_some(o)
}
