//! `--view buffers`: the rows of the buffers live at a trace's peak, each described by
//! its defining instruction (shape, opcode, op_name, Python source).

use super::assignment::Assignment;
use super::records::BufferRecord;
use super::replay::Replay;
use super::shape::{shape_text, subshape};
use crate::error::{Error, Result};
use crate::hlo::{HloModule, Instruction, proto};
use crate::output::numbers::percent_rounded;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

/// What a live buffer's row takes from its defining instruction's whole proto: its source
/// and its result shape ([`ResultShape`]).
type Defined = (String, ResultShape);

/// An instruction's result shape as the rows need it: an array's text (the one buffer it
/// can define is the whole result), a tuple's shape (its buffers are elements of it).
enum ResultShape {
    None,
    Array(String),
    Tuple(Box<proto::ShapeProto>),
}

/// The rows of the buffers live at the peaks of one module's traces, with what they take
/// from the module found or decoded once for all of them.
pub(super) struct LiveBuffers<'m> {
    hlo: &'m HloModule,
    /// Instruction id → the instruction; `None` where several computations use the id.
    by_id: HashMap<i64, Option<Instruction<'m>>>,
    /// What each defining instruction gives the rows, decoded once per instruction (a
    /// tuple can define thousands of buffers), and the text of large shapes once; by
    /// instruction name, unique in a module (an id need not be, where [`defining`] found the
    /// instruction by its name).
    defined: HashMap<&'m str, Defined>,
    shapes: HashMap<(&'m str, Vec<i64>), String>,
}

impl<'m> LiveBuffers<'m> {
    /// Nothing decoded yet of `hlo`'s instructions.
    pub(super) fn new(hlo: &'m HloModule) -> LiveBuffers<'m> {
        let mut by_id: HashMap<i64, Option<Instruction<'_>>> = HashMap::new();
        for i in hlo.instructions() {
            by_id
                .entry(i.id())
                .and_modify(|e| *e = None)
                .or_insert(Some(i));
        }
        LiveBuffers {
            hlo,
            by_id,
            defined: HashMap::new(),
            shapes: HashMap::new(),
        }
    }

    /// The rows of the buffers live at the peak of trace `t` (`r`; `live_dense`: their
    /// dense indices in `assignment`), in the order of `r.live`.
    pub(super) fn rows(
        &mut self,
        t: usize,
        r: &Replay,
        live_dense: &[u32],
        assignment: &Assignment<'_>,
    ) -> Result<Vec<BufferRecord>> {
        let mut live = Vec::with_capacity(r.live.len());
        let nowhere = proto::logical_buffer_proto::Location::default();
        for (&(id, bytes), &d) in r.live.iter().zip(live_dense) {
            let loc = assignment.buffers[d as usize]
                .defined_at
                .as_ref()
                .unwrap_or(&nowhere);
            live.push(self.row(t, id, bytes, r.peak, loc)?);
        }
        Ok(live)
    }

    /// The row of logical buffer `id`, defined at `loc`, counting `bytes` of the `peak`
    /// of trace `t`.
    fn row(
        &mut self,
        t: usize,
        id: i64,
        bytes: i64,
        peak: i64,
        loc: &proto::logical_buffer_proto::Location,
    ) -> Result<BufferRecord> {
        let hlo = self.hlo;
        let inst = defining(hlo, &self.by_id, id, loc)?;
        let (source, result) = defined_by(&mut self.defined, inst)?;
        let shape = shape_at(&mut self.shapes, inst.name(), result, &loc.shape_index);
        let index: Vec<String> = loc.shape_index.iter().map(i64::to_string).collect();
        Ok(BufferRecord {
            program: hlo.name().to_string(),
            program_id: hlo.id(),
            trace: t as i64,
            buffer: id,
            bytes,
            percent: percent_rounded(bytes, peak),
            shape: present(shape),
            shape_index: format!("{{{}}}", index.join(",")),
            instruction: inst.name().to_string(),
            opcode: inst.opcode().to_string(),
            op_name: present(inst.op_name().to_string()),
            source: present(source.clone()),
        })
    }
}

/// A text of the dump, null in the records where it is empty (not there).
fn present(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// What `inst` gives the rows of the buffers it defines, decoded at the first of them and
/// kept in `defined`.
fn defined_by<'a, 'm>(
    defined: &'a mut HashMap<&'m str, Defined>,
    inst: Instruction<'m>,
) -> Result<&'a Defined> {
    Ok(match defined.entry(inst.name()) {
        Entry::Occupied(e) => e.into_mut(),
        Entry::Vacant(v) => {
            let mut p = inst.proto()?;
            let source = source_of(&inst, &p)?;
            let result = match p.shape.take() {
                None => ResultShape::None,
                Some(s) if s.tuple_shapes.is_empty() => ResultShape::Array(shape_text(&s)),
                Some(s) => ResultShape::Tuple(Box::new(s)),
            };
            v.insert((source, result))
        }
    })
}

/// The shape of the buffer at `index` of an instruction's result (`result`), "" where the
/// index leads nowhere; the text of a large shape is kept in `shapes` by (instruction
/// `name`, `index`).
fn shape_at<'m>(
    shapes: &mut HashMap<(&'m str, Vec<i64>), String>,
    name: &'m str,
    result: &ResultShape,
    index: &[i64],
) -> String {
    match result {
        ResultShape::None => String::new(),
        // An index into an array leads nowhere.
        ResultShape::Array(text) if index.is_empty() => text.clone(),
        ResultShape::Array(_) => String::new(),
        ResultShape::Tuple(t) => match subshape(t, index) {
            None => String::new(),
            Some(s) if s.tuple_shapes.is_empty() && s.dimensions.len() <= 16 => shape_text(s),
            // A tuple, or an array of many dimensions, is written once however many
            // buffers it is the shape of (its text grows with its elements).
            Some(s) => shapes
                .entry((name, index.to_vec()))
                .or_insert_with(|| shape_text(s))
                .clone(),
        },
    }
}

/// The instruction defining logical buffer `id` at `loc`: by its name where the location
/// gives one (then its id must agree), else by its id, which must name one instruction of
/// the module (ids repeated across computations leave it ambiguous: refused).
fn defining<'m>(
    hlo: &'m HloModule,
    by_id: &HashMap<i64, Option<Instruction<'m>>>,
    id: i64,
    loc: &proto::logical_buffer_proto::Location,
) -> Result<Instruction<'m>> {
    let place = hlo.place();
    let iid = loc.instruction_id;
    if !loc.instruction_name.is_empty() {
        return match hlo.instruction(&loc.instruction_name) {
            Some(inst) if inst.id() == iid => Ok(inst),
            Some(inst) => Err(Error::data(
                place,
                format!(
                    "logical buffer {id}: defined by instruction {iid} `{}`, but `{}` is \
                     instruction {}",
                    loc.instruction_name,
                    loc.instruction_name,
                    inst.id()
                ),
            )),
            None => Err(Error::data(
                place,
                format!(
                    "logical buffer {id}: defined by instruction {iid} `{}`, which the \
                     module does not have",
                    loc.instruction_name
                ),
            )),
        };
    }
    match by_id.get(&iid) {
        Some(Some(inst)) => Ok(*inst),
        Some(None) => Err(Error::data(
            place,
            format!(
                "logical buffer {id}: defined by instruction {iid}, an id several \
                 computations of the module give"
            ),
        )),
        None => Err(Error::data(
            place,
            format!(
                "logical buffer {id}: defined by instruction {iid}, which the module does \
                 not have"
            ),
        )),
    }
}

/// The innermost Python frame of an instruction (`file.py:12[f]`), else the metadata's
/// `source_file:source_line`, else "".
fn source_of(inst: &Instruction<'_>, proto: &proto::HloInstructionProto) -> Result<String> {
    if let Some(frame) = inst.stack_frames()?.last() {
        return Ok(frame.to_string());
    }
    Ok(match &proto.metadata {
        Some(m) if !m.source_file.is_empty() => format!("{}:{}", m.source_file, m.source_line),
        _ => String::new(),
    })
}
