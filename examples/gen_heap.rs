//! A synthetic XLA after-optimizations dump whose heap simulator trace keeps N buffers
//! live at once, for timing njx-heap's replay (`scripts/bench-heap.sh`).
//!
//! ```text
//! cargo run --release --example gen_heap -- OUT_DIR N [INSTRUCTIONS]
//! ```
//!
//! Writes `OUT_DIR/module_0001.jit_heap.sm_8.0_gpu_after_optimizations.hlo.pb`: program 1
//! `jit_heap`, an entry computation of INSTRUCTIONS fusions `fusion.I` (f32[I mod 1000 +
//! 1], each with an op_name of one of 16 layers), N logical buffers, buffer K defined by
//! fusion (K - 1) mod INSTRUCTIONS + 1 (by default one fusion per buffer), all assigned to
//! one temp allocation; the trace ALLOCs them all in order (every event a new peak: the
//! worst case for a replay that snapshots the live set at each peak) and then FREEs them
//! in order. The peak is event N-1, with all N buffers live. With INSTRUCTIONS given the
//! events name no instruction (a dump of a few megabytes for 200,000 buffers).

use njx::hlo::proto::{
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, HloComputationProto,
    HloInstructionProto, HloModuleProto, HloProto, LogicalBufferProto, OpMetadata, PrimitiveType,
    ShapeProto, buffer_allocation_proto::Assigned, heap_simulator_trace, logical_buffer_proto,
};
use prost::Message;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize| {
        args.get(i)
            .map(|n| n.parse::<i64>().ok().filter(|n| *n > 0))
    };
    let (Some(out), Some(Some(n)), None | Some(Some(_))) = (args.first(), number(1), number(2))
    else {
        eprintln!("usage: gen_heap OUT_DIR N [INSTRUCTIONS]");
        return ExitCode::from(2);
    };
    let named = args.len() < 3;
    let m = number(2).flatten().unwrap_or(n);
    let of = |k: i64| (k - 1) % m + 1;
    let size = |k: i64| 4 * (k % 1000 + 1);
    let instructions = (1..=m)
        .map(|k| HloInstructionProto {
            id: k,
            name: format!("fusion.{k}"),
            opcode: "fusion".into(),
            shape: Some(ShapeProto {
                element_type: PrimitiveType::F32 as i32,
                dimensions: vec![k % 1000 + 1],
                ..Default::default()
            }),
            metadata: Some(OpMetadata {
                op_name: format!("jit(f)/layer{}/mul", k % 16),
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect();
    let mut offset = 0;
    let mut assigned = Vec::with_capacity(n as usize);
    for k in 1..=n {
        assigned.push(Assigned {
            logical_buffer_id: k,
            offset,
            size: size(of(k)),
        });
        offset += size(of(k));
    }
    let event = |kind: heap_simulator_trace::event::Kind, k: i64| heap_simulator_trace::Event {
        kind: kind as i32,
        buffer_id: k,
        computation_name: if named { "main".into() } else { String::new() },
        instruction_name: if named {
            format!("fusion.{k}")
        } else {
            String::new()
        },
        share_with_canonical_id: 0,
    };
    use heap_simulator_trace::event::Kind::{Alloc, Free};
    let proto = HloProto {
        hlo_module: Some(HloModuleProto {
            id: 1,
            name: "jit_heap".into(),
            entry_computation_id: 1,
            entry_computation_name: "main".into(),
            computations: vec![HloComputationProto {
                id: 1,
                name: "main".into(),
                instructions,
                ..Default::default()
            }],
            ..Default::default()
        }),
        buffer_assignment: Some(BufferAssignmentProto {
            logical_buffers: (1..=n)
                .map(|k| LogicalBufferProto {
                    id: k,
                    size: size(of(k)),
                    defined_at: Some(logical_buffer_proto::Location {
                        instruction_id: of(k),
                        ..Default::default()
                    }),
                    color: 0,
                })
                .collect(),
            buffer_allocations: vec![BufferAllocationProto {
                index: 0,
                size: offset,
                assigned,
                ..Default::default()
            }],
            heap_simulator_traces: vec![HeapSimulatorTrace {
                events: (1..=n)
                    .map(|k| event(Alloc, k))
                    .chain((1..=n).map(|k| event(Free, k)))
                    .collect(),
                whole_module_simulation: true,
                buffer_allocation_index: 0,
            }],
            ..Default::default()
        }),
    };
    let dir = std::path::Path::new(out);
    let path = dir.join("module_0001.jit_heap.sm_8.0_gpu_after_optimizations.hlo.pb");
    let tmp = dir.join(".gen_heap.tmp");
    let written = std::fs::create_dir_all(dir)
        .and_then(|_| std::fs::write(&tmp, proto.encode_to_vec()))
        .and_then(|_| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        eprintln!("gen_heap: {}: {e}", path.display());
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
