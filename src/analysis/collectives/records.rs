//! `--records`: the thunk executions that count, read with clocks aligned, and one
//! [`CollectiveRecord`] (the thunk's fields and its bandwidths) per communication thunk
//! execution.

use super::Options;
use super::bandwidth::bandwidth;
use crate::derived::executions;
use crate::error::Result;
use crate::output::notes::Notes;
use crate::output::{Format, RecordWriter};
use crate::records::Thunk;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// A communication thunk execution with its bandwidths: the thunk's fields then
/// `algbw_gbps` and `busbw_gbps`, and last the thunk's `autotuning` (added after the
/// bandwidths: the columns written before keep their places).
#[derive(Debug, Clone, Default)]
pub struct CollectiveRecord {
    /// The communication thunk.
    pub thunk: Thunk,
    /// Algorithm bandwidth, GB/s.
    pub algbw_gbps: f64,
    /// Bus bandwidth, GB/s.
    pub busbw_gbps: f64,
}

// Written as one flat record (serde's `flatten` goes through a map, which CSV cannot
// write): the thunk's own fields, found by serialising it, then the two bandwidths.
impl Serialize for CollectiveRecord {
    fn serialize<S: serde::Serializer>(
        &self,
        serializer: S,
    ) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeStruct};
        let serde_json::Value::Object(fields) =
            serde_json::to_value(&self.thunk).map_err(S::Error::custom)?
        else {
            return Err(S::Error::custom("a thunk serialises to an object"));
        };
        let mut st = serializer.serialize_struct("CollectiveRecord", fields.len() + 2)?;
        if fields.len() != THUNK_FIELDS.len() {
            return Err(S::Error::custom("THUNK_FIELDS is out of date"));
        }
        for key in THUNK_FIELDS.iter().filter(|k| **k != LAST) {
            let value = fields
                .get(*key)
                .ok_or_else(|| S::Error::custom(format!("thunk has no field {key}")))?;
            st.serialize_field(key, value)?;
        }
        st.serialize_field("algbw_gbps", &self.algbw_gbps)?;
        st.serialize_field("busbw_gbps", &self.busbw_gbps)?;
        st.serialize_field(LAST, &self.thunk.autotuning)?;
        st.end()
    }
}

/// The thunk field written after the bandwidths.
const LAST: &str = "autotuning";

/// The fields of [`Thunk`], in declaration order (checked by a test).
const THUNK_FIELDS: &[&str] = &[
    "profile",
    "program",
    "program_id",
    "module",
    "execution",
    "device",
    "name",
    "thunk_execution",
    "start_ns",
    "dur_ns",
    "hidden_ns",
    "comm",
    "warmup",
    "collective",
    "group_size",
    "message_bytes",
    "reconstructed",
    "autotuning",
];

/// The thunk executions of `inputs` that count: thunk records, or profiles read through
/// [`executions::load`] with clocks aligned; initialisation left out unless asked for.
/// For `--records`; the report aggregates instead ([`aggregate`](fn@super::aggregate)).
pub fn read(options: &Options, inputs: &[PathBuf], notes: &Notes) -> Result<Vec<Thunk>> {
    let mut thunks =
        executions::read_records(inputs, "thunks", options.program_key, true, notes, |e| {
            e.thunks
        })?;
    if !options.include_warmup {
        thunks.retain(|t| !t.warmup);
    }
    let programs = &options.programs;
    if let Some(note) = programs.check(thunks.iter().map(|t| (&*t.program, &*t.module)))? {
        notes.note(note);
    }
    thunks.retain(|t| programs.keeps(&t.program, &t.module));
    Ok(thunks)
}

/// Writes the collective records of `thunks` (from [`read`]).
pub fn write_records(format: Format, thunks: Vec<Thunk>, out: &mut dyn Write) -> Result<()> {
    let mut w = RecordWriter::new(out, format)?;
    for t in thunks.into_iter().filter(|t| t.comm) {
        let (algbw_gbps, busbw_gbps) = bandwidth(&t).unwrap_or((f64::NAN, f64::NAN));
        w.write(&CollectiveRecord {
            thunk: t,
            algbw_gbps,
            busbw_gbps,
        })?;
    }
    w.finish::<CollectiveRecord>()
}

#[cfg(test)]
mod tests {
    use super::THUNK_FIELDS;

    #[test]
    fn thunk_fields_are_listed_in_declaration_order() {
        let mut w = csv::Writer::from_writer(Vec::new());
        let t: crate::records::Thunk = serde_json::from_str(
            r#"{"profile":"p","program":"f","program_id":1,"module":"m","execution":0,"device":0,
            "name":"n","thunk_execution":0,"start_ns":0,"dur_ns":1,"hidden_ns":0,"comm":false,
            "warmup":false,"collective":null,"group_size":null,"message_bytes":null}"#,
        )
        .unwrap();
        w.serialize(&t).unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text.lines().next().unwrap(), THUNK_FIELDS.join(","));
    }
}
