//! The checker proper: one pass over the AST that resolves names against the container,
//! gives every node a type, picks the overloads each call may use, and rewrites qualified
//! names (`a.b.c` declared as one variable, `pkg.f(x)` as a namespaced function) into the
//! resolved form, as cel-go's checker does.

use std::collections::HashMap;

use cel_syntax::{
    Ast, Call, Comprehension, Diagnostic, Expr, ExprId, ExprKind, ListExpr, Literal, MapExpr,
    StructExpr, operators,
};
use cel_types::{FunctionDecl, OverloadDecl, Type, VariableDecl};

use crate::env::CheckerEnv;
use crate::unify::{Substitution, most_general};

/// What a name or call resolved to.
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// For identifiers (and resolved selects, struct literals): the fully qualified name.
    /// For calls: empty.
    pub name: String,
    /// For calls: the ids of the overloads that may apply, in declaration order. More than
    /// one when argument types are only known at run time (`dyn`).
    pub overload_ids: Vec<String>,
    /// For enum constants: their value.
    pub value: Option<Literal>,
}

impl Reference {
    fn ident(name: &str, value: Option<Literal>) -> Reference {
        Reference {
            name: name.to_string(),
            overload_ids: Vec::new(),
            value,
        }
    }

    fn function(ids: Vec<String>) -> Reference {
        Reference {
            name: String::new(),
            overload_ids: ids,
            value: None,
        }
    }
}

/// A type-checked expression: the (possibly rewritten) AST, the type of every node and the
/// reference of every identifier and call.
#[derive(Clone, Debug, PartialEq)]
pub struct CheckedAst {
    /// The AST, with qualified names resolved.
    pub ast: Ast,
    /// The type of every node.
    pub types: HashMap<ExprId, Type>,
    /// What each identifier, resolved select, struct literal and call refers to.
    pub references: HashMap<ExprId, Reference>,
}

/// The types of a deeply nested expression are as deep as it is; they are freed one node at a
/// time ([`Type::drop_iteratively`]) so that dropping a checked AST cannot overflow the stack.
impl Drop for CheckedAst {
    fn drop(&mut self) {
        for (_, t) in self.types.drain() {
            t.drop_iteratively();
        }
    }
}

impl CheckedAst {
    /// The type of the whole expression.
    pub fn result_type(&self) -> &Type {
        self.types.get(&self.ast.expr.id).unwrap_or(&Type::Error)
    }

    /// The type of one node (`dyn` if unknown).
    pub fn type_of(&self, id: ExprId) -> &Type {
        self.types.get(&id).unwrap_or(&Type::Dyn)
    }
}

/// Type-checks a parsed expression. Returns the checked AST and the diagnostics; the AST is
/// only meaningful when there are none.
pub fn check(env: &CheckerEnv, ast: &Ast) -> (CheckedAst, Vec<Diagnostic>) {
    let mut checker = Checker {
        env,
        scopes: Vec::new(),
        types: HashMap::new(),
        references: HashMap::new(),
        subst: Substitution::default(),
        fresh: 0,
        diagnostics: Vec::new(),
        ast,
    };
    let mut expr = ast.expr.clone();
    checker.check(&mut expr);
    // Bind every remaining type parameter to `dyn`, as cel-go does at the end of checking.
    let subst = std::mem::take(&mut checker.subst);
    let types = checker
        .types
        .into_iter()
        .map(|(id, t)| {
            let substituted = subst.substitute(&t, true);
            t.drop_iteratively();
            (id, substituted)
        })
        .collect();
    let checked = CheckedAst {
        ast: Ast {
            expr,
            source_info: ast.source_info.clone(),
        },
        types,
        references: checker.references,
    };
    (checked, checker.diagnostics)
}

struct Checker<'a> {
    env: &'a CheckerEnv,
    /// Comprehension scopes, innermost last.
    scopes: Vec<HashMap<String, VariableDecl>>,
    types: HashMap<ExprId, Type>,
    references: HashMap<ExprId, Reference>,
    subst: Substitution,
    fresh: usize,
    diagnostics: Vec<Diagnostic>,
    ast: &'a Ast,
}

impl Checker<'_> {
    fn report(&mut self, id: ExprId, message: String) {
        let offset = self.ast.source_info.anchor(id).unwrap_or(0);
        self.diagnostics.push(Diagnostic {
            offset,
            expr_id: id,
            message,
        });
    }

    fn set_type(&mut self, id: ExprId, t: Type) {
        self.types.insert(id, t);
    }

    fn get_type(&self, id: ExprId) -> Type {
        self.types.get(&id).cloned().unwrap_or(Type::Error)
    }

    fn new_type_var(&mut self) -> Type {
        let t = Type::param(&format!("_var{}", self.fresh));
        self.fresh += 1;
        t
    }

    fn container_name(&self) -> &str {
        self.env.container.name()
    }

    fn undeclared(&mut self, id: ExprId, name: &str) {
        let msg = format!(
            "undeclared reference to '{name}' (in container '{}')",
            self.container_name()
        );
        self.report(id, msg);
    }

    /// cel-go's `Env.LookupIdent`: local scopes and declared variables for each candidate
    /// name, then message types, then enum constants.
    fn lookup_ident(&self, name: &str) -> Option<(VariableDecl, Option<Literal>)> {
        // Comprehension variables shadow every global, however qualified; a leading dot
        // (`.y`) reaches past them to the global.
        if let Some(v) = self.local(name) {
            return Some((v.clone(), None));
        }
        for candidate in self.env.container.resolve_candidates(name) {
            if let Some(v) = self.env.variables.get(&candidate) {
                return Some((v.clone(), None));
            }
            if let Some(t) = self.env.find_type(&candidate) {
                return Some((VariableDecl::new(candidate, Type::type_of(t)), None));
            }
            if let Some(value) = self.env.provider.find_enum_value(&candidate) {
                return Some((
                    VariableDecl::new(candidate, Type::Int),
                    Some(Literal::Int(value)),
                ));
            }
        }
        None
    }

    /// The comprehension variable a simple name refers to, if any.
    fn local(&self, name: &str) -> Option<&VariableDecl> {
        self.scopes.iter().rev().find_map(|scope| scope.get(name))
    }

    fn check(&mut self, e: &mut Expr) {
        cel_syntax::stack::guarded(|| self.check_unguarded(e))
    }

    fn check_unguarded(&mut self, e: &mut Expr) {
        let id = e.id;
        match &mut e.kind {
            ExprKind::Error => self.set_type(id, Type::Error),
            ExprKind::Literal(lit) => {
                let t = match lit {
                    Literal::Null => Type::Null,
                    Literal::Bool(_) => Type::Bool,
                    Literal::Int(_) => Type::Int,
                    Literal::Uint(_) => Type::Uint,
                    Literal::Double(_) => Type::Double,
                    Literal::String(_) => Type::String,
                    Literal::Bytes(_) => Type::Bytes,
                };
                self.set_type(id, t);
            }
            ExprKind::Ident(name) => {
                let name = name.clone();
                match self.lookup_ident(&name) {
                    Some((decl, value)) => {
                        self.set_type(id, decl.ty.clone());
                        self.references
                            .insert(id, Reference::ident(&decl.name, value));
                        // A leading dot stays, so that the planner never mistakes a global
                        // for a comprehension variable of the same name.
                        if !name.starts_with('.') {
                            e.kind = ExprKind::Ident(decl.name);
                        }
                    }
                    None => {
                        self.set_type(id, Type::Error);
                        self.undeclared(id, &name);
                    }
                }
            }
            ExprKind::Select(_) => self.check_select(e),
            ExprKind::Call(_) => self.check_call(e),
            ExprKind::List(list) => self.check_list(id, list),
            ExprKind::Map(map) => self.check_map(id, map),
            ExprKind::Struct(s) => self.check_struct(id, s),
            ExprKind::Comprehension(c) => self.check_comprehension(id, c),
        }
    }

    fn check_select(&mut self, e: &mut Expr) {
        let id = e.id;
        // Before descending, try the whole chain as one qualified name.
        if let Some(qname) = qualified_name(e)
            && self.local(qname.split('.').next().unwrap_or("")).is_none()
            && let Some((decl, value)) = self.lookup_ident(&qname)
        {
            self.set_type(id, decl.ty.clone());
            self.references
                .insert(id, Reference::ident(&decl.name, value));
            e.kind = ExprKind::Ident(decl.name);
            return;
        }
        let ExprKind::Select(sel) = &mut e.kind else {
            return;
        };
        let test_only = sel.test_only;
        let field = sel.field.clone();
        let mut t = self.check_select_field(id, &mut sel.operand, &field, false);
        if test_only {
            t = Type::Bool;
        }
        let t = self.subst.substitute(&t, false);
        self.set_type(id, t);
    }

    /// The type of `operand.field` (wrapped in `optional_type` for optional selection or an
    /// optional operand).
    fn check_select_field(
        &mut self,
        id: ExprId,
        operand: &mut Expr,
        field: &str,
        optional: bool,
    ) -> Type {
        self.check(operand);
        let operand_type = self.subst.substitute(&self.get_type(operand.id), false);
        let (target, is_opt) = match operand_type.optional_elem() {
            Some(inner) => (inner.clone(), true),
            None => (operand_type.clone(), false),
        };
        let result = match &target {
            Type::Map(_, v) => (**v).clone(),
            Type::Message(name) => match self.lookup_field_type(id, name, field) {
                Some(t) => t,
                None => Type::Error,
            },
            Type::TypeParam(_) => {
                self.subst.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            other => {
                if !other.is_dyn_or_error() {
                    self.report(
                        id,
                        format!("type '{other}' does not support field selection"),
                    );
                }
                Type::Dyn
            }
        };
        if is_opt || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn lookup_field_type(&mut self, id: ExprId, message: &str, field: &str) -> Option<Type> {
        if self.env.provider.find_type(message).is_none() {
            self.report(id, format!("unexpected failed resolution of '{message}'"));
            return None;
        }
        match self.env.provider.find_field(message, field) {
            Some(f) => Some(f.ty),
            None => {
                self.report(id, format!("undefined field '{field}'"));
                None
            }
        }
    }

    fn check_call(&mut self, e: &mut Expr) {
        let id = e.id;
        let ExprKind::Call(call) = &mut e.kind else {
            return;
        };
        if call.function == operators::OPT_SELECT {
            self.check_opt_select(id, call);
            return;
        }
        for arg in call.args.iter_mut() {
            self.check(arg);
        }
        if call.target.is_none() {
            let env = self.env;
            let Some(func) = env.lookup_function(&call.function) else {
                self.set_type(id, Type::Error);
                let name = call.function.clone();
                self.undeclared(id, &name);
                return;
            };
            call.function = func.name.clone();
            self.resolve_overload(id, func, None, &call.args);
            return;
        }
        // A receiver may really be a namespace: `a.b.f(x)` where `a.b.f` is a function.
        let target = call.target.as_deref().expect("checked above");
        if let Some(prefix) = qualified_name(target)
            && let Some(func) = self
                .env
                .lookup_function(&format!("{prefix}.{}", call.function))
        {
            call.function = func.name.clone();
            call.target = None;
            self.resolve_overload(id, func, None, &call.args);
            return;
        }
        let target = call.target.as_deref_mut().expect("checked above");
        self.check(target);
        match self.env.lookup_function(&call.function) {
            Some(func) => {
                let target = call.target.as_deref();
                self.resolve_overload(id, func, target, &call.args);
            }
            None => {
                self.set_type(id, Type::Error);
                let name = call.function.clone();
                self.undeclared(id, &name);
            }
        }
    }

    fn check_opt_select(&mut self, id: ExprId, call: &mut Call) {
        if call.args.len() != 2 {
            self.set_type(id, Type::Error);
            return;
        }
        let field = match &call.args[1].kind {
            ExprKind::Literal(Literal::String(s)) => s.clone(),
            _ => {
                let fid = call.args[1].id;
                self.report(fid, "unsupported optional field selection".to_string());
                self.set_type(id, Type::Error);
                return;
            }
        };
        let (operand, _) = call.args.split_at_mut(1);
        let t = self.check_select_field(id, &mut operand[0], &field, true);
        let t = self.subst.substitute(&t, false);
        let fid = call.args[1].id;
        self.set_type(fid, Type::String);
        self.set_type(id, t);
        self.references.insert(
            id,
            Reference::function(vec!["select_optional_field".to_string()]),
        );
    }

    fn resolve_overload(
        &mut self,
        id: ExprId,
        func: &FunctionDecl,
        target: Option<&Expr>,
        args: &[Expr],
    ) {
        let mut arg_types: Vec<Type> = Vec::with_capacity(args.len() + 1);
        if let Some(t) = target {
            arg_types.push(self.get_type(t.id));
        }
        arg_types.extend(args.iter().map(|a| self.get_type(a.id)));

        let mut result: Option<Type> = None;
        let mut ids = Vec::new();
        for overload in &func.overloads {
            if !self.env.overload_enabled(&overload.id)
                || overload.is_member != target.is_some()
                || overload.params.len() != arg_types.len()
            {
                continue;
            }
            let (params, overload_result) = self.instantiate(overload);
            if self.subst.is_assignable_list(&params, &arg_types) {
                ids.push(overload.id.clone());
                let t = self.subst.substitute(&overload_result, false);
                result = Some(match result {
                    None => t,
                    Some(prev) if prev == Type::Dyn || prev == t => prev,
                    Some(_) => Type::Dyn,
                });
            }
        }
        match result {
            Some(t) => {
                self.set_type(id, t);
                self.references.insert(id, Reference::function(ids));
            }
            None => {
                let shown: Vec<Type> = arg_types
                    .iter()
                    .map(|t| self.subst.substitute(t, true))
                    .collect();
                let signature = format_signature(&shown, target.is_some());
                self.report(
                    id,
                    format!(
                        "found no matching overload for '{}' applied to '{signature}'",
                        func.name
                    ),
                );
                self.set_type(id, Type::Error);
            }
        }
    }

    /// The overload's parameter and result types with its type parameters replaced by fresh
    /// type variables.
    fn instantiate(&mut self, overload: &OverloadDecl) -> (Vec<Type>, Type) {
        let type_params = overload.type_params();
        if type_params.is_empty() {
            return (overload.params.clone(), overload.result.clone());
        }
        let fresh: Vec<(std::sync::Arc<str>, Type)> = type_params
            .into_iter()
            .map(|p| (p, self.new_type_var()))
            .collect();
        let sub = |name: &str| {
            fresh
                .iter()
                .find(|(p, _)| &**p == name)
                .map(|(_, t)| t.clone())
        };
        (
            overload.params.iter().map(|p| p.substitute(&sub)).collect(),
            overload.result.substitute(&sub),
        )
    }

    fn join_types(&mut self, id: ExprId, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.subst.is_assignable(&previous, &current) {
            return most_general(&previous, &current);
        }
        if !self.env.options.homogeneous_aggregate_literals {
            return Type::Dyn;
        }
        self.report(
            id,
            format!("expected type '{previous}' but found '{current}'"),
        );
        Type::Error
    }

    /// The element type of an optional entry, reporting an error if it is not optional.
    fn unwrap_optional_entry(&mut self, id: ExprId, t: Type) -> Type {
        match t.optional_elem() {
            Some(inner) => inner.clone(),
            None => {
                if t != Type::Dyn {
                    let expected = Type::optional(t.clone());
                    self.report(id, format!("expected type '{expected}' but found '{t}'"));
                }
                t
            }
        }
    }

    fn check_list(&mut self, id: ExprId, list: &mut ListExpr) {
        let mut elem_type: Option<Type> = None;
        for (i, el) in list.elements.iter_mut().enumerate() {
            self.check(el);
            let mut t = self.get_type(el.id);
            if list.optional_indices.contains(&i) {
                t = self.unwrap_optional_entry(el.id, t);
            }
            elem_type = Some(self.join_types(el.id, elem_type, t));
        }
        let elem_type = match elem_type {
            Some(t) => t,
            None => self.new_type_var(),
        };
        self.set_type(id, Type::list(elem_type));
    }

    fn check_map(&mut self, id: ExprId, map: &mut MapExpr) {
        let mut key_type: Option<Type> = None;
        let mut value_type: Option<Type> = None;
        for entry in map.entries.iter_mut() {
            self.check(&mut entry.key);
            let kt = self.get_type(entry.key.id);
            key_type = Some(self.join_types(entry.key.id, key_type, kt));
            self.check(&mut entry.value);
            let mut vt = self.get_type(entry.value.id);
            if entry.optional {
                vt = self.unwrap_optional_entry(entry.value.id, vt);
            }
            value_type = Some(self.join_types(entry.value.id, value_type, vt));
        }
        let (k, v) = match (key_type, value_type) {
            (Some(k), Some(v)) => (k, v),
            _ => (self.new_type_var(), self.new_type_var()),
        };
        self.set_type(id, Type::map(k, v));
    }

    fn check_struct(&mut self, id: ExprId, s: &mut StructExpr) {
        let Some((decl, _)) = self.lookup_ident(&s.type_name) else {
            let name = s.type_name.clone();
            self.undeclared(id, &name);
            self.set_type(id, Type::Error);
            for f in s.fields.iter_mut() {
                self.check(&mut f.value);
            }
            return;
        };
        s.type_name = decl.name.clone();
        self.references
            .insert(id, Reference::ident(&decl.name, None));
        let mut result = Type::Error;
        let mut message_name: Option<String> = None;
        match &decl.ty {
            Type::Error => {}
            Type::Type(Some(t)) => match &**t {
                Type::Message(name) => {
                    message_name = Some(name.to_string());
                    result = (**t).clone();
                }
                t if Type::well_known(&decl.name).is_some() => {
                    message_name = Some(decl.name.clone());
                    result = t.clone();
                }
                t => {
                    self.report(id, format!("'{t}' is not a message type"));
                }
            },
            other => {
                self.report(id, format!("'{other}' is not a type"));
            }
        }
        self.set_type(id, result);
        for f in s.fields.iter_mut() {
            self.check(&mut f.value);
            let field_type = match &message_name {
                Some(m) => self
                    .lookup_struct_field(f.id, m, &f.name)
                    .unwrap_or(Type::Error),
                None => Type::Error,
            };
            let mut vt = self.get_type(f.value.id);
            if f.optional {
                vt = self.unwrap_optional_entry(f.value.id, vt);
            }
            if !self.subst.is_assignable(&field_type, &vt) {
                self.report(
                    f.id,
                    format!(
                        "expected type of field '{}' is '{field_type}' but provided type is '{vt}'",
                        f.name
                    ),
                );
            }
        }
    }

    /// A field of a message or well-known type being constructed.
    fn lookup_struct_field(&mut self, id: ExprId, message: &str, field: &str) -> Option<Type> {
        if let Some(f) = self.env.provider.find_field(message, field) {
            return Some(f.ty);
        }
        if self.env.provider.find_type(message).is_none() && Type::well_known(message).is_some() {
            // The well-known wrapper types have one field, `value`; others are not checked here.
            if let Some(Type::Wrapper(p)) = Type::well_known(message)
                && field == "value"
            {
                return Some(p.as_type());
            }
            return Some(Type::Dyn);
        }
        self.report(id, format!("undefined field '{field}'"));
        None
    }

    fn check_comprehension(&mut self, id: ExprId, c: &mut Comprehension) {
        self.check(&mut c.iter_range);
        self.check(&mut c.accu_init);
        let range_type = self
            .subst
            .substitute(&self.get_type(c.iter_range.id), false);
        let accu_type = self.get_type(c.accu_init.id);
        let mut accu_scope = HashMap::new();
        accu_scope.insert(
            c.accu_var.clone(),
            VariableDecl::new(c.accu_var.clone(), accu_type.clone()),
        );
        self.scopes.push(accu_scope);

        let two_vars = c.iter_var2.is_some();
        let (var_type, var2_type) = match &range_type {
            Type::List(elem) => {
                if two_vars {
                    (Type::Int, (**elem).clone())
                } else {
                    ((**elem).clone(), Type::Error)
                }
            }
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::Dyn | Type::Error | Type::TypeParam(_) => {
                self.subst.is_assignable(&Type::Dyn, &range_type);
                (Type::Dyn, Type::Dyn)
            }
            other => {
                self.report(
                    c.iter_range.id,
                    format!(
                        "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                    ),
                );
                (Type::Error, Type::Error)
            }
        };
        let mut loop_scope = HashMap::new();
        loop_scope.insert(
            c.iter_var.clone(),
            VariableDecl::new(c.iter_var.clone(), var_type),
        );
        if let Some(v2) = &c.iter_var2 {
            loop_scope.insert(v2.clone(), VariableDecl::new(v2.clone(), var2_type));
        }
        self.scopes.push(loop_scope);
        self.check(&mut c.loop_condition);
        self.assert_type(c.loop_condition.id, &Type::Bool);
        self.check(&mut c.loop_step);
        self.assert_type(c.loop_step.id, &accu_type);
        self.scopes.pop();
        self.check(&mut c.result);
        self.scopes.pop();
        let t = self.subst.substitute(&self.get_type(c.result.id), false);
        self.set_type(id, t);
    }

    fn assert_type(&mut self, id: ExprId, expected: &Type) {
        let actual = self.get_type(id);
        if !self.subst.is_assignable(expected, &actual) {
            self.report(
                id,
                format!("expected type '{expected}' but found '{actual}'"),
            );
        }
    }
}

/// The dotted name an ident/select chain spells (`a.b.c`), if it is one. Presence tests
/// never form qualified names.
pub(crate) fn qualified_name(e: &Expr) -> Option<String> {
    // Iterative, so that a long chain cannot overflow the stack; built in one string.
    let mut fields = Vec::new();
    let mut e = e;
    loop {
        match &e.kind {
            ExprKind::Ident(name) => {
                let len = name.len() + fields.iter().map(|f: &&String| f.len() + 1).sum::<usize>();
                let mut out = String::with_capacity(len);
                out.push_str(name);
                for f in fields.iter().rev() {
                    out.push('.');
                    out.push_str(f);
                }
                return Some(out);
            }
            ExprKind::Select(sel) if !sel.test_only => {
                fields.push(&sel.field);
                e = &sel.operand;
            }
            _ => return None,
        }
    }
}

/// cel-go's rendering of argument types in "no matching overload": `(int, string)`, or for a
/// member call `string.(int)`.
fn format_signature(types: &[Type], is_member: bool) -> String {
    let (receiver, args) = match (is_member, types.split_first()) {
        (true, Some((r, rest))) => (Some(r), rest),
        _ => (None, types),
    };
    let args: Vec<String> = args.iter().map(|t| t.to_string()).collect();
    match receiver {
        Some(r) => format!("{r}.({})", args.join(", ")),
        None => format!("({})", args.join(", ")),
    }
}
