//! Text-aware mutations for the CSV and JSON Lines inputs: whole lines dropped,
//! duplicated or swapped; CSV columns swapped, duplicated, dropped or renamed; fields
//! set to huge, negative, empty or malformed numbers and quote characters; JSON values
//! replaced by other types, keys dropped, renamed or given twice; dictionary tokens.

use crate::rng::Rng;
use serde_json::Value;

/// Numbers (and near-numbers) as text.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "2",
    "127",
    "255",
    "65535",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "-9223372036854775807",
    "9223372036854775806",
    "4611686018427387904",
    "-4611686018427387904",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999",
    "1e308",
    "1e309",
    "-1e308",
    "4.9e-324",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1.5",
    "0.5",
    "-0.5",
    "1e3",
    "1.0",
    "3.0000000000000004",
    "0x10",
    "+5",
    " 5",
    "5 ",
    "",
    "00012",
    "1_000",
    "--1",
    "1-",
    ".",
];

/// Tokens that mean something to the readers.
pub const TOKENS: &[&str] = &[
    "TSL:",
    "TSL:XlaCompile:#module=jit_f,program_id=3#",
    "TSL:XlaCompileBackend:#module=jit_f,program_id=3#",
    "XlaCompileBackend:#module=",
    ",program_id=",
    "program_id=",
    "#",
    ":#",
    "#module=",
    "TSL:XlaModule:#hlo_module=jit_step,program_id=7#",
    "XlaModule:#hlo_module=",
    "TSL:Thunk:#hlo_op=",
    "Thunk:#name=cmd,hlo_op=command_buffer#",
    "XlaLauncher:#global=0,local=0,process=0,slice=0#",
    "XlaLauncher:#global=4294967296,local=0,process=0,partition=0#",
    "TSL:XlaAutotunerCompilation",
    "TSL:XlaAutotunerMeasurement",
    "TSL:XlaPass:#name=x,module=jit_f,program_id=3#",
    "TSL:XlaPassPipeline:#name=",
    "NCCL:ncclAllReduce",
    "all-reduce-start.1",
    "all-gather-start",
    "fusion.1",
    "unknown",
    "null",
    "true",
    "false",
    "\"",
    "\"\"",
    ",",
    ",,",
    "\n",
    "\r\n",
    "\r",
    "{",
    "}",
    "[",
    "]",
    ":",
    "\\",
    "\\u0000",
    "\\ud800",
    "\\\"",
    "\0",
    "\u{feff}",
    "\u{1F600}",
    "é",
    "profile,",
    "Start (ns)",
    ":1:2:3",
    "::",
    ";",
    "--",
    "\"njx_partial\":\"modules\",\"version\":3,\"data\":{}",
    "{\"njx_partial\":\"collectives\",\"version\":3,\"data\":null}",
    "{\"njx_partial\":\"gpu-time\",\"version\":3,\"data\":{}}",
];

/// Column names of the tables and records.
pub const HEADERS: &[&str] = &[
    "Start (ns)",
    "End (ns)",
    "Duration (ns)",
    "DurChild (ns)",
    "DurNonChild (ns)",
    "Name",
    "PID",
    "TID",
    "Lvl",
    "NumChild",
    "RangeId",
    "ParentId",
    "RangeStack",
    "NameTree",
    "profile",
    "pid",
    "tid",
    "id",
    "parent",
    "depth",
    "start_ns",
    "end_ns",
    "dur_ns",
    "child_ns",
    "self_ns",
    "children",
    "name",
    "program",
    "program_id",
    "execution",
    "device",
    "thunks",
    "warmup",
    "module",
    "thunk_execution",
    "hidden_ns",
    "comm",
    "collective",
    "group_size",
    "message_bytes",
    "cpu_start_ns",
    "cpu_dur_ns",
    "gpu_ops",
    "stream",
    "njx_partial",
    "version",
    "data",
];

/// Applies 1 to `rounds` stacked text mutations.
pub fn mutate(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]], rounds: usize) {
    // Held to MAX_LEN after every round (see bytes::havoc).
    for _ in 0..rng.small(rounds) {
        one(rng, data, others);
        data.truncate(crate::bytes::MAX_LEN);
    }
}

fn lines_of(data: &[u8]) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = data.split(|&b| b == b'\n').map(<[u8]>::to_vec).collect();
    if lines.last().is_some_and(Vec::is_empty) {
        lines.pop();
    }
    lines
}

fn join(lines: &[Vec<u8>], crlf: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for l in lines {
        out.extend_from_slice(l);
        if crlf {
            out.push(b'\r');
        }
        out.push(b'\n');
    }
    out
}

/// One text mutation.
pub fn one(rng: &mut Rng, data: &mut Vec<u8>, others: &[&[u8]]) {
    let json = data.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    let mut lines = lines_of(data);
    if lines.is_empty() {
        *data = rng.pick(TOKENS).as_bytes().to_vec();
        return;
    }
    let n = lines.len();
    match rng.below(if json { 20 } else { 17 }) {
        0 => {
            lines.remove(rng.below(n));
        }
        1 => {
            let i = rng.below(n);
            let l = lines[i].clone();
            let times = if rng.chance(0.03) {
                rng.range(100, 5000)
            } else {
                1
            };
            // A long line repeated thousands of times would make gigabytes in one round.
            let times = times.min((crate::bytes::MAX_LEN / (l.len() + 1)).max(1));
            let at = rng.below(n + 1);
            lines.splice(at..at, std::iter::repeat_n(l, times));
        }
        2 => {
            let (a, b) = (rng.below(n), rng.below(n));
            lines.swap(a, b);
        }
        3 => {
            // a line of another input
            if let Some(other) = others.get(rng.below(others.len().max(1))) {
                let ol = lines_of(other);
                if !ol.is_empty() {
                    let l = ol[rng.below(ol.len())].clone();
                    lines.insert(rng.below(n + 1), l);
                }
            }
        }
        4 => {
            // cut a line short
            let i = rng.below(n);
            let at = rng.below(lines[i].len() + 1);
            lines[i].truncate(at);
        }
        5 => {
            // a number replaced by an interesting one
            let i = rng.below(n);
            replace_number(rng, &mut lines[i]);
        }
        6 => {
            // a dictionary token inserted
            let i = rng.below(n);
            let at = rng.below(lines[i].len() + 1);
            let t = rng.pick(TOKENS).as_bytes().to_vec();
            lines[i].splice(at..at, t);
        }
        7 => {
            // CSV: one field set to something odd
            let i = rng.below(n);
            let mut f = fields(&lines[i]);
            if !f.is_empty() {
                let k = rng.below(f.len());
                f[k] = odd_field(rng);
                lines[i] = unfields(&f);
            }
        }
        8 => {
            // CSV: two columns swapped on every line (header too, or not)
            let header_too = rng.chance(0.5);
            let (a, b) = (rng.below(16), rng.below(16));
            for (li, l) in lines.iter_mut().enumerate() {
                if li == 0 && !header_too {
                    continue;
                }
                let mut f = fields(l);
                if a < f.len() && b < f.len() {
                    f.swap(a, b);
                    *l = unfields(&f);
                }
            }
        }
        9 => {
            // CSV: a column dropped or duplicated on every line
            let dup = rng.chance(0.5);
            let c = rng.below(16);
            let skip_header = rng.chance(0.2);
            for (li, l) in lines.iter_mut().enumerate() {
                if li == 0 && skip_header {
                    continue;
                }
                let mut f = fields(l);
                if c < f.len() {
                    if dup {
                        let v = f[c].clone();
                        f.insert(c, v);
                    } else {
                        f.remove(c);
                    }
                    *l = unfields(&f);
                }
            }
        }
        10 => {
            // CSV: a header renamed
            let mut f = fields(&lines[0]);
            if !f.is_empty() {
                let k = rng.below(f.len());
                f[k] = rng.pick(HEADERS).as_bytes().to_vec();
                lines[0] = unfields(&f);
            }
        }
        11 => {
            // a field gains or loses a neighbour
            let i = rng.below(n);
            let mut f = fields(&lines[i]);
            if rng.chance(0.5) || f.is_empty() {
                f.push(odd_field(rng));
            } else {
                f.pop();
            }
            lines[i] = unfields(&f);
        }
        12 => {
            // a quote character somewhere in a line
            let i = rng.below(n);
            let at = rng.below(lines[i].len() + 1);
            let choices: [&[u8]; 5] = [b"\"", b"\"\"", b"\"\n\"", b"'", b"\\\""];
            let q: &[u8] = rng.pick::<&[u8]>(&choices);
            lines[i].splice(at..at, q.iter().copied());
        }
        13 => {
            // a very long field or line
            let i = rng.below(n);
            let at = rng.below(lines[i].len() + 1);
            let k = rng.range(1_000, 100_000);
            let b = *rng.pick(b"a9:#,");
            lines[i].splice(at..at, std::iter::repeat_n(b, k));
        }
        14 => {
            // invalid UTF-8 or a NUL
            let i = rng.below(n);
            let at = rng.below(lines[i].len() + 1);
            let choices: [&[u8]; 4] = [&[0xff], &[0xc3], &[0], &[0xed, 0xa0, 0x80]];
            let b: &[u8] = rng.pick::<&[u8]>(&choices);
            lines[i].splice(at..at, b.iter().copied());
        }
        15 => {
            // line endings, BOM, blank lines
            match rng.below(4) {
                0 => {
                    *data = join(&lines, true);
                    return;
                }
                1 => {
                    let mut out = b"\xef\xbb\xbf".to_vec();
                    out.extend(join(&lines, false));
                    *data = out;
                    return;
                }
                2 => lines.insert(rng.below(n + 1), Vec::new()),
                _ => {
                    let mut out = join(&lines, false);
                    out.pop();
                    *data = out;
                    return;
                }
            }
        }
        16 => {
            // rows sorted differently
            if n > 2 {
                let body = &mut lines[1..];
                match rng.below(3) {
                    0 => body.reverse(),
                    1 => body.rotate_left(1),
                    _ => {
                        for k in (1..body.len()).rev() {
                            let j = rng.below(k + 1);
                            body.swap(k, j);
                        }
                    }
                }
            }
        }
        _ => {
            // JSON: a value of a record changed
            let i = rng.below(n);
            if let Ok(Value::Object(mut map)) = serde_json::from_slice::<Value>(&lines[i]) {
                json_mutate(rng, &mut map);
                let text = serde_json::to_vec(&Value::Object(map)).unwrap_or_default();
                lines[i] = if rng.chance(0.1) {
                    duplicate_key(rng, &text)
                } else {
                    text
                };
            } else {
                replace_number(rng, &mut lines[i]);
            }
        }
    }
    *data = join(&lines, false);
}

/// A field value out of the ordinary.
fn odd_field(rng: &mut Rng) -> Vec<u8> {
    match rng.below(5) {
        0 | 1 => rng.pick(NUMBERS).as_bytes().to_vec(),
        2 => rng.pick(TOKENS).as_bytes().to_vec(),
        3 => {
            let t = rng.pick(TOKENS);
            format!("\"{}\"", t.replace('"', "\"\"")).into_bytes()
        }
        _ => Vec::new(),
    }
}

/// Splits a CSV line into raw fields (quotes kept), respecting double quotes.
pub fn fields(line: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    let mut quoted = false;
    for &b in line {
        match b {
            b'"' => {
                quoted = !quoted;
                cur.push(b);
            }
            b',' if !quoted => out.push(std::mem::take(&mut cur)),
            _ => cur.push(b),
        }
    }
    out.push(cur);
    out
}

fn unfields(f: &[Vec<u8>]) -> Vec<u8> {
    f.join(&b","[..])
}

/// Replaces one run of digits (with its sign) by an interesting number.
fn replace_number(rng: &mut Rng, line: &mut Vec<u8>) {
    let runs: Vec<(usize, usize)> = {
        let mut v = Vec::new();
        let mut i = 0;
        while i < line.len() {
            if line[i].is_ascii_digit() {
                let mut a = i;
                if a > 0 && line[a - 1] == b'-' {
                    a -= 1;
                }
                let mut b = i;
                while b < line.len() && (line[b].is_ascii_digit() || line[b] == b'.') {
                    b += 1;
                }
                v.push((a, b));
                i = b;
            } else {
                i += 1;
            }
        }
        v
    };
    if runs.is_empty() {
        let at = rng.below(line.len() + 1);
        line.splice(at..at, rng.pick(NUMBERS).bytes());
        return;
    }
    let (a, b) = runs[rng.below(runs.len())];
    let num = if rng.chance(0.2) {
        // near the old value
        let old: i128 = std::str::from_utf8(&line[a..b])
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let d = i128::from(*rng.pick(&[1i64, -1, 2, -2, 1000, -1000, 1 << 32]));
        (old + d).to_string()
    } else {
        rng.pick(NUMBERS).to_string()
    };
    line.splice(a..b, num.into_bytes());
}

/// JSON values out of the ordinary.
fn odd_json(rng: &mut Rng) -> Value {
    use serde_json::json;
    match rng.below(22) {
        0 => Value::Null,
        1 => json!(true),
        2 => json!(0),
        3 => json!(-1),
        4 => json!(i64::MIN),
        5 => json!(i64::MAX),
        6 => json!(u64::MAX),
        7 => json!(1e300),
        8 => json!(-1e300),
        9 => json!(1.5),
        10 => json!(""),
        11 => json!("x"),
        12 => json!("-1"),
        13 => json!([]),
        14 => json!({}),
        15 => json!([1, 2]),
        16 => json!({"a": 1}),
        17 => json!("a".repeat(10_000)),
        18 => json!(4_294_967_296u64),
        19 => json!(2_147_483_648u64),
        20 => json!(rng.pick(TOKENS)),
        _ => json!(-0.0),
    }
}

fn json_mutate(rng: &mut Rng, map: &mut serde_json::Map<String, Value>) {
    let keys: Vec<String> = map.keys().cloned().collect();
    if keys.is_empty() {
        map.insert(rng.pick(HEADERS).to_string(), odd_json(rng));
        return;
    }
    let k = keys[rng.below(keys.len())].clone();
    match rng.below(8) {
        0..=3 => {
            map.insert(k, odd_json(rng));
        }
        4 => {
            map.remove(&k);
        }
        5 => {
            if let Some(v) = map.remove(&k) {
                map.insert(rng.pick(HEADERS).to_string(), v);
            }
        }
        6 => {
            map.insert(rng.pick(HEADERS).to_string(), odd_json(rng));
        }
        _ => {
            // a number nudged
            if let Some(v) = map.get_mut(&k) {
                if let Some(x) = v.as_i64() {
                    let d = *rng.pick(&[1i64, -1, 1 << 31, 1 << 32, i64::MAX / 2]);
                    *v = Value::from(x.wrapping_add(d));
                } else if let Some(x) = v.as_f64() {
                    *v = serde_json::Number::from_f64(-x).map_or(Value::Null, Value::Number);
                }
            }
        }
    }
}

/// The same key written twice in a JSON object's text.
fn duplicate_key(rng: &mut Rng, text: &[u8]) -> Vec<u8> {
    let key = rng.pick(HEADERS);
    let value = odd_json(rng).to_string();
    let mut out = format!("{{\"{key}\":{value},").into_bytes();
    out.extend_from_slice(text.get(1..).unwrap_or_default());
    out
}
