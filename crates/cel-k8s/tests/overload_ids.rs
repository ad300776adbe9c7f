//! Every overload id a cost table names is declared: the built-in size-dependent formulas
//! (`cel_cost::SIZED_OVERLOADS`), the overloads Kubernetes prices by id
//! (`cel_k8s::cost::COST_DISTINCT_OVERLOADS`), and every overload a library's cost or
//! result-size hook is keyed by, are declared by the newest Kubernetes environment or an
//! extension library at its newest version, so a renamed or misspelt id cannot silently
//! fall back to cost 1.

use std::collections::HashSet;

use celerity::Env;
use celerity::kubernetes::KubernetesEnv;

#[test]
fn every_overload_a_cost_table_names_is_declared() {
    // Kubernetes configures some extension libraries at older versions: take the union of
    // its newest environment and every extension library at its newest version.
    let kubernetes = KubernetesEnv::newest().build();
    let extensions = Env::builder().all_extension_libraries().build();
    let declared: HashSet<String> = [&kubernetes, &extensions]
        .iter()
        .flat_map(|env| {
            env.checker_env()
                .functions()
                .flat_map(|f| f.overloads.iter().map(|o| o.id.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    // The libraries' own per-overload hooks (run time, static, result sizes).
    let mut libraries = cel_ext::all_libraries();
    libraries.push(Box::new(cel_k8s::cost::KubernetesCosts::default()));
    let mut hooked: Vec<String> = Vec::new();
    for library in &libraries {
        let c = library.contents();
        let keys = c.actual_costs.iter().map(|(k, _)| k);
        for key in keys.chain(c.estimated_costs.iter().map(|(k, _)| k)) {
            if let cel_cost::CostKey::Overload(id) = key {
                hooked.push(id.clone());
            }
        }
        hooked.extend(c.result_sizes.iter().map(|(id, _)| id.clone()));
    }
    let named = cel_cost::SIZED_OVERLOADS
        .iter()
        .map(|(id, _)| *id)
        .chain(cel_k8s::cost::COST_DISTINCT_OVERLOADS.iter().copied())
        .chain(hooked.iter().map(String::as_str));
    let missing: Vec<&str> = named.filter(|id| !declared.contains(*id)).collect();
    assert!(
        declared.len() > 300,
        "{} overloads declared",
        declared.len()
    );
    assert!(missing.is_empty(), "undeclared overload ids: {missing:?}");
}
