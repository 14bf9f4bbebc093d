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
    // A dump with heap simulator traces (njx-heap's seed) mostly has its buffer assignment
    // changed; the others' mutations draw exactly as before.
    if proto
        .buffer_assignment
        .as_ref()
        .is_some_and(|b| !b.heap_simulator_traces.is_empty())
        && rng.chance(0.6)
    {
        let (_, inst_ids, names) = proto.hlo_module.as_ref().map(all_ids).unwrap_or_default();
        if let Some(ba) = proto.buffer_assignment.as_mut() {
            buffer_assignment(rng, ba, &inst_ids, &names);
        }
        return;
    }
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

/// Changes a buffer assignment in one way: sizes, offsets and ids of any value (negative,
/// 2^63-1, ids of other buffers), allocation indices out of range or repeated, buffers
/// assigned twice or not at all, events of any kind on any buffer (shares of themselves,
/// of shared buffers, of nothing), events repeated, dropped or reordered, traces repeated
/// or dropped, defining instructions that are not there or named otherwise, and many more
/// buffers live at once.
fn buffer_assignment(
    rng: &mut Rng,
    ba: &mut p::BufferAssignmentProto,
    inst_ids: &[i64],
    names: &[String],
) {
    use p::heap_simulator_trace::Event;
    let ids: Vec<i64> = ba.logical_buffers.iter().map(|b| b.id).collect();
    let n_alloc = ba.buffer_allocations.len() as i64;
    let indices: Vec<i64> = (-1..=n_alloc).collect();
    match rng.below(12) {
        0 => {
            if let Some(b) = pick_mut(rng, &mut ba.logical_buffers) {
                b.size = some_int(rng, &[0, 1, 4096, -4096]);
            }
        }
        1 => {
            if let Some(b) = pick_mut(rng, &mut ba.logical_buffers) {
                b.id = some_int(rng, &ids);
            }
        }
        2 => {
            if let Some(a) = pick_mut(rng, &mut ba.buffer_allocations) {
                if rng.chance(0.5) {
                    a.index = some_int(rng, &indices);
                } else {
                    a.size = some_int(rng, &[0, 4096, 24576, -1]);
                }
            }
        }
        3 => {
            if let Some(a) = pick_mut(rng, &mut ba.buffer_allocations)
                && let Some(x) = pick_mut(rng, &mut a.assigned)
            {
                match rng.below(3) {
                    0 => x.offset = some_int(rng, &[0, 4096, 20480, -4096]),
                    1 => x.size = some_int(rng, &[0, 4096, 8192, -4096]),
                    _ => x.logical_buffer_id = some_int(rng, &ids),
                }
            }
        }
        4 => {
            // A buffer assigned once more (in its allocation or another), or not at all.
            let k = rng.below(ba.buffer_allocations.len().max(1));
            let j = rng.below(ba.buffer_allocations.len().max(1));
            let moved = ba
                .buffer_allocations
                .get_mut(k)
                .and_then(|a| (!a.assigned.is_empty()).then(|| a.assigned.remove(0)));
            if let (Some(x), Some(a)) = (moved, ba.buffer_allocations.get_mut(j)) {
                if rng.chance(0.5) {
                    a.assigned.push(x);
                }
                a.assigned.push(x);
            }
        }
        5 => {
            let trace = rng.below(ba.heap_simulator_traces.len().max(1));
            if let Some(t) = ba.heap_simulator_traces.get_mut(trace)
                && let Some(e) = pick_mut(rng, &mut t.events)
            {
                match rng.below(4) {
                    0 => e.kind = *rng.pick(&[0, 1, 2, 3, -1, i32::MAX]),
                    1 => e.buffer_id = some_int(rng, &ids),
                    2 => {
                        e.kind = 2;
                        e.share_with_canonical_id = some_int(rng, &ids);
                    }
                    _ => e.share_with_canonical_id = e.buffer_id,
                }
            }
        }
        6 => {
            // Events repeated, dropped or swapped.
            if let Some(t) = pick_mut(rng, &mut ba.heap_simulator_traces)
                && !t.events.is_empty()
            {
                let (i, j) = (rng.below(t.events.len()), rng.below(t.events.len()));
                match rng.below(3) {
                    0 => {
                        let e = t.events[i].clone();
                        t.events.insert(j, e);
                    }
                    1 => {
                        t.events.remove(i);
                    }
                    _ => t.events.swap(i, j),
                }
            }
        }
        7 => {
            if rng.chance(0.5) {
                if let Some(t) = pick_mut(rng, &mut ba.heap_simulator_traces) {
                    t.buffer_allocation_index = some_int(rng, &indices);
                }
            } else if !ba.heap_simulator_traces.is_empty() {
                let t = rng.below(ba.heap_simulator_traces.len());
                if rng.chance(0.5) {
                    let copy = ba.heap_simulator_traces[t].clone();
                    ba.heap_simulator_traces.push(copy);
                } else {
                    ba.heap_simulator_traces.remove(t);
                }
            }
        }
        8 => {
            if let Some(b) = pick_mut(rng, &mut ba.logical_buffers) {
                let at = b.defined_at.get_or_insert_with(Default::default);
                match rng.below(3) {
                    0 => at.instruction_id = some_int(rng, inst_ids),
                    1 => {
                        at.instruction_name = if names.is_empty() || rng.chance(0.2) {
                            "nowhere".into()
                        } else {
                            rng.pick(names).clone()
                        }
                    }
                    _ => {
                        at.shape_index = (0..rng.small(3))
                            .map(|_| *rng.pick(&[0, 1, -1, i64::MAX]))
                            .collect()
                    }
                }
            }
        }
        9 => {
            // A chain or a cycle of shares between two buffers of a trace.
            if ids.len() >= 2
                && let Some(t) = pick_mut(rng, &mut ba.heap_simulator_traces)
            {
                let (a, b) = (*rng.pick(&ids), *rng.pick(&ids));
                let share = |id, canonical| Event {
                    kind: 2,
                    buffer_id: id,
                    share_with_canonical_id: canonical,
                    ..Default::default()
                };
                let at = rng.below(t.events.len() + 1);
                t.events.insert(at, share(a, b));
                let at = rng.below(t.events.len() + 1);
                t.events.insert(at, share(b, a));
            }
        }
        10 => {
            // Many more buffers live at once: up to 5,000 new ones, each of the temp
            // allocation's first buffer's instruction, allocated then freed.
            let count = *rng.pick(&[10i64, 1000, 5000]);
            let base = ids.iter().copied().max().unwrap_or(0).saturating_add(1);
            let defined_at = ba
                .logical_buffers
                .first()
                .and_then(|b| b.defined_at.clone());
            let alloc = ba
                .buffer_allocations
                .iter_mut()
                .max_by_key(|a| a.assigned.len());
            if let Some(a) = alloc {
                let mut events = Vec::new();
                for k in 0..count {
                    let id = base.saturating_add(k);
                    ba.logical_buffers.push(p::LogicalBufferProto {
                        id,
                        size: 16,
                        defined_at: defined_at.clone(),
                        color: 0,
                    });
                    a.assigned.push(p::buffer_allocation_proto::Assigned {
                        logical_buffer_id: id,
                        offset: 0,
                        size: 16,
                    });
                    events.push(Event {
                        kind: 0,
                        buffer_id: id,
                        ..Default::default()
                    });
                }
                let frees: Vec<Event> = events
                    .iter()
                    .map(|e| Event {
                        kind: 1,
                        ..e.clone()
                    })
                    .collect();
                events.extend(frees);
                if let Some(t) = pick_mut(rng, &mut ba.heap_simulator_traces) {
                    let at = rng.below(t.events.len() + 1);
                    t.events.splice(at..at, events);
                }
            }
        }
        _ => {
            // A logical buffer dropped (its assignments and events dangle).
            if !ba.logical_buffers.is_empty() {
                let k = rng.below(ba.logical_buffers.len());
                ba.logical_buffers.remove(k);
            }
        }
    }
}

fn pick_mut<'a, T>(rng: &mut Rng, items: &'a mut [T]) -> Option<&'a mut T> {
    if items.is_empty() {
        None
    } else {
        let k = rng.below(items.len());
        items.get_mut(k)
    }
}
