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

/// An activation holding its variables: in a list while there are few (most evaluations
/// bind one to four, and comparing a short name beats hashing it), with a hash index beside
/// the list past [`MapActivation::INDEXED_FROM`] variables.
#[derive(Clone, Debug, Default)]
pub struct MapActivation {
    /// The bindings, in the order first bound.
    vars: Vec<(Arc<str>, Value)>,
    /// Name to position in `vars`, once there are many. Hashed with foldhash: the names are
    /// the program's, not an attacker's keys.
    index: Option<HashMap<Arc<str>, usize, foldhash::fast::RandomState>>,
}

impl MapActivation {
    /// How many variables an activation holds before it indexes them.
    pub const INDEXED_FROM: usize = 9;

    /// An empty activation.
    pub fn new() -> MapActivation {
        MapActivation::default()
    }

    /// Binds a variable, replacing any previous binding.
    pub fn bind(&mut self, name: impl Into<Arc<str>>, value: impl Into<Value>) -> &mut Self {
        let name = name.into();
        let value = value.into();
        match self.position(&name) {
            Some(i) => self.vars[i].1 = value,
            None => {
                if let Some(index) = &mut self.index {
                    index.insert(name.clone(), self.vars.len());
                }
                self.vars.push((name, value));
                if self.index.is_none() && self.vars.len() >= Self::INDEXED_FROM {
                    let index = self
                        .vars
                        .iter()
                        .enumerate()
                        .map(|(i, (n, _))| (n.clone(), i))
                        .collect();
                    self.index = Some(index);
                }
            }
        }
        self
    }

    /// Binds a variable, builder style.
    pub fn with(mut self, name: impl Into<Arc<str>>, value: impl Into<Value>) -> Self {
        self.bind(name, value);
        self
    }

    /// The bound names and values, in the order first bound.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.vars.iter().map(|(k, v)| (&**k, v))
    }

    #[inline]
    fn position(&self, name: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(name).copied(),
            None => self
                .vars
                .iter()
                .position(|(n, _)| crate::strings::bytes_equal(n.as_bytes(), name.as_bytes())),
        }
    }
}

impl Activation for MapActivation {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.resolve_ref(name).cloned()
    }

    #[inline]
    fn resolve_ref(&self, name: &str) -> Option<&Value> {
        self.position(name).map(|i| &self.vars[i].1)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_replace_and_resolve_listed_or_indexed() {
        let mut a = MapActivation::new();
        for n in 0..20i64 {
            a.bind(format!("v{n}"), n);
            a.bind("v0", -n);
            // Every binding so far resolves, listed (under 9) or indexed (from 9).
            for m in 1..=n {
                assert_eq!(a.resolve(&format!("v{m}")), Some(Value::Int(m)), "{n}");
            }
            assert_eq!(a.resolve_ref("v0"), Some(&Value::Int(-n)));
            assert_eq!(a.resolve("missing"), None);
        }
        // Replacing keeps one binding per name, in the order first bound.
        let names: Vec<&str> = a.iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), 20);
        assert_eq!(names[..3], ["v0", "v1", "v2"]);
    }
}
