//! Code generation: one IR function becomes one Cranelift function
//! `extern "C" fn(*mut Ctx)`.
//!
//! Scalars stay unboxed in registers; arithmetic checks overflow, division by zero and NaN
//! ordering explicitly and never traps. Errors raised inline are encoded in the error handle
//! itself (kind and expression id), so the checks are branch-free and nothing is allocated
//! unless the error is observed. Everything else is a call to a shim. The running cost lives
//! in a variable: constant charges are additions, and the limit is checked at loop
//! back-edges and after charges that depend on sizes; leaving early stores the cost and
//! returns, and the Rust wrapper decides what that means.

use std::collections::{HashMap, HashSet};
use std::mem::offset_of;
use std::sync::Arc;

use cel_checker::CheckedAst;
use cel_cost::{Charge, CostPlan};
use cel_interp::{Plan, PlanEnv, literal_value, type_value_in};
use cel_ir::{ArithOp, CmpOp, Constant, Function, Op, Term, Ty};
use cel_runtime::regex::PatternBudget;
use cel_runtime::{KeyRef, MapHasher, Value};
use cel_syntax::ExprId;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{self as cl};
use cranelift_codegen::ir::{
    AbiParam, BlockArg, FuncRef, InstBuilder, MemFlagsData, StackSlot, StackSlotData,
    StackSlotKind, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{Linkage, Module};

use crate::JitError;
use crate::abi::NULL_VALUE;
use crate::abi::{
    CTX_COST, CTX_ERR_OUT, CTX_INTERRUPT, CTX_LIMIT, CTX_MADE, CTX_RESULT, CTX_RESULT_ERR,
    CTX_STATUS, STATUS_FALLBACK, STATUS_INTERRUPTED, VALERR_ERR, VALERR_KNOWN_SIZE, VALERR_VALUE,
    VALUE_BOOL, VALUE_SCALAR, VALUE_TAG,
};
use crate::shims::{
    CallSite, ConcatBuildSite, ConcatSite, CostSite, ERR_DIVIDE_BY_ZERO, ERR_INT_OVERFLOW,
    ERR_MODULUS_BY_ZERO, ERR_NAN, ERR_NO_SUCH_ATTRIBUTE, ERR_NO_SUCH_OVERLOAD, ERR_UINT_OVERFLOW,
    FieldSite, KeyInSite, RegexSite, ResidualSite, SetSite, Shim, StructSite, VarSite,
};

/// The error handle bit marking an error raised inline: bits 26..31 hold its kind, bits
/// 0..26 the expression id.
pub(crate) const INLINE_ERROR: u32 = 1 << 31;
/// The largest expression id an inline error can name.
pub(crate) const MAX_INLINE_EXPR: i64 = (1 << 26) - 1;

/// Things generated code points at, owned by the compiled program.
#[derive(Default)]
pub(crate) struct ProgramData {
    keep: Vec<Box<dyn std::any::Any + Send + Sync>>,
    /// The variable each `load.var` names, by expression id.
    pub(crate) names: HashMap<i64, Arc<str>>,
    /// The allowance for constant patterns the plan did not compile (see `MatchesConst`).
    patterns: PatternBudget,
}

impl ProgramData {
    /// Keeps `t` alive as long as the program and returns its (stable) address.
    fn keep<T: Send + Sync + 'static>(&mut self, t: T) -> *const T {
        let b = Box::new(t);
        let p: *const T = &*b;
        self.keep.push(b);
        p
    }
}

/// What emission produced.
pub(crate) struct Emitted {
    pub func: cranelift_module::FuncId,
    pub clif: Option<String>,
}

/// The Cranelift type that holds an IR type.
fn cl_ty(t: Ty) -> types::Type {
    match t {
        Ty::Int | Ty::Uint | Ty::Index | Ty::Val => types::I64,
        Ty::Double => types::F64,
        Ty::Bool => types::I8,
        Ty::Err => types::I32,
    }
}

/// The handle of an error raised inline.
fn inline_error(code: i64, expr: ExprId) -> i64 {
    let expr = expr.clamp(0, MAX_INLINE_EXPR);
    (INLINE_ERROR as i64) | (code << 26) | expr
}

/// The tag of the `Value`s that hold a scalar IR type.
fn scalar_tag(ty: Ty) -> Option<u8> {
    match ty {
        Ty::Int => Some(Value::TAG_INT),
        Ty::Uint => Some(Value::TAG_UINT),
        Ty::Double => Some(Value::TAG_DOUBLE),
        Ty::Bool => Some(Value::TAG_BOOL),
        _ => None,
    }
}

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

/// Whether `func` has a loop (a comprehension).
pub(crate) fn has_loop(func: &Function) -> bool {
    !order(func).1.is_empty()
}

/// Blocks in reverse post-order from the entry, and the edges that go back to a block on
/// the current path (loop back-edges).
fn order(func: &Function) -> (Vec<usize>, HashSet<(usize, usize)>) {
    let n = func.blocks.len();
    let succs = |i: usize| -> Vec<usize> {
        func.blocks[i]
            .term
            .iter()
            .flat_map(Term::successors)
            .map(|b| b.0 as usize)
            .collect()
    };
    let mut state = vec![0u8; n]; // 0 new, 1 on the path, 2 done
    let mut post = Vec::with_capacity(n);
    let mut back = HashSet::new();
    let mut stack: Vec<(usize, Vec<usize>)> = vec![(0, succs(0))];
    state[0] = 1;
    while let Some((node, rest)) = stack.last_mut() {
        let node = *node;
        if let Some(next) = rest.pop() {
            match state[next] {
                0 => {
                    state[next] = 1;
                    let s = succs(next);
                    stack.push((next, s));
                }
                1 => {
                    back.insert((node, next));
                }
                _ => {}
            }
        } else {
            state[node] = 2;
            post.push(node);
            stack.pop();
        }
    }
    post.reverse();
    (post, back)
}

/// Emits `func` into `module` as a new function.
#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one compilation, passed once"
)]
pub(crate) fn emit(
    func: &Function,
    checked: &CheckedAst,
    env: &PlanEnv,
    plan: &Plan,
    costs: &CostPlan,
    module: &mut JITModule,
    data: &mut ProgramData,
    options: crate::JitOptions,
) -> Result<Emitted, JitError> {
    // Cranelift's contexts keep their buffers between functions: a thread reuses its own.
    let (mut ctx, mut fctx) = CONTEXTS
        .with(|c| c.borrow_mut().take())
        .unwrap_or_else(|| (module.make_context(), FunctionBuilderContext::new()));
    module.clear_context(&mut ctx);
    let r = emit_with(
        func, checked, env, plan, costs, module, data, options, &mut ctx, &mut fctx,
    );
    module.clear_context(&mut ctx);
    CONTEXTS.with(|c| *c.borrow_mut() = Some((ctx, fctx)));
    r
}

std::thread_local! {
    /// The thread's Cranelift contexts, reused by every compilation on it.
    static CONTEXTS: std::cell::RefCell<Option<(cranelift_codegen::Context, FunctionBuilderContext)>> =
        const { std::cell::RefCell::new(None) };
}

#[allow(
    clippy::too_many_arguments,
    reason = "the pieces of one compilation, passed once"
)]
fn emit_with(
    func: &Function,
    checked: &CheckedAst,
    env: &PlanEnv,
    plan: &Plan,
    costs: &CostPlan,
    module: &mut JITModule,
    data: &mut ProgramData,
    options: crate::JitOptions,
    ctx: &mut cranelift_codegen::Context,
    fctx: &mut FunctionBuilderContext,
) -> Result<Emitted, JitError> {
    let want_clif = options.keep_clif;
    let mut imports: Vec<(usize, &str)> = Vec::new();
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    let func_id = module
        .declare_anonymous_function(&ctx.func.signature)
        .map_err(|e| JitError::Codegen(e.to_string()))?;
    {
        let b = FunctionBuilder::new(&mut ctx.func, fctx);
        let mut em = Emitter {
            func,
            checked,
            plan,
            env,
            costs,
            data,
            module: &mut *module,
            b,
            ctx_ptr: None,
            blocks: Vec::new(),
            vals: vec![None; func.types.len()],
            scalar_consts: HashMap::new(),
            const_strings: HashMap::new(),
            boxed_ints: HashSet::new(),
            const_sizes: HashMap::new(),
            no_errs: HashSet::new(),
            vars: HashMap::new(),
            checked_vals: HashMap::new(),
            const_block: None,
            const_cache: HashMap::new(),
            cost: None,
            locals: Vec::new(),
            made_baselines: HashMap::new(),
            shims: HashMap::new(),
            exit: None,
            interrupted_exit: None,
            inject_fault: options.inject_fault,
            lazy_variables: options.lazy_variables,
            track_cost: options.track_cost,
        };
        em.run()?;
        em.b.seal_all_blocks();
        let config = em.module.target_config();
        em.b.finalize(config);
        if want_clif {
            use cranelift_codegen::entity::EntityRef;
            imports = em
                .shims
                .iter()
                .map(|(s, r)| (r.index(), s.name()))
                .collect();
        }
    }
    // The text names the helper each imported function is, which Cranelift prints by number.
    let clif = want_clif.then(|| {
        imports.sort_unstable();
        let mut text = ctx.func.display().to_string();
        for (index, name) in imports {
            text.push_str(&format!("; fn{index} = {name}\n"));
        }
        text
    });
    module
        .define_function(func_id, ctx)
        .map_err(|e| JitError::Codegen(format!("{e:?}")))?;
    Ok(Emitted {
        func: func_id,
        clif,
    })
}

/// The largest size `t` (at least 1, at most 64) such that `formula` charges the same for
/// argument `i` of any size from 0 to `t` as for size 1, the other sizes as in `sizes`; `None`
/// when sizes 0 and 1 already cost differently. Cost formulas are a tenth or a quarter of a
/// size, rounded up, so the bracket is short: a few bytes to a few tens.
fn same_cost_up_to(formula: cel_cost::CostFormula, sizes: &[u64], i: usize) -> Option<u64> {
    let cost_at = |s: u64| {
        formula.eval(|j| {
            if j == i {
                s
            } else {
                sizes.get(j).copied().unwrap_or(1)
            }
        })
    };
    let of_one = cost_at(1);
    if cost_at(0) != of_one {
        return None;
    }
    (1..=64).take_while(|&s| cost_at(s) == of_one).last()
}

/// A scalar known when the program is compiled (for boxing constants once).
#[derive(Clone, Copy)]
enum Scalar {
    Int(i64),
    Uint(u64),
    Double(f64),
    Bool(bool),
}

struct Emitter<'a, 'f> {
    func: &'a Function,
    checked: &'a CheckedAst,
    /// The interpreter's plan of the same expression, whose compiled constant patterns the
    /// code shares rather than compiling them again.
    plan: &'a Plan,
    env: &'a PlanEnv,
    /// The cost plan the IR was lowered with (which overload's rule charges each call).
    costs: &'a CostPlan,
    data: &'a mut ProgramData,
    module: &'a mut JITModule,
    b: FunctionBuilder<'f>,
    ctx_ptr: Option<cl::Value>,
    blocks: Vec<cl::Block>,
    vals: Vec<Option<cl::Value>>,
    scalar_consts: HashMap<cel_ir::Value, Scalar>,
    /// The IR values that are constant strings, and their text.
    const_strings: HashMap<cel_ir::Value, Arc<str>>,
    /// Values that are boxed `int` constants.
    boxed_ints: HashSet<cel_ir::Value>,
    /// The cost-model size of values that are constants.
    const_sizes: HashMap<cel_ir::Value, u64>,
    /// Error handles that are constantly "no error".
    no_errs: HashSet<cel_ir::Value>,
    /// Each variable's value pointer, resolved and checked once at entry (see
    /// `enter_with_variables`), and the scalar type entry checked it holds, if declared one.
    vars: HashMap<Arc<str>, (cl::Value, Option<Ty>)>,
    /// IR values read from a variable of a checked scalar type, with that type: unboxing them
    /// needs no check.
    checked_vals: HashMap<cel_ir::Value, Ty>,
    /// The block whose constants `const_cache` holds.
    const_block: Option<cl::Block>,
    const_cache: HashMap<(types::Type, i64), cl::Value>,
    cost: Option<Variable>,
    locals: Vec<Variable>,
    /// For each loop's arena mark: the variable holding the count of values and errors
    /// made at its last release (or at the mark).
    made_baselines: HashMap<cel_ir::Value, Variable>,
    shims: HashMap<Shim, FuncRef>,
    exit: Option<cl::Block>,
    /// The cold block that records an interruption and leaves (see `interrupted_exit`).
    interrupted_exit: Option<cl::Block>,
    /// Charge one unit too many at the end (see `JitOptions::inject_fault`).
    inject_fault: bool,
    /// Resolve variables where they are read (see `JitOptions::lazy_variables`).
    lazy_variables: bool,
    /// Whether to count the cost at all (see `JitOptions::track_cost`).
    track_cost: bool,
}

impl Emitter<'_, '_> {
    fn ctx(&self) -> cl::Value {
        self.ctx_ptr.expect("the context parameter")
    }

    fn cost_var(&self) -> Variable {
        self.cost.expect("the cost variable")
    }

    fn v(&self, x: cel_ir::Value) -> Result<cl::Value, JitError> {
        self.vals[x.0 as usize]
            .ok_or_else(|| JitError::Codegen(format!("{x} used before it is defined")))
    }

    fn def(&mut self, x: cel_ir::Value, c: cl::Value) {
        self.vals[x.0 as usize] = Some(c);
    }

    /// The scalar payload of the value at `p`, read as `ty` (whatever its tag says).
    fn load_payload(&mut self, p: cl::Value, ty: Ty) -> cl::Value {
        match ty {
            Ty::Double => self.b.ins().load(types::F64, flags(), p, VALUE_SCALAR),
            Ty::Bool => self.b.ins().load(types::I8, flags(), p, VALUE_BOOL),
            _ => self.b.ins().load(types::I64, flags(), p, VALUE_SCALAR),
        }
    }

    /// Defines an error handle that is "no error" in every evaluation.
    fn def_no_err(&mut self, x: cel_ir::Value) {
        self.no_errs.insert(x);
        let c = self.iconst(types::I32, 0);
        self.def(x, c);
    }

    /// The target of block `from`'s branch when its condition is a constant (an error test
    /// of a handle that is never an error), unless that is a loop's back edge (which must go
    /// through its checks).
    fn constant_branch<'t>(
        &self,
        from: usize,
        cond: cel_ir::Value,
        then: &'t (cel_ir::Block, Vec<cel_ir::Value>),
        otherwise: &'t (cel_ir::Block, Vec<cel_ir::Value>),
        back: &HashSet<(usize, usize)>,
    ) -> Option<(cel_ir::Block, &'t [cel_ir::Value])> {
        let Some(Scalar::Bool(taken)) = self.scalar_consts.get(&cond) else {
            return None;
        };
        let (target, args) = if *taken { then } else { otherwise };
        if back.contains(&(from, target.0 as usize)) {
            return None;
        }
        Some((*target, args))
    }

    /// An integer constant, defined once per block (generated code repeats a few constants
    /// many times, and every instruction costs compile time).
    fn iconst(&mut self, ty: types::Type, n: i64) -> cl::Value {
        let blk = self.b.current_block();
        if blk != self.const_block {
            self.const_cache.clear();
            self.const_block = blk;
        }
        if let Some(v) = self.const_cache.get(&(ty, n)) {
            return *v;
        }
        let v = self.b.ins().iconst(ty, n);
        self.const_cache.insert((ty, n), v);
        v
    }

    /// `icmp` with a constant (shared within the block, unlike `icmp_imm`'s).
    fn icmp_c(&mut self, cc: IntCC, x: cl::Value, n: i64) -> cl::Value {
        let ty = self.b.func.dfg.value_type(x);
        let c = self.iconst(ty, n);
        self.b.ins().icmp(cc, x, c)
    }

    /// `bxor` with a constant.
    fn bxor_c(&mut self, x: cl::Value, n: i64) -> cl::Value {
        let ty = self.b.func.dfg.value_type(x);
        let c = self.iconst(ty, n);
        self.b.ins().bxor(x, c)
    }

    /// `iadd` with a constant.
    fn iadd_c(&mut self, x: cl::Value, n: i64) -> cl::Value {
        let ty = self.b.func.dfg.value_type(x);
        let c = self.iconst(ty, n);
        self.b.ins().iadd(x, c)
    }

    /// `imul` with a constant.
    fn imul_c(&mut self, x: cl::Value, n: i64) -> cl::Value {
        let ty = self.b.func.dfg.value_type(x);
        let c = self.iconst(ty, n);
        self.b.ins().imul(x, c)
    }

    fn ptr_const<T>(&mut self, p: *const T) -> cl::Value {
        self.iconst(types::I64, p as usize as i64)
    }

    /// A value of the program, pointed at by generated code.
    fn keep_value(&mut self, v: Value) -> *const Value {
        self.data.keep(v)
    }

    fn shim_ref(&mut self, shim: Shim) -> Result<FuncRef, JitError> {
        if let Some(r) = self.shims.get(&shim) {
            return Ok(*r);
        }
        let mut sig = self.module.make_signature();
        for p in shim.params() {
            sig.params.push(AbiParam::new(*p));
        }
        sig.returns.push(AbiParam::new(shim.ret()));
        let id = self
            .module
            .declare_function(shim.name(), Linkage::Import, &sig)
            .map_err(|e| JitError::Codegen(e.to_string()))?;
        let r = self.module.declare_func_in_func(id, self.b.func);
        self.shims.insert(shim, r);
        Ok(r)
    }

    /// Calls a shim with the context prepended; its one result.
    /// Asks the activation for a variable: its value pointer (to null when unbound) and
    /// whether it is unbound.
    fn resolve_var(&mut self, name: &Arc<str>) -> Result<(cl::Value, cl::Value), JitError> {
        let site = self.data.keep(VarSite { name: name.clone() });
        let s = self.ptr_const(site);
        let p = self.call(Shim::cel_rt_resolve, &[s])?;
        let unbound = self.icmp_c(IntCC::Equal, p, 0);
        let null = self.ptr_const(&NULL_VALUE as *const Value);
        let v = self.b.ins().select(unbound, null, p);
        Ok((v, unbound))
    }

    fn call(&mut self, shim: Shim, args: &[cl::Value]) -> Result<cl::Value, JitError> {
        let f = self.shim_ref(shim)?;
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(self.ctx());
        all.extend_from_slice(args);
        let inst = self.b.ins().call(f, &all);
        Ok(self.b.inst_results(inst)[0])
    }

    /// `err.again`: no error when `h` is none, else (in a cold block) the error of `h`
    /// attached to `expr` where it was attached to `from`.
    fn err_again(
        &mut self,
        h: cl::Value,
        from: ExprId,
        expr: ExprId,
    ) -> Result<cl::Value, JitError> {
        let failed = self.icmp_c(IntCC::NotEqual, h, 0);
        let again = self.b.create_block();
        self.b.set_cold_block(again);
        let join = self.b.create_block();
        let out = self.b.append_block_param(join, types::I32);
        let none = self.iconst(types::I32, 0);
        self.b
            .ins()
            .brif(failed, again, &[], join, &[BlockArg::Value(none)]);
        self.b.switch_to_block(again);
        let from = self.iconst(types::I64, from);
        let to = self.iconst(types::I64, expr);
        let moved = self.call(Shim::cel_rt_err_again, &[h, from, to])?;
        self.b.ins().jump(join, &[BlockArg::Value(moved)]);
        self.b.switch_to_block(join);
        Ok(out)
    }

    /// The error handle the last fallible shim left.
    fn err_out(&mut self) -> cl::Value {
        let ctx = self.ctx();
        self.b.ins().load(types::I32, flags(), ctx, CTX_ERR_OUT)
    }

    /// Calls a fallible shim: `(result, err)`.
    fn call2(
        &mut self,
        shim: Shim,
        args: &[cl::Value],
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let r = self.call(shim, args)?;
        let e = self.err_out();
        Ok((r, e))
    }

    /// An `i64` 0/1 as a bool.
    fn is_nonzero(&mut self, x: cl::Value) -> cl::Value {
        self.icmp_c(IntCC::NotEqual, x, 0)
    }

    /// `err` if `cond`, else no error.
    fn err_if(&mut self, cond: cl::Value, code: i64, expr: ExprId) -> cl::Value {
        let h = self.iconst(types::I32, inline_error(code, expr));
        let none = self.iconst(types::I32, 0);
        self.b.ins().select(cond, h, none)
    }

    fn add_cost(&mut self, amount: cl::Value) {
        if !self.track_cost {
            return;
        }
        let var = self.cost_var();
        let c = self.b.use_var(var);
        let n = self.b.ins().iadd(c, amount);
        self.b.def_var(var, n);
    }

    fn add_cost_imm(&mut self, n: u64) {
        if n == 0 || !self.track_cost {
            return;
        }
        let n = i64::try_from(n).unwrap_or(i64::MAX).min(1 << 62);
        let var = self.cost_var();
        let c = self.b.use_var(var);
        let s = self.iadd_c(c, n);
        self.b.def_var(var, s);
    }

    /// The cold block that leaves the function early (filled in at the end): it stores the
    /// cost and returns.
    fn exit_block(&mut self) -> cl::Block {
        if let Some(b) = self.exit {
            return b;
        }
        let exit = self.b.create_block();
        self.b.set_cold_block(exit);
        self.exit = Some(exit);
        exit
    }

    fn fill_exit_block(&mut self) {
        if let Some(exit) = self.exit {
            self.b.switch_to_block(exit);
            let var = self.cost_var();
            let c = self.b.use_var(var);
            let ctx = self.ctx();
            self.b.ins().store(flags(), c, ctx, CTX_COST);
            self.b.ins().return_(&[]);
        }
    }

    /// At a loop's back edge: leaves the function when the cost is over the limit (with cost
    /// tracking) or the host has set the interrupt flag, else continues at `target`.
    fn leave_if_stopped(&mut self, target: cl::Block, args: &[BlockArg]) {
        if self.track_cost {
            let over = self.over_limit();
            let exit = self.exit_block();
            let next = self.b.create_block();
            self.b.ins().brif(over, exit, &[], next, &[]);
            self.b.switch_to_block(next);
        }
        let ctx = self.ctx();
        let flag = self.b.ins().load(types::I64, flags(), ctx, CTX_INTERRUPT);
        let set = self.b.ins().load(types::I8, flags(), flag, 0);
        let stopped = self.interrupted_exit_block();
        self.b.ins().brif(set, stopped, &[], target, args);
    }

    /// The cold block that records an interruption (`STATUS_INTERRUPTED`) and leaves
    /// (filled in at the end, as the exit block is).
    fn interrupted_exit_block(&mut self) -> cl::Block {
        if let Some(b) = self.interrupted_exit {
            return b;
        }
        let block = self.b.create_block();
        self.b.set_cold_block(block);
        self.interrupted_exit = Some(block);
        block
    }

    fn fill_interrupted_exit_block(&mut self) {
        if let Some(block) = self.interrupted_exit {
            self.b.switch_to_block(block);
            let ctx = self.ctx();
            let status = self.iconst(types::I32, i64::from(STATUS_INTERRUPTED));
            self.b.ins().store(flags(), status, ctx, CTX_STATUS);
            let exit = self.exit_block();
            self.b.ins().jump(exit, &[]);
        }
    }

    /// Whether the running cost is over the limit (the limit is reloaded: a shim that must
    /// stop the evaluation lowers it).
    fn over_limit(&mut self) -> cl::Value {
        let ctx = self.ctx();
        let limit = self.b.ins().load(types::I64, flags(), ctx, CTX_LIMIT);
        let var = self.cost_var();
        let c = self.b.use_var(var);
        self.b.ins().icmp(IntCC::SignedGreaterThan, c, limit)
    }

    /// Leaves the function if the cost is over the limit; continues in a new block.
    fn check_limit(&mut self) {
        if !self.track_cost {
            return;
        }
        let over = self.over_limit();
        let exit = self.exit_block();
        let cont = self.b.create_block();
        self.b.ins().brif(over, exit, &[], cont, &[]);
        self.b.switch_to_block(cont);
    }

    /// Before a call that can build a large value (one whose cost rule has a result-size
    /// hook): a shim computes the cost it will be charged, and if that would cross the limit,
    /// stops the evaluation for the interpreter, which stops at the same call with cel-go's
    /// cost and error, before anything is allocated.
    fn precharge(&mut self, function: &str, expr: i64, args: &[cl::Value]) -> Result<(), JitError> {
        if !self.track_cost {
            return Ok(());
        }
        let Charge::Call { overload, .. } = self.costs.charge(expr) else {
            return Ok(());
        };
        // Hooks scoped to opaque values test the value when the shim runs them.
        let rule = self.env.call_cost_rule(overload, function, None);
        if !rule.has_precharge() {
            return Ok(());
        }
        let site = self.data.keep(CostSite { cost: rule });
        let s = self.ptr_const(site);
        let argv = self.stack_array(args);
        let n = self.iconst(types::I64, args.len() as i64);
        self.spill_cost();
        self.call(Shim::cel_rt_precharge, &[s, argv, n])?;
        self.check_limit();
        Ok(())
    }

    /// Stores the cost variable to the context (before a shim that adds to it).
    fn spill_cost(&mut self) {
        let var = self.cost_var();
        let c = self.b.use_var(var);
        let ctx = self.ctx();
        self.b.ins().store(flags(), c, ctx, CTX_COST);
    }

    /// Reloads the cost variable from the context (after such a shim).
    fn reload_cost(&mut self) {
        let ctx = self.ctx();
        let c = self.b.ins().load(types::I64, flags(), ctx, CTX_COST);
        let var = self.cost_var();
        self.b.def_var(var, c);
    }

    /// The count of values and errors made so far (read through the context).
    fn load_made(&mut self) -> cl::Value {
        let ctx = self.ctx();
        let p = self.b.ins().load(types::I64, flags(), ctx, CTX_MADE);
        self.b.ins().load(types::I64, flags(), p, 0)
    }

    /// A loop's back edge: if enough was made since the last release (see `Arena::made`),
    /// frees the loop's temporaries. The local slots that survive go to the shim in a stack
    /// array and are
    /// read back from it (their values may have moved).
    fn release_iteration(
        &mut self,
        mark: cel_ir::Value,
        vals: &[u32],
        errs: &[u32],
    ) -> Result<(), JitError> {
        let baseline = *self
            .made_baselines
            .get(&mark)
            .ok_or_else(|| JitError::Codegen("arena.release without its mark".into()))?;
        let mark = self.v(mark)?;
        let made = self.load_made();
        let before = self.b.use_var(baseline);
        let since = self.b.ins().isub(made, before);
        let changed = self.icmp_c(
            IntCC::UnsignedGreaterThanOrEqual,
            since,
            crate::arena::HEAVY as i64,
        );
        let release = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(changed, release, &[], done, &[]);
        self.b.switch_to_block(release);
        let mut words = Vec::with_capacity(vals.len() + errs.len());
        for slot in vals {
            let var = self.local(*slot)?;
            words.push(self.b.use_var(var));
        }
        for slot in errs {
            let var = self.local(*slot)?;
            let h = self.b.use_var(var);
            words.push(self.b.ins().uextend(types::I64, h));
        }
        let (slot, addr) = if words.is_empty() {
            (None, self.iconst(types::I64, 0))
        } else {
            let (s, a) = self.stack_array_slot(&words);
            (Some(s), a)
        };
        let nvals = self.iconst(types::I64, vals.len() as i64);
        let nerrs = self.iconst(types::I64, errs.len() as i64);
        let after = self.call(Shim::cel_rt_iteration_release, &[mark, addr, nvals, nerrs])?;
        self.b.def_var(baseline, after);
        if let Some(stack) = slot {
            for (i, local) in vals.iter().chain(errs).enumerate() {
                let w = self
                    .b
                    .ins()
                    .stack_load(types::I64, types::I64, stack, (i * 8) as i32);
                let w = if i < vals.len() {
                    w
                } else {
                    self.b.ins().ireduce(types::I32, w)
                };
                let var = self.local(*local)?;
                self.b.def_var(var, w);
            }
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// A stack array of `n` 8-byte slots; its address.
    fn stack_array(&mut self, words: &[cl::Value]) -> cl::Value {
        self.stack_array_slot(words).1
    }

    /// A stack array of `n` 8-byte slots: the slot and its address.
    fn stack_array_slot(&mut self, words: &[cl::Value]) -> (StackSlot, cl::Value) {
        let size = u32::try_from(words.len() * 8).unwrap_or(u32::MAX);
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size,
            3,
        ));
        for (i, w) in words.iter().enumerate() {
            self.b
                .ins()
                .stack_store(types::I64, *w, slot, (i * 8) as i32);
        }
        (slot, self.b.ins().stack_addr(types::I64, slot, 0))
    }

    /// IR values (all `val`) as a stack array of value pointers and its length, the shape of
    /// the `argv, n` parameters of shims; a null pointer for none.
    fn value_array(&mut self, a: &[cel_ir::Value]) -> Result<(cl::Value, cl::Value), JitError> {
        let mut items = Vec::with_capacity(a.len());
        for x in a {
            items.push(self.v(*x)?);
        }
        let argv = if items.is_empty() {
            self.iconst(types::I64, 0)
        } else {
            self.stack_array(&items)
        };
        let n = self.iconst(types::I64, items.len() as i64);
        Ok((argv, n))
    }

    /// A value as a pointer to a runtime value: constants are boxed once, when the program
    /// is compiled; other scalars are boxed into the arena.
    fn boxed(&mut self, x: cel_ir::Value) -> Result<cl::Value, JitError> {
        let ty = self.func.ty(x);
        if ty == Ty::Val {
            return self.v(x);
        }
        if let Some(s) = self.scalar_consts.get(&x).copied() {
            let v = match s {
                Scalar::Int(i) => Value::Int(i),
                Scalar::Uint(u) => Value::Uint(u),
                Scalar::Double(d) => Value::Double(d),
                Scalar::Bool(b) => Value::Bool(b),
            };
            let p = self.keep_value(v);
            return Ok(self.ptr_const(p));
        }
        let c = self.v(x)?;
        match ty {
            Ty::Int | Ty::Index => self.call(Shim::cel_rt_box_int, &[c]),
            Ty::Uint => self.call(Shim::cel_rt_box_uint, &[c]),
            Ty::Double => self.call(Shim::cel_rt_box_double, &[c]),
            Ty::Bool => {
                let w = self.b.ins().uextend(types::I64, c);
                self.call(Shim::cel_rt_box_bool, &[w])
            }
            Ty::Err | Ty::Val => Err(JitError::Codegen("boxing an error handle".into())),
        }
    }

    fn run(&mut self) -> Result<(), JitError> {
        let func = self.func;
        // The entry block takes the context, sets up the cost, and enters the IR's entry.
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        self.ctx_ptr = Some(self.b.block_params(entry)[0]);
        let cost = self.b.declare_var(types::I64);
        self.cost = Some(cost);
        let ctx = self.ctx();
        let c0 = self.b.ins().load(types::I64, flags(), ctx, CTX_COST);
        self.b.def_var(cost, c0);
        for t in &func.locals {
            let var = self.b.declare_var(cl_ty(*t));
            // Every slot starts defined (the lowering also sets them before reading).
            let zero = match t {
                Ty::Double => self.b.ins().f64const(0.0),
                other => self.b.ins().iconst(cl_ty(*other), 0),
            };
            self.b.def_var(var, zero);
            self.locals.push(var);
        }
        for bd in &func.blocks {
            let blk = self.b.create_block();
            for p in &bd.params {
                let v = self.b.append_block_param(blk, cl_ty(func.ty(*p)));
                self.vals[p.0 as usize] = Some(v);
            }
            self.blocks.push(blk);
        }
        // Variables are resolved once, at entry: a lookup in the activation is the most
        // expensive part of reading one, and a program often reads one several times.
        // (Unless the host computes them on demand: then each read asks.)
        let first = self.blocks[0];
        if self.lazy_variables {
            self.b.ins().jump(first, &[]);
        } else {
            self.enter_with_variables(first)?;
        }

        let (rpo, back) = order(func);
        let reached: HashSet<usize> = rpo.iter().copied().collect();
        for bi in rpo {
            let blk = self.blocks[bi];
            self.b.switch_to_block(blk);
            let bd = &func.blocks[bi];
            for inst in &bd.insts {
                self.inst(inst)?;
            }
            match &bd.term {
                Some(Term::Jump(target, args)) => {
                    let args = self.block_args(args)?;
                    if back.contains(&(bi, target.0 as usize)) {
                        // A loop back-edge: check the budget and the host's interrupt flag
                        // once per iteration.
                        let t = self.blocks[target.0 as usize];
                        self.leave_if_stopped(t, &args);
                    } else {
                        let t = self.blocks[target.0 as usize];
                        self.b.ins().jump(t, &args);
                    }
                }
                Some(Term::Branch {
                    cond,
                    then,
                    otherwise,
                }) if self
                    .constant_branch(bi, *cond, then, otherwise, &back)
                    .is_some() =>
                {
                    let (target, args) = self
                        .constant_branch(bi, *cond, then, otherwise, &back)
                        .expect("checked by the guard");
                    let args = self.block_args(args)?;
                    let t = self.blocks[target.0 as usize];
                    self.b.ins().jump(t, &args);
                }
                Some(Term::Branch {
                    cond,
                    then,
                    otherwise,
                }) => {
                    let c = self.v(*cond)?;
                    let mut targets = Vec::new();
                    for (target, args) in [then, otherwise] {
                        let args = self.block_args(args)?;
                        let t = self.blocks[target.0 as usize];
                        if back.contains(&(bi, target.0 as usize)) {
                            // Route a back-edge through a block that checks the budget and
                            // the interrupt flag.
                            let cur = self.b.current_block().expect("in a block");
                            let via = self.b.create_block();
                            self.b.switch_to_block(via);
                            self.leave_if_stopped(t, &args);
                            self.b.switch_to_block(cur);
                            targets.push((via, Vec::new()));
                        } else {
                            targets.push((t, args));
                        }
                    }
                    let (t1, a1) = &targets[0];
                    let (t2, a2) = &targets[1];
                    self.b.ins().brif(c, *t1, a1, *t2, a2);
                }
                Some(Term::Return { value, err }) => {
                    if self.inject_fault {
                        self.add_cost_imm(1);
                    }
                    let ctx = self.ctx();
                    let var = self.cost_var();
                    let c = self.b.use_var(var);
                    self.b.ins().store(flags(), c, ctx, CTX_COST);
                    let v = self.v(*value)?;
                    let bits = match func.ty(*value) {
                        Ty::Bool => self.b.ins().uextend(types::I64, v),
                        Ty::Double => self.b.ins().bitcast(types::I64, MemFlagsData::new(), v),
                        _ => v,
                    };
                    self.b.ins().store(flags(), bits, ctx, CTX_RESULT);
                    let e = self.v(*err)?;
                    self.b.ins().store(flags(), e, ctx, CTX_RESULT_ERR);
                    self.b.ins().return_(&[]);
                }
                None => return Err(JitError::Codegen(format!("bb{bi} has no terminator"))),
            }
        }
        // Blocks the entry cannot reach still need a terminator.
        for (i, blk) in self.blocks.clone().into_iter().enumerate() {
            if !reached.contains(&i) {
                self.b.switch_to_block(blk);
                self.b.ins().return_(&[]);
            }
        }
        // The interruption exit jumps to the exit block: filled first.
        self.fill_interrupted_exit_block();
        self.fill_exit_block();
        Ok(())
    }

    /// Resolves every variable the function reads, then enters `first`, unless one is
    /// unbound or one declared `int`, `uint`, `double` or `bool` holds a value of another
    /// type: that evaluation is the interpreter's (a fallback, which gives the same answer).
    /// The code can then read variables with no error path, and unbox scalar ones without
    /// checking their tags.
    fn enter_with_variables(&mut self, first: cl::Block) -> Result<(), JitError> {
        let func = self.func;
        let mut unfit: Option<cl::Value> = None;
        for bd in &func.blocks {
            for inst in &bd.insts {
                let Op::LoadVar(name) = &inst.op else {
                    continue;
                };
                if self.vars.contains_key(name) {
                    continue;
                }
                let (v, unbound) = self.resolve_var(name)?;
                let scalar = cel_ir::declared_scalar(self.checked.type_of(inst.expr));
                self.vars.insert(name.clone(), (v, scalar));
                let bad = match scalar.and_then(scalar_tag) {
                    // An unbound variable reads as the null value: its tag differs too.
                    Some(tag) => {
                        let actual = self.b.ins().load(types::I8, flags(), v, VALUE_TAG);
                        self.icmp_c(IntCC::NotEqual, actual, i64::from(tag))
                    }
                    None => unbound,
                };
                unfit = Some(match unfit {
                    None => bad,
                    Some(u) => self.b.ins().bor(u, bad),
                });
            }
        }
        match unfit {
            None => {
                self.b.ins().jump(first, &[]);
            }
            Some(unfit) => {
                // A cold block hands the evaluation to the interpreter and leaves.
                let fallback = self.b.create_block();
                self.b.set_cold_block(fallback);
                self.b.ins().brif(unfit, fallback, &[], first, &[]);
                self.b.switch_to_block(fallback);
                let ctx = self.ctx();
                let status = self.iconst(types::I32, i64::from(STATUS_FALLBACK));
                self.b.ins().store(flags(), status, ctx, CTX_STATUS);
                let exit = self.exit_block();
                self.b.ins().jump(exit, &[]);
            }
        }
        Ok(())
    }

    fn block_args(&self, args: &[cel_ir::Value]) -> Result<Vec<BlockArg>, JitError> {
        args.iter()
            .map(|a| Ok(BlockArg::Value(self.v(*a)?)))
            .collect()
    }

    fn constant(&mut self, k: cel_ir::ConstId) -> Result<Value, JitError> {
        let c = self
            .func
            .consts
            .get(k.0 as usize)
            .cloned()
            .ok_or_else(|| JitError::Codegen(format!("no constant {k}")))?;
        Ok(match c {
            Constant::Literal(lit) => literal_value(&lit),
            Constant::Type(name) => type_value_in(&*self.env.provider, &name)
                .ok_or_else(|| JitError::Codegen(format!("unknown type {name}")))?,
            Constant::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.constant(i)?);
                }
                Value::list(out)
            }
            Constant::Folded(id) => {
                let plan = self
                    .plan
                    .subtree(self.checked, self.env, id)
                    .map_err(JitError::Eval)?;
                plan.eval(&cel_runtime::EmptyActivation)
                    .map_err(JitError::Eval)?
            }
        })
    }

    /// Emits one instruction: checks that its expression id fits an inline error, then hands
    /// it to the method for its family. The match names every op, so a new one must be routed.
    fn inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let expr = inst.expr;
        if !(0..=MAX_INLINE_EXPR).contains(&expr) {
            return Err(JitError::Unsupported(format!(
                "expression id {expr} is out of range"
            )));
        }
        match &inst.op {
            Op::IntConst(_)
            | Op::UintConst(_)
            | Op::DoubleConst(_)
            | Op::BoolConst(_)
            | Op::ValConst(_)
            | Op::NoErr => self.constant_inst(inst),
            Op::LoadVar(_) | Op::Box | Op::Unbox(_) | Op::Copy => self.value_inst(inst),
            Op::Select { .. }
            | Op::OptSelect { .. }
            | Op::Has { .. }
            | Op::Index
            | Op::OptIndex => self.access_inst(inst),
            Op::Call { .. } | Op::MatchesConst { .. } | Op::Residual(_) => self.call_inst(inst),
            Op::IntArith(_)
            | Op::UintArith(_)
            | Op::DoubleArith(_)
            | Op::IntNeg
            | Op::DoubleNeg
            | Op::Not
            | Op::BoolAnd => self.arith_inst(inst),
            Op::ScalarCmp(_)
            | Op::DoubleCmp(_)
            | Op::ValEq { .. }
            | Op::ValCmp { .. }
            | Op::InSet(_) => self.compare_inst(inst),
            Op::ConcatCompare { negate, steps } => self.concat_compare(inst, *negate, steps),
            Op::ConcatBuild { steps } => self.concat_build(inst, steps),
            Op::ErrOr
            | Op::IsErr
            | Op::ErrAgain { .. }
            | Op::NoSuchOverload
            | Op::LogicalAnd
            | Op::LogicalOr
            | Op::NotStrictlyFalse => self.error_inst(inst),
            Op::MakeList
            | Op::ListPushOpt
            | Op::MapNew
            | Op::MapEntry { .. }
            | Op::MakeStruct { .. } => self.construct_inst(inst),
            Op::IterLen | Op::IterKey { .. } | Op::IterValue | Op::IndexInc | Op::IndexLt => {
                self.iteration_inst(inst)
            }
            Op::ListAppend | Op::MapInsert | Op::MapMerge | Op::Own => self.accumulator_inst(inst),
            Op::LocalGet(_) | Op::LocalSet(_) | Op::ArenaMark | Op::ArenaRelease { .. } => {
                self.loop_state_inst(inst)
            }
            Op::Charge(_)
            | Op::ChargeRegion(_)
            | Op::ChargeIfOk(_)
            | Op::ChargeQualifier { .. }
            | Op::ChargeUnless(_)
            | Op::ChargeCall { .. } => self.charge_inst(inst),
            Op::OptHasValue | Op::OptValue => self.optional_inst(inst),
        }
    }

    /// Constants: scalars become immediates (remembered for boxing and fast paths), pooled
    /// values are built once and kept by the program.
    fn constant_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let r = &inst.results;
        match &inst.op {
            Op::IntConst(i) => {
                let c = self.iconst(types::I64, *i);
                self.def(r[0], c);
                if self.func.ty(r[0]) == Ty::Int {
                    self.scalar_consts.insert(r[0], Scalar::Int(*i));
                }
            }
            Op::UintConst(u) => {
                let c = self.iconst(types::I64, *u as i64);
                self.def(r[0], c);
                self.scalar_consts.insert(r[0], Scalar::Uint(*u));
            }
            Op::DoubleConst(d) => {
                let c = self.b.ins().f64const(*d);
                self.def(r[0], c);
                self.scalar_consts.insert(r[0], Scalar::Double(*d));
            }
            Op::BoolConst(x) => {
                let c = self.iconst(types::I8, *x as i64);
                self.def(r[0], c);
                self.scalar_consts.insert(r[0], Scalar::Bool(*x));
            }
            Op::ValConst(k) => {
                let v = self.constant(*k)?;
                self.const_sizes
                    .insert(r[0], cel_interp::ops::actual_size(&v));
                if let Value::String(text) = &v {
                    self.const_strings.insert(r[0], text.clone());
                }
                let p = self.keep_value(v);
                let c = self.ptr_const(p);
                self.def(r[0], c);
            }
            Op::NoErr => self.def_no_err(r[0]),
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Variables, boxing and unboxing, and copies: moving a value between its scalar and boxed
    /// forms.
    fn value_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::LoadVar(name) => {
                self.data.names.insert(expr, name.clone());
                if self.lazy_variables {
                    let (v, unbound) = self.resolve_var(name)?;
                    let e = self.err_if(unbound, ERR_NO_SUCH_ATTRIBUTE, expr);
                    self.def(r[0], v);
                    self.def(r[1], e);
                } else {
                    // Resolved and checked at entry (`enter_with_variables`): bound here.
                    let (v, scalar) = *self
                        .vars
                        .get(name)
                        .ok_or_else(|| JitError::Codegen(format!("{name} was not resolved")))?;
                    if let Some(ty) = scalar {
                        self.checked_vals.insert(r[0], ty);
                    }
                    self.def(r[0], v);
                    self.def_no_err(r[1]);
                }
            }
            Op::Box => {
                if let Some(Scalar::Int(_)) = self.scalar_consts.get(&a[0]) {
                    self.boxed_ints.insert(r[0]);
                }
                let p = self.boxed(a[0])?;
                self.def(r[0], p);
            }
            Op::Unbox(ty) if self.checked_vals.get(&a[0]) == Some(ty) => {
                // A variable whose tag entry checked.
                let p = self.v(a[0])?;
                let v = self.load_payload(p, *ty);
                self.def(r[0], v);
                self.def_no_err(r[1]);
            }
            Op::Unbox(ty) => {
                let p = self.v(a[0])?;
                let tag = self.b.ins().load(types::I8, flags(), p, VALUE_TAG);
                let want =
                    scalar_tag(*ty).ok_or_else(|| JitError::Codegen(format!("unbox to {ty}")))?;
                let ok = self.icmp_c(IntCC::Equal, tag, i64::from(want));
                let payload = self.load_payload(p, *ty);
                let zero = match ty {
                    Ty::Double => self.b.ins().f64const(0.0),
                    Ty::Bool => self.iconst(types::I8, 0),
                    _ => self.iconst(types::I64, 0),
                };
                let v = self.b.ins().select(ok, payload, zero);
                let bad = self.icmp_c(IntCC::Equal, ok, 0);
                let e = self.err_if(bad, ERR_NO_SUCH_OVERLOAD, expr);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::Copy => {
                let x = self.v(a[0])?;
                self.def(r[0], x);
                if let Some(s) = self.scalar_consts.get(&a[0]).copied() {
                    self.scalar_consts.insert(r[0], s);
                }
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Field and index steps (`.f`, `.?f`, `has`, `[i]`, `[?i]`), all through shims.
    fn access_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::Select { field, .. } | Op::OptSelect { field } | Op::Has { field, .. } => {
                let hash = MapHasher::hash_key(KeyRef::String(field));
                let site = self.data.keep(FieldSite::new(field.clone(), hash, expr));
                let s = self.ptr_const(site);
                let operand = self.v(a[0])?;
                match &inst.op {
                    Op::Select { object: true, .. } if crate::abi::object_abi().is_some() => {
                        let (v, e) = self.select_object_field(operand, s)?;
                        self.def(r[0], v);
                        self.def(r[1], e);
                    }
                    Op::Select { .. } => {
                        let (v, e) = self.call2(Shim::cel_rt_select, &[operand, s])?;
                        self.def(r[0], v);
                        self.def(r[1], e);
                    }
                    Op::OptSelect { .. } => {
                        let (v, e) = self.call2(Shim::cel_rt_opt_select, &[operand, s])?;
                        self.def(r[0], v);
                        self.def(r[1], e);
                    }
                    Op::Has { object: true, .. } if crate::abi::object_abi().is_some() => {
                        let (v, e) = self.has_object_field(operand, s)?;
                        self.def(r[0], v);
                        self.def(r[1], e);
                    }
                    _ => {
                        let (v, e) = self.call2(Shim::cel_rt_has, &[operand, s])?;
                        let v = self.is_nonzero(v);
                        self.def(r[0], v);
                        self.def(r[1], e);
                    }
                }
            }
            Op::Index | Op::OptIndex => {
                let o = self.v(a[0])?;
                let i = self.v(a[1])?;
                let x = self.iconst(types::I64, expr);
                let shim = if inst.op == Op::Index {
                    Shim::cel_rt_index
                } else {
                    Shim::cel_rt_opt_index
                };
                let (v, e) = self.call2(shim, &[o, i, x])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// The cost rule of the call at `expr` (`function`), whose first argument is a string (a
    /// concatenation's chain so far): hooks scoped to other first arguments are left out.
    fn string_call_rule(&self, expr: ExprId, function: &str) -> cel_interp::CallCost {
        let overload = match self.costs.charge(expr) {
            Charge::Call { overload, .. } => overload,
            _ => "",
        };
        self.env
            .call_cost_rule(overload, function, Some(&cel_types::Type::String))
    }

    /// `p₀ + … + pₙ == other` on strings: one call that compares the pieces where they are
    /// and charges what the `+` calls and the comparison would have (`cel_interp::concat`).
    fn concat_compare(
        &mut self,
        inst: &cel_ir::Inst,
        negate: bool,
        steps: &[ExprId],
    ) -> Result<(), JitError> {
        let function = if negate {
            cel_syntax::operators::NOT_EQUALS
        } else {
            cel_syntax::operators::EQUALS
        };
        let compare = cel_interp::concat::ConcatCompare {
            steps: self.concat_step_rules(steps),
            compare: self.string_call_rule(inst.expr, function),
            negate,
        };
        let site = self.data.keep(ConcatSite {
            compare,
            steps: steps.to_vec(),
        });
        let (v, e) = self.concat_call(inst, Shim::cel_rt_concat_compare, site)?;
        let v = self.is_nonzero(v);
        self.def(inst.results[0], v);
        self.def(inst.results[1], e);
        Ok(())
    }

    /// `p₀ + … + pₙ` on strings, not compared: one call that builds the string once and
    /// charges what the `+` calls would have (`cel_interp::concat`).
    fn concat_build(&mut self, inst: &cel_ir::Inst, steps: &[ExprId]) -> Result<(), JitError> {
        let build = cel_interp::concat::ConcatBuild {
            steps: self.concat_step_rules(steps),
        };
        let site = self.data.keep(ConcatBuildSite {
            build,
            steps: steps.to_vec(),
        });
        let (v, e) = self.concat_call(inst, Shim::cel_rt_concat_build, site)?;
        self.def(inst.results[0], v);
        self.def(inst.results[1], e);
        Ok(())
    }

    /// The cost rules of a chain's `+` calls, innermost first.
    fn concat_step_rules(&self, steps: &[ExprId]) -> Vec<cel_interp::CallCost> {
        steps
            .iter()
            .map(|s| self.string_call_rule(*s, cel_syntax::operators::ADD))
            .collect()
    }

    /// Calls a concatenation shim with its site and the instruction's `(value, err)`
    /// operands in a stack array (each with its size when it is a constant), with the cost
    /// stored before and reloaded and checked after, for the shim adds the calls' costs.
    fn concat_call<T>(
        &mut self,
        inst: &cel_ir::Inst,
        shim: Shim,
        site: *const T,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let s = self.ptr_const(site);
        let size = u32::try_from(inst.args.len() / 2 * 16).unwrap_or(u32::MAX);
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size,
            3,
        ));
        for (i, pair) in inst.args.chunks(2).enumerate() {
            let p = self.v(pair[0])?;
            let e = self.v(pair[1])?;
            let known = self.const_sizes.get(&pair[0]).copied();
            self.store_valerr(slot, i, (p, e), known);
        }
        let pairs = self.b.ins().stack_addr(types::I64, slot, 0);
        let n = self.iconst(types::I64, (inst.args.len() / 2) as i64);
        if self.track_cost {
            self.spill_cost();
        }
        let result = self.call2(shim, &[s, pairs, n])?;
        if self.track_cost {
            self.reload_cost();
            self.check_limit();
        }
        Ok(result)
    }

    /// `operand.field` on a value the checker typed as an object: an object of the layout
    /// the site learned is read in place (its slot, when present, not `null` and not an
    /// invalid-data marker), anything else through `cel_rt_select`, which also teaches the
    /// site its layout on the first read.
    fn select_object_field(
        &mut self,
        operand: cl::Value,
        s: cl::Value,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let shim = (Shim::cel_rt_select, [operand, s]);
        // Absent, `null` (which reads as absent) and invalid-data markers (opaque values) are
        // the shim's: it raises their errors.
        let read = |em: &mut Self, field, absent, opaque| (field, em.b.ins().bor(absent, opaque));
        self.object_field_or_shim(types::I64, shim, read, |_, v| v)
    }

    /// `has(operand.field)` on a value the checker typed as an object: for an object of the
    /// layout the site learned, whether its slot holds a value other than `null`; invalid-data
    /// markers (whose test is an error) and anything else go through `cel_rt_has`.
    fn has_object_field(
        &mut self,
        operand: cl::Value,
        s: cl::Value,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let shim = (Shim::cel_rt_has, [operand, s]);
        let read = |em: &mut Self, _, absent, opaque| (em.bxor_c(absent, 1), opaque);
        self.object_field_or_shim(types::I8, shim, read, |em, v| em.is_nonzero(v))
    }

    /// A read of the site's field of `operand` (the shim's arguments): for an object of the
    /// layout the site learned, `read` gives the result of type `ty` from the slot's address,
    /// whether it is absent (or `null`) and whether it holds an invalid-data marker, and
    /// whether the shim must answer instead; anything else, and those, call the shim, whose
    /// result `adapt` maps. Returns the result and its error handle.
    fn object_field_or_shim(
        &mut self,
        ty: types::Type,
        (shim, args): (Shim, [cl::Value; 2]),
        read: impl FnOnce(&mut Self, cl::Value, cl::Value, cl::Value) -> (cl::Value, cl::Value),
        adapt: impl FnOnce(&mut Self, cl::Value) -> cl::Value,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let slow = self.b.create_block();
        let join = self.b.create_block();
        let jv = self.b.append_block_param(join, ty);
        let je = self.b.append_block_param(join, types::I32);
        let (field, field_tag) = self.object_slot(args[0], args[1], slow)?;
        let absent = self.slot_absent(field_tag)?;
        let opaque = self.icmp_c(IntCC::Equal, field_tag, i64::from(Value::TAG_OPAQUE));
        let (fast, to_shim) = read(self, field, absent, opaque);
        let no_err = self.iconst(types::I32, 0);
        self.b.ins().brif(
            to_shim,
            slow,
            &[],
            join,
            &[BlockArg::Value(fast), BlockArg::Value(no_err)],
        );
        self.b.switch_to_block(slow);
        let (v, e) = self.call2(shim, &args)?;
        let v = adapt(self, v);
        self.b
            .ins()
            .jump(join, &[BlockArg::Value(v), BlockArg::Value(e)]);
        self.b.switch_to_block(join);
        Ok((jv, je))
    }

    /// The slot of the site's field in `operand`, when it is an object of the layout the site
    /// learned: its address and the tag byte there (continuing in a new block); anything else
    /// jumps to `other` (marked cold).
    fn object_slot(
        &mut self,
        operand: cl::Value,
        s: cl::Value,
        other: cl::Block,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let abi = crate::abi::object_abi()
            .ok_or_else(|| JitError::Codegen("objects cannot be read in place".into()))?;
        let object_block = self.b.create_block();
        let hit = self.b.create_block();
        self.b.set_cold_block(other);
        let tag = self.b.ins().load(types::I8, flags(), operand, VALUE_TAG);
        let is_object = self.icmp_c(IntCC::Equal, tag, i64::from(Value::TAG_OBJECT));
        self.b.ins().brif(is_object, object_block, &[], other, &[]);

        self.b.switch_to_block(object_block);
        let arc = self
            .b
            .ins()
            .load(types::I64, flags(), operand, VALUE_SCALAR);
        let object = self.iadd_c(arc, i64::from(abi.arc_data));
        let layout = self.b.ins().load(types::I64, flags(), object, abi.layout);
        // The site's layout word is written once by a shim, possibly on another thread.
        let learned_at = self.iadd_c(s, offset_of!(FieldSite, layout_word) as i64);
        let learned = self
            .b
            .ins()
            .atomic_load(types::I64, MemFlagsData::trusted(), learned_at);
        let same = self.b.ins().icmp(IntCC::Equal, layout, learned);
        self.b.ins().brif(same, hit, &[], other, &[]);

        self.b.switch_to_block(hit);
        let slots = self.b.ins().load(types::I64, flags(), object, abi.slots);
        let offset_at = offset_of!(FieldSite, slot_offset) as i32;
        let offset = self.b.ins().load(types::I64, flags(), s, offset_at);
        let field = self.b.ins().iadd(slots, offset);
        let field_tag = self.b.ins().load(types::I8, flags(), field, VALUE_TAG);
        Ok((field, field_tag))
    }

    /// Whether a slot's tag says it reads as absent: no property, or `null`.
    fn slot_absent(&mut self, field_tag: cl::Value) -> Result<cl::Value, JitError> {
        let abi = crate::abi::object_abi()
            .ok_or_else(|| JitError::Codegen("objects cannot be read in place".into()))?;
        let absent = self.icmp_c(IntCC::Equal, field_tag, i64::from(abi.absent_tag));
        let null = self.icmp_c(IntCC::Equal, field_tag, i64::from(Value::TAG_NULL));
        Ok(self.b.ins().bor(absent, null))
    }

    /// For `'key' in container` where `@in` resolved to the standard library's `in_map`
    /// (and perhaps `in_list`) and to nothing a host defined: the constant key, which
    /// `cel_rt_key_in` looks up in a map itself (the standard library's `in_map` answers, for
    /// a string key, whether the map has it); other containers still go through the call.
    fn constant_key_in(
        &self,
        function: &str,
        ids: &[&str],
        target: &cel_interp::CallTarget,
        args: &[cel_ir::Value],
    ) -> Option<Arc<str>> {
        use cel_types::overloads::{IN_LIST, IN_MAP};
        let [key, _] = args else {
            return None;
        };
        let applies = function == cel_syntax::operators::IN
            && ids.contains(&IN_MAP)
            && ids.iter().all(|o| matches!(*o, IN_LIST | IN_MAP))
            && !target.may_reach_outside();
        self.const_strings.get(key).filter(|_| applies).cloned()
    }

    /// Calls that leave generated code: library functions, constant regexes and residual
    /// subtrees run by the interpreter.
    fn call_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::Call {
                function,
                overloads,
                member,
                dynamic,
            } => {
                let ids: Vec<&str> = overloads.iter().map(|o| &**o).collect();
                let target = self
                    .env
                    .dispatch_checked(&ids, function, *member, a.len(), *dynamic);
                if let Some(key) = self.constant_key_in(function, &ids, &target, a) {
                    let hash = MapHasher::hash_key(KeyRef::String(&key));
                    let site = self.data.keep(KeyInSite {
                        call: CallSite { target, expr },
                        key: Value::String(key),
                        hash,
                        slots: Default::default(),
                    });
                    let s = self.ptr_const(site);
                    let container = self.v(a[1])?;
                    let (v, e) = self.call2(Shim::cel_rt_key_in, &[s, container])?;
                    self.def(r[0], v);
                    self.def(r[1], e);
                    return Ok(());
                }
                let site = self.data.keep(CallSite { target, expr });
                let s = self.ptr_const(site);
                let mut args = Vec::with_capacity(a.len());
                for x in a {
                    args.push(self.v(*x)?);
                }
                self.precharge(function, expr, &args)?;
                if self.func.ty(r[0]) == Ty::Int {
                    // `size`, held as an `int` (see `Op::Call`): nothing boxed.
                    let [arg] = args[..] else {
                        return Err(misrouted(&inst.op));
                    };
                    let (v, e) = self.call2(Shim::cel_rt_call1_int, &[s, arg])?;
                    self.def(r[0], v);
                    self.def(r[1], e);
                    return Ok(());
                }
                let (v, e) = match args.len() {
                    1 => self.call2(Shim::cel_rt_call1, &[s, args[0]])?,
                    2 => self.call2(Shim::cel_rt_call2, &[s, args[0], args[1]])?,
                    3 => self.call2(Shim::cel_rt_call3, &[s, args[0], args[1], args[2]])?,
                    n => {
                        let argv = if n == 0 {
                            self.iconst(types::I64, 0)
                        } else {
                            self.stack_array(&args)
                        };
                        let n = self.iconst(types::I64, n as i64);
                        self.call2(Shim::cel_rt_calln, &[s, argv, n])?
                    }
                };
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::MatchesConst { pattern } => {
                let regex = match self.plan.constant_regex(expr) {
                    Some(compiled) => compiled,
                    // Not planned as a constant pattern (the interpreter dispatches this
                    // call otherwise): compiled here, within the program's own allowance.
                    None => self.data.patterns.compile(pattern).map_err(|e| e.at(expr)),
                };
                let site = self.data.keep(RegexSite { regex, expr });
                let s = self.ptr_const(site);
                let subject = self.v(a[0])?;
                let (v, e) = self.call2(Shim::cel_rt_matches, &[subject, s])?;
                let v = self.is_nonzero(v);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::Residual(id) => {
                let plan = self
                    .plan
                    .subtree(self.checked, self.env, *id)
                    .map_err(JitError::Eval)?;
                let site = self.data.keep(ResidualSite { plan });
                let s = self.ptr_const(site);
                self.spill_cost();
                let (v, e) = self.call2(Shim::cel_rt_residual, &[s])?;
                self.reload_cost();
                self.check_limit();
                self.def(r[0], v);
                self.def(r[1], e);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Scalar arithmetic and negation, with CEL's overflow and division checks inline.
    fn arith_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::IntArith(op) => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let (v, e) = self.int_arith(*op, x, y, expr);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::UintArith(op) => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let (v, e) = self.uint_arith(*op, x, y, expr);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::DoubleArith(op) => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let v = match op {
                    ArithOp::Add => self.b.ins().fadd(x, y),
                    ArithOp::Sub => self.b.ins().fsub(x, y),
                    ArithOp::Mul => self.b.ins().fmul(x, y),
                    ArithOp::Div => self.b.ins().fdiv(x, y),
                    ArithOp::Rem => {
                        return Err(JitError::Codegen("no double remainder in CEL".into()));
                    }
                };
                self.def(r[0], v);
            }
            Op::IntNeg => {
                let x = self.v(a[0])?;
                let min = self.icmp_c(IntCC::Equal, x, i64::MIN);
                let v = self.b.ins().ineg(x);
                let e = self.err_if(min, ERR_INT_OVERFLOW, expr);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::DoubleNeg => {
                let x = self.v(a[0])?;
                let v = self.b.ins().fneg(x);
                self.def(r[0], v);
            }
            Op::Not => {
                let x = self.v(a[0])?;
                let v = self.bxor_c(x, 1);
                self.def(r[0], v);
            }
            Op::BoolAnd => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let v = self.b.ins().band(x, y);
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Comparisons and equality, inline for scalars and `int` operands, else through shims; and
    /// `in` a constant set.
    fn compare_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::ScalarCmp(op) => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let v = match self.func.ty(a[0]) {
                    Ty::Double => self.b.ins().fcmp(float_cc(*op), x, y),
                    Ty::Int => self.b.ins().icmp(int_cc(*op, true), x, y),
                    _ => self.b.ins().icmp(int_cc(*op, false), x, y),
                };
                self.def(r[0], v);
            }
            Op::DoubleCmp(op) => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let nan = self.b.ins().fcmp(FloatCC::Unordered, x, y);
                let v = self.b.ins().fcmp(float_cc(*op), x, y);
                let e = self.err_if(nan, ERR_NAN, expr);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::ValEq { negate } => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let with_int_const = a.iter().any(|v| self.is_int_const(*v));
                let text_const = match (self.const_strings.get(&a[0]), &a[1]) {
                    (Some(text), _) => Some((text.len(), y)),
                    (None, b) => self.const_strings.get(b).map(|text| (text.len(), x)),
                };
                let eq = if with_int_const {
                    self.int_fast_path(x, y, IntCC::Equal, |em| {
                        let r = em.call(Shim::cel_rt_val_eq, &[x, y])?;
                        Ok(em.is_nonzero(r))
                    })?
                    .0
                } else if let (Some((len, other)), Some(len_at)) =
                    (text_const, crate::abi::text_len_offset())
                {
                    self.unequal_if_longer_or_shorter(other, len, len_at, |em| {
                        let r = em.call(Shim::cel_rt_val_eq, &[x, y])?;
                        Ok(em.is_nonzero(r))
                    })?
                } else {
                    let r = self.call(Shim::cel_rt_val_eq, &[x, y])?;
                    self.is_nonzero(r)
                };
                let v = if *negate { self.bxor_c(eq, 1) } else { eq };
                self.def(r[0], v);
            }
            Op::ValCmp {
                op,
                function,
                overloads,
                dynamic,
            } => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                // The interpreter's own dispatch, for values that are not two `int`s.
                let ids: Vec<&str> = overloads.iter().map(|o| &**o).collect();
                let target = self
                    .env
                    .dispatch_checked(&ids, function, false, 2, *dynamic);
                let site = self.data.keep(CallSite { target, expr });
                let s = self.ptr_const(site);
                let (v, e) = self.int_fast_path_err(x, y, int_cc(*op, true), |em| {
                    let (v, e) = em.call2(Shim::cel_rt_val_cmp, &[s, x, y])?;
                    let v = em.is_nonzero(v);
                    Ok((v, e))
                })?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::InSet(ks) => {
                let mut set = Vec::with_capacity(ks.len());
                for k in ks {
                    set.push(self.constant(*k)?);
                }
                let site = self.data.keep(SetSite { set });
                let s = self.ptr_const(site);
                let x = self.v(a[0])?;
                let v = self.call(Shim::cel_rt_in_set, &[x, s])?;
                let v = self.is_nonzero(v);
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Error handles, and the operators that absorb errors (`&&`, `||`, `@not_strictly_false`).
    fn error_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            // Handles known to be "no error" fold here rather than in Cranelift: fewer
            // instructions, and branches on them become jumps.
            Op::ErrOr if self.no_errs.contains(&a[0]) && self.no_errs.contains(&a[1]) => {
                self.def_no_err(r[0]);
            }
            Op::ErrOr if self.no_errs.contains(&a[0]) => {
                let y = self.v(a[1])?;
                self.def(r[0], y);
            }
            Op::ErrOr if self.no_errs.contains(&a[1]) => {
                let x = self.v(a[0])?;
                self.def(r[0], x);
            }
            // An operand that is never an error leaves the other: no instruction.
            Op::ErrOr if self.no_errs.contains(&a[0]) => {
                let y = self.v(a[1])?;
                self.def(r[0], y);
                if self.no_errs.contains(&a[1]) {
                    self.no_errs.insert(r[0]);
                }
            }
            Op::ErrOr if self.no_errs.contains(&a[1]) => {
                let x = self.v(a[0])?;
                self.def(r[0], x);
            }
            Op::ErrOr => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let is = self.icmp_c(IntCC::NotEqual, x, 0);
                let v = self.b.ins().select(is, x, y);
                self.def(r[0], v);
            }
            Op::IsErr if self.no_errs.contains(&a[0]) => {
                let c = self.iconst(types::I8, 0);
                self.def(r[0], c);
                self.scalar_consts.insert(r[0], Scalar::Bool(false));
            }
            Op::IsErr => {
                let x = self.v(a[0])?;
                let v = self.icmp_c(IntCC::NotEqual, x, 0);
                self.def(r[0], v);
            }
            Op::NoSuchOverload => {
                let h = self.iconst(types::I32, inline_error(ERR_NO_SUCH_OVERLOAD, expr));
                self.def(r[0], h);
            }
            Op::ErrAgain { .. } if self.no_errs.contains(&a[0]) => self.def_no_err(r[0]),
            Op::ErrAgain { from } => {
                let h = self.v(a[0])?;
                let h = self.err_again(h, *from, expr)?;
                self.def(r[0], h);
            }
            Op::LogicalAnd | Op::LogicalOr => {
                let l = self.v(a[0])?;
                let le = self.v(a[1])?;
                let rv = self.v(a[2])?;
                let re = self.v(a[3])?;
                let is_and = inst.op == Op::LogicalAnd;
                // The right side decides alone when it is a plain `false` (for `&&`) or
                // `true` (for `||`); with both sides plain, the left side (which did not
                // short-circuit) is the other value, so the right side is the result.
                let r_ok = self.icmp_c(IntCC::Equal, re, 0);
                let l_ok = self.icmp_c(IntCC::Equal, le, 0);
                let decisive = if is_and { self.bxor_c(rv, 1) } else { rv };
                let r_decides = self.b.ins().band(r_ok, decisive);
                let both_ok = self.b.ins().band(r_ok, l_ok);
                let clean = self.b.ins().bor(r_decides, both_ok);
                let v = if is_and {
                    self.b.ins().band(both_ok, rv)
                } else {
                    r_decides
                };
                let _ = l;
                let le_set = self.icmp_c(IntCC::NotEqual, le, 0);
                let first = self.b.ins().select(le_set, le, re);
                let none = self.iconst(types::I32, 0);
                let e = self.b.ins().select(clean, none, first);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::NotStrictlyFalse => {
                let x = self.v(a[0])?;
                let e = self.v(a[1])?;
                let ok = self.icmp_c(IntCC::Equal, e, 0);
                let is_false = match self.func.ty(a[0]) {
                    Ty::Bool => self.icmp_c(IntCC::Equal, x, 0),
                    Ty::Val => {
                        let tag = self.b.ins().load(types::I8, flags(), x, VALUE_TAG);
                        let is_bool =
                            self.b
                                .ins()
                                .icmp_imm_s(IntCC::Equal, tag, Value::TAG_BOOL as i64);
                        let payload = self.b.ins().load(types::I8, flags(), x, VALUE_BOOL);
                        let zero = self.icmp_c(IntCC::Equal, payload, 0);
                        self.b.ins().band(is_bool, zero)
                    }
                    // Any other scalar is not a bool, so not `false`.
                    _ => self.iconst(types::I8, 0),
                };
                let strictly_false = self.b.ins().band(ok, is_false);
                let v = self.bxor_c(strictly_false, 1);
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Literal lists, maps and messages: made new, then filled in place.
    fn construct_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::MakeList => {
                let (argv, n) = self.value_array(a)?;
                let v = self.call(Shim::cel_rt_make_list, &[argv, n])?;
                self.def(r[0], v);
            }
            Op::ListPushOpt => {
                let l = self.v(a[0])?;
                let x = self.v(a[1])?;
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_list_push_opt, &[l, x, id])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::MapNew => {
                let v = self.call(Shim::cel_rt_map_new, &[])?;
                self.def(r[0], v);
            }
            Op::MapEntry { optional } => {
                let m = self.v(a[0])?;
                let k = self.v(a[1])?;
                let x = self.v(a[2])?;
                let o = self.iconst(types::I64, *optional as i64);
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_map_entry, &[m, k, x, o, id])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::MakeStruct { type_name, fields } => {
                let message = self.env.message_descriptor(type_name);
                let site = self.data.keep(StructSite {
                    type_name: type_name.clone(),
                    message,
                    builds_map: self.env.builds_map(type_name),
                    fields: fields.clone(),
                    expr,
                });
                let s = self.ptr_const(site);
                let (argv, n) = self.value_array(a)?;
                let (v, e) = self.call2(Shim::cel_rt_make_struct, &[s, argv, n])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// A comprehension's walk over its range: its length, the variables of step `i`, and the
    /// counter.
    fn iteration_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::IterLen => {
                let range = self.v(a[0])?;
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_iter_len, &[range, id])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::IterKey { two_var } => {
                let range = self.v(a[0])?;
                let i = self.v(a[1])?;
                let two = self.iconst(types::I64, *two_var as i64);
                let v = self.call(Shim::cel_rt_iter_key, &[range, i, two])?;
                self.def(r[0], v);
            }
            Op::IterValue => {
                let range = self.v(a[0])?;
                let i = self.v(a[1])?;
                let v = self.call(Shim::cel_rt_iter_value, &[range, i])?;
                self.def(r[0], v);
            }
            Op::IndexInc => {
                let x = self.v(a[0])?;
                let v = self.iadd_c(x, 1);
                self.def(r[0], v);
            }
            Op::IndexLt => {
                let x = self.v(a[0])?;
                let y = self.v(a[1])?;
                let v = self.b.ins().icmp(IntCC::SignedLessThan, x, y);
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Accumulator updates in place (on values the lowering owns), and giving an initial
    /// value storage of its own.
    fn accumulator_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::ListAppend => {
                let l = self.v(a[0])?;
                let x = self.v(a[1])?;
                let v = self.call(Shim::cel_rt_list_append, &[l, x])?;
                self.def(r[0], v);
            }
            Op::MapInsert => {
                let m = self.v(a[0])?;
                let k = self.v(a[1])?;
                let x = self.v(a[2])?;
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_map_insert, &[m, k, x, id])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::MapMerge => {
                let m = self.v(a[0])?;
                let x = self.v(a[1])?;
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_map_merge, &[m, x, id])?;
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::Own => {
                let x = self.v(a[0])?;
                let v = self.call(Shim::cel_rt_own, &[x])?;
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Local slots, and the arena mark and release that free a loop's temporaries with each
    /// iteration.
    fn loop_state_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        match &inst.op {
            Op::LocalGet(slot) => {
                let var = self.local(*slot)?;
                let v = self.b.use_var(var);
                self.def(r[0], v);
            }
            Op::LocalSet(slot) => {
                let var = self.local(*slot)?;
                let x = self.v(a[0])?;
                self.b.def_var(var, x);
            }
            Op::ArenaMark => {
                let m = self.call(Shim::cel_rt_iteration_mark, &[])?;
                self.def(r[0], m);
                // What was made so far: the baseline the back edges compare with.
                let made = self.load_made();
                let baseline = self.b.declare_var(types::I64);
                self.b.def_var(baseline, made);
                self.made_baselines.insert(r[0], baseline);
            }
            Op::ArenaRelease { vals, errs } => self.release_iteration(a[0], vals, errs)?,
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Cost charges: constants add to the running cost, the rest depend on values computed
    /// here.
    fn charge_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        match &inst.op {
            Op::Charge(n) => self.add_cost_imm(*n),
            Op::ChargeRegion(ns) => {
                let total = ns.iter().fold(0u64, |t, n| t.saturating_add(*n));
                self.add_cost_imm(total);
            }
            Op::ChargeIfOk(n) if self.no_errs.contains(&a[0]) => self.add_cost_imm(*n),
            Op::ChargeIfOk(n) => {
                if self.track_cost {
                    let e = self.v(a[0])?;
                    let ok = self.icmp_c(IntCC::Equal, e, 0);
                    let one = self.b.ins().uextend(types::I64, ok);
                    let n = i64::try_from(*n).unwrap_or(i64::MAX).min(1 << 62);
                    let add = if n == 1 { one } else { self.imul_c(one, n) };
                    self.add_cost(add);
                }
            }
            Op::ChargeQualifier { cost, optional } => {
                if self.track_cost {
                    self.charge_qualifier(*cost, *optional, a)?;
                }
            }
            Op::ChargeUnless(n) => {
                let done = self.v(a[0])?;
                let n = i64::try_from(*n).unwrap_or(i64::MAX).min(1 << 62);
                let amount = self.iconst(types::I64, n);
                let zero = self.iconst(types::I64, 0);
                let add = self.b.ins().select(done, zero, amount);
                self.add_cost(add);
            }
            Op::ChargeCall { .. } if !self.track_cost => {}
            Op::ChargeCall {
                function,
                overload,
                first_arg,
                appends,
            } => {
                let first_type = first_arg.map(|id| self.checked.type_of(id));
                let rule = self.env.call_cost_rule(overload, function, first_type);
                self.charge_call(rule, a, *appends)?;
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// Optional values: whether one is present, and its content.
    fn optional_inst(&mut self, inst: &cel_ir::Inst) -> Result<(), JitError> {
        let a = &inst.args;
        let r = &inst.results;
        let expr = inst.expr;
        match &inst.op {
            Op::OptHasValue => {
                let x = self.v(a[0])?;
                let id = self.iconst(types::I64, expr);
                let (v, e) = self.call2(Shim::cel_rt_opt_has_value, &[x, id])?;
                let v = self.is_nonzero(v);
                self.def(r[0], v);
                self.def(r[1], e);
            }
            Op::OptValue => {
                let x = self.v(a[0])?;
                let v = self.call(Shim::cel_rt_opt_value, &[x])?;
                self.def(r[0], v);
            }
            other => return Err(misrouted(other)),
        }
        Ok(())
    }

    /// [`Op::ChargeCall`]: a constant where the rule allows, else the formula over sizes known
    /// here or measured inline, else a helper that runs the hooks. Hooks that apply only to
    /// opaque values are decided by the first argument: left out for a scalar, and behind a
    /// tag test for a value of dynamic type (`dyn == 'x'` in Kubernetes pays no hook).
    /// `appends`: the call is a comprehension's `acc + [x]` (see [`Op::ChargeCall`]).
    fn charge_call(
        &mut self,
        rule: cel_interp::CallCost,
        a: &[cel_ir::Value],
        appends: bool,
    ) -> Result<(), JitError> {
        if !rule.hooks_need_opaque_first_argument() {
            return self.charge_call_by_rule(rule, a, appends);
        }
        if self.func.ty(a[0]) != Ty::Val {
            return self.charge_call_by_rule(rule.without_hooks(), a, appends);
        }
        let value = self.v(a[0])?;
        let err = self.v(a[1])?;
        let tag = self.b.ins().load(types::I8, flags(), value, VALUE_TAG);
        let opaque = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tag, i64::from(Value::TAG_OPAQUE));
        let resolved = self.icmp_c(IntCC::Equal, err, 0);
        let hooked = self.b.ins().band(opaque, resolved);
        let with_hooks = self.b.create_block();
        let without = self.b.create_block();
        let join = self.b.create_block();
        self.b.set_cold_block(with_hooks);
        self.b.ins().brif(hooked, with_hooks, &[], without, &[]);
        self.b.switch_to_block(without);
        self.charge_call_by_rule(rule.without_hooks(), a, appends)?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(with_hooks);
        self.charge_call_by_rule(rule, a, appends)?;
        self.b.ins().jump(join, &[]);
        self.b.switch_to_block(join);
        Ok(())
    }

    /// Charges a call by `rule` as it stands (see [`Emitter::charge_call`]).
    fn charge_call_by_rule(
        &mut self,
        rule: cel_interp::CallCost,
        a: &[cel_ir::Value],
        appends: bool,
    ) -> Result<(), JitError> {
        if let Some(fixed) = rule.fixed() {
            self.add_cost_imm(fixed);
        } else if !rule.has_hooks() && (a.len() == 4 || a.len() == 6) {
            self.charge_by_formula(rule, &a[..a.len() - 2])?;
        } else {
            let hooks = rule.has_hooks();
            let size = u32::try_from(a.len() / 2 * 16).unwrap_or(u32::MAX);
            let slot = self.b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                size,
                3,
            ));
            for (i, pair) in a.chunks(2).enumerate() {
                // Without a hook only sizes matter: a scalar's is 1 and a constant's is
                // known, so neither is boxed nor measured.
                let scalar = self.func.ty(pair[0]) != Ty::Val;
                let known = if scalar {
                    Some(1)
                } else {
                    self.const_sizes.get(&pair[0]).copied()
                };
                let p = if !hooks && scalar {
                    self.ptr_const(&NULL_VALUE as *const Value)
                } else if hooks && appends && i == 1 {
                    // The hook sees the appended list `[x]`, made for it.
                    let element = self.boxed(pair[0])?;
                    self.call(Shim::cel_rt_list_of_one, &[element])?
                } else {
                    self.boxed(pair[0])?
                };
                let e = self.v(pair[1])?;
                self.store_valerr(slot, i, (p, e), known);
            }
            let site = self.data.keep(CostSite { cost: rule });
            let s = self.ptr_const(site);
            let pairs = self.b.ins().stack_addr(types::I64, slot, 0);
            let n = self.iconst(types::I64, (a.len() / 2) as i64);
            let c = self.call(Shim::cel_rt_charge_call, &[s, pairs, n])?;
            self.add_cost(c);
            self.check_limit();
        }
        Ok(())
    }

    /// Writes entry `i` of an array of `ValErr`s in `slot`: a value's address, its error
    /// handle, and its size when known (a constant's, a scalar's), which the shim then does
    /// not measure.
    fn store_valerr(
        &mut self,
        slot: StackSlot,
        i: usize,
        (value, err): (cl::Value, cl::Value),
        known: Option<u64>,
    ) {
        // The size plus one; 0 says "measure the value".
        let known = known
            .and_then(|k| u32::try_from(k.saturating_add(1)).ok())
            .unwrap_or(0);
        let known = self.iconst(types::I32, i64::from(known));
        let base = (i * 16) as i32;
        // The first argument of `stack_store` is the type of the slot's address.
        let ins = |b: &mut FunctionBuilder<'_>, x, at| {
            b.ins().stack_store(types::I64, x, slot, base + at);
        };
        ins(&mut self.b, value, VALERR_VALUE);
        ins(&mut self.b, err, VALERR_ERR);
        ins(&mut self.b, known, VALERR_KNOWN_SIZE);
    }

    /// Charges a call of one or two arguments whose cost is a built-in formula of their
    /// sizes (`args` are `(value, err)` pairs). Sizes known at compile time (scalars,
    /// constants) are not measured; a string equality with a short constant costs 1 unless
    /// the other side is empty, which needs no measuring either.
    fn charge_by_formula(
        &mut self,
        rule: cel_interp::CallCost,
        args: &[cel_ir::Value],
    ) -> Result<(), JitError> {
        use cel_cost::CostFormula;
        let formula = rule.formula();
        // A scalar's size is 1, and so is a failed argument's (it counts as null), so a
        // scalar's size is known whether or not it failed; a constant's only if it did not.
        let known: Vec<Option<u64>> = args
            .chunks(2)
            .map(|p| {
                if self.func.ty(p[0]) != Ty::Val {
                    Some(1)
                } else if self.no_errs.contains(&p[1]) {
                    self.const_sizes.get(&p[0]).copied()
                } else {
                    None
                }
            })
            .collect();
        // Everything known: the cost is a constant.
        if known.iter().all(|k| k.is_some()) {
            let sizes: Vec<u64> = known.iter().map(|k| k.unwrap_or(1)).collect();
            let c = formula.eval(|i| sizes.get(i).copied().unwrap_or(1));
            self.add_cost_imm(c);
            return Ok(());
        }
        if formula == CostFormula::TraversalMin
            && let [Some(k), None] | [None, Some(k)] = known.as_slice()
            && *k <= 10
        {
            // ⌈0.1 × min(k, s)⌉ with 1 ≤ k ≤ 10 is 1 unless s is 0 (0 when k is 0).
            let other = if known[0].is_none() { 0 } else { 2 };
            if *k > 0 && self.func.ty(args[other]) != Ty::Val {
                // A scalar (known or not to have failed) has size 1.
                self.add_cost_imm(1);
            } else if *k > 0 {
                // Size 1 is not empty, nor is a string or bytes of some length (`dyn == 'x'`
                // in a loop, tested here rather than by a call); anything else is asked.
                let (p, tag, size_one) = self.size_is_one(&args[other..other + 2])?;
                let not_empty = match crate::abi::text_len_offset() {
                    Some(len_at) => {
                        let text = self.text_not_empty(p, tag, len_at);
                        self.b.ins().bor(size_one, text)
                    }
                    None => size_one,
                };
                let c =
                    self.unless_size_one(not_empty, 1, |em| em.call(Shim::cel_rt_nonempty, &[p]))?;
                self.add_cost(c);
            }
            return Ok(());
        }
        // Unknown sizes are measured by a helper, unless each is a scalar's (or a failed
        // argument's), whose size is 1: then the cost is the formula's over those, here.
        let small_sizes: Vec<u64> = known.iter().map(|k| k.unwrap_or(1)).collect();
        let small_cost = formula.eval(|i| small_sizes.get(i).copied().unwrap_or(1));
        let unknown: Vec<usize> = (0..known.len()).filter(|&i| known[i].is_none()).collect();
        // With one size unknown, a string or bytes no longer (in bytes, so in code points)
        // than the sizes the formula charges as it charges 1 costs the same, unmeasured.
        let short_text = match unknown.as_slice() {
            [i] => same_cost_up_to(formula, &small_sizes, *i).zip(crate::abi::text_len_offset()),
            _ => None,
        };
        let mut all_one: Option<cl::Value> = None;
        for i in unknown {
            let pair = &args[2 * i..2 * i + 2];
            let (p, tag, mut one) = self.size_is_one(pair)?;
            if let Some((bound, len_at)) = short_text {
                let short = self.text_no_longer_than(p, tag, bound, len_at);
                one = self.b.ins().bor(one, short);
            }
            all_one = Some(match all_one {
                Some(all) => self.b.ins().band(all, one),
                None => one,
            });
        }
        let all_one = all_one.ok_or_else(|| JitError::Codegen("no size to measure".into()))?;
        let c = self.unless_size_one(all_one, small_cost, |em| {
            em.charge2_by_helper(rule, args, &known)
        })?;
        self.add_cost(c);
        self.check_limit();
        Ok(())
    }

    /// Whether `p`, whose tag is `tag`, is a string or bytes of at most `bound` bytes (the
    /// length read at `len_at`, as `abi::text_len_offset` measured).
    fn text_no_longer_than(
        &mut self,
        p: cl::Value,
        tag: cl::Value,
        bound: u64,
        len_at: i32,
    ) -> cl::Value {
        let text = self.is_text(tag);
        let len = self.b.ins().load(types::I64, flags(), p, len_at);
        let bound = i64::try_from(bound).unwrap_or(i64::MAX);
        let short = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, len, bound);
        self.b.ins().band(text, short)
    }

    /// `==` with a constant string of `len` bytes: a string `p` of another length is unequal
    /// without a call (its length read at `len_at`, as `abi::text_len_offset` measured);
    /// anything else asks `equal`.
    fn unequal_if_longer_or_shorter(
        &mut self,
        p: cl::Value,
        len: usize,
        len_at: i32,
        equal: impl FnOnce(&mut Self) -> Result<cl::Value, JitError>,
    ) -> Result<cl::Value, JitError> {
        let tag = self.b.ins().load(types::I8, flags(), p, VALUE_TAG);
        let string = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tag, i64::from(Value::TAG_STRING));
        let p_len = self.b.ins().load(types::I64, flags(), p, len_at);
        let len = i64::try_from(len).unwrap_or(i64::MAX);
        let other_len = self.b.ins().icmp_imm_u(IntCC::NotEqual, p_len, len);
        let unequal = self.b.ins().band(string, other_len);
        self.constant_if(unequal, types::I8, 0, equal)
    }

    /// Whether a value's tag is a string's or a bytes'.
    fn is_text(&mut self, tag: cl::Value) -> cl::Value {
        let string = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tag, i64::from(Value::TAG_STRING));
        let bytes = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tag, i64::from(Value::TAG_BYTES));
        self.b.ins().bor(string, bytes)
    }

    /// Whether a value (`p`, of tag `tag`) is a string or bytes of at least one byte, whose
    /// cost-model size (code points or bytes) is then not 0.
    fn text_not_empty(&mut self, p: cl::Value, tag: cl::Value, len_at: i32) -> cl::Value {
        let text = self.is_text(tag);
        let len = self.b.ins().load(types::I64, flags(), p, len_at);
        let not_empty = self.b.ins().icmp_imm_u(IntCC::NotEqual, len, 0);
        self.b.ins().band(text, not_empty)
    }

    /// A `(value, err)` pair's value, its tag, and whether its cost-model size is 1 for
    /// certain: it failed (and counts as null) or its tag is a scalar's (null, bool, int,
    /// uint, double).
    fn size_is_one(
        &mut self,
        pair: &[cel_ir::Value],
    ) -> Result<(cl::Value, cl::Value, cl::Value), JitError> {
        let p = self.v(pair[0])?;
        let e = self.v(pair[1])?;
        let tag = self.b.ins().load(types::I8, flags(), p, VALUE_TAG);
        let scalar = self.b.ins().icmp_imm_u(
            IntCC::UnsignedLessThanOrEqual,
            tag,
            i64::from(Value::TAG_DOUBLE),
        );
        let failed = self.icmp_c(IntCC::NotEqual, e, 0);
        Ok((p, tag, self.b.ins().bor(scalar, failed)))
    }

    /// `constant` when `size_one` holds, else what `measure` computes (an `i64`).
    fn unless_size_one(
        &mut self,
        size_one: cl::Value,
        constant: u64,
        measure: impl FnOnce(&mut Self) -> Result<cl::Value, JitError>,
    ) -> Result<cl::Value, JitError> {
        let constant = i64::try_from(constant).unwrap_or(i64::MAX).min(1 << 62);
        self.constant_if(size_one, types::I64, constant, measure)
    }

    /// `constant` (of type `ty`) when `cond` holds, else what `otherwise` computes in a
    /// block of its own.
    fn constant_if(
        &mut self,
        cond: cl::Value,
        ty: types::Type,
        constant: i64,
        otherwise: impl FnOnce(&mut Self) -> Result<cl::Value, JitError>,
    ) -> Result<cl::Value, JitError> {
        let other = self.b.create_block();
        let join = self.b.create_block();
        let result = self.b.append_block_param(join, ty);
        let constant = self.iconst(ty, constant);
        self.b
            .ins()
            .brif(cond, join, &[BlockArg::Value(constant)], other, &[]);
        self.b.switch_to_block(other);
        let v = otherwise(self)?;
        self.b.ins().jump(join, &[BlockArg::Value(v)]);
        self.b.switch_to_block(join);
        Ok(result)
    }

    /// The cost of a call charged by `rule`'s formula over its arguments' sizes, those not
    /// `known` measured by `cel_rt_charge2`.
    fn charge2_by_helper(
        &mut self,
        rule: cel_interp::CallCost,
        args: &[cel_ir::Value],
        known: &[Option<u64>],
    ) -> Result<cl::Value, JitError> {
        let mut regs = Vec::with_capacity(4);
        for (pair, known) in args.chunks(2).zip(known) {
            // The helper measures a value when given 0, else takes the size plus one.
            let (p, k) = match known {
                Some(k) if self.func.ty(pair[0]) != Ty::Val => {
                    (self.ptr_const(&NULL_VALUE as *const Value), *k)
                }
                Some(k) => (self.v(pair[0])?, *k),
                None => {
                    let p = self.v(pair[0])?;
                    // A failed argument counts as null, whose size is 1.
                    let e = self.v(pair[1])?;
                    let failed = self.icmp_c(IntCC::NotEqual, e, 0);
                    let two = self.iconst(types::I64, 2);
                    let zero = self.iconst(types::I64, 0);
                    regs.push(p);
                    regs.push(self.b.ins().select(failed, two, zero));
                    continue;
                }
            };
            let k = i64::try_from(k.saturating_add(1)).unwrap_or(0);
            regs.push(p);
            regs.push(self.iconst(types::I64, k));
        }
        if regs.len() == 2 {
            let p = regs[0];
            let two = self.iconst(types::I64, 2);
            regs.push(p);
            regs.push(two);
        }
        let site = self.data.keep(CostSite { cost: rule });
        let s = self.ptr_const(site);
        self.call(
            Shim::cel_rt_charge2,
            &[s, regs[0], regs[1], regs[2], regs[3]],
        )
    }

    fn local(&self, slot: u32) -> Result<Variable, JitError> {
        self.locals
            .get(slot as usize)
            .copied()
            .ok_or_else(|| JitError::Codegen(format!("no local l{slot}")))
    }

    fn is_int_const(&self, v: cel_ir::Value) -> bool {
        self.boxed_ints.contains(&v)
    }

    /// Compares two values with `cc` inline when both are `int`s, else with `slow`.
    fn int_fast_path(
        &mut self,
        x: cl::Value,
        y: cl::Value,
        cc: IntCC,
        slow: impl FnOnce(&mut Self) -> Result<cl::Value, JitError>,
    ) -> Result<(cl::Value, ()), JitError> {
        let (v, _) = self.int_fast_path_err(x, y, cc, |em| {
            let v = slow(em)?;
            let none = em.iconst(types::I32, 0);
            Ok((v, none))
        })?;
        Ok((v, ()))
    }

    /// [`Op::ChargeQualifier`]: an optional step asks `ops::qualifier_charged`; a plain
    /// step charges when its operand resolved, and asks only when the operand is an optional
    /// value (its tag says so), which is rare.
    fn charge_qualifier(
        &mut self,
        n: u64,
        optional: bool,
        a: &[cel_ir::Value],
    ) -> Result<(), JitError> {
        let operand = self.v(a[0])?;
        let operand_err = self.v(a[1])?;
        let result = self.v(a[2])?;
        let result_err = self.v(a[3])?;
        let ask = |this: &mut Self| -> Result<cl::Value, JitError> {
            let opt = this.iconst(types::I64, i64::from(optional));
            this.call(
                Shim::cel_rt_qualifier_charged,
                &[operand, operand_err, result, result_err, opt],
            )
        };
        let charged = if optional {
            ask(self)?
        } else {
            let tag = self.b.ins().load(types::I8, flags(), operand, VALUE_TAG);
            let is_opt = self
                .b
                .ins()
                .icmp_imm_s(IntCC::Equal, tag, Value::TAG_OPTIONAL as i64);
            let slow = self.b.create_block();
            let fast = self.b.create_block();
            let join = self.b.create_block();
            let jv = self.b.append_block_param(join, types::I64);
            self.b.set_cold_block(slow);
            self.b.ins().brif(is_opt, slow, &[], fast, &[]);
            self.b.switch_to_block(fast);
            let ok = self.icmp_c(IntCC::Equal, operand_err, 0);
            let ok = self.b.ins().uextend(types::I64, ok);
            self.b.ins().jump(join, &[BlockArg::Value(ok)]);
            self.b.switch_to_block(slow);
            let r = ask(self)?;
            self.b.ins().jump(join, &[BlockArg::Value(r)]);
            self.b.switch_to_block(join);
            jv
        };
        let n = i64::try_from(n).unwrap_or(i64::MAX).min(1 << 62);
        let add = if n == 1 {
            charged
        } else {
            self.imul_c(charged, n)
        };
        self.add_cost(add);
        Ok(())
    }

    /// As [`Self::int_fast_path`], for a fallible slow path: `(bool, err)`.
    fn int_fast_path_err(
        &mut self,
        x: cl::Value,
        y: cl::Value,
        cc: IntCC,
        slow: impl FnOnce(&mut Self) -> Result<(cl::Value, cl::Value), JitError>,
    ) -> Result<(cl::Value, cl::Value), JitError> {
        let tx = self.b.ins().load(types::I8, flags(), x, VALUE_TAG);
        let ty = self.b.ins().load(types::I8, flags(), y, VALUE_TAG);
        let ix = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, tx, Value::TAG_INT as i64);
        let iy = self
            .b
            .ins()
            .icmp_imm_s(IntCC::Equal, ty, Value::TAG_INT as i64);
        let both = self.b.ins().band(ix, iy);
        let fast = self.b.create_block();
        let slow_b = self.b.create_block();
        let join = self.b.create_block();
        let jv = self.b.append_block_param(join, types::I8);
        let je = self.b.append_block_param(join, types::I32);
        self.b.set_cold_block(slow_b);
        self.b.ins().brif(both, fast, &[], slow_b, &[]);
        self.b.switch_to_block(fast);
        let px = self.b.ins().load(types::I64, flags(), x, VALUE_SCALAR);
        let py = self.b.ins().load(types::I64, flags(), y, VALUE_SCALAR);
        let v = self.b.ins().icmp(cc, px, py);
        let none = self.iconst(types::I32, 0);
        self.b
            .ins()
            .jump(join, &[BlockArg::Value(v), BlockArg::Value(none)]);
        self.b.switch_to_block(slow_b);
        let (sv, se) = slow(self)?;
        self.b
            .ins()
            .jump(join, &[BlockArg::Value(sv), BlockArg::Value(se)]);
        self.b.switch_to_block(join);
        Ok((jv, je))
    }

    fn int_arith(
        &mut self,
        op: ArithOp,
        x: cl::Value,
        y: cl::Value,
        expr: ExprId,
    ) -> (cl::Value, cl::Value) {
        match op {
            ArithOp::Add | ArithOp::Sub | ArithOp::Mul => {
                let (v, of) = match op {
                    ArithOp::Add => self.b.ins().sadd_overflow(x, y),
                    ArithOp::Sub => self.b.ins().ssub_overflow(x, y),
                    _ => self.b.ins().smul_overflow(x, y),
                };
                let e = self.err_if(of, ERR_INT_OVERFLOW, expr);
                (v, e)
            }
            ArithOp::Div | ArithOp::Rem => {
                // Neither a zero divisor nor `MIN / -1` may reach the instruction (both
                // trap): they divide by 1 instead, and the error handle says what happened.
                let zero = self.icmp_c(IntCC::Equal, y, 0);
                let minus_one = self.icmp_c(IntCC::Equal, y, -1);
                let min = self.icmp_c(IntCC::Equal, x, i64::MIN);
                let overflow = self.b.ins().band(minus_one, min);
                let bad = self.b.ins().bor(zero, overflow);
                let one = self.iconst(types::I64, 1);
                let safe = self.b.ins().select(bad, one, y);
                let v = if op == ArithOp::Div {
                    self.b.ins().sdiv(x, safe)
                } else {
                    self.b.ins().srem(x, safe)
                };
                let zero_code = if op == ArithOp::Div {
                    ERR_DIVIDE_BY_ZERO
                } else {
                    ERR_MODULUS_BY_ZERO
                };
                let ez = self.err_if(zero, zero_code, expr);
                let eo = self.err_if(overflow, ERR_INT_OVERFLOW, expr);
                let e = self.b.ins().select(zero, ez, eo);
                (v, e)
            }
        }
    }

    fn uint_arith(
        &mut self,
        op: ArithOp,
        x: cl::Value,
        y: cl::Value,
        expr: ExprId,
    ) -> (cl::Value, cl::Value) {
        match op {
            ArithOp::Add | ArithOp::Sub | ArithOp::Mul => {
                let (v, of) = match op {
                    ArithOp::Add => self.b.ins().uadd_overflow(x, y),
                    ArithOp::Sub => self.b.ins().usub_overflow(x, y),
                    _ => self.b.ins().umul_overflow(x, y),
                };
                let e = self.err_if(of, ERR_UINT_OVERFLOW, expr);
                (v, e)
            }
            ArithOp::Div | ArithOp::Rem => {
                let zero = self.icmp_c(IntCC::Equal, y, 0);
                let one = self.iconst(types::I64, 1);
                let safe = self.b.ins().select(zero, one, y);
                let v = if op == ArithOp::Div {
                    self.b.ins().udiv(x, safe)
                } else {
                    self.b.ins().urem(x, safe)
                };
                let code = if op == ArithOp::Div {
                    ERR_DIVIDE_BY_ZERO
                } else {
                    ERR_MODULUS_BY_ZERO
                };
                let e = self.err_if(zero, code, expr);
                (v, e)
            }
        }
    }
}

/// The error for an instruction handed to a family method that does not emit it (the
/// dispatcher in `Emitter::inst` routes each op to one family).
fn misrouted(op: &Op) -> JitError {
    JitError::Codegen(format!("instruction {op:?} routed to the wrong family"))
}

fn int_cc(op: CmpOp, signed: bool) -> IntCC {
    match (op, signed) {
        (CmpOp::Eq, _) => IntCC::Equal,
        (CmpOp::Ne, _) => IntCC::NotEqual,
        (CmpOp::Lt, true) => IntCC::SignedLessThan,
        (CmpOp::Le, true) => IntCC::SignedLessThanOrEqual,
        (CmpOp::Gt, true) => IntCC::SignedGreaterThan,
        (CmpOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
        (CmpOp::Lt, false) => IntCC::UnsignedLessThan,
        (CmpOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
        (CmpOp::Gt, false) => IntCC::UnsignedGreaterThan,
        (CmpOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
    }
}

fn float_cc(op: CmpOp) -> FloatCC {
    match op {
        CmpOp::Eq => FloatCC::Equal,
        CmpOp::Ne => FloatCC::NotEqual,
        CmpOp::Lt => FloatCC::LessThan,
        CmpOp::Le => FloatCC::LessThanOrEqual,
        CmpOp::Gt => FloatCC::GreaterThan,
        CmpOp::Ge => FloatCC::GreaterThanOrEqual,
    }
}
