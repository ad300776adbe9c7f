//! Macros: calls that the parser rewrites into other expressions as it builds the tree.
//!
//! A [`Macro`] is matched by name, call style (global `f(x)` or receiver `x.f(y)`) and argument
//! count; its [`MacroExpander`] receives the already-parsed target and arguments and an
//! [`ExprFactory`] to build new nodes with. The [`MacroTable`] in
//! [`ParserOptions`](crate::ParserOptions) decides which macros are active: libraries extend it
//! (two-variable comprehensions, `cel.bind`, `math.greatest`, ...), which is why everything here
//! is public.
//!
//! The standard macros ([`standard_macros`]) and the optional-library macros
//! ([`optional_macros`]) expand exactly as cel-go's do, node for node and in the same id order,
//! so that ASTs, ids and error positions line up with cel-go's.
//!
//! [`block_test_macros`] are cel-spec's test-only `cel.block`, `cel.index`, `cel.iterVar` and
//! `cel.accuVar`, which write the internal [`BLOCK_FUNCTION`] and its index identifiers
//! directly.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::ast::{
    Call, Comprehension, Expr, ExprId, ExprKind, ListExpr, Literal, MapEntry, MapExpr,
    NodePosition, Select, Span, StructExpr, StructField,
};
use crate::operators;

/// Whether a macro is called as a global function or on a receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacroStyle {
    /// `name(args)`.
    Global,
    /// `target.name(args)`.
    Receiver,
}

/// How many arguments a macro takes (the receiver not counted).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacroArity {
    /// Exactly this many.
    Exact(usize),
    /// Any number; consulted only when no exact-arity macro of the same name matches.
    VarArg,
}

/// Expands one macro call. Receives the factory, the receiver (for receiver-style macros) and
/// the arguments. `Ok(Some(e))` replaces the call by `e`; `Ok(None)` declines, leaving an
/// ordinary call; `Err` reports a diagnostic at [`MacroError::expr_id`].
///
/// Every node the expansion creates must come from the factory (or [`ExprFactory::copy`]), so
/// that ids stay unique and positions are known. Arguments may be used at most once each; use
/// [`ExprFactory::copy`] to use one twice.
pub type MacroExpander = Arc<dyn Expand>;

/// The function a [`MacroExpander`] holds (see there); every closure with its signature is
/// one, so macro constructors take `impl Expand`.
pub trait Expand:
    Fn(&mut ExprFactory<'_>, Option<Expr>, Vec<Expr>) -> Result<Option<Expr>, MacroError>
    + Send
    + Sync
    + 'static
{
}

impl<F> Expand for F where
    F: Fn(&mut ExprFactory<'_>, Option<Expr>, Vec<Expr>) -> Result<Option<Expr>, MacroError>
        + Send
        + Sync
        + 'static
{
}

/// A macro definition.
#[derive(Clone)]
pub struct Macro {
    /// The function name the macro replaces (`all`, `has`, `bind`, ...).
    pub name: String,
    /// Global or receiver style.
    pub style: MacroStyle,
    /// Accepted argument count.
    pub arity: MacroArity,
    /// The expansion.
    pub expander: MacroExpander,
}

impl Macro {
    fn new(
        name: impl Into<String>,
        style: MacroStyle,
        arity: MacroArity,
        expander: impl Expand,
    ) -> Macro {
        Macro {
            name: name.into(),
            style,
            arity,
            expander: Arc::new(expander),
        }
    }

    /// A global macro `name(a1, ..., an)` with exactly `args` arguments. The expander's target
    /// is always `None`.
    pub fn global(name: impl Into<String>, args: usize, expander: impl Expand) -> Macro {
        Macro::new(name, MacroStyle::Global, MacroArity::Exact(args), expander)
    }

    /// A receiver macro `target.name(a1, ..., an)` with exactly `args` arguments. The
    /// expander's target is always `Some`.
    pub fn receiver(name: impl Into<String>, args: usize, expander: impl Expand) -> Macro {
        Macro::new(
            name,
            MacroStyle::Receiver,
            MacroArity::Exact(args),
            expander,
        )
    }

    /// A global macro taking any number of arguments.
    pub fn global_vararg(name: impl Into<String>, expander: impl Expand) -> Macro {
        Macro::new(name, MacroStyle::Global, MacroArity::VarArg, expander)
    }

    /// A receiver macro taking any number of arguments.
    pub fn receiver_vararg(name: impl Into<String>, expander: impl Expand) -> Macro {
        Macro::new(name, MacroStyle::Receiver, MacroArity::VarArg, expander)
    }

    /// cel-go's key for the macro: `name:argc:receiver`, or `name:*:receiver` for var-args.
    pub fn key(&self) -> String {
        let arity = match self.arity {
            MacroArity::Exact(n) => n.to_string(),
            MacroArity::VarArg => "*".to_string(),
        };
        format!(
            "{}:{}:{}",
            self.name,
            arity,
            self.style == MacroStyle::Receiver
        )
    }
}

impl fmt::Debug for Macro {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Macro")
            .field("name", &self.name)
            .field("style", &self.style)
            .field("arity", &self.arity)
            .finish_non_exhaustive()
    }
}

/// Why a macro call could not be expanded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MacroError {
    /// The message, in cel-go's words.
    pub message: String,
    /// The node the error is reported at; 0 means the macro call itself.
    pub expr_id: ExprId,
}

impl MacroError {
    /// An error at `expr_id` (0 for the call).
    pub fn new(expr_id: ExprId, message: impl Into<String>) -> MacroError {
        MacroError {
            message: message.into(),
            expr_id,
        }
    }
}

impl fmt::Display for MacroError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MacroError {}

/// The set of macros a parser expands.
#[derive(Clone, Default)]
pub struct MacroTable {
    macros: Vec<Macro>,
    by_name: HashMap<String, Vec<usize>>,
}

impl MacroTable {
    /// An empty table: no call is a macro.
    pub fn new() -> MacroTable {
        MacroTable::default()
    }

    /// The standard macros: `has`, `all`, `exists`, `exists_one`, `map` (2 and 3 arguments) and
    /// `filter`.
    pub fn standard() -> MacroTable {
        let mut table = MacroTable::new();
        table.extend(standard_macros());
        table
    }

    /// Adds a macro, replacing one with the same name, style and arity.
    pub fn add(&mut self, m: Macro) {
        let slots = self.by_name.entry(m.name.clone()).or_default();
        for &i in slots.iter() {
            let old = &self.macros[i];
            if old.style == m.style && old.arity == m.arity {
                self.macros[i] = m;
                return;
            }
        }
        slots.push(self.macros.len());
        self.macros.push(m);
    }

    /// Adds several macros.
    pub fn extend(&mut self, macros: impl IntoIterator<Item = Macro>) {
        for m in macros {
            self.add(m);
        }
    }

    /// The macro for a call named `name` with `argc` arguments, receiver style or not: an
    /// exact-arity macro if there is one, else a var-arg one.
    pub fn find(&self, name: &str, receiver_style: bool, argc: usize) -> Option<&Macro> {
        let slots = self.by_name.get(name)?;
        let style = if receiver_style {
            MacroStyle::Receiver
        } else {
            MacroStyle::Global
        };
        let candidates = || {
            slots
                .iter()
                .map(|&i| &self.macros[i])
                .filter(|m| m.style == style)
        };
        candidates()
            .find(|m| m.arity == MacroArity::Exact(argc))
            .or_else(|| candidates().find(|m| m.arity == MacroArity::VarArg))
    }

    /// The macros, in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = &Macro> {
        self.macros.iter()
    }

    /// How many macros the table holds.
    pub fn len(&self) -> usize {
        self.macros.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.macros.is_empty()
    }
}

impl fmt::Debug for MacroTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.macros.iter().map(Macro::key))
            .finish()
    }
}

/// Id allocation, positions and depths of the nodes of one parse; shared by the parser and the
/// macro factory.
#[derive(Debug)]
pub(crate) struct NodeStore {
    pub(crate) next_id: ExprId,
    pub(crate) positions: HashMap<ExprId, NodePosition>,
    /// AST depth of each node (a leaf is 1), indexed by id; 0 when unknown.
    depths: Vec<u32>,
    /// The most ids a parse may hand out (see [`NodeStore::node_budget`]).
    budget: ExprId,
}

impl NodeStore {
    pub(crate) fn new(capacity: usize, budget: ExprId) -> NodeStore {
        NodeStore {
            next_id: 1,
            positions: HashMap::with_capacity(capacity),
            depths: Vec::with_capacity(capacity + 1),
            budget,
        }
    }

    /// The most nodes the parse of `source_len` bytes may build, macro expansions included:
    /// 32 per byte, and 16,384 for any source up to 512 bytes. Macros that copy an argument
    /// (`optMap`, `optFlatMap`, as in cel-go) double their target at each link of a chain,
    /// so twenty links in 280 characters would be a million nodes and gigabytes; expansions
    /// that do not copy make a few nodes per byte at most. (A floor of 65,536 nodes let 400
    /// bytes of chained `optMap` take 0.2 s and 57 MB to check.)
    pub(crate) fn node_budget(source_len: usize) -> ExprId {
        let nodes = source_len.max(512).saturating_mul(32);
        ExprId::try_from(nodes).unwrap_or(ExprId::MAX)
    }

    /// The node budget of this parse.
    pub(crate) fn budget(&self) -> ExprId {
        self.budget
    }

    /// Whether the parse has handed out more ids than its budget.
    pub(crate) fn over_budget(&self) -> bool {
        self.next_id > self.budget
    }

    /// A fresh id, with no position yet.
    pub(crate) fn new_id(&mut self) -> ExprId {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    pub(crate) fn set_position(&mut self, id: ExprId, span: Span, anchor: u32) {
        self.positions.insert(id, NodePosition { span, anchor });
    }

    /// Forgets an id that no node ended up using; the last id allocated is handed out again.
    pub(crate) fn delete_id(&mut self, id: ExprId) {
        self.positions.remove(&id);
        if id == self.next_id - 1 {
            self.next_id -= 1;
            self.set_depth(id, 0);
        }
    }

    pub(crate) fn set_depth(&mut self, id: ExprId, depth: u32) {
        let Ok(i) = usize::try_from(id) else {
            return;
        };
        if i >= self.depths.len() {
            if depth == 0 {
                return;
            }
            self.depths.resize(i + 1, 0);
        }
        self.depths[i] = depth;
    }

    fn known_depth(&self, id: ExprId) -> Option<u32> {
        let i = usize::try_from(id).ok()?;
        self.depths.get(i).copied().filter(|&d| d > 0)
    }

    /// The depth of a tree: recorded depths are trusted, other nodes are walked.
    pub(crate) fn depth_of(&self, e: &Expr) -> u32 {
        if let Some(d) = self.known_depth(e.id) {
            return d;
        }
        // Iterative post-order walk, so a hand-built deep tree cannot overflow the stack.
        let mut best = 0;
        let mut stack = vec![(e, 1u32)];
        while let Some((node, level)) = stack.pop() {
            if let Some(d) = self.known_depth(node.id).filter(|_| !std::ptr::eq(node, e)) {
                best = best.max(level - 1 + d);
                continue;
            }
            best = best.max(level);
            node.for_each_child(&mut |c| stack.push((c, level + 1)));
        }
        best
    }

    /// Records the depth of a node whose children are already recorded.
    pub(crate) fn record(&mut self, e: &Expr) -> u32 {
        let mut child = 0;
        e.for_each_child(&mut |c| child = child.max(self.depth_of(c)));
        let depth = child.saturating_add(1);
        self.set_depth(e.id, depth);
        depth
    }
}

/// Builds the nodes of a macro expansion. Every node it creates gets a fresh id, positioned at
/// the macro call (its span covers the whole call, its anchor is the call's anchor, the `(`),
/// as cel-go positions macro-generated nodes.
pub struct ExprFactory<'a> {
    store: &'a mut NodeStore,
    span: Span,
    anchor: u32,
}

impl<'a> ExprFactory<'a> {
    pub(crate) fn new(store: &'a mut NodeStore, span: Span, anchor: u32) -> ExprFactory<'a> {
        ExprFactory {
            store,
            span,
            anchor,
        }
    }

    /// A fresh id, positioned at the macro call.
    pub fn next_id(&mut self) -> ExprId {
        let id = self.store.new_id();
        self.store.set_position(id, self.span, self.anchor);
        id
    }

    fn node(&mut self, kind: ExprKind) -> Expr {
        let id = self.next_id();
        let e = Expr::new(id, kind);
        self.store.record(&e);
        e
    }

    /// The span of the whole macro call.
    pub fn call_span(&self) -> Span {
        self.span
    }

    /// The offset the macro call is reported at (its `(`).
    pub fn call_anchor(&self) -> u32 {
        self.anchor
    }

    /// The recorded position of a node (for instance an argument), if any.
    pub fn position(&self, id: ExprId) -> Option<NodePosition> {
        self.store.positions.get(&id).copied()
    }

    /// A literal.
    pub fn literal(&mut self, value: Literal) -> Expr {
        self.node(ExprKind::Literal(value))
    }

    /// An identifier.
    pub fn ident(&mut self, name: &str) -> Expr {
        self.node(ExprKind::Ident(name.to_string()))
    }

    /// The name of the comprehension accumulator the standard macros use, `@result`.
    pub fn accu_name(&self) -> &str {
        operators::ACCUMULATOR_NAME
    }

    /// A reference to the accumulator.
    pub fn accu_ident(&mut self) -> Expr {
        self.node(ExprKind::Ident(operators::ACCUMULATOR_NAME.to_string()))
    }

    /// `operand.field`.
    pub fn select(&mut self, operand: Expr, field: &str) -> Expr {
        self.node(ExprKind::Select(Select {
            operand: Box::new(operand),
            field: field.to_string(),
            test_only: false,
        }))
    }

    /// The presence test `has(operand.field)`.
    pub fn presence_test(&mut self, operand: Expr, field: &str) -> Expr {
        self.node(ExprKind::Select(Select {
            operand: Box::new(operand),
            field: field.to_string(),
            test_only: true,
        }))
    }

    /// `function(args)`; operators use their internal names (`_&&_`).
    pub fn global_call(&mut self, function: &str, args: Vec<Expr>) -> Expr {
        self.node(ExprKind::Call(Call {
            target: None,
            function: function.to_string(),
            args,
        }))
    }

    /// `target.function(args)`.
    pub fn member_call(&mut self, function: &str, target: Expr, args: Vec<Expr>) -> Expr {
        self.node(ExprKind::Call(Call {
            target: Some(Box::new(target)),
            function: function.to_string(),
            args,
        }))
    }

    /// `[elements]`.
    pub fn list(&mut self, elements: Vec<Expr>) -> Expr {
        self.list_with_optionals(elements, Vec::new())
    }

    /// `[elements]` where the elements at `optional_indices` are written `?e`.
    pub fn list_with_optionals(
        &mut self,
        elements: Vec<Expr>,
        optional_indices: Vec<usize>,
    ) -> Expr {
        self.node(ExprKind::List(ListExpr {
            elements,
            optional_indices,
        }))
    }

    /// One `key: value` entry for [`ExprFactory::map`], with its own id.
    pub fn map_entry(&mut self, key: Expr, value: Expr, optional: bool) -> MapEntry {
        MapEntry {
            id: self.next_id(),
            key,
            value,
            optional,
        }
    }

    /// `{entries}`.
    pub fn map(&mut self, entries: Vec<MapEntry>) -> Expr {
        self.node(ExprKind::Map(MapExpr { entries }))
    }

    /// One `name: value` initialiser for [`ExprFactory::struct_expr`], with its own id.
    pub fn struct_field(&mut self, name: &str, value: Expr, optional: bool) -> StructField {
        StructField {
            id: self.next_id(),
            name: name.to_string(),
            value,
            optional,
        }
    }

    /// `type_name{fields}`.
    pub fn struct_expr(&mut self, type_name: &str, fields: Vec<StructField>) -> Expr {
        self.node(ExprKind::Struct(StructExpr {
            type_name: type_name.to_string(),
            fields,
        }))
    }

    /// A comprehension (see [`Comprehension`] for what each part means). `iter_var2` is set for
    /// two-variable comprehensions.
    #[allow(
        clippy::too_many_arguments,
        reason = "mirrors the eight parts of a comprehension, as cel-go's factory does"
    )]
    pub fn comprehension(
        &mut self,
        iter_range: Expr,
        iter_var: &str,
        iter_var2: Option<&str>,
        accu_var: &str,
        accu_init: Expr,
        loop_condition: Expr,
        loop_step: Expr,
        result: Expr,
    ) -> Expr {
        self.node(ExprKind::Comprehension(Box::new(Comprehension {
            iter_range,
            iter_var: iter_var.to_string(),
            iter_var2: iter_var2.map(str::to_string),
            accu_var: accu_var.to_string(),
            accu_init,
            loop_condition,
            loop_step,
            result,
        })))
    }

    /// A deep copy of `e` with fresh ids (parents numbered before children, as cel-go does).
    /// Each copied node keeps the position of its original.
    pub fn copy(&mut self, e: &Expr) -> Expr {
        crate::stack::guarded(|| self.copy_unguarded(e))
    }

    fn copy_unguarded(&mut self, e: &Expr) -> Expr {
        // Past the node budget the copy stops (the parser reports the expansion as too large).
        if self.store.over_budget() {
            return Expr::new(0, ExprKind::Error);
        }
        let id = self.store.new_id();
        let pos = self
            .store
            .positions
            .get(&e.id)
            .copied()
            .unwrap_or(NodePosition {
                span: self.span,
                anchor: self.anchor,
            });
        self.store.positions.insert(id, pos);
        let kind = match &e.kind {
            ExprKind::Error => ExprKind::Error,
            ExprKind::Literal(l) => ExprKind::Literal(l.clone()),
            ExprKind::Ident(n) => ExprKind::Ident(n.clone()),
            ExprKind::Select(s) => ExprKind::Select(Select {
                operand: Box::new(self.copy(&s.operand)),
                field: s.field.clone(),
                test_only: s.test_only,
            }),
            ExprKind::Call(c) => {
                let target = c.target.as_ref().map(|t| Box::new(self.copy(t)));
                ExprKind::Call(Call {
                    target,
                    function: c.function.clone(),
                    args: c.args.iter().map(|a| self.copy(a)).collect(),
                })
            }
            ExprKind::List(l) => ExprKind::List(ListExpr {
                elements: l.elements.iter().map(|a| self.copy(a)).collect(),
                optional_indices: l.optional_indices.clone(),
            }),
            ExprKind::Map(m) => ExprKind::Map(MapExpr {
                entries: m
                    .entries
                    .iter()
                    .map(|en| {
                        let id = self.next_id();
                        MapEntry {
                            id,
                            key: self.copy(&en.key),
                            value: self.copy(&en.value),
                            optional: en.optional,
                        }
                    })
                    .collect(),
            }),
            ExprKind::Struct(s) => ExprKind::Struct(StructExpr {
                type_name: s.type_name.clone(),
                fields: s
                    .fields
                    .iter()
                    .map(|f| {
                        let id = self.next_id();
                        StructField {
                            id,
                            name: f.name.clone(),
                            value: self.copy(&f.value),
                            optional: f.optional,
                        }
                    })
                    .collect(),
            }),
            ExprKind::Comprehension(c) => ExprKind::Comprehension(Box::new(Comprehension {
                iter_range: self.copy(&c.iter_range),
                iter_var: c.iter_var.clone(),
                iter_var2: c.iter_var2.clone(),
                accu_var: c.accu_var.clone(),
                accu_init: self.copy(&c.accu_init),
                loop_condition: self.copy(&c.loop_condition),
                loop_step: self.copy(&c.loop_step),
                result: self.copy(&c.result),
            })),
        };
        let copy = Expr::new(id, kind);
        self.store.record(&copy);
        copy
    }

    /// An error to return from an expander, reported at `expr_id` (0: at the call).
    pub fn error(&self, expr_id: ExprId, message: impl Into<String>) -> MacroError {
        MacroError::new(expr_id, message)
    }
}

/// The name of an identifier expression, if it is one.
pub fn ident_name(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Ident(name) => Some(name),
        _ => None,
    }
}

/// The standard macros, as [`MacroTable::standard`] holds them.
pub fn standard_macros() -> Vec<Macro> {
    vec![
        Macro::global(operators::HAS, 1, expand_has),
        Macro::receiver(operators::ALL, 2, |f, t, a| {
            expand_quantifier(Quantifier::All, f, t, a)
        }),
        Macro::receiver(operators::EXISTS, 2, |f, t, a| {
            expand_quantifier(Quantifier::Exists, f, t, a)
        }),
        Macro::receiver(operators::EXISTS_ONE, 2, |f, t, a| {
            expand_quantifier(Quantifier::ExistsOne, f, t, a)
        }),
        Macro::receiver(operators::MAP, 2, expand_map),
        Macro::receiver(operators::MAP, 3, expand_map),
        Macro::receiver(operators::FILTER, 2, expand_filter),
    ]
}

/// `existsOne`, the camel-case spelling of `exists_one` that cel-go's parser also knows (it is
/// not among [`standard_macros`], as it is not in cel-go's standard environment).
pub fn exists_one_camel_case_macro() -> Macro {
    Macro::receiver("existsOne", 2, |f, t, a| {
        expand_quantifier(Quantifier::ExistsOne, f, t, a)
    })
}

/// The optional library's macros, `optMap` and `optFlatMap`.
pub fn optional_macros() -> Vec<Macro> {
    optional_macros_at(u32::MAX)
}

/// The optional library's macros at a version of the library: `optMap` always, `optFlatMap`
/// from version 1 (cel-go's `cel.OptionalTypesVersion`).
pub fn optional_macros_at(version: u32) -> Vec<Macro> {
    let mut out = vec![Macro::receiver("optMap", 2, |f, t, a| {
        expand_opt_map(f, t, a, true)
    })];
    if version >= 1 {
        out.push(Macro::receiver("optFlatMap", 2, |f, t, a| {
            expand_opt_map(f, t, a, false)
        }));
    }
    out
}

/// The internal function of a block of common subexpressions: `cel.@block([e0, e1, ...],
/// result)`, in which the identifier `@indexN` stands for the value of `eN`, computed at most
/// once, when first read (cel-go's bindings library, version 1).
pub const BLOCK_FUNCTION: &str = "cel.@block";

/// The prefix of the identifiers naming a block's subexpressions: `@index0`, `@index1`, ...
pub const BLOCK_INDEX_PREFIX: &str = "@index";

/// cel-spec's test-only macros for [`BLOCK_FUNCTION`], which let the `block_ext` conformance
/// tests write blocks without an optimiser (cel-go defines them in its conformance test, not
/// in a library):
///
/// * `cel.block([e0, e1, ...], result)` → `cel.@block([e0, e1, ...], result)`; the first
///   argument must be a list literal ("cel.block requires the first arg to be a list
///   literal");
/// * `cel.index(N)` → the identifier `@indexN`, for an int literal `N >= 0` ("cel.index
///   requires a single non-negative int constant arg");
/// * `cel.iterVar(D, N)` → `@it:D:N` and `cel.accuVar(D, N)` → `@ac:D:N`, comprehension
///   variable names, for int literals `D, N >= 0` ("cel.iterVar requires two non-negative int
///   constant args").
///
/// Each expands only on the receiver `cel`; errors are reported at the offending argument.
pub fn block_test_macros() -> Vec<Macro> {
    vec![
        Macro::receiver("block", 2, expand_block),
        Macro::receiver("index", 1, expand_block_index),
        Macro::receiver("iterVar", 2, |f, t, a| {
            expand_comprehension_var(f, t, a, "cel.iterVar", "@it")
        }),
        Macro::receiver("accuVar", 2, |f, t, a| {
            expand_comprehension_var(f, t, a, "cel.accuVar", "@ac")
        }),
    ]
}

/// Whether a macro's receiver is the namespace `cel`.
fn is_cel_namespace(target: Option<&Expr>) -> bool {
    matches!(target.map(|t| &t.kind), Some(ExprKind::Ident(n)) if n == "cel")
}

/// The value of a non-negative int literal.
fn non_negative_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Literal(Literal::Int(v)) if *v >= 0 => Some(*v),
        _ => None,
    }
}

fn expand_block(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    if !is_cel_namespace(target.as_ref()) {
        return Ok(None);
    }
    let Some(bindings) = args.first() else {
        return Ok(None);
    };
    if !matches!(bindings.kind, ExprKind::List(_)) {
        return Err(f.error(
            bindings.id,
            "cel.block requires the first arg to be a list literal",
        ));
    }
    Ok(Some(f.global_call(BLOCK_FUNCTION, args)))
}

fn expand_block_index(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    if !is_cel_namespace(target.as_ref()) {
        return Ok(None);
    }
    let Some(index) = args.first() else {
        return Ok(None);
    };
    let Some(n) = non_negative_int(index) else {
        return Err(f.error(
            index.id,
            "cel.index requires a single non-negative int constant arg",
        ));
    };
    Ok(Some(f.ident(&format!("{BLOCK_INDEX_PREFIX}{n}"))))
}

fn expand_comprehension_var(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
    function: &str,
    prefix: &str,
) -> Result<Option<Expr>, MacroError> {
    if !is_cel_namespace(target.as_ref()) {
        return Ok(None);
    }
    let [depth, unique] = args.as_slice() else {
        return Ok(None);
    };
    let value = |e: &Expr| {
        non_negative_int(e).ok_or_else(|| {
            f.error(
                e.id,
                format!("{function} requires two non-negative int constant args"),
            )
        })
    };
    let depth = value(depth)?;
    let unique = value(unique)?;
    Ok(Some(f.ident(&format!("{prefix}:{depth}:{unique}"))))
}

fn expand_has(
    f: &mut ExprFactory<'_>,
    _target: Option<Expr>,
    mut args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    let arg = args
        .pop()
        .ok_or_else(|| f.error(0, "invalid argument to has() macro"))?;
    let id = arg.id;
    match arg.into_kind() {
        ExprKind::Select(s) => Ok(Some(f.presence_test(*s.operand, &s.field))),
        _ => Err(f.error(id, "invalid argument to has() macro")),
    }
}

/// The iteration variable of a standard comprehension macro: a simple name that is not the
/// accumulator.
fn iteration_var(f: &ExprFactory<'_>, arg: &Expr, not_ident: &str) -> Result<String, MacroError> {
    let name = ident_name(arg).ok_or_else(|| f.error(arg.id, not_ident))?;
    if name == f.accu_name() || name == "__result__" {
        return Err(f.error(arg.id, "iteration variable overwrites accumulator variable"));
    }
    Ok(name.to_string())
}

/// The quantifier macros: `all`, `exists`, `exists_one` (with one iteration variable here,
/// with two in the extension library).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantifier {
    /// `all`: the predicate holds for every element.
    All,
    /// `exists`: it holds for some element.
    Exists,
    /// `exists_one`: it holds for exactly one.
    ExistsOne,
}

/// The accumulator's initial value, the loop condition, the step and the result of a
/// quantifier over `predicate`, created in cel-go's order so that expression ids match.
pub fn quantifier_parts(
    f: &mut ExprFactory<'_>,
    kind: Quantifier,
    predicate: Expr,
) -> (Expr, Expr, Expr, Expr) {
    match kind {
        Quantifier::All => {
            let init = f.literal(Literal::Bool(true));
            let a = f.accu_ident();
            let condition = f.global_call(operators::NOT_STRICTLY_FALSE, vec![a]);
            let a = f.accu_ident();
            let step = f.global_call(operators::LOGICAL_AND, vec![a, predicate]);
            (init, condition, step, f.accu_ident())
        }
        Quantifier::Exists => {
            let init = f.literal(Literal::Bool(false));
            let a = f.accu_ident();
            let not = f.global_call(operators::LOGICAL_NOT, vec![a]);
            let condition = f.global_call(operators::NOT_STRICTLY_FALSE, vec![not]);
            let a = f.accu_ident();
            let step = f.global_call(operators::LOGICAL_OR, vec![a, predicate]);
            (init, condition, step, f.accu_ident())
        }
        Quantifier::ExistsOne => {
            let init = f.literal(Literal::Int(0));
            let condition = f.literal(Literal::Bool(true));
            let a = f.accu_ident();
            let one = f.literal(Literal::Int(1));
            let plus = f.global_call(operators::ADD, vec![a, one]);
            let a = f.accu_ident();
            let step = f.global_call(operators::CONDITIONAL, vec![predicate, plus, a]);
            let a = f.accu_ident();
            let one = f.literal(Literal::Int(1));
            let result = f.global_call(operators::EQUALS, vec![a, one]);
            (init, condition, step, result)
        }
    }
}

fn expand_quantifier(
    kind: Quantifier,
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    let [var, predicate]: [Expr; 2] = args
        .try_into()
        .map_err(|_| f.error(0, "argument must be a simple name"))?;
    let target = target.ok_or_else(|| f.error(0, "missing receiver"))?;
    let v = iteration_var(f, &var, "argument must be a simple name")?;
    let accu = f.accu_name().to_string();
    let (init, condition, step, result) = quantifier_parts(f, kind, predicate);
    Ok(Some(f.comprehension(
        target, &v, None, &accu, init, condition, step, result,
    )))
}

fn expand_map(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    let mut args = args.into_iter();
    let (Some(var), Some(second), third) = (args.next(), args.next(), args.next()) else {
        return Err(f.error(0, "argument is not an identifier"));
    };
    let target = target.ok_or_else(|| f.error(0, "missing receiver"))?;
    let v = iteration_var(f, &var, "argument is not an identifier")?;
    let (filter, transform) = match third {
        Some(t) => (Some(second), t),
        None => (None, second),
    };
    let accu = f.accu_name().to_string();
    let init = f.list(Vec::new());
    let condition = f.literal(Literal::Bool(true));
    let a = f.accu_ident();
    let item = f.list(vec![transform]);
    let mut step = f.global_call(operators::ADD, vec![a, item]);
    if let Some(filter) = filter {
        let a = f.accu_ident();
        step = f.global_call(operators::CONDITIONAL, vec![filter, step, a]);
    }
    let result = f.accu_ident();
    Ok(Some(f.comprehension(
        target, &v, None, &accu, init, condition, step, result,
    )))
}

fn expand_filter(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
) -> Result<Option<Expr>, MacroError> {
    let [var, filter]: [Expr; 2] = args
        .try_into()
        .map_err(|_| f.error(0, "argument is not an identifier"))?;
    let target = target.ok_or_else(|| f.error(0, "missing receiver"))?;
    let v = iteration_var(f, &var, "argument is not an identifier")?;
    let accu = f.accu_name().to_string();
    let init = f.list(Vec::new());
    let condition = f.literal(Literal::Bool(true));
    let a = f.accu_ident();
    // cel-go puts the iteration variable's own node in the accumulated list.
    let item = f.list(vec![var]);
    let add = f.global_call(operators::ADD, vec![a, item]);
    let a = f.accu_ident();
    let step = f.global_call(operators::CONDITIONAL, vec![filter, add, a]);
    let result = f.accu_ident();
    Ok(Some(f.comprehension(
        target, &v, None, &accu, init, condition, step, result,
    )))
}

/// `opt.optMap(v, e)` → `opt.hasValue() ? optional.of(<v = opt.value() in e>) : optional.none()`,
/// where the binding is a comprehension over an empty list whose accumulator is `v` (cel-go's
/// optional library). `optFlatMap` is the same without `optional.of`.
fn expand_opt_map(
    f: &mut ExprFactory<'_>,
    target: Option<Expr>,
    args: Vec<Expr>,
    wrap: bool,
) -> Result<Option<Expr>, MacroError> {
    let what = if wrap { "optMap" } else { "optFlatMap" };
    let message = format!("{what}() variable name must be a simple identifier");
    let [var, body]: [Expr; 2] = args.try_into().map_err(|_| f.error(0, message.clone()))?;
    let target = target.ok_or_else(|| f.error(0, "missing receiver"))?;
    let name = ident_name(&var)
        .ok_or_else(|| f.error(var.id, message))?
        .to_string();
    // cel-go uses the receiver node twice; ids must stay unique here, so the second use is a
    // copy.
    let target_copy = f.copy(&target);
    let has_value = f.member_call("hasValue", target, Vec::new());
    let empty = f.list(Vec::new());
    let value = f.member_call("value", target_copy, Vec::new());
    let no = f.literal(Literal::Bool(false));
    let step = f.ident(&name);
    let bound = f.comprehension(empty, "#unused", None, &name, value, no, step, body);
    let present = if wrap {
        f.global_call("optional.of", vec![bound])
    } else {
        bound
    };
    let absent = f.global_call("optional.none", Vec::new());
    Ok(Some(f.global_call(
        operators::CONDITIONAL,
        vec![has_value, present, absent],
    )))
}
