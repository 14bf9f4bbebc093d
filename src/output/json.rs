//! JSON lines written without `serde_json`'s general serializer, byte for byte as it
//! writes them (compact form).
//!
//! `serde_json` escapes every string a byte at a time, field names included: for
//! `njx-export --table payloads` that was 29 % of the time, and its per-field calls most
//! of the rest of the writing (docs/performance.md). Here a string is checked for the
//! bytes JSON escapes (`"`, `\` and those below 0x20) a block at a time and copied whole
//! when it has none — the usual case; one that has some is written by `serde_json`
//! itself, as is every number that is not an integer (its float formatting). Anything
//! this serializer does not take (a map keyed by something other than text or integers,
//! `serde_json`'s raw values) makes [`write_line`] fail, and the record is then written
//! by `serde_json` whole, so what is written never depends on which writer wrote it.

use serde::ser::{self, Serialize};
use std::fmt;

/// Appends `record` as one line of compact JSON (no newline) to `out`, as
/// `serde_json::to_writer` writes it. On any error `out` is left as it was.
pub fn write_line<T: Serialize + ?Sized>(out: &mut Vec<u8>, record: &T) -> serde_json::Result<()> {
    let start = out.len();
    if record.serialize(Writer { out }).is_ok() {
        return Ok(());
    }
    out.truncate(start);
    serde_json::to_writer(&mut *out, record)
}

/// Whether `s` has no byte that JSON escapes, checked 8 bytes at a time: the words
/// tests of "Bit Twiddling Hacks" (S. E. Anderson, "Determine if a word has a byte less
/// than n" and "… equal to n"), exact as tests of whether any byte is.
fn plain(s: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let bad = |w: u64| {
        let below_space = w.wrapping_sub(ONES * 0x20) & !w;
        let quote =
            (w ^ (ONES * u64::from(b'"'))).wrapping_sub(ONES) & !(w ^ (ONES * u64::from(b'"')));
        let backslash =
            (w ^ (ONES * u64::from(b'\\'))).wrapping_sub(ONES) & !(w ^ (ONES * u64::from(b'\\')));
        (below_space | quote | backslash) & HIGH != 0
    };
    let word = |w: &[u8]| u64::from_le_bytes(w.try_into().unwrap_or_default());
    if s.len() < 8 {
        // Built in a register (a copy to memory read back as a word stalls the load).
        let mut w = ONES * u64::from(b'a');
        for (i, &b) in s.iter().enumerate() {
            w = (w & !(0xff << (8 * i))) | (u64::from(b) << (8 * i));
        }
        return !bad(w);
    }
    let mut words = s.chunks_exact(8);
    if words.any(|w| bad(word(w))) {
        return false;
    }
    // The last word overlaps the words before it.
    words.remainder().is_empty() || !bad(word(&s[s.len() - 8..]))
}

/// Appends `s` as a JSON string.
fn string(out: &mut Vec<u8>, s: &str) {
    if plain(s.as_bytes()) {
        out.reserve(s.len() + 2);
        out.push(b'"');
        out.extend_from_slice(s.as_bytes());
        out.push(b'"');
    } else {
        // Writing a str to a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *out, s);
    }
}

/// Not taken here: the record is written by `serde_json` instead.
#[derive(Debug)]
pub struct Unsupported;

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<M: fmt::Display>(_: M) -> Self {
        Unsupported
    }
}

type Done = Result<(), Unsupported>;

struct Writer<'a> {
    out: &'a mut Vec<u8>,
}

macro_rules! integer {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Done {
            self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
            Ok(())
        }
    )*};
}

macro_rules! float {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Done {
            serde_json::to_writer(&mut *self.out, &v).map_err(|_| Unsupported)
        }
    )*};
}

impl<'a> ser::Serializer for Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Seq<'a>;
    type SerializeTuple = Seq<'a>;
    type SerializeTupleStruct = Seq<'a>;
    type SerializeTupleVariant = Seq<'a>;
    type SerializeMap = Map<'a>;
    type SerializeStruct = Map<'a>;
    type SerializeStructVariant = Map<'a>;

    integer!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128);
    float!(serialize_f32: f32, serialize_f64: f64);

    fn serialize_bool(self, v: bool) -> Done {
        self.out
            .extend_from_slice(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn serialize_char(self, v: char) -> Done {
        string(self.out, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Done {
        string(self.out, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Done {
        let mut seq = ser::Serializer::serialize_seq(self, Some(v.len()))?;
        for b in v {
            ser::SerializeSeq::serialize_element(&mut seq, b)?;
        }
        ser::SerializeSeq::end(seq)
    }

    fn serialize_none(self) -> Done {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Done {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Done {
        self.out.extend_from_slice(b"null");
        Ok(())
    }

    fn serialize_unit_struct(self, _: &'static str) -> Done {
        self.serialize_unit()
    }

    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Done {
        if name.starts_with("$serde_json") {
            return Err(Unsupported);
        }
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Done {
        self.out.push(b'{');
        string(self.out, variant);
        self.out.push(b':');
        value.serialize(Writer { out: self.out })?;
        self.out.push(b'}');
        Ok(())
    }

    fn serialize_seq(self, _: Option<usize>) -> Result<Seq<'a>, Unsupported> {
        self.out.push(b'[');
        Ok(Seq {
            out: self.out,
            first: true,
            variant: false,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Seq<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Seq<'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Seq<'a>, Unsupported> {
        self.out.push(b'{');
        string(self.out, variant);
        self.out.extend_from_slice(b":[");
        Ok(Seq {
            out: self.out,
            first: true,
            variant: true,
        })
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Map<'a>, Unsupported> {
        self.out.push(b'{');
        Ok(Map {
            out: self.out,
            first: true,
            variant: false,
        })
    }

    fn serialize_struct(self, name: &'static str, _: usize) -> Result<Map<'a>, Unsupported> {
        // serde_json's raw values (a struct of that name) are written by serde_json.
        if name.starts_with("$serde_json") {
            return Err(Unsupported);
        }
        self.serialize_map(None)
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Map<'a>, Unsupported> {
        self.out.push(b'{');
        string(self.out, variant);
        self.out.extend_from_slice(b":{");
        Ok(Map {
            out: self.out,
            first: true,
            variant: true,
        })
    }
}

/// An array being written (a sequence, tuple or tuple variant).
struct Seq<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Inside `{"Variant":[…]}`.
    variant: bool,
}

impl Seq<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
        value.serialize(Writer { out: self.out })
    }

    fn close(self) -> Done {
        self.out.push(b']');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

/// The four kinds of array, each by [`Seq`]'s own methods.
macro_rules! array {
    ($($kind:ident: $method:ident),*) => {$(
        impl ser::$kind for Seq<'_> {
            type Ok = ();
            type Error = Unsupported;
            fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
                self.element(value)
            }
            fn end(self) -> Done {
                self.close()
            }
        }
    )*};
}

array!(SerializeSeq: serialize_element, SerializeTuple: serialize_element,
    SerializeTupleStruct: serialize_field, SerializeTupleVariant: serialize_field);

/// An object being written (a map, struct or struct variant).
struct Map<'a> {
    out: &'a mut Vec<u8>,
    first: bool,
    /// Inside `{"Variant":{…}}`.
    variant: bool,
}

impl Map<'_> {
    fn comma(&mut self) {
        if !self.first {
            self.out.push(b',');
        }
        self.first = false;
    }

    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Done {
        self.comma();
        string(self.out, key);
        self.out.push(b':');
        value.serialize(Writer { out: self.out })
    }

    fn close(self) -> Done {
        self.out.push(b'}');
        if self.variant {
            self.out.push(b'}');
        }
        Ok(())
    }
}

impl ser::SerializeMap for Map<'_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Done {
        self.comma();
        key.serialize(Key { out: self.out })
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Done {
        self.out.push(b':');
        value.serialize(Writer { out: self.out })
    }
    fn end(self) -> Done {
        self.close()
    }
}

/// Structs and struct variants, by [`Map`]'s own methods.
macro_rules! object {
    ($($kind:ident),*) => {$(
        impl ser::$kind for Map<'_> {
            type Ok = ();
            type Error = Unsupported;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Done {
                self.field(key, value)
            }
            fn end(self) -> Done {
                self.close()
            }
        }
    )*};
}

object!(SerializeStruct, SerializeStructVariant);

/// A map's key: text as it is, an integer as its digits in quotes (as `serde_json`);
/// any other key is left to `serde_json`.
struct Key<'a> {
    out: &'a mut Vec<u8>,
}

macro_rules! integer_key {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, v: $t) -> Done {
            self.out.push(b'"');
            self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
            self.out.push(b'"');
            Ok(())
        }
    )*};
}

macro_rules! unsupported {
    ($($f:ident: $t:ty),*) => {$(
        fn $f(self, _: $t) -> Done {
            Err(Unsupported)
        }
    )*};
}

impl ser::Serializer for Key<'_> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = ser::Impossible<(), Unsupported>;
    type SerializeTuple = ser::Impossible<(), Unsupported>;
    type SerializeTupleStruct = ser::Impossible<(), Unsupported>;
    type SerializeTupleVariant = ser::Impossible<(), Unsupported>;
    type SerializeMap = ser::Impossible<(), Unsupported>;
    type SerializeStruct = ser::Impossible<(), Unsupported>;
    type SerializeStructVariant = ser::Impossible<(), Unsupported>;

    integer_key!(serialize_i8: i8, serialize_i16: i16, serialize_i32: i32, serialize_i64: i64,
        serialize_i128: i128, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_u128: u128);
    unsupported!(serialize_bool: bool, serialize_f32: f32, serialize_f64: f64,
        serialize_char: char, serialize_bytes: &[u8]);

    fn serialize_str(self, v: &str) -> Done {
        string(self.out, v);
        Ok(())
    }

    fn serialize_none(self) -> Done {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Done {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Done {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Done {
        Err(Unsupported)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Done {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, _: &T) -> Done {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Done {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    enum E {
        Unit,
        New(i32),
        Tuple(u8, String),
        Struct { a: f64, b: Option<bool> },
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum U {
        N(u64),
        F(f64),
        S(String),
    }

    #[derive(Serialize)]
    struct Record {
        text: String,
        #[serde(rename = "type")]
        kind: &'static str,
        small: i8,
        big: u128,
        neg: i64,
        float: f32,
        double: f64,
        none: Option<u32>,
        flag: bool,
        letter: char,
        bytes: serde_bytes_like::Bytes,
        list: Vec<E>,
        pair: (i16, &'static str),
        by_text: BTreeMap<String, U>,
        by_number: BTreeMap<i64, ()>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<u8>,
    }

    mod serde_bytes_like {
        /// Serialized as bytes (an array of numbers in JSON).
        pub struct Bytes(pub Vec<u8>);
        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    fn record(text: &str, double: f64) -> Record {
        Record {
            text: text.to_string(),
            kind: "int64",
            small: -128,
            big: u128::MAX,
            neg: i64::MIN,
            float: 0.1,
            double,
            none: None,
            flag: true,
            letter: '"',
            bytes: serde_bytes_like::Bytes(vec![0, 255]),
            list: vec![
                E::Unit,
                E::New(-1),
                E::Tuple(7, "x\ty".into()),
                E::Struct {
                    a: 1.0,
                    b: Some(false),
                },
            ],
            pair: (-3, "é"),
            by_text: [
                ("n".to_string(), U::N(5)),
                ("f\n".to_string(), U::F(f64::NAN)),
                ("s".to_string(), U::S("\u{1}\u{1f}\u{7f}\\".into())),
            ]
            .into(),
            by_number: [(-5, ()), (7, ())].into(),
            skipped: None,
        }
    }

    #[test]
    fn lines_are_serde_json_s_byte_for_byte() {
        let texts = [
            "",
            "plain ascii",
            "a \"quoted\" word",
            "back\\slash",
            "ctrl \u{0} \u{8} \u{c} \n \r \t \u{1b}",
            "ünïcödé → 漢字 🙂",
            "sixteen bytes ok",
            "seventeen bytes \"",
            "the clean block of sixteen then \u{1f} after it",
        ];
        let doubles = [
            0.0,
            -0.0,
            1.0,
            1e20,
            1.5e-7,
            f64::MAX,
            f64::INFINITY,
            f64::NAN,
            123456.789,
        ];
        for text in texts {
            for double in doubles {
                let r = record(text, double);
                let mut ours = b"prefix".to_vec();
                write_line(&mut ours, &r).unwrap();
                let theirs = serde_json::to_vec(&r).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&ours[6..]),
                    String::from_utf8_lossy(&theirs)
                );
                // Taken here, not left to serde_json.
                let mut direct = Vec::new();
                r.serialize(Writer { out: &mut direct }).unwrap();
                assert_eq!(direct, theirs);
            }
        }
    }

    #[test]
    fn what_is_not_taken_is_written_by_serde_json() {
        // A map keyed by floats: serde_json refuses it, and so does write_line.
        let odd: BTreeMap<bool, u8> = [(true, 1)].into();
        let mut out = b"kept".to_vec();
        let ours = write_line(&mut out, &odd).map_err(|e| e.to_string());
        let theirs = serde_json::to_vec(&odd).map_err(|e| e.to_string());
        match (ours, theirs) {
            (Ok(()), Ok(t)) => assert_eq!(&out[4..], &t[..]),
            (Err(a), Err(b)) => {
                assert_eq!(a, b);
                assert_eq!(out, b"kept");
            }
            (a, b) => panic!("{a:?} vs {b:?}"),
        }
        // A raw value.
        let raw = serde_json::value::RawValue::from_string("{\"a\": 1 }".into()).unwrap();
        let mut out = Vec::new();
        write_line(&mut out, &raw).unwrap();
        assert_eq!(out, serde_json::to_vec(&raw).unwrap());
    }

    #[test]
    fn plain_strings_are_told_from_those_to_escape() {
        // Every byte at every place of strings of every length of up to five words, in
        // a string of a clean byte or of the bytes around the escaped ones.
        let escaped = |b: u8| b < 0x20 || b == b'"' || b == b'\\';
        for fill in [b'x', 0x21, 0x23, 0x5b, 0x5d, 0x80, 0xff] {
            for n in 0..40 {
                let clean = vec![fill; n];
                assert!(plain(&clean));
                for at in 0..n {
                    for b in 0..=255u8 {
                        let mut s = clean.clone();
                        s[at] = b;
                        assert_eq!(plain(&s), !escaped(b), "{fill} {n} {at} {b}");
                    }
                }
            }
        }
        assert!(plain("\u{7f} é".as_bytes()));
    }
}
