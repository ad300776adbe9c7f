//! The static cost estimator: the cheapest and the most expensive run-time cost of a checked
//! expression, from the sizes of its inputs (cel-go v0.29.2's `checker.Cost`).
//!
//! Sizes come, in order, from what the estimator computed for a node (literals, call
//! results), from the host's [`SizeEstimator`] for a variable path (`self.spec.items` →
//! `["self", "spec", "items"]`, elements as `@items`, map keys as `@keys`, values as
//! `@values`), and from the type (scalars are size 1); anything else is unknown,
//! `[0, u64::MAX]`.

use cel_types::overloads as ov;
use std::collections::HashMap;

use cel_checker::CheckedAst;
use cel_syntax::{Comprehension, Expr, ExprId, ExprKind, Literal};
use cel_types::Type;

use crate::{
    CallEstimate, CostKey, CostRange, EstimateArg, EstimateFn, LIST_CREATE_BASE_COST,
    MAP_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR,
    STRUCT_CREATE_BASE_COST, SizeRange,
};

/// What the estimator knows about one node when it asks the host.
#[derive(Clone, Debug)]
pub struct EstimateNode<'a> {
    /// The variable path the node reads (`["self", "items", "@items"]`), if it reads one.
    pub path: Option<&'a [String]>,
    /// The node's checked type.
    pub ty: &'a Type,
    /// The node.
    pub expr: &'a Expr,
    /// The size the estimator computed for the node, if any.
    pub computed_size: Option<SizeRange>,
}

/// The host's knowledge of sizes and call costs (cel-go's `checker.CostEstimator`).
pub trait SizeEstimator {
    /// The size range of a node (usually from its path), or `None` if unknown.
    fn estimate_size(&self, node: &EstimateNode<'_>) -> Option<SizeRange> {
        let _ = node;
        None
    }

    /// The estimate of a call (its own cost, argument costs excluded), or `None` for the
    /// built-in rules. `target` is the receiver of a member call; `args` exclude it.
    fn estimate_call_cost(
        &self,
        function: &str,
        overload_id: &str,
        target: Option<&EstimateNode<'_>>,
        args: &[EstimateNode<'_>],
    ) -> Option<CallEstimate> {
        let _ = (function, overload_id, target, args);
        None
    }
}

/// An estimator that knows nothing: every variable's size is unknown.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoSizes;

impl SizeEstimator for NoSizes {}

/// Sizes from a table of paths (`"self.items"` → `[0, 10]`), like the hints in cel-go's tests.
#[derive(Clone, Debug, Default)]
pub struct PathSizes(pub HashMap<String, SizeRange>);

impl SizeEstimator for PathSizes {
    fn estimate_size(&self, node: &EstimateNode<'_>) -> Option<SizeRange> {
        let path = node.path?;
        self.0.get(&path.join(".")).copied()
    }
}

/// Options of the estimator.
#[derive(Clone)]
pub struct EstimateOptions<'h> {
    /// Whether `has()` costs 1 (cel-go's default) or 0 (Kubernetes).
    pub presence_test_has_cost: bool,
    /// Library and host hooks, by overload id or function name.
    pub hooks: &'h [(CostKey, EstimateFn)],
}

impl Default for EstimateOptions<'_> {
    fn default() -> Self {
        EstimateOptions {
            presence_test_has_cost: true,
            hooks: &[],
        }
    }
}

/// Estimates the cost range of a checked expression.
pub fn estimate(
    checked: &CheckedAst,
    estimator: &dyn SizeEstimator,
    options: &EstimateOptions<'_>,
) -> CostRange {
    let mut c = Coster {
        checked,
        estimator,
        options,
        paths: HashMap::new(),
        computed: HashMap::new(),
        elements: HashMap::new(),
        iter_ranges: Vec::new(),
        locals: Vec::new(),
    };
    c.cost(&checked.ast.expr)
}

/// What a comprehension variable is bound to.
#[derive(Clone, Copy)]
enum IterRole {
    /// The element of a list, or the key of a map (one-variable form).
    First,
    /// The index of a list or key of a map (two-variable form, first variable).
    Key,
    /// The element of a list or value of a map (two-variable form, second variable).
    Value,
}

struct Coster<'a> {
    checked: &'a CheckedAst,
    estimator: &'a dyn SizeEstimator,
    options: &'a EstimateOptions<'a>,
    paths: HashMap<ExprId, Vec<String>>,
    computed: HashMap<ExprId, SizeRange>,
    /// For list and map literals and comprehension results: the size range of elements
    /// (lists) or (keys, values) (maps).
    elements: HashMap<ExprId, (SizeRange, SizeRange)>,
    /// Comprehension variables in scope: (name, range expression, role), innermost last.
    iter_ranges: Vec<(String, &'a Expr, IterRole)>,
    /// `cel.bind` variables in scope: (name, init expression).
    locals: Vec<(String, &'a Expr)>,
}

const F: f64 = STRING_TRAVERSAL_COST_FACTOR;

impl<'a> Coster<'a> {
    fn ty(&self, e: &Expr) -> &'a Type {
        self.checked.types.get(&e.id).unwrap_or(&Type::Dyn)
    }

    fn node<'n>(&'n self, e: &'n Expr) -> EstimateNode<'n> {
        EstimateNode {
            path: self.paths.get(&e.id).map(|p| p.as_slice()),
            ty: self.ty(e),
            expr: e,
            computed_size: self.computed_size(e),
        }
    }

    /// The host's size for the elements of a list-typed expression: the node Kubernetes'
    /// cost library makes of them (the list's path plus `@items`, the element type).
    fn element_node_size(&self, list: &Expr) -> Option<SizeRange> {
        let Type::List(elem) = self.ty(list) else {
            return None;
        };
        let path = self.paths.get(&list.id).map(|p| {
            let mut p = p.clone();
            p.push("@items".to_string());
            p
        });
        self.estimator.estimate_size(&EstimateNode {
            path: path.as_deref(),
            ty: elem,
            expr: list,
            computed_size: None,
        })
    }

    /// A size known without asking the host: computed, or the size of a literal.
    fn computed_size(&self, e: &Expr) -> Option<SizeRange> {
        if let Some(s) = self.computed.get(&e.id) {
            return Some(*s);
        }
        if let ExprKind::Literal(lit) = &e.kind {
            return Some(SizeRange::exact(match lit {
                Literal::String(s) => s.chars().count() as u64,
                Literal::Bytes(b) => b.len() as u64,
                _ => 1,
            }));
        }
        None
    }

    /// cel-go's `sizeOrUnknown`.
    fn size(&self, e: &Expr) -> SizeRange {
        cel_syntax::stack::guarded(|| self.size_unguarded(e))
    }

    fn size_unguarded(&self, e: &Expr) -> SizeRange {
        if let Some(s) = self.computed_size(e) {
            return s;
        }
        let node = self.node(e);
        if let Some(s) = self.estimator.estimate_size(&node) {
            return s;
        }
        if is_scalar(self.ty(e)) {
            return SizeRange::exact(1);
        }
        // A `cel.bind` variable has the size of what it is bound to.
        if let ExprKind::Ident(name) = &e.kind
            && let Some((_, init)) = self.locals.iter().rev().find(|(n, _)| n == name)
        {
            return self.size(init);
        }
        SizeRange::unknown()
    }

    fn cost(&mut self, e: &'a Expr) -> CostRange {
        cel_syntax::stack::guarded(|| self.cost_unguarded(e))
    }

    fn cost_unguarded(&mut self, e: &'a Expr) -> CostRange {
        match &e.kind {
            ExprKind::Error | ExprKind::Literal(_) => CostRange::exact(0),
            ExprKind::Ident(name) => {
                self.track_ident_path(e, name);
                CostRange::exact(1)
            }
            ExprKind::Select(sel) => {
                if sel.test_only {
                    let presence = u64::from(self.options.presence_test_has_cost);
                    return CostRange::exact(presence).add(self.cost(&sel.operand));
                }
                let mut sum = self.cost(&sel.operand);
                if matches!(
                    self.ty(&sel.operand),
                    Type::Map(..) | Type::Message(_) | Type::TypeParam(_)
                ) {
                    sum = sum.add(CostRange::exact(1));
                }
                if let Some(p) = self.paths.get(&sel.operand.id) {
                    let mut p = p.clone();
                    p.push(sel.field.clone());
                    self.paths.insert(e.id, p);
                }
                sum
            }
            ExprKind::Call(call) => self.cost_call(e, call),
            ExprKind::List(l) => {
                let mut sum = CostRange::exact(LIST_CREATE_BASE_COST);
                let mut elem: Option<SizeRange> = None;
                for el in &l.elements {
                    sum = sum.add(self.cost(el));
                    let s = self.size(el);
                    elem = Some(elem.map_or(s, |x| x.union(s)));
                }
                self.computed
                    .insert(e.id, SizeRange::exact(l.elements.len() as u64));
                let elem = elem.unwrap_or(SizeRange::exact(0));
                self.elements.insert(e.id, (elem, elem));
                sum
            }
            ExprKind::Map(m) => {
                let mut sum = CostRange::exact(MAP_CREATE_BASE_COST);
                let mut keys: Option<SizeRange> = None;
                let mut values: Option<SizeRange> = None;
                for entry in &m.entries {
                    sum = sum.add(self.cost(&entry.key));
                    sum = sum.add(self.cost(&entry.value));
                    let (ks, vs) = (self.size(&entry.key), self.size(&entry.value));
                    keys = Some(keys.map_or(ks, |x| x.union(ks)));
                    values = Some(values.map_or(vs, |x| x.union(vs)));
                }
                self.computed
                    .insert(e.id, SizeRange::exact(m.entries.len() as u64));
                self.elements.insert(
                    e.id,
                    (
                        keys.unwrap_or(SizeRange::exact(0)),
                        values.unwrap_or(SizeRange::exact(0)),
                    ),
                );
                sum
            }
            ExprKind::Struct(s) => {
                let mut sum = CostRange::exact(STRUCT_CREATE_BASE_COST);
                for f in &s.fields {
                    sum = sum.add(self.cost(&f.value));
                }
                sum
            }
            ExprKind::Comprehension(c) => {
                if is_bind(c) {
                    self.cost_bind(e, c)
                } else {
                    self.cost_comprehension(e, c)
                }
            }
        }
    }

    /// The path of an identifier: a comprehension variable's path is its range's path plus
    /// `@items`, `@keys` or `@values`; a global's is its name; accumulators have none.
    fn track_ident_path(&mut self, e: &Expr, name: &str) {
        if let Some((_, range, role)) = self.iter_ranges.iter().rev().find(|(n, _, _)| n == name) {
            let range: &Expr = range;
            let role = *role;
            if let Some(p) = self.paths.get(&range.id) {
                let is_map = matches!(self.ty(range), Type::Map(..));
                let suffix = match (role, is_map) {
                    (IterRole::First, false) => Some("@items"),
                    (IterRole::First, true) => Some("@keys"),
                    (IterRole::Key, true) => Some("@keys"),
                    (IterRole::Key, false) => None,
                    (IterRole::Value, true) => Some("@values"),
                    (IterRole::Value, false) => Some("@items"),
                };
                if let Some(suffix) = suffix {
                    let mut p = p.clone();
                    p.push(suffix.to_string());
                    self.paths.insert(e.id, p);
                }
            }
            // Element sizes of literal ranges.
            if let Some((k, v)) = self.elements.get(&range.id).copied() {
                let s = match role {
                    IterRole::First | IterRole::Key => k,
                    IterRole::Value => v,
                };
                if !matches!(role, IterRole::Key) || matches!(self.ty(range), Type::Map(..)) {
                    self.computed.insert(e.id, s);
                }
            }
            return;
        }
        // A `cel.bind` variable has the path and the element sizes of what it is bound to
        // (cel-go's `pushLocalVar`: `cel.bind(a, x, a[0])` reads `x.@items`).
        if let Some((_, init)) = self.locals.iter().rev().find(|(n, _)| n == name) {
            let init: &Expr = init;
            if let Some(p) = self.paths.get(&init.id).cloned() {
                self.paths.insert(e.id, p);
            }
            if let Some(el) = self.elements.get(&init.id).copied() {
                self.elements.insert(e.id, el);
            }
            return;
        }
        if name.starts_with('@') {
            return;
        }
        let name = name.strip_prefix('.').unwrap_or(name);
        self.paths.insert(e.id, vec![name.to_string()]);
    }

    fn cost_comprehension(&mut self, e: &'a Expr, c: &'a Comprehension) -> CostRange {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        match &c.iter_var2 {
            Some(v2) => {
                self.iter_ranges
                    .push((c.iter_var.clone(), &c.iter_range, IterRole::Key));
                self.iter_ranges
                    .push((v2.clone(), &c.iter_range, IterRole::Value));
            }
            None => self
                .iter_ranges
                .push((c.iter_var.clone(), &c.iter_range, IterRole::First)),
        }
        let loop_cost = self.cost(&c.loop_condition);
        let step_cost = self.cost(&c.loop_step);
        self.iter_ranges.pop();
        if c.iter_var2.is_some() {
            self.iter_ranges.pop();
        }
        sum = sum.add(self.cost(&c.result));
        let range_size = self.size(&c.iter_range);
        // A literal initial accumulator keeps its size (`all` gives a bool); a list or map
        // accumulator grows with the range (`map`, `filter`, the transforms).
        let result_size = match &c.accu_init.kind {
            ExprKind::List(_) | ExprKind::Map(_) => range_size,
            _ => self.size(&c.accu_init),
        };
        self.computed.insert(e.id, result_size);
        // The elements of a built list are the elements of the step's list literal
        // (`acc + [t]` in `map` and `filter`).
        if let Some(el) = step_list_elements(&c.loop_step, &c.accu_var)
            .and_then(|lit| self.elements.get(&lit).copied())
        {
            self.elements.insert(e.id, el);
        }
        sum.add(loop_cost.add(step_cost).multiply_by_size(range_size))
    }

    fn cost_bind(&mut self, e: &'a Expr, c: &'a Comprehension) -> CostRange {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        self.locals.push((c.accu_var.clone(), &c.accu_init));
        sum = sum.add(self.cost(&c.result));
        self.locals.pop();
        if let Some(s) = self.computed_size(&c.result) {
            self.computed.insert(e.id, s);
        }
        sum
    }

    fn cost_call(&mut self, e: &'a Expr, call: &'a cel_syntax::Call) -> CostRange {
        let mut arg_costs = Vec::with_capacity(call.args.len());
        for a in &call.args {
            arg_costs.push(self.cost(a));
        }
        let overloads: Vec<String> = self
            .checked
            .references
            .get(&e.id)
            .map(|r| r.overload_ids.clone())
            .unwrap_or_default();
        if overloads.is_empty() {
            return CostRange::default();
        }
        let mut sum = CostRange::default();
        if let Some(t) = &call.target {
            sum = sum.add(self.cost(t));
        }
        let mut fn_cost: Option<CostRange> = None;
        let mut result_size: Option<SizeRange> = None;
        for overload in &overloads {
            let est = self.function_cost(e, call, overload, &arg_costs);
            fn_cost = Some(fn_cost.map_or(est.cost, |c| c.union(est.cost)));
            if let Some(rs) = est.result_size {
                result_size = Some(result_size.map_or(rs, |r| r.union(rs)));
            }
            match overload.as_str() {
                ov::INDEX_LIST | ov::OPTIONAL_LIST_INDEX_INT | ov::LIST_OPTINDEX_OPTIONAL_INT => {
                    if let Some(operand) = call.args.first() {
                        if let Some(p) = self.paths.get(&operand.id) {
                            let mut p = p.clone();
                            p.push("@items".into());
                            self.paths.insert(e.id, p);
                        }
                        if let Some((el, _)) = self.elements.get(&operand.id).copied() {
                            result_size = Some(el);
                        }
                    }
                }
                ov::INDEX_MAP | ov::OPTIONAL_MAP_INDEX_VALUE | ov::MAP_OPTINDEX_OPTIONAL_VALUE => {
                    if let Some(operand) = call.args.first() {
                        if let Some(p) = self.paths.get(&operand.id) {
                            let mut p = p.clone();
                            p.push("@values".into());
                            self.paths.insert(e.id, p);
                        }
                        if let Some((_, v)) = self.elements.get(&operand.id).copied() {
                            result_size = Some(v);
                        }
                    }
                }
                // `dyn(x)` has x's size and path.
                "to_dyn" => {
                    if let Some(a) = call.args.first() {
                        if let Some(p) = self.paths.get(&a.id).cloned() {
                            self.paths.insert(e.id, p);
                        }
                        if let Some(s) = self.computed_size(a) {
                            result_size = Some(s);
                        }
                        if let Some(el) = self.elements.get(&a.id).copied() {
                            self.elements.insert(e.id, el);
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(rs) = result_size {
            self.computed.insert(e.id, rs);
        }
        sum.add(fn_cost.unwrap_or_default())
    }

    fn arg_sum(arg_costs: &[CostRange]) -> CostRange {
        arg_costs
            .iter()
            .fold(CostRange::default(), |acc, c| acc.add(*c))
    }

    /// The estimate of one overload: hooks first (by overload id, then by function name),
    /// then the host's estimator, then cel-go's built-in rules. Argument costs included.
    fn function_cost(
        &mut self,
        e: &'a Expr,
        call: &'a cel_syntax::Call,
        overload: &str,
        arg_costs: &[CostRange],
    ) -> CallEstimate {
        let args_sum = Self::arg_sum(arg_costs);
        let with_args = |est: CallEstimate| CallEstimate {
            cost: est.cost.add(args_sum),
            result_size: est.result_size,
        };
        // Library hooks see the receiver first, as run-time hooks do.
        let hook_args = || -> Vec<EstimateArg> {
            call.target
                .iter()
                .map(|t| &**t)
                .chain(call.args.iter())
                .map(|a| EstimateArg {
                    ty: self.ty(a).clone(),
                    size: Some(self.size(a)).filter(|s| *s != SizeRange::unknown()),
                    literal: match &a.kind {
                        ExprKind::Literal(l) => Some(l.clone()),
                        _ => None,
                    },
                    elem_size: self.element_node_size(a),
                })
                .collect()
        };
        for (key, hook) in self.options.hooks {
            if *key == CostKey::Overload(overload.to_string())
                && let Some(est) = hook(&hook_args())
            {
                return with_args(est);
            }
        }
        for (key, hook) in self.options.hooks {
            if *key == CostKey::Function(call.function.clone())
                && let Some(est) = hook(&hook_args())
            {
                return with_args(est);
            }
        }
        {
            let target = call.target.as_deref().map(|t| self.node(t));
            let args: Vec<EstimateNode<'_>> = call.args.iter().map(|a| self.node(a)).collect();
            if let Some(est) =
                self.estimator
                    .estimate_call_cost(&call.function, overload, target.as_ref(), &args)
            {
                return with_args(est);
            }
        }
        let target = call.target.as_deref();
        let args = &call.args;
        let exact = |c: CostRange| CallEstimate {
            cost: c,
            result_size: None,
        };
        match overload {
            "string_format" if target.is_some() => {
                let t = target.expect("checked");
                return with_args(exact(self.size(t).multiply_by_factor(F)));
            }
            ov::STRING_TO_BYTES if args.len() == 1 => {
                let sz = self.size(&args[0]);
                return with_args(CallEstimate {
                    cost: sz.multiply_by_factor(F),
                    result_size: Some(SizeRange {
                        min: sz.min,
                        max: sz.max.saturating_mul(4),
                    }),
                });
            }
            ov::BYTES_TO_STRING if args.len() == 1 => {
                let sz = self.size(&args[0]);
                return with_args(CallEstimate {
                    cost: sz.multiply_by_factor(F),
                    result_size: Some(SizeRange {
                        min: sz.min / 4,
                        max: sz.max,
                    }),
                });
            }
            "strings_quote" if args.len() == 1 => {
                let sz = self.size(&args[0]);
                return with_args(CallEstimate {
                    cost: sz.multiply_by_factor(F),
                    result_size: Some(SizeRange {
                        min: sz.min.saturating_add(2),
                        max: sz.max.saturating_mul(2).saturating_add(2),
                    }),
                });
            }
            ov::STARTS_WITH_STRING | ov::ENDS_WITH_STRING if args.len() == 1 => {
                return with_args(exact(self.size(&args[0]).multiply_by_factor(F)));
            }
            ov::IN_LIST if args.len() == 2 => {
                return with_args(exact(self.size(&args[1]).multiply_by_factor(1.0)));
            }
            ov::MATCHES_STRING | "matches" => {
                let (s, re) = match (target, args.as_slice()) {
                    (Some(t), [re]) => (t, re),
                    (None, [s, re]) => (s, re),
                    _ => return with_args(exact(CostRange::exact(1))),
                };
                let str_cost = self.size(s).add(SizeRange::exact(1)).multiply_by_factor(F);
                let regex_cost = self
                    .size(re)
                    .multiply_by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                return with_args(exact(str_cost.multiply(regex_cost)));
            }
            ov::CONTAINS_STRING if target.is_some() && args.len() == 1 => {
                let t = target.expect("checked");
                let s = self.size(t).multiply_by_factor(F);
                let sub = self.size(&args[0]).multiply_by_factor(F);
                return with_args(exact(s.multiply(sub)));
            }
            "logical_or" | "logical_and" if arg_costs.len() == 2 => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return exact(CostRange {
                    min: l.min,
                    max: l.max.saturating_add(r.max),
                });
            }
            "conditional" if arg_costs.len() == 3 => {
                let size = self.size(&args[1]).union(self.size(&args[2]));
                return CallEstimate {
                    cost: arg_costs[0].add(arg_costs[1].union(arg_costs[2])),
                    result_size: Some(size),
                };
            }
            ov::ADD_STRING | ov::ADD_BYTES | ov::ADD_LIST if args.len() == 2 => {
                let size = self.size(&args[0]).add(self.size(&args[1]));
                if overload == ov::ADD_LIST {
                    let (a, b) = (
                        self.elements.get(&args[0].id).copied(),
                        self.elements.get(&args[1].id).copied(),
                    );
                    if let (Some(a), Some(b)) = (a, b) {
                        self.elements.insert(e.id, (a.0.union(b.0), a.1.union(b.1)));
                    }
                    return with_args(CallEstimate {
                        cost: CostRange::exact(1),
                        result_size: Some(size),
                    });
                }
                return with_args(CallEstimate {
                    cost: size.multiply_by_factor(F),
                    result_size: Some(size),
                });
            }
            // The comparisons the run-time formula charges by the smaller operand.
            _ if args.len() == 2
                && crate::CostFormula::of(overload) == crate::CostFormula::TraversalMin =>
            {
                let (l, r) = (self.size(&args[0]), self.size(&args[1]));
                let smallest_max = l.max.min(r.max);
                let min = u64::from(smallest_max > 0);
                return with_args(exact(
                    SizeRange {
                        min,
                        max: smallest_max,
                    }
                    .multiply_by_factor(F),
                ));
            }
            _ => {}
        }
        with_args(exact(CostRange::exact(1)))
    }
}

/// The id of the list literal appended to the accumulator in a comprehension step
/// (`acc + [t]`, possibly under a conditional).
fn step_list_elements(step: &Expr, accu: &str) -> Option<ExprId> {
    let ExprKind::Call(c) = &step.kind else {
        return None;
    };
    match (c.function.as_str(), c.args.as_slice()) {
        ("_+_", [acc, list]) if matches!(&acc.kind, ExprKind::Ident(n) if n == accu) => {
            matches!(list.kind, ExprKind::List(_)).then_some(list.id)
        }
        ("_?_:_", [_, then, _]) => step_list_elements(then, accu),
        _ => None,
    }
}

/// Whether a type's values have size 1 (cel-go's scalar types for sizing).
fn is_scalar(t: &Type) -> bool {
    match t {
        Type::Bool | Type::Int | Type::Uint | Type::Double | Type::Duration | Type::Timestamp => {
            true
        }
        other => other.optional_elem().is_some_and(is_scalar),
    }
}

/// cel-go's test for a `cel.bind`-shaped comprehension: an empty-list range, a constant
/// `false` condition, an accumulator other than `__result__`.
fn is_bind(c: &Comprehension) -> bool {
    matches!(&c.iter_range.kind, ExprKind::List(l) if l.elements.is_empty())
        && matches!(
            &c.loop_condition.kind,
            ExprKind::Literal(Literal::Bool(false))
        )
        && c.accu_var != "__result__"
}
