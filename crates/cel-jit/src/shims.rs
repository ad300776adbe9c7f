//! The runtime helpers generated code calls: `extern "C"` shims over the functions the
//! interpreter uses (`cel_interp::ops`, `cel_runtime`), declared once in the [`shims!`]
//! table, which also yields each shim's symbol name, address and Cranelift signature, so
//! that the declaration generated code calls and the Rust function cannot drift apart.
//!
//! Every shim takes the evaluation's [`Ctx`] first and runs its body under `catch_unwind`:
//! a panic becomes an internal error and stops the evaluation, and never unwinds into
//! generated code. A fallible shim writes the error handle of its outcome to
//! `Ctx::err_out` (0 on success); a value-returning shim always returns a valid pointer
//! (to [`NULL_VALUE`] when it failed).
//!
//! The boundary is explicit: the helpers that dereference what generated code passes (the
//! context, value and site pointers, arrays) are `unsafe fn`s whose contract is what
//! generated code guarantees for the length of one shim call, and the [`shims!`] macro
//! states that guarantee once, in the one `unsafe` block each shim's body runs in.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cel_interp::concat::Operand;
use cel_interp::{CallCost, CallTarget, Plan, ops};
use cel_runtime::object::ObjectValue;
use cel_runtime::{Error, Result, Value, compare};
use cranelift_codegen::ir::types;

use crate::abi::{AbiType, Ctx, NULL_VALUE, STATUS_FALLBACK, STATUS_FATAL, State, ValErr};

/// A variable of the activation.
pub(crate) struct VarSite {
    pub name: Arc<str>,
}

/// `select`, `select.opt`, `has`: a field name, with its map hash computed once.
pub(crate) struct FieldSite {
    pub field: Arc<str>,
    pub hash: u64,
    pub expr: i64,
    /// Where the field is in the schema-typed objects this read meets.
    pub slots: cel_runtime::object::SlotCache,
    /// For generated code that reads objects' slots itself (`select.object`): the word that
    /// identifies the layout `slots` learned ([`crate::abi::layout_word`]; 0 until a read
    /// found the field in one), and the field's byte offset among that layout's slots.
    /// Written once, the offset first.
    pub layout_word: AtomicU64,
    pub slot_offset: AtomicU64,
}

impl FieldSite {
    pub(crate) fn new(field: Arc<str>, hash: u64, expr: i64) -> FieldSite {
        FieldSite {
            field,
            hash,
            expr,
            slots: Default::default(),
            layout_word: AtomicU64::new(0),
            slot_offset: AtomicU64::new(0),
        }
    }

    /// After a read of `object` through the shim: once the slot cache has learned the
    /// object's layout and the field is in it, tells generated code where to find it.
    fn publish(&self, object: &cel_runtime::object::ObjectValue) {
        if self.layout_word.load(Ordering::Relaxed) != 0 {
            return;
        }
        let Some(abi) = crate::abi::object_abi() else {
            return;
        };
        if let Some((layout, Some(slot))) = self.slots.learned()
            && Arc::ptr_eq(layout, object.layout())
        {
            let offset = slot.saturating_mul(std::mem::size_of::<Option<Value>>());
            self.slot_offset.store(offset as u64, Ordering::Relaxed);
            self.layout_word
                .store(crate::abi::layout_word(&abi, object), Ordering::Release);
        }
    }
}

/// A call: how it reaches its implementation.
pub(crate) struct CallSite {
    pub target: CallTarget,
    pub expr: i64,
}

/// A call's cost rule, for costs that depend on the arguments.
pub(crate) struct CostSite {
    pub cost: CallCost,
}

/// A message literal: the type, its descriptor (for messages other than the well-known
/// types built as plain values) and the field initialisers (`true` for `?f`).
pub(crate) struct StructSite {
    pub type_name: Arc<str>,
    pub message: Option<cel_runtime::proto::MessageDescriptor>,
    pub builds_map: bool,
    pub fields: Vec<(Arc<str>, bool)>,
    pub expr: i64,
}

/// `'key' in container`, `@in` resolved to the standard library's `in_map` (and perhaps
/// `in_list`) with a constant string: the key hashed once, and the call for containers
/// other than maps.
pub(crate) struct KeyInSite {
    pub call: CallSite,
    pub key: Value,
    pub hash: u64,
    /// Where the key was in the last map.
    pub slots: cel_runtime::object::SlotCache,
}

/// `matches` with a constant pattern, compiled once.
pub(crate) struct RegexSite {
    pub regex: Result<Arc<cel_runtime::regex::Matcher>>,
    pub expr: i64,
}

/// `p₀ + … + pₙ == other` on strings (`concat.eq`, `concat.ne`): the calls' and the
/// comparison's cost rules, and the `+` calls' expressions (for their errors).
pub(crate) struct ConcatSite {
    pub compare: cel_interp::concat::ConcatCompare,
    pub steps: Vec<i64>,
}

/// `p₀ + … + pₙ` on strings, built once (`concat`): the calls' cost rules and expressions
/// (for their errors).
pub(crate) struct ConcatBuildSite {
    pub build: cel_interp::concat::ConcatBuild,
    pub steps: Vec<i64>,
}

/// `x in [constants]`.
pub(crate) struct SetSite {
    pub set: Vec<Value>,
}

/// A subtree the interpreter evaluates.
pub(crate) struct ResidualSite {
    pub plan: Plan,
}

/// Error kinds generated code raises itself (inline arithmetic and type checks).
pub(crate) const ERR_NO_SUCH_OVERLOAD: i64 = 0;
pub(crate) const ERR_INT_OVERFLOW: i64 = 1;
pub(crate) const ERR_UINT_OVERFLOW: i64 = 2;
pub(crate) const ERR_DIVIDE_BY_ZERO: i64 = 3;
pub(crate) const ERR_MODULUS_BY_ZERO: i64 = 4;
pub(crate) const ERR_NAN: i64 = 5;
/// An unbound variable: the name is the program's, by expression id.
pub(crate) const ERR_NO_SUCH_ATTRIBUTE: i64 = 6;

macro_rules! abi_pointer {
    ($($t:ty),*) => {$(
        impl AbiType for *const $t {
            const TYPE: types::Type = types::I64;
            fn fallback() -> *const $t {
                std::ptr::null()
            }
        }
    )*};
}

abi_pointer!(
    VarSite,
    FieldSite,
    CallSite,
    KeyInSite,
    CostSite,
    RegexSite,
    SetSite,
    ConcatSite,
    ConcatBuildSite,
    ResidualSite,
    StructSite,
    ValErr
);

impl AbiType for *const Value {
    const TYPE: types::Type = types::I64;
    fn fallback() -> *const Value {
        &NULL_VALUE
    }
}

impl AbiType for *mut u64 {
    const TYPE: types::Type = types::I64;
    fn fallback() -> *mut u64 {
        std::ptr::null_mut()
    }
}

impl AbiType for *const *const Value {
    const TYPE: types::Type = types::I64;
    fn fallback() -> *const *const Value {
        std::ptr::null()
    }
}

/// Declares the shims: for each, the `extern "C"` function (its body under [`guard`]) and a
/// variant of [`Shim`] that knows the symbol's name, address and signature.
macro_rules! shims {
    ($(
        $(#[$doc:meta])*
        fn $name:ident($ctx:ident $(, $arg:ident: $ty:ty)*) -> $ret:ty $body:block
    )*) => {
        /// A runtime helper generated code can call.
        #[allow(non_camel_case_types, reason = "variants are named as the symbols they stand for")]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Shim {
            $($(#[$doc])* $name,)*
        }

        impl Shim {
            /// Every shim.
            pub(crate) const ALL: &'static [Shim] = &[$(Shim::$name),*];

            /// The symbol name.
            pub(crate) fn name(self) -> &'static str {
                match self {
                    $(Shim::$name => stringify!($name),)*
                }
            }

            /// The function's address.
            pub(crate) fn address(self) -> *const u8 {
                match self {
                    $(Shim::$name => $name as *const u8,)*
                }
            }

            /// Parameter types, the context first.
            pub(crate) fn params(self) -> &'static [types::Type] {
                match self {
                    $(Shim::$name => &[<*mut Ctx<'static> as AbiType>::TYPE $(, <$ty as AbiType>::TYPE)*],)*
                }
            }

            /// The result type.
            pub(crate) fn ret(self) -> types::Type {
                match self {
                    $(Shim::$name => <$ret as AbiType>::TYPE,)*
                }
            }

            /// The shim named `name`.
            pub(crate) fn by_name(name: &str) -> Option<Shim> {
                Shim::ALL.iter().copied().find(|s| s.name() == name)
            }
        }

        $(
            $(#[$doc])*
            extern "C" fn $name($ctx: *mut Ctx<'_> $(, $arg: $ty)*) -> $ret {
                // SAFETY: generated code calls a shim only with the context the entry wrapper
                // gave it (live, its `State` too, for the whole call, with no other reference
                // to either in use while the shim runs), and with operands valid for the call:
                // value pointers to live values (the program's constants, the activation's,
                // the arena's, `NULL_VALUE`), site pointers to the program's own sites, and
                // arrays of as many initialised elements as it says. That is the contract of
                // the helpers the body calls (`state`, `val`, `site`, `values`, `owned`, ...),
                // and no reference they return outlives the call.
                unsafe { guard($ctx, move || -> $ret { $body }) }
            }
        )*
    };
}

/// Runs a shim's body, turning a panic into a stopped evaluation.
///
/// # Safety
///
/// `ctx` is the live context of the evaluation, as for [`state`].
#[inline]
unsafe fn guard<R: AbiType>(ctx: *mut Ctx<'_>, body: impl FnOnce() -> R) -> R {
    match std::panic::catch_unwind(AssertUnwindSafe(body)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a runtime helper panicked".into());
            // SAFETY: the caller's contract.
            unsafe { stop(ctx, STATUS_FATAL, Error::internal(msg)) };
            R::fallback()
        }
    }
}

/// The running cost (as last stored by generated code) and the limit.
///
/// # Safety
///
/// As for [`state`].
unsafe fn cost_and_limit(ctx: *mut Ctx<'_>) -> (i64, i64) {
    // SAFETY: the live context (the caller's contract), no reference to it held.
    unsafe { ((*ctx).cost, (*ctx).limit) }
}

/// Stops the evaluation: the next limit check in generated code leaves it.
///
/// # Safety
///
/// As for [`state`].
unsafe fn stop(ctx: *mut Ctx<'_>, status: u32, why: Error) {
    // SAFETY: `ctx` is the live context the entry wrapper passed to generated code, which
    // passes it on unchanged (the caller's contract); no reference to it is held.
    unsafe {
        (*ctx).limit = -1;
        if (*ctx).status == 0 {
            (*ctx).status = status;
        }
    }
    // SAFETY: the caller's contract.
    let st = unsafe { state(ctx) };
    if st.stop.is_none() {
        st.stop = Some(why);
    }
}

/// The Rust-side state of the evaluation, for as long as its lifetime `'s` says it lives
/// (the reference's own lifetime `'a` is the caller's to bound).
///
/// # Safety
///
/// `ctx` is the live context the entry wrapper passed to generated code, pointing at the
/// evaluation's `State`; the reference is not kept past the shim call that asked for it, and
/// no other reference to the `State` is in use while it is (shims run one at a time on the
/// evaluating thread, and the entry wrapper does not touch the state until generated code
/// returns).
#[inline]
unsafe fn state<'a, 's>(ctx: *mut Ctx<'s>) -> &'a mut State<'s> {
    // SAFETY: the caller's contract.
    unsafe { &mut *(*ctx).state }
}

/// A value generated code passes.
///
/// # Safety
///
/// `p` points at a live value (generated code only holds pointers to the program's
/// constants, the activation's values, the arena's values, alive until the evaluation
/// ends, and `NULL_VALUE`), and the reference is not kept past the shim call.
#[inline]
unsafe fn val<'a>(p: *const Value) -> &'a Value {
    // SAFETY: the caller's contract.
    unsafe { &*p }
}

/// A site of the program.
///
/// # Safety
///
/// `p` is a site's address that generated code embeds as a constant: sites are boxed in the
/// compiled program, which outlives every evaluation of it.
#[inline]
unsafe fn site<'a, T>(p: *const T) -> &'a T {
    // SAFETY: the caller's contract.
    unsafe { &*p }
}

/// Records a fallible shim's outcome.
///
/// # Safety
///
/// As for [`state`].
#[inline]
unsafe fn set_err(ctx: *mut Ctx<'_>, handle: u32) {
    // SAFETY: the live context (the caller's contract), no reference to it held.
    unsafe { (*ctx).err_out = handle }
}

/// Adds a concatenation's cost (`cel_rt_concat_compare`, `cel_rt_concat_build`) to the
/// context's.
///
/// # Safety
///
/// As for [`state`].
unsafe fn add_concat_cost(ctx: *mut Ctx<'_>, cost: u64) {
    let cost = i64::try_from(cost).unwrap_or(i64::MAX).min(1 << 62);
    // SAFETY: the live context (the caller's contract), no reference to it held (as in
    // `stop`).
    unsafe { (*ctx).cost = (*ctx).cost.saturating_add(cost) };
}

/// Sets the error of a concatenation's failure: the failed operand's (its handle in
/// `pairs`), or the error of the `+` call that failed, at its expression (`steps`).
///
/// # Safety
///
/// As for [`state`]; `pairs` are the call's operands.
unsafe fn raise_concat_failure(
    ctx: *mut Ctx<'_>,
    steps: &[i64],
    pairs: &[ValErr],
    failure: cel_interp::concat::Failure,
) {
    let handle = match failure {
        cel_interp::concat::Failure::Operand(i) => pairs[i].err,
        cel_interp::concat::Failure::Step(k, e) => {
            let expr = steps.get(k).copied().unwrap_or(0);
            // SAFETY: the caller's contract.
            unsafe { state(ctx).error(e.at(expr)) }
        }
    };
    // SAFETY: the caller's contract.
    unsafe { set_err(ctx, handle) };
}

/// Hands over a concatenation's comparison (`cel_rt_concat_compare`): adds its cost to the
/// context's and returns its value, or sets the error of the operand or step that failed.
///
/// # Safety
///
/// As for [`state`]; `pairs` are the call's operands.
unsafe fn concat_compared(
    ctx: *mut Ctx<'_>,
    site: &ConcatSite,
    pairs: &[ValErr],
    (outcome, cost): (cel_interp::concat::Compared, u64),
) -> i64 {
    // SAFETY: the caller's contract.
    unsafe {
        add_concat_cost(ctx, cost);
        match outcome {
            Ok(b) => {
                set_err(ctx, 0);
                i64::from(b)
            }
            Err(failure) => {
                raise_concat_failure(ctx, &site.steps, pairs, failure);
                0
            }
        }
    }
}

/// Hands over a concatenation's string (`cel_rt_concat_build`): adds its cost to the
/// context's and returns the string, in the arena, or sets the error of the operand or step
/// that failed.
///
/// # Safety
///
/// As for [`state`]; `pairs` are the call's operands.
unsafe fn concat_built(
    ctx: *mut Ctx<'_>,
    site: &ConcatBuildSite,
    pairs: &[ValErr],
    (built, cost): (cel_interp::concat::Built, u64),
) -> *const Value {
    // SAFETY: the caller's contract.
    unsafe {
        add_concat_cost(ctx, cost);
        match built {
            Ok(text) => put(ctx, Ok(Value::String(text))),
            Err(failure) => {
                raise_concat_failure(ctx, &site.steps, pairs, failure);
                &NULL_VALUE
            }
        }
    }
}

/// The operands of a concatenation shim as the runtime sees them: a failed one without its
/// value, a constant with its size.
///
/// # Safety
///
/// The values of `pair` are live (generated code's operands).
unsafe fn concat_operand<'v>(pair: &ValErr) -> Operand<'v> {
    Operand {
        // SAFETY: the caller's contract.
        value: (pair.err == 0).then(|| unsafe { val(pair.value) }),
        size: pair.known_size.checked_sub(1).map(u64::from),
    }
}

/// Calls `eval` with the operands gathered in a slice (on the stack for the pieces most
/// chains have; more take an allocation).
///
/// # Safety
///
/// As for [`concat_operand`], for every pair.
unsafe fn with_concat_operands<R>(pairs: &[ValErr], eval: impl FnOnce(&[Operand<'_>]) -> R) -> R {
    const INLINE: usize = 8;
    if pairs.len() > INLINE {
        // SAFETY: the caller's contract.
        let spilled: Vec<Operand<'_>> =
            pairs.iter().map(|p| unsafe { concat_operand(p) }).collect();
        return eval(&spilled);
    }
    let mut inline = [Operand::default(); INLINE];
    for (slot, p) in inline.iter_mut().zip(pairs) {
        // SAFETY: the caller's contract.
        *slot = unsafe { concat_operand(p) };
    }
    eval(&inline[..pairs.len()])
}

static TRUE_VALUE: Value = Value::Bool(true);
static FALSE_VALUE: Value = Value::Bool(false);

/// Returns a fallible shim's value: into the arena, or the error's handle.
///
/// # Safety
///
/// As for [`state`].
#[inline]
unsafe fn put(ctx: *mut Ctx<'_>, r: Result<Value>) -> *const Value {
    // SAFETY: the caller's contract covers every use of the pointers here.
    unsafe {
        let st = state(ctx);
        match r {
            // Booleans (most call results) and null need no storage of their own.
            Ok(Value::Bool(true)) => {
                set_err(ctx, 0);
                &TRUE_VALUE
            }
            Ok(Value::Bool(false)) => {
                set_err(ctx, 0);
                &FALSE_VALUE
            }
            Ok(Value::Null) => {
                set_err(ctx, 0);
                &NULL_VALUE
            }
            Ok(v) => {
                set_err(ctx, 0);
                st.arena.alloc(v)
            }
            Err(e) => {
                let h = st.error(e);
                set_err(ctx, h);
                &NULL_VALUE
            }
        }
    }
}

/// Returns a fallible shim's boolean (as 0 or 1).
///
/// # Safety
///
/// As for [`state`].
#[inline]
unsafe fn put_bool(ctx: *mut Ctx<'_>, r: Result<Value>) -> i64 {
    // SAFETY: the caller's contract covers every use of the pointers here.
    unsafe {
        match r {
            Ok(Value::Bool(b)) => {
                set_err(ctx, 0);
                b as i64
            }
            Ok(other) => {
                let h = state(ctx).error(Error::internal(format!(
                    "expected a bool, got {}",
                    other.type_name()
                )));
                set_err(ctx, h);
                0
            }
            Err(e) => {
                let h = state(ctx).error(e);
                set_err(ctx, h);
                0
            }
        }
    }
}

/// Returns a fallible shim's `int`: another value is "no such overload" at `expr`.
///
/// # Safety
///
/// As for [`state`].
#[inline]
unsafe fn put_int(ctx: *mut Ctx<'_>, r: Result<Value>, expr: i64) -> i64 {
    // SAFETY: the caller's contract covers every use of the pointers here.
    unsafe {
        let e = match r {
            Ok(Value::Int(i)) => {
                set_err(ctx, 0);
                return i;
            }
            Ok(_) => Error::no_such_overload().at(expr),
            Err(e) => e,
        };
        let h = state(ctx).error(e);
        set_err(ctx, h);
        0
    }
}

/// A value of the arena that may be updated in place: the value itself when the arena holds
/// it, else a copy moved into the arena (a constant or a variable is never written).
///
/// # Safety
///
/// `ctx` as for [`state`], `p` as for [`val`]; and generated code hands a value to an
/// in-place update only as the sole holder of it (a fresh list or map being built, or an
/// accumulator, which the lowering gives storage of its own: `cel_ir::verify` checks that
/// every update's operand comes from such storage).
#[inline]
unsafe fn owned<'a>(ctx: *mut Ctx<'_>, p: *const Value) -> (*mut Value, &'a mut Value) {
    // SAFETY: the caller's contract.
    let st = unsafe { state(ctx) };
    let p = if st.arena.owns(p) {
        p.cast_mut()
    } else {
        // SAFETY: the caller's contract.
        st.arena.alloc(unsafe { val(p) }.clone())
    };
    // SAFETY: `p` is a value of this evaluation's arena. Generated code hands a value to an
    // in-place update only as the sole holder of it (a fresh list or map being built, or an
    // accumulator, which the lowering gives storage of its own), so no other reference to
    // it is in use while it is written.
    (p, unsafe { &mut *p })
}

pub(crate) fn error_of(code: i64) -> Error {
    match code {
        ERR_INT_OVERFLOW => cel_runtime::arith::int_overflow(),
        ERR_UINT_OVERFLOW => cel_runtime::arith::uint_overflow(),
        ERR_DIVIDE_BY_ZERO => cel_runtime::arith::division_by_zero(),
        ERR_MODULUS_BY_ZERO => cel_runtime::arith::modulus_by_zero(),
        ERR_NAN => compare::nan_error(),
        _ => Error::no_such_overload(),
    }
}

/// The value of a `(value, err)` pair as the interpreter passes it to a cost rule: null
/// for an argument that failed.
///
/// # Safety
///
/// A pair without error holds a value as for [`val`].
unsafe fn arg_value(ctx: *mut Ctx<'_>, pair: &ValErr) -> Value {
    // SAFETY: the caller's contract covers every use of the pointers here.
    unsafe {
        let _ = ctx;
        if pair.err != 0 {
            Value::Null
        } else {
            val(pair.value).clone()
        }
    }
}

shims! {
    /// A variable, or a null pointer when it is not bound (generated code resolves each
    /// variable once per evaluation and raises the error where it is used).
    fn cel_rt_resolve(ctx, site_ptr: *const VarSite) -> *const Value {
        let s = site(site_ptr);
        let st = state(ctx);
        if let Some(v) = st.activation.resolve_ref(&s.name) {
            return v as *const Value;
        }
        match st.activation.resolve(&s.name) {
            Some(v) => st.arena.alloc(v),
            None => std::ptr::null(),
        }
    }

    /// `err.again`: the error of handle `h` as a repeated field read raises it, attached
    /// to `to` where the first read attached it to `from`.
    fn cel_rt_err_again(ctx, h: u32, from: i64, to: i64) -> u32 {
        let st = state(ctx);
        let mut e = st.take_error(h);
        if e.expr_id == from {
            e.expr_id = to;
        }
        st.error(e)
    }

    /// An `int` as a value.
    fn cel_rt_box_int(ctx, x: i64) -> *const Value {
        state(ctx).arena.alloc(Value::Int(x))
    }

    /// A `uint` as a value.
    fn cel_rt_box_uint(ctx, x: u64) -> *const Value {
        state(ctx).arena.alloc(Value::Uint(x))
    }

    /// A `double` as a value.
    fn cel_rt_box_double(ctx, x: f64) -> *const Value {
        state(ctx).arena.alloc(Value::Double(x))
    }

    /// A `bool` (0 or 1) as a value.
    fn cel_rt_box_bool(ctx, x: i64) -> *const Value {
        state(ctx).arena.alloc(Value::Bool(x != 0))
    }

    /// An error raised by generated code (`ERR_*`), attached to an expression: its handle.
    fn cel_rt_error(ctx, code: i64, expr: i64) -> u32 {
        state(ctx).error(error_of(code).at(expr))
    }

    /// `v.field`: a map's entry in place, anything else through `ops::select`.
    fn cel_rt_select(ctx, v: *const Value, site_ptr: *const FieldSite) -> *const Value {
        let s = site(site_ptr);
        let v = val(v);
        if let Some(x) = ops::select_ref_cached(v, &s.field, s.hash, &s.slots) {
            if let Value::Object(o) = v {
                s.publish(o);
            }
            set_err(ctx, 0);
            return x as *const Value;
        }
        put(ctx, ops::select(v, &s.field).map_err(|e| e.at(s.expr)))
    }

    /// `v.?field`.
    fn cel_rt_opt_select(ctx, v: *const Value, site_ptr: *const FieldSite) -> *const Value {
        let s = site(site_ptr);
        put(ctx, ops::opt_select(val(v), &s.field).map_err(|e| e.at(s.expr)))
    }

    /// `has(v.field)`.
    fn cel_rt_has(ctx, v: *const Value, site_ptr: *const FieldSite) -> i64 {
        let s = site(site_ptr);
        let v = val(v);
        if let Value::Object(o) = v {
            // Teaches the site the object's layout (for `has` compiled in place).
            let _ = s.slots.get(o, s.hash, &s.field);
            s.publish(o);
        }
        put_bool(ctx, ops::has_field(v, &s.field).map_err(|e| e.at(s.expr)))
    }

    /// Whether a field or index step charges its qualifier, 0 or 1
    /// (`ops::qualifier_charged`): the operand and the step's result with their error
    /// handles, and whether the step is optional (`.?f`, `[?i]`).
    fn cel_rt_qualifier_charged(ctx, operand: *const Value, operand_err: u32, result: *const Value, result_err: u32, optional: i64) -> i64 {
        let _ = ctx;
        if operand_err != 0 {
            return 0;
        }
        let result = (result_err == 0).then(|| val(result));
        ops::qualifier_charged(optional != 0, val(operand), result) as i64
    }

    /// `v[i]`.
    fn cel_rt_index(ctx, v: *const Value, i: *const Value, expr: i64) -> *const Value {
        put(ctx, ops::index_value(val(v), val(i)).map_err(|e| e.at(expr)))
    }

    /// `v[?i]`.
    fn cel_rt_opt_index(ctx, v: *const Value, i: *const Value, expr: i64) -> *const Value {
        put(ctx, ops::opt_index(val(v), val(i)).map_err(|e| e.at(expr)))
    }

    /// A call with one argument.
    fn cel_rt_call1(ctx, site_ptr: *const CallSite, a: *const Value) -> *const Value {
        let s = site(site_ptr);
        put(ctx, s.target.call1(val(a)).map_err(|e| e.at(s.expr)))
    }

    /// A call with one argument whose result is held as an `int` (`size`): another value
    /// is "no such overload", as unboxing it would be.
    fn cel_rt_call1_int(ctx, site_ptr: *const CallSite, a: *const Value) -> i64 {
        let s = site(site_ptr);
        put_int(ctx, s.target.call1(val(a)).map_err(|e| e.at(s.expr)), s.expr)
    }

    /// A call with two arguments (receiver first).
    fn cel_rt_call2(ctx, site_ptr: *const CallSite, a: *const Value, b: *const Value) -> *const Value {
        let s = site(site_ptr);
        put(ctx, s.target.call2(val(a), val(b)).map_err(|e| e.at(s.expr)))
    }

    /// `'key' in container` ([`KeyInSite`]): a map's answer in place, anything else the
    /// call's.
    fn cel_rt_key_in(ctx, site_ptr: *const KeyInSite, container: *const Value) -> *const Value {
        let s = site(site_ptr);
        if let (Value::String(key), Value::Map(m)) = (&s.key, val(container)) {
            set_err(ctx, 0);
            let found = cel_runtime::compare::in_map_str(key, s.hash, m, &s.slots);
            return if found { &TRUE_VALUE } else { &FALSE_VALUE };
        }
        let r = s.call.target.call2(&s.key, val(container));
        put(ctx, r.map_err(|e| e.at(s.call.expr)))
    }

    /// A call with three arguments.
    fn cel_rt_call3(
        ctx,
        site_ptr: *const CallSite,
        a: *const Value,
        b: *const Value,
        c: *const Value
    ) -> *const Value {
        let s = site(site_ptr);
        put(
            ctx,
            s.target
                .call(&[val(a).clone(), val(b).clone(), val(c).clone()])
                .map_err(|e| e.at(s.expr)),
        )
    }

    /// A call with any number of arguments, passed as an array of value pointers.
    fn cel_rt_calln(ctx, site_ptr: *const CallSite, argv: *const *const Value, n: i64) -> *const Value {
        let s = site(site_ptr);
        let args = values(argv, n);
        put(ctx, s.target.call(&args).map_err(|e| e.at(s.expr)))
    }

    /// `s.matches(re)` with a pattern compiled when the program was.
    fn cel_rt_matches(ctx, s: *const Value, site_ptr: *const RegexSite) -> i64 {
        let site = site(site_ptr);
        let r = match (val(s), &site.regex) {
            (Value::String(s), Ok(re)) => Ok(Value::Bool(re.is_match(s))),
            (Value::String(_), Err(e)) => Err(e.clone()),
            _ => Err(Error::no_such_overload().at(site.expr)),
        };
        put_bool(ctx, r)
    }

    /// CEL equality (0 or 1).
    fn cel_rt_val_eq(ctx, a: *const Value, b: *const Value) -> i64 {
        let _ = ctx;
        compare::equals(val(a), val(b)) as i64
    }

    /// An ordering, through the call's own dispatch.
    fn cel_rt_val_cmp(ctx, site_ptr: *const CallSite, a: *const Value, b: *const Value) -> i64 {
        let s = site(site_ptr);
        put_bool(ctx, s.target.call2(val(a), val(b)).map_err(|e| e.at(s.expr)))
    }

    /// A new message from its field values (`n` value pointers, in field order).
    fn cel_rt_make_struct(ctx, site_ptr: *const StructSite, argv: *const *const Value, n: i64) -> *const Value {
        let s = site(site_ptr);
        let mut fields = Vec::with_capacity(s.fields.len());
        let mut r = Ok(());
        for ((name, optional), v) in s.fields.iter().zip(values(argv, n)) {
            r = ops::struct_field(&mut fields, name, *optional, v);
            if r.is_err() {
                break;
            }
        }
        let r = r.and_then(|()| ops::make_struct(&s.type_name, s.message.as_ref(), s.builds_map, fields));
        put(ctx, r.map_err(|e| e.at(s.expr)))
    }

    /// A new list of the given elements.
    fn cel_rt_make_list(ctx, argv: *const *const Value, n: i64) -> *const Value {
        let items = values(argv, n);
        state(ctx).arena.alloc(Value::list(items))
    }

    /// Adds an optional element to a list being built.
    fn cel_rt_list_push_opt(ctx, list: *const Value, v: *const Value, expr: i64) -> *const Value {
        let (p, l) = owned(ctx, list);
        let r = match l {
            Value::List(items) => {
                ops::list_element(&mut Arc::make_mut(items).items, val(v).clone(), true, expr)
            }
            _ => Err(Error::internal("list.push.opt on a value that is not a list")),
        };
        match r {
            Ok(()) => set_err(ctx, 0),
            Err(e) => {
                let h = state(ctx).error(e);
                set_err(ctx, h);
            }
        }
        p
    }

    /// `[v]`, the list a cost hook sees appended by `acc + [v]`.
    fn cel_rt_list_of_one(ctx, v: *const Value) -> *const Value {
        state(ctx).arena.alloc(Value::from(vec![val(v).clone()]))
    }

    /// `acc + [v]` in place.
    fn cel_rt_list_append(ctx, list: *const Value, v: *const Value) -> *const Value {
        let (p, l) = owned(ctx, list);
        match l {
            Value::List(items) => Arc::make_mut(items).items.push(val(v).clone()),
            _ => stop(ctx, STATUS_FALLBACK, Error::internal("an accumulator that is not a list")),
        }
        p
    }

    /// A new empty map.
    fn cel_rt_map_new(ctx) -> *const Value {
        state(ctx).arena.alloc(Value::Map(Arc::new(cel_runtime::MapValue::new())))
    }

    /// Adds an entry to a map being built (`optional` is 0 or 1).
    fn cel_rt_map_entry(
        ctx,
        map: *const Value,
        k: *const Value,
        v: *const Value,
        optional: i64,
        expr: i64
    ) -> *const Value {
        let (p, m) = owned(ctx, map);
        let r = match m {
            Value::Map(m) => {
                ops::map_entry(Arc::make_mut(m), val(k), val(v).clone(), optional != 0, expr)
            }
            _ => Err(Error::internal("map.entry on a value that is not a map")),
        };
        match r {
            Ok(()) => set_err(ctx, 0),
            Err(e) => {
                let h = state(ctx).error(e);
                set_err(ctx, h);
            }
        }
        p
    }

    /// The number of iterations over a comprehension's range.
    fn cel_rt_iter_len(ctx, range: *const Value, expr: i64) -> i64 {
        match val(range) {
            Value::List(l) => {
                set_err(ctx, 0);
                l.len() as i64
            }
            r if let Some(m) = r.map_entries() => {
                set_err(ctx, 0);
                m.len() as i64
            }
            Value::Object(o) => {
                set_err(ctx, 0);
                o.present().count() as i64
            }
            other => {
                let e = Error::not_iterable(other).at(expr);
                let h = state(ctx).error(e);
                set_err(ctx, h);
                0
            }
        }
    }

    /// The first iteration variable for iteration `i`: a list's element (its index with
    /// two variables), a map's key.
    fn cel_rt_iter_key(ctx, range: *const Value, i: i64, two_var: i64) -> *const Value {
        let idx = usize::try_from(i).unwrap_or(usize::MAX);
        match val(range) {
            Value::List(l) if two_var != 0 => state(ctx).arena.alloc(Value::Int(i)),
            Value::List(l) => match l.get(idx) {
                Some(x) => x as *const Value,
                None => &NULL_VALUE,
            },
            r if let Some(m) = r.map_entries() => match m.get_index(idx) {
                Some((k, _)) => state(ctx).arena.alloc_shared(k.to_value()),
                None => &NULL_VALUE,
            },
            Value::Object(o) => match present_slot(state(ctx), o, idx) {
                Some(slot) => {
                    let name = o.layout().fields()[slot].name.clone();
                    state(ctx).arena.alloc_shared(Value::String(name))
                }
                None => &NULL_VALUE,
            },
            _ => &NULL_VALUE,
        }
    }

    /// The second iteration variable for iteration `i`: a list's element, a map's value.
    fn cel_rt_iter_value(ctx, range: *const Value, i: i64) -> *const Value {
        let idx = usize::try_from(i).unwrap_or(usize::MAX);
        let found = match val(range) {
            Value::List(l) => l.get(idx),
            r if let Some(m) = r.map_entries() => m.get_index(idx).map(|(_, v)| v),
            Value::Object(o) => present_slot(state(ctx), o, idx).and_then(|slot| o.slot(slot)),
            _ => None,
        };
        found.map(|x| x as *const Value).unwrap_or(&NULL_VALUE)
    }

    /// `cel.@mapInsert(acc, k, v)` in place.
    fn cel_rt_map_insert(ctx, acc: *const Value, k: *const Value, v: *const Value, expr: i64) -> *const Value {
        map_insert_in_place(ctx, acc, Some(val(k).clone()), val(v).clone(), expr)
    }

    /// `cel.@mapInsert(acc, m)` in place.
    fn cel_rt_map_merge(ctx, acc: *const Value, m: *const Value, expr: i64) -> *const Value {
        map_insert_in_place(ctx, acc, None, val(m).clone(), expr)
    }

    /// `x in [constants]`.
    fn cel_rt_in_set(ctx, v: *const Value, site_ptr: *const SetSite) -> i64 {
        let _ = ctx;
        let v = val(v);
        site(site_ptr).set.iter().any(|s| compare::equals(v, s)) as i64
    }

    /// The cost of a call from its arguments and result (`n` pairs, the result last).
    fn cel_rt_charge_call(ctx, site_ptr: *const CostSite, pairs: *const ValErr, n: i64) -> i64 {
        let s = site(site_ptr);
        let n = usize::try_from(n).unwrap_or(0);
        // Generated code passes a stack array of `n` initialised pairs.
        let pairs = std::slice::from_raw_parts(pairs, n);
        let (result, args) = match pairs.split_last() {
            Some(x) => x,
            None => return 0,
        };
        // Without a hook, the sizes are read in place (a failed argument counts as null).
        let size = |i: usize| match args.get(i) {
            Some(p) if p.err == 0 && p.known_size > 0 => u64::from(p.known_size - 1),
            Some(p) if p.err == 0 => ops::actual_size(val(p.value)),
            _ => 1,
        };
        if let Some(c) = s.cost.compute_from_sizes(&size) {
            return i64::try_from(c).unwrap_or(i64::MAX).min(1 << 62);
        }
        let args: Vec<Value> = args.iter().map(|p| arg_value(ctx, p)).collect();
        let result = if result.err != 0 {
            Err(state(ctx).take_error(result.err))
        } else {
            Ok(val(result.value).clone())
        };
        let c = s.cost.compute(&args, &result);
        // Costs beyond 2^62 are all "over any limit"; keeping them there leaves the running
        // total far from overflow.
        i64::try_from(c).unwrap_or(i64::MAX).min(1 << 62)
    }

    /// `p₀ + … + pₙ == other` (or `!=`) on strings without building the concatenation:
    /// `pairs` are the pieces' and the other operand's `(value, err)`; the calls' and the
    /// comparison's costs are added to the context's cost (stored by generated code before
    /// the call). A piece that is not a string (a host bound a variable against its
    /// declaration) leaves the evaluation to the interpreter, whose calls decide.
    fn cel_rt_concat_compare(ctx, site_ptr: *const ConcatSite, pairs: *const ValErr, n: i64) -> i64 {
        let s = site(site_ptr);
        let pairs = std::slice::from_raw_parts(pairs, usize::try_from(n).unwrap_or(0));
        let Some((other, pieces)) = pairs.split_last() else {
            return 0;
        };
        let operand = |p: &ValErr| concat_operand(p);
        if let Some(done) = s.compare.eval_strings(pieces.iter().map(operand), operand(other)) {
            return concat_compared(ctx, s, pairs, done);
        }
        let error_of = |i: usize| state(ctx).take_error(pairs[i].err);
        let done = with_concat_operands(pieces, |operands| {
            s.compare.eval(operands, operand(other), &error_of)
        });
        let Some(done) = done else {
            stop(ctx, STATUS_FALLBACK, Error::internal("a concatenated piece is not a string"));
            set_err(ctx, 0);
            return 0;
        };
        concat_compared(ctx, s, pairs, done)
    }

    /// `p₀ + … + pₙ` on strings, built once: `pairs` are the pieces' `(value, err)`; the
    /// calls' costs are added to the context's cost (stored by generated code before the
    /// call). A piece that is not a string (a host bound a variable against its
    /// declaration) leaves the evaluation to the interpreter, whose calls decide.
    fn cel_rt_concat_build(ctx, site_ptr: *const ConcatBuildSite, pairs: *const ValErr, n: i64) -> *const Value {
        let s = site(site_ptr);
        let pairs = std::slice::from_raw_parts(pairs, usize::try_from(n).unwrap_or(0));
        if let Some(done) = s.build.eval_strings(pairs.iter().map(|p| concat_operand(p))) {
            return concat_built(ctx, s, pairs, done);
        }
        let error_of = |i: usize| state(ctx).take_error(pairs[i].err);
        let Some(done) = with_concat_operands(pairs, |operands| s.build.eval(operands, &error_of))
        else {
            stop(ctx, STATUS_FALLBACK, Error::internal("a concatenated piece is not a string"));
            set_err(ctx, 0);
            return &NULL_VALUE;
        };
        concat_built(ctx, s, pairs, done)
    }

    /// Before a call that can build a large value: stops the evaluation (for the
    /// interpreter to redo) when the cost the call will be charged would cross the limit.
    /// The running cost has been stored to the context.
    fn cel_rt_precharge(ctx, site_ptr: *const CostSite, argv: *const *const Value, n: i64) -> i64 {
        let (cost, limit) = cost_and_limit(ctx);
        if limit == i64::MAX {
            return 0;
        }
        let args = values(argv, n);
        let budget = u64::try_from(limit.saturating_sub(cost)).unwrap_or(0);
        if site(site_ptr).cost.precharge(&args, budget).is_some() {
            stop(ctx, STATUS_FALLBACK, Error::cost_limit_exceeded());
        }
        0
    }

    /// The cost of a call of one or two arguments whose cost rule is a built-in formula of
    /// their sizes: `ka`/`kb` are a known size plus one, or 0 to measure the value.
    fn cel_rt_charge2(
        ctx,
        site_ptr: *const CostSite,
        a: *const Value,
        ka: i64,
        b: *const Value,
        kb: i64
    ) -> i64 {
        let _ = ctx;
        let s = site(site_ptr);
        let measure = |p: *const Value, k: i64| match u64::try_from(k) {
            Ok(k) if k > 0 => k - 1,
            _ => ops::actual_size(val(p)),
        };
        let size = |i: usize| match i {
            0 => measure(a, ka),
            1 => measure(b, kb),
            _ => 1,
        };
        let c = s.cost.formula().eval(size);
        i64::try_from(c).unwrap_or(i64::MAX).min(1 << 62)
    }

    /// 1 when a value's cost-model size is not 0 (a non-empty string, bytes, list or map, a
    /// present optional, any other value), else 0.
    fn cel_rt_nonempty(ctx, v: *const Value) -> i64 {
        let _ = ctx;
        i64::from(!ops::actual_size_is_zero(val(v)))
    }

    /// A subtree evaluated by the interpreter, charged against the same budget.
    fn cel_rt_residual(ctx, site_ptr: *const ResidualSite) -> *const Value {
        let s = site(site_ptr);
        let (cost, limit) = cost_and_limit(ctx);
        let remaining = if limit == i64::MAX {
            None
        } else {
            Some(u64::try_from(limit.saturating_sub(cost)).unwrap_or(0))
        };
        let st = state(ctx);
        let ev = s.plan.eval_with_limit(st.activation, remaining);
        let spent = i64::try_from(ev.cost).unwrap_or(i64::MAX).min(1 << 62);
        // The live context, no reference to it held (as in `stop`).
        (*ctx).cost = cost.saturating_add(spent);
        match ev.result {
            Err(e) if !e.is_absorbable() => {
                // Over the limit (or cancelled): the interpreter redoes the whole evaluation
                // for the exact figure.
                stop(ctx, STATUS_FALLBACK, e);
                set_err(ctx, 0);
                &NULL_VALUE
            }
            r => put(ctx, r),
        }
    }

    /// Whether a value is a present optional (0 or 1); an error for a value that is not
    /// an optional.
    fn cel_rt_opt_has_value(ctx, v: *const Value, expr: i64) -> i64 {
        match val(v) {
            Value::Optional(o) => {
                set_err(ctx, 0);
                o.is_some() as i64
            }
            _ => {
                let h = state(ctx).error(Error::no_such_overload().at(expr));
                set_err(ctx, h);
                0
            }
        }
    }

    /// The value inside a present optional.
    fn cel_rt_opt_value(ctx, v: *const Value) -> *const Value {
        let _ = ctx;
        match val(v) {
            Value::Optional(Some(inner)) => Arc::as_ptr(inner),
            _ => &NULL_VALUE,
        }
    }

    /// A copy of a value in storage of its own.
    fn cel_rt_own(ctx, v: *const Value) -> *const Value {
        state(ctx).arena.alloc(val(v).clone())
    }

    /// The mark of a loop iteration's start: where the errors (high half) and the arena's
    /// values (low half) end; `u64::MAX` when there are too many to mark (then nothing is
    /// freed early).
    fn cel_rt_iteration_mark(ctx) -> u64 {
        let st = state(ctx);
        match (st.arena.mark().to_bits(), u32::try_from(st.error_mark())) {
            (Some(values), Ok(errors)) => (u64::from(errors) << 32) | u64::from(values),
            _ => u64::MAX,
        }
    }

    /// A loop's back edge: frees the values and errors made since `mark`, except those held
    /// by the `nvals` value pointers and then `nerrs` error handles in the words at `slots`,
    /// whose new places are written back there. Returns the count of values and errors
    /// made after the release (generated code compares it at the next back edge).
    fn cel_rt_iteration_release(ctx, mark: u64, slots: *mut u64, nvals: u64, nerrs: u64) -> u64 {
        let st = state(ctx);
        release_iteration(st, mark, slots, nvals as usize, nerrs as usize);
        st.arena.made()
    }
}

/// The slot of the `idx`th present field of `o` (in slot order, as `ObjectValue::present`
/// yields them). The present slots are listed once per object and evaluation, for the last
/// few objects iterated over (loops nested over different objects included), so that a loop
/// over an object's fields takes time linear in them, as the interpreter's does.
fn present_slot(st: &mut State<'_>, o: &Arc<ObjectValue>, idx: usize) -> Option<usize> {
    /// Objects remembered: more than loops are usually nested deep.
    const REMEMBERED: usize = 4;
    let at = match st.present_slots.iter().position(|(p, _)| Arc::ptr_eq(p, o)) {
        Some(at) => at,
        None => {
            let slots = (0..o.layout().fields().len())
                .filter(|&i| o.slot(i).is_some())
                .collect();
            if st.present_slots.len() == REMEMBERED {
                st.present_slots.remove(0);
            }
            st.present_slots.push((o.clone(), slots));
            st.present_slots.len() - 1
        }
    };
    st.present_slots[at].1.get(idx).copied()
}

/// The body of `cel_rt_iteration_release`.
///
/// # Safety
///
/// `slots` is an array of `nvals + nerrs` words (when that is positive) that generated code
/// owns and does not touch until this call returns.
unsafe fn release_iteration(
    st: &mut State<'_>,
    mark: u64,
    slots: *mut u64,
    nvals: usize,
    nerrs: usize,
) {
    if mark == u64::MAX {
        return;
    }
    let values_mark = crate::arena::ArenaMark::from_bits(mark as u32);
    let errors_mark = (mark >> 32) as usize;
    let words: &mut [u64] = if nvals + nerrs == 0 {
        &mut []
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(slots, nvals + nerrs) }
    };
    let (values, errors) = words.split_at_mut(nvals);
    st.arena.release(values_mark, values);
    st.release_errors(errors_mark, errors);
}

/// `cel.@mapInsert` on the accumulator's own storage: the map is taken out, updated and put
/// back (an entry, or every entry of `value` when `key` is `None`).
///
/// # Safety
///
/// As for [`owned`].
unsafe fn map_insert_in_place(
    ctx: *mut Ctx<'_>,
    acc: *const Value,
    key: Option<Value>,
    value: Value,
    expr: i64,
) -> *const Value {
    // SAFETY: the caller's contract covers every use of the pointers here.
    unsafe {
        let (p, slot) = owned(ctx, acc);
        let taken = std::mem::replace(slot, Value::Null);
        match ops::map_insert(expr, Ok(taken), key, Ok(value)) {
            Ok(m) => {
                *slot = m;
                set_err(ctx, 0);
                p
            }
            Err(e) => {
                let h = state(ctx).error(e);
                set_err(ctx, h);
                &NULL_VALUE
            }
        }
    }
}

/// Clones `n` values from an array of pointers.
///
/// # Safety
///
/// `argv` is an array of `n` value pointers, each as for [`val`] (when `n` is positive).
unsafe fn values(argv: *const *const Value, n: i64) -> Vec<Value> {
    let n = usize::try_from(n).unwrap_or(0);
    if n == 0 {
        return Vec::new();
    }
    // SAFETY: generated code passes a stack array of `n` value pointers (the caller's
    // contract), each a live value.
    let ptrs = unsafe { std::slice::from_raw_parts(argv, n) };
    ptrs.iter()
        .map(|p| {
            // SAFETY: each pointer is a live value (the caller's contract).
            unsafe { val(*p) }.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shim_is_named_after_its_symbol() {
        for s in Shim::ALL {
            assert!(s.name().starts_with("cel_rt_"), "{}", s.name());
            assert_eq!(Shim::by_name(s.name()), Some(*s));
            assert!(!s.address().is_null());
            assert_eq!(s.params()[0], types::I64, "the context comes first");
        }
    }

    #[test]
    fn a_panicking_body_stops_the_evaluation() {
        let activation = cel_runtime::EmptyActivation;
        let names = Default::default();
        let mut st = State {
            activation: &activation,
            arena: Default::default(),
            errors: Vec::new(),
            stop: None,
            names: &names,
            present_slots: Vec::new(),
        };
        let mut ctx = Ctx {
            cost: 0,
            limit: i64::MAX,
            result: 0,
            err_out: 0,
            result_err: 0,
            status: 0,
            made: st.arena.made_counter(),
            state: &mut st,
            interrupt: &crate::abi::NEVER_INTERRUPTED,
        };
        // SAFETY: `ctx` is live and points at `st`, neither otherwise in use during the call.
        let r: i64 = unsafe { guard(&mut ctx, || panic!("boom")) };
        assert_eq!(r, 0);
        assert_eq!(ctx.status, STATUS_FATAL);
        assert_eq!(ctx.limit, -1);
        assert!(st.stop.as_ref().unwrap().to_string().contains("boom"));
    }
}
