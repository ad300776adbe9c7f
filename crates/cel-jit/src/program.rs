//! A compiled program: its own code module, the data its code points at, and the
//! interpreter plan it falls back to.

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use cel_checker::CheckedAst;
use cel_interp::{Evaluation, Plan, PlanEnv};
use cel_ir::Ty;
use cel_runtime::{Activation, Error, Value, journal};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;

use crate::JitError;
use crate::abi::{
    Ctx, NEVER_INTERRUPTED, STATUS_FALLBACK, STATUS_FATAL, STATUS_INTERRUPTED, State,
};
use crate::emit::{INLINE_ERROR, ProgramData, emit};
use crate::shims::Shim;

/// How to compile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JitOptions {
    /// Keep the Cranelift IR text of the function (for `--dump clif`).
    pub keep_clif: bool,
    /// Compile about twice as fast, for code that runs somewhat slower (no Cranelift
    /// mid-end optimisations, single-pass register allocation).
    pub fast_compile: bool,
    /// Count the cost and enforce the limit (on by default). Off, generated code has no cost
    /// counter at all: evaluations report a cost of 0 and are never stopped by a limit.
    pub track_cost: bool,
    /// The most IR instructions an expression may lower to
    /// ([`cel_ir::DEFAULT_BUDGET`] by default); a larger one is not compiled
    /// ([`JitError::TooLarge`]), which keeps compile time and memory linear in the budget.
    pub budget: usize,
    /// Make generated code charge one cost unit too many: a deliberate fault, for the test
    /// that proves the differential comparison with the interpreter can fail.
    #[doc(hidden)]
    pub inject_fault: bool,
    /// Resolve each variable where it is read rather than once at entry, so that a variable
    /// the evaluation never reaches is never asked for (hosts whose variables are computed
    /// on demand, such as admission policies' `variables.x`, charge for them when asked).
    pub lazy_variables: bool,
}

impl Default for JitOptions {
    fn default() -> JitOptions {
        JitOptions {
            keep_clif: false,
            fast_compile: false,
            track_cost: true,
            budget: cel_ir::DEFAULT_BUDGET,
            inject_fault: false,
            lazy_variables: false,
        }
    }
}

/// How much work Cranelift puts into a function, chosen by measurement (stop 27, on the 14
/// benchmark cases): its mid-end (e-graph rewriting, alias analysis) is about a fifth of the
/// time to make a program, and makes straight-line code no faster (within 2%: that code is
/// calls to helpers and inline tag tests); it pays in loops (3–5%) and where it turns an
/// integer division by a constant into shifts and multiplications (9% on `int_arith`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tier {
    /// The mid-end and the backtracking register allocator.
    Optimised,
    /// The backtracking register allocator without the mid-end.
    Plain,
    /// Neither (`fast_compile`): about half the compile time, somewhat slower code.
    Fast,
}

impl Tier {
    /// The tier for `func`: the mid-end only where it was measured to pay.
    fn of(func: &cel_ir::Function, fast_compile: bool) -> Tier {
        use cel_ir::{ArithOp, Op};
        if fast_compile {
            return Tier::Fast;
        }
        let divides = func.blocks.iter().flat_map(|b| &b.insts).any(|i| {
            matches!(
                i.op,
                Op::IntArith(ArithOp::Div | ArithOp::Rem)
                    | Op::UintArith(ArithOp::Div | ArithOp::Rem)
            )
        });
        if divides || crate::emit::has_loop(func) {
            Tier::Optimised
        } else {
            Tier::Plain
        }
    }
}

/// The host's instruction set with our settings for a tier, made once per process.
fn isa(tier: Tier) -> Result<OwnedTargetIsa, JitError> {
    static OPTIMISED: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    static PLAIN: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    static FAST: OnceLock<Result<OwnedTargetIsa, String>> = OnceLock::new();
    let cell = match tier {
        Tier::Optimised => &OPTIMISED,
        Tier::Plain => &PLAIN,
        Tier::Fast => &FAST,
    };
    cell.get_or_init(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| format!("setting {k}={v}: {e}"))
        };
        // `JITModule` requires non-PIC code and long-range calls to its imports.
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        match tier {
            Tier::Optimised => set(&mut flags, "opt_level", "speed")?,
            Tier::Plain => set(&mut flags, "opt_level", "none")?,
            Tier::Fast => {
                set(&mut flags, "opt_level", "none")?;
                set(&mut flags, "regalloc_algorithm", "single_pass")?;
            }
        }
        // Profilers and debuggers can walk through generated frames.
        set(&mut flags, "preserve_frame_pointers", "true")?;
        // Argument arrays live on the stack; big ones must not step over the guard page.
        set(&mut flags, "enable_probestack", "true")?;
        set(&mut flags, "probestack_strategy", "inline")?;
        let verify = if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        };
        set(&mut flags, "enable_verifier", verify)?;
        let builder = cranelift_native::builder().map_err(|e| format!("unsupported host: {e}"))?;
        builder
            .finish(settings::Flags::new(flags))
            .map_err(|e| format!("{e}"))
    })
    .clone()
    .map_err(JitError::Codegen)
}

/// The entry point of generated code.
type Entry = unsafe extern "C" fn(*mut Ctx<'_>);

/// A module of generated code, its entry point and how its result is held; the code is
/// freed when it drops.
struct NativeCode {
    module: ManuallyDrop<JITModule>,
    entry: Entry,
    result: Ty,
}

impl Drop for NativeCode {
    fn drop(&mut self) {
        // SAFETY: `drop` has `&mut self`, so no evaluation is running and none can start;
        // the module is taken once and its code is never called again.
        unsafe { ManuallyDrop::take(&mut self.module).free_memory() };
    }
}

/// A CEL expression compiled to native code.
pub struct JitProgram {
    /// The generated code; `None` for a constant program, whose evaluation is made once
    /// when it is compiled ([`JitProgram::constant`]), so its code would never run.
    code: Option<NativeCode>,
    /// Constants and sites the code points at.
    _data: ProgramData,
    /// The whole expression for the interpreter: evaluations that go over their cost limit
    /// or meet something generated code cannot express are redone by it.
    interpreter: Arc<Plan>,
    residuals: usize,
    track_cost: bool,
    /// The evaluation of a program whose every evaluation is the same (it reads no variable,
    /// calls nothing outside the evaluation and has no loop): made once, when the program is
    /// compiled, and handed out by later evaluations without running anything.
    constant: Option<Evaluation>,
    ir: Option<String>,
    clif: Option<String>,
}

// SAFETY: `JITModule` is not `Sync` because of an internal symbol cache that is only used
// while compiling. After `compile` returns, `&self` methods never touch the module: they
// call `entry` (a plain function pointer into finalised, read-only code) and read `_data`,
// which is immutable and `Sync`. The module is only used again by `NativeCode`'s `Drop`,
// which has `&mut self`.
unsafe impl Sync for JitProgram {}

impl std::fmt::Debug for JitProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JitProgram")
            .field("result", &self.code.as_ref().map(|c| c.result))
            .field("residuals", &self.residuals)
            .finish_non_exhaustive()
    }
}

impl JitProgram {
    /// Compiles a checked expression. `interpreter` must be the interpreter's plan of the
    /// same expression under the same environment.
    pub fn compile(
        checked: &CheckedAst,
        env: &PlanEnv,
        interpreter: Arc<Plan>,
        options: JitOptions,
    ) -> Result<JitProgram, JitError> {
        let costs = cel_interp::cost_plan(checked, env);
        let ir_options = cel_ir::CompileOptions {
            budget: options.budget,
            // `Emitter::enter_with_variables` checks them, unless they are read lazily.
            variables_checked_on_entry: !options.lazy_variables,
            older: env.older,
        };
        let func = cel_ir::compile_with(checked, &costs, ir_options).map_err(|e| match e {
            cel_ir::CompileError::Lower(cel_ir::LowerError::TooLarge { budget }) => {
                JitError::TooLarge { budget }
            }
            other => JitError::Codegen(other.to_string()),
        })?;
        let residuals = func.residuals().len();
        let mut program = JitProgram {
            code: None,
            _data: ProgramData::default(),
            interpreter,
            residuals,
            track_cost: options.track_cost,
            constant: None,
            ir: options.keep_clif.then(|| cel_ir::print(&func)),
            clif: None,
        };
        if is_constant(&func) && !program.interpreter.calls_external() {
            program.constant = program.evaluate_once();
            // Its code would never run: every evaluation within the limit hands out the
            // constant, and one over it is the interpreter's. Kept only to be shown.
            if program.constant.is_some() && !options.keep_clif {
                return Ok(program);
            }
        }
        let result = match &func.blocks.iter().find_map(|b| match &b.term {
            Some(cel_ir::Term::Return { value, .. }) => Some(*value),
            _ => None,
        }) {
            Some(v) => func.ty(*v),
            None => return Err(JitError::Codegen("no return".into())),
        };
        let mut builder = JITBuilder::with_isa(
            isa(Tier::of(&func, options.fast_compile))?,
            default_libcall_names(),
        );
        // Every import is a shim of the table; nothing is looked up in the process.
        builder.symbol_lookup_fn(Box::new(|name| Shim::by_name(name).map(|s| s.address())));
        let mut module = JITModule::new(builder);
        let emitted = match emit(
            &func,
            checked,
            env,
            &program.interpreter,
            &costs,
            &mut module,
            &mut program._data,
            options,
        )
        .and_then(|e| {
            module
                .finalize_definitions()
                .map_err(|err| JitError::Codegen(err.to_string()))?;
            Ok(e)
        }) {
            Ok(e) => e,
            Err(err) => {
                // SAFETY: no code of this module was ever called.
                unsafe { module.free_memory() };
                return Err(err);
            }
        };
        let code = module.get_finalized_function(emitted.func);
        // SAFETY: the function was generated with the signature `fn(ctx: i64)` in the
        // platform's C calling convention and returns nothing.
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(code) };
        program.code = Some(NativeCode {
            module: ManuallyDrop::new(module),
            entry,
            result,
        });
        program.clif = emitted.clif;
        Ok(program)
    }

    /// The evaluation of a constant program, made by the interpreter (the reference) under a
    /// small cost limit: a program that costs more (a library call building a large value) is
    /// left to run at each evaluation rather than when it is compiled.
    fn evaluate_once(&self) -> Option<Evaluation> {
        /// As much as checking and compiling a small expression costs.
        const AHEAD_OF_TIME_LIMIT: u64 = 1_000;
        let mut e = self
            .interpreter
            .eval_with_limit(&cel_runtime::EmptyActivation, Some(AHEAD_OF_TIME_LIMIT));
        if e.cost > AHEAD_OF_TIME_LIMIT {
            return None;
        }
        if !self.track_cost {
            e.cost = 0;
        }
        Some(e)
    }

    /// The interpreter's plan of the expression, which runs what native code hands over.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.interpreter
    }

    /// Whether the program has generated code. A constant program has none unless its code
    /// was asked for ([`JitOptions::keep_clif`]): its evaluation is made once, when it is
    /// compiled, and handed out by every evaluation within the cost limit.
    pub fn has_generated_code(&self) -> bool {
        self.code.is_some()
    }

    /// The number of subtrees left to the interpreter.
    pub fn residuals(&self) -> usize {
        self.residuals
    }

    /// The IR text, when compiled with [`JitOptions::keep_clif`].
    pub fn ir_text(&self) -> Option<&str> {
        self.ir.as_deref()
    }

    /// The Cranelift IR text, when compiled with [`JitOptions::keep_clif`].
    pub fn clif_text(&self) -> Option<&str> {
        self.clif.as_deref()
    }

    /// Evaluates with an optional cost limit; the same value, error and cost as the
    /// interpreter.
    #[inline]
    pub fn eval(&self, activation: &dyn Activation, limit: Option<u64>) -> Evaluation {
        self.eval_interruptible(activation, limit, None)
    }

    /// [`JitProgram::eval`] that stops with "operation interrupted" at the next loop back
    /// edge once `interrupt` is set (by another thread, say).
    #[inline]
    pub fn eval_interruptible(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
    ) -> Evaluation {
        self.run(
            activation,
            limit,
            interrupt,
            (),
            |(), native, cost| Evaluation {
                result: Ok(native.value()),
                cost,
            },
            |(), evaluation| evaluation,
        )
    }

    /// [`JitProgram::eval_interruptible`] that writes the value into `slot` (left as it was
    /// when the evaluation fails) and returns the outcome and the cost. Writing in place
    /// spares the copies of a returned value, a good part of a small expression's time; the
    /// error is boxed so that what is returned fits two registers (a 48-byte outcome, copied
    /// through memory, cost a small expression a fifth of its time in stalled loads).
    #[inline]
    pub fn eval_into(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
        slot: &mut Value,
    ) -> (Result<(), Box<Error>>, u64) {
        if let Some(Evaluation {
            result: Ok(value),
            cost,
        }) = &self.constant
            && limit.is_none_or(|l| *cost <= l)
        {
            write_value(slot, value);
            return (Ok(()), *cost);
        }
        self.run(
            activation,
            limit,
            interrupt,
            slot,
            |slot, native, cost| {
                native.write_to(slot);
                (Ok(()), cost)
            },
            |slot, e| (e.result.map(|v| *slot = v).map_err(Box::new), e.cost),
        )
    }

    /// Runs the native code and hands what it produced, with `out` (where the caller wants
    /// it), to `native_done` while the evaluation's values are alive, or an error or the
    /// interpreter's evaluation to `settled`. Each builds the caller's result itself, so that
    /// a value is written once, where it is returned; the first, called once, is inlined
    /// into the hot path, the second is out of its way.
    #[inline(always)]
    fn run<C, T>(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
        out: C,
        native_done: impl FnOnce(C, NativeResult<'_>, u64) -> T,
        settled: impl FnOnce(C, Evaluation) -> T,
    ) -> T {
        if let Some(constant) = &self.constant
            && limit.is_none_or(|l| constant.cost <= l)
        {
            return settled(out, constant.clone());
        }
        let Some(code) = &self.code else {
            // A constant program over the limit: the interpreter stops where cel-go does.
            let e = self.finish_by_interpreter(activation, limit, interrupt, None);
            return settled(out, e);
        };
        let limit_i = limit.map_or(i64::MAX, |l| i64::try_from(l).unwrap_or(i64::MAX));
        // What the runtime's helpers may build (`cel_runtime::limits`); the interpreter,
        // when it takes over, opens its own.
        let _allowance = cel_runtime::limits::BuildAllowance::enter();
        // Host calls are recorded when the interpreter may have to finish the evaluation
        // (only a cost limit makes it), so that it does not make them again.
        let journal = self.interpreter.calls_external().then(|| match limit {
            Some(_) => journal::Scope::record(),
            None => journal::Scope::isolate(),
        });
        let mut st = State {
            activation,
            arena: Default::default(),
            errors: Vec::new(),
            stop: None,
            names: &self._data.names,
            present_slots: Vec::new(),
        };
        let mut ctx = Ctx {
            cost: 0,
            limit: limit_i,
            result: 0,
            err_out: 0,
            result_err: 0,
            status: 0,
            made: st.arena.made_counter(),
            state: &mut st,
            interrupt: interrupt.unwrap_or(&NEVER_INTERRUPTED),
        };
        // SAFETY: `entry` is this program's finalised function, whose module lives as long as
        // `self`; it only reads and writes `ctx` and calls shims, which reach `st` through
        // it. Both live on this stack frame until the call returns.
        unsafe { (code.entry)(&mut ctx) };
        let cost = if self.track_cost {
            u64::try_from(ctx.cost).unwrap_or(0)
        } else {
            0
        };
        let failed = |error| Evaluation {
            result: Err(error),
            cost,
        };
        match ctx.status {
            STATUS_FATAL => {
                let stop = st.stop.take();
                let error = stop.unwrap_or_else(|| Error::internal("generated code stopped"));
                return settled(out, failed(error));
            }
            STATUS_FALLBACK => {
                // The native evaluation's values are freed before the interpreter runs.
                drop(st);
                let e = self.finish_by_interpreter(activation, limit, interrupt, journal);
                return settled(out, e);
            }
            STATUS_INTERRUPTED => return settled(out, failed(Error::interrupted())),
            _ => {}
        }
        if self.track_cost && ctx.cost > limit_i {
            // Over the limit: the interpreter stops at the very step cel-go would, with its
            // cost and error.
            drop(st);
            let e = self.finish_by_interpreter(activation, limit, interrupt, journal);
            return settled(out, e);
        }
        if ctx.result_err != 0 {
            return settled(out, failed(st.take_error(ctx.result_err)));
        }
        let native = NativeResult {
            ty: code.result,
            word: ctx.result,
            _values: PhantomData,
        };
        if matches!(code.result, Ty::Int | Ty::Uint | Ty::Double | Ty::Bool) {
            // A scalar result is in the word, not among the evaluation's values: the state
            // ends first, so that the caller's result is built where it is returned (built
            // before and moved after, it was read back in wider loads than it was written
            // with, a fifth of a small evaluation's time in stalls).
            st.end();
            return native_done(out, native, cost);
        }
        let done = native_done(out, native, cost);
        st.end();
        done
    }
}

/// Whether every evaluation of `func` is the same: it reads no variable, leaves nothing to
/// the interpreter (which could read one) and has no loop (whose cost could be large; the
/// caller also checks that nothing is called outside the evaluation).
fn is_constant(func: &cel_ir::Function) -> bool {
    func.blocks.iter().flat_map(|b| &b.insts).all(|i| {
        !matches!(
            i.op,
            cel_ir::Op::LoadVar(_) | cel_ir::Op::Residual(_) | cel_ir::Op::IterLen
        )
    })
}

/// The result word of generated code and how to read it.
struct NativeResult<'v> {
    ty: Ty,
    word: u64,
    /// A `Val` word points into the evaluation's values (or at a constant or a variable).
    _values: PhantomData<&'v State<'v>>,
}

impl NativeResult<'_> {
    #[inline(always)]
    fn value(&self) -> Value {
        match self.ty {
            Ty::Int => Value::Int(self.word as i64),
            Ty::Uint => Value::Uint(self.word),
            Ty::Double => Value::Double(f64::from_bits(self.word)),
            Ty::Bool => Value::Bool(self.word & 1 != 0),
            // SAFETY: a `Val` result is a pointer to a live value (a constant, a variable's
            // value or a value of the arena, which `run` still holds).
            _ => unsafe { (*(self.word as usize as *const Value)).clone() },
        }
    }

    /// Writes the value into `slot`, each arm on its own: a value built first and then
    /// moved is written a byte at a time and read back whole, which the processor cannot
    /// forward.
    #[inline(always)]
    fn write_to(&self, slot: &mut Value) {
        match self.ty {
            Ty::Int => write_int(slot, self.word as i64),
            Ty::Uint => *slot = Value::Uint(self.word),
            Ty::Double => *slot = Value::Double(f64::from_bits(self.word)),
            Ty::Bool => write_bool(slot, self.word & 1 != 0),
            // SAFETY: as in `value`.
            _ => slot.clone_from(unsafe { &*(self.word as usize as *const Value) }),
        }
    }
}

/// Writes a `bool` into a slot; a slot that already holds one (a caller evaluating the same
/// program again) is written in place, with nothing to drop.
#[inline(always)]
fn write_bool(slot: &mut Value, b: bool) {
    match slot {
        Value::Bool(held) => *held = b,
        _ => *slot = Value::Bool(b),
    }
}

/// [`write_bool`] for an `int`.
#[inline(always)]
fn write_int(slot: &mut Value, i: i64) {
    match slot {
        Value::Int(held) => *held = i,
        _ => *slot = Value::Int(i),
    }
}

/// Writes a value into a slot: scalars as [`write_bool`] does, anything else by cloning.
#[inline(always)]
fn write_value(slot: &mut Value, value: &Value) {
    match value {
        Value::Bool(b) => write_bool(slot, *b),
        Value::Int(i) => write_int(slot, *i),
        other => slot.clone_from(other),
    }
}

impl JitProgram {
    /// Evaluates again with the interpreter, which stops exactly where cel-go does, giving
    /// it the host calls native code made (`journal`, when it recorded them) so that none
    /// runs twice.
    #[cold]
    fn finish_by_interpreter(
        &self,
        activation: &dyn Activation,
        limit: Option<u64>,
        interrupt: Option<&AtomicBool>,
        journal: Option<journal::Scope>,
    ) -> Evaluation {
        let _replay = journal.map(|j| journal::Scope::replay(j.finish()));
        self.interpreter
            .eval_interruptible(activation, limit, interrupt)
    }
}

impl State<'_> {
    /// Where the errors end now (see [`State::release_errors`]).
    pub(crate) fn error_mark(&self) -> usize {
        self.errors.len()
    }

    /// Forgets the errors made since `mark`, except those whose handles the words of `keep`
    /// hold, which get new handles (written back). Inline handles and older errors are left
    /// as they are.
    pub(crate) fn release_errors(&mut self, mark: usize, keep: &mut [u64]) {
        if self.errors.len() <= mark {
            return;
        }
        let mut kept: Vec<(u64, Error)> = Vec::new();
        for w in keep.iter() {
            let h = *w as u32;
            let i = (h as usize).wrapping_sub(1);
            if h & INLINE_ERROR == 0
                && h != 0
                && i >= mark
                && i < self.errors.len()
                && !kept.iter().any(|(k, _)| k == w)
            {
                kept.push((*w, self.errors[i].clone()));
            }
        }
        self.errors.truncate(mark);
        // Renumber every word once, by the handle it held before: the new handles reuse the
        // released positions, so a word already renumbered may hold another kept error's old
        // handle.
        let renamed: Vec<(u64, u64)> = kept
            .into_iter()
            .map(|(old, e)| (old, u64::from(self.error(e))))
            .collect();
        for w in keep.iter_mut() {
            if let Some((_, new)) = renamed.iter().find(|(old, _)| old == w) {
                *w = *new;
            }
        }
    }

    /// The error a handle stands for.
    pub(crate) fn take_error(&mut self, h: u32) -> Error {
        if h & INLINE_ERROR != 0 {
            let code = i64::from((h >> 26) & 0x1f);
            let expr = i64::from(h & ((1 << 26) - 1));
            if code == crate::shims::ERR_NO_SUCH_ATTRIBUTE {
                let name = self.names.get(&expr).map(|n| &**n).unwrap_or("");
                return Error::no_such_attribute(name).at(expr);
            }
            return crate::shims::error_of(code).at(expr);
        }
        let i = (h as usize).wrapping_sub(1);
        self.errors
            .get(i)
            .cloned()
            .unwrap_or_else(|| Error::internal(format!("no error with handle {h}")))
    }
}

#[cfg(test)]
mod tests {
    use cel_ir::{ArithOp, Builder, Op, Term, Ty};

    use super::Tier;

    /// `7 op 2`, returned; with `looping`, behind a block that branches back to itself.
    fn function(op: Op, looping: bool) -> cel_ir::Function {
        let mut b = Builder::new();
        if looping {
            let body = b.create_block();
            b.jump(body, vec![]);
            b.switch_to(body);
            let again = b.inst1(Op::BoolConst(false), vec![], Ty::Bool, 1);
            let exit = b.create_block();
            b.branch(again, (body, vec![]), (exit, vec![]));
            b.switch_to(exit);
        }
        let x = b.inst1(Op::IntConst(7), vec![], Ty::Int, 2);
        let two = b.inst1(Op::IntConst(2), vec![], Ty::Int, 3);
        let (value, err) = b.inst2(op, vec![x, two], Ty::Int, 4);
        b.terminate(Term::Return { value, err });
        b.finish()
    }

    #[test]
    fn the_mid_end_runs_only_where_it_was_measured_to_pay() {
        let straight = |op| Tier::of(&function(op, false), false);
        assert_eq!(straight(Op::IntArith(ArithOp::Add)), Tier::Plain);
        assert_eq!(straight(Op::IntArith(ArithOp::Mul)), Tier::Plain);
        assert_eq!(straight(Op::UintArith(ArithOp::Sub)), Tier::Plain);
        // Division by a constant becomes shifts and multiplications in the mid-end.
        for op in [ArithOp::Div, ArithOp::Rem] {
            assert_eq!(straight(Op::IntArith(op)), Tier::Optimised, "{op:?}");
            assert_eq!(straight(Op::UintArith(op)), Tier::Optimised, "{op:?}");
        }
        // Loops (comprehensions) gain from it.
        let add = Op::IntArith(ArithOp::Add);
        assert_eq!(
            Tier::of(&function(add.clone(), true), false),
            Tier::Optimised
        );
        // `fast_compile` asks for neither the mid-end nor the backtracking allocator.
        assert_eq!(Tier::of(&function(add.clone(), true), true), Tier::Fast);
        assert_eq!(Tier::of(&function(add, false), true), Tier::Fast);
    }
}
