//! Values nested a million levels deep are freed without overflowing the stack: chains of
//! optionals (which have no container of their own to free them iteratively), lists, maps,
//! and mixtures of the three, on a thread with a 128 KiB stack.

use std::sync::Arc;

use cel_runtime::{Key, Value};

const DEPTH: usize = 1_000_000;

/// Runs `f` on a thread with a 128 KiB stack and propagates its panics (a stack overflow
/// aborts the whole test binary instead, which fails the test just as well).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(128 * 1024)
        .spawn(f)
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Err(p) = handle.join() {
        std::panic::resume_unwind(p);
    }
}

fn nest(depth: usize, leaf: Value, wrap: impl Fn(usize, Value) -> Value) -> Value {
    let mut v = leaf;
    for level in 0..depth {
        v = wrap(level, v);
    }
    v
}

#[test]
fn optional_chain_drops_iteratively() {
    on_small_stack(|| {
        let v = nest(DEPTH, Value::Int(1), |_, v| Value::optional_of(v));
        drop(v);
    });
}

#[test]
fn list_and_map_chains_drop_iteratively() {
    on_small_stack(|| {
        drop(nest(DEPTH, Value::Null, |_, v| Value::list(vec![v])));
        drop(nest(DEPTH, Value::Null, |_, v| {
            Value::map([(Key::String("a".into()), v)])
        }));
    });
}

#[test]
fn mixed_chains_drop_iteratively() {
    on_small_stack(|| {
        // optional(list(map(optional(...)))) and runs of optionals between containers.
        let v = nest(DEPTH, Value::Null, |level, v| match level % 5 {
            0 => Value::list(vec![Value::Int(1), v]),
            1 => Value::map([(Key::Int(1), v)]),
            _ => Value::optional_of(v),
        });
        drop(v);
    });
}

#[test]
fn shared_parts_survive_the_drop() {
    on_small_stack(|| {
        let inner = nest(1000, Value::Int(7), |_, v| Value::optional_of(v));
        let Value::Optional(Some(shared)) = &inner else {
            panic!("not an optional");
        };
        let shared = Arc::clone(shared);
        let outer = nest(DEPTH, inner, |_, v| Value::optional_of(v));
        drop(outer);
        // The part still referred to is intact.
        let mut v: &Value = &shared;
        let mut levels = 1;
        while let Value::Optional(Some(next)) = v {
            v = next;
            levels += 1;
        }
        assert_eq!(levels, 1000);
        assert!(matches!(v, Value::Int(7)));
        drop(shared);
    });
}

#[test]
fn deep_values_print_with_debug() {
    on_small_stack(|| {
        let v = nest(100_000, Value::Int(1), |level, v| {
            if level % 2 == 0 {
                Value::list(vec![v])
            } else {
                Value::optional_of(v)
            }
        });
        let text = format!("{v:?}");
        assert!(text.starts_with("Optional(Some(List(ListValue { items: [Optional("));
        assert!(text.contains("Int(1)"));
    });
}
