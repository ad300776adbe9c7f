//! The API server's checks of a CRD's validation rules when the CRD is created or updated
//! (the CEL part of `ValidateCustomResourceDefinitionOpenAPISchema`): every rule compiles to
//! a `bool` in the environment for new expressions, message expressions to a `string`,
//! each rule's estimated cost times the node's cardinality stays under 10,000,000 and their
//! sum under 100,000,000, `oldSelf` only where old values correlate, `optionalOldSelf` only
//! with `oldSelf`.

use std::collections::HashSet;

use cel_k8s::ExpressionKind;
use cel_k8s_schema::Schema;
use cel_k8s_schema::decl::DeclType;
use cel_k8s_schema::field::{BadValue, FieldError, Path};
use cel_k8s_schema::fieldpath::{FieldPathOptions, valid_field_path};
use cel_k8s_schema::structural::{
    DefaultSite, RuleSite, SchemaCheckOptions, SchemaHooks, check_schema, rule_bad_value,
};

use super::rules::{CompiledRule, RuleErrorType, RuleOptions, compile_rules};
use super::validator::{SchemaValidator, ValidateOptions};

/// The largest estimated cost of one rule, times its node's cardinality.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The largest estimated cost of all the rules of one schema.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The estimated costs of a schema's rules, summed (Kubernetes' `TotalCost`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TotalCost {
    /// The sum, saturating.
    pub total: u64,
    /// The most expensive rules (at most 4, each at least 1% of the limit), costliest first,
    /// with their paths.
    pub most_expensive: Vec<(String, u64)>,
}

impl TotalCost {
    /// Adds one rule's or message expression's cost.
    pub fn observe(&mut self, path: &str, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path.to_string(), cost));
        // Stable, as Go's sort.Slice is not guaranteed to be: ties keep their order.
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// `cost × cardinality`, or the largest `u64` if that overflows.
pub fn multiply_with_overflow_guard(cost: u64, cardinality: u64) -> u64 {
    if cost == 0 {
        return 0;
    }
    cost.saturating_mul(cardinality)
}

/// "estimated rule cost exceeds budget by factor of 1.5x (try simplifying the rule, ...)".
pub fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// How many children a node holds at most (Kubernetes' `extractMaxElements`): `maxItems` of
/// a list, `maxProperties` of a map (`None`, unbounded, without them), 1 otherwise. A node's
/// cardinality is the product of its ancestors'.
pub fn max_elements(s: &Schema) -> Option<u64> {
    let n = |v: Option<i64>| v.map(|n| n.max(0) as u64);
    match s.type_.as_str() {
        "object" if s.additional_properties.is_some() => n(s.max_properties),
        "array" => n(s.max_items),
        _ => Some(1),
    }
}

/// The hooks through which the schema checks of `cel-k8s-schema` ask for what needs the
/// compiler: rules (compiled as new expressions, or as stored ones when an update keeps
/// them), their estimated costs against the limits, `fieldPath`s, and defaults, which must
/// pass the node's rules.
pub struct CrdHooks<'o> {
    options: &'o RuleOptions,
    /// Rules and message expressions the old CRD already has (on update): they compile as
    /// stored expressions.
    preexisting: HashSet<String>,
    /// Skip the per-expression cost limits (an update that leaves the schema unchanged).
    suppress_per_expression_cost: bool,
    /// The estimated costs so far.
    pub total: TotalCost,
    /// The budget the rules of defaults share.
    default_budget: i64,
}

impl<'o> CrdHooks<'o> {
    /// Hooks compiling with `options` (new expressions), with the old CRD's rules and message
    /// expressions on update.
    pub fn new(
        options: &'o RuleOptions,
        preexisting: HashSet<String>,
        suppress_per_expression_cost: bool,
    ) -> CrdHooks<'o> {
        CrdHooks {
            options,
            preexisting,
            suppress_per_expression_cost,
            total: TotalCost::default(),
            default_budget: super::validator::RUNTIME_COST_BUDGET,
        }
    }

    /// Compiles a node's rules: each rule (and each message expression) as a new
    /// expression, or as a stored one when the old CRD already has it.
    fn compile(&self, s: &Schema, is_root: bool) -> Result<Vec<CompiledRule>, String> {
        let decl = DeclType::from_schema(s, is_root);
        let fresh = compile_rules(s, decl.as_ref(), self.options)?;
        let kept = |e: &str| self.preexisting.contains(e);
        let any_kept = s
            .x_validations
            .iter()
            .any(|r| kept(&r.rule) || kept(&r.message_expression));
        if !any_kept {
            return Ok(fresh);
        }
        let stored_options = RuleOptions {
            expressions: ExpressionKind::StoredExpressions,
            ..self.options.clone()
        };
        let stored = compile_rules(s, decl.as_ref(), &stored_options)?;
        Ok(fresh
            .into_iter()
            .zip(stored)
            .map(|(new, old)| {
                let rule_from = if kept(&new.rule.rule) { &old } else { &new };
                let message_from = if kept(&new.rule.message_expression) {
                    &old
                } else {
                    &new
                };
                CompiledRule {
                    message_program: message_from.message_program.clone(),
                    message_expression_error: message_from.message_expression_error.clone(),
                    message_expression_max_cost: message_from.message_expression_max_cost,
                    ..rule_from.clone()
                }
            })
            .collect())
    }
}

impl SchemaHooks for CrdHooks<'_> {
    fn field_path_is_valid(&mut self, node: &Schema, field_path: &str) -> bool {
        valid_field_path(field_path, node, FieldPathOptions::default()).is_ok()
    }

    fn check_default(&mut self, site: &DefaultSite<'_>) -> Vec<FieldError> {
        if !site.schema.has_validations() {
            return Vec::new();
        }
        let runtime = RuleOptions {
            expressions: ExpressionKind::StoredExpressions,
            estimate_costs: false,
            ..self.options.clone()
        };
        let validator = SchemaValidator::new(site.schema, site.is_resource_root, &runtime);
        let options = ValidateOptions {
            field_root: site.path.clone(),
            cost_budget: self.default_budget,
            ..ValidateOptions::default()
        };
        let with_old = validator.validate(site.value, Some(site.value), &options);
        if !with_old.errors.is_empty() {
            self.default_budget = with_old.remaining_budget;
            return with_old.errors;
        }
        let fresh = validator.validate(site.value, None, &options);
        self.default_budget = with_old.remaining_budget.min(fresh.remaining_budget);
        fresh.errors
    }

    fn check_rules(&mut self, site: &RuleSite<'_>) -> Vec<FieldError> {
        let rules_path = site.path.child("x-kubernetes-validations");
        let compiled = match self.compile(site.schema, site.is_resource_root) {
            Ok(c) => c,
            Err(e) => return vec![FieldError::internal(&rules_path, e)],
        };
        let mut errors = Vec::new();
        for (i, cr) in compiled.iter().enumerate() {
            self.rule(site, i, cr, &rules_path, &mut errors);
        }
        errors
    }
}

impl CrdHooks<'_> {
    fn rule(
        &mut self,
        site: &RuleSite<'_>,
        i: usize,
        cr: &CompiledRule,
        rules_path: &Path,
        errors: &mut Vec<FieldError>,
    ) {
        let rule_path = rules_path.index(i).child("rule");
        let cardinality = site.max_cardinality.unwrap_or(cr.max_cardinality);
        let cost = multiply_with_overflow_guard(cr.max_cost, cardinality);
        if !self.suppress_per_expression_cost && cost > STATIC_ESTIMATED_COST_LIMIT {
            errors.push(FieldError::forbidden(
                &rule_path,
                cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT),
            ));
        }
        self.total.observe(rule_path.as_str(), cost);
        let rule = &site.schema.x_validations[i];
        if let Some(e) = &cr.error {
            errors.push(match e.error_type {
                RuleErrorType::Required => FieldError::required(&rule_path, e.detail.clone()),
                _ => FieldError::invalid(&rule_path, rule_bad_value(rule), e.detail.clone()),
            });
        }
        let message_path = rules_path.index(i).child("messageExpression");
        if let Some(e) = &cr.message_expression_error {
            errors.push(FieldError::invalid(
                &message_path,
                rule_bad_value(rule),
                e.detail.clone(),
            ));
        } else if cr.message_program.is_some() {
            if !self.suppress_per_expression_cost
                && cr.message_expression_max_cost > STATIC_ESTIMATED_COST_LIMIT
            {
                errors.push(FieldError::forbidden(
                    &message_path,
                    cost_error_message(
                        "estimated messageExpression cost",
                        cr.message_expression_max_cost,
                        STATIC_ESTIMATED_COST_LIMIT,
                    ),
                ));
            }
            self.total
                .observe(message_path.as_str(), cr.message_expression_max_cost);
        }
        if cr.uses_old_self {
            if let Some(list) = site.uncorrelatable_within {
                errors.push(FieldError::invalid(
                    &rule_path,
                    BadValue::String(rule.rule.clone()),
                    format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {list}"),
                ));
            }
        } else if let Some(o) = rule.optional_old_self {
            errors.push(FieldError::invalid(
                &rules_path.index(i).child("optionalOldSelf"),
                BadValue::Bool(o),
                "may not be set if oldSelf is not used in rule",
            ));
        }
    }
}

/// The API server's checks of one version's schema (at `path`): structural, valid, and, with
/// the compiler, its rules and defaults. Returns the errors and the total estimated cost.
pub fn check_schema_with_rules(
    schema: &Schema,
    path: &Path,
    check_options: &SchemaCheckOptions,
    hooks: &mut CrdHooks<'_>,
) -> Vec<FieldError> {
    let mut errors = check_schema(schema, path, check_options, hooks);
    let total = std::mem::take(&mut hooks.total);
    if total.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (p, _) in &total.most_expensive {
            errors.push(FieldError {
                error_type: cel_k8s_schema::ErrorType::Forbidden,
                field: p.clone(),
                bad_value: BadValue::String(String::new()),
                detail: "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".into(),
            });
        }
        errors.push(FieldError::forbidden(
            path,
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                total.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    hooks.total = total;
    errors
}

/// The CEL checks of a schema's rules alone, with the schema at `path`, as on a CRD create
/// whose schema is otherwise valid; and the total estimated cost.
pub fn check_rules(
    schema: &Schema,
    path: &Path,
    options: &RuleOptions,
) -> (Vec<FieldError>, TotalCost) {
    let mut hooks = CrdHooks::new(options, HashSet::new(), false);
    let errors =
        check_schema_with_rules(schema, path, &SchemaCheckOptions::create(false), &mut hooks);
    (errors, hooks.total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_messages_as_kubernetes_words_them() {
        assert!(
            cost_error_message("estimated rule cost", 12_000_000, 10_000_000)
                .starts_with("estimated rule cost exceeds budget by factor of 1.200000x (try")
        );
        assert!(
            cost_error_message("estimated rule cost", 25_000_000, 10_000_000)
                .contains("factor of 2.5x")
        );
        assert!(
            cost_error_message("estimated rule cost", u64::MAX, 10_000_000)
                .contains("more than 100x")
        );
    }

    #[test]
    fn totals_keep_the_four_costliest() {
        let mut t = TotalCost::default();
        for (i, c) in [5_000_000, 100, 9_000_000, 2_000_000, 3_000_000, 4_000_000]
            .into_iter()
            .enumerate()
        {
            t.observe(&format!("r{i}"), c);
        }
        assert_eq!(t.total, 23_000_100);
        let costs: Vec<u64> = t.most_expensive.iter().map(|(_, c)| *c).collect();
        assert_eq!(costs, vec![9_000_000, 5_000_000, 4_000_000, 3_000_000]);
    }
}
