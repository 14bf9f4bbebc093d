//! njx-heap: a buffer assignment built here (peak, live set and breakdowns computed by
//! hand; archives and dump folders; errors), and conformance on the real pax archives.

use crate::common::heap::{Kind, allocation, assignment, buffer, trace};
use crate::common::{
    self, computation, instruction, ok, run, stderr_of, svg_texts, tempdir, write,
};
use njx::hlo::proto::{
    BufferAllocationProto, BufferAssignmentProto, HloModuleProto, HloProto, LogicalBufferProto,
    OpMetadata, PrimitiveType, ShapeProto, StackFrameIndexProto, buffer_allocation_proto::Assigned,
    heap_simulator_trace, stack_frame_index_proto,
};
use prost::Message;
use serde_json::{Value, json};
use std::collections::HashMap;

const MEMBER: &str = "dump/module_0007.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb.xz";

fn f32s(dims: &[i64]) -> ShapeProto {
    common::f32s(dims)
}

fn meta(op_name: &str, frame: i32) -> Option<OpMetadata> {
    Some(OpMetadata {
        op_name: op_name.into(),
        stack_frame_id: frame,
        ..Default::default()
    })
}

/// An event of computation `main`, made at instruction `inst`.
fn event(kind: Kind, id: i64, canonical: i64, inst: &str) -> heap_simulator_trace::Event {
    common::heap::event(kind, id, canonical, "main", inst)
}

/// Module `jit_f` (program 7): a parameter `p0` (f32[4]), fusions `a` (f32[8], op
/// `jit(f)/mul`, f.py:10) and `b` (f32[16], `jit(f)/add`, f.py:11), a bitcast `c` that
/// shares `b`'s buffer, `d` with a tuple result (its buffer at {1}: f32[4], `jit(f)/mul`,
/// no frame) and the output `out`. Allocations: 0 the parameter (16 B), 1 the temp buffer
/// (120 B: `a`, `b`, `c`, `d`), 2 the output (16 B). The trace (its allocation index
/// stale, as in older dumps) also allocates the output, which is not in the temp buffer
/// and so does not count: live totals 32, 96, 96 (the share adds nothing), 112 (the peak,
/// event 4: `a`, `b`, `d`), then down to 0.
fn module() -> HloProto {
    use heap_simulator_trace::event::Kind::*;
    let mut a = instruction(2, "a", "fusion", f32s(&[8]), &[1], &[]);
    a.metadata = meta("jit(f)/mul", 1);
    let mut b = instruction(3, "b", "fusion", f32s(&[16]), &[2], &[]);
    b.metadata = meta("jit(f)/add", 2);
    let mut c = instruction(4, "c", "bitcast", f32s(&[16]), &[3], &[]);
    c.metadata = meta("jit(f)/add", 2);
    let tuple = ShapeProto {
        element_type: PrimitiveType::Tuple as i32,
        tuple_shapes: vec![f32s(&[2]), f32s(&[4])],
        ..Default::default()
    };
    let mut d = instruction(5, "d", "fusion", tuple, &[4], &[]);
    d.metadata = meta("jit(f)/mul", 0);
    let out = instruction(6, "out", "get-tuple-element", f32s(&[4]), &[5], &[]);
    let p0 = instruction(1, "p0", "parameter", f32s(&[4]), &[], &[]);
    let loc = |line| stack_frame_index_proto::FileLocation {
        file_name_id: 1,
        function_name_id: 1,
        line,
        column: 0,
    };
    let frame = |location| stack_frame_index_proto::StackFrame {
        file_location_id: location,
        parent_frame_id: 0,
    };
    HloProto {
        hlo_module: Some(HloModuleProto {
            id: 7,
            name: "jit_f".into(),
            entry_computation_id: 1,
            entry_computation_name: "main".into(),
            computations: vec![computation(1, "main", vec![p0, a, b, c, d, out])],
            stack_frame_index: Some(StackFrameIndexProto {
                file_names: vec!["f.py".into()],
                function_names: vec!["f".into()],
                file_locations: vec![loc(10), loc(11)],
                stack_frames: vec![frame(1), frame(2)],
            }),
            ..Default::default()
        }),
        buffer_assignment: Some(assignment(
            vec![
                buffer(1, 16, 1, &[]),
                buffer(2, 32, 2, &[]),
                buffer(3, 64, 3, &[]),
                buffer(4, 64, 4, &[]),
                buffer(5, 16, 5, &[1]),
                buffer(6, 16, 6, &[]),
            ],
            vec![
                BufferAllocationProto {
                    is_entry_computation_parameter: true,
                    ..allocation(0, 16, &[(1, 0, 16)])
                },
                allocation(1, 120, &[(2, 0, 32), (3, 32, 64), (4, 32, 64), (5, 96, 16)]),
                BufferAllocationProto {
                    maybe_live_out: true,
                    ..allocation(2, 16, &[(6, 0, 16)])
                },
            ],
            vec![trace(
                vec![
                    event(Alloc, 6, 0, "out"),
                    event(Alloc, 2, 0, "a"),
                    event(Alloc, 3, 0, "b"),
                    event(ShareWith, 4, 3, "c"),
                    event(Alloc, 5, 0, "d"),
                    event(Free, 2, 0, "d"),
                    event(Free, 4, 0, "out"),
                    event(Free, 3, 0, "out"),
                    event(Free, 5, 0, "out"),
                    event(Free, 6, 0, "out"),
                ],
                true,
                5,
            )],
        )),
    }
}

/// An nsys-jax-like archive holding `proto` as program 7's after-optimizations dump.
fn archive(dir: &std::path::Path, proto: &HloProto) -> String {
    let xz = common::xz(&proto.encode_to_vec());
    write(dir, "rank0.zip", &common::zip(&[(MEMBER, &xz)], false))
}

fn json(args: &[&str]) -> Vec<Value> {
    common::json_lines(&ok("njx-heap", args))
}

#[test]
fn the_peak_is_replayed_as_xla_computes_it() {
    let dir = tempdir();
    let zip = archive(dir.path(), &module());
    let rows = json(&["--format", "json", &zip]);
    assert_eq!(rows.len(), 1);
    let mut row = rows[0].clone();
    assert!(
        row["dump"]
            .as_str()
            .unwrap()
            .ends_with(&format!("rank0.zip!{MEMBER}"))
    );
    row.as_object_mut().unwrap().remove("dump");
    assert_eq!(
        row,
        json!({
            "program": "jit_f", "program_id": 7, "trace": 0, "whole_module": true,
            "allocation": 1, "allocation_bytes": 120, "peak_bytes": 112,
            "fragmentation_bytes": 8, "peak_event": 4, "events": 10, "peak_at": "main/d",
            "live_buffers": 3, "parameter_bytes": 16, "constant_bytes": 0,
            "output_bytes": 16, "temp_bytes": 120, "total_bytes": 152
        })
    );
}

#[test]
fn the_live_buffers_at_the_peak_with_their_instructions() {
    let dir = tempdir();
    let zip = archive(dir.path(), &module());
    let rows = json(&["--view", "buffers", "--format", "json", &zip]);
    // Buffer, bytes, shape, index, instruction, op_name and source (none for `d`).
    type Row<'a> = (
        i64,
        i64,
        &'a str,
        &'a str,
        &'a str,
        &'a str,
        Option<&'a str>,
    );
    let got: Vec<Row> = rows
        .iter()
        .map(|r| {
            (
                r["buffer"].as_i64().unwrap(),
                r["bytes"].as_i64().unwrap(),
                r["shape"].as_str().unwrap(),
                r["shape_index"].as_str().unwrap(),
                r["instruction"].as_str().unwrap(),
                r["op_name"].as_str().unwrap(),
                r["source"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            (
                3,
                64,
                "f32[16]",
                "{}",
                "b",
                "jit(f)/add",
                Some("f.py:11[f]")
            ),
            (2, 32, "f32[8]", "{}", "a", "jit(f)/mul", Some("f.py:10[f]")),
            (5, 16, "f32[4]", "{1}", "d", "jit(f)/mul", None),
        ]
    );
    assert_eq!(rows[2]["source"], Value::Null);
    assert_eq!(rows[0]["percent"], json!(57.14));
    assert_eq!(rows[0]["opcode"], json!("fusion"));
}

#[test]
fn the_peak_broken_down_by_op_name_and_by_source() {
    let dir = tempdir();
    let zip = archive(dir.path(), &module());
    let csv = ok(
        "njx-heap",
        &["--view", "by-op-name", "--format", "csv", &zip],
    );
    assert_eq!(
        csv,
        "program,program_id,trace,key,bytes,percent,buffers\n\
         jit_f,7,0,jit(f)/add,64,57.14,1\n\
         jit_f,7,0,jit(f)/mul,48,42.86,2\n"
    );
    let rows = json(&["--view", "by-source", "--format", "json", &zip]);
    let got: Vec<(Option<&str>, i64)> = rows
        .iter()
        .map(|r| (r["key"].as_str(), r["bytes"].as_i64().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Some("f.py:11[f]"), 64),
            (Some("f.py:10[f]"), 32),
            (None, 16)
        ]
    );
    // The table for people names the group of buffers without a source line.
    let table = ok("njx-heap", &["--view", "by-source", &zip]);
    assert!(table.lines().any(|l| l.ends_with("(none)")), "{table}");
    // The table for people: sizes in units.
    let table = ok("njx-heap", &[&zip]);
    assert!(
        table.contains("112 B") && table.contains("120 B"),
        "{table}"
    );
}

#[test]
fn svg_draws_the_live_total_with_its_peak() {
    let dir = tempdir();
    let zip = archive(dir.path(), &module());
    let svg = dir.path().join("heap.svg");
    ok("njx-heap", &["--svg", svg.to_str().unwrap(), &zip]);
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.ends_with("</svg>\n"));
    let texts = svg_texts(&text);
    assert!(texts.iter().any(|t| t == "jit_f (7)"), "{texts:?}");
    assert!(
        texts.iter().any(|t| t == "peak 112 B at event 4"),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t == "live buffers [B]"), "{texts:?}");
    // The line and the legend's stroke are in the series' colour; axes and ticks black.
    let coloured = text
        .split("<polyline")
        .skip(1)
        .filter(|l| !l[..l.find("/>").unwrap()].contains(r##"stroke="#000000""##))
        .count();
    assert_eq!(coloured, 2);
}

#[test]
fn dump_folders_and_the_program_filter() {
    let dir = tempdir();
    let proto = module();
    let mut other = proto.clone();
    let m = other.hlo_module.as_mut().unwrap();
    m.id = 9;
    m.name = "jit_g".into();
    write(
        dir.path(),
        "module_0007.jit_f.sm_8.0_gpu_after_optimizations.hlo.pb",
        &proto.encode_to_vec(),
    );
    write(
        dir.path(),
        "module_0009.jit_g.sm_8.0_gpu_after_optimizations.hlo.pb",
        &other.encode_to_vec(),
    );
    // Before optimisation there is no buffer assignment: not read.
    write(
        dir.path(),
        "module_0009.jit_g.before_optimizations.hlo.pb",
        b"junk",
    );
    let folder = dir.path().to_str().unwrap();
    let rows = json(&["--format", "json", folder]);
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["program"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["jit_f", "jit_g"]);
    for wanted in ["jit_g", "9"] {
        let rows = json(&["--format", "json", "--program", wanted, folder]);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["program_id"], json!(9));
    }
    let out = run("njx-heap", &["--program", "jit_h", folder], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("--program jit_h"));
    // Dumps are files: stdin is refused as bad usage.
    let out = run("njx-heap", &[], b"");
    assert_eq!(out.status.code(), Some(2), "{}", stderr_of(&out));
    assert!(stderr_of(&out).contains("not stdin"));
}

#[test]
fn a_dump_without_buffer_assignment_is_an_error_naming_it() {
    let dir = tempdir();
    let mut proto = module();
    proto.buffer_assignment = None;
    let zip = archive(dir.path(), &proto);
    let out = run("njx-heap", &[&zip], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains(&format!("rank0.zip!{MEMBER}")) && err.contains("no buffer assignment"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn dangling_buffer_ids_are_errors() {
    let dir = tempdir();
    // A trace event naming no logical buffer.
    let mut proto = module();
    let ba = proto.buffer_assignment.as_mut().unwrap();
    ba.heap_simulator_traces[0].events[1].buffer_id = 99;
    let zip = archive(dir.path(), &proto);
    let out = run("njx-heap", &[&zip], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains(MEMBER) && err.contains("buffer 99 is not a logical buffer"),
        "{err}"
    );
    // A logical buffer defined by an instruction the module lacks.
    let mut proto = module();
    let ba = proto.buffer_assignment.as_mut().unwrap();
    ba.logical_buffers[2]
        .defined_at
        .as_mut()
        .unwrap()
        .instruction_id = 42;
    let zip = archive(dir.path(), &proto);
    let out = run("njx-heap", &["--view", "buffers", &zip], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(
        err.contains("logical buffer 3: defined by instruction 42"),
        "{err}"
    );
    // A FREE of a buffer that is not live.
    let mut proto = module();
    let ba = proto.buffer_assignment.as_mut().unwrap();
    ba.heap_simulator_traces[0].events.swap(1, 5);
    let zip = archive(dir.path(), &proto);
    let out = run("njx-heap", &[&zip], b"");
    assert_eq!(out.status.code(), Some(1));
    let err = stderr_of(&out);
    assert!(err.contains("FREE of buffer 2, which is not live"), "{err}");
}

/// The real dumps: every trace's peak is what its live buffers add up to, and the
/// allocation XLA sized from the simulation is never smaller than it; the temp
/// allocations hold it. The step function's numbers are XLA's on proc0.
#[test]
#[cfg_attr(njx_no_shared_data, ignore = "needs ../shared/data, the real profiles")]
fn the_pax_dumps_agree_with_their_own_allocations() {
    let Some(dir) = common::shared_data("pax_fsdp4_4proc") else {
        return;
    };
    for zip in common::pax_archives(&dir) {
        let peaks = json(&["--format", "json", &zip]);
        let buffers = json(&["--view", "buffers", "--format", "json", &zip]);
        let mut traced = 0;
        for p in &peaks {
            // A program without a heap simulator trace: the fields of a trace null.
            if p["trace"].is_null() {
                assert!(p["peak_bytes"].is_null(), "{p}");
                continue;
            }
            traced += 1;
            let (peak, alloc) = (
                p["peak_bytes"].as_i64().unwrap(),
                p["allocation_bytes"].as_i64().unwrap(),
            );
            assert!(alloc >= peak && peak > 0, "{p}");
            assert!(p["temp_bytes"].as_i64().unwrap() >= alloc, "{p}");
            let live: Vec<&Value> = buffers
                .iter()
                .filter(|b| b["program_id"] == p["program_id"] && b["trace"] == p["trace"])
                .collect();
            assert_eq!(live.len() as u64, p["live_buffers"].as_u64().unwrap());
            let sum: i64 = live.iter().map(|b| b["bytes"].as_i64().unwrap()).sum();
            assert_eq!(sum, peak, "{p}");
        }
        assert_eq!(
            traced, 2,
            "{zip}: init_model_from_seed and the step function"
        );
        let step = peaks
            .iter()
            .find(|p| p["program"] == "pjit__wrapped_step_fn")
            .unwrap();
        // Every rank runs the same program: the same plan.
        assert_eq!(step["peak_bytes"], json!(16_384_076_800_i64), "{zip}");
        assert_eq!(step["allocation_bytes"], json!(16_384_178_784_i64), "{zip}");
        assert_eq!(step["temp_bytes"], json!(16_384_178_784_i64), "{zip}");
        assert_eq!(step["parameter_bytes"], json!(376_927_268), "{zip}");
        assert_eq!(step["output_bytes"], json!(376_933_486), "{zip}");
        assert_eq!(step["total_bytes"], json!(16_761_245_927_i64), "{zip}");
        assert_eq!(step["peak_event"], json!(640), "{zip}");
        // The trace says allocation 1187 (numbered before XLA combined its temp
        // allocations); its buffers are in 1322, the temp allocation.
        assert_eq!(step["allocation"], json!(1322), "{zip}");
        assert_eq!(step["live_buffers"], json!(379), "{zip}");
    }
}

/// Runs njx-heap on `proto` (in an archive) and checks that it is refused: exit 1,
/// nothing on stdout, stderr naming the dump and every string of `wanted`.
fn refused(proto: &HloProto, wanted: &[&str]) {
    let dir = tempdir();
    let zip = archive(dir.path(), proto);
    for view in ["peak", "buffers"] {
        let out = run("njx-heap", &["--view", view, &zip], b"");
        let err = stderr_of(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty(), "{err}");
        assert!(err.contains(&format!("rank0.zip!{MEMBER}")), "{err}");
        for w in wanted {
            assert!(err.contains(w), "wanted {w:?} in: {err}");
        }
    }
}

/// [`module`] with its buffer assignment changed by `f`.
fn changed(f: impl FnOnce(&mut BufferAssignmentProto)) -> HloProto {
    let mut proto = module();
    f(proto.buffer_assignment.as_mut().unwrap());
    proto
}

#[test]
fn negative_sizes_are_refused_naming_the_buffer_or_allocation() {
    refused(
        &changed(|ba| ba.logical_buffers[2].size = -64),
        &["logical buffer 3: negative size -64"],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[1].size = -1),
        &["buffer allocation 1: negative size -1"],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[1].assigned[1].offset = -32),
        &["buffer allocation 1: buffer 3 assigned at offset -32 with size 64: negative"],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[1].assigned[1].size = -64),
        &["buffer allocation 1: buffer 3 assigned at offset 32 with size -64: negative"],
    );
}

#[test]
fn assignments_that_do_not_add_up_are_refused() {
    // Past its allocation (XLA's AddAssignment checks offset + size <= the allocation).
    refused(
        &changed(|ba| ba.buffer_allocations[1].assigned[3].offset = 105),
        &[
            "buffer allocation 1: buffer 5 at offset 105 of 16 bytes reaches past the allocation's 120 bytes",
        ],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[1].assigned[3].offset = i64::MAX),
        &["buffer 5 at offset 9223372036854775807 of 16 bytes reaches past"],
    );
    // A logical buffer id twice, a buffer in two allocations.
    refused(
        &changed(|ba| ba.logical_buffers[3].id = 3),
        &["logical buffer id 3 appears twice"],
    );
    refused(
        &changed(|ba| {
            ba.buffer_allocations[2].size = 80;
            ba.buffer_allocations[2].assigned.push(Assigned {
                logical_buffer_id: 3,
                offset: 16,
                size: 64,
            });
        }),
        &["logical buffer 3 is assigned twice (allocations 1 and 2)"],
    );
    // Allocation indices: XLA numbers its n allocations 0..n by position.
    refused(
        &changed(|ba| ba.buffer_allocations[2].index = 7),
        &["buffer allocation 7: index out of range (the assignment has 3 allocations"],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[2].index = -1),
        &["buffer allocation -1: index out of range"],
    );
    refused(
        &changed(|ba| ba.buffer_allocations[2].index = 1),
        &["buffer allocation index 1 appears twice"],
    );
    refused(
        &changed(|ba| ba.heap_simulator_traces[0].buffer_allocation_index = -2),
        &["heap simulator trace 0: negative buffer_allocation_index -2"],
    );
    // Sizes whose sum passes 64 bits: the allocation totals, the live total.
    refused(
        &changed(|ba| ba.buffer_allocations[1].size = i64::MAX),
        &["the allocations' sizes add up past 2^63 bytes"],
    );
    refused(
        &changed(|ba| {
            ba.buffer_allocations.retain(|a| a.index == 1);
            let temp = &mut ba.buffer_allocations[0];
            (temp.index, temp.size) = (0, i64::MAX);
            temp.assigned[0].size = 1 << 62;
            temp.assigned[1] = Assigned {
                logical_buffer_id: 3,
                offset: 0,
                size: 1 << 62,
            };
            ba.logical_buffers[1].size = 1 << 62;
            ba.logical_buffers[2].size = 1 << 62;
        }),
        &["heap simulator trace 0: event 2: the live total passes 2^63 bytes"],
    );
}

#[test]
fn inconsistent_shares_are_refused() {
    use heap_simulator_trace::event::Kind::*;
    let events = |f: fn(&mut Vec<heap_simulator_trace::Event>)| {
        changed(|ba| f(&mut ba.heap_simulator_traces[0].events))
    };
    // Event 3 is `c` (buffer 4) sharing `b` (buffer 3).
    refused(
        &events(|e| e[3].share_with_canonical_id = 4),
        &["heap simulator trace 0: event 3: buffer 4 SHARE_WITH itself"],
    );
    refused(
        &events(|e| e[3].share_with_canonical_id = 99),
        &["event 3: buffer 4 SHARE_WITH buffer 99, which is not a logical buffer"],
    );
    // 3 shares 4 (not yet allocated: accepted, as XLA's replay takes it), then 4 shares 3.
    refused(
        &events(|e| e[2] = event(ShareWith, 3, 4, "b")),
        &[
            "event 3: SHARE_WITH in a cycle: buffer 4 shares with buffer 3, which shares with buffer 4",
        ],
    );
    // 5 shares 4, which shares 3: XLA names the canonical buffer, never a shared one.
    refused(
        &events(|e| e[4] = event(ShareWith, 5, 4, "d")),
        &["event 4: buffer 5 SHARE_WITH buffer 4, which itself shares with buffer 3"],
    );
}

#[test]
fn events_out_of_order_are_refused() {
    use heap_simulator_trace::event::Kind::*;
    let events = |f: fn(&mut Vec<heap_simulator_trace::Event>)| {
        changed(|ba| f(&mut ba.heap_simulator_traces[0].events))
    };
    refused(
        &events(|e| e.push(event(Alloc, 2, 0, "x"))),
        &["event 10: buffer 2 allocated again (it was at event 1)"],
    );
    refused(
        &events(|e| e.push(event(Free, 2, 0, "x"))),
        &["event 10: FREE of buffer 2, which is not live"],
    );
    refused(
        &events(|e| e[4].kind = 7),
        &["event 4: unknown kind 7 (buffer 5)"],
    );
    // Buffers outside the trace's allocation are held to the same rules.
    refused(
        &events(|e| e.insert(0, event(Free, 6, 0, "x"))),
        &["event 0: FREE of buffer 6, which is not live"],
    );
}

#[test]
fn defining_instructions_must_be_named_once() {
    // Buffer 2 says it is defined by `b`, which is instruction 3.
    let mut proto = changed(|ba| {
        ba.logical_buffers[1]
            .defined_at
            .as_mut()
            .unwrap()
            .instruction_name = "b".into();
    });
    refused(
        &proto,
        &["logical buffer 2: defined by instruction 2 `b`, but `b` is instruction 3"],
    );
    // Named as the instruction it is: accepted.
    proto.buffer_assignment.as_mut().unwrap().logical_buffers[1]
        .defined_at
        .as_mut()
        .unwrap()
        .instruction_name = "a".into();
    let dir = tempdir();
    let rows = json(&[
        "--view",
        "buffers",
        "--format",
        "json",
        &archive(dir.path(), &proto),
    ]);
    assert_eq!(rows[1]["instruction"], json!("a"), "{rows:?}");
    // Instruction id 2 in two computations, and the buffer naming no instruction.
    let mut proto = module();
    let m = proto.hlo_module.as_mut().unwrap();
    let twin = instruction(2, "a.twin", "fusion", f32s(&[8]), &[], &[]);
    m.computations
        .insert(0, computation(2, "other", vec![twin]));
    refused(
        &proto,
        &[
            "logical buffer 2: defined by instruction 2, an id several computations of the module give",
        ],
    );
    // Named, each buffer is its own instruction's, whatever their ids.
    let ba = proto.buffer_assignment.as_mut().unwrap();
    let at = |b: &LogicalBufferProto| b.defined_at.clone().unwrap();
    let mut a = at(&ba.logical_buffers[1]);
    a.instruction_name = "a".into();
    ba.logical_buffers[1].defined_at = Some(a);
    let mut twin = at(&ba.logical_buffers[4]);
    (twin.instruction_id, twin.instruction_name) = (2, "a.twin".into());
    ba.logical_buffers[4].defined_at = Some(twin);
    let rows = json(&[
        "--view",
        "buffers",
        "--format",
        "json",
        &archive(dir.path(), &proto),
    ]);
    let got: Vec<(i64, &str, Option<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r["buffer"].as_i64().unwrap(),
                r["instruction"].as_str().unwrap(),
                r["op_name"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (3, "b", Some("jit(f)/add")),
            (2, "a", Some("jit(f)/mul")),
            (5, "a.twin", None)
        ]
    );
}

#[test]
fn a_stale_allocation_index_past_the_allocations_is_said() {
    // module()'s trace names allocation 5 of 3 (numbered before XLA combined its temp
    // allocations): read as the allocation holding its buffers, and said.
    let dir = tempdir();
    let zip = archive(dir.path(), &module());
    let out = run("njx-heap", &["--format", "json", &zip], b"");
    assert_eq!(out.status.code(), Some(0));
    let err = stderr_of(&out);
    assert!(
        err.contains(&format!("rank0.zip!{MEMBER}: heap simulator trace 0: buffer_allocation_index 5 names no allocation (the assignment has 3), taken as stale: its buffers are in allocation 1")),
        "{err}"
    );
    // An index in range is used silently (see the_pax_dumps_agree_with_their_own_allocations).
    let proto = changed(|ba| ba.heap_simulator_traces[0].buffer_allocation_index = 1);
    let zip = archive(dir.path(), &proto);
    let out = run("njx-heap", &["--format", "json", &zip], b"");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stderr_of(&out), "");
}

/// Every value of `rows` that stands for "not there" the way only njx-heap wrote it: -1
/// or an empty string (`(none)` as a key). The other tools write null.
fn sentinels(rows: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for r in rows {
        for (k, v) in r.as_object().unwrap() {
            if *v == json!(-1) || *v == json!("") || *v == json!("(none)") {
                out.push(format!("{k}: {v}"));
            }
        }
    }
    out
}

#[test]
fn values_not_there_are_null_in_json_and_empty_in_csv_in_every_view() {
    // A program without a heap simulator trace (its allocation totals only), and one whose
    // trace sized no allocation and whose buffers have no op_name or source line.
    let dir = tempdir();
    let untraced = changed(|ba| ba.heap_simulator_traces.clear());
    let mut bare = changed(|ba| {
        // The buffers of the trace assigned nowhere: no allocation it sized.
        for a in [1, 2] {
            ba.buffer_allocations[a].assigned.clear();
        }
    });
    for c in &mut bare.hlo_module.as_mut().unwrap().computations {
        for i in &mut c.instructions {
            i.metadata = None;
        }
    }
    // Each proto's views, as JSON rows, CSV and the table, by (proto, view).
    let mut views: HashMap<(&str, &str), (Vec<Value>, String, String)> = HashMap::new();
    for (name, proto) in [("untraced", &untraced), ("bare", &bare)] {
        let zip = archive(&dir.path().join(name), proto);
        for view in ["peak", "buffers", "by-op-name", "by-source"] {
            let rows = json(&["--view", view, "--format", "json", &zip]);
            assert_eq!(sentinels(&rows), Vec::<String>::new(), "{name} {view}");
            let csv = ok("njx-heap", &["--view", view, "--format", "csv", &zip]);
            assert!(
                !csv.split([',', '\n']).any(|c| c == "-1" || c == "(none)"),
                "{name} {view}: {csv}"
            );
            // The table for people: a `-` where a value is not there, never an empty
            // cell (which a split on blanks would not see).
            let table = ok("njx-heap", &["--view", view, &zip]);
            for line in table.lines() {
                assert_eq!(
                    line,
                    line.trim_end(),
                    "{name} {view}: an empty last cell: {table}"
                );
            }
            if name == "bare" && view == "buffers" {
                for line in table.lines().skip(1) {
                    assert!(line.ends_with(" -        -"), "{name} {view}: {table}");
                }
            }
            views.insert((name, view), (rows, csv, table));
        }
    }
    // The trace that sized no allocation: no size and no fragmentation (not 0 and -peak).
    let row = &views[&("bare", "peak")].0[0];
    for field in ["allocation", "allocation_bytes", "fragmentation_bytes"] {
        assert_eq!(row[field], Value::Null, "{field}: {row}");
    }
    // Every buffer of the trace counts, at its logical size (the output too).
    assert_eq!(row["peak_bytes"], json!(128), "{row}");
    let buffers = &views[&("bare", "buffers")].0;
    assert!(!buffers.is_empty());
    for b in buffers {
        assert_eq!(
            (&b["op_name"], &b["source"]),
            (&Value::Null, &Value::Null),
            "{b}"
        );
    }
    let groups = &views[&("bare", "by-op-name")].0;
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["key"], Value::Null);
    let (rows, csv, table) = &views[&("untraced", "peak")];
    let row = &rows[0];
    for field in [
        "trace",
        "whole_module",
        "allocation",
        "allocation_bytes",
        "peak_bytes",
        "fragmentation_bytes",
        "peak_event",
        "events",
        "peak_at",
        "live_buffers",
    ] {
        assert_eq!(row[field], Value::Null, "{field}: {row}");
    }
    assert_eq!(row["total_bytes"], json!(152));
    // CSV: the fields not there are empty, as the other tools write them.
    let line = csv.lines().nth(1).unwrap();
    assert!(line.starts_with("jit_f,7,"), "{line}");
    assert!(line.ends_with(",,,,,,,,,,,16,0,16,120,152"), "{line}");
    // The table for people: a dash.
    assert!(!table.contains("-1"), "{table}");
}
