//! Values nested 10,000 levels deep must not overflow a default 2 MiB thread stack in any
//! runtime algorithm: equality, ordering, size, membership, printing and dropping.

use cel_runtime::{Error, FunctionRegistry, Key, Value, compare, format, strings};

const DEPTH: usize = 10_000;

fn nested_list(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = Value::list(vec![v]);
    }
    v
}

fn nested_map(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = Value::map([(Key::String("a".into()), v)]);
    }
    v
}

fn nested_optional(depth: usize, leaf: Value) -> Value {
    let mut v = leaf;
    for _ in 0..depth {
        v = Value::optional_of(v);
    }
    v
}

/// Runs `f` on a thread with the default 2 MiB stack and propagates its panics.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    if let Err(p) = handle.join() {
        std::panic::resume_unwind(p);
    }
}

#[test]
fn deep_lists() {
    on_small_stack(|| {
        let a = nested_list(DEPTH, Value::Int(1));
        let b = nested_list(DEPTH, Value::Double(1.0));
        let c = nested_list(DEPTH, Value::Int(2));
        assert!(compare::equals(&a, &b));
        assert!(!compare::equals(&a, &c));
        assert_eq!(
            compare::compare(&a, &b).err(),
            Some(Error::no_such_overload())
        );
        assert!(matches!(strings::size(&a), Ok(Value::Int(1))));
        let text = format::to_cel_literal(&a);
        assert_eq!(text.len(), 2 * DEPTH + 1);
        assert_eq!(text, format!("{}1{}", "[".repeat(DEPTH), "]".repeat(DEPTH)));
        assert_eq!(format::display(&c).len(), 2 * DEPTH + 1);
        let holder = Value::list(vec![a.clone()]);
        assert!(matches!(
            compare::in_value(&b, &holder),
            Ok(Value::Bool(true))
        ));
        let r = FunctionRegistry::standard();
        let eq = r.get("equals").map(|f| f.call(&[a.clone(), b.clone()]));
        assert!(matches!(eq, Some(Ok(Value::Bool(true)))));
        let size = r.get("size_list").map(|f| f.call(std::slice::from_ref(&a)));
        assert!(matches!(size, Some(Ok(Value::Int(1)))));
        drop((a, b, c, holder));
    });
}

#[test]
fn deep_maps_and_optionals() {
    on_small_stack(|| {
        let a = nested_map(DEPTH, Value::Uint(1));
        let b = nested_map(DEPTH, Value::Int(1));
        assert!(compare::equals(&a, &b));
        let text = format::to_cel_literal(&a);
        assert!(text.starts_with("{\"a\": {\"a\": "));
        assert!(text.contains("{\"a\": 1u}}"));
        assert!(text.ends_with(&"}".repeat(DEPTH)));
        let o = nested_optional(DEPTH, Value::Null);
        let p = nested_optional(DEPTH, Value::Null);
        assert!(compare::equals(&o, &p));
        assert!(format::to_cel_literal(&o).starts_with("optional.of(optional.of("));
        drop((a, b, o, p));
    });
}
