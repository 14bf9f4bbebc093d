//! An input and what is known of its structure, so that each kind mutates in the way
//! that reaches past its own checks: text by lines and fields, compressed streams by
//! their content (then compressed again), Parquet tables by cells and columns, HLO
//! protos by messages, zip archives by members and headers, SQLite exports through SQL.
//! Any kind also mutates blindly, byte by byte; then its structure is lost ([`Form::Raw`]).

use crate::rng::Rng;
use crate::table::Table;
use crate::zipper::Member;
use njx::hlo::proto::HloProto;
use std::cell::RefCell;
use std::io::Write;
use std::path::PathBuf;

/// What an input is, where its bytes still follow from it.
#[derive(Clone)]
pub enum Form {
    /// Bytes with no known structure.
    Raw,
    /// CSV or JSON Lines.
    Text,
    /// gzip of the inner item.
    Gzip(Box<Item>),
    /// xz of the inner item.
    Xz(Box<Item>),
    /// A Parquet table.
    Table(Box<Table>),
    /// An encoded `HloProto`.
    Proto(Box<HloProto>),
    /// A zip archive of members.
    Zip(Vec<Member>),
    /// An SQLite database.
    Sqlite,
}

/// An input: its bytes and its form.
#[derive(Clone)]
pub struct Item {
    pub bytes: Vec<u8>,
    pub form: Form,
}

thread_local! {
    /// Where SQL mutations work on their copy.
    static SCRATCH: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
}

/// Sets the folder that SQL mutations use for their copies.
pub fn set_scratch(dir: PathBuf) {
    SCRATCH.with(|s| *s.borrow_mut() = Some(dir));
}

pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).expect("gzip to memory");
    enc.finish().expect("gzip to memory")
}

pub fn xz(bytes: &[u8]) -> Vec<u8> {
    let mut enc = xz2::write::XzEncoder::new(Vec::new(), 0);
    enc.write_all(bytes).expect("xz to memory");
    enc.finish().expect("xz to memory")
}

impl Item {
    pub fn raw(bytes: Vec<u8>) -> Item {
        Item {
            bytes,
            form: Form::Raw,
        }
    }

    pub fn text(text: impl Into<Vec<u8>>) -> Item {
        Item {
            bytes: text.into(),
            form: Form::Text,
        }
    }

    pub fn gzip(inner: Item) -> Item {
        Item {
            bytes: gzip(&inner.bytes),
            form: Form::Gzip(Box::new(inner)),
        }
    }

    pub fn xz(inner: Item) -> Item {
        Item {
            bytes: xz(&inner.bytes),
            form: Form::Xz(Box::new(inner)),
        }
    }

    pub fn table(table: Table) -> Item {
        Item {
            bytes: table.encode().expect("seed table encodes"),
            form: Form::Table(Box::new(table)),
        }
    }

    pub fn proto(proto: HloProto) -> Item {
        Item {
            bytes: prost::Message::encode_to_vec(&proto),
            form: Form::Proto(Box::new(proto)),
        }
    }

    pub fn zip(members: Vec<Member>) -> Item {
        Item {
            bytes: crate::zipper::build(&members).expect("seed archive builds"),
            form: Form::Zip(members),
        }
    }

    pub fn sqlite(bytes: Vec<u8>) -> Item {
        Item {
            bytes,
            form: Form::Sqlite,
        }
    }
}

/// A mutated copy of `item`: one to three rounds, each structure-aware where the form is
/// known and blind otherwise. `others` are inputs of the same target to splice from.
pub fn mutate(rng: &mut Rng, item: &Item, others: &[&[u8]], rounds: usize) -> Item {
    let mut cur = item.clone();
    // Held to MAX_LEN after every round (see bytes::havoc).
    for _ in 0..rng.small(rounds) {
        cur = once(rng, cur, others);
        cur.bytes.truncate(crate::bytes::MAX_LEN);
    }
    cur
}

fn blind(rng: &mut Rng, mut bytes: Vec<u8>, others: &[&[u8]]) -> Item {
    crate::bytes::havoc(rng, &mut bytes, others, 4);
    Item::raw(bytes)
}

fn once(rng: &mut Rng, item: Item, others: &[&[u8]]) -> Item {
    match item.form {
        Form::Raw => blind(rng, item.bytes, others),
        Form::Text => {
            let mut bytes = item.bytes;
            if rng.chance(0.8) {
                crate::text::mutate(rng, &mut bytes, others, 4);
            } else {
                crate::bytes::havoc(rng, &mut bytes, others, 3);
            }
            Item::text(bytes)
        }
        Form::Gzip(inner) | Form::Xz(inner) if rng.chance(0.25) => {
            let _ = inner;
            blind(rng, item.bytes, others)
        }
        Form::Gzip(inner) => {
            let inner = mutate(rng, &inner, &[], 2);
            let mut out = Item::gzip(inner);
            if rng.chance(0.1) {
                // a second gzip member after the first
                let more = gzip(rng.pick(crate::text::TOKENS).as_bytes());
                out.bytes.extend(more);
            }
            out
        }
        Form::Xz(inner) => {
            let inner = mutate(rng, &inner, &[], 2);
            let mut out = Item::xz(inner);
            if rng.chance(0.05) {
                out.bytes.extend_from_slice(&[0; 4]);
            }
            out
        }
        Form::Table(mut table) => {
            if rng.chance(0.15) {
                return blind(rng, item.bytes, others);
            }
            table.mutate(rng, 3);
            match table.encode() {
                Some(bytes) => Item {
                    bytes,
                    form: Form::Table(table),
                },
                None => blind(rng, item.bytes, others),
            }
        }
        Form::Proto(mut proto) => {
            if rng.chance(0.3) {
                return blind(rng, item.bytes, others);
            }
            crate::hloproto::mutate(rng, &mut proto, 3);
            Item::proto(*proto)
        }
        Form::Zip(members) => match rng.below(10) {
            0..=5 => {
                let mut changed = members.clone();
                crate::zipper::mutate_members(rng, &mut changed, others);
                match crate::zipper::build(&changed) {
                    Some(bytes) => Item {
                        bytes,
                        form: Form::Zip(changed),
                    },
                    None => Item {
                        bytes: item.bytes,
                        form: Form::Zip(members),
                    },
                }
            }
            6 | 7 => {
                let mut bytes = item.bytes;
                crate::zipper::patch(rng, &mut bytes);
                Item::raw(bytes)
            }
            _ => blind(rng, item.bytes, others),
        },
        Form::Sqlite => {
            if rng.chance(0.1) {
                return blind(rng, item.bytes, others);
            }
            let scratch = SCRATCH.with(|s| s.borrow().clone());
            let mutated = scratch.and_then(|dir| crate::sql::mutate(rng, &item.bytes, &dir, 3));
            match mutated {
                Some(bytes) => Item::sqlite(bytes),
                None => blind(rng, item.bytes, others),
            }
        }
    }
}
