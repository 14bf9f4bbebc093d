//! The fields every instruction of a dump needs, read straight from its encoding: where
//! its name, opcode, op_name and scheduling name are (no copy of each), its stack frame,
//! its id, and its operand and called-computation ids (kept in one array per module, not
//! a vector per instruction).
//!
//! These are the fields of `protos/xla/lean/hlo_lean.proto`, with XLA's field numbers
//! (`xla/service/hlo.proto`: `HloInstructionProto` name 1, opcode 2, metadata 7, id 35,
//! operand_ids 36, called_computation_ids 38; `xla/xla_data.proto`: `OpMetadata` op_name
//! 2, stack_frame_id 15, scheduling_name 16), read by the protobuf encoding's rules
//! (protobuf.dev, "Encoding"): any other field skipped by its wire type, the last value of
//! a field that occurs twice taken, a message that occurs twice merged, repeated ids packed
//! or not. Decoding each instruction with prost allocated a string per text field and a
//! vector per id list: on the pax archives that was a fifth of the thunk export and most
//! of the fresh memory it touched (docs/performance.md).

use std::ops::Range;

/// Where something is: a range of an instruction's encoding (text), or of the module's
/// ids (operands, called computations).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn new(range: Range<usize>) -> Span {
        Span {
            start: range.start as u32,
            len: (range.end - range.start) as u32,
        }
    }

    /// The range it spans.
    pub(super) fn range(self) -> Range<usize> {
        self.start as usize..self.start as usize + self.len as usize
    }
}

/// The lean fields of one instruction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Lean {
    pub name: Span,
    pub opcode: Span,
    pub op_name: Span,
    pub scheduling_name: Span,
    pub stack_frame_id: i32,
    pub id: i64,
    /// In the module's ids.
    pub operands: Span,
    /// In the module's ids.
    pub called: Span,
}

/// Lists of ids being read, kept between instructions (no allocation per instruction).
#[derive(Debug, Default)]
pub(super) struct Scratch {
    operands: Vec<i64>,
    called: Vec<i64>,
}

/// Reads the lean fields of the encoded instruction `buf`, its id lists appended to
/// `ids`. The error says what is wrong as prost says it (`HloInstructionProto.name:
/// invalid wire type …`); a text field that is not UTF-8 is one.
pub(super) fn read(buf: &[u8], ids: &mut Vec<i64>, scratch: &mut Scratch) -> Result<Lean, String> {
    let mut lean = Lean::default();
    scratch.operands.clear();
    scratch.called.clear();
    let mut r = Reader { buf, at: 0 };
    while r.at < buf.len() {
        let (field, wire) = r.key()?;
        let name = match field {
            1 => "name",
            2 => "opcode",
            7 => "metadata",
            35 => "id",
            36 => "operand_ids",
            38 => "called_computation_ids",
            _ => {
                r.skip(field, wire)?;
                continue;
            }
        };
        let at = |e: String| format!("HloInstructionProto.{name}: {e}");
        match field {
            1 | 2 => {
                let text = r.text(wire).map_err(at)?;
                *(if field == 1 {
                    &mut lean.name
                } else {
                    &mut lean.opcode
                }) = text;
            }
            7 => {
                let body = r.bytes(wire).map_err(at)?;
                metadata(buf, body, &mut lean).map_err(at)?;
            }
            35 => lean.id = r.int(wire).map_err(at)? as i64,
            _ => {
                let list = if field == 36 {
                    &mut scratch.operands
                } else {
                    &mut scratch.called
                };
                r.ints(wire, list).map_err(at)?;
            }
        }
    }
    for (field, span) in [
        ("HloInstructionProto.name", lean.name),
        ("HloInstructionProto.opcode", lean.opcode),
        ("OpMetadata.op_name", lean.op_name),
        ("OpMetadata.scheduling_name", lean.scheduling_name),
    ] {
        if std::str::from_utf8(&buf[span.range()]).is_err() {
            return Err(format!(
                "{field}: invalid string value: data is not UTF-8 encoded"
            ));
        }
    }
    lean.operands = Span::new(ids.len()..ids.len() + scratch.operands.len());
    ids.extend_from_slice(&scratch.operands);
    lean.called = Span::new(ids.len()..ids.len() + scratch.called.len());
    ids.extend_from_slice(&scratch.called);
    Ok(lean)
}

/// Reads an `OpMetadata` at `body` of `buf` into `lean` (merged into what an earlier one
/// gave, as protobuf merges a message given twice).
fn metadata(buf: &[u8], body: Range<usize>, lean: &mut Lean) -> Result<(), String> {
    let mut r = Reader {
        buf: &buf[..body.end],
        at: body.start,
    };
    while r.at < body.end {
        let (field, wire) = r.key()?;
        let at = |name: &'static str| move |e: String| format!("OpMetadata.{name}: {e}");
        match field {
            2 => lean.op_name = r.text(wire).map_err(at("op_name"))?,
            15 => lean.stack_frame_id = r.int(wire).map_err(at("stack_frame_id"))? as i32,
            16 => lean.scheduling_name = r.text(wire).map_err(at("scheduling_name"))?,
            _ => r.skip(field, wire)?,
        }
    }
    Ok(())
}

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;
const START_GROUP: u8 = 3;
const END_GROUP: u8 = 4;
const FIXED32: u8 = 5;

/// Reads protobuf's wire format from `at`.
struct Reader<'a> {
    buf: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.at) else {
                return Err("invalid varint".into());
            };
            self.at += 1;
            // The tenth byte holds the last bit of 64.
            if i == 9 && b > 1 {
                return Err("invalid varint".into());
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err("invalid varint".into())
    }

    /// A field's number and wire type.
    fn key(&mut self) -> Result<(u32, u8), String> {
        let key = self.varint()?;
        if key > u64::from(u32::MAX) {
            return Err(format!("invalid key value: {key}"));
        }
        let wire = (key & 7) as u8;
        if wire > FIXED32 {
            return Err(format!("invalid wire type value: {wire}"));
        }
        let field = (key >> 3) as u32;
        if field == 0 {
            return Err("invalid field number: 0".into());
        }
        Ok((field, wire))
    }

    fn expect(wire: u8, expected: u8) -> Result<(), String> {
        if wire == expected {
            return Ok(());
        }
        let name = |w: u8| match w {
            VARINT => "Varint",
            FIXED64 => "SixtyFourBit",
            LEN => "LengthDelimited",
            START_GROUP => "StartGroup",
            END_GROUP => "EndGroup",
            _ => "ThirtyTwoBit",
        };
        Err(format!(
            "invalid wire type: {} (expected {})",
            name(wire),
            name(expected)
        ))
    }

    /// A length-delimited field's range.
    fn bytes(&mut self, wire: u8) -> Result<Range<usize>, String> {
        Self::expect(wire, LEN)?;
        let len = self.varint()?;
        let remaining = (self.buf.len() - self.at) as u64;
        if len > remaining {
            return Err("buffer underflow".into());
        }
        let start = self.at;
        self.at += len as usize;
        Ok(start..self.at)
    }

    fn text(&mut self, wire: u8) -> Result<Span, String> {
        self.bytes(wire).map(Span::new)
    }

    fn int(&mut self, wire: u8) -> Result<u64, String> {
        Self::expect(wire, VARINT)?;
        self.varint()
    }

    /// A repeated integer field's values, packed or one.
    fn ints(&mut self, wire: u8, out: &mut Vec<i64>) -> Result<(), String> {
        if wire == VARINT {
            out.push(self.varint()? as i64);
            return Ok(());
        }
        let body = self.bytes(wire)?;
        let mut packed = Reader {
            buf: &self.buf[..body.end],
            at: body.start,
        };
        while packed.at < body.end {
            out.push(packed.varint()? as i64);
        }
        Ok(())
    }

    /// Skips a field not read.
    fn skip(&mut self, field: u32, wire: u8) -> Result<(), String> {
        self.skip_nested(field, wire, 0)
    }

    /// Skips a field, `depth` groups deep (bounded, as prost bounds it).
    fn skip_nested(&mut self, field: u32, wire: u8, depth: u32) -> Result<(), String> {
        if depth >= 100 {
            return Err("recursion limit reached".into());
        }
        let n = match wire {
            VARINT => return self.varint().map(drop),
            FIXED64 => 8,
            FIXED32 => 4,
            LEN => return self.bytes(wire).map(drop),
            START_GROUP => loop {
                let (inner, wire) = self.key()?;
                if wire == END_GROUP {
                    if inner != field {
                        return Err("unexpected end group tag".into());
                    }
                    return Ok(());
                }
                self.skip_nested(inner, wire, depth + 1)?;
            },
            _ => return Err("unexpected end group tag".into()),
        };
        if self.buf.len() - self.at < n {
            return Err("buffer underflow".into());
        }
        self.at += n;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hlo::proto::lean::{HloInstructionProto, OpMetadata};
    use prost::Message;

    /// Texts, stack frame, id, operands and called computations.
    type Fields = (Vec<String>, i32, i64, Vec<i64>, Vec<i64>);

    /// What prost decodes from `buf`.
    fn by_prost(buf: &[u8]) -> Result<Fields, String> {
        let p = HloInstructionProto::decode(buf).map_err(|e| e.to_string())?;
        let m = p.metadata.unwrap_or_default();
        Ok((
            vec![p.name, p.opcode, m.op_name, m.scheduling_name],
            m.stack_frame_id,
            p.id,
            p.operand_ids,
            p.called_computation_ids,
        ))
    }

    /// What [`read`] reads from `buf`.
    fn by_us(buf: &[u8]) -> Result<Fields, String> {
        let mut ids = vec![99];
        let l = read(buf, &mut ids, &mut Scratch::default())?;
        let text = |s: Span| String::from_utf8(buf[s.range()].to_vec()).unwrap();
        Ok((
            vec![
                text(l.name),
                text(l.opcode),
                text(l.op_name),
                text(l.scheduling_name),
            ],
            l.stack_frame_id,
            l.id,
            ids[l.operands.range()].to_vec(),
            ids[l.called.range()].to_vec(),
        ))
    }

    fn sample() -> Vec<u8> {
        HloInstructionProto {
            name: "fusion.12".into(),
            opcode: "fusion".into(),
            metadata: Some(OpMetadata {
                op_name: "jit(f)/dot_general".into(),
                stack_frame_id: -3,
                scheduling_name: "fusion.12.s".into(),
            }),
            id: -(1 << 40),
            operand_ids: vec![1, -1, 1 << 62],
            called_computation_ids: vec![7],
        }
        .encode_to_vec()
    }

    #[test]
    fn fields_are_read_as_prost_reads_them() {
        let buf = sample();
        assert_eq!(by_us(&buf), by_prost(&buf));
        assert_eq!(by_us(&[]), by_prost(&[]));
        // Unknown fields of every wire type, a field given twice (the last wins), the
        // metadata given twice (merged), ids unpacked and packed, interleaved.
        let mut extra = Vec::new();
        extra.extend_from_slice(&[0x08 | (3 << 3), 0x96, 0x01]); // field 3 varint
        extra.extend_from_slice(&[(4 << 3) | 1, 1, 2, 3, 4, 5, 6, 7, 8]); // field 4 fixed64
        extra.extend_from_slice(&[(5 << 3) | 5, 1, 2, 3, 4]); // field 5 fixed32
        extra.extend_from_slice(&[(6 << 3) | 3, (1 << 3), 5, (6 << 3) | 4]); // group 6
        extra.extend_from_slice(&[(1 << 3) | 2, 1, b'z']); // name again
        extra.extend_from_slice(&[(7 << 3) | 2, 2, (15 << 3), 9]); // metadata: frame 9
        extra.extend_from_slice(&[0xa0, 0x02, 5]); // operand_ids (36) unpacked: 5
        extra.extend_from_slice(&[0xb0, 0x02, 6]); // called (38) unpacked: 6
        extra.extend_from_slice(&[0xa2, 0x02, 2, 0x7f, 0x00]); // operand_ids packed
        let buf = [sample(), extra].concat();
        assert_eq!(by_us(&buf), by_prost(&buf));
        let (texts, frame, ..) = by_us(&buf).unwrap();
        assert_eq!(
            (texts[0].as_str(), texts[2].as_str(), frame),
            ("z", "jit(f)/dot_general", 9)
        );
    }

    #[test]
    fn damaged_encodings_fail_where_prost_fails() {
        let buf = sample();
        // Every cut, and every byte changed to each of a few values: an error exactly
        // where prost has one, and the same fields where it has none.
        for cut in 0..buf.len() {
            let b = &buf[..cut];
            assert_eq!(by_us(b).is_err(), by_prost(b).is_err(), "cut at {cut}");
            if let Ok(ours) = by_us(b) {
                assert_eq!(Ok(ours), by_prost(b));
            }
        }
        for at in 0..buf.len() {
            for v in [0x00, 0x01, 0x02, 0x07, 0x0a, 0x7f, 0x80, 0xff, 0xfe] {
                let mut b = buf.clone();
                b[at] = v;
                let (ours, theirs) = (by_us(&b), by_prost(&b));
                assert_eq!(
                    ours.is_err(),
                    theirs.is_err(),
                    "{at} = {v:#x}: {ours:?} {theirs:?}"
                );
                if ours.is_ok() {
                    assert_eq!(ours, theirs);
                }
            }
        }
    }

    #[test]
    fn groups_nested_past_the_limit_are_refused() {
        let deep = [vec![(6 << 3) | 3; 200], vec![(6 << 3) | 4; 200]].concat();
        assert_eq!(by_us(&deep).is_err(), by_prost(&deep).is_err());
        let shallow = [vec![(6 << 3) | 3; 20], vec![(6 << 3) | 4; 20]].concat();
        assert_eq!(by_us(&shallow), by_prost(&shallow));
    }

    #[test]
    fn text_that_is_not_utf8_is_refused_naming_the_field() {
        let mut buf = sample();
        let at = buf.windows(3).position(|w| w == b"jit").unwrap();
        buf[at] = 0xff;
        assert_eq!(
            by_us(&buf).unwrap_err(),
            "OpMetadata.op_name: invalid string value: data is not UTF-8 encoded"
        );
    }
}
