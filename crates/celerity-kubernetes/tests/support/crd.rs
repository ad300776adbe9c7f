//! A one-version CustomResourceDefinition around a schema for `spec`, for tests that need a
//! whole CRD document. A test binary declares it with
//! `#[path = "support/crd.rs"] mod crd;`.

/// The CRD `xs.example.com` (kind `X`, version `v1`, cluster-scoped) whose objects' `spec`
/// has the schema `spec`.
pub fn with_spec(spec: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "xs.example.com"},
        "spec": {"group": "example.com", "names": {"kind": "X", "plural": "xs"}, "scope": "Cluster",
                 "versions": [{"name": "v1", "served": true, "storage": true,
                               "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": spec}}}}]}
    })
}
