//! Declarations joined with implementations: what the planner needs to bind a call.

use std::collections::HashMap;
use std::sync::Arc;

use cel_runtime::{Error, FunctionRegistry, Implementation, Result, Value, value_matches};
use cel_types::{FunctionDecl, OverloadDecl};

/// One overload with its implementation, if it has one (non-strict built-ins such as `_&&_`
/// are evaluated by the interpreter itself and have none).
#[derive(Clone, Debug)]
pub struct OverloadEntry {
    /// The declaration.
    pub decl: OverloadDecl,
    /// The implementation.
    pub implementation: Option<Implementation>,
}

impl OverloadEntry {
    /// Whether the runtime values fit the declared parameter types.
    pub fn accepts(&self, args: &[Value]) -> bool {
        self.decl.params.len() == args.len()
            && self
                .decl
                .params
                .iter()
                .zip(args)
                .all(|(t, v)| value_matches(v, t))
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
                let entry = Arc::new(OverloadEntry {
                    decl: o.clone(),
                    implementation: registry.get(&o.id).cloned(),
                });
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
        if let [t] = c.decl.params.as_slice()
            && value_matches(a, t)
            && let Some(imp) = &c.implementation
        {
            return imp.call1(a);
        }
    }
    Err(Error::no_such_overload())
}

/// [`dispatch`] with two arguments by reference.
pub(crate) fn dispatch2(candidates: &[Arc<OverloadEntry>], a: &Value, b: &Value) -> Result<Value> {
    for c in candidates {
        if let [ta, tb] = c.decl.params.as_slice()
            && value_matches(a, ta)
            && value_matches(b, tb)
            && let Some(imp) = &c.implementation
        {
            return imp.call2(a, b);
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
            return imp.call(args);
        }
    }
    Err(Error::no_such_overload())
}
