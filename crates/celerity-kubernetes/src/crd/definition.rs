//! A CustomResourceDefinition, compiled once: its served versions, each with its schema's
//! rules compiled for validating objects; and the validation of an object of its kind, as
//! the API server validates a create or an update.

use std::sync::Arc;

use cel_k8s::{ExpressionKind, KubeVersion};
use cel_k8s_schema::defaulting::Defaulter;
use cel_k8s_schema::field::{BadValue, ErrorType, FieldError, Path};
use cel_k8s_schema::godecode::GoType;
use cel_k8s_schema::names::{self, NameCheck};
use cel_k8s_schema::pruning::unknown_field_warning;
use cel_k8s_schema::structural::SchemaCheckOptions;
use cel_k8s_schema::{Schema, listtype, objectmeta, openapi};
use serde_json::Value as Json;

use super::checks::{CrdHooks, TotalCost, check_schema_with_rules};
use super::rules::{RuleOptions, default_version};
use super::scale::ScaleSubresource;
use super::texts::crd_error_as_of;
use super::validator::{SchemaValidator, ValidateOptions, Validation};
use celerity::{Backend, CompileSettings};

/// How a CRD is compiled.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct CrdOptions {
    /// The Kubernetes release (API server) the CRD is created on and validates with.
    pub version: KubeVersion,
    /// The compatibility version new rules compile with (`None`: one minor below the
    /// release, the API server's default).
    pub compatibility: Option<KubeVersion>,
    /// How rules run.
    pub backend: Backend,
    /// The cost limit of one rule evaluation.
    pub per_call_limit: u64,
    /// Where native compiles run and who hears of them (see [`CompileSettings`]).
    pub compile: CompileSettings,
    /// Whether the CRD's schemas are checked as the API server checks a new CRD (structural,
    /// rules compiling within the cost limits, defaults valid). Only a host that has seen
    /// this very CRD pass these checks with this very program should turn it off (see
    /// [`super::set::DefinitionCache`]); without them a CRD the API server would refuse is
    /// used as if it had been accepted, and [`CompiledCrd::total_costs`] are zero.
    pub check_definition: bool,
    /// Whether the rules that validate objects also carry their static cost estimates
    /// ([`super::CompiledRule::max_cost`]), for a host that shows them (the playground). Off
    /// by default: only the definition checks need estimates.
    pub estimate_rule_costs: bool,
}

impl Default for CrdOptions {
    fn default() -> CrdOptions {
        CrdOptions {
            version: default_version(),
            compatibility: None,
            backend: Backend::Jit,
            per_call_limit: 1_000_000,
            compile: CompileSettings::default(),
            check_definition: true,
            estimate_rule_costs: false,
        }
    }
}

celerity::option_setters!(CrdOptions {
    version: KubeVersion,
    compatibility: Option<KubeVersion>,
    backend: Backend,
    per_call_limit: u64,
    compile: CompileSettings,
    check_definition: bool,
    estimate_rule_costs: bool,
});

/// Why a CRD is not accepted, as the API server words it.
#[derive(Clone, Debug, PartialEq)]
pub struct CrdError {
    /// The CRD's name (`widgets.example.com`).
    pub name: String,
    /// The field errors.
    pub errors: Vec<FieldError>,
}

impl std::fmt::Display for CrdError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&invalid_message(
            "CustomResourceDefinition",
            &self.name,
            &self.errors,
        ))
    }
}

/// The message `kubectl` prints for an invalid object (kubectl `checkErr` on a `422`
/// Status): `The Widget "w1" is invalid: <error>`, or, for several errors, the head with its
/// trailing space and one `* <error>` line per error; repeated errors once.
pub fn invalid_message(kind: &str, name: &str, errors: &[FieldError]) -> String {
    let head = format!(
        "The {kind} {} is invalid: ",
        cel_k8s_schema::field::go_quote(name)
    );
    let texts = super::request::distinct_texts(errors);
    match texts.as_slice() {
        [] => head.trim_end_matches(": ").to_string(),
        [one] => format!("{head}{one}"),
        many => {
            let mut s = head;
            for t in many {
                s.push_str("\n* ");
                s.push_str(t);
            }
            s
        }
    }
}

/// One served version of a CRD.
#[derive(Clone, Debug)]
pub struct CrdVersion {
    /// `v1`, `v1beta1`, ...
    pub name: String,
    /// Whether it is served.
    pub served: bool,
    /// Whether it is the storage version.
    pub storage: bool,
    /// Whether the `status` subresource is enabled (creates then drop `status`).
    pub status_subresource: bool,
    /// The `scale` subresource, if enabled.
    pub scale: Option<ScaleSubresource>,
    /// The schema.
    pub schema: Arc<Schema>,
    /// Its rules, compiled for validating objects.
    pub validator: SchemaValidator,
    /// Its OpenAPI validation, prepared.
    openapi: Arc<openapi::Validator>,
    /// Its defaults, prepared.
    pub(crate) defaulter: Arc<Defaulter>,
    /// Whether the schema has an `x-kubernetes-embedded-resource` node: without one, the
    /// walks for embedded resources' metadata are skipped for every object.
    pub(crate) embedded_resources: bool,
}

impl CrdVersion {
    /// A version of `schema`, prepared for validating objects: its rules compiled (lazily,
    /// node by node), its OpenAPI checks and defaults. Served, storage and scale are the
    /// caller's (here: not served, not storage, no scale).
    fn prepare(
        name: String,
        schema: Schema,
        status_subresource: bool,
        runtime: &RuleOptions,
    ) -> CrdVersion {
        CrdVersion {
            name,
            served: false,
            storage: false,
            status_subresource,
            scale: None,
            validator: SchemaValidator::new(&schema, true, runtime),
            openapi: Arc::new(openapi::Validator::for_version(
                &schema,
                runtime.compatibility_version().minor,
            )),
            defaulter: Arc::new(Defaulter::new(&schema)),
            embedded_resources: objectmeta::has_embedded_resources(&schema),
            schema: Arc::new(schema),
        }
    }
}

/// A CRD, compiled.
#[derive(Clone, Debug)]
pub struct CompiledCrd {
    /// `metadata.name`.
    pub name: String,
    /// `spec.group`.
    pub group: String,
    /// `spec.names.kind`.
    pub kind: String,
    /// `spec.names.plural`.
    pub plural: String,
    /// Whether objects are namespaced (`spec.scope: Namespaced`).
    pub namespaced: bool,
    /// The versions, in order.
    pub versions: Vec<CrdVersion>,
    /// The estimated cost of all rules of each version's schema.
    pub total_costs: Vec<TotalCost>,
    /// The rule `metadata.name` follows (DNS-1123 subdomains for custom resources; a
    /// built-in kind's own rule, see [`crate::builtin::name_check`]).
    pub(crate) name_check: NameCheck,
    /// A built-in kind's Go type, which the API server decodes requests into before anything
    /// else (custom resources are decoded as unstructured JSON).
    pub(crate) decoded_as: Option<Arc<GoType>>,
}

/// The result of validating one object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ObjectValidation {
    /// The field errors the API server would report.
    pub errors: Vec<FieldError>,
    /// What it would warn about (unknown fields pruned, ratcheted errors, failed message
    /// expressions).
    pub warnings: Vec<String>,
    /// The rules' budget left.
    pub remaining_budget: i64,
    /// The fields the schema does not declare, which the API server prunes (`spec.foo`):
    /// with `kubectl`'s default strict field validation, the request fails on them instead
    /// (see [`strict_decoding_error`]).
    pub unknown_fields: Vec<String>,
}

/// The error a request with unknown fields gets under strict field validation (`kubectl`'s
/// default): `WebApp in version "v1" cannot be handled as a WebApp: strict decoding error:
/// unknown field "spec.foo"`.
pub fn strict_decoding_error(kind: &str, version: &str, unknown_fields: &[String]) -> String {
    let fields: Vec<String> = unknown_fields
        .iter()
        .map(|f| unknown_field_warning(f))
        .collect();
    format!(
        "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {}",
        fields.join(", ")
    )
}

fn str_at<'j>(j: &'j Json, path: &[&str]) -> Option<&'j str> {
    path.iter()
        .try_fold(j, |v, k| v.get(k))
        .and_then(Json::as_str)
}

impl CompiledCrd {
    /// Reads and compiles a CRD (`apiextensions.k8s.io/v1`), checking it as the API server
    /// does when it is created.
    pub fn new(crd: &Json, options: &CrdOptions) -> Result<CompiledCrd, CrdError> {
        CompiledCrd::new_or_update(crd, None, options)
    }

    /// As [`CompiledCrd::new`], checked as an update of `old` when given: rules the old CRD
    /// already has compile as stored expressions, a version whose schema is unchanged is not
    /// held to the per-expression cost limits, and requirements the old CRD already broke
    /// are relaxed, as the API server does.
    pub fn new_or_update(
        crd: &Json,
        old: Option<&Json>,
        options: &CrdOptions,
    ) -> Result<CompiledCrd, CrdError> {
        let name = str_at(crd, &["metadata", "name"]).unwrap_or("").to_string();
        let old_schemas = old.map(version_schemas).unwrap_or_default();
        let mut errors = Vec::new();
        let fail = |errors: Vec<FieldError>| CrdError {
            name: name.clone(),
            errors: errors
                .into_iter()
                .map(|e| crd_error_as_of(options.version.minor, e))
                .collect(),
        };
        let api_version = str_at(crd, &["apiVersion"]).unwrap_or("");
        if api_version != "apiextensions.k8s.io/v1"
            || str_at(crd, &["kind"]) != Some("CustomResourceDefinition")
        {
            return Err(fail(vec![FieldError::invalid(
                &Path::new("apiVersion"),
                BadValue::String(api_version.into()),
                "expected an apiextensions.k8s.io/v1 CustomResourceDefinition",
            )]));
        }
        let required = |path: &[&str], errors: &mut Vec<FieldError>| -> String {
            match str_at(crd, path) {
                Some(s) if !s.is_empty() => s.to_string(),
                _ => {
                    errors.push(FieldError::required(&Path::new(&path.join(".")), ""));
                    String::new()
                }
            }
        };
        let group = required(&["spec", "group"], &mut errors);
        let kind = required(&["spec", "names", "kind"], &mut errors);
        let plural = required(&["spec", "names", "plural"], &mut errors);
        let namespaced = match str_at(crd, &["spec", "scope"]) {
            Some("Namespaced") => true,
            Some("Cluster") => false,
            other => {
                errors.push(FieldError::new(
                    ErrorType::NotSupported,
                    &Path::new("spec").child("scope"),
                    BadValue::String(other.unwrap_or("").into()),
                    "supported values: \"Cluster\", \"Namespaced\"",
                ));
                false
            }
        };
        let versions_json = crd
            .get("spec")
            .and_then(|s| s.get("versions"))
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        if versions_json.is_empty() {
            errors.push(FieldError::invalid(
                &Path::new("spec").child("versions"),
                BadValue::Json(Json::Array(Vec::new())),
                "must have exactly one version marked as storage version",
            ));
        }
        let schema_path = schema_paths(&versions_json);
        let mut versions = Vec::new();
        let mut total_costs: Vec<TotalCost> = Vec::new();
        let rule_options = |kind| {
            let checks = kind == ExpressionKind::NewExpressions;
            RuleOptions {
                version: options.version,
                compatibility: options.compatibility,
                expressions: kind,
                per_call_limit: options.per_call_limit,
                // The CRD checks' programs only say whether a rule can be planned; they
                // never run, so they are never compiled to native code.
                backend: if checks {
                    Backend::Interpreter
                } else {
                    options.backend
                },
                compile: options.compile.clone(),
                // Only the CRD checks need estimates, unless the host shows them.
                estimate_costs: checks || options.estimate_rule_costs,
            }
        };
        // Versions with the same schema (most CRDs serve several versions of one schema)
        // are checked and prepared once: the first one's results serve the others.
        // (schema, index in `versions`, index in `versions_json`)
        let mut prepared: Vec<(&Json, usize, usize)> = Vec::new();
        for (i, v) in versions_json.iter().enumerate() {
            let name = v
                .get("name")
                .and_then(Json::as_str)
                .unwrap_or("")
                .to_string();
            let schema_json = v.get("schema").and_then(|s| s.get("openAPIV3Schema"));
            let status_subresource = v
                .get("subresources")
                .and_then(|s| s.get("status"))
                .is_some();
            if let Some(sj) = schema_json
                && let Some(&(_, first, first_json)) = prepared.iter().find(|(j, _, _)| *j == sj)
                && old.is_none()
                // Errors about a shared schema are reported once, at one path; versions
                // whose schemas are reported apart are checked apart.
                && schema_path[first_json] == schema_path[i]
                && versions
                    .get(first)
                    .is_some_and(|f: &CrdVersion| f.status_subresource == status_subresource)
            {
                let same: CrdVersion = versions[first].clone();
                total_costs.push(total_costs[first].clone());
                versions.push(CrdVersion {
                    name,
                    scale: ScaleSubresource::of_version(v),
                    served: v.get("served").and_then(Json::as_bool).unwrap_or(false),
                    storage: v.get("storage").and_then(Json::as_bool).unwrap_or(false),
                    ..same
                });
                continue;
            }
            let schema = match schema_json {
                None => Schema::default(),
                Some(j) => match Schema::from_json(j, &schema_path[i]) {
                    Ok(s) => s,
                    Err(e) => {
                        errors.extend(e);
                        continue;
                    }
                },
            };
            // The schema as a new CRD must have it: structural, valid, its rules compiling
            // as new expressions within the cost limits.
            let new_rules = rule_options(ExpressionKind::NewExpressions);
            let check_options = match old {
                None => SchemaCheckOptions::create(status_subresource),
                Some(_) => {
                    let olds: Vec<&Schema> = old_schemas.iter().map(|(_, s)| s).collect();
                    SchemaCheckOptions::update(status_subresource, &olds)
                }
            };
            let unchanged = old_schemas.iter().any(|(n, s)| *n == name && *s == schema);
            let preexisting = old_schemas
                .iter()
                .flat_map(|(_, s)| expressions(s))
                .collect();
            if options.check_definition {
                let mut hooks = CrdHooks::new(&new_rules, preexisting, unchanged);
                errors.extend(check_schema_with_rules(
                    &schema,
                    &schema_path[i],
                    &check_options,
                    &mut hooks,
                ));
                total_costs.push(hooks.total);
            } else {
                total_costs.push(TotalCost::default());
            }
            if let Some(sj) = schema_json {
                prepared.push((sj, versions.len(), i));
            }
            let runtime = rule_options(ExpressionKind::StoredExpressions);
            versions.push(CrdVersion {
                scale: ScaleSubresource::of_version(v),
                served: v.get("served").and_then(Json::as_bool).unwrap_or(false),
                storage: v.get("storage").and_then(Json::as_bool).unwrap_or(false),
                ..CrdVersion::prepare(name, schema, status_subresource, &runtime)
            });
        }
        // Several identical schemas are one (the internal form's `spec.validation`): report
        // each error once.
        errors.dedup();
        if errors.is_empty() {
            Ok(CompiledCrd {
                name,
                group,
                kind,
                plural,
                namespaced,
                versions,
                total_costs,
                name_check: names::name_is_dns_subdomain,
                decoded_as: None,
            })
        } else {
            Err(fail(errors))
        }
    }

    /// A built-in kind of Kubernetes `1.<minor>` (`minor` is the API server's, whose
    /// published schemas are used), validated as a custom resource of its schema is, with the
    /// kind's own name rule, the way kubectl-validate validates built-in kinds. The schema is
    /// the API server's own, so the checks a CRD's schema must pass are not run.
    pub fn builtin(
        kind: &crate::builtin::BuiltinKind,
        minor: u32,
        options: &CrdOptions,
    ) -> Result<CompiledCrd, CrdError> {
        CompiledCrd::of_kind(
            kind,
            crate::builtin::structural_schema(minor, kind),
            crate::builtin::go_type(minor, kind),
            options,
        )
    }

    /// A kind of the documents a user gave ([`crate::builtin::UserSchemas`]), validated as
    /// [`CompiledCrd::builtin`] validates a shipped one.
    pub fn user_kind(
        kind: &crate::builtin::BuiltinKind,
        schemas: &crate::builtin::UserSchemas,
        options: &CrdOptions,
    ) -> Result<CompiledCrd, CrdError> {
        CompiledCrd::of_kind(
            kind,
            schemas.structural_schema(kind),
            schemas.go_type(kind),
            options,
        )
    }

    /// A built-in kind (shipped or the user's) of structural schema `json` and Go type
    /// `go_type`.
    fn of_kind(
        kind: &crate::builtin::BuiltinKind,
        json: Result<Json, String>,
        go_type: Result<GoType, String>,
        options: &CrdOptions,
    ) -> Result<CompiledCrd, CrdError> {
        let name = format!("{}.{}", kind.resource, kind.group);
        let fail = |message: String| CrdError {
            name: name.clone(),
            errors: vec![FieldError::invalid(
                &Path::new("openAPIV3Schema"),
                BadValue::Json(Json::Null),
                message,
            )],
        };
        let json = json.map_err(&fail)?;
        let go_type = go_type.map_err(fail)?;
        let schema =
            Schema::from_json(&json, &Path::new("openAPIV3Schema")).map_err(|errors| CrdError {
                name: name.clone(),
                errors,
            })?;
        let status_subresource = schema.properties.contains_key("status");
        let runtime = RuleOptions {
            version: options.version,
            compatibility: options.compatibility,
            expressions: ExpressionKind::StoredExpressions,
            per_call_limit: options.per_call_limit,
            backend: options.backend,
            compile: options.compile.clone(),
            estimate_costs: false,
        };
        Ok(CompiledCrd {
            name,
            group: kind.group.clone(),
            kind: kind.kind.clone(),
            plural: kind.resource.clone(),
            namespaced: kind.namespaced,
            versions: vec![CrdVersion {
                scale: None,
                served: true,
                storage: true,
                ..CrdVersion::prepare(kind.version.clone(), schema, status_subresource, &runtime)
            }],
            total_costs: vec![TotalCost::default()],
            name_check: crate::builtin::name_check(&kind.group, &kind.kind),
            decoded_as: Some(Arc::new(go_type)),
        })
    }

    /// The served version an object's `apiVersion` names, if it names this CRD's group.
    pub fn version(&self, api_version: &str) -> Option<&CrdVersion> {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        if group != self.group {
            return None;
        }
        self.versions.iter().find(|v| v.served && v.name == version)
    }

    /// Whether an object of `apiVersion` and `kind` is this CRD's.
    pub fn owns(&self, api_version: &str, kind: &str) -> bool {
        kind == self.kind && self.version(api_version).is_some()
    }

    /// Validates an object of this CRD (a create, or an update from `old`), as the API server
    /// does.
    pub fn validate(&self, object: &Json, old: Option<&Json>) -> ObjectValidation {
        let api_version = str_at(object, &["apiVersion"]).unwrap_or("");
        let Some(version) = self.version(api_version) else {
            return ObjectValidation {
                errors: vec![FieldError::invalid(
                    &Path::new("apiVersion"),
                    BadValue::String(api_version.into()),
                    format!("must be {}/<a served version>", self.group),
                )],
                ..ObjectValidation::default()
            };
        };
        let mut object = object.clone();
        let mut old = old.cloned();
        // What decoding does: unknown fields pruned (a warning each), then defaults applied.
        let pruned = version
            .defaulter
            .prune_and_default(&mut object, &version.schema, true);
        let mut warnings: Vec<String> = pruned.iter().map(|p| unknown_field_warning(p)).collect();
        let unknown_fields = pruned;
        if let Some(o) = old.as_mut() {
            version
                .defaulter
                .prune_and_default(o, &version.schema, true);
        }
        // A create cannot set the status of a kind with a status subresource.
        if version.status_subresource
            && old.is_none()
            && let Some(m) = object.as_object_mut()
        {
            m.remove("status");
        }
        let meta = objectmeta::validate_root_metadata_named(
            &object,
            &Path::root(),
            self.namespaced,
            self.name_check,
        );
        let checked = version.check(&object, old.as_ref(), meta, Vec::new());
        warnings.extend(checked.warnings);
        ObjectValidation {
            errors: checked.errors,
            warnings,
            remaining_budget: checked.remaining_budget,
            unknown_fields,
        }
    }
}

/// What [`CrdVersion::check`] found.
pub(crate) struct Checked {
    pub(crate) errors: Vec<FieldError>,
    pub(crate) warnings: Vec<String>,
    pub(crate) remaining_budget: i64,
}

impl CrdVersion {
    /// The custom resource strategy's validation of a prepared object (Kubernetes'
    /// `customResourceStrategy.Validate`/`ValidateUpdate`, apiextensions-apiserver
    /// `pkg/registry/customresource/strategy.go` and `validator.go`), in its order:
    /// `meta` (the metadata errors the strategy found), the OpenAPI schema (ratcheted on
    /// update), the scale subresource, embedded resources, list types (on update only when
    /// the old object passes them), then the CEL rules, unless an error so far blocks them.
    /// `outside` are errors found before the strategy (on update, the common metadata
    /// checks): reported first, and never blocking the rules.
    pub(crate) fn check(
        &self,
        object: &Json,
        old: Option<&Json>,
        meta: Vec<FieldError>,
        outside: Vec<FieldError>,
    ) -> Checked {
        let root = Path::root();
        let mut warnings = Vec::new();
        let mut errors = meta;
        match old {
            None => errors.extend(self.openapi.validate(object, &root)),
            Some(o) => {
                let (errs, ratcheted) = self.openapi.validate_update(object, o, &root);
                errors.extend(errs);
                warnings.extend(ratcheted.iter().map(FieldError::to_string));
            }
        }
        if let Some(scale) = &self.scale {
            errors.extend(scale.validate(object));
        }
        if self.embedded_resources {
            errors.extend(objectmeta::validate_embedded(&self.schema, object, &root));
        }
        errors.extend(match old {
            None => listtype::validate_list_sets_and_maps(&self.schema, object, &root),
            Some(o) => listtype::validate_list_sets_and_maps_update(&self.schema, object, o, &root),
        });
        let mut remaining_budget = super::validator::RUNTIME_COST_BUDGET;
        if self.validator.has_rules() {
            if errors.iter().any(blocks_rules) {
                errors.push(FieldError::invalid(
                    &root,
                    BadValue::Json(Json::Null),
                    "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
                ));
            } else {
                let Validation {
                    errors: rule_errors,
                    warnings: rule_warnings,
                    remaining_budget: left,
                } = self.validator.validate(
                    object,
                    old,
                    &ValidateOptions {
                        correlate: old.is_some(),
                        ..ValidateOptions::default()
                    },
                );
                errors.extend(rule_errors);
                warnings.extend(rule_warnings);
                remaining_budget = left;
            }
        }
        let mut all = outside;
        all.extend(errors);
        Checked {
            errors: all,
            warnings,
            remaining_budget,
        }
    }
}

/// Errors after which the API server does not run the rules (the object is too broken for
/// them to mean anything).
fn blocks_rules(e: &FieldError) -> bool {
    matches!(
        e.error_type,
        ErrorType::NotSupported
            | ErrorType::Required
            | ErrorType::TooLong
            | ErrorType::TooMany
            | ErrorType::TypeInvalid
    )
}

/// The schema of each version of a CRD (those that read), by version name.
fn version_schemas(crd: &Json) -> Vec<(String, Schema)> {
    let versions = crd
        .get("spec")
        .and_then(|s| s.get("versions"))
        .and_then(Json::as_array);
    versions
        .into_iter()
        .flatten()
        .filter_map(|v| {
            let name = v.get("name")?.as_str()?.to_string();
            let j = v.get("schema")?.get("openAPIV3Schema")?;
            Some((name, Schema::from_json(j, &Path::root()).ok()?))
        })
        .collect()
}

/// Every rule and message expression in a schema.
fn expressions(s: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let mut work = vec![s];
    while let Some(n) = work.pop() {
        for r in &n.x_validations {
            out.push(r.rule.clone());
            if !r.message_expression.is_empty() {
                out.push(r.message_expression.clone());
            }
        }
        work.extend(n.properties.values());
        work.extend(n.items.as_deref());
        work.extend(n.additional_schema());
        work.extend(n.all_of.iter().chain(&n.any_of).chain(&n.one_of));
        work.extend(n.not.as_deref());
    }
    out
}

/// Where errors about each version's schema are reported: `spec.validation.openAPIV3Schema`
/// when every version has the same schema (the API server keeps one schema then),
/// `spec.versions[i].schema.openAPIV3Schema` otherwise.
fn schema_paths(versions: &[Json]) -> Vec<Path> {
    let schemas: Vec<Option<&Json>> = versions.iter().map(|v| v.get("schema")).collect();
    let shared = schemas.windows(2).all(|w| w[0] == w[1]);
    (0..versions.len())
        .map(|i| {
            if shared {
                Path::new("spec")
                    .child("validation")
                    .child("openAPIV3Schema")
            } else {
                Path::new("spec")
                    .child("versions")
                    .index(i)
                    .child("schema")
                    .child("openAPIV3Schema")
            }
        })
        .collect()
}
