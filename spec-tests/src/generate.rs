//! Random well-typed CEL expressions, run differentially through the interpreter and native
//! code.
//!
//! [`Generator`] builds expressions of a requested [`GenType`] from a seeded PRNG ([`Rng`],
//! SplitMix64): literals with edge values (`-9223372036854775808`, `18446744073709551615u`,
//! `-0.0`, NaN), the declared variables of [`env()`] bound by [`activation`], arithmetic that
//! overflows and divides by zero, comparisons (also across types through `dyn`), logic with
//! error absorption, string and list functions (standard and extension libraries), indexing
//! and field selection that fail, conversions, comprehensions (nested, one and two
//! variables), `cel.bind` and optional values. The same seed always gives the same
//! expressions.
//!
//! [`Differ`] compiles an expression once, makes an interpreter program and a native one, and
//! compares their values, errors and costs with [`differential`], also under a cost limit
//! below the full cost. [`run_differential`] does that for many generated expressions and
//! returns a [`Report`]; `spec-tests/tests/generated.rs` and the `differential` fuzz target
//! (`fuzz/fuzz_targets/differential.rs`) drive it.

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use celerity::{Backend, Env, ErrorKind, Key, MapActivation, Program, ProgramOptions, Type, Value};

use crate::stages::differential;

/// A small deterministic PRNG (SplitMix64): the same seed gives the same sequence on every
/// platform.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`0` when `n` is `0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next_u64() % n }
    }

    /// True with probability `num / den`.
    pub fn chance(&mut self, num: u64, den: u64) -> bool {
        self.below(den) < num
    }

    /// One element of a slice, or `None` for an empty one.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        let n = u64::try_from(items.len()).unwrap_or(u64::MAX);
        let i = usize::try_from(self.below(n)).unwrap_or(0);
        items.get(i)
    }
}

/// The types the generator produces expressions of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenType {
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `list(int)`.
    ListInt,
    /// `list(string)`.
    ListString,
    /// `map(string, int)`.
    MapStringInt,
    /// `dyn`: any value, often of a type only known at run time.
    Dyn,
}

impl GenType {
    /// Every type, in a fixed order.
    pub const ALL: [GenType; 9] = [
        GenType::Bool,
        GenType::Int,
        GenType::Uint,
        GenType::Double,
        GenType::String,
        GenType::ListInt,
        GenType::ListString,
        GenType::MapStringInt,
        GenType::Dyn,
    ];

    /// The CEL type.
    pub fn cel_type(self) -> Type {
        match self {
            GenType::Bool => Type::Bool,
            GenType::Int => Type::Int,
            GenType::Uint => Type::Uint,
            GenType::Double => Type::Double,
            GenType::String => Type::String,
            GenType::ListInt => Type::list(Type::Int),
            GenType::ListString => Type::list(Type::String),
            GenType::MapStringInt => Type::map(Type::String, Type::Int),
            GenType::Dyn => Type::Dyn,
        }
    }
}

/// The declared variables: name and type. [`activation`] binds every one of them.
pub const VARIABLES: [(&str, GenType); 13] = [
    ("i", GenType::Int),
    ("j", GenType::Int),
    ("k", GenType::Int),
    ("u", GenType::Uint),
    ("d", GenType::Double),
    ("s", GenType::String),
    ("b", GenType::Bool),
    ("li", GenType::ListInt),
    ("le", GenType::ListInt),
    ("ls", GenType::ListString),
    ("m", GenType::MapStringInt),
    ("dy", GenType::Dyn),
    ("dl", GenType::Dyn),
];

/// The environment generated expressions are checked in: [`VARIABLES`] and every extension
/// library, otherwise cel-go's defaults. It does not depend on the backend; programs choose
/// theirs.
pub fn env() -> Env {
    let mut b = Env::builder();
    for (name, ty) in VARIABLES {
        b = b.variable(name, ty.cel_type());
    }
    b.all_extension_libraries().build()
}

fn string_map(entries: Vec<(&str, Value)>) -> Value {
    Value::map(
        entries
            .into_iter()
            .map(|(k, v)| (Key::String(Arc::from(k)), v)),
    )
}

/// The values of [`VARIABLES`]: `i = 7`, `j = -3`, `k = 9223372036854775807`, `u = 3u`,
/// `d = 2.5`, `s = "héllo, wörld"`, `b = true`, `li = [1, 2, 3, -4, 2]`, `le = []`,
/// `ls = ["a", "bc", "", "héllo"]`, `m = {"a": 1, "b": -2, "key": 0}`, `dy` a map of mixed
/// values (nested list and map, `null`), `dl` a list of mixed values.
pub fn activation() -> MapActivation {
    let ints = |xs: &[i64]| Value::list(xs.iter().map(|x| Value::Int(*x)).collect());
    let strs = |xs: &[&str]| Value::list(xs.iter().map(|x| Value::string(*x)).collect());
    MapActivation::new()
        .with("i", 7i64)
        .with("j", -3i64)
        .with("k", i64::MAX)
        .with("u", Value::Uint(3))
        .with("d", 2.5f64)
        .with("s", "héllo, wörld")
        .with("b", true)
        .with("li", ints(&[1, 2, 3, -4, 2]))
        .with("le", ints(&[]))
        .with("ls", strs(&["a", "bc", "", "héllo"]))
        .with(
            "m",
            string_map(vec![
                ("a", Value::Int(1)),
                ("b", Value::Int(-2)),
                ("key", Value::Int(0)),
            ]),
        )
        .with(
            "dy",
            string_map(vec![
                ("a", Value::Int(1)),
                ("b", Value::string("two")),
                (
                    "c",
                    Value::list(vec![Value::Int(1), Value::Double(2.5), Value::string("x")]),
                ),
                (
                    "d",
                    string_map(vec![("x", Value::Double(1.5)), ("y", Value::Bool(true))]),
                ),
                ("n", Value::Null),
                ("u", Value::Uint(5)),
            ]),
        )
        .with(
            "dl",
            Value::list(vec![
                Value::Int(1),
                Value::string("x"),
                Value::Double(2.5),
                Value::Uint(3),
                ints(&[1]),
                string_map(vec![("k", Value::Int(1))]),
            ]),
        )
}

const INT_LITERALS: [&str; 16] = [
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "10",
    "100",
    "-5",
    "9223372036854775807",
    "-9223372036854775808",
    "4611686018427387904",
    "3037000500",
    "0x7fffffffffffffff",
    "64",
    "-64",
];
const UINT_LITERALS: [&str; 10] = [
    "0u",
    "1u",
    "2u",
    "3u",
    "10u",
    "18446744073709551615u",
    "9223372036854775808u",
    "4294967296u",
    "0xffu",
    "64u",
];
const DOUBLE_LITERALS: [&str; 20] = [
    "0.0",
    "-0.0",
    "1.0",
    "-1.0",
    "0.5",
    "2.5",
    "-2.5",
    "0.1",
    "3.14",
    "1e308",
    "-1e308",
    "1e-308",
    "5e-324",
    "(0.0/0.0)",
    "(1.0/0.0)",
    "(-1.0/0.0)",
    "9223372036854775807.0",
    "18446744073709551616.0",
    "-9223372036854775808.0",
    "1e19",
];
const STRING_LITERALS: [&str; 22] = [
    r#""""#,
    r#""a""#,
    r#""b""#,
    r#""abc""#,
    r#""héllo""#,
    r#""12""#,
    r#""-5""#,
    r#""1.5""#,
    r#""true""#,
    r#""a,b,c""#,
    r#"" pad ""#,
    r#""ABC""#,
    r#""ß😀""#,
    "'single'",
    r#""9223372036854775808""#,
    r#""NaN""#,
    r#""inf""#,
    r#""1e400""#,
    r#""x\ty""#,
    r#""\u00e9""#,
    r#"r"\d""#,
    r#""l""#,
];
/// Strings that some conversion accepts (and some it does not).
const CONVERTIBLE_STRINGS: [&str; 16] = [
    r#""12""#,
    r#""-5""#,
    r#""0""#,
    r#""1.5""#,
    r#""1e10""#,
    r#""-0""#,
    r#""9223372036854775807""#,
    r#""9223372036854775808""#,
    r#""18446744073709551615""#,
    r#""inf""#,
    r#""NaN""#,
    r#""true""#,
    r#""false""#,
    r#""t""#,
    r#""0x10""#,
    r#""abc""#,
];
/// Valid RE2 patterns (as CEL string literals).
const PATTERNS: [&str; 12] = [
    r#""^a""#,
    r#""b+""#,
    r#""[a-z]+$""#,
    r#""h.llo""#,
    r#""""#,
    r#""(?i)HELLO""#,
    r#"r"\d+""#,
    r#""^$""#,
    r#""(a|b)c?""#,
    r#""[^,]*,""#,
    r#"r"\w+\s""#,
    r#""é|ö""#,
];
const FIELDS: [&str; 5] = ["a", "b", "key", "zz", "c"];
const KEY_LITERALS: [&str; 5] = [r#""a""#, r#""b""#, r#""key""#, r#""zz""#, r#""""#];
const FORMATS: [(&str, GenType); 5] = [
    (r#""%d""#, GenType::Int),
    (r#""%s""#, GenType::Dyn),
    (r#""%.3f""#, GenType::Double),
    (r#""%x""#, GenType::Int),
    (r#""<%s|%d>""#, GenType::String),
];

/// Generates random, well-typed CEL expressions over [`VARIABLES`].
#[derive(Clone, Debug)]
pub struct Generator {
    rng: Rng,
    /// Comprehension and `cel.bind` variables in scope.
    scope: Vec<(String, GenType)>,
    next_var: u32,
}

/// What a comprehension iterates over: the range's text, and the types of its one variable
/// and of its two variables.
struct Range {
    text: String,
    one: GenType,
    two: (GenType, GenType),
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            scope: Vec::new(),
            next_var: 0,
        }
    }

    /// The generator's PRNG, for choices around the expressions (types, depths, limits).
    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// An expression of type `ty` (or, where the type is only known at run time, `dyn`),
    /// nested at most about `depth` levels deep.
    pub fn expr(&mut self, ty: GenType, depth: u32) -> String {
        self.scope.clear();
        self.next_var = 0;
        self.gen_expr(ty, depth)
    }

    /// A random type and depth in `1..=max_depth`, then an expression of them.
    pub fn any_expr(&mut self, max_depth: u32) -> String {
        let ty = self.pick_type();
        let depth = 1 + u32::try_from(self.rng.below(u64::from(max_depth.max(1)))).unwrap_or(0);
        self.expr(ty, depth)
    }

    /// One case of a differential run: an expression (see [`Generator::any_expr`]) and,
    /// for one expression in `options.cost_limit_every`, the seed of a cost limit for
    /// [`Differ::check`].
    pub fn case(&mut self, options: RunOptions) -> (String, Option<u64>) {
        let expr = self.any_expr(options.max_depth);
        let limit_seed =
            if options.cost_limit_every > 0 && self.rng.chance(1, options.cost_limit_every) {
                Some(self.rng.next_u64())
            } else {
                None
            };
        (expr, limit_seed)
    }

    fn pick_type(&mut self) -> GenType {
        self.rng
            .pick(&GenType::ALL)
            .copied()
            .unwrap_or(GenType::Int)
    }

    fn pick_scalar(&mut self) -> GenType {
        const SCALARS: [GenType; 5] = [
            GenType::Bool,
            GenType::Int,
            GenType::Uint,
            GenType::Double,
            GenType::String,
        ];
        self.rng.pick(&SCALARS).copied().unwrap_or(GenType::Int)
    }

    fn pick_str(&mut self, items: &[&str]) -> String {
        self.rng.pick(items).copied().unwrap_or("0").to_string()
    }

    fn fresh(&mut self, prefix: &str) -> String {
        let n = self.next_var;
        self.next_var += 1;
        format!("{prefix}{n}")
    }

    /// Runs `f` with `vars` in scope.
    fn with_vars<R>(&mut self, vars: &[(&str, GenType)], f: impl FnOnce(&mut Self) -> R) -> R {
        let before = self.scope.len();
        for (name, ty) in vars {
            self.scope.push(((*name).to_string(), *ty));
        }
        let r = f(self);
        self.scope.truncate(before);
        r
    }

    /// A variable of type `ty` (any variable for `dyn`), local or global.
    fn variable(&mut self, ty: GenType) -> Option<String> {
        let mut names: Vec<&str> = Vec::new();
        for (name, t) in &self.scope {
            if ty == GenType::Dyn || *t == ty {
                names.push(name);
            }
        }
        // Prefer locals: they are what comprehensions and binds are about.
        if !names.is_empty() && self.rng.chance(2, 3) {
            return self.rng.pick(&names).map(|s| (*s).to_string());
        }
        for (name, t) in VARIABLES {
            if ty == GenType::Dyn || t == ty {
                names.push(name);
            }
        }
        self.rng.pick(&names).map(|s| (*s).to_string())
    }

    fn gen_expr(&mut self, ty: GenType, depth: u32) -> String {
        if depth == 0 || self.rng.chance(1, 6) {
            return self.leaf(ty);
        }
        let d = depth - 1;
        // Constructs that work for every type.
        if self.rng.chance(1, 6) {
            return self.generic(ty, d);
        }
        match ty {
            GenType::Bool => self.gen_bool(d),
            GenType::Int => self.gen_int(d),
            GenType::Uint => self.gen_uint(d),
            GenType::Double => self.gen_double(d),
            GenType::String => self.gen_string(d),
            GenType::ListInt => self.gen_list_int(d),
            GenType::ListString => self.gen_list_string(d),
            GenType::MapStringInt => self.gen_map(d),
            GenType::Dyn => self.gen_dyn(d),
        }
    }

    /// A literal or a variable.
    fn leaf(&mut self, ty: GenType) -> String {
        if self.rng.chance(1, 2)
            && let Some(v) = self.variable(ty)
        {
            return v;
        }
        self.literal(ty)
    }

    fn literal(&mut self, ty: GenType) -> String {
        match ty {
            GenType::Bool => self.pick_str(&["true", "false"]),
            GenType::Int => {
                if self.rng.chance(1, 3) {
                    self.rng.below(20).to_string()
                } else {
                    self.pick_str(&INT_LITERALS)
                }
            }
            GenType::Uint => self.pick_str(&UINT_LITERALS),
            GenType::Double => self.pick_str(&DOUBLE_LITERALS),
            GenType::String => self.pick_str(&STRING_LITERALS),
            GenType::ListInt => self.pick_str(&[
                "[]",
                "[1, 2, 3]",
                "[0]",
                "[-1, 9223372036854775807]",
                "[5, 5]",
            ]),
            GenType::ListString => {
                self.pick_str(&["[]", r#"["a", "b"]"#, r#"[""]"#, r#"["x", "héllo", "a"]"#])
            }
            GenType::MapStringInt => self.pick_str(&[
                "{}",
                r#"{"a": 1}"#,
                r#"{"a": 1, "b": 2}"#,
                r#"{"key": -1, "zz": 9223372036854775807}"#,
            ]),
            GenType::Dyn => match self.rng.below(4) {
                0 => "null".to_string(),
                1 => {
                    let t = self.pick_scalar();
                    format!("dyn({})", self.literal(t))
                }
                _ => self.pick_str(&["dy", "dl"]),
            },
        }
    }

    /// Constructs of any type: conditionals, `cel.bind`, optionals, `dyn`, indexing into
    /// literals.
    fn generic(&mut self, ty: GenType, d: u32) -> String {
        match self.rng.below(11) {
            0 | 1 => {
                let c = self.gen_expr(GenType::Bool, d);
                let a = self.gen_same(ty, d);
                let b = self.gen_same(ty, d);
                format!("({c} ? {a} : {b})")
            }
            2 | 3 => {
                let vt = self.pick_type();
                let v = self.fresh("v");
                let init = self.gen_expr(vt, d);
                let body = self.with_vars(&[(&v, vt)], |g| g.gen_expr(ty, d));
                format!("cel.bind({v}, {init}, {body})")
            }
            4 => {
                let a = self.gen_same(ty, d);
                let b = self.gen_same(ty, d);
                match self.rng.below(5) {
                    0 => format!("optional.of({a}).orValue({b})"),
                    1 => format!("optional.none().orValue({b})"),
                    2 => format!("optional.ofNonZeroValue({a}).orValue({b})"),
                    3 => format!("optional.of({a}).or(optional.of({b})).value()"),
                    _ => format!("(b ? optional.of({a}) : optional.none()).value()"),
                }
            }
            5 => {
                // `dyn` around an expression of the same type, or (rarely) of another type,
                // which fails at run time where the type matters.
                let t = if self.rng.chance(1, 8) {
                    self.pick_type()
                } else {
                    ty
                };
                format!("dyn({})", self.gen_expr(t, d))
            }
            6 => {
                let a = self.gen_same(ty, d);
                let b = self.gen_same(ty, d);
                let idx = self.index(d);
                format!("[{a}, {b}][{idx}]")
            }
            7 => {
                let a = self.gen_same(ty, d);
                let b = self.gen_same(ty, d);
                let idx = self.index(d);
                let dflt = self.gen_same(ty, d);
                format!("[{a}, {b}][?{idx}].orValue({dflt})")
            }
            8 => {
                let a = self.gen_same(ty, d);
                let b = self.gen_same(ty, d);
                let f = self.pick_str(&FIELDS);
                if self.rng.chance(1, 2) {
                    format!(r#"{{"a": {a}, "b": {b}}}.{f}"#)
                } else {
                    let key = self.gen_expr(GenType::String, d);
                    format!(r#"{{"a": {a}, "b": {b}}}[{key}]"#)
                }
            }
            9 => {
                let a = self.gen_same(ty, d);
                let f = self.pick_str(&FIELDS);
                let dflt = self.gen_same(ty, d);
                format!(r#"{{"a": {a}}}.?{f}.orValue({dflt})"#)
            }
            _ => self.leaf(ty),
        }
    }

    /// An expression of type `ty` whose static type is exactly that: `dyn` expressions are
    /// wrapped in `dyn(...)`, so that two of them have the same type (conditionals,
    /// `orValue`, equality).
    fn gen_same(&mut self, ty: GenType, d: u32) -> String {
        let e = self.gen_expr(ty, d);
        if ty == GenType::Dyn {
            format!("dyn({e})")
        } else {
            e
        }
    }

    /// An expression of type `ty` that is not an empty literal (`[]`, `{}`), whose element
    /// type the checker would leave open: where the choice of an overload depends on it
    /// (`sort()`, `math.least`, an element read from it), an open type picks the wrong one.
    fn gen_closed(&mut self, ty: GenType, d: u32) -> String {
        let e = self.gen_expr(ty, d);
        if e != "[]" && e != "{}" {
            return e;
        }
        match ty {
            GenType::ListInt => "li".to_string(),
            GenType::ListString => "ls".to_string(),
            GenType::MapStringInt => "m".to_string(),
            _ => e,
        }
    }

    /// An index into a short list: usually in range, sometimes not.
    fn index(&mut self, d: u32) -> String {
        match self.rng.below(4) {
            0 => self.gen_expr(GenType::Int, d),
            1 => self.pick_str(&["-1", "2", "5", "9223372036854775807"]),
            _ => self.pick_str(&["0", "1"]),
        }
    }

    /// What a comprehension iterates over.
    fn range(&mut self, d: u32) -> Range {
        match self.rng.below(8) {
            0..=2 => Range {
                text: self.gen_closed(GenType::ListInt, d),
                one: GenType::Int,
                two: (GenType::Int, GenType::Int),
            },
            3 | 4 => Range {
                text: self.gen_closed(GenType::ListString, d),
                one: GenType::String,
                two: (GenType::Int, GenType::String),
            },
            5 | 6 => Range {
                text: self.gen_closed(GenType::MapStringInt, d),
                one: GenType::String,
                two: (GenType::String, GenType::Int),
            },
            _ => {
                if self.rng.chance(1, 2) {
                    Range {
                        text: "dl".to_string(),
                        one: GenType::Dyn,
                        two: (GenType::Int, GenType::Dyn),
                    }
                } else {
                    Range {
                        text: "dy".to_string(),
                        one: GenType::Dyn,
                        two: (GenType::Dyn, GenType::Dyn),
                    }
                }
            }
        }
    }

    /// `range.name(x, body)` for a one-variable macro whose body has type `body_ty`.
    fn macro1(&mut self, name: &str, body_ty: GenType, d: u32) -> String {
        let r = self.range(d);
        let x = self.fresh("x");
        let body = self.with_vars(&[(&x, r.one)], |g| g.gen_expr(body_ty, d));
        format!("{}.{name}({x}, {body})", r.text)
    }

    /// `range.name(k, v, body)` for a two-variable macro.
    fn macro2(&mut self, name: &str, body_ty: GenType, d: u32) -> String {
        let r = self.range(d);
        let k = self.fresh("k");
        let v = self.fresh("e");
        let body = self.with_vars(&[(&k, r.two.0), (&v, r.two.1)], |g| g.gen_expr(body_ty, d));
        format!("{}.{name}({k}, {v}, {body})", r.text)
    }

    /// A comprehension producing a list of `elem` (`map`, `map` with a filter,
    /// `transformList`), over any range.
    fn mapped_list(&mut self, elem: GenType, d: u32) -> String {
        let r = self.range(d);
        match self.rng.below(3) {
            0 => {
                let x = self.fresh("x");
                let body = self.with_vars(&[(&x, r.one)], |g| g.gen_expr(elem, d));
                format!("{}.map({x}, {body})", r.text)
            }
            1 => {
                let x = self.fresh("x");
                let (p, body) = self.with_vars(&[(&x, r.one)], |g| {
                    (g.gen_expr(GenType::Bool, d), g.gen_expr(elem, d))
                });
                format!("{}.map({x}, {p}, {body})", r.text)
            }
            _ => {
                let k = self.fresh("k");
                let v = self.fresh("e");
                let vars = [(k.as_str(), r.two.0), (v.as_str(), r.two.1)];
                if self.rng.chance(1, 2) {
                    let body = self.with_vars(&vars, |g| g.gen_expr(elem, d));
                    format!("{}.transformList({k}, {v}, {body})", r.text)
                } else {
                    let (p, body) = self.with_vars(&vars, |g| {
                        (g.gen_expr(GenType::Bool, d), g.gen_expr(elem, d))
                    });
                    format!("{}.transformList({k}, {v}, {p}, {body})", r.text)
                }
            }
        }
    }

    fn pick_comparable(&mut self) -> GenType {
        const ORDERED: [GenType; 5] = [
            GenType::Int,
            GenType::Uint,
            GenType::Double,
            GenType::String,
            GenType::Bool,
        ];
        self.rng.pick(&ORDERED).copied().unwrap_or(GenType::Int)
    }

    fn gen_bool(&mut self, d: u32) -> String {
        match self.rng.below(30) {
            0..=3 => {
                let t = self.pick_comparable();
                let op = self.pick_str(&["<", "<=", ">", ">="]);
                let a = self.gen_expr(t, d);
                let b = self.gen_expr(t, d);
                format!("({a} {op} {b})")
            }
            4 | 5 => {
                let t = self.pick_type();
                let op = self.pick_str(&["==", "!="]);
                let a = self.gen_same(t, d);
                let b = self.gen_same(t, d);
                format!("({a} {op} {b})")
            }
            6 | 7 => {
                // Across types, decided at run time.
                let ta = self.pick_scalar();
                let tb = self.pick_scalar();
                let op = self.pick_str(&["<", "<=", ">", ">=", "==", "!="]);
                let a = self.gen_expr(ta, d);
                let b = self.gen_expr(tb, d);
                if self.rng.chance(1, 2) {
                    format!("(dyn({a}) {op} dyn({b}))")
                } else {
                    format!("(dyn({a}) {op} {b})")
                }
            }
            8..=10 => {
                let op = self.pick_str(&["&&", "||"]);
                let a = self.gen_expr(GenType::Bool, d);
                let b = self.gen_expr(GenType::Bool, d);
                format!("({a} {op} {b})")
            }
            11 => format!("!{}", self.gen_expr(GenType::Bool, d)),
            12 => {
                let f = self.pick_str(&["startsWith", "endsWith", "contains"]);
                let a = self.gen_expr(GenType::String, d);
                let b = self.gen_expr(GenType::String, d);
                format!("{a}.{f}({b})")
            }
            13 => {
                let a = self.gen_expr(GenType::String, d);
                let p = self.pick_str(&PATTERNS);
                if self.rng.chance(1, 2) {
                    format!("{a}.matches({p})")
                } else {
                    format!("matches({a}, {p})")
                }
            }
            14 | 15 => match self.rng.below(4) {
                0 => {
                    let a = self.gen_expr(GenType::Int, d);
                    let l = self.gen_expr(GenType::ListInt, d);
                    format!("({a} in {l})")
                }
                1 => {
                    let a = self.gen_expr(GenType::String, d);
                    let l = self.gen_expr(GenType::ListString, d);
                    format!("({a} in {l})")
                }
                2 => {
                    let a = self.gen_expr(GenType::String, d);
                    let m = self.gen_expr(GenType::MapStringInt, d);
                    format!("({a} in {m})")
                }
                _ => {
                    let t = self.pick_scalar();
                    let a = self.gen_expr(t, d);
                    let c = self.pick_str(&["dl", "dy", "li", "[1, 2.0, 3u]"]);
                    format!("(dyn({a}) in {c})")
                }
            },
            16 => {
                let f = self.pick_str(&FIELDS);
                match self.rng.below(3) {
                    0 => format!("has({}.{f})", self.gen_expr(GenType::MapStringInt, d)),
                    1 => format!("has(dy.{f})"),
                    _ => self.pick_str(&["has(dy.d.x)", "has(dy.n)", "has(dy.d.zz)"]),
                }
            }
            17..=19 => {
                let name = self.pick_str(&["all", "exists", "exists_one"]);
                self.macro1(&name, GenType::Bool, d)
            }
            20 => {
                let name = self.pick_str(&["all", "exists", "existsOne"]);
                self.macro2(&name, GenType::Bool, d)
            }
            21 => {
                let f = self.pick_str(&["contains", "equivalent", "intersects"]);
                if self.rng.chance(1, 2) {
                    let a = self.gen_expr(GenType::ListInt, d);
                    let b = self.gen_expr(GenType::ListInt, d);
                    format!("sets.{f}({a}, {b})")
                } else {
                    let a = self.gen_expr(GenType::ListString, d);
                    let b = self.gen_expr(GenType::ListString, d);
                    format!("sets.{f}({a}, {b})")
                }
            }
            22 => {
                let f = self.pick_str(&["isNaN", "isInf", "isFinite"]);
                format!("math.{f}({})", self.gen_expr(GenType::Double, d))
            }
            23 => {
                let t = self.pick_type();
                let a = self.gen_expr(t, d);
                match self.rng.below(4) {
                    0 => format!("optional.of({a}).hasValue()"),
                    1 => format!("optional.ofNonZeroValue({a}).hasValue()"),
                    2 => {
                        let f = self.pick_str(&FIELDS);
                        format!(
                            "{}.?{f}.hasValue()",
                            self.gen_expr(GenType::MapStringInt, d)
                        )
                    }
                    _ => {
                        let f = self.pick_str(&FIELDS);
                        format!("dy.?{f}.hasValue()")
                    }
                }
            }
            24 => {
                let s = if self.rng.chance(2, 3) {
                    self.pick_str(&CONVERTIBLE_STRINGS)
                } else {
                    self.gen_expr(GenType::String, d)
                };
                format!("bool({s})")
            }
            25 => {
                let t = self.pick_type();
                let a = self.gen_expr(t, d);
                let name =
                    self.pick_str(&["int", "uint", "double", "string", "bool", "list", "map"]);
                format!("(type({a}) == {name})")
            }
            _ => self.leaf(GenType::Bool),
        }
    }

    fn int_arg(&mut self, d: u32) -> String {
        self.gen_expr(GenType::Int, d)
    }

    fn gen_int(&mut self, d: u32) -> String {
        match self.rng.below(28) {
            0..=5 => {
                let op = self.pick_str(&["+", "-", "*", "/", "%"]);
                let a = self.int_arg(d);
                let b = self.int_arg(d);
                format!("({a} {op} {b})")
            }
            6 => format!("(-({}))", self.int_arg(d)),
            7 | 8 => {
                let t = self.rng.pick(&[
                    GenType::String,
                    GenType::ListInt,
                    GenType::ListString,
                    GenType::MapStringInt,
                ]);
                let t = t.copied().unwrap_or(GenType::String);
                let a = self.gen_expr(t, d);
                if self.rng.chance(1, 2) {
                    format!("size({a})")
                } else {
                    format!("{a}.size()")
                }
            }
            9 | 10 => match self.rng.below(4) {
                0 => format!("int({})", self.gen_expr(GenType::Uint, d)),
                1 => format!("int({})", self.gen_expr(GenType::Double, d)),
                2 => format!("int({})", self.pick_str(&CONVERTIBLE_STRINGS)),
                _ => format!("int({})", self.gen_expr(GenType::String, d)),
            },
            11 | 12 => {
                let l = self.gen_closed(GenType::ListInt, d);
                let idx = self.index(d);
                format!("{l}[{idx}]")
            }
            13 => {
                let m = self.gen_closed(GenType::MapStringInt, d);
                match self.rng.below(4) {
                    0 => format!("{m}.{}", self.pick_str(&FIELDS)),
                    1 => format!("{m}[{}]", self.gen_expr(GenType::String, d)),
                    2 => {
                        let dflt = self.int_arg(d);
                        format!("{m}.?{}.orValue({dflt})", self.pick_str(&FIELDS))
                    }
                    _ => {
                        let key = self.gen_expr(GenType::String, d);
                        let dflt = self.int_arg(d);
                        format!("{m}[?{key}].orValue({dflt})")
                    }
                }
            }
            14 => {
                // Values only known at run time, used as ints.
                let a = self.pick_str(&["dy.a", "dl[0]", "dy.c[0]", "dy.b", "dl[3]", "dy.u"]);
                let b = self.int_arg(d);
                format!("({a} + {b})")
            }
            15 => {
                let f = self.pick_str(&["abs", "sign", "bitNot"]);
                format!("math.{f}({})", self.int_arg(d))
            }
            16 => {
                let f =
                    self.pick_str(&["bitAnd", "bitOr", "bitXor", "bitShiftLeft", "bitShiftRight"]);
                let a = self.int_arg(d);
                let b = self.int_arg(d);
                format!("math.{f}({a}, {b})")
            }
            17 => {
                let f = self.pick_str(&["greatest", "least"]);
                if self.rng.chance(1, 2) {
                    let a = self.int_arg(d);
                    let b = self.int_arg(d);
                    format!("math.{f}({a}, {b})")
                } else {
                    format!("math.{f}({})", self.gen_closed(GenType::ListInt, d))
                }
            }
            18 => {
                let f = self.pick_str(&["indexOf", "lastIndexOf"]);
                let a = self.gen_expr(GenType::String, d);
                let b = self.gen_expr(GenType::String, d);
                if self.rng.chance(1, 3) {
                    format!("{a}.{f}({b}, {})", self.index(d))
                } else {
                    format!("{a}.{f}({b})")
                }
            }
            19 => {
                let body = self.rng.chance(1, 2);
                let l = if body {
                    self.mapped_list(GenType::Int, d)
                } else {
                    let name = self.pick_str(&["filter", "map"]);
                    let ty = if name == "filter" {
                        GenType::Bool
                    } else {
                        GenType::Int
                    };
                    let r = self.macro1(&name, ty, d);
                    // `filter` over a map or `dl` gives keys or elements, not ints: count them.
                    return format!("size({r})");
                };
                format!("size({l})")
            }
            20 => {
                let l = self.mapped_list(GenType::Int, d);
                let dflt = self.int_arg(d);
                format!("{l}[?0].orValue({dflt})")
            }
            _ => self.leaf(GenType::Int),
        }
    }

    fn gen_uint(&mut self, d: u32) -> String {
        match self.rng.below(16) {
            0..=4 => {
                let op = self.pick_str(&["+", "-", "*", "/", "%"]);
                let a = self.gen_expr(GenType::Uint, d);
                let b = self.gen_expr(GenType::Uint, d);
                format!("({a} {op} {b})")
            }
            5 | 6 => match self.rng.below(4) {
                0 => format!("uint({})", self.int_arg(d)),
                1 => format!("uint({})", self.gen_expr(GenType::Double, d)),
                2 => format!("uint({})", self.pick_str(&CONVERTIBLE_STRINGS)),
                _ => format!("uint({})", self.gen_expr(GenType::String, d)),
            },
            7 => {
                let f = self.pick_str(&["abs", "sign", "bitNot"]);
                format!("math.{f}({})", self.gen_expr(GenType::Uint, d))
            }
            8 => {
                let f = self.pick_str(&["bitAnd", "bitOr", "bitXor"]);
                let a = self.gen_expr(GenType::Uint, d);
                let b = self.gen_expr(GenType::Uint, d);
                format!("math.{f}({a}, {b})")
            }
            9 => {
                let f = self.pick_str(&["bitShiftLeft", "bitShiftRight"]);
                let a = self.gen_expr(GenType::Uint, d);
                let b = self.int_arg(d);
                format!("math.{f}({a}, {b})")
            }
            10 => {
                let a = self.pick_str(&["dy.u", "dl[3]", "dy.a"]);
                let b = self.gen_expr(GenType::Uint, d);
                format!("({a} * {b})")
            }
            11 => {
                let f = self.pick_str(&["greatest", "least"]);
                let a = self.gen_expr(GenType::Uint, d);
                let b = self.gen_expr(GenType::Uint, d);
                format!("math.{f}({a}, {b})")
            }
            _ => self.leaf(GenType::Uint),
        }
    }

    fn gen_double(&mut self, d: u32) -> String {
        match self.rng.below(16) {
            0..=4 => {
                let op = self.pick_str(&["+", "-", "*", "/"]);
                let a = self.gen_expr(GenType::Double, d);
                let b = self.gen_expr(GenType::Double, d);
                format!("({a} {op} {b})")
            }
            5 => format!("(-({}))", self.gen_expr(GenType::Double, d)),
            6 | 7 => match self.rng.below(4) {
                0 => format!("double({})", self.int_arg(d)),
                1 => format!("double({})", self.gen_expr(GenType::Uint, d)),
                2 => format!("double({})", self.pick_str(&CONVERTIBLE_STRINGS)),
                _ => format!("double({})", self.gen_expr(GenType::String, d)),
            },
            8 | 9 => {
                let f = self.pick_str(&["sqrt", "ceil", "floor", "round", "trunc", "abs", "sign"]);
                format!("math.{f}({})", self.gen_expr(GenType::Double, d))
            }
            10 => {
                let a = self.pick_str(&["dy.d.x", "dl[2]", "dy.c[1]", "dy.a"]);
                let b = self.gen_expr(GenType::Double, d);
                format!("({a} - {b})")
            }
            11 => {
                let f = self.pick_str(&["greatest", "least"]);
                let a = self.gen_expr(GenType::Double, d);
                let b = self.gen_expr(GenType::Double, d);
                format!("math.{f}({a}, {b})")
            }
            _ => self.leaf(GenType::Double),
        }
    }

    fn gen_string(&mut self, d: u32) -> String {
        match self.rng.below(26) {
            0..=3 => {
                let a = self.gen_expr(GenType::String, d);
                let b = self.gen_expr(GenType::String, d);
                format!("({a} + {b})")
            }
            4 | 5 => {
                let t = self.pick_scalar();
                format!("string({})", self.gen_expr(t, d))
            }
            6 => format!(
                "{}.charAt({})",
                self.gen_expr(GenType::String, d),
                self.index(d)
            ),
            7 => {
                let f = self.pick_str(&["lowerAscii", "upperAscii", "trim", "reverse"]);
                format!("{}.{f}()", self.gen_expr(GenType::String, d))
            }
            8 => {
                let a = self.gen_expr(GenType::String, d);
                let b = self.gen_expr(GenType::String, d);
                let c = self.gen_expr(GenType::String, d);
                if self.rng.chance(1, 3) {
                    format!("{a}.replace({b}, {c}, {})", self.index(d))
                } else {
                    format!("{a}.replace({b}, {c})")
                }
            }
            9 => {
                let a = self.gen_expr(GenType::String, d);
                if self.rng.chance(1, 2) {
                    format!("{a}.substring({})", self.index(d))
                } else {
                    format!("{a}.substring({}, {})", self.index(d), self.index(d))
                }
            }
            10 => {
                let l = self.gen_expr(GenType::ListString, d);
                if self.rng.chance(1, 3) {
                    format!("{l}.join()")
                } else {
                    format!("{l}.join({})", self.gen_expr(GenType::String, d))
                }
            }
            11 => format!("strings.quote({})", self.gen_expr(GenType::String, d)),
            12 => {
                let (f, t) = self
                    .rng
                    .pick(&FORMATS)
                    .copied()
                    .unwrap_or((r#""%s""#, GenType::Dyn));
                let a = self.gen_expr(t, d);
                if f.contains("%s") && f.contains("%d") {
                    let b = self.int_arg(d);
                    format!("{f}.format([{a}, {b}])")
                } else {
                    format!("{f}.format([{a}])")
                }
            }
            13 => {
                let a = self.gen_expr(GenType::String, d);
                let p = self.pick_str(&PATTERNS);
                let r = self.gen_expr(GenType::String, d);
                if self.rng.chance(1, 2) {
                    format!("regex.replace({a}, {p}, {r})")
                } else {
                    format!("regex.extract({a}, {p}).orValue({r})")
                }
            }
            14 | 15 => {
                let l = self.gen_closed(GenType::ListString, d);
                format!("{l}[{}]", self.index(d))
            }
            16 => {
                let a = self.pick_str(&["dy.b", "dl[1]", "dy.c[2]", "dy.a"]);
                let b = self.gen_expr(GenType::String, d);
                format!("({a} + {b})")
            }
            17 => {
                let l = self.mapped_list(GenType::String, d);
                let dflt = self.gen_expr(GenType::String, d);
                format!("{l}[?0].orValue({dflt})")
            }
            _ => self.leaf(GenType::String),
        }
    }

    fn list_items(&mut self, elem: GenType, d: u32) -> String {
        let n = self.rng.below(4);
        let mut items = Vec::new();
        for _ in 0..n {
            if self.rng.chance(1, 8) {
                let e = self.gen_expr(elem, d);
                if self.rng.chance(1, 2) {
                    items.push(format!("?optional.of({e})"));
                } else {
                    items.push("?optional.none()".to_string());
                }
            } else {
                items.push(self.gen_expr(elem, d));
            }
        }
        format!("[{}]", items.join(", "))
    }

    fn gen_list_int(&mut self, d: u32) -> String {
        match self.rng.below(20) {
            0..=3 => self.list_items(GenType::Int, d),
            4 | 5 => {
                let a = self.gen_expr(GenType::ListInt, d);
                let b = self.gen_expr(GenType::ListInt, d);
                format!("({a} + {b})")
            }
            6..=8 => self.mapped_list(GenType::Int, d),
            9 => {
                let l = self.gen_closed(GenType::ListInt, d);
                let x = self.fresh("x");
                let p = self.with_vars(&[(&x, GenType::Int)], |g| g.gen_expr(GenType::Bool, d));
                format!("{l}.filter({x}, {p})")
            }
            10 => {
                let l = self.gen_closed(GenType::ListInt, d);
                let f = self.pick_str(&["sort", "distinct", "reverse"]);
                format!("{l}.{f}()")
            }
            11 => {
                let l = self.gen_closed(GenType::ListInt, d);
                format!("{l}.slice({}, {})", self.index(d), self.index(d))
            }
            12 => format!("lists.range({})", self.rng.below(6)),
            13 => {
                let a = self.gen_expr(GenType::ListInt, d);
                let b = self.gen_expr(GenType::ListInt, d);
                format!("[{a}, {b}].flatten()")
            }
            14 => {
                let l = self.gen_closed(GenType::ListInt, d);
                let x = self.fresh("x");
                let key = self.with_vars(&[(&x, GenType::Int)], |g| g.gen_expr(GenType::Int, d));
                format!("{l}.sortBy({x}, {key})")
            }
            _ => self.leaf(GenType::ListInt),
        }
    }

    fn gen_list_string(&mut self, d: u32) -> String {
        match self.rng.below(20) {
            0..=3 => self.list_items(GenType::String, d),
            4 | 5 => {
                let a = self.gen_expr(GenType::ListString, d);
                let b = self.gen_expr(GenType::ListString, d);
                format!("({a} + {b})")
            }
            6..=8 => self.mapped_list(GenType::String, d),
            9 => {
                // `filter` over a map gives its keys.
                if self.rng.chance(1, 2) {
                    let l = self.gen_closed(GenType::ListString, d);
                    let x = self.fresh("x");
                    let p =
                        self.with_vars(&[(&x, GenType::String)], |g| g.gen_expr(GenType::Bool, d));
                    format!("{l}.filter({x}, {p})")
                } else {
                    let m = self.gen_closed(GenType::MapStringInt, d);
                    let x = self.fresh("x");
                    let p =
                        self.with_vars(&[(&x, GenType::String)], |g| g.gen_expr(GenType::Bool, d));
                    format!("{m}.filter({x}, {p})")
                }
            }
            10 => {
                let a = self.gen_expr(GenType::String, d);
                let sep = self.gen_expr(GenType::String, d);
                if self.rng.chance(1, 3) {
                    format!("{a}.split({sep}, {})", self.index(d))
                } else {
                    format!("{a}.split({sep})")
                }
            }
            11 => {
                let a = self.gen_expr(GenType::String, d);
                let p = self.pick_str(&PATTERNS);
                format!("regex.extractAll({a}, {p})")
            }
            12 => {
                let l = self.gen_closed(GenType::ListString, d);
                let f = self.pick_str(&["sort", "distinct", "reverse"]);
                format!("{l}.{f}()")
            }
            _ => self.leaf(GenType::ListString),
        }
    }

    fn gen_map(&mut self, d: u32) -> String {
        match self.rng.below(12) {
            0..=4 => {
                let n = self.rng.below(4);
                let mut entries = Vec::new();
                for _ in 0..n {
                    let key = if self.rng.chance(1, 5) {
                        self.gen_expr(GenType::String, d)
                    } else {
                        self.pick_str(&KEY_LITERALS)
                    };
                    let value = self.int_arg(d);
                    if self.rng.chance(1, 8) {
                        entries.push(format!("?{key}: optional.of({value})"));
                    } else {
                        entries.push(format!("{key}: {value}"));
                    }
                }
                format!("{{{}}}", entries.join(", "))
            }
            5..=7 => {
                let m = self.gen_closed(GenType::MapStringInt, d);
                let k = self.fresh("k");
                let v = self.fresh("e");
                let vars = [(k.as_str(), GenType::String), (v.as_str(), GenType::Int)];
                if self.rng.chance(1, 2) {
                    let body = self.with_vars(&vars, |g| g.gen_expr(GenType::Int, d));
                    format!("{m}.transformMap({k}, {v}, {body})")
                } else {
                    let (p, body) = self.with_vars(&vars, |g| {
                        (g.gen_expr(GenType::Bool, d), g.gen_expr(GenType::Int, d))
                    });
                    format!("{m}.transformMap({k}, {v}, {p}, {body})")
                }
            }
            _ => self.leaf(GenType::MapStringInt),
        }
    }

    fn gen_dyn(&mut self, d: u32) -> String {
        match self.rng.below(12) {
            0..=2 => {
                let t = self.pick_type();
                format!("dyn({})", self.gen_expr(t, d))
            }
            3 => self.pick_str(&[
                "dy.a", "dy.b", "dy.c", "dy.d", "dy.n", "dy.zz", "dy.d.x", "dy.c[2]", "dl[4]",
                "dl[5].k", "dl[9]",
            ]),
            4 => format!("dy[{}]", self.gen_expr(GenType::String, d)),
            5 => format!("dl[{}]", self.index(d)),
            6 | 7 => {
                // Mixed literals: list(dyn) and map(string, dyn).
                let ta = self.pick_type();
                let tb = self.pick_type();
                let a = self.gen_expr(ta, d);
                let b = self.gen_expr(tb, d);
                if self.rng.chance(1, 2) {
                    format!("[{a}, {b}]")
                } else {
                    format!(r#"{{"a": {a}, "b": {b}}}"#)
                }
            }
            8 => {
                let dflt = self.gen_expr(GenType::Dyn, d);
                format!("dy.?{}.orValue({dflt})", self.pick_str(&FIELDS))
            }
            _ => {
                let t = self.pick_type();
                self.gen_expr(t, d)
            }
        }
    }
}

/// One disagreement between the backends.
#[derive(Clone, Debug)]
pub struct Disagreement {
    /// The expression.
    pub expr: String,
    /// The cost limit both programs ran with (`None`: unlimited).
    pub cost_limit: Option<u64>,
    /// Both outcomes, or why a program could not be made.
    pub detail: String,
}

impl fmt::Display for Disagreement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.cost_limit {
            Some(n) => write!(f, "{}  [cost limit {n}]\n    {}", self.expr, self.detail),
            None => write!(f, "{}\n    {}", self.expr, self.detail),
        }
    }
}

/// What running one checked expression on both backends found.
#[derive(Clone, Debug, Default)]
pub struct Comparison {
    /// Evaluations compared (one unlimited, and one under a cost limit if asked).
    pub evaluations: usize,
    /// Evaluations whose (interpreter) outcome was an error, the cost limit included.
    pub errors: usize,
    /// Evaluations the cost limit stopped.
    pub limit_exceeded: usize,
    /// Evaluations on which both backends agreed on an internal error (a bug in Celerity
    /// that the comparison cannot see): the expression and the error.
    pub internal_errors: Vec<String>,
    /// The evaluations on which the backends disagreed.
    pub disagreements: Vec<Disagreement>,
}

/// What checking one expression on both backends found.
#[derive(Clone, Debug)]
pub enum Verdict {
    /// The checker rejected the expression (a generator bug): the issues.
    Rejected(String),
    /// Both backends ran.
    Compared(Comparison),
}

/// Runs expressions on the interpreter and as native code, in [`env()`] against
/// [`activation`], and compares them.
#[derive(Debug)]
pub struct Differ {
    env: Env,
    activation: MapActivation,
    inject_fault: bool,
}

impl Default for Differ {
    fn default() -> Self {
        Differ::new(false)
    }
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic".to_string()
    }
}

impl Differ {
    /// A differ; with `inject_fault`, native programs are compiled with a deliberate fault
    /// (one cost unit too many), which must show up as disagreements.
    pub fn new(inject_fault: bool) -> Differ {
        Differ {
            env: env(),
            activation: activation(),
            inject_fault,
        }
    }

    fn program(&self, ast: &celerity::Ast, backend: Backend) -> Result<Program, String> {
        let options = ProgramOptions::default()
            .backend(backend)
            .inject_fault(self.inject_fault && backend == Backend::Jit);
        self.env
            .program_with(ast, options)
            .map_err(|i| i.to_string())
    }

    /// Compiles `expr` once, makes an interpreter program and a native one, and compares
    /// their evaluations without a cost limit and, if `limit_seed` is given, again under a
    /// limit chosen from it at or below the full cost (so that the limit is often hit). A
    /// native program that cannot be made, or a panic in either backend, counts as a
    /// disagreement.
    pub fn check(&self, expr: &str, limit_seed: Option<u64>) -> Verdict {
        let ast = match self.env.compile(expr) {
            Ok(a) => a,
            Err(issues) => return Verdict::Rejected(issues.to_string()),
        };
        let mut c = Comparison::default();
        let run = catch_unwind(AssertUnwindSafe(|| {
            self.compare(expr, &ast, limit_seed, &mut c)
        }));
        let failure = match run {
            Ok(Ok(())) => None,
            Ok(Err(detail)) => Some(detail),
            Err(p) => Some(format!("panicked: {}", panic_text(p.as_ref()))),
        };
        if let Some(detail) = failure {
            c.evaluations = c.evaluations.max(1);
            c.disagreements.push(Disagreement {
                expr: expr.to_string(),
                cost_limit: None,
                detail,
            });
        }
        Verdict::Compared(c)
    }

    /// Makes the programs and compares their evaluations into `c`; an error says why the
    /// programs could not be compared.
    fn compare(
        &self,
        expr: &str,
        ast: &celerity::Ast,
        limit_seed: Option<u64>,
        c: &mut Comparison,
    ) -> Result<(), String> {
        let interp = self.program(ast, Backend::Interpreter);
        let jit = self.program(ast, Backend::Jit);
        let (interp, jit) = match (interp, jit) {
            (Ok(i), Ok(j)) => (i, j),
            // Both refuse the program the same way (a constant that fails when folded).
            (Err(a), Err(b)) if a == b => {
                c.evaluations = 1;
                c.errors = 1;
                return Ok(());
            }
            (Err(a), Ok(_)) => return Err(format!("interpreter program failed: {a}")),
            (Ok(_), Err(b)) => return Err(format!("jit program failed: {b}")),
            (Err(a), Err(b)) => {
                return Err(format!("programs failed: interpreter {a}; jit {b}"));
            }
        };
        if jit.backend() != Backend::Jit {
            return Err("the native program is not compiled".to_string());
        }
        let full_cost = self.compare_once(expr, &interp, &jit, None, c);
        if let Some(seed) = limit_seed {
            let limit = seed % (full_cost + 1);
            self.compare_once(
                expr,
                &interp.with_cost_limit(Some(limit)),
                &jit.with_cost_limit(Some(limit)),
                Some(limit),
                c,
            );
        }
        Ok(())
    }

    /// Evaluates both programs once and records the comparison; returns the interpreter's
    /// cost.
    fn compare_once(
        &self,
        expr: &str,
        interp: &Program,
        jit: &Program,
        limit: Option<u64>,
        c: &mut Comparison,
    ) -> u64 {
        let (r1, d1) = interp.eval_details(&self.activation);
        let (r2, d2) = jit.eval_details(&self.activation);
        c.evaluations += 1;
        if let Err(e) = &r1 {
            c.errors += 1;
            match e.kind {
                ErrorKind::CostLimitExceeded => c.limit_exceeded += 1,
                ErrorKind::Internal if r2 == r1 => c
                    .internal_errors
                    .push(format!("{expr}: {} (in both backends)", e.message)),
                _ => {}
            }
        }
        if let Some(detail) = differential((&r1, d1.actual_cost), (&r2, d2.actual_cost)) {
            c.disagreements.push(Disagreement {
                expr: expr.to_string(),
                cost_limit: limit,
                detail,
            });
        }
        d1.actual_cost
    }
}

/// What [`run_differential`] found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Expressions generated.
    pub generated: usize,
    /// Expressions the checker rejected (generator bugs).
    pub rejected: usize,
    /// The first few rejected expressions, with the checker's issues.
    pub rejected_examples: Vec<String>,
    /// Evaluations compared (unlimited ones, and those under a cost limit).
    pub compared: usize,
    /// Evaluations on which the backends agreed.
    pub agreed: usize,
    /// Evaluations whose outcome was an error (the cost limit included): the error paths
    /// the comparison covered.
    pub errors: usize,
    /// Evaluations the cost limit stopped.
    pub limit_exceeded: usize,
    /// Evaluations on which both backends reported the same internal error (the first few;
    /// a bug the comparison cannot see).
    pub internal_errors: Vec<String>,
    /// Evaluations on which the backends did not agree (including programs that could not
    /// be made, and panics).
    pub disagreements: usize,
    /// The first few disagreements.
    pub examples: Vec<Disagreement>,
}

impl Report {
    /// How many examples of each kind a report keeps.
    pub const MAX_EXAMPLES: usize = 20;

    /// Adds another report's counts and examples (up to [`Report::MAX_EXAMPLES`] of each).
    pub fn merge(&mut self, other: Report) {
        self.generated += other.generated;
        self.rejected += other.rejected;
        self.compared += other.compared;
        self.agreed += other.agreed;
        self.errors += other.errors;
        self.limit_exceeded += other.limit_exceeded;
        self.disagreements += other.disagreements;
        fn extend<T>(into: &mut Vec<T>, from: Vec<T>) {
            let room = Report::MAX_EXAMPLES.saturating_sub(into.len());
            into.extend(from.into_iter().take(room));
        }
        extend(&mut self.rejected_examples, other.rejected_examples);
        extend(&mut self.internal_errors, other.internal_errors);
        extend(&mut self.examples, other.examples);
    }

    /// Adds one expression's verdict.
    pub fn add(&mut self, expr: &str, verdict: Verdict) {
        let mut r = Report {
            generated: 1,
            ..Report::default()
        };
        match verdict {
            Verdict::Rejected(issues) => {
                r.rejected = 1;
                r.rejected_examples.push(format!("{expr}\n{issues}"));
            }
            Verdict::Compared(c) => {
                r.compared = c.evaluations;
                r.errors = c.errors;
                r.limit_exceeded = c.limit_exceeded;
                r.disagreements = c.disagreements.len();
                r.agreed = c.evaluations.saturating_sub(c.disagreements.len());
                r.internal_errors = c.internal_errors;
                r.examples = c.disagreements;
            }
        }
        self.merge(r);
    }

    /// The fraction of generated expressions the checker rejected.
    pub fn rejection_rate(&self) -> f64 {
        if self.generated == 0 {
            0.0
        } else {
            self.rejected as f64 / self.generated as f64
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} expressions generated, {} rejected by the checker ({:.2}%); {} evaluations compared \
             ({} errors, {} stopped by the cost limit): {} agreed, {} disagreed",
            self.generated,
            self.rejected,
            100.0 * self.rejection_rate(),
            self.compared,
            self.errors,
            self.limit_exceeded,
            self.agreed,
            self.disagreements
        )?;
        for r in &self.rejected_examples {
            writeln!(f, "rejected: {r}")?;
        }
        for e in &self.internal_errors {
            writeln!(f, "internal error: {e}")?;
        }
        for e in &self.examples {
            writeln!(f, "disagreement: {e}")?;
        }
        Ok(())
    }
}

/// Options of a differential run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// The deepest expression generated (each expression's depth is random in
    /// `1..=max_depth`).
    pub max_depth: u32,
    /// One expression in this many is also compared under a cost limit (`0`: never).
    pub cost_limit_every: u64,
    /// Compile native programs with a deliberate fault (see [`Differ::new`]).
    pub inject_fault: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            max_depth: 5,
            cost_limit_every: 3,
            inject_fault: false,
        }
    }
}

/// Generates `count` expressions from `seed` and compares the backends on each
/// (see [`Differ::check`]).
pub fn run_differential(seed: u64, count: usize) -> Report {
    run_differential_with(seed, count, RunOptions::default())
}

/// [`run_differential`] with options.
pub fn run_differential_with(seed: u64, count: usize, options: RunOptions) -> Report {
    let differ = Differ::new(options.inject_fault);
    let mut generator = Generator::new(seed);
    let mut report = Report::default();
    for _ in 0..count {
        let (expr, limit_seed) = generator.case(options);
        let verdict = differ.check(&expr, limit_seed);
        report.add(&expr, verdict);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_expressions() {
        let a: Vec<String> = {
            let mut g = Generator::new(42);
            (0..50).map(|_| g.any_expr(4)).collect()
        };
        let mut g = Generator::new(42);
        let b: Vec<String> = (0..50).map(|_| g.any_expr(4)).collect();
        assert_eq!(a, b);
        let mut g = Generator::new(43);
        let c: Vec<String> = (0..50).map(|_| g.any_expr(4)).collect();
        assert_ne!(a, c);
    }

    #[test]
    fn depth_zero_is_a_leaf() {
        let mut g = Generator::new(7);
        for ty in GenType::ALL {
            for _ in 0..20 {
                let e = g.expr(ty, 0);
                assert!(!e.contains(" ? "), "{e}");
            }
        }
    }

    #[test]
    fn rng_below_stays_in_range() {
        let mut r = Rng::new(1);
        for n in 1..100 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
        assert_eq!(r.pick::<u8>(&[]), None);
    }
}
