//! The builder of njx-heap's fixtures: XLA's `BufferAssignmentProto` (logical buffers,
//! allocations and heap simulator traces) from plain tables, shared by the heap tests
//! (`tests/njx/heap.rs`) and the fuzz harness's heap seed (`tests/fuzz/seeds.rs`).

use njx::hlo::proto::{
    BufferAllocationProto, BufferAssignmentProto, HeapSimulatorTrace, LogicalBufferProto,
    buffer_allocation_proto::Assigned, heap_simulator_trace, logical_buffer_proto,
};

pub use heap_simulator_trace::event::Kind;

/// Logical buffer `id` of `size` bytes, defined by instruction `inst` at `index` of its
/// result's shape.
pub fn buffer(id: i64, size: i64, inst: i64, index: &[i64]) -> LogicalBufferProto {
    LogicalBufferProto {
        id,
        size,
        defined_at: Some(logical_buffer_proto::Location {
            instruction_id: inst,
            shape_index: index.to_vec(),
            ..Default::default()
        }),
        color: 0,
    }
}

/// Allocation `index` of `size` bytes holding `(logical buffer, offset, size)`.
pub fn allocation(index: i64, size: i64, assigned: &[(i64, i64, i64)]) -> BufferAllocationProto {
    BufferAllocationProto {
        index,
        size,
        assigned: assigned
            .iter()
            .map(|&(logical_buffer_id, offset, size)| Assigned {
                logical_buffer_id,
                offset,
                size,
            })
            .collect(),
        ..Default::default()
    }
}

/// A heap simulator event on buffer `id` (`canonical`: the buffer a `SHARE_WITH` shares),
/// made while XLA processed `computation/instruction`.
pub fn event(
    kind: Kind,
    id: i64,
    canonical: i64,
    computation: &str,
    instruction: &str,
) -> heap_simulator_trace::Event {
    heap_simulator_trace::Event {
        kind: kind as i32,
        buffer_id: id,
        computation_name: computation.into(),
        instruction_name: instruction.into(),
        share_with_canonical_id: canonical,
    }
}

/// A heap simulator trace over allocation `allocation_index`.
pub fn trace(
    events: Vec<heap_simulator_trace::Event>,
    whole_module: bool,
    allocation_index: i64,
) -> HeapSimulatorTrace {
    HeapSimulatorTrace {
        events,
        whole_module_simulation: whole_module,
        buffer_allocation_index: allocation_index,
    }
}

/// A buffer assignment of these buffers, allocations and traces.
pub fn assignment(
    logical_buffers: Vec<LogicalBufferProto>,
    buffer_allocations: Vec<BufferAllocationProto>,
    heap_simulator_traces: Vec<HeapSimulatorTrace>,
) -> BufferAssignmentProto {
    BufferAssignmentProto {
        logical_buffers,
        buffer_allocations,
        heap_simulator_traces,
        ..Default::default()
    }
}
