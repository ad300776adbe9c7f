//! Type assignability and type-parameter substitution, as cel-go's checker defines them.
//!
//! A [`Substitution`] maps type parameters (overload parameters instantiated as fresh
//! variables `_var0`, `_var1`, ...) to the types they have been unified with. Assignability
//! is tried and undone on failure (from a log of what each binding replaced, not on a copy
//! of every binding, which made checking a long expression quadratic), so a failed overload
//! leaves no trace.

use std::collections::HashMap;
use std::sync::Arc;

use cel_types::{Primitive, Type};

/// Bindings of type parameters to types.
#[derive(Clone, Debug, Default)]
pub(crate) struct Substitution {
    map: HashMap<Arc<str>, Type>,
    /// While a trial runs: each binding it made, with what the parameter was bound to
    /// before, so that a failed trial can be undone.
    undo: Vec<(Arc<str>, Option<Type>)>,
}

impl Substitution {
    fn find(&self, t: &Type) -> Option<&Type> {
        match t {
            Type::TypeParam(name) => self.map.get(name),
            _ => None,
        }
    }

    fn add(&mut self, param: &Type, t: Type) {
        if let Type::TypeParam(name) = param {
            let before = self.map.insert(name.clone(), t);
            self.undo.push((name.clone(), before));
        }
    }

    /// Runs `attempt`, keeping the bindings it makes only if it succeeds.
    fn trial(&mut self, attempt: impl FnOnce(&mut Self) -> bool) -> bool {
        let start = self.undo.len();
        let ok = attempt(self);
        if !ok {
            while self.undo.len() > start {
                let Some((name, before)) = self.undo.pop() else {
                    break;
                };
                match before {
                    Some(t) => self.map.insert(name, t),
                    None => self.map.remove(&name),
                };
            }
        } else if start == 0 {
            // The outermost trial succeeded: nothing can undo it any more.
            self.undo.clear();
        }
        ok
    }

    /// Whether a value of type `from` may be used where `to` is expected, binding type
    /// parameters as needed. Bindings are kept only if the answer is yes.
    pub(crate) fn is_assignable(&mut self, to: &Type, from: &Type) -> bool {
        self.trial(|s| s.assignable(from, to))
    }

    /// Pairwise [`Self::is_assignable`] over two equally long lists, all or nothing.
    pub(crate) fn is_assignable_list(&mut self, to: &[Type], from: &[Type]) -> bool {
        self.trial(|s| s.assignable_list(from, to))
    }

    fn assignable_list(&mut self, l1: &[Type], l2: &[Type]) -> bool {
        l1.len() == l2.len() && l1.iter().zip(l2).all(|(a, b)| self.assignable(a, b))
    }

    /// cel-go's `internalIsAssignable(m, t1, t2)`: whether `t1` (a value's type) is
    /// assignable to `t2` (the expected type), in either direction of type parameters.
    fn assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        cel_syntax::stack::guarded(|| self.assignable_unguarded(t1, t2))
    }

    fn assignable_unguarded(&mut self, t1: &Type, t2: &Type) -> bool {
        if matches!(t2, Type::TypeParam(_)) {
            let (valid, t2_has_sub) = self.valid_substitution(t1, t2);
            if valid {
                return true;
            }
            if t2_has_sub {
                return false;
            }
        }
        if matches!(t1, Type::TypeParam(_)) {
            return self.valid_substitution(t2, t1).0;
        }
        if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
            return true;
        }
        if matches!(t1, Type::Null) {
            return assignable_from_null(t2);
        }
        if matches!(t2, Type::Null) {
            return assignable_from_null(t1);
        }
        match (t1, t2) {
            (Type::List(a), Type::List(b)) => self.assignable(a, b),
            (Type::Map(k1, v1), Type::Map(k2, v2)) => {
                self.assignable(k1, k2) && self.assignable(v1, v2)
            }
            (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
                n1 == n2 && self.assignable_list(p1, p2)
            }
            (Type::Type(_), Type::Type(_)) => true,
            (Type::List(_) | Type::Map(..) | Type::Opaque(..) | Type::Type(_), _) => false,
            // Scalars, wrappers, messages, well-known types: exact or wrapper agreement.
            _ => simple_assignable(t2, t1),
        }
    }

    /// cel-go's `isValidTypeSubstitution(m, t1, t2)`, where `t2` is a type parameter.
    /// Returns (valid, t2 already had a substitution).
    fn valid_substitution(&mut self, t1: &Type, t2: &Type) -> (bool, bool) {
        if t1 == t2 {
            return (true, true);
        }
        if let Some(t2_sub) = self.find(t2).cloned() {
            if *t1 == t2_sub {
                return (true, true);
            }
            if self.assignable(t1, &t2_sub) {
                let general = most_general(t1, &t2_sub);
                if self.not_referenced_in(t2, &general) {
                    self.add(t2, general);
                }
                return (true, true);
            }
            return (false, true);
        }
        if self.not_referenced_in(t2, t1) {
            self.add(t2, t1.clone());
            return (true, false);
        }
        (false, false)
    }

    /// Whether type parameter `t` does not occur in `within` (the occurs check).
    fn not_referenced_in(&self, t: &Type, within: &Type) -> bool {
        cel_syntax::stack::guarded(|| self.not_referenced_in_unguarded(t, within))
    }

    fn not_referenced_in_unguarded(&self, t: &Type, within: &Type) -> bool {
        if t == within {
            return false;
        }
        match within {
            Type::TypeParam(_) => match self.find(within) {
                Some(sub) => self.not_referenced_in(t, sub),
                None => true,
            },
            Type::List(_) | Type::Map(..) | Type::Opaque(..) | Type::Type(_) => {
                within.params().iter().all(|p| self.not_referenced_in(t, p))
            }
            _ => true,
        }
    }

    /// Replaces bound type parameters by their bindings, recursively; with `params_to_dyn`,
    /// unbound parameters become `dyn`.
    pub(crate) fn substitute(&self, t: &Type, params_to_dyn: bool) -> Type {
        self.substitute_depth(t, params_to_dyn, 0)
    }

    fn substitute_depth(&self, t: &Type, params_to_dyn: bool, depth: usize) -> Type {
        cel_syntax::stack::guarded(|| self.substitute_depth_unguarded(t, params_to_dyn, depth))
    }

    fn substitute_depth_unguarded(&self, t: &Type, params_to_dyn: bool, depth: usize) -> Type {
        // Bindings are acyclic (occurs check), so this terminates; the depth guard only
        // protects against a bug turning into a stack overflow.
        if depth > 1000 {
            return Type::Dyn;
        }
        if let Some(sub) = self.find(t) {
            return self.substitute_depth(sub, params_to_dyn, depth + 1);
        }
        match t {
            Type::TypeParam(_) if params_to_dyn => Type::Dyn,
            Type::List(e) => Type::list(self.substitute_depth(e, params_to_dyn, depth + 1)),
            Type::Map(k, v) => Type::map(
                self.substitute_depth(k, params_to_dyn, depth + 1),
                self.substitute_depth(v, params_to_dyn, depth + 1),
            ),
            Type::Type(Some(p)) => {
                Type::type_of(self.substitute_depth(p, params_to_dyn, depth + 1))
            }
            Type::Opaque(name, ps) => Type::Opaque(
                name.clone(),
                ps.iter()
                    .map(|p| self.substitute_depth(p, params_to_dyn, depth + 1))
                    .collect::<Vec<_>>()
                    .into(),
            ),
            other => other.clone(),
        }
    }
}

/// Whether `null` may be used where `t` is expected.
fn assignable_from_null(t: &Type) -> bool {
    matches!(
        t,
        Type::Null
            | Type::Opaque(..)
            | Type::Message(_)
            | Type::Any
            | Type::Duration
            | Type::Timestamp
            | Type::Wrapper(_)
    )
}

/// Assignability between non-parameterised types: equal types, or a wrapper and its
/// primitive in either direction.
fn simple_assignable(to: &Type, from: &Type) -> bool {
    if to == from {
        return true;
    }
    match (to, from) {
        (Type::Wrapper(p), other) | (other, Type::Wrapper(p)) => {
            prim_of(other).is_some_and(|q| q == *p)
        }
        _ => false,
    }
}

/// The primitive of a primitive type or of a wrapper.
fn prim_of(t: &Type) -> Option<Primitive> {
    match t {
        Type::Wrapper(p) => Some(*p),
        other => Primitive::of(other),
    }
}

/// The less specific of two agreeing types (cel-go's `mostGeneral`).
pub(crate) fn most_general(t1: &Type, t2: &Type) -> Type {
    if equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

fn equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    cel_syntax::stack::guarded(|| equal_or_less_specific_unguarded(t1, t2))
}

fn equal_or_less_specific_unguarded(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::TypeParam(_)) {
        return true;
    }
    // A nullable type is more general than `null` itself: `[msg, null]` is a list of
    // messages, not of nulls.
    if matches!(t2, Type::Null) && !matches!(t1, Type::Null) && assignable_from_null(t1) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::TypeParam(_)) {
        return false;
    }
    match (t1, t2) {
        (Type::Opaque(n1, p1), Type::Opaque(n2, p2)) => {
            n1 == n2
                && p1.len() == p2.len()
                && p1
                    .iter()
                    .zip(p2.iter())
                    .all(|(a, b)| equal_or_less_specific(a, b))
        }
        (Type::List(a), Type::List(b)) => equal_or_less_specific(a, b),
        (Type::Map(k1, v1), Type::Map(k2, v2)) => {
            equal_or_less_specific(k1, k2) && equal_or_less_specific(v1, v2)
        }
        (Type::Type(_), Type::Type(_)) => true,
        // A wrapper is nullable, so more general than its primitive: `[w, 1]` and `[1, w]`
        // are both lists of wrappers.
        (Type::Wrapper(p), other) => prim_of(other) == Some(*p),
        _ => t1 == t2,
    }
}

/// Bindings may be as deep as the expression; they are freed one node at a time.
impl Drop for Substitution {
    fn drop(&mut self) {
        for (_, t) in self.map.drain() {
            t.drop_iteratively();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_param_binds_once() {
        let mut s = Substitution::default();
        let a = Type::param("_var0");
        assert!(s.is_assignable(&a, &Type::Int));
        assert!(!s.is_assignable(&a, &Type::Double));
        assert_eq!(s.substitute(&a, false), Type::Int);
        // Agreeing with `dyn` widens the binding, as cel-go's `mostGeneral` does.
        assert!(s.is_assignable(&a, &Type::Dyn));
        assert_eq!(s.substitute(&a, false), Type::Dyn);
    }

    #[test]
    fn wrappers_and_null() {
        let mut s = Substitution::default();
        assert!(s.is_assignable(&Type::Int, &Type::Wrapper(Primitive::Int)));
        assert!(s.is_assignable(&Type::Wrapper(Primitive::Int), &Type::Null));
        assert!(!s.is_assignable(&Type::Int, &Type::Null));
        assert!(!s.is_assignable(&Type::Int, &Type::Wrapper(Primitive::Uint)));
    }

    #[test]
    fn lists_unify_elementwise() {
        let mut s = Substitution::default();
        let la = Type::list(Type::param("_var0"));
        assert!(s.is_assignable(&la, &Type::list(Type::Int)));
        assert!(!s.is_assignable(&la, &Type::list(Type::String)));
        assert_eq!(s.substitute(&la, true), Type::list(Type::Int));
    }

    #[test]
    fn occurs_check() {
        let mut s = Substitution::default();
        let a = Type::param("_var0");
        assert!(!s.is_assignable(&a, &Type::list(a.clone())));
    }
}
