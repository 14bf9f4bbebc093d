//! njx::hlo: HLO dumps built here with the generated types (lookup, communication,
//! group and message sizes, stack frames, program keys in single, combine and extracted
//! archives, corrupt dumps), and conformance on the real nsys-jax archives.

use crate::common;
use crate::common::computation as comp;

use njx::hlo::proto::{
    AxisRefProto, CollectiveDeviceListProto, HloComputationProto, HloInstructionProto, HloProto,
    IotaReplicaGroupListProto, LayoutProto, MeshAxesReplicaGroupListProto, MeshProto, OpMetadata,
    PrimitiveType as T, ReplicaGroup, ShapeProto, SourceTarget, StackFrameIndexProto,
    axis_ref_proto, hlo_instruction_proto, mesh_proto, stack_frame_index_proto,
};
use njx::hlo::{
    Collective, CollectiveKind, CollectiveOrder, Dumps, HloModule, ProgramKey, byte_size,
    element_bits, parse_dump_name,
};
use njx::output::progress::Progress;
use njx::source::Archive;
use prost::Message;
use std::sync::Arc;

// ---------------------------------------------------------------- fixture builders

fn shape(ty: T, dims: &[i64]) -> ShapeProto {
    ShapeProto {
        element_type: ty as i32,
        dimensions: dims.to_vec(),
        ..Default::default()
    }
}

/// The same shape in host memory (`{…:S(5)}`).
fn host(mut s: ShapeProto) -> ShapeProto {
    s.layout = Some(LayoutProto {
        memory_space: 5,
        ..Default::default()
    });
    s
}

fn tuple(parts: Vec<ShapeProto>) -> ShapeProto {
    ShapeProto {
        element_type: T::Tuple as i32,
        tuple_shapes: parts,
        ..Default::default()
    }
}

fn inst(
    id: i64,
    name: &str,
    opcode: &str,
    shape: ShapeProto,
    operands: &[i64],
) -> HloInstructionProto {
    HloInstructionProto {
        id,
        name: name.into(),
        opcode: opcode.into(),
        shape: Some(shape),
        operand_ids: operands.to_vec(),
        ..Default::default()
    }
}

fn calls(mut i: HloInstructionProto, computations: &[i64]) -> HloInstructionProto {
    i.called_computation_ids = computations.to_vec();
    i
}

fn groups(groups: &[&[i64]]) -> Vec<ReplicaGroup> {
    groups
        .iter()
        .map(|g| ReplicaGroup {
            replica_ids: g.to_vec(),
        })
        .collect()
}

fn with_groups(mut i: HloInstructionProto, g: &[&[i64]]) -> HloInstructionProto {
    i.replica_groups = groups(g);
    i
}

fn with_list(
    mut i: HloInstructionProto,
    list: hlo_instruction_proto::ReplicaGroupList,
) -> HloInstructionProto {
    i.replica_group_list = Some(list);
    i
}

fn hlo(
    id: i64,
    name: &str,
    fingerprint: Option<&str>,
    computations: Vec<HloComputationProto>,
) -> HloProto {
    common::hlo_of(id, name, fingerprint, computations)
}

/// A module with one instruction of each kind the classification distinguishes.
///
/// Computations: 1 `add` (reduction); 2 async reduce-scatter; 3 offload (a
/// dynamic-update-slice into host memory); 4 load (a dynamic-slice out of host memory);
/// 5 plain arithmetic; 6 two collectives; 7 → 8 a collective two calls deep; 9 a
/// dynamic-update-slice on the device; 100 the entry.
fn classification_module() -> HloProto {
    use hlo_instruction_proto::ReplicaGroupList as L;
    let f32s = |d: &[i64]| shape(T::F32, d);
    let scalar = || shape(T::F32, &[]);
    let add = comp(
        1,
        "add",
        vec![
            inst(1, "x", "parameter", scalar(), &[]),
            inst(2, "y", "parameter", scalar(), &[]),
            inst(3, "add.1", "add", scalar(), &[1, 2]),
        ],
    );
    let rs_async = comp(
        2,
        "rs_async",
        vec![
            inst(10, "rs.param", "parameter", f32s(&[8, 4]), &[]),
            with_groups(
                calls(
                    inst(
                        11,
                        "reduce-scatter.1",
                        "reduce-scatter",
                        f32s(&[4, 4]),
                        &[10],
                    ),
                    &[1],
                ),
                &[&[0, 1], &[2, 3]],
            ),
        ],
    );
    let offload = comp(
        3,
        "offload",
        vec![
            inst(20, "off.p0", "parameter", host(f32s(&[4, 4])), &[]),
            inst(21, "off.p1", "parameter", f32s(&[1, 4]), &[]),
            inst(22, "off.i", "parameter", shape(T::S32, &[]), &[]),
            inst(
                23,
                "dynamic-update-slice.1",
                "dynamic-update-slice",
                host(f32s(&[4, 4])),
                &[20, 21, 22, 22],
            ),
        ],
    );
    let load = comp(
        4,
        "load",
        vec![
            inst(30, "load.p0", "parameter", host(f32s(&[4, 4])), &[]),
            inst(31, "load.i", "parameter", shape(T::S32, &[]), &[]),
            inst(
                32,
                "dynamic-slice.1",
                "dynamic-slice",
                f32s(&[1, 4]),
                &[30, 31, 31],
            ),
        ],
    );
    let math = comp(
        5,
        "math",
        vec![
            inst(40, "math.p0", "parameter", f32s(&[16]), &[]),
            inst(41, "multiply.1", "multiply", f32s(&[16]), &[40, 40]),
        ],
    );
    let two = comp(
        6,
        "two",
        vec![
            inst(50, "two.p", "parameter", f32s(&[4]), &[]),
            with_groups(
                calls(
                    inst(51, "all-reduce.2", "all-reduce", f32s(&[4]), &[50]),
                    &[1],
                ),
                &[&[0, 1]],
            ),
            with_groups(
                calls(
                    inst(52, "all-reduce.3", "all-reduce", f32s(&[4]), &[51]),
                    &[1],
                ),
                &[&[0, 1]],
            ),
        ],
    );
    let outer = comp(
        7,
        "outer",
        vec![
            inst(60, "outer.p", "parameter", f32s(&[8]), &[]),
            calls(inst(61, "fusion.inner", "fusion", f32s(&[8]), &[60]), &[8]),
        ],
    );
    let inner = comp(
        8,
        "inner",
        vec![
            inst(70, "inner.p", "parameter", f32s(&[8]), &[]),
            with_list(
                calls(
                    inst(71, "all-reduce.4", "all-reduce", f32s(&[8]), &[70]),
                    &[1],
                ),
                L::CollectiveDeviceList(CollectiveDeviceListProto {
                    replica_groups: groups(&[&[0, 1, 2, 3, 4, 5, 6, 7]]),
                    iota_replica_group_list: None,
                }),
            ),
        ],
    );
    let device_dus = comp(
        9,
        "device_dus",
        vec![
            inst(80, "dd.p0", "parameter", f32s(&[4, 4]), &[]),
            inst(81, "dd.p1", "parameter", f32s(&[1, 4]), &[]),
            inst(82, "dd.i", "parameter", shape(T::S32, &[]), &[]),
            inst(
                83,
                "dynamic-update-slice.2",
                "dynamic-update-slice",
                f32s(&[4, 4]),
                &[80, 81, 82, 82],
            ),
        ],
    );
    let mesh = |axes: Vec<AxisRefProto>| {
        L::MeshAxesReplicaGroupList(MeshAxesReplicaGroupListProto {
            mesh: Some(MeshProto {
                axes: vec![
                    mesh_proto::MeshAxis {
                        name: "x".into(),
                        size: 2,
                    },
                    mesh_proto::MeshAxis {
                        name: "y".into(),
                        size: 4,
                    },
                ],
                device_ids: vec![],
            }),
            axes,
        })
    };
    let axis = |i: i64| AxisRefProto {
        mesh_axis_index: i,
        sub_axis_info: None,
    };
    let mut math_fusion = calls(
        inst(118, "fusion.math", "fusion", f32s(&[16]), &[100]),
        &[5],
    );
    math_fusion.metadata = Some(OpMetadata {
        op_name: "jit(step)/jit(main)/mul".into(),
        stack_frame_id: 3,
        ..Default::default()
    });
    let mut permute = inst(
        114,
        "collective-permute-start",
        "collective-permute-start",
        f32s(&[16]),
        &[100],
    );
    permute.source_target_pairs = vec![
        SourceTarget {
            source: 0,
            target: 1,
        },
        SourceTarget {
            source: 1,
            target: 0,
        },
    ];
    let entry = comp(
        100,
        "main",
        vec![
            inst(100, "p0", "parameter", f32s(&[16]), &[]),
            inst(101, "p1", "parameter", shape(T::Bf16, &[2, 3]), &[]),
            inst(102, "p2", "parameter", shape(T::Bf16, &[5]), &[]),
            inst(103, "p3", "parameter", f32s(&[8, 4]), &[]),
            inst(104, "p4", "parameter", host(f32s(&[4, 4])), &[]),
            inst(105, "p5", "parameter", f32s(&[1, 4]), &[]),
            inst(106, "p6", "parameter", shape(T::S32, &[]), &[]),
            inst(107, "p7", "parameter", shape(T::Pred, &[10]), &[]),
            inst(108, "p8", "parameter", shape(T::S4, &[3]), &[]),
            with_groups(
                calls(
                    inst(110, "all-reduce", "all-reduce", f32s(&[16]), &[100]),
                    &[1],
                ),
                &[&[0, 1, 2, 3], &[4, 5, 6, 7]],
            ),
            with_list(
                inst(
                    111,
                    "all-gather-start",
                    "all-gather-start",
                    tuple(vec![shape(T::Bf16, &[2, 3]), shape(T::Bf16, &[16, 3])]),
                    &[101, 102],
                ),
                L::CollectiveDeviceList(CollectiveDeviceListProto {
                    replica_groups: vec![],
                    iota_replica_group_list: Some(IotaReplicaGroupListProto {
                        num_replica_groups: 1,
                        num_devices_per_group: 8,
                        iota_reshape_dims: vec![8],
                        iota_transpose_perm: vec![0],
                    }),
                }),
            ),
            inst(
                112,
                "all-gather-done",
                "all-gather-done",
                shape(T::Bf16, &[16, 3]),
                &[111],
            ),
            with_list(
                inst(113, "all-to-all", "all-to-all", f32s(&[16]), &[100]),
                L::IotaCollectiveDeviceList(IotaReplicaGroupListProto {
                    num_replica_groups: 2,
                    num_devices_per_group: 4,
                    iota_reshape_dims: vec![8],
                    iota_transpose_perm: vec![0],
                }),
            ),
            permute,
            calls(
                inst(
                    115,
                    "reduce-scatter-start",
                    "async-start",
                    tuple(vec![]),
                    &[103],
                ),
                &[2],
            ),
            calls(
                inst(
                    116,
                    "fusion.offload",
                    "fusion",
                    host(f32s(&[4, 4])),
                    &[104, 105, 106],
                ),
                &[3],
            ),
            calls(
                inst(117, "fusion.load", "fusion", f32s(&[1, 4]), &[104, 106]),
                &[4],
            ),
            math_fusion,
            with_list(
                inst(
                    119,
                    "collective-broadcast",
                    "collective-broadcast",
                    shape(T::Pred, &[10]),
                    &[107],
                ),
                mesh(vec![axis(1)]),
            ),
            with_list(
                inst(
                    120,
                    "collective-broadcast.1",
                    "collective-broadcast",
                    shape(T::Pred, &[10]),
                    &[107],
                ),
                mesh(vec![
                    axis(0),
                    AxisRefProto {
                        mesh_axis_index: 1,
                        sub_axis_info: Some(axis_ref_proto::SubAxis {
                            pre_size: 1,
                            size: 2,
                        }),
                    },
                ]),
            ),
            calls(inst(121, "fusion.two", "fusion", f32s(&[4]), &[100]), &[6]),
            calls(
                inst(122, "fusion.nested", "fusion", f32s(&[8]), &[100]),
                &[7],
            ),
            with_groups(
                inst(123, "all-reduce.5", "all-reduce", f32s(&[16]), &[100]),
                &[&[0, 1], &[2]],
            ),
            inst(124, "all-reduce.6", "all-reduce", f32s(&[16]), &[100]),
            calls(
                inst(125, "fusion.devdus", "fusion", f32s(&[4, 4]), &[100]),
                &[9],
            ),
            with_groups(
                inst(
                    126,
                    "all-reduce.7",
                    "all-reduce",
                    shape(T::S4, &[3]),
                    &[108],
                ),
                &[&[0, 1]],
            ),
            with_groups(
                inst(
                    127,
                    "all-gather",
                    "all-gather",
                    shape(T::Bf16, &[4, 3]),
                    &[101],
                ),
                &[&[0, 1]],
            ),
            inst(128, "copy.1", "copy", f32s(&[16]), &[100]),
            inst(130, "tuple", "tuple", tuple(vec![]), &[110, 112]),
        ],
    );
    let mut proto = hlo(
        7,
        "jit_step",
        Some("0123456789abcdef0123456789abcdef"),
        vec![
            add, rs_async, offload, load, math, two, outer, inner, device_dus, entry,
        ],
    );
    let module = proto.hlo_module.as_mut().unwrap();
    module.stack_frame_index = Some(StackFrameIndexProto {
        file_names: vec!["/a/main.py".into(), "/a/model.py".into()],
        function_names: vec!["<module>".into(), "train".into(), "layer".into()],
        file_locations: vec![
            location(1, 1, 10, 0),
            location(2, 2, 20, 5),
            location(2, 3, 30, 0),
        ],
        stack_frames: vec![frame(1, 0), frame(2, 1), frame(3, 2)],
    });
    proto
}

fn location(
    file: i32,
    function: i32,
    line: i32,
    column: i32,
) -> stack_frame_index_proto::FileLocation {
    stack_frame_index_proto::FileLocation {
        file_name_id: file,
        function_name_id: function,
        line,
        column,
    }
}

fn frame(location: i32, parent: i32) -> stack_frame_index_proto::StackFrame {
    stack_frame_index_proto::StackFrame {
        file_location_id: location,
        parent_frame_id: parent,
    }
}

fn module() -> HloModule {
    let bytes = classification_module().encode_to_vec();
    HloModule::decode("test.hlo.pb", &bytes).expect("fixture decodes")
}

fn collective(m: &HloModule, name: &str) -> Collective {
    m.instruction(name)
        .unwrap_or_else(|| panic!("{name} exists"))
        .collective()
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .unwrap_or_else(|| panic!("{name} communicates"))
}

fn error_of<T: std::fmt::Debug>(r: njx::Result<T>) -> String {
    r.expect_err("an error").to_string()
}

// ---------------------------------------------------------------- lookup and classification

#[test]
fn instructions_are_found_by_name_with_their_computation() {
    let m = module();
    assert_eq!(m.name(), "jit_step");
    assert_eq!(m.id(), 7);
    assert_eq!(m.fingerprint(), Some("0123456789abcdef0123456789abcdef"));
    assert_eq!(m.entry().unwrap().name, "main");
    let i = m.instruction("fusion.math").unwrap();
    assert_eq!(i.opcode(), "fusion");
    assert_eq!(i.computation().name, "main");
    assert_eq!(i.op_name(), "jit(step)/jit(main)/mul");
    assert_eq!(i.operand(0).unwrap().name(), "p0");
    let called: Vec<&str> = i
        .called_instructions()
        .unwrap()
        .iter()
        .map(|c| c.name())
        .collect();
    assert_eq!(called, ["math.p0", "multiply.1"]);
    let rs = m.instruction("reduce-scatter.1").unwrap();
    assert_eq!(rs.computation().name, "rs_async");
    assert_eq!(rs.operand(0).unwrap().name(), "rs.param");
    assert!(m.instruction("fusion.404").is_none());
    assert_eq!(m.instructions().count(), 54);
    let err = error_of(i.operand(3));
    assert!(
        err.contains("test.hlo.pb: instruction `fusion.math`: has no operand 3"),
        "{err}"
    );
}

#[test]
fn communication_is_classified_as_nsys_jax_does() {
    let m = module();
    let comm = |name: &str| -> Option<String> {
        m.instruction(name)
            .unwrap()
            .communication()
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .map(|c| c.name().to_string())
    };
    // Collectives and their -start forms are their own communication.
    assert_eq!(comm("all-reduce").as_deref(), Some("all-reduce"));
    assert_eq!(
        comm("all-gather-start").as_deref(),
        Some("all-gather-start")
    );
    assert_eq!(
        comm("collective-permute-start").as_deref(),
        Some("collective-permute-start")
    );
    assert_eq!(comm("all-to-all").as_deref(), Some("all-to-all"));
    // An async-start communicates through the collective it calls.
    assert_eq!(
        comm("reduce-scatter-start").as_deref(),
        Some("reduce-scatter.1")
    );
    // A fusion wrapping a dynamic-update-slice into host memory, or a dynamic-slice out
    // of it, is a host transfer.
    assert_eq!(
        comm("fusion.offload").as_deref(),
        Some("dynamic-update-slice.1")
    );
    assert_eq!(comm("fusion.load").as_deref(), Some("dynamic-slice.1"));
    // Called computations are searched recursively.
    assert_eq!(comm("fusion.nested").as_deref(), Some("all-reduce.4"));
    // Not communication: -done forms, arithmetic fusions, device-only slices, copies,
    // and a dynamic-update-slice that is not inside a fusion or async-start.
    for name in [
        "all-gather-done",
        "fusion.math",
        "fusion.devdus",
        "copy.1",
        "tuple",
        "p0",
        "dynamic-update-slice.1",
    ] {
        assert_eq!(comm(name), None, "{name}");
        assert!(!m.instruction(name).unwrap().is_communication().unwrap());
    }
    assert!(
        m.instruction("fusion.offload")
            .unwrap()
            .is_communication()
            .unwrap()
    );
    // Two collectives under one fusion cannot be attributed.
    let err = error_of(m.instruction("fusion.two").unwrap().communication());
    assert!(
        err.contains(
            "instruction `fusion.two`: calls two communicating instructions, `all-reduce.2`"
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------- group and message sizes

#[test]
fn group_sizes_come_from_every_form_of_replica_groups() {
    let m = module();
    // legacy replica_groups {{0,1,2,3},{4,5,6,7}}
    assert_eq!(collective(&m, "all-reduce").group_size, 4);
    // collective_device_list with explicit groups
    assert_eq!(collective(&m, "fusion.nested").group_size, 8);
    // collective_device_list in iota form: [1,8]<=[8]
    assert_eq!(collective(&m, "all-gather-start").group_size, 8);
    // iota_collective_device_list: [2,4]<=[8]
    assert_eq!(collective(&m, "all-to-all").group_size, 4);
    // mesh axes {x=2, y=4} over y; over x and a sub-axis of y of size 2
    assert_eq!(collective(&m, "collective-broadcast").group_size, 4);
    assert_eq!(collective(&m, "collective-broadcast.1").group_size, 4);
    // pairwise send/receive and host transfers
    assert_eq!(collective(&m, "collective-permute-start").group_size, 2);
    assert_eq!(collective(&m, "fusion.offload").group_size, 1);
    // groups of different sizes, or none at all, cannot be interpreted
    let err = error_of(m.instruction("all-reduce.5").unwrap().collective());
    assert!(
        err.contains("`all-reduce.5`: replica groups of different sizes {1, 2}"),
        "{err}"
    );
    let err = error_of(m.instruction("all-reduce.6").unwrap().collective());
    assert!(
        err.contains("`all-reduce.6`: has no replica groups"),
        "{err}"
    );
}

#[test]
fn message_sizes_follow_the_nccl_conventions_per_collective() {
    let m = module();
    let c = |name| {
        let c = collective(&m, name);
        (c.kind.as_str(), c.group_size, c.message_bytes)
    };
    // all-reduce: the operand, f32[16]
    assert_eq!(c("all-reduce"), ("all-reduce", 4, 64));
    // all-gather: the sum of the (per-device) operands, bf16[2,3] + bf16[5]
    assert_eq!(c("all-gather-start"), ("all-gather", 8, 22));
    assert_eq!(c("all-gather"), ("all-gather", 2, 12));
    // reduce-scatter: the output buffer, f32[8,4] / 2 devices
    assert_eq!(c("reduce-scatter-start"), ("reduce-scatter", 2, 64));
    assert_eq!(c("all-to-all"), ("all-to-all", 4, 64));
    assert_eq!(c("collective-permute-start"), ("collective-permute", 2, 64));
    // PRED counts one byte per element
    assert_eq!(c("collective-broadcast"), ("collective-broadcast", 4, 10));
    assert_eq!(c("fusion.nested"), ("all-reduce", 8, 32));
    // host transfers: the slice moved, f32[1,4]
    assert_eq!(c("fusion.offload"), ("device-to-host", 1, 16));
    assert_eq!(c("fusion.load"), ("host-to-device", 1, 16));
    // three 4-bit elements are not a whole number of bytes
    let err = error_of(m.instruction("all-reduce.7").unwrap().collective());
    assert!(
        err.contains("instruction `p8`: 12 bits is not a whole number of bytes"),
        "{err}"
    );
    assert_eq!(
        m.instruction("fusion.math").unwrap().collective().unwrap(),
        None
    );
}

#[test]
fn bandwidth_factors_are_those_of_nccl_tests() {
    let f = |kind, group_size| {
        Collective {
            kind,
            group_size,
            message_bytes: 1,
        }
        .bandwidth_factors()
    };
    assert_eq!(f(CollectiveKind::AllGather, 4), (4.0, 0.75));
    assert_eq!(f(CollectiveKind::ReduceScatter, 4), (4.0, 0.75));
    assert_eq!(f(CollectiveKind::AllReduce, 4), (1.0, 1.5));
    assert_eq!(f(CollectiveKind::AllToAll, 8), (1.0, 0.875));
    assert_eq!(f(CollectiveKind::CollectivePermute, 2), (1.0, 1.0));
    assert_eq!(f(CollectiveKind::DeviceToHost, 1), (1.0, 1.0));
    assert_eq!(
        CollectiveKind::from_opcode("all-gather-start"),
        Some(CollectiveKind::AllGather)
    );
    assert_eq!(CollectiveKind::from_opcode("all-gather-done"), None);
    assert_eq!(CollectiveKind::HostToDevice.to_string(), "host-to-device");
}

#[test]
fn element_widths_and_byte_sizes() {
    assert_eq!(element_bits(T::Pred as i32), Some(8));
    assert_eq!(element_bits(T::Bf16 as i32), Some(16));
    assert_eq!(element_bits(T::F8e4m3fn as i32), Some(8));
    assert_eq!(element_bits(T::F4e2m1fn as i32), Some(4));
    assert_eq!(element_bits(T::C128 as i32), Some(128));
    assert_eq!(element_bits(T::S4 as i32), Some(4));
    assert_eq!(element_bits(T::Tuple as i32), None);
    assert_eq!(element_bits(999), None);
    assert_eq!(byte_size(&shape(T::F32, &[3, 5])), Ok(60));
    assert_eq!(byte_size(&shape(T::F32, &[])), Ok(4));
    assert_eq!(byte_size(&shape(T::S4, &[4])), Ok(2));
    assert_eq!(
        byte_size(&tuple(vec![])),
        Err("element type TUPLE has no size".to_string())
    );
    assert_eq!(
        byte_size(&shape(T::F32, &[-1])),
        Err("negative dimension -1".to_string())
    );
    assert!(byte_size(&shape(T::F64, &[1 << 40, 1 << 40])).is_err());
}

// ---------------------------------------------------------------- stack frames

#[test]
fn stack_frames_run_from_the_outermost_call() {
    let m = module();
    let i = m.instruction("fusion.math").unwrap();
    let frames: Vec<String> = i
        .stack_frames()
        .unwrap()
        .iter()
        .map(|f| f.to_string())
        .collect();
    assert_eq!(
        frames,
        [
            "/a/main.py:10[<module>]",
            "/a/model.py:20:5[train]",
            "/a/model.py:30[layer]"
        ]
    );
    let inner = i.stack_frames().unwrap()[2];
    assert_eq!(
        (inner.file, inner.function, inner.line, inner.column),
        ("/a/model.py", "layer", 30, 0)
    );
    assert!(
        m.instruction("all-reduce")
            .unwrap()
            .stack_frames()
            .unwrap()
            .is_empty()
    );
    assert_eq!(m.stack_frames(1).unwrap().len(), 1);
    let err = error_of(m.stack_frames(9));
    assert!(
        err.contains("test.hlo.pb: stack frame 9 does not exist"),
        "{err}"
    );
}

#[test]
fn broken_stack_frame_indices_are_errors() {
    let mut proto = hlo(
        1,
        "m",
        None,
        vec![comp(
            1,
            "main",
            vec![inst(1, "p", "parameter", shape(T::F32, &[]), &[])],
        )],
    );
    proto.hlo_module.as_mut().unwrap().stack_frame_index = Some(StackFrameIndexProto {
        file_names: vec!["f.py".into()],
        function_names: vec!["g".into()],
        file_locations: vec![location(1, 1, 1, 0), location(2, 1, 1, 0)],
        stack_frames: vec![frame(1, 2), frame(1, 1), frame(2, 0)],
    });
    let m = HloModule::new("loop.hlo.pb", proto).unwrap();
    assert!(error_of(m.stack_frames(1)).contains("stack frame 1: its parents loop"));
    assert!(error_of(m.stack_frames(3)).contains("stack frame 3: file name 2 does not exist"));
    let no_index = HloModule::new("n.hlo.pb", hlo(1, "m", None, vec![])).unwrap();
    assert!(error_of(no_index.stack_frames(1)).contains("no stack frame index"));
    assert!(no_index.stack_frames(0).unwrap().is_empty());
}

// ---------------------------------------------------------------- invalid modules

#[test]
fn corrupt_or_inconsistent_modules_are_errors() {
    let err = error_of(HloModule::decode("bad.hlo.pb", b"\x0a\x05abc"));
    assert!(
        err.starts_with("bad.hlo.pb: not a valid XLA HloProto"),
        "{err}"
    );
    let err = error_of(HloModule::decode("empty.hlo.pb", b""));
    assert_eq!(err, "empty.hlo.pb: HloProto without an hlo_module");
    let twice = hlo(
        1,
        "m",
        None,
        vec![
            comp(
                1,
                "a",
                vec![inst(1, "x", "parameter", shape(T::F32, &[]), &[])],
            ),
            comp(
                2,
                "b",
                vec![inst(2, "x", "parameter", shape(T::F32, &[]), &[])],
            ),
        ],
    );
    assert!(error_of(HloModule::new("t", twice)).contains("instruction name `x` appears twice"));
    // An instruction's name or op_name that is not UTF-8 (njx decodes them as bytes,
    // slices of the dump, and checks them as a string field would be checked).
    for (field, text) in [
        ("HloInstructionProto.name", "Z~Z~"),
        ("OpMetadata.op_name", "Q~Q~"),
    ] {
        let mut i = inst(1, "Z~Z~", "parameter", shape(T::F32, &[]), &[]);
        i.metadata = Some(OpMetadata {
            op_name: "Q~Q~".into(),
            ..Default::default()
        });
        let proto = hlo(1, "m", None, vec![comp(1, "a", vec![i])]);
        let mut bytes = prost::Message::encode_to_vec(&proto);
        let at = bytes.windows(4).position(|w| w == text.as_bytes()).unwrap();
        bytes[at..at + 4].copy_from_slice(&[0xff, 0xfe, 0xff, 0xfe]);
        let err = error_of(HloModule::decode("u.hlo.pb", &bytes));
        assert_eq!(
            err,
            format!(
                "u.hlo.pb: not a valid XLA HloProto: failed to decode Protobuf message: \
                 {field}: invalid string value: data is not UTF-8 encoded"
            )
        );
    }
    let dangling = hlo(
        1,
        "m",
        None,
        vec![comp(
            1,
            "a",
            vec![inst(1, "x", "negate", shape(T::F32, &[]), &[5])],
        )],
    );
    let m = HloModule::new("d", dangling).unwrap();
    let err = error_of(m.instruction("x").unwrap().operand(0));
    assert_eq!(
        err,
        "d: instruction `x`: operand 0 (id 5) is not in computation `a`"
    );
}

#[test]
fn dangling_computation_ids_are_refused_on_loading() {
    let one = || {
        hlo(
            1,
            "m",
            None,
            vec![comp(
                1,
                "a",
                vec![inst(1, "x", "parameter", shape(T::F32, &[]), &[])],
            )],
        )
    };
    let mut no_entry = one();
    no_entry.hlo_module.as_mut().unwrap().entry_computation_id = 9;
    assert_eq!(
        error_of(HloModule::new("e", no_entry)),
        "e: the entry computation id 9 names no computation"
    );
    let mut bad_call = one();
    bad_call.hlo_module.as_mut().unwrap().computations[0].instructions[0].called_computation_ids =
        vec![1, 9];
    assert_eq!(
        error_of(HloModule::new("c", bad_call)),
        "c: instruction `x`: calls computation 9, which does not exist"
    );
    // A module without computations has no entry to name.
    assert!(HloModule::new("n", hlo(1, "m", None, vec![])).is_ok());
}

#[test]
fn collectives_with_impossible_results_are_refused() {
    let module = |result: ShapeProto| {
        let entry = comp(
            1,
            "main",
            vec![
                inst(1, "p", "parameter", shape(T::F32, &[4]), &[]),
                with_groups(inst(2, "ar", "all-reduce", result, &[1]), &[&[0, 1]]),
            ],
        );
        HloModule::new("d", hlo(1, "m", None, vec![entry])).unwrap()
    };
    let err = |result| error_of(module(result).instruction("ar").unwrap().collective());
    assert_eq!(
        err(shape(T::F32, &[1 << 40, 1 << 40])),
        "d: instruction `ar`: result shape: size overflows 64 bits"
    );
    assert_eq!(
        err(shape(T::F32, &[-1])),
        "d: instruction `ar`: result shape: negative dimension -1"
    );
    let fine = module(tuple(vec![shape(T::F32, &[4]), shape(T::Token, &[])]));
    let c = fine
        .instruction("ar")
        .unwrap()
        .collective()
        .unwrap()
        .unwrap();
    assert_eq!((c.group_size, c.message_bytes), (2, 16));
}

// ---------------------------------------------------------------- archives and program keys

const AFTER: &str = "sm_9.0_gpu_after_optimizations.hlo.pb.xz";

fn small(id: i64, name: &str, fingerprint: Option<&str>) -> Vec<u8> {
    let entry = comp(
        1,
        "main",
        vec![
            inst(1, "p", "parameter", shape(T::F32, &[256]), &[]),
            with_groups(
                inst(
                    2,
                    "all-reduce-start",
                    "all-reduce-start",
                    shape(T::F32, &[256]),
                    &[1],
                ),
                &[&[0, 1]],
            ),
        ],
    );
    hlo(id, name, fingerprint, vec![entry]).encode_to_vec()
}

fn dump(id: u64, name: &str, stage: &str) -> String {
    format!("dump/module_{id:04}.{name}.{stage}")
}

/// A single-profile archive: after- and before-optimizations dumps of program 7, a
/// plain `.hlo.pb` without fingerprint, a dump whose id disagrees with its name, a
/// module name with a dot, and other files in `dump/`.
fn single_members() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            dump(7, "jit_step", AFTER),
            common::xz(&small(7, "jit_step", Some("after7"))),
        ),
        (
            dump(7, "jit_step", "before_optimizations.hlo.pb.xz"),
            common::xz(&small(7, "jit_step", Some("before7"))),
        ),
        (
            dump(7, "jit_step", "autotune_results.pbtxt.xz"),
            common::xz(b"results {}"),
        ),
        (
            dump(12, "jit_plain", "sm_9.0_gpu_after_optimizations.hlo.pb"),
            small(12, "jit_plain", None),
        ),
        (
            dump(14, "jit_liar", AFTER),
            common::xz(&small(15, "jit_liar", Some("x"))),
        ),
        (
            dump(16, "jit_f.g", AFTER),
            common::xz(&small(16, "jit_f.g", Some("dotted"))),
        ),
        (
            "report_nvtx_pushpop_trace.csv.xz".to_string(),
            common::xz(b""),
        ),
    ]
}

fn zip_archive(name: &str, members: &[(String, Vec<u8>)]) -> Archive {
    let refs: Vec<(&str, &[u8])> = members
        .iter()
        .map(|(n, b)| (n.as_str(), b.as_slice()))
        .collect();
    let bytes = common::zip(&refs, false);
    let mut spool = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut spool, &bytes).unwrap();
    std::io::Seek::rewind(&mut spool).unwrap();
    Archive::from_spool(format!("{name}.zip"), name, spool, &Progress::none()).unwrap()
}

#[test]
fn dump_names_are_parsed_like_nsys_jax() {
    assert_eq!(
        parse_dump_name(
            "module_0040.pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations.hlo.pb.xz"
        ),
        Some((40, "pjit__wrapped_step_fn.sm_8.0_gpu_after_optimizations"))
    );
    assert_eq!(
        parse_dump_name("module_12345.jit_f.before_optimizations.hlo.pb"),
        Some((12345, "jit_f.before_optimizations"))
    );
    assert_eq!(
        parse_dump_name("module_0040.pjit__wrapped_step_fn.autotune_results.pbtxt.xz"),
        None
    );
    assert_eq!(parse_dump_name("module_x.jit_f.hlo.pb.xz"), None);
    assert_eq!(parse_dump_name("other.hlo.pb.xz"), None);
}

#[test]
fn program_keys_are_fingerprints_of_the_after_optimizations_dump() {
    let mut archive = zip_archive("rank0", &single_members());
    let mut dumps = Dumps::new(&archive);
    assert!(!dumps.is_empty());
    let mut key = |id, name: &str| dumps.program_key(&mut archive, "rank0", id, name).unwrap();
    assert_eq!(
        key(Some(7), "jit_step"),
        ProgramKey::Fingerprint("after7".into())
    );
    assert_eq!(key(Some(7), "jit_step").to_string(), "after7");
    // no fingerprint: the program id; plain .hlo.pb is read too
    assert_eq!(key(Some(12), "jit_plain"), ProgramKey::Id(12));
    assert_eq!(key(Some(12), "jit_plain").to_string(), "12");
    // no program id (autotuning), no dump, or a dump of another module name
    assert_eq!(key(None, "jit_step_autotune"), ProgramKey::Unknown);
    assert_eq!(key(Some(13), "jit_gone"), ProgramKey::Missing(13));
    assert_eq!(key(Some(7), "jit_other"), ProgramKey::Missing(7));
    assert_eq!(ProgramKey::Missing(13).to_string(), "unknown");
    // module names may contain dots
    assert_eq!(
        key(Some(16), "jit_f.g"),
        ProgramKey::Fingerprint("dotted".into())
    );
    let err = error_of(dumps.program_key(&mut archive, "rank0", Some(14), "jit_liar"));
    assert_eq!(
        err,
        format!(
            "rank0.zip!{}: the dump is of program 15, its name says 14",
            dump(14, "jit_liar", AFTER)
        )
    );
}

#[test]
fn modules_are_read_once_and_looked_up() {
    let mut archive = zip_archive("rank0", &single_members());
    let mut dumps = Dumps::new(&archive);
    let a = dumps
        .load(&mut archive, "rank0", 7, "jit_step")
        .unwrap()
        .unwrap();
    let b = dumps
        .load(&mut archive, "rank0", 7, "jit_step")
        .unwrap()
        .unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(
        a.place(),
        format!("rank0.zip!{}", dump(7, "jit_step", AFTER))
    );
    let c = collective(&a, "all-reduce-start");
    assert_eq!(
        (c.kind, c.group_size, c.message_bytes),
        (CollectiveKind::AllReduce, 2, 1024)
    );
    assert!(
        dumps
            .load(&mut archive, "rank0", 99, "jit_step")
            .unwrap()
            .is_none()
    );
    let empty = zip_archive("none", &[("report.csv".to_string(), vec![])]);
    assert!(Dumps::new(&empty).is_empty());
}

#[test]
fn combine_archives_have_dumps_per_profile_or_shared() {
    let members = vec![
        (
            format!("{}/rank0", dump(7, "jit_step", AFTER)),
            common::xz(&small(7, "jit_step", Some("fp-rank0"))),
        ),
        (
            format!("{}/rank1", dump(7, "jit_step", AFTER)),
            common::xz(&small(7, "jit_step", Some("fp-rank1"))),
        ),
        (
            dump(8, "jit_shared", AFTER),
            common::xz(&small(8, "jit_shared", Some("fp-shared"))),
        ),
    ];
    let mut archive = zip_archive("combined", &members);
    let mut dumps = Dumps::new(&archive);
    let mut key =
        |profile: &str, id, name: &str| dumps.program_key(&mut archive, profile, Some(id), name);
    assert_eq!(key("rank0", 7, "jit_step").unwrap().to_string(), "fp-rank0");
    assert_eq!(key("rank1", 7, "jit_step").unwrap().to_string(), "fp-rank1");
    assert_eq!(
        key("rank0", 8, "jit_shared").unwrap().to_string(),
        "fp-shared"
    );
    assert_eq!(
        key("rank1", 8, "jit_shared").unwrap().to_string(),
        "fp-shared"
    );
    let err = error_of(key("rank2", 7, "jit_step"));
    assert_eq!(
        err,
        format!(
            "combined.zip!{}: no copy for profile `rank2` (the archive has one for rank0, rank1)",
            dump(7, "jit_step", AFTER)
        )
    );
    let shared0 = dumps
        .load(&mut archive, "rank0", 8, "jit_shared")
        .unwrap()
        .unwrap();
    let shared1 = dumps
        .load(&mut archive, "rank1", 8, "jit_shared")
        .unwrap()
        .unwrap();
    assert!(
        Arc::ptr_eq(&shared0, &shared1),
        "a shared dump is read once"
    );
}

#[test]
fn extracted_archives_work_like_zipped_ones() {
    let dir = common::tempdir();
    let root = dir.path().join("rank3");
    for (name, bytes) in single_members() {
        common::write(&root, &name, &bytes);
    }
    let mut archive = Archive::open_dir(&root, &Progress::none()).unwrap();
    let mut dumps = Dumps::new(&archive);
    let key = dumps
        .program_key(&mut archive, "rank3", Some(7), "jit_step")
        .unwrap();
    assert_eq!(key, ProgramKey::Fingerprint("after7".into()));
}

#[test]
fn corrupt_dumps_are_errors_naming_the_member() {
    let good = common::xz(&small(3, "jit_g", Some("g")));
    let members = vec![
        (dump(3, "jit_g", AFTER), common::xz(b"\x0a\x05abc")),
        (dump(4, "jit_h", AFTER), good[..good.len() / 2].to_vec()),
        (dump(5, "jit_k", AFTER), common::xz(b"")),
    ];
    let mut archive = zip_archive("bad", &members);
    let mut dumps = Dumps::new(&archive);
    let err = error_of(dumps.program_key(&mut archive, "bad", Some(3), "jit_g"));
    assert!(
        err.starts_with(&format!(
            "bad.zip!{}: not a valid XLA HloProto",
            dump(3, "jit_g", AFTER)
        )),
        "{err}"
    );
    let err = error_of(dumps.program_key(&mut archive, "bad", Some(4), "jit_h"));
    assert!(
        err.starts_with(&format!("bad.zip!{}: ", dump(4, "jit_h", AFTER))),
        "{err}"
    );
    assert!(
        err.contains("truncated") || err.contains("corrupt"),
        "{err}"
    );
    let err = error_of(dumps.program_key(&mut archive, "bad", Some(5), "jit_k"));
    assert_eq!(
        err,
        format!(
            "bad.zip!{}: HloProto without an hlo_module",
            dump(5, "jit_k", AFTER)
        )
    );
}

#[test]
fn several_dumps_for_one_program_are_an_error() {
    let members = vec![
        (
            dump(7, "jit_step", AFTER),
            common::xz(&small(7, "jit_step", Some("a"))),
        ),
        (
            dump(7, "jit_step", "sm_9.0_gpu_after_optimizations.hlo.pb"),
            small(7, "jit_step", Some("b")),
        ),
    ];
    let mut archive = zip_archive("two", &members);
    let mut dumps = Dumps::new(&archive);
    let err = error_of(dumps.program_key(&mut archive, "two", Some(7), "jit_step"));
    assert!(
        err.starts_with("two.zip!dump/: several HLO dumps for XlaModule 7 (jit_step)"),
        "{err}"
    );
}

// ---------------------------------------------------------------- conformance on real archives

fn open_real(dir: &std::path::Path, proc: usize) -> (Archive, String) {
    let profile = format!("pax_fsdp4_4proc_proc{proc}");
    let path = dir.join(format!("{profile}.zip"));
    let file = std::fs::File::open(&path).unwrap();
    (
        Archive::open_zip(&path, file, &Progress::none()).unwrap(),
        profile,
    )
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_program_keys_match_nsys_jax() {
    let Some(dir) = common::shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference-nsys-jax.json")).unwrap())
            .unwrap();
    let steady = reference["combined_4proc"]["steady_modules"]
        .as_object()
        .unwrap();
    let mut keys = Vec::new();
    for proc in 0..4 {
        let (mut archive, profile) = open_real(&dir, proc);
        let mut dumps = Dumps::new(&archive);
        let key = dumps
            .program_key(&mut archive, &profile, Some(40), "pjit__wrapped_step_fn")
            .unwrap();
        let ProgramKey::Fingerprint(fp) = &key else {
            panic!("proc{proc}: {key:?}");
        };
        assert_eq!(
            steady[fp.as_str()]["name"],
            "pjit__wrapped_step_fn",
            "proc{proc}"
        );
        keys.push(fp.clone());
        // Autotuning executions and programs without a dump.
        assert_eq!(
            dumps
                .program_key(&mut archive, &profile, None, "x")
                .unwrap(),
            ProgramKey::Unknown
        );
        assert_eq!(
            dumps
                .program_key(&mut archive, &profile, Some(2), "jit__psum")
                .unwrap(),
            ProgramKey::Missing(2)
        );
    }
    // Process 3 compiled a different step function; nsys-jax keeps it apart.
    assert_eq!(keys[0], "25fa0b3e673a92036f22550cd7bcb068");
    assert_eq!(keys[1], keys[0]);
    assert_eq!(keys[2], keys[0]);
    assert_eq!(keys[3], "04555b1419fd4e5b8933dc47fbf80dbb");
    // Every module of proc0 nsys-jax names has a dump with its fingerprint.
    let (mut archive, profile) = open_real(&dir, 0);
    let mut dumps = Dumps::new(&archive);
    let raw = reference["proc0"]["raw_modules"].as_object().unwrap();
    let mut found = std::collections::BTreeSet::new();
    for member in archive.members().to_vec() {
        let file = member.trim_start_matches("dump/");
        let Some((id, rest)) = parse_dump_name(file) else {
            continue;
        };
        let Some(name) = rest.strip_suffix(".sm_8.0_gpu_after_optimizations") else {
            continue;
        };
        let key = dumps
            .program_key(&mut archive, &profile, Some(id), name)
            .unwrap();
        assert_eq!(raw[key.to_string().as_str()]["name"], name, "{member}");
        found.insert(key.to_string());
    }
    let expected: std::collections::BTreeSet<String> =
        raw.keys().filter(|k| *k != "unknown").cloned().collect();
    assert_eq!(found, expected);
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_communication_thunks_and_message_sizes_match_nsys_jax() {
    let Some(dir) = common::shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("reference-nsys-jax.json")).unwrap())
            .unwrap();
    let busbw: std::collections::BTreeSet<String> = reference["combined_4proc"]["busbw_gbps"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    for proc in [0, 3] {
        let (mut archive, profile) = open_real(&dir, proc);
        let mut dumps = Dumps::new(&archive);
        let m = dumps
            .load(&mut archive, &profile, 40, "pjit__wrapped_step_fn")
            .unwrap()
            .unwrap();
        // The thunks are the instructions of the entry computation.
        let entry = m.entry_id();
        let mut seen = std::collections::BTreeSet::new();
        let mut count = 0;
        for inst in m.computation_instructions(entry).unwrap() {
            let Some(c) = inst.collective().unwrap() else {
                continue;
            };
            count += 1;
            assert!(
                matches!(
                    c.kind,
                    CollectiveKind::AllGather
                        | CollectiveKind::ReduceScatter
                        | CollectiveKind::AllReduce
                ),
                "{}: {c:?}",
                inst.name()
            );
            assert_eq!(c.group_size, 4, "{}", inst.name());
            let key = format!("{}/{}", c.kind, c.message_bytes);
            assert!(
                busbw.contains(&key),
                "proc{proc} {}: {key} not in the reference",
                inst.name()
            );
            seen.insert(key);
        }
        assert_eq!(count, 23, "proc{proc}");
        // The step function's collectives are every size nsys-jax measured.
        assert_eq!(seen, busbw, "proc{proc}");
        // The reduce-scatters are launched by async-start and found inside it.
        let rs = m.instruction("reduce-scatter-start").unwrap();
        assert_eq!(rs.opcode(), "async-start");
        assert_eq!(
            rs.communication().unwrap().unwrap().opcode(),
            "reduce-scatter"
        );
        assert!(
            !m.instruction("all-gather-done")
                .unwrap()
                .is_communication()
                .unwrap()
        );
    }
}

#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn real_stack_frames_name_the_archived_sources() {
    let Some(dir) = common::shared_data("pax_fsdp4_4proc") else {
        return;
    };
    let (mut archive, profile) = open_real(&dir, 0);
    let mut dumps = Dumps::new(&archive);
    let m = dumps
        .load(&mut archive, &profile, 40, "pjit__wrapped_step_fn")
        .unwrap()
        .unwrap();
    let mut with_frames = 0;
    let mut files = std::collections::BTreeSet::new();
    for inst in m.instructions() {
        let frames = inst.stack_frames().unwrap();
        if frames.is_empty() {
            continue;
        }
        with_frames += 1;
        assert_eq!(
            frames[0].to_string(),
            "/opt/paxml/paxml/main.py:585[<module>]",
            "{}",
            inst.name()
        );
        files.extend(frames.iter().map(|f| f.file.to_string()));
    }
    assert!(with_frames > 1000, "{with_frames}");
    for file in files {
        let source = format!("sources{file}");
        assert!(
            archive.members().contains(&source),
            "{source} not in the archive"
        );
    }
}

// ------------------------------------------- the order collectives run in (schedule)

/// A module whose entry runs: an all-gather-start, a while loop (trip count `trips`, none
/// when `None`) whose body runs an all-reduce, a call into a computation with a
/// reduce-scatter inside an async-start, and a host offload (no NCCL range).
/// Computations: 1 add; 2 async reduce-scatter; 3 loop body; 4 loop condition; 5 called;
/// 6 offload; 10 entry. `scheduled`: the computations given a sequence.
fn scheduled_module(trips: Option<&str>, scheduled: &[i64]) -> HloModule {
    use njx::hlo::proto::{HloScheduleProto, hlo_schedule_proto::InstructionSequence};
    let f = || shape(T::F32, &[1024]);
    let add = comp(1, "add", vec![inst(1, "add.1", "add", f(), &[])]);
    let rs = comp(
        2,
        "async_rs",
        vec![calls(
            with_groups(
                inst(21, "reduce-scatter.3", "reduce-scatter", f(), &[]),
                &[&[0, 1]],
            ),
            &[1],
        )],
    );
    let body = comp(
        3,
        "body",
        vec![calls(
            with_groups(inst(31, "all-reduce.2", "all-reduce", f(), &[]), &[&[0, 1]]),
            &[1],
        )],
    );
    let cond = comp(4, "cond", vec![inst(41, "lt.1", "compare", f(), &[])]);
    let called = comp(
        5,
        "called",
        vec![
            calls(inst(51, "async-start.1", "async-start", f(), &[]), &[2]),
            inst(52, "async-done.1", "async-done", f(), &[51]),
        ],
    );
    let offload = comp(
        6,
        "offload",
        vec![
            inst(62, "p.0", "parameter", host(f()), &[]),
            inst(63, "p.1", "parameter", f(), &[]),
            inst(
                61,
                "dynamic-update-slice.1",
                "dynamic-update-slice",
                host(f()),
                &[62, 63],
            ),
        ],
    );
    let mut loop_ = calls(inst(102, "while.1", "while", f(), &[]), &[3, 4]);
    if let Some(n) = trips {
        loop_.backend_config = format!(r#"{{"known_trip_count":{{"n":"{n}"}}}}"#).into_bytes();
    }
    let entry = comp(
        10,
        "main",
        vec![
            with_groups(
                inst(101, "all-gather-start.1", "all-gather-start", f(), &[]),
                &[&[0, 1]],
            ),
            inst(103, "all-gather-done.1", "all-gather-done", f(), &[101]),
            loop_,
            calls(inst(104, "call.1", "call", f(), &[]), &[5]),
            calls(inst(105, "fusion.9", "fusion", f(), &[]), &[6]),
        ],
    );
    let mut proto = hlo(
        7,
        "jit_step",
        None,
        vec![add, rs, body, cond, called, offload, entry],
    );
    let order = |c: &HloComputationProto| c.instructions.iter().map(|i| i.id).collect();
    let module = proto.hlo_module.as_mut().unwrap();
    let sequences = module
        .computations
        .iter()
        .filter(|c| scheduled.contains(&c.id))
        .map(|c| {
            (
                c.id,
                InstructionSequence {
                    instruction_ids: order(c),
                },
            )
        })
        .collect();
    module.schedule = Some(HloScheduleProto { sequences });
    HloModule::new("dump", proto).unwrap()
}

fn order_of(m: &HloModule) -> Result<Vec<String>, String> {
    match m.collective_order().unwrap() {
        CollectiveOrder::Known(insts) => Ok(insts.iter().map(|i| i.name().to_string()).collect()),
        CollectiveOrder::Unknown(why) => Err(why),
    }
}

#[test]
fn collectives_run_in_schedule_order_through_loops_and_calls() {
    let m = scheduled_module(Some("3"), &[3, 4, 5, 10]);
    assert_eq!(
        order_of(&m).unwrap(),
        [
            "all-gather-start.1",
            "all-reduce.2",
            "all-reduce.2",
            "all-reduce.2",
            "reduce-scatter.3"
        ]
    );
}

#[test]
fn the_order_is_unknown_where_the_dump_cannot_tell_it() {
    let why = order_of(&scheduled_module(None, &[3, 4, 5, 10])).unwrap_err();
    assert_eq!(
        why,
        "while loop `while.1` runs collectives and has no known trip count"
    );
    let why = order_of(&scheduled_module(Some("2"), &[3, 4, 10])).unwrap_err();
    assert_eq!(
        why,
        "computation `called` runs collectives but is not in the schedule"
    );
    let why = order_of(&scheduled_module(Some("2"), &[])).unwrap_err();
    assert_eq!(why, "its dump has no schedule");
    // A trip count that would unroll past the bound is refused, not run.
    let why = order_of(&scheduled_module(Some("99999999999"), &[3, 4, 5, 10])).unwrap_err();
    assert!(why.contains("more than 1048576 collectives"), "{why}");
}

#[test]
fn a_huge_loop_around_a_loop_of_no_trips_ends_at_once() {
    use njx::hlo::proto::{HloScheduleProto, hlo_schedule_proto::InstructionSequence};
    let f = || shape(T::F32, &[4]);
    let looped = |id: i64, name: &str, body: i64, cond: i64, trips: &str| {
        let mut w = calls(inst(id, name, "while", f(), &[]), &[body, cond]);
        w.backend_config = format!(r#"{{"known_trip_count":{{"n":"{trips}"}}}}"#).into_bytes();
        w
    };
    let computations = vec![
        comp(1, "add", vec![inst(1, "add.1", "add", f(), &[])]),
        comp(
            3,
            "inner_body",
            vec![calls(
                with_groups(inst(31, "all-reduce.1", "all-reduce", f(), &[]), &[&[0, 1]]),
                &[1],
            )],
        ),
        comp(4, "inner_cond", vec![inst(41, "lt.1", "compare", f(), &[])]),
        comp(5, "outer_body", vec![looped(51, "while.inner", 3, 4, "0")]),
        comp(6, "outer_cond", vec![inst(61, "lt.2", "compare", f(), &[])]),
        comp(
            10,
            "main",
            vec![looped(101, "while.outer", 5, 6, "18446744073709551615")],
        ),
    ];
    let mut proto = hlo(7, "jit_step", None, computations);
    let module = proto.hlo_module.as_mut().unwrap();
    let sequences = module
        .computations
        .iter()
        .map(|c| {
            let instruction_ids = c.instructions.iter().map(|i| i.id).collect();
            (c.id, InstructionSequence { instruction_ids })
        })
        .collect();
    module.schedule = Some(HloScheduleProto { sequences });
    let m = HloModule::new("dump", proto).unwrap();
    assert_eq!(order_of(&m).unwrap(), Vec::<String>::new());
}
