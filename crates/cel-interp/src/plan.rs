//! The planner: turns a checked (or unchecked) AST into a tree of [`Node`]s with names,
//! overloads, constant regular expressions and comprehension variable slots resolved ahead of
//! evaluation, so that evaluating many times does no lookups by name except in the activation.

use std::sync::Arc;

use cel_checker::CheckedAst;
use cel_runtime::{Error, Implementation, Key, Value};
use cel_syntax::{
    Ast, Comprehension, Expr, ExprId, ExprKind, ListExpr, Literal, MapExpr, StructExpr, operators,
};
use cel_types::{Container, Type, TypeProvider};

use crate::functions::{FunctionTable, OverloadEntry};

/// What the planner needs besides the AST.
#[derive(Clone, Debug)]
pub struct PlanEnv {
    /// Declared functions with their implementations.
    pub functions: Arc<FunctionTable>,
    /// The container for resolving names of unchecked expressions.
    pub container: Container,
    /// Message and enum types.
    pub provider: Arc<dyn TypeProvider>,
}

/// How a call reaches its implementation.
#[derive(Clone, Debug)]
pub(crate) enum Dispatch {
    /// One overload applies: call it directly.
    Direct(Implementation),
    /// Several may apply; pick by the runtime types of the arguments.
    Candidates(Vec<Arc<OverloadEntry>>),
    /// The function is not known at all (unchecked expressions): fail when called.
    Unknown(Arc<str>),
}

/// One planned node.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A value known ahead of evaluation (literals, type names, enum constants).
    Const(Value),
    /// A variable from the activation, by its resolved name.
    Global { id: ExprId, name: Arc<str> },
    /// An unchecked name: the first candidate bound in the activation; else a type name.
    MaybeGlobal {
        id: ExprId,
        candidates: Vec<Arc<str>>,
        type_value: Option<Value>,
    },
    /// An unchecked dotted name `a.b.c`: the longest prefix bound in the activation, then
    /// field selection on the rest.
    Qualified {
        id: ExprId,
        /// (variable name, remaining fields), longest variable name first.
        candidates: Vec<(Arc<str>, Vec<Arc<str>>)>,
        type_value: Option<Value>,
    },
    /// A comprehension variable or accumulator.
    Local { slot: usize },
    /// `operand.field`.
    Select {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
    },
    /// `has(operand.field)`.
    Has {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
    },
    /// `operand.?field`.
    OptSelect {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
    },
    /// `operand[index]`.
    Index {
        id: ExprId,
        operand: Box<Node>,
        index: Box<Node>,
    },
    /// `operand[?index]`.
    OptIndex {
        id: ExprId,
        operand: Box<Node>,
        index: Box<Node>,
    },
    /// `a && b`.
    And {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// `a || b`.
    Or {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// `c ? t : f`.
    Conditional {
        id: ExprId,
        cond: Box<Node>,
        then: Box<Node>,
        otherwise: Box<Node>,
    },
    /// `@not_strictly_false(x)`: true unless x is `false`.
    NotStrictlyFalse { arg: Box<Node> },
    /// `opt.or(other)`: `other` is evaluated only when `opt` is empty.
    OptOr {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// `opt.orValue(v)`: `v` is evaluated only when `opt` is empty.
    OptOrValue {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
    },
    /// A strict call: arguments (receiver first) are evaluated, errors propagate.
    Call {
        id: ExprId,
        args: Vec<Node>,
        dispatch: Dispatch,
    },
    /// `s.matches(re)` (or `matches(s, re)`) with a constant pattern compiled once.
    MatchesConst {
        id: ExprId,
        subject: Box<Node>,
        regex: Result<Arc<regex::Regex>, Error>,
    },
    /// A list literal; `optional[i]` marks `?e` elements.
    List {
        id: ExprId,
        elements: Vec<Node>,
        optional: Vec<bool>,
    },
    /// A list literal whose elements are all constants, built once.
    ConstList { value: Value },
    /// A map literal.
    Map {
        id: ExprId,
        entries: Vec<(Node, Node, bool)>,
    },
    /// A message literal.
    Struct {
        id: ExprId,
        type_name: Arc<str>,
        fields: Vec<(Arc<str>, Node, bool)>,
    },
    /// A comprehension (macro expansion).
    Fold(Box<Fold>),
    /// `cel.@mapInsert(accu, key, value)` or `cel.@mapInsert(accu, map)` inside a
    /// comprehension step, inserting in place.
    AccuMapInsert {
        id: ExprId,
        slot: usize,
        key: Option<Box<Node>>,
        value: Box<Node>,
    },
    /// `accu + [elem]` inside a comprehension step, appending in place.
    AccuAppend { slot: usize, elem: Box<Node> },
    /// A node that always fails (e.g. an unparseable AST placeholder).
    Fail(Error),
}

/// A planned comprehension.
#[derive(Clone, Debug)]
pub(crate) struct Fold {
    pub(crate) id: ExprId,
    pub(crate) range: Node,
    pub(crate) accu_slot: usize,
    pub(crate) iter_slot: usize,
    /// Set for two-variable comprehensions.
    pub(crate) iter2_slot: Option<usize>,
    pub(crate) init: Node,
    pub(crate) cond: Node,
    pub(crate) step: Node,
    pub(crate) result: Node,
}

/// A planned expression, ready to evaluate any number of times.
#[derive(Clone, Debug)]
pub struct Plan {
    pub(crate) root: Node,
    pub(crate) slots: usize,
}

struct Planner<'a> {
    env: &'a PlanEnv,
    checked: Option<&'a CheckedAst>,
    /// Names of comprehension variables in scope with their slots, innermost last.
    scopes: Vec<(String, usize)>,
    next_slot: usize,
    max_slots: usize,
}

impl Plan {
    /// Plans a checked expression, using the checker's resolved names and overloads.
    pub fn checked(checked: &CheckedAst, env: &PlanEnv) -> Plan {
        let mut p = Planner {
            env,
            checked: Some(checked),
            scopes: Vec::new(),
            next_slot: 0,
            max_slots: 0,
        };
        let root = p.plan(&checked.ast.expr);
        Plan {
            root,
            slots: p.max_slots,
        }
    }

    /// Plans an expression that was not type-checked: names are resolved in the container at
    /// evaluation time and calls dispatch on the runtime types of their arguments.
    pub fn unchecked(ast: &Ast, env: &PlanEnv) -> Plan {
        let mut p = Planner {
            env,
            checked: None,
            scopes: Vec::new(),
            next_slot: 0,
            max_slots: 0,
        };
        let root = p.plan(&ast.expr);
        Plan {
            root,
            slots: p.max_slots,
        }
    }
}

fn literal_value(lit: &Literal) -> Value {
    match lit {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(i) => Value::Int(*i),
        Literal::Uint(u) => Value::Uint(*u),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::string(s.as_str()),
        Literal::Bytes(b) => Value::bytes(b.as_slice()),
    }
}

/// The type a standard type identifier denotes (`int`, `list`, `google.protobuf.Timestamp`).
fn builtin_type_name(name: &str) -> Option<Type> {
    Some(match name {
        "bool" => Type::Bool,
        "bytes" => Type::Bytes,
        "double" => Type::Double,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "string" => Type::String,
        "null_type" => Type::Null,
        "type" => Type::Type(None),
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "optional_type" => Type::optional(Type::Dyn),
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        _ => return None,
    })
}

impl Planner<'_> {
    fn local(&self, name: &str) -> Option<usize> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, s)| *s)
    }

    fn alloc_slot(&mut self) -> usize {
        let s = self.next_slot;
        self.next_slot += 1;
        self.max_slots = self.max_slots.max(self.next_slot);
        s
    }

    /// A type value for a name, if the name denotes a type.
    fn type_value(&self, name: &str) -> Option<Value> {
        let name = name.strip_prefix('.').unwrap_or(name);
        builtin_type_name(name)
            .or_else(|| self.env.provider.find_type(name))
            .or_else(|| Type::well_known(name).map(|_| Type::message(name)))
            .map(Value::type_value)
    }

    fn plan(&mut self, e: &Expr) -> Node {
        match &e.kind {
            ExprKind::Error => Node::Fail(Error::internal("expression has syntax errors").at(e.id)),
            ExprKind::Literal(lit) => Node::Const(literal_value(lit)),
            ExprKind::Ident(name) => self.plan_ident(e.id, name),
            ExprKind::Select(sel) => {
                if !sel.test_only
                    && self.checked.is_none()
                    && let Some(node) = self.plan_unchecked_qualified(e)
                {
                    return node;
                }
                let operand = Box::new(self.plan(&sel.operand));
                let field: Arc<str> = sel.field.as_str().into();
                if sel.test_only {
                    Node::Has {
                        id: e.id,
                        operand,
                        field,
                    }
                } else {
                    Node::Select {
                        id: e.id,
                        operand,
                        field,
                    }
                }
            }
            ExprKind::Call(call) => {
                self.plan_call(e.id, call.target.as_deref(), &call.function, &call.args)
            }
            ExprKind::List(list) => self.plan_list(e.id, list),
            ExprKind::Map(map) => self.plan_map(e.id, map),
            ExprKind::Struct(s) => self.plan_struct(e.id, s),
            ExprKind::Comprehension(c) => self.plan_fold(e.id, c),
        }
    }

    fn plan_ident(&mut self, id: ExprId, name: &str) -> Node {
        // A leading dot names a global even where a comprehension variable shadows it.
        if !name.starts_with('.')
            && let Some(slot) = self.local(name)
        {
            return Node::Local { slot };
        }
        if let Some(checked) = self.checked {
            if let Some(r) = checked.references.get(&id) {
                if let Some(Literal::Int(v)) = &r.value {
                    return Node::Const(Value::Int(*v));
                }
                // Type identifiers are constants; declared variables come from the activation.
                if let Some(Type::Type(_)) = checked.types.get(&id)
                    && let Some(v) = self.type_value(&r.name)
                {
                    return Node::Const(v);
                }
                return Node::Global {
                    id,
                    name: r.name.as_str().into(),
                };
            }
            return Node::Global {
                id,
                name: name.into(),
            };
        }
        let candidates = self
            .env
            .container
            .resolve_candidates(name)
            .into_iter()
            .map(|c| Arc::from(c.as_str()))
            .collect();
        Node::MaybeGlobal {
            id,
            candidates,
            type_value: self.type_value(name),
        }
    }

    /// For unchecked `a.b.c` whose root is not a local: try variable names from the longest
    /// prefix down, each in every container candidate.
    fn plan_unchecked_qualified(&mut self, e: &Expr) -> Option<Node> {
        let mut parts: Vec<&str> = Vec::new();
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Select(s) if !s.test_only => {
                    parts.push(&s.field);
                    cur = &s.operand;
                }
                ExprKind::Ident(name) => {
                    parts.push(name);
                    break;
                }
                _ => return None,
            }
        }
        parts.reverse();
        if self.local(parts[0]).is_some() {
            return None;
        }
        let mut candidates = Vec::new();
        for k in (1..=parts.len()).rev() {
            let var = parts[..k].join(".");
            let rest: Vec<Arc<str>> = parts[k..].iter().map(|s| Arc::from(*s)).collect();
            for c in self.env.container.resolve_candidates(&var) {
                candidates.push((Arc::from(c.as_str()), rest.clone()));
            }
        }
        let full = parts.join(".");
        Some(Node::Qualified {
            id: e.id,
            candidates,
            type_value: self.type_value(&full),
        })
    }

    fn plan_call(
        &mut self,
        id: ExprId,
        target: Option<&Expr>,
        function: &str,
        args: &[Expr],
    ) -> Node {
        let n_args = args.len() + target.is_some() as usize;
        match (function, target, args) {
            (operators::LOGICAL_AND, None, [l, r]) => {
                return Node::And {
                    id,
                    lhs: Box::new(self.plan(l)),
                    rhs: Box::new(self.plan(r)),
                };
            }
            (operators::LOGICAL_OR, None, [l, r]) => {
                return Node::Or {
                    id,
                    lhs: Box::new(self.plan(l)),
                    rhs: Box::new(self.plan(r)),
                };
            }
            (operators::CONDITIONAL, None, [c, t, f]) => {
                return Node::Conditional {
                    id,
                    cond: Box::new(self.plan(c)),
                    then: Box::new(self.plan(t)),
                    otherwise: Box::new(self.plan(f)),
                };
            }
            (operators::NOT_STRICTLY_FALSE | operators::OLD_NOT_STRICTLY_FALSE, None, [a]) => {
                return Node::NotStrictlyFalse {
                    arg: Box::new(self.plan(a)),
                };
            }
            (operators::INDEX, None, [o, i]) => {
                return Node::Index {
                    id,
                    operand: Box::new(self.plan(o)),
                    index: Box::new(self.plan(i)),
                };
            }
            (operators::OPT_INDEX, None, [o, i]) => {
                return Node::OptIndex {
                    id,
                    operand: Box::new(self.plan(o)),
                    index: Box::new(self.plan(i)),
                };
            }
            (operators::OPT_SELECT, None, [o, f]) => {
                if let ExprKind::Literal(Literal::String(field)) = &f.kind {
                    return Node::OptSelect {
                        id,
                        operand: Box::new(self.plan(o)),
                        field: field.as_str().into(),
                    };
                }
            }
            ("or", Some(t), [a]) if self.is_optional_call(id, "optional_or_optional", t) => {
                return Node::OptOr {
                    id,
                    lhs: Box::new(self.plan(t)),
                    rhs: Box::new(self.plan(a)),
                };
            }
            ("orValue", Some(t), [a]) if self.is_optional_call(id, "optional_orValue_value", t) => {
                return Node::OptOrValue {
                    id,
                    lhs: Box::new(self.plan(t)),
                    rhs: Box::new(self.plan(a)),
                };
            }
            _ => {}
        }

        // Unchecked `pkg.f(x)`: the receiver may be a namespace.
        let (target, function) = match (self.checked, target) {
            (None, Some(t)) => match crate::plan::qualified(t) {
                Some(prefix)
                    if self.local(prefix.split('.').next().unwrap_or("")).is_none()
                        && self
                            .resolve_function(&format!("{prefix}.{function}"))
                            .is_some() =>
                {
                    let name = self
                        .resolve_function(&format!("{prefix}.{function}"))
                        .unwrap_or_default();
                    (None, name)
                }
                _ => (Some(t), function.to_string()),
            },
            _ => (target, function.to_string()),
        };

        let mut planned: Vec<Node> = Vec::with_capacity(n_args);
        if let Some(t) = target {
            planned.push(self.plan(t));
        }
        planned.extend(args.iter().map(|a| self.plan(a)));

        let dynamic_args = match self.checked {
            Some(c) => target
                .into_iter()
                .chain(args.iter())
                .any(|a| contains_dyn(c.type_of(a.id))),
            None => true,
        };
        let dispatch =
            self.dispatch_for(id, target.is_some(), &function, planned.len(), dynamic_args);

        // Constant regular expressions are compiled once per program.
        if let Dispatch::Direct(_) | Dispatch::Candidates(_) = &dispatch
            && function == "matches"
            && planned.len() == 2
            && let Node::Const(Value::String(pattern)) = &planned[1]
        {
            let regex = cel_runtime::regex::compile(pattern).map_err(|e| e.at(id));
            let subject = Box::new(planned.swap_remove(0));
            return Node::MatchesConst { id, subject, regex };
        }
        Node::Call {
            id,
            args: planned,
            dispatch,
        }
    }

    /// Whether an `or`/`orValue` call is the optional library's (checked: by overload id;
    /// unchecked: always, as the optional library is the only one defining them).
    fn is_optional_call(&self, id: ExprId, overload_id: &str, _target: &Expr) -> bool {
        match self.checked {
            Some(c) => c
                .references
                .get(&id)
                .is_some_and(|r| r.overload_ids.iter().any(|o| o == overload_id)),
            None => true,
        }
    }

    fn resolve_function(&self, name: &str) -> Option<String> {
        self.env
            .container
            .resolve_candidates(name)
            .into_iter()
            .find(|c| self.env.functions.has_function(c))
    }

    /// How a call reaches its implementation. A checked call uses the overloads the checker
    /// chose; when an argument is `dyn`, every other overload of the function follows them,
    /// because at run time cel-go dispatches on the values (`dyn(1) < 1u` compares across
    /// types even where the checker would not offer that overload).
    fn dispatch_for(
        &self,
        id: ExprId,
        member: bool,
        function: &str,
        argc: usize,
        dynamic_args: bool,
    ) -> Dispatch {
        let table = &self.env.functions;
        if let Some(checked) = self.checked
            && let Some(r) = checked.references.get(&id)
            && !r.overload_ids.is_empty()
        {
            let mut entries: Vec<Arc<OverloadEntry>> = r
                .overload_ids
                .iter()
                .filter_map(|o| table.overload(o).cloned())
                .collect();
            if !dynamic_args
                && let [only] = entries.as_slice()
                && let Some(imp) = &only.implementation
            {
                return Dispatch::Direct(imp.clone());
            }
            if dynamic_args {
                for o in table.overloads(function).unwrap_or(&[]) {
                    if o.decl.is_member == member
                        && o.decl.params.len() == argc
                        && !entries.iter().any(|e| e.decl.id == o.decl.id)
                    {
                        entries.push(o.clone());
                    }
                }
            }
            if !entries.is_empty() {
                return Dispatch::Candidates(entries);
            }
        }
        let name = if self.checked.is_some() {
            Some(function.to_string())
        } else {
            self.resolve_function(function)
        };
        let Some(name) = name else {
            return Dispatch::Unknown(function.into());
        };
        let candidates: Vec<Arc<OverloadEntry>> = table
            .overloads(&name)
            .unwrap_or(&[])
            .iter()
            .filter(|o| o.decl.is_member == member && o.decl.params.len() == argc)
            .cloned()
            .collect();
        if candidates.is_empty() {
            Dispatch::Unknown(function.into())
        } else {
            Dispatch::Candidates(candidates)
        }
    }

    fn plan_list(&mut self, id: ExprId, list: &ListExpr) -> Node {
        let elements: Vec<Node> = list.elements.iter().map(|e| self.plan(e)).collect();
        let mut optional = vec![false; elements.len()];
        for &i in &list.optional_indices {
            if let Some(o) = optional.get_mut(i) {
                *o = true;
            }
        }
        if optional.iter().all(|o| !o) && elements.iter().all(|e| matches!(e, Node::Const(_))) {
            // Values are immutable, so one list built at plan time is indistinguishable from
            // a fresh one per evaluation.
            let items = elements
                .into_iter()
                .filter_map(|e| match e {
                    Node::Const(v) => Some(v),
                    _ => None,
                })
                .collect();
            return Node::ConstList {
                value: Value::list(items),
            };
        }
        Node::List {
            id,
            elements,
            optional,
        }
    }

    fn plan_map(&mut self, id: ExprId, map: &MapExpr) -> Node {
        let entries = map
            .entries
            .iter()
            .map(|e| (self.plan(&e.key), self.plan(&e.value), e.optional))
            .collect();
        Node::Map { id, entries }
    }

    fn plan_struct(&mut self, id: ExprId, s: &StructExpr) -> Node {
        let type_name = s.type_name.strip_prefix('.').unwrap_or(&s.type_name);
        let type_name: Arc<str> = match self.checked {
            Some(_) => type_name.into(),
            None => self
                .env
                .container
                .resolve_candidates(type_name)
                .into_iter()
                .find(|c| self.env.provider.find_type(c).is_some() || Type::well_known(c).is_some())
                .unwrap_or_else(|| type_name.to_string())
                .into(),
        };
        let fields = s
            .fields
            .iter()
            .map(|f| (Arc::from(f.name.as_str()), self.plan(&f.value), f.optional))
            .collect();
        Node::Struct {
            id,
            type_name,
            fields,
        }
    }

    fn plan_fold(&mut self, id: ExprId, c: &Comprehension) -> Node {
        let range = self.plan(&c.iter_range);
        let init = self.plan(&c.accu_init);
        let saved_next = self.next_slot;
        let accu_slot = self.alloc_slot();
        self.scopes.push((c.accu_var.clone(), accu_slot));
        let iter_slot = self.alloc_slot();
        let iter2_slot = c.iter_var2.as_ref().map(|_| self.alloc_slot());
        self.scopes.push((c.iter_var.clone(), iter_slot));
        if let (Some(v2), Some(s2)) = (&c.iter_var2, iter2_slot) {
            self.scopes.push((v2.clone(), s2));
        }
        let cond = self.plan(&c.loop_condition);
        let step = self.plan_step(&c.loop_step, &c.accu_var, accu_slot);
        self.scopes.pop();
        if iter2_slot.is_some() {
            self.scopes.pop();
        }
        let result = self.plan(&c.result);
        self.scopes.pop();
        self.next_slot = saved_next;
        Node::Fold(Box::new(Fold {
            id,
            range,
            accu_slot,
            iter_slot,
            iter2_slot,
            init,
            cond,
            step,
            result,
        }))
    }

    /// Plans a comprehension step, turning `accu + [e]` (the shape of `map` and `filter`) into
    /// an in-place append so that building a list is linear, not quadratic.
    fn plan_step(&mut self, step: &Expr, accu_var: &str, accu_slot: usize) -> Node {
        if let Some((key, value)) = accu_map_insert(step, accu_var) {
            return Node::AccuMapInsert {
                id: step.id,
                slot: accu_slot,
                key: key.map(|k| Box::new(self.plan(k))),
                value: Box::new(self.plan(value)),
            };
        }
        if let ExprKind::Call(call) = &step.kind
            && call.function == operators::CONDITIONAL
            && let [c, t, f] = call.args.as_slice()
            && matches!(&f.kind, ExprKind::Ident(n) if n == accu_var)
            && let Some((key, value)) = accu_map_insert(t, accu_var)
        {
            return Node::Conditional {
                id: step.id,
                cond: Box::new(self.plan(c)),
                then: Box::new(Node::AccuMapInsert {
                    id: t.id,
                    slot: accu_slot,
                    key: key.map(|k| Box::new(self.plan(k))),
                    value: Box::new(self.plan(value)),
                }),
                otherwise: Box::new(Node::Local { slot: accu_slot }),
            };
        }
        if let Some(elem) = accu_append_elem(step, accu_var) {
            return Node::AccuAppend {
                slot: accu_slot,
                elem: Box::new(self.plan(elem)),
            };
        }
        if let ExprKind::Call(call) = &step.kind
            && call.function == operators::CONDITIONAL
            && call.target.is_none()
            && let [c, t, f] = call.args.as_slice()
            && let ExprKind::Ident(name) = &f.kind
            && name == accu_var
            && let Some(elem) = accu_append_elem(t, accu_var)
        {
            return Node::Conditional {
                id: step.id,
                cond: Box::new(self.plan(c)),
                then: Box::new(Node::AccuAppend {
                    slot: accu_slot,
                    elem: Box::new(self.plan(elem)),
                }),
                otherwise: Box::new(Node::Local { slot: accu_slot }),
            };
        }
        self.plan(step)
    }
}

/// If `e` is `cel.@mapInsert(accu, key, value)` or `cel.@mapInsert(accu, map)` (the steps of
/// the two-variable transforms), the key (if any) and the value.
fn accu_map_insert<'e>(e: &'e Expr, accu_var: &str) -> Option<(Option<&'e Expr>, &'e Expr)> {
    let ExprKind::Call(call) = &e.kind else {
        return None;
    };
    if call.function != "cel.@mapInsert" || call.target.is_some() {
        return None;
    }
    match call.args.as_slice() {
        [acc, k, v] if matches!(&acc.kind, ExprKind::Ident(n) if n == accu_var) => {
            Some((Some(k), v))
        }
        [acc, m] if matches!(&acc.kind, ExprKind::Ident(n) if n == accu_var) => Some((None, m)),
        _ => None,
    }
}

/// If `e` is `accu + [elem]` (exactly, by name), the element expression.
fn accu_append_elem<'e>(e: &'e Expr, accu_var: &str) -> Option<&'e Expr> {
    let ExprKind::Call(call) = &e.kind else {
        return None;
    };
    if call.function != operators::ADD || call.target.is_some() {
        return None;
    }
    let [lhs, rhs] = call.args.as_slice() else {
        return None;
    };
    let ExprKind::Ident(name) = &lhs.kind else {
        return None;
    };
    if name != accu_var {
        return None;
    }
    let ExprKind::List(list) = &rhs.kind else {
        return None;
    };
    match (list.elements.as_slice(), list.optional_indices.is_empty()) {
        ([elem], true) => Some(elem),
        _ => None,
    }
}

/// Whether a checked type leaves anything to run time (`dyn` anywhere in it, or `error`).
fn contains_dyn(t: &Type) -> bool {
    match t {
        Type::Dyn | Type::Error | Type::Any | Type::TypeParam(_) => true,
        other => other.params().into_iter().any(contains_dyn),
    }
}

/// The dotted name an ident/select chain spells, if any.
pub(crate) fn qualified(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Ident(n) => Some(n.clone()),
        ExprKind::Select(s) if !s.test_only => {
            qualified(&s.operand).map(|p| format!("{p}.{}", s.field))
        }
        _ => None,
    }
}

/// Builds the map key for a value, with cel-go's error for unsupported key types.
pub(crate) fn map_key(v: &Value) -> Result<Key, Error> {
    Key::from_value(v).ok_or_else(|| Error::new("unsupported key type"))
}
