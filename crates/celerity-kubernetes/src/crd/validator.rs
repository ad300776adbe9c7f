//! Running a schema's rules against an object (Kubernetes' `cel.Validator`): every node with
//! rules, at any depth below properties, items, `additionalProperties` and `allOf`, with
//! `self` (and `oldSelf` where the old object correlates), the per-object cost budget, the
//! API server's field errors and messages, and ratcheting.

use std::sync::{Arc, OnceLock};

use cel_k8s_schema::decl::DeclType;
use cel_k8s_schema::escape::escape;
use cel_k8s_schema::field::{BadValue, ErrorType, FieldError, Path};
use cel_k8s_schema::value::ValueModel;
use cel_k8s_schema::{Schema, ValidationRule};
use cel_runtime::MapHasher;
use cel_runtime::object::check_data;
use indexmap::IndexMap;
use serde_json::Value as Json;

use super::rules::{
    CompiledRule, OLD_SELF_VARIABLE, RuleOptions, SELF_VARIABLE, compile_node_rules,
};
use super::texts::failed_rule_value;
use cel_k8s::KubeVersion;
use celerity::{Activation, ErrorKind, Program, Value};

/// The per-object budget of the API server (`RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;

/// The longest a message expression's result may be, in bytes, after trimming.
pub const MAX_MESSAGE_EXPRESSION_BYTES: usize = 5 * 1024;

/// A schema's rules, compiled once, to validate many objects (from many threads).
#[derive(Clone, Debug)]
pub struct SchemaValidator {
    schema: Arc<Schema>,
    root: Option<Arc<Node>>,
    /// The release whose texts the errors have.
    release: KubeVersion,
}

/// The validator of one schema node: its own rules and the validators below it.
#[derive(Debug)]
struct Node {
    /// The node's `type`, shown as the value of errors about the node.
    schema_type: String,
    rules: LazyRules,
    /// How the node's data becomes `self`.
    model: ValueModel,
    /// For a `map` list: its key fields, to find each item's old value.
    list_map_keys: Option<Vec<String>>,
    /// Whether old values of a map's entries correlate (`x-kubernetes-map-type`).
    map_correlatable: bool,
    items: Option<Box<Node>>,
    properties: IndexMap<String, Node, MapHasher>,
    additional: Option<Box<Node>>,
    all_of: Vec<Node>,
}

/// A node's rules, compiled when a validation first reaches the node: an object visits a
/// part of its schema, and the rules of nodes no object reaches cost nothing.
#[derive(Debug)]
struct LazyRules {
    /// What to compile them from; `None` for a node without rules of its own.
    source: Option<Box<RuleSource>>,
    compiled: OnceLock<NodeRules>,
}

/// What a node's rules are compiled from.
#[derive(Debug)]
struct RuleSource {
    rules: Vec<ValidationRule>,
    /// The node, for rules with a `fieldPath` (which is checked against it); an empty
    /// schema otherwise.
    node: Schema,
    decl: Option<DeclType>,
    options: Arc<RuleOptions>,
}

/// A node's rules, compiled.
#[derive(Debug, Default)]
struct NodeRules {
    rules: Vec<CompiledRule>,
    compile_error: Option<String>,
    uses_old_self: bool,
}

impl LazyRules {
    fn new(
        node: &Schema,
        rules: &[ValidationRule],
        decl: Option<&DeclType>,
        options: &Arc<RuleOptions>,
    ) -> LazyRules {
        let source = (!rules.is_empty()).then(|| {
            let needs_node = rules.iter().any(|r| !r.field_path.is_empty());
            Box::new(RuleSource {
                rules: rules.to_vec(),
                node: if needs_node {
                    node.clone()
                } else {
                    Schema::default()
                },
                decl: decl.cloned(),
                options: options.clone(),
            })
        });
        LazyRules {
            source,
            compiled: OnceLock::new(),
        }
    }

    /// The rules, compiled on first use (by whichever thread needs them first; the others
    /// wait for that compile, which runs no user code).
    fn get(&self) -> &NodeRules {
        self.compiled.get_or_init(|| {
            let Some(src) = &self.source else {
                return NodeRules::default();
            };
            match compile_node_rules(&src.node, &src.rules, src.decl.as_ref(), &src.options) {
                Ok(rules) => NodeRules {
                    uses_old_self: rules.iter().any(|r| r.uses_old_self),
                    rules,
                    compile_error: None,
                },
                Err(e) => NodeRules {
                    compile_error: Some(e),
                    ..NodeRules::default()
                },
            }
        })
    }
}

/// How one validation runs.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ValidateOptions {
    /// The path of the object's root in errors (`root`; empty: none).
    pub field_root: Path,
    /// The cost budget for the whole object.
    pub cost_budget: i64,
    /// Kubernetes' `CRDValidationRatcheting` feature gate (on): transition rules with
    /// `optionalOldSelf` run without an old object, and with [`ValidateOptions::correlate`],
    /// errors on unchanged values become warnings.
    pub ratcheting: bool,
    /// Compare the object with the old one to ratchet errors (what the API server does on
    /// update when ratcheting is on).
    pub correlate: bool,
}

impl Default for ValidateOptions {
    fn default() -> ValidateOptions {
        ValidateOptions {
            field_root: Path::root(),
            cost_budget: RUNTIME_COST_BUDGET,
            ratcheting: true,
            correlate: false,
        }
    }
}

celerity::option_setters!(ValidateOptions {
    field_root: Path,
    cost_budget: i64,
    ratcheting: bool,
    correlate: bool,
});

/// What a validation found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Validation {
    /// The field errors, in the order found.
    pub errors: Vec<FieldError>,
    /// What the API server would warn about or log: ratcheted errors, failed message
    /// expressions.
    pub warnings: Vec<String>,
    /// The budget left (`-1` when validation stopped on the budget or a per-call limit).
    pub remaining_budget: i64,
}

impl SchemaValidator {
    /// Compiles every rule of `schema` (at any depth). `is_root` says the schema is a
    /// resource root (a custom resource's top level), which has `apiVersion`, `kind` and
    /// `metadata`.
    ///
    /// As the API server's `NewValidator`, a schema with rules only inside `allOf` (and none
    /// under its properties, items or additional properties) has no validator at all.
    pub fn new(schema: &Schema, is_root: bool, options: &RuleOptions) -> SchemaValidator {
        if !schema.has_validations() {
            return SchemaValidator {
                schema: Arc::new(schema.clone()),
                root: None,
                release: options.version,
            };
        }
        let decl = DeclType::from_schema(schema, is_root);
        SchemaValidator::with_decl_type(schema, is_root, decl.as_ref(), options)
    }

    /// The validator of every rule in `schema`, `allOf` included, with the root's CEL type
    /// given (`None`: the root has no CEL type, so rules on it are an error).
    pub fn with_decl_type(
        schema: &Schema,
        is_root: bool,
        decl: Option<&DeclType>,
        options: &RuleOptions,
    ) -> SchemaValidator {
        let options = Arc::new(options.clone());
        let root = build(schema, schema, is_root, decl, &options).map(Arc::new);
        SchemaValidator {
            schema: Arc::new(schema.clone()),
            root,
            release: options.version,
        }
    }

    /// Whether any node has rules.
    pub fn has_rules(&self) -> bool {
        self.root.is_some()
    }

    /// Every compiled rule with the path of its schema node (`spec.items[*]`-like paths:
    /// `.properties[name]`, `.items`, `.additionalProperties`, `.allOf[i]`).
    pub fn rules(&self) -> Vec<(String, &CompiledRule)> {
        let mut out = Vec::new();
        let mut work: Vec<(String, &Node)> =
            self.root.iter().map(|n| (String::new(), &**n)).collect();
        while let Some((path, n)) = work.pop() {
            out.extend(n.rules.get().rules.iter().map(|r| (path.clone(), r)));
            for (i, a) in n.all_of.iter().enumerate().rev() {
                work.push((format!("{path}.allOf[{i}]"), a));
            }
            if let Some(a) = &n.additional {
                work.push((format!("{path}.additionalProperties"), a));
            }
            if let Some(i) = &n.items {
                work.push((format!("{path}.items"), i));
            }
            for (k, p) in n.properties.iter().rev() {
                work.push((format!("{path}.properties[{k}]"), p));
            }
        }
        out
    }

    /// Validates `object` (and, on update, against `old`).
    pub fn validate(
        &self,
        object: &Json,
        old: Option<&Json>,
        options: &ValidateOptions,
    ) -> Validation {
        let mut walk = Walk {
            options,
            out: Validation::default(),
            budget: options.cost_budget,
            release: self.release,
        };
        if let Some(root) = &self.root {
            let old = old.filter(|o| !o.is_null());
            let ratchet = match (options.correlate, old) {
                (true, Some(old)) => Ratchet {
                    current: Some(Correlated {
                        new: object,
                        old,
                        schema: &self.schema,
                    }),
                    parent: None,
                },
                _ => Ratchet::default(),
            };
            walk.node(root, &options.field_root, object, None, old, None, ratchet);
        }
        walk.out.remaining_budget = walk.budget;
        walk.out
    }
}

fn build(
    validation: &Schema,
    node: &Schema,
    is_root: bool,
    decl: Option<&DeclType>,
    options: &Arc<RuleOptions>,
) -> Option<Node> {
    let rules = LazyRules::new(node, &validation.x_validations, decl, options);
    let elem = decl.and_then(DeclType::elem);
    let items = match (validation.items.as_deref(), node.items.as_deref()) {
        (Some(v), Some(n)) => build(v, n, n.x_embedded_resource, elem, options).map(Box::new),
        _ => None,
    };
    let mut properties = IndexMap::default();
    for (k, v) in &validation.properties {
        let Some(n) = node.properties.get(k) else {
            continue;
        };
        let own;
        let field_type = match escape(k) {
            Some(escaped) => match decl.and_then(|d| d.field(&escaped)) {
                Some(f) => &f.ty,
                None => continue,
            },
            None => match DeclType::from_schema(n, n.x_embedded_resource) {
                Some(t) => {
                    own = t;
                    &own
                }
                None => continue,
            },
        };
        if let Some(p) = build(v, n, n.x_embedded_resource, Some(field_type), options) {
            properties.insert(k.clone(), p);
        }
    }
    let additional = match (validation.additional_schema(), node.additional_schema()) {
        (Some(v), Some(n)) => build(v, n, n.x_embedded_resource, elem, options).map(Box::new),
        _ => None,
    };
    let all_of: Vec<Node> = validation
        .all_of
        .iter()
        .filter_map(|a| build(a, node, is_root, decl, options))
        .collect();
    let anything = rules.source.is_some()
        || items.is_some()
        || additional.is_some()
        || !properties.is_empty()
        || !all_of.is_empty();
    anything.then(|| Node {
        schema_type: node.type_.clone(),
        rules,
        model: ValueModel::new(node, is_root),
        list_map_keys: (node.x_list_type.as_deref() == Some("map")
            && !node.x_list_map_keys.is_empty())
        .then(|| node.x_list_map_keys.clone()),
        map_correlatable: matches!(
            node.x_map_type.as_deref(),
            None | Some("granular" | "atomic")
        ),
        items,
        properties,
        additional,
        all_of,
    })
}

/// The state of one validation.
struct Walk<'o> {
    options: &'o ValidateOptions,
    out: Validation,
    budget: i64,
    release: KubeVersion,
}

impl Walk<'_> {
    /// Validates one node: its rules, its `allOf`, then what is below it.
    #[allow(
        clippy::too_many_arguments,
        reason = "the new and old value, data and typed, travel together"
    )]
    fn node(
        &mut self,
        node: &Node,
        path: &Path,
        obj: &Json,
        typed: Option<&Value>,
        old: Option<&Json>,
        old_typed: Option<&Value>,
        ratchet: Ratchet<'_>,
    ) {
        if obj.is_null() {
            return;
        }
        let old = old.filter(|o| !o.is_null());
        let own = self.expressions(node, path, obj, typed, old, old_typed, ratchet);
        if self.budget < 0 {
            return;
        }
        let (typed, old_typed) = match &own {
            Some((t, o)) => (Some(t), o.as_ref().or(old_typed)),
            None => (typed, old_typed),
        };
        for a in &node.all_of {
            let parent_only = Ratchet {
                current: None,
                parent: ratchet.parent,
            };
            self.node(a, path, obj, typed, old, old_typed, parent_only);
            if self.budget < 0 {
                return;
            }
        }
        match obj {
            Json::Array(items) => self.array(node, path, items, typed, old, old_typed, ratchet),
            Json::Object(members) => self.map(node, path, members, typed, old, old_typed, ratchet),
            _ => {}
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the new and old value, data and typed, travel together"
    )]
    fn array(
        &mut self,
        node: &Node,
        path: &Path,
        items: &[Json],
        typed: Option<&Value>,
        old: Option<&Json>,
        old_typed: Option<&Value>,
        ratchet: Ratchet<'_>,
    ) {
        let Some(item_node) = &node.items else { return };
        let old_items = old.and_then(Json::as_array);
        for (i, item) in items.iter().enumerate() {
            let old_item = match (&node.list_map_keys, old_items) {
                (Some(keys), Some(olds)) => map_list_find(keys, olds, item),
                _ => None,
            };
            let typed_item = element(typed, i);
            let old_typed_item = old_item.and_then(|(j, _)| element(old_typed, j));
            self.node(
                item_node,
                &path.index(i),
                item,
                typed_item,
                old_item.map(|(_, o)| o),
                old_typed_item,
                ratchet.index(i),
            );
            if self.budget < 0 {
                return;
            }
        }
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "the new and old value, data and typed, travel together"
    )]
    fn map(
        &mut self,
        node: &Node,
        path: &Path,
        members: &serde_json::Map<String, Json>,
        typed: Option<&Value>,
        old: Option<&Json>,
        old_typed: Option<&Value>,
        ratchet: Ratchet<'_>,
    ) {
        let old_of = |k: &str| {
            if node.map_correlatable {
                old.and_then(|o| o.get(k))
            } else {
                None
            }
        };
        if let Some(values) = &node.additional {
            for (k, v) in members {
                let old_v = old_of(k);
                let old_t = old_v.and(entry(old_typed, k));
                self.node(
                    values,
                    &path.key(k),
                    v,
                    entry(typed, k),
                    old_v,
                    old_t,
                    ratchet.key(k),
                );
                if self.budget < 0 {
                    return;
                }
            }
        }
        if !node.properties.is_empty() {
            for (k, v) in members {
                let Some(sub) = node.properties.get(k) else {
                    continue;
                };
                let old_v = old_of(k);
                let old_t = old_v.and(entry(old_typed, k));
                self.node(
                    sub,
                    &path.child(k),
                    v,
                    entry(typed, k),
                    old_v,
                    old_t,
                    ratchet.key(k),
                );
                if self.budget < 0 {
                    return;
                }
            }
        }
    }

    /// Runs a node's rules. Returns the node's `self` and `oldSelf` when it made them, so
    /// the nodes below can read their values from them instead of converting again.
    #[allow(
        clippy::too_many_arguments,
        reason = "the new and old value, data and typed, travel together"
    )]
    fn expressions(
        &mut self,
        node: &Node,
        path: &Path,
        obj: &Json,
        typed: Option<&Value>,
        old: Option<&Json>,
        old_typed: Option<&Value>,
        ratchet: Ratchet<'_>,
    ) -> Option<(Value, Option<Value>)> {
        let shown = || BadValue::String(node.schema_type.clone());
        let rules = node.rules.get();
        if let Some(e) = &rules.compile_error {
            self.out.errors.push(FieldError::invalid(
                path,
                shown(),
                format!("rule compiler initialization error: {e}"),
            ));
            return None;
        }
        if rules.rules.is_empty() {
            return None;
        }
        if self.budget <= 0 {
            self.out.errors.push(out_of_budget(path, shown()));
            self.budget = -1;
            return None;
        }
        let self_value = typed.cloned().unwrap_or_else(|| node.model.to_value(obj));
        let old_value = match old {
            Some(o) if rules.uses_old_self => {
                Some(old_typed.cloned().unwrap_or_else(|| node.model.to_value(o)))
            }
            _ => None,
        };
        let plain = RuleActivation {
            self_value: self_value.clone(),
            old_self: if rules.uses_old_self {
                old_value.clone()
            } else {
                None
            },
        };
        let optional = RuleActivation {
            self_value: self_value.clone(),
            old_self: if rules.uses_old_self {
                Some(match &old_value {
                    Some(v) => Value::optional_of(v.clone()),
                    None => Value::optional_none(),
                })
            } else {
                None
            },
        };
        for compiled in &rules.rules {
            if let Some(e) = &compiled.error {
                self.out.errors.push(FieldError::invalid(
                    path,
                    shown(),
                    format!("rule compile error: {e}"),
                ));
                continue;
            }
            let Some(program) = &compiled.program else {
                continue;
            };
            let optional_old_self = compiled.rule.optional_old_self == Some(true);
            if compiled.uses_old_self
                && old.is_none()
                && (!self.options.ratcheting || !optional_old_self)
            {
                continue;
            }
            let activation = if optional_old_self { &optional } else { &plain };
            if !self.rule(
                node, compiled, program, activation, &plain, path, obj, ratchet,
            ) {
                return Some((self_value, old_value));
            }
        }
        Some((self_value, old_value))
    }

    /// Runs one rule; `false` when validation must stop.
    #[allow(clippy::too_many_arguments, reason = "one rule's whole context")]
    fn rule(
        &mut self,
        node: &Node,
        compiled: &CompiledRule,
        program: &Program,
        activation: &RuleActivation,
        plain: &RuleActivation,
        path: &Path,
        obj: &Json,
        ratchet: Ratchet<'_>,
    ) -> bool {
        let rule = &compiled.rule;
        let shown = || BadValue::String(node.schema_type.clone());
        // Data that contradicts the schema is `self`'s error, as in Kubernetes.
        let (result, cost) = match check_data(&activation.self_value) {
            Err(e) => (Err(e), 0),
            Ok(()) => {
                let (r, details) = program.eval_details(activation);
                (r, details.actual_cost)
            }
        };
        if cost > i64::MAX as u64 || cost as i64 > self.budget {
            self.out.errors.push(out_of_budget(path, shown()));
            self.budget = -1;
            return false;
        }
        self.budget -= cost as i64;
        match result {
            Ok(Value::Bool(true)) => return true,
            Ok(_) => {}
            Err(e) => {
                let message = e.to_string();
                let detail = if message.starts_with("no such overload") {
                    format!(
                        "'{message}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule_error_string(rule)
                    )
                } else if e.kind == ErrorKind::CostLimitExceeded {
                    self.out.errors.push(FieldError::invalid(
                        path,
                        shown(),
                        format!(
                            "'{message}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                            rule_error_string(rule)
                        ),
                    ));
                    self.budget = -1;
                    return false;
                } else {
                    format!("{message} evaluating rule: {}", rule_error_string(rule))
                };
                self.out
                    .errors
                    .push(FieldError::invalid(path, shown(), detail));
                return true;
            }
        }
        let error_path = match &compiled.normalized_field_path {
            Some(p) => path.child(p),
            None => path.clone(),
        };
        let ratchet_this = !compiled.uses_old_self && ratchet.should_ratchet();
        let mut detail = None;
        if let Some(message) = &compiled.message_program {
            match self.message_expression(message, &rule.message_expression, plain) {
                MessageOutcome::Message(m) => detail = Some(m),
                MessageOutcome::Failed(why) => self.out.warnings.push(why),
                MessageOutcome::Stop(why) => {
                    let e = FieldError::invalid(&error_path, shown(), why);
                    self.add(e, ratchet_this);
                    self.budget = -1;
                    return false;
                }
            }
        }
        let detail = detail.unwrap_or_else(|| rule_message_or_default(rule));
        let value = failed_rule_value(self.release, &node.schema_type, obj);
        let e = error_for_reason(&error_path, value, detail, rule.reason.as_deref());
        self.add(e, ratchet_this);
        true
    }

    /// Records an error, or a warning if it is ratcheted.
    fn add(&mut self, e: FieldError, ratcheted: bool) {
        if ratcheted {
            self.out.warnings.push(e.to_string());
        } else {
            self.out.errors.push(e);
        }
    }

    fn message_expression(
        &mut self,
        program: &Program,
        source: &str,
        activation: &RuleActivation,
    ) -> MessageOutcome {
        let (result, details) = program.eval_details(activation);
        let cost = details.actual_cost;
        if cost > i64::MAX as u64 || cost as i64 > self.budget {
            return MessageOutcome::Stop(
                "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run".into(),
            );
        }
        let failed = |why: String| MessageOutcome::Failed(why);
        let text = match result {
            Err(e) if e.kind == ErrorKind::CostLimitExceeded => {
                return MessageOutcome::Stop(format!(
                    "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                    cel_k8s_schema::field::go_quote(source)
                ));
            }
            Err(e) => {
                self.budget -= cost as i64;
                return failed(format!("messageExpression evaluation failed due to: {e}"));
            }
            Ok(v) => v,
        };
        self.budget -= cost as i64;
        let Value::String(s) = &text else {
            return failed("messageExpression failed to convert to string".into());
        };
        let trimmed = s.trim();
        if trimmed.len() > MAX_MESSAGE_EXPRESSION_BYTES {
            failed(format!(
                "messageExpression beyond allowable length of {MAX_MESSAGE_EXPRESSION_BYTES}"
            ))
        } else if trimmed.contains('\n') {
            failed("messageExpression should not contain line breaks".into())
        } else if trimmed.is_empty() {
            failed("messageExpression should evaluate to a non-empty string".into())
        } else {
            MessageOutcome::Message(trimmed.to_string())
        }
    }
}

enum MessageOutcome {
    /// The message to report.
    Message(String),
    /// The message expression failed: the rule's message is used, and the failure logged.
    Failed(String),
    /// Validation stops with this error.
    Stop(String),
}

fn out_of_budget(path: &Path, shown: BadValue) -> FieldError {
    FieldError::invalid(
        path,
        shown,
        "validation failed due to running out of cost budget, no further validation rules will be run",
    )
}

/// The rule's message (trimmed), or else its text.
fn rule_error_string(rule: &ValidationRule) -> String {
    if rule.message.is_empty() {
        rule.rule.trim().to_string()
    } else {
        rule.message.trim().to_string()
    }
}

/// The detail of a failed rule without a message expression: its message, or else
/// "failed rule: <rule>".
fn rule_message_or_default(rule: &ValidationRule) -> String {
    if rule.message.is_empty() {
        format!("failed rule: {}", rule_error_string(rule))
    } else {
        rule.message.trim().to_string()
    }
}

/// The field error a failed rule gives for its `reason`.
fn error_for_reason(
    path: &Path,
    value: BadValue,
    detail: String,
    reason: Option<&str>,
) -> FieldError {
    match reason {
        Some("FieldValueForbidden") => FieldError::forbidden(path, detail),
        Some("FieldValueRequired") => FieldError::required(path, detail),
        Some("FieldValueDuplicate") => FieldError::new(ErrorType::Duplicate, path, value, ""),
        _ => FieldError::invalid(path, value, detail),
    }
}

/// `self` and `oldSelf` for one node.
struct RuleActivation {
    self_value: Value,
    /// `None`: `oldSelf` is not bound.
    old_self: Option<Value>,
}

impl Activation for RuleActivation {
    fn resolve(&self, name: &str) -> Option<Value> {
        self.resolve_ref(name).cloned()
    }

    fn resolve_ref(&self, name: &str) -> Option<&Value> {
        match name {
            SELF_VARIABLE => Some(&self.self_value),
            OLD_SELF_VARIABLE => self.old_self.as_ref(),
            _ => None,
        }
    }
}

/// The typed element `i` of a typed list.
fn element(list: Option<&Value>, i: usize) -> Option<&Value> {
    match list? {
        Value::List(l) => l.get(i),
        _ => None,
    }
}

/// The typed entry `k` of a typed object or map.
fn entry<'v>(parent: Option<&'v Value>, k: &str) -> Option<&'v Value> {
    match parent? {
        Value::Object(o) => o.layout().slot_of_data_name(k).and_then(|i| o.slot(i)),
        Value::Map(m) => m.get_str(k),
        _ => None,
    }
}

/// The first old item of a `map` list with the same key field values as `item` (each a
/// scalar), and its index.
fn map_list_find<'a>(keys: &[String], olds: &'a [Json], item: &Json) -> Option<(usize, &'a Json)> {
    let Json::Object(item) = item else {
        return None;
    };
    let key: Vec<&Json> = keys
        .iter()
        .map(|k| item.get(k).filter(|v| is_scalar(v)))
        .collect::<Option<_>>()?;
    olds.iter().enumerate().find(|(_, o)| {
        o.as_object().is_some_and(|o| {
            keys.iter()
                .zip(&key)
                .all(|(k, want)| o.get(k).is_some_and(|v| is_scalar(v) && v == *want))
        })
    })
}

fn is_scalar(v: &Json) -> bool {
    matches!(v, Json::Bool(_) | Json::Number(_) | Json::String(_))
}

/// A value of the object and its old value at the same place, with the schema there
/// (Kubernetes' `CorrelatedObject`).
#[derive(Clone, Copy)]
struct Correlated<'a> {
    new: &'a Json,
    old: &'a Json,
    schema: &'a Schema,
}

impl<'a> Correlated<'a> {
    /// The property or map entry `field`, when both objects have it.
    fn key(self, field: &str) -> Option<Correlated<'a>> {
        let new = self.new.as_object()?.get(field)?;
        let old = self.old.as_object()?.get(field)?;
        let schema = self
            .schema
            .properties
            .get(field)
            .or_else(|| self.schema.additional_schema())?;
        Some(Correlated { new, old, schema })
    }

    /// Item `i`, for a `map` list whose old value has an item with the same keys.
    fn index(self, i: usize) -> Option<Correlated<'a>> {
        let new = self.new.as_array()?.get(i)?;
        let olds = self.old.as_array()?;
        if self.schema.x_list_type.as_deref() != Some("map")
            || self.schema.x_list_map_keys.is_empty()
        {
            return None;
        }
        let (_, old) = map_list_find(&self.schema.x_list_map_keys, olds, new)?;
        let schema = self.schema.items.as_deref()?;
        Some(Correlated { new, old, schema })
    }

    /// Whether the value is unchanged, correlating list items and entries as above.
    fn unchanged(self) -> bool {
        match (self.new, self.old) {
            (Json::Array(new), Json::Array(old)) => {
                if new.len() != old.len() {
                    return false;
                }
                let is_map_list = self.schema.x_list_type.as_deref() == Some("map");
                for i in 0..new.len() {
                    match self.index(i) {
                        Some(child) if !child.unchanged() => return false,
                        Some(_) => {}
                        None if is_map_list => return false,
                        None => return new == old,
                    }
                }
                true
            }
            (Json::Object(new), Json::Object(old)) => {
                new.len() == old.len()
                    && new
                        .keys()
                        .all(|k| self.key(k).is_some_and(Correlated::unchanged))
            }
            (new, old) => new == old,
        }
    }
}

/// Where ratcheting stands at a node: the correlated value there, if it correlates, and
/// the nearest correlated ancestor's.
#[derive(Clone, Copy, Default)]
struct Ratchet<'a> {
    current: Option<Correlated<'a>>,
    parent: Option<Correlated<'a>>,
}

impl<'a> Ratchet<'a> {
    fn key(self, field: &str) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        // The root's apiVersion and kind never ratchet.
        if self.parent.is_none() && (field == "apiVersion" || field == "kind") {
            return Ratchet::default();
        }
        Ratchet {
            current: current.key(field),
            parent: Some(current),
        }
    }

    fn index(self, i: usize) -> Ratchet<'a> {
        let Some(current) = self.current else {
            return self;
        };
        Ratchet {
            current: current.index(i),
            parent: Some(current),
        }
    }

    /// Whether an error here is only a warning: the value (or, where it does not correlate,
    /// the nearest correlated ancestor) is unchanged.
    fn should_ratchet(self) -> bool {
        match (self.current, self.parent) {
            (Some(c), _) => c.unchanged(),
            (None, Some(p)) => p.unchanged(),
            (None, None) => false,
        }
    }
}
