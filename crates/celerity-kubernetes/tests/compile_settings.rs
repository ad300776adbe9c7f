//! The Kubernetes jobs' environments take the host's compile settings (see the facade's
//! `tiering` tests for the mechanism).

use std::sync::{Arc, Mutex};

use celerity::{Backend, NativeStatus};

#[path = "support/crd.rs"]
mod crd;

/// The environments the Kubernetes modules build for the host take its compile settings:
/// every rule of a custom resource compiled natively is reported, and so is an admission
/// expression.
#[test]
fn kubernetes_environments_take_the_hosts_compile_settings() {
    use celerity::CompileSettings;
    use celerity::kubernetes::KubeVersion;
    use celerity_kubernetes::admission::environment::{AdmissionEnv, Declarations};
    use celerity_kubernetes::crd::{CompiledCrd, CrdOptions};

    let heard: Arc<Mutex<Vec<(String, NativeStatus)>>> = Arc::default();
    let log = heard.clone();
    let settings = CompileSettings::default().on_compile(move |r| {
        log.lock()
            .unwrap()
            .push((r.expression.to_string(), r.outcome.clone()))
    });
    let spec = serde_json::json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.replicas >= 0"},
            {"rule": "self.name.startsWith('a')", "messageExpression": "'bad: ' + self.name"},
        ],
        "properties": {"replicas": {"type": "integer"}, "name": {"type": "string"}},
    });
    let crd = crd::with_spec(spec);
    let compiled =
        CompiledCrd::new(&crd, &CrdOptions::default().compile(settings.clone())).unwrap();
    // A node's rules are compiled when an object first reaches the node (the CRD's checks
    // only plan them, never natively).
    assert!(heard.lock().unwrap().is_empty());
    let object = serde_json::json!({"apiVersion": "example.com/v1", "kind": "X",
        "metadata": {"name": "x"}, "spec": {"replicas": 1, "name": "a"}});
    assert!(compiled.validate(&object, None).errors.is_empty());
    let compiled: Vec<String> = heard
        .lock()
        .unwrap()
        .iter()
        .filter(|(_, outcome)| *outcome == NativeStatus::Compiled)
        .map(|(e, _)| e.clone())
        .collect();
    for expr in [
        "self.replicas >= 0",
        "self.name.startsWith('a')",
        "'bad: ' + self.name",
    ] {
        assert!(
            compiled.iter().any(|e| e == expr),
            "{expr} not in {compiled:?}"
        );
    }

    heard.lock().unwrap().clear();
    let admission =
        AdmissionEnv::new(KubeVersion::NEWEST, Backend::Jit).with_compile_settings(settings);
    let env = admission.env(Declarations::default(), &[]);
    let ast = env.compile("object != null").unwrap();
    env.program_with(
        &ast,
        celerity::ProgramOptions::default().backend(Backend::Jit),
    )
    .unwrap();
    assert_eq!(
        *heard.lock().unwrap(),
        [("object != null".to_string(), NativeStatus::Compiled)]
    );
}
