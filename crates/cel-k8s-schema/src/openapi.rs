//! OpenAPI value validation of custom resources: what the API server checks against a CRD's
//! `openAPIV3Schema` before any CEL rule runs (apiextensions' `ValidateCustomResource` over
//! kube-openapi's `validate` package), with the API server's field errors, and ratcheting of
//! errors on values an update leaves unchanged (`CRDValidationRatcheting`).
//!
//! A [`Validator`] is prepared once per schema (formats resolved, every `pattern` compiled in
//! Go's dialect by `cel_runtime::regex`, within one compiled-size allowance per schema);
//! validating allocates only for the errors it reports.
//!
//! # Fidelity
//!
//! The checks, their order within a schema node, the error types and texts, and the
//! quirks of kube-openapi are reproduced: checks run in kube-openapi's order (type, the
//! `allOf`/`anyOf`/`oneOf`/`not` junctors, string, format, number, array, `enum`, object);
//! `anyOf` and `oneOf` report the failing branch that passed the most checks (kube-openapi's
//! match count); duplicate messages are reported once; errors that kube-openapi does not tie to
//! a field (junctor failures, numeric range checks) are reported at the root, which the API
//! server prints as `<nil>` when validating a whole object.
//!
//! `x-kubernetes-preserve-unknown-fields` and `x-kubernetes-embedded-resource` change nothing
//! here, as in kube-openapi: unknown fields pass unless `additionalProperties` is `false`, and
//! embedded resources are checked by [`crate::objectmeta`], list uniqueness by
//! [`crate::listtype`].
//!
//! Where the API server's order is not deterministic it is document order here: Go iterates
//! the object's keys and the schema's `properties` as maps, in random order; here the
//! object's keys are visited in the order written, `additionalProperties` before
//! `properties` as kube-openapi does, then `required` in its order.

use std::sync::Arc;

use cel_runtime::MapHasher;
use cel_runtime::regex::{Matcher, PatternBudget};
use indexmap::IndexMap;
use serde_json::{Map, Value};

use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gojson::{GoNumber, deep_equal, f64_to_i64};
use crate::schema::{AdditionalProperties, Schema};
use crate::strfmt::Format;

/// The Kubernetes minor version whose CRD formats [`Validator::new`] supports (the API
/// server's default compatibility version).
pub const DEFAULT_COMPATIBILITY_MINOR: u32 = 36;

/// Schemas nested deeper than this are not descended into when preparing (data nests no
/// deeper than its schema is walked).
const MAX_PREPARE_DEPTH: usize = 1000;

/// A schema prepared for validating many values.
#[derive(Debug)]
pub struct Validator {
    root: Node,
}

#[derive(Debug, Default)]
struct Node {
    /// `type` as kube-openapi sees it (`x-kubernetes-int-or-string` is `integer,string`).
    types: Vec<&'static str>,
    /// The types joined with commas, as messages show them.
    types_text: String,
    nullable: bool,
    /// `format` after the API server drops the formats it does not support for the type.
    format: String,
    /// The string format checked on strings.
    string_format: Option<Format>,
    number: NumberRules,
    max_length: Option<i64>,
    min_length: Option<i64>,
    pattern: Option<Pattern>,
    min_items: Option<i64>,
    max_items: Option<i64>,
    unique_items: bool,
    items: Option<Box<Node>>,
    items_array: Vec<Node>,
    enum_: Vec<Value>,
    min_properties: Option<i64>,
    max_properties: Option<i64>,
    required: Vec<String>,
    properties: IndexMap<String, Node, MapHasher>,
    additional: Additional,
    all_of: Vec<Node>,
    any_of: Vec<Node>,
    one_of: Vec<Node>,
    not: Option<Box<Node>>,
    /// `x-kubernetes-list-type: map` with its keys, as ratcheting correlates list items.
    list_type_map: bool,
    list_map_keys: Vec<String>,
    is_array_type: bool,
}

#[derive(Debug, Default)]
enum Additional {
    /// Absent or `true`: any other property is allowed, unchecked.
    #[default]
    Allow,
    /// `false`.
    Deny,
    /// A schema for every other property.
    Schema(Box<Node>),
}

#[derive(Debug, Default)]
struct NumberRules {
    /// `integer` or `number` when the node has exactly that one type.
    type_name: Option<&'static str>,
    /// `int32`/`int64` for integers, `float`/`double` for numbers.
    format: Option<&'static str>,
    multiple_of: Option<f64>,
    maximum: Option<f64>,
    exclusive_maximum: bool,
    minimum: Option<f64>,
    exclusive_minimum: bool,
}

#[derive(Debug)]
struct Pattern {
    source: String,
    compiled: Result<Arc<Matcher>, String>,
}

impl Validator {
    /// Prepares `schema` as the API server of the current default compatibility version does.
    pub fn new(schema: &Schema) -> Validator {
        Validator::for_version(schema, DEFAULT_COMPATIBILITY_MINOR)
    }

    /// Prepares `schema` with the formats Kubernetes 1.`minor` supports (formats it does
    /// not know are ignored, as the API server drops them).
    pub fn for_version(schema: &Schema, minor: u32) -> Validator {
        Validator {
            root: Node::prepare(schema, minor, 0, &mut PatternBudget::default()),
        }
    }

    /// Validates a value (a custom resource, or a part of it at `path`) and returns the
    /// field errors the API server reports for it; empty when it is valid.
    pub fn validate(&self, value: &Value, path: &Path) -> Vec<FieldError> {
        let mut run = Run::new(path);
        let mut out = Out::default();
        run.node(&self.root, value, None, &mut out);
        out.errors = dedup(out.errors);
        out.errors
    }

    /// Validates an update with ratcheting: errors on values the update leaves unchanged
    /// (correlated with the old object by property name, map key and, in
    /// `x-kubernetes-list-type: map` lists, by the key fields) are returned separately as
    /// the second list; the API server drops them.
    pub fn validate_update(
        &self,
        new: &Value,
        old: &Value,
        path: &Path,
    ) -> (Vec<FieldError>, Vec<FieldError>) {
        let mut run = Run::new(path);
        let mut out = Out::default();
        run.node(&self.root, new, Some(old), &mut out);
        (dedup(out.errors), dedup(out.warnings))
    }
}

/// kube-openapi keeps one copy of each message; the same message always becomes the same
/// field error, so equal field errors are dropped after the first.
fn dedup(errors: Vec<FieldError>) -> Vec<FieldError> {
    if errors.len() < 2 {
        return errors;
    }
    let mut kept: Vec<FieldError> = Vec::with_capacity(errors.len());
    for e in errors {
        if !kept.contains(&e) {
            kept.push(e);
        }
    }
    kept
}

impl Node {
    /// Prepares one schema node and those below it; their `pattern`s share `patterns`, one
    /// compiled-size allowance for the whole schema.
    fn prepare(s: &Schema, minor: u32, depth: usize, patterns: &mut PatternBudget) -> Node {
        if depth > MAX_PREPARE_DEPTH {
            return Node::default();
        }
        let pattern = (!s.pattern.is_empty()).then(|| Pattern {
            source: s.pattern.clone(),
            compiled: patterns.compile(&s.pattern).map_err(|e| e.message),
        });
        let mut child = |c: &Schema| Node::prepare(c, minor, depth + 1, patterns);
        let types: Vec<&'static str> = if s.x_int_or_string {
            vec!["integer", "string"]
        } else if s.type_.is_empty() {
            Vec::new()
        } else {
            vec![intern_type(&s.type_)]
        };
        let format = supported_format(&types, &s.format, minor);
        let string_format = Format::lookup(&format, minor);
        let single = (types.len() == 1).then(|| types[0]);
        let number = NumberRules {
            type_name: single.filter(|t| *t == "integer" || *t == "number"),
            format: match (single, format.as_str()) {
                (Some("integer"), "int32") => Some("int32"),
                (Some("integer"), "int64") => Some("int64"),
                (Some("number"), "float") => Some("float"),
                (Some("number"), "double") => Some("double"),
                _ => None,
            },
            multiple_of: s.multiple_of,
            maximum: s.maximum,
            exclusive_maximum: s.exclusive_maximum,
            minimum: s.minimum,
            exclusive_minimum: s.exclusive_minimum,
        };
        let additional = match &s.additional_properties {
            None | Some(AdditionalProperties::Bool(true)) => Additional::Allow,
            Some(AdditionalProperties::Bool(false)) => Additional::Deny,
            Some(AdditionalProperties::Schema(a)) => Additional::Schema(Box::new(child(a))),
        };
        Node {
            types_text: types.join(","),
            is_array_type: single == Some("array"),
            types,
            nullable: s.nullable,
            string_format,
            format,
            number,
            max_length: s.max_length,
            min_length: s.min_length,
            pattern,
            min_items: s.min_items,
            max_items: s.max_items,
            unique_items: s.unique_items,
            items: s.items.as_deref().map(|i| Box::new(child(i))),
            items_array: s.items_array.iter().flatten().map(&mut child).collect(),
            enum_: s.enum_.clone().unwrap_or_default(),
            min_properties: s.min_properties,
            max_properties: s.max_properties,
            required: s.required.clone(),
            properties: s
                .properties
                .iter()
                .map(|(k, v)| (k.clone(), child(v)))
                .collect(),
            additional,
            all_of: s.all_of.iter().map(&mut child).collect(),
            any_of: s.any_of.iter().map(&mut child).collect(),
            one_of: s.one_of.iter().map(&mut child).collect(),
            not: s.not.as_deref().map(|n| Box::new(child(n))),
            list_type_map: s.x_list_type.as_deref() == Some("map"),
            list_map_keys: s.x_list_map_keys.clone(),
        }
    }

    fn has_type(&self, t: &str) -> bool {
        self.types.contains(&t)
    }

    /// The schema of property `key`: a declared property, else `additionalProperties`.
    fn property(&self, key: &str) -> Option<&Node> {
        self.properties.get(key).or(match &self.additional {
            Additional::Schema(s) => Some(s),
            _ => None,
        })
    }
}

fn intern_type(t: &str) -> &'static str {
    match t {
        "object" => "object",
        "array" => "array",
        "string" => "string",
        "integer" => "integer",
        "number" => "number",
        "boolean" => "boolean",
        "null" => "null",
        // Structural schemas allow no other type; an unknown one matches nothing.
        _ => "unknown",
    }
}

/// The format the API server keeps in a node: string formats it supports (at `minor`) on
/// untyped and string nodes, `int32`/`int64` on integers, `float`/`double` on numbers.
fn supported_format(types: &[&str], format: &str, minor: u32) -> String {
    if format.is_empty() {
        return String::new();
    }
    let single = if types.len() == 1 { types[0] } else { "" };
    let keep = match single {
        "" | "string" => Format::lookup(format, minor).is_some(),
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    };
    if keep {
        format.to_string()
    } else {
        String::new()
    }
}

/// Errors and ratcheted errors collected while validating.
#[derive(Default)]
struct Out {
    errors: Vec<FieldError>,
    warnings: Vec<FieldError>,
}

impl Out {
    fn merge(&mut self, other: Out) {
        self.errors.extend(other.errors);
        self.warnings.extend(other.warnings);
    }
}

/// One validation: where the value sits (`base`, the API server's field path), and the path
/// kube-openapi names values by inside it (`spec.items[0].name`), kept in one buffer.
struct Run<'p> {
    base: &'p Path,
    path: String,
}

impl<'p> Run<'p> {
    fn new(base: &'p Path) -> Run<'p> {
        Run {
            base,
            path: String::new(),
        }
    }

    /// The field of an error kube-openapi names `name` (a path it built).
    fn field_of(&self, name: &str) -> String {
        let name = name.strip_prefix('.').unwrap_or(name);
        if name.is_empty() {
            self.root_field()
        } else if self.base.is_root() {
            name.to_string()
        } else {
            format!("{}.{name}", self.base)
        }
    }

    /// The field of errors kube-openapi ties to no field: the base path, or `<nil>` when
    /// there is none, as apimachinery prints a nil path.
    fn root_field(&self) -> String {
        if self.base.is_root() {
            "<nil>".to_string()
        } else {
            self.base.to_string()
        }
    }

    fn error(&self, error_type: ErrorType, bad_value: BadValue, detail: String) -> FieldError {
        FieldError {
            error_type,
            field: self.field_of(&self.path),
            bad_value,
            detail,
        }
    }

    /// An error kube-openapi reports without a field (`field.Invalid(nil, "", message)`).
    fn unplaced(&self, detail: String) -> FieldError {
        FieldError {
            error_type: ErrorType::Invalid,
            field: self.root_field(),
            bad_value: BadValue::String(String::new()),
            detail,
        }
    }

    /// Validates `v` against `n`; `old` is the value correlated with `v` in the old object
    /// when ratcheting. Returns kube-openapi's match count (how many checks ran and passed,
    /// roughly), which picks the failure `anyOf`/`oneOf` report.
    fn node(&mut self, n: &Node, v: &Value, old: Option<&Value>, out: &mut Out) -> usize {
        let (error_mark, warning_mark) = (out.errors.len(), out.warnings.len());
        let count = self.checks(n, v, old, out);
        if let Some(old) = old
            && out.errors.len() > error_mark
            && unchanged(Some(n), v, old)
        {
            // The value is as it was: its errors are ratcheted, ahead of the ratcheted
            // errors found below it, as kube-openapi merges them.
            let below: Vec<FieldError> = out.warnings.drain(warning_mark..).collect();
            let here: Vec<FieldError> = out.errors.drain(error_mark..).collect();
            out.warnings.extend(here);
            out.warnings.extend(below);
        }
        count
    }

    fn checks(&mut self, n: &Node, v: &Value, old: Option<&Value>, out: &mut Out) -> usize {
        if v.is_null() {
            let count = self.check_null(n, out);
            self.check_enum(n, v, out);
            return count;
        }
        let mut count = 1;
        if !n.types.is_empty() || !n.format.is_empty() {
            count += self.check_type(n, v, out) + 1;
        }
        count += self.check_junctors(n, v, out) + 1;
        match v {
            Value::String(s) => {
                self.check_string(n, s, out);
                count += 1;
                if let Some(f) = n.string_format {
                    self.check_format(n, f, s, out);
                    count += 1;
                }
            }
            Value::Number(x) => count += self.check_number(n, GoNumber::of(x), out) + 1,
            Value::Array(items) => count += self.check_array(n, items, old, out) + 1,
            _ => {}
        }
        self.check_enum(n, v, out);
        count += 1;
        if let Value::Object(map) = v {
            count += self.check_object(n, map, old, out) + 1;
        }
        count
    }

    fn type_error(&self, expected: &str, actual: &str) -> FieldError {
        self.error(
            ErrorType::TypeInvalid,
            BadValue::String(actual.to_string()),
            format!(
                "{} in body must be of type {expected}: {}",
                self.path,
                crate::field::go_quote(actual)
            ),
        )
    }

    fn check_null(&self, n: &Node, out: &mut Out) -> usize {
        if !n.types.is_empty() && !n.has_type("null") && !n.nullable {
            out.errors.push(self.type_error(&n.types_text, "null"));
            return 0;
        }
        1
    }

    /// kube-openapi's type check, with its handling of formats on non-strings and of
    /// integral floats for integer types.
    fn check_type(&self, n: &Node, v: &Value, out: &mut Out) -> usize {
        let (actual, data_format) = match v {
            Value::Bool(_) => ("boolean", ""),
            Value::String(_) => ("string", ""),
            Value::Number(x) => match GoNumber::of(x) {
                GoNumber::Int(_) => ("integer", "int64"),
                GoNumber::Float(_) => ("number", "float64"),
            },
            Value::Array(_) => ("array", ""),
            _ => ("object", ""),
        };
        let float_int = match v {
            Value::Number(x) => match GoNumber::of(x) {
                GoNumber::Float(f) => is_json_integer(f) && n.has_type("integer"),
                GoNumber::Int(_) => false,
            },
            _ => false,
        };
        let int_float = actual == "integer" && n.has_type("number");
        let stringish = matches!(v, Value::String(_) | Value::Array(_));
        let numeric_type = n.has_type("number") || n.has_type("integer");
        let format_matches =
            n.has_type(actual) || data_format == n.format || float_int || int_float;
        if !stringish && !n.format.is_empty() && !format_matches {
            out.errors.push(self.type_error(&n.format, data_format));
            return 0;
        }
        if !numeric_type && !n.format.is_empty() && stringish {
            return 1;
        }
        if !(n.has_type(actual) || float_int || int_float) {
            out.errors.push(self.type_error(&n.types_text, actual));
            return 0;
        }
        1
    }

    /// A branch of a junctor: the same value, checked without ratcheting.
    fn branch(&mut self, n: &Node, v: &Value) -> (Out, usize) {
        let mut out = Out::default();
        let count = self.node(n, v, None, &mut out);
        (out, count)
    }

    /// `anyOf`, `oneOf`, `allOf`, `not`, in kube-openapi's order; each branch checks the same
    /// value, without ratcheting.
    fn check_junctors(&mut self, n: &Node, v: &Value, out: &mut Out) -> usize {
        let mut count = 1;
        if !n.any_of.is_empty() {
            count += self.any_of(&n.any_of, v, out);
        }
        if !n.one_of.is_empty() {
            count += self.one_of(&n.one_of, v, out);
        }
        if !n.all_of.is_empty() {
            count += self.all_of(&n.all_of, v, out);
        }
        if let Some(not) = &n.not {
            let (o, _) = self.branch(not, v);
            if o.errors.is_empty() {
                out.errors
                    .push(self.junctor_error("must not validate the schema (not)"));
            }
        }
        count
    }

    fn junctor_error(&self, what: &str) -> FieldError {
        self.unplaced(format!("{} {what}", crate::field::go_quote(&self.path)))
    }

    /// The first passing branch wins; else the failure of the branch that passed the most
    /// checks (the first of equals) is reported after the junctor's own error.
    fn any_of(&mut self, branches: &[Node], v: &Value, out: &mut Out) -> usize {
        let mut best: Option<(Out, usize)> = None;
        for b in branches {
            let (o, c) = self.branch(b, v);
            if o.errors.is_empty() {
                out.merge(o);
                return c;
            }
            if best.as_ref().is_none_or(|(_, bc)| c > *bc) {
                best = Some((o, c));
            }
        }
        out.errors
            .push(self.junctor_error("must validate at least one schema (anyOf)"));
        let (o, c) = best.unwrap_or_default();
        out.merge(o);
        c
    }

    /// Exactly one branch must pass; with none, the best failure is reported as for `anyOf`.
    fn one_of(&mut self, branches: &[Node], v: &Value, out: &mut Out) -> usize {
        let mut best: Option<(Out, usize)> = None;
        let mut success: Option<(Out, usize)> = None;
        let mut valid = 0;
        for b in branches {
            let (o, c) = self.branch(b, v);
            if o.errors.is_empty() {
                valid += 1;
                best = None;
                success.get_or_insert((o, c));
            } else if valid == 0 && best.as_ref().is_none_or(|(_, bc)| c > *bc) {
                best = Some((o, c));
            }
        }
        let kept = if valid == 1 {
            success
        } else {
            let found = match valid {
                0 => "Found none valid".to_string(),
                n => format!("Found {n} valid alternatives"),
            };
            out.errors.push(self.junctor_error(&format!(
                "must validate one and only one schema (oneOf). {found}"
            )));
            best
        };
        let (o, c) = kept.unwrap_or_default();
        out.merge(o);
        c
    }

    /// Every branch must pass; all their errors are reported, then the junctor's.
    fn all_of(&mut self, branches: &[Node], v: &Value, out: &mut Out) -> usize {
        let mut count = 0;
        let mut valid = 0;
        for b in branches {
            let (o, c) = self.branch(b, v);
            valid += usize::from(o.errors.is_empty());
            out.merge(o);
            count += c;
        }
        if valid != branches.len() {
            let none = if valid == 0 { ". None validated" } else { "" };
            out.errors
                .push(self.junctor_error(&format!("must validate all the schemas (allOf){none}")));
        }
        count
    }

    /// `maxLength`, `minLength` (in characters), then `pattern`; only the first failure.
    fn check_string(&self, n: &Node, s: &str, out: &mut Out) {
        let length = || s.chars().count() as i64;
        if let Some(max) = n.max_length
            && length() > max
        {
            out.errors.push(self.error(
                ErrorType::TooLong,
                BadValue::String("<value omitted>".into()),
                too_long_detail(max),
            ));
            return;
        }
        if let Some(min) = n.min_length
            && length() < min
        {
            let detail = format!("{} in body should be at least {min} chars long", self.path);
            out.errors
                .push(self.error(ErrorType::Invalid, BadValue::String(s.into()), detail));
            return;
        }
        if let Some(p) = &n.pattern {
            let shown = match &p.compiled {
                Ok(re) if re.is_match(s) => return,
                Ok(_) => p.source.clone(),
                Err(e) => format!("{}, but pattern is invalid: {e}", p.source),
            };
            let detail = format!("{} in body should match '{shown}'", self.path);
            out.errors
                .push(self.error(ErrorType::Invalid, BadValue::String(s.into()), detail));
        }
    }

    fn check_format(&self, n: &Node, f: Format, s: &str, out: &mut Out) {
        if !f.validates(s) {
            let detail = format!(
                "{} in body must be of type {}: {}",
                self.path,
                n.format,
                crate::field::go_quote(s)
            );
            out.errors
                .push(self.error(ErrorType::TypeInvalid, BadValue::String(s.into()), detail));
        }
    }

    /// The range check of the value itself, then `multipleOf`, `minimum`, `maximum`; each
    /// bound is first checked against the node's numeric type and format.
    fn check_number(&self, n: &Node, x: GoNumber, out: &mut Out) -> usize {
        let rules = &n.number;
        if let Some(e) = self.out_of_range(rules, x, "Checked") {
            out.errors.push(e);
        }
        if let Some(factor) = rules.multiple_of {
            match self.out_of_range(rules, GoNumber::Float(factor), "MultipleOf") {
                Some(e) => {
                    out.errors.push(e);
                    out.errors
                        .extend(self.multiple_of(GoNumber::Float(x.as_f64()), factor));
                }
                None => out.errors.extend(self.multiple_of(x, factor)),
            }
        }
        let bounds = [
            (rules.minimum, rules.exclusive_minimum, Bound::Min),
            (rules.maximum, rules.exclusive_maximum, Bound::Max),
        ];
        for (limit, exclusive, kind) in bounds {
            let Some(limit) = limit else { continue };
            let x = match self.out_of_range(rules, GoNumber::Float(limit), kind.prefix()) {
                Some(e) => {
                    out.errors.push(e);
                    GoNumber::Float(x.as_f64())
                }
                None => x,
            };
            out.errors.extend(self.bound(x, limit, exclusive, kind));
        }
        1
    }

    /// kube-openapi's `IsValueValidAgainstRange`: does the number, written out, parse as
    /// the node's numeric type and format?
    fn out_of_range(&self, rules: &NumberRules, x: GoNumber, prefix: &str) -> Option<FieldError> {
        let type_name = rules.type_name?;
        let text = match x {
            GoNumber::Int(i) => i.to_string(),
            GoNumber::Float(f) => cel_runtime::format::format_double_fixed(f),
        };
        let fits = match (type_name, rules.format) {
            ("integer", Some("int32")) => text.parse::<i32>().is_ok(),
            ("integer", _) => text.parse::<i64>().is_ok(),
            (_, Some("float")) => text.parse::<f64>().is_ok_and(|f| (f as f32).is_finite()),
            _ => true,
        };
        if fits {
            return None;
        }
        let detail = match rules.format {
            Some(format) => format!(
                "{prefix} value must be of type {type_name} with format {format} in {}",
                self.path
            ),
            None => format!(
                "{prefix} value must be of type {type_name} (default format) in {}",
                self.path
            ),
        };
        Some(self.unplaced(detail))
    }

    fn multiple_of(&self, x: GoNumber, factor: f64) -> Option<FieldError> {
        match x {
            GoNumber::Int(i) => {
                let factor = f64_to_i64(factor);
                if factor <= 0 {
                    return Some(self.must_be_positive(BadValue::Int(factor), &factor.to_string()));
                }
                (i.wrapping_div(factor).wrapping_mul(factor) != i)
                    .then(|| self.not_multiple(BadValue::Int(i), &factor.to_string()))
            }
            GoNumber::Float(f) => {
                let shown = cel_runtime::format::format_double(factor);
                if factor <= 0.0 {
                    return Some(self.must_be_positive(BadValue::Float(factor), &shown));
                }
                let ratio = if factor < 1.0 {
                    1.0 / factor * f
                } else {
                    f / factor
                };
                (!is_json_integer(ratio)).then(|| self.not_multiple(BadValue::Float(f), &shown))
            }
        }
    }

    fn must_be_positive(&self, factor: BadValue, shown: &str) -> FieldError {
        let detail = format!(
            "factor MultipleOf declared for {} must be positive: {shown}",
            self.path
        );
        self.error(ErrorType::Invalid, factor, detail)
    }

    fn not_multiple(&self, value: BadValue, factor: &str) -> FieldError {
        let detail = format!("{} in body should be a multiple of {factor}", self.path);
        self.error(ErrorType::Invalid, value, detail)
    }

    /// `minimum`/`maximum`: integers compare with the bound truncated to an integer, as
    /// kube-openapi does.
    fn bound(&self, x: GoNumber, limit: f64, exclusive: bool, kind: Bound) -> Option<FieldError> {
        let (fails, shown, value) = match x {
            GoNumber::Int(i) => {
                let l = f64_to_i64(limit);
                let fails = match kind {
                    Bound::Max => i > l || (exclusive && i == l),
                    Bound::Min => i < l || (exclusive && i == l),
                };
                (fails, l.to_string(), BadValue::Int(i))
            }
            GoNumber::Float(f) => {
                let fails = match kind {
                    Bound::Max => f > limit || (exclusive && f >= limit),
                    Bound::Min => f < limit || (exclusive && f <= limit),
                };
                let shown = cel_runtime::format::format_double(limit);
                (fails, shown, BadValue::Float(f))
            }
        };
        if !fails {
            return None;
        }
        let relation = match (kind, exclusive) {
            (Bound::Max, false) => "less than or equal to",
            (Bound::Max, true) => "less than",
            (Bound::Min, false) => "greater than or equal to",
            (Bound::Min, true) => "greater than",
        };
        let detail = format!("{} in body should be {relation} {shown}", self.path);
        Some(self.error(ErrorType::Invalid, value, detail))
    }

    fn check_array(
        &mut self,
        n: &Node,
        items: &[Value],
        old: Option<&Value>,
        out: &mut Out,
    ) -> usize {
        let mut count = 0;
        let mark = self.path.len();
        if let Some(item_schema) = &n.items {
            let index = old.and_then(|o| OldListIndex::new(n, o));
            for (i, item) in items.iter().enumerate() {
                self.push_index(i);
                let old_item = index.as_ref().and_then(|ix| ix.get(n, item));
                count += self.node(item_schema, item, old_item, out);
                self.path.truncate(mark);
            }
        }
        for (i, (schema, item)) in n.items_array.iter().zip(items).enumerate() {
            self.push_index(i);
            count += self.node(schema, item, None, out);
            self.path.truncate(mark);
        }
        let size = items.len() as i64;
        if let Some(min) = n.min_items
            && size < min
        {
            let detail = format!("{} in body should have at least {min} items", self.path);
            out.errors
                .push(self.error(ErrorType::Invalid, BadValue::Int(size), detail));
        }
        if let Some(max) = n.max_items
            && size > max
        {
            out.errors.push(self.error(
                ErrorType::TooMany,
                BadValue::Int(size),
                too_many_detail(max),
            ));
        }
        if n.unique_items && has_duplicates(items) {
            let detail = format!("{} in body shouldn't contain duplicates", self.path);
            out.errors.push(self.error(
                ErrorType::Invalid,
                BadValue::String(String::new()),
                detail,
            ));
        }
        count + 1
    }

    fn push_index(&mut self, i: usize) {
        use std::fmt::Write;
        let _ = write!(self.path, "[{i}]");
    }

    fn check_enum(&self, n: &Node, v: &Value, out: &mut Out) {
        if n.enum_.is_empty() || n.enum_.iter().any(|e| enum_matches(v, e)) {
            return;
        }
        let supported: Vec<String> = n
            .enum_
            .iter()
            .map(|e| {
                let text = match e {
                    Value::String(s) => s.clone(),
                    other => crate::gojson::marshal(other),
                };
                crate::field::go_quote(&text)
            })
            .collect();
        let bad = match v {
            Value::Null => BadValue::Json(Value::Null),
            other => BadValue::of_json(other),
        };
        out.errors.push(self.error(
            ErrorType::NotSupported,
            bad,
            format!("supported values: {}", supported.join(", ")),
        ));
    }

    fn check_object(
        &mut self,
        n: &Node,
        map: &Map<String, Value>,
        old: Option<&Value>,
        out: &mut Out,
    ) -> usize {
        let size = map.len() as i64;
        if let Some(min) = n.min_properties
            && size < min
        {
            let detail = format!(
                "{} in body should have at least {min} properties",
                self.path
            );
            out.errors
                .push(self.error(ErrorType::Invalid, BadValue::Int(size), detail));
        }
        if let Some(max) = n.max_properties
            && size > max
        {
            out.errors.push(self.error(
                ErrorType::TooMany,
                BadValue::Int(size),
                too_many_detail(max),
            ));
        }
        let old_map = old.and_then(Value::as_object);
        let mut count = 0;
        let mark = self.path.len();
        match &n.additional {
            Additional::Deny => {
                for key in map.keys().filter(|k| !n.properties.contains_key(*k)) {
                    let detail = format!("{}.{key} in body is a forbidden property", self.path);
                    out.errors.push(self.error(
                        ErrorType::Invalid,
                        BadValue::String(key.clone()),
                        detail,
                    ));
                }
            }
            Additional::Schema(schema) => {
                for (key, value) in map.iter().filter(|(k, _)| !n.properties.contains_key(*k)) {
                    self.path.push('.');
                    self.path.push_str(key);
                    let old_value = old_map
                        .filter(|_| !is_type_meta(mark, key))
                        .and_then(|o| o.get(key));
                    count += self.node(schema, value, old_value, out);
                    self.path.truncate(mark);
                }
            }
            Additional::Allow => {}
        }
        for (key, value) in map {
            let Some(schema) = n.properties.get(key) else {
                continue;
            };
            if mark > 0 {
                self.path.push('.');
            }
            self.path.push_str(key);
            let old_value = old_map
                .filter(|_| !is_type_meta(mark, key))
                .and_then(|o| o.get(key));
            count += self.node(schema, value, old_value, out);
            self.path.truncate(mark);
        }
        for key in n.required.iter().filter(|k| !map.contains_key(*k)) {
            out.errors.push(FieldError {
                error_type: ErrorType::Required,
                field: self.field_of(&format!("{}.{key}", self.path)),
                bad_value: BadValue::String(String::new()),
                detail: String::new(),
            });
        }
        count
    }
}

/// Whether property `key` of the object at kube-openapi path length `mark` is the resource's
/// own `kind` or `apiVersion`, which ratcheting never excuses.
fn is_type_meta(mark: usize, key: &str) -> bool {
    mark == 0 && (key == "kind" || key == "apiVersion")
}

#[derive(Clone, Copy)]
enum Bound {
    Min,
    Max,
}

impl Bound {
    fn prefix(self) -> &'static str {
        match self {
            Bound::Min => "Minimum boundary",
            Bound::Max => "Maximum boundary",
        }
    }
}

/// apimachinery's `field.TooLong` detail for a limit.
fn too_long_detail(max: i64) -> String {
    match max {
        1 => "may not be more than 1 byte".to_string(),
        m if m >= 0 => format!("may not be more than {m} bytes"),
        _ => "value is too long".to_string(),
    }
}

/// apimachinery's `field.TooMany` detail for a limit.
fn too_many_detail(max: i64) -> String {
    match max {
        1 => "must have at most 1 item".to_string(),
        m if m >= 0 => format!("must have at most {m} items"),
        _ => "has too many items".to_string(),
    }
}

fn has_duplicates(items: &[Value]) -> bool {
    items
        .iter()
        .enumerate()
        .any(|(i, a)| items[..i].iter().any(|b| deep_equal(a, b)))
}

/// go-openapi's `IsFloat64AJSONInteger`: within ±(2^53−1) and integral, or within a relative
/// error of 1e-9 of its truncation.
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f == f.trunc() {
        return true;
    }
    // Go's uint64(f) of a negative number is far from f, so only positives get here.
    if f < 1.0 {
        return false;
    }
    let g = f.trunc();
    (f - g) / (f + g) < 1e-9
}

/// Whether a value matches an `enum` entry as kube-openapi checks it: deep equality after
/// converting the value to the entry's Go type where Go can (an integer to a float, a float
/// to an integer by truncation, an integer to a string as a code point).
fn enum_matches(v: &Value, e: &Value) -> bool {
    match (v, e) {
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Number(x), Value::Number(y)) => match (GoNumber::of(x), GoNumber::of(y)) {
            (GoNumber::Int(a), GoNumber::Int(b)) => a == b,
            (GoNumber::Int(a), GoNumber::Float(b)) => a as f64 == b,
            (GoNumber::Float(a), GoNumber::Int(b)) => f64_to_i64(a) == b,
            (GoNumber::Float(a), GoNumber::Float(b)) => a == b,
        },
        (Value::Number(x), Value::String(s)) => match GoNumber::of(x) {
            GoNumber::Int(i) => {
                let c = u32::try_from(i)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{FFFD}');
                let mut buf = [0u8; 4];
                s == c.encode_utf8(&mut buf)
            }
            GoNumber::Float(_) => false,
        },
        _ => deep_equal(v, e),
    }
}

/// The old list's items by their `x-kubernetes-list-map-keys` values, for correlating a
/// new item with the old one (the first old item with the same keys).
struct OldListIndex<'a> {
    by_key: std::collections::HashMap<String, &'a Value>,
}

impl<'a> OldListIndex<'a> {
    fn new(n: &Node, old: &'a Value) -> Option<OldListIndex<'a>> {
        let old_items = old.as_array()?;
        if !n.list_type_map || !n.is_array_type || n.list_map_keys.is_empty() {
            return None;
        }
        let mut by_key = std::collections::HashMap::with_capacity(old_items.len());
        for item in old_items {
            if let Some(k) = item.as_object().and_then(|m| list_map_key(n, m)) {
                by_key.entry(k).or_insert(item);
            }
        }
        Some(OldListIndex { by_key })
    }

    fn get(&self, n: &Node, item: &Value) -> Option<&'a Value> {
        let key = list_map_key(n, item.as_object()?)?;
        self.by_key.get(&key).copied()
    }
}

/// An item's composite key as Kubernetes' correlation builds it; `None` when a key field is
/// missing or not a scalar. One key keeps its Go type (`1` and `1.0` differ); several are
/// joined as Go formats them (`%f` for floats).
fn list_map_key(n: &Node, item: &Map<String, Value>) -> Option<String> {
    let mut key = String::new();
    let single = n.list_map_keys.len() == 1;
    for name in &n.list_map_keys {
        let v = item.get(name)?;
        if !single {
            key.push('\0');
        }
        match v {
            Value::Bool(b) => key.push_str(if *b { "b:true" } else { "b:false" }),
            Value::String(s) if single => {
                key.push_str("s:");
                key.push_str(s);
            }
            Value::String(s) => key.push_str(&crate::field::go_quote(s)),
            Value::Number(x) => match GoNumber::of(x) {
                GoNumber::Int(i) => key.push_str(&format!("i:{i}")),
                GoNumber::Float(f) if single => key.push_str(&format!("f:{}", f.to_bits())),
                GoNumber::Float(f) => key.push_str(&format!("{f:.6}")),
            },
            _ => return None,
        }
    }
    Some(key)
}

/// Kubernetes' `CachedDeepEqual` of a correlated value: equal data, where object
/// properties without a schema never count as equal, and `x-kubernetes-list-type: map`
/// lists compare item by item through their keys (order aside).
fn unchanged(n: Option<&Node>, new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return false;
            }
            match n.filter(|n| n.list_type_map) {
                Some(n) => {
                    let index = OldListIndex::new(n, old);
                    a.iter().all(|item| {
                        let old_item = index.as_ref().and_then(|ix| ix.get(n, item));
                        match (old_item, n.items.as_deref()) {
                            (Some(o), Some(items)) => unchanged(Some(items), item, o),
                            _ => false,
                        }
                    })
                }
                None => deep_equal(new, old),
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    let schema = n.and_then(|n| n.property(k));
                    match (b.get(k), schema) {
                        (Some(o), Some(s)) => unchanged(Some(s), v, o),
                        _ => false,
                    }
                })
        }
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => deep_equal(new, old),
    }
}

#[cfg(test)]
mod tests;
