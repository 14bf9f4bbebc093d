//! What a communicating instruction moves: the collective, the number of devices in its
//! groups and the message size, by nsys-jax's conventions (`_get_message_size` in
//! `nsys_jax/analysis.py`), which follow NCCL's and nccl-tests'.

use super::{Instruction, proto};
use crate::error::Result;
use std::collections::BTreeSet;
use std::fmt;

/// The kind of communication, named as in njx records and nsys-jax's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CollectiveKind {
    /// `all-gather`.
    AllGather,
    /// `all-reduce`.
    AllReduce,
    /// `all-to-all`.
    AllToAll,
    /// `collective-broadcast`.
    CollectiveBroadcast,
    /// `collective-permute`.
    CollectivePermute,
    /// `reduce-scatter`.
    ReduceScatter,
    /// A `dynamic-update-slice` into host memory (offloading).
    DeviceToHost,
    /// A `dynamic-slice` out of host memory.
    HostToDevice,
}

const ALL: [CollectiveKind; 8] = [
    CollectiveKind::AllGather,
    CollectiveKind::AllReduce,
    CollectiveKind::AllToAll,
    CollectiveKind::CollectiveBroadcast,
    CollectiveKind::CollectivePermute,
    CollectiveKind::ReduceScatter,
    CollectiveKind::DeviceToHost,
    CollectiveKind::HostToDevice,
];

impl CollectiveKind {
    /// The name: the opcode without `-start`, or `device-to-host` / `host-to-device`.
    pub fn as_str(self) -> &'static str {
        match self {
            CollectiveKind::AllGather => "all-gather",
            CollectiveKind::AllReduce => "all-reduce",
            CollectiveKind::AllToAll => "all-to-all",
            CollectiveKind::CollectiveBroadcast => "collective-broadcast",
            CollectiveKind::CollectivePermute => "collective-permute",
            CollectiveKind::ReduceScatter => "reduce-scatter",
            CollectiveKind::DeviceToHost => "device-to-host",
            CollectiveKind::HostToDevice => "host-to-device",
        }
    }

    /// The kind named `name`, as [`CollectiveKind::as_str`] writes it in records.
    pub fn from_name(name: &str) -> Option<CollectiveKind> {
        ALL.iter().copied().find(|k| k.as_str() == name)
    }

    /// The collective an opcode runs (`all-gather-start` → all-gather), if it is one.
    pub fn from_opcode(opcode: &str) -> Option<CollectiveKind> {
        Some(match opcode.strip_suffix("-start").unwrap_or(opcode) {
            "all-gather" => CollectiveKind::AllGather,
            "all-reduce" => CollectiveKind::AllReduce,
            "all-to-all" => CollectiveKind::AllToAll,
            "collective-broadcast" => CollectiveKind::CollectiveBroadcast,
            "collective-permute" => CollectiveKind::CollectivePermute,
            "reduce-scatter" => CollectiveKind::ReduceScatter,
            _ => return None,
        })
    }
}

impl fmt::Display for CollectiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A communication as nsys-jax describes it.
///
/// - `group_size`: 2 for collective-permute (pairwise send/receive); 1 for host transfers;
///   otherwise the size of the replica groups (all groups must be the same size), from
///   `collective_device_list`'s explicit groups, the legacy `replica_groups`, the iota
///   form (`num_devices_per_group`) or the mesh axes (product of the axis sizes).
/// - `message_bytes`: the sum of the operands' sizes; for reduce-scatter divided by the
///   group size (NCCL counts the output buffer); for a host transfer the size of the data
///   moved (operand 1 of a `dynamic-update-slice`, the result of a `dynamic-slice`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Collective {
    /// Which collective, or which direction of host transfer.
    pub kind: CollectiveKind,
    /// Devices in each replica group.
    pub group_size: u64,
    /// Bytes per device, by NCCL's convention for the collective.
    pub message_bytes: u64,
}

impl Collective {
    /// `(algorithm, bus)` bandwidth factors of nccl-tests' PERFORMANCE.md, as nsys-jax's
    /// `_collective_correction`: algorithm bandwidth = `algorithm × message_bytes / time`,
    /// bus bandwidth = algorithm bandwidth × `bus`. Host transfers are `(1, 1)`.
    pub fn bandwidth_factors(&self) -> (f64, f64) {
        let n = self.group_size as f64;
        match self.kind {
            CollectiveKind::AllGather | CollectiveKind::ReduceScatter => (n, (n - 1.0) / n),
            CollectiveKind::AllReduce => (1.0, 2.0 * (n - 1.0) / n),
            CollectiveKind::AllToAll => (1.0, (n - 1.0) / n),
            CollectiveKind::CollectiveBroadcast
            | CollectiveKind::CollectivePermute
            | CollectiveKind::DeviceToHost
            | CollectiveKind::HostToDevice => (1.0, 1.0),
        }
    }
}

/// Width in bits of an XLA element type (`xla.PrimitiveType` value), as nsys-jax's
/// `element_type_width`: PRED counts 8 bits (as NCCL transfers it), the 8-bit float types
/// 8, and `S32`, `BF16`, `C64`… their number. `None` for tuples, tokens, opaque and
/// unknown types.
pub fn element_bits(element_type: i32) -> Option<u64> {
    use proto::PrimitiveType as T;
    Some(match T::try_from(element_type).ok()? {
        T::Pred => 8,
        T::S1 | T::U1 => 1,
        T::S2 | T::U2 => 2,
        T::S4 | T::U4 | T::F4e2m1fn => 4,
        T::S8
        | T::U8
        | T::F8e5m2
        | T::F8e4m3
        | T::F8e4m3fn
        | T::F8e4m3b11fnuz
        | T::F8e3m4
        | T::F8e5m2fnuz
        | T::F8e4m3fnuz
        | T::F8e8m0fnu => 8,
        T::S16 | T::U16 | T::F16 | T::Bf16 => 16,
        T::S32 | T::U32 | T::F32 => 32,
        T::S64 | T::U64 | T::F64 | T::C64 => 64,
        T::C128 => 128,
        T::Invalid | T::Tuple | T::OpaqueType | T::Token | T::Buffer => {
            return None;
        }
    })
}

/// Size in bytes of an array shape: element width × product of the dimensions.
/// Errors name what is wrong (tuple, unknown type, negative or overflowing size,
/// a size that is not whole bytes).
pub fn byte_size(shape: &proto::ShapeProto) -> Result<u64, String> {
    let Some(bits) = element_bits(shape.element_type) else {
        let name = proto::PrimitiveType::try_from(shape.element_type).map_or_else(
            |_| shape.element_type.to_string(),
            |t| t.as_str_name().into(),
        );
        return Err(format!("element type {name} has no size"));
    };
    let total = array_bits(bits, &shape.dimensions)?;
    if total % 8 != 0 {
        return Err(format!("{total} bits is not a whole number of bytes"));
    }
    Ok(total / 8)
}

/// Bits of an array of `bits`-bit elements with these dimensions: a negative dimension or
/// a size past 64 bits is an error.
fn array_bits(bits: u64, dimensions: &[i64]) -> Result<u64, String> {
    dimensions.iter().try_fold(bits, |total, &d| {
        let d = u64::try_from(d).map_err(|_| format!("negative dimension {d}"))?;
        total
            .checked_mul(d)
            .ok_or_else(|| "size overflows 64 bits".to_string())
    })
}

/// Checks that a shape (tuples included, however nested) could be held in memory: no
/// negative dimension, and its size, tuple elements summed, fits 64 bits. Element types
/// without a size (tokens, opaque) count nothing: a collective's result may hold them.
/// Returns the size in bytes, each array rounded up to whole bytes.
fn check_size(shape: &proto::ShapeProto) -> Result<u64, String> {
    let mut total: u64 = 0;
    let mut todo = vec![shape];
    while let Some(shape) = todo.pop() {
        todo.extend(&shape.tuple_shapes);
        let Some(bits) = element_bits(shape.element_type) else {
            continue;
        };
        let bits = array_bits(bits, &shape.dimensions)?;
        total = total
            .checked_add(bits.div_ceil(8))
            .ok_or_else(|| "size overflows 64 bits".to_string())?;
    }
    Ok(total)
}

/// Byte size of an instruction's result, as an instruction error.
fn result_bytes(inst: &Instruction<'_>) -> Result<u64> {
    let Some(shape) = inst.shape()? else {
        return Err(inst.error("has no shape"));
    };
    byte_size(&shape).map_err(|e| inst.error(e))
}

/// Describes the communication carried out by `comm` (the result of
/// [`Instruction::communication`]).
pub(super) fn describe(comm: Instruction<'_>) -> Result<Collective> {
    let opcode = comm.opcode();
    // The sizes below come from the operands; a result that could not exist says the
    // instruction is corrupt all the same.
    if let Some(shape) = comm.shape()? {
        check_size(&shape).map_err(|e| comm.error(format!("result shape: {e}")))?;
    }
    if opcode == "dynamic-slice" || opcode == "dynamic-update-slice" {
        // Host transfers count as single-device collectives.
        let (src, message_bytes) = if opcode == "dynamic-update-slice" {
            let src = comm.operand(1)?;
            (src, result_bytes(&src)?)
        } else {
            (comm.operand(0)?, result_bytes(&comm)?)
        };
        let dest_on_host = comm.on_host()?;
        if src.on_host()? == dest_on_host {
            return Err(comm.error("is not a transfer between host and device memory"));
        }
        let kind = if dest_on_host {
            CollectiveKind::DeviceToHost
        } else {
            CollectiveKind::HostToDevice
        };
        return Ok(Collective {
            kind,
            group_size: 1,
            message_bytes,
        });
    }
    let Some(kind) = CollectiveKind::from_opcode(opcode) else {
        return Err(comm.error(format!("`{opcode}` is not a collective")));
    };
    let group_size = if kind == CollectiveKind::CollectivePermute {
        // Pairwise send and receive between devices.
        2
    } else {
        group_size(&comm)?
    };
    let mut message_bytes: u64 = 0;
    for operand in comm.operands()? {
        let mut bytes = result_bytes(&operand)?;
        if kind == CollectiveKind::ReduceScatter {
            // NCCL's message size of a reduce-scatter is its output buffer.
            if bytes % group_size != 0 {
                return Err(comm.error(format!(
                    "operand `{}` of {bytes} bytes does not divide into {group_size} parts",
                    operand.name()
                )));
            }
            bytes /= group_size;
        }
        message_bytes = message_bytes
            .checked_add(bytes)
            .ok_or_else(|| comm.error("message size overflows 64 bits"))?;
    }
    Ok(Collective {
        kind,
        group_size,
        message_bytes,
    })
}

/// Number of devices in each replica group of a collective.
fn group_size(comm: &Instruction<'_>) -> Result<u64> {
    use proto::hlo_instruction_proto::ReplicaGroupList as L;
    let p = comm.proto()?;
    let list = p.replica_group_list.as_ref();
    let explicit = match list {
        Some(L::CollectiveDeviceList(l)) if !l.replica_groups.is_empty() => &l.replica_groups,
        _ => &p.replica_groups,
    };
    let size: i64 = if !explicit.is_empty() {
        let sizes: BTreeSet<usize> = explicit.iter().map(|g| g.replica_ids.len()).collect();
        if sizes.len() > 1 {
            return Err(comm.error(format!(
                "replica groups of different sizes {sizes:?}; the collective cannot be interpreted"
            )));
        }
        sizes.first().copied().unwrap_or(0) as i64
    } else {
        match list {
            Some(L::CollectiveDeviceList(proto::CollectiveDeviceListProto {
                iota_replica_group_list: Some(iota),
                ..
            }))
            | Some(L::IotaCollectiveDeviceList(iota)) => iota.num_devices_per_group,
            Some(L::MeshAxesReplicaGroupList(mesh)) => mesh_group_size(comm, mesh)?,
            _ => {
                return Err(comm.error(
                    "has no replica groups (empty groups mean all devices, which the dump \
                     does not say how many are)",
                ));
            }
        }
    };
    match u64::try_from(size) {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(comm.error(format!("replica groups of {size} devices"))),
    }
}

/// Devices per group of a mesh-axes device list: the product of the sizes of the axes
/// the collective runs over (a sub-axis counts with its own size).
fn mesh_group_size(
    comm: &Instruction<'_>,
    list: &proto::MeshAxesReplicaGroupListProto,
) -> Result<i64> {
    if list.axes.is_empty() {
        return Err(comm.error("mesh-axes replica groups without axes"));
    }
    let mesh_axes = list.mesh.as_ref().map_or(&[][..], |m| &m.axes[..]);
    let mut size: i64 = 1;
    for axis in &list.axes {
        let axis_size = match &axis.sub_axis_info {
            Some(sub) => sub.size,
            None => usize::try_from(axis.mesh_axis_index)
                .ok()
                .and_then(|i| mesh_axes.get(i))
                .map(|a| a.size)
                .ok_or_else(|| {
                    comm.error(format!(
                        "mesh axis {} does not exist ({} axes)",
                        axis.mesh_axis_index,
                        mesh_axes.len()
                    ))
                })?,
        };
        size = size
            .checked_mul(axis_size)
            .ok_or_else(|| comm.error("group size overflows"))?;
    }
    Ok(size)
}

#[cfg(test)]
mod tests {
    use super::{ALL, CollectiveKind, check_size, proto};
    use proto::PrimitiveType as T;

    fn shape(ty: T, dims: &[i64], parts: Vec<proto::ShapeProto>) -> proto::ShapeProto {
        proto::ShapeProto {
            element_type: ty as i32,
            dimensions: dims.to_vec(),
            tuple_shapes: parts,
            ..Default::default()
        }
    }

    #[test]
    fn sizes_of_results_are_checked() {
        let f32s = |dims: &[i64]| shape(T::F32, dims, vec![]);
        assert_eq!(check_size(&f32s(&[3, 5])), Ok(60));
        // An async collective's tuple: operand, result and contexts (a token counts 0);
        // a packed 4-bit array rounds up to whole bytes.
        let start = shape(
            T::Tuple,
            &[],
            vec![
                f32s(&[8]),
                shape(T::Tuple, &[], vec![f32s(&[16]), shape(T::S4, &[3], vec![])]),
                shape(T::U32, &[], vec![]),
                shape(T::Token, &[], vec![]),
            ],
        );
        assert_eq!(check_size(&start), Ok(32 + 64 + 2 + 4));
        assert_eq!(
            check_size(&f32s(&[-1])),
            Err("negative dimension -1".into())
        );
        assert_eq!(
            check_size(&f32s(&[1 << 40, 1 << 40])),
            Err("size overflows 64 bits".into())
        );
        // Each part fits (2^60 bytes), their sum does not.
        let part = shape(T::S8, &[1 << 60], vec![]);
        assert_eq!(check_size(&part), Ok(1 << 60));
        assert_eq!(
            check_size(&shape(T::Tuple, &[], vec![part; 16])),
            Err("size overflows 64 bits".into())
        );
        let nested_negative = shape(
            T::Tuple,
            &[],
            vec![shape(T::Tuple, &[], vec![f32s(&[2, -3])])],
        );
        assert_eq!(
            check_size(&nested_negative),
            Err("negative dimension -3".into())
        );
    }

    #[test]
    fn kinds_are_named_as_records_name_them() {
        let names: Vec<&str> = ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(names, crate::records::COLLECTIVE_KINDS);
        for name in crate::records::COLLECTIVE_KINDS {
            assert_eq!(
                CollectiveKind::from_name(name).map(|k| k.as_str()),
                Some(*name)
            );
        }
    }
}
