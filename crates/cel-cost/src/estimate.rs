//! The static cost estimator: the cheapest and the most expensive run-time cost of a checked
//! expression, from the sizes of its inputs (cel-go's `checker.Cost`, `checker/cost.go`).
//!
//! Two generations of cel-go's algorithm are reproduced, chosen by
//! [`OlderCelGo::size_estimates_without_entries`]:
//!
//! * **v0.23 and later** (the default; v0.29.2's `coster`): every list and map a node yields
//!   may carry the size of its *entries* (literals, `map()` and `filter()` results,
//!   conditionals, concatenations, `dyn()`, bindings), comprehension variables and bindings
//!   are local variables with a path, a size and entry sizes, and a node's size is looked up
//!   as computed size → literal size → the host's estimate for its path → the type (scalars
//!   are 1) → the local variable's size.
//! * **before v0.23** (cel-go v0.17.8 to v0.22.0): no entry sizes; an iteration variable has
//!   only a path (its range's plus `@items` or `@keys`), the second variable of a
//!   two-variable comprehension is an ordinary identifier, and a node's size is its computed
//!   or literal size → the host's estimate → the type.
//!
//! Paths start at a variable (`self.spec.items` → `["self", "spec", "items"]`); elements are
//! `@items`, map keys `@keys`, map values `@values`, list indexes `@indices`. An index into,
//! or an iteration over, something that has no path (a call's result: `x.split('/')[0]`)
//! gets a path that *starts* with `@items`, as cel-go's does; hosts that skip a path's first
//! element as its variable (Kubernetes' CRD size estimator) then answer with the size of their
//! root, which is what bounds such rules in the API server.

use cel_types::OlderCelGo;
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
    /// The older cel-go whose estimator to reproduce (none: v0.29.2).
    pub older: OlderCelGo,
}

impl Default for EstimateOptions<'_> {
    fn default() -> Self {
        EstimateOptions {
            presence_test_has_cost: true,
            hooks: &[],
            older: OlderCelGo::NONE,
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
        legacy: options.older.size_estimates_without_entries,
        paths: HashMap::new(),
        computed: HashMap::new(),
        entries: HashMap::new(),
        locals: HashMap::new(),
        iter_ranges: HashMap::new(),
    };
    c.cost(&checked.ast.expr)
}

/// Whether a container's entries are a list's (index → element) or a map's (key → value).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    List,
    Map,
}

/// The sizes of a container's entries (cel-go's `entrySizeEstimate`): for a list, the index
/// (always 1) and the element; for a map, the key and the value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entries {
    container: Container,
    key: SizeRange,
    val: SizeRange,
}

impl Entries {
    /// Both sides' sizes; `None` when either side has none (cel-go's `union` of a nil).
    fn union(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
        let (a, b) = (a?, b?);
        Some(Entries {
            container: a.container,
            key: a.key.union(b.key),
            val: a.val.union(b.val),
        })
    }
}

/// A comprehension variable, accumulator or binding in scope (cel-go's `localVar`).
#[derive(Clone, Debug)]
struct Local {
    path: Vec<String>,
    size: Option<SizeRange>,
    entries: Option<Entries>,
}

struct Coster<'a> {
    checked: &'a CheckedAst,
    estimator: &'a dyn SizeEstimator,
    options: &'a EstimateOptions<'a>,
    /// cel-go before v0.23 (see the module documentation).
    legacy: bool,
    /// The path of each node that reads from a variable.
    paths: HashMap<ExprId, Vec<String>>,
    /// Sizes computed for nodes (call results, comprehensions, the host's answers).
    computed: HashMap<ExprId, SizeRange>,
    /// Entry sizes of nodes that yield lists and maps (v0.23 and later).
    entries: HashMap<ExprId, Entries>,
    /// Local variables by name, innermost last (v0.23 and later).
    locals: HashMap<String, Vec<Local>>,
    /// Iteration variables by name, innermost last, with their range (before v0.23).
    iter_ranges: HashMap<String, Vec<&'a Expr>>,
}

const F: f64 = STRING_TRAVERSAL_COST_FACTOR;

/// The accumulators macros use: cel-go's `__result__` (before v0.23) and `@result`.
fn is_accumulator(name: &str) -> bool {
    name == "__result__" || name == cel_syntax::operators::ACCUMULATOR_NAME
}

impl<'a> Coster<'a> {
    fn ty(&self, e: &Expr) -> &'a Type {
        self.checked.types.get(&e.id).unwrap_or(&Type::Dyn)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|s| s.last())
    }

    fn push_local(&mut self, name: &str, local: Local) {
        self.locals.entry(name.to_string()).or_default().push(local);
    }

    fn pop_local(&mut self, name: &str) {
        if let Some(s) = self.locals.get_mut(name) {
            s.pop();
        }
    }

    /// cel-go's `getPath`: a local variable's path, or the node's own.
    fn path(&self, e: &Expr) -> Vec<String> {
        if !self.legacy
            && let ExprKind::Ident(name) = &e.kind
            && let Some(v) = self.local(name)
        {
            return v.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// The path a host sees for a node (cel-go's `newAstNode`): none for accumulators.
    fn host_path(&self, e: &Expr) -> Vec<String> {
        let p = self.path(e);
        if p.first().is_some_and(|v| is_accumulator(v)) {
            return Vec::new();
        }
        p
    }

    fn ask_host(
        &self,
        e: &Expr,
        path: &[String],
        computed_size: Option<SizeRange>,
    ) -> Option<SizeRange> {
        self.estimator.estimate_size(&EstimateNode {
            path: (!path.is_empty()).then_some(path),
            ty: self.ty(e),
            expr: e,
            computed_size,
        })
    }

    /// The size cel-go knows for a node without asking the host: computed, or a literal's.
    fn known_size(&self, e: &Expr) -> Option<SizeRange> {
        if let Some(s) = self.computed.get(&e.id) {
            return Some(*s);
        }
        literal_size(e)
    }

    /// cel-go's `computeSize` (v0.23 and later; it remembers the host's answer) or the
    /// `ComputedSize` of a node (before v0.23: computed or literal only).
    fn compute_size(&mut self, e: &Expr) -> Option<SizeRange> {
        if let Some(s) = self.known_size(e) {
            return Some(s);
        }
        if self.legacy {
            return None;
        }
        let path = self.path(e);
        if let Some(s) = self.ask_host(e, &path, None) {
            self.computed.insert(e.id, s);
            return Some(s);
        }
        if is_scalar(self.ty(e), false) {
            return Some(SizeRange::exact(1));
        }
        if let ExprKind::Ident(name) = &e.kind
            && let Some(v) = self.local(name)
        {
            return v.size;
        }
        None
    }

    /// cel-go's `sizeOrUnknown` (v0.23 and later) or `sizeEstimate` (before).
    fn size(&mut self, e: &Expr) -> SizeRange {
        if let Some(s) = self.compute_size(e) {
            return s;
        }
        if self.legacy {
            let path = self.host_path(e);
            if let Some(s) = self.ask_host(e, &path, None) {
                return s;
            }
            if is_scalar(self.ty(e), true) {
                return SizeRange::exact(1);
            }
        }
        SizeRange::unknown()
    }

    /// The entry sizes of a node (cel-go's `computeEntrySize`).
    fn entries_of(&self, e: &Expr) -> Option<Entries> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        if let ExprKind::Ident(name) = &e.kind {
            return self.local(name).and_then(|v| v.entries);
        }
        None
    }

    fn set_entries(&mut self, e: &Expr, entries: Option<Entries>) {
        if let Some(s) = entries {
            self.entries.insert(e.id, s);
        }
    }

    fn set_size(&mut self, e: &Expr, size: Option<SizeRange>) {
        if let Some(s) = size {
            self.computed.insert(e.id, s);
        }
    }

    /// cel-go's `copySizeEstimates`.
    fn copy_sizes(&mut self, dst: &Expr, src: &Expr) {
        let size = self.compute_size(src);
        self.set_size(dst, size);
        let entries = self.entries_of(src);
        self.set_entries(dst, entries);
    }

    fn cost(&mut self, e: &'a Expr) -> CostRange {
        cel_syntax::stack::guarded(|| self.cost_unguarded(e))
    }

    fn cost_unguarded(&mut self, e: &'a Expr) -> CostRange {
        match &e.kind {
            ExprKind::Error | ExprKind::Literal(_) => CostRange::exact(0),
            ExprKind::Ident(name) => {
                self.cost_ident(e, name);
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
                let mut p = self.path(&sel.operand);
                p.push(sel.field.clone());
                self.paths.insert(e.id, p);
                sum
            }
            ExprKind::Call(call) => self.cost_call(e, call),
            ExprKind::List(l) => {
                let mut sum = CostRange::exact(LIST_CREATE_BASE_COST);
                let mut item: Option<SizeRange> = None;
                for el in &l.elements {
                    sum = sum.add(self.cost(el));
                    if !self.legacy {
                        let s = self.size(el);
                        item = Some(item.map_or(s, |x| x.union(s)));
                    }
                }
                if !self.legacy {
                    self.entries.insert(
                        e.id,
                        Entries {
                            container: Container::List,
                            key: SizeRange::exact(1),
                            val: item.unwrap_or(SizeRange::exact(0)),
                        },
                    );
                }
                sum
            }
            ExprKind::Map(m) => {
                let mut sum = CostRange::exact(MAP_CREATE_BASE_COST);
                let mut keys: Option<SizeRange> = None;
                let mut values: Option<SizeRange> = None;
                for entry in &m.entries {
                    sum = sum.add(self.cost(&entry.key));
                    sum = sum.add(self.cost(&entry.value));
                    if !self.legacy {
                        let (ks, vs) = (self.size(&entry.key), self.size(&entry.value));
                        keys = Some(keys.map_or(ks, |x| x.union(ks)));
                        values = Some(values.map_or(vs, |x| x.union(vs)));
                    }
                }
                if !self.legacy {
                    self.entries.insert(
                        e.id,
                        Entries {
                            container: Container::Map,
                            key: keys.unwrap_or(SizeRange::exact(0)),
                            val: values.unwrap_or(SizeRange::exact(0)),
                        },
                    );
                }
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
                if self.legacy {
                    self.cost_comprehension_legacy(e, c)
                } else if is_bind(c) {
                    self.cost_bind(e, c)
                } else {
                    self.cost_comprehension(e, c)
                }
            }
        }
    }

    /// The path of an identifier: a local variable's (v0.23 and later), an iteration
    /// variable's range plus `@items` or `@keys` (before), or the name itself.
    fn cost_ident(&mut self, e: &Expr, name: &str) {
        if self.legacy {
            if let Some(range) = self.iter_ranges.get(name).and_then(|s| s.last()).copied() {
                let suffix = match self.ty(range) {
                    Type::List(_) => Some("@items"),
                    Type::Map(..) => Some("@keys"),
                    _ => None,
                };
                if let Some(suffix) = suffix {
                    let mut p = self.paths.get(&range.id).cloned().unwrap_or_default();
                    p.push(suffix.to_string());
                    self.paths.insert(e.id, p);
                }
                return;
            }
        } else if let Some(v) = self.local(name) {
            let p = v.path.clone();
            self.paths.insert(e.id, p);
            return;
        }
        self.paths.insert(e.id, vec![name.to_string()]);
    }

    /// The path, size and entry sizes of a comprehension variable over `range`, as cel-go's
    /// `pushIterSingle`, `pushIterKey` and `pushIterValue` give them.
    fn iter_local(&mut self, range: &Expr, role: IterRole) -> Local {
        let entries = self.entries_of(range);
        let container = entries.map(|s| s.container).or(match self.ty(range) {
            Type::List(_) => Some(Container::List),
            Type::Map(..) => Some(Container::Map),
            _ => None,
        });
        let list = container == Some(Container::List);
        let (suffix, size) = match role {
            IterRole::Single if list => ("@items", entries.map(|s| s.val)),
            IterRole::Single => ("@keys", entries.map(|s| s.key)),
            IterRole::Key if list => ("@indices", entries.map(|s| s.key)),
            IterRole::Key => ("@keys", entries.map(|s| s.key)),
            IterRole::Value if list => ("@items", entries.map(|s| s.val)),
            IterRole::Value => ("@values", entries.map(|s| s.val)),
        };
        let mut path = self.path(range);
        path.push(suffix.to_string());
        Local {
            path,
            size,
            entries: None,
        }
    }

    /// cel-go's `pushLocalVar`: a binding or accumulator has its value's path and sizes.
    fn value_local(&mut self, value: &Expr) -> Local {
        Local {
            path: self.path(value),
            size: self.compute_size(value),
            entries: self.entries_of(value),
        }
    }

    fn cost_comprehension(&mut self, e: &'a Expr, c: &'a Comprehension) -> CostRange {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        let accu = self.value_local(&c.accu_init);
        self.push_local(&c.accu_var, accu);
        match &c.iter_var2 {
            Some(v2) => {
                let key = self.iter_local(&c.iter_range, IterRole::Key);
                self.push_local(&c.iter_var, key);
                let value = self.iter_local(&c.iter_range, IterRole::Value);
                self.push_local(v2, value);
            }
            None => {
                let single = self.iter_local(&c.iter_range, IterRole::Single);
                self.push_local(&c.iter_var, single);
            }
        }
        let loop_cost = self.cost(&c.loop_condition);
        let step_cost = self.cost(&c.loop_step);
        self.pop_local(&c.iter_var);
        if let Some(v2) = &c.iter_var2 {
            self.pop_local(v2);
        }
        sum = sum.add(self.cost(&c.result));
        self.pop_local(&c.accu_var);
        let range_size = self.size(&c.iter_range);
        sum = sum.add(step_cost.add(loop_cost).multiply_by_size(range_size));
        match &c.accu_init.kind {
            ExprKind::Literal(_) => {
                let s = self.compute_size(&c.accu_init);
                self.set_size(e, s);
            }
            ExprKind::List(_) | ExprKind::Map(_) => {
                self.set_size(e, Some(range_size));
                // The step of `map` and `filter` appends a list literal to the accumulator:
                // its entry sizes are the result's.
                let step = self.entries_of(&c.loop_step);
                self.set_entries(e, step);
            }
            _ => {}
        }
        sum
    }

    /// Before v0.23: one iteration variable tracked by its range, the result sized as the
    /// range whatever it is.
    fn cost_comprehension_legacy(&mut self, e: &'a Expr, c: &'a Comprehension) -> CostRange {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        self.iter_ranges
            .entry(c.iter_var.clone())
            .or_default()
            .push(&c.iter_range);
        let loop_cost = self.cost(&c.loop_condition);
        let step_cost = self.cost(&c.loop_step);
        if let Some(s) = self.iter_ranges.get_mut(&c.iter_var) {
            s.pop();
        }
        sum = sum.add(self.cost(&c.result));
        let range_size = self.size(&c.iter_range);
        self.computed.insert(e.id, range_size);
        sum.add(step_cost.add(loop_cost).multiply_by_size(range_size))
    }

    fn cost_bind(&mut self, e: &'a Expr, c: &'a Comprehension) -> CostRange {
        let mut sum = self.cost(&c.iter_range);
        sum = sum.add(self.cost(&c.accu_init));
        let local = self.value_local(&c.accu_init);
        self.push_local(&c.accu_var, local);
        sum = sum.add(self.cost(&c.result));
        self.pop_local(&c.accu_var);
        self.copy_sizes(e, &c.result);
        sum
    }

    fn cost_call(&mut self, e: &'a Expr, call: &'a cel_syntax::Call) -> CostRange {
        // v0.23 and later: `dyn(x)` costs 1 plus x, and has x's sizes.
        if !self.legacy
            && call.function == "dyn"
            && call.target.is_none()
            && let [arg] = call.args.as_slice()
        {
            let cost = self.cost(arg);
            self.copy_sizes(e, arg);
            return CostRange::exact(1).add(cost);
        }
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
            let suffix = match overload.as_str() {
                ov::INDEX_LIST => Some("@items"),
                ov::INDEX_MAP => Some("@values"),
                _ => None,
            };
            if let (Some(suffix), Some(operand)) = (suffix, call.args.first()) {
                if !self.legacy {
                    result_size = self.entries_of(operand).map(|s| s.val);
                }
                let mut p = self.path(operand);
                p.push(suffix.to_string());
                self.paths.insert(e.id, p);
            }
            if !self.legacy && result_size.is_none() {
                result_size = self.compute_size(e);
            }
        }
        self.set_size(e, result_size);
        sum.add(fn_cost.unwrap_or_default())
    }

    /// The size a library's cost hook sees for an argument: cel-go's `ComputedSize` of the
    /// node, else the host's estimate for its path (Kubernetes' `sizeEstimate`).
    fn hook_size(&mut self, a: &Expr) -> Option<SizeRange> {
        let known = if self.legacy {
            self.known_size(a)
        } else {
            self.compute_size(a)
        };
        known
            .or_else(|| {
                let path = self.host_path(a);
                self.ask_host(a, &path, None)
            })
            .filter(|s| *s != SizeRange::unknown())
    }

    /// The host's size for the elements of a list-typed expression: the node Kubernetes'
    /// cost library makes of them (`listElementNode`: the list's path plus `@items`, the
    /// element type).
    fn element_node_size(&self, list: &Expr) -> Option<SizeRange> {
        let Type::List(elem) = self.ty(list) else {
            return None;
        };
        let mut path = self.host_path(list);
        path.push("@items".to_string());
        self.estimator.estimate_size(&EstimateNode {
            path: Some(&path),
            ty: elem,
            expr: list,
            computed_size: None,
        })
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
        if let Some(est) = self.hook_estimate(call, overload) {
            return with_args(est);
        }
        if let Some(est) = self.host_call_estimate(call, overload) {
            return with_args(est);
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
                return with_args(exact(self.size(&args[1]).as_cost()));
            }
            ov::MATCHES_STRING | ov::MATCHES => {
                let pair = match (overload, target, args.as_slice()) {
                    (ov::MATCHES_STRING, Some(t), [re]) => Some((t, re)),
                    (ov::MATCHES, None, [s, re])
                        if !self.options.older.global_matches_costs_one =>
                    {
                        Some((s, re))
                    }
                    _ => None,
                };
                if let Some((s, re)) = pair {
                    let str_cost = self.size(s).add(SizeRange::exact(1)).multiply_by_factor(F);
                    let regex_cost = self
                        .size(re)
                        .multiply_by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                    return with_args(exact(str_cost.multiply(regex_cost)));
                }
            }
            ov::CONTAINS_STRING if target.is_some() && args.len() == 1 => {
                let t = target.expect("checked");
                let s = self.size(t).multiply_by_factor(F);
                let sub = self.size(&args[0]).multiply_by_factor(F);
                return with_args(exact(s.multiply(sub)));
            }
            ov::LOGICAL_OR | ov::LOGICAL_AND if arg_costs.len() == 2 => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return exact(CostRange {
                    min: l.min,
                    max: l.max.saturating_add(r.max),
                });
            }
            ov::CONDITIONAL if arg_costs.len() == 3 => {
                let size = self.size(&args[1]).union(self.size(&args[2]));
                if !self.legacy {
                    let entries =
                        Entries::union(self.entries_of(&args[1]), self.entries_of(&args[2]));
                    self.set_entries(e, entries);
                }
                return CallEstimate {
                    cost: arg_costs[0].add(arg_costs[1].union(arg_costs[2])),
                    result_size: Some(size),
                };
            }
            ov::ADD_STRING | ov::ADD_BYTES | ov::ADD_LIST if args.len() == 2 => {
                let size = self.size(&args[0]).add(self.size(&args[1]));
                if !self.legacy {
                    let entries =
                        Entries::union(self.entries_of(&args[0]), self.entries_of(&args[1]));
                    self.set_entries(e, entries);
                }
                if overload == ov::ADD_LIST {
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

    /// A library's hook for the call (by overload id first, then by function name), given
    /// the arguments with the receiver first.
    fn hook_estimate(
        &mut self,
        call: &'a cel_syntax::Call,
        overload: &str,
    ) -> Option<CallEstimate> {
        let hooks = self.options.hooks;
        let by_overload = CostKey::Overload(overload.to_string());
        let by_function = CostKey::Function(call.function.clone());
        let applicable: Vec<&EstimateFn> = hooks
            .iter()
            .filter(|(k, _)| *k == by_overload)
            .chain(hooks.iter().filter(|(k, _)| *k == by_function))
            .map(|(_, h)| h)
            .collect();
        if applicable.is_empty() {
            return None;
        }
        let operands: Vec<&'a Expr> = call
            .target
            .iter()
            .map(|t| &**t)
            .chain(call.args.iter())
            .collect();
        let mut args = Vec::with_capacity(operands.len());
        for a in operands {
            args.push(EstimateArg {
                ty: self.ty(a).clone(),
                size: self.hook_size(a),
                literal: match &a.kind {
                    ExprKind::Literal(l) => Some(l.clone()),
                    _ => None,
                },
                elem_size: self.element_node_size(a),
            });
        }
        applicable.into_iter().find_map(|hook| hook(&args))
    }

    /// The host's estimate of the call (its `EstimateCallCost`).
    fn host_call_estimate(
        &mut self,
        call: &'a cel_syntax::Call,
        overload: &str,
    ) -> Option<CallEstimate> {
        let operands: Vec<&'a Expr> = call.target.iter().map(|t| &**t).chain(&call.args).collect();
        let mut described = Vec::with_capacity(operands.len());
        for a in &operands {
            let computed = if self.legacy {
                self.known_size(a)
            } else {
                self.compute_size(a)
            };
            described.push((self.host_path(a), computed));
        }
        let nodes: Vec<EstimateNode<'_>> = operands
            .iter()
            .zip(&described)
            .map(|(a, (path, computed))| EstimateNode {
                path: (!path.is_empty()).then_some(path.as_slice()),
                ty: self.ty(a),
                expr: a,
                computed_size: *computed,
            })
            .collect();
        let (target, args) = match call.target {
            Some(_) => (nodes.first(), &nodes[1..]),
            None => (None, &nodes[..]),
        };
        self.estimator
            .estimate_call_cost(&call.function, overload, target, args)
    }
}

/// Which comprehension variable.
#[derive(Clone, Copy)]
enum IterRole {
    /// The only variable: the element of a list, the key of a map.
    Single,
    /// The first of two: the index of a list, the key of a map.
    Key,
    /// The second of two: the element of a list, the value of a map.
    Value,
}

/// The size of a literal, list or map node (cel-go's `computeExprSize`).
fn literal_size(e: &Expr) -> Option<SizeRange> {
    Some(SizeRange::exact(match &e.kind {
        ExprKind::Literal(Literal::String(s)) => s.chars().count() as u64,
        ExprKind::Literal(Literal::Bytes(b)) => b.len() as u64,
        ExprKind::Literal(_) => 1,
        ExprKind::List(l) => l.elements.len() as u64,
        ExprKind::Map(m) => m.entries.len() as u64,
        _ => return None,
    }))
}

/// Whether a type's values have size 1 (cel-go's `isScalar`; an optional of a scalar is one
/// from v0.23 on).
fn is_scalar(t: &Type, legacy: bool) -> bool {
    match t {
        Type::Bool | Type::Int | Type::Uint | Type::Double | Type::Duration | Type::Timestamp => {
            true
        }
        other => !legacy && other.optional_elem().is_some_and(|t| is_scalar(t, false)),
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
