//! njx-heap and njx-pgle on hostile HLO dumps (issue 28): buffer assignments that do not
//! add up (negative sizes and offsets, buffers past their allocation or assigned twice,
//! ids given twice, allocation indices out of range, SHARE_WITH of itself, of no buffer,
//! in a cycle or a chain, events out of order, sums past 2^63, defining instructions named
//! ambiguously), each refused naming the dump; and HLO that is merely hostile — call-graph
//! cycles, huge fan-out (a million operands, a hundred thousand call sites, a tuple of a
//! hundred thousand buffers), overflowing and deeply nested shapes, 200,000 buffers live
//! at once, 100,000 traces — which both tools must get through within their time limits.
//!
//! Where XLA really writes something odd (a trace's allocation index from before it
//! combined its temp allocations), a note naming the dump is allowed (`RefusedOrNoted`).

use super::fixtures::*;
use super::formats::zip_raw;
use super::harness::{Case, Expect, Run};
use crate::args;
use crate::common::{f32s, write, xz};
use njx::hlo::proto::{
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto,
    HloInstructionProto, HloProto, LogicalBufferProto, PrimitiveType, ShapeProto,
    buffer_allocation_proto::Assigned, heap_simulator_trace, logical_buffer_proto,
};
use prost::Message;
use std::path::Path;

use heap_simulator_trace::event::Kind::{self, Alloc, Free, ShareWith};

fn event(kind: Kind, id: i64, canonical: i64, inst: &str) -> heap_simulator_trace::Event {
    heap_simulator_trace::Event {
        kind: kind as i32,
        buffer_id: id,
        computation_name: "main.10".into(),
        instruction_name: inst.into(),
        share_with_canonical_id: canonical,
    }
}

fn buffer(id: i64, size: i64, inst: i64) -> LogicalBufferProto {
    LogicalBufferProto {
        id,
        size,
        defined_at: Some(logical_buffer_proto::Location {
            instruction_id: inst,
            ..Default::default()
        }),
        color: 0,
    }
}

fn assigned(list: &[(i64, i64, i64)]) -> Vec<Assigned> {
    list.iter()
        .map(|&(logical_buffer_id, offset, size)| Assigned {
            logical_buffer_id,
            offset,
            size,
        })
        .collect()
}

/// [`hlo_proto`] with a buffer assignment as XLA writes one: buffers 1–5 defined by `p0`,
/// `fusion.1`, `all-reduce-start.1`, `all-reduce-done.1` (sharing 3) and `fusion.2`, 4 KiB
/// each; allocation 0 the parameter, 1 the temp buffer (2, 3 and 4: 8 KiB), 2 the output
/// (5). The trace of allocation 1 peaks at event 2 (8 KiB: 2 and 3 live).
pub fn heap_proto() -> HloProto {
    let mut p = hlo_proto();
    p.buffer_assignment = Some(BufferAssignmentProto {
        logical_buffers: vec![
            buffer(1, 4096, 100),
            buffer(2, 4096, 101),
            buffer(3, 4096, 102),
            buffer(4, 4096, 103),
            buffer(5, 4096, 104),
        ],
        buffer_allocations: vec![
            BufferAllocationProto {
                index: 0,
                size: 4096,
                is_entry_computation_parameter: true,
                assigned: assigned(&[(1, 0, 4096)]),
                ..Default::default()
            },
            BufferAllocationProto {
                index: 1,
                size: 8192,
                assigned: assigned(&[(2, 0, 4096), (3, 4096, 4096), (4, 4096, 4096)]),
                ..Default::default()
            },
            BufferAllocationProto {
                index: 2,
                size: 4096,
                maybe_live_out: true,
                assigned: assigned(&[(5, 0, 4096)]),
                ..Default::default()
            },
        ],
        heap_simulator_traces: vec![HeapSimulatorTrace {
            events: vec![
                event(Alloc, 1, 0, "p0"),
                event(Alloc, 2, 0, "fusion.1"),
                event(Alloc, 3, 0, "all-reduce-start.1"),
                event(ShareWith, 4, 3, "all-reduce-done.1"),
                event(Free, 2, 0, "all-reduce-done.1"),
                event(Alloc, 5, 0, "fusion.2"),
                event(Free, 3, 0, "fusion.2"),
                event(Free, 4, 0, "fusion.2"),
                event(Free, 5, 0, "fusion.2"),
                event(Free, 1, 0, "fusion.2"),
            ],
            whole_module_simulation: true,
            buffer_allocation_index: 1,
        }],
        ..Default::default()
    });
    p
}

fn ba(p: &mut HloProto) -> &mut BufferAssignmentProto {
    p.buffer_assignment.as_mut().unwrap()
}

fn events(p: &mut HloProto) -> &mut Vec<heap_simulator_trace::Event> {
    &mut ba(p).heap_simulator_traces[0].events
}

fn entry(p: &mut HloProto) -> &mut HloComputationProto {
    p.hlo_module
        .as_mut()
        .unwrap()
        .computations
        .last_mut()
        .unwrap()
}

/// Writes `p` as the dump of an XLA dump folder `dir/xla_dump`.
fn in_folder(d: &Path, p: &HloProto) -> String {
    write(&d.join("xla_dump"), DUMP_FILE, &p.encode_to_vec());
    d.join("xla_dump").to_str().unwrap().to_string()
}

/// Writes the fixture archive with `p` as its dump, `dir/rank0.zip`.
fn in_archive(d: &Path, p: &HloProto) -> String {
    let bytes = zip_raw(&archive_entries(&[(DUMP, xz(&p.encode_to_vec()))]), None);
    write(d, "rank0.zip", &bytes)
}

type Fix = fn(&mut HloProto);

/// Buffer assignments that do not add up: label, mutation of [`heap_proto`], what the
/// refusal names beside the dump.
fn inconsistent() -> Vec<(&'static str, Fix, &'static str)> {
    vec![
        (
            "a logical buffer of negative size",
            |p| ba(p).logical_buffers[2].size = -4096,
            "logical buffer 3: negative size",
        ),
        (
            "an allocation of negative size",
            |p| ba(p).buffer_allocations[1].size = -1,
            "buffer allocation 1: negative size",
        ),
        (
            "a buffer assigned at a negative offset",
            |p| ba(p).buffer_allocations[1].assigned[1].offset = -4096,
            "buffer 3 assigned at offset -4096",
        ),
        (
            "a buffer assigned a negative size",
            |p| ba(p).buffer_allocations[1].assigned[1].size = -4096,
            "buffer 3 assigned at offset 4096 with size -4096",
        ),
        (
            "a buffer reaching past its allocation",
            |p| ba(p).buffer_allocations[1].assigned[1].offset = 8000,
            "buffer 3 at offset 8000 of 4096 bytes reaches past",
        ),
        (
            "a buffer at offset 2^63-1",
            |p| ba(p).buffer_allocations[1].assigned[1].offset = i64::MAX,
            "buffer 3 at offset 9223372036854775807",
        ),
        (
            "two logical buffers with one id",
            |p| ba(p).logical_buffers[3].id = 3,
            "logical buffer id 3 appears twice",
        ),
        (
            "a buffer assigned in two allocations",
            |p| {
                ba(p).buffer_allocations[2]
                    .assigned
                    .extend(assigned(&[(3, 0, 4096)]))
            },
            "logical buffer 3 is assigned twice",
        ),
        (
            "an assigned buffer that is no logical buffer",
            |p| ba(p).buffer_allocations[1].assigned[0].logical_buffer_id = 99,
            "assigned buffer 99 is not a logical buffer",
        ),
        (
            "an allocation index out of range",
            |p| ba(p).buffer_allocations[2].index = 9,
            "buffer allocation 9: index out of range",
        ),
        (
            "a negative allocation index",
            |p| ba(p).buffer_allocations[2].index = -1,
            "buffer allocation -1: index out of range",
        ),
        (
            "two allocations with one index",
            |p| ba(p).buffer_allocations[2].index = 1,
            "buffer allocation index 1 appears twice",
        ),
        (
            "a negative trace allocation index",
            |p| ba(p).heap_simulator_traces[0].buffer_allocation_index = -1,
            "negative buffer_allocation_index -1",
        ),
        (
            "an event on a buffer that is no logical buffer",
            |p| events(p)[1].buffer_id = 99,
            "buffer 99 is not a logical buffer",
        ),
        (
            "SHARE_WITH itself",
            |p| events(p)[3].share_with_canonical_id = 4,
            "buffer 4 SHARE_WITH itself",
        ),
        (
            "SHARE_WITH a buffer that does not exist",
            |p| events(p)[3].share_with_canonical_id = 99,
            "buffer 4 SHARE_WITH buffer 99, which is not a logical buffer",
        ),
        (
            "SHARE_WITH in a cycle",
            |p| events(p)[2] = event(ShareWith, 3, 4, "all-reduce-start.1"),
            "SHARE_WITH in a cycle: buffer 4 shares with buffer 3",
        ),
        (
            "SHARE_WITH a shared buffer (a chain)",
            |p| events(p)[5] = event(ShareWith, 5, 4, "fusion.2"),
            "buffer 5 SHARE_WITH buffer 4, which itself shares with buffer 3",
        ),
        (
            "a buffer allocated twice",
            |p| events(p).push(event(Alloc, 2, 0, "fusion.2")),
            "buffer 2 allocated again",
        ),
        (
            "a buffer freed twice",
            |p| events(p).push(event(Free, 2, 0, "fusion.2")),
            "FREE of buffer 2, which is not live",
        ),
        (
            "a FREE before its ALLOC",
            |p| events(p).insert(0, event(Free, 2, 0, "p0")),
            "FREE of buffer 2, which is not live",
        ),
        (
            "an event of an unknown kind",
            |p| events(p)[1].kind = 9,
            "unknown kind 9 (buffer 2)",
        ),
        (
            "allocation sizes adding up past 2^63",
            |p| ba(p).buffer_allocations[1].size = i64::MAX,
            "the allocations' sizes add up past 2^63 bytes",
        ),
        (
            "a live total past 2^63",
            |p| {
                let ba = ba(p);
                for a in &mut ba.buffer_allocations {
                    a.size = 0;
                    for x in &mut a.assigned {
                        (x.offset, x.size) = (0, 0);
                    }
                }
                let temp = &mut ba.buffer_allocations[1];
                temp.size = i64::MAX;
                temp.assigned[0].size = 1 << 62;
                temp.assigned[1].size = 1 << 62;
            },
            "event 2: the live total passes 2^63 bytes",
        ),
        (
            "a defining instruction named otherwise",
            |p| {
                ba(p).logical_buffers[1]
                    .defined_at
                    .as_mut()
                    .unwrap()
                    .instruction_name = "fusion.2".into()
            },
            "logical buffer 2: defined by instruction 101 `fusion.2`",
        ),
        (
            "a defining instruction id two computations give",
            |p| {
                let twin = HloInstructionProto {
                    id: 101,
                    name: "twin.101".into(),
                    opcode: "negate".into(),
                    ..Default::default()
                };
                p.hlo_module.as_mut().unwrap().computations[2]
                    .instructions
                    .push(twin);
            },
            "logical buffer 2: defined by instruction 101, an id several computations",
        ),
        (
            "a defining instruction the module lacks",
            |p| {
                ba(p).logical_buffers[1]
                    .defined_at
                    .as_mut()
                    .unwrap()
                    .instruction_id = 999
            },
            "logical buffer 2: defined by instruction 999",
        ),
        (
            "no buffer assignment",
            |p| p.buffer_assignment = None,
            "no buffer assignment",
        ),
    ]
}

/// What XLA writes that is odd but holds together: accepted.
fn odd_but_valid() -> Vec<(&'static str, Fix)> {
    vec![
        ("the assignment as XLA writes it", |_| {}),
        ("a SHARE_WITH after its canonical buffer is freed", |p| {
            // XLA writes these (15 in the pax step function): the share counts again.
            let e = events(p);
            let free3 = e.remove(6);
            e.insert(3, free3);
        }),
        (
            "a SHARE_WITH before its canonical buffer is allocated",
            |p| {
                events(p).swap(2, 3);
            },
        ),
        ("buffers never freed", |p| {
            events(p).truncate(6);
        }),
        (
            "a trace allocation index naming an allocation without its buffers",
            |p| ba(p).heap_simulator_traces[0].buffer_allocation_index = 2,
        ),
        ("an empty trace", |p| events(p).clear()),
        ("no trace", |p| ba(p).heap_simulator_traces.clear()),
        ("a call-graph cycle: a fusion calling the entry", |p| {
            let m = p.hlo_module.as_mut().unwrap();
            m.computations[1].instructions[1].called_computation_ids = vec![10];
        }),
        ("a call-graph cycle: a computation calling itself", |p| {
            let m = p.hlo_module.as_mut().unwrap();
            m.computations[0].instructions[2].called_computation_ids = vec![1];
        }),
        (
            "the entry calling itself from a while loop of 2^64-1 trips",
            |p| {
                let e = entry(p);
                let mut w = e.instructions[0].clone();
                (w.id, w.name, w.opcode) = (105, "while.1".into(), "while".into());
                w.called_computation_ids = vec![10, 10];
                w.backend_config = br#"{"known_trip_count":{"n":"18446744073709551615"}}"#.to_vec();
                e.instructions.push(w);
            },
        ),
        ("an instruction of 1,000,000 operands", |p| {
            entry(p).instructions[1].operand_ids = vec![100; 1_000_000];
        }),
        ("100,000 instructions calling one fused computation", |p| {
            let e = entry(p);
            let template = e.instructions[1].clone();
            for k in 0..100_000 {
                let mut f = template.clone();
                (f.id, f.name) = (1000 + k, format!("fanout.{k}"));
                f.metadata = None;
                e.instructions.push(f);
            }
        }),
        ("an all-reduce of f32[2^40, 2^40] live at the peak", |p| {
            entry(p).instructions[2].shape = Some(f32s(&[1 << 40, 1 << 40]));
        }),
        ("an all-reduce of f32[2^63-1, 2^63-1]", |p| {
            entry(p).instructions[2].shape = Some(f32s(&[i64::MAX, i64::MAX]));
        }),
        ("an all-reduce of f32[-1]", |p| {
            entry(p).instructions[2].shape = Some(f32s(&[-1]));
        }),
        (
            "a buffer at index {0,…,0} of a tuple nested 60 deep",
            |p| {
                let mut shape = f32s(&[1024]);
                for _ in 0..60 {
                    shape = ShapeProto {
                        element_type: PrimitiveType::Tuple as i32,
                        tuple_shapes: vec![shape],
                        ..Default::default()
                    };
                }
                entry(p).instructions[1].shape = Some(shape);
                ba(p).logical_buffers[1]
                    .defined_at
                    .as_mut()
                    .unwrap()
                    .shape_index = vec![0; 60];
            },
        ),
        ("a buffer at a shape index that leads nowhere", |p| {
            ba(p).logical_buffers[1]
                .defined_at
                .as_mut()
                .unwrap()
                .shape_index = vec![7, -1, i64::MAX];
        }),
    ]
}

/// 200,000 buffers of `fusion.1`, allocated one after the other (each a new peak) and
/// then freed; by default (`tuple` false) each its whole result, else element k of a tuple
/// result of 200,000 elements.
fn many_buffers(p: &mut HloProto, n: i64, tuple: bool) {
    if tuple {
        entry(p).instructions[1].shape = Some(ShapeProto {
            element_type: PrimitiveType::Tuple as i32,
            tuple_shapes: vec![f32s(&[1024]); n as usize],
            ..Default::default()
        });
    }
    let ba = ba(p);
    ba.logical_buffers = (1..=n)
        .map(|k| {
            let mut b = buffer(k, 4096, 101);
            if tuple {
                b.defined_at.as_mut().unwrap().shape_index = vec![k - 1];
            }
            b
        })
        .collect();
    ba.buffer_allocations = vec![BufferAllocationProto {
        index: 0,
        size: 4096 * n,
        assigned: (1..=n)
            .map(|k| Assigned {
                logical_buffer_id: k,
                offset: 4096 * (k - 1),
                size: 4096,
            })
            .collect(),
        ..Default::default()
    }];
    ba.heap_simulator_traces = vec![HeapSimulatorTrace {
        events: (1..=n)
            .map(|k| event(Alloc, k, 0, ""))
            .chain((1..=n).map(|k| event(Free, k, 0, "")))
            .collect(),
        whole_module_simulation: true,
        buffer_allocation_index: 0,
    }];
}

pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    // njx-report takes the heaps of the programs that ran from the dumps its reading
    // decodes: one that does not add up is said, naming the dump, and the report stands.
    for (label, fix, says) in inconsistent() {
        v.push(Case::new(
            format!("report's heap: {label}"),
            "njx-report",
            Expect::RefusedOrNoted,
            move |d: &Path| {
                let mut p = heap_proto();
                fix(&mut p);
                Run::new(args![in_archive(d, &p)])
                    .name("rank0.zip")
                    .name(says)
            },
        ));
    }
    for (label, fix, says) in inconsistent() {
        v.push(Case::new(
            format!("heap: {label}"),
            "njx-heap",
            Expect::Refused,
            move |d: &Path| {
                let mut p = heap_proto();
                fix(&mut p);
                Run::new(args![in_folder(d, &p)]).name(DUMP_FILE).name(says)
            },
        ));
        v.push(Case::new(
            format!("heap, archive: {label}"),
            "njx-heap",
            Expect::Refused,
            move |d: &Path| {
                let mut p = heap_proto();
                fix(&mut p);
                let svg = d.join("heap.svg");
                Run::new(args![
                    "--view",
                    "buffers",
                    "--format",
                    "json",
                    "--svg",
                    svg.to_str().unwrap(),
                    in_archive(d, &p)
                ])
                .output(svg)
                .name(format!("rank0.zip!{DUMP}"))
                .name(says)
            },
        ));
    }
    v.push(Case::new(
        "heap: a trace allocation index past the allocations",
        "njx-heap",
        Expect::RefusedOrNoted,
        |d: &Path| {
            let mut p = heap_proto();
            ba(&mut p).heap_simulator_traces[0].buffer_allocation_index = 7;
            Run::new(args![in_folder(d, &p)])
                .name(DUMP_FILE)
                .name("buffer_allocation_index 7")
        },
    ));
    for (label, fix) in odd_but_valid() {
        for view in ["peak", "buffers", "by-source"] {
            v.push(Case::new(
                format!("heap --view {view}: {label}"),
                "njx-heap",
                Expect::Accepted,
                move |d: &Path| {
                    let mut p = heap_proto();
                    fix(&mut p);
                    Run::new(args!["--view", view, in_folder(d, &p)]).timeout(30)
                },
            ));
        }
        // njx-pgle takes the scheduling names of the instructions that ran from the dump.
        v.push(Case::new(
            format!("pgle: {label}"),
            "njx-pgle",
            Expect::Survives,
            move |d: &Path| {
                let mut p = heap_proto();
                fix(&mut p);
                Run::new(args!["--partial", in_archive(d, &p)])
                    .name("rank0.zip")
                    .timeout(30)
            },
        ));
    }
    v.push(Case::new(
        "pgle -o: the assignment as XLA writes it",
        "njx-pgle",
        Expect::Accepted,
        |d: &Path| {
            let out = d.join("pgle");
            let a = in_archive(d, &heap_proto());
            Run::new(args!["-o", out.to_str().unwrap(), a])
                .output(out.clone())
                .output(out.join(format!("{FP}.pbtxt")))
        },
    ));
    // Sizes: what a quadratic replay, a decode per buffer or a pass per trace cannot do
    // within the limit (each took minutes or more before issue 28).
    v.push(Case::new(
        "heap: 200,000 buffers live at once, each event a new peak",
        "njx-heap",
        Expect::Accepted,
        |d: &Path| {
            let mut p = heap_proto();
            many_buffers(&mut p, 200_000, false);
            Run::new(args!["--view", "by-source", in_folder(d, &p)]).timeout(20)
        },
    ));
    v.push(Case::new(
        "heap: a tuple of 100,000 elements, each a buffer live at the peak",
        "njx-heap",
        Expect::Accepted,
        |d: &Path| {
            let mut p = heap_proto();
            many_buffers(&mut p, 100_000, true);
            Run::new(args!["--view", "buffers", in_folder(d, &p)]).timeout(20)
        },
    ));
    v.push(Case::new(
        "heap: 100,000 heap simulator traces",
        "njx-heap",
        Expect::Accepted,
        |d: &Path| {
            let mut p = heap_proto();
            let trace = ba(&mut p).heap_simulator_traces[0].clone();
            ba(&mut p).heap_simulator_traces = vec![trace; 100_000];
            Run::new(args!["--view", "by-op-name", in_folder(d, &p)]).timeout(20)
        },
    ));
    v
}
