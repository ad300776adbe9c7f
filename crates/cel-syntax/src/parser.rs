//! The parser: a hand-written recursive-descent parser (precedence climbing for the binary
//! operators) over the token stream of [`crate::lexer`], producing an [`Ast`] and diagnostics.
//!
//! It reproduces what cel-go's ANTLR-based parser produces, because every later stage (and every
//! user comparing error messages) expects that:
//!
//! * **ids** are handed out in cel-go's order (left operand, operator, right operand; a call's
//!   id at its `(` before the arguments; a map entry's id before its key; `&&`/`||` operator
//!   ids after their right operand), and `&&`/`||` chains become the same balanced trees;
//! * **positions**: each node records its source span and the anchor offset cel-go reports it
//!   at (see [`NodePosition`]);
//! * **unary operators**: a run of `!` or `-` is one operator, dropped when the run is even, and
//!   a single `-` directly before a number folds into the literal (`-9223372036854775808`);
//! * **errors** are reported in ANTLR's words ("mismatched input", "extraneous input",
//!   "missing", "no viable alternative", "token recognition error"), with ANTLR's error
//!   recovery approximated: single-token deletion and insertion, then resynchronisation at a
//!   closing delimiter or separator. As in ANTLR, after one error further syntax errors are
//!   suppressed until a token has been matched normally, so one mistake gives one message;
//! * **limits**: code-point size before lexing, nesting depth of expressions while parsing
//!   ("expression recursion limit exceeded"), the depth of chains of operators, selections,
//!   calls and indexes ("max recursion depth exceeded"), at most 30 error recoveries and 100
//!   syntax errors.
//!
//! Beyond cel-go, the depth of the AST itself is bounded (see [`ParserOptions`]), so that every
//! later recursive pass can rely on it.

use std::collections::HashMap;

use crate::ast::{
    Ast, Call, Expr, ExprId, ExprKind, ListExpr, Literal, MapEntry, MapExpr, Select, SourceInfo,
    Span, StructExpr, StructField,
};
use crate::lexer::{self, LexError, Tok, Token};
use crate::literal;
use crate::macros::{ExprFactory, MacroError, MacroExpander, MacroTable, NodeStore};
use crate::operators;
use crate::source::{Diagnostic, Source};

/// How much deeper than [`ParserOptions::max_recursion_depth`] an AST may be. Operator chains
/// are limited by the recursion depth itself; the allowance covers the nodes that chains do not
/// count (unary operators, literals, calls, `&&`/`||` trees) and macro expansions. An AST
/// returned without diagnostics is never deeper than `max_recursion_depth + 64`.
pub const AST_DEPTH_ALLOWANCE: usize = 64;

/// Parser settings. The defaults are cel-go's.
#[derive(Clone, Debug)]
pub struct ParserOptions {
    /// Maximum nesting depth (cel-go: 250): of nested expressions (parentheses, lists, calls,
    /// ...), reported as "expression recursion limit exceeded: N"; and of chains of operators,
    /// selections, member calls and indexes, reported as "max recursion depth exceeded". The
    /// parser's stack use grows with it.
    pub max_recursion_depth: usize,
    /// Maximum expression size in code points (cel-go: 100,000).
    pub expression_size_limit: usize,
    /// Whether `.?`, `[?`, `[?e]`, `{?k: v}` and `Msg{?f: v}` are accepted.
    pub enable_optional_syntax: bool,
    /// The macros to expand.
    pub macros: MacroTable,
    /// How many times the parser may recover from a syntax error before giving up (cel-go: 30).
    pub error_recovery_limit: usize,
    /// How many syntax errors are reported before giving up (cel-go: 100).
    pub error_report_limit: usize,
    /// Whether backtick-quoted field names (`` a.`b-c` ``) are accepted.
    pub enable_identifier_escapes: bool,
    /// Whether [`SourceInfo::macro_calls`] records each macro call as written.
    pub populate_macro_calls: bool,
}

impl Default for ParserOptions {
    fn default() -> Self {
        ParserOptions {
            max_recursion_depth: 250,
            expression_size_limit: 100_000,
            enable_optional_syntax: true,
            macros: MacroTable::standard(),
            error_recovery_limit: 30,
            error_report_limit: 100,
            enable_identifier_escapes: true,
            populate_macro_calls: true,
        }
    }
}

/// The result of parsing.
#[derive(Clone, Debug)]
pub struct Parsed {
    /// The tree (with [`ExprKind::Error`] placeholders when there are diagnostics).
    pub ast: Ast,
    /// Syntax errors, in the order found (render them with
    /// [`render_diagnostics`](crate::render_diagnostics), which sorts them by position).
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    /// Whether the expression parsed without any diagnostic.
    pub fn is_ok(&self) -> bool {
        self.diagnostics.is_empty()
    }
}

/// Parses an expression. Never fails and never panics: problems are reported as diagnostics,
/// and unreadable parts of the input become [`ExprKind::Error`] nodes.
pub fn parse(source: &Source, options: &ParserOptions) -> Parsed {
    let text = source.text();
    // The byte length bounds the code-point count, so short inputs need no counting. Offsets
    // are 32-bit, so a text of 4 GiB or more is over the limit whatever the options say.
    let limit = options.expression_size_limit.min(u32::MAX as usize - 1);
    if text.len() > limit {
        let size = text.chars().count();
        if size > limit || text.len() >= u32::MAX as usize {
            let message =
                format!("expression code point size exceeds limit: size: {size}, limit {limit}");
            let mut source_info = SourceInfo::default();
            source_info.positions.insert(1, Default::default());
            return Parsed {
                ast: Ast {
                    expr: Expr::new(1, ExprKind::Error),
                    source_info,
                },
                diagnostics: vec![Diagnostic::without_location(message)],
            };
        }
    }
    let mut parser = Parser::new(text, options);
    let root = parser.parse_start();
    parser.into_parsed(root)
}

// The token sets ANTLR lists in its messages, in its order.
const EXPR_START: &str = "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const LIST_FIRST: &str = "{'[', ']', '{', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const LIST_NEXT: &str = "{'[', ']', '{', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const MAP_FIRST: &str = "{'[', '{', '}', '(', '.', ',', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const MAP_NEXT: &str = "{'[', '{', '}', '(', '.', '-', '!', '?', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const CALL_FIRST: &str = "{'[', '{', '(', ')', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";
const FIELD_FIRST: &str = "{'}', ',', '?', IDENTIFIER, ESC_IDENTIFIER}";
const FIELD_NEXT: &str = "{'}', '?', IDENTIFIER, ESC_IDENTIFIER}";
const FIELD_NAME: &str = "{IDENTIFIER, ESC_IDENTIFIER}";

/// Tokens that can begin an expression.
fn starts_expr(t: Tok) -> bool {
    matches!(
        t,
        Tok::LBracket
            | Tok::LBrace
            | Tok::LParen
            | Tok::Dot
            | Tok::Minus
            | Tok::Bang
            | Tok::True
            | Tok::False
            | Tok::Null
            | Tok::Int
            | Tok::Uint
            | Tok::Float
            | Tok::Str
            | Tok::Bytes
            | Tok::Ident
    )
}

/// The binary operators handled by precedence climbing: (level, internal name). Relations bind
/// loosest, then `+ -`, then `* / %`; all are left-associative.
fn binary_op(t: Tok) -> Option<(u8, &'static str)> {
    Some(match t {
        Tok::EqEq => (1, operators::EQUALS),
        Tok::NotEq => (1, operators::NOT_EQUALS),
        Tok::Lt => (1, operators::LESS),
        Tok::Le => (1, operators::LESS_EQUALS),
        Tok::Gt => (1, operators::GREATER),
        Tok::Ge => (1, operators::GREATER_EQUALS),
        Tok::In => (1, operators::IN),
        Tok::Plus => (2, operators::ADD),
        Tok::Minus => (2, operators::SUBTRACT),
        Tok::Star => (3, operators::MULTIPLY),
        Tok::Slash => (3, operators::DIVIDE),
        Tok::Percent => (3, operators::MODULO),
        _ => return None,
    })
}

/// A parsed expression with its syntactic extent (parentheses included), which can be wider
/// than the node's own recorded span.
struct Node {
    expr: Expr,
    start: u32,
    end: u32,
}

/// Where a node is: its span and the offset it is reported at.
#[derive(Clone, Copy)]
struct At {
    start: u32,
    end: u32,
    anchor: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum DiagKind {
    /// Lexer and grammar errors: counted against the report limit, kept when parsing aborts.
    Syntax,
    /// Errors found while building nodes (reserved words, bad literals, macros): dropped when
    /// parsing aborts, as cel-go never gets to build the tree then.
    Semantic,
    /// Limits without a source position.
    Internal,
}

enum ColonResult {
    /// The `:` was there (or was conjured up after a reported error); its offset.
    Found(u32),
    /// No `:` and no way to continue the construct.
    Failed,
}

struct Parser<'a> {
    src: &'a str,
    opts: &'a ParserOptions,
    toks: Vec<Token>,
    pos: usize,
    /// End offset of the last token consumed.
    last_end: u32,
    lex_errors: Vec<LexError>,
    lex_next: usize,
    store: NodeStore,
    /// Count of counted constructs (cel-go's visitor depth) below each node, indexed by id.
    counted: Vec<u32>,
    macro_calls: HashMap<ExprId, Expr>,
    diags: Vec<(Diagnostic, DiagKind)>,
    syntax_errors: usize,
    recoveries: usize,
    error_mode: bool,
    aborted: bool,
    depth_reported: bool,
    nesting: usize,
    max_ast_depth: u32,
    max_counted: u32,
    /// The expected-token set to quote when an expression fails at its very first token: the
    /// token index it applies to, and the set.
    hint: (usize, &'static str),
    /// Closing delimiters of the constructs being parsed, innermost last.
    closers: Vec<Tok>,
}

impl<'a> Parser<'a> {
    fn new(src: &'a str, opts: &'a ParserOptions) -> Parser<'a> {
        let lexed = lexer::lex(src);
        let capacity = lexed.tokens.len();
        let clamp = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let mut p = Parser {
            src,
            opts,
            toks: lexed.tokens,
            pos: 0,
            last_end: 0,
            lex_errors: lexed.errors,
            lex_next: 0,
            store: NodeStore::new(capacity, NodeStore::node_budget(src.len())),
            counted: Vec::with_capacity(capacity + 1),
            macro_calls: HashMap::new(),
            diags: Vec::new(),
            syntax_errors: 0,
            recoveries: 0,
            error_mode: false,
            aborted: false,
            depth_reported: false,
            nesting: 0,
            max_ast_depth: clamp(opts.max_recursion_depth.saturating_add(AST_DEPTH_ALLOWANCE)),
            max_counted: clamp(opts.max_recursion_depth),
            hint: (usize::MAX, EXPR_START),
            closers: Vec::new(),
        };
        p.flush_lex_errors();
        p
    }

    // ---- tokens ----

    fn tok(&self) -> Token {
        self.toks[self.pos]
    }

    fn peek(&self) -> Tok {
        self.toks[self.pos].kind
    }

    /// The kind of the token `n` places ahead. Looking ahead reports the lexer errors before
    /// that token, as fetching it from ANTLR's lexer would.
    fn peek_at(&mut self, n: usize) -> Tok {
        let i = (self.pos + n).min(self.toks.len() - 1);
        self.flush_lex_errors_until(i);
        self.toks[i].kind
    }

    fn text(&self, t: Token) -> &'a str {
        &self.src[t.start as usize..t.end as usize]
    }

    fn advance(&mut self) -> Token {
        let t = self.tok();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
            self.last_end = t.end;
        }
        self.flush_lex_errors();
        t
    }

    /// Consumes the current token as part of the grammar, which ends error recovery.
    fn bump(&mut self) -> Token {
        self.error_mode = false;
        self.advance()
    }

    /// Consumes the current token while recovering from an error.
    fn skip(&mut self) {
        self.advance();
    }

    fn flush_lex_errors(&mut self) {
        self.flush_lex_errors_until(self.pos);
    }

    #[inline(never)]
    fn flush_lex_errors_until(&mut self, token: usize) {
        while !self.aborted
            && self.lex_next < self.lex_errors.len()
            && self.lex_errors[self.lex_next].before_token <= token
        {
            let e = self.lex_errors[self.lex_next];
            self.lex_next += 1;
            let text = lexer::display_text(&self.src[e.start as usize..e.end as usize]);
            self.syntax_error(e.start, format!("token recognition error at: '{text}'"));
        }
    }

    /// How ANTLR quotes a token in messages.
    fn disp(&self, t: Token) -> String {
        if t.kind == Tok::Eof {
            "'<EOF>'".to_string()
        } else {
            format!("'{}'", lexer::display_text(self.text(t)))
        }
    }

    // ---- diagnostics ----

    #[inline(never)]
    fn syntax_error(&mut self, offset: u32, message: String) {
        if self.aborted {
            return;
        }
        if self.syntax_errors < self.opts.error_report_limit {
            self.syntax_errors += 1;
            self.diags.push((
                Diagnostic::new(offset, format!("Syntax error: {message}")),
                DiagKind::Syntax,
            ));
        } else {
            let message = format!(
                "Syntax error: More than {} syntax errors",
                self.opts.error_report_limit
            );
            self.diags
                .push((Diagnostic::new(offset, message), DiagKind::Syntax));
            self.abort();
        }
    }

    /// A grammar error: reported unless an earlier error is still being recovered from, and
    /// counted as one recovery attempt either way.
    #[inline(never)]
    fn parse_error(&mut self, offset: u32, message: String) {
        if self.aborted {
            return;
        }
        if !self.error_mode {
            self.error_mode = true;
            self.syntax_error(offset, message);
            if self.aborted {
                return;
            }
        }
        self.recoveries += 1;
        if self.recoveries > self.opts.error_recovery_limit {
            let at = self.tok().start;
            let limit = self.opts.error_recovery_limit;
            self.syntax_error(
                at,
                format!("error recovery attempt limit exceeded: {limit}"),
            );
            self.abort();
        }
    }

    #[inline(never)]
    fn semantic_error(&mut self, offset: u32, expr_id: ExprId, message: impl Into<String>) {
        if self.aborted {
            return;
        }
        let mut d = Diagnostic::new(offset, message);
        d.expr_id = expr_id;
        self.diags.push((d, DiagKind::Semantic));
    }

    /// Stops parsing: every parse function sees the end of input from now on.
    fn abort(&mut self) {
        self.aborted = true;
        self.pos = self.toks.len() - 1;
        self.lex_next = self.lex_errors.len();
    }

    // ---- node construction ----

    fn new_id(&mut self) -> ExprId {
        self.store.new_id()
    }

    fn counted_of(&self, e: &Expr) -> u32 {
        usize::try_from(e.id)
            .ok()
            .and_then(|i| self.counted.get(i))
            .copied()
            .unwrap_or(0)
    }

    fn set_counted(&mut self, id: ExprId, n: u32) {
        let Ok(i) = usize::try_from(id) else {
            return;
        };
        if i >= self.counted.len() {
            self.counted.resize(i + 1, 0);
        }
        self.counted[i] = n;
    }

    /// Reports a node that is too deep and replaces it by an error placeholder, so that the
    /// tree stays bounded whatever the input.
    #[inline(never)]
    fn too_deep(&mut self, id: ExprId, at: At) -> Node {
        if !self.depth_reported {
            self.depth_reported = true;
            self.diags.push((
                Diagnostic::without_location("max recursion depth exceeded"),
                DiagKind::Internal,
            ));
        }
        let expr = Expr::new(id, ExprKind::Error);
        self.store
            .set_position(id, Span::new(at.start, at.end), at.anchor);
        self.store.set_depth(id, 1);
        self.set_counted(id, 0);
        Node {
            expr,
            start: at.start,
            end: at.end,
        }
    }

    /// Completes a node: records its position and depths, enforcing the depth limits.
    /// `counts` says whether the construct counts towards cel-go's visitor depth (operators,
    /// selections, member calls and indexes do; literals, identifiers, global calls, unary
    /// operators, `&&`/`||` and aggregates do not).
    #[inline(never)]
    fn finish(&mut self, id: ExprId, kind: ExprKind, at: At, counts: bool) -> Node {
        let expr = Expr::new(id, kind);
        let mut real = 0;
        let mut counted = 0;
        expr.for_each_child(&mut |c| {
            real = real.max(self.store.depth_of(c));
            counted = counted.max(self.counted_of(c));
        });
        let real = real + 1;
        let counted = counted + u32::from(counts);
        if real > self.max_ast_depth || counted > self.max_counted {
            return self.too_deep(id, at);
        }
        self.store
            .set_position(id, Span::new(at.start, at.end), at.anchor);
        self.store.set_depth(id, real);
        self.set_counted(id, counted);
        Node {
            expr,
            start: at.start,
            end: at.end,
        }
    }

    #[inline(never)]
    fn error_node(&mut self, at: At) -> Node {
        let id = self.new_id();
        self.finish(id, ExprKind::Error, at, false)
    }

    /// An error placeholder at the current token.
    #[inline(never)]
    fn error_here(&mut self) -> Node {
        let t = self.tok();
        self.error_node(At {
            start: t.start,
            end: t.start,
            anchor: t.start,
        })
    }

    // ---- entry points ----

    fn parse_start(&mut self) -> Node {
        let e = self.parse_expr_hint(EXPR_START);
        if !self.aborted && self.peek() != Tok::Eof {
            let t = self.tok();
            let what = if self.peek_at(1) == Tok::Eof {
                "extraneous"
            } else {
                "mismatched"
            };
            let message = format!("{what} input {} expecting <EOF>", self.disp(t));
            self.parse_error(t.start, message);
            while self.peek() != Tok::Eof {
                self.skip();
            }
        }
        e
    }

    fn into_parsed(mut self, root: Node) -> Parsed {
        while !self.aborted && self.lex_next < self.lex_errors.len() {
            self.pos = self.toks.len() - 1;
            self.flush_lex_errors();
        }
        let (expr, source_info) = if self.aborted {
            // cel-go gets no tree at all when parsing stops early.
            self.diags.retain(|(_, kind)| *kind != DiagKind::Semantic);
            let id = self.store.next_id;
            let mut info = SourceInfo::default();
            info.positions.insert(id, Default::default());
            (Expr::new(id, ExprKind::Error), info)
        } else {
            (
                root.expr,
                SourceInfo {
                    positions: self.store.positions,
                    macro_calls: self.macro_calls,
                },
            )
        };
        Parsed {
            ast: Ast { expr, source_info },
            diagnostics: self.diags.into_iter().map(|(d, _)| d).collect(),
        }
    }

    // ---- expressions ----

    fn parse_expr_hint(&mut self, hint: &'static str) -> Node {
        self.hint = (self.pos, hint);
        self.parse_expr()
    }

    /// `expr: conditionalOr ('?' conditionalOr ':' expr)?`. Each call is one level of the
    /// nesting that cel-go limits at parse time.
    fn parse_expr(&mut self) -> Node {
        crate::stack::guarded(|| self.parse_expr_unguarded())
    }

    fn parse_expr_unguarded(&mut self) -> Node {
        if self.aborted {
            return self.error_here();
        }
        self.nesting += 1;
        if self.nesting > self.opts.max_recursion_depth {
            self.diags.push((
                Diagnostic::without_location(format!(
                    "expression recursion limit exceeded: {}",
                    self.opts.max_recursion_depth
                )),
                DiagKind::Internal,
            ));
            self.abort();
            self.nesting -= 1;
            return self.error_here();
        }
        let cond = self.parse_or();
        let result = if self.peek() == Tok::Question {
            self.parse_conditional(cond)
        } else {
            cond
        };
        self.nesting -= 1;
        result
    }

    /// The rest of `cond ? then : else`, at the `?`. Kept out of [`Parser::parse_expr`] (as
    /// the other continuations are kept out of their fast paths) so that the frames on the
    /// recursive path stay small: the parser's stack use is proportional to the nesting.
    #[inline(never)]
    fn parse_conditional(&mut self, cond: Node) -> Node {
        let q = self.bump();
        let id = self.new_id();
        let then = self.parse_or();
        let els = match self.expect_colon() {
            ColonResult::Found(_) => self.parse_expr_hint(EXPR_START),
            ColonResult::Failed => self.error_here(),
        };
        let at = At {
            start: cond.start,
            end: els.end.max(then.end),
            anchor: q.start,
        };
        self.call_or_macro(
            id,
            operators::CONDITIONAL,
            None,
            vec![cond, then, els],
            at,
            true,
        )
    }

    fn parse_or(&mut self) -> Node {
        let first = self.parse_and();
        if self.peek() != Tok::OrOr {
            return first;
        }
        self.parse_logic(first, Tok::OrOr, operators::LOGICAL_OR)
    }

    fn parse_and(&mut self) -> Node {
        let first = self.parse_binary(1);
        if self.peek() != Tok::AndAnd {
            return first;
        }
        self.parse_logic(first, Tok::AndAnd, operators::LOGICAL_AND)
    }

    /// The rest of a chain of `||` (or `&&`) terms after the first, built into cel-go's
    /// balanced tree.
    #[inline(never)]
    fn parse_logic(&mut self, first: Node, op: Tok, function: &'static str) -> Node {
        let mut terms = vec![first];
        let mut ops = Vec::new();
        while self.peek() == op && !self.aborted {
            let t = self.bump();
            let term = if op == Tok::OrOr {
                self.parse_and()
            } else {
                self.parse_binary(1)
            };
            // cel-go numbers the operator after its right operand.
            ops.push((self.new_id(), t.start));
            terms.push(term);
        }
        let mut terms: Vec<Option<Node>> = terms.into_iter().map(Some).collect();
        self.balance(function, &mut terms, &ops, 0, ops.len() - 1)
    }

    /// Builds the balanced tree over `terms[lo..=hi+1]` joined by `ops[lo..=hi]`, choosing the
    /// root as cel-go's logic manager does.
    #[inline(never)]
    fn balance(
        &mut self,
        function: &'static str,
        terms: &mut [Option<Node>],
        ops: &[(ExprId, u32)],
        lo: usize,
        hi: usize,
    ) -> Node {
        let mid = (lo + hi).div_ceil(2);
        let left = if mid == lo {
            terms[mid].take()
        } else {
            Some(self.balance(function, terms, ops, lo, mid - 1))
        };
        let right = if mid == hi {
            terms[mid + 1].take()
        } else {
            Some(self.balance(function, terms, ops, mid + 1, hi))
        };
        let (Some(left), Some(right)) = (left, right) else {
            // Unreachable: each term is taken exactly once.
            return self.error_here();
        };
        let (id, anchor) = ops[mid];
        let at = At {
            start: left.start,
            end: right.end,
            anchor,
        };
        let kind = ExprKind::Call(Call {
            target: None,
            function: function.to_string(),
            args: vec![left.expr, right.expr],
        });
        self.finish(id, kind, at, false)
    }

    /// Relations (level 1), additive (2) and multiplicative (3) operators, left-associative.
    fn parse_binary(&mut self, min_level: u8) -> Node {
        let lhs = self.parse_unary();
        match binary_op(self.peek()) {
            Some((level, _)) if level >= min_level => self.parse_binary_rest(lhs, min_level),
            _ => lhs,
        }
    }

    #[inline(never)]
    fn parse_binary_rest(&mut self, mut lhs: Node, min_level: u8) -> Node {
        while let Some((level, function)) = binary_op(self.peek()) {
            if level < min_level || self.aborted {
                break;
            }
            let op = self.bump();
            let id = self.new_id();
            let rhs = self.parse_binary(level + 1);
            let at = At {
                start: lhs.start,
                end: rhs.end,
                anchor: op.start,
            };
            lhs = self.call_or_macro(id, function, None, vec![lhs, rhs], at, true);
        }
        lhs
    }

    /// `!`/`-` runs. An even run cancels out; a single `-` before a number is the number's
    /// sign.
    fn parse_unary(&mut self) -> Node {
        let kind = self.peek();
        if kind != Tok::Bang && kind != Tok::Minus {
            return self.parse_member();
        }
        self.parse_unary_ops(kind)
    }

    #[inline(never)]
    fn parse_unary_ops(&mut self, kind: Tok) -> Node {
        if kind == Tok::Minus
            && self.peek_at(1) != Tok::Minus
            && matches!(self.peek_at(1), Tok::Int | Tok::Float)
        {
            return self.parse_member();
        }
        let first = self.tok();
        let mut count = 0usize;
        while self.peek() == kind {
            self.bump();
            count += 1;
        }
        let id = (count % 2 == 1).then(|| self.new_id());
        let operand = self.parse_member();
        let Some(id) = id else {
            return operand;
        };
        let function = if kind == Tok::Bang {
            operators::LOGICAL_NOT
        } else {
            operators::NEGATE
        };
        let at = At {
            start: first.start,
            end: operand.end,
            anchor: first.start,
        };
        self.call_or_macro(id, function, None, vec![operand], at, false)
    }

    /// A primary followed by selections, member calls and indexes.
    fn parse_member(&mut self) -> Node {
        let node = self.parse_primary();
        if matches!(self.peek(), Tok::Dot | Tok::LBracket) {
            self.parse_member_rest(node)
        } else {
            node
        }
    }

    #[inline(never)]
    fn parse_member_rest(&mut self, mut node: Node) -> Node {
        loop {
            if self.aborted {
                break;
            }
            node = match self.peek() {
                Tok::Dot => self.parse_dot(node),
                Tok::LBracket => self.parse_index(node),
                _ => break,
            };
        }
        node
    }

    /// `.field`, `.?field` or `.name(args)` after `operand`.
    #[inline(never)]
    fn parse_dot(&mut self, operand: Node) -> Node {
        let dot = self.bump();
        let opt = (self.peek() == Tok::Question).then(|| self.bump());
        let t = self.tok();
        let (field, escaped) = match t.kind {
            Tok::Ident => (self.text(t).to_string(), false),
            Tok::EscIdent => {
                let text = self.text(t);
                (text[1..text.len() - 1].to_string(), true)
            }
            _ => {
                let message = if opt.is_some() {
                    format!("mismatched input {} expecting {FIELD_NAME}", self.disp(t))
                } else {
                    self.no_viable_after_dot(dot, t)
                };
                self.parse_error(t.start, message);
                return self.error_node(At {
                    start: operand.start,
                    end: dot.end,
                    anchor: dot.start,
                });
            }
        };
        self.bump();
        if !escaped && opt.is_none() && self.peek() == Tok::LParen {
            let lp = self.bump();
            let id = self.new_id();
            let (args, end) = self.parse_call_args();
            let at = At {
                start: operand.start,
                end,
                anchor: lp.start,
            };
            return self.call_or_macro(id, &field, Some(operand), args, at, true);
        }
        let at = At {
            start: operand.start,
            end: t.end,
            anchor: dot.start,
        };
        if escaped && !self.opts.enable_identifier_escapes {
            return self.unsupported(at, t.start, "unsupported syntax: '`'");
        }
        if opt.is_some() {
            if !self.opts.enable_optional_syntax {
                return self.unsupported(at, dot.start, "unsupported syntax '.?'");
            }
            let lit_id = self.new_id();
            let name = self.finish(
                lit_id,
                ExprKind::Literal(Literal::String(field)),
                At {
                    start: t.start,
                    end: t.end,
                    anchor: t.start,
                },
                false,
            );
            let id = self.new_id();
            let kind = ExprKind::Call(Call {
                target: None,
                function: operators::OPT_SELECT.to_string(),
                args: vec![operand.expr, name.expr],
            });
            return self.finish(id, kind, at, true);
        }
        let id = self.new_id();
        let kind = ExprKind::Select(Select {
            operand: Box::new(operand.expr),
            field,
            test_only: false,
        });
        self.finish(id, kind, at, true)
    }

    /// ANTLR's message for a `.` not followed by a field name. cel-go rewrites the one for
    /// `.true`, `.false` and `.null` to read like a missing identifier.
    #[inline(never)]
    fn no_viable_after_dot(&self, dot: Token, t: Token) -> String {
        let end = if t.kind == Tok::Eof { dot.end } else { t.end };
        let text = &self.src[dot.start as usize..end as usize];
        if t.start == dot.end && matches!(t.kind, Tok::True | Tok::False | Tok::Null) {
            format!("mismatched input '{}' expecting IDENTIFIER", self.text(t))
        } else {
            format!(
                "no viable alternative at input '{}'",
                lexer::display_text(text)
            )
        }
    }

    /// Reports a construct the options disable and returns an error placeholder for it.
    #[inline(never)]
    fn unsupported(&mut self, at: At, offset: u32, message: &str) -> Node {
        let id = self.new_id();
        self.semantic_error(offset, id, message);
        self.finish(id, ExprKind::Error, at, false)
    }

    /// `[index]` or `[?index]` after `operand`.
    #[inline(never)]
    fn parse_index(&mut self, operand: Node) -> Node {
        let lb = self.bump();
        let opt = (self.peek() == Tok::Question).then(|| self.bump());
        let id = self.new_id();
        self.closers.push(Tok::RBracket);
        let index = self.parse_expr_hint(EXPR_START);
        let end = self
            .expect_close(Tok::RBracket, "']'")
            .map_or(index.end, |t| t.end);
        self.closers.pop();
        let at = At {
            start: operand.start,
            end,
            anchor: lb.start,
        };
        if opt.is_some() && !self.opts.enable_optional_syntax {
            self.store.delete_id(id);
            return self.unsupported(at, lb.start, "unsupported syntax '[?'");
        }
        let function = if opt.is_some() {
            operators::OPT_INDEX
        } else {
            operators::INDEX
        };
        self.call_or_macro(id, function, None, vec![operand, index], at, true)
    }

    fn parse_primary(&mut self) -> Node {
        loop {
            let t = self.tok();
            match t.kind {
                Tok::Ident => return self.parse_ident(None),
                Tok::Dot => {
                    let dot = self.bump();
                    if self.peek() == Tok::Ident {
                        return self.parse_ident(Some(dot));
                    }
                    let next = self.tok();
                    let message = self.no_viable_after_dot(dot, next);
                    self.parse_error(next.start, message);
                    return self.error_node(At {
                        start: dot.start,
                        end: dot.end,
                        anchor: dot.start,
                    });
                }
                Tok::LParen => {
                    let lp = self.bump();
                    self.closers.push(Tok::RParen);
                    let inner = self.parse_expr_hint(EXPR_START);
                    let end = self
                        .expect_close(Tok::RParen, "')'")
                        .map_or(inner.end, |t| t.end);
                    self.closers.pop();
                    return Node {
                        expr: inner.expr,
                        start: lp.start,
                        end,
                    };
                }
                Tok::LBracket => return self.parse_list(),
                Tok::LBrace => return self.parse_map(),
                Tok::Int
                | Tok::Uint
                | Tok::Float
                | Tok::Str
                | Tok::Bytes
                | Tok::True
                | Tok::False
                | Tok::Null => return self.parse_literal(None),
                Tok::Minus if matches!(self.peek_at(1), Tok::Int | Tok::Float) => {
                    let sign = self.bump();
                    return self.parse_literal(Some(sign));
                }
                Tok::Eof => {}
                _ => {
                    // Single-token deletion: drop a stray token when the next one can start
                    // the expression.
                    if starts_expr(self.peek_at(1)) && !self.aborted {
                        let set = self.expected_here();
                        let message = format!("extraneous input {} expecting {set}", self.disp(t));
                        self.parse_error(t.start, message);
                        self.skip();
                        self.hint.0 = self.pos;
                        continue;
                    }
                }
            }
            return self.primary_error();
        }
    }

    /// The expected-token set for an error at the current token.
    fn expected_here(&self) -> &'static str {
        if self.hint.0 == self.pos {
            self.hint.1
        } else {
            EXPR_START
        }
    }

    /// No expression can start at the current token.
    #[inline(never)]
    fn primary_error(&mut self) -> Node {
        let t = self.tok();
        let message = format!(
            "mismatched input {} expecting {}",
            self.disp(t),
            self.expected_here()
        );
        self.parse_error(t.start, message);
        // Tokens that no enclosing construct can use are dropped; the others (closers,
        // separators, operators) are left for the callers to resynchronise on.
        if matches!(t.kind, Tok::EscIdent | Tok::Bang | Tok::Minus) {
            self.skip();
        }
        self.error_node(At {
            start: t.start,
            end: t.start,
            anchor: t.start,
        })
    }

    #[inline(never)]
    fn parse_literal(&mut self, sign: Option<Token>) -> Node {
        let t = self.bump();
        let start = sign.map_or(t.start, |s| s.start);
        let text = self.text(t);
        let negative = sign.is_some();
        let id = self.new_id();
        let value = match t.kind {
            Tok::Int => literal::parse_int(text, negative)
                .map(Literal::Int)
                .ok_or("invalid int literal"),
            Tok::Uint => literal::parse_uint(text)
                .map(Literal::Uint)
                .ok_or("invalid uint literal"),
            Tok::Float => literal::parse_double(text, negative)
                .map(Literal::Double)
                .ok_or("invalid double literal"),
            Tok::Str | Tok::Bytes => literal::decode_quoted(text),
            Tok::True => Ok(Literal::Bool(true)),
            Tok::False => Ok(Literal::Bool(false)),
            _ => Ok(Literal::Null),
        };
        let at = At {
            start,
            end: t.end,
            anchor: start,
        };
        match value {
            Ok(v) => self.finish(id, ExprKind::Literal(v), at, false),
            Err(message) => {
                self.semantic_error(start, id, message);
                self.finish(id, ExprKind::Error, at, false)
            }
        }
    }

    /// An identifier, a global call, or a message literal, at an identifier (after an optional
    /// leading dot).
    #[inline(never)]
    fn parse_ident(&mut self, dot: Option<Token>) -> Node {
        // `a.b.c{` is a message literal: look ahead over the dotted name.
        let mut j = self.pos + 1;
        while self.toks[j].kind == Tok::Dot && self.toks[j + 1].kind == Tok::Ident {
            j += 2;
        }
        if self.toks[j].kind == Tok::LBrace {
            return self.parse_message(dot);
        }
        let t = self.bump();
        let start = dot.map_or(t.start, |d| d.start);
        let word = self.text(t);
        let name = match dot {
            Some(_) => format!(".{word}"),
            None => word.to_string(),
        };
        let reserved = lexer::is_reserved(word);
        if self.peek() == Tok::LParen {
            let lp = self.bump();
            let id = self.new_id();
            let (args, end) = self.parse_call_args();
            let at = At {
                start,
                end,
                anchor: lp.start,
            };
            if reserved {
                self.semantic_error(start, id, format!("reserved identifier: {word}"));
                return self.finish(id, ExprKind::Error, at, false);
            }
            return self.call_or_macro(id, &name, None, args, at, false);
        }
        let id = self.new_id();
        let at = At {
            start,
            end: t.end,
            anchor: t.start,
        };
        if reserved {
            self.semantic_error(start, id, format!("reserved identifier: {word}"));
            return self.finish(id, ExprKind::Error, at, false);
        }
        self.finish(id, ExprKind::Ident(name), at, false)
    }

    /// Arguments after `(`, up to and including `)`. Returns them and the end offset.
    #[inline(never)]
    fn parse_call_args(&mut self) -> (Vec<Node>, u32) {
        let mut args = Vec::new();
        self.closers.push(Tok::RParen);
        if self.peek() != Tok::RParen {
            let mut set = CALL_FIRST;
            loop {
                args.push(self.parse_expr_hint(set));
                set = EXPR_START;
                if self.peek() == Tok::Comma && !self.aborted {
                    self.bump();
                    continue;
                }
                break;
            }
        }
        let end = match self.expect_close(Tok::RParen, "')'") {
            Some(t) => t.end,
            None => self.last_end,
        };
        self.closers.pop();
        (args, end)
    }

    /// Expects a closing delimiter. On a mismatch, tries ANTLR's single-token deletion and
    /// insertion, then skips ahead to the delimiter (or to where an enclosing construct can
    /// continue).
    #[inline(never)]
    fn expect_close(&mut self, kind: Tok, name: &str) -> Option<Token> {
        if self.peek() == kind {
            return Some(self.bump());
        }
        if self.aborted {
            return None;
        }
        let t = self.tok();
        if t.kind != Tok::Eof && self.peek_at(1) == kind {
            let message = format!("extraneous input {} expecting {name}", self.disp(t));
            self.parse_error(t.start, message);
            self.skip();
            return Some(self.bump());
        }
        if self.can_follow_close(t.kind) {
            let message = format!("missing {name} at {}", self.disp(t));
            self.parse_error(t.start, message);
            return None;
        }
        let message = format!("mismatched input {} expecting {name}", self.disp(t));
        self.parse_error(t.start, message);
        self.resync(kind);
        (self.peek() == kind).then(|| self.bump())
    }

    /// Whether `t` can come right after the innermost closing delimiter, given the constructs
    /// that enclose it.
    fn can_follow_close(&self, t: Tok) -> bool {
        let outer = &self.closers[..self.closers.len().saturating_sub(1)];
        match t {
            Tok::Eof
            | Tok::Question
            | Tok::Colon
            | Tok::Dot
            | Tok::LBracket
            | Tok::AndAnd
            | Tok::OrOr => true,
            Tok::RParen | Tok::RBracket | Tok::RBrace => outer.contains(&t),
            Tok::Comma => !outer.is_empty(),
            _ => binary_op(t).is_some(),
        }
    }

    /// Skips tokens (keeping brackets balanced) until `target`, a separator, or a closing
    /// delimiter of an enclosing construct.
    #[inline(never)]
    fn resync(&mut self, target: Tok) {
        let mut depth = 0usize;
        loop {
            let k = self.peek();
            if k == Tok::Eof || self.aborted {
                return;
            }
            if depth == 0 && (k == target || k == Tok::Comma) {
                return;
            }
            match k {
                Tok::LParen | Tok::LBracket | Tok::LBrace => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.skip();
        }
    }

    /// Expects the `:` of a conditional, map entry or field initialiser.
    #[inline(never)]
    fn expect_colon(&mut self) -> ColonResult {
        if self.peek() == Tok::Colon {
            return ColonResult::Found(self.bump().start);
        }
        if self.aborted {
            return ColonResult::Failed;
        }
        let t = self.tok();
        if t.kind != Tok::Eof && self.peek_at(1) == Tok::Colon {
            let message = format!("extraneous input {} expecting ':'", self.disp(t));
            self.parse_error(t.start, message);
            self.skip();
            return ColonResult::Found(self.bump().start);
        }
        if starts_expr(t.kind) {
            let message = format!("missing ':' at {}", self.disp(t));
            self.parse_error(t.start, message);
            return ColonResult::Found(t.start);
        }
        let message = format!("mismatched input {} expecting ':'", self.disp(t));
        self.parse_error(t.start, message);
        ColonResult::Failed
    }

    /// At the start of an element of a list, map or message literal: drops one stray token
    /// (ANTLR's single-token deletion) when the token after it fits. Returns whether the
    /// current token can start the element.
    #[inline(never)]
    fn sync_element(&mut self, set: &'static str, fits: fn(Tok) -> bool, closer: Tok) -> bool {
        let t = self.tok();
        if fits(t.kind) {
            return true;
        }
        let next = self.peek_at(1);
        if t.kind != Tok::Eof && (fits(next) || next == closer) {
            let message = format!("extraneous input {} expecting {set}", self.disp(t));
            self.parse_error(t.start, message);
            self.skip();
            return fits(self.peek());
        }
        false
    }

    #[inline(never)]
    fn parse_list(&mut self) -> Node {
        let lb = self.bump();
        let id = self.new_id();
        let mut elements = Vec::new();
        let mut optional_indices = Vec::new();
        self.closers.push(Tok::RBracket);
        if self.peek() == Tok::Comma && self.peek_at(1) == Tok::RBracket {
            self.bump();
        } else if self.peek() != Tok::RBracket {
            let fits = |t: Tok| t == Tok::Question || starts_expr(t);
            let mut set = LIST_FIRST;
            loop {
                if !self.sync_element(set, fits, Tok::RBracket) && self.peek() == Tok::RBracket {
                    break;
                }
                let q = (self.peek() == Tok::Question).then(|| self.bump());
                let e = self.parse_expr_hint(if q.is_some() { EXPR_START } else { set });
                if let Some(q) = q {
                    if self.opts.enable_optional_syntax {
                        optional_indices.push(elements.len());
                    } else {
                        self.semantic_error(q.start, e.expr.id, "unsupported syntax '?'");
                    }
                }
                elements.push(e.expr);
                set = LIST_NEXT;
                if self.peek() == Tok::Comma && !self.aborted {
                    self.bump();
                    if self.peek() == Tok::RBracket {
                        break;
                    }
                    continue;
                }
                break;
            }
        }
        let end = self
            .expect_close(Tok::RBracket, "']'")
            .map_or(self.last_end, |t| t.end);
        self.closers.pop();
        let kind = ExprKind::List(ListExpr {
            elements,
            optional_indices,
        });
        let at = At {
            start: lb.start,
            end,
            anchor: lb.start,
        };
        self.finish(id, kind, at, false)
    }

    #[inline(never)]
    fn parse_map(&mut self) -> Node {
        let lb = self.bump();
        let id = self.new_id();
        let mut entries = Vec::new();
        self.closers.push(Tok::RBrace);
        if self.peek() == Tok::Comma && self.peek_at(1) == Tok::RBrace {
            self.bump();
        } else if self.peek() != Tok::RBrace {
            let fits = |t: Tok| t == Tok::Question || starts_expr(t);
            let mut set = MAP_FIRST;
            loop {
                if !self.sync_element(set, fits, Tok::RBrace) && self.peek() == Tok::RBrace {
                    break;
                }
                // cel-go numbers the entry before its key.
                let entry_id = self.new_id();
                let q = (self.peek() == Tok::Question).then(|| self.bump());
                let key = self.parse_expr_hint(if q.is_some() { EXPR_START } else { set });
                set = MAP_NEXT;
                match self.expect_colon() {
                    ColonResult::Found(colon) => {
                        let value = self.parse_expr_hint(EXPR_START);
                        let start = q.map_or(key.start, |q| q.start);
                        if q.is_some() && !self.opts.enable_optional_syntax {
                            let q_start = start;
                            self.semantic_error(q_start, entry_id, "unsupported syntax '?'");
                        } else {
                            self.store
                                .set_position(entry_id, Span::new(start, value.end), colon);
                            entries.push(MapEntry {
                                id: entry_id,
                                key: key.expr,
                                value: value.expr,
                                optional: q.is_some(),
                            });
                        }
                    }
                    ColonResult::Failed => self.resync(Tok::RBrace),
                }
                if self.peek() == Tok::Comma && !self.aborted {
                    self.bump();
                    if self.peek() == Tok::RBrace {
                        break;
                    }
                    continue;
                }
                break;
            }
        }
        let end = self
            .expect_close(Tok::RBrace, "'}'")
            .map_or(self.last_end, |t| t.end);
        self.closers.pop();
        let at = At {
            start: lb.start,
            end,
            anchor: lb.start,
        };
        self.finish(id, ExprKind::Map(MapExpr { entries }), at, false)
    }

    /// `pkg.Msg{field: value, ...}`, at the first name segment.
    #[inline(never)]
    fn parse_message(&mut self, dot: Option<Token>) -> Node {
        let first = self.bump();
        let start = dot.map_or(first.start, |d| d.start);
        let mut type_name = String::new();
        if dot.is_some() {
            type_name.push('.');
        }
        type_name.push_str(self.text(first));
        while self.peek() == Tok::Dot {
            self.bump();
            let segment = self.bump();
            type_name.push('.');
            type_name.push_str(self.text(segment));
        }
        let lb = self.bump();
        let id = self.new_id();
        let mut fields = Vec::new();
        self.closers.push(Tok::RBrace);
        if self.peek() == Tok::Comma && self.peek_at(1) == Tok::RBrace {
            self.bump();
        } else if self.peek() != Tok::RBrace {
            self.parse_fields(&mut fields);
        }
        let end = self
            .expect_close(Tok::RBrace, "'}'")
            .map_or(self.last_end, |t| t.end);
        self.closers.pop();
        let at = At {
            start,
            end,
            anchor: lb.start,
        };
        let kind = ExprKind::Struct(StructExpr { type_name, fields });
        self.finish(id, kind, at, false)
    }

    #[inline(never)]
    fn parse_fields(&mut self, fields: &mut Vec<StructField>) {
        let fits = |t: Tok| matches!(t, Tok::Question | Tok::Ident | Tok::EscIdent);
        let mut set = FIELD_FIRST;
        loop {
            if self.aborted {
                return;
            }
            if !self.sync_element(set, fits, Tok::RBrace) {
                if self.peek() == Tok::RBrace {
                    return;
                }
                let t = self.tok();
                let message = format!("mismatched input {} expecting {set}", self.disp(t));
                self.parse_error(t.start, message);
                self.resync(Tok::RBrace);
            } else {
                self.parse_field(fields);
            }
            set = FIELD_NEXT;
            if self.peek() == Tok::Comma && !self.aborted {
                self.bump();
                if self.peek() == Tok::RBrace {
                    return;
                }
                continue;
            }
            return;
        }
    }

    #[inline(never)]
    fn parse_field(&mut self, fields: &mut Vec<StructField>) {
        let q = (self.peek() == Tok::Question).then(|| self.bump());
        if let (Some(q), false) = (q, self.opts.enable_optional_syntax) {
            // Reported before the rest of the field is read, as cel-go reports it even when
            // the field is malformed.
            self.semantic_error(q.start, 0, "unsupported syntax '?'");
        }
        let t = self.tok();
        let escaped = match t.kind {
            Tok::Ident => false,
            Tok::EscIdent => true,
            _ => {
                let message = format!("mismatched input {} expecting {FIELD_NAME}", self.disp(t));
                self.parse_error(t.start, message);
                self.resync(Tok::RBrace);
                return;
            }
        };
        self.bump();
        let text = self.text(t);
        let name = if escaped {
            text[1..text.len() - 1].to_string()
        } else {
            text.to_string()
        };
        // cel-go numbers the initialiser (at its colon) before its value.
        let field_id = self.new_id();
        let colon = match self.expect_colon() {
            ColonResult::Found(c) => c,
            ColonResult::Failed => {
                self.resync(Tok::RBrace);
                return;
            }
        };
        let value = self.parse_expr_hint(EXPR_START);
        let start = q.map_or(t.start, |q| q.start);
        if q.is_some() && !self.opts.enable_optional_syntax {
            return;
        }
        if escaped && !self.opts.enable_identifier_escapes {
            self.semantic_error(t.start, field_id, "unsupported syntax: '`'");
            return;
        }
        self.store
            .set_position(field_id, Span::new(start, value.end), colon);
        fields.push(StructField {
            id: field_id,
            name,
            value: value.expr,
            optional: q.is_some(),
        });
    }

    // ---- calls and macros ----

    /// A call node, or its macro expansion when a macro matches.
    #[inline(never)]
    fn call_or_macro(
        &mut self,
        id: ExprId,
        function: &str,
        target: Option<Node>,
        args: Vec<Node>,
        at: At,
        counts: bool,
    ) -> Node {
        let receiver = target.is_some();
        let expander = self
            .opts
            .macros
            .find(function, receiver, args.len())
            .map(|m| m.expander.clone());
        let target = target.map(|t| t.expr);
        let args: Vec<Expr> = args.into_iter().map(|n| n.expr).collect();
        if let Some(expander) = expander {
            return self.expand(id, function, expander, target, args, at, counts);
        }
        let kind = ExprKind::Call(Call {
            target: target.map(Box::new),
            function: function.to_string(),
            args,
        });
        self.finish(id, kind, at, counts)
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the call being expanded, taken apart; bundling it would only rename the parts"
    )]
    #[inline(never)]
    fn expand(
        &mut self,
        id: ExprId,
        function: &str,
        expander: MacroExpander,
        target: Option<Expr>,
        args: Vec<Expr>,
        at: At,
        counts: bool,
    ) -> Node {
        // The call as written: kept for `macro_calls`, and for an expander that declines.
        let original_target = target.clone();
        let original_args = args.clone();
        let mut counted = 0;
        target
            .iter()
            .chain(args.iter())
            .for_each(|e| counted = counted.max(self.counted_of(e)));
        let counted = counted + u32::from(counts);
        let span = Span::new(at.start, at.end);
        let outcome = {
            let mut factory = ExprFactory::new(&mut self.store, span, at.anchor);
            expander(&mut factory, target, args)
        };
        // Expansions that copy their arguments can grow exponentially with the source.
        let outcome = match outcome {
            Ok(Some(_)) if self.store.over_budget() => Err(MacroError::new(
                0,
                format!(
                    "expression too large after macro expansion: more than {} nodes",
                    self.store.budget()
                ),
            )),
            other => other,
        };
        match outcome {
            Ok(Some(expansion)) => {
                self.store.delete_id(id);
                if self.opts.populate_macro_calls {
                    let mut call = Expr::new(
                        0,
                        ExprKind::Call(Call {
                            target: original_target.map(Box::new),
                            function: function.to_string(),
                            args: original_args,
                        }),
                    );
                    // Nested expansions are referred to by id, as cel-go does.
                    let mut children = Vec::new();
                    if let ExprKind::Call(c) = &mut call.kind {
                        children.extend(c.target.iter_mut().map(|b| &mut **b));
                        children.extend(c.args.iter_mut());
                    }
                    for child in children {
                        self.strip_nested_macros(child);
                    }
                    self.macro_calls.insert(expansion.id, call);
                }
                let real = self.store.depth_of(&expansion);
                if real > self.max_ast_depth || counted > self.max_counted {
                    self.macro_calls.remove(&expansion.id);
                    let err_id = self.new_id();
                    return self.too_deep(err_id, at);
                }
                self.store.set_depth(expansion.id, real);
                self.set_counted(expansion.id, counted);
                Node {
                    expr: expansion,
                    start: at.start,
                    end: at.end,
                }
            }
            Ok(None) => {
                let kind = ExprKind::Call(Call {
                    target: original_target.map(Box::new),
                    function: function.to_string(),
                    args: original_args,
                });
                self.finish(id, kind, at, counts)
            }
            Err(err) => {
                self.store.delete_id(id);
                let anchor = Some(err.expr_id)
                    .filter(|&e| e != 0)
                    .and_then(|e| self.store.positions.get(&e))
                    .map_or(at.anchor, |p| p.anchor);
                let err_id = self.new_id();
                self.semantic_error(anchor, err_id, err.message);
                self.finish(
                    err_id,
                    ExprKind::Error,
                    At {
                        start: at.start,
                        end: at.end,
                        anchor,
                    },
                    false,
                )
            }
        }
    }

    /// Replaces, inside a recorded macro call, each nested macro expansion by an
    /// [`ExprKind::Error`] placeholder carrying the expansion's id.
    #[inline(never)]
    fn strip_nested_macros(&self, e: &mut Expr) {
        crate::stack::guarded(|| self.strip_nested_macros_unguarded(e))
    }

    fn strip_nested_macros_unguarded(&self, e: &mut Expr) {
        if self.macro_calls.contains_key(&e.id) {
            e.kind = ExprKind::Error;
            return;
        }
        match &mut e.kind {
            ExprKind::Error | ExprKind::Literal(_) | ExprKind::Ident(_) => {}
            ExprKind::Select(s) => self.strip_nested_macros(&mut s.operand),
            ExprKind::Call(c) => {
                if let Some(t) = &mut c.target {
                    self.strip_nested_macros(t);
                }
                c.args.iter_mut().for_each(|a| self.strip_nested_macros(a));
            }
            ExprKind::List(l) => l
                .elements
                .iter_mut()
                .for_each(|a| self.strip_nested_macros(a)),
            ExprKind::Map(m) => {
                for entry in &mut m.entries {
                    self.strip_nested_macros(&mut entry.key);
                    self.strip_nested_macros(&mut entry.value);
                }
            }
            ExprKind::Struct(s) => s
                .fields
                .iter_mut()
                .for_each(|f| self.strip_nested_macros(&mut f.value)),
            ExprKind::Comprehension(c) => {
                self.strip_nested_macros(&mut c.iter_range);
                self.strip_nested_macros(&mut c.accu_init);
                self.strip_nested_macros(&mut c.loop_condition);
                self.strip_nested_macros(&mut c.loop_step);
                self.strip_nested_macros(&mut c.result);
            }
        }
    }
}
