//! Declarations joined with implementations: what the planner needs to bind a call.

use std::collections::HashMap;
use std::sync::Arc;

use cel_runtime::{Error, FunctionRegistry, Implementation, MapParams, ParamKinds, Result, Value};
use cel_types::{FunctionDecl, OverloadDecl};

/// One overload with its implementation, if it has one (non-strict built-ins such as `_&&_`
/// are evaluated by the interpreter itself and have none).
#[derive(Clone, Debug)]
pub struct OverloadEntry {
    /// The declaration.
    pub decl: OverloadDecl,
    /// The implementation.
    pub implementation: Option<Implementation>,
    /// What each declared parameter accepts, worked out once for dispatch.
    kinds: Vec<ParamKinds>,
    /// Which parameters are maps, that opaque maps reach as maps.
    pub(crate) maps: MapParams,
}

impl OverloadEntry {
    /// An overload's declaration with its implementation, if there is one.
    pub fn new(decl: OverloadDecl, implementation: Option<Implementation>) -> OverloadEntry {
        let kinds = decl.params.iter().map(ParamKinds::of).collect();
        let maps = MapParams::of(&decl.params);
        OverloadEntry {
            decl,
            implementation,
            kinds,
            maps,
        }
    }

    /// Whether the runtime values fit the declared parameter types.
    pub fn accepts(&self, args: &[Value]) -> bool {
        self.kinds.len() == args.len()
            && (self.kinds.iter().zip(&self.decl.params).zip(args))
                .all(|((k, t), v)| k.accept(v, t))
    }

    /// [`OverloadEntry::accepts`] for one argument.
    #[inline]
    fn accepts1(&self, a: &Value) -> bool {
        match (self.kinds.as_slice(), self.decl.params.as_slice()) {
            ([k], [t]) => k.accept(a, t),
            _ => false,
        }
    }

    /// [`OverloadEntry::accepts`] for two arguments.
    #[inline]
    fn accepts2(&self, a: &Value, b: &Value) -> bool {
        match (self.kinds.as_slice(), self.decl.params.as_slice()) {
            ([ka, kb], [ta, tb]) => ka.accept(a, ta) && kb.accept(b, tb),
            _ => false,
        }
    }
}

/// Every function the interpreter can call, by name and by overload id.
#[derive(Clone, Debug, Default)]
pub struct FunctionTable {
    by_name: HashMap<String, Vec<Arc<OverloadEntry>>>,
    by_id: HashMap<String, Arc<OverloadEntry>>,
}

impl FunctionTable {
    /// Joins declarations with the registry's implementations.
    pub fn new<'a>(
        decls: impl IntoIterator<Item = &'a FunctionDecl>,
        registry: &FunctionRegistry,
    ) -> FunctionTable {
        let mut table = FunctionTable::default();
        for f in decls {
            for o in &f.overloads {
                let entry = Arc::new(OverloadEntry::new(o.clone(), registry.get(&o.id).cloned()));
                table
                    .by_name
                    .entry(f.name.clone())
                    .or_default()
                    .push(entry.clone());
                table.by_id.insert(o.id.clone(), entry);
            }
        }
        table
    }

    /// The overloads of a function name.
    pub fn overloads(&self, name: &str) -> Option<&[Arc<OverloadEntry>]> {
        self.by_name.get(name).map(|v| v.as_slice())
    }

    /// An overload by id.
    pub fn overload(&self, id: &str) -> Option<&Arc<OverloadEntry>> {
        self.by_id.get(id)
    }

    /// Whether a function name is known.
    pub fn has_function(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }
}

/// [`dispatch`] with one argument by reference.
pub(crate) fn dispatch1(candidates: &[Arc<OverloadEntry>], a: &Value) -> Result<Value> {
    for c in candidates {
        if c.accepts1(a)
            && let Some(imp) = &c.implementation
        {
            return imp.call1_taking(c.maps, a);
        }
    }
    Err(Error::no_such_overload())
}

/// [`dispatch`] with two arguments by reference.
pub(crate) fn dispatch2(candidates: &[Arc<OverloadEntry>], a: &Value, b: &Value) -> Result<Value> {
    for c in candidates {
        if c.accepts2(a, b)
            && let Some(imp) = &c.implementation
        {
            return imp.call2_taking(c.maps, a, b);
        }
    }
    Err(Error::no_such_overload())
}

/// Calls the first candidate whose declared parameters accept the arguments.
pub(crate) fn dispatch(candidates: &[Arc<OverloadEntry>], args: &[Value]) -> Result<Value> {
    for c in candidates {
        if c.accepts(args)
            && let Some(imp) = &c.implementation
        {
            return imp.call_taking(c.maps, args);
        }
    }
    Err(Error::no_such_overload())
}
