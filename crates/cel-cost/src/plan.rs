//! Where run-time cost is charged: for every node of an expression, what it costs when it is
//! evaluated, as cel-go's cost observer charges it.
//!
//! cel-go does not charge costs node by node in the obvious way. It plans identifiers,
//! selections and indexes into *attributes*: a root (a variable, or any other expression as
//! a "relative" root) followed by qualifiers. Each qualifier costs 1 when it is applied, and
//! the attribute costs 1 more when it has been resolved, except where cel-go resolves it
//! without observing it: a conditional's branches, an index that is itself an attribute, and
//! the operand of a presence test. Calls cost their function's cost once all their arguments
//! have been evaluated; literals of lists, maps and messages cost 10, 30 and 40; `&&`, `||`,
//! `?:`, optional `or`/`orValue` and comprehensions cost nothing themselves. With cel-go's
//! `OptOptimize` (Kubernetes sets it), constant list and map literals, conversions of
//! constants, and `in` over a constant list are folded before evaluation and cost nothing.
//!
//! [`CostPlan::analyze`] computes this once per expression; both evaluators read it, so they
//! charge the same costs in the same order.

use cel_types::overloads as ov;
use std::collections::HashMap;

use cel_checker::CheckedAst;
use cel_syntax::{Expr, ExprId, ExprKind, Literal, operators};
use cel_types::Type;

/// How one node is charged when it is evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Charge {
    /// Nothing (literals, `&&`, `||`, comprehensions, ...).
    Free,
    /// An attribute step: `qualifier` when its qualification is applied (its operand
    /// resolved), then `root` once the step is done, whether it succeeded or not.
    Attribute {
        /// The cost of applying this step's qualifier (0 for roots).
        qualifier: u64,
        /// The cost of observing the resolved attribute (1, or 0 where cel-go does not
        /// observe it).
        root: u64,
    },
    /// A presence test `has(x.f)`: `qualifier` if `x` resolved, then `presence`.
    Presence {
        /// 1: the tested field's qualifier.
        qualifier: u64,
        /// 1, or 0 where presence tests are free (Kubernetes).
        presence: u64,
    },
    /// A list, map or message literal: the fixed cost, charged after its elements even if
    /// one of them failed.
    Literal(u64),
    /// A call: its function's cost, charged only if every argument was evaluated.
    Call {
        /// The function name (for hooks keyed by name).
        function: String,
        /// The overload the checker resolved, or "" when there is none or several.
        overload: String,
    },
    /// Folded to a constant before evaluation: the node and its subtree are never evaluated.
    Constant,
    /// `x in [constant list]` turned into a set test: `x` is evaluated, the test is free.
    SetMembership,
}

/// Options that change the costs (Kubernetes sets both away from cel-go's defaults).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostOptions {
    /// Whether `has()` costs 1 (cel-go's default) or 0 (`PresenceTestHasCost(false)`).
    pub presence_test_has_cost: bool,
    /// cel-go's `OptOptimize`: fold constant literals and conversions, and turn `in` over a
    /// constant list into a free set test.
    pub optimize: bool,
}

impl Default for CostOptions {
    fn default() -> Self {
        CostOptions {
            presence_test_has_cost: true,
            optimize: false,
        }
    }
}

/// The charge of every node of one expression.
#[derive(Clone, Debug, Default)]
pub struct CostPlan {
    charges: HashMap<ExprId, Charge>,
}

/// How a node's value is used, which decides whether an attribute root is observed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// Evaluated for its value: an attribute ending here is observed.
    Value,
    /// The operand of a further qualifier: the attribute continues, its root is charged by
    /// the outermost step.
    ChainInner,
    /// Resolved without observation: a conditional's branch, an index that is an attribute.
    Unobserved,
}

/// The conversion functions `OptOptimize` folds when their argument is constant.
const CONVERSIONS: &[&str] = &[
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "string",
    "timestamp",
    "type",
    "uint",
];

impl CostPlan {
    /// Computes the charges of an expression. `checked` gives resolved names and overloads
    /// (without it, every call is charged as an unresolved call, and identifiers naming types
    /// are recognised by `is_type_name`).
    pub fn analyze(
        expr: &Expr,
        checked: Option<&CheckedAst>,
        options: CostOptions,
        is_type_name: &dyn Fn(&str) -> bool,
    ) -> CostPlan {
        let mut a = Analyzer {
            checked,
            options,
            is_type_name,
            plan: CostPlan::default(),
        };
        a.visit(expr, Context::Value);
        a.plan
    }

    /// The charge of a node (`Free` for nodes it does not know).
    pub fn charge(&self, id: ExprId) -> &Charge {
        self.charges.get(&id).unwrap_or(&Charge::Free)
    }

    /// Whether the node was folded to a constant.
    pub fn is_constant(&self, id: ExprId) -> bool {
        matches!(self.charges.get(&id), Some(Charge::Constant))
    }
}

struct Analyzer<'a> {
    checked: Option<&'a CheckedAst>,
    options: CostOptions,
    is_type_name: &'a dyn Fn(&str) -> bool,
    plan: CostPlan,
}

impl Analyzer<'_> {
    fn set(&mut self, id: ExprId, c: Charge) {
        self.plan.charges.insert(id, c);
    }

    fn constant(&self, id: ExprId) -> bool {
        self.plan.is_constant(id)
    }

    /// Whether an identifier is a constant rather than a variable: a type name or an enum
    /// constant.
    fn ident_is_constant(&self, e: &Expr, name: &str) -> bool {
        if let Some(c) = self.checked {
            if let Some(r) = c.references.get(&e.id) {
                if r.value.is_some() {
                    return true;
                }
                return matches!(c.types.get(&e.id), Some(Type::Type(_)))
                    && (self.is_type_name)(&r.name);
            }
            return false;
        }
        (self.is_type_name)(name.strip_prefix('.').unwrap_or(name))
    }

    /// Whether cel-go plans the node as an attribute.
    fn is_attribute(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Ident(name) => !self.ident_is_constant(e, name),
            ExprKind::Select(s) => !s.test_only,
            ExprKind::Call(c) => {
                c.target.is_none()
                    && matches!(
                        c.function.as_str(),
                        operators::INDEX
                            | operators::OPT_INDEX
                            | operators::OPT_SELECT
                            | operators::CONDITIONAL
                    )
            }
            _ => false,
        }
    }

    /// The cost of observing an attribute whose outermost step is `e`, by its root: 1 for a
    /// variable or a relative root, 0 for a conditional.
    fn root_cost(&self, e: &Expr) -> u64 {
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Select(s) if !s.test_only => cur = &s.operand,
                ExprKind::Call(c)
                    if c.target.is_none()
                        && matches!(
                            c.function.as_str(),
                            operators::INDEX | operators::OPT_INDEX | operators::OPT_SELECT
                        )
                        && !c.args.is_empty()
                        && self.is_attribute(&c.args[0]) =>
                {
                    cur = &c.args[0];
                }
                ExprKind::Call(c) if c.function == operators::CONDITIONAL => return 0,
                _ => return 1,
            }
        }
    }

    /// Visits the operand of a qualifier step: an attribute continues, anything else is a
    /// relative root evaluated for its value.
    fn visit_operand(&mut self, operand: &Expr) {
        if self.is_attribute(operand) {
            self.visit(operand, Context::ChainInner);
        } else {
            self.visit(operand, Context::Value);
        }
    }

    /// The charge of a qualifier step in a context.
    fn step(&self, e: &Expr, ctx: Context) -> Charge {
        Charge::Attribute {
            qualifier: 1,
            root: match ctx {
                Context::Value => self.root_cost(e),
                _ => 0,
            },
        }
    }

    fn visit(&mut self, e: &Expr, ctx: Context) {
        cel_syntax::stack::guarded(|| self.visit_unguarded(e, ctx))
    }

    fn visit_unguarded(&mut self, e: &Expr, ctx: Context) {
        match &e.kind {
            ExprKind::Error => self.set(e.id, Charge::Free),
            ExprKind::Literal(_) => self.set(e.id, Charge::Constant),
            ExprKind::Ident(name) => {
                if self.ident_is_constant(e, name) {
                    self.set(e.id, Charge::Constant);
                } else {
                    let root = if ctx == Context::Value { 1 } else { 0 };
                    self.set(e.id, Charge::Attribute { qualifier: 0, root });
                }
            }
            ExprKind::Select(s) => {
                if s.test_only {
                    self.visit_operand(&s.operand);
                    let presence = u64::from(self.options.presence_test_has_cost);
                    self.set(
                        e.id,
                        Charge::Presence {
                            qualifier: 1,
                            presence,
                        },
                    );
                } else {
                    self.visit_operand(&s.operand);
                    let c = self.step(e, ctx);
                    self.set(e.id, c);
                }
            }
            ExprKind::Call(call) => self.visit_call(e, call, ctx),
            ExprKind::List(l) => {
                for el in &l.elements {
                    self.visit(el, Context::Value);
                }
                let all_const = l.elements.iter().all(|el| self.constant(el.id));
                if self.options.optimize && all_const {
                    self.set(e.id, Charge::Constant);
                } else {
                    self.set(e.id, Charge::Literal(crate::LIST_CREATE_BASE_COST));
                }
            }
            ExprKind::Map(m) => {
                for entry in &m.entries {
                    self.visit(&entry.key, Context::Value);
                    self.visit(&entry.value, Context::Value);
                }
                let all_const = m
                    .entries
                    .iter()
                    .all(|en| self.constant(en.key.id) && self.constant(en.value.id));
                if self.options.optimize && all_const {
                    self.set(e.id, Charge::Constant);
                } else {
                    self.set(e.id, Charge::Literal(crate::MAP_CREATE_BASE_COST));
                }
            }
            ExprKind::Struct(s) => {
                for f in &s.fields {
                    self.visit(&f.value, Context::Value);
                }
                self.set(e.id, Charge::Literal(crate::STRUCT_CREATE_BASE_COST));
            }
            ExprKind::Comprehension(c) => {
                self.visit(&c.iter_range, Context::Value);
                self.visit(&c.accu_init, Context::Value);
                self.visit(&c.loop_condition, Context::Value);
                self.visit(&c.loop_step, Context::Value);
                self.visit(&c.result, Context::Value);
                self.set(e.id, Charge::Free);
            }
        }
    }

    fn visit_call(&mut self, e: &Expr, call: &cel_syntax::Call, ctx: Context) {
        let f = call.function.as_str();
        if call.target.is_none() {
            match (f, call.args.as_slice()) {
                (operators::INDEX | operators::OPT_INDEX, [operand, index]) => {
                    self.visit_operand(operand);
                    if self.is_attribute(index) {
                        self.visit(index, Context::Unobserved);
                    } else {
                        self.visit(index, Context::Value);
                    }
                    let c = self.step(e, ctx);
                    self.set(e.id, c);
                    return;
                }
                (operators::OPT_SELECT, [operand, field]) => {
                    self.visit_operand(operand);
                    self.set(field.id, Charge::Constant);
                    let c = self.step(e, ctx);
                    self.set(e.id, c);
                    return;
                }
                (operators::CONDITIONAL, [cond, then, otherwise]) => {
                    self.visit(cond, Context::Value);
                    for branch in [then, otherwise] {
                        if self.is_attribute(branch) {
                            self.visit(branch, Context::Unobserved);
                        } else {
                            self.visit(branch, Context::Value);
                        }
                    }
                    self.set(
                        e.id,
                        Charge::Attribute {
                            qualifier: 0,
                            root: 0,
                        },
                    );
                    return;
                }
                (operators::LOGICAL_AND | operators::LOGICAL_OR, _) => {
                    for a in &call.args {
                        self.visit(a, Context::Value);
                    }
                    self.set(e.id, Charge::Free);
                    return;
                }
                _ => {}
            }
        }
        if let Some(t) = &call.target {
            self.visit(t, Context::Value);
        }
        for a in &call.args {
            self.visit(a, Context::Value);
        }
        let overload = self.overload(e.id);
        // `or` and `orValue` on optionals are short-circuiting nodes, not calls.
        if matches!(
            overload.as_str(),
            ov::OPTIONAL_OR_OPTIONAL | ov::OPTIONAL_OR_VALUE_VALUE
        ) || (self.checked.is_none() && matches!(f, "or" | "orValue") && call.target.is_some())
        {
            self.set(e.id, Charge::Free);
            return;
        }
        if self.options.optimize {
            if call.target.is_none()
                && CONVERSIONS.contains(&f)
                && call.args.len() == 1
                && self.constant(call.args[0].id)
            {
                self.set(e.id, Charge::Constant);
                return;
            }
            if overload == ov::IN_LIST
                && let [elem, list] = call.args.as_slice()
                && self.constant(list.id)
                && let ExprKind::List(l) = &list.kind
            {
                if l.elements.is_empty() {
                    self.set(e.id, Charge::Constant);
                    self.unvisit(elem);
                    return;
                }
                if l.elements.iter().all(is_set_element) {
                    self.set(e.id, Charge::SetMembership);
                    return;
                }
            }
        }
        self.set(
            e.id,
            Charge::Call {
                function: f.to_string(),
                overload,
            },
        );
    }

    /// Marks a subtree that will never be evaluated (it was folded away).
    fn unvisit(&mut self, e: &Expr) {
        e.walk(&mut |n| {
            self.plan.charges.insert(n.id, Charge::Constant);
        });
    }

    /// The single overload the checker resolved for a call, or "".
    fn overload(&self, id: ExprId) -> String {
        self.checked
            .and_then(|c| c.references.get(&id))
            .and_then(|r| match r.overload_ids.as_slice() {
                [only] => Some(only.clone()),
                _ => None,
            })
            .unwrap_or_default()
    }
}

/// Whether a constant list element can go in cel-go's membership set: primitive literals
/// other than bytes. (Folded nested values are not primitive.)
fn is_set_element(e: &Expr) -> bool {
    matches!(
        &e.kind,
        ExprKind::Literal(
            Literal::Bool(_)
                | Literal::Int(_)
                | Literal::Uint(_)
                | Literal::Double(_)
                | Literal::String(_)
        )
    )
}
