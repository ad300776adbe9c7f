//! Admission: the example policy set (`examples/admission/`: four validating policies with
//! params, variables, match conditions, an authorizer check, and a mutating policy with a
//! JSON patch and an apply configuration) against 10,000 generated Deployments and Pods,
//! as the API server admits them (mutations, then validations, with the API server's
//! messages, warnings and audit annotations); single-threaded and on every core; on the
//! interpreter and native code.
//!
//! Throughput is per request: criterion reports requests per second.
//! `cargo bench -p benches --bench admission`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use celerity::Backend;
use celerity_kubernetes::admission::{
    Operation, PolicyInputs, PolicySet, Request, RulesAuthorizer, UserInfo,
};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rayon::prelude::*;
use serde_json::{Value as Json, json};

const REQUESTS: usize = 10_000;

fn example(file: &str) -> Vec<Json> {
    let path = format!(
        "{}/../examples/admission/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).expect("the example");
    serde_saphyr::from_multiple(&text).expect("valid YAML")
}

fn policy_set(backend: Backend) -> PolicySet {
    let inputs = PolicyInputs {
        backend,
        params: example("params.yaml"),
        namespaces: example("namespaces.yaml"),
        ..PolicyInputs::default()
    };
    PolicySet::from_json(&example("policies.yaml"), &inputs).expect("the example policies")
}

/// Deployments and Pods like the example's, varied; some break a policy.
fn requests() -> Vec<Request> {
    (0..REQUESTS)
        .map(|i| {
            let ns = if i % 4 == 0 { "shop-staging" } else { "shop" };
            let tag = if i % 10 == 9 { "latest" } else { "1.4.2" };
            let image = format!("registry.example.com/shop/app-{}:{tag}", i % 50);
            let object = if i % 3 == 0 {
                json!({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("pod-{i}"), "namespace": ns},
                    "spec": {"containers": [{"name": "app", "image": image,
                        "securityContext": {"privileged": i % 7 == 0}}]}})
            } else {
                json!({"apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": {"name": format!("app-{i}"), "namespace": ns,
                        "labels": {"owner": format!("team-{}", i % 12)}},
                    "spec": {"replicas": 1 + (i % 4) as i64,
                        "selector": {"matchLabels": {"app": format!("app-{i}")}},
                        "template": {"metadata": {"labels": {"app": format!("app-{i}")}},
                            "spec": {"containers": [{"name": "web", "image": image}]}}}})
            };
            let mut r = Request::for_object(Operation::Create, Some(object), None, |_| None)
                .expect("a request");
            r.user = UserInfo {
                username: "alice".into(),
                groups: vec!["shop-devs".into()],
                ..UserInfo::default()
            };
            r
        })
        .collect()
}

fn admission(c: &mut Criterion) {
    let requests = requests();
    let rules = example("authz.yaml").remove(0);
    let authz = Arc::new(RulesAuthorizer::from_json(&rules).expect("rules"));
    let mut group = c.benchmark_group("admission");
    group.throughput(Throughput::Elements(REQUESTS as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    for (label, backend) in [("interpreter", Backend::Interpreter), ("jit", Backend::Jit)] {
        let set = policy_set(backend);
        let denied = requests
            .iter()
            .filter(|r| !set.admit(r, Some(authz.clone())).allowed)
            .count();
        assert!(denied > 0 && denied < REQUESTS, "{denied} denied");
        group.bench_function(format!("admit/{label}"), |b| {
            b.iter(|| {
                requests
                    .iter()
                    .filter(|r| !set.admit(black_box(r), Some(authz.clone())).allowed)
                    .count()
            })
        });
        group.bench_function(format!("admit_all_cores/{label}"), |b| {
            b.iter(|| {
                requests
                    .par_iter()
                    .filter(|r| !set.admit(black_box(r), Some(authz.clone())).allowed)
                    .count()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, admission);
criterion_main!(benches);
