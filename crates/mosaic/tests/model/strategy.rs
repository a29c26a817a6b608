//! The model test's random operations: what kinds of object, finalizer
//! and operation it draws, and how often.

use proptest::prelude::*;

use super::model_graph::{Kind, Then};
use super::{conservative, moving, Op};

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        3 => Just(Kind::Pair),
        2 => (0usize..40).prop_map(Kind::Vector),
        2 => (0usize..6).prop_map(Kind::WeakBox),
        // Weak slots in large objects, past their first page too.
        1 => (1000usize..20_000).prop_map(Kind::WeakBox),
        2 => (0usize..600, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
        1 => (600usize..9000, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
        1 => (9000usize..150_000, any::<bool>()).prop_map(|(len, cleanup)| Kind::Bytes { len, cleanup }),
    ]
}

fn then() -> impl Strategy<Value = Then> {
    prop_oneof![
        6 => Just(Then::Nothing),
        3 => Just(Then::Resurrect),
        1 => Just(Then::Reregister),
    ]
}

fn some(p: f64) -> impl Strategy<Value = Option<usize>> {
    prop::option::weighted(p, any::<usize>())
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => (kind(), prop::bool::weighted(0.3), any::<(usize, usize)>())
            .prop_map(|(kind, root, into)| Op::New { kind, root, into }),
        3 => (some(0.9), some(0.8), prop::bool::weighted(0.2), any::<(usize, usize)>())
            .prop_map(|(key, value, root, into)| Op::NewEphemeron { key, value, root, into }),
        1 => (any::<usize>(), some(0.8), some(0.8))
            .prop_map(|(target, key, value)| Op::SetEphemeron { target, key, value }),
        6 => (any::<usize>(), any::<usize>(), some(0.8))
            .prop_map(|(src, field, dst)| Op::Link { src, field, dst }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(target, seed)| Op::Rewrite { target, seed }),
        3 => any::<usize>().prop_map(|index| Op::DropRoot { index }),
        3 => (any::<usize>(), any::<bool>(), then(), any::<bool>())
            .prop_map(|(target, ordered, then, alloc)| Op::Finalizer { target, ordered, then, alloc }),
        1 => any::<usize>().prop_map(|target| Op::Unfinalize { target }),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(target, long)| Op::WeakHandle { target, long }),
        1 => any::<usize>().prop_map(|index| Op::DropWeak { index }),
        3 => (any::<usize>(), any::<usize>(), any::<bool>(), some(0.85))
            .prop_map(|(holder, field, long, dst)| Op::WeakSlot { holder, field, long, dst }),
        1 => (any::<usize>(), any::<usize>())
            .prop_map(|(holder, field)| Op::UnregisterSlot { holder, field }),
        1 => Just(Op::RunFinalizers),
        1 => Just(Op::Collect),
        1 => Just(Op::CollectYoung),
        1 => any::<usize>().prop_map(|target| Op::PanickingCollect { target }),
        4 => moving::op().prop_map(Op::Moving),
        6 => conservative::op().prop_map(Op::Conservative),
        3 => any::<usize>().prop_map(Op::Free),
    ]
}

/// How many cases each property runs: `MOSAIC_MODEL_CASES`, 24 by
/// default; failures are not persisted to files.
pub fn cases() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("MOSAIC_MODEL_CASES")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
