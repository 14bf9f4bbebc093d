//! Shapes as XLA prints them (`f32[128,64]`, tuples as `(f32[2], s32[])`), and the
//! element of a tuple shape at an index.

use crate::hlo::proto;

/// Writes `shape` as XLA prints it: `f32[128,64]`, tuples as `(f32[2], s32[])`.
pub fn shape_text(shape: &proto::ShapeProto) -> String {
    if !shape.tuple_shapes.is_empty() {
        let parts: Vec<String> = shape.tuple_shapes.iter().map(shape_text).collect();
        return format!("({})", parts.join(", "));
    }
    let ty = proto::PrimitiveType::try_from(shape.element_type).map_or_else(
        |_| format!("type{}", shape.element_type),
        |t| t.as_str_name().to_ascii_lowercase(),
    );
    let dims: Vec<String> = shape.dimensions.iter().map(i64::to_string).collect();
    format!("{ty}[{}]", dims.join(","))
}

/// The sub-shape at `index` of a (tuple) shape, `None` when the index leads nowhere.
pub(super) fn subshape<'s>(
    shape: &'s proto::ShapeProto,
    index: &[i64],
) -> Option<&'s proto::ShapeProto> {
    index
        .iter()
        .try_fold(shape, |s, &i| s.tuple_shapes.get(usize::try_from(i).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_as_xla_prints_them() {
        let s = proto::ShapeProto {
            element_type: proto::PrimitiveType::Bf16 as i32,
            dimensions: vec![2, 3],
            ..Default::default()
        };
        assert_eq!(shape_text(&s), "bf16[2,3]");
    }
}
