//! Structure-aware mutations of XLA `HloProto` dumps: ids that repeat or point nowhere,
//! operands and called computations that loop, collective opcodes with every form of
//! replica groups, shapes with huge, negative or many dimensions and odd element types,
//! host memory spaces, stack frame tables whose references loop or run off the end,
//! fingerprints with separators.

use crate::rng::Rng;
use njx::hlo::proto::{
    self as p, CollectiveDeviceListProto, HloInstructionProto, HloProto, IotaReplicaGroupListProto,
    LayoutProto, MeshAxesReplicaGroupListProto, MeshProto, OpMetadata, ReplicaGroup, ShapeProto,
    hlo_instruction_proto::ReplicaGroupList,
};

const OPCODES: &[&str] = &[
    "all-gather",
    "all-gather-start",
    "all-gather-done",
    "all-reduce",
    "all-reduce-start",
    "all-reduce-done",
    "all-to-all",
    "collective-broadcast",
    "collective-permute",
    "collective-permute-start",
    "reduce-scatter",
    "async-start",
    "async-done",
    "fusion",
    "dynamic-slice",
    "dynamic-update-slice",
    "custom-call",
    "parameter",
    "tuple",
    "get-tuple-element",
    "while",
    "conditional",
    "call",
    "",
];

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    3,
    7,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    1 << 62,
    i32::MAX as i64,
    1 << 32,
    1 << 62,
    4096,
];

/// Changes the proto in 1 to `rounds` ways.
pub fn mutate(rng: &mut Rng, proto: &mut HloProto, rounds: usize) {
    for _ in 0..rng.small(rounds) {
        one(rng, proto);
    }
}

fn all_ids(m: &p::HloModuleProto) -> (Vec<i64>, Vec<i64>, Vec<String>) {
    let comps = m.computations.iter().map(|c| c.id).collect();
    let insts = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.id))
        .collect();
    let names = m
        .computations
        .iter()
        .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
        .collect();
    (comps, insts, names)
}

fn some_int(rng: &mut Rng, known: &[i64]) -> i64 {
    if !known.is_empty() && rng.chance(0.6) {
        *rng.pick(known)
    } else {
        *rng.pick(INTS)
    }
}

fn one(rng: &mut Rng, proto: &mut HloProto) {
    if rng.chance(0.03) {
        proto.hlo_module = None;
        return;
    }
    let module = proto.hlo_module.get_or_insert_with(Default::default);
    let (comp_ids, inst_ids, names) = all_ids(module);
    match rng.below(10) {
        0 => {
            // module level
            match rng.below(6) {
                0 => module.id = some_int(rng, &[]),
                1 => module.entry_computation_id = some_int(rng, &comp_ids),
                2 => {
                    let fp = match rng.below(5) {
                        0 => String::new(),
                        1 => "a,b\n\"c\"".into(),
                        2 => "x".repeat(5000),
                        3 => "unknown".into(),
                        _ => "0123456789abcdef0123456789abcdef".into(),
                    };
                    module
                        .frontend_attributes
                        .get_or_insert_with(Default::default)
                        .map
                        .insert("fingerprint_before_lhs".into(), fp);
                }
                3 => module.name = rng.pick(crate::text::TOKENS).to_string(),
                4 => {
                    // a computation twice, or one gone
                    if !module.computations.is_empty() {
                        let c = rng.below(module.computations.len());
                        if rng.chance(0.5) {
                            let copy = module.computations[c].clone();
                            module.computations.push(copy);
                        } else {
                            module.computations.remove(c);
                        }
                    }
                }
                _ => {
                    proto.buffer_assignment = Some(p::BufferAssignmentProto {
                        logical_buffers: vec![p::LogicalBufferProto {
                            id: some_int(rng, &[]),
                            size: some_int(rng, &[]),
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                }
            }
        }
        1 => {
            // stack frame index
            let index = module
                .stack_frame_index
                .get_or_insert_with(Default::default);
            let frames = index.stack_frames.len() as i64;
            let small = |rng: &mut Rng| -> i32 {
                *rng.pick(&[
                    0,
                    1,
                    2,
                    3,
                    -1,
                    i32::MAX,
                    i32::MIN,
                    frames as i32,
                    frames as i32 + 1,
                ])
            };
            match rng.below(5) {
                0 => index
                    .stack_frames
                    .push(p::stack_frame_index_proto::StackFrame {
                        file_location_id: small(rng),
                        parent_frame_id: small(rng),
                    }),
                1 => {
                    if let Some(f) = index.stack_frames.get_mut(rng.below(frames as usize)) {
                        f.parent_frame_id = small(rng);
                    }
                }
                2 => index
                    .file_locations
                    .push(p::stack_frame_index_proto::FileLocation {
                        file_name_id: small(rng),
                        function_name_id: small(rng),
                        line: small(rng),
                        column: small(rng),
                    }),
                3 => index
                    .file_names
                    .push(rng.pick(crate::text::TOKENS).to_string()),
                _ => {
                    if rng.chance(0.5) {
                        index.file_names.clear();
                    } else {
                        index.stack_frames.clear();
                    }
                }
            }
        }
        _ => {
            // an instruction
            let nc = module.computations.len();
            if nc == 0 {
                module.computations.push(p::HloComputationProto {
                    id: 1,
                    name: "main".into(),
                    ..Default::default()
                });
                return;
            }
            let comp = &mut module.computations[rng.below(nc)];
            if comp.instructions.is_empty() || rng.chance(0.05) {
                comp.instructions.push(HloInstructionProto {
                    id: some_int(rng, &[]),
                    name: format!("new.{}", rng.below(100)),
                    opcode: rng.pick(OPCODES).to_string(),
                    ..Default::default()
                });
                return;
            }
            if rng.chance(0.05) {
                comp.id = some_int(rng, &comp_ids);
                return;
            }
            let ni = comp.instructions.len();
            let i = rng.below(ni);
            if rng.chance(0.05) {
                let copy = comp.instructions[i].clone();
                comp.instructions.push(copy);
                return;
            }
            let inst = &mut comp.instructions[i];
            instruction(rng, inst, &comp_ids, &inst_ids, &names);
        }
    }
}

fn instruction(
    rng: &mut Rng,
    inst: &mut HloInstructionProto,
    comp_ids: &[i64],
    inst_ids: &[i64],
    names: &[String],
) {
    match rng.below(14) {
        0 => inst.id = some_int(rng, inst_ids),
        1 => {
            if rng.chance(0.3) {
                inst.operand_ids.clear();
            }
            for _ in 0..rng.small(3) {
                inst.operand_ids.push(some_int(rng, inst_ids));
            }
        }
        2 => {
            if rng.chance(0.3) {
                inst.called_computation_ids.clear();
            }
            inst.called_computation_ids.push(some_int(rng, comp_ids));
        }
        3 | 4 => inst.opcode = rng.pick(OPCODES).to_string(),
        5 => {
            inst.name = if !names.is_empty() && rng.chance(0.5) {
                rng.pick(names).clone()
            } else {
                rng.pick(crate::text::TOKENS).to_string()
            }
        }
        6 | 7 => {
            let shape = inst.shape.get_or_insert_with(Default::default);
            self::shape(rng, shape, 0);
        }
        8 => {
            let m = inst.metadata.get_or_insert_with(OpMetadata::default);
            match rng.below(3) {
                0 => m.stack_frame_id = *rng.pick(&[0, 1, 2, 3, -1, i32::MAX, i32::MIN, 100]),
                1 => {
                    m.op_name = match rng.below(4) {
                        0 => String::new(),
                        1 => "/".repeat(rng.range(1, 50)),
                        2 => "jit(f)/".repeat(rng.range(1, 300)),
                        _ => format!("a;b c\n{}", rng.pick(crate::text::TOKENS)),
                    }
                }
                _ => inst.metadata = None,
            }
        }
        9 | 10 => groups(rng, inst),
        11 => {
            // host memory: the offload shapes
            let shape = inst.shape.get_or_insert_with(Default::default);
            shape.layout = Some(LayoutProto {
                memory_space: *rng.pick(&[5i64, 0, 1, -1, 5]),
                ..Default::default()
            });
        }
        12 => {
            inst.source_target_pairs.push(p::SourceTarget {
                source: some_int(rng, &[]),
                target: some_int(rng, &[]),
            });
        }
        _ => {
            inst.backend_config = (0..rng.below(64)).map(|_| rng.next() as u8).collect();
        }
    }
}

fn shape(rng: &mut Rng, s: &mut ShapeProto, depth: usize) {
    match rng.below(7) {
        0 => s.element_type = *rng.pick(&[0, 1, 11, 13, 14, 17, 21, 30, 32, 34, 99, -1, 16, 18]),
        1 => {
            s.dimensions = (0..rng.below(6))
                .map(|_| *rng.pick(&[0i64, 1, 2, 1024, -1, i64::MAX, 1 << 31, 3]))
                .collect()
        }
        2 => s.dimensions = vec![1 << 20; rng.range(1, 8)],
        3 if depth < 4 => {
            let mut t = ShapeProto {
                element_type: 13,
                ..Default::default()
            };
            for _ in 0..rng.small(3) {
                let mut inner = s.clone();
                shape(rng, &mut inner, depth + 1);
                t.tuple_shapes.push(inner);
            }
            *s = t;
        }
        4 => s.is_dynamic_dimension = vec![true; s.dimensions.len()],
        5 => {
            s.layout = Some(LayoutProto {
                minor_to_major: vec![*rng.pick(&[0i64, -1, 7])],
                element_size_in_bits: *rng.pick(&[0i64, 4, 3, -8]),
                memory_space: *rng.pick(&[0i64, 5]),
            })
        }
        _ => s.element_type = 11,
    }
}

fn group(rng: &mut Rng) -> ReplicaGroup {
    let n = *rng.pick(&[0usize, 1, 2, 3, 4, 8, 200]);
    ReplicaGroup {
        replica_ids: (0..n as i64).collect(),
    }
}

fn iota(rng: &mut Rng) -> IotaReplicaGroupListProto {
    IotaReplicaGroupListProto {
        num_replica_groups: some_int(rng, &[]),
        num_devices_per_group: some_int(rng, &[]),
        iota_reshape_dims: vec![some_int(rng, &[])],
        iota_transpose_perm: vec![*rng.pick(&[0, 1, -1])],
    }
}

fn groups(rng: &mut Rng, inst: &mut HloInstructionProto) {
    match rng.below(6) {
        0 => inst.replica_groups.clear(),
        1 => {
            for _ in 0..rng.small(3) {
                inst.replica_groups.push(group(rng));
            }
        }
        2 => {
            inst.replica_group_list = Some(ReplicaGroupList::CollectiveDeviceList(
                CollectiveDeviceListProto {
                    replica_groups: (0..rng.below(3)).map(|_| group(rng)).collect(),
                    iota_replica_group_list: rng.chance(0.5).then(|| iota(rng)),
                },
            ))
        }
        3 => inst.replica_group_list = Some(ReplicaGroupList::IotaCollectiveDeviceList(iota(rng))),
        4 => {
            let axes = (0..rng.below(4))
                .map(|k| p::mesh_proto::MeshAxis {
                    name: format!("a{k}"),
                    size: some_int(rng, &[]),
                })
                .collect();
            let refs = (0..rng.below(4))
                .map(|_| p::AxisRefProto {
                    mesh_axis_index: *rng.pick(&[0i64, 1, 2, -1, 1 << 40]),
                    sub_axis_info: rng.chance(0.3).then(|| p::axis_ref_proto::SubAxis {
                        pre_size: some_int(rng, &[]),
                        size: some_int(rng, &[]),
                    }),
                })
                .collect();
            inst.replica_group_list = Some(ReplicaGroupList::MeshAxesReplicaGroupList(
                MeshAxesReplicaGroupListProto {
                    mesh: rng.chance(0.8).then_some(MeshProto {
                        axes,
                        device_ids: Vec::new(),
                    }),
                    axes: refs,
                },
            ))
        }
        _ => inst.replica_group_list = None,
    }
}
