//! Two-variable comprehensions (cel-go's `ext.TwoVarComprehensions()`, library
//! `cel.lib.ext.comprev2`, cel-go v0.22+, Kubernetes 1.32+): macros whose first variable is a
//! list's index or a map's key and whose second is the element or value. There is one
//! version, 0.
//!
//! | macro | signature | example |
//! |---|---|---|
//! | `all` | `list.all(i, v, pred)`, `map.all(k, v, pred) -> bool` | `[1, 2].all(i, v, v > i)` → true |
//! | `exists` | `list.exists(i, v, pred)`, `map.exists(k, v, pred) -> bool` | `{'a': 1}.exists(k, v, k == 'a' && v == 1)` → true |
//! | `existsOne` (also `exists_one`) | `list.existsOne(i, v, pred) -> bool` | `[1, 1].existsOne(i, v, v == 1)` → false |
//! | `transformList` | `list.transformList(i, v, [filter,] expr) -> list` | `[1, 2].transformList(i, v, i * v)` → `[0, 2]` |
//! | `transformMap` | `map.transformMap(k, v, [filter,] expr) -> map` (keys kept) | `{'a': 1}.transformMap(k, v, v + 1)` → `{'a': 2}` |
//! | `transformMapEntry` | `list/map.transformMapEntry(i, v, [filter,] entry) -> map` (entry a one-entry map) | `{'a': 1}.transformMapEntry(k, v, {v: k})` → `{1: 'a'}` |
//!
//! **Cost**: the cost of the comprehension they expand to (`cost-model.md` §2.4): the range,
//! then per iteration the loop condition and step; no charge of their own. The transforms
//! build maps through the internal function `cel.@mapInsert`, which costs 1 per call and
//! fails on a duplicate key (`insert failed: key 1 already exists`).

use std::sync::Arc;

use cel_runtime::{Error, Implementation, Result, Value};
use cel_syntax::macros::{
    ExprFactory, Macro, MacroError, Quantifier, ident_name, quantifier_parts,
};
use cel_syntax::{Expr, Literal, operators};
use cel_types::{FunctionDecl, OverloadDecl, Type};

use crate::{Library, LibraryContents};

/// The internal map-building function of the transforms.
pub const MAP_INSERT: &str = "cel.@mapInsert";

/// The two-variable comprehensions library.
#[derive(Clone, Copy, Debug, Default)]
pub struct TwoVarComprehensions;

impl Library for TwoVarComprehensions {
    fn name(&self) -> &str {
        "cel.lib.ext.comprev2"
    }

    fn contents(&self) -> LibraryContents {
        let k = || Type::param("K");
        let v = || Type::param("V");
        let map_kv = || Type::map(k(), v());
        LibraryContents {
            functions: vec![FunctionDecl::new(
                MAP_INSERT,
                vec![
                    OverloadDecl::global(
                        "@mapInsert_map_key_value",
                        vec![map_kv(), k(), v()],
                        map_kv(),
                    ),
                    OverloadDecl::global("@mapInsert_map_map", vec![map_kv(), map_kv()], map_kv()),
                ],
            )],
            implementations: vec![
                (
                    "@mapInsert_map_key_value".into(),
                    Implementation::Nary(map_insert_key_value),
                ),
                (
                    "@mapInsert_map_map".into(),
                    Implementation::Binary(map_insert_map),
                ),
            ],
            macros: macros(),
            ..LibraryContents::default()
        }
    }
}

/// `cel.@mapInsert(map, key, value)`: the map with one more entry; an existing key is an
/// error ("insert failed: key 1 already exists").
pub fn map_insert_key_value(args: &[Value]) -> Result<Value> {
    match args {
        [Value::Map(m), k, v] => {
            let mut m = m.clone();
            cel_runtime::compare::map_insert_new(Arc::make_mut(&mut m), k, v.clone())?;
            Ok(Value::Map(m))
        }
        _ => Err(Error::no_such_overload()),
    }
}

/// `cel.@mapInsert(map, other)`: the map with every entry of `other` added; a key present in
/// both is an error.
pub fn map_insert_map(target: &Value, update: &Value) -> Result<Value> {
    match (target, update) {
        (Value::Map(t), Value::Map(u)) => {
            let mut t = t.clone();
            let tm = Arc::make_mut(&mut t);
            for (k, v) in u.iter() {
                cel_runtime::compare::map_insert_new(tm, &k.to_value(), v.clone())?;
            }
            Ok(Value::Map(t))
        }
        _ => Err(Error::no_such_overload()),
    }
}

fn macros() -> Vec<Macro> {
    vec![
        Macro::receiver("all", 3, |f, t, a| expand(Kind::All, f, t, a)),
        Macro::receiver("exists", 3, |f, t, a| expand(Kind::Exists, f, t, a)),
        Macro::receiver("existsOne", 3, |f, t, a| expand(Kind::ExistsOne, f, t, a)),
        Macro::receiver("exists_one", 3, |f, t, a| expand(Kind::ExistsOne, f, t, a)),
        Macro::receiver("transformList", 3, |f, t, a| {
            expand(Kind::TransformList, f, t, a)
        }),
        Macro::receiver("transformList", 4, |f, t, a| {
            expand(Kind::TransformList, f, t, a)
        }),
        Macro::receiver("transformMap", 3, |f, t, a| {
            expand(Kind::TransformMap, f, t, a)
        }),
        Macro::receiver("transformMap", 4, |f, t, a| {
            expand(Kind::TransformMap, f, t, a)
        }),
        Macro::receiver("transformMapEntry", 3, |f, t, a| {
            expand(Kind::TransformMapEntry, f, t, a)
        }),
        Macro::receiver("transformMapEntry", 4, |f, t, a| {
            expand(Kind::TransformMapEntry, f, t, a)
        }),
    ]
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

/// A comprehension variable: a simple name that is neither the accumulator nor the other
/// variable.
fn iter_var(f: &ExprFactory<'_>, e: &Expr) -> std::result::Result<String, MacroError> {
    let name = ident_name(e).ok_or_else(|| f.error(e.id, "argument must be a simple name"))?;
    if name == f.accu_name() || name == "__result__" {
        return Err(f.error(e.id, "iteration variable overwrites accumulator variable"));
    }
    Ok(name.to_string())
}

fn expand(
    kind: Kind,
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> std::result::Result<Option<Expr>, MacroError> {
    let Some(target) = target else {
        return Ok(None);
    };
    let mut args = args.into_iter();
    let (Some(a0), Some(a1)) = (args.next(), args.next()) else {
        return Ok(None);
    };
    let v1 = iter_var(f, &a0)?;
    let v2 = iter_var(f, &a1)?;
    if v1 == v2 {
        return Err(f.error(a1.id, format!("duplicate variable name: {v1}")));
    }
    let rest: Vec<Expr> = args.collect();
    let accu = f.accu_name().to_string();
    let (init, condition, step, result) = match kind {
        Kind::All | Kind::Exists | Kind::ExistsOne => {
            let [predicate]: [Expr; 1] = rest
                .try_into()
                .map_err(|_| f.error(0, "wrong number of arguments"))?;
            let quantifier = match kind {
                Kind::All => Quantifier::All,
                Kind::Exists => Quantifier::Exists,
                _ => Quantifier::ExistsOne,
            };
            quantifier_parts(f, quantifier, predicate)
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let (filter, transform) = match <[Expr; 2]>::try_from(rest) {
                Ok([filter, transform]) => (Some(filter), transform),
                Err(rest) => match <[Expr; 1]>::try_from(rest) {
                    Ok([transform]) => (None, transform),
                    Err(_) => return Err(f.error(0, "wrong number of arguments")),
                },
            };
            let mut step = match kind {
                Kind::TransformList => {
                    let a = f.accu_ident();
                    let list = f.list(vec![transform]);
                    f.global_call(operators::ADD, vec![a, list])
                }
                Kind::TransformMap => {
                    let a = f.accu_ident();
                    let key = f.ident(&v1);
                    f.global_call(MAP_INSERT, vec![a, key, transform])
                }
                _ => {
                    let a = f.accu_ident();
                    f.global_call(MAP_INSERT, vec![a, transform])
                }
            };
            if let Some(filter) = filter {
                let a = f.accu_ident();
                step = f.global_call(operators::CONDITIONAL, vec![filter, step, a]);
            }
            let init = if kind == Kind::TransformList {
                f.list(vec![])
            } else {
                f.map(vec![])
            };
            let cond = f.literal(Literal::Bool(true));
            (init, cond, step, f.accu_ident())
        }
    };
    Ok(Some(f.comprehension(
        target,
        &v1,
        Some(&v2),
        &accu,
        init,
        condition,
        step,
        result,
    )))
}
