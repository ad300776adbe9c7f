//! The planner: turns a checked (or unchecked) AST into a tree of [`Node`]s with names,
//! overloads, constant regular expressions, comprehension variable slots and run-time costs
//! resolved ahead of evaluation, so that evaluating many times does no lookups by name except
//! in the activation.
//!
//! Costs come from [`cel_cost::CostPlan`]: every node carries the charge cel-go's cost
//! observer would apply to it.
//!
//! `cel.@block([e0, e1, ...], result)` (cel-go's bindings library, version 1) is planned as a
//! block, not a call: each `ei` gets a slot that `@indexi` reads, evaluated on first read and
//! kept for the rest of the block's evaluation, as cel-go's block decorator does.

use cel_types::overloads as ov;
use std::collections::HashMap;
use std::sync::Arc;

use cel_checker::CheckedAst;
use cel_cost::{
    ActualCostFn, Charge, CostKey, CostOptions, CostPlan, HookReach, HookScope, ResultSizeHook,
};
use cel_runtime::regex::{Matcher, PatternBudget};
use cel_runtime::{Error, Implementation, Key, MapParams, Value};
use cel_syntax::macros::{BLOCK_FUNCTION, BLOCK_INDEX_PREFIX};
use cel_syntax::{
    Ast, Comprehension, Expr, ExprId, ExprKind, ListExpr, Literal, MapExpr, StructExpr, operators,
};
use cel_types::{Container, OlderCelGo, Type, TypeProvider};

use crate::functions::{FunctionTable, OverloadEntry};

/// Run-time cost hooks of libraries and hosts, consulted before the built-in table.
#[derive(Clone, Default)]
pub struct CostHooks {
    by_overload: HashMap<String, ScopedHook>,
    by_function: HashMap<String, ScopedHook>,
    /// Result sizes known from the arguments, by overload id: calls that can build large
    /// values are charged before they run (see [`CallCost::precharge`]).
    result_sizes: HashMap<String, ResultSizeHook<Value>>,
}

impl std::fmt::Debug for CostHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostHooks")
            .field("by_overload", &self.by_overload.keys().collect::<Vec<_>>())
            .field("by_function", &self.by_function.keys().collect::<Vec<_>>())
            .field(
                "result_sizes",
                &self.result_sizes.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// A hook and the calls it can answer.
type ScopedHook = (ActualCostFn<Value>, HookScope);

impl CostHooks {
    /// Adds a hook that may answer any call. A later hook for the same key replaces an
    /// earlier one.
    pub fn add(&mut self, key: CostKey, hook: ActualCostFn<Value>) {
        self.add_scoped(key, hook, HookScope::Any);
    }

    /// Adds a hook that answers only the calls `scope` describes. A later hook for the same
    /// key replaces an earlier one.
    pub fn add_scoped(&mut self, key: CostKey, hook: ActualCostFn<Value>, scope: HookScope) {
        match key {
            CostKey::Overload(id) => self.by_overload.insert(id, (hook, scope)),
            CostKey::Function(name) => self.by_function.insert(name, (hook, scope)),
        };
    }

    /// Adds the result-size hook of an overload. A later hook replaces an earlier one.
    pub fn add_result_size(&mut self, overload_id: &str, hook: ResultSizeHook<Value>) {
        self.result_sizes.insert(overload_id.to_string(), hook);
    }
}

/// What the planner needs besides the AST.
#[derive(Clone, Debug)]
pub struct PlanEnv {
    /// Declared functions with their implementations.
    pub functions: Arc<FunctionTable>,
    /// The container for resolving names of unchecked expressions.
    pub container: Container,
    /// Message and enum types.
    pub provider: Arc<dyn TypeProvider>,
    /// Cost options (presence-test cost, `OptOptimize`).
    pub cost_options: CostOptions,
    /// Run-time cost hooks.
    pub cost_hooks: Arc<CostHooks>,
    /// Protobuf message types, for message literals (`None`: only the well-known types).
    pub messages: Option<Arc<cel_runtime::proto::ProtoTypes>>,
    /// The behaviours of an older cel-go to reproduce (none: v0.29.2).
    pub older: OlderCelGo,
}

impl PlanEnv {
    /// The descriptor a message literal of this type is built from: `None` for the
    /// well-known types built as plain values, and for types the environment does not know.
    pub fn message_descriptor(
        &self,
        type_name: &str,
    ) -> Option<cel_runtime::proto::MessageDescriptor> {
        if crate::wellknown::is_plain(type_name) {
            return None;
        }
        self.messages.as_ref()?.message(type_name)
    }

    /// Whether a literal of this type builds a map of its fields (a host type whose
    /// provider says so; see `TypeProvider::builds_maps`).
    pub fn builds_map(&self, type_name: &str) -> bool {
        self.message_descriptor(type_name).is_none() && self.provider.builds_maps(type_name)
    }

    /// The cost rule of a call: the hooks that apply (by overload id first, then by function
    /// name) and the overload id for the built-in table ("" when unresolved). `first_arg` is
    /// the checked type of the call's first argument (its receiver for a member call), when
    /// known: hooks scoped to other types are left out here, so the call never runs them.
    pub fn call_cost_rule(
        &self,
        overload: &str,
        function: &str,
        first_arg: Option<&Type>,
    ) -> CallCost {
        let mut found = Vec::new();
        let hooks = [
            self.cost_hooks.by_overload.get(overload),
            self.cost_hooks.by_function.get(function),
        ];
        for (hook, scope) in hooks.into_iter().flatten() {
            match scope.reach(first_arg) {
                HookReach::Never => {}
                HookReach::Maybe => found.push((hook.clone(), false)),
                HookReach::IfOpaque => found.push((hook.clone(), true)),
            }
        }
        let formula = cel_cost::CostFormula::of_older(overload, self.older);
        CallCost {
            fixed: formula.fixed(),
            formula,
            overload: overload.into(),
            hooks: found,
            result_size: self.cost_hooks.result_sizes.get(overload).cloned(),
        }
    }

    /// How a checked call reaches its implementation. It uses the overloads the checker
    /// chose; when an argument is `dyn`, every other overload of the function follows them,
    /// because at run time cel-go dispatches on the values (`dyn(1) < 1u` compares across
    /// types even where the checker would not offer that overload).
    pub fn dispatch_checked(
        &self,
        overload_ids: &[&str],
        function: &str,
        member: bool,
        argc: usize,
        dynamic_args: bool,
    ) -> CallTarget {
        let table = &self.functions;
        if !overload_ids.is_empty() {
            let mut entries: Vec<Arc<OverloadEntry>> = overload_ids
                .iter()
                .filter_map(|o| table.overload(o).cloned())
                .collect();
            if !dynamic_args
                && let [only] = entries.as_slice()
                && let Some(imp) = &only.implementation
            {
                return CallTarget(Dispatch::Direct(imp.clone(), only.maps));
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
                return CallTarget(Dispatch::Candidates(entries));
            }
        }
        let candidates: Vec<Arc<OverloadEntry>> = table
            .overloads(function)
            .unwrap_or(&[])
            .iter()
            .filter(|o| o.decl.is_member == member && o.decl.params.len() == argc)
            .cloned()
            .collect();
        CallTarget(Dispatch::Candidates(candidates))
    }
}

/// A resolved call, callable with argument values (for generated code).
#[derive(Clone, Debug)]
pub struct CallTarget(pub(crate) Dispatch);

impl CallTarget {
    /// Whether the call may reach a host's implementation, which only the call itself can
    /// answer for.
    pub fn may_reach_outside(&self) -> bool {
        self.0.may_reach_outside()
    }

    /// Calls the implementation that applies to the arguments (receiver first).
    pub fn call(&self, args: &[Value]) -> Result<Value, Error> {
        match &self.0 {
            Dispatch::Direct(imp, maps) => imp.call_taking(*maps, args),
            Dispatch::Candidates(c) => crate::functions::dispatch(c, args),
            Dispatch::Unknown(name) => Err(Error::unbound_function(name)),
        }
    }

    /// [`CallTarget::call`] with one argument by reference.
    pub fn call1(&self, a: &Value) -> Result<Value, Error> {
        match &self.0 {
            Dispatch::Direct(imp, maps) => imp.call1_taking(*maps, a),
            Dispatch::Candidates(c) => crate::functions::dispatch1(c, a),
            Dispatch::Unknown(name) => Err(Error::unbound_function(name)),
        }
    }

    /// [`CallTarget::call`] with two arguments by reference.
    pub fn call2(&self, a: &Value, b: &Value) -> Result<Value, Error> {
        match &self.0 {
            Dispatch::Direct(imp, maps) => imp.call2_taking(*maps, a, b),
            Dispatch::Candidates(c) => crate::functions::dispatch2(c, a, b),
            Dispatch::Unknown(name) => Err(Error::unbound_function(name)),
        }
    }
}

/// How a call reaches its implementation.
#[derive(Clone, Debug)]
pub(crate) enum Dispatch {
    /// One overload applies: call it directly (opaque maps passed to its map parameters
    /// as maps).
    Direct(Implementation, MapParams),
    /// Several may apply; pick by the runtime types of the arguments.
    Candidates(Vec<Arc<OverloadEntry>>),
    /// The function is not known at all (unchecked expressions): fail when called.
    Unknown(Arc<str>),
}

impl Dispatch {
    /// Whether the call may reach an [`Implementation::External`].
    fn may_reach_outside(&self) -> bool {
        match self {
            Dispatch::Direct(imp, _) => imp.is_external(),
            Dispatch::Candidates(c) => c
                .iter()
                .any(|o| o.implementation.as_ref().is_some_and(|i| i.is_external())),
            Dispatch::Unknown(_) => false,
        }
    }
}

/// How a call's cost is computed once its arguments and result are known.
#[derive(Clone)]
pub struct CallCost {
    /// The overload id for the built-in table ("" when unresolved).
    pub(crate) overload: Arc<str>,
    /// The library's or host's hooks that may apply, each with whether it applies only when
    /// the first argument's value is opaque ([`HookReach::IfOpaque`]); a hook may still
    /// decline (`None`).
    pub(crate) hooks: Vec<(ActualCostFn<Value>, bool)>,
    /// The built-in cost when it does not depend on sizes.
    pub(crate) fixed: Option<u64>,
    /// The built-in cost formula.
    pub(crate) formula: cel_cost::CostFormula,
    /// The size of the call's result, known from its arguments, for calls that can build
    /// large values.
    pub(crate) result_size: Option<ResultSizeHook<Value>>,
}

impl CallCost {
    /// The call's cost, given its arguments (receiver first) and result.
    pub fn compute(&self, args: &[Value], result: &Result<Value, Error>) -> u64 {
        crate::ops::call_cost(self, args, result)
    }

    /// The cost when it does not depend on the arguments (no hook, a size-independent
    /// built-in overload).
    pub fn fixed(&self) -> Option<u64> {
        if self.hooks.is_empty() {
            self.fixed
        } else {
            None
        }
    }

    /// The built-in formula (what applies when no hook does).
    pub fn formula(&self) -> cel_cost::CostFormula {
        self.formula
    }

    /// Whether a library's or host's hook computes the cost (it needs the values).
    pub fn has_hooks(&self) -> bool {
        !self.hooks.is_empty()
    }

    /// Whether every hook applies only when the first argument's value is opaque: an
    /// evaluator tests the value's tag and, for anything else, charges by the formula.
    pub fn hooks_need_opaque_first_argument(&self) -> bool {
        !self.hooks.is_empty() && self.hooks.iter().all(|(_, opaque_only)| *opaque_only)
    }

    /// This rule without its hooks: what applies when none can.
    pub fn without_hooks(&self) -> CallCost {
        CallCost {
            hooks: Vec::new(),
            ..self.clone()
        }
    }

    /// The cost from the arguments' sizes alone (`size(i)` is cel-go's `actualSize` of
    /// argument `i`), when no hook applies: a caller holding the arguments by reference need
    /// not build values. `None` when a hook must see the values.
    pub fn compute_from_sizes(&self, size: &dyn Fn(usize) -> u64) -> Option<u64> {
        if self.hooks.is_empty() {
            Some(self.formula.eval(size))
        } else {
            None
        }
    }
}

impl CallCost {
    /// Whether the call can be charged before it runs ([`CallCost::precharge`]).
    pub fn has_precharge(&self) -> bool {
        self.result_size.is_some()
    }

    /// For calls that can build large values (`lists.range(n)`, `replace`, `join`): the cost
    /// the call will be charged if it succeeds, when that is more than `budget`, computed
    /// from its arguments before it runs with the hooks and formula that charge it
    /// afterwards, applied to the result size the overload's result-size hook predicts.
    /// `None` when it fits the budget, when the call has no such hook, or when the hook
    /// cannot say (the call may fail).
    ///
    /// An evaluator under a cost limit stops before calling when this is `Some`, with the
    /// cost and error it would have reached after the call, so the limit stops the call
    /// before it allocates and nothing observable changes. A cheap upper bound on the size,
    /// when the hook has one, spares computing the exact size for calls that fit anyway
    /// (costs grow with the result's size).
    pub fn precharge(&self, args: &[Value], budget: u64) -> Option<u64> {
        let hook = self.result_size.as_ref()?;
        if let Some(at_most) = hook.at_most.as_ref().and_then(|f| f(args))
            && self.cost_with_result_size(args, at_most) <= budget
        {
            return None;
        }
        let cost = self.cost_with_result_size(args, (hook.exact)(args)?);
        (cost > budget).then_some(cost)
    }

    fn cost_with_result_size(&self, args: &[Value], size: u64) -> u64 {
        crate::ops::call_cost(self, args, &Ok(crate::ops::predicted_result(size)))
    }
}

impl std::fmt::Debug for CallCost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallCost({}, {} hooks)", self.overload, self.hooks.len())
    }
}

/// The two parts of an attribute step's charge (see [`cel_cost::Charge::Attribute`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StepCost {
    /// Charged when the step's qualifier is applied.
    pub(crate) qualifier: u64,
    /// Charged when the step completes, successfully or not.
    pub(crate) root: u64,
}

/// A planned tree is as deep as its expression; when dropping it reaches the end of the
/// stack, the rest of it is dropped on a new stack segment (see
/// [`cel_syntax::stack::drop_on_new_segment`]).
impl Drop for Node {
    fn drop(&mut self) {
        if cel_syntax::stack::near_limit() {
            let rest = std::mem::replace(self, Node::Const(Value::Null));
            cel_syntax::stack::drop_on_new_segment(rest);
        }
    }
}

/// One planned node.
#[derive(Clone, Debug)]
pub(crate) enum Node {
    /// A value known ahead of evaluation (literals, type names, enum constants, folded
    /// constants).
    Const(Value),
    /// A variable from the activation, by its resolved name.
    Global {
        id: ExprId,
        name: Arc<str>,
        cost: u64,
    },
    /// An unchecked name: the first candidate bound in the activation; else a type name.
    MaybeGlobal {
        id: ExprId,
        candidates: Vec<Arc<str>>,
        type_value: Option<Value>,
        cost: u64,
    },
    /// An unchecked dotted name `a.b.c`: the longest prefix bound in the activation, then
    /// field selection on the rest.
    Qualified {
        id: ExprId,
        /// (variable name, remaining fields), longest variable name first.
        candidates: Vec<(Arc<str>, Vec<Arc<str>>)>,
        type_value: Option<Value>,
        cost: StepCost,
    },
    /// A comprehension variable or accumulator.
    Local { slot: usize, cost: u64 },
    /// `@indexN` inside `cel.@block`: the value of the block's subexpression in `slot`,
    /// evaluated on its first read.
    BlockIndex {
        id: ExprId,
        slot: usize,
        name: Arc<str>,
        cost: u64,
    },
    /// `cel.@block([e0, e1, ...], result)`: `result` evaluated with each `ei` pending in its
    /// slot. Neither the call nor the list literal is charged (cel-go never evaluates them).
    Block {
        slots: Vec<BlockSlot>,
        result: Box<Node>,
    },
    /// `operand.field`.
    Select {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
        cost: StepCost,
    },
    /// `has(operand.field)`.
    Has {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
        cost: StepCost,
    },
    /// `operand.?field`.
    OptSelect {
        id: ExprId,
        operand: Box<Node>,
        field: Arc<str>,
        cost: StepCost,
    },
    /// `operand[index]`.
    Index {
        id: ExprId,
        operand: Box<Node>,
        index: Box<Node>,
        cost: StepCost,
    },
    /// `operand[?index]`.
    OptIndex {
        id: ExprId,
        operand: Box<Node>,
        index: Box<Node>,
        cost: StepCost,
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
    NotStrictlyFalse { arg: Box<Node>, cost: CallCost },
    /// `opt.or(other)`: `other` is evaluated only when `opt` is empty. A receiver that is not
    /// an optional is `no such overload`, or, before cel-go v0.28, the result as it is
    /// (`lenient`).
    OptOr {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
        lenient: bool,
    },
    /// `opt.orValue(v)`: `v` is evaluated only when `opt` is empty; receivers as `OptOr`.
    OptOrValue {
        id: ExprId,
        lhs: Box<Node>,
        rhs: Box<Node>,
        lenient: bool,
    },
    /// A strict call: arguments (receiver first) are evaluated, errors propagate.
    Call {
        id: ExprId,
        args: Vec<Node>,
        dispatch: Dispatch,
        cost: CallCost,
    },
    /// `s.matches(re)` (or `matches(s, re)`) with a constant pattern compiled once.
    MatchesConst {
        id: ExprId,
        subject: Box<Node>,
        pattern: Value,
        regex: Result<Arc<Matcher>, Error>,
        cost: CallCost,
    },
    /// `x in [constants]` as a set test (cel-go's `OptOptimize`); free.
    InSet {
        id: ExprId,
        elem: Box<Node>,
        set: Vec<Value>,
    },
    /// A list literal; `optional[i]` marks `?e` elements.
    List {
        id: ExprId,
        elements: Vec<Node>,
        optional: Vec<bool>,
        cost: u64,
    },
    /// A list literal whose elements are all constants, built once (still charged as a
    /// literal unless `OptOptimize` folded it).
    ConstList { value: Value, cost: u64 },
    /// A map literal.
    Map {
        id: ExprId,
        entries: Vec<(Node, Node, bool)>,
        cost: u64,
    },
    /// A message literal.
    Struct {
        id: ExprId,
        type_name: Arc<str>,
        /// The message type, for messages other than the well-known types CEL builds as
        /// plain values.
        message: Option<cel_runtime::proto::MessageDescriptor>,
        /// A host type whose literals are maps of their fields.
        builds_map: bool,
        fields: Vec<(Arc<str>, Node, bool)>,
        cost: u64,
    },
    /// A comprehension (macro expansion).
    Fold(Box<Fold>),
    /// `cel.@mapInsert(accu, key, value)` or `cel.@mapInsert(accu, map)` inside a
    /// comprehension step, inserting in place.
    AccuMapInsert {
        id: ExprId,
        slot: usize,
        accu_cost: u64,
        key: Option<Box<Node>>,
        value: Box<Node>,
        cost: CallCost,
    },
    /// `accu + [elem]` inside a comprehension step, appending in place.
    AccuAppend {
        slot: usize,
        accu_cost: u64,
        elem: Box<Node>,
        list_cost: u64,
        add_cost: CallCost,
    },
    /// A node that always fails (e.g. an unparseable AST placeholder).
    Fail(Error),
}

/// One subexpression of a block.
#[derive(Clone, Debug)]
pub(crate) struct BlockSlot {
    pub(crate) slot: usize,
    pub(crate) node: Node,
    /// The AST depth of the subexpression, what evaluating it adds to the depth of the
    /// evaluator's recursion (see [`MAX_BLOCK_EVAL_DEPTH`]).
    pub(crate) depth: u32,
}

/// How deep block subexpressions being evaluated may nest, counting each by its AST depth
/// plus one: the parser's largest AST depth (cel-go's recursion limit, 250, plus
/// [`cel_syntax::AST_DEPTH_ALLOWANCE`]). Within a block, `@index5` may need `@index4`, which
/// needs `@index3`, ...: the evaluator's recursion is then no longer bounded by the AST's
/// depth, and an expression of legal depth could exhaust the stack. A read that would go
/// deeper fails instead (cel-go, on Go's growable stacks, has no such limit).
pub(crate) const MAX_BLOCK_EVAL_DEPTH: u32 = 250 + cel_syntax::AST_DEPTH_ALLOWANCE as u32;

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
    /// Whether a call may reach outside the evaluation (see [`Plan::calls_external`]).
    external_calls: bool,
    /// The constant patterns of `matches` calls, compiled (or the error compiling them
    /// gave), by call id (see [`Plan::constant_regex`]).
    constant_regexes: ConstantPatterns,
}

/// The constant patterns of a program's `matches` calls by call id, compiled or failed.
type ConstantPatterns = HashMap<ExprId, Result<Arc<Matcher>, Error>>;

struct Planner<'a> {
    env: &'a PlanEnv,
    checked: Option<&'a CheckedAst>,
    costs: CostPlan,
    /// Names of comprehension variables and block indices in scope with their slots,
    /// innermost last.
    scopes: Vec<(String, usize)>,
    /// The slots of the block indices in scope (the others in `scopes` are comprehension
    /// variables).
    index_slots: Vec<usize>,
    next_slot: usize,
    max_slots: usize,
    /// Whether a planned call may reach an [`Implementation::External`].
    external_calls: bool,
    /// The constant patterns compiled so far, by call id.
    constant_regexes: ConstantPatterns,
    /// The patterns of the whole program, when planning a subtree of it: they are taken
    /// from there, not compiled again.
    inherited_regexes: Option<&'a ConstantPatterns>,
    /// The compiled-size allowance the program's constant patterns share.
    pattern_budget: PatternBudget,
    /// The first error found while planning: a constant that failed to fold, a malformed
    /// `cel.@block` (cel-go reports both when the program is created).
    fold_error: Option<Error>,
}

impl Plan {
    /// Plans a checked expression, using the checker's resolved names and overloads. Fails
    /// only where `OptOptimize` folds a constant conversion that fails (`duration('x')`), as
    /// cel-go does when it creates the program.
    pub fn checked(checked: &CheckedAst, env: &PlanEnv) -> Result<Plan, Error> {
        Planner::run(&checked.ast.expr, Some(checked), env)
    }

    /// Plans one subtree of this plan's checked expression (for generated code that leaves
    /// it to the interpreter, or folds it to a constant). Costs are those of the whole
    /// expression's plan, so the subtree is charged exactly as in a full evaluation, and its
    /// constant patterns are this plan's, not compiled again. The subtree must not read
    /// comprehension variables bound outside it.
    pub fn subtree(&self, checked: &CheckedAst, env: &PlanEnv, id: ExprId) -> Result<Plan, Error> {
        let mut target: Option<&Expr> = None;
        checked.ast.expr.walk(&mut |e| {
            if e.id == id {
                target = Some(e);
            }
        });
        let Some(e) = target else {
            return Err(Error::internal(format!("no expression #{id}")));
        };
        let mut p = Planner::new(Some(checked), cost_plan(checked, env), env);
        p.inherited_regexes = Some(&self.constant_regexes);
        p.finish(e)
    }

    /// Whether the expression may call an [`Implementation::External`] (a host's
    /// function): an evaluation that another evaluation may be running inside then keeps
    /// to its own call journal (`cel_runtime::journal`).
    pub fn calls_external(&self) -> bool {
        self.external_calls
    }

    /// The compiled constant pattern of the `matches` call `id`, or the error compiling it
    /// gave, for a backend that would otherwise compile it again (a pattern may take up to
    /// `cel_runtime::regex::SIZE_LIMIT` bytes, and the program's patterns share one
    /// allowance, so a program compiles each once).
    pub fn constant_regex(&self, id: ExprId) -> Option<Result<Arc<Matcher>, Error>> {
        self.constant_regexes.get(&id).cloned()
    }

    /// Plans an expression that was not type-checked: names are resolved in the container at
    /// evaluation time and calls dispatch on the runtime types of their arguments.
    pub fn unchecked(ast: &Ast, env: &PlanEnv) -> Result<Plan, Error> {
        Planner::run(&ast.expr, None, env)
    }
}

/// The value of a literal.
pub fn literal_value(lit: &Literal) -> Value {
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
pub(crate) fn builtin_type_name(name: &str) -> Option<Type> {
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

/// The type value a name denotes (`int`, `google.protobuf.Duration`, a message or library
/// type of the provider), if it names a type.
pub fn type_value_in(provider: &dyn TypeProvider, name: &str) -> Option<Value> {
    let name = name.strip_prefix('.').unwrap_or(name);
    builtin_type_name(name)
        .or_else(|| provider.find_type(name))
        .or_else(|| Type::well_known(name).map(|_| Type::message(name)))
        .map(Value::type_value)
}

/// The cost plan of a checked expression under an environment: the charges the planner
/// gives its nodes, for a backend that must charge exactly as the interpreter does.
pub fn cost_plan(checked: &CheckedAst, env: &PlanEnv) -> CostPlan {
    analyze_costs(&checked.ast.expr, Some(checked), env)
}

/// The cost plan of an expression, checked or not.
fn analyze_costs(expr: &Expr, checked: Option<&CheckedAst>, env: &PlanEnv) -> CostPlan {
    let provider = env.provider.clone();
    let is_type_name = move |n: &str| type_value_in(&*provider, n).is_some();
    CostPlan::analyze(expr, checked, env.cost_options, &is_type_name)
}

impl<'a> Planner<'a> {
    fn run(expr: &Expr, checked: Option<&'a CheckedAst>, env: &'a PlanEnv) -> Result<Plan, Error> {
        Planner::new(checked, analyze_costs(expr, checked, env), env).finish(expr)
    }

    /// A planner with the costs of `costs` and nothing planned yet.
    fn new(checked: Option<&'a CheckedAst>, costs: CostPlan, env: &'a PlanEnv) -> Planner<'a> {
        Planner {
            env,
            checked,
            costs,
            scopes: Vec::new(),
            index_slots: Vec::new(),
            next_slot: 0,
            max_slots: 0,
            external_calls: false,
            constant_regexes: HashMap::new(),
            inherited_regexes: None,
            pattern_budget: PatternBudget::default(),
            fold_error: None,
        }
    }

    /// Plans `expr` (the whole expression, or a subtree of it).
    fn finish(mut self, expr: &Expr) -> Result<Plan, Error> {
        let root = self.plan(expr);
        if let Some(e) = self.fold_error {
            return Err(e);
        }
        Ok(Plan {
            root,
            slots: self.max_slots,
            external_calls: self.external_calls,
            constant_regexes: self.constant_regexes,
        })
    }

    /// The slot of a comprehension variable or block index in scope. A comprehension
    /// variable matches by name; a block index by number, read as cel-go reads it (`@index01`
    /// and `@index+1` are `@index1`), and an index beyond a block's subexpressions is looked
    /// up in the enclosing blocks.
    fn local(&self, name: &str) -> Option<usize> {
        let index = name
            .strip_prefix(BLOCK_INDEX_PREFIX)
            .and_then(|n| n.parse::<i64>().ok())
            .filter(|n| *n >= 0)
            .map(|n| format!("{BLOCK_INDEX_PREFIX}{n}"));
        self.scopes
            .iter()
            .rev()
            .find(|(n, slot)| {
                if self.index_slots.contains(slot) {
                    index.as_deref() == Some(n.as_str())
                } else {
                    n == name
                }
            })
            .map(|(_, s)| *s)
    }

    fn alloc_slot(&mut self) -> usize {
        let s = self.next_slot;
        self.next_slot += 1;
        self.max_slots = self.max_slots.max(self.next_slot);
        s
    }

    fn type_value(&self, name: &str) -> Option<Value> {
        type_value_in(&*self.env.provider, name)
    }

    /// The root cost of an identifier (attribute root).
    fn root_cost(&self, id: ExprId) -> u64 {
        match self.costs.charge(id) {
            Charge::Attribute { root, .. } => *root,
            _ => 0,
        }
    }

    /// The two parts of an attribute step's charge.
    fn step_cost(&self, id: ExprId) -> StepCost {
        match self.costs.charge(id) {
            Charge::Attribute { qualifier, root } => StepCost {
                qualifier: *qualifier,
                root: *root,
            },
            Charge::Presence {
                qualifier,
                presence,
            } => StepCost {
                qualifier: *qualifier,
                root: *presence,
            },
            _ => StepCost::default(),
        }
    }

    fn literal_cost(&self, id: ExprId) -> u64 {
        match self.costs.charge(id) {
            Charge::Literal(c) => *c,
            _ => 0,
        }
    }

    /// The cost rule of a call, by the overload the cost plan resolved and the checked type
    /// of its first argument (the receiver of a member call).
    fn call_cost(&self, id: ExprId, function: &str, first_arg: Option<&Expr>) -> CallCost {
        let overload = match self.costs.charge(id) {
            Charge::Call { overload, .. } => overload.as_str(),
            _ => "",
        };
        let first_type = first_arg.zip(self.checked).map(|(a, c)| c.type_of(a.id));
        self.env.call_cost_rule(overload, function, first_type)
    }

    fn plan(&mut self, e: &Expr) -> Node {
        cel_syntax::stack::guarded(|| self.plan_unguarded(e))
    }

    fn plan_unguarded(&mut self, e: &Expr) -> Node {
        if self.costs.is_constant(e.id) && !matches!(e.kind, ExprKind::Literal(_)) {
            // `x in []` is false without evaluating `x`.
            if let ExprKind::Call(c) = &e.kind
                && c.function == operators::IN
                && let [_, list] = c.args.as_slice()
                && matches!(&list.kind, ExprKind::List(l) if l.elements.is_empty())
            {
                return Node::Const(Value::Bool(false));
            }
            if let Some(v) = self.fold(e) {
                return Node::Const(v);
            }
        }
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
                let cost = self.step_cost(e.id);
                if sel.test_only {
                    Node::Has {
                        id: e.id,
                        operand,
                        field,
                        cost,
                    }
                } else {
                    Node::Select {
                        id: e.id,
                        operand,
                        field,
                        cost,
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

    /// Evaluates a subtree the cost plan folded to a constant (cel-go's `OptOptimize`).
    /// A failing conversion is an error of the whole program, as in cel-go.
    fn fold(&mut self, e: &Expr) -> Option<Value> {
        // Plan the subtree without folding, then evaluate it once with no variables. Its
        // constant patterns draw on the program's allowance.
        let mut sub = Planner::new(self.checked, CostPlan::default(), self.env);
        sub.inherited_regexes = self.inherited_regexes;
        sub.pattern_budget = std::mem::take(&mut self.pattern_budget);
        let node = sub.plan(e);
        self.pattern_budget = std::mem::take(&mut sub.pattern_budget);
        self.constant_regexes.extend(sub.constant_regexes.drain());
        if sub.max_slots > 0 {
            return None;
        }
        let plan = Plan {
            root: node,
            slots: 0,
            external_calls: sub.external_calls,
            constant_regexes: HashMap::new(),
        };
        match plan.eval(&cel_runtime::EmptyActivation) {
            Ok(v) => Some(v),
            Err(err) => {
                if self.fold_error.is_none() {
                    self.fold_error = Some(err.at(e.id));
                }
                None
            }
        }
    }

    fn plan_ident(&mut self, id: ExprId, name: &str) -> Node {
        let cost = self.root_cost(id);
        // A leading dot names a global even where a comprehension variable shadows it.
        if !name.starts_with('.')
            && let Some(slot) = self.local(name)
        {
            if self.index_slots.contains(&slot) {
                return Node::BlockIndex {
                    id,
                    slot,
                    name: name.into(),
                    cost,
                };
            }
            return Node::Local { slot, cost };
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
                    cost,
                };
            }
            return Node::Global {
                id,
                name: name.into(),
                cost,
            };
        }
        let candidates = self
            .env
            .container
            .resolve_candidates(name)
            .into_iter()
            .map(|c| Arc::from(c.as_str()))
            .collect();
        let type_value = self.type_value(name);
        if cost == 0
            && let Some(v) = &type_value
            && self.costs.is_constant(id)
        {
            return Node::Const(v.clone());
        }
        Node::MaybeGlobal {
            id,
            candidates,
            type_value,
            cost,
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
            cost: self.step_cost(e.id),
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
        if function == BLOCK_FUNCTION && target.is_none() {
            return self.plan_block(id, args);
        }
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
                    cost: self.call_cost(id, function, Some(a)),
                };
            }
            (operators::INDEX, None, [o, i]) => {
                return Node::Index {
                    id,
                    operand: Box::new(self.plan(o)),
                    index: Box::new(self.plan(i)),
                    cost: self.step_cost(id),
                };
            }
            (operators::OPT_INDEX, None, [o, i]) => {
                return Node::OptIndex {
                    id,
                    operand: Box::new(self.plan(o)),
                    index: Box::new(self.plan(i)),
                    cost: self.step_cost(id),
                };
            }
            (operators::OPT_SELECT, None, [o, f]) => {
                if let ExprKind::Literal(Literal::String(field)) = &f.kind {
                    return Node::OptSelect {
                        id,
                        operand: Box::new(self.plan(o)),
                        field: field.as_str().into(),
                        cost: self.step_cost(id),
                    };
                }
            }
            ("or", Some(t), [a]) if self.is_optional_call(id, ov::OPTIONAL_OR_OPTIONAL) => {
                return Node::OptOr {
                    id,
                    lhs: Box::new(self.plan(t)),
                    rhs: Box::new(self.plan(a)),
                    lenient: self.env.older.optional_or_takes_any_receiver,
                };
            }
            ("orValue", Some(t), [a]) if self.is_optional_call(id, ov::OPTIONAL_OR_VALUE_VALUE) => {
                return Node::OptOrValue {
                    id,
                    lhs: Box::new(self.plan(t)),
                    rhs: Box::new(self.plan(a)),
                    lenient: self.env.older.optional_or_takes_any_receiver,
                };
            }
            _ => {}
        }

        if let Charge::SetMembership = self.costs.charge(id)
            && let [elem, list] = args
            && let ExprKind::List(l) = &list.kind
        {
            let set = l
                .elements
                .iter()
                .filter_map(|e| match &e.kind {
                    ExprKind::Literal(lit) => Some(literal_value(lit)),
                    _ => None,
                })
                .collect();
            return Node::InSet {
                id,
                elem: Box::new(self.plan(elem)),
                set,
            };
        }

        // Unchecked `pkg.f(x)`: the receiver may be a namespace.
        let (target, function) = match (self.checked, target) {
            (None, Some(t)) => match qualified(t) {
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
                .any(|a| c.type_of(a.id).is_dynamic()),
            None => true,
        };
        let dispatch =
            self.dispatch_for(id, target.is_some(), &function, planned.len(), dynamic_args);
        self.external_calls |= dispatch.may_reach_outside();
        let cost = self.call_cost(id, &function, target.or(args.first()));

        // Constant regular expressions are compiled once per program.
        if let Dispatch::Direct(..) | Dispatch::Candidates(_) = &dispatch
            && function == "matches"
            && planned.len() == 2
            && let Node::Const(Value::String(pattern)) = &planned[1]
        {
            let regex = match self.inherited_regexes.and_then(|all| all.get(&id)) {
                Some(compiled) => compiled.clone(),
                None => self.pattern_budget.compile(pattern).map_err(|e| e.at(id)),
            };
            self.constant_regexes.insert(id, regex.clone());
            let pattern = Value::String(pattern.clone());
            let subject = Box::new(planned.swap_remove(0));
            return Node::MatchesConst {
                id,
                subject,
                pattern,
                regex,
                cost,
            };
        }
        Node::Call {
            id,
            args: planned,
            dispatch,
            cost,
        }
    }

    /// Plans `cel.@block([e0, e1, ...], result)`. Each `ei` and `result` see every `@indexj` of
    /// the block (a subexpression is evaluated when first read, wherever that is). The slots
    /// a subexpression's own comprehensions use belong to it alone: it may be evaluated in the
    /// middle of another subexpression's comprehension or of the result's.
    fn plan_block(&mut self, id: ExprId, args: &[Expr]) -> Node {
        let [bindings, result] = args else {
            return self.plan_error(
                Error::new(format!(
                    "{BLOCK_FUNCTION} expects two arguments, but got {}",
                    args.len()
                ))
                .at(id),
            );
        };
        let ExprKind::List(list) = &bindings.kind else {
            return self.plan_error(
                Error::new(format!(
                    "{BLOCK_FUNCTION} expects a list constructor as the first argument"
                ))
                .at(id),
            );
        };
        let saved_next = self.next_slot;
        let slots: Vec<usize> = list.elements.iter().map(|_| self.alloc_slot()).collect();
        for (i, &slot) in slots.iter().enumerate() {
            self.scopes.push((format!("{BLOCK_INDEX_PREFIX}{i}"), slot));
            self.index_slots.push(slot);
        }
        let mut planned = Vec::with_capacity(slots.len());
        for (&slot, element) in slots.iter().zip(&list.elements) {
            let node = self.plan(element);
            self.next_slot = self.max_slots;
            planned.push(BlockSlot {
                slot,
                node,
                depth: ast_depth(element),
            });
        }
        let result = self.plan(result);
        for _ in &slots {
            self.scopes.pop();
            self.index_slots.pop();
        }
        self.next_slot = saved_next;
        Node::Block {
            slots: planned,
            result: Box::new(result),
        }
    }

    /// A node for something that cannot be planned: the program fails to build with `err`
    /// (and, should it be evaluated anyway, so does the node).
    fn plan_error(&mut self, err: Error) -> Node {
        if self.fold_error.is_none() {
            self.fold_error = Some(err.clone());
        }
        Node::Fail(err)
    }

    /// Whether an `or`/`orValue` call is the optional library's (checked: by overload id;
    /// unchecked: always, as the optional library is the only one defining them).
    fn is_optional_call(&self, id: ExprId, overload_id: &str) -> bool {
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
        if let Some(checked) = self.checked {
            let ids: Vec<&str> = checked
                .references
                .get(&id)
                .map(|r| r.overload_ids.iter().map(|o| o.as_str()).collect())
                .unwrap_or_default();
            return self
                .env
                .dispatch_checked(&ids, function, member, argc, dynamic_args)
                .0;
        }
        let table = &self.env.functions;
        let Some(name) = self.resolve_function(function) else {
            return Dispatch::Unknown(function.into());
        };
        let candidates: Vec<Arc<OverloadEntry>> = table
            .overloads(&name)
            .unwrap_or(&[])
            .iter()
            .filter(|o| o.decl.is_member == member && o.decl.params.len() == argc)
            .cloned()
            .collect();
        // A known function called with an arity or style none of its overloads has is "no
        // such overload", not an unbound function.
        Dispatch::Candidates(candidates)
    }

    fn plan_list(&mut self, id: ExprId, list: &ListExpr) -> Node {
        let elements: Vec<Node> = list.elements.iter().map(|e| self.plan(e)).collect();
        let mut optional = vec![false; elements.len()];
        for &i in &list.optional_indices {
            if let Some(o) = optional.get_mut(i) {
                *o = true;
            }
        }
        let cost = self.literal_cost(id);
        if optional.iter().all(|o| !o) && elements.iter().all(|e| matches!(e, Node::Const(_))) {
            // Values are immutable, so one list built at plan time is indistinguishable from
            // a fresh one per evaluation (the literal is still charged, unless folded).
            let items = elements
                .into_iter()
                .filter_map(|mut e| match &mut e {
                    Node::Const(v) => Some(std::mem::replace(v, Value::Null)),
                    _ => None,
                })
                .collect();
            return Node::ConstList {
                value: Value::list(items),
                cost,
            };
        }
        Node::List {
            id,
            elements,
            optional,
            cost,
        }
    }

    fn plan_map(&mut self, id: ExprId, map: &MapExpr) -> Node {
        let entries = map
            .entries
            .iter()
            .map(|e| (self.plan(&e.key), self.plan(&e.value), e.optional))
            .collect();
        Node::Map {
            id,
            entries,
            cost: self.literal_cost(id),
        }
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
                .find(|c| {
                    self.env.provider.find_type(c).is_some()
                        || Type::well_known(c).is_some()
                        || self
                            .env
                            .messages
                            .as_ref()
                            .is_some_and(|m| m.message(c).is_some())
                })
                .unwrap_or_else(|| type_name.to_string())
                .into(),
        };
        let fields = s
            .fields
            .iter()
            .map(|f| (Arc::from(f.name.as_str()), self.plan(&f.value), f.optional))
            .collect();
        let message = self.env.message_descriptor(&type_name);
        let builds_map = self.env.builds_map(&type_name);
        Node::Struct {
            id,
            type_name,
            message,
            builds_map,
            fields,
            cost: self.literal_cost(id),
        }
    }

    fn plan_fold(&mut self, id: ExprId, c: &Comprehension) -> Node {
        let range = self.plan(&c.iter_range);
        let saved_next = self.next_slot;
        // The initial value is evaluated lazily, when the accumulator is first read: inside
        // the loop, perhaps inside a comprehension of the step. The slots its own
        // comprehensions use must therefore be none of the slots the loop uses: the loop's
        // slots start above them.
        let outer_max = self.max_slots;
        self.max_slots = self.next_slot;
        let init = self.plan(&c.accu_init);
        let init_top = self.max_slots;
        self.max_slots = outer_max.max(init_top);
        self.next_slot = init_top;
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

    /// Plans a comprehension step, turning `accu + [e]` (the shape of `map` and `filter`) and
    /// `cel.@mapInsert(accu, ...)` (the transforms) into in-place updates, so that building a
    /// list or map is linear, not quadratic. Costs are charged as for the original calls.
    fn plan_step(&mut self, step: &Expr, accu_var: &str, accu_slot: usize) -> Node {
        if let Some(node) = self.plan_accu_update(step, accu_var, accu_slot) {
            return node;
        }
        if let ExprKind::Call(call) = &step.kind
            && call.function == operators::CONDITIONAL
            && call.target.is_none()
            && let [c, t, f] = call.args.as_slice()
            && matches!(&f.kind, ExprKind::Ident(n) if n == accu_var)
            && let Some(then) = self.plan_accu_update(t, accu_var, accu_slot)
        {
            return Node::Conditional {
                id: step.id,
                cond: Box::new(self.plan(c)),
                then: Box::new(then),
                otherwise: Box::new(Node::Local {
                    slot: accu_slot,
                    cost: self.root_cost(f.id),
                }),
            };
        }
        self.plan(step)
    }

    fn plan_accu_update(&mut self, e: &Expr, accu_var: &str, accu_slot: usize) -> Option<Node> {
        let ExprKind::Call(call) = &e.kind else {
            return None;
        };
        if call.target.is_some() {
            return None;
        }
        let is_accu = |x: &Expr| matches!(&x.kind, ExprKind::Ident(n) if n == accu_var);
        match (call.function.as_str(), call.args.as_slice()) {
            (operators::ADD, [acc, rhs]) if is_accu(acc) => {
                let ExprKind::List(list) = &rhs.kind else {
                    return None;
                };
                let ([elem], true) = (list.elements.as_slice(), list.optional_indices.is_empty())
                else {
                    return None;
                };
                if self.costs.is_constant(rhs.id) {
                    return None;
                }
                Some(Node::AccuAppend {
                    slot: accu_slot,
                    accu_cost: self.root_cost(acc.id),
                    elem: Box::new(self.plan(elem)),
                    list_cost: self.literal_cost(rhs.id),
                    add_cost: self.call_cost(e.id, operators::ADD, Some(acc)),
                })
            }
            ("cel.@mapInsert", [acc, k, v]) if is_accu(acc) => Some(Node::AccuMapInsert {
                id: e.id,
                slot: accu_slot,
                accu_cost: self.root_cost(acc.id),
                key: Some(Box::new(self.plan(k))),
                value: Box::new(self.plan(v)),
                cost: self.call_cost(e.id, "cel.@mapInsert", Some(acc)),
            }),
            ("cel.@mapInsert", [acc, m]) if is_accu(acc) => Some(Node::AccuMapInsert {
                id: e.id,
                slot: accu_slot,
                accu_cost: self.root_cost(acc.id),
                key: None,
                value: Box::new(self.plan(m)),
                cost: self.call_cost(e.id, "cel.@mapInsert", Some(acc)),
            }),
            _ => None,
        }
    }
}

/// The depth of a tree (a leaf is 1), without recursion.
fn ast_depth(e: &Expr) -> u32 {
    let mut deepest = 0;
    let mut stack = vec![(e, 1u32)];
    while let Some((node, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        node.for_each_child(&mut |c| stack.push((c, depth.saturating_add(1))));
    }
    deepest
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
