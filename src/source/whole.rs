//! An xz stream decoded whole into one buffer of the size its own index declares.
//!
//! The HLO dumps are read whole (protobuf decoding needs the whole message). Read as a
//! stream, the buffer doubles as the data arrives: every byte is copied again at each
//! doubling, each new buffer is zeroed before the decoder writes into it, and twice the
//! memory is touched fresh — on the pax archives this was half of the kernel's page
//! zeroing and about 8 % of `njx-report`'s time (docs/performance.md). An xz stream
//! says its decompressed size in its index, at its end (the xz file format, version
//! 1.2.1, sections 2.1.2.4 "Backward Size" and 4 "Index"), so the buffer is sized once and
//! decoded into without being zeroed first.
//!
//! Only a stream that decodes to exactly the size its index declares, within the
//! decompression-ratio limit, and ends where the data ends is taken here; anything else
//! (another stream after it, padding, a damaged index or block, a size past the limit)
//! gives `None`, and the caller reads the data as a stream, whose errors say what is
//! wrong as they always have.

use super::limits::FLOOR;
use xz2::stream::{Action, Status, Stream};

/// The data `raw` (a whole xz stream) decodes to, or `None` where it must be read as a
/// stream instead (see the module's documentation). `ratio`: the largest decompressed ÷
/// compressed size beyond [`FLOOR`], 0 for no limit.
pub fn xz(raw: &[u8], ratio: u64) -> Option<Vec<u8>> {
    let declared = declared_size(raw)?;
    if ratio > 0
        && declared
            > (raw.len() as u64)
                .saturating_mul(ratio)
                .saturating_add(FLOOR)
    {
        return None;
    }
    let mut out = Vec::new();
    out.try_reserve_exact(usize::try_from(declared).ok()?)
        .ok()?;
    // The check (CRC-64 in nsys-jax's dumps) is verified, as `xz -dc` verifies it.
    let mut stream = Stream::new_stream_decoder(u64::MAX, 0).ok()?;
    loop {
        let consumed = stream.total_in() as usize;
        let before = (consumed, out.len());
        match stream.process_vec(&raw[consumed..], &mut out, Action::Finish) {
            Ok(Status::StreamEnd) => break,
            Ok(_) if (stream.total_in() as usize, out.len()) != before => continue,
            _ => return None,
        }
    }
    (stream.total_in() == raw.len() as u64 && out.len() as u64 == declared).then_some(out)
}

/// The decompressed size that the index of the xz stream `raw` declares: the sum of its
/// records' uncompressed sizes. `None` when `raw` does not end with a stream footer or
/// its index cannot be read.
fn declared_size(raw: &[u8]) -> Option<u64> {
    const HEADER: usize = 12;
    const FOOTER: usize = 12;
    let n = raw.len();
    if n < HEADER + FOOTER || !raw.ends_with(b"YZ") {
        return None;
    }
    // Backward Size: the index's size in 4-byte units, less one.
    let backward = u32::from_le_bytes(raw[n - 8..n - 4].try_into().ok()?) as usize;
    let index_size = (backward + 1) * 4;
    let start = n.checked_sub(FOOTER + index_size)?;
    if start < HEADER {
        return None;
    }
    let index = &raw[start..n - FOOTER];
    // Index Indicator, Number of Records, then (Unpadded Size, Uncompressed Size) each.
    if index[0] != 0 {
        return None;
    }
    let mut at = 1;
    let records = varint(index, &mut at)?;
    let mut total = 0u64;
    for _ in 0..records {
        varint(index, &mut at)?;
        total = total.checked_add(varint(index, &mut at)?)?;
    }
    Some(total)
}

/// xz's multibyte integer: 7 bits a byte, least significant first, at most 9 bytes.
fn varint(data: &[u8], at: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for i in 0..9 {
        let byte = *data.get(*at)?;
        *at += 1;
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            // The last byte may not be a zero that lengthens the encoding.
            return (i == 0 || byte != 0).then_some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn compress(data: &[u8]) -> Vec<u8> {
        let mut w = xz2::write::XzEncoder::new(Vec::new(), 1);
        w.write_all(data).unwrap();
        w.finish().unwrap()
    }

    #[test]
    fn a_stream_decodes_whole_to_its_declared_size() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i * 31 % 253) as u8).collect();
        let raw = compress(&data);
        assert_eq!(declared_size(&raw), Some(data.len() as u64));
        let out = xz(&raw, 10).unwrap();
        assert_eq!(out, data);
        assert_eq!(out.capacity(), data.len());
        assert_eq!(xz(&compress(b""), 10), Some(Vec::new()));
    }

    #[test]
    fn anything_but_one_whole_stream_is_left_to_the_streaming_reader() {
        let data = vec![7u8; 100_000];
        let raw = compress(&data);
        // Another stream after it, or stream padding.
        let twice = [raw.clone(), raw.clone()].concat();
        assert_eq!(xz(&twice, 0), None);
        assert_eq!(xz(&[raw.clone(), vec![0; 4]].concat(), 0), None);
        // Cut anywhere, or a byte changed anywhere.
        for cut in [0, 1, 11, 12, raw.len() / 2, raw.len() - 1] {
            assert_eq!(xz(&raw[..cut], 0), None, "cut at {cut}");
        }
        for at in 0..raw.len() {
            let mut bad = raw.clone();
            bad[at] ^= 0x41;
            if let Some(out) = xz(&bad, 0) {
                assert_eq!(out, data, "changed at {at} decodes to something else");
            }
        }
        // Past the ratio limit (100 KB from a few hundred bytes, beyond a floor of 0 here
        // only through the limit's own floor: refused where ratio × size + FLOOR is less).
        let huge = vec![0u8; (FLOOR + 1_000_000) as usize];
        let raw = compress(&huge);
        assert_eq!(xz(&raw, 1), None);
        assert_eq!(xz(&raw, 0).map(|o| o.len()), Some(huge.len()));
    }

    #[test]
    fn multibyte_integers_follow_the_format() {
        let mut at = 0;
        assert_eq!(varint(&[0x00], &mut at), Some(0));
        at = 0;
        assert_eq!(varint(&[0xff, 0x01], &mut at), Some(255));
        assert_eq!(at, 2);
        at = 0;
        assert_eq!(varint(&[0x80, 0x00], &mut at), None);
        at = 0;
        assert_eq!(varint(&[0x80; 9], &mut at), None);
        at = 0;
        assert_eq!(varint(&[0x80], &mut at), None);
    }
}
