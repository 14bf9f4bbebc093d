//! What XLA's NVTX range names say: which ranges are module executions
//! (`[TSL:]XlaModule:#[prefix=…,]hlo_module=NAME[,program_id=N]#`) and thunks
//! (`[TSL:]Thunk:#[name=…,]hlo_op=NAME[,unique_hlo_op_id=N]#`), and the module, program
//! id and instruction they name. Input knowledge, shared by the executions
//! (`derived/executions/derive.rs`) and the kernels' attribution (`source/gpu_ops/sqlite/`). The
//! patterns are nsys-jax's (`nsys_jax/data_loaders.py`, `_load_nvtx_gpu_proj_trace_single`),
//! re-implemented.

use regex::Regex;
use std::sync::LazyLock;

static MODULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(?:TSL:)?XlaModule:#(?:prefix=(?:.*?),|)hlo_module=([a-z0-9._-]+)(?:,program_id=(\d+)|)#$",
    )
    .expect("valid regex")
});

/// The HLO module name and program id of a module range
/// `[TSL:]XlaModule:#[prefix=…,]hlo_module=NAME[,program_id=N]#`, as nsys-jax's pattern
/// captures them; `None` for a name of another form.
pub fn module(name: &str) -> Option<(&str, Option<u64>)> {
    let c = MODULE.captures(name)?;
    let module = c.get(1).expect("group 1").as_str();
    Some((module, c.get(2).and_then(|g| g.as_str().parse().ok())))
}

/// The instruction of a thunk range, `[TSL:]Thunk:#[name=…,]hlo_op=NAME[,unique_hlo_op_id=N]#`
/// with NAME of `[a-z0-9._-]`: what nsys-jax's pattern
/// `^(?:TSL:)?Thunk:#(?:name=.*?,|)hlo_op=([a-z0-9._-]+)#$` captures, without a regex (it
/// runs for every thunk of every rank), and the trailing `unique_hlo_op_id` that XLA adds
/// since 2026 (`xla/backends/gpu/runtime/annotation.cc`), which nsys-jax does not accept yet.
pub fn thunk_op(name: &str) -> Option<&str> {
    let body = name
        .strip_prefix("TSL:")
        .unwrap_or(name)
        .strip_prefix("Thunk:#")?
        .strip_suffix('#')?;
    let body = match body.rsplit_once(",unique_hlo_op_id=") {
        Some((rest, id)) if !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => body,
    };
    let op = match body.strip_prefix("hlo_op=") {
        Some(op) => op,
        None => {
            // Only the last `,hlo_op=` can be followed by op characters alone; the name
            // before it is any line (`.` does not match a newline).
            let named = body.strip_prefix("name=")?;
            let at = named.rfind(",hlo_op=")?;
            if named[..at].contains('\n') {
                return None;
            }
            &named[at + ",hlo_op=".len()..]
        }
    };
    let valid = |b: u8| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-');
    (!op.is_empty() && op.bytes().all(valid)).then_some(op)
}

/// The `unique_hlo_op_id` a thunk range's name ends with
/// (`…,hlo_op=NAME,unique_hlo_op_id=N#`, XLA since 2026: the instruction's unique id, as
/// the dump's `HloInstructionProto.id`; above 2^32 in real profiles), where it has one.
pub fn thunk_unique_id(name: &str) -> Option<u64> {
    thunk_op(name)?;
    let body = name.strip_suffix('#')?;
    let (_, id) = body.rsplit_once(",unique_hlo_op_id=")?;
    id.parse().ok()
}

/// Whether a range is an XLA module execution (`[TSL:]XlaModule:…`).
pub fn is_module(name: &str) -> bool {
    name.strip_prefix("TSL:")
        .unwrap_or(name)
        .starts_with("XlaModule:")
}

/// Whether a range is an XLA thunk (`[TSL:]Thunk:#…`).
pub fn is_thunk(name: &str) -> bool {
    name.strip_prefix("TSL:")
        .unwrap_or(name)
        .starts_with("Thunk:#")
}

#[cfg(test)]
mod tests {
    use super::{module, thunk_op, thunk_unique_id};
    use regex::Regex;

    #[test]
    fn module_names_are_parsed_as_nsys_jax_matches_them() {
        assert_eq!(
            module("TSL:XlaModule:#hlo_module=jit_f,program_id=7#"),
            Some(("jit_f", Some(7)))
        );
        assert_eq!(
            module("XlaModule:#prefix=a,b,hlo_module=jit_g#"),
            Some(("jit_g", None))
        );
        assert_eq!(module("TSL:XlaModule:#hlo_module=Jit_F#"), None);
        assert_eq!(module("TSL:Thunk:#hlo_op=fusion.1#"), None);
    }

    #[test]
    fn unique_ids_are_read_from_thunk_names_that_have_one() {
        let id = |n| thunk_unique_id(n);
        assert_eq!(
            id("TSL:Thunk:#hlo_op=copy.1,unique_hlo_op_id=4294967297#"),
            Some(4294967297)
        );
        assert_eq!(
            id("Thunk:#name=jit(f)/x,hlo_op=all-reduce.2,unique_hlo_op_id=7#"),
            Some(7)
        );
        assert_eq!(id("TSL:Thunk:#hlo_op=copy.1#"), None);
        assert_eq!(id("TSL:Thunk:#hlo_op=copy.1,unique_hlo_op_id=#"), None);
        assert_eq!(
            id("TSL:Thunk:#hlo_op=copy.1,unique_hlo_op_id=99999999999999999999#"),
            None
        );
        assert_eq!(id("TSL:XlaModule:#hlo_module=a,unique_hlo_op_id=3#"), None);
    }

    #[test]
    fn thunk_names_are_parsed_as_nsys_jax_matches_them() {
        // nsys-jax's pattern, with XLA's newer trailing id.
        let pattern = Regex::new(
            r"^(?:TSL:)?Thunk:#(?:name=.*?,|)hlo_op=([a-z0-9._-]+)(?:,unique_hlo_op_id=\d+|)#$",
        )
        .expect("valid regex");
        let names = [
            "TSL:Thunk:#hlo_op=fusion.12#",
            "Thunk:#hlo_op=all-gather-start.3#",
            "TSL:Thunk:#name=%fusion.1 = f32[8] fusion(p), kind=kLoop,hlo_op=fusion.1#",
            "TSL:Thunk:#name=,hlo_op=a_b-c.9#",
            "TSL:Thunk:#name=a,hlo_op=b,c,hlo_op=d#",
            "TSL:Thunk:#name=a,hlo_op=b#x,hlo_op=C#",
            "TSL:Thunk:#name=a\nb,hlo_op=c#",
            "TSL:Thunk:#name=hlo_op=z#",
            "TSL:Thunk:#hlo_op=a,hlo_op=b#",
            "TSL:Thunk:#hlo_op=#",
            "TSL:Thunk:#hlo_op=Upper#",
            "TSL:Thunk:#hlo_op=x",
            "TSL:TSL:Thunk:#hlo_op=x#",
            "TSL:XlaModule:#hlo_module=jit_f,program_id=3#",
            "Thunk:#name=q,hlo_op=ok#",
            "Thunk:#hlo_op=fusion.3,unique_hlo_op_id=42#",
            "TSL:Thunk:#name=jit(f)/dot_general,hlo_op=gemm.1,unique_hlo_op_id=7#",
            "Thunk:#hlo_op=fusion.3,unique_hlo_op_id=#",
            "Thunk:#hlo_op=fusion.3,unique_hlo_op_id=4x#",
            "Thunk:#hlo_op=a,unique_hlo_op_id=1,unique_hlo_op_id=2#",
            "",
        ];
        for name in names {
            let expected = pattern
                .captures(name)
                .map(|c| c.get(1).expect("group").as_str());
            assert_eq!(thunk_op(name), expected, "{name:?}");
        }
    }
}
