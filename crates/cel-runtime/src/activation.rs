//! Variable bindings for one evaluation.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Value;

/// Supplies the values of variables during an evaluation.
pub trait Activation: Send + Sync {
    /// The value bound to a fully qualified variable name, if any.
    fn resolve(&self, name: &str) -> Option<Value>;

    /// The value bound to a name, by reference, for activations that store their values:
    /// generated code then reads it in place instead of cloning it. `None` means "ask
    /// [`resolve`](Activation::resolve)", not "unbound".
    fn resolve_ref(&self, _name: &str) -> Option<&Value> {
        None
    }
}

/// An activation backed by a hash map.
#[derive(Clone, Debug, Default)]
pub struct MapActivation {
    /// Names are hashed with foldhash: variables are looked up on every evaluation, and the
    /// names are the program's, not an attacker's keys.
    vars: HashMap<Arc<str>, Value, foldhash::fast::RandomState>,
}

impl MapActivation {
    /// An empty activation.
    pub fn new() -> MapActivation {
        MapActivation::default()
    }

    /// Binds a variable, replacing any previous binding.
    pub fn bind(&mut self, name: impl Into<Arc<str>>, value: impl Into<Value>) -> &mut Self {
        self.vars.insert(name.into(), value.into());
        self
    }

    /// Binds a variable, builder style.
    pub fn with(mut self, name: impl Into<Arc<str>>, value: impl Into<Value>) -> Self {
        self.bind(name, value);
        self
    }

    /// The bound names and values.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.vars.iter().map(|(k, v)| (&**k, v))
    }
}

impl Activation for MapActivation {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.vars.get(name).cloned()
    }

    fn resolve_ref(&self, name: &str) -> Option<&Value> {
        self.vars.get(name)
    }
}

/// An activation that binds nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct EmptyActivation;

impl Activation for EmptyActivation {
    fn resolve(&self, _name: &str) -> Option<Value> {
        None
    }
}
