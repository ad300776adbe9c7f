//! The expression tree produced by the parser.
//!
//! The shape follows cel-spec's `cel.expr.Expr` (and cel-go's `common/ast`): seven node kinds,
//! with macros already expanded into [`Comprehension`] nodes. Every node carries an [`ExprId`],
//! unique within one [`Ast`]; positions and the original macro calls live in [`SourceInfo`],
//! keyed by that id, so that the tree itself stays a plain value.

use std::collections::HashMap;
use std::fmt;

/// Identifies one node of an [`Ast`]. Ids start at 1; 0 means "no node".
pub type ExprId = i64;

/// A byte range in the source text, `start..end`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// Offset of the first byte.
    pub start: u32,
    /// Offset one past the last byte.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: u32, end: u32) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn cover(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// One expression node.
///
/// Cloning, comparing, printing (`Debug`) and dropping a tree cannot overflow the stack,
/// however deep the tree: the first three recurse under [`crate::stack::guarded`], and a deep
/// tree is dropped with an explicit work list.
pub struct Expr {
    /// The node's id, unique within its [`Ast`].
    pub id: ExprId,
    /// What the node is.
    pub kind: ExprKind,
}

/// The seven kinds of CEL expression, plus a placeholder for unreadable input.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Left by error recovery where the source could not be read; never present in an AST
    /// returned without diagnostics.
    Error,
    /// A literal value: `1`, `2u`, `3.0`, `'s'`, `b'b'`, `true`, `null`.
    Literal(Literal),
    /// A name: a variable, a type name, or (unresolved) the first part of a qualified name.
    /// A leading dot (`.x`, root scope) is kept as part of the name.
    Ident(String),
    /// `operand.field`, or the presence test `has(operand.field)` when `test_only` is set.
    Select(Select),
    /// A function or operator call. Operators use cel-go's internal names (`_+_`, `_[_]`,
    /// `_?_:_`, `@in`, `!_`, `-_`, `_?._`, `_[?_]`, ...).
    Call(Call),
    /// `[e1, e2, ?e3]`.
    List(ListExpr),
    /// `{k1: v1, ?k2: v2}`.
    Map(MapExpr),
    /// `pkg.Msg{field: value, ?field2: value2}`.
    Struct(StructExpr),
    /// A fold over a range: the expansion of `all`, `exists`, `map`, `filter`, `cel.bind`, ...
    Comprehension(Box<Comprehension>),
}

/// A literal value.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A signed 64-bit integer.
    Int(i64),
    /// An unsigned 64-bit integer (`1u`).
    Uint(u64),
    /// A double.
    Double(f64),
    /// A string, escapes already decoded.
    String(String),
    /// A bytes literal, escapes already decoded.
    Bytes(Vec<u8>),
}

/// `operand.field`.
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    /// The expression selected from.
    pub operand: Box<Expr>,
    /// The field name (after backtick unescaping).
    pub field: String,
    /// Set for the presence test produced by `has(operand.field)`.
    pub test_only: bool,
}

/// A call: `function(args)` or `target.function(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The receiver of a member call, `None` for a global call.
    pub target: Option<Box<Expr>>,
    /// The function name (operators use their internal names; see [`crate::operators`]).
    pub function: String,
    /// The arguments, receiver excluded.
    pub args: Vec<Expr>,
}

/// `[e1, e2, ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct ListExpr {
    /// The elements in order.
    pub elements: Vec<Expr>,
    /// Positions (into `elements`) of the elements written `?e`, in increasing order.
    pub optional_indices: Vec<usize>,
}

/// `{k: v, ...}`.
#[derive(Clone, Debug, PartialEq)]
pub struct MapExpr {
    /// The entries in order.
    pub entries: Vec<MapEntry>,
}

/// One `key: value` entry of a map literal.
#[derive(Clone, Debug, PartialEq)]
pub struct MapEntry {
    /// The entry's own id (its position is the colon).
    pub id: ExprId,
    /// The key expression.
    pub key: Expr,
    /// The value expression.
    pub value: Expr,
    /// Set when written `?key: value`.
    pub optional: bool,
}

/// `Type{field: value, ...}`.
#[derive(Clone, Debug, PartialEq)]
pub struct StructExpr {
    /// The type name as written, dots included (`google.protobuf.Int64Value`, `.pkg.Msg`).
    pub type_name: String,
    /// The field initialisers in order.
    pub fields: Vec<StructField>,
}

/// One `field: value` initialiser of a message literal.
#[derive(Clone, Debug, PartialEq)]
pub struct StructField {
    /// The initialiser's own id (its position is the colon).
    pub id: ExprId,
    /// The field name (after backtick unescaping).
    pub name: String,
    /// The value expression.
    pub value: Expr,
    /// Set when written `?field: value`.
    pub optional: bool,
}

/// A comprehension, as langdef describes it: evaluate `iter_range`, set the accumulator to
/// `accu_init`, then for each element (or key) while `loop_condition` holds, set the
/// accumulator to `loop_step`; the value is `result`.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    /// The list or map iterated over.
    pub iter_range: Expr,
    /// The iteration variable: the element of a list, the key of a map (or, with
    /// `iter_var2`, the index of a list).
    pub iter_var: String,
    /// The second iteration variable of two-variable comprehensions: the element of a list,
    /// the value of a map.
    pub iter_var2: Option<String>,
    /// The accumulator's name (`@result` for the standard macros).
    pub accu_var: String,
    /// The accumulator's initial value.
    pub accu_init: Expr,
    /// Evaluated before each step; the loop stops when it is `false`.
    pub loop_condition: Expr,
    /// The accumulator's next value.
    pub loop_step: Expr,
    /// The comprehension's value, computed after the loop.
    pub result: Expr,
}

/// A parsed expression with its source information.
#[derive(Clone, Debug, PartialEq)]
pub struct Ast {
    /// The root expression.
    pub expr: Expr,
    /// Positions and macro calls, keyed by node id.
    pub source_info: SourceInfo,
}

/// Where each node came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SourceInfo {
    /// For each node: the span of source it covers, and its anchor, the byte offset cel-go
    /// reports the node at (the operator of a binary expression, the `(` of a call, the `.` of
    /// a select, the `[` of an index, ...). Diagnostics point at the anchor.
    pub positions: HashMap<ExprId, NodePosition>,
    /// For each comprehension (or other node) produced by a macro, keyed by the id of the
    /// expansion's root, the call as written: a [`Call`] whose own id is 0 and whose target and
    /// arguments are copies of the parsed ones (same ids). A macro call nested inside another's
    /// arguments appears there as an [`ExprKind::Error`] placeholder carrying the nested
    /// expansion's id, which is itself a key of this map (as in cel-go). Used by the unparser.
    pub macro_calls: HashMap<ExprId, Expr>,
}

/// The position of one node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodePosition {
    /// The source covered by the node (for macro expansions: the whole macro call).
    pub span: Span,
    /// The byte offset cel-go would report for this node.
    pub anchor: u32,
}

impl SourceInfo {
    /// The anchor offset of a node, if known.
    pub fn anchor(&self, id: ExprId) -> Option<u32> {
        self.positions.get(&id).map(|p| p.anchor)
    }

    /// The span of a node, if known.
    pub fn span(&self, id: ExprId) -> Option<Span> {
        self.positions.get(&id).map(|p| p.span)
    }
}

impl Clone for Expr {
    fn clone(&self) -> Expr {
        crate::stack::guarded(|| Expr {
            id: self.id,
            kind: self.kind.clone(),
        })
    }
}

impl PartialEq for Expr {
    fn eq(&self, other: &Expr) -> bool {
        crate::stack::guarded(|| self.id == other.id && self.kind == other.kind)
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::stack::guarded(|| {
            f.debug_struct("Expr")
                .field("id", &self.id)
                .field("kind", &self.kind)
                .finish()
        })
    }
}

impl Drop for Expr {
    /// A node whose children are leaves is dropped by the ordinary (recursive) glue, without
    /// allocating; a deeper tree is taken apart one node at a time through a work list, so
    /// that dropping it uses constant stack whatever its depth.
    fn drop(&mut self) {
        let mut deep = false;
        self.for_each_child(&mut |c| deep |= !c.is_leaf());
        if !deep {
            return;
        }
        let mut work = Vec::new();
        take_children(&mut self.kind, &mut work);
        while let Some(mut e) = work.pop() {
            take_children(&mut e.kind, &mut work);
            // `e` has no children left: its own drop returns at once.
        }
    }
}

/// Moves the children of a node into `out`, leaving the node without children (a
/// comprehension's or a selection's children are replaced by [`ExprKind::Error`] leaves).
fn take_children(kind: &mut ExprKind, out: &mut Vec<Expr>) {
    fn take(e: &mut Expr) -> Expr {
        std::mem::replace(e, Expr::new(0, ExprKind::Error))
    }
    match kind {
        ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_) => {}
        ExprKind::Select(s) => out.push(take(&mut s.operand)),
        ExprKind::Call(c) => {
            if let Some(t) = c.target.take() {
                out.push(*t);
            }
            out.append(&mut c.args);
        }
        ExprKind::List(l) => out.append(&mut l.elements),
        ExprKind::Map(m) => {
            for entry in m.entries.drain(..) {
                out.push(entry.key);
                out.push(entry.value);
            }
        }
        ExprKind::Struct(s) => out.extend(s.fields.drain(..).map(|f| f.value)),
        ExprKind::Comprehension(c) => {
            out.push(take(&mut c.iter_range));
            out.push(take(&mut c.accu_init));
            out.push(take(&mut c.loop_condition));
            out.push(take(&mut c.loop_step));
            out.push(take(&mut c.result));
        }
    }
}

impl Expr {
    /// Whether the node has no children (an error placeholder, a literal or a name).
    pub fn is_leaf(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_)
        )
    }

    /// The node's kind, taken out of it (`Expr` implements `Drop`, so its fields cannot be
    /// moved out by a pattern).
    pub fn into_kind(mut self) -> ExprKind {
        std::mem::replace(&mut self.kind, ExprKind::Error)
    }

    /// A node of the given kind.
    pub fn new(id: ExprId, kind: ExprKind) -> Expr {
        Expr { id, kind }
    }

    /// The largest id in this tree.
    pub fn max_id(&self) -> ExprId {
        let mut max = 0;
        self.walk(&mut |e| max = max.max(e.id));
        max
    }

    /// Calls `f` on this node and every node below it, parents before children, including
    /// map-entry and struct-field values. Iterative, so deep trees cannot overflow the stack.
    pub fn walk<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            f(e);
            let before = stack.len();
            e.for_each_child(&mut |c| stack.push(c));
            stack[before..].reverse();
        }
    }

    /// Calls `f` on each direct child, in source order.
    pub fn for_each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match &self.kind {
            ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select(s) => f(&s.operand),
            ExprKind::Call(c) => {
                if let Some(t) = &c.target {
                    f(t);
                }
                c.args.iter().for_each(f);
            }
            ExprKind::List(l) => l.elements.iter().for_each(f),
            ExprKind::Map(m) => {
                for e in &m.entries {
                    f(&e.key);
                    f(&e.value);
                }
            }
            ExprKind::Struct(s) => s.fields.iter().for_each(|fi| f(&fi.value)),
            ExprKind::Comprehension(c) => {
                f(&c.iter_range);
                f(&c.accu_init);
                f(&c.loop_condition);
                f(&c.loop_step);
                f(&c.result);
            }
        }
    }
}

impl Expr {
    /// The depth of the tree: 1 for a leaf. Iterative, so any tree can be measured.
    pub fn depth(&self) -> usize {
        let mut best = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((e, level)) = stack.pop() {
            best = best.max(level);
            e.for_each_child(&mut |c| stack.push((c, level + 1)));
        }
        best
    }

    /// Whether two trees are the same expression, ignoring ids (of nodes, map entries and
    /// struct fields). Doubles compare by bits, so `-0.0` differs from `0.0` and NaN equals
    /// itself. Iterative, so any tree can be compared.
    pub fn structurally_eq(&self, other: &Expr) -> bool {
        let mut stack = vec![(self, other)];
        while let Some((a, b)) = stack.pop() {
            match (&a.kind, &b.kind) {
                (ExprKind::Error, ExprKind::Error) => {}
                (ExprKind::Literal(x), ExprKind::Literal(y)) => {
                    let same = match (x, y) {
                        (Literal::Double(x), Literal::Double(y)) => x.to_bits() == y.to_bits(),
                        (x, y) => x == y,
                    };
                    if !same {
                        return false;
                    }
                }
                (ExprKind::Ident(x), ExprKind::Ident(y)) => {
                    if x != y {
                        return false;
                    }
                }
                (ExprKind::Select(x), ExprKind::Select(y)) => {
                    if x.field != y.field || x.test_only != y.test_only {
                        return false;
                    }
                    stack.push((&x.operand, &y.operand));
                }
                (ExprKind::Call(x), ExprKind::Call(y)) => {
                    if x.function != y.function || x.args.len() != y.args.len() {
                        return false;
                    }
                    match (&x.target, &y.target) {
                        (Some(t), Some(u)) => stack.push((t, u)),
                        (None, None) => {}
                        _ => return false,
                    }
                    stack.extend(x.args.iter().zip(&y.args));
                }
                (ExprKind::List(x), ExprKind::List(y)) => {
                    if x.elements.len() != y.elements.len()
                        || x.optional_indices != y.optional_indices
                    {
                        return false;
                    }
                    stack.extend(x.elements.iter().zip(&y.elements));
                }
                (ExprKind::Map(x), ExprKind::Map(y)) => {
                    if x.entries.len() != y.entries.len() {
                        return false;
                    }
                    for (e, f) in x.entries.iter().zip(&y.entries) {
                        if e.optional != f.optional {
                            return false;
                        }
                        stack.push((&e.key, &f.key));
                        stack.push((&e.value, &f.value));
                    }
                }
                (ExprKind::Struct(x), ExprKind::Struct(y)) => {
                    if x.type_name != y.type_name || x.fields.len() != y.fields.len() {
                        return false;
                    }
                    for (e, f) in x.fields.iter().zip(&y.fields) {
                        if e.name != f.name || e.optional != f.optional {
                            return false;
                        }
                        stack.push((&e.value, &f.value));
                    }
                }
                (ExprKind::Comprehension(x), ExprKind::Comprehension(y)) => {
                    if x.iter_var != y.iter_var
                        || x.iter_var2 != y.iter_var2
                        || x.accu_var != y.accu_var
                    {
                        return false;
                    }
                    stack.push((&x.iter_range, &y.iter_range));
                    stack.push((&x.accu_init, &y.accu_init));
                    stack.push((&x.loop_condition, &y.loop_condition));
                    stack.push((&x.loop_step, &y.loop_step));
                    stack.push((&x.result, &y.result));
                }
                _ => return false,
            }
        }
        true
    }
}

impl fmt::Display for Literal {
    /// Writes the literal as CEL source text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Uint(u) => write!(f, "{u}u"),
            Literal::Double(d) => {
                if d.is_finite() && d.fract() == 0.0 && d.abs() < 1e16 {
                    write!(f, "{d:.1}")
                } else if d.is_nan() {
                    f.write_str("double(\"NaN\")")
                } else if d.is_infinite() {
                    f.write_str(if *d > 0.0 {
                        "double(\"Infinity\")"
                    } else {
                        "double(\"-Infinity\")"
                    })
                } else {
                    write!(f, "{d:?}")
                }
            }
            Literal::String(s) => write_quoted_string(f, s),
            Literal::Bytes(b) => write_quoted_bytes(f, b),
        }
    }
}

/// Writes `s` as a double-quoted CEL string literal that parses back to `s`.
pub fn write_quoted_string(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(f, "\\x{:02x}", c as u32)?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

/// Writes `b` as a double-quoted CEL bytes literal (`b"..."`) that parses back to `b`.
pub fn write_quoted_bytes(f: &mut impl fmt::Write, b: &[u8]) -> fmt::Result {
    f.write_str("b\"")?;
    for chunk in b.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => f.write_str("\\\"")?,
                '\\' => f.write_str("\\\\")?,
                '\n' => f.write_str("\\n")?,
                '\r' => f.write_str("\\r")?,
                '\t' => f.write_str("\\t")?,
                c if (c as u32) < 0x20 || c as u32 == 0x7f => write!(f, "\\x{:02x}", c as u32)?,
                c => f.write_char(c)?,
            }
        }
        for byte in chunk.invalid() {
            write!(f, "\\x{byte:02x}")?;
        }
    }
    f.write_char('"')
}
