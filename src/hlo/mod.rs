//! XLA HLO metadata from the dumps that nsys-jax stores in its archives
//! (`dump/module_NNNN.<name>.<stage>.hlo.pb.xz`, XLA's `HloProto`):
//!
//! - [`Dumps`] finds and reads the after-optimizations dump of a program on demand (per
//!   profile in nsys-jax-combine archives) and maps XLA's per-process program id to the key
//!   that is stable across ranks, as nsys-jax does ([`ProgramKey`]);
//! - [`HloModule`] looks instructions up by name (the thunk names of the profiles);
//! - [`Instruction`] says whether an instruction communicates, which collective it runs,
//!   over how many devices and with how many bytes ([`Collective`]), and which Python
//!   stack created it ([`StackFrame`]).
//!
//! The decoder is generated at build time from `protos/` (the part of XLA's schema that
//! njx reads, with XLA's field numbers) by `protox` and `prost-build`: no `protoc`, no
//! Python. Fields not in `protos/` are skipped, so dumps of any XLA version decode.
//!
//! The rules are nsys-jax's (`nsys_jax/protobuf.py`, `_get_message_size` in
//! `nsys_jax/analysis.py`), with these deliberate differences:
//!
//! - an instruction is looked up in the dump of its record's own profile; nsys-jax loads
//!   the dumps of every profile with the same fingerprint and requires them to agree;
//! - communication is classified per instruction when asked, so one instruction that
//!   cannot be classified is an error about it alone (nsys-jax classifies the whole module
//!   on loading and fails on the first);
//! - message sizes are also given for the synchronous `all-gather`, `all-reduce` and
//!   `collective-permute`, which nsys-jax refuses as not yet validated; `F4E2M1FN` counts
//!   4 bits (nsys-jax fails on it); a mesh sub-axis counts with its own size (nsys-jax
//!   refuses it); explicit groups come from `collective_device_list` or the legacy
//!   `replica_groups`, whichever has them, and the iota or mesh-axes forms only when
//!   neither does (nsys-jax's current code falls through to the mesh-axes form even when
//!   the iota form is set, and fails there);
//! - a dump without `fingerprint_before_lhs` keys its program by the numeric id (nsys-jax
//!   asserts that the fingerprint is there), and module names with dots are matched.
//!
//! ```no_run
//! use njx::hlo::Dumps;
//! use njx::output::progress::Progress;
//! use njx::source::Archive;
//! # fn main() -> njx::Result<()> {
//! let mut archive = Archive::open_dir(std::path::Path::new("rank0"), &Progress::none())?;
//! let mut dumps = Dumps::new(&archive);
//! let key = dumps.program_key(&mut archive, "rank0", Some(40), "pjit__wrapped_step_fn")?;
//! if let Some(module) = dumps.load(&mut archive, "rank0", 40, "pjit__wrapped_step_fn")? {
//!     if let Some(inst) = module.instruction("all-gather-start.3") {
//!         if let Some(c) = inst.collective()? {
//!             println!("{key}: {} over {} devices, {} bytes", c.kind, c.group_size, c.message_bytes);
//!         }
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod communication;
mod dumps;
mod lean;
mod schedule;
pub mod thunk_info;

pub use communication::{Collective, CollectiveKind, byte_size, element_bits};
pub use dumps::{Dumps, ProgramKey, is_after_optimizations_of, parse_dump_name};
pub use schedule::CollectiveOrder;

use crate::error::{Error, Result};
use bytes::Bytes;
use hashbrown::HashMap;
use std::fmt;
use std::hash::BuildHasher;
use std::io::Read;

/// The generated protobuf types (package `xla`), from `protos/`.
#[allow(missing_docs, clippy::all)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/xla.rs"));
    /// The lean schema (`protos/xla/lean/`): what every instruction is decoded to.
    pub mod lean {
        include!(concat!(env!("OUT_DIR"), "/xla.lean.rs"));
    }
}

/// The memory space of host memory in XLA:GPU layouts (`{...:S(5)}`).
pub const HOST_MEMORY_SPACE: i64 = 5;

/// Collective opcodes: an instruction with one of these communicates, and so does an
/// async-start or fusion whose called computations contain one.
const COMM_OPCODES: [&str; 6] = [
    "all-gather",
    "all-reduce",
    "all-to-all",
    "collective-broadcast",
    "collective-permute",
    "reduce-scatter",
];

/// Async forms that launch a collective themselves.
const COMM_START_OPCODES: [&str; 3] = [
    "all-gather-start",
    "all-reduce-start",
    "collective-permute-start",
];

/// Where an instruction is: computation index and instruction index in the proto.
#[derive(Debug, Clone, Copy)]
struct Loc {
    comp: u32,
    inst: u32,
}

/// One computation of a module: its instructions decoded lean
/// ([`proto::lean::HloInstructionProto`]), each with its encoded bytes.
#[derive(Debug)]
pub struct Computation {
    /// Its name (`main`, `fused_computation.12`).
    pub name: String,
    /// Its id.
    pub id: i64,
    instructions: Vec<Inst>,
    /// Instruction id → index. Operands are always in the same computation, which is
    /// how XLA itself resolves them.
    ids: HashMap<i64, u32>,
}

/// An instruction as held: the lean fields ([`lean`]), and the encoded instruction for
/// the rest (its text fields are ranges of it).
#[derive(Debug)]
struct Inst {
    lean: lean::Lean,
    encoded: Bytes,
}

impl Inst {
    /// A text field: checked to be UTF-8 when it was read ([`lean::read`]).
    fn text(&self, span: lean::Span) -> &str {
        std::str::from_utf8(&self.encoded[span.range()]).unwrap_or_default()
    }
}

/// The name of the instruction at `loc`.
fn name_at(computations: &[Computation], loc: Loc) -> &str {
    let inst = &computations[loc.comp as usize].instructions[loc.inst as usize];
    inst.text(inst.lean.name)
}

/// One decoded HLO dump with lookup tables.
///
/// Memory: the encoded dump, and per instruction where its name, opcode and op_name are
/// in it, its stack frame, id, operands and called computations (about 130 bytes each);
/// the instructions' other fields are decoded from the dump when asked for
/// ([`Instruction::proto`]). A 6.5 MB step-function dump of 37,000 instructions held
/// about 57 MB with every field decoded.
#[derive(Debug)]
pub struct HloModule {
    place: String,
    name: String,
    id: i64,
    entry_computation_id: i64,
    stack_frame_index: Option<proto::StackFrameIndexProto>,
    frontend_attributes: Option<proto::FrontendAttributes>,
    buffer_assignment: Bytes,
    computations: Vec<Computation>,
    /// The instructions' operand and called-computation ids, one after another.
    ids: Vec<i64>,
    /// Computation id → index.
    computation_ids: HashMap<i64, usize>,
    /// Every instruction by name (names are unique in a module): a hash table of
    /// locations, hashed by the names they point at (no copy of each name; sorting the
    /// names instead took 4 % of `njx-report`).
    names: hashbrown::HashTable<Loc>,
    /// The hasher of `names`.
    hasher: hashbrown::DefaultHashBuilder,
    /// The schedule: computation id → the ids of its instructions in the order they run
    /// (empty where the dump has none).
    schedule: HashMap<i64, Vec<i64>>,
}

impl HloModule {
    /// Decodes an `HloProto` (uncompressed). `place` names it in messages
    /// (`rank0.zip!dump/module_0040….hlo.pb.xz`).
    pub fn decode(place: impl Into<String>, bytes: &[u8]) -> Result<HloModule> {
        HloModule::from_bytes(place, Bytes::copy_from_slice(bytes))
    }

    /// Decodes an `HloProto` (uncompressed) that the module keeps (no copy).
    pub fn from_bytes(place: impl Into<String>, bytes: Bytes) -> Result<HloModule> {
        let place = place.into();
        let invalid =
            |e: prost::DecodeError| Error::data(&place, format!("not a valid XLA HloProto: {e}"));
        let proto = <proto::lean::HloProto as prost::Message>::decode(bytes).map_err(invalid)?;
        let Some(module) = proto.hlo_module else {
            return Err(Error::data(&place, "HloProto without an hlo_module"));
        };
        let mut computations = Vec::with_capacity(module.computations.len());
        let mut ids = Vec::new();
        let mut scratch = lean::Scratch::default();
        for comp in module.computations {
            let mut instructions = Vec::with_capacity(comp.instructions.len());
            for encoded in comp.instructions {
                let lean = lean::read(&encoded, &mut ids, &mut scratch).map_err(|e| {
                    Error::data(
                        &place,
                        format!("not a valid XLA HloProto: failed to decode Protobuf message: {e}"),
                    )
                })?;
                instructions.push(Inst { lean, encoded });
            }
            computations.push(Computation {
                name: comp.name,
                id: comp.id,
                instructions,
                ids: HashMap::new(),
            });
        }
        HloModule::index(HloModule {
            place,
            name: module.name,
            id: module.id,
            entry_computation_id: module.entry_computation_id,
            stack_frame_index: module.stack_frame_index,
            frontend_attributes: module.frontend_attributes,
            buffer_assignment: proto.buffer_assignment,
            computations,
            ids,
            computation_ids: HashMap::new(),
            names: hashbrown::HashTable::new(),
            hasher: hashbrown::DefaultHashBuilder::default(),
            schedule: module
                .schedule
                .map(|s| {
                    s.sequences
                        .into_iter()
                        .map(|(c, seq)| (c, seq.instruction_ids))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    /// Reads and decodes an `HloProto` from a stream (already decompressed). Protobuf
    /// decoding needs the whole message, so the stream is read into memory (dumps are
    /// megabytes).
    pub fn read(place: impl Into<String>, mut reader: impl Read) -> Result<HloModule> {
        let place = place.into();
        let mut bytes = Vec::new();
        reader
            .read_to_end(&mut bytes)
            .map_err(|e| Error::io(&place, e))?;
        HloModule::from_bytes(place, bytes.into())
    }

    /// Reads and decodes the dump stored as `member` of `archive` (an xz member decoded
    /// whole into a buffer of its size: [`crate::source::Archive::read_member`]).
    pub fn from_member(archive: &mut crate::source::Archive, member: &str) -> Result<HloModule> {
        let place = archive.member_place(member);
        HloModule::from_bytes(place, archive.read_member(member)?.into())
    }

    /// Wraps a decoded `HloProto`. Fails when it has no module, when computation ids or
    /// instruction names repeat (nsys-jax asserts the same), or when the entry or a called
    /// computation id names no computation.
    pub fn new(place: impl Into<String>, proto: proto::HloProto) -> Result<HloModule> {
        HloModule::from_bytes(place, prost::Message::encode_to_vec(&proto).into())
    }

    /// Builds the lookup tables, checking that ids and names are unique and that the
    /// entry and every called computation exist.
    fn index(mut m: HloModule) -> Result<HloModule> {
        for (c, comp) in m.computations.iter_mut().enumerate() {
            if m.computation_ids.insert(comp.id, c).is_some() {
                return Err(Error::data(
                    &m.place,
                    format!("computation id {} appears twice", comp.id),
                ));
            }
            comp.ids.reserve(comp.instructions.len());
            for (i, inst) in comp.instructions.iter().enumerate() {
                if comp.ids.insert(inst.lean.id, i as u32).is_some() {
                    return Err(Error::data(
                        &m.place,
                        format!(
                            "instruction id {} appears twice in computation `{}`",
                            inst.lean.id, comp.name
                        ),
                    ));
                }
            }
        }
        // Ids that name nothing would fail only when something looks them up (or, for the
        // entry, be read as "no entry"): refused here, as XLA does when it loads a module. A
        // module without computations has no entry to name (its id is the proto default).
        if !m.computations.is_empty() && !m.computation_ids.contains_key(&m.entry_computation_id) {
            return Err(Error::data(
                &m.place,
                format!(
                    "the entry computation id {} names no computation",
                    m.entry_computation_id
                ),
            ));
        }
        for inst in m.computations.iter().flat_map(|c| &c.instructions) {
            let calls = &m.ids[inst.lean.called.range()];
            if let Some(id) = calls
                .iter()
                .find(|&&id| !m.computation_ids.contains_key(&id))
            {
                return Err(Error::data(
                    &m.place,
                    format!(
                        "instruction `{}`: calls computation {id}, which does not exist",
                        inst.text(inst.lean.name)
                    ),
                ));
            }
        }
        let total: usize = m.computations.iter().map(|c| c.instructions.len()).sum();
        let mut names = hashbrown::HashTable::with_capacity(total);
        for (c, comp) in m.computations.iter().enumerate() {
            for (i, inst) in comp.instructions.iter().enumerate() {
                let name = inst.text(inst.lean.name);
                let found = names.entry(
                    m.hasher.hash_one(name),
                    |l: &Loc| name_at(&m.computations, *l) == name,
                    |l: &Loc| m.hasher.hash_one(name_at(&m.computations, *l)),
                );
                if let hashbrown::hash_table::Entry::Occupied(_) = found {
                    return Err(Error::data(
                        &m.place,
                        format!("instruction name `{name}` appears twice"),
                    ));
                }
                found.insert(Loc {
                    comp: c as u32,
                    inst: i as u32,
                });
            }
        }
        m.names = names;
        Ok(m)
    }

    /// Name of the dump for messages.
    pub fn place(&self) -> &str {
        &self.place
    }

    /// The buffer assignment, when the dump has one (decoded on each call).
    pub fn buffer_assignment(&self) -> Result<Option<proto::BufferAssignmentProto>> {
        if self.buffer_assignment.is_empty() {
            return Ok(None);
        }
        <proto::BufferAssignmentProto as prost::Message>::decode(self.buffer_assignment.clone())
            .map(Some)
            .map_err(|e| Error::data(&self.place, format!("invalid buffer assignment: {e}")))
    }

    /// The module's name (`pjit__wrapped_step_fn`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// XLA's program id of the module (the `program_id` of the NVTX ranges).
    pub fn id(&self) -> i64 {
        self.id
    }

    /// A module-level frontend attribute.
    pub fn frontend_attribute(&self, key: &str) -> Option<&str> {
        self.frontend_attributes
            .as_ref()
            .and_then(|a| a.map.get(key))
            .map(String::as_str)
    }

    /// The fingerprint nsys-jax uses as the program's key across ranks: the frontend
    /// attribute `fingerprint_before_lhs`, when present and not empty.
    pub fn fingerprint(&self) -> Option<&str> {
        self.frontend_attribute("fingerprint_before_lhs")
            .filter(|f| !f.is_empty())
    }

    /// The computations, in dump order.
    pub fn computations(&self) -> &[Computation] {
        &self.computations
    }

    /// The computation with this id.
    pub fn computation(&self, id: i64) -> Option<&Computation> {
        let c = *self.computation_ids.get(&id)?;
        self.computations.get(c)
    }

    /// The id of the entry computation.
    pub fn entry_id(&self) -> i64 {
        self.entry_computation_id
    }

    /// The entry computation.
    pub fn entry(&self) -> Option<&Computation> {
        self.computation(self.entry_computation_id)
    }

    /// The instruction with this name.
    pub fn instruction(&self, name: &str) -> Option<Instruction<'_>> {
        let loc = *self.names.find(self.hasher.hash_one(name), |l| {
            name_at(&self.computations, *l) == name
        })?;
        Some(Instruction { module: self, loc })
    }

    fn inst(&self, loc: Loc) -> &Inst {
        &self.computations[loc.comp as usize].instructions[loc.inst as usize]
    }

    /// Every instruction, computation by computation, in dump order.
    pub fn instructions(&self) -> impl Iterator<Item = Instruction<'_>> + '_ {
        self.computations
            .iter()
            .enumerate()
            .flat_map(move |(c, comp)| {
                (0..comp.instructions.len()).map(move |i| Instruction {
                    module: self,
                    loc: Loc {
                        comp: c as u32,
                        inst: i as u32,
                    },
                })
            })
    }

    /// The instructions of the computation with this id.
    pub fn computation_instructions(
        &self,
        id: i64,
    ) -> Option<impl Iterator<Item = Instruction<'_>> + '_> {
        let c = *self.computation_ids.get(&id)?;
        let n = self.computations.get(c)?.instructions.len();
        Some((0..n).map(move |i| Instruction {
            module: self,
            loc: Loc {
                comp: c as u32,
                inst: i as u32,
            },
        }))
    }

    /// The Python stack whose innermost frame has this 1-based id, outermost frame first,
    /// as nsys-jax's `get_stack_frames`; 0 (no frame) gives an empty stack.
    pub fn stack_frames(&self, frame_id: i32) -> Result<Vec<StackFrame<'_>>> {
        let mut frames = Vec::new();
        if frame_id <= 0 {
            return Ok(frames);
        }
        let Some(index) = self.stack_frame_index.as_ref() else {
            return Err(self.error(format!(
                "stack frame {frame_id} referenced but the module has no stack frame index"
            )));
        };
        let mut id = frame_id;
        while id > 0 {
            // A parent chain longer than the table loops: stop rather than spin.
            if frames.len() >= index.stack_frames.len() {
                return Err(self.error(format!("stack frame {frame_id}: its parents loop")));
            }
            let frame = one_based(&index.stack_frames, id)
                .ok_or_else(|| self.error(format!("stack frame {id} does not exist")))?;
            let location =
                one_based(&index.file_locations, frame.file_location_id).ok_or_else(|| {
                    self.error(format!(
                        "stack frame {id}: file location {} does not exist",
                        frame.file_location_id
                    ))
                })?;
            let file = one_based(&index.file_names, location.file_name_id).ok_or_else(|| {
                self.error(format!(
                    "stack frame {id}: file name {} does not exist",
                    location.file_name_id
                ))
            })?;
            let function =
                one_based(&index.function_names, location.function_name_id).ok_or_else(|| {
                    self.error(format!(
                        "stack frame {id}: function name {} does not exist",
                        location.function_name_id
                    ))
                })?;
            frames.push(StackFrame {
                file,
                function,
                line: location.line,
                column: location.column,
            });
            id = frame.parent_frame_id;
        }
        frames.reverse();
        Ok(frames)
    }

    fn error(&self, msg: String) -> Error {
        Error::data(&self.place, msg)
    }
}

/// `items[id - 1]` for the 1-based ids of the stack frame index.
fn one_based<T>(items: &[T], id: i32) -> Option<&T> {
    let i = usize::try_from(id).ok()?.checked_sub(1)?;
    items.get(i)
}

/// One frame of a Python stack trace recorded in an HLO module.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StackFrame<'m> {
    /// The Python file, as the program saw it (`/opt/paxml/paxml/main.py`).
    pub file: &'m str,
    /// The function (`<module>` at the top level).
    pub function: &'m str,
    /// 1-based line.
    pub line: i32,
    /// Column, 0 when unknown.
    pub column: i32,
}

impl fmt::Display for StackFrame<'_> {
    /// `file:line[:column][function]`, as nsys-jax writes frames in its flame graphs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if self.column != 0 {
            write!(f, ":{}", self.column)?;
        }
        write!(f, "[{}]", self.function)
    }
}

/// An instruction of an [`HloModule`], with access to its computation and operands.
#[derive(Clone, Copy)]
pub struct Instruction<'m> {
    module: &'m HloModule,
    loc: Loc,
}

impl fmt::Debug for Instruction<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Instruction")
            .field("name", &self.name())
            .field("opcode", &self.opcode())
            .finish()
    }
}

impl<'m> Instruction<'m> {
    /// The module it belongs to.
    pub fn module(&self) -> &'m HloModule {
        self.module
    }

    /// The computation it belongs to.
    pub fn computation(&self) -> &'m Computation {
        &self.module.computations[self.loc.comp as usize]
    }

    fn lean(&self) -> &'m lean::Lean {
        &self.module.inst(self.loc).lean
    }

    /// A text field of it.
    fn text(&self, span: lean::Span) -> &'m str {
        self.module.inst(self.loc).text(span)
    }

    /// The ids of its operands.
    fn operand_ids(&self) -> &'m [i64] {
        &self.module.ids[self.lean().operands.range()]
    }

    /// The ids of the computations it calls.
    fn called_ids(&self) -> &'m [i64] {
        &self.module.ids[self.lean().called.range()]
    }

    /// The instruction's proto, every field of the schema decoded (on each call: the
    /// module holds only the fields every instruction needs).
    pub fn proto(&self) -> Result<proto::HloInstructionProto> {
        <proto::HloInstructionProto as prost::Message>::decode(
            self.module.inst(self.loc).encoded.clone(),
        )
        .map_err(|e| self.error(format!("not a valid HloInstructionProto: {e}")))
    }

    /// Its id (unique in the module; buffer assignments refer to instructions by it).
    pub fn id(&self) -> i64 {
        self.lean().id
    }

    /// Its name (`fusion.12`, `all-gather-start.3`): the thunk name in profiles.
    pub fn name(&self) -> &'m str {
        self.text(self.lean().name)
    }

    /// Its opcode (`fusion`, `all-gather-start`).
    pub fn opcode(&self) -> &'m str {
        self.text(self.lean().opcode)
    }

    /// JAX's op name from the metadata (`jit(f)/jit(main)/dot_general`), or "".
    pub fn op_name(&self) -> &'m str {
        self.text(self.lean().op_name)
    }

    /// The name XLA's latency-hiding scheduler gives it (`OpMetadata.scheduling_name`,
    /// set when the module is scheduled), or "" where the dump has none (XLA before the
    /// field).
    pub fn scheduling_name(&self) -> &'m str {
        self.text(self.lean().scheduling_name)
    }

    /// Its result shape (decoded on each call).
    pub fn shape(&self) -> Result<Option<proto::ShapeProto>> {
        Ok(self.proto()?.shape)
    }

    /// Whether its result lives in host memory (memory space 5).
    pub fn on_host(&self) -> Result<bool> {
        Ok(self
            .shape()?
            .and_then(|s| s.layout)
            .is_some_and(|l| l.memory_space == HOST_MEMORY_SPACE))
    }

    /// Operand `i`.
    pub fn operand(&self, i: usize) -> Result<Instruction<'m>> {
        let Some(&id) = self.operand_ids().get(i) else {
            return Err(self.error(format!("has no operand {i}")));
        };
        let Some(&inst) = self.computation().ids.get(&id) else {
            return Err(self.error(format!(
                "operand {i} (id {id}) is not in computation `{}`",
                self.computation().name
            )));
        };
        Ok(Instruction {
            module: self.module,
            loc: Loc {
                comp: self.loc.comp,
                inst,
            },
        })
    }

    /// All operands in order.
    pub fn operands(&self) -> Result<Vec<Instruction<'m>>> {
        (0..self.operand_ids().len())
            .map(|i| self.operand(i))
            .collect()
    }

    /// The instructions of the computations it calls directly, in order.
    pub fn called_instructions(&self) -> Result<Vec<Instruction<'m>>> {
        let mut out = Vec::new();
        for &id in self.called_ids() {
            let Some(insts) = self.module.computation_instructions(id) else {
                return Err(self.error(format!("calls computation {id}, which does not exist")));
            };
            out.extend(insts);
        }
        Ok(out)
    }

    /// The instruction that carries out its communication, if it communicates; exactly
    /// nsys-jax's `HloInstruction` classification:
    ///
    /// - a collective (`all-gather`, `all-reduce`, `all-to-all`, `collective-broadcast`,
    ///   `collective-permute`, `reduce-scatter`) or a `-start` form (`all-gather-start`,
    ///   `all-reduce-start`, `collective-permute-start`) is its own communication;
    /// - an `async-start` or `fusion` communicates when its called computations, searched
    ///   recursively, contain a collective (not a `-start` form) or a host offload: a
    ///   `dynamic-slice` whose result and operand 0 are in different memory spaces, or a
    ///   `dynamic-update-slice` whose result is where operand 0 is but operand 1 is not
    ///   (memory space 5 = host). Finding two such instructions is an error.
    pub fn communication(&self) -> Result<Option<Instruction<'m>>> {
        let opcode = self.opcode();
        if COMM_OPCODES.contains(&opcode) || COMM_START_OPCODES.contains(&opcode) {
            return Ok(Some(*self));
        }
        if opcode != "async-start" && opcode != "fusion" {
            return Ok(None);
        }
        let mut found: Option<Instruction<'m>> = None;
        // Depth-first over the called computations, each once (a loop in corrupt data
        // cannot recurse forever).
        let mut seen = std::collections::HashSet::new();
        let mut todo: Vec<i64> = self.called_ids().to_vec();
        todo.reverse();
        while let Some(id) = todo.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(insts) = self.module.computation_instructions(id) else {
                return Err(self.error(format!("calls computation {id}, which does not exist")));
            };
            for inst in insts {
                todo.extend(inst.called_ids().iter().rev());
                if COMM_OPCODES.contains(&inst.opcode()) || inst.is_offload()? {
                    if let Some(first) = found {
                        return Err(self.error(format!(
                            "calls two communicating instructions, `{}` ({}) and `{}` ({})",
                            first.name(),
                            first.opcode(),
                            inst.name(),
                            inst.opcode()
                        )));
                    }
                    found = Some(inst);
                }
            }
        }
        Ok(found)
    }

    /// Whether it communicates (see [`Instruction::communication`]).
    pub fn is_communication(&self) -> Result<bool> {
        Ok(self.communication()?.is_some())
    }

    /// A `dynamic-slice` or `dynamic-update-slice` that moves data between host and
    /// device memory.
    fn is_offload(&self) -> Result<bool> {
        Ok(match self.opcode() {
            "dynamic-slice" => self.on_host()? != self.operand(0)?.on_host()?,
            "dynamic-update-slice" => {
                let dest = self.on_host()?;
                dest == self.operand(0)?.on_host()? && dest != self.operand(1)?.on_host()?
            }
            _ => false,
        })
    }

    /// The collective it runs, with group size and message size, or `None` when it does
    /// not communicate. See [`Collective`] for the conventions.
    pub fn collective(&self) -> Result<Option<Collective>> {
        match self.communication()? {
            Some(comm) => communication::describe(comm).map(Some),
            None => Ok(None),
        }
    }

    /// The id of the innermost frame of the Python stack that created it (1-based), 0
    /// when it has none.
    pub fn stack_frame_id(&self) -> i32 {
        self.lean().stack_frame_id
    }

    /// The Python stack that created it (outermost first), from its metadata's
    /// `stack_frame_id`; empty when it has none.
    pub fn stack_frames(&self) -> Result<Vec<StackFrame<'m>>> {
        self.module.stack_frames(self.stack_frame_id())
    }

    /// A data error about this instruction, naming the dump and the instruction.
    pub(crate) fn error(&self, msg: impl fmt::Display) -> Error {
        Error::data(
            &self.module.place,
            format!("instruction `{}`: {msg}", self.name()),
        )
    }
}
