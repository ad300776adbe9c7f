//! MutatingAdmissionPolicy (Kubernetes' `policy/mutating`): mutations compiled in the
//! environment with the patch types, applied in order to the object, policy after policy,
//! with `reinvocationPolicy: IfNeeded` policies run once more when a later policy changed
//! the object.
//!
//! * `JSONPatch`: the expression gives a list of `JSONPatch{op, path, from, value}`, applied
//!   as RFC 6902 patches with the semantics and messages of the JSON Patch library the API
//!   server uses (a missing map key reads as absent, so `replace` of one adds it; a failed
//!   `test` leaves the object as it was).
//! * `ApplyConfiguration`: the expression gives an `Object{...}`, merged into the object.
//!   With the kind's schema ([`super::PolicyInputs::schemas`]: a CRD, or a built-in kind's
//!   shipped schema) the merge is the API server's ([`super::apply`]): undeclared fields and
//!   atomic lists, maps and structs are refused, map lists merge by their keys, set lists by
//!   value. Without one it is a documented subset of server-side apply: maps merge field by
//!   field, lists whose elements all have a `name` (containers, env, volumes...) merge by
//!   name (duplicates of a key merging into one), other lists are replaced; a `null` removes
//!   the field, and nothing is refused. `Object.spec{...}` literals whose type name does not
//!   follow the field path are reported as the API server reports them.
//!
//! `Object`, `Object.spec`, `Object.spec.template`... and `JSONPatch` are types whose
//! literals build maps (see [`crate::admission::environment`]).

use cel_k8s_schema::Schema;
use serde_json::{Map, Value as Json};

use super::dispatch::{Matched, PolicySet, Response, Status, View, is_mutating};
use super::environment::{
    AdmissionEnv, Bindings, Compiled, Evaluation, RUNTIME_COST_BUDGET, ReturnTypes, evaluate_all,
};
use super::policy::{Binding, FailurePolicy, MUTATING_POLICY, Mutation, PolicyKind};
use super::request::Request;
use super::validating::CompiledPolicy;
use cel_syntax::ast::ExprKind;

use celerity::{Env, Type};

/// The type of JSON Patch operations.
pub const JSON_PATCH_TYPE: &str = "JSONPatch";
/// The root of apply configurations' types.
pub const OBJECT_TYPE: &str = "Object";

/// Whether a type name is one of the patch types.
pub fn is_patch_type(name: &str) -> bool {
    name == JSON_PATCH_TYPE || name == OBJECT_TYPE || name.starts_with("Object.")
}

/// The type of a field of a patch type: `JSONPatch`'s `op`, `path` and `from` are strings
/// and its `value` dynamic; every field of an `Object` type is dynamic.
pub fn patch_field_type(type_name: &str, field: &str) -> Option<Type> {
    if type_name == JSON_PATCH_TYPE {
        return match field {
            "op" | "path" | "from" => Some(Type::String),
            "value" => Some(Type::Dyn),
            _ => None,
        };
    }
    Some(Type::Dyn)
}

/// Compiles one mutation, checking it gives what its patch type needs.
pub(crate) fn compile_mutation(env: &AdmissionEnv, e: &Env, m: &Mutation) -> Compiled {
    match m {
        Mutation::ApplyConfiguration(x) => {
            env.compile(e, x, &ReturnTypes::OneOf(vec![Type::message(OBJECT_TYPE)]))
        }
        Mutation::JsonPatch(x) => env.compile(
            e,
            x,
            &ReturnTypes::OneOf(vec![Type::list(Type::message(JSON_PATCH_TYPE))]),
        ),
    }
}

/// The first `Object` literal in an expression whose type name does not follow its field's
/// path (`Object{spec: Object.specx{...}}`), as Kubernetes reports it when the mutation
/// runs. Literals are checked where written, whether or not the evaluation reaches them.
pub(crate) fn type_name_mismatch(e: &Env, expression: &str) -> Option<String> {
    let ast = e.parse(expression).ok()?;
    let mut found = None;
    ast.syntax().expr.walk(&mut |x| {
        let ExprKind::Struct(s) = &x.kind else {
            return;
        };
        if found.is_some() || !is_object_type(&s.type_name) {
            return;
        }
        for f in &s.fields {
            let want = format!("{}.{}", s.type_name, f.name);
            let mut check = |v: &cel_syntax::ast::Expr| {
                if let ExprKind::Struct(c) = &v.kind
                    && is_object_type(&c.type_name)
                    && c.type_name != want
                    && found.is_none()
                {
                    found = Some(format!(
                        "type mismatch: unexpected type name {:?}, expected {want:?}, which matches field name path from root Object type",
                        c.type_name
                    ));
                }
            };
            match &f.value.kind {
                ExprKind::List(l) => l.elements.iter().for_each(&mut check),
                _ => check(&f.value),
            }
        }
    });
    found
}

fn is_object_type(name: &str) -> bool {
    name == OBJECT_TYPE || name.starts_with("Object.")
}

/// One policy invocation: a policy, a binding, a param.
struct Invocation<'a> {
    policy: &'a CompiledPolicy,
    binding: &'a Binding,
    /// The param, by position in the set's params.
    param: Option<usize>,
}

/// A policy error (Kubernetes' `PolicyError`): its message and status reason.
struct PolicyError {
    failure_policy: FailurePolicy,
    message: String,
    reason: &'static str,
}

fn policy_error(
    p: &CompiledPolicy,
    b: Option<&Binding>,
    e: String,
    reason: &'static str,
) -> PolicyError {
    let message = match b {
        Some(b) => format!(
            "policy '{}' with binding '{}' denied request: {e}",
            p.policy.name, b.name
        ),
        None => format!("policy {:?} denied request: {e}", p.policy.name),
    };
    PolicyError {
        failure_policy: p.policy.failure_policy.clone(),
        message,
        reason,
    }
}

/// Runs the mutating policies on the request: the request with its object mutated (`None`
/// when no policy applied), or the status when they deny it.
pub(crate) fn dispatch(
    set: &PolicySet,
    request: &Request,
    view: &mut View,
    response: &mut Response,
) -> Result<Option<Request>, Status> {
    if !set.policies().iter().any(|p| is_mutating(&p.policy)) {
        return Ok(None);
    }
    let mut errors = Vec::new();
    let invocations = invocations(set, request, view, &mut errors, response);
    if invocations.is_empty() && errors.is_empty() {
        return Ok(None);
    }
    let mut request = request.clone();
    let mut reinvocable = Vec::new();
    let mut changed = false;
    for inv in &invocations {
        changed |= run(set, inv, &mut request, view, &mut errors)?;
        if matches!(
            inv.policy.policy.kind,
            PolicyKind::Mutating { reinvoke: true, .. }
        ) {
            reinvocable.push(inv);
        }
    }
    // Reinvocation: the policies that asked for it run once more when the object changed
    // after them (a later policy changed it).
    if changed {
        for inv in reinvocable {
            run(set, inv, &mut request, view, &mut errors)?;
        }
    }
    let mut failing = errors
        .into_iter()
        .filter(|e| e.failure_policy != FailurePolicy::Ignore);
    match failing.next() {
        None => Ok(Some(request)),
        Some(first) => Err(Status {
            code: 403,
            reason: if first.reason.is_empty() {
                "Forbidden"
            } else {
                first.reason
            }
            .to_string(),
            message: first.message,
        }),
    }
}

/// The invocations of the mutating policies that match the request, in order.
fn invocations<'a>(
    set: &'a PolicySet,
    r: &Request,
    view: &View,
    errors: &mut Vec<PolicyError>,
    response: &mut Response,
) -> Vec<Invocation<'a>> {
    let mut out = Vec::new();
    for p in set.policies().iter().filter(|p| is_mutating(&p.policy)) {
        match set.selects(p.policy.match_constraints.as_ref(), r, view) {
            Err(e) => {
                errors.push(policy_error(
                    p,
                    None,
                    format!("failed to configure policy: {e}"),
                    "",
                ));
                continue;
            }
            Ok(false) => continue,
            Ok(true) => {}
        }
        if let Some(Err(e)) = p.policy.param_kind.as_ref().map(|k| set.param_scope(k)) {
            errors.push(policy_error(
                p,
                None,
                format!("failed to configure policy: {e}"),
                "",
            ));
            continue;
        }
        for b in set.bindings_of(&p.policy) {
            match set.selects(b.match_resources.as_ref(), r, view) {
                Err(e) => {
                    errors.push(policy_error(
                        p,
                        Some(b),
                        format!("failed to configure binding: {e}"),
                        "",
                    ));
                    continue;
                }
                Ok(false) => continue,
                Ok(true) => {}
            }
            response.matched.push(Matched {
                kind: MUTATING_POLICY,
                policy: p.policy.name.clone(),
                binding: Some(b.name.clone()),
            });
            match set.collect_params(p.policy.param_kind.as_ref(), b, &r.namespace) {
                Err(e) => errors.push(policy_error(
                    p,
                    Some(b),
                    format!("failed to configure binding: {e}"),
                    "",
                )),
                Ok(params) => out.extend(params.into_iter().map(|param| Invocation {
                    policy: p,
                    binding: b,
                    param,
                })),
            }
        }
    }
    out
}

/// Runs one invocation's mutations on the request's object; whether they changed it, or
/// the status that ends the request whatever the failure policy.
fn run(
    set: &PolicySet,
    inv: &Invocation<'_>,
    request: &mut Request,
    view: &mut View,
    errors: &mut Vec<PolicyError>,
) -> Result<bool, Status> {
    let p = inv.policy;
    match set.match_conditions_of(p, &set.fixed_bindings(view, inv.param)) {
        Ok(true) => {}
        Ok(false) => return Ok(false),
        Err(e) => {
            errors.push(policy_error(p, Some(inv.binding), e, "Invalid"));
            return Ok(false);
        }
    }
    let PolicyKind::Mutating { mutations, .. } = &p.policy.kind else {
        return Ok(false);
    };
    let mut changed = false;
    for ((m, compiled), mismatch) in mutations
        .iter()
        .zip(&p.mutations)
        .zip(&p.mutation_type_errors)
    {
        if request.object.is_none() {
            continue;
        }
        // Each mutation sees the object as the ones before it left it.
        let schema = match m {
            Mutation::ApplyConfiguration(_) => {
                request.object.as_ref().and_then(|o| set.schema_of(o))
            }
            Mutation::JsonPatch(_) => None,
        };
        match mutate(
            p,
            &set.fixed_bindings(view, inv.param),
            m,
            compiled,
            request.object.as_ref(),
            schema.as_deref(),
        )
        .and_then(|o| match mismatch {
            Some(e) => Err(e.clone()),
            None => Ok(o),
        }) {
            Ok(Some(o)) => {
                // A JSON patch's result is decoded strictly into the kind's Go type; what
                // does not decode is an internal error, returned as it is whatever the
                // failure policy (k8s.io/apiserver pkg/admission/plugin/policy/mutating:
                // patch/json_patch.go, dispatcher.go).
                if matches!(m, Mutation::JsonPatch(_))
                    && let Some(e) = set.strict_decode_error(&o)
                {
                    return Err(Status {
                        code: 500,
                        reason: "InternalError".into(),
                        message: format!("Internal error occurred: {e}"),
                    });
                }
                view.set_object(&o);
                request.object = Some(o);
                changed = true;
            }
            Ok(None) => {}
            Err(e) => errors.push(policy_error(p, Some(inv.binding), e, "Invalid")),
        }
    }
    Ok(changed)
}

/// Applies one mutation to `object`: the new object, or `None` when it did not change.
fn mutate(
    p: &CompiledPolicy,
    fixed: &super::environment::FixedBindings,
    m: &Mutation,
    compiled: &Compiled,
    object: Option<&Json>,
    schema: Option<&Schema>,
) -> Result<Option<Json>, String> {
    if let Err(e) = &compiled.program {
        return Err(e.clone());
    }
    let bindings = Bindings::new(fixed, &p.variables);
    let (mut results, _) = evaluate_all(&bindings, &[Some(compiled)], RUNTIME_COST_BUDGET)?;
    let value = match results.pop().flatten() {
        Some(Evaluation::Value(v)) => v,
        Some(Evaluation::Error(e)) => return Err(e),
        None => return Ok(None),
    };
    let Some(object) = object else {
        return Ok(None);
    };
    let json = celerity::value_to_json(&value).map_err(|e| e.to_string())?;
    let new = match m {
        Mutation::JsonPatch(_) => apply_json_patch(object, &json)?,
        Mutation::ApplyConfiguration(_) => {
            let Json::Object(patch) = json else {
                return Err(format!(
                    "unsupported return type from ApplyConfiguration expression: {}",
                    value.type_name()
                ));
            };
            let mut out = object.clone();
            match schema {
                Some(schema) => super::apply::apply_typed(&mut out, patch, schema)
                    .map_err(|e| format!("error applying patch: {e}"))?,
                None => apply_configuration(&mut out, patch),
            }
            out
        }
    };
    Ok((new != *object).then_some(new))
}

/// A JSON Patch error, as the patch library words it.
fn missing(what: String) -> String {
    format!("JSON Patch: {what}: missing value")
}

/// Applies a list of `JSONPatch` operations (as JSON maps) to `doc`.
pub fn apply_json_patch(doc: &Json, ops: &Json) -> Result<Json, String> {
    let Some(ops) = ops.as_array() else {
        return Err("type mismatch: JSONPatchType.expression should evaluate to array".into());
    };
    let mut out = doc.clone();
    for op in ops {
        let field = |k: &str| op.get(k).and_then(Json::as_str).unwrap_or("").to_string();
        let (kind, path, from) = (field("op"), field("path"), field("from"));
        let value = op.get("value").cloned().unwrap_or(Json::Null);
        match kind.as_str() {
            "add" => put(&mut out, &path, value, true).map_err(|_| {
                missing(format!(
                    "add operation does not apply: doc is missing path: \"{path}\""
                ))
            })?,
            "remove" => {
                remove(&mut out, &path).map_err(|_| {
                    missing(format!(
                        "remove operation does not apply: doc is missing path: \"{path}\""
                    ))
                })?;
            }
            "replace" => {
                if get(&out, &path).is_none() && !is_map_member(&out, &path) {
                    return Err(missing(format!(
                        "replace operation does not apply: doc is missing key: {path}"
                    )));
                }
                put(&mut out, &path, value, false).map_err(|_| {
                    missing(format!(
                        "replace operation does not apply: doc is missing path: {path}"
                    ))
                })?;
            }
            "move" | "copy" => {
                let v = get(&out, &from).cloned().ok_or_else(|| {
                    missing(format!(
                        "{kind} operation does not apply: doc is missing from path: {from}"
                    ))
                })?;
                if kind == "move" {
                    remove(&mut out, &from).map_err(|_| {
                        missing(format!(
                            "move operation does not apply: doc is missing from path: {from}"
                        ))
                    })?;
                }
                put(&mut out, &path, v, true).map_err(|_| {
                    missing(format!(
                        "{kind} operation does not apply: doc is missing destination path: {path}"
                    ))
                })?;
            }
            "test" => {
                // A failed test leaves the object as it was.
                if get(&out, &path) != Some(&value)
                    && !(value.is_null() && get(&out, &path).is_none())
                {
                    return Ok(doc.clone());
                }
            }
            other => return Err(format!("JSON Patch: Unexpected kind: {other}")),
        }
    }
    Ok(out)
}

/// The reference tokens of a JSON pointer (`/a/b~1c` is `a`, `b/c`).
fn tokens(path: &str) -> Option<Vec<String>> {
    if path.is_empty() {
        return Some(Vec::new());
    }
    let rest = path.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

fn get<'j>(doc: &'j Json, path: &str) -> Option<&'j Json> {
    let mut cur = doc;
    for t in tokens(path)? {
        cur = match cur {
            Json::Object(m) => m.get(&t)?,
            Json::Array(a) => a.get(index(&t, a.len(), false)?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// Whether `path` names a key of an existing map (present or not).
fn is_map_member(doc: &Json, path: &str) -> bool {
    parent(doc, path).is_some_and(|(p, _)| p.is_object())
}

fn parent<'j>(doc: &'j Json, path: &str) -> Option<(&'j Json, String)> {
    let mut t = tokens(path)?;
    let last = t.pop()?;
    let mut cur = doc;
    for k in t {
        cur = match cur {
            Json::Object(m) => m.get(&k)?,
            Json::Array(a) => a.get(index(&k, a.len(), false)?)?,
            _ => return None,
        };
    }
    Some((cur, last))
}

fn parent_mut<'j>(doc: &'j mut Json, path: &str) -> Option<(&'j mut Json, String)> {
    let mut t = tokens(path)?;
    let last = t.pop()?;
    let mut cur = doc;
    for k in t {
        cur = match cur {
            Json::Object(m) => m.get_mut(&k)?,
            Json::Array(a) => {
                let i = index(&k, a.len(), false)?;
                a.get_mut(i)?
            }
            _ => return None,
        };
    }
    Some((cur, last))
}

/// An array index token: digits (or `-`, the end, when inserting); negative indexes count
/// from the end, as the patch library allows.
fn index(t: &str, len: usize, inserting: bool) -> Option<usize> {
    if t == "-" {
        return inserting.then_some(len);
    }
    let i: i64 = t.parse().ok()?;
    let i = if i < 0 { i + len as i64 } else { i };
    let max = if inserting {
        len
    } else {
        len.saturating_sub(1)
    };
    (i >= 0 && (i as usize) <= max && (inserting || len > 0)).then_some(i as usize)
}

/// Puts `value` at `path`: into a map, or into a list by index, inserting (`add`) or
/// replacing (`replace`).
fn put(doc: &mut Json, path: &str, value: Json, inserting: bool) -> Result<(), ()> {
    if path.is_empty() {
        *doc = value;
        return Ok(());
    }
    let (p, last) = parent_mut(doc, path).ok_or(())?;
    match p {
        Json::Object(m) => {
            m.insert(last, value);
            Ok(())
        }
        Json::Array(a) => {
            let i = index(&last, a.len(), inserting).ok_or(())?;
            if inserting {
                a.insert(i, value);
            } else {
                a[i] = value;
            }
            Ok(())
        }
        _ => Err(()),
    }
}

fn remove(doc: &mut Json, path: &str) -> Result<Json, ()> {
    let (p, last) = parent_mut(doc, path).ok_or(())?;
    match p {
        Json::Object(m) => m.shift_remove(&last).ok_or(()),
        Json::Array(a) => {
            let i = index(&last, a.len(), false).ok_or(())?;
            Ok(a.remove(i))
        }
        _ => Err(()),
    }
}

/// Merges an apply configuration into `target` (the documented subset of server-side
/// apply; see the module header). Iterative over the depth of the configuration.
pub fn apply_configuration(target: &mut Json, patch: Map<String, Json>) {
    cel_syntax::stack::guarded(|| merge_object(target, patch));
}

fn merge_object(target: &mut Json, patch: Map<String, Json>) {
    if !target.is_object() {
        *target = Json::Object(Map::new());
    }
    let Json::Object(t) = target else { return };
    for (k, v) in patch {
        match v {
            Json::Null => {
                t.shift_remove(&k);
            }
            Json::Object(p) => {
                let slot = t.entry(k).or_insert(Json::Null);
                cel_syntax::stack::guarded(|| merge_object(slot, p));
            }
            Json::Array(items) => {
                let slot = t.entry(k).or_insert(Json::Null);
                merge_list(slot, items);
            }
            other => {
                t.insert(k, other);
            }
        }
    }
}

fn name_of(v: &Json) -> Option<&str> {
    v.get("name").and_then(Json::as_str)
}

fn merge_list(target: &mut Json, items: Vec<Json>) {
    let keyed = !items.is_empty() && items.iter().all(|i| name_of(i).is_some());
    let Json::Array(existing) = target else {
        *target = Json::Array(items);
        return;
    };
    if !keyed || !existing.iter().all(|i| name_of(i).is_some()) {
        *existing = items;
        return;
    }
    // Entries with the same key are one entry to apply: duplicates of an applied name merge
    // away, into the first. Found by hashing, in linear time.
    let applied: std::collections::HashSet<String> = items
        .iter()
        .filter_map(name_of)
        .map(str::to_string)
        .collect();
    let mut seen = std::collections::HashSet::new();
    existing.retain(|e| {
        let name = name_of(e).unwrap_or("");
        !applied.contains(name) || seen.insert(name.to_string())
    });
    let mut index: std::collections::HashMap<String, usize> = existing
        .iter()
        .enumerate()
        .filter_map(|(i, e)| Some((name_of(e)?.to_string(), i)))
        .collect();
    for item in items {
        let Json::Object(p) = item else { continue };
        let name = p
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        match index.get(&name) {
            Some(&i) => {
                if let Some(slot) = existing.get_mut(i) {
                    cel_syntax::stack::guarded(|| merge_object(slot, p));
                }
            }
            None => {
                index.insert(name, existing.len());
                existing.push(Json::Object(p));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_patches_apply_as_the_api_server_applies_them() {
        let doc = json!({"metadata": {"labels": {"x": "1"}}, "spec": {"c": [{"name": "a"}, {"name": "b"}]}});
        let ops = json!([
            {"op": "replace", "path": "/metadata/labels/y", "value": "2"},
            {"op": "move", "from": "/spec/c/0", "path": "/spec/c/-"},
            {"op": "remove", "path": "/metadata/labels/x"},
        ]);
        assert_eq!(
            apply_json_patch(&doc, &ops).unwrap(),
            json!({"metadata": {"labels": {"y": "2"}}, "spec": {"c": [{"name": "b"}, {"name": "a"}]}})
        );
        let failed_test = json!([{"op": "test", "path": "/metadata/labels/x", "value": "9"},
            {"op": "remove", "path": "/metadata"}]);
        assert_eq!(apply_json_patch(&doc, &failed_test).unwrap(), doc);
        let bad = json!([{"op": "replace", "path": "/spec/c/-", "value": 1}]);
        assert_eq!(
            apply_json_patch(&doc, &bad).unwrap_err(),
            "JSON Patch: replace operation does not apply: doc is missing key: /spec/c/-: missing value"
        );
    }

    #[test]
    fn apply_configurations_merge_maps_and_named_lists() {
        let mut doc = json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [
            {"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}}, "metadata": {"labels": {"k": "v"}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "z"}]}}},
            "metadata": {"labels": {"k": null, "n": "m"}}});
        let Json::Object(p) = patch else {
            unreachable!()
        };
        apply_configuration(&mut doc, p);
        assert_eq!(
            doc,
            json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "a", "image": "x"}, {"name": "b", "image": "z"}]}}}, "metadata": {"labels": {"n": "m"}}})
        );
    }
}
