//! Kubernetes' cost estimator (`library/cost.go`): the run-time `CallCost` and the static
//! `EstimateCallCost`, which replace cel-go's cost of a call **by function name** (Kubernetes
//! dispatches on the name, so it also takes over several cel-go string-extension functions:
//! `lowerAscii`, `upperAscii`, `substring`, `trim`, `replace`, `split`, `join`, and
//! `indexOf`/`lastIndexOf` on strings).
//!
//! Each formula is a small public function over sizes (statically) or values (at run time);
//! [`KubernetesCosts`] is the library that registers them as `CostKey::Function` hooks. A
//! formula returning `None` falls through to cel-go's own rules. All costs are the call's
//! own cost: the evaluator adds the arguments' costs.
//!
//! | functions | run time | static |
//! | --- | --- | --- |
//! | `check` | 350,000 | 350,000 |
//! | authz builders and accessors | 1 | 1 |
//! | `fieldSelector`, `labelSelector` | `10 + ceil(0.1 n) + ceil(ceil(0.5 n) × 50)` | same over the size range |
//! | `isSorted sum max min indexOf lastIndexOf includes` | [`traversal_cost`] of the receiver | [`list_function_estimate`] |
//! | `url`, `jsonpatch.escapeKey` | `ceil(0.1 × size(arg))` | same, result size = argument size |
//! | `lowerAscii upperAscii substring trim` | `ceil(0.1 × size(receiver))` | same, result size = receiver size |
//! | `replace`, `split` | `ceil(0.2 × size(receiver))` | same; result size per [`replace_result_size`] / up to the receiver's size |
//! | `join` | `ceil(0.2 × size(result))` | `ceil(0.1 × (size(list) × size(elem) + size(sep) × (size(list) − 1)))` |
//! | `find`, `findAll` | `ceil(0.1 (n+1)) × ceil(0.25 m)` | same over the ranges; result size `0..n` |
//! | `cidr isIP isCIDR ip(string)` | `ceil(0.1 × size(arg))` | same |
//! | `cidr.ip()` and IP/CIDR accessors | 1 | 1 |
//! | `ip.isCanonical` | `ceil(0.2 × size(arg))` | same |
//! | `containsIP` | `ceil(0.2 × size(cidr))` (+ `ceil(0.1 × size(string))`) | `1..4` (+ string term) |
//! | `containsCIDR` | `ceil(0.2 c) + ceil(0.1 c) + 1` (+ string term) | `3..7` (+ string term) |
//!
//! The string term of `containsIP` and `containsCIDR`, and the nominal cost of `cidr.ip()`,
//! depend on the overload id cel-go hands the estimator, not on the argument's value: the id
//! is there only when the checker resolved a single overload, so a string passed as `dyn`
//! (`self.ip` of a `map(string, dyn)`) is not charged for parsing
//! ([`COST_DISTINCT_OVERLOADS`]).
//! | `quantity isQuantity semver isSemver` | `ceil(0.1 × size(arg))` | same |
//! | `validate` | `ceil(0.1 (n+1)) × ceil(0.25 × maxRegexSize)` | `ceil(ceil(0.1 n) × 32)` |
//! | `format.named`, quantity/semver/URL accessors and arithmetic | 1 | 1 |
//! | `==` on Kubernetes types | 1 | 1 (formats `1..7`; URLs `ceil(0.1 × (1..size(rhs)))`) |
//!
//! Sizes are what cel-go's `Size()` reports: code points of a string, bytes of bytes, entries
//! of a list or map; values without a size count 1.

use std::sync::Arc;

use cel_cost::{
    ActualCostFn, CallEstimate, CostKey, CostRange, EstimateArg, EstimateFn, HookScope,
    REGEX_STRING_LENGTH_COST_FACTOR, STRING_TRAVERSAL_COST_FACTOR, SizeRange, ceil_factor,
};
use cel_ext::{Library, LibraryContents};
use cel_runtime::Value;
use cel_types::Type;

use crate::opaque;

/// The cost of one authorization check.
pub const CHECK_COST: u64 = 350_000;

/// Kubernetes' per-call run-time cost limit (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The run-time budget per custom resource object or per admission binding.
pub const RUNTIME_CEL_COST_BUDGET: u64 = 10_000_000;
/// The run-time budget of webhook / policy match conditions.
pub const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS: u64 = 2_500_000;
/// The static per-expression estimate limit (CRD rules, after cardinality).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The static limit on the sum of a CRD's rules.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The function names whose cost Kubernetes always sets to 1.
pub const NOMINAL_FUNCTIONS: &[&str] = &[
    "serviceAccount",
    "path",
    "group",
    "resource",
    "subresource",
    "namespace",
    "name",
    "allowed",
    "reason",
    "error",
    "errored",
    "masked",
    "prefixLength",
    "family",
    "isUnspecified",
    "isLoopback",
    "isLinkLocalMulticast",
    "isLinkLocalUnicast",
    "isGlobalUnicast",
    "format.named",
    "sign",
    "asInteger",
    "isInteger",
    "asApproximateFloat",
    "isGreaterThan",
    "isLessThan",
    "compareTo",
    "add",
    "sub",
    "major",
    "minor",
    "patch",
    "getScheme",
    "getHostname",
    "getHost",
    "getPort",
    "getEscapedPath",
    "getQuery",
];

/// The list functions charged by one traversal.
pub const LIST_FUNCTIONS: &[&str] = &[
    "isSorted",
    "sum",
    "max",
    "min",
    "indexOf",
    "lastIndexOf",
    "includes",
];

/// Functions charged `ceil(0.1 × size(first argument))` at run time.
pub const TRAVERSAL_FUNCTIONS: &[&str] = &[
    "url",
    "lowerAscii",
    "upperAscii",
    "substring",
    "trim",
    "jsonpatch.escapeKey",
    "cidr",
    "isIP",
    "isCIDR",
    "quantity",
    "isQuantity",
    "semver",
    "isSemver",
];

/// Opaque type names whose equality Kubernetes charges 1.
pub const UNIT_EQUALITY_TYPES: &[&str] = &[
    crate::quantity::QUANTITY_TYPE,
    "net.IP",
    "net.CIDR",
    crate::format::FORMAT_TYPE,
    crate::urls::URL_TYPE,
    crate::semver::SEMVER_TYPE,
    crate::authz::AUTHORIZER_TYPE,
    crate::authz::PATH_CHECK_TYPE,
    crate::authz::GROUP_CHECK_TYPE,
    crate::authz::RESOURCE_CHECK_TYPE,
    crate::authz::DECISION_TYPE,
];

const TRAVERSAL: f64 = STRING_TRAVERSAL_COST_FACTOR;

/// `ceil(x)` of a float as cel-go converts it (`uint64(math.Ceil(x))`, saturating).
fn ceil_u64(x: f64) -> u64 {
    let c = x.ceil();
    if c >= u64::MAX as f64 {
        u64::MAX
    } else if c <= 0.0 {
        0
    } else {
        c as u64
    }
}

/// Kubernetes' `actualSize`: the size of values that have one ([`Value::sizer_size`]: code
/// points, bytes, entries, the bytes of an IP address or CIDR prefix), 1 for anything else.
pub fn actual_size(v: &Value) -> u64 {
    v.sizer_size().unwrap_or(1)
}

/// Kubernetes' `traversalCost`: strings and bytes cost `floor(0.1 × bytes)`, lists the sum
/// over their elements, maps the sum over keys and values, anything else 1. Iterative, so
/// deeply nested values cannot overflow the stack.
pub fn traversal_cost(v: &Value) -> u64 {
    let mut total: u64 = 0;
    let mut work: Vec<&Value> = vec![v];
    while let Some(v) = work.pop() {
        match v {
            Value::String(s) => total = total.saturating_add((s.len() as f64 * TRAVERSAL) as u64),
            Value::Bytes(b) => total = total.saturating_add((b.len() as f64 * TRAVERSAL) as u64),
            Value::List(l) => work.extend(l.iter()),
            Value::Map(m) => {
                for (k, val) in m.iter() {
                    if let cel_runtime::Key::String(s) = k {
                        total = total.saturating_add((s.len() as f64 * TRAVERSAL) as u64);
                    } else {
                        total = total.saturating_add(1);
                    }
                    work.push(val);
                }
            }
            _ => total = total.saturating_add(1),
        }
    }
    total
}

/// `ceil(0.1 × n)`.
pub fn traversal(n: u64) -> u64 {
    ceil_u64(n as f64 * TRAVERSAL)
}

/// `ceil(0.2 × n)`, computed as Go does (`n × 2 × 0.1`).
pub fn double_traversal(n: u64) -> u64 {
    ceil_u64(n as f64 * 2.0 * TRAVERSAL)
}

/// `find`/`findAll` and the regex part of `validate`: `ceil(0.1 (n+1)) × ceil(0.25 m)`.
pub fn regex_cost(string_size: u64, regex_size: u64) -> u64 {
    let s = ceil_u64((1.0 + string_size as f64) * TRAVERSAL);
    let r = ceil_u64(regex_size as f64 * REGEX_STRING_LENGTH_COST_FACTOR);
    s.saturating_mul(r)
}

/// The selector cost: `10 + ceil(0.1 n) + ceil(ceil(0.5 n) × 50)`, over a size range.
pub fn selector_cost(len: SizeRange) -> CostRange {
    let parse = len.multiply_by_factor(TRAVERSAL);
    let requirements = len.multiply_by_factor(0.5);
    let requirement_cost = SizeRange {
        min: requirements.min,
        max: requirements.max,
    }
    .multiply_by_factor(
        (cel_cost::LIST_CREATE_BASE_COST + cel_cost::STRUCT_CREATE_BASE_COST) as f64,
    );
    CostRange::exact(cel_cost::LIST_CREATE_BASE_COST)
        .add(parse)
        .add(requirement_cost)
}

/// `containsIP` at run time: `ceil(0.1 × 2c)`, plus `ceil(0.1 × size(string))` for the
/// string overload.
pub fn contains_ip_cost(cidr_size: u64, string_arg_size: Option<u64>) -> u64 {
    let mut c = ceil_u64((cidr_size.saturating_add(cidr_size)) as f64 * TRAVERSAL);
    if let Some(n) = string_arg_size {
        c = c.saturating_add(traversal(n));
    }
    c
}

/// `containsCIDR` at run time: `ceil(0.1 × 2c) + ceil(0.1 × c) + 1` (+ string term).
pub fn contains_cidr_cost(cidr_size: u64, string_arg_size: Option<u64>) -> u64 {
    contains_ip_cost(cidr_size, string_arg_size)
        .saturating_add(traversal(cidr_size))
        .saturating_add(1)
}

/// The overloads whose cost Kubernetes' estimator tells apart from the other overloads of
/// their function, by the overload id cel-go passes it: `cidr.ip()` is nominal, and the string
/// forms of `containsIP` and `containsCIDR` pay for parsing their argument. cel-go passes the
/// id only when the checker resolved exactly one overload (`PlanCall`'s `resolveFunction`);
/// with a `dyn` argument it passes "", so the string term is not charged even for a string.
pub const COST_DISTINCT_OVERLOADS: &[&str] = &[
    "cidr_ip",
    "cidr_contains_ip_string",
    "cidr_contains_cidr_string",
];

/// The run-time cost Kubernetes' `CallCost` gives a call of `function` resolved to `overload`
/// ("" when the checker left several candidates), or `None` to fall through to cel-go's
/// rules. `args` has the receiver first.
pub fn call_cost(function: &str, overload: &str, args: &[Value], result: &Value) -> Option<u64> {
    match function {
        "check" => Some(CHECK_COST),
        f if NOMINAL_FUNCTIONS.contains(&f) => Some(1),
        "fieldSelector" | "labelSelector" => {
            let n = actual_size(args.get(1)?);
            Some(selector_cost(SizeRange::exact(n)).max)
        }
        f if LIST_FUNCTIONS.contains(&f) => Some(args.first().map_or(0, traversal_cost)),
        f if TRAVERSAL_FUNCTIONS.contains(&f) => Some(traversal(actual_size(args.first()?))),
        "replace" | "split" => Some(double_traversal(actual_size(args.first()?))),
        "join" => {
            args.first()?;
            Some(double_traversal(actual_size(result)))
        }
        "find" | "findAll" => {
            if args.len() < 2 {
                return None;
            }
            Some(regex_cost(actual_size(&args[0]), actual_size(&args[1])))
        }
        "ip" => {
            let a = args.first()?;
            if overload == "cidr_ip" {
                Some(1)
            } else {
                Some(traversal(actual_size(a)))
            }
        }
        "ip.isCanonical" => Some(double_traversal(actual_size(args.first()?))),
        "containsIP" | "containsCIDR" => {
            if args.len() < 2 {
                return None;
            }
            let c = actual_size(&args[0]);
            let s = matches!(
                overload,
                "cidr_contains_ip_string" | "cidr_contains_cidr_string"
            )
            .then(|| actual_size(&args[1]));
            Some(if function == "containsIP" {
                contains_ip_cost(c, s)
            } else {
                contains_cidr_cost(c, s)
            })
        }
        "validate" => {
            if args.len() < 2 {
                return None;
            }
            let f = opaque::<crate::format::NamedFormat>(&args[0])?;
            Some(regex_cost(actual_size(&args[1]), f.max_regex_size))
        }
        "_==_" => {
            let lhs = args.first()?;
            match lhs {
                Value::Opaque(o) if UNIT_EQUALITY_TYPES.contains(&o.type_name()) => Some(1),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The size of an argument, unknown (`0..u64::MAX`) when the checker does not know it.
fn size_of(a: &EstimateArg) -> SizeRange {
    a.size.unwrap_or(SizeRange::unknown())
}

/// The static cost of the list functions: for a list receiver,
/// `size(list) × (1 + ceil(0.1 × size(elem)))` when the elements are strings or bytes and
/// `size(list) × 1` otherwise; for any other receiver, `ceil(0.1 × size)` (`includes` on a
/// non-list: `size × 1`).
pub fn list_function_estimate(
    function: &str,
    target_ty: &Type,
    target_size: SizeRange,
    elem_size: Option<SizeRange>,
) -> CostRange {
    match target_ty {
        Type::List(elem) => {
            let mut el = CostRange::exact(1);
            if matches!(**elem, Type::String | Type::Bytes) {
                el = el.add(
                    elem_size
                        .unwrap_or(SizeRange::unknown())
                        .multiply_by_factor(TRAVERSAL),
                );
            }
            el.multiply_by_size(target_size)
        }
        _ if function == "includes" => target_size.as_cost(),
        _ => target_size.multiply_by_factor(TRAVERSAL),
    }
}

/// The size of `replace`'s result, from the sizes of the receiver, the text replaced and the
/// replacement (cost_test.go's `TestSize`).
pub fn replace_result_size(sz: SizeRange, to_replace: SizeRange, with: SizeRange) -> SizeRange {
    let mut count = SizeRange { min: 0, max: 0 };
    let mut retained = SizeRange { min: 0, max: 0 };
    if to_replace.min == 0 {
        count.max = if sz.max < u64::MAX {
            sz.max + 1
        } else {
            sz.max
        };
        retained.max = sz.max;
    } else if with.max <= to_replace.min {
        count.max = 0;
        retained.max = sz.max;
    } else {
        count.max = ceil_u64(sz.max as f64 / to_replace.min as f64);
    }
    if to_replace.max == 0 {
        count.min = if sz.min < u64::MAX {
            sz.min + 1
        } else {
            sz.min
        };
        retained.min = sz.min;
    } else if to_replace.max <= with.min {
        count.min = 0;
        retained.min = sz.min;
    } else {
        count.min = ceil_u64(sz.min as f64 / to_replace.max as f64);
    }
    count.multiply(with).add(retained)
}

/// The size of `join`'s result: `size(list) × size(elem) + size(sep) × (size(list) − 1)`.
pub fn join_result_size(
    list: SizeRange,
    elem: Option<SizeRange>,
    sep: Option<SizeRange>,
) -> SizeRange {
    let mut sz = match elem {
        Some(e) => list.multiply(e),
        None => SizeRange { min: 0, max: 0 },
    };
    if let Some(sep) = sep {
        let seps = SizeRange {
            min: list.min.saturating_sub(1),
            max: list.max.saturating_sub(1),
        };
        sz = sz.add(sep.multiply(seps));
    }
    sz
}

/// A type-based size estimator, as Kubernetes' `SizeEstimator` (CRD schemas give sizes by
/// path; tests give fixed sizes by type). Used for list elements, whose size the checker
/// does not compute.
pub type ElementSizeFn = Arc<dyn Fn(&Type) -> Option<SizeRange> + Send + Sync>;

fn cost(c: CostRange) -> Option<CallEstimate> {
    Some(CallEstimate {
        cost: c,
        result_size: None,
    })
}

fn sized(c: CostRange, size: SizeRange) -> Option<CallEstimate> {
    Some(CallEstimate {
        cost: c,
        result_size: Some(size),
    })
}

/// Kubernetes' `EstimateCallCost` for a call of `function`, estimated for one of its
/// candidate `overload`s (cel-go estimates each candidate and takes the union). `args` has the
/// receiver first for member calls (Kubernetes' `target`); `elem_size` estimates list element
/// sizes.
pub fn estimate_call_cost(
    function: &str,
    overload: &str,
    args: &[EstimateArg],
    elem_size: Option<&ElementSizeFn>,
) -> Option<CallEstimate> {
    // The host's size of the list's element node, else the size its type suggests.
    let elem = |a: &EstimateArg| -> Option<SizeRange> {
        match &a.ty {
            Type::List(e) => a.elem_size.or_else(|| elem_size.and_then(|f| f(e))),
            _ => None,
        }
    };
    match function {
        "check" => cost(CostRange::exact(CHECK_COST)),
        f if NOMINAL_FUNCTIONS.contains(&f) => cost(CostRange::exact(1)),
        "fieldSelector" | "labelSelector" => {
            // The selector is the one argument after the receiver.
            let [_, sel] = args else { return None };
            cost(selector_cost(size_of(sel)))
        }
        f if LIST_FUNCTIONS.contains(&f) => {
            let t = args.first()?;
            cost(list_function_estimate(f, &t.ty, size_of(t), elem(t)))
        }
        "url" | "jsonpatch.escapeKey" => {
            let [a] = args else { return None };
            let sz = size_of(a);
            sized(sz.multiply_by_factor(TRAVERSAL), sz)
        }
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            let sz = size_of(args.first()?);
            sized(sz.multiply_by_factor(TRAVERSAL), sz)
        }
        "replace" => {
            if args.len() < 3 {
                return None;
            }
            let sz = size_of(&args[0]);
            let size = replace_result_size(sz, size_of(&args[1]), size_of(&args[2]));
            sized(sz.multiply_by_factor(2.0 * TRAVERSAL), size)
        }
        "split" => {
            let sz = size_of(args.first()?);
            // The result has at most one element per code point, or as many as a literal
            // limit says (read as Go's `uint64(int64)`, so a negative limit wraps).
            let max = match args.get(2).and_then(EstimateArg::int_literal) {
                Some(n) => n as u64,
                None => sz.max,
            };
            sized(
                sz.multiply_by_factor(2.0 * TRAVERSAL),
                SizeRange { min: 0, max },
            )
        }
        "join" => {
            let t = args.first()?;
            let sz = join_result_size(size_of(t), elem(t), args.get(1).map(size_of));
            sized(sz.multiply_by_factor(TRAVERSAL), sz)
        }
        "find" | "findAll" => {
            if args.len() < 2 {
                return None;
            }
            let sz = size_of(&args[0]);
            let str_cost = sz.add(SizeRange::exact(1)).multiply_by_factor(TRAVERSAL);
            let regex = size_of(&args[1]).multiply_by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
            sized(
                str_cost.multiply(regex),
                SizeRange {
                    min: 0,
                    max: sz.max,
                },
            )
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
            cost(size_of(args.first()?).multiply_by_factor(TRAVERSAL))
        }
        "ip" => {
            let a = args.first()?;
            if overload == "cidr_ip" {
                cost(CostRange::exact(1))
            } else {
                cost(size_of(a).multiply_by_factor(TRAVERSAL))
            }
        }
        "ip.isCanonical" => cost(size_of(args.first()?).multiply_by_factor(2.0 * TRAVERSAL)),
        "containsIP" | "containsCIDR" => {
            if args.len() < 2 {
                return None;
            }
            let ip = SizeRange { min: 4, max: 16 };
            let mut c = ip.add(ip).multiply_by_factor(TRAVERSAL);
            if function == "containsCIDR" {
                c = c
                    .add(ip.multiply_by_factor(TRAVERSAL))
                    .add(CostRange::exact(1));
            }
            if matches!(
                overload,
                "cidr_contains_ip_string" | "cidr_contains_cidr_string"
            ) {
                c = c.add(size_of(&args[1]).multiply_by_factor(TRAVERSAL));
            }
            cost(c)
        }
        "validate" => {
            let s = args.get(1)?;
            let first = size_of(s).multiply_by_factor(TRAVERSAL);
            let factor =
                crate::format::MAX_NAME_FORMAT_REGEX_SIZE as f64 * REGEX_STRING_LENGTH_COST_FACTOR;
            cost(CostRange {
                min: ceil_factor(first.min, factor),
                max: ceil_factor(first.max, factor),
            })
        }
        "_==_" => {
            let [l, r] = args else { return None };
            let (Type::Opaque(ln, _), Type::Opaque(rn, _)) = (&l.ty, &r.ty) else {
                return None;
            };
            if ln != rn {
                return None;
            }
            match &**ln {
                crate::format::FORMAT_TYPE => cost(
                    SizeRange {
                        min: 1,
                        max: crate::format::MAX_FORMAT_SIZE,
                    }
                    .multiply_by_factor(TRAVERSAL),
                ),
                crate::urls::URL_TYPE => {
                    // Kubernetes reads the right operand's size for both sides.
                    let max = r.size.map_or(1, |s| s.max);
                    cost(SizeRange { min: 1, max }.multiply_by_factor(TRAVERSAL))
                }
                n if UNIT_EQUALITY_TYPES.contains(&n) => cost(CostRange::exact(1)),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Every function name Kubernetes' estimator covers.
pub fn covered_functions() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = vec![
        "check",
        "fieldSelector",
        "labelSelector",
        "replace",
        "split",
        "join",
        "find",
        "findAll",
        "ip",
        "ip.isCanonical",
        "containsIP",
        "containsCIDR",
        "validate",
        "_==_",
    ];
    v.extend_from_slice(NOMINAL_FUNCTIONS);
    v.extend_from_slice(LIST_FUNCTIONS);
    v.extend_from_slice(TRAVERSAL_FUNCTIONS);
    v.sort_unstable();
    v.dedup();
    v
}

/// Kubernetes' cost estimator as a library of cost hooks (no functions of its own).
#[derive(Clone, Default)]
pub struct KubernetesCosts {
    elem_size: Option<ElementSizeFn>,
}

impl std::fmt::Debug for KubernetesCosts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubernetesCosts")
            .field("elem_size", &self.elem_size.is_some())
            .finish()
    }
}

impl KubernetesCosts {
    /// With a size estimator for list elements (as Kubernetes' `SizeEstimator`).
    pub fn with_element_sizes(f: ElementSizeFn) -> KubernetesCosts {
        KubernetesCosts { elem_size: Some(f) }
    }
}

impl Library for KubernetesCosts {
    fn name(&self) -> &str {
        "kubernetes.costs"
    }

    fn contents(&self) -> LibraryContents {
        let mut actual_costs: Vec<(CostKey, ActualCostFn<Value>)> = Vec::new();
        let mut estimated_costs: Vec<(CostKey, EstimateFn)> = Vec::new();
        // By function name, as Kubernetes dispatches, for every overload but the few it
        // tells apart by id (`COST_DISTINCT_OVERLOADS`), whose hooks are keyed by that id.
        let keys = covered_functions()
            .into_iter()
            .map(|name| (CostKey::Function(name.to_string()), name, ""))
            .chain(COST_DISTINCT_OVERLOADS.iter().map(|&id| {
                let function = if id == "cidr_ip" {
                    "ip"
                } else if id.starts_with("cidr_contains_ip") {
                    "containsIP"
                } else {
                    "containsCIDR"
                };
                (CostKey::Overload(id.to_string()), function, id)
            }));
        for (key, function, overload) in keys {
            actual_costs.push((
                key.clone(),
                Arc::new(move |args: &[Value], result: &Value| {
                    call_cost(function, overload, args, result)
                }),
            ));
            let elem = self.elem_size.clone();
            estimated_costs.push((
                key,
                Arc::new(move |args: &[EstimateArg]| {
                    estimate_call_cost(function, overload, args, elem.as_ref())
                }),
            ));
        }
        // Equality is priced only for Kubernetes' own types: other comparisons pay for no hook.
        let equality_scope = HookScope::OpaqueFirstArgument(
            UNIT_EQUALITY_TYPES.iter().map(|t| t.to_string()).collect(),
        );
        LibraryContents {
            actual_costs,
            cost_hook_scopes: vec![(CostKey::Function("_==_".to_string()), equality_scope)],
            estimated_costs,
            ..LibraryContents::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arg(ty: Type, size: u64) -> EstimateArg {
        EstimateArg {
            ty,
            size: Some(SizeRange::exact(size)),
            literal: None,
            elem_size: None,
        }
    }

    fn test_elems() -> ElementSizeFn {
        // cost_test.go's testCostEstimator: strings and bytes are 0..12.
        Arc::new(|t: &Type| match t {
            Type::String | Type::Bytes => Some(SizeRange { min: 0, max: 12 }),
            _ => None,
        })
    }

    #[test]
    fn list_functions_cost_test() {
        // TestListsCost: 10 for the list literal plus the call.
        let e = test_elems();
        let est = |t: Type| {
            estimate_call_cost("max", "", &[arg(t, 5)], Some(&e))
                .unwrap()
                .cost
        };
        assert_eq!(est(Type::list(Type::Int)), CostRange::exact(5));
        assert_eq!(est(Type::list(Type::String)), CostRange { min: 5, max: 15 });
        let strings = Value::list(vec![Value::from("012345678901"); 5]);
        assert_eq!(call_cost("max", "", &[strings], &Value::Null), Some(5));
        assert_eq!(
            call_cost(
                "sum",
                "",
                &[Value::list(vec![Value::Int(1); 5])],
                &Value::Null
            ),
            Some(5)
        );
        // indexOf on a 50-character string: 5 both ways.
        let s = Value::from("01234567890123456789012345678901234567890123456789");
        assert_eq!(
            call_cost("indexOf", "", &[s, Value::from("123")], &Value::Null),
            Some(5)
        );
        assert_eq!(
            estimate_call_cost(
                "indexOf",
                "",
                &[arg(Type::String, 50), arg(Type::String, 3)],
                None
            )
            .unwrap()
            .cost,
            CostRange::exact(5)
        );
    }

    #[test]
    fn split_reads_a_literal_limit() {
        let limit = |n: Option<i64>| EstimateArg {
            ty: Type::Int,
            size: Some(SizeRange::exact(1)),
            literal: n.map(cel_cost::Literal::Int),
            elem_size: None,
        };
        let split = |args: &[EstimateArg]| {
            estimate_call_cost("split", "", args, None)
                .unwrap()
                .result_size
                .unwrap()
        };
        let s = arg(Type::String, 15);
        let sep = arg(Type::String, 1);
        assert_eq!(
            split(&[s.clone(), sep.clone()]),
            SizeRange { min: 0, max: 15 }
        );
        assert_eq!(
            split(&[s.clone(), sep.clone(), limit(Some(2))]),
            SizeRange { min: 0, max: 2 }
        );
        // Not a literal: the receiver's size; a negative literal wraps as Go's uint64(int64).
        assert_eq!(
            split(&[s.clone(), sep.clone(), limit(None)]),
            SizeRange { min: 0, max: 15 }
        );
        assert_eq!(
            split(&[s, sep, limit(Some(-1))]),
            SizeRange {
                min: 0,
                max: u64::MAX
            }
        );
    }

    #[test]
    fn traversal_floors() {
        assert_eq!(traversal_cost(&Value::from("abcdefghi")), 0);
        assert_eq!(traversal_cost(&Value::from("abcdefghij")), 1);
        assert_eq!(traversal(9), 1);
        let m = Value::map([(cel_runtime::Key::String("0123456789".into()), Value::Int(1))]);
        assert_eq!(traversal_cost(&m), 2);
    }

    #[test]
    fn regex_and_selectors() {
        // 'abc 123 def 123'.find('123'): ceil(1.6) × ceil(0.75) = 2.
        assert_eq!(regex_cost(15, 3), 2);
        // A 71-character selector: 10 + 8 + 36 × 50 = 1818.
        assert_eq!(selector_cost(SizeRange::exact(71)).max, 1818);
        // format.named("dns1123Label").value().validate("my-name"): ceil(0.8) × ceil(7.5) = 8.
        assert_eq!(regex_cost(7, 30), 8);
        let v = estimate_call_cost(
            "validate",
            "",
            &[
                arg(Type::opaque(crate::format::FORMAT_TYPE), 1),
                arg(Type::String, 7),
            ],
            None,
        )
        .unwrap();
        assert_eq!(v.cost, CostRange::exact(32));
    }

    #[test]
    fn replace_sizes_from_cost_test() {
        let e = SizeRange::exact;
        assert_eq!(replace_result_size(e(3), e(0), e(1)), e(7));
        assert_eq!(
            replace_result_size(e(3), e(1), e(0)),
            SizeRange { min: 0, max: 3 }
        );
        assert_eq!(
            replace_result_size(e(4), e(2), e(4)),
            SizeRange { min: 4, max: 8 }
        );
        assert_eq!(
            replace_result_size(
                e(4),
                SizeRange { min: 0, max: 1 },
                SizeRange { min: 0, max: 2 }
            ),
            SizeRange { min: 0, max: 14 }
        );
        assert_eq!(
            replace_result_size(
                e(4),
                SizeRange { min: 1, max: 1 },
                SizeRange { min: 1, max: 2 }
            ),
            SizeRange { min: 4, max: 8 }
        );
        assert_eq!(
            replace_result_size(
                e(4),
                SizeRange { min: 1, max: 2 },
                SizeRange { min: 1, max: 1 }
            ),
            SizeRange { min: 2, max: 4 }
        );
    }

    #[test]
    fn network_and_misc() {
        // containsIP: ipv4 /16 prefix (2 bytes) with an IP: ceil(0.4) = 1 + ...
        assert_eq!(contains_ip_cost(2, None), 1);
        assert_eq!(contains_cidr_cost(2, None), 3);
        let ci = estimate_call_cost(
            "containsIP",
            "",
            &[
                arg(Type::opaque("net.CIDR"), 2),
                arg(Type::opaque("net.IP"), 4),
            ],
            None,
        )
        .unwrap();
        assert_eq!(ci.cost, CostRange { min: 1, max: 4 });
        let cc = estimate_call_cost(
            "containsCIDR",
            "",
            &[
                arg(Type::opaque("net.CIDR"), 2),
                arg(Type::opaque("net.CIDR"), 4),
            ],
            None,
        )
        .unwrap();
        assert_eq!(cc.cost, CostRange { min: 3, max: 7 });
        // The string forms add a traversal of the string, but only when the checker resolved
        // the string overload: with a `dyn` argument cel-go passes no overload id.
        let cidr16 = cel_ext::network::parse_cidr("192.168.0.0/16")
            .unwrap()
            .into_value();
        let ip_text = Value::from("192.168.1.1");
        assert_eq!(
            call_cost(
                "containsIP",
                "cidr_contains_ip_string",
                &[cidr16.clone(), ip_text.clone()],
                &Value::Null
            ),
            Some(3)
        );
        assert_eq!(
            call_cost(
                "containsIP",
                "",
                &[cidr16.clone(), ip_text.clone()],
                &Value::Null
            ),
            Some(1)
        );
        assert_eq!(
            call_cost("containsCIDR", "", &[cidr16, ip_text], &Value::Null),
            Some(3)
        );
        assert_eq!(call_cost("check", "", &[], &Value::Null), Some(CHECK_COST));
        assert_eq!(call_cost("getHost", "", &[], &Value::Null), Some(1));
        assert_eq!(call_cost("charAt", "", &[], &Value::Null), None);
        assert_eq!(double_traversal(39), 8);
        assert_eq!(
            estimate_call_cost("url", "", &[arg(Type::String, 27)], None)
                .unwrap()
                .cost,
            CostRange::exact(3)
        );
    }
}
