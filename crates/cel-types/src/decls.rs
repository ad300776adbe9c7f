//! Declarations: variables, functions and their overloads, containers, and the type provider.

use std::collections::HashMap;
use std::sync::Arc;

use crate::Type;

/// A declared variable (or constant) and its type.
#[derive(Clone, Debug, PartialEq)]
pub struct VariableDecl {
    /// The fully qualified name.
    pub name: String,
    /// Its type.
    pub ty: Type,
}

impl VariableDecl {
    /// A variable of the given type.
    pub fn new(name: impl Into<String>, ty: Type) -> VariableDecl {
        VariableDecl {
            name: name.into(),
            ty,
        }
    }
}

/// One signature of a function.
///
/// The `id` is cel-go's overload id (`add_int64`, `size_string`, `matches_string`): the same
/// string keys the runtime implementation, the JIT helper and the cost formula.
#[derive(Clone, Debug, PartialEq)]
pub struct OverloadDecl {
    /// The overload id, unique across the environment.
    pub id: String,
    /// Parameter types; for a member overload the first is the receiver.
    pub params: Vec<Type>,
    /// The result type.
    pub result: Type,
    /// Whether the overload is called as `receiver.f(args)`.
    pub is_member: bool,
    /// Whether the overload sees error and unknown arguments instead of having them
    /// propagated (`_&&_`, `_||_`, `_?_:_`, `@not_strictly_false`).
    pub non_strict: bool,
}

impl OverloadDecl {
    /// A global overload `f(params) -> result`.
    pub fn global(id: &str, params: Vec<Type>, result: Type) -> OverloadDecl {
        OverloadDecl {
            id: id.to_string(),
            params,
            result,
            is_member: false,
            non_strict: false,
        }
    }

    /// A member overload `params[0].f(params[1..]) -> result`.
    pub fn member(id: &str, params: Vec<Type>, result: Type) -> OverloadDecl {
        OverloadDecl {
            is_member: true,
            ..OverloadDecl::global(id, params, result)
        }
    }

    /// Marks the overload non-strict.
    pub fn non_strict(mut self) -> OverloadDecl {
        self.non_strict = true;
        self
    }

    /// The names of the type parameters it mentions, in order of first appearance.
    pub fn type_params(&self) -> Vec<Arc<str>> {
        fn collect(t: &Type, out: &mut Vec<Arc<str>>) {
            match t {
                Type::TypeParam(n) => {
                    if !out.contains(n) {
                        out.push(n.clone());
                    }
                }
                _ => t.params().into_iter().for_each(|p| collect(p, out)),
            }
        }
        let mut out = Vec::new();
        self.params.iter().for_each(|p| collect(p, &mut out));
        collect(&self.result, &mut out);
        out
    }

    /// Whether two overloads have the same arity and style and parameter types that would
    /// make a call ambiguous (the check cel-go makes when functions are merged).
    pub fn signature_overlaps(&self, other: &OverloadDecl) -> bool {
        self.is_member == other.is_member && self.params == other.params
    }
}

/// A function and its overloads.
#[derive(Clone, Debug, PartialEq)]
pub struct FunctionDecl {
    /// The fully qualified function name (operators use their internal names, `_+_`).
    pub name: String,
    /// The overloads.
    pub overloads: Vec<OverloadDecl>,
}

impl FunctionDecl {
    /// A function with the given overloads.
    pub fn new(name: impl Into<String>, overloads: Vec<OverloadDecl>) -> FunctionDecl {
        FunctionDecl {
            name: name.into(),
            overloads,
        }
    }

    /// Adds overloads, skipping those whose id is already present.
    pub fn merge(&mut self, other: FunctionDecl) {
        for o in other.overloads {
            if !self.overloads.iter().any(|x| x.id == o.id) {
                self.overloads.push(o);
            }
        }
    }
}

/// A field of a message type, as the type provider describes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldType {
    /// The field's CEL type.
    pub ty: Type,
}

/// Supplies the message and enum types an environment knows, for the checker and for
/// message construction. Protobuf descriptors implement it; so can any host type system.
pub trait TypeProvider: Send + Sync + std::fmt::Debug {
    /// The type named by a fully qualified name (a message type, usually), if known.
    fn find_type(&self, name: &str) -> Option<Type>;

    /// The type of a field of a message type.
    fn find_field(&self, message: &str, field: &str) -> Option<FieldType>;

    /// The value of an enum constant named by its fully qualified name
    /// (`pkg.Enum.VALUE`).
    fn find_enum_value(&self, name: &str) -> Option<i64>;

    /// Whether a literal of this type (one this provider declares, not a protobuf message)
    /// builds a map of its fields, as Kubernetes' `Object{...}` and `JSONPatch{...}` in
    /// mutating admission policies do. No by default: such a literal is then an error.
    fn builds_maps(&self, _type_name: &str) -> bool {
        false
    }
}

/// A type provider that knows no types.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTypes;

impl TypeProvider for NoTypes {
    fn find_type(&self, _name: &str) -> Option<Type> {
        None
    }
    fn find_field(&self, _message: &str, _field: &str) -> Option<FieldType> {
        None
    }
    fn find_enum_value(&self, _name: &str) -> Option<i64> {
        None
    }
}

/// A namespace in which names are resolved, as cel-go's `containers.Container`.
///
/// In container `a.b`, the name `c.d` is looked up as `a.b.c.d`, then `a.c.d`, then `c.d`.
/// A name with a leading dot (`.c.d`) is only looked up as `c.d`. Abbreviations (aliases)
/// map a simple name to a qualified one.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Container {
    name: String,
    aliases: HashMap<String, String>,
}

impl Container {
    /// A container with the given qualified name (empty for the root).
    pub fn new(name: impl Into<String>) -> Container {
        Container {
            name: name.into(),
            aliases: HashMap::new(),
        }
    }

    /// The container's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Adds an abbreviation: `alias` stands for `qualified`.
    pub fn with_alias(mut self, alias: &str, qualified: &str) -> Container {
        self.aliases
            .insert(alias.to_string(), qualified.to_string());
        self
    }

    /// The candidate fully qualified names for `name`, most specific first.
    pub fn resolve_candidates(&self, name: &str) -> Vec<String> {
        if let Some(root) = name.strip_prefix('.') {
            return vec![root.to_string()];
        }
        // An alias replaces the first segment.
        let (first, rest) = match name.split_once('.') {
            Some((f, r)) => (f, Some(r)),
            None => (name, None),
        };
        if let Some(q) = self.aliases.get(first) {
            return vec![match rest {
                Some(r) => format!("{q}.{r}"),
                None => q.clone(),
            }];
        }
        let mut out = Vec::new();
        let mut prefix = self.name.as_str();
        while !prefix.is_empty() {
            out.push(format!("{prefix}.{name}"));
            prefix = match prefix.rfind('.') {
                Some(i) => &prefix[..i],
                None => "",
            };
        }
        out.push(name.to_string());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_candidates_most_specific_first() {
        let c = Container::new("a.b");
        assert_eq!(c.resolve_candidates("c.d"), vec!["a.b.c.d", "a.c.d", "c.d"]);
        assert_eq!(c.resolve_candidates(".c"), vec!["c"]);
        assert_eq!(Container::default().resolve_candidates("x"), vec!["x"]);
    }

    #[test]
    fn type_params_in_order() {
        let o = OverloadDecl::global(
            "index_map",
            vec![
                Type::map(Type::param("A"), Type::param("B")),
                Type::param("A"),
            ],
            Type::param("B"),
        );
        let names: Vec<_> = o.type_params().iter().map(|s| s.to_string()).collect();
        assert_eq!(names, vec!["A", "B"]);
    }
}
