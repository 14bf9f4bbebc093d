//! The floating-point work of a program's GEMMs, from its after-optimizations HLO: each
//! cuBLAS custom call (`custom_call_target` `__cublas$gemm`, `__cublas$lt$matmul`, …),
//! whose dot dimensions XLA writes in its backend config as JSON
//! (`gemm_backend_config.dot_dimension_numbers`, seen in the pax archives' dumps, XLA of
//! 2024). FLOPs = 2 × the result's elements × the product of the left operand's
//! contracting dimensions. Dot fusions (Triton GEMMs) are not counted yet: the dot
//! dimensions of a `dot` instruction are a field the project's trimmed `hlo.proto` does
//! not decode.

use crate::error::Result;
use crate::hlo::{HloModule, proto};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One GEMM instruction's work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Gemm {
    /// Floating-point operations of one execution.
    pub flops: f64,
    /// Its left operand's element type, lower case (`bf16`, `f32`).
    pub dtype: String,
}

/// The GEMMs of `hlo`, by instruction name; an instruction whose config or shapes cannot
/// be read is left out (it is still a thunk, just not judged).
pub fn gemms(hlo: &HloModule) -> Result<BTreeMap<String, Gemm>> {
    let mut out = BTreeMap::new();
    for inst in hlo.instructions() {
        if inst.opcode() != "custom-call" {
            continue;
        }
        let p = inst.proto()?;
        if !p.custom_call_target.starts_with("__cublas$") {
            continue;
        }
        let Some(contracting) = contracting(&p.backend_config) else {
            continue;
        };
        let Some(result) = p.shape.as_ref().map(first) else {
            continue;
        };
        let Some(lhs) = inst.operand(0).ok().and_then(|o| o.shape().ok().flatten()) else {
            continue;
        };
        let k: f64 = (contracting.iter())
            .map(|&d| lhs.dimensions.get(d).map_or(f64::NAN, |&n| n as f64))
            .product();
        let elements: f64 = result.dimensions.iter().map(|&n| n as f64).product();
        let flops = 2.0 * elements * k;
        if !flops.is_finite() || flops <= 0.0 {
            continue;
        }
        let dtype = proto::PrimitiveType::try_from(lhs.element_type).map_or_else(
            |_| format!("type{}", lhs.element_type),
            |t| t.as_str_name().to_ascii_lowercase(),
        );
        out.insert(inst.name().to_string(), Gemm { flops, dtype });
    }
    Ok(out)
}

/// The first element of a tuple shape (a cuBLAS call returns its result and a
/// workspace), or the shape.
fn first(s: &proto::ShapeProto) -> &proto::ShapeProto {
    s.tuple_shapes.first().map_or(s, first)
}

/// The left operand's contracting dimensions from a GEMM's backend config (JSON).
fn contracting(config: &[u8]) -> Option<Vec<usize>> {
    let v: serde_json::Value = serde_json::from_slice(config).ok()?;
    let dims = v
        .get("gemm_backend_config")
        .unwrap_or(&v)
        .get("dot_dimension_numbers")?
        .get("lhs_contracting_dimensions")?
        .as_array()?;
    // JSON from protobuf writes int64s as strings.
    dims.iter()
        .map(|d| match d {
            serde_json::Value::String(s) => s.parse().ok(),
            n => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn contracting_dimensions_come_from_the_json_config() {
        let c = br#"{"operation_queue_id":"0","gemm_backend_config":{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1","2"],"rhs_contracting_dimensions":["0"]}}}"#;
        assert_eq!(super::contracting(c), Some(vec![1, 2]));
        assert_eq!(super::contracting(b"not json"), None);
        assert_eq!(super::contracting(br#"{"gemm_backend_config":{}}"#), None);
    }
}
