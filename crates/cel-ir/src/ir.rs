//! The IR's entities: functions of basic blocks with parameters, typed SSA values, and
//! instructions named by what they do (CEL calls by overload id).
//!
//! Errors are explicit: an instruction that can fail has two results, its value and an
//! `err` handle (0 when it succeeded). Error handles flow like any other value, so CEL's
//! absorption of errors by `&&`, `||` and comprehensions is ordinary control flow.

use std::fmt;
use std::sync::Arc;

use cel_syntax::{ExprId, Literal};

/// An SSA value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Value(pub u32);

/// A basic block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Block(pub u32);

/// A constant of the function's pool (a value that is not a scalar: a string, bytes, a list,
/// a type, a folded constant).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstId(pub u32);

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.0)
    }
}

impl fmt::Display for Block {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bb{}", self.0)
    }
}

impl fmt::Display for ConstId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "k{}", self.0)
    }
}

/// The type of an SSA value: how generated code holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// A CEL `int`, unboxed.
    Int,
    /// A CEL `uint`, unboxed.
    Uint,
    /// A CEL `double`, unboxed.
    Double,
    /// A CEL `bool`, unboxed.
    Bool,
    /// Any CEL value, by reference (a pointer to a runtime value).
    Val,
    /// An error handle: 0 for no error.
    Err,
    /// A loop counter or size (not a CEL value).
    Index,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ty::Int => "int",
            Ty::Uint => "uint",
            Ty::Double => "double",
            Ty::Bool => "bool",
            Ty::Val => "val",
            Ty::Err => "err",
            Ty::Index => "index",
        })
    }
}

/// What a constant of the pool is.
#[derive(Clone, Debug, PartialEq)]
pub enum Constant {
    /// A literal (strings, bytes, null; scalars when they must be boxed).
    Literal(Literal),
    /// A type value, by the type's name (`int`, `list`, `net.IP`).
    Type(Arc<str>),
    /// A list of constants.
    List(Vec<ConstId>),
    /// A value computed when the program is built: the expression with this id, folded by
    /// cel-go's `OptOptimize` (evaluated once by the backend).
    Folded(ExprId),
}

/// An integer or unsigned operation with CEL's overflow checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CmpOp {
    /// The operator's text.
    pub fn text(self) -> &'static str {
        match self {
            CmpOp::Eq => "eq",
            CmpOp::Ne => "ne",
            CmpOp::Lt => "lt",
            CmpOp::Le => "le",
            CmpOp::Gt => "gt",
            CmpOp::Ge => "ge",
        }
    }
}

impl ArithOp {
    /// The operator's text.
    pub fn text(self) -> &'static str {
        match self {
            ArithOp::Add => "add",
            ArithOp::Sub => "sub",
            ArithOp::Mul => "mul",
            ArithOp::Div => "div",
            ArithOp::Rem => "rem",
        }
    }
}

/// One instruction. Fallible instructions have two results, `(value, err)`.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// An `int` constant.
    IntConst(i64),
    /// A `uint` constant.
    UintConst(u64),
    /// A `double` constant.
    DoubleConst(f64),
    /// A `bool` constant.
    BoolConst(bool),
    /// A pooled constant value.
    ValConst(ConstId),
    /// The "no error" handle.
    NoErr,
    /// A variable of the activation: `(val, err)`.
    LoadVar(Arc<str>),
    /// A scalar as a value (`Int`, `Uint`, `Double` or `Bool` in, `Val` out).
    Box,
    /// A value's scalar of the given type: `(scalar, err)`; "no such overload" when the
    /// value is of another type.
    Unbox(Ty),
    /// `operand.field`: `(val, err)`. `object` when the operand's checked type is a message or
    /// schema object type (fields at fixed slots, which native code may read directly).
    Select { field: Arc<str>, object: bool },
    /// `operand.?field`: `(val, err)`.
    OptSelect { field: Arc<str> },
    /// `has(operand.field)`: `(bool, err)`. `object` as for [`Op::Select`].
    Has { field: Arc<str>, object: bool },
    /// `operand[index]`: `(val, err)`.
    Index,
    /// `operand[?index]`: `(val, err)`.
    OptIndex,
    /// A strict call of a library function on values (receiver first): `(val, err)`, or
    /// `(int, err)` for `size` on standard types (the one call whose result is held as a
    /// scalar; a result of another type would be "no such overload"). `overloads` are the ids
    /// the checker resolved; `dynamic` adds every overload of the function with the same
    /// arity, dispatched on the arguments' runtime types.
    Call {
        function: Arc<str>,
        overloads: Vec<Arc<str>>,
        member: bool,
        dynamic: bool,
    },
    /// `s.matches(re)` with a constant pattern, compiled once: `(bool, err)`.
    MatchesConst { pattern: Arc<str> },
    /// Checked `int` arithmetic: `(int, err)`.
    IntArith(ArithOp),
    /// Checked `uint` arithmetic: `(uint, err)`.
    UintArith(ArithOp),
    /// `double` arithmetic (IEEE, never fails).
    DoubleArith(ArithOp),
    /// `-x` on an `int`: `(int, err)`.
    IntNeg,
    /// `-x` on a `double`.
    DoubleNeg,
    /// `!x` on a `bool`.
    Not,
    /// A comparison of two scalars of the same type (`int`, `uint`, `bool`).
    ScalarCmp(CmpOp),
    /// A comparison of two doubles: `(bool, err)` (ordering NaN is an error).
    DoubleCmp(CmpOp),
    /// CEL equality (`==`, `!=`) of two values of any types.
    ValEq { negate: bool },
    /// `p₀ + p₁ + … + pₙ == other` (`!=` when `negate`), every `+` string concatenation
    /// (`add_string`), without building the concatenation: args `[p₀, e₀, …, pₙ, eₙ, other,
    /// other_err]`, result `(bool, err)` as the calls and the comparison would give them;
    /// it charges their costs too. `steps` are the `+` calls, innermost first.
    ConcatCompare { negate: bool, steps: Vec<ExprId> },
    /// `p₀ + p₁ + … + pₙ`, every `+` string concatenation (`add_string`), built once: args
    /// `[p₀, e₀, …, pₙ, eₙ]`, result `(val, err)` as the calls would give them; it charges
    /// their costs too. `steps` are the `+` calls, innermost first.
    ConcatBuild { steps: Vec<ExprId> },
    /// Ordering of two values of any types: `(bool, err)`. The call's function, overloads and
    /// dynamic dispatch are as for [`Op::Call`], for the values that are not two `int`s.
    ValCmp {
        op: CmpOp,
        function: Arc<str>,
        overloads: Vec<Arc<str>>,
        dynamic: bool,
    },
    /// The first error of two: `a` if it is an error, else `b`.
    ErrOr,
    /// Whether an error handle is an error.
    IsErr,
    /// A new error handle ("no such overload") attached to this instruction's expression.
    NoSuchOverload,
    /// The error of a field read that repeats an earlier one (`passes::share_reads`): none
    /// when the earlier read's error handle (the operand) is none, else the same error as the
    /// repeated read raises, attached to this instruction's expression where the earlier
    /// read attached it to its own, `from`.
    ErrAgain { from: ExprId },
    /// A new list value from element values.
    MakeList,
    /// Adds an optional element (`[?e]`) to a list being built, in place: `(val, err)`.
    ListPushOpt,
    /// A new empty map, to be filled in place.
    MapNew,
    /// Adds an entry to a map being built, in place (`{k: v}`, or `{?k: v}` when
    /// `optional`): `(val, err)`.
    MapEntry { optional: bool },
    /// A new message value: `(val, err)`.
    MakeStruct {
        type_name: Arc<str>,
        fields: Vec<(Arc<str>, bool)>,
    },
    /// The number of iterations over a comprehension's range: `(index, err)`.
    IterLen,
    /// The first comprehension variable for iteration `i`: the list element (or, with two
    /// variables, the index) or the map key.
    IterKey { two_var: bool },
    /// The `i`-th map value of a range (the list element again, for lists).
    IterValue,
    /// `acc + [elem]` in place: the accumulator list with one more element.
    ListAppend,
    /// `cel.@mapInsert(acc, key, value)` in place: `(val, err)`.
    MapInsert,
    /// `cel.@mapInsert(acc, map)` in place: `(val, err)`.
    MapMerge,
    /// `x in [constants]` as a set test.
    InSet(Vec<ConstId>),
    /// Charges a constant cost (the pass `aggregate_costs` merges runs of these).
    Charge(u64),
    /// Charges several constant costs at once, in this order: the result of merging.
    ChargeRegion(Vec<u64>),
    /// Charges the cost of a call computed from its arguments and result (size-dependent
    /// rules, library and host hooks): args then result as operands.
    ChargeCall {
        function: Arc<str>,
        overload: Arc<str>,
        /// The call's first argument (a member call's receiver) in the checked AST, whose
        /// type decides which cost hooks can apply.
        first_arg: Option<ExprId>,
        /// The call is a comprehension's `acc + [x]`, appended in place, whose second
        /// operand here is the element `x`: a cost hook sees the list `[x]`.
        appends: bool,
    },
    /// Evaluates a subtree with the interpreter (a residual): `(val, err)`.
    Residual(ExprId),
    /// Index arithmetic: `a + 1` on loop counters.
    IndexInc,
    /// Index comparison: `a < b`.
    IndexLt,
    /// Copies a value (used to give a block argument a fresh name).
    Copy,
    /// Combines the operands of `&&` once both sides were evaluated: args `[l, l_err, r,
    /// r_err]` (`l` and `r` are `bool`), result `(bool, err)` by CEL's commutative rules.
    LogicalAnd,
    /// As [`Op::LogicalAnd`], for `||`.
    LogicalOr,
    /// `@not_strictly_false`: args `[v, err]`; false only for a `false` without error.
    NotStrictlyFalse,
    /// Whether an optional value has a value: `(bool, err)`; "no such overload" for a value
    /// that is not optional.
    OptHasValue,
    /// The value inside a present optional.
    OptValue,
    /// Reads a local variable slot.
    LocalGet(u32),
    /// Writes a local variable slot.
    LocalSet(u32),
    /// Charges a constant cost if the error operand is not an error.
    ChargeIfOk(u64),
    /// Charges a constant cost if the `bool` operand is false.
    ChargeUnless(u64),
    /// Charges the qualifier of a field or index step, args `[operand, operand_err, result,
    /// result_err]`, as `cel_interp::ops::qualifier_charged` decides: when the operand
    /// resolved, unless the step is in an optional chain (it is optional itself, or the
    /// operand is an optional value) and found nothing.
    ChargeQualifier { cost: u64, optional: bool },
    /// Both of two plain booleans.
    BoolAnd,
    /// A value in storage of its own (a lazily initialised accumulator that steps update in
    /// place must not alias the value it was initialised from).
    Own,
    /// Where the evaluation's temporaries (values and errors) end now: a mark taken before
    /// a loop whose body may make values.
    ArenaMark,
    /// At a loop's back edge, if anything was made since the last release: frees the values
    /// and errors made since the mark (the operand), except those the listed local slots hold, which move to new storage and
    /// the slots with them. So a loop's temporaries die with their iteration.
    ArenaRelease { vals: Vec<u32>, errs: Vec<u32> },
}

/// One instruction with its results and operands.
#[derive(Clone, Debug, PartialEq)]
pub struct Inst {
    /// What it does.
    pub op: Op,
    /// Its operands.
    pub args: Vec<Value>,
    /// Its results (0, 1, or 2 for fallible instructions: value then err).
    pub results: Vec<Value>,
    /// The CEL expression it belongs to (errors are attached to it).
    pub expr: ExprId,
}

/// How a block ends.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    /// Unconditional jump with arguments for the target's parameters.
    Jump(Block, Vec<Value>),
    /// Conditional branch on a `bool`.
    Branch {
        cond: Value,
        then: (Block, Vec<Value>),
        otherwise: (Block, Vec<Value>),
    },
    /// The function's result: a value (any type but `Err`) and an error handle.
    Return { value: Value, err: Value },
}

impl Term {
    /// The blocks control may go to next (a branch's two, even when they are one block).
    pub fn successors(&self) -> impl Iterator<Item = Block> {
        let (a, b) = match self {
            Term::Jump(t, _) => (Some(*t), None),
            Term::Branch {
                then, otherwise, ..
            } => (Some(then.0), Some(otherwise.0)),
            Term::Return { .. } => (None, None),
        };
        a.into_iter().chain(b)
    }
}

/// A basic block.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockData {
    /// Parameters, bound by the jumps that enter the block.
    pub params: Vec<Value>,
    /// Instructions in order.
    pub insts: Vec<Inst>,
    /// The terminator (always set in a finished function).
    pub term: Option<Term>,
}

/// A compiled CEL expression.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    /// The blocks; the first is the entry.
    pub blocks: Vec<BlockData>,
    /// The type of each value.
    pub types: Vec<Ty>,
    /// The constant pool.
    pub consts: Vec<Constant>,
    /// The types of local variable slots (comprehension state).
    pub locals: Vec<Ty>,
}

impl Function {
    /// The entry block.
    pub fn entry(&self) -> Block {
        Block(0)
    }

    /// The type of a value.
    pub fn ty(&self, v: Value) -> Ty {
        self.types[v.0 as usize]
    }

    /// A block's data.
    pub fn block(&self, b: Block) -> &BlockData {
        &self.blocks[b.0 as usize]
    }

    /// The indexes of the blocks the entry reaches, in reverse post-order. Jumps to blocks
    /// outside the function are ignored (the verifier asks this of broken functions too).
    pub fn reverse_post_order(&self) -> Vec<usize> {
        let n = self.blocks.len();
        let successors = |b: usize| -> Vec<Block> {
            self.blocks[b]
                .term
                .as_ref()
                .map(|t| t.successors().collect())
                .unwrap_or_default()
        };
        let mut seen = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let mut stack: Vec<(usize, Vec<Block>)> = Vec::new();
        if n > 0 {
            seen[0] = true;
            stack.push((0, successors(0)));
        }
        while let Some((b, rest)) = stack.last_mut() {
            let b = *b;
            match rest.pop() {
                Some(s) if (s.0 as usize) < n && !seen[s.0 as usize] => {
                    let s = s.0 as usize;
                    seen[s] = true;
                    stack.push((s, successors(s)));
                }
                Some(_) => {}
                None => {
                    order.push(b);
                    stack.pop();
                }
            }
        }
        order.reverse();
        order
    }

    /// The number of instructions.
    pub fn inst_count(&self) -> usize {
        self.blocks.iter().map(|b| b.insts.len()).sum()
    }

    /// The expressions evaluated by the interpreter (residuals).
    pub fn residuals(&self) -> Vec<ExprId> {
        let mut out = Vec::new();
        for b in &self.blocks {
            for i in &b.insts {
                if let Op::Residual(id) = i.op {
                    out.push(id);
                }
            }
        }
        out
    }
}

/// Builds a [`Function`]: creates blocks and values and appends instructions to the current
/// block.
///
/// It also keeps what the lowering needs to know while it builds: how many instructions
/// there are (for the size budget), the dominator tree of the blocks entered so far (so a
/// lazily initialised value is computed once where one computation dominates the others),
/// and which local slots the loops being built write.
#[derive(Debug, Default)]
pub struct Builder {
    func: Function,
    current: Option<Block>,
    insts: usize,
    /// Pooled constants by their text, so that adding one is not a search of the pool.
    const_index: std::collections::HashMap<String, ConstId>,
    /// Per block: the forward predecessors seen so far.
    preds: Vec<Vec<u32>>,
    /// Per block: its immediate dominator and depth in the dominator tree, set when the
    /// block is first entered (`None`: not entered yet, or entered without predecessors).
    idom: Vec<Option<(u32, u32)>>,
    entered: Vec<bool>,
    /// False once an edge reached a block after it was entered (other than a loop's back
    /// edge): dominance answers given before may then be wrong.
    dominance_sound: bool,
    /// False once the function is known to be discarded (over budget): the dominator tree
    /// is no longer kept, which would cost time for nothing.
    tracking: bool,
    /// For each loop being built: the `val` and `err` local slots its body writes.
    loop_writes: Vec<std::collections::BTreeSet<u32>>,
    /// The number of instructions with a `val` result that may allocate one.
    allocating: usize,
}

impl Builder {
    /// A builder for a new function, positioned at its entry block.
    pub fn new() -> Builder {
        let mut b = Builder {
            dominance_sound: true,
            tracking: true,
            ..Builder::default()
        };
        let entry = b.create_block();
        b.switch_to(entry);
        b
    }

    /// Finishes the function.
    pub fn finish(self) -> Function {
        self.func
    }

    /// The number of instructions appended so far.
    pub fn inst_count(&self) -> usize {
        self.insts
    }

    /// The number of instructions appended so far that produce a `val` which may be a new
    /// value (everything but reads of locals, variables and constants).
    pub fn allocating_count(&self) -> usize {
        self.allocating
    }

    /// Whether every path from the entry to `b` passes through `a`, as far as the blocks
    /// entered so far show. Always false for blocks not entered yet, and once
    /// [`Builder::dominance_sound`] is false the answer may be wrong.
    pub fn dominates(&self, a: Block, b: Block) -> bool {
        let (a, mut b) = (a.0, b.0);
        let depth = |x: u32| self.idom[x as usize].map_or(0, |(_, d)| d);
        if !self.tracking || !self.entered[a as usize] || !self.entered[b as usize] {
            return false;
        }
        let da = depth(a);
        while depth(b) > da {
            match self.idom[b as usize] {
                Some((p, _)) => b = p,
                None => return false,
            }
        }
        a == b
    }

    /// Stops keeping the dominator tree: the function will be discarded. From then on
    /// [`Builder::dominates`] answers false.
    pub fn stop_tracking(&mut self) {
        self.tracking = false;
    }

    /// Whether blocks were only ever entered once all their forward predecessors were
    /// known, which [`Builder::dominates`] relies on.
    pub fn dominance_sound(&self) -> bool {
        self.dominance_sound
    }

    /// Starts recording the `val` and `err` local slots written, for a loop's body.
    pub fn begin_loop_writes(&mut self) {
        self.loop_writes.push(std::collections::BTreeSet::new());
    }

    /// Stops recording for the innermost loop: the slots its body wrote, in order.
    pub fn end_loop_writes(&mut self) -> Vec<u32> {
        self.loop_writes
            .pop()
            .map(|s| s.into_iter().collect())
            .unwrap_or_default()
    }

    /// A new empty block.
    pub fn create_block(&mut self) -> Block {
        self.func.blocks.push(BlockData::default());
        self.preds.push(Vec::new());
        self.idom.push(None);
        self.entered.push(false);
        Block(self.func.blocks.len() as u32 - 1)
    }

    /// Appends instructions to `b` from now on. Entering a block for the first time fixes
    /// its immediate dominator from the predecessors known then: the lowering enters a
    /// block only after every forward jump to it was made.
    pub fn switch_to(&mut self, b: Block) {
        self.current = Some(b);
        let bi = b.0 as usize;
        if self.entered[bi] {
            return;
        }
        self.entered[bi] = true;
        if bi == 0 || !self.tracking {
            return;
        }
        let mut common: Option<u32> = None;
        for &p in &self.preds[bi] {
            if !self.entered[p as usize] || (p != 0 && self.idom[p as usize].is_none()) {
                continue;
            }
            common = Some(match common {
                None => p,
                Some(c) => self.common_dominator(c, p),
            });
        }
        self.idom[bi] = common.map(|c| (c, self.idom[c as usize].map_or(0, |(_, d)| d) + 1));
    }

    /// The nearest block that dominates both `a` and `b` (both entered).
    fn common_dominator(&self, mut a: u32, mut b: u32) -> u32 {
        let depth = |x: u32| self.idom[x as usize].map_or(0, |(_, d)| d);
        while depth(a) > depth(b) {
            a = self.idom[a as usize].map_or(0, |(p, _)| p);
        }
        while depth(b) > depth(a) {
            b = self.idom[b as usize].map_or(0, |(p, _)| p);
        }
        while a != b {
            a = self.idom[a as usize].map_or(0, |(p, _)| p);
            b = self.idom[b as usize].map_or(0, |(p, _)| p);
        }
        a
    }

    /// Records the edge `from → to`.
    fn add_edge(&mut self, from: Block, to: Block) {
        let ti = to.0 as usize;
        if self.tracking && self.entered[ti] && !self.dominates(to, from) {
            // A forward edge into a block already entered: its dominator may be wrong.
            self.dominance_sound = false;
        }
        self.preds[ti].push(from.0);
    }

    /// The block instructions go to.
    pub fn current(&self) -> Block {
        self.current.expect("builder positioned")
    }

    /// Whether the current block already has its terminator.
    pub fn is_terminated(&self) -> bool {
        self.func.blocks[self.current().0 as usize].term.is_some()
    }

    /// The types of the local slots created so far.
    pub fn locals(&self) -> &[Ty] {
        &self.func.locals
    }

    /// A new local variable slot.
    pub fn new_local(&mut self, ty: Ty) -> u32 {
        self.func.locals.push(ty);
        self.func.locals.len() as u32 - 1
    }

    /// A new value of a type.
    pub fn new_value(&mut self, ty: Ty) -> Value {
        self.func.types.push(ty);
        Value(self.func.types.len() as u32 - 1)
    }

    /// Adds a parameter to a block.
    pub fn add_param(&mut self, b: Block, ty: Ty) -> Value {
        let v = self.new_value(ty);
        self.func.blocks[b.0 as usize].params.push(v);
        v
    }

    /// The type of a value.
    pub fn ty(&self, v: Value) -> Ty {
        self.func.types[v.0 as usize]
    }

    /// Adds a constant to the pool (reusing an equal one).
    pub fn constant(&mut self, c: Constant) -> ConstId {
        // The text identifies a constant (`Debug` prints every part of it); NaNs, unequal to
        // themselves, then share one entry, which is harmless.
        let key = format!("{c:?}");
        if let Some(id) = self.const_index.get(&key) {
            return *id;
        }
        self.func.consts.push(c);
        let id = ConstId(self.func.consts.len() as u32 - 1);
        self.const_index.insert(key, id);
        id
    }

    /// Appends an instruction with results of the given types.
    pub fn inst(
        &mut self,
        op: Op,
        args: Vec<Value>,
        result_types: &[Ty],
        expr: ExprId,
    ) -> Vec<Value> {
        let block = self.current();
        self.inst_in(block, op, args, result_types, expr)
    }

    /// Appends an instruction to `block`, the current one or another, even one already
    /// terminated (it goes before the terminator).
    pub fn inst_in(
        &mut self,
        block: Block,
        op: Op,
        args: Vec<Value>,
        result_types: &[Ty],
        expr: ExprId,
    ) -> Vec<Value> {
        let results: Vec<Value> = result_types.iter().map(|t| self.new_value(*t)).collect();
        self.note(&op, &args, result_types);
        self.func.blocks[block.0 as usize].insts.push(Inst {
            op,
            args,
            results: results.clone(),
            expr,
        });
        results
    }

    /// Counts an instruction and records the local slots it writes.
    fn note(&mut self, op: &Op, args: &[Value], result_types: &[Ty]) {
        self.insts += 1;
        if result_types.first() == Some(&Ty::Val)
            && !matches!(op, Op::LocalGet(_) | Op::LoadVar(_) | Op::ValConst(_))
        {
            self.allocating += 1;
        }
        if let (Op::LocalSet(slot), [v]) = (op, args)
            && matches!(self.ty(*v), Ty::Val | Ty::Err)
        {
            for frame in &mut self.loop_writes {
                frame.insert(*slot);
            }
        }
    }

    /// Appends an instruction with one result.
    pub fn inst1(&mut self, op: Op, args: Vec<Value>, ty: Ty, expr: ExprId) -> Value {
        self.inst(op, args, &[ty], expr)[0]
    }

    /// Appends a fallible instruction: `(value, err)`.
    pub fn inst2(&mut self, op: Op, args: Vec<Value>, ty: Ty, expr: ExprId) -> (Value, Value) {
        let r = self.inst(op, args, &[ty, Ty::Err], expr);
        (r[0], r[1])
    }

    /// Appends an instruction without results.
    pub fn inst0(&mut self, op: Op, args: Vec<Value>, expr: ExprId) {
        self.inst(op, args, &[], expr);
    }

    /// Ends the current block.
    pub fn terminate(&mut self, t: Term) {
        let from = self.current();
        let b = from.0 as usize;
        debug_assert!(self.func.blocks[b].term.is_none(), "block terminated twice");
        match &t {
            Term::Jump(to, _) => self.add_edge(from, *to),
            Term::Branch {
                then, otherwise, ..
            } => {
                self.add_edge(from, then.0);
                self.add_edge(from, otherwise.0);
            }
            Term::Return { .. } => {}
        }
        self.func.blocks[b].term = Some(t);
    }

    /// Ends the current block with a jump.
    pub fn jump(&mut self, target: Block, args: Vec<Value>) {
        self.terminate(Term::Jump(target, args));
    }

    /// Ends the current block with a conditional branch.
    pub fn branch(
        &mut self,
        cond: Value,
        then: (Block, Vec<Value>),
        otherwise: (Block, Vec<Value>),
    ) {
        self.terminate(Term::Branch {
            cond,
            then,
            otherwise,
        });
    }
}
